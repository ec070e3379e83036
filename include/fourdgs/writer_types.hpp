// fourdgs/writer_types.hpp — the writers' vocabulary: the gaussians and the scene in user terms,
// the quantization and encoding options (presets, bounds, grids, SH ladders, efforts) with their
// names, and what a write reports. writer.hpp (write_scene, StreamingWriter) includes it, and so
// does the write layer's encoding, which needs the types but not the writers. The option helpers
// declared here are implemented in src/write/writer_options.cpp, WriteWorkspace in
// src/write/writer.cpp.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fourdgs/error.hpp"
#include "fourdgs/export.hpp"
#include "fourdgs/records.hpp"
#include "fourdgs/scene.hpp"
#include "fourdgs/stream.hpp"

FOURDGS_PUBLIC_BEGIN
namespace fourdgs {

// ---------------------------------------------------------------------------------------------
// Input in user terms.

// Gaussians as borrowed structure-of-arrays columns (`count` gaussians). Every span is borrowed
// for the duration of the call that receives the batch and is never retained.
//   position  3 × count  rest position, finite
//   scale     3 × count  linear scale, finite and > 0
//   rotation  4 × count  quaternion xyzw, finite, any norm > 0 (normalized by the writer)
//   color     4 × count  linear r, g, b and opacity, each in [0, 1]
//   motion    3 × count  velocity in units per second, finite; empty means all zero
//   mu_t      count      temporal centre, seconds, finite
//   sigma_t   count      temporal standard deviation, seconds: finite and > 0, or +inf (never
//                        fades; stored as flags bit 0)
//   win_lo, win_hi  count  validity window [lo, hi), finite, 0 <= lo < hi <= duration. The
//                        one-shot API and StreamingWriter::add_chunk need them;
//                        StreamingWriter::add_window takes the window as an argument and needs
//                        them empty.
//   sh        count × 3 × ((sh_degree+1)^2 - 1) float coefficients, per gaussian red's
//                        coefficients of bands 1..D, then green's, then blue's (the GaussianBlock
//                        layout). Finite; clamped to [-4, 4] and mapped to bytes by §6.5.
//   sh_degree 0..3; must equal the scene's sh_degree.
//   object_id, source_group, source_index   count each, or empty when absent (§6.6, registry).
struct GaussianBatch {
    std::size_t count = 0;
    std::span<const float> position, scale, rotation, color, motion, mu_t, sigma_t;
    std::span<const double> win_lo, win_hi;
    int sh_degree = 0;
    std::span<const float> sh;
    std::span<const std::uint32_t> object_id;
    std::span<const std::int32_t> source_group, source_index;
};

// Owning columns in GaussianBatch's layout, for a caller that builds its gaussians in memory:
// fill the vectors, then pass batch() (a view, valid while the columns live and do not grow).
struct GaussianColumns {
    std::size_t count = 0;
    std::vector<float> position, scale, rotation, color, motion, mu_t, sigma_t;
    std::vector<double> win_lo, win_hi;
    int sh_degree = 0;
    std::vector<float> sh;
    std::vector<std::uint32_t> object_id;
    std::vector<std::int32_t> source_group, source_index;

    // Sizes the columns for `n` gaussians at sh_degree: position, scale, rotation, color, motion,
    // mu_t, sigma_t, win_lo, win_hi and sh (new values zero); the optional id columns are left
    // as they are.
    void resize(std::size_t n) {
        count = n;
        for (auto* c : {&position, &scale, &motion}) c->resize(n * 3);
        for (auto* c : {&rotation, &color}) c->resize(n * 4);
        for (auto* c : {&mu_t, &sigma_t}) c->resize(n);
        for (auto* c : {&win_lo, &win_hi}) c->resize(n);
        sh.resize(n * 3 * static_cast<std::size_t>((sh_degree + 1) * (sh_degree + 1) - 1));
    }

