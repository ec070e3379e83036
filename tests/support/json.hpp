// tests/support/json.hpp — a small JSON reader for the interop fixtures' .json files.
//
// Parses the whole of RFC 8259 that the fixtures use: objects, arrays, strings (with \uXXXX
// escapes, surrogate pairs included), numbers (as double), true, false, null. Object members keep
// their file order. A parse error throws std::runtime_error naming the byte offset (tests may use
// exceptions; the library never does). No external dependency.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fourdgs/text.hpp"

namespace fourdgs::test {

class Json {
public:
    enum class Type { null, boolean, number, string, array, object };

    Json() = default;
    static Json make_number(double v) { Json j; j.type_ = Type::number; j.number_ = v; return j; }
    static Json make_bool(bool v) { Json j; j.type_ = Type::boolean; j.bool_ = v; return j; }
    static Json make_string(std::string v) { Json j; j.type_ = Type::string; j.string_ = std::move(v); return j; }
    static Json make_array() { Json j; j.type_ = Type::array; return j; }
    static Json make_object() { Json j; j.type_ = Type::object; return j; }

    Type type() const noexcept { return type_; }
    bool is_null() const noexcept { return type_ == Type::null; }
    bool is_number() const noexcept { return type_ == Type::number; }
    bool is_string() const noexcept { return type_ == Type::string; }
    bool is_array() const noexcept { return type_ == Type::array; }
    bool is_object() const noexcept { return type_ == Type::object; }

    double number() const { expect(Type::number, "number"); return number_; }
    bool boolean() const { expect(Type::boolean, "boolean"); return bool_; }
    const std::string& str() const { expect(Type::string, "string"); return string_; }
    const std::vector<Json>& items() const { expect(Type::array, "array"); return items_; }
    const std::vector<std::pair<std::string, Json>>& members() const {
        expect(Type::object, "object");
        return members_;
    }
    std::size_t size() const {
        if (type_ == Type::array) return items_.size();
        if (type_ == Type::object) return members_.size();
        throw std::runtime_error("json: size() of a scalar");
    }
    const Json& operator[](std::size_t i) const {
        expect(Type::array, "array");
        if (i >= items_.size()) throw std::runtime_error("json: index " + std::to_string(i) + " out of range");
        return items_[i];
    }
    const Json* find(std::string_view key) const {
        expect(Type::object, "object");
        for (const auto& [k, v] : members_)
            if (k == key) return &v;
        return nullptr;
    }
    bool contains(std::string_view key) const { return find(key) != nullptr; }
    const Json& operator[](std::string_view key) const {
        const Json* v = find(key);
        if (!v) throw std::runtime_error("json: no member '" + std::string(key) + "'");
        return *v;
    }

    static Json parse(std::string_view text) {
        Parser p{text, 0};
        p.ws();
        Json v = p.value(0);
        p.ws();
        if (p.i != text.size()) p.fail("trailing characters");
        return v;
    }
    static Json parse_file(const std::string& path) {
        std::ifstream in(path, std::ios::binary);
        if (!in) throw std::runtime_error("json: cannot open " + path);
        std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        return parse(text);
    }

private:
    void expect(Type t, const char* name) const {
        if (type_ != t) throw std::runtime_error(std::string("json: value is not a ") + name);
    }

    struct Parser {
        std::string_view s;
        std::size_t i;

