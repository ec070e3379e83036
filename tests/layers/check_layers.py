#!/usr/bin/env python3
"""Checks that the core library includes down its stack of layers only.

The core's sources live in one folder per layer under src/, and CMakeLists.txt lists the folders
from the bottom up (FOURDGS_LAYERS, passed here in that order). A file may include the headers of
its own folder and of folders before it, never of one after it, so no two folders include each
other. A public header under include/fourdgs/ belongs to the layer whose folder holds the source
that implements it (decode.hpp: src/decode/decode.cpp); the few with no source of their own are
placed in OWN below. src/headers.cpp, which includes every public header, sits above them all.
Files placed in no layer (a new folder, a source directly in src/, a public header in no layer)
fail too, so the table stays whole.

No side doors: the plumbing under include/fourdgs/detail/ (namespace fourdgs::detail) is not
API, so no public header includes it (a reader holds such a type behind a pointer, declared
forward) and the tool and the C ABI (src/cli/, capi/) include public headers only: neither a
detail header nor a header of a layer's folder under src/. The library's own sources and the
tests may include those.

    tests/layers/check_layers.py SOURCE_DIR LAYER... (bottom first)

Inside a layer the modules (a file's stem: a header and its source are one module) include
each other in one direction too: an include cycle between two modules of one folder (the
indexed reader's source including the keyframe-delta header that includes the indexed reader's)
fails, as an include up the stack does.

Prints each include that runs up the stack, each cycle, and exits 1 if there is one.
"""
import pathlib
import re
import sys

# Public headers with no source file of their own, by layer (names without .hpp; records/ is a
# folder of the format layer).
OWN = {
    "platform": {"export", "error", "refusals", "version", "text", "quantize", "config",
                 "findings"},
    "format": {"wire", "records"},
    "scene": {"scene", "pose", "reader_options"},
    "write": {"writer_types"},
}
# Include cycles between modules of one folder that were there when the rule came, to be cut in
# their folders; the list may only shrink, and it is empty: the last three were cut (format's
# record log, streams' codecs, write's types).
OPEN_CYCLES = set()
TOP = "the whole API"  # src/headers.cpp and include/fourdgs/fourdgs.hpp
# Folders of src/ that are not layers of the core: the tools library, the tool, CMake templates.
OUTSIDE = {"tools", "cli", "cmake"}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
ANY_INCLUDE = re.compile(r'^\s*#\s*include\s+[<"]([^>"]+)[>"]', re.M)


