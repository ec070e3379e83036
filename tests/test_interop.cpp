// Interop: files written by an independent implementation of the format (tests/data, see
// /work/shared/interop/README.md) decode through both of our readers to the values that
// implementation decoded — header, bounds, index, every gaussian, SH bytes, visibility, extras.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "fourdgs/indexed_reader.hpp"
#include "fourdgs/reconstruct.hpp"
#include "fourdgs/streaming_reader.hpp"
#include "support/json.hpp"
#include "support/pipe_source.hpp"
#include "support/readers.hpp"

using namespace fourdgs;
using fourdgs::test::Json;

namespace {

const char* const kBirthFixtures[] = {"birth-deflate", "birth-zstd-sh3-balanced",
                                      "birth-never-fades-no-index", "birth-extras"};

constexpr int kCols = 22;  // x y z, sx sy sz, qx qy qz qw, r g b a, vx vy vz, mu_t, sigma_t, lo, hi, id
constexpr int kSigma = 18;

struct Row {
    std::array<double, kCols> v{};
    bool sigma_null = false;
    std::vector<std::uint8_t> sh;
};

// The sort key of a value: the README's rows are rounded to 6 decimals, so ours are keyed the same
// way; null (never-fading sigma) sorts before any number.
long long key_of(double v) { return std::llround(v * 1e6); }
bool row_less(const Row& a, const Row& b) {
    for (int c = 0; c < kCols; ++c) {
        const bool an = c == kSigma && a.sigma_null, bn = c == kSigma && b.sigma_null;
        if (an != bn) return an;
        if (an) continue;
        const long long ka = key_of(a.v[c]), kb = key_of(b.v[c]);
        if (ka != kb) return ka < kb;
    }
    return false;
}

std::vector<Row> rows_of(const GaussianBlock& b) {
    std::vector<Row> rows(b.count);
    const int per = b.sh_per_gaussian();
    for (std::size_t i = 0; i < b.count; ++i) {
        Row& r = rows[i];
        for (int c = 0; c < 3; ++c) r.v[c] = b.position[i * 3 + c];
        for (int c = 0; c < 3; ++c) r.v[3 + c] = b.scale[i * 3 + c];
        // Sign-canonical quaternion: the largest-magnitude component positive.
        int big = 0;
        for (int c = 1; c < 4; ++c)
            if (std::fabs(b.rotation[i * 4 + c]) > std::fabs(b.rotation[i * 4 + big])) big = c;
        const double sign = b.rotation[i * 4 + big] < 0 ? -1.0 : 1.0;
        for (int c = 0; c < 4; ++c) r.v[6 + c] = sign * b.rotation[i * 4 + c];
        for (int c = 0; c < 4; ++c) r.v[10 + c] = b.color[i * 4 + c];
        for (int c = 0; c < 3; ++c) r.v[14 + c] = b.motion[i * 3 + c];
        r.v[17] = b.mu_t[i];
        r.sigma_null = std::isinf(b.sigma_t[i]);
        r.v[18] = r.sigma_null ? 0.0 : b.sigma_t[i];
        r.v[19] = b.win_lo[i];
        r.v[20] = b.win_hi[i];
        r.v[21] = b.object_id.empty() ? 0.0 : double(b.object_id[i]);
        r.sh.assign(b.sh.begin() + std::ptrdiff_t(i) * per, b.sh.begin() + std::ptrdiff_t(i + 1) * per);
    }
    std::stable_sort(rows.begin(), rows.end(), row_less);
    return rows;
}

bool close(double got, double want) { return std::fabs(got - want) <= 1e-5 * std::max(1.0, std::fabs(want)); }

// Compares our sorted rows with the fixture's, column by column and SH byte by byte.
void check_rows(const GaussianBlock& block, const Json& fixture) {
    const std::vector<Row> ours = rows_of(block);
    const Json& rows = fixture["gaussians"];
    REQUIRE(ours.size() == rows.size());
    const Json& sh = fixture["sh"];
    int bad_rows = 0;
    for (std::size_t i = 0; i < ours.size(); ++i) {
        const Json& want = rows[i];
        REQUIRE(want.size() == std::size_t(kCols));
        bool ok = true;
        std::string why;
        for (int c = 0; c < kCols; ++c) {
            if (c == kSigma) {
                if (want[c].is_null() != ours[i].sigma_null) ok = false, why += " sigma-null";
                if (want[c].is_null() || ours[i].sigma_null) continue;
            }
            const double w = want[std::size_t(c)].number();
            bool good = close(ours[i].v[c], w);
            // q and -q are one rotation; when two components tie for largest, either sign is
            // "canonical".
            if (!good && c >= 6 && c <= 9) good = close(-ours[i].v[c], w);
            if (!good) ok = false, why += " col" + std::to_string(c) + "=" + std::to_string(ours[i].v[c]) +
                                         "/" + std::to_string(w);
        }
        if (sh.is_null()) {
            if (!ours[i].sh.empty()) ok = false, why += " unexpected-sh";
        } else {
            const Json& s = sh[i];
            if (s.size() != ours[i].sh.size()) {
                ok = false, why += " sh-size";
            } else {
                for (std::size_t k = 0; k < s.size(); ++k)
                    if (double(ours[i].sh[k]) != s[k].number()) {
                        ok = false, why += " sh[" + std::to_string(k) + "]";
                        break;
                    }
            }
        }
        if (!ok && ++bad_rows <= 5) {
            INFO("row " << i << ":" << why);
            CHECK(ok);
        }
    }
    CHECK(bad_rows == 0);
}

void check_header(const SceneInfo& info, const Json& fixture) {
    const Json& h = fixture["header"];
    const Header& got = info.header;
    CHECK(got.profile == h["profile"].str());
    CHECK(got.library == h["library"].str());
    CHECK(got.duration_sec == Approx(h["duration_sec"].number()));
    CHECK(got.gaussian_count == std::uint64_t(h["gaussian_count"].number()));
    CHECK(got.cutoff == Approx(h["cutoff"].number()));
    CHECK(got.temporal_model == h["temporal_model"].str());
    CHECK(int(got.sh_degree) == int(h["sh_degree"].number()));
    CHECK(int(got.flags) == int(h["flags"].number()));
    for (int c = 0; c < 6; ++c) CHECK(close(got.aabb[std::size_t(c)], h["aabb"][std::size_t(c)].number()));
    const Json& attrs = h["attributes"];
    CHECK(got.attributes.size() == attrs.size());
    for (const auto& [k, v] : attrs.members()) {
        INFO("attribute " << k);
        bool found = false;
        for (const auto& [gk, gv] : got.attributes)
            if (gk == k) {
                found = true;
                CHECK(gv == v.str());
            }
        CHECK(found);
    }
}

void check_quantization(const SceneInfo& info, const Json& fixture) {
    const Json& q = fixture["quantization"];
    CHECK(info.quantization.scheme == q["scheme"].str());
    const Json& bounds = q["bounds"];
    CHECK(info.quantization.bounds.size() == bounds.size());
    for (const auto& [k, v] : bounds.members()) {
        INFO("bound " << k);
        const std::string* got = info.quantization.bound(k);
        REQUIRE(got != nullptr);
        CHECK(*got == v.str());  // the strings as stored
    }
}

void check_index(const std::vector<ChunkIndex>& index, const Json& fixture) {
    const Json& want = fixture["chunk_index"];
    REQUIRE(index.size() == want.size());
    for (std::size_t i = 0; i < index.size(); ++i) {
        INFO("chunk_index[" << i << "]");
        CHECK(index[i].t0 == Approx(want[i][0].number()));
        CHECK(index[i].t1 == Approx(want[i][1].number()));
        CHECK(index[i].gaussian_count == std::uint32_t(want[i][2].number()));
        CHECK(index[i].bands.size() == std::size_t(want[i][3].number()));
    }
}

void check_visibility(const GaussianBlock& block, const SceneInfo& info, const Json& fixture) {
    for (const auto& [t_text, count] : fixture["visible_count_at"].members()) {
        const double t = std::strtod(t_text.c_str(), nullptr);
        INFO("visible_count_at[" << t_text << "]");
        CHECK(visible_count(block, t, info.header.cutoff) == std::size_t(count.number()));
        Frame frame;
        evaluate(block, t, info.header.cutoff, frame);
        CHECK(frame.count == std::size_t(count.number()));
    }
}

void check_all(const SceneInfo& info, const GaussianBlock& block, const Json& fixture) {
    check_header(info, fixture);
    check_quantization(info, fixture);
    CHECK(block.sh_degree == int(fixture["header"]["sh_degree"].number()));
    check_rows(block, fixture);
    check_visibility(block, info, fixture);
}

Json fixture_json(const std::string& name) { return Json::parse_file(test::data_path(name + ".json")); }

}  // namespace

