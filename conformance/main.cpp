// fourdgs-conformance — the conformance runner, generator and checks (docs/conformance.md).
//
//   fourdgs-conformance FILE --path streamed|indexed [--expect EXPECTED.json]
//       (FILE may be an http:// or https:// URL) prints FILE's canonical JSON, or {"refused":"<id>"} (exit 0) for a named refusal; with
//       --expect, exits 1 when the output differs from EXPECTED.json. Any unnamed failure prints
//       a diagnosis to stderr and exits 2.
//   fourdgs-conformance --generate DIR      writes the corpus (valid/, refusals/, SHA256SUMS)
//   fourdgs-conformance --verify DIR        regenerates twice and checks DIR against it
//   fourdgs-conformance --truncation-sweep DIR   cuts every valid file of DIR everywhere
//   fourdgs-conformance --self-test         checks the canonical number and string spellings
//   fourdgs-conformance --differential DIR [--seed N] [--per-file N] [--keep-failures OUT]
//       damaged files from DIR/valid through both paths, the validator and the C ABI
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "conformance.hpp"
#include "sha256.hpp"
#include "fourdgs/http_source.hpp"
#include "source_check.hpp"
#include "fourdgs/indexed_reader.hpp"
#include "fourdgs/io.hpp"
#include "fourdgs/keyframe_delta.hpp"
#include "fourdgs/quantize.hpp"
#include "fourdgs/streaming_reader.hpp"
#include "fourdgs/wire.hpp"

namespace fs = std::filesystem;
using namespace conformance;
using namespace fourdgs;

