// The conformance tool's canonical form (docs/conformance.md) as a WebAssembly module, so the npm
// package's tests compare what WebAssembly decodes with the native runner's output, byte for byte,
// in one process (js/test/conformance.test.js).
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

#include "conformance.hpp"
#include "fourdgs/io.hpp"

// The runner's output for `size` bytes at `data` on one path (indexed != 0: the indexed readers),
// in memory from malloc that the caller frees; *length its size. A failure the runner would
// report on stderr (exit 2) comes back as "error: <diagnosis>".
extern "C" __attribute__((used)) char* fourdgs_canonical_json(const std::uint8_t* data,
                                                               std::size_t size, int indexed,
                                                               std::size_t* length) {
    std::string out;
    try {
        fourdgs::MemorySource source(std::span<const std::uint8_t>(data, size));
        out = conformance::canonical_output(
            source, indexed ? conformance::ReadPath::indexed : conformance::ReadPath::streamed);
    } catch (const std::exception& e) {
        out = std::string("error: ") + e.what();
    }
    char* copy = static_cast<char*>(std::malloc(out.size() + 1));
    if (!copy) return nullptr;
    std::memcpy(copy, out.data(), out.size() + 1);
    *length = out.size();
    return copy;
}
