#!/usr/bin/env python3
"""Sizes of the library, the tools and the C ABI: files and functions.

    tests/layers/check_sizes.py SOURCE_DIR [--list N]

Every .cpp/.hpp/.c/.h under src/, include/fourdgs/ and capi/ (not src/cli, the tool, whose
commands are long by nature and which the issue's rule leaves out) is counted in lines: a file
over MAX_FILE_LINES fails. Functions are found with a brace-matching scan (comments, strings and
character literals blanked first): a `{` opened at namespace or class scope whose head — the
text since the last `;`, `{` or `}` at that depth — has a parameter list and is not a class,
struct, union, enum, namespace or an initializer (`= {`). A function's length runs from the first
line of its head to its closing brace; lambdas and local classes count in the function that holds
them. Functions over MAX_FUNCTION_LINES are printed; one fails the check unless it is named in
ALLOWED (table or generated code, each with the reason) or in OPEN, the ones written before the
rule that are still to be shortened (a list that may only shrink: new code stays under the
limit). Files work the same way: one over MAX_FILE_LINES fails unless it is in OPEN_FILES. With
--list N the N longest functions are printed too.

Prints the counts and exits 1 when a file is too long or a function too long is not allowed.
"""
import pathlib
import re
import sys

MAX_FILE_LINES = 1000
MAX_FUNCTION_LINES = 120
# file: {function name: why it may be long}
ALLOWED = {}
# Written before the rule and still over it (issue 44 item 7): to be shortened, never added to.
OPEN: dict = {}
OPEN_FILES: set = set()
ROOTS = ("src", "include/fourdgs", "capi")
LEAVE_OUT = ("src/cli/",)
SUFFIXES = (".cpp", ".hpp", ".c", ".h")

_BLANK = re.compile(r'//[^\n]*|/\*.*?\*/|R"(?P<d>[^(\s]*)\(.*?\)(?P=d)"|"(?:\\.|[^"\\\n])*"|'
                    r"'(?:\\.|[^'\\\n])*'", re.S)
_NOT_FUNCTION = re.compile(r'^(?:template\s*<.*>\s*)?(?:typedef\s+)?'
                           r'(?:class|struct|union|enum|namespace|extern\s+"C")\b', re.S)
_NAME = re.compile(r'((?:[A-Za-z_]\w*\s*::\s*)*~?(?:operator\s*[^\s(]+|[A-Za-z_]\w*))\s*\($')


def blank(text):
    """Comments and literals replaced by spaces, newlines kept (so line numbers stay)."""
    return _BLANK.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def functions(text):
    """(name, first line, last line) of every function defined at namespace or class scope."""
    code = blank(text)
    out = []
    stack = []  # for each open brace: "scope" (namespace/class/extern), "function", "other"
    head_start = 0
    fn_open = None
    line = 1
    for i, ch in enumerate(code):
        if ch == "\n":
            line += 1
        elif ch in ";}{":
            in_scope = all(kind == "scope" for kind in stack)
            if ch == "{":
                head = code[head_start:i]
                kind = "other"
                if in_scope:
                    h = head.strip()
                    h = re.sub(r"^\s*#.*$", "", h, flags=re.M).strip()
                    if _NOT_FUNCTION.match(h) or not h:
                        kind = "scope"
                    elif "(" in h and not re.search(r"=\s*$", h) and \
                            not re.match(r"^[^(]*[^=!<>]=[^=]", h.replace("operator", "")):
                        kind = "function"
                        lead = len(head) - len(head.lstrip())  # blank lines before the head
                        first = line - head.count("\n") + head[:lead].count("\n")
                        params = h[:_paren_of(h)] if _paren_of(h) is not None else h
                        m = _NAME.search(params + "(")
                        fn_open = (m.group(1).replace(" ", "") if m else "?", first, len(stack))
                stack.append(kind)
            elif ch == "}":
                if stack:
                    kind = stack.pop()
                    if kind == "function" and fn_open and fn_open[2] == len(stack):
                        out.append((fn_open[0], fn_open[1], line))
                        fn_open = None
            head_start = i + 1
    return out


def _paren_of(head):
    """The index of the `(` that opens the head's parameter list (the first at depth 0 after the
    name), or None."""
    depth = 0
    for k, ch in enumerate(head):
        if ch in "<[":
            depth += 1
        elif ch in ">]":
            depth = max(0, depth - 1)
        elif ch == "(" and depth == 0:
            return k
    return None


def main():
    root = pathlib.Path(sys.argv[1])
    listing = int(sys.argv[sys.argv.index("--list") + 1]) if "--list" in sys.argv else 0
    files = sorted(p for r in ROOTS for p in (root / r).rglob("*")
                   if p.suffix in SUFFIXES and p.is_file()
                   and not p.relative_to(root).as_posix().startswith(LEAVE_OUT))
    failures, long_files, long_functions, every = [], [], [], []
    for path in files:
        name = path.relative_to(root).as_posix()
        text = path.read_text(encoding="utf-8")
        lines = text.count("\n")
        if lines > MAX_FILE_LINES:
            still_open = name in OPEN_FILES
            long_files.append(f"{name}: {lines} lines (over {MAX_FILE_LINES})" +
                              (" (open: to be split)" if still_open else ""))
            if not still_open:
                failures.append(name)
        for fn, first, last in functions(text):
            n = last - first + 1
            every.append((n, f"{name}:{first}: {fn}"))
            if n > MAX_FUNCTION_LINES:
                allowed = ALLOWED.get(name, {}).get(fn)
                still_open = fn in OPEN.get(name, ())
                long_functions.append(f"{name}:{first}: {fn}: {n} lines" +
                                      (f" (allowed: {allowed})" if allowed else "") +
                                      (" (open: to be shortened)" if still_open else ""))
                if not allowed and not still_open:
                    failures.append(fn)
    found = {(line.split(":")[0], line.split(": ")[1]) for line in long_functions}
    for name, fns in OPEN.items():
        for fn in sorted(fns):
            if (name, fn) not in found:
                print(f"{name}: {fn} is no longer over {MAX_FUNCTION_LINES} lines: "
                      "take it off OPEN")
    for line in long_files + long_functions:
        print(line)
    if listing:
        print(f"the {listing} longest functions:")
        for n, what in sorted(every, reverse=True)[:listing]:
            print(f"  {n:5d}  {what}")
    print(f"{len(files)} files, {len(long_files)} over {MAX_FILE_LINES} lines; {len(every)} "
          f"functions, {len(long_functions)} over {MAX_FUNCTION_LINES} lines"
          f"; {len(failures)} not allowed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