TEST_CASE("interop: the gaussian-birth fixtures decode through the streaming reader to the other "
          "implementation's values (§3, §5, §6)",
          "[interop]") {
    for (const char* name : kBirthFixtures) {
        DYNAMIC_SECTION(name) {
            const Json fixture = fixture_json(name);
            const auto bytes = test::load_fixture(std::string(name) + ".4dgs");
            auto loaded = test::stream_read(bytes);
            if (!loaded.ok()) FAIL(loaded.error().describe());
            CHECK_FALSE(loaded->truncation.has_value());
            check_all(loaded->info, loaded->gaussians, fixture);
            check_index(loaded->info.index, fixture);
            const bool has_crc = loaded->info.footer && loaded->info.footer->summary_crc != 0;
            CHECK(loaded->info.summary_crc_verified == has_crc);
        }
    }
}

TEST_CASE("interop: the fixtures decode identically from a pipe and from a file descriptor "
          "(SequentialSource)",
          "[interop][threads]") {
    for (const char* name : kBirthFixtures) {
        DYNAMIC_SECTION(name) {
            const Json fixture = fixture_json(name);
            const auto bytes = test::load_fixture(std::string(name) + ".4dgs");
            auto piped = test::through_pipe(bytes, [](ByteSource& src) { return read_streaming(src); });
            if (!piped.ok()) FAIL(piped.error().describe());
            CHECK_FALSE(piped->truncation.has_value());
            check_all(piped->info, piped->gaussians, fixture);
            check_index(piped->info.index, fixture);

            const int fd = ::open(test::data_path(std::string(name) + ".4dgs").c_str(), O_RDONLY);
            REQUIRE(fd >= 0);
            SequentialSource seq(fd, /*owns_fd=*/true);
            auto from_fd = read_streaming(seq);
            if (!from_fd.ok()) FAIL(from_fd.error().describe());
            CHECK_FALSE(from_fd->truncation.has_value());
            test::require_identical(from_fd->gaussians, piped->gaussians);
        }
    }
}

