// FileAssembler (fourdgs/detail/file_assembler.hpp): the file around already-encoded chunks — what both
// writers use, and what a tool that joins files without re-encoding them needs.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "fourdgs/detail/file_assembler.hpp"
#include "fourdgs/indexed_reader.hpp"
#include "fourdgs/io.hpp"
#include "fourdgs/records.hpp"

using namespace fourdgs;
using fourdgs::detail::ChunkRecords;
using fourdgs::detail::FileAssembler;
using fourdgs::detail::SummaryOptions;

namespace {

// A file of the conformance corpus, written by this library's writers.
std::vector<std::uint8_t> corpus_file(const std::string& name) {
    auto bytes = read_file(std::string(FOURDGS_CONFORMANCE_CORPUS) + "/valid/" + name);
    REQUIRE(bytes.ok());
    return std::move(bytes).value();
}

// Re-assembles `file` from its own records: the bytes before the first chunk as given, each
// indexed chunk's records copied verbatim with its index fields, then finish() with the summary
// options the file shows.
std::vector<std::uint8_t> reassemble(const std::vector<std::uint8_t>& file) {
    MemorySource src(file);
    ReaderOptions ro;
    ro.accept_keyframe_delta = true;
    auto reader = IndexedReader::open(src, ro);
    REQUIRE(reader.ok());
    const SceneInfo& s = reader->scene();
    REQUIRE(!s.index.empty());
    REQUIRE(s.statistics);
    MemorySink sink;
    FileAssembler as(sink);
    REQUIRE(as.put(Bytes(file).first(s.index.front().chunk_offset)).ok());
    for (const ChunkIndex& e : s.index) {
        REQUIRE(as.position() == e.chunk_offset);
        ChunkRecords c;
        std::uint64_t end = e.chunk_offset + e.chunk_length;
        for (const ChunkIndex::Band& b : e.bands) {
            c.band_length[b.band - 1] = b.length;
            end = b.offset + b.length;
        }
        c.bytes = Bytes(file).subspan(e.chunk_offset, end - e.chunk_offset);
        c.chunk_length = e.chunk_length;
        c.bands = static_cast<int>(e.bands.size());
        c.t0 = e.t0;
        c.t1 = e.t1;
        c.gaussian_count = e.gaussian_count;
        c.keyframe = e.keyframe;
        REQUIRE(as.add_chunk(c).ok());
    }
    SummaryOptions so;
    REQUIRE(s.footer);
    so.crc = s.footer->summary_crc != 0;
    so.summary_offset = !s.summary_offsets.empty();
    REQUIRE(as.finish(so, *s.statistics).ok());
    CHECK(as.index() == s.index);
    return sink.take();
}

}  // namespace

TEST_CASE("re-assembling a written file from its own chunk records gives the same bytes (§4.5, "
          "§5.2, §5.8)") {
    for (const char* name : {"many-chunks.4dgs", "extras-objects.4dgs", "sh-degree-3.4dgs",
                             "chunk-compression-zstd.4dgs", "kd-chained.4dgs", "kd-churn.4dgs",
                             "kd-mixed-modes.4dgs", "kd-windows.4dgs"}) {
        INFO(name);
        const std::vector<std::uint8_t> file = corpus_file(name);
        CHECK(reassemble(file) == file);
    }
}

TEST_CASE("the assembler frames the summary it writes: index group, Statistics, Summary Offset, "
          "CRC and Footer (§4.5)") {
    MemorySink sink;
    FileAssembler as(sink);
    Header h;
    h.temporal_model = "gaussian-birth";
    h.library = "test";
    h.duration_sec = 1;
    Quantization q;
    q.scheme = "uniform-v1";
    REQUIRE(as.begin(h, q, WindowTable{{{0, 1}}}).ok());
    // A stand-in chunk record (the assembler never looks inside) and one band record.
    ByteWriter w;
    write_record(w, op::chunk, Bytes(std::vector<std::uint8_t>(5, 7)));
    const std::uint64_t chunk_length = w.size();
    write_record(w, op::sh_band, Bytes(std::vector<std::uint8_t>(3, 9)));
    const std::uint64_t first = as.position();
    ChunkRecords c;
    c.bytes = w.buffer();
    c.chunk_length = chunk_length;
    c.bands = 1;
    c.band_length[0] = w.size() - chunk_length;
    c.t0 = 0;
    c.t1 = 1;
    c.gaussian_count = 4;
    REQUIRE(as.add_chunk(c).ok());
    const std::uint64_t summary_start = as.position();
    REQUIRE(as.finish({}, Statistics{4, 1, 1, {}}).ok());
    const std::vector<std::uint8_t>& file = sink.bytes();
    REQUIRE(file.size() == as.position());

    const ChunkIndex& e = as.index().at(0);
    CHECK(e.chunk_offset == first);
    CHECK(e.chunk_length == chunk_length);
    REQUIRE(e.bands.size() == 1);
    CHECK(e.bands[0].offset == first + chunk_length);
    CHECK(e.bands[0].length == c.band_length[0]);

    const std::uint64_t footer_at = file.size() - kTailSize;
    auto fr = parse_record(Bytes(file).subspan(footer_at), footer_at);
    REQUIRE(fr.ok());
    auto footer = parse_footer(*fr);
    REQUIRE(footer.ok());
    CHECK(footer->summary_start == summary_start);
    CHECK(footer->summary_crc ==
          crc32(Bytes(file).subspan(summary_start, footer_at - summary_start)));
    // The Summary Offset names the index group, which starts the summary.
    auto idx = parse_record(Bytes(file).subspan(summary_start), summary_start);
    REQUIRE(idx.ok());
    CHECK(idx->opcode == op::chunk_index);
    auto so_rec = parse_record(Bytes(file).subspan(footer->summary_offset_start),
                               footer->summary_offset_start);
    REQUIRE(so_rec.ok());
    auto so = parse_summary_offset(*so_rec);
    REQUIRE(so.ok());
    CHECK(so->group_start == summary_start);
    CHECK(so->group_length == idx->total_length());
    CHECK(std::vector<std::uint8_t>(file.end() - kMagicSize, file.end()) ==
          std::vector<std::uint8_t>(kMagic.begin(), kMagic.end()));
}