namespace {

std::vector<std::uint8_t> load_file(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    if (!in) throw std::runtime_error("cannot open " + p.string());
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}
void write_file(const fs::path& p, const std::string& s) {
    std::ofstream out(p, std::ios::binary);
    out << s;
    if (!out) throw std::runtime_error("cannot write " + p.string());
}
void write_file(const fs::path& p, const std::vector<std::uint8_t>& b) {
    write_file(p, std::string(b.begin(), b.end()));
}

std::string run_one(ByteSource& source, ReadPath path) { return canonical_output(source, path); }
std::string run_one(const std::vector<std::uint8_t>& bytes, ReadPath path) {
    MemorySource source(bytes);
    return canonical_output(source, path);
}
// A URL: read where it lies, by range requests (HttpSource).
std::string run_url(const std::string& url, ReadPath path) {
    auto source = open_source(url);
    if (!source) throw std::runtime_error(source.error().describe());
    return run_one(**source, path);
}

// Every decoded gaussian matched to a distinct source gaussian within the bounds (greedy: the
// corpus's duplicates are exact duplicates, so first fit cannot strand a match).
void check_against_source(const std::string& name, const GaussianBlock& d, const SourceGaussians& s,
                          const Bounds& b, bool check_mu) {
    if (d.count != s.count)
        throw std::runtime_error(name + ": decoded " + std::to_string(d.count) + " gaussians, wrote " +
                                 std::to_string(s.count));
    std::vector<bool> used(s.count, false);
    for (std::size_t i = 0; i < d.count; ++i) {
        std::string why = "no source gaussians";
        bool found = false;
        for (std::size_t j = 0; j < s.count && !found; ++j) {
            if (used[j]) continue;
            std::string w = mismatch(d, i, s, j, b, check_mu);
            if (w.empty()) {
                used[j] = found = true;
            } else if (j == 0 || why == "no source gaussians") {
                why = w;
            }
        }
        if (!found)
            throw std::runtime_error(name + ": decoded gaussian " + std::to_string(i) +
                                     " matches no written gaussian within the declared bounds (first: " + why + ")");
    }
}

void check_source(const Variant& v) {
    MemorySource src(v.bytes);
    if (!v.keyframe_delta) {
        auto loaded = read_streaming(src);
        if (!loaded) throw std::runtime_error(v.name + ": " + loaded.error().describe());
        const Bounds b = bounds_of(loaded->info.quantization, loaded->info.header.sh_degree);
        check_against_source(v.name, loaded->gaussians, *v.source, b, true);
        return;
    }
    auto reader = KeyframeDeltaReader::open(src);
    if (!reader) throw std::runtime_error(v.name + ": " + reader.error().describe());
    const Bounds b = bounds_of(reader->scene().quantization, reader->scene().header.sh_degree);
    for (std::size_t s = 0; s < v.step_t0.size(); ++s) {
        GaussianBlock block;
        if (auto st = reader->state_at(v.step_t0[s], block); !st)
            throw std::runtime_error(v.name + ": " + st.error().describe());
        // The step's ids are the file's (no id in this corpus dies and comes back): match by id.
        const SourceGaussians& src_g = *v.step_sources[s];
        if (block.count != src_g.count) throw std::runtime_error(v.name + ": state size differs");
        for (std::size_t i = 0; i < block.count; ++i) {
            auto it = std::find(v.step_ids[s].begin(), v.step_ids[s].end(), block.gaussian_id[i]);
            if (it == v.step_ids[s].end()) throw std::runtime_error(v.name + ": unknown gaussian_id");
            const std::size_t j = static_cast<std::size_t>(it - v.step_ids[s].begin());
            std::string why = mismatch(block, i, src_g, j, b, false);
            if (!why.empty())
                throw std::runtime_error(v.name + ": step " + std::to_string(s) + " gaussian_id " +
                                         std::to_string(block.gaussian_id[i]) + ": " + why + " outside its bound");
        }
    }
}


// Band capping (§6.5, M100): a reader asked for at most band 1 must return, on both paths,
// exactly the full decode with bands 2 and 3 dropped.
void check_band_capping(const Variant& v) {
    if (v.keyframe_delta || !v.source || v.source->sh_degree < 2) return;
    MemorySource src(v.bytes);
    auto full = read_streaming(src);
    if (!full) throw std::runtime_error(v.name + ": " + full.error().describe());
    ReaderOptions capped;
    capped.decode.max_sh_degree = 1;
    auto streamed = read_streaming(src, capped);
    if (!streamed) throw std::runtime_error(v.name + " capped: " + streamed.error().describe());
    auto reader = IndexedReader::open(src, capped);
    if (!reader) throw std::runtime_error(v.name + " capped: " + reader.error().describe());
    GaussianBlock indexed;
    std::vector<DecodeWorkspace> pool;
    if (auto st = reader->read_all(indexed, pool, 1); !st)
        throw std::runtime_error(v.name + " capped: " + st.error().describe());
    const GaussianBlock& f = full->gaussians;
    const int per_full = sh_coeffs_per_component(f.sh_degree), per_cap = sh_coeffs_per_component(1);
    for (const GaussianBlock* c : {&streamed->gaussians, &indexed}) {
        if (c->sh_degree != 1 || c->count != f.count)
            throw std::runtime_error(v.name + ": a band-1 cap gave SH degree " + std::to_string(c->sh_degree));
        // Both front-ends emit chunks in file order, so gaussian i is the same gaussian.
        for (std::size_t i = 0; i < f.count; ++i) {
            if (c->position[i * 3] != f.position[i * 3])
                throw std::runtime_error(v.name + ": the capped decode reorders gaussians");
            for (int comp = 0; comp < 3; ++comp)
                for (int k = 0; k < per_cap; ++k)
                    if (c->sh[(i * 3 + comp) * per_cap + k] != f.sh[(i * 3 + comp) * per_full + k])
                        throw std::runtime_error(v.name + ": the band-1 cap changed a band-1 coefficient");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Corpus layout.

fs::path file_of(const fs::path& dir, const Variant& v) {
    return dir / (v.refusal ? "refusals" : "valid") / (v.name + ".4dgs");
}
fs::path expected_of(const fs::path& dir, const Variant& v) {
    return dir / (v.refusal ? "refusals" : "valid") / (v.name + ".expected.json");
}
std::string manifest(const fs::path& dir, const std::vector<Variant>& corpus) {
    std::vector<std::string> lines;
    for (const Variant& v : corpus)
        lines.push_back(sha256_hex(v.bytes) + "  " + fs::relative(file_of(dir, v), dir).generic_string());
    std::sort(lines.begin(), lines.end());
    std::string out;
    for (auto& l : lines) out += l + "\n";
    return out;
}

// The expectation for a variant, checked on both paths (they must agree).
std::string expectation(const Variant& v) {
    const std::string a = run_one(v.bytes, ReadPath::streamed);
    const std::string b = run_one(v.bytes, ReadPath::indexed);
    if (a != b) {
        std::size_t at = 0;
        while (at < a.size() && at < b.size() && a[at] == b[at]) ++at;
        const std::size_t from = at > 120 ? at - 120 : 0;
        throw std::runtime_error(v.name + ": the streamed and indexed paths disagree at byte " +
                                 std::to_string(at) + ":\n  streamed ..." + a.substr(from, 240) +
                                 "\n  indexed  ..." + b.substr(from, 240));
    }
    if (v.refusal) {
        const std::string want = Json::object().set("refused", Json::string(v.refused)).dump() + "\n";
        if (a != want) throw std::runtime_error(v.name + ": expected " + want + " got " + a.substr(0, 300));
    } else if (a.rfind("{\"refused\"", 0) == 0) {
        throw std::runtime_error(v.name + ": a valid variant is refused: " + a);
    }
    return a;
}

int generate(const fs::path& dir) {
    std::vector<std::string> skipped;
    const auto corpus = generate_corpus(&skipped);
    for (const auto& s : skipped) std::fprintf(stderr, "left out %s\n", s.c_str());
    fs::create_directories(dir / "valid");
    fs::create_directories(dir / "refusals");
    for (const fs::path& sub : {dir / "valid", dir / "refusals"})
        for (const auto& e : fs::directory_iterator(sub)) fs::remove(e.path());
    std::uintmax_t total = 0;
    for (const Variant& v : corpus) {
        if (!v.refusal) check_source(v);
        if (!v.refusal) check_band_capping(v);
        const std::string expected = expectation(v);
        write_file(file_of(dir, v), v.bytes);
        write_file(expected_of(dir, v), expected);
        total += v.bytes.size() + expected.size();
    }
    write_file(dir / "SHA256SUMS", manifest(dir, corpus));
    std::printf("wrote %zu variants, %ju bytes, to %s\n", corpus.size(), total, dir.string().c_str());
    return 0;
}

int verify(const fs::path& dir) {
    const auto corpus = generate_corpus();
    const auto again = generate_corpus();
    int failures = 0;
    auto fail = [&](const std::string& why) {
        std::fprintf(stderr, "FAIL %s\n", why.c_str());
        ++failures;
    };
    if (corpus.size() != again.size()) fail("two generator runs give different variant counts");
    for (std::size_t i = 0; i < std::min(corpus.size(), again.size()); ++i)
        if (corpus[i].bytes != again[i].bytes) fail(corpus[i].name + ": two generator runs differ");
    // The manifest: every committed file hashes to its line, and the lines are the regenerated ones.
    std::string committed;
    try {
        const auto m = load_file(dir / "SHA256SUMS");
        committed.assign(m.begin(), m.end());
    } catch (const std::exception& e) {
        fail(e.what());
    }
    if (committed != manifest(dir, corpus)) fail("SHA256SUMS differs from the regenerated corpus");
    std::size_t listed = 0;
    std::istringstream lines(committed);
    for (std::string line; std::getline(lines, line);) {
        ++listed;
        const std::string hash = line.substr(0, 64), rel = line.size() > 66 ? line.substr(66) : "";
        try {
            if (sha256_hex(load_file(dir / rel)) != hash) fail(rel + ": SHA-256 differs from SHA256SUMS");
        } catch (const std::exception& e) {
            fail(e.what());
        }
    }
    for (const Variant& v : corpus) {
        try {
            if (load_file(file_of(dir, v)) != v.bytes) fail(v.name + ": committed file differs from the generator's");
            if (!v.refusal) check_source(v);
            if (!v.refusal) check_band_capping(v);
            const std::string fresh = expectation(v);
            const auto exp = load_file(expected_of(dir, v));
            if (std::string(exp.begin(), exp.end()) != fresh) fail(v.name + ": expectation differs from a fresh decode");
        } catch (const std::exception& e) {
            fail(e.what());
        }
    }
    std::printf("verified %zu variants (%zu manifest lines): %d failure(s)\n", corpus.size(), listed, failures);
    return failures == 0 ? 0 : 1;
}

// ---------------------------------------------------------------------------------------------
// Truncation sweep.

struct Cut {
    std::size_t at;
    std::size_t complete_chunks;  // chunk records wholly before the cut
};

// What a front-to-back read of a cut file recovered.
struct CutRead {
    std::size_t chunks = 0;        // chunks (state chunks) returned
    std::size_t content = 0;       // Metadata and Attachment records in the scene
    bool reported = false;         // the read ended with an error of kind truncated
};
template <class Reader, class Next>
CutRead drain(Reader& r, Next next) {
    CutRead out;
    auto st = r.open();
    if (st) {
        GaussianBlock b;
        while (true) {
            auto more = next(r, b);
            if (!more) {
                out.reported = more.error().kind == ErrorKind::truncated;
                break;
            }
            if (!*more) break;
            ++out.chunks;
        }
    } else {
        out.reported = st.error().kind == ErrorKind::truncated;
    }
    out.content = r.scene().metadata.size() + r.scene().attachments.size();
    return out;
}
CutRead read_cut(const std::vector<std::uint8_t>& bytes, bool kd) {
    MemorySource src(bytes);
    if (kd) {
        KeyframeDeltaStream s(src);
        return drain(s, [](KeyframeDeltaStream& r, GaussianBlock& b) { return r.next_state(b); });
    }
    StreamingReader r(src);
    return drain(r, [](StreamingReader& rr, GaussianBlock& b) { return rr.next_chunk(b); });
}

int truncation_sweep(const fs::path& dir) {
    int failures = 0;
    std::size_t cuts = 0, files = 0;
    std::vector<fs::path> paths;
    for (const auto& e : fs::directory_iterator(dir / "valid"))
        if (e.path().extension() == ".4dgs") paths.push_back(e.path());
    std::sort(paths.begin(), paths.end());
    for (const fs::path& p : paths) {
        const auto bytes = load_file(p);
        ++files;
        // Record boundaries, from the framing alone.
        std::vector<std::pair<std::size_t, std::size_t>> recs;  // offset, end
        std::vector<std::uint8_t> opcodes;
        for (std::size_t at = kMagicSize; at + kRecordHeaderSize <= bytes.size();) {
            auto r = parse_record(Bytes(bytes).subspan(at), at);
            if (!r) break;
            recs.emplace_back(at, static_cast<std::size_t>(r->end_offset()));
            opcodes.push_back(r->opcode);
            at = static_cast<std::size_t>(r->end_offset());
            if (r->opcode == op::footer) break;
        }
        bool kd = false;
        {
            MemorySource src(bytes);
            StreamingReader probe(src);
            auto st = probe.open();
            kd = !st && st.error().refusal == "unknown-temporal-model";
        }
        std::vector<std::size_t> offsets = {0, 3, kMagicSize};
        for (std::size_t i = 0; i < recs.size(); ++i) {
            const auto [lo, hi] = recs[i];
            offsets.push_back(lo);
            offsets.push_back(lo + 1);
            offsets.push_back(lo + kRecordHeaderSize);
            offsets.push_back(lo + (hi - lo) / 2);
            offsets.push_back(hi - 1);
        }
        offsets.push_back(bytes.size() - 1);
        std::sort(offsets.begin(), offsets.end());
        offsets.erase(std::unique(offsets.begin(), offsets.end()), offsets.end());
        for (std::size_t cut : offsets) {
            if (cut >= bytes.size()) continue;
            ++cuts;
            std::size_t complete = 0, content = 0;
            for (std::size_t i = 0; i < recs.size(); ++i) {
                if (recs[i].second > cut) continue;
                if (opcodes[i] == op::chunk || opcodes[i] == op::delta_chunk) ++complete;
                if (opcodes[i] == op::metadata || opcodes[i] == op::attachment) ++content;
            }
            const std::vector<std::uint8_t> cut_bytes(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(cut));
            const CutRead got = read_cut(cut_bytes, kd);
            // A cut before the first chunk ends in open(): no chunk, but every whole Metadata
            // and Attachment record before the cut is in the scene, and the truncation is named.
            if (!got.reported || got.chunks != complete || got.content != content) {
                std::fprintf(stderr,
                             "FAIL %s cut at %zu: recovered %zu of %zu complete chunk(s), %zu of %zu "
                             "content record(s), truncation %s\n",
                             p.filename().string().c_str(), cut, got.chunks, complete, got.content, content,
                             got.reported ? "reported" : "NOT reported");
                ++failures;
            }
            // The indexed path must refuse the cut file (its tail is gone) without crashing.
            MemorySource src(cut_bytes);
            if (kd ? static_cast<bool>(KeyframeDeltaReader::open(src)) : static_cast<bool>(IndexedReader::open(src))) {
                std::fprintf(stderr, "FAIL %s cut at %zu: the indexed path opened a truncated file\n",
                             p.filename().string().c_str(), cut);
                ++failures;
            }
        }
    }
    std::printf("truncation sweep: %zu files, %zu cuts, %d failure(s)\n", files, cuts, failures);
    return failures == 0 ? 0 : 1;
}


// The pinned spellings of docs/conformance.md, checked directly.
int self_test() {
    int failures = 0;
    auto expect = [&](const Json& j, const std::string& want) {
        if (j.dump() != want) {
            std::fprintf(stderr, "FAIL canonical spelling: got %s, want %s\n", j.dump().c_str(), want.c_str());
            ++failures;
        }
    };
    expect(num(-0.0), "0");
    expect(num(-1e-9 * 0), "0");
    expect(num(-0.0f), "0");
    expect(num(0.05), "0.05");
    expect(num(1.0 / 3.0), "0.3333333333333333");
    expect(num(1.0f / 3.0f), "0.33333334");
    expect(num(2.5e-7), "2.5e-07");
    expect(num(1234567.0), "1234567");
    expect(num(1e300), "1e+300");
    expect(num(0.1f), "0.1");
    expect(num(static_cast<double>(0.1f)), "0.10000000149011612");
    expect(num(std::numeric_limits<float>::max()), "3.4028235e+38");
    expect(num(std::numeric_limits<double>::denorm_min()), "5e-324");
    expect(num(std::numeric_limits<double>::infinity()), "\"inf\"");
    expect(num(-std::numeric_limits<double>::infinity()), "\"-inf\"");
    expect(num(std::numeric_limits<double>::quiet_NaN()), "\"nan\"");
    expect(integer(std::uint64_t{1} << 53), "9007199254740992");
    expect(integer((std::uint64_t{1} << 53) + 1), "\"9007199254740993\"");
    expect(sinteger(-5), "-5");
    expect(Json::string("a\"b\\c\n\x01"), "\"a\\\"b\\\\c\\n\\u0001\"");
    // Bytes that are not UTF-8 are spelled \udcXX (reversible), so the output is always JSON.
    expect(Json::string("\xc3\xa9 \xe9 \xed\xa0\x80 \xf0\x9f\x98"),
           "\"\xc3\xa9 \\udce9 \\udced\\udca0\\udc80 \\udcf0\\udc9f\\udc98\"");
    expect(Json::object().set("b", integer(1)).set("a", Json::null()).set("B", Json::boolean(true)),
           "{\"B\":true,\"a\":null,\"b\":1}");
    std::printf("canonical spelling self-test: %d failure(s)\n", failures);
    return failures == 0 ? 0 : 1;
}

int usage() {
    std::fprintf(stderr,
                 "usage: fourdgs-conformance FILE --path streamed|indexed [--expect EXPECTED.json]\n"
                 "       fourdgs-conformance --generate DIR | --verify DIR | --truncation-sweep DIR | --self-test\n"
                 "       fourdgs-conformance --differential DIR [--seed N] [--per-file N] [--keep-failures OUT]\n");
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        std::vector<std::string> args(argv + 1, argv + argc);
        if (args.size() == 1 && args[0] == "--self-test") return self_test();
        if (args.size() == 2 && args[0] == "--generate") return generate(args[1]);
        if (args.size() == 2 && args[0] == "--verify") return verify(args[1]);
        if (args.size() == 2 && args[0] == "--truncation-sweep") return truncation_sweep(args[1]);
        if (!args.empty() && args[0] == "--differential" && args.size() % 2 == 0) {
            std::uint64_t seed = 20261203;
            std::size_t per_file = 40;
            fs::path keep;
            for (std::size_t i = 2; i + 1 < args.size(); i += 2) {
                if (args[i] == "--seed") seed = std::stoull(args[i + 1]);
                else if (args[i] == "--per-file") per_file = std::stoul(args[i + 1]);
                else if (args[i] == "--keep-failures") keep = args[i + 1];
                else return usage();
            }
            return differential(args[1], seed, per_file, keep);
        }
        if (args.size() != 3 && args.size() != 5) return usage();
        if (args[1] != "--path" || (args[2] != "streamed" && args[2] != "indexed")) return usage();
        const ReadPath path = args[2] == "streamed" ? ReadPath::streamed : ReadPath::indexed;
        const std::string out =
            is_url(args[0]) ? run_url(args[0], path) : run_one(load_file(args[0]), path);
        if (args.size() == 5) {
            if (args[3] != "--expect") return usage();
            const auto exp = load_file(args[4]);
            if (std::string(exp.begin(), exp.end()) != out) {
                std::fprintf(stderr, "%s (%s): output differs from %s\n", args[0].c_str(), args[2].c_str(),
                             args[4].c_str());
                return 1;
            }
            return 0;
        }
        std::fwrite(out.data(), 1, out.size(), stdout);
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "fourdgs-conformance: %s\n", e.what());
        return 2;
    }
}
