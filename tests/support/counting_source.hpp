// tests/support/counting_source.hpp — a ByteSource over memory that records every read_at, so a
// test can say how often a consumer read the magic, the tail or the summary of a file.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "fourdgs/io.hpp"
#include "fourdgs/wire.hpp"

namespace fourdgs::test {

class CountingSource final : public ByteSource {
public:
    struct Read {
        std::uint64_t offset = 0, length = 0;
    };

    // `random_access` false makes it behave as a pipe: forward only, no size.
    explicit CountingSource(std::span<const std::uint8_t> bytes, bool random_access = true)
        : bytes_(bytes), random_(random_access) {}

    std::optional<std::uint64_t> size() const override {
        if (!random_) return std::nullopt;
        return bytes_.size();
    }
    bool random_access() const override { return random_; }
    Result<std::size_t> read_at(std::uint64_t offset, std::span<std::uint8_t> out) override {
        reads_.push_back({offset, out.size()});
        if (!random_) {
            if (offset < position_)
                return make_error(ErrorKind::invalid_argument, refusal::kNotSeekable,
                                  "a read behind the stream's position");
            position_ = offset;
        }
        if (offset >= bytes_.size()) return std::size_t{0};
        const std::size_t n = static_cast<std::size_t>(
            std::min<std::uint64_t>(out.size(), bytes_.size() - offset));
        std::memcpy(out.data(), bytes_.data() + offset, n);
        position_ = offset + n;
        return n;
    }

    const std::vector<Read>& reads() const noexcept { return reads_; }
    void clear() { reads_.clear(); }

    // How many reads touched [lo, hi).
    std::size_t reads_touching(std::uint64_t lo, std::uint64_t hi) const {
        std::size_t n = 0;
        for (const Read& r : reads_) n += r.length > 0 && r.offset < hi && lo < r.offset + r.length;
        return n;
    }
    // The magic (§4.1), the 37-byte tail (§5.2) and the summary (§4.5) of the file.
    std::size_t magic_reads() const { return reads_touching(0, kMagicSize); }
    std::size_t tail_reads() const {
        return reads_touching(bytes_.size() - kMagicSize - kRecordHeaderSize - kFooterContentSize,
                              bytes_.size());
    }
    std::size_t summary_reads() const {
        const std::uint64_t footer =
            bytes_.size() - kMagicSize - kRecordHeaderSize - kFooterContentSize;
        std::uint64_t start = 0;
        std::memcpy(&start, bytes_.data() + footer + kRecordHeaderSize, 8);
        return start == 0 ? 0 : reads_touching(start, footer);
    }

private:
    std::span<const std::uint8_t> bytes_;
    bool random_;
    std::uint64_t position_ = 0;
    std::vector<Read> reads_;
};

}  // namespace fourdgs::test
