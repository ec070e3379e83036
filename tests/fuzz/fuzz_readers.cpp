// libFuzzer harness: arbitrary bytes through both readers, every decode path, the extras'
// queries and the validator. Nothing may
// crash, hang, or allocate beyond the configured limits; every failure must be an Error value.
//   build: cmake -DFOURDGS_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++ ... ; run: fuzz_readers corpus/
#include <fourdgs/fourdgs.hpp>

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    fourdgs::ReaderOptions options;
    // Small limits keep the fuzzer fast and prove the limits are honoured.
    options.decode.limits.max_gaussians_per_chunk = 1u << 16;
    options.decode.limits.max_decompressed_bytes = 1u << 24;
    options.max_record_bytes = 1u << 24;
    options.max_summary_bytes = 1u << 20;

    fourdgs::MemorySource source({data, size});
    auto loaded = fourdgs::read_streaming(source, options);
    if (loaded.ok()) {
        const fourdgs::SceneInfo& s = loaded->info;
        fourdgs::Frame frame;
        fourdgs::evaluate(loaded->gaussians, 0.5, s.header.cutoff, frame,
                          {.tracks = s.object_tracks});
        // Whatever the file's numbers, the extras' arithmetic returns values, never traps.
        for (double t : {-1.0, 0.0, 0.7, 1e300}) {
            if (s.camera) (void)fourdgs::camera_at(*s.camera, t);
            for (const auto& a : s.audio) (void)fourdgs::audio_state_at(a.descriptor, t);
            for (const auto& sensor : s.sensors) {
                (void)fourdgs::sensor_pose_at(s, sensor.name, t);
                (void)fourdgs::unproject(sensor, 10.0, 20.0);
            }
            for (const auto& tr : s.object_tracks) (void)fourdgs::object_pose_at(s, tr.object_id, t);
        }
    }
    {
        fourdgs::ValidateOptions vo;
        vo.reader = options;
        vo.max_findings = 256;
        (void)fourdgs::validate(source, vo);
    }

    auto reader = fourdgs::IndexedReader::open(source, options);
    if (reader.ok()) {
        std::vector<fourdgs::DecodeWorkspace> pool;
        fourdgs::GaussianBlock block;
        (void)reader->read_all(block, pool, 1);
        for (double t : {0.0, 1.0, 2.5})
            (void)reader->read_instant(t, block, pool, 1);
    }

    // The keyframe-delta front-end, both paths.
    auto kfd = fourdgs::KeyframeDeltaReader::open(source, options);
    if (kfd.ok()) {
        fourdgs::GaussianBlock block;
        for (double t : {0.0, 0.5, 1.0, 2.5})
            (void)kfd->state_at(t, block);
    }
    fourdgs::MemorySource again({data, size});
    fourdgs::KeyframeDeltaStream stream(again, options);
    if (stream.open().ok()) {
        fourdgs::GaussianBlock block;
        for (int i = 0; i < 64; ++i) {
            auto more = stream.next_state(block);
            if (!more.ok() || !*more) break;
        }
    }
    return 0;
}
