// fourdgs/tools/convert.hpp — other representations in and out (§12): a sequence of 3DGS PLY
// frames becomes a scene, and the state of a scene at an instant becomes a PLY. Part of the
// tools library (fourdgs::tools).
//
// Frame sequence → scene. Frame i holds the gaussians of [i / fps, (i + 1) / fps); the scene's
// duration is frames / fps. Three shapes:
//   per_frame       §12's import, correct for any sequence: a gaussian-birth file with one
//                   validity window per frame, zero velocity, never fading (flags bit 0, the
//                   `box` visibility profile). Nothing is assumed about correspondence.
//   keyframe_delta  for tracked frames (every frame holds the same gaussians in the same order):
//                   gaussian i keeps id i across frames, written by keyframe_writer.hpp as
//                   keyframes every `keyframe_every` frames and deltas between them.
//   adaptive        for tracked frames: §12's adaptive temporal sampling into gaussian-birth.
//                   Each gaussian's frame range is bisected only where the straight line between
//                   the range's first and last positions misses an intermediate frame by more
//                   than the fit tolerance, or where another attribute leaves its tolerance of
//                   the range's first frame; a gaussian that does not move is one record for the
//                   whole clip. Each record is never fading over its range, positioned at the
//                   first frame with the fitted velocity. Ranges come from bisection, so the
//                   Window Table stays small (at most 2 x frames - 1 windows).
//
// Error budget. The per-frame and keyframe-delta files are within the file's declared
// Quantization bounds of the input at every frame time (the writers verify every attribute).
// An adaptive file spends the preset's bound B per attribute as: for position, B/4 on
// quantization, B/2 on the line fit, B/8 on velocity and B/8 on mu_t quantization (their steps
// are narrowed to fit); for scale, rotation, rgb and opacity, B/2 on the fit and B/2 on
// quantization. So every frame time reconstructs within B of the input. The bounds B a file
// meets end to end are recorded in a Metadata record named "4dgs-convert" (keys tolerance.pos,
// tolerance.scale_rel, tolerance.rot, tolerance.rgb, tolerance.alpha, plus source_frames and
// fps), for every shape.
//
// Input colour outside [0, 1] (trainers' DC terms leave it) is clamped, and counted in the
// report; SH coefficients are clamped to [-4, 4] by the writer (§6.5).
//
// Refusals (invalid_argument unless noted): no-frames, invalid-option (fps not finite and > 0,
// keyframe_every 0, a frame too many for the timeline), frames-not-tracked (naming the first
// frame whose count or SH degree differs from frame 0's, for keyframe_delta and adaptive),
// sh-degree-mismatch (per_frame frames of different SH degrees), then the writers' refusals
// naming the gaussian. The file variant also refuses io-error; it writes to a temporary name
// beside the output and renames it into place only after the whole file is written, so a
// refusal leaves nothing partial behind.
//
// Scene → PLY. extract_state opens the scene once with open_scene (open_scene.hpp: the
// front-end its temporal model needs, on a random-access source or a stream), reconstructs the
// visible state at t (§3, object tracks composed) and returns it as a PlyCloud.
//
// Thread safety: every function is reentrant; `progress` is called on the calling thread.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "fourdgs/error.hpp"
#include "fourdgs/io.hpp"
#include "fourdgs/tools/ply.hpp"
#include "fourdgs/reconstruct.hpp"
#include "fourdgs/scene.hpp"
#include "fourdgs/writer.hpp"

namespace fourdgs {

enum class ConvertShape : std::uint8_t { per_frame, keyframe_delta, adaptive };

struct ConvertOptions {
    double fps = 30;
    ConvertShape shape = ConvertShape::per_frame;
    WriterOptions writer;              // preset, codec, SH ladder, chunking
    std::uint32_t keyframe_every = 10; // keyframe_delta: a keyframe every K frames
    std::string title;                 // "" = none; else a `title` metadata entry
    // The registry's `coordinate_system` key (handedness, up axis; PLY files carry none), written
    // to the Header attributes when not "" (§2: producers SHOULD record one).
    std::string coordinate_system;
    // Called with (step, steps) as frames are loaded or gaussians fitted; may be empty.
    std::function<void(std::uint64_t, std::uint64_t)> progress;
};

struct ConvertReport {
    std::size_t frames = 0;
    std::uint64_t input_gaussians = 0;  // summed over frames
    std::uint64_t records = 0;          // gaussian records written (adaptive: spans)
    std::uint64_t input_bytes = 0;      // the PLY files (file variant only)
    std::uint64_t output_bytes = 0;
    std::uint32_t chunks = 0;
    std::uint64_t clamped_colors = 0;   // colour components clamped into [0, 1]
    QuantBounds tolerance;              // the end-to-end bounds B the file meets (see above)
    Quantization quantization;          // as written
};

// Natural order of file names ("frame2" < "frame10"): digit runs compare as numbers.
bool natural_less(const std::string& a, const std::string& b);

// The frame files named by `inputs`: each a file, or a directory whose *.ply files are taken;
// every group sorted naturally. Refusal io-error for a path that does not exist.
Result<std::vector<std::string>> list_ply_frames(std::span<const std::string> inputs);

// Converts frames already in memory, writing the file to `sink`.
Status convert_frames(std::span<const PlyCloud> frames, const ConvertOptions& options,
                      ByteSink& sink, ConvertReport* report = nullptr);

// Reads the PLY files in the order given, converts them and writes `output` atomically (a
// temporary file beside it, renamed over it at the end; removed on any failure).
Status convert_ply_files(std::span<const std::string> paths, const std::string& output,
                         const ConvertOptions& options, ConvertReport* report = nullptr);

struct ExtractOptions {
    int max_sh_degree = 3;     // SH degree of the output, capped by the file's
    bool object_tracks = true; // compose the scene's Object Tracks (§3)
};

// The visible state of the scene in `source` at time t, reconstructed into `frame` (§3, object
// tracks composed when asked), and the scene it came from into `scene`. Refusals: invalid-argument
// time-out-of-range when t is not finite or outside [0, duration), plus the reader refusals.
Status evaluate_scene_at(ByteSource& source, double t, const ExtractOptions& options,
                         SceneInfo& scene, Frame& frame);

// The same state as a PlyCloud (ply_from_frame).
Result<PlyCloud> extract_state(ByteSource& source, double t, const ExtractOptions& options = {});

}  // namespace fourdgs
