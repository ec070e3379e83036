// tests/support/convert_streamed.hpp — a tracked conversion through convert_frame_source, which
// reads the frames one at a time (the streamed path for tracked keyframe-delta), into a file read
// back into memory.
#pragma once

#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "fourdgs/io.hpp"
#include "fourdgs/tools/convert.hpp"

namespace fourdgs::test {

// The frames converted by convert_frame_source, which reads them one at a time (frame k from
// frame_at(k)) into a file: the streamed path for tracked keyframe-delta.
inline std::vector<std::uint8_t> convert_streamed(
    std::uint64_t frames, const std::function<PlyCloud(std::uint64_t)>& frame_at,
    const ConvertOptions& o, ConvertReport& rep, bool read_into = true) {
    const std::string path = (std::filesystem::temp_directory_path() /
                              ("streamed-" + std::to_string(::getpid()) + ".4dgs"))
                                 .string();
    FrameSource source;
    source.frames = frames;
    source.read = [&](std::uint64_t k) -> Result<PlyCloud> { return frame_at(k); };
    source.concurrent_reads = true;  // frame_at is pure
    // As the frame files are read: into the cloud of the frame before, its storage reused.
    if (read_into)
        source.read_into = [&](std::uint64_t k, PlyCloud& into) -> Status {
            const PlyCloud f = frame_at(k);
            into.count = f.count;
            into.sh_degree = f.sh_degree;
            into.position.assign(f.position.begin(), f.position.end());
            into.normal.assign(f.normal.begin(), f.normal.end());
            into.scale.assign(f.scale.begin(), f.scale.end());
            into.rotation.assign(f.rotation.begin(), f.rotation.end());
            into.color.assign(f.color.begin(), f.color.end());
            into.sh.assign(f.sh.begin(), f.sh.end());
            return ok_status();
        };
    const Status st = convert_frame_source(source, path, o, &rep);
    if (!st.ok()) FAIL(st.error().describe());
    auto file = FileSource::open(path);
    REQUIRE(file.ok());
    std::vector<std::uint8_t> bytes(file->size().value_or(0));
    REQUIRE(file->read_exact(0, bytes).ok());
    std::filesystem::remove(path);
    return bytes;
}

inline std::vector<std::uint8_t> convert_streamed(const std::vector<PlyCloud>& frames,
                                                  const ConvertOptions& o, ConvertReport& rep,
                                                  bool read_into = true) {
    return convert_streamed(
        frames.size(), [&](std::uint64_t k) { return frames[k]; }, o, rep, read_into);
}

// The frames converted streamed (above) or in memory (convert_frames), for a test that checks
// both paths write the same.
inline std::vector<std::uint8_t> convert_tracked(const std::vector<PlyCloud>& frames,
                                                 const ConvertOptions& o, bool streamed,
                                                 ConvertReport& rep) {
    if (streamed) return convert_streamed(frames, o, rep);
    MemorySink sink;
    const Status st = convert_frames(frames, o, sink, &rep);
    if (!st.ok()) FAIL(st.error().describe());
    return sink.take();
}

}  // namespace fourdgs::test
