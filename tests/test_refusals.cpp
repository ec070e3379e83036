// Tests for fourdgs/refusals.hpp: the one list of refusal identifiers agrees with the format
// registry's list, and every identifier is spelled the registry's way.
#include <catch2/catch.hpp>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "fourdgs/error.hpp"
#include "fourdgs/refusals.hpp"

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
