// libFuzzer harness, structure-aware: the mutator decodes its input as a .4dgs file, changes
// decoded values — a gaussian's position, scale, rotation, colour, motion, birth time, lifetime,
// window, SH, object id; the scene's duration, cutoff, SH degree, strings; the writer's options —
// and writes the result again with write_scene, so the fuzzer explores files that are well formed
// down to their streams and reaches the decode, composition and evaluation arithmetic behind the
// codecs. When the input does not decode, or the writer refuses the change, it falls back to
// libFuzzer's byte mutations (so damaged files are still explored).
//
// Each input is then read by both paths and the validator, and evaluated. Properties: nothing
// crashes; and a file the validator finds no error in is accepted by both readers, which decode
// it to bit-identical gaussians.
//   build: cmake -DFOURDGS_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++ ... ; run: fuzz_structured dir/
#include <fourdgs/fourdgs.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

using namespace fourdgs;

extern "C" std::size_t LLVMFuzzerMutate(std::uint8_t* data, std::size_t size, std::size_t max);

namespace {

ReaderOptions small_limits() {
    ReaderOptions o;
    o.decode.limits.max_gaussians_per_chunk = 1u << 16;
    o.decode.limits.max_decompressed_bytes = 1u << 24;
    o.max_record_bytes = 1u << 24;
    o.max_summary_bytes = 1u << 20;
    return o;
}

// The decoded scene as writer input (payloads kept so attachments and audio survive).
struct Editable {
    SceneHeader header;
    GaussianColumns g;
    std::vector<std::vector<std::uint8_t>> payloads;  // owned bytes the header's inputs borrow
};

bool to_editable(const LoadedScene& s, Editable& e) {
    const SceneInfo& i = s.info;
    if (i.header.temporal_model != kModelGaussianBirth) return false;
    SceneHeader& h = e.header;
    h.duration_sec = i.header.duration_sec;
    h.cutoff = i.header.cutoff;
    h.profile = i.header.profile;
    h.library = i.header.library;
    h.attributes = i.header.attributes;
    h.sh_degree = i.header.sh_degree;
    static_cast<SceneExtras&>(h) = i;
    e.payloads.reserve(i.attachments.size() + i.audio.size());
    for (const AttachmentEntry& a : i.attachments) {
        e.payloads.push_back(a.payload.data);
        h.attachments.push_back({a.name, a.media_type, e.payloads.back()});
    }
    for (const AudioSourceEntry& a : i.audio) {
        e.payloads.push_back(a.payload.data);
        if (a.legacy)
            h.legacy_audio =
                LegacyAudioInput{a.descriptor.codec, a.descriptor.start_sec, e.payloads.back()};
        else
            h.audio.push_back({a.descriptor, e.payloads.back()});
    }
    const GaussianBlock& b = s.gaussians;
    GaussianColumns& g = e.g;
    g.sh_degree = b.count ? b.sh_degree : i.header.sh_degree;
    g.resize(b.count);
    std::copy(b.position.begin(), b.position.end(), g.position.begin());
    std::copy(b.scale.begin(), b.scale.end(), g.scale.begin());
    std::copy(b.rotation.begin(), b.rotation.end(), g.rotation.begin());
    std::copy(b.color.begin(), b.color.end(), g.color.begin());
    std::copy(b.motion.begin(), b.motion.end(), g.motion.begin());
    std::copy(b.mu_t.begin(), b.mu_t.end(), g.mu_t.begin());
    std::copy(b.sigma_t.begin(), b.sigma_t.end(), g.sigma_t.begin());
    std::copy(b.win_lo.begin(), b.win_lo.end(), g.win_lo.begin());
    std::copy(b.win_hi.begin(), b.win_hi.end(), g.win_hi.begin());
    for (std::size_t k = 0; k < b.sh.size() && k < g.sh.size(); ++k)
        g.sh[k] = sh_coefficient(b.sh[k]);
    if (std::any_of(b.object_id.begin(), b.object_id.end(), [](auto v) { return v != 0; }))
        g.object_id.assign(b.object_id.begin(), b.object_id.end());
    if (b.has_source_ids) {
        g.source_group.assign(b.source_group.begin(), b.source_group.end());
        g.source_index.assign(b.source_index.begin(), b.source_index.end());
    }
    return true;
}

// Values that sit on the edges of the grids and the checks.
float interesting(std::mt19937& rng, float current) {
    static const float kValues[] = {
        0.0f,    -0.0f,           1.0f,     -1.0f,         0.5f,          1e-7f,
        -1e-7f,  1e-3f,           1e3f,     -1e3f,         1e6f,          1e9f,
        3.4e38f, 1.17549435e-38f, 65535.5f, 2147483647.0f, -2147483648.0f};
    switch (rng() % 4) {
        case 0:
            return kValues[rng() % std::size(kValues)];
        case 1:
            return current * 2;
        case 2:
            return current * 0.5f;
        default:
            return std::nextafter(current, rng() % 2 ? 1e30f : -1e30f);
    }
}

void mutate_values(Editable& e, WriterOptions& o, std::mt19937& rng) {
    GaussianColumns& g = e.g;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < edits; ++k) {
        const std::size_t i = g.count ? rng() % g.count : 0;
        switch (rng() % 16) {
            case 0:
                if (g.count) g.position[i * 3 + rng() % 3] = interesting(rng, g.position[i * 3]);
                break;
            case 1:
                if (g.count)
                    g.scale[i * 3 + rng() % 3] = std::fabs(interesting(rng, g.scale[i * 3]));
                break;
            case 2:
                if (g.count) g.rotation[i * 4 + rng() % 4] = interesting(rng, g.rotation[i * 4]);
                break;
            case 3:
                if (g.count) g.color[i * 4 + rng() % 4] = static_cast<float>(rng() % 256) / 255.0f;
                break;
            case 4:
                if (g.count) g.motion[i * 3 + rng() % 3] = interesting(rng, g.motion[i * 3]);
                break;
            case 5:
                if (g.count) g.mu_t[i] = interesting(rng, g.mu_t[i]);
                break;
            case 6:
                if (g.count)
                    g.sigma_t[i] = rng() % 3 ? std::fabs(interesting(rng, g.sigma_t[i]))
                                             : std::numeric_limits<float>::infinity();
                break;
            case 7:
                if (g.count) {
                    g.win_lo[i] =
                        std::clamp<double>(interesting(rng, static_cast<float>(g.win_lo[i])), 0,
                                           e.header.duration_sec);
                    g.win_hi[i] =
                        std::clamp<double>(interesting(rng, static_cast<float>(g.win_hi[i])), 0,
                                           e.header.duration_sec);
                }
                break;
            case 8:
                if (!g.sh.empty()) g.sh[rng() % g.sh.size()] = interesting(rng, 0.5f);
                break;
            case 9:
                if (g.count) {
                    if (g.object_id.empty()) g.object_id.assign(g.count, 0);
                    g.object_id[i] = rng() % 2 ? rng() : rng() % 4;
                }
                break;
            case 10:
                e.header.duration_sec =
                    std::fabs(interesting(rng, static_cast<float>(e.header.duration_sec)));
                break;
            case 11:
                e.header.cutoff = static_cast<double>(rng() % 1000 + 1) / 1001.0;
                break;
            case 12: {  // a gaussian duplicated or dropped
                if (!g.count) break;
                GaussianColumns c = g;
                const std::size_t n = rng() % 2 ? g.count + 1 : g.count - 1;
                g.resize(n);
                if (n > c.count) {
                    auto dup = [&](auto& col, std::size_t per) {
                        std::copy_n(col.begin() + static_cast<std::ptrdiff_t>(i * per), per,
                                    col.begin() + static_cast<std::ptrdiff_t>(c.count * per));
                    };
                    dup(g.position, 3);
                    dup(g.scale, 3);
                    dup(g.rotation, 4);
                    dup(g.color, 4);
                    dup(g.motion, 3);
                    dup(g.mu_t, 1);
                    dup(g.sigma_t, 1);
                    dup(g.win_lo, 1);
                    dup(g.win_hi, 1);
                    if (!g.object_id.empty()) g.object_id.push_back(g.object_id[i]);
                    if (!g.source_index.empty()) {
                        g.source_group.push_back(g.source_group[i]);
                        g.source_index.push_back(g.source_index[i]);
                    }
                } else {
                    if (!g.object_id.empty()) g.object_id.resize(n);
                    if (!g.source_index.empty()) {
                        g.source_group.resize(n);
                        g.source_index.resize(n);
                    }
                }
                break;
            }
            case 13: {  // a lower SH degree: the bands above it dropped
                if (g.sh_degree == 0) break;
                const int to = g.sh_degree - 1;
                const int from_per = sh_coeffs_per_component(g.sh_degree),
                          to_per = sh_coeffs_per_component(to);
                std::vector<float> sh(g.count * 3 * static_cast<std::size_t>(to_per));
                for (std::size_t a = 0; a < g.count * 3; ++a)
                    std::copy_n(g.sh.begin() + static_cast<std::ptrdiff_t>(a * from_per), to_per,
                                sh.begin() + static_cast<std::ptrdiff_t>(a * to_per));
                g.sh = std::move(sh);
                g.sh_degree = e.header.sh_degree = to;
                break;
            }
            case 14: {  // a string grows a byte (any byte: UTF-8 or not)
                std::string* s[] = {&e.header.library, &e.header.profile};
                s[rng() % 2]->push_back(static_cast<char>(rng()));
                break;
            }
            default: {  // the writer's options
                o.preset = static_cast<Preset>(rng() % 3);
                const std::uint8_t codecs[] = {codec::deflate, codec::zstd, codec::lz4};
                o.codec = codecs[rng() % 3];
                const char* chunk[] = {"", "deflate", "zstd"};
                o.chunk_compression = chunk[rng() % 3];
                o.max_chunk_gaussians = 1 + rng() % 64;
                o.write_index = rng() % 4 != 0;
                o.sh_ladder = static_cast<ShLadder>(rng() % 4);
                break;
            }
        }
    }
}

}  // namespace

