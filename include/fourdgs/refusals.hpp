// fourdgs/refusals.hpp — every refusal identifier the library names, in one list.
//
// An Error's `refusal` (error.hpp) is one of these. Identifiers are stable kebab-case strings,
// compared across implementations of the format, so code names them through these constants and
// never spells or compares the strings itself. The list also says where each one comes from:
//   registry  the rule has an identifier in the format's shared registry ("Refusal identifiers
//             already in use"), spelled exactly as there (tests/test_refusals.cpp checks the two
//             lists agree, and that every constant is distinct);
//   file      a rule of the format this library names in the registry's style;
//   api       a call the caller made wrongly or a resource that failed (no file causes these);
//   ply       the frame importers of the tools library (PLY, .splat, .splatv, frames.json);
//   tools     the tools library's grid plans and merge: a plan file that does not parse, frames
//             outside what their plan was made for, parts that are not slices of one scene.
// `section` is the spec section the rule lives in ("" for api and ply, and for tools unless a
// section says why parts disagree), and `field` the "Record.field" it is about when the identifier
// alone determines it ("" when the error's own `field` says which).
#pragma once

#include <algorithm>
#include <iterator>
#include <string_view>

#include "fourdgs/export.hpp"

FOURDGS_PUBLIC_BEGIN
namespace fourdgs {

enum class RefusalOrigin : unsigned char { registry, file, api, ply, tools };

struct RefusalInfo {
    std::string_view id;
    std::string_view section;
    std::string_view field;
    RefusalOrigin origin;
};

// X(constant, identifier, section, field, origin), sorted by identifier.
#define FOURDGS_REFUSALS(X) \
    X(kAabbMismatch, "aabb-mismatch", "§5.1", "Header.aabb", file) \
    X(kAudioAfterFirstChunk, "audio-after-first-chunk", "§5.17", "", file) \
    X(kAudioDataLengthMismatch, "audio-data-length-mismatch", "§5.17", "Audio Data.data", file) \
    X(kAudioFlagMismatch, "audio-flag-mismatch", "§7", "Header.flags", file) \
    X(kBadFooter, "bad-footer", "§5.2", "Footer", file) \
    X(kBadFramesJson, "bad-frames-json", "", "", ply) \
    X(kBinOutOfRange, "bin-out-of-range", "§6", "", file) \
    X(kBoundDisagreesWithRecord, "bound-disagrees-with-record", "§5.3", "Quantization.bounds", file) \
    X(kBoundNotANumber, "bound-not-a-number", "§5.3", "Quantization.bounds", file) \
    X(kBoundViolated, "bound-violated", "§5.3", "Quantization.bounds", file) \
    X(kBrokenReference, "broken-reference", "§11.8", "Delta Chunk.reference_offset", registry) \
    X(kBufferTooSmall, "buffer-too-small", "", "", api) \
    X(kBytesAfterMagic, "bytes-after-magic", "§4", "magic", file) \
    X(kChainWithoutKeyframe, "chain-without-keyframe", "§11.8", "Chunk Index.keyframe_offset", registry) \
    X(kChunkDecodeNeedsChain, "chunk-decode-needs-chain", "§11.8", "", api) \
    X(kChunkTooLarge, "chunk-too-large", "§5.5", "Chunk.count", file) \
    X(kChunksStarted, "chunks-started", "§4", "", file) \
    X(kComposedBinOutOfRange, "composed-bin-out-of-range", "§11.7", "Delta Chunk.updates", file) \
    X(kCompressedFlagMismatch, "compressed-flag-mismatch", "§5.1", "Header.flags", file) \
    X(kConflictingExtras, "conflicting-extras", "", "", tools) \
    X(kCoordinateSystemKeyBesideRecord, "coordinate-system-key-beside-record", "§5.15.2", "Metadata.coordinate_system", file) \
    X(kCoordinateSystemMismatch, "coordinate-system-mismatch", "§5.15.2", "Metadata.coordinate_system", file) \
    X(kCorruptCompressedData, "corrupt-compressed-data", "§5.6", "Attribute Stream.payload", file) \
    X(kCountExceedsRecord, "count-exceeds-record", "§4.2", "", file) \
    X(kDecompressedSizeMismatch, "decompressed-size-mismatch", "§5.5", "", registry) \
    X(kDegenerateBasis, "degenerate-basis", "§5.15.2", "Coordinate Frame.up_axis, Coordinate Frame.forward_axis", file) \
    X(kDeltaBlockTrailingBytes, "delta-block-trailing-bytes", "§5.18", "Delta Chunk.records", file) \
    X(kDeltaChunkInGaussianBirth, "delta-chunk-in-gaussian-birth", "§5.18", "Header.temporal_model", file) \
    X(kDeltaModeMismatch, "delta-mode-mismatch", "§5.18", "Delta Chunk.delta_mode", file) \
    X(kDepthMismatch, "depth-mismatch", "§11.8", "Chunk Index.depth", registry) \
    X(kDistortionCountMismatch, "distortion-count-mismatch", "§5.15.3", "Sensor Calibration.distortion_count", file) \
    X(kDuplicateAttributeStream, "duplicate-attribute-stream", "§6.1", "Attribute Stream.attribute_id", registry) \
    X(kDuplicateAudioData, "duplicate-audio-data", "§5.17", "Audio Data.source_id", file) \
    X(kDuplicateAudioSource, "duplicate-audio-source", "§5.16", "Audio Source.source_id", file) \
    X(kDuplicateCoordinateFrame, "duplicate-coordinate-frame", "§5.15.2", "Coordinate Frame.name", file) \
    X(kDuplicateGaussianId, "duplicate-gaussian-id", "§11.2", "gaussian_id", file) \
    X(kDuplicateGeodeticAnchor, "duplicate-geodetic-anchor", "§5.15.5", "Geodetic Anchor.frame_name", file) \
    X(kDuplicateHeader, "duplicate-header", "§4", "Header", file) \
    X(kDuplicateObjectId, "duplicate-object-id", "§5.15.6", "Object Table.object_id", registry) \
    X(kDuplicateObjectTable, "duplicate-object-table", "§5.15.6", "Object Table", registry) \
    X(kDuplicateObjectTrack, "duplicate-object-track", "§5.15.7", "Object Track.object_id", registry) \
    X(kDuplicateQuantization, "duplicate-quantization", "§4", "Quantization", file) \
    X(kDuplicateSensorName, "duplicate-sensor-name", "§5.15.3", "Sensor Calibration.name", file) \
    X(kDuplicateShBand, "duplicate-sh-band", "§5.7", "SH Band Stream.band", file) \
    X(kDuplicateWindowTable, "duplicate-window-table", "§4", "Window Table", file) \
    X(kEmbeddingDimensionMismatch, "embedding-dimension-mismatch", "§5.15.6", "", api) \
    X(kEmptyAudioCodec, "empty-audio-codec", "§5.16", "Audio Source.codec", file) \
    X(kEmptyRigTrajectory, "empty-rig-trajectory", "§5.15.4", "Rig Trajectory.sample_count", file) \
    X(kEmptyWindow, "empty-window", "§5.4", "Window Table.windows", file) \
    X(kFooterNotLast, "footer-not-last", "§4", "Footer", file) \
    X(kForwardReference, "forward-reference", "§11.8", "Delta Chunk.reference_offset", registry) \
    X(kFrameSizeMismatch, "frame-size-mismatch", "", "", api) \
    X(kFramesNotTracked, "frames-not-tracked", "", "", api) \
    X(kGaussianCountMismatch, "gaussian-count-mismatch", "§5.1", "Header.gaussian_count", file) \
    X(kGaussianIdInTwoGroups, "gaussian-id-in-two-groups", "§11.3", "gaussian_id", file) \
    X(kGaussianIdReused, "gaussian-id-reused", "§11.2", "gaussian_id", registry) \
    X(kGaussiansNotStreamed, "gaussians-not-streamed", "", "", api) \
    X(kGeodeticOutOfRange, "geodetic-out-of-range", "§5.15.5", "Geodetic Anchor", file) \
    X(kGridMismatch, "grid-mismatch", "§5.3", "Quantization", tools) \
    X(kHeaderNotFirst, "header-not-first", "§4", "Header", file) \
    X(kIndexOutOfRange, "index-out-of-range", "§5.8", "Chunk Index.chunk_offset", file) \
    X(kIndexRecordMismatch, "index-record-mismatch", "§5.8", "Chunk Index", registry) \
    X(kInputSizeMismatch, "input-size-mismatch", "", "", api) \
    X(kInternalError, "internal-error", "", "", api) \
    X(kInvalidAllocator, "invalid-allocator", "", "", api) \
    X(kInvalidArgument, "invalid-argument", "", "", api) \
    X(kInvalidAudioDuration, "invalid-audio-duration", "§5.16", "Audio Source.duration_sec", file) \
    X(kInvalidAudioGain, "invalid-audio-gain", "§5.16", "Audio Source.gain", file) \
    X(kInvalidCallbacks, "invalid-callbacks", "", "", api) \
    X(kInvalidChannelCount, "invalid-channel-count", "§5.6", "Attribute Stream.channels", file) \
    X(kInvalidChunkKind, "invalid-chunk-kind", "§5.8", "Chunk Index.chunk_kind", file) \
    X(kInvalidCompressionLevel, "invalid-compression-level", "", "", api) \
    X(kInvalidCutoff, "invalid-cutoff", "§5.1", "Header.cutoff", file) \
    X(kInvalidDeathStream, "invalid-death-stream", "§5.18", "Delta Chunk.deaths", file) \
    X(kInvalidDeclaration, "invalid-declaration", "", "", api) \
    X(kInvalidDeltaMode, "invalid-delta-mode", "§5.18", "", file) \
    X(kInvalidDuration, "invalid-duration", "§5.1", "Header.duration_sec", file) \
    X(kInvalidFlagValue, "invalid-flag-value", "§2", "", file) \
    X(kInvalidImageSize, "invalid-image-size", "", "", api) \
    X(kInvalidIntrinsics, "invalid-intrinsics", "§5.15.3", "Sensor Calibration.camera_model", file) \
    X(kInvalidMetresPerUnit, "invalid-metres-per-unit", "§5.15.2", "Coordinate Frame.metres_per_unit", file) \
    X(kInvalidObjectIdBound, "invalid-object-id-bound", "§5.3", "Quantization.bounds", registry) \
    X(kInvalidOption, "invalid-option", "", "", api) \
    X(kInvalidPart, "invalid-part", "", "", tools) \
    X(kInvalidRotationIndex, "invalid-rotation-index", "§6.4", "Attribute Stream.rotation_index", file) \
    X(kInvalidShBand, "invalid-sh-band", "§5.7", "", file) \
    X(kInvalidShDegree, "invalid-sh-degree", "§5.1", "Header.sh_degree", file) \
    X(kInvalidStructSize, "invalid-struct-size", "", "", api) \
    X(kInvalidSymbolWidth, "invalid-symbol-width", "§5.6", "Attribute Stream.symbol_width", file) \
    X(kInvalidUtf8, "invalid-utf8", "§2", "", file) \
    X(kInvalidView, "invalid-view", "", "", api) \
    X(kInvariantChangedInUpdate, "invariant-changed-in-update", "§11.5", "Delta Chunk.updates", registry) \
    X(kIoError, "io-error", "", "", api) \
    X(kKeyframeTimeOutOfRange, "keyframe-time-out-of-range", "§5.16", "Audio Source.keyframes", file) \
    X(kLegacyAudioRecord, "legacy-audio-record", "§5.9", "Audio", file) \
    X(kLengthUnitMismatch, "length-unit-mismatch", "§5.15.2", "Coordinate Frame.length_unit, Coordinate Frame.metres_per_unit", file) \
    X(kLevelMismatch, "level-mismatch", "§11.6", "Delta Chunk.level", file) \
    X(kLimitExceeded, "limit-exceeded", "", "", api) \
    X(kMagicMismatch, "magic-mismatch", "§4.1", "magic", registry) \
    X(kMalformedPlan, "malformed-plan", "", "", tools) \
    X(kMalformedShDepths, "malformed-sh-depths", "§5.3", "Quantization.sh_depth_count", file) \
    X(kMissingAnchorFrame, "missing-anchor-frame", "§5.15.5", "Geodetic Anchor.frame_name", file) \
    X(kMissingAttributeStream, "missing-attribute-stream", "§6.1", "Chunk.records", file) \
    X(kMissingFooter, "missing-footer", "§5.2", "Footer", file) \
    X(kMissingGaussianId, "missing-gaussian-id", "§11.2", "gaussian_id", registry) \
    X(kMissingHeader, "missing-header", "§4", "Header", file) \
    X(kMissingKeyframeIndexFields, "missing-keyframe-index-fields", "§5.8", "Chunk Index.chunk_kind", file) \
    X(kMissingQuantization, "missing-quantization", "§4", "Quantization", file) \
    X(kMissingRigTrajectory, "missing-rig-trajectory", "§5.15.3", "Sensor Calibration.rig_name", file) \
    X(kMissingShBand, "missing-sh-band", "§5.7", "SH Band Stream.band", file) \
    X(kMissingSlice, "missing-slice", "", "", tools) \
    X(kMixedAudioRecords, "mixed-audio-records", "§7", "Audio", file) \
    X(kNeedsRandomAccess, "needs-random-access", "", "", api) \
    X(kNoChunkIndex, "no-chunk-index", "§11.8", "Chunk Index", file) \
    X(kNoCoordinateSystem, "no-coordinate-system", "§2", "Metadata.coordinate_system", file) \
    X(kNoEmbeddingSpace, "no-embedding-space", "§5.15.6", "Object Table.embedding_dim", file) \
    X(kNoFrames, "no-frames", "", "", api) \
    X(kNoSuchElement, "no-such-element", "", "", api) \
    X(kNoVisibilityProfile, "no-visibility-profile", "§3.1", "Metadata.visibility_profile", file) \
    X(kNonFiniteInput, "non-finite-input", "", "", api) \
    X(kNonFiniteQuery, "non-finite-query", "", "", api) \
    X(kNonFiniteValue, "non-finite-value", "§2", "", file) \
    X(kNonIncreasingKeyframeTimes, "non-increasing-keyframe-times", "§5.16", "", file) \
    X(kNonIncreasingSampleTimes, "non-increasing-sample-times", "§5.15.4", "", file) \
    X(kNonTilingChunks, "non-tiling-chunks", "§11.1", "Chunk Index.t0", registry) \
    X(kNotACamera, "not-a-camera", "§5.15.3", "", api) \
    X(kNotFound, "not-found", "", "", api) \
    X(kNotSeekable, "not-seekable", "", "", api) \
    X(kNullArgument, "null-argument", "", "", api) \
    X(kOrphanShBand, "orphan-sh-band", "§5.7", "SH Band Stream", file) \
    X(kOutOfMemory, "out-of-memory", "", "", api) \
    X(kOutputSizeMismatch, "output-size-mismatch", "", "", api) \
    X(kOutsideDeclaredAabb, "outside-declared-aabb", "§5.1", "Header.aabb", file) \
    X(kOutsidePlan, "outside-plan", "", "", tools) \
    X(kOverlappingParts, "overlapping-parts", "", "", tools) \
    X(kPlanEdited, "plan-edited", "", "", tools) \
    X(kPlanMismatch, "plan-mismatch", "", "", tools) \
    X(kPlaybackStalled, "playback-stalled", "", "", api) \
    X(kPlyAsciiFormat, "ply-ascii-format", "", "", ply) \
    X(kPlyBadHeader, "ply-bad-header", "", "", ply) \
    X(kPlyBigEndian, "ply-big-endian", "", "", ply) \
    X(kPlyDuplicateProperty, "ply-duplicate-property", "", "", ply) \
    X(kPlyMissingProperty, "ply-missing-property", "", "", ply) \
    X(kPlyNotPly, "ply-not-ply", "", "", ply) \
    X(kPlyPropertyType, "ply-property-type", "", "", ply) \
    X(kPlyShCount, "ply-sh-count", "", "", ply) \
    X(kPlyTruncatedBody, "ply-truncated-body", "", "", ply) \
    X(kPrivateRecordsWithoutApplication, "private-records-without-application", "§4.3", "Metadata.application", file) \
    X(kReadAllNeedsGaussianBirth, "read-all-needs-gaussian-birth", "", "", api) \
    X(kRecordTooShort, "record-too-short", "§4.2", "", file) \
    X(kReservedFlagsSet, "reserved-flags-set", "§5.1", "", file) \
    X(kReservedOpcode, "reserved-opcode", "§5.13", "opcode", file) \
    X(kRigTrajectoryOffSceneClock, "rig-trajectory-off-scene-clock", "§5.15.4", "Rig Trajectory.time", file) \
    X(kSceneMismatch, "scene-mismatch", "§5.1", "Header", tools) \
    X(kShCoefficientOutOfRange, "sh-coefficient-out-of-range", "§6.5", "SH Band Stream.payload", file) \
    X(kShDegreeMismatch, "sh-degree-mismatch", "§5.1", "Header.sh_degree", file) \
    X(kShDepthsNotDecreasing, "sh-depths-not-decreasing", "§6.5", "Quantization.sh_depths", file) \
    X(kShardVersionMismatch, "shard-version-mismatch", "", "", tools) \
    X(kSpatialSourceNotMono, "spatial-source-not-mono", "§5.16", "Audio Source.channel_layout", file) \
    X(kSplatBadValue, "splat-bad-value", "", "", ply) \
    X(kSplatTruncated, "splat-truncated", "", "", ply) \
    X(kSplatvBadHeader, "splatv-bad-header", "", "", ply) \
    X(kSplatvBadValue, "splatv-bad-value", "", "", ply) \
    X(kSplatvNotSplatv, "splatv-not-splatv", "", "", ply) \
    X(kStatisticsMismatch, "statistics-mismatch", "§5.12", "Statistics", file) \
    X(kStreamChannelCountMismatch, "stream-channel-count-mismatch", "§5.6", "Attribute Stream.channels", registry) \
    X(kStreamElementCountMismatch, "stream-element-count-mismatch", "§6.1", "Attribute Stream.element_count", registry) \
    X(kStreamValueOutOfRange, "stream-value-out-of-range", "§5.6", "Attribute Stream.payload", file) \
    X(kSummaryCrcMismatch, "summary-crc-mismatch", "§4.5", "Footer.summary_crc", file) \
    X(kSummaryNotContiguous, "summary-not-contiguous", "§4.5", "Footer.summary_start", file) \
    X(kSummaryOffsetMismatch, "summary-offset-mismatch", "§5.14", "Summary Offset.group_start", file) \
    X(kSummaryOffsetOverlong, "summary-offset-overlong", "§5.14", "Summary Offset.group_length", file) \
    X(kSummaryOutOfRange, "summary-out-of-range", "§5.2", "Footer.summary_start", file) \
    X(kSummaryStartMismatch, "summary-start-mismatch", "§4.5", "Footer.summary_start", file) \
    X(kTimeOutOfRange, "time-out-of-range", "", "", api) \
    X(kTimelineGap, "timeline-gap", "§11.1", "Chunk Index.t0", registry) \
    X(kTrackNamesBackground, "track-names-background", "§5.15.7", "Object Track.object_id", registry) \
    X(kTruncated, "truncated", "§4.2", "content_length", file) \
    X(kUndeclaredUnseekableContent, "undeclared-unseekable-content", "§8", "Header.profile", file) \
    X(kUndeclaredWindow, "undeclared-window", "§5.4", "", file) \
    X(kUnknownCameraModel, "unknown-camera-model", "§5.15.3", "Sensor Calibration.camera_model", file) \
    X(kUnknownChunkCompression, "unknown-chunk-compression", "§5.5", "Chunk.compression", file) \
    X(kUnknownEnumValue, "unknown-enum-value", "§5.15.2", "", file) \
    X(kUnknownGaussianId, "unknown-gaussian-id", "§11.3", "gaussian_id", file) \
    X(kUnknownInterpolation, "unknown-interpolation", "§5.15.4", "", file) \
    X(kUnknownQuantizationScheme, "unknown-quantization-scheme", "§5.3", "Quantization.scheme", registry) \
    X(kUnknownSensor, "unknown-sensor", "§5.15.3", "Sensor Calibration.name", file) \
    X(kUnknownStreamCodec, "unknown-stream-codec", "§5.6", "Attribute Stream.codec", registry) \
    X(kUnknownStreamMode, "unknown-stream-mode", "§5.6", "Attribute Stream.mode", file) \
    X(kUnknownTemporalModel, "unknown-temporal-model", "§5.1", "Header.temporal_model", registry) \
    X(kUnknownVisibilityProfile, "unknown-visibility-profile", "§3.1", "Metadata.visibility_profile", file) \
    X(kUnmatchedAudioData, "unmatched-audio-data", "§5.17", "Audio Data.source_id", file) \
    X(kUnmatchedAudioSource, "unmatched-audio-source", "§5.17", "Audio Source.source_id", file) \
    X(kUnrepresentableRecord, "unrepresentable-record", "", "", api) \
    X(kUnsupportedCameraModel, "unsupported-camera-model", "§5.15.3", "Sensor Calibration.camera_model", file) \
    X(kUnsupportedMajorVersion, "unsupported-major-version", "§4.1", "magic", registry) \
    X(kValueOutOfRange, "value-out-of-range", "", "", api) \
    X(kWindowDoesNotCoverState, "window-does-not-cover-state", "§11.1", "", file) \
    X(kWindowIndexOutOfRange, "window-index-out-of-range", "§5.4", "Attribute Stream.window_index", registry) \
    X(kWindowOutsideDuration, "window-outside-duration", "§5.4", "Window Table.windows", file) \
    X(kWindowTableAfterFirstChunk, "window-table-after-first-chunk", "§4", "Window Table", file) \
    X(kWriterFinished, "writer-finished", "", "", api) \
    X(kWrongOpcode, "wrong-opcode", "§4.2", "opcode", file) \
    X(kZeroQuaternion, "zero-quaternion", "§5.15.3", "", file) \
    X(kZeroQuery, "zero-query", "", "", api)


namespace refusal {
#define FOURDGS_REFUSAL_CONSTANT_(name, id, section, field, origin) \
    inline constexpr std::string_view name = id;
FOURDGS_REFUSALS(FOURDGS_REFUSAL_CONSTANT_)
#undef FOURDGS_REFUSAL_CONSTANT_
}  // namespace refusal

inline constexpr RefusalInfo kRefusals[] = {
#define FOURDGS_REFUSAL_ROW_(name, id, section, field, origin) \
    {id, section, field, RefusalOrigin::origin},
    FOURDGS_REFUSALS(FOURDGS_REFUSAL_ROW_)
#undef FOURDGS_REFUSAL_ROW_
};

namespace detail {
constexpr bool refusals_sorted() {
    for (std::size_t i = 1; i < std::size(kRefusals); ++i)
        if (!(kRefusals[i - 1].id < kRefusals[i].id)) return false;
    return true;
}
}  // namespace detail
static_assert(detail::refusals_sorted(), "FOURDGS_REFUSALS must stay sorted and free of repeats");

// The entry for an identifier, or nullptr when the library never names it.
constexpr const RefusalInfo* find_refusal(std::string_view id) {
    const RefusalInfo* end = std::end(kRefusals);
    const RefusalInfo* it = std::lower_bound(
        std::begin(kRefusals), end, id,
        [](const RefusalInfo& r, std::string_view key) { return r.id < key; });
    return it != end && it->id == id ? it : nullptr;
}

}  // namespace fourdgs
FOURDGS_PUBLIC_END
