// Encode benchmark: write_scene on a bench scene (tests/support/bench_scenes.hpp) at each effort,
// one thread and two, verification on (the writer always verifies), and — measured in the same
// run on the same bytes — the limit it cannot beat: compressing every stream the file holds once,
// with the codec and level it was written with, straight through the codec library; inflating
// them all again (what the verification must at least do); and memcpy of the input columns.
// Every figure is printed with its ratio to that limit, wall and CPU time, because the machines
// we run on are shared and noisy (the load average is printed at the start and the end).
//
//   usage: bench_encode [gaussians=1000000] [repeats=3] [scene=issue14|sh3|clustered]
//                       [efforts=fast,default]   (max is slow: name it to run it)
//
// The level of a stream written at effort max is taken as its codec's highest (max also tries
// the options' own level; a stream that won at that level is compressed at the highest in the
// limit, which makes the max limit, if anything, too high).
#include <fourdgs/fourdgs.hpp>
#include <fourdgs/writer.hpp>

#include <libdeflate.h>
#include <lz4.h>
#include <lz4hc.h>
#include <zstd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "best_seconds.hpp"
#include "support/bench_scenes.hpp"

namespace {

using namespace fourdgs;

[[noreturn]] void fail(const char* what, const Error& e) {
    std::fprintf(stderr, "%s: %s\n", what, e.describe().c_str());
    std::exit(1);
}

// One stream of the file: what its codec was given (the shuffled planes) and what it made.
struct Stream {
    std::uint8_t codec = 0;
    int level = 0;
    std::size_t symbols = 0;  // each plane's length
    std::vector<std::uint8_t> planes, payload;
};

// Σ over a stream's byte planes of their order-0 entropy, in bytes: what a Huffman code per plane
// would need, the floor for data without repeats.
double order0_bytes(const Stream& s) {
    double bits = 0;
    for (std::size_t at = 0; at < s.planes.size(); at += s.symbols) {
        std::size_t count[256] = {};
        for (std::size_t k = at; k < at + s.symbols; ++k) ++count[s.planes[k]];
        for (std::size_t c : count)
            if (c) bits -= double(c) * std::log2(double(c) / double(s.symbols));
    }
    return bits / 8;
}

void add_streams(Bytes block, std::vector<Stream>& out, int level_of(std::uint8_t)) {
    auto streams = split_streams(block, 0);
    if (!streams) fail("split_streams", streams.error());
    for (const StreamView& s : *streams) {
        const StreamHeader& h = s.header;
        if (h.element_count == 0) continue;
        const std::size_t symbols = h.mode == stream_mode::constant
                                        ? h.channels
                                        : std::size_t{h.element_count} * h.channels;
        Stream st;
        st.codec = h.codec;
        st.level = level_of(h.codec);
        st.payload.assign(s.payload.begin(), s.payload.end());
        st.symbols = symbols;
        st.planes.resize(symbols * h.symbol_width);
        if (auto d = decompress(h.codec, s.payload, st.planes, 0); !d.ok()) fail("decompress", d.error());
        out.push_back(std::move(st));
    }
}

// Every stream of a file (chunk records and SH Band records).
std::vector<Stream> file_streams(const std::vector<std::uint8_t>& file, int level_of(std::uint8_t)) {
    std::vector<Stream> out;
    MemorySource source(file);
    auto reader = IndexedReader::open(source);
    if (!reader) fail("open", reader.error());
    // The record at [offset, +length), parsed (its bytes held in `keep`).
    auto record = [&](std::uint64_t offset, std::uint64_t length, std::vector<std::uint8_t>& keep) {
        if (auto st = read_range(source, offset, length, length, keep); !st.ok()) fail("read", st.error());
        auto rec = parse_record(keep, offset);
        if (!rec) fail("parse_record", rec.error());
        return *rec;
    };
    std::vector<std::uint8_t> bytes, band;
    for (const ChunkIndex& e : reader->scene().index) {
        auto chunk = parse_chunk(record(e.chunk_offset, e.chunk_length, bytes));
        if (!chunk) fail("parse_chunk", chunk.error());
        add_streams(chunk->records, out, level_of);
        for (const ChunkIndex::Band& b : e.bands) {
            auto sh = parse_sh_band(record(b.offset, b.length, band));
            if (!sh) fail("parse_sh_band", sh.error());
            add_streams(sh->stream, out, level_of);
        }
    }
    return out;
}

// The codec libraries themselves, contexts made once, buffers reused.
class Codecs {
public:
    Codecs() : inflater_(libdeflate_alloc_decompressor()), zc_(ZSTD_createCCtx()), zd_(ZSTD_createDCtx()) {}
    ~Codecs() {
        for (auto* c : deflaters_) libdeflate_free_compressor(c);
        libdeflate_free_decompressor(inflater_);
        ZSTD_freeCCtx(zc_);
        ZSTD_freeDCtx(zd_);
    }
    Codecs(const Codecs&) = delete;
    Codecs& operator=(const Codecs&) = delete;

