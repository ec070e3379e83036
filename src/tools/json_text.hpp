// A JSON reader for the tools library's small text files (grid plans, frames.json, the .splatv
// header): RFC 8259 values (strings without \u escapes), parsed without exceptions, nested at
// most 16 deep. Every error carries the refusal the caller names, the file's name and the byte
// where parsing stopped. Internal to the tools library.
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fourdgs/error.hpp"
#include "fourdgs/portable.hpp"
#include "fourdgs/text.hpp"

namespace fourdgs::json_text {

struct JsonMember;

// The members are JsonMember, defined after Json, rather than std::pair<std::string, Json>:
// clang (the fuzz build's compiler) instantiates the pair while Json is still incomplete and
// then refuses the vector of it.
struct Json {
    enum class Kind : std::uint8_t { null, boolean, number, string, array, object };
    Kind kind = Kind::null;
    bool boolean = false;
    double number = 0;
    bool integral = false;  // the number was spelled without a fraction or an exponent
    std::string text;
    std::vector<Json> items;
    std::vector<JsonMember> members;
};

// An object's member: its name and value, in the order the text gives them.
struct JsonMember {
    std::string first;
    Json second;
};

class Parser {
public:
    // `refusal` is what every error carries; `about` names the kind of file ("grid plan").
    Parser(std::string_view text, std::string_view name, std::string_view refusal,
           std::string_view about)
        : s_(text), name_(name), refusal_(refusal), about_(about) {}

    Result<Json> document() {
        FOURDGS_ASSIGN(Json v, value(0));
        skip_space();
        if (i_ != s_.size()) return error("text after the JSON value");
        return v;
    }

private:
    static constexpr int kMaxDepth = 16;

    Error error(std::string what) const {
        return make_error(ErrorKind::invalid_argument, refusal_,
                          std::string(name_) + ": " + what + " at byte " + std::to_string(i_))
            .about(std::string(about_), std::string(name_));
    }

    // Steps over `c` when it is next.
    bool eat(char c) {
        if (i_ >= s_.size() || s_[i_] != c) return false;
        ++i_;
        return true;
    }

    void skip_space() {
        while (i_ < s_.size() &&
               (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r'))
            ++i_;
    }

    bool literal(std::string_view word) {
        if (s_.substr(i_, word.size()) != word) return false;
        i_ += word.size();
        return true;
    }

    Result<Json> value(int depth) {
        if (depth > kMaxDepth) return error("values nested too deeply");
        skip_space();
        if (i_ >= s_.size()) return error("the text ends where a value should be");
        Json v;
        const char c = s_[i_];
        if (c == '{') return object(depth);
        if (c == '[') return array(depth);
        if (c == '"') {
            v.kind = Json::Kind::string;
            FOURDGS_ASSIGN(v.text, string());
            return v;
        }
        if (literal("true") || literal("false")) {
            v.kind = Json::Kind::boolean;
            v.boolean = s_[i_ - 2] == 'u';  // "true" ends in "ue", "false" in "se"
            return v;
        }
        if (literal("null")) return v;
        return number();
    }

    Result<Json> number() {
        const std::size_t start = i_;
        auto digits = [&] {
            const std::size_t from = i_;
            while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') ++i_;
            return i_ > from;
        };
        eat('-');
        if (i_ < s_.size() && s_[i_] == '0')
            ++i_;
        else if (!digits())
            return error("not a JSON value");
        bool integral = true;
        if (i_ < s_.size() && s_[i_] == '.') {
            ++i_;
            integral = false;
            if (!digits()) return error("a number without digits after its point");
        }
        if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
            ++i_;
            integral = false;
            if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-')) ++i_;
            if (!digits()) return error("a number without exponent digits");
        }
        Json v;
        v.kind = Json::Kind::number;
        v.integral = integral;
        const auto res = fourdgs::from_chars(s_.data() + start, s_.data() + i_, v.number);
        if (res.ec != std::errc() || res.ptr != s_.data() + i_ || !std::isfinite(v.number))
            return error("the number " + std::string(s_.substr(start, i_ - start)) +
                         " is not a finite double");
        return v;
    }

    Result<std::string> string() {
        ++i_;  // the opening quote
        std::string out;
        while (true) {
            if (i_ >= s_.size()) return error("a string that does not end");
            const unsigned char c = static_cast<unsigned char>(s_[i_++]);
            if (c == '"') return out;
            if (c < 0x20) return error("a control character inside a string");
            if (c != '\\') {
                out += static_cast<char>(c);
                continue;
            }
            if (i_ >= s_.size()) return error("a string that does not end");
            // These files' strings are ASCII names; \u escapes have no place in one.
            const std::optional<char> e = json_unescape(s_[i_++]);
            if (!e) return error("an escape these files do not use in a string");
            out += *e;
        }
    }

    // An array or an object, from its opening bracket: nothing, or elements (`element` reads
    // one into the value) separated by ',', up to `close`.
    template <class Element>
    Result<Json> container(Json::Kind kind, char close, const char* unclosed, Element element) {
        ++i_;
        Json v;
        v.kind = kind;
        skip_space();
        if (eat(close)) return v;
        while (true) {
            FOURDGS_TRY(element(v));
            skip_space();
            if (eat(',')) continue;
            if (eat(close)) return v;
            return error(unclosed);
        }
    }

    Result<Json> array(int depth) {
        return container(Json::Kind::array, ']', "an array without ',' or ']' after an element",
                         [&](Json& v) -> Status {
                             FOURDGS_ASSIGN(Json item, value(depth + 1));
                             v.items.push_back(std::move(item));
                             return ok_status();
                         });
    }

    Result<Json> object(int depth) {
        return container(
            Json::Kind::object, '}', "an object without ',' or '}' after a member",
            [&](Json& v) -> Status {
                skip_space();
                if (i_ >= s_.size() || s_[i_] != '"')
                    return error("an object member without a name");
                FOURDGS_ASSIGN(std::string key, string());
                for (const auto& m : v.members)
                    if (m.first == key)
                        return error("the key \"" + key + "\" twice in one object");
                skip_space();
                if (!eat(':')) return error("no ':' after the key \"" + key + "\"");
                FOURDGS_ASSIGN(Json item, value(depth + 1));
                v.members.push_back(JsonMember{std::move(key), std::move(item)});
                return ok_status();
            });
    }

    std::string_view s_;
    std::string_view name_;
    std::string_view refusal_, about_;
    std::size_t i_ = 0;
};

}  // namespace fourdgs::json_text
