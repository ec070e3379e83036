// fourdgs/text.hpp — the file's strings as text: UTF-8 checks and a JSON spelling that never
// produces invalid JSON.
//
// §2 says every string is UTF-8, but a damaged or hostile file can hold any bytes. Readers keep
// the bytes as they are (a string is data, and refusing a whole scene over one label would lose
// it); tools that print strings use json_quote, and the validator reports the string as an error.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "fourdgs/export.hpp"

FOURDGS_PUBLIC_BEGIN
namespace fourdgs {

// The length of the well-formed UTF-8 sequence at the start of `s` (1 to 4), or 0 when the first
// bytes are not one: a stray continuation byte, an overlong form, a surrogate (U+D800..U+DFFF),
// a code point above U+10FFFF, or a sequence cut by the end of `s` (RFC 3629).
constexpr std::size_t utf8_sequence_length(std::string_view s) noexcept {
    if (s.empty()) return 0;
    const auto b = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
    const unsigned char c = b(0);
    if (c < 0x80) return 1;
    std::size_t n;
    unsigned char lo = 0x80, hi = 0xBF;  // the range of the second byte
    if (c >= 0xC2 && c <= 0xDF) n = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        if (c == 0xE0) lo = 0xA0;  // overlong
        if (c == 0xED) hi = 0x9F;  // surrogates
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        if (c == 0xF0) lo = 0x90;  // overlong
        if (c == 0xF4) hi = 0x8F;  // above U+10FFFF
    } else {
        return 0;
    }
    if (s.size() < n || b(1) < lo || b(1) > hi) return 0;
    for (std::size_t i = 2; i < n; ++i)
        if (b(i) < 0x80 || b(i) > 0xBF) return 0;
    return n;
}

// The offset of the first byte of `s` that does not start a well-formed UTF-8 sequence, or npos.
constexpr std::size_t find_invalid_utf8(std::string_view s) noexcept {
    for (std::size_t at = 0; at < s.size();) {
        const std::size_t n = utf8_sequence_length(s.substr(at));
        if (n == 0) return at;
        at += n;
    }
    return std::string_view::npos;
}

constexpr bool is_utf8(std::string_view s) noexcept {
    return find_invalid_utf8(s) == std::string_view::npos;
}

// The character a one-letter JSON escape stands for (`e` is the letter after the backslash:
// " \ / b f n r t), or nullopt for any other letter; \u escapes are the caller's to read.
constexpr std::optional<char> json_unescape(char e) noexcept {
    constexpr std::string_view letters = "\"\\/bfnrt", chars = "\"\\/\b\f\n\r\t";
    const std::size_t at = letters.find(e);
    if (at == std::string_view::npos) return std::nullopt;
    return chars[at];
}

// `s` as a JSON string literal, quotes included. Well-formed UTF-8 passes through; '"', '\\' and
// control characters are escaped; each byte that is not part of well-formed UTF-8 is spelled
// \udcXX, XX its value (the lone low surrogates U+DC80..U+DCFF, which no UTF-8 text contains:
// the "surrogateescape" convention of PEP 383). The spelling is reversible — a consumer that maps
// those code points back to bytes has the file's exact bytes — and the output is always JSON.
inline std::string json_quote(std::string_view s) {
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out;
    out.reserve(s.size() + 2);
    out += '"';
    auto escape_u = [&](unsigned v) {
        out += "\\u";
        for (int shift = 12; shift >= 0; shift -= 4) out += kHex[(v >> shift) & 15];
    };
    for (std::size_t at = 0; at < s.size();) {
        const unsigned char c = static_cast<unsigned char>(s[at]);
        const std::size_t n = utf8_sequence_length(s.substr(at));
        if (n == 0) {
            escape_u(0xDC00u | c);
            ++at;
        } else if (n > 1) {
            out.append(s.substr(at, n));
            at += n;
        } else {
            switch (c) {
                case '"': out += "\\\""; break;
                case '\\': out += "\\\\"; break;
                case '\n': out += "\\n"; break;
                case '\r': out += "\\r"; break;
                case '\t': out += "\\t"; break;
                default:
                    if (c < 0x20) escape_u(c);
                    else out += static_cast<char>(c);
            }
            ++at;
        }
    }
    out += '"';
    return out;
}

}  // namespace fourdgs
FOURDGS_PUBLIC_END
