#!/usr/bin/env python3
"""Checks docs/architecture.md's two recipes against the tree.

Each recipe is followed backwards from a probe that went through it: the newest plain record kind
(Geodetic Anchor, §5.15.5: front matter, keyed, carried by the C ABI, the bindings and the
conformance corpus) and the newest codec (lz4). Every tracked file outside tests/ and docs/ whose
code, not a comment, names the probe is a file the recipe touches. The script prints them beside
the files the recipe's section lists (a `<family>` in a listed path stands for any name) and fails
when the tree names the probe in a file the recipe does not list (the recipe undercounts) or the
recipe lists a file that does not name it (the recipe is stale).

    tests/recipes/recipe_probe.py [SOURCE_DIR]    (default: the checkout this script is in)
"""
import fnmatch
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parents[2])
# Generated or recorded files that name everything: the ABI baseline, the corpus, sample data.
SKIP = re.compile(r"(^|/)tests/|^(docs|conformance/corpus|examples/data)/|\.(md|abi|4dgs|json)$")
COMMENT = re.compile(r"^\s*(//|/\*|\*|#|<!--|\"\"\"|''')")
PROBES = [
    ("How to add a record", "Geodetic Anchor", re.compile(r"geodetic", re.I)),
    ("How to add a codec", "lz4", re.compile(r"lz4", re.I)),
]


def touched(pattern):
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                           check=True).stdout.split()
    out = []
    for name in files:
        if SKIP.search(name):
            continue
        path = ROOT / name
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, IsADirectoryError, FileNotFoundError):
            continue
        # A line that names the probe in code: not a comment line, and not only in a trailing
        # comment or docstring-like text after code.
        for line in text.splitlines():
            if not pattern.search(line) or COMMENT.match(line):
                continue
            code = re.split(r"//|/\*|\s#\s", line, maxsplit=1)[0]
            if pattern.search(code):
                out.append(name)
                break
    return sorted(out)


def listed(section):
    """The paths the numbered steps of the section name (the prose around them names files that
    need no change, and tests and docs, which this probe does not follow)."""
    doc = (ROOT / "docs/architecture.md").read_text(encoding="utf-8")
    body = doc.split("\n## " + section + "\n", 1)[1].split("\n## ", 1)[0]
    steps, inside = [], False
    for line in body.splitlines():
        if re.match(r"^\d+\. ", line):
            inside = True
        elif not line.startswith("   "):
            inside = False
        if inside:
            steps.append(line)
    paths = set()
    for tick in re.findall(r"`([^`\s]+)`", "\n".join(steps)):
        if "/" in tick or re.search(r"\.(txt|cmake|sh|c|h|cpp|hpp|py|js|cs|in)$", tick):
            paths.add(tick)
    return sorted(paths)


def main():
    failed = False
    for section, probe, pattern in PROBES:
        files = touched(pattern)
        recipe = listed(section)
        globs = [re.sub(r"<[^>]+>", "*", p) for p in recipe]
        under = [f for f in files if not any(fnmatch.fnmatch(f, g) for g in globs)]
        stale = [p for p, g in zip(recipe, globs)
                 if (ROOT / p).exists() or "*" in g
                 if not any(fnmatch.fnmatch(f, g) for f in files)]
        print(f"== {section} (probe: {probe}): {len(files)} files outside tests/ and docs/")
        for f in files:
            mark = "  NOT IN THE RECIPE" if f in under else ""
            print(f"  {f}{mark}")
        for p in stale:
            print(f"  {p}  IN THE RECIPE, NAMES NO {probe}")
        failed |= bool(under or stale)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
