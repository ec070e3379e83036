// Tests for fourdgs/text.hpp: UTF-8 checks and the JSON spelling of a file's strings.
#include <catch2/catch.hpp>

#include <string>

#include "fourdgs/text.hpp"
#include "support/json.hpp"

using namespace fourdgs;

TEST_CASE("§2: strings are UTF-8 — is_utf8 accepts well-formed text and finds the first bad byte") {
    CHECK(is_utf8(""));
    CHECK(is_utf8("plain ascii"));
    CHECK(is_utf8("\xc3\xa9t\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"));  // é, €, an emoji
    CHECK(find_invalid_utf8("ab\xff" "cd") == 2);          // never a UTF-8 byte
    CHECK(find_invalid_utf8("a\x80") == 1);                // a stray continuation byte
    CHECK(find_invalid_utf8("\xc0\xaf") == 0);             // overlong '/'
    CHECK(find_invalid_utf8("\xe0\x80\xaf") == 0);         // overlong, three bytes
    CHECK(find_invalid_utf8("x\xed\xa0\x80") == 1);        // a UTF-8-encoded surrogate
    CHECK(find_invalid_utf8("\xf4\x90\x80\x80") == 0);     // above U+10FFFF
    CHECK(find_invalid_utf8("ok\xf0\x9f\x98") == 2);       // cut by the end of the string
}

TEST_CASE("json_quote: text that is not UTF-8 is spelled \\udcXX and the result always parses") {
    CHECK(json_quote("a\"b\\c\n\t\x01") == "\"a\\\"b\\\\c\\n\\t\\u0001\"");
    CHECK(json_quote("\xc3\xa9") == "\"\xc3\xa9\"");
    CHECK(json_quote("x\xffy") == "\"x\\udcffy\"");
    // Every single byte and every pair of bytes gives a literal a JSON parser accepts, and well-
    // formed input comes back unchanged.
    for (int a = 0; a < 256; ++a)
        for (int b = 0; b < 256; b += 7) {
            const std::string s{static_cast<char>(a), static_cast<char>(b)};
            const std::string quoted = json_quote(s);
            INFO("bytes " << a << " " << b << " spelled " << quoted);
            CHECK(is_utf8(quoted));  // JSON text is UTF-8 (RFC 8259 §8.1)
            const auto parsed = fourdgs::test::Json::parse(quoted);
            REQUIRE(parsed.is_string());
            if (is_utf8(s)) CHECK(parsed.str() == s);
        }
}
