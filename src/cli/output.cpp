// Output helpers of the `4dgs` tool (output.hpp).
#include "output.hpp"

#include <unistd.h>

#include <cmath>
#include <cstdio>

#include <fmt/core.h>

#include "fourdgs/error.hpp"
#include "fourdgs/text.hpp"

#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb/stb_image_write.h>

namespace cli {

int exit_refused(const fourdgs::Error& e) {
    std::fprintf(stderr, "4dgs: refused: %s\n", e.describe().c_str());
    return e.kind == fourdgs::ErrorKind::io ? kExitCannotRun : kExitRefused;
}

void Json::key(std::string_view k) {
    if (!first_.back()) out_ += ",";
    first_.back() = false;
    if (!k.empty()) out_ += fourdgs::json_quote(k) + ":";
}
Json& Json::open(std::string_view k, char bracket) {
    key(k);
    out_ += bracket;
    first_.push_back(true);
    return *this;
}
Json& Json::close(char bracket) {
    out_ += bracket;
    first_.pop_back();
    return *this;
}
Json& Json::begin_object(std::string_view k) { return open(k, '{'); }
Json& Json::end_object() { return close('}'); }
Json& Json::begin_array(std::string_view k) { return open(k, '['); }
Json& Json::end_array() { return close(']'); }
// Every member or element: the comma and key, then its JSON text.
Json& Json::value(std::string_view k, std::string_view text) {
    key(k);
    out_ += text;
    return *this;
}
Json& Json::str(std::string_view k, std::string_view v) { return value(k, fourdgs::json_quote(v)); }
Json& Json::num(std::string_view k, double v) {
    if (std::isfinite(v)) return value(k, fmt::format("{}", v));
    return value(k, fourdgs::json_quote(std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf")));
}
Json& Json::num(std::string_view k, std::uint64_t v) { return value(k, std::to_string(v)); }
Json& Json::num(std::string_view k, std::int64_t v) { return value(k, std::to_string(v)); }
Json& Json::boolean(std::string_view k, bool v) { return value(k, v ? "true" : "false"); }
Json& Json::null(std::string_view k) { return value(k, "null"); }

Progress::Progress(std::string label, bool quiet)
    : label_(std::move(label)), enabled_(!quiet && ::isatty(2) == 1) {}

Progress::~Progress() { finish(); }

void Progress::update(std::uint64_t done, std::uint64_t total) {
    if (!enabled_ || total == 0) return;
    const int permille = static_cast<int>(std::min<std::uint64_t>(1000, done * 1000 / total));
    if (permille == last_permille_) return;
    last_permille_ = permille;
    constexpr int kWidth = 30;
    const int filled = permille * kWidth / 1000;
    std::string bar(static_cast<std::size_t>(filled), '#');
    bar.append(static_cast<std::size_t>(kWidth - filled), '.');
    std::fprintf(stderr, "\r%s [%s] %5.1f%%", label_.c_str(), bar.c_str(), permille / 10.0);
    std::fflush(stderr);
    drawn_ = true;
}

void Progress::finish() {
    if (drawn_) std::fprintf(stderr, "\r\033[K");
    drawn_ = false;
}

std::string write_png(const std::string& path, const fourdgs::Image& image) {
    if (image.width <= 0 || image.height <= 0 ||
        image.rgba.size() != static_cast<std::size_t>(image.width) * image.height * 4)
        return "the image has no pixels";
    if (stbi_write_png(path.c_str(), image.width, image.height, 4, image.rgba.data(),
                       image.width * 4) == 0)
        return "cannot write " + path;
    return "";
}

}  // namespace cli