    GaussianBatch batch() const {
        return {count,  position, scale,     rotation, color,        motion,      mu_t,
                sigma_t, win_lo,  win_hi,    sh_degree, sh,          object_id,   source_group,
                source_index};
    }
};

// An Attachment (§5.13) to write; `data` is borrowed until the call that writes it returns.
struct AttachmentInput {
    std::string name;
    std::string media_type;
    Bytes data;
};

// A private-range record (§4.3, opcode 0x80..0xFF) supplied by the application; `content` is
// borrowed until the call that writes it returns. Written before the chunks.
struct PrivateRecordInput {
    std::uint8_t opcode = 0x80;
    Bytes content;
};

// One audio source for the writer: its descriptor and its encoded payload (borrowed until the
// call that writes it returns). descriptor.data_length is set by the writer from data.size();
// rotations are normalized on output (M086).
struct AudioSourceInput {
    AudioSource descriptor;
    Bytes data;
};

// The pre-spatial single track (§5.9). Writers should prefer AudioSourceInput (M035); this
// exists so old-shape files can be produced on purpose (tests, conformance corpora).
struct LegacyAudioInput {
    std::string codec;
    double start_sec = 0;
    Bytes data;
};

// Scene-level input: the Header fields a caller chooses (§5.1) and the content records written
// ahead of the chunks. duration_sec finite and > 0; cutoff finite in (0, 1).
//
// Metadata, Camera and the provenance family are the SceneExtras base (scene.hpp); Metadata
// records (§5.11) are written in their order, then the attachments. Extras are written after
// the metadata and attachments, before the first chunk, in this order: Camera; Audio Source /
// Audio Data pairs (each source's Data right after its Source, M092) or the legacy Audio record;
// then the provenance family in ascending opcode order (Coordinate Frames, Sensor Calibrations,
// Rig Trajectories, Geodetic Anchors, Object Table, Object Tracks, §5.15). Absent extras cost
// nothing: no record, no placeholder (§5.15.1, §7). Rig Trajectory and Object Track times are
// written as given and are on the scene clock (seconds from 0, §5.15.4): a caller whose capture
// timestamps are on another epoch converts them first (M058; validate() warns about a trajectory
// wholly outside [0, duration]). Header flags bit 0 is set exactly when there is audio (§7).
// Each record is checked by the same parser the readers use, and the set by
// check_scene_references (extras.hpp), before anything is written; a violation is refused with
// the reader's refusal identifier.
struct SceneHeader : SceneExtras {
    double duration_sec = 0;
    double cutoff = 0.05;
    std::string profile;              // registry profile name, or ""
    std::string library;              // "" = "fourdgs <version>"
    StringMap attributes;             // Header attributes map, written as given
    int sh_degree = 0;                // 0..3
    std::vector<AttachmentInput> attachments;
    std::vector<PrivateRecordInput> private_records;

