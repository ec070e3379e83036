// conformance/conformance.hpp — the pieces of the conformance tool: the canonical JSON form of a
// decoded file (canonical.cpp), the corpus generator (generator.cpp) and the checks the runner
// performs (main.cpp). Tools may throw: a named refusal is a Refused, anything else a
// std::runtime_error carrying a diagnosis.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "fourdgs/writer.hpp"

namespace conformance {

// A file the library refuses by name: what the runner prints as {"refused": "<id>"}.
struct Refused : std::runtime_error {
    std::string id;
    Refused(std::string refusal, const std::string& message)
        : std::runtime_error(message), id(std::move(refusal)) {}
};

// ---------------------------------------------------------------------------------------------
// Canonical JSON (docs/conformance.md): a value tree whose serialization is fixed — objects with
// sorted keys, numbers spelled by canonical_number, no whitespace.
class Json {
public:
    enum class Kind { null, boolean, number, string, array, object };
    Json() = default;
    static Json null() { return Json(); }
    static Json boolean(bool b);
    static Json number_token(std::string token);  // an already canonical number token
    static Json string(std::string s);
    static Json array();
    static Json object();

    Json& push(Json v);                        // arrays
    Json& set(const std::string& key, Json v);  // objects
    std::string dump() const;
    Kind kind() const { return kind_; }

private:
    Kind kind_ = Kind::null;
    std::string scalar_;
    std::vector<Json> items_;
    std::map<std::string, Json> members_;
};

// Numbers: an f64 or f32 value is spelled as the shortest decimal that reads back as exactly that
// value in its own type (so an f32 0.1f is "0.1", the f64 nearest to it "0.10000000149011612"),
// "-0" is written "0", and non-finite values are the strings "inf", "-inf", "nan". Integers are
// exact; above 2^53 they are JSON strings.
Json num(double v);
Json num(float v);
Json integer(std::uint64_t v);
Json sinteger(std::int64_t v);

enum class ReadPath { streamed, indexed };

// Decodes `bytes` through `path` (keyframe-delta files through KeyframeDeltaStream or
// KeyframeDeltaReader) and returns the canonical JSON document, or throws Refused / runtime_error.
Json canonical_decode(const std::vector<std::uint8_t>& bytes, ReadPath path);
// The same from any source (a URL through HttpSource: the runner accepts URLs).
Json canonical_decode(fourdgs::ByteSource& source, ReadPath path);
// What the runner prints for a file on one path: the canonical document, or {"refused":"<id>"}
// for a named refusal, with the final newline (anything else still throws).
std::string canonical_output(fourdgs::ByteSource& source, ReadPath path);

// ---------------------------------------------------------------------------------------------
// The corpus.

// What the generator wrote, kept to check a decode against it (every decoded value within the
// declared bound of the value written).
using SourceGaussians = fourdgs::GaussianColumns;

struct Variant {
    std::string name;
    bool refusal = false;
    std::string refused;                 // expected refusal id (refusals only)
    std::vector<std::uint8_t> bytes;
    bool keyframe_delta = false;
    // Gaussian-birth variants written by write_scene: the source scene.
    std::shared_ptr<SourceGaussians> source;
    // Keyframe-delta variants: each step's t0 and its source gaussians (ids in source_index).
    std::vector<double> step_t0;
    std::vector<std::shared_ptr<SourceGaussians>> step_sources;
    std::vector<std::vector<std::uint32_t>> step_ids;
    std::string note;                    // one line: what the variant exercises
};

// Every variant, deterministically (same bytes on every run and platform). Refusal mutations
// that the two read paths do not both refuse by the expected name are left out and described
// in `skipped`.
std::vector<Variant> generate_corpus(std::vector<std::string>* skipped = nullptr);

// The differential check over DIR/valid (differential.cpp): `per_file` damaged files from each
// valid file, mutated from `seed`; each failing file is written to `failures_dir` when it is not
// empty. Returns 0 when every file passes.
int differential(const std::filesystem::path& dir, std::uint64_t seed, std::size_t per_file,
                 const std::filesystem::path& failures_dir);

}  // namespace conformance
