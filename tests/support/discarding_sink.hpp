// tests/support/discarding_sink.hpp — a ByteSink that counts what it is given and keeps nothing,
// so that what a test or benchmark measures of a writer is the writer, not the output.
#pragma once

#include <cstdint>
#include <span>

#include "fourdgs/io.hpp"

namespace fourdgs::test {

class DiscardingSink final : public ByteSink {
public:
    Status write(std::span<const std::uint8_t> bytes) override {
        written_ += bytes.size();
        return ok_status();
    }
    std::uint64_t position() const override { return written_; }

private:
    std::uint64_t written_ = 0;
};

}  // namespace fourdgs::test
