// conformance/generator.cpp — the corpus: valid variants written with our own writers, and
// refusals made by mutating them (a length-preserving byte change where the rule allows one).
//
// Deterministic on every platform: a splitmix64 generator, values made with arithmetic only (no
// libm), and writers whose output is a function of their input.
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "conformance.hpp"
#include "fourdgs/indexed_reader.hpp"
#include "fourdgs/keyframe_delta.hpp"
#include "fourdgs/keyframe_writer.hpp"
#include "fourdgs/records.hpp"
#include "fourdgs/stream.hpp"
#include "fourdgs/streaming_reader.hpp"
#include "fourdgs/wire.hpp"
#include "fourdgs/writer.hpp"

namespace conformance {

using namespace fourdgs;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

std::vector<std::string>& extras_left_out() {
    static std::vector<std::string> list;
    return list;
}

struct Rng {
    std::uint64_t state;
    explicit Rng(std::uint64_t seed) : state(seed) {}
    std::uint64_t next() {
        std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    double uniform() { return static_cast<double>(next() >> 11) * 0x1p-53; }  // [0, 1)
    double range(double lo, double hi) { return lo + (hi - lo) * uniform(); }
};

// ---------------------------------------------------------------------------------------------
// Scene shapes.

enum class Lifetime { mixed, never_fades, tiny, normal };

struct Shape {
    std::size_t n = 60;
    int windows = 4;
    double duration = 4;
    int sh_degree = 0;
    Lifetime lifetime = Lifetime::normal;
    bool repeated_positions = false;
    bool object_ids = false, source_ids = false;
    std::uint64_t seed = 1;
};

std::shared_ptr<SourceGaussians> make_gaussians(const Shape& sh) {
    auto g = std::make_shared<SourceGaussians>();
    Rng rng(sh.seed);
    g->count = sh.n;
    g->sh_degree = sh.sh_degree;
    const int per = 3 * sh_coeffs_per_component(sh.sh_degree);
    for (std::size_t i = 0; i < sh.n; ++i) {
        for (int c = 0; c < 3; ++c) {
            const double p = sh.repeated_positions ? static_cast<double>((i % 3) * 0.5 + c * 0.25)
                                                   : rng.range(-2, 2);
            g->position.push_back(static_cast<float>(p));
            g->scale.push_back(static_cast<float>(rng.range(0.01, 0.2)));
            g->motion.push_back(static_cast<float>(rng.range(-0.3, 0.3)));
        }
        for (int c = 0; c < 4; ++c) g->rotation.push_back(static_cast<float>(rng.range(-1, 1)));
        if (std::fabs(g->rotation[i * 4]) < 0.05f) g->rotation[i * 4] = 0.5f;  // never zero
        for (int c = 0; c < 4; ++c) g->color.push_back(static_cast<float>(rng.range(0, 1)));
        // Windows: an even partition of the duration.
        const int w = static_cast<int>(i % static_cast<std::size_t>(sh.windows));
        const double lo = sh.duration * w / sh.windows, hi = sh.duration * (w + 1) / sh.windows;
        g->win_lo.push_back(lo);
        g->win_hi.push_back(hi);
        g->mu_t.push_back(static_cast<float>(rng.range(lo, hi)));
        Lifetime life = sh.lifetime;
        if (life == Lifetime::mixed) life = static_cast<Lifetime>(1 + i % 3);
        switch (life) {
            case Lifetime::never_fades: g->sigma_t.push_back(kInf); break;
            case Lifetime::tiny: g->sigma_t.push_back(static_cast<float>(rng.range(0.001, 0.004))); break;
            default: g->sigma_t.push_back(static_cast<float>(rng.range(0.1, 1.5))); break;
        }
        for (int k = 0; k < per; ++k) g->sh.push_back(static_cast<float>(rng.range(-1.5, 1.5)));
        if (sh.object_ids) g->object_id.push_back(static_cast<std::uint32_t>(i % 4));
        if (sh.source_ids) {
            g->source_group.push_back(static_cast<std::int32_t>(i % 2));
            g->source_index.push_back(static_cast<std::int32_t>(i));
        }
    }
    return g;
}

SceneHeader base_header(const Shape& sh) {
    SceneHeader h;
    h.duration_sec = sh.duration;
    h.sh_degree = sh.sh_degree;
    h.library = "fourdgs conformance";
    return h;
}

WriterOptions base_options() {
    WriterOptions o;
    o.threads = 1;
    // The corpus keeps the bytes it was committed with: every stream's mode chosen by compressing
    // both (the writer's default now estimates it), at the default effort.
    o.effort = Effort::default_;
    o.exact_modes = true;
    return o;
}

Variant birth(std::string name, std::string note, const Shape& shape, SceneHeader header,
              const WriterOptions& options) {
    Variant v;
    v.name = std::move(name);
    v.note = std::move(note);
    v.source = make_gaussians(shape);
    SceneInput in{std::move(header), v.source->batch()};
    auto bytes = write_scene(in, options);
    if (!bytes) throw std::runtime_error(v.name + ": write_scene: " + bytes.error().describe());
    v.bytes = std::move(*bytes);
    return v;
}

// ---------------------------------------------------------------------------------------------
// Byte surgery (wire layer).

struct Rec {
    std::uint8_t opcode;
    std::size_t offset, length;  // whole record
};
std::vector<Rec> records_of(const std::vector<std::uint8_t>& f) {
    std::vector<Rec> out;
    std::size_t at = kMagicSize;
    while (at + kMagicSize < f.size() || (at < f.size() && out.empty())) {
        auto r = parse_record(Bytes(f).subspan(at), at);
        if (!r) break;
        out.push_back({r->opcode, at, static_cast<std::size_t>(r->total_length())});
        at += static_cast<std::size_t>(r->total_length());
        if (r->opcode == op::footer) break;
    }
    return out;
}
Rec first(const std::vector<Rec>& rs, std::uint8_t opcode) {  // by value: callers pass temporaries
    for (const Rec& r : rs)
        if (r.opcode == opcode) return r;
    throw std::runtime_error("no record with opcode " + std::to_string(opcode));
}
RecordView view(const std::vector<std::uint8_t>& f, const Rec& r) {
    auto v = parse_record(Bytes(f).subspan(r.offset), r.offset);
    if (!v) throw std::runtime_error("record does not parse");
    return *v;
}
template <class T>
void poke(std::vector<std::uint8_t>& f, std::size_t at, T value) {
    if (at + sizeof(T) > f.size()) throw std::runtime_error("poke outside the file");
    std::memcpy(f.data() + at, &value, sizeof(T));
}
template <class T>
T peek(const std::vector<std::uint8_t>& f, std::size_t at) {
    T v;
    std::memcpy(&v, f.data() + at, sizeof(T));
    return v;
}

// Offsets of the Header's fixed fields (§5.1 order).
struct HeaderLayout {
    std::size_t duration, gaussian_count, cutoff, temporal_model, aabb, sh_degree, flags;
};
HeaderLayout header_layout(const std::vector<std::uint8_t>& f) {
    const Rec& h = first(records_of(f), op::header);
    std::size_t at = h.offset + kRecordHeaderSize;
    auto skip_string = [&] { at += 4 + peek<std::uint32_t>(f, at); };
    HeaderLayout l{};
    skip_string();  // profile
    skip_string();  // library
    l.duration = at;
    at += 8;
    l.gaussian_count = at;
    at += 8;
    l.cutoff = at;
    at += 8;
    l.temporal_model = at;
    skip_string();
    l.aabb = at;
    at += 48;
    l.sh_degree = at;
    l.flags = at + 1;
    return l;
}

// Where a string's bytes are (after its u32 length) in a record, by searching its content.
std::size_t find_bytes(const std::vector<std::uint8_t>& f, std::size_t from, std::string_view s) {
    for (std::size_t i = from; i + s.size() <= f.size(); ++i)
        if (std::memcmp(f.data() + i, s.data(), s.size()) == 0) return i;
    throw std::runtime_error("string not found: " + std::string(s));
}

// The first chunk's bare streams (uncompressed chunks only): offsets of each stream header.
std::vector<std::pair<std::uint8_t, std::size_t>> chunk_streams(const std::vector<std::uint8_t>& f) {
    const Rec& c = first(records_of(f), op::chunk);
    auto ch = parse_chunk(view(f, c));
    if (!ch || !ch->compression.empty()) throw std::runtime_error("needs an uncompressed chunk");
    auto streams = split_streams(ch->records, ch->records_offset);
    if (!streams) throw std::runtime_error("chunk streams do not split");
    std::vector<std::pair<std::uint8_t, std::size_t>> out;
    for (const StreamView& s : *streams)
        out.emplace_back(s.header.attribute_id, static_cast<std::size_t>(s.offset));
    return out;
}
std::size_t stream_at(const std::vector<std::uint8_t>& f, std::uint8_t attribute) {
    for (auto [id, at] : chunk_streams(f))
        if (id == attribute) return at;
    throw std::runtime_error("no stream for attribute " + std::to_string(attribute));
}


// Re-encodes one attribute stream of the first chunk with `values` (files without an index and
// with uncompressed chunks: the chunk record changes length, and nothing points past it).
std::vector<std::uint8_t> replace_stream(const std::vector<std::uint8_t>& f, std::uint8_t attribute,
                                         const std::function<std::vector<std::int32_t>(std::uint32_t)>& values,
                                         std::uint8_t channels = 1) {
    const Rec c = first(records_of(f), op::chunk);
    auto ch = parse_chunk(view(f, c));
    if (!ch || !ch->compression.empty()) throw std::runtime_error("needs an uncompressed chunk");
    auto streams = split_streams(ch->records, ch->records_offset);
    if (!streams) throw std::runtime_error("chunk streams do not split");
    ByteWriter block;
    for (const StreamView& sv : *streams) {
        if (sv.header.attribute_id != attribute) {
            block.raw(Bytes(f).subspan(static_cast<std::size_t>(sv.offset),
                                       static_cast<std::size_t>(sv.end_offset() - sv.offset)));
            continue;
        }
        const std::vector<std::int32_t> v = values(ch->count);
        StreamEncodeOptions o;
        o.mode = stream_mode::raw;
        if (auto st = encode_stream(block, attribute, channels, v, o); !st)
            throw std::runtime_error(st.error().describe());
    }
    ByteWriter content;
    content.f64(ch->t0);
    content.f64(ch->t1);
    content.u32(ch->level);
    content.u32(ch->count);
    content.string(ch->compression);
    content.u64(ch->uncompressed_size == ch->records.size() ? block.size() : ch->uncompressed_size);
    content.bytes(block.buffer());
    ByteWriter rec;
    write_record(rec, op::chunk, content.buffer());
    std::vector<std::uint8_t> out(f.begin(), f.begin() + static_cast<std::ptrdiff_t>(c.offset));
    out.insert(out.end(), rec.buffer().begin(), rec.buffer().end());
    out.insert(out.end(), f.begin() + static_cast<std::ptrdiff_t>(c.offset + c.length), f.end());
    return out;
}

// Inserts whole records before record `before` (files without an index only: nothing points
// past the insertion point, and the Footer's summary fields are 0).
std::vector<std::uint8_t> insert_before(const std::vector<std::uint8_t>& f, const Rec& before,
                                        const std::vector<std::uint8_t>& records) {
    std::vector<std::uint8_t> out(f.begin(), f.begin() + static_cast<std::ptrdiff_t>(before.offset));
    out.insert(out.end(), records.begin(), records.end());
    out.insert(out.end(), f.begin() + static_cast<std::ptrdiff_t>(before.offset), f.end());
    return out;
}
std::vector<std::uint8_t> copy_record(const std::vector<std::uint8_t>& f, const Rec& r) {
    return {f.begin() + static_cast<std::ptrdiff_t>(r.offset),
            f.begin() + static_cast<std::ptrdiff_t>(r.offset + r.length)};
}
// Appends `extra` bytes to one record's content (no-index files only, as above).
std::vector<std::uint8_t> append_to_record(const std::vector<std::uint8_t>& f, const Rec& r,
                                           const std::vector<std::uint8_t>& extra) {
    std::vector<std::uint8_t> out(f.begin(), f.begin() + static_cast<std::ptrdiff_t>(r.offset + r.length));
    out.insert(out.end(), extra.begin(), extra.end());
    out.insert(out.end(), f.begin() + static_cast<std::ptrdiff_t>(r.offset + r.length), f.end());
    std::uint64_t len = peek<std::uint64_t>(out, r.offset + 1) + extra.size();
    poke(out, r.offset + 1, len);
    return out;
}


// The offset of the first occurrence of `value`'s bytes inside record `r` (a field located by
// its value, which the generator chose to be unique there).
template <class T>
std::size_t find_value(const std::vector<std::uint8_t>& f, const Rec& r, T value) {
    std::uint8_t b[sizeof(T)];
    std::memcpy(b, &value, sizeof(T));
    for (std::size_t i = r.offset + kRecordHeaderSize; i + sizeof(T) <= r.offset + r.length; ++i)
        if (std::memcmp(f.data() + i, b, sizeof(T)) == 0) return i;
    throw std::runtime_error("value not found in the record");
}
std::size_t find_in(const std::vector<std::uint8_t>& f, const Rec& r, std::string_view s) {
    const std::size_t at = find_bytes(f, r.offset, s);
    if (at + s.size() > r.offset + r.length) throw std::runtime_error("string not in the record");
    return at;
}
// The n-th record (0-based) with this opcode.
Rec nth(const std::vector<std::uint8_t>& f, std::uint8_t opcode, std::size_t n) {
    for (const Rec& r : records_of(f))
        if (r.opcode == opcode && n-- == 0) return r;
    throw std::runtime_error("no such record");
}
// Recomputes summary_crc after a change inside the summary (§4.5: CRC-32 of the bytes from
// summary_start up to the Footer), so that only the intended rule is broken.
void fix_summary_crc(std::vector<std::uint8_t>& f) {
    const Rec footer = first(records_of(f), op::footer);
    const std::size_t content = footer.offset + kRecordHeaderSize;
    const auto start = peek<std::uint64_t>(f, content);
    if (start == 0 || peek<std::uint32_t>(f, content + 16) == 0) return;
    poke<std::uint32_t>(f, content + 16,
                        crc32(Bytes(f).subspan(static_cast<std::size_t>(start), footer.offset - static_cast<std::size_t>(start))));
}
// Keyframe-delta surgery: Delta Chunk content fields (§5.18) and the index entry's appended
// fields (§5.8, the last 28 bytes of a Chunk Index record).
constexpr std::size_t kDeltaLevel = 16, kDeltaMode = 20, kDeltaReference = 21, kDeltaDepth = 37;
Rec index_entry_for(const std::vector<std::uint8_t>& f, std::size_t chunk_offset) {
    for (const Rec& r : records_of(f))
        if (r.opcode == op::chunk_index &&
            peek<std::uint64_t>(f, r.offset + kRecordHeaderSize + 16) == chunk_offset)
            return r;
    throw std::runtime_error("no index entry for the chunk");
}

// One stream of a Delta Chunk group as values (§5.18), and the three groups.
struct GroupStream {
    std::uint8_t attribute = 0, channels = 1;
    std::vector<std::int32_t> values;  // element-major, channel-minor
};
struct DeltaGroupsEdit {
    std::vector<GroupStream> updates, births, deaths;
};

// Re-encodes the last Delta Chunk of an indexed keyframe-delta file after `edit` changed its
// streams (values, or streams added or dropped; the group counts stay as recorded), and moves
// what follows it by the change in length: its index entry's chunk_length, its SH band ranges,
// the Summary Offsets, the Footer's summary fields and summary_crc. The delta must be the last
// chunk and uncompressed at chunk level, so no other offset points past it.
std::vector<std::uint8_t> rewrite_last_delta(const std::vector<std::uint8_t>& f,
                                             const std::function<void(DeltaGroupsEdit&)>& edit) {
    const std::vector<Rec> rs = records_of(f);
    const Rec* last = nullptr;
    for (const Rec& r : rs) {
        if (r.opcode == op::delta_chunk) last = &r;
        else if (r.opcode == op::chunk && last) throw std::runtime_error("a chunk follows the delta");
    }
    if (!last) throw std::runtime_error("no Delta Chunk");
    const Rec d = *last;
    auto dc = parse_delta_chunk(view(f, d));
    if (!dc || !dc->compression.empty()) throw std::runtime_error("needs an uncompressed delta");
    auto groups = split_delta_groups(dc->records, dc->records_offset);
    if (!groups) throw std::runtime_error(groups.error().describe());
    StreamScratch scratch;
    auto decoded = [&](Bytes block, std::uint64_t at) {
        std::vector<GroupStream> out;
        auto streams = split_streams(block, at);
        if (!streams) throw std::runtime_error(streams.error().describe());
        for (const StreamView& sv : *streams) {
            auto v = decode_stream(sv, scratch);
            if (!v) throw std::runtime_error(v.error().describe());
            out.push_back({sv.header.attribute_id, sv.header.channels, std::move(*v)});
        }
        return out;
    };
    DeltaGroupsEdit e{decoded(groups->updates, groups->updates_offset),
                      decoded(groups->births, groups->births_offset),
                      decoded(groups->deaths, groups->deaths_offset)};
    edit(e);
    auto encoded = [](const std::vector<GroupStream>& group) {
        ByteWriter w;
        for (const GroupStream& g : group)
            if (auto st = encode_stream(w, g.attribute, g.channels, g.values); !st)
                throw std::runtime_error(st.error().describe());
        return std::move(w.buffer());
    };
    const std::vector<std::uint8_t> updates = encoded(e.updates), births = encoded(e.births),
                                    deaths = encoded(e.deaths);
    ByteWriter block;
    write_delta_groups(block, updates, births, deaths);
    DeltaChunk out = *dc;
    out.records = block.buffer();
    out.uncompressed_size = block.size();
    ByteWriter rec;
    write(rec, out);
    std::vector<std::uint8_t> g(f.begin(), f.begin() + static_cast<std::ptrdiff_t>(d.offset));
    g.insert(g.end(), rec.buffer().begin(), rec.buffer().end());
    g.insert(g.end(), f.begin() + static_cast<std::ptrdiff_t>(d.offset + d.length), f.end());
    const std::int64_t shift = static_cast<std::int64_t>(rec.size()) - static_cast<std::int64_t>(d.length);
    auto moved = [&](std::size_t at) {
        const auto v = peek<std::uint64_t>(g, at);
        if (v > d.offset) poke<std::uint64_t>(g, at, static_cast<std::uint64_t>(static_cast<std::int64_t>(v) + shift));
    };
    for (const Rec& r : records_of(g)) {
        if (r.offset <= d.offset) continue;
        const std::size_t c = r.offset + kRecordHeaderSize;
        if (r.opcode == op::chunk_index) {
            if (peek<std::uint64_t>(g, c + 16) == d.offset) poke<std::uint64_t>(g, c + 24, rec.size());
            const auto bands = peek<std::uint32_t>(g, c + 36);
            for (std::uint32_t b = 0; b < bands; ++b) moved(c + 40 + 17 * b + 1);
        } else if (r.opcode == op::summary_offset) {
            moved(c + 1);
        } else if (r.opcode == op::footer) {
            moved(c);
            moved(c + 8);
        }
    }
    fix_summary_crc(g);
    return g;
}
// The stream of `attribute` in a group.
GroupStream& stream_of(std::vector<GroupStream>& group, std::uint8_t attribute) {
    for (GroupStream& s : group)
        if (s.attribute == attribute) return s;
    throw std::runtime_error("no stream for attribute " + std::to_string(attribute));
}

// ---------------------------------------------------------------------------------------------
// Keyframe-delta variants.

struct KdShape {
    int steps = 4;
    std::size_t n = 20;
    bool churn = false;       // each step: some deaths and some births
    bool windows = false;     // gaussians carry windows that cover their steps
    std::uint32_t keyframe_every = 10;
    bool chained = true;
    std::vector<double> referenced_at;
    int sh_degree = 0;
    std::uint64_t seed = 7;
};

Variant keyframe_delta(std::string name, std::string note, const KdShape& k) {
    Variant v;
    v.name = std::move(name);
    v.note = std::move(note);
    v.keyframe_delta = true;
    const double duration = static_cast<double>(k.steps);
    Shape base;
    base.n = k.n + static_cast<std::size_t>(k.steps) * 4;  // a pool for births
    base.windows = 1;
    base.duration = duration;
    base.sh_degree = k.sh_degree;
    base.lifetime = Lifetime::never_fades;
    base.seed = k.seed;
    auto pool = make_gaussians(base);
    Rng rng(k.seed * 31 + 5);
    std::vector<KeyframeStep> steps;
    for (int s = 0; s < k.steps; ++s) {
        auto g = std::make_shared<SourceGaussians>();
        g->sh_degree = k.sh_degree;
        std::vector<std::uint32_t> ids;
        // Live pool slots: [first, first + n); churn slides the window by 2 per step.
        const std::size_t first_slot = k.churn ? static_cast<std::size_t>(s) * 2 : 0;
        const int per = 3 * sh_coeffs_per_component(k.sh_degree);
        for (std::size_t j = first_slot; j < first_slot + k.n; ++j) {
            // With windows: odd slots live in [0, 2) only, so they die when step 2 starts.
            const bool short_window = k.windows && j % 2 == 1;
            if (short_window && v.step_t0.size() >= 2) continue;
            ids.push_back(static_cast<std::uint32_t>(j + 1));
            for (int c = 0; c < 3; ++c) {
                // Moves a little each step (the delta payload).
                g->position.push_back(pool->position[j * 3 + c] +
                                      static_cast<float>(0.05 * s * (c + 1)));
                g->scale.push_back(pool->scale[j * 3 + c]);
                g->motion.push_back(0.0f);
            }
            for (int c = 0; c < 4; ++c) g->rotation.push_back(pool->rotation[j * 4 + c]);
            for (int c = 0; c < 4; ++c)
                g->color.push_back(std::min(1.0f, pool->color[j * 4 + c] +
                                                      static_cast<float>(rng.range(0, 0.01))));
            g->sigma_t.push_back(kInf);
            for (int q = 0; q < per; ++q) g->sh.push_back(pool->sh[j * per + q]);
            if (k.windows) {
                g->win_lo.push_back(0);
                g->win_hi.push_back(short_window ? 2.0 : duration);
            }
        }
        g->count = ids.size();
        v.step_t0.push_back(static_cast<double>(s));
        v.step_sources.push_back(g);
        v.step_ids.push_back(ids);
    }
    for (int s = 0; s < k.steps; ++s) {
        KeyframeStep st;
        st.t0 = v.step_t0[s];
        st.gaussians = v.step_sources[s]->batch();
        st.ids = v.step_ids[s];
        steps.push_back(st);
    }
    SceneHeader h;
    h.duration_sec = duration;
    h.sh_degree = k.sh_degree;
    h.library = "fourdgs conformance";
    KeyframeWriterOptions o;
    o.base = base_options();
    o.keyframe_every = k.keyframe_every;
    o.chained = k.chained;
    o.keyframe_referenced_at = k.referenced_at;
    auto bytes = write_keyframe_delta(steps, h, o);
    if (!bytes) throw std::runtime_error(v.name + ": write_keyframe_delta: " + bytes.error().describe());
    v.bytes = std::move(*bytes);
    return v;
}

// ---------------------------------------------------------------------------------------------
// The valid variants.

std::vector<Variant> valid_variants() {
    std::vector<Variant> out;
    auto add = [&](Variant v) { out.push_back(std::move(v)); };
    const WriterOptions opt = base_options();
    auto hdr = [](const Shape& s) { return base_header(s); };

    // Scene shapes.
    {
        Shape s;
        s.n = 0;
        s.windows = 1;
        add(birth("shape-empty", "no gaussians at all", s, hdr(s), opt));
    }
    {
        Shape s;
        s.n = 1;
        s.windows = 1;
        add(birth("shape-one-gaussian", "a single gaussian", s, hdr(s), opt));
    }
    {
        Shape s;
        s.windows = 1;
        add(birth("shape-one-window", "every gaussian in one window", s, hdr(s), opt));
    }
    Shape ten;
    ten.n = 100;
    ten.windows = 10;
    ten.lifetime = Lifetime::mixed;
    add(birth("shape-ten-windows", "ten windows, mixed lifetimes", ten, hdr(ten), opt));
    {
        Shape s;
        s.lifetime = Lifetime::never_fades;
        add(birth("shape-long-lived", "every gaussian never fades (flags bit 0)", s, hdr(s), opt));
    }
    {
        Shape s;
        s.lifetime = Lifetime::tiny;
        add(birth("shape-tiny-sigmas", "sigma_t of a few milliseconds", s, hdr(s), opt));
    }
    {
        Shape s;
        s.repeated_positions = true;
        add(birth("shape-repeated-positions", "only three distinct positions", s, hdr(s), opt));
    }
    {
        Shape s;
        s.lifetime = Lifetime::mixed;
        s.windows = 3;
        add(birth("shape-mixed-lifetimes", "never-fading, tiny and normal sigmas", s, hdr(s), opt));
    }
    {
        Shape s;
        s.lifetime = Lifetime::mixed;
        SceneHeader h = hdr(s);
        h.cutoff = 0.3;
        add(birth("shape-custom-cutoff", "Header cutoff 0.3", s, h, opt));
    }
    {
        // A valid file whose §3 centers leave f32's range: never-fading gaussians moving up to
        // 300 units/s over a clock of 1e37 s. From t = 0.5 x duration on, most centers are finite
        // f64 values beyond 3.4e38, which the canonical instants spell as f64 (§3 in f64).
        Shape s;
        s.n = 12;
        s.windows = 1;
        s.duration = 1e37;
        s.lifetime = Lifetime::never_fades;
        Variant v;
        v.name = "shape-far-future";
        v.note = "centers beyond f32 at late instants (t up to 1e37 s, 300 units/s)";
        v.source = make_gaussians(s);
        for (float& m : v.source->motion) m *= 1000.0f;
        for (float& mu : v.source->mu_t) mu = 0.0f;
        SceneInput in{hdr(s), v.source->batch()};
        auto bytes = write_scene(in, opt);
        if (!bytes) throw std::runtime_error(v.name + ": write_scene: " + bytes.error().describe());
        v.bytes = std::move(*bytes);
        add(std::move(v));
    }

    // Quantization presets.
    for (auto [p, name] : {std::pair{Preset::fine, "fine"}, std::pair{Preset::coarse, "coarse"}}) {
        WriterOptions o = opt;
        o.preset = p;
        add(birth(std::string("preset-") + name, std::string("the ") + name + " preset", ten, hdr(ten), o));
    }
    // SH degrees, ladders.
    for (int d = 1; d <= 3; ++d) {
        Shape s = ten;
        s.n = 40;
        s.sh_degree = d;
        add(birth("sh-degree-" + std::to_string(d), "SH degree " + std::to_string(d), s, hdr(s), opt));
    }
    for (auto [l, name] : {std::pair{ShLadder::flat, "flat"}, std::pair{ShLadder::balanced, "balanced"},
                           std::pair{ShLadder::aggressive, "aggressive"}}) {
        Shape s = ten;
        s.n = 40;
        s.sh_degree = 3;
        WriterOptions o = opt;
        o.sh_ladder = l;
        add(birth(std::string("sh-ladder-") + name, std::string("SH bit depths: ") + name, s, hdr(s), o));
    }
    {
        Shape s = ten;
        s.n = 40;
        s.sh_degree = 2;
        WriterOptions o = opt;
        o.sh_depths = {7, 5};
        add(birth("sh-depths-explicit", "explicit per-band SH depths 7/5", s, hdr(s), o));
    }
    // Codecs and chunk compression.
    for (auto [c, name] : {std::pair{codec::zstd, "zstd"}, std::pair{codec::lz4, "lz4"}}) {
        WriterOptions o = opt;
        o.codec = c;
        add(birth(std::string("codec-") + name, std::string("every stream ") + name, ten, hdr(ten), o));
    }
    for (const char* cc : {"deflate", "zstd"}) {
        WriterOptions o = opt;
        o.chunk_compression = cc;
        add(birth(std::string("chunk-compression-") + cc, std::string("chunk-level ") + cc, ten, hdr(ten), o));
    }
    {
        WriterOptions o = opt;
        o.max_chunk_gaussians = 7;
        add(birth("many-chunks", "windows split into chunks of at most 7", ten, hdr(ten), o));
    }
    // The summary's optional parts.
    {
        WriterOptions o = opt;
        o.write_index = false;
        add(birth("summary-no-index", "no Chunk Index: summary_start 0", ten, hdr(ten), o));
    }
    {
        WriterOptions o = opt;
        o.write_crc = false;
        add(birth("summary-no-crc", "summary_crc 0", ten, hdr(ten), o));
    }
    {
        WriterOptions o = opt;
        o.write_statistics = false;
        add(birth("summary-no-statistics", "no Statistics record", ten, hdr(ten), o));
    }
    {
        WriterOptions o = opt;
        o.write_summary_offset = false;
        add(birth("summary-no-offsets", "no Summary Offset records", ten, hdr(ten), o));
    }
    {
        WriterOptions o = opt;
        o.write_index = o.write_crc = o.write_statistics = o.write_summary_offset = false;
        add(birth("summary-none", "no summary records at all", ten, hdr(ten), o));
    }
    // Ids, metadata, header attributes, attachments, private records.
    {
        Shape s = ten;
        s.object_ids = s.source_ids = true;
        SceneHeader h = hdr(s);
        h.profile = "";
        h.attributes = {{"creator", "conformance"}, {"note", "quoted \"value\" \\ and \t tab"}};
        h.metadata = {Metadata{"capture", {{"device", "synthetic"}, {"take", "3"}}},
                      Metadata{"empty", {}}};
        add(birth("ids-and-metadata", "object ids, source ids, metadata, header attributes", s, h, opt));
    }
    {
        Shape s = ten;
        s.n = 40;
        s.sh_degree = 2;
        WriterOptions o = opt;
        o.write_index = false;
        add(birth("sh-no-index", "SH degree 2 without an index", s, hdr(s), o));
    }
    static const std::vector<std::uint8_t> kAttachment = [] {
        std::vector<std::uint8_t> a(300);
        for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<std::uint8_t>(i * 7 + 3);
        return a;
    }();
    static const std::vector<std::uint8_t> kPrivate = {1, 2, 3, 4, 5};
    {
        SceneHeader h = hdr(ten);
        h.attachments = {AttachmentInput{"thumb.bin", "application/octet-stream", kAttachment},
                         AttachmentInput{"empty.txt", "text/plain", {}}};
        h.private_records = {PrivateRecordInput{0x80, kPrivate}, PrivateRecordInput{0xF3, {}}};
        add(birth("attachments-and-private", "two attachments, two private-range records", ten, h, opt));
    }
    // Byte surgery on a file without an index (nothing points past what moves).
    {
        WriterOptions o = opt;
        o.write_index = false;
        Variant v = birth("appended-bytes", "Header, Window Table and Metadata with extra appended bytes",
                          ten, [&] {
                              SceneHeader h = hdr(ten);
                              h.metadata = {Metadata{"m", {{"k", "v"}}}};
                              return h;
                          }(), o);
        const std::vector<std::uint8_t> extra = {0xAB, 0xCD, 0xEF};
        for (std::uint8_t opcode : {op::metadata, op::window_table, op::header})
            v.bytes = append_to_record(v.bytes, first(records_of(v.bytes), opcode), extra);
        add(std::move(v));
    }
    {
        WriterOptions o = opt;
        o.write_index = false;
        Variant v = birth("unknown-records", "reserved and unknown opcodes before the first chunk", ten, hdr(ten), o);
        ByteWriter w;
        const std::vector<std::uint8_t> body = {9, 8, 7};
        write_record(w, 0x26, body);  // reserved (§4.2): skipped
        write_record(w, 0x0E, {});    // Attachment Index, reserved with no body
        write_record(w, 0x7F, body);  // unassigned
        v.bytes = insert_before(v.bytes, first(records_of(v.bytes), op::chunk), w.buffer());
        add(std::move(v));
    }
    {
        // An unknown attribute stream: the object_id stream of every chunk renamed to id 99 —
        // a length-preserving change; readers skip the unknown stream (object_id 0 everywhere).
        Shape s = ten;
        s.object_ids = true;
        Variant v = birth("unknown-attribute-stream", "an attribute stream with unknown id 99",
                          s, hdr(s), opt);
        for (const Rec& r : records_of(v.bytes)) {
            if (r.opcode != op::chunk) continue;
            auto ch = parse_chunk(view(v.bytes, r));
            auto streams = split_streams(ch->records, ch->records_offset);
            for (const StreamView& sv : *streams)
                if (sv.header.attribute_id == attr::object_id)
                    v.bytes[static_cast<std::size_t>(sv.offset)] = 99;
        }
        v.source->object_id.clear();  // what a reader must decode: no object ids
        add(std::move(v));
    }

    // Extras. The writer's support for them is checked by reading the file back: a variant whose
    // extra does not come back is left out (and named on stderr by --generate).
    auto add_extra = [&](const std::string& name, const std::string& note, const Shape& shape,
                         const SceneHeader& h, const std::function<bool(const SceneInfo&)>& present) {
        Variant v;
        try {
            v = birth(name, note, shape, h, opt);
        } catch (const std::exception& e) {
            extras_left_out().push_back(name + ": " + e.what());
            return;
        }
        MemorySource src(v.bytes);
        auto loaded = read_streaming(src);
        if (!loaded || !present(loaded->info)) {
            extras_left_out().push_back(name + ": not read back (" +
                                        (loaded ? std::string("extra absent") : loaded.error().describe()) + ")");
            return;
        }
        add(std::move(v));
    };
    Shape es = ten;
    es.n = 30;
    es.windows = 3;
    {
        SceneHeader h = hdr(es);
        Camera c;
        c.fov_y_deg = 50;
        c.position = {0, 1, 5};
        c.target = {0, 0, 0};
        c.keyframes = {{0, {0, 1, 5}, {0, 0, 0}}, {2, {3, 1, 4}, {0, 0.5, 0}}, {4, {5, 2, 0}, {0, 0, 0}}};
        c.interpolation = "spline";
        c.loop = true;
        h.camera = c;
        add_extra("extras-camera", "a Camera with three spline keyframes, looping", es, h,
                  [](const SceneInfo& i) { return i.camera.has_value(); });
    }
    static const std::vector<std::uint8_t> kAudioSmall = [] {
        std::vector<std::uint8_t> a(512);
        for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<std::uint8_t>((i * 13) ^ (i >> 3));
        return a;
    }();
    static const std::vector<std::uint8_t> kAudioLarge = [] {
        std::vector<std::uint8_t> a(128 * 1024);
        Rng r(99);
        for (auto& b : a) b = static_cast<std::uint8_t>(r.next() >> 56);
        return a;
    }();
    {
        SceneHeader h = hdr(es);
        h.legacy_audio = LegacyAudioInput{"opus", 0.5, kAudioSmall};
        add_extra("extras-legacy-audio", "the pre-spatial Audio record (§5.9)", es, h,
                  [](const SceneInfo& i) { return !i.audio.empty() && i.audio[0].legacy; });
    }
    {
        SceneHeader h = hdr(es);
        for (std::uint32_t id : {7u, 2u, 5u}) {
            AudioSource d;
            d.source_id = id;
            d.name = "source-" + std::to_string(id);
            d.codec = "opus";
            d.channel_layout = "mono";
            d.start_sec = 0.25 * id;
            d.duration_sec = 1.5;
            d.gain = 0.5 + 0.1 * id;
            d.flags = kAudioFlagSpatial | (id == 5 ? kAudioFlagLoop : 0);
            d.position = {1.0 * id, 0, -1};
            d.rotation = {0, 0, 0, 1};
            d.keyframes = {{0, {0, 0, 0}, {0, 0, 0, 1}}, {3, {1.0 * id, 1, 0}, {0, 0.6, 0, 0.8}}};
            d.interpolation = id == 2 ? "step" : "linear";
            h.audio.push_back(AudioSourceInput{d, kAudioSmall});
        }
        add_extra("extras-audio-sources", "three moving spatial audio sources, one looping", es, h,
                  [](const SceneInfo& i) { return i.audio.size() == 3; });
    }
    {
        SceneHeader h = hdr(es);
        AudioSource d;
        d.source_id = 1;
        d.name = "ambience";
        d.codec = "pcm_s16le";
        d.channel_layout = "stereo";
        d.duration_sec = 4;
        d.interpolation = "linear";
        h.audio.push_back(AudioSourceInput{d, kAudioLarge});
        add_extra("extras-audio-large", "a 128 KiB non-spatial audio payload", es, h,
                  [](const SceneInfo& i) { return i.audio.size() == 1; });
    }
    {
        SceneHeader h = hdr(es);
        h.coordinate_frames = {CoordinateFrame{"", Handedness::right, Axis::pos_y, Axis::neg_z, LengthUnit::metre, 1.0},
                               CoordinateFrame{"enu", Handedness::right, Axis::pos_z, Axis::pos_y, LengthUnit::centimetre, 0.01}};
        h.geodetic_anchors = {GeodeticAnchor{"enu", 48.8584, 2.2945, 35.5, 90}};
        add_extra("extras-frames-anchor", "two Coordinate Frames and a Geodetic Anchor", es, h,
                  [](const SceneInfo& i) { return i.coordinate_frames.size() == 2 && i.geodetic_anchors.size() == 1; });
    }
    {
        SceneHeader h = hdr(es);
        RigTrajectory rig;
        rig.name = "rig";
        rig.interpolation = TrajectoryInterpolation::linear;
        rig.samples = {{0, {0, 0, 0, 1}, {0, 0, 0}}, {2, {0, 0.6, 0, 0.8}, {1, 0, 0}}, {4, {0, 0, 0, 1}, {2, 0, 1}}};
        h.rig_trajectories = {rig};
        SensorCalibration cam;
        cam.name = "cam0";
        cam.modality = "rgb";
        cam.camera_model = CameraModel::brown_conrady;
        cam.width_px = 1920;
        cam.height_px = 1080;
        cam.fx = cam.fy = 1400;
        cam.cx = 960;
        cam.cy = 540;
        cam.distortion = {0.1, -0.05, 0.001, 0.002, 0.01};
        cam.translation = {0.1, 0, 0};
        cam.pose_reference = PoseReference::rig;
        cam.rig_name = "rig";
        SensorCalibration lidar;
        lidar.name = "lidar";
        lidar.modality = "lidar";
        lidar.rotation = {0, 0, 0.6, 0.8};
        h.sensors = {cam, lidar};
        add_extra("extras-sensors-rig", "two Sensor Calibrations, one on a Rig Trajectory", es, h,
                  [](const SceneInfo& i) { return i.sensors.size() == 2 && i.rig_trajectories.size() == 1; });
    }
    {
        Shape s = es;
        s.object_ids = true;  // ids 0..3
        SceneHeader h = hdr(s);
        ObjectTable t;
        t.embedding_dim = 4;
        for (std::uint32_t id = 1; id <= 3; ++id) {
            ObjectTable::Entry e;
            e.object_id = id;
            e.label = "object " + std::to_string(id);
            e.anchor = {0.5f * id, 0, 0};
            if (id != 2) e.embedding = std::vector<float>{1.0f * id, 0.5f, -0.25f, 0};
            if (id == 1) e.dynamics = ObjectTable::Dynamics{{0.1f, 0, 0}, {0, 0.2f, 0}, {0, 0, -0.5f}};
            t.entries.push_back(e);
        }
        h.object_table = t;
        h.object_tracks = {ObjectTrack{1, TrajectoryInterpolation::linear,
                                       {{0, {0, 0, 0, 1}, {0, 0, 0}}, {4, {0, 0.6, 0, 0.8}, {1, 2, 0}}}},
                           ObjectTrack{3, TrajectoryInterpolation::step,
                                       {{0, {0, 0, 0, 1}, {0, 0, 0}}, {2, {0, 0, 0, 1}, {0, 1, 0}}}}};
        add_extra("extras-objects", "an Object Table with embeddings and dynamics, two Object Tracks", s, h,
                  [](const SceneInfo& i) { return i.object_table.has_value() && i.object_tracks.size() == 2; });
    }

    // Keyframe-delta shapes.
    {
        KdShape k;
        k.steps = 1;
        add(keyframe_delta("kd-keyframe-only", "one keyframe, no deltas", k));
    }
    {
        KdShape k;
        k.steps = 5;
        add(keyframe_delta("kd-chained", "a keyframe and four chained deltas", k));
    }
    {
        KdShape k;
        k.steps = 6;
        k.keyframe_every = 3;
        k.chained = true;
        k.referenced_at = {1.5};
        k.sh_degree = 1;
        add(keyframe_delta("kd-mixed-modes", "two GOPs, chained and keyframe-referenced deltas, SH", k));
    }
    {
        KdShape k;
        k.steps = 5;
        k.chained = false;
        k.churn = true;
        add(keyframe_delta("kd-churn", "births and deaths every step, keyframe-referenced", k));
    }
    {
        KdShape k;
        k.steps = 5;
        k.churn = true;
        add(keyframe_delta("kd-churn-chained", "births and deaths every step, chained", k));
    }
    {
        KdShape k;
        k.steps = 4;
        k.windows = true;
        k.keyframe_every = 2;
        add(keyframe_delta("kd-windows", "gaussians carrying two different windows (the short-lived die at t = 2), two GOPs", k));
    }
    return out;
}

// ---------------------------------------------------------------------------------------------
// Refusals: each a valid variant broken in exactly one rule.

struct Mutation {
    std::string id;       // expected refusal
    std::string base;     // valid variant it starts from
    std::string note;
    std::function<void(std::vector<std::uint8_t>&)> apply;
};

std::vector<Mutation> mutations() {
    using F = std::vector<std::uint8_t>;
    std::vector<Mutation> m;
    m.push_back({"magic-mismatch", "shape-one-window", "first magic byte changed",
                 [](F& f) { f[0] = 0x88; }});
    m.push_back({"unsupported-major-version", "shape-one-window", "magic version byte '2'",
                 [](F& f) { f[5] = 0x32; }});
    m.push_back({"unknown-temporal-model", "shape-one-window", "temporal_model 'gaussian-birtx'",
                 [](F& f) {
                     auto at = header_layout(f).temporal_model + 4;
                     f[at + std::strlen("gaussian-birth") - 1] = 'x';
                 }});
    m.push_back({"unknown-quantization-scheme", "shape-one-window", "scheme 'uniform-v2'",
                 [](F& f) {
                     auto at = find_bytes(f, first(records_of(f), op::quantization).offset, "uniform-v1");
                     f[at + 9] = '2';
                 }});
    m.push_back({"invalid-sh-degree", "shape-one-window", "Header sh_degree 4",
                 [](F& f) { f[header_layout(f).sh_degree] = 4; }});
    m.push_back({"reserved-flags-set", "shape-one-window", "Header flags bit 7",
                 [](F& f) { f[header_layout(f).flags] |= 0x80; }});
    m.push_back({"invalid-cutoff", "shape-one-window", "Header cutoff 1.5",
                 [](F& f) { poke(f, header_layout(f).cutoff, 1.5); }});
    m.push_back({"invalid-duration", "shape-one-window", "Header duration_sec -1",
                 [](F& f) { poke(f, header_layout(f).duration, -1.0); }});
    m.push_back({"header-not-first", "summary-none", "the Header record's opcode made private",
                 [](F& f) { f[first(records_of(f), op::header).offset] = 0x80; }});
    m.push_back({"missing-quantization", "summary-none", "the Quantization record's opcode made private",
                 [](F& f) { f[first(records_of(f), op::quantization).offset] = 0x80; }});
    for (auto [opcode, id] : {std::pair{op::header, "duplicate-header"},
                              std::pair{op::quantization, "duplicate-quantization"},
                              std::pair{op::window_table, "duplicate-window-table"}}) {
        const std::uint8_t oc = opcode;
        m.push_back({id, "summary-none", "a second copy of the record right after it", [oc](F& f) {
                         auto rs = records_of(f);
                         const Rec& r = first(rs, oc);
                         std::size_t i = 0;
                         while (rs[i].offset != r.offset) ++i;
                         f = insert_before(f, rs[i + 1], copy_record(f, r));
                     }});
    }
    m.push_back({"summary-crc-mismatch", "shape-ten-windows", "Footer summary_crc flipped",
                 [](F& f) { f[f.size() - kMagicSize - 1] ^= 0x01; }});
    m.push_back({"summary-out-of-range", "summary-no-crc", "Footer summary_start past the end",
                 [](F& f) {
                     poke<std::uint64_t>(f, first(records_of(f), op::footer).offset + kRecordHeaderSize,
                                         f.size() + 1000);
                 }});
    m.push_back({"unknown-chunk-compression", "chunk-compression-zstd", "chunk compression 'zstx'",
                 [](F& f) {
                     auto at = find_bytes(f, first(records_of(f), op::chunk).offset, "zstd");
                     f[at + 3] = 'x';
                 }});
    m.push_back({"decompressed-size-mismatch", "chunk-compression-zstd", "uncompressed_size + 1",
                 [](F& f) {
                     auto at = find_bytes(f, first(records_of(f), op::chunk).offset, "zstd") + 4;
                     poke<std::uint64_t>(f, at, peek<std::uint64_t>(f, at) + 1);
                 }});
    m.push_back({"unknown-stream-codec", "shape-one-window", "position stream codec byte 0x7F",
                 [](F& f) { f[stream_at(f, attr::position) + 3] = 0x7F; }});
    m.push_back({"unknown-stream-mode", "shape-one-window", "position stream mode 9",
                 [](F& f) { f[stream_at(f, attr::position) + 2] = 9; }});
    m.push_back({"invalid-symbol-width", "shape-one-window", "position stream symbol_width 3",
                 [](F& f) { f[stream_at(f, attr::position) + 1] = 3; }});
    m.push_back({"invalid-channel-count", "shape-one-window", "position stream channels 0",
                 [](F& f) { f[stream_at(f, attr::position) + 4] = 0; }});
    m.push_back({"stream-channel-count-mismatch", "shape-one-window", "position stream channels 2",
                 [](F& f) { f[stream_at(f, attr::position) + 4] = 2; }});
    m.push_back({"missing-attribute-stream", "shape-one-window", "scale stream renamed to unknown id 99",
                 [](F& f) { f[stream_at(f, attr::scale)] = 99; }});
    m.push_back({"duplicate-attribute-stream", "shape-one-window", "scale stream renamed to position",
                 [](F& f) { f[stream_at(f, attr::scale)] = attr::position; }});
    m.push_back({"stream-element-count-mismatch", "shape-one-window", "position stream element_count + 1",
                 [](F& f) {
                     auto at = stream_at(f, attr::position) + 5;
                     poke<std::uint32_t>(f, at, peek<std::uint32_t>(f, at) + 1);
                 }});
    m.push_back({"truncated", "shape-one-window", "the file cut inside its last chunk",
                 [](F& f) {
                     auto rs = records_of(f);
                     const Rec* last = nullptr;
                     for (const Rec& r : rs)
                         if (r.opcode == op::chunk) last = &r;
                     f.resize(last->offset + last->length / 2);
                 }});
    // Extras: fields located by the values the generator wrote.
    m.push_back({"unknown-interpolation", "extras-camera", "camera interpolation 'splinx'",
                 [](F& f) { f[find_in(f, first(records_of(f), op::camera), "spline") + 5] = 'x'; }});
    m.push_back({"invalid-flag-value", "extras-camera", "camera loop byte 2",
                 [](F& f) { f[find_in(f, first(records_of(f), op::camera), "spline") + 6] = 2; }});
    m.push_back({"invalid-audio-gain", "extras-audio-sources", "source 2's gain -1",
                 [](F& f) { poke(f, find_value(f, nth(f, op::audio_source, 1), 0.5 + 0.1 * 2), -1.0); }});
    m.push_back({"invalid-audio-duration", "extras-audio-sources", "source 7's duration -1.5",
                 [](F& f) { poke(f, find_value(f, nth(f, op::audio_source, 0), 1.5), -1.5); }});
    m.push_back({"keyframe-time-out-of-range", "extras-audio-sources", "source 7's keyframe at 100 s",
                 [](F& f) { poke(f, find_value(f, nth(f, op::audio_source, 0), 3.0), 100.0); }});
    m.push_back({"spatial-source-not-mono", "extras-audio-sources", "source 7's layout 'mona'",
                 [](F& f) { f[find_in(f, nth(f, op::audio_source, 0), "mono") + 3] = 'a'; }});
    m.push_back({"audio-data-length-mismatch", "extras-audio-sources", "source 7's data_length 511",
                 [](F& f) { poke<std::uint64_t>(f, find_value<std::uint64_t>(f, nth(f, op::audio_source, 0), 512), 511); }});
    m.push_back({"duplicate-audio-source", "extras-audio-sources", "source 2 renumbered 7",
                 [](F& f) { poke<std::uint32_t>(f, nth(f, op::audio_source, 1).offset + kRecordHeaderSize, 7); }});
    m.push_back({"unmatched-audio-data", "extras-audio-sources", "the first Audio Data names source 99",
                 [](F& f) { poke<std::uint32_t>(f, nth(f, op::audio_data, 0).offset + kRecordHeaderSize, 99); }});
    m.push_back({"audio-flag-mismatch", "extras-audio-sources", "Header flags bit 0 cleared",
                 [](F& f) { f[header_layout(f).flags] &= static_cast<std::uint8_t>(~kHeaderFlagAudio); }});
    m.push_back({"invalid-metres-per-unit", "extras-frames-anchor", "frame 'enu' metres_per_unit -1",
                 [](F& f) { poke(f, find_value(f, nth(f, op::coordinate_frame, 1), 0.01), -1.0); }});
    m.push_back({"degenerate-basis", "extras-frames-anchor", "frame 'enu' forward axis = up axis",
                 [](F& f) { f[find_in(f, nth(f, op::coordinate_frame, 1), "enu") + 5] = static_cast<std::uint8_t>(Axis::pos_z); }});
    m.push_back({"unknown-enum-value", "extras-frames-anchor", "frame 'enu' handedness 9",
                 [](F& f) { f[find_in(f, nth(f, op::coordinate_frame, 1), "enu") + 3] = 9; }});
    m.push_back({"geodetic-out-of-range", "extras-frames-anchor", "latitude 91",
                 [](F& f) { poke(f, find_value(f, first(records_of(f), op::geodetic_anchor), 48.8584), 91.0); }});
    m.push_back({"non-finite-value", "extras-sensors-rig", "cam0 cx NaN",
                 [](F& f) { poke(f, find_value(f, nth(f, op::sensor_calibration, 0), 960.0),
                                 std::numeric_limits<double>::quiet_NaN()); }});
    m.push_back({"missing-anchor-frame", "extras-frames-anchor", "the anchor names frame 'enx'",
                 [](F& f) { f[find_in(f, first(records_of(f), op::geodetic_anchor), "enu") + 2] = 'x'; }});
    m.push_back({"invalid-intrinsics", "extras-sensors-rig", "cam0 fx 0 (a camera's fx must be non-zero)",
                 [](F& f) { poke(f, find_value(f, nth(f, op::sensor_calibration, 0), 1400.0), 0.0); }});
    m.push_back({"unknown-camera-model", "extras-sensors-rig", "cam0 camera_model 9",
                 [](F& f) { f[find_in(f, nth(f, op::sensor_calibration, 0), "rgb") + 3] = 9; }});
    m.push_back({"missing-rig-trajectory", "extras-sensors-rig", "cam0 rig_name 'rix'",
                 [](F& f) {
                     const Rec r = nth(f, op::sensor_calibration, 0);
                     f[find_in(f, r, "rig") + 2] = 'x';
                 }});
    m.push_back({"zero-quaternion", "extras-sensors-rig", "rig sample 1 rotation (0, 0, 0, 0)",
                 [](F& f) {
                     const Rec r = first(records_of(f), op::rig_trajectory);
                     poke(f, find_value(f, r, 0.6), 0.0);
                     poke(f, find_value(f, r, 0.8), 0.0);
                 }});
    m.push_back({"duplicate-object-id", "extras-objects", "object 2 renumbered 1",
                 [](F& f) {
                     const Rec r = first(records_of(f), op::object_table);
                     poke<std::uint32_t>(f, find_in(f, r, "object 2") - 8, 1);
                 }});
    m.push_back({"track-names-background", "extras-objects", "the first Object Track names object 0",
                 [](F& f) { poke<std::uint32_t>(f, nth(f, op::object_track, 0).offset + kRecordHeaderSize, 0); }});
    m.push_back({"duplicate-object-track", "extras-objects", "the second Object Track names object 1",
                 [](F& f) { poke<std::uint32_t>(f, nth(f, op::object_track, 1).offset + kRecordHeaderSize, 1); }});
    // SH band records.
    m.push_back({"invalid-sh-band", "sh-degree-2", "the first SH band record says band 5",
                 [](F& f) { f[nth(f, op::sh_band, 0).offset + kRecordHeaderSize] = 5; }});
    m.push_back({"duplicate-sh-band", "sh-no-index", "the second SH band record says band 1",
                 [](F& f) { f[nth(f, op::sh_band, 1).offset + kRecordHeaderSize] = 1; }});
    m.push_back({"missing-sh-band", "sh-no-index", "the first SH band record says band 2",
                 [](F& f) { f[nth(f, op::sh_band, 0).offset + kRecordHeaderSize] = 2; }});
    // The summary, with summary_crc recomputed so only the named rule breaks.
    m.push_back({"index-out-of-range", "shape-ten-windows", "an index entry's chunk_offset past the end (CRC fixed)",
                 [](F& f) {
                     poke<std::uint64_t>(f, first(records_of(f), op::chunk_index).offset + kRecordHeaderSize + 16, f.size() * 4);
                     fix_summary_crc(f);
                 }});
    m.push_back({"index-record-mismatch", "shape-ten-windows", "an index entry's gaussian_count + 1 (CRC fixed)",
                 [](F& f) {
                     const std::size_t at = first(records_of(f), op::chunk_index).offset + kRecordHeaderSize + 32;
                     poke<std::uint32_t>(f, at, peek<std::uint32_t>(f, at) + 1);
                     fix_summary_crc(f);
                 }});
    // Keyframe-delta: the Delta Chunk and its index entry changed together (CRC fixed).
    auto delta_and_entry = [](std::size_t record_field, std::size_t entry_field, auto change,
                              std::size_t which = 0) {
        return [=](F& f) {
            const Rec d = nth(f, op::delta_chunk, which);
            const Rec e = index_entry_for(f, d.offset);
            change(f, d, d.offset + kRecordHeaderSize + record_field);
            if (entry_field != 0) change(f, d, e.offset + e.length - entry_field);
            fix_summary_crc(f);
        };
    };
    m.push_back({"forward-reference", "kd-chained", "the first delta references its own offset + 1",
                 delta_and_entry(kDeltaReference, 26, [](F& f, const Rec& d, std::size_t at) {
                     poke<std::uint64_t>(f, at, d.offset + 1);
                 })});
    m.push_back({"broken-reference", "kd-chained", "the first delta references an offset that frames no chunk",
                 delta_and_entry(kDeltaReference, 26, [](F& f, const Rec&, std::size_t at) {
                     poke<std::uint64_t>(f, at, peek<std::uint64_t>(f, at) + 1);
                 })});
    m.push_back({"depth-mismatch", "kd-chained", "the first delta's depth 2",
                 delta_and_entry(kDeltaDepth, 10, [](F& f, const Rec&, std::size_t at) { poke<std::uint16_t>(f, at, 2); })});
    m.push_back({"delta-mode-mismatch", "kd-chained",
                 "the second delta says keyframe-referenced but references the first delta",
                 delta_and_entry(kDeltaMode, 27, [](F& f, const Rec&, std::size_t at) {
                     f[at] = f[at] == kDeltaModeChained ? kDeltaModeKeyframe : kDeltaModeChained;
                 }, 1)});
    m.push_back({"invalid-delta-mode", "kd-chained", "the first delta's delta_mode 7",
                 delta_and_entry(kDeltaMode, 27, [](F& f, const Rec&, std::size_t at) { f[at] = 7; })});
    m.push_back({"invalid-chunk-kind", "kd-chained", "the first delta's index chunk_kind 5",
                 [](F& f) {
                     const Rec e = index_entry_for(f, nth(f, op::delta_chunk, 0).offset);
                     f[e.offset + e.length - 28] = 5;
                     fix_summary_crc(f);
                 }});
    m.push_back({"level-mismatch", "kd-chained", "the first delta's level 1",
                 delta_and_entry(kDeltaLevel, 0, [](F& f, const Rec&, std::size_t at) { poke<std::uint32_t>(f, at, 1); })});
    m.push_back({"timeline-gap", "kd-chained", "the first delta's t1 shortened (record and index)",
                 [](F& f) {
                     const Rec d = nth(f, op::delta_chunk, 0);
                     const Rec e = index_entry_for(f, d.offset);
                     poke(f, d.offset + kRecordHeaderSize + 8, peek<double>(f, d.offset + kRecordHeaderSize + 8) - 0.5);
                     poke(f, e.offset + kRecordHeaderSize + 8, peek<double>(f, e.offset + kRecordHeaderSize + 8) - 0.5);
                     fix_summary_crc(f);
                 }});
    // Framing, compression, record order.
    m.push_back({"corrupt-compressed-data", "chunk-compression-zstd", "the chunk block's zstd magic broken",
                 [](F& f) {
                     const Rec c = first(records_of(f), op::chunk);
                     auto ch = parse_chunk(view(f, c));
                     f[static_cast<std::size_t>(ch->records_offset)] ^= 0xFF;
                 }});
    m.push_back({"count-exceeds-record", "shape-ten-windows", "Window Table count 10^9",
                 [](F& f) { poke<std::uint32_t>(f, first(records_of(f), op::window_table).offset + kRecordHeaderSize, 1000000000u); }});
    m.push_back({"record-too-short", "shape-one-window", "the Header's attribute map says 100 bytes",
                 [](F& f) {
                     const Rec h = first(records_of(f), op::header);
                     poke<std::uint32_t>(f, h.offset + h.length - 4, 100u);
                 }});
    m.push_back({"bad-footer", "shape-one-window", "the Footer's opcode byte made 0x7F",
                 [](F& f) { f[f.size() - kTailSize] = 0x7F; }});
    m.push_back({"orphan-sh-band", "sh-no-index", "the first Chunk's opcode made private",
                 [](F& f) { f[first(records_of(f), op::chunk).offset] = 0x80; }});
    m.push_back({"delta-chunk-in-gaussian-birth", "kd-chained", "temporal_model rewritten 'gaussian-birth'",
                 [](F& f) {
                     const std::size_t at = header_layout(f).temporal_model + 4;
                     std::memcpy(f.data() + at, "gaussian-birth", 14);
                 }});
    m.push_back({"invalid-object-id-bound", "shape-one-window", "the bounds key 'sigma_rel' renamed 'object_id'",
                 [](F& f) {
                     const std::size_t at = find_in(f, first(records_of(f), op::quantization), "sigma_rel");
                     std::memcpy(f.data() + at, "object_id", 9);
                 }});
    m.push_back({"duplicate-audio-data", "extras-audio-sources", "the second Audio Data names the first source",
                 [](F& f) {
                     poke<std::uint32_t>(f, nth(f, op::audio_data, 1).offset + kRecordHeaderSize,
                                         peek<std::uint32_t>(f, nth(f, op::audio_data, 0).offset + kRecordHeaderSize));
                 }});
    m.push_back({"non-increasing-sample-times", "extras-sensors-rig", "rig sample 1 at t = 0",
                 [](F& f) { poke(f, find_value(f, first(records_of(f), op::rig_trajectory), 2.0), 0.0); }});
    m.push_back({"non-tiling-chunks", "kd-chained", "the first delta's t0 moved 0.5 s earlier (record and index)",
                 [](F& f) {
                     const Rec d = nth(f, op::delta_chunk, 0);
                     const Rec e = index_entry_for(f, d.offset);
                     poke(f, d.offset + kRecordHeaderSize, peek<double>(f, d.offset + kRecordHeaderSize) - 0.5);
                     poke(f, e.offset + kRecordHeaderSize, peek<double>(f, e.offset + kRecordHeaderSize) - 0.5);
                     fix_summary_crc(f);
                 }});
    m.push_back({"summary-start-mismatch", "shape-ten-windows", "Footer summary_start names the Statistics record (CRC fixed)",
                 [](F& f) {
                     const Rec footer = first(records_of(f), op::footer);
                     poke<std::uint64_t>(f, footer.offset + kRecordHeaderSize, first(records_of(f), op::statistics).offset);
                     fix_summary_crc(f);
                 }});
    // Stream values, re-encoded in a file without an index.
    auto constant = [](std::int32_t value, int channels = 1) {
        return [=](std::uint32_t count) { return std::vector<std::int32_t>(std::size_t{count} * channels, value); };
    };
    m.push_back({"window-index-out-of-range", "summary-none", "the first chunk's window_index stream all 99",
                 [=](F& f) { f = replace_stream(f, attr::window_index, constant(99)); }});
    m.push_back({"invalid-rotation-index", "summary-none", "the first chunk's rotation_index stream all 7",
                 [=](F& f) { f = replace_stream(f, attr::rotation_index, constant(7)); }});
    m.push_back({"stream-value-out-of-range", "summary-none",
                 "the first chunk's window_index stream in delta mode, every symbol +2^30 (the sum leaves int32)",
                 [](F& f) {
                     const Rec c = first(records_of(f), op::chunk);
                     const auto count = parse_chunk(view(f, c))->count;
                     // Build the bare stream by hand: the encoder never emits a sum outside int32.
                     ByteWriter sym;
                     for (std::uint32_t i = 0; i < count; ++i) sym.u32(zigzag_encode(1 << 30));
                     std::vector<std::uint8_t> payload;
                     if (auto st = compress(codec::deflate, 6, sym.buffer(), payload); !st)
                         throw std::runtime_error(st.error().describe());
                     f = replace_stream(f, attr::window_index, [](std::uint32_t n) {
                         return std::vector<std::int32_t>(n, 0);
                     });
                     // Now overwrite that (raw, constant-0) stream with the hand-made one.
                     const Rec c2 = first(records_of(f), op::chunk);
                     auto ch = parse_chunk(view(f, c2));
                     ByteWriter block;
                     auto streams = split_streams(ch->records, ch->records_offset);
                     if (!streams) throw std::runtime_error("chunk streams do not split");
                     for (const StreamView& sv : *streams) {
                         if (sv.header.attribute_id != attr::window_index) {
                             block.raw(Bytes(f).subspan(static_cast<std::size_t>(sv.offset),
                                                        static_cast<std::size_t>(sv.end_offset() - sv.offset)));
                             continue;
                         }
                         StreamHeader h = sv.header;
                         h.mode = stream_mode::delta;
                         h.symbol_width = 4;
                         h.codec = codec::deflate;
                         h.payload_length = payload.size();
                         write_stream_header(block, h);
                         block.raw(payload);
                     }
                     ByteWriter content;
                     content.f64(ch->t0);
                     content.f64(ch->t1);
                     content.u32(ch->level);
                     content.u32(ch->count);
                     content.string(ch->compression);
                     content.u64(ch->uncompressed_size == ch->records.size() ? block.size() : ch->uncompressed_size);
                     content.bytes(block.buffer());
                     ByteWriter rec;
                     write_record(rec, op::chunk, content.buffer());
                     F out(f.begin(), f.begin() + static_cast<std::ptrdiff_t>(c2.offset));
                     out.insert(out.end(), rec.buffer().begin(), rec.buffer().end());
                     out.insert(out.end(), f.begin() + static_cast<std::ptrdiff_t>(c2.offset + c2.length), f.end());
                     f = std::move(out);
                 }});
    // Keyframe-delta identity and composition rules (§11.2, §11.3, §11.5, §11.7): the last Delta
    // Chunk re-encoded with one stream's values changed, its offsets moved (CRC fixed). In
    // kd-churn (keyframe-referenced) the last delta kills ids 1..8 and bears 21..28; in
    // kd-churn-chained each delta kills two ids and bears two.
    auto last_delta = [](std::function<void(DeltaGroupsEdit&)> edit) {
        return [edit](F& f) { f = rewrite_last_delta(f, edit); };
    };
    m.push_back({"gaussian-id-in-two-groups", "kd-churn", "the last delta's first birth names its first death",
                 last_delta([](DeltaGroupsEdit& e) {
                     stream_of(e.births, attr::gaussian_id).values[0] =
                         stream_of(e.deaths, attr::gaussian_id).values[0];
                 })});
    m.push_back({"duplicate-gaussian-id", "kd-churn", "the last delta's second birth repeats the first's id",
                 last_delta([](DeltaGroupsEdit& e) {
                     auto& ids = stream_of(e.births, attr::gaussian_id).values;
                     ids[1] = ids[0];
                 })});
    m.push_back({"unknown-gaussian-id", "kd-churn", "the last delta's first death names id 999, never live",
                 last_delta([](DeltaGroupsEdit& e) { stream_of(e.deaths, attr::gaussian_id).values[0] = 999; })});
    m.push_back({"gaussian-id-reused", "kd-churn-chained", "the last delta's first birth names id 1, which died in the first delta",
                 last_delta([](DeltaGroupsEdit& e) { stream_of(e.births, attr::gaussian_id).values[0] = 1; })});
    m.push_back({"missing-gaussian-id", "kd-churn", "the last delta's births without their gaussian_id stream",
                 last_delta([](DeltaGroupsEdit& e) {
                     std::erase_if(e.births, [](const GroupStream& g) { return g.attribute == attr::gaussian_id; });
                 })});
    m.push_back({"invariant-changed-in-update", "kd-churn", "a flags stream (all 0) in the last delta's update group",
                 last_delta([](DeltaGroupsEdit& e) {
                     const std::size_t n = stream_of(e.updates, attr::gaussian_id).values.size();
                     e.updates.push_back({attr::flags, 1, std::vector<std::int32_t>(n, 0)});
                 })});
    m.push_back({"composed-bin-out-of-range", "kd-churn", "the last delta's position differences all 2^31 - 1",
                 last_delta([](DeltaGroupsEdit& e) {
                     for (std::int32_t& v : stream_of(e.updates, attr::position).values)
                         v = std::numeric_limits<std::int32_t>::max();
                 })});
    return m;
}

}  // namespace

std::vector<Variant> generate_corpus(std::vector<std::string>* skipped) {
    extras_left_out().clear();
    std::vector<Variant> valid = valid_variants();
    if (skipped)
        for (const auto& e : extras_left_out()) skipped->push_back("extras " + e);
    std::vector<Variant> all = valid;
    for (const Mutation& mu : mutations()) {
        const Variant* base = nullptr;
        for (const Variant& v : valid)
            if (v.name == mu.base) base = &v;
        if (!base) throw std::runtime_error("mutation " + mu.id + ": no base " + mu.base);
        Variant r;
        r.name = mu.id;
        r.refusal = true;
        r.refused = mu.id;
        r.note = mu.note + " (from " + mu.base + ")";
        r.bytes = base->bytes;
        mu.apply(r.bytes);
        // Kept only when both paths refuse it by exactly that name: a mutation that one path
        // catches under another rule does not break "exactly one rule" for every reader.
        const std::string want = Json::object().set("refused", Json::string(mu.id)).dump();
        std::string got[2];
        for (int p = 0; p < 2; ++p) {
            try {
                got[p] = canonical_decode(r.bytes, p ? ReadPath::indexed : ReadPath::streamed).dump();
            } catch (const Refused& e) {
                got[p] = Json::object().set("refused", Json::string(e.id)).dump();
            } catch (const std::exception& e) {
                got[p] = std::string("unnamed failure: ") + e.what();
            }
        }
        if (got[0] != want || got[1] != want) {
            if (skipped)
                skipped->push_back(mu.id + ": streamed " + got[0].substr(0, 80) + ", indexed " +
                                   got[1].substr(0, 80));
            continue;
        }
        all.push_back(std::move(r));
    }
    return all;
}

}  // namespace conformance
