// A tools reader's refusal of a file's contents, with the file's path before its message (the
// refusal and the offset unchanged). Internal to the tools library: the PLY and the web
// viewers' readers (ply.cpp, splat_formats.cpp) say which file of a sequence was refused.
#pragma once

#include <string>
#include <utility>

#include "fourdgs/error.hpp"

namespace fourdgs::detail {

template <class T>
Result<T> with_path(Result<T> r, const std::string& path) {
    if (r.ok()) return r;
    Error e = std::move(r).error();
    e.message = path + ": " + e.message;
    return e;
}

}  // namespace fourdgs::detail