    std::size_t compress(const Stream& s, std::vector<std::uint8_t>& out) {
        out.resize(std::max<std::size_t>(out.size(), ZSTD_compressBound(s.planes.size()) + 4096));
        std::size_t n = 0;
        if (s.codec == codec::deflate) {
            if (!deflaters_[s.level]) deflaters_[s.level] = libdeflate_alloc_compressor(s.level);
            n = libdeflate_zlib_compress(deflaters_[s.level], s.planes.data(), s.planes.size(),
                                         out.data(), out.size());
        } else if (s.codec == codec::zstd) {
            n = ZSTD_compressCCtx(zc_, out.data(), out.size(), s.planes.data(), s.planes.size(),
                                  s.level);
        } else {
            const char* src = reinterpret_cast<const char*>(s.planes.data());
            char* dst = reinterpret_cast<char*>(out.data());
            const int len = static_cast<int>(s.planes.size()), cap = static_cast<int>(out.size());
            n = static_cast<std::size_t>(s.level < LZ4HC_CLEVEL_MIN
                                             ? LZ4_compress_default(src, dst, len, cap)
                                             : LZ4_compress_HC(src, dst, len, cap, s.level));
        }
        return n;
    }

    void inflate(const Stream& s, std::vector<std::uint8_t>& out) {
        out.resize(std::max(out.size(), s.planes.size()));
        bool ok = false;
        if (s.codec == codec::deflate) {
            std::size_t got = 0;
            ok = libdeflate_zlib_decompress(inflater_, s.payload.data(), s.payload.size(),
                                            out.data(), s.planes.size(), &got) ==
                     LIBDEFLATE_SUCCESS &&
                 got == s.planes.size();
        } else if (s.codec == codec::zstd) {
            ok = ZSTD_decompressDCtx(zd_, out.data(), s.planes.size(), s.payload.data(),
                                     s.payload.size()) == s.planes.size();
        } else {
            ok = LZ4_decompress_safe(reinterpret_cast<const char*>(s.payload.data()),
                                     reinterpret_cast<char*>(out.data()),
                                     static_cast<int>(s.payload.size()),
                                     static_cast<int>(s.planes.size())) ==
                 static_cast<int>(s.planes.size());
        }
        if (!ok) {
            std::fprintf(stderr, "the codec library refused a stream\n");
            std::exit(1);
        }
    }

private:
    libdeflate_compressor* deflaters_[13] = {};
    libdeflate_decompressor* inflater_;
    ZSTD_CCtx* zc_;
    ZSTD_DCtx* zd_;
};

void row(const char* what, Timing x, const char* against, Timing limit) {
    std::printf("  %-40s %9.1f ms wall %9.1f ms cpu  %6.2fx %s (cpu %.2fx)\n", what, x.wall * 1e3,
                x.cpu * 1e3, x.wall / limit.wall, against, x.cpu / limit.cpu);
}

}  // namespace