    std::vector<AudioSourceInput> audio;          // source ids unique
    std::optional<LegacyAudioInput> legacy_audio;  // never together with `audio` (M105)
};

// ---------------------------------------------------------------------------------------------
// Quantization options (uniform-v1, §5.3, §6).

enum class Preset : std::uint8_t { fine, default_, coarse };

// "fine", "default", "coarse" → Preset; anything else → nullopt.
std::optional<Preset> parse_preset(std::string_view name);
std::string_view to_string(Preset preset);

// The declared maximum deviation per attribute, in the units of §5.3's bounds keys. Every grid
// step is twice its bound. `motion` is the velocity bound at §6.3 class 0 (a reference lifetime
// of 0.5 s); 0 means 2 × pos, which makes §6.3's displacement guarantee (a decoded velocity moves
// its gaussian by at most `pos` over its nominal lifetime) hold. All must be finite and > 0
// (motion >= 0).
struct QuantBounds {
    double pos = 0;        // absolute, file units
    double scale_rel = 0;  // log domain
    double rot = 0;        // each of the three stored quaternion components (§6.4)
    double rgb = 0;
    double alpha = 0;
    double motion = 0;     // units per second at class 0; 0 = 2 × pos
    double time = 0;       // seconds, mu_t at class 0 (finer classes are finer)
    double sigma_rel = 0;  // log domain
    friend bool operator==(const QuantBounds&, const QuantBounds&) = default;
};

// A preset's bounds for a scene whose aabb's largest side is `extent` (pos scales with it:
// fine extent/65536, default extent/16384, coarse extent/4096; extent <= 0 or non-finite reads as
// 1). The other values are fixed — fine: scale_rel 0.005, rot 0.0005, rgb and alpha 1/510, time
// 0.0005, sigma_rel 0.005; default: 0.02, 0.002, 1/255, 0.002, 0.02; coarse: 0.06, 0.006, 3/255,
// 0.008, 0.06 — and motion is 2 × pos.
QuantBounds preset_bounds(Preset preset, double extent);

// A grid decided before the gaussians are seen (a grid plan shared by the shards of one scene,
// tools/grid_plan.hpp): the position origin, the bounds whose doubles are the steps (as
// WriterOptions::bounds: `motion` at §6.3 class 0, never 0 here), and the reach — the largest
// |coordinate| a position of the scene takes — which sizes the allowance for f32 positions. Every
// file written with the same FixedGrid and clock carries the same Quantization record, whatever
// part of the scene it holds.
struct FixedGrid {
    std::array<double, 3> origin{};
    QuantBounds bounds;
    double reach = 0;
    friend bool operator==(const FixedGrid&, const FixedGrid&) = default;
};

// What a file written on `grid` over a `duration`-second clock declares in its Quantization
// bounds (§5.3): the grid's analytic worst case, which the writer then verifies every gaussian
// against. Keys as QuantBounds, except that `motion` covers every §6.3 velocity class (16 × the
// class-0 bound) and `time` adds the f32 allowance of the clock. Pure; the writers declare exactly
// these numbers (spelled by bound_string).
QuantBounds declared_bounds(const FixedGrid& grid, double duration);

// The coarsest grid for a scene inside `aabb` over a `duration`-second clock whose declared
// bounds (declared_bounds) are each at most `tolerance`: origin the aabb's centre, reach its
// largest |coordinate|, and each step as large as the bound it declares allows — checked by
// computing declared_bounds of the result. `tolerance.motion` keeps QuantBounds' meaning, the
// class-0 velocity bound, and becomes the grid's class-0 bound (0: 2 × the grid's pos bound, which
// makes §6.3's displacement guarantee hold); the declared motion bound then covers the coarser
// classes too. Refusal invalid-option (invalid_argument) naming the attribute when a tolerance is
// not finite and > 0 (motion >= 0), when rgb or alpha exceeds 0.5, or when it is finer than the
// f32 values it bounds can be held to (pos at this reach, time over this clock).
Result<FixedGrid> grid_for_tolerance(const QuantBounds& tolerance,
                                     const std::array<double, 6>& aabb, double duration);

// SH bit-depth ladders (registry naming convention): none = declare no depths (every band at 8
// bits, the field absent), flat 8/8/8, balanced 8/6/5, aggressive 6/4/3.
enum class ShLadder : std::uint8_t { none, flat, balanced, aggressive };
std::optional<ShLadder> parse_sh_ladder(std::string_view name);
// The ladder's depths for bands 1..3 (none gives 8/8/8).
std::array<std::uint8_t, 3> ladder_depths(ShLadder ladder);

// How hard the encoder works for size. Every effort writes a file every reader of the format
// decodes the same, within the same bounds; only the bytes and the time differ.
//   fast      `codec` at its fastest level (codec_table(): deflate 1, zstd 1, lz4 0), each
//             stream's raw/delta mode decided by estimate (ModeChoice::estimate) — live capture.
//   default_  `codec` at `level`, each stream's mode decided by estimate.
//   max       each stream the smallest of every registered codec at its highest level (deflate
//             12, zstd ZSTD_maxCLevel()) and of `codec` at `level` when that is registered, each
//             in both raw and delta mode: never larger than default_, registered codecs only
//             (lz4, a private codec, is never written at max). Several times slower.
enum class Effort : std::uint8_t { fast, default_, max };

// Buffers write_scene reuses across calls: each encoding thread's chunk working set (about 500
// bytes a gaussian of the largest chunk at SH degree 0, more with SH), the encoded chunks (about
// the size of the output file) and the grouping of the input by window. A caller that writes many
// scenes (the frames of a capture, a benchmark) passes the same one in WriterOptions::workspace,
// so that only the first call pays for fresh memory; the workspace then holds that memory until
// it is destroyed. Used by one write_scene call at a time (it is not thread-safe); it does not
// change the bytes written.
class WriteWorkspace {
public:
    WriteWorkspace();
    ~WriteWorkspace();
    WriteWorkspace(WriteWorkspace&&) noexcept;
    WriteWorkspace& operator=(WriteWorkspace&&) noexcept;

