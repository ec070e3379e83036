"""The one exception type of the package."""
from __future__ import annotations

from typing import Optional

NO_OFFSET = 2**64 - 1


class Error(Exception):
    """A refusal or failure from fourdgs.

    Every error of the package is this type: the C library's (a file that breaks a rule of the
    format, a truncated file, an I/O failure, a call it refuses) and the Python layer's own (an
    array of the wrong shape, a PLY it cannot read).

    Attributes:
        status: the fourdgs_status number (1 malformed, 2 truncated, 3 unsupported, 4 io,
            5 invalid-argument, 6 limit, 7 out-of-memory, 8 internal, 10 not-found).
        kind: the status's name ("malformed", "truncated", ...), as the library spells it
            (fourdgs_status_name).
        refusal: the stable kebab-case identifier, e.g. "magic-mismatch".
        message: a sentence naming the offending value.
        offset: the byte offset in the file, or None when unknown.
    """

    def __init__(self, status: int, refusal: str, message: str, offset: Optional[int] = None,
                 kind: Optional[str] = None):
        self.status = int(status)
        # `kind` is given only where the library cannot be asked (it was not found).
        if kind is None:
            from . import _capi  # (it raises this type: imported when first needed)
            kind = _capi.status_name(self.status)
        self.kind = kind
        self.refusal = refusal
        self.message = message
        self.offset = offset
        at = "" if offset is None else f" (at byte {offset})"
        super().__init__(f"{self.kind}: {refusal}: {message}{at}")

    def __reduce__(self):
        return (Error, (self.status, self.refusal, self.message, self.offset, self.kind))
