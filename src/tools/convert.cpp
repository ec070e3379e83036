// Frame sequences in, instants out (convert.hpp).
#include "fourdgs/tools/convert.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <numeric>
#include <system_error>

#include "fourdgs/keyframe_writer.hpp"
#include "fourdgs/open_scene.hpp"
#include "fourdgs/quantize.hpp"
#include "fourdgs/reconstruct.hpp"

namespace fourdgs {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

Error bad(std::string_view refusal, std::string message) {
    return make_error(ErrorKind::invalid_argument, refusal, std::move(message));
}

double frame_time(std::size_t i, double fps) { return static_cast<double>(i) / fps; }

// The largest side of the box around every position of every frame (what the presets scale by).
// No positions at all give 0, which preset_bounds reads as 1.
double extent_of(std::span<const PlyCloud> frames) {
    double extent = 0;
    for (int c = 0; c < 3; ++c) {
        double lo = std::numeric_limits<double>::infinity(), hi = -lo;
        for (const PlyCloud& f : frames)
            for (std::size_t i = 0; i < f.count; ++i) {
                lo = std::min<double>(lo, f.position[i * 3 + c]);
                hi = std::max<double>(hi, f.position[i * 3 + c]);
            }
        if (lo <= hi) extent = std::max(extent, hi - lo);
    }
    return extent;
}

// The writer's worst case for a whole rotation (a recovered component included) at a
// per-stored-component bound e (§6.4); writer.cpp verifies against the same expression.
double rotation_limit(double e) {
    const double s = std::sqrt(3.0) / 2 + std::sqrt(3.0) * e;
    const double qm_min = std::sqrt(std::max(0.0, 1 - s * s));
    return std::max(e, (3 * e + 3 * e * e) / (0.5 + qm_min));
}

// Colour with every component clamped into [0, 1], counting the clamps.
std::vector<float> clamped_colors(const PlyCloud& f, std::uint64_t& clamped) {
    std::vector<float> c(f.color);
    for (float& v : c) {
        const float k = std::clamp(v, 0.0f, 1.0f);
        clamped += std::fabs(k - v) > 1e-6f;  // not the f32 noise of a PLY round trip
        v = k;
    }
    return c;
}

std::string num(double v) { return bound_string(std::fabs(v)); }

Metadata convert_metadata(std::size_t frames, double fps, const QuantBounds& tol) {
    Metadata m;
    m.name = "4dgs-convert";
    m.entries = {{"source_frames", std::to_string(frames)},
                 {"fps", bound_string(fps)},
                 {"tolerance.pos", num(tol.pos)},
                 {"tolerance.scale_rel", num(tol.scale_rel)},
                 {"tolerance.rot", num(tol.rot)},
                 {"tolerance.rgb", num(tol.rgb)},
                 {"tolerance.alpha", num(tol.alpha)}};
    return m;
}

SceneHeader base_header(std::span<const PlyCloud> frames, const ConvertOptions& o,
                        const QuantBounds& tol) {
    SceneHeader h;
    h.duration_sec = frame_time(frames.size(), o.fps);
    h.sh_degree = frames.front().sh_degree;
    h.attributes = {{"source", "ply-sequence"}, {"visibility_profile", "box"}};
    if (!o.title.empty()) h.attributes.emplace_back("title", o.title);
    if (!o.coordinate_system.empty())
        h.attributes.emplace_back("coordinate_system", o.coordinate_system);
    h.metadata.push_back(convert_metadata(frames.size(), o.fps, tol));
    return h;
}

Status check_tracked(std::span<const PlyCloud> frames) {
    for (std::size_t i = 1; i < frames.size(); ++i) {
        if (frames[i].count != frames[0].count)
            return bad(refusal::kFramesNotTracked,
                       "frame " + std::to_string(i) + " holds " + std::to_string(frames[i].count) +
                           " gaussians but frame 0 holds " + std::to_string(frames[0].count) +
                           "; tracked conversion needs the same gaussians in every frame");
        if (frames[i].sh_degree != frames[0].sh_degree)
            return bad(refusal::kFramesNotTracked, "frame " + std::to_string(i) + " has SH degree " +
                                                 std::to_string(frames[i].sh_degree) +
                                                 " but frame 0 has " +
                                                 std::to_string(frames[0].sh_degree));
    }
    return ok_status();
}

void tick(const ConvertOptions& o, std::uint64_t done, std::uint64_t total) {
    if (o.progress) o.progress(done, total);
}

// ---- per frame --------------------------------------------------------------------------------

// Writes the converted gaussians and fills the report both shapes share.
Status write_columns(const GaussianColumns& cols, SceneHeader header, const WriterOptions& wo,
                     ByteSink& sink, const QuantBounds& tol, ConvertReport& rep) {
    WriteReport wr;
    FOURDGS_TRY(write_scene(SceneInput{std::move(header), cols.batch()}, wo, sink, &wr));
    rep.records = wr.gaussian_count;
    rep.chunks = wr.chunk_count;
    rep.output_bytes = wr.bytes_written;
    rep.quantization = wr.quantization;
    rep.tolerance = tol;
    return ok_status();
}

Status convert_per_frame(std::span<const PlyCloud> frames, const ConvertOptions& o,
                         ByteSink& sink, ConvertReport& rep) {
    const int degree = frames.front().sh_degree;
    std::size_t total = 0;
    for (std::size_t i = 0; i < frames.size(); ++i) {
        if (frames[i].sh_degree != degree)
            return bad(refusal::kShDegreeMismatch, "frame " + std::to_string(i) + " has SH degree " +
                                                 std::to_string(frames[i].sh_degree) +
                                                 " but frame 0 has " + std::to_string(degree));
        total += frames[i].count;
    }
    QuantBounds q = o.writer.bounds ? *o.writer.bounds : preset_bounds(o.writer.preset, extent_of(frames));
    QuantBounds tol = q;
    tol.rot = rotation_limit(q.rot);

    GaussianColumns cols;
    const std::size_t per = static_cast<std::size_t>(frames.front().sh_per_gaussian());
    cols.position.reserve(total * 3);
    for (std::size_t i = 0; i < frames.size(); ++i) {
        const PlyCloud& f = frames[i];
        cols.position.insert(cols.position.end(), f.position.begin(), f.position.end());
        cols.scale.insert(cols.scale.end(), f.scale.begin(), f.scale.end());
        cols.rotation.insert(cols.rotation.end(), f.rotation.begin(), f.rotation.end());
        const auto c = clamped_colors(f, rep.clamped_colors);
        cols.color.insert(cols.color.end(), c.begin(), c.end());
        cols.sh.insert(cols.sh.end(), f.sh.begin(), f.sh.begin() + f.count * per);
        const double t0 = frame_time(i, o.fps), t1 = frame_time(i + 1, o.fps);
        cols.mu_t.insert(cols.mu_t.end(), f.count, static_cast<float>(t0));
        cols.sigma_t.insert(cols.sigma_t.end(), f.count, kInf);  // never fades: the box profile
        cols.win_lo.insert(cols.win_lo.end(), f.count, t0);
        cols.win_hi.insert(cols.win_hi.end(), f.count, t1);
        tick(o, i + 1, frames.size());
    }
    cols.count = total;
    cols.sh_degree = degree;
    return write_columns(cols, base_header(frames, o, tol), o.writer, sink, tol, rep);
}

// ---- keyframe-delta ---------------------------------------------------------------------------

Status convert_keyframe_delta(std::span<const PlyCloud> frames, const ConvertOptions& o,
                              ByteSink& sink, ConvertReport& rep) {
    FOURDGS_TRY(check_tracked(frames));
    if (o.keyframe_every == 0) return bad(refusal::kInvalidOption, "keyframe_every is 0, must be >= 1");
    QuantBounds q = o.writer.bounds ? *o.writer.bounds : preset_bounds(o.writer.preset, extent_of(frames));
    QuantBounds tol = q;
    tol.rot = rotation_limit(q.rot);

    const std::size_t n = frames.front().count;
    std::vector<std::uint32_t> ids(n);
    std::iota(ids.begin(), ids.end(), 0u);
    const std::vector<float> sigma(n, kInf);
    std::vector<std::vector<float>> colors(frames.size());
    std::vector<KeyframeStep> steps(frames.size());
    for (std::size_t i = 0; i < frames.size(); ++i) {
        const PlyCloud& f = frames[i];
        colors[i] = clamped_colors(f, rep.clamped_colors);
        KeyframeStep& s = steps[i];
        s.t0 = frame_time(i, o.fps);
        s.ids = ids;
        s.gaussians.count = n;
        s.gaussians.position = f.position;
        s.gaussians.scale = f.scale;
        s.gaussians.rotation = f.rotation;
        s.gaussians.color = colors[i];
        s.gaussians.sigma_t = sigma;
        s.gaussians.sh_degree = f.sh_degree;
        s.gaussians.sh = f.sh;
    }
    KeyframeWriterOptions ko;
    ko.base = o.writer;
    ko.keyframe_every = o.keyframe_every;
    KeyframeWriteReport kr;
    FOURDGS_TRY(write_keyframe_delta(steps, base_header(frames, o, tol), ko, sink, &kr));
    tick(o, frames.size(), frames.size());
    rep.records = 0;
    for (std::uint64_t c : kr.live_count) rep.records += c;
    rep.chunks = kr.base.chunk_count;
    rep.output_bytes = kr.base.bytes_written;
    rep.quantization = kr.base.quantization;
    rep.tolerance = tol;
    return ok_status();
}

// ---- adaptive temporal sampling (§12) ---------------------------------------------------------

struct FitTolerance {
    double pos, scale_log, rot, rgb, alpha;
};

// One gaussian's state in frame k, normalized for comparison.
struct Sample {
    std::array<double, 3> p, log_s;
    std::array<double, 4> q;
    std::array<double, 4> c;
};

Sample sample_of(const PlyCloud& f, std::size_t g) {
    Sample s;
    double nq = 0;
    for (int c = 0; c < 4; ++c) nq += double(f.rotation[g * 4 + c]) * f.rotation[g * 4 + c];
    nq = nq > 0 ? std::sqrt(nq) : 1;
    for (int c = 0; c < 3; ++c) {
        s.p[c] = f.position[g * 3 + c];
        s.log_s[c] = std::log(std::max(double(f.scale[g * 3 + c]), 1e-30));
    }
    for (int c = 0; c < 4; ++c) {
        s.q[c] = f.rotation[g * 4 + c] / nq;
        s.c[c] = std::clamp(double(f.color[g * 4 + c]), 0.0, 1.0);
    }
    return s;
}

// Whether frames [a, b) of gaussian g are one record within `tol`: the line from frame a's
// position to frame b-1's, and every other attribute held at frame a's value (SH bytes equal).
bool span_fits(std::span<const PlyCloud> frames, std::span<const Sample> s, std::size_t g,
               std::size_t a, std::size_t b, const FitTolerance& tol) {
    if (b - a <= 1) return true;
    const Sample& first = s[a];
    const Sample& last = s[b - 1];
    const double dt = static_cast<double>(b - 1 - a);
    const std::size_t per = static_cast<std::size_t>(frames[a].sh_per_gaussian());
    for (std::size_t k = a + 1; k < b; ++k) {
        const Sample& x = s[k];
        const double u = static_cast<double>(k - a) / dt;
        for (int c = 0; c < 3; ++c) {
            const double line = first.p[c] + (last.p[c] - first.p[c]) * u;
            if (std::fabs(line - x.p[c]) > tol.pos) return false;
            if (std::fabs(x.log_s[c] - first.log_s[c]) > tol.scale_log) return false;
            if (std::fabs(x.c[c] - first.c[c]) > tol.rgb) return false;
        }
        if (std::fabs(x.c[3] - first.c[3]) > tol.alpha) return false;
        double ep = 0, en = 0;
        for (int c = 0; c < 4; ++c) {
            ep = std::max(ep, std::fabs(x.q[c] - first.q[c]));
            en = std::max(en, std::fabs(x.q[c] + first.q[c]));
        }
        if (std::min(ep, en) > tol.rot) return false;
        for (std::size_t j = 0; j < per; ++j)
            if (sh_byte(frames[k].sh[g * per + j]) != sh_byte(frames[a].sh[g * per + j]))
                return false;
    }
    return true;
}

struct Span {
    std::uint32_t g, a, b;  // gaussian, frames [a, b)
};

void bisect(std::span<const PlyCloud> frames, std::span<const Sample> s, std::size_t g,
            std::size_t a, std::size_t b, const FitTolerance& tol, std::vector<Span>& out) {
    if (span_fits(frames, s, g, a, b, tol)) {
        out.push_back({static_cast<std::uint32_t>(g), static_cast<std::uint32_t>(a),
                       static_cast<std::uint32_t>(b)});
        return;
    }
    const std::size_t mid = a + (b - a) / 2;
    bisect(frames, s, g, a, mid, tol, out);
    bisect(frames, s, g, mid, b, tol, out);
}

Status convert_adaptive(std::span<const PlyCloud> frames, const ConvertOptions& o,
                        ByteSink& sink, ConvertReport& rep) {
    FOURDGS_TRY(check_tracked(frames));
    const QuantBounds B =
        o.writer.bounds ? *o.writer.bounds : preset_bounds(o.writer.preset, extent_of(frames));
    const FitTolerance fit{B.pos / 2, B.scale_rel / 2, B.rot / 2, B.rgb / 2, B.alpha / 2};

    const std::size_t n = frames.front().count, nf = frames.size();
    std::vector<Span> spans;
    std::vector<Sample> samples(nf);
    for (std::size_t g = 0; g < n; ++g) {
        for (std::size_t k = 0; k < nf; ++k) samples[k] = sample_of(frames[k], g);
        bisect(frames, samples, g, 0, nf, fit, spans);
        if ((g & 1023) == 0) tick(o, g, n);
    }
    tick(o, n, n);

    // One record per span: frame a's state, moving along the fitted line.
    const std::size_t m = spans.size();
    const std::size_t per = static_cast<std::size_t>(frames.front().sh_per_gaussian());
    GaussianColumns cols;
    cols.sh_degree = frames.front().sh_degree;
    cols.resize(m);
    std::fill(cols.sigma_t.begin(), cols.sigma_t.end(), kInf);
    double vmax = 0, longest_moving = 0;
    for (std::size_t r = 0; r < m; ++r) {
        const Span& sp = spans[r];
        const PlyCloud& fa = frames[sp.a];
        const PlyCloud& fb = frames[sp.b - 1];
        const double ta = frame_time(sp.a, o.fps), tb = frame_time(sp.b - 1, o.fps);
        for (int c = 0; c < 3; ++c) {
            cols.position[r * 3 + c] = fa.position[sp.g * 3 + c];
            const double v = sp.b - sp.a > 1
                                 ? (double(fb.position[sp.g * 3 + c]) - fa.position[sp.g * 3 + c]) /
                                       (tb - ta)
                                 : 0.0;
            cols.motion[r * 3 + c] = static_cast<float>(v);
            cols.scale[r * 3 + c] = fa.scale[sp.g * 3 + c];
            vmax = std::max(vmax, std::fabs(v));
        }
        for (int c = 0; c < 4; ++c) {
            cols.rotation[r * 4 + c] = fa.rotation[sp.g * 4 + c];
            cols.color[r * 4 + c] = std::clamp(fa.color[sp.g * 4 + c], 0.0f, 1.0f);
            rep.clamped_colors += std::fabs(cols.color[r * 4 + c] - fa.color[sp.g * 4 + c]) > 1e-6f;
        }
        cols.mu_t[r] = static_cast<float>(ta);
        cols.win_lo[r] = ta;
        cols.win_hi[r] = frame_time(sp.b, o.fps);
        if (cols.motion[r * 3] != 0 || cols.motion[r * 3 + 1] != 0 || cols.motion[r * 3 + 2] != 0)
            longest_moving = std::max(longest_moving, cols.win_hi[r] - cols.win_lo[r]);
        std::copy_n(fa.sh.begin() + sp.g * per, per, cols.sh.begin() + r * per);
    }

    // The quantization half of the budget (see convert.hpp). A velocity error dv moves a record
    // by at most dv x window; §6.3 scales the velocity step by the window so that this is at
    // most half the class-0 bound for windows up to 2 s, and window / 4 times it beyond.
    QuantBounds q = B;
    q.pos = B.pos / 4;
    q.scale_rel = B.scale_rel / 2;
    q.rot = B.rot / 2;
    q.rgb = B.rgb / 2;
    q.alpha = B.alpha / 2;
    q.motion = (B.pos / 8) / std::max(0.5, longest_moving / 4);
    q.time = vmax > 0 ? std::min(B.time / 2, (B.pos / 8) / vmax) : B.time / 2;
    QuantBounds tol = B;
    tol.rot = fit.rot + rotation_limit(q.rot);

    WriterOptions wo = o.writer;
    wo.bounds = q;
    return write_columns(cols, base_header(frames, o, tol), wo, sink, tol, rep);
}

}  // namespace

