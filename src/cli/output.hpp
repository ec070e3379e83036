// Output helpers of the `4dgs` tool: a small JSON writer, a progress bar on stderr, PNG files.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <fourdgs/tools/preview.hpp>

namespace fourdgs {
struct Error;
}

namespace cli {

// The tool's exit statuses (main.cpp's list): success, the file was refused, valid with warnings
// (validate), it cannot run.
inline constexpr int kExitOk = 0, kExitRefused = 1, kExitWarnings = 2, kExitCannotRun = 3;

// Prints a refusal from the library on stderr ("4dgs: refused: <refusal>: <message>") and
// returns its exit status: kExitCannotRun for an io error, else kExitRefused.
int exit_refused(const fourdgs::Error& e);

// Builds one JSON document by appending; keys and commas are placed by the writer.
class Json {
public:
    Json& begin_object(std::string_view key = {});
    Json& end_object();
    Json& begin_array(std::string_view key = {});
    Json& end_array();
    Json& str(std::string_view key, std::string_view value);
    Json& num(std::string_view key, double value);  // non-finite values become strings
    Json& num(std::string_view key, std::uint64_t value);
    Json& num(std::string_view key, std::int64_t value);
    Json& num(std::string_view key, int value) { return num(key, std::int64_t{value}); }
    Json& num(std::string_view key, unsigned value) { return num(key, std::uint64_t{value}); }
    Json& boolean(std::string_view key, bool value);
    Json& null(std::string_view key);
    const std::string& text() const { return out_; }

private:
    void key(std::string_view k);
    Json& value(std::string_view k, std::string_view text);
    Json& open(std::string_view k, char bracket);
    Json& close(char bracket);
    std::string out_;
    std::vector<bool> first_{true};
};

// A one-line progress bar on stderr, drawn only when stderr is a terminal and not --quiet.
class Progress {
public:
    Progress(std::string label, bool quiet);
    ~Progress();
    void update(std::uint64_t done, std::uint64_t total);
    void finish();

private:
    std::string label_;
    bool enabled_;
    int last_permille_ = -1;
    bool drawn_ = false;
};

// Writes `image` as a PNG. Returns an error message, or "" on success.
std::string write_png(const std::string& path, const fourdgs::Image& image);

}  // namespace cli
