"""The bindings spell the format's and the C ABI's enums as the library does: Python's tables are
the library's (fourdgs_enum_name, fourdgs_status_name, fourdgs_sh_coefficient), and neither
package's sources hold a copy of them."""
import ctypes
import pathlib
import re

import numpy as np

import fourdgs
from fourdgs import _capi as C
from fourdgs import _player, _scene

ROOT = pathlib.Path(__file__).resolve().parents[2]


def library_names(which):
    names, value = [], 0
    while True:
        name = C.lib().fourdgs_enum_name(which, value)
        if name is None:
            return tuple(names)
        names.append(name.decode())
        value += 1


def test_the_tables_are_the_librarys():
    cases = [(fourdgs.AXES, C.ENUM_AXIS), (fourdgs.LENGTH_UNITS, C.ENUM_LENGTH_UNIT),
             (fourdgs.CAMERA_MODELS, C.ENUM_CAMERA_MODEL), (_scene.BLOCK_KINDS, C.ENUM_BLOCK_KIND),
             (_player.PLAYBACK_STATES, C.ENUM_PLAYBACK_STATE),
             (_player.LATE_REASONS, C.ENUM_LATE_REASON),
             (_scene.TEMPORAL_MODELS, C.ENUM_TEMPORAL_MODEL)]
    for table, which in cases:
        assert isinstance(table, C.EnumNames)
        assert tuple(table) == library_names(which) and len(table) > 1
    assert fourdgs.AXES.index("-z") == 5 and "metre" in fourdgs.LENGTH_UNITS


def test_error_kinds_are_the_librarys():
    for status in range(12):
        want = C.lib().fourdgs_status_name(status).decode()
        assert fourdgs.Error(status, "r", "m").kind == want
    assert fourdgs.Error(5, "r", "m").kind == "invalid-argument"
    assert fourdgs.Error(99, "r", "m").kind == "unknown"


def test_the_sh_byte_map_is_the_librarys():
    b = np.arange(256, dtype=np.uint8)
    want = np.array([C.lib().fourdgs_sh_coefficient(int(x)) for x in b], np.float32)
    assert np.array_equal(fourdgs.sh_coefficients(b), want)
    assert want[0] == -4.0 and want[255] == 4.0


def test_the_packages_copy_no_spelling():
    # A spelling table written out in either package (a run of the library's names, then more of
    # them: prose naming two of them is not a table) is a copy.
    runs = [("paused", "playing"), ("starting", "queued"), ("+x", "+y"), ("metre", "centimetre"),
            ("pinhole", "brown-conrady"), ("instant", "chunk"), ("error", "warning")]
    sources = list((ROOT / "python" / "fourdgs").glob("*.py")) + list((ROOT / "js" / "src").glob("*.js"))
    for path in sources:
        text = path.read_text(encoding="utf-8")
        for a, b in runs + [("ok", "malformed")]:
            pattern = rf"""["']{re.escape(a)}["']\s*,\s*["']{re.escape(b)}["']\s*,"""
            assert not re.search(pattern, text), f"{path.relative_to(ROOT)} spells {a}, {b}"
        assert "8.0 / 255" not in text and "8 / 255" not in text, path
