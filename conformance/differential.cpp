// The differential check (docs/api.md, "Where the two read paths may differ"): damaged files made
// from the valid corpus by a seeded mutator, each read through the streaming path, the indexed
// path, the validator and the C ABI. For every file:
//   1. the two paths print the same canonical output (the same document, or the same refusal),
//      or the pair is one of the documented allowed differences (kAllowed below);
//   2. a refusal by either reader is also an error of the validator, with the same identifier;
//   3. the C ABI, reading every chunk in index order, names the indexed path's refusal;
//   4. every canonical output is JSON (UTF-8 that parses), whatever bytes the file's strings hold.
// The mutations are byte-level (cuts, bit flips, garbage appended) and record-level (records
// dropped, repeated, swapped, a count or length bombed, a time made non-finite, a Footer
// repeated), so most land inside structure the readers check rather than in entropy-coded bytes.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "conformance.hpp"
#include "../tests/support/json.hpp"
#include "fourdgs/fourdgs.h"
#include "fourdgs/io.hpp"
#include "fourdgs/text.hpp"
#include "fourdgs/validate.hpp"
#include "fourdgs/wire.hpp"

namespace fs = std::filesystem;
using namespace fourdgs;

namespace conformance {
namespace {

using Buf = std::vector<std::uint8_t>;

// A small deterministic generator (splitmix64): the same seed gives the same files everywhere,
// which <random>'s distributions do not promise.
class Rng {
public:
    explicit Rng(std::uint64_t seed) : s_(seed) {}
    std::uint64_t next() {
        std::uint64_t z = (s_ += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    std::size_t below(std::size_t n) { return n == 0 ? 0 : static_cast<std::size_t>(next() % n); }

private:
    std::uint64_t s_;
};

struct Span {
    std::size_t offset = 0, length = 0;  // a whole record: opcode, length, content
    std::uint8_t opcode = 0;
};

// The top-level records between the two magics of a valid file.
std::vector<Span> records_of(const Buf& b) {
    std::vector<Span> out;
    std::size_t at = kMagicSize;
    while (at + kRecordHeaderSize <= b.size()) {
        std::uint64_t len;
        std::memcpy(&len, b.data() + at + 1, 8);
        if (len > b.size() - at - kRecordHeaderSize) break;
        out.push_back({at, static_cast<std::size_t>(kRecordHeaderSize + len), b[at]});
        at += kRecordHeaderSize + static_cast<std::size_t>(len);
        if (out.back().opcode == op::footer) break;
    }
    return out;
}

Buf splice(const Buf& b, std::size_t at, std::size_t remove, const Buf& insert) {
    Buf out(b.begin(), b.begin() + static_cast<std::ptrdiff_t>(at));
    out.insert(out.end(), insert.begin(), insert.end());
    out.insert(out.end(), b.begin() + static_cast<std::ptrdiff_t>(at + remove), b.end());
    return out;
}

Buf slice(const Buf& b, const Span& s) {
    return Buf(b.begin() + static_cast<std::ptrdiff_t>(s.offset),
               b.begin() + static_cast<std::ptrdiff_t>(s.offset + s.length));
}

template <class T>
void put(Buf& b, std::size_t at, T v) {
    if (at + sizeof(T) <= b.size()) std::memcpy(b.data() + at, &v, sizeof(T));
}

// One mutation class: its name and what it does to a valid file (empty when it does not apply).
struct Mutation {
    const char* name;
    std::function<Buf(const Buf&, const std::vector<Span>&, Rng&)> apply;
};

const Mutation kMutations[] = {
    {"cut", [](const Buf& b, const std::vector<Span>&, Rng& r) {
         return Buf(b.begin(), b.begin() + static_cast<std::ptrdiff_t>(r.below(b.size())));
     }},
    {"bit-flip", [](const Buf& b, const std::vector<Span>&, Rng& r) {
         Buf m = b;
         const std::size_t flips = 1 + r.below(3);
         for (std::size_t i = 0; i < flips; ++i) m[r.below(m.size())] ^= std::uint8_t(1u << r.below(8));
         return m;
     }},
    {"byte-in-record-head", [](const Buf& b, const std::vector<Span>& recs, Rng& r) {
         // A byte among the first 48 of a record: the framing and the leading fixed fields,
         // where counts, offsets and times live.
         Buf m = b;
         const Span& s = recs[r.below(recs.size())];
         const std::size_t at = s.offset + r.below(std::min<std::size_t>(48, s.length));
         m[at] = static_cast<std::uint8_t>(r.next());
         return m;
     }},
    {"count-bomb", [](const Buf& b, const std::vector<Span>& recs, Rng& r) {
         Buf m = b;
         const Span& s = recs[r.below(recs.size())];
         if (s.length <= kRecordHeaderSize + 4) return Buf{};
         const std::size_t at = s.offset + kRecordHeaderSize +
                                r.below(std::min<std::size_t>(64, s.length - kRecordHeaderSize - 3));
         if (r.below(2)) put<std::uint32_t>(m, at, 0xFFFFFFF0u + static_cast<std::uint32_t>(r.below(16)));
         else put<std::uint64_t>(m, at, (std::uint64_t{1} << 40) + r.below(1u << 20));
         return m;
     }},
    {"length-off-by-some", [](const Buf& b, const std::vector<Span>& recs, Rng& r) {
         Buf m = b;
         const Span& s = recs[r.below(recs.size())];
         const std::int64_t delta = static_cast<std::int64_t>(r.below(33)) - 16;
         std::uint64_t len = s.length - kRecordHeaderSize;
         if (delta == 0 || (delta < 0 && static_cast<std::uint64_t>(-delta) > len)) return Buf{};
         put<std::uint64_t>(m, s.offset + 1, len + static_cast<std::uint64_t>(delta));
         return m;
     }},
    {"length-bomb", [](const Buf& b, const std::vector<Span>& recs, Rng& r) {
         Buf m = b;
         const Span& s = recs[r.below(recs.size())];
         put<std::uint64_t>(m, s.offset + 1, ~std::uint64_t{0} - r.below(1u << 16));
         return m;
     }},
    {"record-dropped", [](const Buf& b, const std::vector<Span>& recs, Rng& r) {
         const Span& s = recs[r.below(recs.size())];
         return splice(b, s.offset, s.length, {});
     }},
    {"record-repeated", [](const Buf& b, const std::vector<Span>& recs, Rng& r) {
         const Span& s = recs[r.below(recs.size())];
         return splice(b, s.offset + s.length, 0, slice(b, s));
     }},
    {"records-swapped", [](const Buf& b, const std::vector<Span>& recs, Rng& r) {
         if (recs.size() < 2) return Buf{};
         const std::size_t i = r.below(recs.size() - 1);
         Buf both = slice(b, recs[i + 1]);
         const Buf first = slice(b, recs[i]);
         both.insert(both.end(), first.begin(), first.end());
         return splice(b, recs[i].offset, recs[i].length + recs[i + 1].length, both);
     }},
    {"private-record-inserted", [](const Buf& b, const std::vector<Span>& recs, Rng& r) {
         const Span& s = recs[r.below(recs.size())];
         Buf rec = {static_cast<std::uint8_t>(0x80 + r.below(0x80)), 3, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3};
         return splice(b, s.offset, 0, rec);
     }},
    {"footer-repeated", [](const Buf& b, const std::vector<Span>& recs, Rng&) {
         const Span& f = recs.back();
         if (f.opcode != op::footer) return Buf{};
         return splice(b, f.offset + f.length, 0, slice(b, f));
     }},
    {"garbage-appended", [](const Buf& b, const std::vector<Span>&, Rng& r) {
         Buf m = b;
         const std::size_t n = 1 + r.below(200);
         for (std::size_t i = 0; i < n; ++i) m.push_back(static_cast<std::uint8_t>(r.next()));
         return m;
     }},
    {"string-not-utf8", [](const Buf& b, const std::vector<Span>& recs, Rng& r) {
         // A byte of the Header's library string (its second string) becomes one that UTF-8
         // never uses: readers keep the bytes, printers must still print JSON.
         const Span& h = recs.front();
         if (h.opcode != op::header) return Buf{};
         const std::size_t c = h.offset + kRecordHeaderSize;
         std::uint32_t profile = 0, library = 0;
         if (h.length < kRecordHeaderSize + 8) return Buf{};
         std::memcpy(&profile, b.data() + c, 4);
         if (c + 8 + profile > h.offset + h.length) return Buf{};
         std::memcpy(&library, b.data() + c + 4 + profile, 4);
         if (library == 0 || c + 8 + profile + library > h.offset + h.length) return Buf{};
         Buf m = b;
         const std::uint8_t bad[] = {0xFF, 0xC0, 0x80, 0xED, 0xF5};
         m[c + 8 + profile + r.below(library)] = bad[r.below(std::size(bad))];
         return m;
     }},
    {"time-non-finite", [](const Buf& b, const std::vector<Span>& recs, Rng& r) {
         // The leading f64 pair of a record whose content starts with times: Chunk and Delta
         // Chunk (t0, t1), Chunk Index (t0, t1); or a Window Table entry.
         std::vector<std::size_t> at;
         for (const Span& s : recs) {
             const std::size_t c = s.offset + kRecordHeaderSize;
             if (s.opcode == op::chunk || s.opcode == op::delta_chunk || s.opcode == op::chunk_index) {
                 at.push_back(c);
                 at.push_back(c + 8);
             } else if (s.opcode == op::window_table && s.length >= kRecordHeaderSize + 20) {
                 at.push_back(c + 4);
                 at.push_back(c + 12);
             }
         }
         if (at.empty()) return Buf{};
         Buf m = b;
         const double kinds[] = {std::nan(""), -std::nan(""), HUGE_VAL, -HUGE_VAL};
         put<double>(m, at[r.below(at.size())], kinds[r.below(4)]);
         return m;
     }},
};

// ---------------------------------------------------------------------------------------------
// What each reader says about a file.

struct Outcome {
    std::string document;  // the canonical output, or "" when refused
    std::string refused;   // the refusal identifier, or ""
};

// Why a canonical document is not JSON, or "": it must be UTF-8 and parse (RFC 8259).
std::string not_json(const std::string& document) {
    if (!is_utf8(document)) return "the output is not UTF-8";
    try {
        (void)fourdgs::test::Json::parse(document);
    } catch (const std::exception& e) {
        return e.what();
    }
    return "";
}

Outcome read_path(const Buf& bytes, ReadPath path) {
    try {
        return {canonical_decode(bytes, path).dump(), ""};
    } catch (const Refused& r) {
        return {"", r.id};
    }
}

std::set<std::string> validator_errors(const Buf& bytes) {
    MemorySource src(bytes);
    auto report = validate(src);
    std::set<std::string> rules;
    if (!report) return {"<validator could not run: " + report.error().describe() + ">"};
    for (const Finding& f : report->findings)
        if (f.severity == Severity::error) rules.insert(f.rule);
    return rules;
}

std::string capi_refusal() {
    fourdgs_error e;
    e.struct_size = sizeof e;
    fourdgs_last_error(&e);
    return std::string(e.refusal.data, e.refusal.size);
}

// The C ABI's first refusal when opening the file and evaluating every chunk in index order (a
// keyframe-delta file: the state of every entry, at its t0), or "".
std::string capi_first_refusal(const Buf& bytes) {
    fourdgs_reader* reader = nullptr;
    if (fourdgs_reader_open_memory(bytes.data(), bytes.size(), nullptr, &reader) != FOURDGS_OK)
        return capi_refusal();
    fourdgs_scene_info info;
    info.struct_size = sizeof info;
    std::string refused;
    fourdgs_frame* frame = nullptr;
    if (fourdgs_reader_scene_info(reader, &info) != FOURDGS_OK ||
        fourdgs_frame_create(nullptr, &frame) != FOURDGS_OK) {
        refused = capi_refusal();
    } else {
        for (std::size_t i = 0; i < info.chunk_count && refused.empty(); ++i) {
            fourdgs_chunk_info chunk;
            chunk.struct_size = sizeof chunk;
            fourdgs_status st = fourdgs_reader_chunk_info(reader, i, &chunk);
            // A non-finite t0 (a damaged time both paths read) is not a query the C ABI takes.
            const double t = std::isfinite(chunk.t0) ? chunk.t0 : 0.0;
            if (st == FOURDGS_OK)
                st = info.temporal_model == FOURDGS_MODEL_KEYFRAME_DELTA
                         ? fourdgs_reader_evaluate(reader, t, nullptr, frame)
                         : fourdgs_reader_evaluate_chunk(reader, i, t, nullptr, frame);
            if (st != FOURDGS_OK) refused = capi_refusal();
        }
    }
    fourdgs_frame_free(frame);
    fourdgs_reader_free(reader);
    return refused;
}

// ---------------------------------------------------------------------------------------------
// The allowed differences between the two paths, each for a reason docs/api.md gives. A pair of
// outcomes that none of these explains is a failure.

struct Allowed {
    const char* name;
    std::function<bool(const Outcome& streamed, const Outcome& indexed)> holds;
};

const Allowed kAllowed[] = {
    // (A cut file needs no entry: its tail is not the magic, so the indexed path scans and meets
    // the cut where the streaming path does.)
    // The index is intact and a chunk record disagrees with its entry: a seeking reader fetches
    // the record by the entry and checks the two before it interprets the record (§5.8), so it
    // names the disagreement; front to back, a reader meets the record before the index and
    // names what is wrong with the record itself (its length misframes what follows, its times
    // do not tile). Both refuse, and the validator reports both.
    {"index-checked-first",
     [](const Outcome& s, const Outcome& i) {
         return i.refused == "index-record-mismatch" && !s.refused.empty();
     }},
    // Two faults: a keyframe-delta file whose index no longer tiles the Header's duration (a
    // damaged duration or entry time) and a damaged state chunk. The seeking reader builds its
    // timeline from the index before it reads a state chunk (§11.1, fourdgs/keyframe_timeline.hpp),
    // so it names the tiling; front to back, a reader meets the damaged chunk before it can know
    // the tiling is incomplete. Both refuse; the validator reports both.
    {"timeline-checked-first",
     [](const Outcome& s, const Outcome& i) {
         return (i.refused == "timeline-gap" || i.refused == "non-tiling-chunks") &&
                !s.refused.empty();
     }},
    // Two faults in one chunk: its payload and the SH Band Stream records that follow it (§5.7).
    // Front to back, a reader frames the chunk's band records before it decodes the chunk (they
    // belong to it), so it names the band; the seeking reader decodes the payload it fetched by
    // the entry first and names that. Both refuse; the validator reports both.
    {"band-framed-first",
     [](const Outcome& s, const Outcome& i) {
         return s.refused == "invalid-sh-band" && !i.refused.empty();
     }},
};

struct Tally {
    std::size_t files = 0, agreed_documents = 0, agreed_refusals = 0;
    std::map<std::string, std::size_t> allowed;
    std::size_t failures = 0;
};

}  // namespace

int differential(const fs::path& dir, std::uint64_t seed, std::size_t per_file,
                 const fs::path& failures_dir) {
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(dir / "valid"))
        if (e.path().extension() == ".4dgs") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    Tally tally;
    std::map<std::string, std::size_t> per_class, failed_per_class;
    std::string current_class;  // the mutation class of the file being checked, or "refusals"
    auto fail = [&](const std::string& name, const Buf& bytes, const std::string& why) {
        ++tally.failures;
        ++failed_per_class[current_class];
        std::printf("FAIL %s: %s\n", name.c_str(), why.c_str());
        if (!failures_dir.empty()) {
            fs::create_directories(failures_dir);
            std::ofstream(failures_dir / (name + ".4dgs"), std::ios::binary)
                .write(reinterpret_cast<const char*>(bytes.data()),
                       static_cast<std::streamsize>(bytes.size()));
        }
    };
    // The refusal corpus as it is: every reader refusal is a validator error too.
    current_class = "refusal-corpus";
    for (const auto& e : fs::directory_iterator(dir / "refusals")) {
        if (e.path().extension() != ".4dgs") continue;
        std::ifstream in(e.path(), std::ios::binary);
        const Buf bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
        const std::set<std::string> errors = validator_errors(bytes);
        for (ReadPath p : {ReadPath::streamed, ReadPath::indexed})
            if (const Outcome o = read_path(bytes, p); !o.refused.empty() && !errors.count(o.refused)) {
                fail("refusals." + e.path().stem().string(), bytes,
                     "a reader refuses " + o.refused + " but the validator does not report it");
                break;
            }
    }
    for (const fs::path& path : files) {
        std::ifstream in(path, std::ios::binary);
        const Buf valid{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
        const std::vector<Span> recs = records_of(valid);
        if (recs.empty()) continue;
        Rng rng(seed ^ std::hash<std::string>{}(path.filename().string()));
        for (std::size_t k = 0; k < per_file; ++k) {
            const Mutation& mut = kMutations[rng.below(std::size(kMutations))];
            const Buf bytes = mut.apply(valid, recs, rng);
            if (bytes.empty() || bytes == valid) continue;
            const std::string name = path.stem().string() + "." + mut.name + "." + std::to_string(k);
            ++tally.files;
            ++per_class[mut.name];
            current_class = mut.name;
            const Outcome s = read_path(bytes, ReadPath::streamed);
            const Outcome i = read_path(bytes, ReadPath::indexed);
            for (const Outcome* o : {&s, &i})
                if (const std::string why = o->refused.empty() ? not_json(o->document) : "";
                    !why.empty())
                    fail(name, bytes, "the canonical output is not JSON: " + why);
            if (s.refused == i.refused && s.document == i.document) {
                ++(s.refused.empty() ? tally.agreed_documents : tally.agreed_refusals);
            } else {
                const Allowed* why = nullptr;
                for (const Allowed& a : kAllowed)
                    if (a.holds(s, i)) why = &a;
                if (why) {
                    ++tally.allowed[why->name];
                } else {
                    fail(name, bytes,
                         "streamed " + (s.refused.empty() ? "decodes" : "refuses " + s.refused) +
                             ", indexed " + (i.refused.empty() ? "decodes" : "refuses " + i.refused) +
                             (s.refused.empty() && i.refused.empty() ? " (different documents)" : ""));
                    continue;
                }
            }
            const std::set<std::string> errors = validator_errors(bytes);
            for (const std::string& r : {s.refused, i.refused})
                if (!r.empty() && !errors.count(r)) {
                    std::string listed;
                    for (const std::string& e : errors) listed += (listed.empty() ? "" : ", ") + e;
                    fail(name, bytes, "a reader refuses " + r + " but the validator reports {" +
                                          listed + "}");
                    break;
                }
            if (const std::string c = capi_first_refusal(bytes); c != i.refused)
                fail(name, bytes, "the C ABI " + (c.empty() ? "reads it" : "refuses " + c) +
                                      ", the indexed path " +
                                      (i.refused.empty() ? "reads it" : "refuses " + i.refused));
        }
    }
    std::printf("differential: %zu damaged files from %zu valid ones (seed %llu)\n", tally.files,
                files.size(), static_cast<unsigned long long>(seed));
    for (const auto& [name, n] : per_class)
        std::printf("  %-26s %5zu files, %4zu failure(s)\n", name.c_str(), n,
                    failed_per_class[name]);
    if (failed_per_class.count("refusal-corpus"))
        std::printf("  %-26s %4zu failure(s)\n", "refusal-corpus",
                    failed_per_class["refusal-corpus"]);
    std::printf("  both paths decode alike: %zu; both refuse alike: %zu\n", tally.agreed_documents,
                tally.agreed_refusals);
    for (const auto& [name, n] : tally.allowed)
        std::printf("  allowed difference %-22s %zu\n", name.c_str(), n);
    std::printf("differential: %zu failure(s)\n", tally.failures);
    return tally.failures == 0 ? 0 : 1;
}

}  // namespace conformance
