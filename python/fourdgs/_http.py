"""Options for URLs (fourdgs.open / fourdgs.stream with http=...): the C ABI's http_* fields of
fourdgs_open_options (capi/fourdgs.h)."""
from __future__ import annotations

import ctypes
from typing import Optional

from . import _capi as C
from ._errors import Error

HTTP_KEYS = ("headers", "ca_bundle", "connect_timeout_ms", "transfer_timeout_ms", "max_attempts",
             "verify_tls")


def apply_http(options: C.OpenOptions, http: Optional[dict]) -> list:
    """Sets options' http_* fields from `http`:

        headers             ["Name: value", ...] sent with every request (a bearer token, a key)
        ca_bundle           a PEM file of certificate authorities to trust instead of the system's
        connect_timeout_ms  per attempt (default 10000)
        transfer_timeout_ms per attempt, the whole request (default 60000)
        max_attempts        per request, retries included (default 4)
        verify_tls          check the server's certificate (default True)

    Returns the ctypes objects the fields point into: keep them until the open call returns (the
    library copies the strings there)."""
    if not http:
        return []
    unknown = set(http) - set(HTTP_KEYS)
    if unknown:
        raise Error(C.INVALID_ARGUMENT, "invalid-option",
                    f"unknown http option(s) {sorted(unknown)}; known: {', '.join(HTTP_KEYS)}")
    keep: list = []
    headers = [C.string_in(h) for h in http.get("headers", ())]
    if headers:
        array = (ctypes.c_char_p * len(headers))(*headers)
        keep += [headers, array]
        options.http_headers = ctypes.cast(array, ctypes.c_void_p).value
        options.http_header_count = len(headers)
    if http.get("ca_bundle") is not None:
        bundle = C.string_in(str(http["ca_bundle"]))
        keep.append(bundle)
        options.http_ca_bundle = bundle
    for key in ("connect_timeout_ms", "transfer_timeout_ms", "max_attempts"):
        if http.get(key) is not None:
            setattr(options, "http_" + key, int(http[key]))
    if "verify_tls" in http:
        options.http_verify_tls = int(bool(http["verify_tls"]))
    return keep
