// Where the bytes of a keyframe-delta file go (issue 39): every Chunk (keyframe) and Delta Chunk
// record split into its attribute streams, and each stream's bytes (17-byte header + payload)
// summed per (chunk kind, group, attribute), with the SH band records and the rest of the file.
// A chunk-level compressed block is counted as its records as stored, not split.
//
// Usage: bench_tracked_streams FILE.4dgs   (prints a markdown table)
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "fourdgs/io.hpp"
#include "fourdgs/record_walk.hpp"
#include "fourdgs/records/chunk.hpp"
#include "fourdgs/scene.hpp"
#include "fourdgs/stream.hpp"

using namespace fourdgs;

namespace {

[[noreturn]] void fail(const std::string& what) {
    std::fprintf(stderr, "bench_tracked_streams: %s\n", what.c_str());
    std::exit(1);
}

template <typename T>
T must(Result<T> r, const std::string& what) {
    if (!r.ok()) fail(what + ": " + r.error().describe());
    return std::move(r).value();
}

const char* name_of(std::uint8_t id) {
    return id < attr::kNames.size() ? attr::kNames[id] : "other";
}

struct Tally {
    std::map<std::string, std::uint64_t> bytes;  // "kind group attribute" -> bytes
    std::map<std::string, std::uint64_t> elements;
    std::map<std::string, std::string> coding;  // "mode/width/codec" seen, e.g. "raw/u8/deflate"
    std::uint64_t keyframes = 0, deltas = 0, updates = 0, births = 0, deaths = 0, bands = 0,
                  other = 0, total = 0;
};

void add_streams(Tally& t, const std::string& where, Bytes block, std::uint64_t base) {
    for (const StreamView& s : must(split_streams(block, base), where)) {
        const std::string key = where + " " + name_of(s.header.attribute_id);
        t.bytes[key] += kStreamHeaderSize + s.header.payload_length;
        t.elements[key] += s.header.element_count;
        static const char* const modes[] = {"raw", "delta", "constant"};
        const std::string c = std::string(s.header.mode < 3 ? modes[s.header.mode] : "?") + "/u" +
                              std::to_string(8 * s.header.symbol_width) + "/" +
                              std::to_string(s.header.codec);
        std::string& seen = t.coding[key];
        if (seen.find(c) == std::string::npos) seen += (seen.empty() ? "" : " ") + c;
    }
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) fail("usage: bench_tracked_streams FILE.4dgs");
    std::ifstream in(argv[1], std::ios::binary);
    const std::vector<std::uint8_t> file{std::istreambuf_iterator<char>(in), {}};
    MemorySource src(file);
    Tally t;
    t.total = file.size();
    std::vector<FramedRecord> frames;
    must(walk_record_frames(src, [&](const FramedRecord& f) { frames.push_back(f); }), "walk");
    for (const FramedRecord& f : frames) {
        RecordView r;
        r.opcode = f.opcode;
        r.offset = f.offset;
        r.content_length = f.content_length;
        r.content = Bytes(file.data() + r.content_offset(), f.content_length);
        if (f.opcode == op::chunk) {
            const ChunkRecord c = must(parse_chunk(r), "chunk");
            ++t.keyframes;
            if (!c.compression.empty()) {
                t.bytes["keyframe (chunk-compressed)"] += f.length;
                continue;
            }
            t.bytes["keyframe frame+fields"] += f.length - c.records.size();
            add_streams(t, "keyframe", c.records, c.records_offset);
        } else if (f.opcode == op::delta_chunk) {
            const DeltaChunk d = must(parse_delta_chunk(r), "delta chunk");
            ++t.deltas;
            t.updates += d.update_count;
            t.births += d.birth_count;
            t.deaths += d.death_count;
            if (!d.compression.empty()) {
                t.bytes["delta (chunk-compressed)"] += f.length;
                continue;
            }
            t.bytes["delta frame+fields"] += f.length - d.records.size();
            const DeltaGroups g = must(split_delta_groups(d.records, d.records_offset), "groups");
            t.bytes["delta group framing"] +=
                d.records.size() - g.updates.size() - g.births.size() - g.deaths.size();
            add_streams(t, "delta update", g.updates, g.updates_offset);
            add_streams(t, "delta birth", g.births, g.births_offset);
            add_streams(t, "delta death", g.deaths, g.deaths_offset);
        } else if (f.opcode == op::sh_band) {
            t.bands += f.length;
        } else {
            t.other += f.length;
        }
    }
    std::uint64_t counted = t.bands + t.other;
    for (const auto& [k, v] : t.bytes) counted += v;
    std::printf("%s: %llu B, %llu keyframes, %llu deltas (%llu updates, %llu births, %llu "
                "deaths)\n\n| where | bytes | share | elements | B/element | mode/width/codec |\n"
                "|---|---:|---:|---:|---:|---|\n",
                argv[1], (unsigned long long)t.total, (unsigned long long)t.keyframes,
                (unsigned long long)t.deltas, (unsigned long long)t.updates,
                (unsigned long long)t.births, (unsigned long long)t.deaths);
    for (const auto& [k, v] : t.bytes) {
        const auto e = t.elements.find(k);
        const std::uint64_t n = e == t.elements.end() ? 0 : e->second;
        std::printf("| %s | %llu | %.1f %% | %llu | %s | %s |\n", k.c_str(),
                    (unsigned long long)v, 100.0 * v / t.total, (unsigned long long)n,
                    n ? std::to_string(double(v) / n).substr(0, 5).c_str() : "-",
                    t.coding[k].c_str());
    }
    std::printf("| SH band records | %llu | %.1f %% | | | |\n| other records, framing | %llu | %.1f "
                "%% | | | |\n",
                (unsigned long long)t.bands, 100.0 * t.bands / t.total,
                (unsigned long long)(t.other + t.total - counted),
                100.0 * (t.other + t.total - counted) / t.total);
    return 0;
}
