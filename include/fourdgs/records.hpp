// fourdgs/records.hpp — the typed records of §5: one struct per record, one parser and one writer
// each, and the shape rules that need nothing but the record itself.
//
// A parser takes a RecordView (wire.hpp) and reads its content with a bounds-checked Cursor, so
// every error carries the absolute file offset of the field that failed. Parsers use the record's
// content_length and ignore bytes after the fields they know (§4.2, M009/M010); they check every
// declared count against the bytes that remain before allocating (refusal count-exceeds-record);
// a field that runs past the record is record-too-short.
//
// Rules that need another record (the Header's duration, a Rig Trajectory by name, a second record
// of the same name, an index entry against its chunk) belong to the layers above; where a helper
// makes that easy it is here (check_audio_keyframes_within, length_unit_agrees).
//
// Lifetime: every `Bytes` field of a parsed struct (Chunk records, SH band stream, attachment and
// audio payloads, Delta Chunk records) views the RecordView's content, i.e. the caller's buffer. It
// is valid exactly as long as that buffer; copy it out to keep it. Every other field is owned.
//
// Thread safety: every function here is pure and reentrant; the structs are plain values.
//
// The records live in one header per family, each readable on its own:
//   records/common.hpp      the §2 map type, flag bits, fixed sizes, parser and writer internals
//   records/bounds.hpp      the §5.3 bound grammar and exact comparison
//   records/core.hpp        Header, Footer, Quantization, Window Table (§5.1-§5.4)
//   records/chunk.hpp       Chunk, SH Band Stream, Delta Chunk (§5.5, §5.7, §5.18)
//   records/summary.hpp     Chunk Index, Statistics, Summary Offset (§5.8, §5.12, §5.14)
//   records/audio.hpp       Audio, Audio Source, Audio Data (§5.9, §5.16, §5.17)
//   records/content.hpp     Camera, Metadata, Attachment (§5.10, §5.11, §5.13)
//   records/provenance.hpp  Coordinate Frame, Sensor Calibration, Rig Trajectory, Geodetic Anchor
//   records/objects.hpp     Object Table, Object Track (§5.15.6, §5.15.7)
//   records/registry.hpp    the registry: one row per record kind (name, section, role, keying,
//                           string fields), from which the opcode names and checks are read
//
// Parsers. Each: `r` must carry the record's opcode (else invalid_argument/wrong-opcode); returns
// the typed record or the first rule it breaks; views in the result borrow r.content.
//
// Writers. Each appends the whole framed record (opcode, content_length, content) exactly as the
// struct says; they validate nothing, so a test can write a record that breaks a rule. Counts come
// from the vectors' sizes. Quantization writes the appended SH depths only when sh_depths is
// non-empty; ChunkIndex writes the keyframe fields only when present; ObjectTable writes exactly
// embedding_dim floats per embedding (precondition: embedding->size() == embedding_dim).
#pragma once

#include "fourdgs/records/common.hpp"
#include "fourdgs/records/bounds.hpp"
#include "fourdgs/records/core.hpp"
#include "fourdgs/records/chunk.hpp"
#include "fourdgs/records/summary.hpp"
#include "fourdgs/records/audio.hpp"
#include "fourdgs/records/content.hpp"
#include "fourdgs/records/provenance.hpp"
#include "fourdgs/records/objects.hpp"
#include "fourdgs/records/registry.hpp"
