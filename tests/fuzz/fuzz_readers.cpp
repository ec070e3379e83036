// libFuzzer harness: arbitrary bytes through both readers and every decode path. Nothing may
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
        fourdgs::Frame frame;
        fourdgs::evaluate(loaded->gaussians, 0.5, loaded->info.header.cutoff, frame);
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
