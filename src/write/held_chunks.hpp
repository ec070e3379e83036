// The keyframe-delta writer's encoded chunks waiting for the front of the file (keyframe_writer.cpp,
// "Passes"): in memory up to a budget, the rest in an anonymous temporary file. Internal to
// src/write.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "encoding.hpp"
#include "fourdgs/error.hpp"
#include "fourdgs/records.hpp"

namespace fourdgs::keyframe_held {

// A state chunk encoded and verified, waiting for the front of the file to be written: a delta's
// reference and keyframe offsets (in its record and its index fields) count from the first chunk
// until the front's length is known. They are fixed-width, so no length depends on them.
struct HeldChunk {
    encoding::EncodedRecords records;  // bytes empty while they wait in the spill file
    std::uint64_t length = 0;          // records.bytes' length
    double t0 = 0, t1 = 0;
    std::uint32_t count = 0;
    KeyframeIndexFields index;
};

// The held chunks: their bytes in memory up to KeyframeWriterOptions::held_bytes, then in an
// anonymous temporary file (std::tmpfile, removed when closed), written and read back in order,
// so that memory does not grow with the number of steps. Where no temporary file can be made
// the bytes stay in memory: the same file, only more memory.
class HeldChunks {
public:
    explicit HeldChunks(std::uint64_t budget) : budget_(budget) {}
    HeldChunks(const HeldChunks&) = delete;
    HeldChunks& operator=(const HeldChunks&) = delete;
    ~HeldChunks() {
        if (spill_) std::fclose(spill_);
    }

    Status hold(HeldChunk&& h) {
        h.length = h.records.bytes.size();
        if (in_memory_ + h.length > budget_ && !spill_failed_) {
            if (!spill_ && !(spill_ = std::tmpfile())) spill_failed_ = true;
            if (spill_) {
                if (std::fwrite(h.records.bytes.data(), 1, h.length, spill_) != h.length)
                    return spill_error("write");
                h.records.bytes = std::vector<std::uint8_t>();  // `= {}` would keep the capacity
            }
        }
        if (!h.records.bytes.empty()) in_memory_ += h.length;
        chunks_.push_back(std::move(h));
        return ok_status();
    }

    std::size_t size() const { return chunks_.size(); }

    // Chunk i, in order from 0, its bytes back in memory; the previous one's released.
    Result<HeldChunk*> take(std::size_t i) {
        if (i > 0) chunks_[i - 1].records = {};
        HeldChunk& h = chunks_[i];
        if (h.records.bytes.size() == h.length) return &h;
        if (!rewound_) {
            if (std::fflush(spill_) != 0 || std::fseek(spill_, 0, SEEK_SET) != 0)
                return spill_error("rewind");
            rewound_ = true;
        }
        h.records.bytes.resize(static_cast<std::size_t>(h.length));
        if (std::fread(h.records.bytes.data(), 1, h.length, spill_) != h.length)
            return spill_error("read");
        return &h;
    }

private:
    static Error spill_error(const char* what) {
        return make_error(ErrorKind::io, refusal::kIoError,
                          std::string("cannot ") + what +
                              " the temporary file that holds the encoded chunks");
    }

    std::uint64_t budget_, in_memory_ = 0;
    std::vector<HeldChunk> chunks_;
    std::FILE* spill_ = nullptr;
    bool spill_failed_ = false, rewound_ = false;
};

}  // namespace fourdgs::keyframe_held
