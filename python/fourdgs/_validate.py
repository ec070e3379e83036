"""fourdgs.validate: every problem in a file, not just the first (fourdgs/validate.hpp)."""
from __future__ import annotations

import ctypes
import os
from typing import Union

from . import _capi as C
from ._errors import NO_OFFSET
from ._scene import _is_url
from ._types import Finding, Validation


def validate(source: Union[str, "os.PathLike[str]", bytes, bytearray, memoryview]) -> Validation:
    """Runs the validator over a file (a path, an http(s) URL, or its bytes) and returns every
    finding.

    A file full of errors is a result, not an exception: `valid` is False and `findings` names
    each problem (severity, rule, field, value, spec section, message, byte offset). Raises
    Error only when the bytes cannot be read at all (io)."""
    lib = C.lib()
    handle = C.vp()
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
        C.check(lib.fourdgs_validate_memory(data, len(data), None, ctypes.byref(handle)))
    elif _is_url(source):
        url = C.string_in(source)
        C.check(lib.fourdgs_validate_url(url, len(url), None, ctypes.byref(handle)))
    else:
        p = os.fsencode(source)
        C.check(lib.fourdgs_validate_file(p, len(p), None, ctypes.byref(handle)))
    try:
        s = C.ValidationSummary()
        C.check(lib.fourdgs_validation_summary_get(handle, ctypes.byref(s)))
        findings = []
        for i in range(s.finding_count):
            f = C.FindingInfo()
            C.check(lib.fourdgs_validation_finding(handle, i, ctypes.byref(f)))
            severity = lib.fourdgs_enum_name(C.ENUM_SEVERITY, f.severity).decode()
            findings.append(Finding(severity, f.rule.text(),
                                    f.field.text(), f.value.text(), f.section.text(),
                                    f.message.text(), None if f.offset == NO_OFFSET else int(f.offset)))
        return Validation(bool(s.valid), int(s.errors), int(s.warnings), int(s.file_size),
                          int(s.records), int(s.chunks), bool(s.truncated),
                          bool(s.findings_capped), findings)
    finally:
        lib.fourdgs_validation_free(handle)
