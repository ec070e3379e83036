// Tests for fourdgs/refusals.hpp: the one list of refusal identifiers agrees with the format
// registry's list, and every identifier is spelled the registry's way.
#include <catch2/catch.hpp>

#include <cstring>
#include <fstream>
#include <limits>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "fourdgs/error.hpp"
#include "fourdgs/records.hpp"
#include "fourdgs/refusals.hpp"
#include "fourdgs/wire.hpp"

using namespace fourdgs;

namespace {

std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

// The identifiers of the registry's "Refusal identifiers already in use" table: every
// backticked kebab-case word in its first column.
std::set<std::string> registry_identifiers(const std::string& section) {
    std::set<std::string> ids;
    std::istringstream lines(section);
    std::string line;
    const std::regex id("`([a-z0-9]+(-[a-z0-9]+)+)`");
    while (std::getline(lines, line)) {
        if (line.rfind("| `", 0) != 0) continue;
        const std::string first = line.substr(0, line.find('|', 1));
        for (std::sregex_iterator it(first.begin(), first.end(), id), end; it != end; ++it)
            ids.insert((*it)[1].str());
    }
    return ids;
}

}  // namespace

TEST_CASE("refusals: the catalog's registry identifiers are exactly the registry's list") {
    const std::string section = slurp(FOURDGS_TEST_DATA "/registry-refusals.md");
    const std::set<std::string> registry = registry_identifiers(section);
    REQUIRE(registry.size() >= 25);
    std::set<std::string> ours;
    for (const RefusalInfo& r : kRefusals)
        if (r.origin == RefusalOrigin::registry) ours.insert(std::string(r.id));
    CHECK(ours == registry);
    for (const std::string& id : registry) {
        const RefusalInfo* info = find_refusal(id);
        REQUIRE(info != nullptr);
        CHECK(info->origin == RefusalOrigin::registry);
        CHECK(!info->section.empty());
    }
}

#ifdef FOURDGS_SHARED_REGISTRY
TEST_CASE("refusals: the committed copy of the registry's refusal table is the registry's") {
    const std::string shared = slurp(FOURDGS_SHARED_REGISTRY);
    const auto at = shared.find("## Refusal identifiers already in use");
    REQUIRE(at != std::string::npos);
    CHECK(registry_identifiers(shared.substr(at)) ==
          registry_identifiers(slurp(FOURDGS_TEST_DATA "/registry-refusals.md")));
}
#endif

TEST_CASE("refusals: every identifier is kebab-case and listed once and found by find_refusal") {
    const std::regex kebab("[a-z0-9]+(-[a-z0-9]+)*");
    std::set<std::string_view> seen;
    for (const RefusalInfo& r : kRefusals) {
        INFO(r.id);
        CHECK(std::regex_match(std::string(r.id), kebab));
        CHECK(seen.insert(r.id).second);
        CHECK(find_refusal(r.id) == &r);
        // A rule of the format says where in the spec it lives.
        if (r.origin == RefusalOrigin::registry || r.origin == RefusalOrigin::file)
            CHECK(!r.section.empty());
    }
    CHECK(find_refusal("no-such-refusal") == nullptr);
    CHECK(refusal::kWindowIndexOutOfRange == "window-index-out-of-range");
}

TEST_CASE("refusals: an Error names its field and value as data") {
    const Error e = make_error(ErrorKind::malformed, refusal::kWindowIndexOutOfRange,
                               "window index 7 is outside the 3-entry table", 120)
                        .about("Attribute Stream.window_index", "7");
    CHECK(e.refusal == "window-index-out-of-range");
    CHECK(e.field == "Attribute Stream.window_index");
    CHECK(e.value == "7");
    CHECK(e.offset == 120);
}

TEST_CASE("refusals: the layers that refuse fill the field and value of an Error, not only its message") {
    // The cursor: a short field, a count that cannot fit, a non-finite number.
    const std::uint8_t three[] = {1, 2, 3};
    Cursor c(three, 100, "Window Table");
    auto short_read = c.u32("count");
    REQUIRE_FALSE(short_read.ok());
    CHECK(short_read.error().refusal == refusal::kRecordTooShort);
    CHECK(short_read.error().field == "Window Table.count");
    CHECK(short_read.error().offset == 100);
    const Status too_many = c.check_count("count", 9, 16);
    REQUIRE_FALSE(too_many.ok());
    CHECK(too_many.error().refusal == refusal::kCountExceedsRecord);
    CHECK(too_many.error().field == "Window Table.count");
    CHECK(too_many.error().value == "9");
    const double inf = std::numeric_limits<double>::infinity();
    std::uint8_t eight[8];
    std::memcpy(eight, &inf, 8);
    Cursor f(eight, 0, "Camera");
    auto non_finite = f.finite_f64("fov_y_deg");
    REQUIRE_FALSE(non_finite.ok());
    CHECK(non_finite.error().field == "Camera.fov_y_deg");
    CHECK(non_finite.error().value == "inf");

    // A record parser names the field it refuses and the value it read.
    Header h;
    h.temporal_model = "gaussian-birth";
    h.cutoff = 1.5;
    ByteWriter out;
    write(out, h);
    auto r = parse_record(out.buffer(), 8);
    REQUIRE(r.ok());
    auto parsed = parse_header(*r);
    REQUIRE_FALSE(parsed.ok());
    CHECK(parsed.error().refusal == refusal::kInvalidCutoff);
    CHECK(parsed.error().field == "Header.cutoff");
    CHECK(parsed.error().value == "1.5");

    // The magic names the bytes it found.
    const std::uint8_t v2[] = {0x89, 0x34, 0x44, 0x47, 0x53, 0x32, 0x0D, 0x0A};
    const Status magic = check_magic(v2, 0);
    REQUIRE_FALSE(magic.ok());
    CHECK(magic.error().refusal == refusal::kUnsupportedMajorVersion);
    CHECK(magic.error().field == "magic");
    CHECK(magic.error().value == "89 34 44 47 53 32 0D 0A");
}