TEST_CASE("without an index the Footer says summary_start 0, with no Summary Offset and no CRC "
          "(M016)") {
    MemorySink sink;
    FileAssembler as(sink);
    ByteWriter w;
    write_record(w, op::chunk, Bytes(std::vector<std::uint8_t>(2, 1)));
    ChunkRecords c;
    c.bytes = w.buffer();
    c.chunk_length = w.size();
    REQUIRE(as.add_chunk(c).ok());
    SummaryOptions so;
    so.index = false;
    REQUIRE(as.finish(so, Statistics{}).ok());
    const auto& file = sink.bytes();
    const std::uint64_t footer_at = file.size() - kTailSize;
    auto footer = parse_footer(*parse_record(Bytes(file).subspan(footer_at), footer_at));
    REQUIRE(footer.ok());
    CHECK(footer->summary_start == 0);
    CHECK(footer->summary_offset_start == 0);
    CHECK(footer->summary_crc == 0);
    // Only Statistics sits between the chunk and the Footer.
    auto stats = parse_record(Bytes(file).subspan(c.chunk_length), c.chunk_length);
    REQUIRE(stats.ok());
    CHECK(stats->opcode == op::statistics);
    CHECK(stats->end_offset() == footer_at);
}

TEST_CASE("a keyframe's index entry names its own offset as keyframe_offset (§5.8)") {
    MemorySink sink;
    FileAssembler as(sink);
    REQUIRE(as.put(Bytes(std::vector<std::uint8_t>(11, 0))).ok());
    ByteWriter w;
    write_record(w, op::chunk, Bytes(std::vector<std::uint8_t>(2, 1)));
    ChunkRecords c;
    c.bytes = w.buffer();
    c.chunk_length = w.size();
    c.keyframe = KeyframeIndexFields{};
    c.keyframe->keyframe_offset = 999;  // a keyframe's is its own, whatever the caller says
    REQUIRE(as.add_chunk(c).ok());
    c.keyframe->chunk_kind = 1;
    c.keyframe->keyframe_offset = 11;
    c.keyframe->reference_offset = 11;
    REQUIRE(as.add_chunk(c).ok());
    REQUIRE(as.index().size() == 2);
    CHECK(as.index()[0].keyframe->keyframe_offset == 11);
    CHECK(as.index()[1].keyframe->keyframe_offset == 11);
    CHECK(as.index()[1].keyframe->reference_offset == 11);
    CHECK(as.index()[1].chunk_offset == 11 + w.size());
}

TEST_CASE("a chunk whose lengths do not frame its bytes is refused, and nothing is written "
          "(input-size-mismatch)") {
    MemorySink sink;
    FileAssembler as(sink);
    const std::vector<std::uint8_t> bytes(20, 3);
    ChunkRecords c;
    c.bytes = bytes;
    c.chunk_length = 12;
    c.bands = 1;
    c.band_length[0] = 7;
    auto r = as.add_chunk(c);
    REQUIRE(!r.ok());
    CHECK(r.error().refusal == refusal::kInputSizeMismatch);
    CHECK(r.error().field == "ChunkRecords.bytes");
    c.bands = 4;
    CHECK(as.add_chunk(c).error().refusal == refusal::kInputSizeMismatch);
    CHECK(sink.bytes().empty());
    CHECK(as.chunk_count() == 0);
}

TEST_CASE("nothing is added after finish() (writer-finished)") {
    MemorySink sink;
    FileAssembler as(sink);
    REQUIRE(as.finish({}, Statistics{}).ok());
    const std::size_t size = sink.bytes().size();
    CHECK(as.finish({}, Statistics{}).error().refusal == refusal::kWriterFinished);
    CHECK(as.put(Bytes(std::vector<std::uint8_t>(1, 0))).error().refusal ==
          refusal::kWriterFinished);
    ChunkRecords c;
    CHECK(as.add_chunk(c).error().refusal == refusal::kWriterFinished);
    CHECK(sink.bytes().size() == size);
}