int main(int argc, char** argv) {
    const std::size_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1000000;
    const int repeats = argc > 2 ? std::max(1, std::atoi(argv[2])) : 3;
    const std::string scene_name = argc > 3 ? argv[3] : "issue14";
    const std::string efforts = argc > 4 ? argv[4] : "fast,default";
    const double load_start = load_average();

    const GaussianColumns g = scene_name == "clustered" ? test::clustered_scene(n)
                              : scene_name == "sh3"     ? test::issue14_scene(n, 3)
                                                        : test::issue14_scene(n);
    const SceneInput scene = test::scene_of(g, 10.0);
    const std::size_t in_bytes = test::input_bytes(g);
    std::printf("bench_encode: %zu gaussians, scene %s (SH %d), default preset, deflate, "
                "verification on; best of %d; input %.1f MB; load %.1f at the start\n",
                n, scene_name.c_str(), g.sh_degree, repeats, in_bytes / 1e6, load_start);

    // memcpy of the input columns: the last part of the limit.
    std::vector<std::uint8_t> src(in_bytes, 1), dst(in_bytes, 2);
    const Timing t_memcpy = best_timing(repeats * 3, [&] {
        std::memcpy(dst.data(), src.data(), in_bytes);
        asm volatile("" : : "r"(dst.data()) : "memory");
    });

    std::size_t default_bytes = 0;
    for (std::size_t at = 0; at < efforts.size();) {
        std::size_t comma = efforts.find(',', at);
        if (comma == std::string::npos) comma = efforts.size();
        const std::string name = efforts.substr(at, comma - at);
        at = comma + 1;
        const auto effort = parse_effort(name);
        if (!effort) {
            std::fprintf(stderr, "unknown effort '%s'\n", name.c_str());
            return 2;
        }
        WriterOptions opt;
        opt.effort = *effort;
        WriteWorkspace workspace;  // reused across the runs, as a writer of many scenes would
        opt.workspace = &workspace;
        std::vector<std::uint8_t> file;
        auto write = [&](unsigned threads) {
            opt.threads = threads;
            auto r = write_scene(scene, opt);
            if (!r) fail("write_scene", r.error());
            file = std::move(*r);
        };
        const int runs = *effort == Effort::max ? 1 : repeats;
        const Timing t1 = best_timing(runs, [&] { write(1); });
        const Timing t2 = best_timing(runs, [&] { write(2); });
        if (*effort == Effort::default_) default_bytes = file.size();

        // The limit, on this file's own streams.
        static Effort current;
        current = *effort;
        const std::vector<Stream> streams = file_streams(file, [](std::uint8_t c) {
            const CodecInfo* info = find_codec(c);
            return current == Effort::fast ? info->fast_level
                   : current == Effort::max ? info->max_level
                                            : WriterOptions{}.level;
        });
        Codecs codecs;
        std::vector<std::uint8_t> buf;
        std::size_t compressed = 0, planes = 0;
        const Timing t_compress = best_timing(runs, [&] {
            compressed = 0;
            for (const Stream& s : streams) compressed += codecs.compress(s, buf);
        });
        for (const Stream& s : streams) planes += s.planes.size();
        const Timing t_inflate = best_timing(repeats, [&] {
            for (const Stream& s : streams) codecs.inflate(s, buf);
        });
        const Timing limit = t_compress + t_inflate + t_memcpy;

        std::printf("\neffort %s: %zu bytes, %.3f bytes/gaussian", name.c_str(), file.size(),
                    double(file.size()) / double(n));
        if (default_bytes && *effort != Effort::default_)
            std::printf(", %.4fx default", double(file.size()) / double(default_bytes));
        double entropy = 0, payloads = 0;
        for (const Stream& st : streams) {
            entropy += order0_bytes(st);
            payloads += double(st.payload.size());
        }
        std::printf("; %zu streams, %.1f MB into the codec\n", streams.size(), planes / 1e6);
        std::printf("  streams' payloads %.0f bytes = %.4fx the order-0 entropy of their byte "
                    "planes (%.0f bytes)\n",
                    payloads, payloads / entropy, entropy);
        std::printf("  %-40s %9.1f ms wall %9.1f ms cpu\n", "limit: compress every stream once",
                    t_compress.wall * 1e3, t_compress.cpu * 1e3);
        std::printf("  %-40s %9.1f ms wall %9.1f ms cpu\n", "limit: inflate every stream",
                    t_inflate.wall * 1e3, t_inflate.cpu * 1e3);
        std::printf("  %-40s %9.1f ms wall %9.1f ms cpu\n", "limit: memcpy of the input",
                    t_memcpy.wall * 1e3, t_memcpy.cpu * 1e3);
        row("write_scene, 1 thread", t1, "limit", limit);
        row("write_scene, 2 threads", t2, "limit", limit);
        std::printf("  %-40s %9.2fx wall\n", "2 threads over 1", t1.wall / t2.wall);
    }
    std::printf("\nload %.1f at the end\n", load_average());
    return 0;
}