TEST_CASE("interop: the fixtures decode through the indexed reader, and the no-index file builds its "
          "index by scan (§5.2 M016, §8)",
          "[interop]") {
    for (const char* name : kBirthFixtures) {
        DYNAMIC_SECTION(name) {
            const Json fixture = fixture_json(name);
            const auto bytes = test::load_fixture(std::string(name) + ".4dgs");
            MemorySource src(bytes);
            auto reader = IndexedReader::open(src);
            if (!reader.ok()) FAIL(reader.error().describe());
            GaussianBlock block;
            std::vector<DecodeWorkspace> pool;
            const Status st = reader->read_all(block, pool, 2);
            if (!st.ok()) FAIL(st.error().describe());
            check_all(reader->scene(), block, fixture);
            const bool no_index = fixture["chunk_index"].size() == 0;
            CHECK(reader->index_built_by_scan() == no_index);
            if (no_index) {
                // The scan finds the three chunks of 50 the file holds.
                REQUIRE(reader->scene().index.size() == 3);
                for (const ChunkIndex& e : reader->scene().index) CHECK(e.gaussian_count == 50);
            } else {
                check_index(reader->scene().index, fixture);
                const bool has_crc = reader->scene().footer->summary_crc != 0;
                CHECK(reader->scene().summary_crc_verified == has_crc);
            }
            // Every instant the fixture names, through read_instant, shows the same count.
            for (const auto& [t_text, count] : fixture["visible_count_at"].members()) {
                const double t = std::strtod(t_text.c_str(), nullptr);
                GaussianBlock at;
                REQUIRE(reader->read_instant(t, at, pool).ok());
                INFO("t = " << t_text);
                CHECK(visible_count(at, t, reader->scene().header.cutoff) == std::size_t(count.number()));
            }
        }
    }
}

