// `convert --tracked --model keyframe-delta` of frames read from a FrameSource (convert.hpp,
// "Memory"). The frames are read again for each pass instead of being held, so memory holds frame
// 0, one more frame, the writer's states and the encoded file, never the sequence. Each pass
// computes what convert_frames computes from the frames it holds, so the bytes and the report are
// the same, but for the rigid parts past kRigidSampleFrames frames: the checks, the aabb and each
// gaussian's largest deviation from frame 0 (pass 1), the rigid parts (searched among the moving
// gaussians by find_rigid_parts_streamed, on a sample of frames and then a frame at a time, where
// convert_frames searches every frame it holds), each part alone for the report, the
// keyframe-delta writer's two passes (KeyframeStepSource), the per-frame file it must not be
// larger than (StreamingWriter, counted), and the measured error.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "convert_parts.hpp"
#include "../platform/worker_threads.hpp"  // the library's thread count rule

namespace fourdgs::convert_parts {

Status StreamedFrames::each(const std::function<Status(std::uint64_t, const PlyCloud&)>& fn) const {
    PlyCloud scratch;
    for (std::uint64_t k = 0; k < frames; ++k) {
        FOURDGS_ASSIGN(const PlyCloud* f, frame(k, scratch));
        FOURDGS_TRY(fn(k, *f));
    }
    return ok_status();
}

Result<const PlyCloud*> StreamedFrames::frame(std::uint64_t k, PlyCloud& scratch) const {
    if (k == 0) return &first;
    if (read_into) {
        FOURDGS_TRY(read_into(k, scratch));
    } else {
        FOURDGS_ASSIGN(scratch, read(k));
    }
    return &scratch;
}

Result<const PlyCloud*> StreamedFrames::motion(std::uint64_t k, PlyCloud& scratch) const {
    if (k == 0 || !read_motion_into) return frame(k, scratch);
    FOURDGS_TRY(read_motion_into(k, scratch));
    return &scratch;
}

Result<PlyCloud> StreamedFrames::frame(std::uint64_t k) const {
    if (k == 0) return first;
    return read(k);
}

// Colour with every component clamped into [0, 1], counting the clamps.
void clamp_colors(const PlyCloud& f, std::uint64_t& clamped, std::vector<float>& out) {
    out.resize(f.color.size());
    for (std::size_t i = 0; i < out.size(); ++i) {
        const float v = f.color[i], k = std::clamp(v, 0.0f, 1.0f);
        clamped += std::fabs(k - v) > 1e-6f;  // not the f32 noise of a PLY round trip
        out[i] = k;
    }
}

void widen_colour_range(std::span<const float> color, std::span<const std::uint32_t> keep,
                        std::vector<float>& lo, std::vector<float>& hi) {
    for (std::size_t i = 0; i < lo.size(); ++i) {
        const std::size_t g = keep.empty() ? i / 3 : keep[i / 3];
        const float v = std::clamp(color[g * 4 + i % 3], 0.0f, 1.0f);
        lo[i] = std::min(lo[i], v);
        hi[i] = std::max(hi[i], v);
    }
}

std::vector<float> clamped_colors(const PlyCloud& f, std::uint64_t& clamped) {
    std::vector<float> c;
    clamp_colors(f, clamped, c);
    return c;
}

bool whole_view(const TrackedView& v) {
    return v.keep.empty() &&
           std::all_of(v.held.begin(), v.held.end(), [](std::uint32_t h) { return h == 0; });
}

void view_into(const PlyCloud& f, const PlyCloud& first, const TrackedView& v, PlyCloud& out,
               std::uint64_t frame) {
    if (v.keep.empty()) {
        out = f;
    } else {
        out.count = v.keep.size();
        out.sh_degree = f.sh_degree;
        const std::size_t per = static_cast<std::size_t>(f.sh_per_gaussian());
        auto take = [&](std::vector<float>& dst, const std::vector<float>& src, std::size_t k) {
            dst.resize(v.keep.size() * k);
            if (src.size() < f.count * k) {  // a column the frame does not hold (normals)
                dst.clear();
                return;
            }
            for (std::size_t i = 0; i < v.keep.size(); ++i)
                std::copy_n(src.begin() + v.keep[i] * k, k, dst.begin() + i * k);
        };
        take(out.position, f.position, 3);
        take(out.normal, f.normal, 3);
        take(out.scale, f.scale, 3);
        take(out.rotation, f.rotation, 4);
        take(out.color, f.color, 4);
        take(out.sh, f.sh, per);
    }
    place_held(first, v, out, frame);
}

void place_held(const PlyCloud& first, const TrackedView& v, PlyCloud& out, std::uint64_t frame,
                bool rotations) {
    // Each part's riders are sorted by gaussian, and the view's gaussians come in that order:
    // each part's next rider is found by walking on from the last (rider_rotation's search where
    // the walk misses it).
    std::vector<std::size_t> next_rider(v.parts.size(), 0);
    for (std::size_t i = 0; i < v.held.size(); ++i) {
        if (v.held[i] == 0) continue;
        const std::size_t g = v.keep.empty() ? i : v.keep[i];
        if (v.rides.empty() || v.rides[i] == 0) {
            std::copy_n(first.position.begin() + g * 3, 3, out.position.begin() + i * 3);
            if (rotations)
                std::copy_n(first.rotation.begin() + g * 4, 4, out.rotation.begin() + i * 4);
            continue;
        }
        const RigidPart& part = v.parts[v.held[i] - 1];
        to_object_frame(part.poses[frame], &out.position[i * 3]);
        if (!rotations) continue;
        std::size_t& at = next_rider[v.held[i] - 1];
        while (at < part.riders.size() && part.riders[at] < g) ++at;
        const auto held = at < part.riders.size() && part.riders[at] == g
                              ? held_rotation_of_rider(part, at, frame)
                              : rider_rotation(part, static_cast<std::uint32_t>(g), frame);
        std::copy(held.begin(), held.end(), out.rotation.begin() + i * 4);
    }
}

PlyCloud view_of(const PlyCloud& f, const PlyCloud& first, const TrackedView& v,
                 std::uint64_t k) {
    PlyCloud out;
    view_into(f, first, v, out, k);
    return out;
}

namespace {

// Pass 1: every frame holds frame 0's count and SH degree (check_tracked), the aabb of every
// position (frames_aabb), the colours clamped and their range, and each gaussian's largest
// deviation from frame 0.
Status scan(StreamedFrames& in, const std::function<void(std::uint64_t, std::uint64_t)>& progress,
            ConvertReport& rep, std::vector<StillDeviation>& still) {
    const PlyCloud& first = in.first;
    std::array<double, 6> range{};
    for (int c = 0; c < 3; ++c)
        range[c] = std::numeric_limits<double>::infinity(), range[3 + c] = -range[c];
    still.assign(first.count, {});
    rep.input_gaussians = 0;
    std::vector<float> color;  // counted here, kept by none
    in.colour_lo.assign(3 * first.count, kInf);
    in.colour_hi.assign(3 * first.count, -kInf);
    FOURDGS_TRY(in.each([&](std::uint64_t k, const PlyCloud& f) -> Status {
        if (f.count != first.count)
            return bad(refusal::kFramesNotTracked,
                       "frame " + std::to_string(k) + " holds " + std::to_string(f.count) +
                           " gaussians but frame 0 holds " + std::to_string(first.count) +
                           "; tracked conversion needs the same gaussians in every frame");
        if (f.sh_degree != first.sh_degree)
            return bad(refusal::kFramesNotTracked,
                       "frame " + std::to_string(k) + " has SH degree " +
                           std::to_string(f.sh_degree) + " but frame 0 has " +
                           std::to_string(first.sh_degree));
        for (std::size_t i = 0; i < f.count; ++i)
            for (int c = 0; c < 3; ++c) {
                range[c] = std::min<double>(range[c], f.position[i * 3 + c]);
                range[3 + c] = std::max<double>(range[3 + c], f.position[i * 3 + c]);
            }
        if (k > 0) widen_still(first, f, still);
        clamp_colors(f, rep.clamped_colors, color);
        widen_colour_range(f.color, {}, in.colour_lo, in.colour_hi);
        rep.input_gaussians += f.count;
        if (progress) progress(k + 1, in.frames);
        return ok_status();
    }));
    for (int c = 0; c < 3; ++c)
        if (range[c] <= range[3 + c]) in.aabb[c] = range[c], in.aabb[3 + c] = range[3 + c];
    return ok_status();
}

// The rigid parts of the frames, searched among the moving gaussians only: the static ones are
// known from pass 1, and find_rigid_parts_streamed on the moving ones' positions and rotations
// (read a frame at a time, when there are enough of them to make a part) sorts the rest, with the
// indices mapped back. Up to kRigidSampleFrames frames it finds what find_rigid_parts finds on
// every gaussian (the same order, the same random draws); past that its memory is bounded by the
// sample, not the sequence.
Result<RigidParts> find_parts_streamed(const StreamedFrames& in,
                                       std::span<const StillDeviation> still,
                                       const RigidOptions& ro) {
    RigidParts out;
    const std::size_t n = in.first.count;
    out.is_static.assign(n, 0);
    out.part_of.assign(n, 0);
    out.rides.assign(n, 0);
    std::vector<std::uint32_t> moving;
    for (std::size_t g = 0; g < n; ++g) {
        if (still[g].pos <= ro.pos_residual && still[g].rot <= ro.rot_residual) {
            out.is_static[g] = 1;
            ++out.static_count;
        } else {
            moving.push_back(static_cast<std::uint32_t>(g));
        }
    }
    out.other_count = moving.size();
    if (in.frames < 2 || !(ro.pos_residual > 0) || !(ro.rot_residual > 0) ||
        moving.size() < std::max<std::size_t>(ro.min_members, 3))
        return out;
    // The moving gaussians' positions and rotations of frame k, read a frame at a time: the
    // search holds a sample of frames and one more, never the sequence (rigid.hpp).
    PlyCloud scratch;
    auto motion_of = [&](std::size_t k, PlyCloud& m) -> Status {
        FOURDGS_ASSIGN(const PlyCloud* f, in.motion(k, scratch));
        if (f->count != in.first.count)  // read again: changed since the scan
            return bad(refusal::kFramesNotTracked,
                       "frame " + std::to_string(k) + " holds " + std::to_string(f->count) +
                           " gaussians but frame 0 holds " + std::to_string(in.first.count));
        m.count = moving.size();
        m.position.resize(moving.size() * 3);
        m.rotation.resize(moving.size() * 4);
        for (std::size_t i = 0; i < moving.size(); ++i) {
            std::copy_n(f->position.begin() + moving[i] * 3, 3, m.position.begin() + i * 3);
            std::copy_n(f->rotation.begin() + moving[i] * 4, 4, m.rotation.begin() + i * 4);
        }
        return ok_status();
    };
    FOURDGS_ASSIGN(RigidParts sub, find_rigid_parts_streamed(in.frames, motion_of, ro));
    for (std::size_t i = 0; i < moving.size(); ++i) {
        out.is_static[moving[i]] = sub.is_static[i];
        out.part_of[moving[i]] = sub.part_of[i];
        out.rides[moving[i]] = sub.rides[i];
    }
    out.static_count += sub.static_count;
    out.other_count = sub.other_count;
    out.riding_count = sub.riding_count;
    out.fit = sub.fit;
    for (RigidPart& part : sub.parts) {
        for (std::uint32_t& g : part.members) g = moving[g];
        for (std::uint32_t& g : part.riders) g = moving[g];
        out.parts.push_back(std::move(part));
    }
    return out;
}

// The per-frame shape of the frames (convert_per_frame's file) through a StreamingWriter, a
// frame at a time: each frame its own window, never fading.
Status per_frame_streamed(const StreamedFrames& in, const ConvertOptions& o, Resolved r,
                          ByteSink& sink, ConvertReport& rep) {
    r.shape = ConvertShape::per_frame;
    r.objects = nullptr;
    FOURDGS_ASSIGN(r.writer.grid,
                   size_grid(r.shape, r.tolerance, in.aabb, r.duration, 0, 0));
    StreamDeclaration d;
    d.gaussian_count = in.frames * in.first.count;
    d.aabb = in.aabb;
    for (std::uint64_t k = 0; k < in.frames; ++k)
        d.windows.push_back({r.time_of(k), r.time_of(k + 1)});
    FOURDGS_ASSIGN(StreamingWriter w, StreamingWriter::create(sink, base_header(in.first.sh_degree,
                                                                                 o, r),
                                                               d, r.writer));
    std::vector<float> mu_t, sigma(in.first.count, kInf), color;
    FOURDGS_TRY(in.each([&](std::uint64_t k, const PlyCloud& f) -> Status {
        std::uint64_t clamped = 0;  // counted by pass 1
        clamp_colors(f, clamped, color);
        mu_t.assign(f.count, static_cast<float>(r.time_of(k)));
        GaussianBatch b;
        b.count = f.count;
        b.position = f.position;
        b.scale = f.scale;
        b.rotation = f.rotation;
        b.color = color;
        b.mu_t = mu_t;
        b.sigma_t = sigma;
        b.sh = std::span<const float>(f.sh.data(),
                                      f.count * static_cast<std::size_t>(f.sh_per_gaussian()));
        b.sh_degree = f.sh_degree;
        return w.add_window(static_cast<std::uint32_t>(k), b);
    }));
    FOURDGS_TRY(w.finish());
    const WriteReport& wr = w.report();
    rep.records = wr.gaussian_count;
    rep.chunks = wr.chunk_count;
    rep.output_bytes = wr.bytes_written;
    rep.quantization = wr.quantization;
    rep.tolerance = r.tolerance;
    return ok_status();
}

// The report's sizes that do not depend on the file: each rigid part's, the static and the other
// gaussians' encoded alone (ConvertOptions::part_bytes, into rep's parts) and the per-frame file's
// when it is counted whole (never_larger_than_per_frame and per_frame_whole).
struct Sizes {
    ConvertReport rep;
    std::uint64_t per_frame = 0;
};

Status sizes_of(const StreamedFrames& in, const RigidParts& parts, const ConvertOptions& o,
                const Resolved& r, Sizes& out) {
    if (o.rigid_parts && o.part_bytes) {
        // Each part alone, the frames read again for it.
        auto encode_view = [&](const TrackedView& view, Resolved& vr, ByteSink& counted) {
            ConvertReport ignored;
            return convert_keyframe_delta_streamed(in, view, o, vr, counted, ignored);
        };
        FOURDGS_TRY(measure_parts(in.first, parts, r, encode_view, out.rep));
    }
    if (o.never_larger_than_per_frame && o.per_frame_whole) {
        ConvertReport counted;
        FOURDGS_TRY(count_per_frame(in, o, r, 0, counted));
        out.per_frame = counted.per_frame_bytes;
    }
    return ok_status();
}

// Where the file waits while it is compared with the per-frame file and measured, before it is
// written to the caller's sink: a file at `path`, removed at the end, or memory when path is
// empty.
class WaitingFile {
public:
    explicit WaitingFile(std::string path) : path_(std::move(path)) {}
    WaitingFile(const WaitingFile&) = delete;
    WaitingFile& operator=(const WaitingFile&) = delete;
    ~WaitingFile() {
        if (path_.empty()) return;
        source_.reset();
        file_.reset();
        std::remove(path_.c_str());
    }

