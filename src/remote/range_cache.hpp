// RangeCache: the bytes an HttpSource holds (blocks of the file, by offset, bounded) and the
// ranges its batches are fetching ("on the wire"). No locking here: HttpSource guards it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <map>
#include <span>
#include <vector>

#include "fourdgs/io.hpp"

namespace fourdgs {

struct RangeCache {
    struct Block {
        std::vector<std::uint8_t> bytes;
        std::uint64_t tick = 0;  // last use, for eviction
        bool read = false;       // served to a reader at least once (a prefetch is not yet)
    };
    std::uint64_t bound = 0;                 // bytes held at most, after evict()
    std::map<std::uint64_t, Block> blocks;   // by offset; never overlapping
    std::map<std::uint64_t, std::uint64_t> wire;  // ranges some batch is fetching: offset, length
    std::uint64_t cached = 0, tick = 0;

    // ---- ranges on the wire ----

    // True when some batch is fetching a byte of [offset, offset + length).
    bool on_wire(std::uint64_t offset, std::uint64_t length) const {
        auto it = wire.upper_bound(offset);
        if (it != wire.begin() && std::prev(it)->first + std::prev(it)->second > offset) return true;
        return it != wire.end() && it->first < offset + length;
    }
    // `ranges` less the parts some batch is fetching already.
    std::vector<ByteRange> off_wire(const std::vector<ByteRange>& ranges) const {
        std::vector<ByteRange> out;
        for (ByteRange r : ranges) {
            auto it = wire.upper_bound(r.offset);
            if (it != wire.begin()) --it;
            for (; it != wire.end() && r.length > 0 && it->first < r.offset + r.length; ++it) {
                const std::uint64_t w0 = it->first, w1 = w0 + it->second;
                if (w1 <= r.offset) continue;
                if (w0 > r.offset) out.push_back({r.offset, w0 - r.offset});
                const std::uint64_t end = r.offset + r.length;
                r.offset = std::min(w1, end);
                r.length = end - r.offset;
            }
            if (r.length > 0) out.push_back(r);
        }
        return out;
    }

    // ---- blocks ----

    // The parts of [offset, offset + length) no block holds, in order.
    std::vector<ByteRange> gaps(std::uint64_t offset, std::uint64_t length) const {
        std::vector<ByteRange> out;
        std::uint64_t pos = offset;
        const std::uint64_t end = offset + length;
        auto it = blocks.upper_bound(pos);
        if (it != blocks.begin()) {
            auto prev = std::prev(it);
            if (prev->first + prev->second.bytes.size() > pos) it = prev;
        }
        while (pos < end) {
            if (it == blocks.end() || it->first >= end) {
                out.push_back({pos, end - pos});
                break;
            }
            if (it->first > pos) out.push_back({pos, it->first - pos});
            pos = std::max(pos, it->first + it->second.bytes.size());
            ++it;
        }
        return out;
    }

    // Copies whatever blocks hold of [offset, offset + out.size()) into `out`.
    void copy_cached(std::uint64_t offset, std::span<std::uint8_t> out) {
        const std::uint64_t end = offset + out.size();
        auto it = blocks.upper_bound(offset);
        if (it != blocks.begin()) --it;
        ++tick;
        for (; it != blocks.end() && it->first < end; ++it) {
            const std::uint64_t b0 = it->first, b1 = b0 + it->second.bytes.size();
            const std::uint64_t lo = std::max(b0, offset), hi = std::min(b1, end);
            if (lo >= hi) continue;
            std::memcpy(out.data() + (lo - offset), it->second.bytes.data() + (lo - b0), hi - lo);
            it->second.tick = tick;
            it->second.read = true;
        }
    }

    // Caches `bytes` (the file's bytes from `offset`), keeping only what no block holds yet.
    void insert(std::uint64_t offset, std::vector<std::uint8_t>&& bytes) {
        if (bytes.empty()) return;
        const std::vector<ByteRange> missing = gaps(offset, bytes.size());
        ++tick;
        if (missing.size() == 1 && missing[0].offset == offset &&
            missing[0].length == bytes.size()) {
            cached += bytes.size();
            blocks[offset] = Block{std::move(bytes), tick};
            return;
        }
        for (const ByteRange& g : missing) {
            const auto* p = bytes.data() + (g.offset - offset);
            blocks[g.offset] = Block{std::vector<std::uint8_t>(p, p + g.length), tick};
            cached += g.length;
        }
    }

    // Blocks already read go first, least recently used first; then bytes prefetched and not
    // yet read, newest first: a player asks for them in the order they were prefetched.
    void evict() {
        while (cached > bound && !blocks.empty()) {
            auto oldest = blocks.begin();
            auto sooner = [](const Block& a, const Block& b) {
                if (a.read != b.read) return a.read;
                return a.read ? a.tick < b.tick : a.tick > b.tick;
            };
            for (auto it = blocks.begin(); it != blocks.end(); ++it)
                if (sooner(it->second, oldest->second)) oldest = it;
            cached -= oldest->second.bytes.size();
            blocks.erase(oldest);
        }
    }
};

}  // namespace fourdgs