        [[noreturn]] void fail(const std::string& what) const {
            throw std::runtime_error("json: " + what + " at byte " + std::to_string(i));
        }
        void ws() {
            while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) ++i;
        }
        bool lit(std::string_view w) {
            if (s.substr(i, w.size()) != w) return false;
            i += w.size();
            return true;
        }
        Json value(int depth) {
            if (depth > 256) fail("nesting too deep");
            if (i >= s.size()) fail("unexpected end");
            const char c = s[i];
            if (c == '{') return object(depth);
            if (c == '[') return array(depth);
            if (c == '"') return make_string(string());
            if (lit("true")) return make_bool(true);
            if (lit("false")) return make_bool(false);
            if (lit("null")) return Json{};
            if (c == '-' || (c >= '0' && c <= '9')) return number();
            fail(std::string("unexpected character '") + c + "'");
        }
        Json object(int depth) {
            Json o = make_object();
            ++i;
            ws();
            if (i < s.size() && s[i] == '}') { ++i; return o; }
            while (true) {
                ws();
                if (i >= s.size() || s[i] != '"') fail("expected a member name");
                std::string k = string();
                ws();
                if (i >= s.size() || s[i] != ':') fail("expected ':'");
                ++i;
                ws();
                Json v = value(depth + 1);
                o.members_.emplace_back(std::move(k), std::move(v));
                ws();
                if (i < s.size() && s[i] == ',') { ++i; continue; }
                if (i < s.size() && s[i] == '}') { ++i; return o; }
                fail("expected ',' or '}'");
            }
        }
        Json array(int depth) {
            Json a = make_array();
            ++i;
            ws();
            if (i < s.size() && s[i] == ']') { ++i; return a; }
            while (true) {
                ws();
                a.items_.push_back(value(depth + 1));
                ws();
                if (i < s.size() && s[i] == ',') { ++i; continue; }
                if (i < s.size() && s[i] == ']') { ++i; return a; }
                fail("expected ',' or ']'");
            }
        }
        unsigned hex4() {
            if (i + 4 > s.size()) fail("short \\u escape");
            unsigned v = 0;
            for (int k = 0; k < 4; ++k) {
                const char c = s[i++];
                v <<= 4;
                if (c >= '0' && c <= '9') v |= unsigned(c - '0');
                else if (c >= 'a' && c <= 'f') v |= unsigned(c - 'a' + 10);
                else if (c >= 'A' && c <= 'F') v |= unsigned(c - 'A' + 10);
                else fail("bad hex digit in \\u escape");
            }
            return v;
        }
        static void utf8(std::string& out, unsigned cp) {
            if (cp < 0x80) out += char(cp);
            else if (cp < 0x800) { out += char(0xC0 | (cp >> 6)); out += char(0x80 | (cp & 0x3F)); }
            else if (cp < 0x10000) {
                out += char(0xE0 | (cp >> 12));
                out += char(0x80 | ((cp >> 6) & 0x3F));
                out += char(0x80 | (cp & 0x3F));
            } else {
                out += char(0xF0 | (cp >> 18));
                out += char(0x80 | ((cp >> 12) & 0x3F));
                out += char(0x80 | ((cp >> 6) & 0x3F));
                out += char(0x80 | (cp & 0x3F));
            }
        }
        std::string string() {
            ++i;  // opening quote
            std::string out;
            while (true) {
                if (i >= s.size()) fail("unterminated string");
                const char c = s[i++];
                if (c == '"') return out;
                if (static_cast<unsigned char>(c) < 0x20) fail("control character in string");
                if (c != '\\') { out += c; continue; }
                if (i >= s.size()) fail("unterminated escape");
                const char e = s[i++];
                if (e != 'u') {
                    const std::optional<char> c1 = fourdgs::json_unescape(e);
                    if (!c1) fail("bad escape");
                    out += *c1;
                    continue;
                }
                unsigned cp = hex4();
                if (cp >= 0xD800 && cp < 0xDC00) {
                    if (!lit("\\u")) fail("lone high surrogate");
                    const unsigned lo = hex4();
                    if (lo < 0xDC00 || lo >= 0xE000) fail("bad low surrogate");
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                }
                utf8(out, cp);
            }
        }
        Json number() {
            const std::size_t start = i;
            if (s[i] == '-') ++i;
            auto digits = [&] {
                const std::size_t d = i;
                while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
                if (i == d) fail("expected digits");
            };
            digits();
            if (i < s.size() && s[i] == '.') { ++i; digits(); }
            if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
                ++i;
                if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
                digits();
            }
            const std::string text(s.substr(start, i - start));
            char* end = nullptr;
            const double v = std::strtod(text.c_str(), &end);
            if (end != text.c_str() + text.size()) fail("bad number");
            return make_number(v);
        }
    };

    Type type_ = Type::null;
    bool bool_ = false;
    double number_ = 0;
    std::string string_;
    std::vector<Json> items_;
    std::vector<std::pair<std::string, Json>> members_;
};

}  // namespace fourdgs::test
