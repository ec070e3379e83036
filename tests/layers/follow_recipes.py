#!/usr/bin/env python3
"""Follows docs/architecture.md's two recipes forwards, with a probe record and a probe codec.

    tests/layers/follow_recipes.py SOURCE_DIR                  check (ctest)
    tests/layers/follow_recipes.py SOURCE_DIR --follow BUILD   follow on a scratch copy

BUILD is a build folder with compile_commands.json (CMAKE_EXPORT_COMPILE_COMMANDS=ON) or such a
file (`ninja -C build -t compdb > cc.json` makes one from any Ninja build).

Each recipe is written below as its steps: for every step, the file it edits, the anchor the edit
goes beside (a line, found exactly once) and the edit itself — the least a new record kind
("Probe Record", opcode 0x13) or a new codec ("probe", wire byte 0x7F) needs at that place.

Check (fast, the ctest): every file a step names exists and holds its anchor exactly once (a
new file: its folder exists), and the files the steps touch are exactly the files the recipe's
numbered items list (a `<family>` there stands for any name). So a recipe that names a file the
tree no longer has, an edit whose place has moved, or a step the recipe forgot, fails.

Follow: copies the tracked files (git ls-files) into a temporary folder, applies every step,
then compiles every C/C++ file the record recipe touched (and src/headers.cpp, which includes
every public header, and each C ABI source) with -fsyntax-only and the flags of BUILD's
compile_commands.json, and prints the files it had to touch. Building the whole scratch tree
would take the length of a build; compiling the touched files proves the steps are enough for
the compiler, not that the probe reads back (the recipe's tests do that). The codec probe edits
the build files too but is compiled only in src/streams/codec.cpp: its library is a stand-in.
The output of a full run is in docs/architecture.md ("How to add a record").
"""
import fnmatch
import importlib.util
import json
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

NEW = None  # a step that creates its file

PROBE_FAMILY = '''// The probe record of tests/layers/follow_recipes.py (never committed).
#pragma once

#include "fourdgs/export.hpp"
#include "fourdgs/records/common.hpp"

FOURDGS_PUBLIC_BEGIN
namespace fourdgs {

struct ProbeRecord {
    std::string name;
    friend bool operator==(const ProbeRecord&, const ProbeRecord&) = default;
};

inline Result<ProbeRecord> parse_probe_record(const RecordView& r) {
    FOURDGS_TRY(detail::expect_opcode(r, op::probe_record));
    Cursor c(r.content, r.content_offset(), record_name(op::probe_record));
    ProbeRecord p;
    FOURDGS_ASSIGN(p.name, c.string("name"));
    return p;
}

inline void write(ByteWriter& out, const ProbeRecord& p) {
    std::size_t at = detail::begin_record(out, op::probe_record);
    out.string(p.name);
    detail::end_record(out, at);
}

}  // namespace fourdgs
FOURDGS_PUBLIC_END
'''