    // An empty file to write.
    Result<ByteSink*> restart() {
        source_.reset();
        if (path_.empty()) {
            memory_ = MemorySink{};
            return &memory_;
        }
        file_.reset();
        FOURDGS_ASSIGN(FileSink f, FileSink::create(path_));
        return &file_.emplace(std::move(f));
    }
    // What was written, to read.
    Result<ByteSource*> source() {
        if (path_.empty()) return &memory_source_.emplace(Bytes(memory_.bytes()));
        if (file_) FOURDGS_TRY(file_->close());
        FOURDGS_ASSIGN(FileSource f, FileSource::open(path_));
        return &source_.emplace(std::move(f));
    }
    // What was written, into `sink`, a block at a time.
    Status copy_to(ByteSink& sink) {
        FOURDGS_ASSIGN(ByteSource* in, source());
        std::vector<std::uint8_t> block;
        const std::uint64_t size = in->size().value_or(0);
        for (std::uint64_t at = 0; at < size; at += block.size()) {
            FOURDGS_TRY(read_range(*in, at, std::min<std::uint64_t>(size - at, 1 << 20),
                                   std::uint64_t{1} << 20, block));
            FOURDGS_TRY(sink.write(Bytes(block)));
        }
        return ok_status();
    }

private:
    std::string path_;
    MemorySink memory_;
    std::optional<FileSink> file_;
    std::optional<MemorySource> memory_source_;
    std::optional<FileSource> source_;
};

}  // namespace

StreamedFrames streamed_from_memory(std::span<const PlyCloud> frames) {
    StreamedFrames in;
    in.frames = frames.size();
    in.first = frames.front();
    in.read = [frames](std::uint64_t k) -> Result<PlyCloud> { return frames[k]; };
    in.read_into = [frames](std::uint64_t k, PlyCloud& into) {
        into = frames[k];
        return ok_status();
    };
    in.aabb = frames_aabb(frames);
    return in;
}

Status count_per_frame(const StreamedFrames& in, const ConvertOptions& o, const Resolved& r,
                       std::uint64_t larger_than, ConvertReport& rep) {
    CountingSink flat = o.per_frame_whole ? CountingSink() : CountingSink(larger_than);
    ConvertReport ignored;
    // Counted, never kept (it is written again, verified, when it is the smaller): its chunks
    // are not decoded back, the same bytes (WriterOptions::verify).
    Resolved counted = r;
    counted.writer.verify = false;
    Status st = per_frame_streamed(in, o, counted, flat, ignored);
    // Stopped where it passed the file: larger, which is all the choice needs.
    if (!st.ok() && !flat.passed()) return st;
    rep.per_frame_bytes = flat.position();
    rep.per_frame_partial = flat.passed();
    return ok_status();
}

Status convert_tracked_streamed(const FrameSource& source, const ConvertOptions& o,
                                ByteSink& sink, ConvertReport& rep, const std::string& spill) {
    if (source.frames == 0) return bad(refusal::kNoFrames, "there are no frames to convert");
    if (!std::isfinite(o.fps) || !(o.fps > 0))
        return bad(refusal::kInvalidOption,
                   "fps is " + std::to_string(o.fps) + ", must be finite and > 0");
    StreamedFrames in;
    in.frames = source.frames;
    in.read = source.read;
    in.read_into = source.read_into;
    in.read_motion_into = source.read_motion_into;
    FOURDGS_ASSIGN(in.first, source.read(0));
    rep.frames = static_cast<std::size_t>(in.frames);
    std::vector<StillDeviation> still;
    FOURDGS_TRY(scan(in, o.progress, rep, still));
    if (source.input_bytes)
        for (std::uint64_t k = 0; k < in.frames; ++k) rep.input_bytes += source.input_bytes(k);
    FOURDGS_ASSIGN(Resolved r, resolve_unplanned(in.frames, in.aabb, o));
    rep.shape = r.shape;

    RigidParts parts;
    Objects objects;
    std::vector<std::uint32_t> held;
    if (o.rigid_parts) {
        // The riders' rotations of one window kept: the encode obtains each window's as it
        // reaches it (convert_keyframe_delta_streamed), in memory bounded by a window.
        RigidOptions ro = part_search_options(in.aabb, o, r);
        ro.every_window = false;
        FOURDGS_ASSIGN(parts, find_parts_streamed(in, still, ro));
        report_parts(parts, rep);
        if (!parts.parts.empty()) {
            held = parts.part_of;
            objects = objects_of(in.first, parts, r);
            r.objects = &objects;
            r.share = share_of_parts(in.aabb, parts, r);
        }
    }
    choose_keyframes(still, parts, o, r);
    still = {};
    // The sizes the report tells beside the file's (each part alone, the per-frame file) do not
    // depend on the file: with threads, and a source that may be read from two threads, they are
    // encoded on a thread of their own while the file is (each pass holds its own frame and
    // states, so memory stays bounded; the bytes and the report are the same).
    Sizes sizes;
    sizes.rep = rep;
    const bool beside = source.concurrent_reads && worker_threads(o.writer.threads) > 1;
    ConvertOptions beside_o = o;
    beside_o.progress = nullptr;  // the caller's progress is told from this thread only
    WaitingFile waiting(spill);
    FOURDGS_ASSIGN(ByteSink* tracked, waiting.restart());
    Status beside_status;
    std::optional<std::thread> side;  // joined below before any return
    if (beside)
        side.emplace([&, side_r = r] {
            beside_status = sizes_of(in, parts, beside_o, side_r, sizes);
        });
    else
        FOURDGS_TRY(sizes_of(in, parts, o, r, sizes));
    Status written =
        convert_keyframe_delta_streamed(in, TrackedView{{}, held, parts.rides, parts.parts}, o, r,
                                        *tracked, rep);
    if (side) side->join();
    FOURDGS_TRY(std::move(written));
    FOURDGS_TRY(std::move(beside_status));
    rep.static_part.bytes = sizes.rep.static_part.bytes;
    rep.other_part.bytes = sizes.rep.other_part.bytes;
    for (std::size_t j = 0; j < rep.objects.size(); ++j)
        rep.objects[j].bytes = sizes.rep.objects[j].bytes;
    const std::uint64_t tracked_bytes = tracked->position();
    const FrameAt frame_at = [&](std::size_t k) { return in.frame(k); };
    if (o.never_larger_than_per_frame) {
        // Counted whole above, or now, only as far as the file it is compared with.
        if (o.per_frame_whole) rep.per_frame_bytes = sizes.per_frame;
        else FOURDGS_TRY(count_per_frame(in, o, r, tracked_bytes, rep));
        if (!rep.per_frame_partial && rep.per_frame_bytes < tracked_bytes) {
            // Written again, this time to keep: it is rarely the smaller.
            const std::uint64_t flat_bytes = rep.per_frame_bytes;
            ConvertReport flat_rep = rep;
            FOURDGS_ASSIGN(tracked, waiting.restart());
            FOURDGS_TRY(per_frame_streamed(in, o, r, *tracked, flat_rep));
            rep = std::move(flat_rep);
            rep.per_frame_bytes = flat_bytes;
            rep.shape = ConvertShape::per_frame;
        }
    }
    FOURDGS_ASSIGN(ByteSource* file, waiting.source());
    FOURDGS_TRY(measure_error(rep.frames, frame_at, o, r, *file, rep));
    return waiting.copy_to(sink);
}

}  // namespace fourdgs::convert_parts