extern "C" std::size_t LLVMFuzzerCustomMutator(std::uint8_t* data, std::size_t size,
                                               std::size_t max_size, unsigned int seed) {
    std::mt19937 rng(seed);
    if (rng() % 8 != 0) {  // mostly through the decoded values
        ReaderOptions ro = small_limits();
        ro.keep_payloads = true;
        MemorySource src({data, size});
        auto loaded = read_streaming(src, ro);
        Editable e;
        if (loaded.ok() && !loaded->truncation && to_editable(*loaded, e)) {
            WriterOptions o;
            o.threads = 1;
            o.level = 1;
            o.chunk_compression_level = 1;
            mutate_values(e, o, rng);
            if (e.header.sh_degree != e.g.sh_degree) e.header.sh_degree = e.g.sh_degree;
            SceneInput in{e.header, e.g.batch()};
            auto bytes = write_scene(in, o);
            if (bytes.ok() && bytes->size() <= max_size) {
                std::memcpy(data, bytes->data(), bytes->size());
                return bytes->size();
            }
        }
    }
    return LLVMFuzzerMutate(data, size, max_size);
}

namespace {

template <class T, class A, class B>
bool same_bits(const std::vector<T, A>& a, const std::vector<T, B>& b) {
    return a.size() == b.size() &&
           (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

bool same_gaussians(const GaussianBlock& s, const GaussianBlock& i) {
    return s.count == i.count && same_bits(s.position, i.position) && same_bits(s.scale, i.scale) &&
           same_bits(s.rotation, i.rotation) && same_bits(s.color, i.color) &&
           same_bits(s.motion, i.motion) && same_bits(s.mu_t, i.mu_t) &&
           same_bits(s.sigma_t, i.sigma_t) && s.flags == i.flags && s.sh == i.sh &&
           s.object_id == i.object_id && s.gaussian_id == i.gaussian_id;
}

[[noreturn]] void fail(const std::string& what) {
    std::fprintf(stderr, "structured: %s\n", what.c_str());
    std::abort();
}

// The Header says keyframe-delta (the gaussian-birth readers refuse such a file by name).
bool is_keyframe_delta(const std::uint8_t* data, std::size_t size) {
    if (size < kMagicSize + kRecordHeaderSize) return false;
    auto r = parse_record(Bytes(data, size).subspan(kMagicSize), kMagicSize);
    if (!r.ok() || r->opcode != op::header) return false;
    auto h = parse_header(*r);
    return h.ok() && h->temporal_model == kModelKeyframeDelta;
}

// A valid keyframe-delta file: the streaming front-end composes every state, and the indexed
// one (when the file has an index) composes the same state at each state's t0.
int check_keyframe_delta(MemorySource& src) {
    const ReaderOptions options = small_limits();
    KeyframeDeltaStream stream(src, options);
    if (!stream.open().ok()) fail("validator: valid; keyframe-delta stream refuses it");
    auto reader = KeyframeDeltaReader::open(src, options);
    while (true) {
        GaussianBlock state, indexed;
        StateInfo info;
        auto more = stream.next_state(state, &info);
        if (!more.ok()) fail("validator: valid; keyframe-delta stream: " + more.error().describe());
        if (!*more) break;
        if (!reader.ok()) continue;  // no index: the stream alone reads it (M016)
        if (!reader->state_at(info.t0, indexed).ok())
            fail("validator: valid; keyframe-delta reader refuses a state");
        if (!same_gaussians(state, indexed))
            fail("the two keyframe-delta front-ends compose a valid file differently");
    }
    return 0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const ReaderOptions options = small_limits();
    MemorySource src({data, size});
    auto streamed = read_streaming(src, options);
    GaussianBlock indexed;
    auto reader = IndexedReader::open(src, options);
    std::vector<DecodeWorkspace> pool;
    const bool indexed_ok = reader.ok() && reader->read_all(indexed, pool, 1).ok();
    if (streamed.ok()) {
        Frame frame;
        for (double t : {0.0, 0.5, 1.0, 1e300})
            evaluate(streamed->gaussians, t, streamed->info.header.cutoff, frame,
                     {.tracks = streamed->info.object_tracks});
    }
    ValidateOptions vo;
    vo.reader = options;
    auto report = validate(src, vo);
    if (!report.ok() || !report->valid()) return 0;
    // The validator finds nothing wrong: both readers read the file, alike.
    if (report->file_size > 0 && is_keyframe_delta(data, size)) return check_keyframe_delta(src);
    if (!streamed.ok()) fail("validator: valid; streaming reader: " + streamed.error().describe());
    if (streamed->truncation) fail("validator: valid; streaming reader: truncated");
    if (!indexed_ok)
        fail("validator: valid; indexed reader: " +
             (reader.ok() ? std::string("read_all failed") : reader.error().describe()));
    if (!same_gaussians(streamed->gaussians, indexed))
        fail("the two read paths decode a valid file differently");
    return 0;
}
