// src/write/encoding.hpp (internal) — the steps both writers share, each written once: input
// checks, option resolution, the grid and its bounds (§5.3, §6), one gaussian's bins (§6), a
// chunk's attribute streams, SH Band records and Chunk record (§5.5–5.7), and parsing them back for
// verification. writer.cpp (gaussian-birth) and keyframe_writer.cpp (keyframe-delta) differ only in
// how they plan chunks and how they verify; the file around the chunks is
// fourdgs/detail/file_assembler.hpp.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fourdgs/error.hpp"
#include "fourdgs/detail/file_assembler.hpp"
#include "fourdgs/quantize.hpp"
#include "fourdgs/records.hpp"
#include "fourdgs/scene.hpp"
#include "fourdgs/stream.hpp"
#include "fourdgs/wire.hpp"
#include "fourdgs/writer_types.hpp"
#include "content_records.hpp"

namespace fourdgs::encoding {

// Allowance for the decoder's f32 output: rounding to nearest f32 moves a value by at most 2^-24
// of its magnitude; twice that leaves room for the double arithmetic before it.
inline constexpr double kF32 = 0x1p-23;
inline constexpr double kInf = std::numeric_limits<double>::infinity();

inline std::string num(double v) { return detail::fmt(v); }

// An invalid-option refusal (kind invalid_argument).
Error bad_option(std::string message);

// A refusal about one input gaussian: "<who>: <field> <message>", naming the field as data.
Error bad_input(std::string_view refusal, std::string_view who, std::string_view field,
                std::string message);

// value / step rounded to the nearest integer (§6: ties to even); false when that is not an i32.
// The rounding is std::nearbyint's in the default rounding mode, done inline: below 2^51 in
// magnitude, adding and subtracting 1.5 x 2^52 leaves a double whose ulp is 1, so the sum rounds
// to the nearest integer, ties to even (a quotient that large, or NaN, is no i32 either way).
inline bool bin_of(double value, double step, std::int32_t& out) {
    const double q = value / step;
    if (!(std::fabs(q) < 0x1p51)) return false;
    constexpr double kRound = 0x1.8p52;
    const double b = (q + kRound) - kRound;
    if (!(std::fabs(b) <= 2147483647.0)) return false;
    out = static_cast<std::int32_t>(b);
    return true;
}

// duration_sec finite and > 0, cutoff in (0, 1), sh_degree 0..3, private opcodes >= 0x80.
Status validate_header(const SceneHeader& header);

// What a batch of gaussians must look like (writer.hpp's GaussianBatch), and how its gaussians
// are named in messages: "<prefix>gaussian <name_base + i>".
struct BatchRules {
    enum class Windows : std::uint8_t { required, absent, optional } windows = Windows::required;
    bool mu_t_optional = false;
    std::string prefix;  // e.g. "step 3 "
    std::uint64_t name_base = 0;
};

// Every span's length, then every gaussian's values (finite, scale and sigma_t > 0, a non-zero
// quaternion, colour in [0, 1], windows inside [0, duration) with lo < hi). Refusals as
// writer.hpp's write_scene lists them, naming the gaussian and the field.
Status validate_batch(const GaussianBatch& batch, int sh_degree, double duration,
                      const BatchRules& rules);

// Verification limits: the grid's analytic worst case per attribute (half the step plus the f32
// allowance). The per-gaussian grids of motion and mu_t are checked per gaussian; their
// `*_declared` limits bind only where the file declares them up front.
struct Limits {
    double pos = 0, scale = 0, rot_kept = 0, rot = 0, rgb = 0, alpha = 0, sigma = 0;
    double motion_declared = kInf, time_declared = kInf;
};

// The largest deviation per attribute (the §5.3 bounds keys), measured or analytic.
struct Maxima {
    double pos = 0, scale = 0, rot = 0, rgb = 0, alpha = 0, motion = 0, time = 0, sigma = 0;
    int sh = 0;
    void merge(const Maxima& other);
};

// The options resolved for one file, and the scene as the decoder will see it.
struct Encoding {
    SceneInfo scene;  // header.sh_degree / cutoff / duration_sec, grid, effective windows
    WriterOptions opt;
    int sh_degree = 0;
    bool declare_depths = false;
    std::array<std::uint8_t, 3> depths{8, 8, 8};
    std::uint8_t chunk_codec = 0;
    bool chunk_compressed = false;
    Limits lim;
};

// Checks the codec, its level, chunk compression, max_chunk_gaussians and the SH depths (explicit
// or a ladder) and records them in `out` (invalid-option, unknown-stream-codec, the codec
// layer's level refusals).
Status resolve_options(const WriterOptions& options, int sh_degree, Encoding& out);

// The decoder's view of the scene before the grid: SH degree, cutoff, duration and the Window
// Table (an empty table reads as one (0, 0) window, §5.4).
void init_scene(Encoding& e, const SceneHeader& header,
                const std::vector<WindowTable::Window>& windows);

// The grid for `aabb` (origin its centre, the preset's steps scaled by its largest side, or the
// explicit bounds; or WriterOptions::grid as given), the verification limits that go with it, and
// the Quantization record's fields (bounds left empty). invalid-option for bounds that are not
// finite and > 0, rot > 0.05, or rgb/alpha > 0.5.
Status make_grid(Encoding& e, const std::array<double, 6>& aabb, double cutoff, Quantization& q);

// The verification limits of a grid whose steps are twice `bounds` for positions up to `reach`
// from the origin (§6: half a step, plus the f32 allowance; §6.4's recovered component).
Limits limits_for(const QuantBounds& bounds, double reach);

// What the grid guarantees before any gaussian is seen (the streaming declaration, and every
// file on a fixed grid): declared_bounds (writer.hpp) of the grid in `e`.
Maxima analytic_maxima(const Encoding& e, double duration);

// The same from the limits and the two steps that are not bounded by them.
Maxima analytic_maxima(const Limits& lim, double step_motion, double step_time, double duration);

// §5.3 bounds, keys in the spec's order; never object_id (M018). SH bounds follow §6.5.
StringMap make_bounds(const Encoding& e, const Maxima& m);

// The Header both writers start from (library defaulted, flags bit 0 for audio, bit 1 when
// `compressed`); the caller sets the profile rule it has.
Header make_header(const SceneHeader& scene, std::string_view temporal_model,
                   std::uint64_t gaussian_count, const std::array<double, 6>& aabb,
                   bool compressed, const content::Extras& extras);

// The content records but the extras (content_records.hpp), with the registry's `application`
// entry when lz4 or private records owe it. Returns whether the file now names its application.
bool write_content(ByteWriter& out, const SceneHeader& scene, const WriterOptions& options,
                   std::span<const Metadata> writer_metadata, const std::string& library);

// Column sizes for `n` gaussians at `sh_degree` (every known column, optional ones included).
void resize_bins(ChunkBins& bins, std::size_t n, int sh_degree);

// The attribute columns of a ChunkBins with their widths (SH separately): f(id, column, width).
template <class Bins, class F>
void for_each_column(Bins& b, F&& f) {
    f(attr::position, b.position, 3);
    f(attr::scale, b.scale, 3);
    f(attr::rotation_index, b.rotation_index, 1);
    f(attr::rotation, b.rotation, 3);
    f(attr::color, b.color, 3);
    f(attr::opacity, b.opacity, 1);
    f(attr::motion, b.motion, 3);
    f(attr::mu_t, b.mu_t, 1);
    f(attr::sigma_t, b.sigma_t, 1);
    f(attr::flags, b.flags, 1);
    f(attr::window_index, b.window_index, 1);
    f(attr::source_group, b.source_group, 1);
    f(attr::source_index, b.source_index, 1);
    f(attr::gaussian_id, b.gaussian_id, 1);
    f(attr::object_id, b.object_id, 1);
}

// Row k of `dst` is row order[k] of `src`, every column and SH band; `dst` takes src's band
// count and its flags of which optional columns are present. Column by column, so the rows read
// at random are those of one column at a time.
void gather_rows(const ChunkBins& src, std::span<const std::uint32_t> order, ChunkBins& dst);

// What verification compares decoded values against, beside the bins.
struct ExactRow {
    std::array<double, 3> log_scale{};
    std::array<double, 4> rotation{};  // unit, sign of the omitted component made positive
    double log_sigma = 0;              // +inf when the gaussian never fades
    double velocity_step = 0, birth_step = 0;
};

// §6.3's two per-gaussian steps (quantize.hpp's velocity_step and birth_step), remembered per
// sigma bin for gaussians that fade and per window for those that never do: the same expressions,
// evaluated once per distinct key instead of an exp and two log2 per gaussian, so the steps are
// bit-identical. Valid for one Encoding (its grid and windows); one per thread.
class StepCache {
public:
    struct Steps {
        double velocity = 0, birth = 0;
    };
    // Inline for the hit, which every gaussian but the first of its key takes.
    Steps get(const Encoding& e, std::int32_t sigma_bin, bool never_fades, std::uint32_t window) {
        if (never_fades) {
            if (window < never_.size() && never_[window].velocity != 0) return never_[window];
        } else if (const Entry& entry = fading_[static_cast<std::uint32_t>(sigma_bin) &
                                                (fading_.size() - 1)];
                   entry.set && entry.bin == sigma_bin) {
            return entry.steps;
        }
        return fill(e, sigma_bin, never_fades, window);
    }

private:
    Steps fill(const Encoding& e, std::int32_t sigma_bin, bool never_fades, std::uint32_t window);
    struct Entry {
        std::int32_t bin = 0;
        bool set = false;
        Steps steps;
    };
    std::array<Entry, 1024> fading_{};  // direct-mapped by the bin's low bits
    std::vector<Steps> never_;          // per window; velocity 0 until computed
};

// The columns requantize_row takes, each from one input column.
inline constexpr unsigned kRowPosition = 1, kRowScale = 2, kRowRotation = 4, kRowColour = 8;

// Row j of `out` as quantize_row(e, batch, i, ..., j, out) makes it, where it already holds
// that for a gaussian whose inputs differ from `batch`'s row i only in the columns `changed`
// names (kRow*; colour with opacity): only those are quantized again. Returns the field whose
// bin does not fit i32, or nullptr.
const char* requantize_row(const Encoding& e, const GaussianBatch& batch, std::size_t i,
                           std::size_t j, unsigned changed, ChunkBins& out);

// Quantizes gaussian `i` of `batch` into row `row` of `out` (§6: position, log scale,
// smallest-three rotation, (g, r-g, b-g) colour, opacity, log sigma_t or flags bit 0, window,
// velocity and mu_t on the per-gaussian grids of §6.3, the optional id columns (0 where the batch
// lacks one the bins carry; untouched where neither has it), SH bytes at each band's depth).
// mu_t is left alone when the batch has none. `exact` (optional) receives the
// values verification needs; `steps` (optional) remembers §6.3's steps across calls. Returns the
// field whose bin does not fit i32, or nullptr.
const char* quantize_row(const Encoding& e, const GaussianBatch& batch, std::size_t i,
                         std::uint32_t window, std::size_t row, ChunkBins& out, ExactRow* exact,
                         StepCache* steps = nullptr);

// A chunk as encoded: the Chunk or Delta Chunk record, then its SH Band records.
struct EncodedRecords {
    std::vector<std::uint8_t> bytes;
    std::uint64_t chunk_length = 0;
    std::array<std::uint64_t, 3> band_length{};
    int bands = 0;