bool natural_less(const std::string& a, const std::string& b) {
    std::size_t i = 0, j = 0;
    auto digit = [](char c) { return c >= '0' && c <= '9'; };
    while (i < a.size() && j < b.size()) {
        if (digit(a[i]) && digit(b[j])) {
            std::size_t i2 = i, j2 = j;
            while (i2 < a.size() && a[i2] == '0') ++i2;
            while (j2 < b.size() && b[j2] == '0') ++j2;
            std::size_t ie = i2, je = j2;
            while (ie < a.size() && digit(a[ie])) ++ie;
            while (je < b.size() && digit(b[je])) ++je;
            if (ie - i2 != je - j2) return ie - i2 < je - j2;
            const int c = a.compare(i2, ie - i2, b, j2, je - j2);
            if (c != 0) return c < 0;
            if (ie - i != je - j) return ie - i < je - j;  // fewer leading zeros first
            i = ie;
            j = je;
        } else {
            if (a[i] != b[j]) return a[i] < b[j];
            ++i;
            ++j;
        }
    }
    return a.size() - i < b.size() - j;
}

Result<std::vector<std::string>> list_ply_frames(std::span<const std::string> inputs) {
    namespace fs = std::filesystem;
    std::vector<std::string> out;
    for (const std::string& in : inputs) {
        std::error_code ec;
        const fs::file_status st = fs::status(in, ec);
        if (ec || !fs::exists(st))
            return make_error(ErrorKind::io, refusal::kIoError, "no such file or directory: " + in);
        if (!fs::is_directory(st)) {
            out.push_back(in);
            continue;
        }
        std::vector<std::string> found;
        for (fs::directory_iterator it(in, ec), end; !ec && it != end; it.increment(ec)) {
            std::string ext = it->path().extension().string();
            std::transform(ext.begin(), ext.end(), ext.begin(),
                           [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
            if (ext == ".ply" && it->is_regular_file(ec)) found.push_back(it->path().string());
        }
        if (ec) return make_error(ErrorKind::io, refusal::kIoError, "cannot list " + in + ": " + ec.message());
        std::sort(found.begin(), found.end(), natural_less);
        out.insert(out.end(), found.begin(), found.end());
    }
    return out;
}

Status convert_frames(std::span<const PlyCloud> frames, const ConvertOptions& options,
                      ByteSink& sink, ConvertReport* report) {
    if (frames.empty()) return bad(refusal::kNoFrames, "there are no frames to convert");
    if (!std::isfinite(options.fps) || !(options.fps > 0))
        return bad(refusal::kInvalidOption, "fps is " + std::to_string(options.fps) +
                                         ", must be finite and > 0");
    ConvertReport local;
    ConvertReport& rep = report ? *report : local;
    rep.frames = frames.size();
    rep.input_gaussians = 0;
    for (const PlyCloud& f : frames) rep.input_gaussians += f.count;
    switch (options.shape) {
        case ConvertShape::per_frame: return convert_per_frame(frames, options, sink, rep);
        case ConvertShape::keyframe_delta: return convert_keyframe_delta(frames, options, sink, rep);
        case ConvertShape::adaptive: return convert_adaptive(frames, options, sink, rep);
    }
    return bad(refusal::kInvalidOption, "unknown conversion shape");
}

Status convert_ply_files(std::span<const std::string> paths, const std::string& output,
                         const ConvertOptions& options, ConvertReport* report) {
    ConvertReport local;
    ConvertReport& rep = report ? *report : local;
    std::vector<PlyCloud> frames;
    frames.reserve(paths.size());
    rep.input_bytes = 0;
    for (std::size_t i = 0; i < paths.size(); ++i) {
        FOURDGS_ASSIGN(PlyCloud cloud, read_ply_file(paths[i]));
        std::error_code ec;
        rep.input_bytes += std::filesystem::file_size(paths[i], ec);
        frames.push_back(std::move(cloud));
        if (options.progress) options.progress(i + 1, paths.size());
    }
    // Write beside the output and rename at the end, so a refusal never leaves a partial file.
    const std::string temp = output + ".partial-" + std::to_string(::getpid());
    Status st;
    {
        auto sink = FileSink::create(temp);
        if (!sink.ok()) return std::move(sink).error();
        st = convert_frames(frames, options, *sink, &rep);
        if (st.ok()) st = sink->close();
    }
    if (st.ok() && std::rename(temp.c_str(), output.c_str()) != 0)
        st = make_error(ErrorKind::io, refusal::kIoError, "cannot rename " + temp + " to " + output);
    if (!st.ok()) std::remove(temp.c_str());
    return st;
}

Status evaluate_scene_at(ByteSource& source, double t, const ExtractOptions& options,
                         SceneInfo& scene_out, Frame& frame) {
    OpenSceneOptions so;
    so.reader.decode.max_sh_degree = std::clamp(options.max_sh_degree, 0, 3);
    FOURDGS_ASSIGN(SceneReader reader, open_scene(source, so));
    const SceneInfo& scene = reader.scene();
    if (!std::isfinite(t) || t < 0 || !(t < scene.header.duration_sec))
        return bad(refusal::kTimeOutOfRange, "time " + std::to_string(t) + " s is outside [0, " +
                                            std::to_string(scene.header.duration_sec) + ")");
    GaussianBlock block;
    SceneWorkspace ws;
    FOURDGS_TRY(reader.state_at(t, block, ws));
    EvaluateOptions eo;
    eo.with_sh = true;
    eo.max_sh_degree = so.reader.decode.max_sh_degree;
    if (options.object_tracks) eo.tracks = scene.object_tracks;
    evaluate(block, t, scene.header.cutoff, frame, eo);
    scene_out = scene;
    return ok_status();
}

Result<PlyCloud> extract_state(ByteSource& source, double t, const ExtractOptions& options) {
    SceneInfo scene;
    Frame frame;
    FOURDGS_TRY(evaluate_scene_at(source, t, options, scene, frame));
    return ply_from_frame(frame, options.max_sh_degree);
}

}  // namespace fourdgs