# (recipe item, file, anchor line (a regex), where: "after" / "before" / "replace", the text)
RECORD = [
    (1, "include/fourdgs/wire.hpp", r"object_track = 0x25;", "replace",
     "                              object_track = 0x25, probe_record = 0x13;"),
    (2, "include/fourdgs/records/names.hpp", r'case op::object_track: return "Object Track";',
     "after", '        case op::probe_record: return "Probe Record";'),
    (3, "include/fourdgs/records/probe.hpp", NEW, NEW, PROBE_FAMILY),
    (3, "include/fourdgs/records.hpp", r'#include "fourdgs/records/objects.hpp"', "after",
     '#include "fourdgs/records/probe.hpp"'),
    (4, "include/fourdgs/records/registry.hpp", r'#include "fourdgs/records/objects.hpp"',
     "after", '#include "fourdgs/records/probe.hpp"'),
    (4, "include/fourdgs/records/registry.hpp", r"^    row\(op::coordinate_frame,", "before",
     '    row(op::probe_record, "§5.19", front, unkeyed, "", "", "name",\n'
     "        string_fields<&parse_probe_record, kName, &ProbeRecord::name>, kReadBack),"),
    (6, "include/fourdgs/scene.hpp", r"std::vector<GeodeticAnchor> geodetic_anchors;", "after",
     "    std::vector<ProbeRecord> probe_records;"),
    (6, "include/fourdgs/extras.hpp",
     r"std::vector<std::uint64_t> coordinate_frames, sensors, rig_trajectories, geodetic_anchors,",
     "after", "        probe_records,"),
    (7, "src/scene/front_matter.cpp", r"^        case op::geodetic_anchor:", "before",
     "        case op::probe_record:\n"
     "            keep(parse_probe_record(r), scene_.probe_records, offsets_.probe_records,\n"
     "                 r.offset);\n"
     "            break;"),
    (8, "src/write/content_records.cpp", r"for \(const GeodeticAnchor& g : h.geodetic_anchors\)",
     "before", "    for (const ProbeRecord& p : h.probe_records)\n"
     "        FOURDGS_TRY(write_extra<&parse_probe_record>(w, p));"),
    (9, "capi/fourdgs_scene.h", r"^} fourdgs_geodetic_anchor;", "after",
     "typedef struct fourdgs_probe_record {\n    size_t struct_size;\n"
     "    fourdgs_string name;\n} fourdgs_probe_record;\n"
     "FOURDGS_CAPI fourdgs_status fourdgs_reader_probe_record(const fourdgs_reader* reader,\n"
     "                                                        size_t index,\n"
     "                                                        fourdgs_probe_record* out);"),
    (9, "capi/fourdgs_scene.h", r"^} fourdgs_scene_info;", "before",
     "    uint64_t probe_record_count;"),
    (9, "capi/fourdgs_write.h", r"^FOURDGS_CAPI fourdgs_status fourdgs_writer_add_geodetic_anchor",
     "before", "FOURDGS_CAPI fourdgs_status fourdgs_writer_add_probe_record(\n"
     "    fourdgs_writer* writer, const fourdgs_probe_record* record);"),
    (9, "capi/fourdgs_c_internal.hpp", r"^FOURDGS_C_STRUCT_NAME\(fourdgs_geodetic_anchor\);",
     "after", "FOURDGS_C_STRUCT_NAME(fourdgs_probe_record);"),
    (9, "capi/scene_info.cpp", r"i.geodetic_anchor_count = sc.geodetic_anchors.size\(\);", "after",
     "    i.probe_record_count = sc.probe_records.size();"),
    (9, "capi/extras.cpp", r"^fourdgs_status fourdgs_reader_geodetic_anchor\(", "before",
     "fourdgs_status fourdgs_reader_probe_record(const fourdgs_reader* reader, size_t index,\n"
     "                                          fourdgs_probe_record* out) {\n"
     "    return get_from(reader, scene_element(&SceneInfo::probe_records, index, \"probe\"),\n"
     "                    [](const ProbeRecord& p) noexcept {\n"
     "                        fourdgs_probe_record o{};\n"
     "                        o.name = str(p.name);\n"
     "                        return o;\n"
     "                    },\n"
     "                    out);\n}\n"),
    (9, "capi/extras.cpp", r"^fourdgs_status fourdgs_writer_add_geodetic_anchor\(", "before",
     "fourdgs_status fourdgs_writer_add_probe_record(fourdgs_writer* writer,\n"
     "                                               const fourdgs_probe_record* record) {\n"
     "    return guarded([&] {\n"
     "        FOURDGS_C_REQUIRE(writer);\n        FOURDGS_C_REQUIRE(record);\n"
     "        fourdgs_probe_record in{};\n"
     "        if (auto s = read_in(record, in); s != FOURDGS_OK) return s;\n"
     "        ProbeRecord p;\n"
     "        if (auto s = text_in(in.name.data, in.name.size, \"name\", p.name);\n"
     "            s != FOURDGS_OK)\n"
     "            return s;\n"
     "        writer->header.probe_records.push_back(std::move(p));\n"
     "        return FOURDGS_OK;\n    });\n}\n"),
    (9, "capi/abi/fourdgs-c.abignore", r"geodetic_anchor\|", "replace-text",
     ("geodetic_anchor|", "geodetic_anchor|probe_record|")),
    (10, "wasm/CMakeLists.txt", r"fourdgs_reader_geodetic_anchor ", "replace-text",
     ("fourdgs_reader_geodetic_anchor ",
      "fourdgs_reader_geodetic_anchor fourdgs_reader_probe_record ")),
    (10, "wasm/layout.c", r"BEGIN\(fourdgs_geodetic_anchor\)", "before",
     "    BEGIN(fourdgs_probe_record) FIELD(struct_size) FIELD(name) END()"),
    (11, "src/cli/inspect.cpp", r'\.num\("geodetic_anchors", ', "after",
     '        .num("probe_records", std::uint64_t{s.probe_records.size()})'),
    (12, "conformance/generator.cpp",
     r'h.geodetic_anchors = \{GeodeticAnchor\{"enu", ', "after",
     '        h.probe_records = {ProbeRecord{"probe"}};'),
    (12, "conformance/canonical.cpp", r'j.set\("geodetic_anchors", anchors\);', "after",
     '    j.set("probe_records", integer(s.probe_records.size()));'),
]