    detail::ChunkRecords records(double t0, double t1, std::uint32_t gaussian_count) const {
        return {bytes, chunk_length, band_length, bands, t0, t1, gaussian_count, std::nullopt};
    }
};

// Buffers one thread reuses across chunks.
struct ChunkBuffers {
    ByteWriter block;
    std::vector<std::uint8_t> compressed;
    ByteWriter band;
    std::vector<std::int32_t> values;
    StreamEncodeScratch stream;
};

// The stream encoder's options for the file's effort (WriterOptions::effort): the codec and
// level, how the raw/delta choice is made, and at `max` the other codecs tried.
StreamEncodeOptions stream_options(const Encoding& e);

// The attribute streams of every row of `bins`: the required ids 0..10, then gaussian_id,
// source_group, source_index and object_id where `bins` has them.
Status encode_attribute_streams(const Encoding& e, const ChunkBins& bins, ByteWriter& out,
                                StreamEncodeScratch& scratch);

// Compresses `block` when the file's chunks are compressed (§5.5): `records` then views the
// bytes to store and `compression` names the codec ("" and the block itself otherwise).
Status seal_block(const Encoding& e, ChunkBuffers& buf, std::string& compression, Bytes& records);

// Appends the SH Band records of bands 1..sh_degree of `bins` to out.bytes (§5.7).
Status append_band_records(const Encoding& e, const ChunkBins& bins, ChunkBuffers& buf,
                           EncodedRecords& out);

// A whole Chunk record over [t0, t1) for `bins` (streams, sealing), then its SH Band records,
// into `out` (replaced).
Status encode_chunk_records(const Encoding& e, const ChunkBins& bins, double t0, double t1,
                            ChunkBuffers& buf, EncodedRecords& out);

// Parses what was encoded back into records, as a reader would: the chunk record and its bands.
Status parse_back(const EncodedRecords& encoded, RecordView& chunk,
                  std::array<ShBandRecord, 3>& bands);

}  // namespace fourdgs::encoding
