// fourdgs/scene.hpp — the shared scene model every front-end fills and every consumer reads.
//
// Two shapes of gaussian data, both structure-of-arrays:
//   ChunkBins      the integer bins of one chunk exactly as its streams decode (§5.6), before §6;
//                  the keyframe-delta model composes in this domain (§11.3, §11.7).
//   GaussianBlock  the §3 state of each gaussian as f32 columns a renderer can upload as is.
// SceneInfo holds everything else a file says: Header, grids, windows, extras, the summary.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fourdgs/column.hpp"
#include "fourdgs/export.hpp"
#include "fourdgs/quantize.hpp"
#include "fourdgs/records.hpp"

FOURDGS_PUBLIC_BEGIN
namespace fourdgs {

// Registry attribute ids (§5.6, §6.1).
namespace attr {
inline constexpr std::uint8_t position = 0, scale = 1, rotation_index = 2, rotation = 3,
                              color = 4, opacity = 5, motion = 6, mu_t = 7, sigma_t = 8,
                              flags = 9, window_index = 10, source_group = 11, source_index = 12,
                              gaussian_id = 13, object_id = 14;
inline constexpr std::uint8_t kKnownCount = 15;  // ids 0..14 are known; others are skipped
// The registry's channel count for each known id.
inline constexpr std::array<std::uint8_t, kKnownCount> kChannels = {3, 3, 1, 3, 3, 1, 3, 1,
                                                                    1, 1, 1, 1, 1, 1, 1};
inline constexpr std::array<const char*, kKnownCount> kNames = {
    "position", "scale", "rotation_index", "rotation", "color",     "opacity",
    "motion",   "mu_t",  "sigma_t",        "flags",    "window_index", "source_group",
    "source_index", "gaussian_id", "object_id"};
inline constexpr std::uint8_t kRequiredCount = 11;  // ids 0..10 are required in every chunk
}  // namespace attr

inline constexpr std::uint8_t kFlagNeverFades = 1;  // per-gaussian flags bit 0

// The decode grid a file declares: its Quantization record's origin and steps, and K from the
// Header's cutoff (§6.3).
inline Grid grid_for(const Quantization& q, double cutoff) {
    Grid g;
    static_cast<GridSteps&>(g) = q;
    g.cutoff = cutoff;
    g.k = Grid::k_for_cutoff(cutoff);
    return g;
}

struct ChunkBins {
    std::uint32_t count = 0;
    std::vector<std::int32_t> position, scale, rotation, color, motion;  // 3 per gaussian
    std::vector<std::int32_t> rotation_index, opacity, mu_t, sigma_t, flags, window_index;
    bool has_source_group = false, has_source_index = false, has_object_id = false,
         has_gaussian_id = false;
    std::vector<std::int32_t> source_group, source_index, object_id, gaussian_id;
    int sh_bands = 0;  // bands 1..sh_bands decoded
    // Band b (1..3) at sh[b-1]: count * 3 * (2b+1) bytes, per gaussian component-major.
    std::array<std::vector<std::uint8_t>, 3> sh;

    // The column of a known attribute id (nullptr for ids without one).
    std::vector<std::int32_t>* column(std::uint8_t id);
};

struct GaussianBlock {
    std::size_t count = 0;
    Column<float> position;  // 3 per gaussian, rest position
    Column<float> scale;     // 3, linear
    Column<float> rotation;  // 4, unit quaternion xyzw
    Column<float> color;     // 4, r g b opacity(color.a), each in [0, 1]
    Column<float> motion;    // 3, units per second
    Column<float> mu_t, sigma_t, win_lo, win_hi;  // sigma_t = +inf: never fades
    Column<std::uint8_t> flags;
    Column<std::uint32_t> window_index;
    int sh_degree = 0;  // 0..3; sh holds count * 3 * sh_coeffs_per_component(sh_degree) bytes
    Column<std::uint8_t> sh;  // per gaussian: red's coefficients of bands 1..D, then green's, blue's
    Column<std::uint32_t> object_id;  // exact labels; 0 = background (§6.6)
    bool has_source_ids = false;
    Column<std::int32_t> source_group, source_index;  // when has_source_ids
    Column<std::uint32_t> gaussian_id;  // keyframe-delta identity, else empty

    int sh_per_gaussian() const { return 3 * sh_coeffs_per_component(sh_degree); }
    // Coefficient `k` (0-based across bands 1..D) of colour component `c` (0 r, 1 g, 2 b) of
    // gaussian `i`, as a float through §6.5's map.
    float sh_float(std::size_t i, int c, int k) const {
        int per = sh_coeffs_per_component(sh_degree);
        return sh_coefficient(sh[i * 3 * per + c * per + k]);
    }
    void clear();
    // Appends every gaussian of `other` (SH degrees must match; the smaller one wins otherwise
    // and only whole bands are kept, M100).
    void append(const GaussianBlock& other);
};

// A record the reader stepped over: unknown, private-range or reserved opcodes (§4.2).
struct SkippedRecord {
    std::uint8_t opcode = 0;
    std::uint64_t offset = 0, length = 0;  // whole record, header included
};

// A payload the scene references by range: attachment data or audio data. `data` is filled when
// the reader was asked to keep payloads; the range is always known.
struct PayloadRef {
    std::uint64_t offset = 0;  // absolute offset of the first payload byte
    std::uint64_t length = 0;
    std::uint32_t crc32 = 0;   // of the payload, valid when crc_known
    bool crc_known = false;    // the reader saw the payload bytes
    std::vector<std::uint8_t> data;
};

struct AttachmentEntry {
    std::string name, media_type;
    PayloadRef payload;
};

// One audio source: a descriptor and its payload. A legacy Audio record becomes source 0 (§5.9).
struct AudioSourceEntry {
    AudioSource descriptor;
    bool legacy = false;
    PayloadRef payload;
};

// The content records a scene holds in the same form whether read (SceneInfo) or given to a
// writer (SceneHeader, writer.hpp), so that a scene read can be written as it stands: Metadata
// (§5.11), Camera (§5.10) and the provenance and object family (§5.15.2-§5.15.7).
struct SceneExtras {
    std::vector<Metadata> metadata;  // in file order
    std::optional<Camera> camera;
    std::vector<CoordinateFrame> coordinate_frames;
    std::vector<SensorCalibration> sensors;
    std::vector<RigTrajectory> rig_trajectories;
    std::vector<GeodeticAnchor> geodetic_anchors;
    std::optional<ObjectTable> object_table;
    std::vector<ObjectTrack> object_tracks;
};

struct SceneInfo : SceneExtras {
    Header header;
    Quantization quantization;
    std::vector<WindowTable::Window> windows;  // effective table: never empty (§5.4)
    Grid grid;

    std::vector<AttachmentEntry> attachments;
    std::vector<AudioSourceEntry> audio;

    // The summary (§4.5), when the file has one; a non-zero summary_crc was checked and matched
    // when summary_crc_verified.
    bool summary_crc_verified = false;
    std::vector<ChunkIndex> index;
    std::optional<Statistics> statistics;
    std::vector<SummaryOffset> summary_offsets;
    std::optional<Footer> footer;
    // What the reader passed over: records it stepped over, and the trailing_bytes below.
    std::vector<SkippedRecord> skipped;
    // Bytes after the trailing magic (§4 allows none): the readers keep the content before them
    // and report the count here; the validator reports them as bytes-after-magic.
    std::uint64_t trailing_bytes = 0;

    bool has_header = false, has_quantization = false, has_window_table = false;
};

}  // namespace fourdgs
FOURDGS_PUBLIC_END