def main():
    root = pathlib.Path(sys.argv[1])
    order = sys.argv[2:] + [TOP]
    src, inc = root / "src", root / "include" / "fourdgs"
    problems = []

    def public_layer(rel):
        """The layer of include/fourdgs/<rel>, or None for the tools library's headers."""
        if rel.startswith("tools/") or rel == "tools.hpp":
            return None
        if rel == "fourdgs.hpp":
            return TOP
        stem = pathlib.PurePosixPath(rel).stem
        if rel.startswith("records/"):
            stem = "records"
        for layer in order[:-1]:
            if (src / layer / (stem + ".cpp")).exists():
                return layer
        for layer, names in OWN.items():
            if stem in names:
                return layer
        problems.append(f"include/fourdgs/{rel}: in no layer (add its source to a layer "
                        "folder, or its name to OWN in tests/layers/check_layers.py)")
        return TOP

    files = []  # (path, its layer)
    for path in sorted(src.iterdir()):
        if path.is_dir():
            if path.name in OUTSIDE:
                continue
            if path.name not in order:
                problems.append(f"src/{path.name}/: a folder that is not in FOURDGS_LAYERS")
                continue
            files += [(f, path.name) for f in sorted(path.glob("*.[ch]pp"))]
        elif path.name == "headers.cpp":
            files.append((path, TOP))
        elif path.suffix in (".cpp", ".hpp"):
            problems.append(f"src/{path.name}: directly in src/, in no layer folder")
    for path in sorted(inc.rglob("*.hpp")):
        rel = path.relative_to(inc).as_posix()
        layer = public_layer(rel)
        if layer is not None:
            files.append((path, layer))

    up = []
    modules = {}  # layer -> module -> the modules of that layer it includes
    for path, layer in files:
        name = path.relative_to(root).as_posix()
        for target in INCLUDE.findall(path.read_text(encoding="utf-8")):
            if target.startswith("fourdgs/"):
                to = public_layer(target[len("fourdgs/"):])
                if to is None:
                    up.append(f"{name}: includes the tools library's {target}")
                    continue
            elif "/" in target:
                to = target.split("/", 1)[0]
                if to not in order or not (src / target).exists():
                    problems.append(f"{name}: includes {target}, in no layer folder")
                    continue
            elif (path.parent / target).exists():
                to = layer
            else:
                problems.append(f"{name}: includes {target}, which is not in its own folder "
                                "(name another layer's header by its folder: \"io/x.hpp\")")
                continue
            if order.index(to) > order.index(layer):
                up.append(f"{name} ({layer}): includes {target} ({to}), up the stack")
            elif to == layer and path.stem != pathlib.PurePosixPath(target).stem:
                graph = modules.setdefault(layer, {})
                graph.setdefault(path.stem, set()).add(pathlib.PurePosixPath(target).stem)
    cycles, open_seen = [], set()
    for layer, graph in sorted(modules.items()):
        for group in find_cycles(through_glue(graph, src / layer)):
            key = (layer, tuple(group))
            if key in OPEN_CYCLES:
                open_seen.add(key)
            else:
                cycles.append(f"src/{layer}/: modules include each other: {', '.join(group)}")
    for layer, group in sorted(OPEN_CYCLES - open_seen):
        cycles.append(f"src/{layer}/: {', '.join(group)} no longer include each other: take "
                      "them off OPEN_CYCLES in tests/layers/check_layers.py")

    doors = []
    public = [p for p in sorted(inc.rglob("*.hpp")) if "detail" not in p.relative_to(inc).parts]
    api_only = [p for d in (src / "cli", root / "capi") for p in sorted(d.rglob("*"))
                if p.suffix in (".cpp", ".hpp", ".c", ".h")]
    for path in public + api_only:
        name = path.relative_to(root).as_posix()
        for target in INCLUDE.findall(path.read_text(encoding="utf-8")):
            if target.startswith("fourdgs/detail/"):
                doors.append(f"{name}: includes {target}, which is not API")
    # The tool and the C ABI include the library's public headers only: no header of a layer's
    # folder under src/ (by its path, or by its bare name through an include directory), only
    # their own folder's and the public ones (quoted or bracketed).
    internal = {p.relative_to(src).as_posix() for p in src.rglob("*.hpp")}
    internal |= {pathlib.PurePosixPath(n).name for n in internal}
    for path in api_only:
        name = path.relative_to(root).as_posix()
        for target in ANY_INCLUDE.findall(path.read_text(encoding="utf-8")):
            if (path.parent / target).exists() or target.startswith("fourdgs/"):
                continue
            if target in internal or target.startswith("src/"):
                doors.append(f"{name}: includes {target}, a library-internal header (src/)")

    for line in problems + up + cycles + doors:
        print(line)
    print(f"{len(files)} files in {len(order) - 1} layers ({' < '.join(order[:-1])}): "
          f"{len(up)} includes up the stack, {len(cycles)} include cycles inside a layer "
          f"({len(open_seen)} open), "
          f"{len(problems)} files out of place")
    print(f"{len(public)} public headers, {len(api_only)} files of src/cli and capi: "
          f"{len(doors)} side doors (a detail/ header, or a src/ header in src/cli or capi)")
    return 1 if problems or up or cycles or doors else 0


def through_glue(graph, folder):
    """The graph over the modules that have a source (a .cpp) in `folder`: an internal header
    with none of its own (validator.hpp, the validator's passes' shared class) is glue between
    sources, so an include of it stands for the includes it makes, followed through."""
    def has_source(m):
        return (folder / (m + ".cpp")).exists()

    def reach(m, seen):
        for n in graph.get(m, ()):
            if n in seen:
                continue
            seen.add(n)
            if not has_source(n):
                reach(n, seen)
        return seen

    return {m: {n for n in reach(m, set()) if has_source(n) and n != m}
            for m in graph if has_source(m)}


def find_cycles(graph):
    """One cycle per strongly connected group of modules (Tarjan), each as the path round it."""
    index, low, stack, on, groups = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return groups


if __name__ == "__main__":
    sys.exit(main())