CODEC = [
    (1, "include/fourdgs/codec.hpp", r"^inline constexpr std::uint8_t lz4 = 0x80;", "after",
     "inline constexpr std::uint8_t probe = 0x81;"),
    (2, "src/streams/codec.cpp", r'^\s*\{codec::lz4, "lz4",', "after", None),  # codec_row()
    # The four cases: the probe stands in for lz4 (a real codec calls its library here).
    (2, "src/streams/codec.cpp", r"^\s*case codec::lz4:", "before-each",
     "        case codec::probe:"),
    (3, "CMakeLists.txt", r"^pkg_check_modules\(LZ4 REQUIRED IMPORTED_TARGET liblz4\)", "after",
     "pkg_check_modules(PROBE REQUIRED IMPORTED_TARGET libprobe)"),
    (3, "src/cmake/fourdgs.pc.in", r"^Requires.private: .*liblz4", "replace-text",
     ("liblz4", "liblz4 libprobe")),
    (3, "src/cmake/fourdgsConfig.cmake.in",
     r"^pkg_check_modules\(FOURDGS_LZ4 REQUIRED IMPORTED_TARGET liblz4\)", "after",
     "pkg_check_modules(FOURDGS_PROBE REQUIRED IMPORTED_TARGET libprobe)"),
    (3, ".ci/install-deps", r"liblz4-dev", "replace-text",
     ("liblz4-dev", "liblz4-dev libprobe-dev")),
    (4, "wasm/fetch-codec-sources.sh", r'"lz4=1\.9\.4-1 lz4-1\.9\.4"', "after",
     '         "probe=1.0-1 probe-1.0"'),
    (4, "wasm/dependencies.cmake", r"^add_library\(fourdgs_wasm_lz4 STATIC", "before",
     "add_library(fourdgs_wasm_probe STATIC ${FOURDGS_CODEC_SOURCES}/probe-1.0/probe.c)"),
    (5, "conformance/generator.cpp", r'std::pair\{codec::lz4, "lz4"\}', "replace-text",
     ('std::pair{codec::lz4, "lz4"}',
      'std::pair{codec::lz4, "lz4"}, std::pair{codec::probe, "probe"}')),
    (6, "python/fourdgs/_writer.py", r'codec \("deflate", "zstd", "lz4"\)', "replace-text",
     ('"lz4")', '"lz4", "probe")')),
]

