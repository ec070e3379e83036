// open_source and HttpSource without a web server (the tests against nginx are tests/http/):
// what a path and a URL open, in a build with libcurl and in one without.
#include <catch2/catch.hpp>

#include <string>

#include "fourdgs/config.hpp"
#include "fourdgs/http_source.hpp"
#include "support/readers.hpp"

using namespace fourdgs;

TEST_CASE("is_url knows http and https URLs, in any case, and nothing else", "[http]") {
    CHECK(is_url("http://example.com/a.4dgs"));
    CHECK(is_url("HTTPS://example.com/a.4dgs"));
    CHECK(!is_url("ftp://example.com/a.4dgs"));
    CHECK(!is_url("/srv/http://a.4dgs"));
    CHECK(!is_url("http:/a.4dgs"));
    CHECK(!is_url(""));
}

TEST_CASE("open_source opens a path as a file", "[http]") {
    const std::string path = test::data_path("birth-deflate.4dgs");
    auto source = open_source(path);
    REQUIRE(source.ok());
    CHECK((*source)->random_access());
    CHECK((*source)->size() == test::load_fixture("birth-deflate.4dgs").size());
    auto missing = open_source(path + ".missing");
    REQUIRE(!missing.ok());
    CHECK(missing.error().refusal == "io-error");
}

TEST_CASE("a URL opens over HTTP, or is refused as unsupported in a build without libcurl",
          "[http]") {
    HttpOptions o;
    o.max_attempts = 1;
    // Port 1 on loopback: nothing listens, so the connection is refused at once.
    auto source = open_source("http://127.0.0.1:1/scene.4dgs", o);
    REQUIRE(!source.ok());
#if FOURDGS_HAVE_HTTP
    CHECK(source.error().kind == ErrorKind::io);
    CHECK(source.error().refusal == "http-connection");
#else
    CHECK(source.error().kind == ErrorKind::unsupported);
    CHECK(source.error().refusal == "http-not-built");
#endif
    CHECK(source.error().message.find("http://127.0.0.1:1/scene.4dgs") != std::string::npos);

    auto not_url = HttpSource::open("scene.4dgs");
    REQUIRE(!not_url.ok());
    CHECK(not_url.error().refusal == (FOURDGS_HAVE_HTTP ? "invalid-argument" : "http-not-built"));
}