TEST_CASE("M015 M109: keyframe-delta-churn is refused by both readers as unknown-temporal-model, "
          "naming keyframe-delta (§5.1)",
          "[interop][threads]") {
    const auto bytes = test::load_fixture("keyframe-delta-churn.4dgs");
    const Json fixture = fixture_json("keyframe-delta-churn");
    REQUIRE(fixture["header"]["temporal_model"].str() == "keyframe-delta");

    auto s = test::stream_read(bytes);
    REQUIRE_FALSE(s.ok());
    CHECK(s.error().refusal == "unknown-temporal-model");
    CHECK_THAT(s.error().message, Catch::Contains("keyframe-delta"));
    CHECK(s.error().kind == ErrorKind::unsupported);

    auto piped = test::through_pipe(bytes, [](ByteSource& src) { return read_streaming(src); });
    REQUIRE_FALSE(piped.ok());
    CHECK(piped.error().refusal == "unknown-temporal-model");

    MemorySource src(bytes);
    auto r = IndexedReader::open(src);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().refusal == "unknown-temporal-model");
    CHECK_THAT(r.error().message, Catch::Contains("keyframe-delta"));
}

TEST_CASE("interop: birth-extras exposes its audio sources, camera, provenance and objects "
          "(§5.10, §5.15, §5.16, §5.17)",
          "[interop]") {
    const auto bytes = test::load_fixture("birth-extras.4dgs");
    const Json fixture = fixture_json("birth-extras");
    auto loaded = test::stream_read(bytes);
    if (!loaded.ok()) FAIL(loaded.error().describe());
    MemorySource src(bytes);
    auto reader = IndexedReader::open(src);
    if (!reader.ok()) FAIL(reader.error().describe());

    const SceneInfo* infos[] = {&loaded->info, &reader->scene()};
    for (const SceneInfo* info : infos) {
        CHECK(info->header.has_audio());

        // Audio: the source ids and gains of the fixture's audio_state_at, payloads framed.
        REQUIRE(info->audio.size() == 2);
        std::set<std::uint32_t> ids;
        for (const AudioSourceEntry& a : info->audio) ids.insert(a.descriptor.source_id);
        std::set<std::uint32_t> want_ids;
        const Json& first_state = fixture["audio_state_at"].members().front().second;
        for (const Json& s : first_state.items()) {
            want_ids.insert(std::uint32_t(s["source_id"].number()));
            for (const AudioSourceEntry& a : info->audio)
                if (a.descriptor.source_id == std::uint32_t(s["source_id"].number()))
                    CHECK(a.descriptor.gain == Approx(s["gain"].number()));
        }
        CHECK(ids == want_ids);
        for (const AudioSourceEntry& a : info->audio) {
            INFO("audio source " << a.descriptor.source_id);
            CHECK_FALSE(a.legacy);
            CHECK(a.payload.length == a.descriptor.data_length);
            CHECK(a.payload.offset > 0);
            CHECK(a.payload.offset + a.payload.length <= bytes.size());
            if (a.descriptor.source_id == 3) {
                CHECK(a.descriptor.name == "drone");
                CHECK(a.descriptor.codec == "wav");
                CHECK(a.descriptor.channel_layout == "mono");
                CHECK(a.descriptor.spatial());
                CHECK(a.descriptor.loop());
                CHECK(a.descriptor.data_length == 8044);
                CHECK(a.descriptor.keyframes.size() == 2);
                CHECK(a.descriptor.interpolation == "linear");
            } else {
                CHECK(a.descriptor.name == "ambience");
                CHECK(a.descriptor.channel_layout == "stereo");
                CHECK_FALSE(a.descriptor.spatial());
                CHECK(a.descriptor.data_length == 16044);
                CHECK(a.descriptor.keyframes.empty());
            }
            // The payload the range names is the payload: a RIFF/WAVE resource.
            auto payload = reader->read_payload(a.payload);
            REQUIRE(payload.ok());
            REQUIRE(payload->size() == a.payload.length);
            CHECK(std::string(payload->begin(), payload->begin() + 4) == "RIFF");
            if (a.payload.crc_known) CHECK(a.payload.crc32 == crc32(*payload));
        }

        // Camera (the fixture's summary of it).
        REQUIRE(info->camera.has_value());
        const Json& cam = fixture["camera"];
        CHECK(info->camera->fov_y_deg == Approx(cam["fov_y_deg"].number()));
        CHECK(info->camera->keyframes.size() == std::size_t(cam["keyframes"].number()));
        CHECK(info->camera->interpolation == cam["interpolation"].str());
        CHECK(info->camera->loop == cam["loop"].boolean());

        // Coordinate frame, sensors (one on the rig), rig trajectory, geodetic anchor.
        REQUIRE(info->coordinate_frames.size() == 1);
        const CoordinateFrame& f = info->coordinate_frames[0];
        CHECK(f.handedness == Handedness::right);
        CHECK(f.up_axis == Axis::pos_y);
        CHECK(f.forward_axis == Axis::neg_z);
        CHECK(f.length_unit == LengthUnit::metre);
        CHECK(f.metres_per_unit == 1.0);
        REQUIRE(info->sensors.size() == 2);
        CHECK(info->sensors[0].name == "front");
        CHECK(info->sensors[0].modality == "camera");
        CHECK(info->sensors[0].camera_model == CameraModel::brown_conrady);
        CHECK(info->sensors[0].pose_reference == PoseReference::rig);
        CHECK(info->sensors[0].rig_name == "rig");
        CHECK(info->sensors[1].name == "imu");
        CHECK(info->sensors[1].camera_model == CameraModel::none);
        REQUIRE(info->rig_trajectories.size() == 1);
        CHECK(info->rig_trajectories[0].samples.size() == 3);
        for (const auto& [t, rigs] : fixture["rig_pose_at"].members())
            for (const auto& [rig_name, pose] : rigs.members()) CHECK(rig_name == info->rig_trajectories[0].name);
        REQUIRE(info->geodetic_anchors.size() == 1);
        CHECK(info->geodetic_anchors[0].frame_name == f.name);
        CHECK(info->geodetic_anchors[0].latitude_deg == Approx(48.8584));
        CHECK(info->geodetic_anchors[0].longitude_deg == Approx(2.2945));
        CHECK(info->geodetic_anchors[0].altitude_m == Approx(35.0));
        CHECK(info->geodetic_anchors[0].heading_deg == Approx(90.0));

        // Object table with embeddings; one linear and one step object track, named by the
        // fixture's object_pose_at.
        REQUIRE(info->object_table.has_value());
        CHECK(info->object_table->embedding_dim == 3);
        REQUIRE(info->object_table->entries.size() == 2);
        CHECK(info->object_table->entries[0].object_id == 3);
        CHECK(info->object_table->entries[0].label == "cart");
        REQUIRE(info->object_table->entries[0].embedding.has_value());
        CHECK(info->object_table->entries[0].embedding->size() == 3);
        CHECK(info->object_table->entries[1].object_id == 8);
        CHECK(info->object_table->entries[1].label == "flag");
        REQUIRE(info->object_tracks.size() == 2);
        std::set<std::uint32_t> tracks, want_tracks;
        for (const ObjectTrack& t : info->object_tracks) tracks.insert(t.object_id);
        for (const auto& [id, pose] : fixture["object_pose_at"].members().front().second.members())
            want_tracks.insert(std::uint32_t(std::stoul(id)));
        CHECK(tracks == want_tracks);
        CHECK(info->object_tracks[0].interpolation == TrajectoryInterpolation::linear);
        CHECK(info->object_tracks[0].samples.size() == 2);
        CHECK(info->object_tracks[1].interpolation == TrajectoryInterpolation::step);
        CHECK(info->object_tracks[1].samples.size() == 3);
        CHECK(info->skipped.empty());
    }
    // The gaussians carry object ids 0, 3 and 8 (compared row by row above; here as a set).
    std::set<std::uint32_t> labels(loaded->gaussians.object_id.begin(), loaded->gaussians.object_id.end());
    CHECK(labels == std::set<std::uint32_t>{0, 3, 8});
}
