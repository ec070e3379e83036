// fourdgs/tools/splat_formats.hpp — the web viewers' splat formats, in (as frames convert.hpp
// encodes) and out (.splat, as extract writes it). Part of the tools library (fourdgs::tools).
//
// antimatter15 `.splat` (github.com/antimatter15/splat, convert.py and main.js): no header, 32
// bytes a splat, little-endian:
//   position 3 x f32 | scale 3 x f32 (linear) | r g b a 4 x u8 | rotation w x y z 4 x u8
// colour = byte / 255 (the DC colour 0.5 + C0 f_dc), a = opacity (sigmoid of the logit) × 255,
// rotation component = (byte − 128) / 128 of the unit quaternion. The upstream writer truncates
// (numpy astype) after clipping to 0..255, and sorts the splats by exp(scale sum) × opacity,
// largest first. A sequence of .splat files is a frame sequence like PLY frames; splat4d's
// frames are such files.
//
// splaTV `.splatv` (github.com/antimatter15/splaTV, hybrid.js): u32 magic 0x674b, u32 L, L bytes
// of UTF-8 JSON — an array of chunks {"type", "size", ...}, whose bytes follow the JSON in order
// — of which a {"type": "splat", "size", "texwidth", "texheight", "cameras"} chunk holds
// size = texwidth × texheight × 16 bytes: 16 u32 per gaussian (a texture of 4 RGBA32UI texels),
//   0..2  position f32          3  half(rot_0, rot_1)   4  half(rot_2, rot_3)
//   5  half(sx, sy)  6  half(sz, 0)  (linear scale)       7  r g b a u8 (opacity × 255)
//   8..12  half motion_0..8, 0  (position += m0..2 dt + m3..5 dt² + m6..8 dt³)
//   13..14 half omega_0..3  (rotation += omega dt, then normalized)
//   15  half(trbf_center, trbf_scale)  (opacity × exp(−(dt / trbf_scale)²))
// with dt = τ − trbf_center and rot_0 the quaternion's w (the player's shader). splaTV plays τ
// over [0, 1]. Texels past the last gaussian are zero and are skipped (an entry of 64 zero bytes).
//
// Refusals, naming the offending value: splat-truncated (a .splat size not a multiple of 32),
// splat-bad-value (a position or scale not finite, a negative scale, a rotation of four 128s:
// no direction), splatv-not-splatv (another magic, or fewer than 8 bytes), splatv-bad-header
// (the JSON runs past the file or does not parse, a chunk without type or size, sizes that do
// not add up to the bytes after the JSON, no splat chunk, a splat chunk whose size is not
// texwidth × texheight × 16), splatv-bad-value (a non-finite value, a trbf_scale ≤ 0),
// bad-frames-json (below). Every count is checked against the bytes before anything is
// allocated.
//
// Thread safety: pure functions over caller-owned data.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "fourdgs/error.hpp"
#include "fourdgs/export.hpp"
#include "fourdgs/tools/convert.hpp"
#include "fourdgs/tools/ply.hpp"

FOURDGS_PUBLIC_BEGIN
namespace fourdgs {

inline constexpr std::size_t kSplatBytes = 32;          // one .splat splat
inline constexpr std::uint32_t kSplatvMagic = 0x674b;   // a .splatv file's first u32

// A .splat file as a cloud (SH degree 0, zero normals, rotation xyzw as decoded).
Result<PlyCloud> read_splat(std::span<const std::uint8_t> bytes);
Result<PlyCloud> read_splat_file(const std::string& path);
// The same into `into`, its columns' storage reused (a frame read into the cloud of the frame
// before takes no fresh memory), the file read a block at a time.
Status read_splat_file_into(const std::string& path, PlyCloud& into);

// `cloud` as a .splat, sorted as the upstream writer sorts (exp(Σ log scale) × opacity,
// largest first; ties keep the cloud's order), quantized as it quantizes.
std::vector<std::uint8_t> write_splat(const PlyCloud& cloud);

// One frame of a sequence, by its extension: .splat, else PLY.
Result<PlyCloud> read_frame_file(const std::string& path);
// The same into `into`, its storage reused (read_splat_file_into, read_ply_file_into).
Status read_frame_file_into(const std::string& path, PlyCloud& into);
// The frame's count, positions and rotations into `into`, for a pass that reads nothing else: of
// a .splat those alone (the other columns left as they were; every splat checked as
// read_splat checks it), of a PLY the whole cloud (read_frame_file_into).
Status read_frame_motion_into(const std::string& path, PlyCloud& into);

// A .splatv's gaussians, each entry of the splat chunk that is not padding, decoded.
struct SplatvScene {
    std::size_t count = 0;
    std::vector<float> position;  // 3 per gaussian
    std::vector<float> rotation;  // 4: rot_0..3 (w x y z)
    std::vector<float> scale;     // 3, linear
    std::vector<float> color;     // 4: rgb and opacity, 0..1
    std::vector<float> motion;    // 9
    std::vector<float> omega;     // 4
    std::vector<float> trbf;      // 2: centre, scale
};

Result<SplatvScene> read_splatv(std::span<const std::uint8_t> bytes);
Result<SplatvScene> read_splatv_file(const std::string& path);

// The scene at splaTV time `tau` as a cloud: every gaussian, in file order (a tracked frame),
// opacity × the temporal falloff, rotation xyzw of rot + omega dt (not normalized, as PLY's).
PlyCloud splatv_state_at(const SplatvScene& scene, double tau);

// The clip as `frames` tracked frames for convert_frame_source (convert.hpp): frame k is
// splatv_state_at(scene, k / (frames − 1)), so the first and last frames are the ends of splaTV's
// [0, 1] (one frame: τ = 0). `file_bytes` (the .splatv's size) counts toward frame 0 in the
// report. `scene` must outlive the source.
FrameSource splatv_frames(const SplatvScene& scene, std::uint64_t frames,
                          std::uint64_t file_bytes = 0);

// frames.json beside a frame sequence (docs/cli.md): {"fps": F} or {"timestamps": [t0, ...]}
// (seconds, one per frame, evenly spaced), or both; splat4d's manifest is read too:
// {"fps", "count", "num_splats", "frames": [{"file", "timestamp"}, ...]}, its files checked against
// `frame_files` (the frames' file names in convert's order; empty: not checked). Returns the
// sequence's frame rate; bad-frames-json for text that does not parse, an fps not finite and > 0,
// timestamps not one per frame, not increasing or not evenly spaced (within 1e-6 of a frame), an
// fps they disagree with, a count that is not the number of frames, a listed file that is not
// the frame at its place, or an unknown key.
Result<double> read_frames_json(std::string_view text, std::size_t frames,
                                std::string_view name = "frames.json",
                                std::span<const std::string> frame_files = {});

}  // namespace fourdgs
FOURDGS_PUBLIC_END