SECTIONS = {"record": "How to add a record", "codec": "How to add a codec"}
# What the probe record needs not: a refusal of its own, a rule across records, a key.
OPTIONAL = {"include/fourdgs/refusals.hpp", "src/scene/extras.cpp",
            "src/format/record_keying.hpp"}
# Edited with a new family file (the recipe's `<family>` item says so in words).
WITH_THE_FAMILY = {"include/fourdgs/records.hpp"}


def anchor_at(lines, pattern):
    return [i for i, line in enumerate(lines) if re.search(pattern, line)]


def codec_row(line):
    """The probe's codec_table() row, shaped like lz4's (the line the anchor found)."""
    return line.replace('"lz4"', '"probe"').replace("codec::lz4", "codec::probe")


def check(root):
    problems = []
    for recipe, steps in (("record", RECORD), ("codec", CODEC)):
        for item, path, anchor, where, _ in steps:
            p = root / path
            if anchor is NEW:
                if not p.parent.is_dir():
                    problems.append(f"{recipe} item {item}: {p.parent} is not a folder")
                continue
            if not p.is_file():
                problems.append(f"{recipe} item {item}: {path} does not exist")
                continue
            lines = p.read_text(encoding="utf-8").splitlines()
            n = len(anchor_at(lines, anchor))
            if n != 1 and not (where == "before-each" and n > 0):
                problems.append(f"{recipe} item {item}: {path}: anchor /{anchor}/ found {n} times")
    return problems


def listed(root, section):
    """The paths the section's numbered items name, as tests/recipes/recipe_probe.py reads them
    (the same page read the same way by both checks)."""
    spec = importlib.util.spec_from_file_location("recipe_probe",
                                                  root / "tests/recipes/recipe_probe.py")
    probe = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(probe)
    probe.ROOT = root
    return probe.listed(section)


def compare_with_docs(root):
    """The files the steps touch against the recipe's numbered items (C, C++ and build files;
    the bindings' item lists files this script does not edit)."""
    problems = []
    for recipe, steps in (("record", RECORD), ("codec", CODEC)):
        edited = sorted({path for _, path, _, _, _ in steps})
        globs = [re.sub(r"<[^>]+>", "*", p) for p in listed(root, SECTIONS[recipe])]
        for path in edited:
            if path not in WITH_THE_FAMILY and not any(fnmatch.fnmatch(path, g) for g in globs):
                problems.append(f"{recipe}: the steps edit {path}, the recipe does not list it")
        for g in globs:
            if g.startswith(("js/", "python/fourdgs/_", "python/fourdgs/__", "bindings/")) and \
                    recipe == "record":
                continue  # the bindings' item: not followed here
            if g not in OPTIONAL and not any(fnmatch.fnmatch(path, g) for path in edited):
                problems.append(f"{recipe}: the recipe lists {g}, no step edits it")
    return problems


def apply(root, steps):
    touched = []
    for item, path, anchor, where, text in steps:
        p = root / path
        if anchor is NEW:
            p.write_text(text, encoding="utf-8")
            touched.append(path)
            continue
        lines = p.read_text(encoding="utf-8").split("\n")
        if where == "before-each":
            for at in reversed(anchor_at(lines, anchor)):
                lines.insert(at, text)
            p.write_text("\n".join(lines), encoding="utf-8")
            touched.append(path)
            continue
        [at] = anchor_at(lines, anchor)
        if where == "after":
            lines.insert(at + 1, text if text is not None else codec_row(lines[at]))
        elif where == "before":
            lines.insert(at, text)
        elif where == "replace":
            lines[at] = text
        elif where == "replace-text":
            lines[at] = lines[at].replace(*text)
        p.write_text("\n".join(lines), encoding="utf-8")
        touched.append(path)
    return sorted(set(touched))


