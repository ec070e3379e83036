#!/usr/bin/env python3
"""Counts the places each step of the read side is written, for issue 44's "each read step
called, not rewritten": a step written once is one place; each other place that does the same
work instead of calling it is a copy.

    tests/layers/count_steps.py SOURCE_DIR [--places]

A place is a function (the nearest definition above the match) in a file of src/ (the public
headers' declarations are not counted) that matches the step's pattern; the step's own definition
is counted too. Patterns are the calls or the refusals that only the step's own work makes (see
STEPS). Where the pattern is the call of a function that does part of the step (fetch_summary, the
summary's fetch; decode_delta_bins, the Delta Chunk's decode), the step is written where that
function is called, so that function's own definition line is not a place (CALLEE). A count, not a
check: no exit status but 0.
"""
import pathlib
import re
import sys

# (the step, the pattern that marks a place doing it, folders or files left out)
STEPS = [
    ("the Footer and tail checked (summary_start, the summary run, summary_crc, what follows)",
     r"\bcheck_summary_start\(|\bcheck_trailing_magic\(|\bcheck_after_footer\(|kFooterNotLast"
     r"|\bcompare_summary_crc\(|\.check_start\(",
     ()),
    ("the summary fetched whole and walked", r"\bfetch_summary\(", ()),
    ("a chunk's SH band records parsed and gathered", r"\bparse_sh_band\(", ("include/fourdgs/records/",)),
    # By hand (its refusal id), or through the registry's by_key_in_chunk rule (find_in_chunk's
    # call of duplicate_in_chunk, record_keying.hpp): a path that finds a band through
    # find_in_chunk calls the step, it does not write it.
    ("a duplicated SH band refused", r"kDuplicateShBand|\bduplicate_in_chunk\(",
     ("include/fourdgs/records/", "include/fourdgs/refusals.hpp")),
    ("Chunk vs Delta Chunk: the parser chosen", r"\bparse_delta_chunk\(", ("include/fourdgs/records/",)),
    ("Chunk vs Delta Chunk: the decoder chosen", r"\bdecode_delta_bins\(", ()),
    ("Chunk vs Delta Chunk: the framing noted", r"\?\s*(FramedChunk::)?of\([\w.]+, \*[\w.]+chunk\)|FramedChunk::of\(r, \*[cd]\)", ()),
    ("an index entry's ranges inside the file", r"kIndexOutOfRange", ("include/fourdgs/refusals.hpp", "src/read/scene_front_ends.cpp")),
    ("the §11.1 tiling of state chunks", r"would not tile the clock|TimelineTiling::next\(", ()),
    ("is this a keyframe-delta file (a Header read to tell)", r"^\s*(return header\.ok\(\)|builder\.scene\(\)\.header)\S* ?.*temporal_model == kModelKeyframeDelta;$", ()),
    ("a Delta Chunk outside a keyframe-delta file refused", r"kDeltaChunkInGaussianBirth",
     ("include/fourdgs/refusals.hpp",)),
    ("the trailing magic where a record should start (missing-footer)", r"kMissingFooter",
     ("include/fourdgs/refusals.hpp",)),
    ("an index entry named among the chunks walked and checked against its chunk",
     r"\bnamed_?\.name\(|(?<!::)\bname\(seen, e, at\)", ()),
]
# Steps whose pattern is the call of one function: the function named, whose definition line is
# not a place of the step (its callers are).
CALLEE = {
    "the summary fetched whole and walked": "fetch_summary",
    "Chunk vs Delta Chunk: the decoder chosen": "decode_delta_bins",
    "a duplicated SH band refused": "duplicate_in_chunk",
}
# A function's first line: a type and a name at column 0, or a member defined inside a struct
# (four spaces in), not a statement.
DEFINITION = re.compile(r"^(    )?(?!return\b|if\b|for\b|while\b|switch\b|else\b|case\b)"
                        r"[A-Za-z_][\w:<>,&\* ]*[ &\*][\w:~]+\(")


def places(root, pattern, leave_out, callee=None):
    rx = re.compile(pattern)
    found = []
    files = sorted(p for d in ("src", "include/fourdgs") for p in (root / d).rglob("*.[ch]pp"))
    for path in files:
        rel = path.relative_to(root).as_posix()
        if path.suffix == ".hpp" and rel.startswith("include/"):
            continue  # declarations; a header's inline step is in src/ or records/
        if any(rel.startswith(x) for x in leave_out):
            continue
        lines = path.read_text(encoding="utf-8").split("\n")
        for i, line in enumerate(lines):
            if not rx.search(line) or line.lstrip().startswith("//"):
                continue
            if (callee and DEFINITION.match(line) and not line.rstrip().endswith(";")
                    and re.sub(r"\(.*", "", line).split()[-1] == callee):
                continue  # the callee's own definition, not a place that calls it
            fn = "?"
            for j in range(i, -1, -1):
                if (DEFINITION.match(lines[j]) and not lines[j].startswith(("#", "//"))
                        and not lines[j].rstrip().endswith(";")):
                    fn = re.sub(r"\(.*", "", lines[j]).split()[-1]
                    break
            if (rel, fn) not in found:
                found.append((rel, fn))
    return found


def main():
    root = pathlib.Path(sys.argv[1])
    show = "--places" in sys.argv
    for name, pattern, leave_out in STEPS:
        got = places(root, pattern, leave_out, CALLEE.get(name))
        print(f"{len(got):3d}  {name}")
        if show:
            for rel, fn in got:
                print(f"       {rel}: {fn}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