    struct Impl;  // the writer's own
    Impl& impl() noexcept { return *impl_; }

private:
    std::unique_ptr<Impl> impl_;
};

// "fast", "default", "max" → Effort; anything else → nullopt.
std::optional<Effort> parse_effort(std::string_view name);
std::string_view to_string(Effort effort);

struct WriterOptions {
    Preset preset = Preset::default_;
    std::optional<QuantBounds> bounds;  // explicit bounds; replace the preset when set
    // A grid fixed in advance (FixedGrid): replaces the preset, the bounds and the aabb-derived
    // origin, and the Quantization record declares declared_bounds(grid, duration) — the grid's
    // worst case, verified — rather than measured maxima, so every file on it agrees.
    std::optional<FixedGrid> grid;

    // SH bit depths (§6.5): explicit per-band depths (3..8, one per band 1..sh_degree) win over
    // the ladder. When any depths are declared, step_sh and bounds.sh carry the coarsest band's
    // pitch and bound (M103) and bounds.sh_band<b> each band's (M023).
    ShLadder sh_ladder = ShLadder::none;
    std::vector<std::uint8_t> sh_depths;

    // Per-stream codec (§5.6, registry): codec::deflate (default), codec::zstd, or codec::lz4
    // (the private byte 0x80; the writer then adds the Metadata entry naming the application).
    std::uint8_t codec = codec::deflate;
    int level = 6;  // deflate 0–12, zstd min..max, lz4 0–12 (see stream.hpp compress())
    Effort effort = Effort::default_;
    // fast and default_: decide each stream's raw/delta mode by compressing both and keeping the
    // smaller (twice the codec's time; the writer's behaviour before effort levels, which the
    // conformance corpus pins) instead of by estimate.
    bool exact_modes = false;
    // Chunk-level compression (§5.5): "" (default), "deflate" or "zstd"; sets Header flags bit 1.
    std::string chunk_compression;
    int chunk_compression_level = 6;

    // The optional parts of the summary (§4.5). Without the index, summary_start is 0 and there is
    // no Summary Offset and no CRC (the Footer's summary_start/summary_crc are 0 by §5.2).
    bool write_index = true;
    bool write_crc = true;
    bool write_statistics = true;
    bool write_summary_offset = true;

    // Chunk planning: at most this many gaussians per chunk (a window with more is split into
    // equal parts). Must be in 1 .. 2^26.
    std::uint32_t max_chunk_gaussians = 65536;
    // Morton order of the position bins inside each chunk (§6.1: shrinks the position stream).
    bool spatial_order = true;

    // Worker threads encoding chunks: 0 = std::thread::hardware_concurrency(), 1 = the calling
    // thread only. Does not change the output bytes.
    unsigned threads = 0;
    // Buffers to reuse across write_scene calls (WriteWorkspace); nullptr: the call's own.
    // Borrowed for the call. The streaming writer keeps its own for its lifetime.
    WriteWorkspace* workspace = nullptr;

    // The `application` value of the Metadata record the writer adds when lz4 or private records
    // are used and the caller supplied no Metadata entry with key `application` (registry, §4.3).
    // "" = the Header's library string.
    std::string application;

    // Each chunk decoded back with the readers' decoder and checked against its input. false
    // skips that, for a file that is counted and never kept (convert's per-frame file, measured
    // only to compare its size): allowed where the bytes cannot depend on the check — the
    // streaming writer, or write_scene on a fixed `grid` (it declares the grid's worst case, not
    // measured maxima); write_scene without one refuses it (invalid-option). The keyframe-delta
    // writer verifies either way. (Appended last: the struct grows only at its end.)
    bool verify = true;
};

// What a write produced.
struct WriteReport {
    Quantization quantization;               // as written (bounds included)
    std::vector<WindowTable::Window> windows; // the Window Table as written
    std::uint64_t gaussian_count = 0;
    std::array<double, 6> aabb{};
    std::uint32_t chunk_count = 0;
    std::uint64_t bytes_written = 0;
};

// A finite non-negative double spelled for a bounds value: to_chars' shortest round trip, which
// matches the §5.3 grammar (e.g. "0.002", "5e-05", "0").
std::string bound_string(double value);

}  // namespace fourdgs
FOURDGS_PUBLIC_END