def compile_args(entry, src, scratch):
    """The build's command for one file, on the scratch copy, checking syntax only: no object,
    no dependency file (the build's own stay untouched), the C ABI headers from the copy."""
    args = shlex.split(entry["command"]) if "command" in entry else list(entry["arguments"])
    out, skip = [], 0
    for a in args:
        if skip:
            skip -= 1
            continue
        if a in ("-o", "-MT", "-MF", "-MQ"):
            skip = 1
            continue
        if a in ("-c", "-MD", "-MMD") or a.endswith("ccache"):
            continue
        if "capi/include" in a:
            a = f"-I{scratch}/build-include"
        elif entry["directory"] not in a:  # the build's generated files stay the build's
            a = a.replace(str(src), str(scratch))
        out.append(a)
    return out + ["-fsyntax-only"]


def compile_touched(src, scratch, build, files):
    db_path = pathlib.Path(build)
    db_path = db_path / "compile_commands.json" if db_path.is_dir() else db_path
    by_file = {}
    for e in json.loads(db_path.read_text()):
        by_file.setdefault(pathlib.Path(e["directory"], e["file"]).resolve(), e)
    units = [f for f in files if f.endswith((".cpp", ".c"))]
    units += ["src/headers.cpp"] + sorted(
        str(p.relative_to(src)) for p in (src / "capi").glob("*.cpp"))
    failed = 0
    for unit in sorted(set(units)):
        entry = by_file.get((src / unit).resolve())
        if not entry and unit.startswith("wasm/") and shutil.which("emcc"):
            # A program of the WebAssembly build (wasm32: size_t is not uint64_t there).
            entry = {"directory": str(scratch), "file": unit,
                     "arguments": ["emcc", "-std=c11", "-Wall", "-Werror",
                                   f"-I{scratch}/build-include", str(scratch / unit)]}
        if not entry:
            print(f"  {unit}: not in the compilation database (not compiled)")
            continue
        r = subprocess.run(compile_args(entry, src, scratch), cwd=entry["directory"],
                           capture_output=True, text=True)
        print(f"  compiled {unit}: {'ok' if r.returncode == 0 else 'FAILED'}")
        if r.returncode:
            print(r.stderr[-3000:])
            failed += 1
    return failed


def follow(src, build):
    files = subprocess.run(["git", "ls-files"], cwd=src, capture_output=True, text=True,
                           check=True).stdout.split("\n")
    with tempfile.TemporaryDirectory(prefix="follow-recipes-") as tmp:
        scratch = pathlib.Path(tmp)
        for name in filter(None, files):
            if (src / name).is_file() and not (src / name).is_symlink():
                (scratch / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src / name, scratch / name)
        failed = 0
        for recipe, steps in (("record", RECORD), ("codec", CODEC)):
            touched = apply(scratch, steps)
            probe = "Probe Record" if recipe == "record" else "codec probe"
            print(f"== {SECTIONS[recipe]} ({probe}): {len(touched)} files touched")
            for t in touched:
                print(f"  {t}")
        # The C ABI's public headers as the build tree holds them (capi/CMakeLists.txt).
        (scratch / "build-include/fourdgs").mkdir(parents=True)
        for h in (scratch / "capi").glob("fourdgs*.h"):
            shutil.copy2(h, scratch / "build-include/fourdgs" / h.name)
        record_files = sorted({path for _, path, _, _, _ in RECORD})
        failed += compile_touched(src, scratch, build, record_files + ["src/streams/codec.cpp"])
        return failed


def main():
    args = sys.argv[1:]
    root = pathlib.Path(args[0] if args else pathlib.Path(__file__).resolve().parents[2])
    problems = check(root) + compare_with_docs(root)
    for p in problems:
        print(p)
    if problems:
        return 1
    n = {r: len({s[1] for s in steps}) for r, steps in (("record", RECORD), ("codec", CODEC))}
    print(f"recipes: the record's {len(RECORD)} steps edit {n['record']} files, the codec's "
          f"{len(CODEC)} steps {n['codec']}; every anchor found once, every file in the recipe")
    if "--follow" in args:
        build = args[args.index("--follow") + 1]
        return 1 if follow(root.resolve(), build) else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
