"""Numpy arrays over memory the C library lends, without copying.

A decoded block (fourdgs_block) or an evaluated frame (fourdgs_frame) owns its columns; the C
ABI lends them until the handle is freed. Here one :class:`Lender` owns one such handle and
frees it when the last reference goes. Each array is made from a small :class:`LentColumn` that
exposes the column through ``__array_interface__`` and holds the lender, so::

    array.base              -> LentColumn
    array.base.lender       -> Lender (holds the C handle)

and the handle lives exactly as long as some array (or the State / Frame object) that uses it.
The arrays are read-only: the memory is the library's. ``numpy.array(a)`` gives a private,
writable copy.
"""
from __future__ import annotations

from typing import Callable, Tuple

import numpy as np


class Lender:
    """Owns one C handle that lends memory; frees it when garbage-collected."""

    __slots__ = ("handle", "_free", "kind", "__weakref__")

    def __init__(self, handle: int, free: Callable[[int], None], kind: str):
        self.handle = handle
        self._free = free
        self.kind = kind

    def __del__(self):
        handle, self.handle = self.handle, None
        if handle:
            self._free(handle)

    def __repr__(self) -> str:
        return f"<fourdgs lender of a {self.kind} at 0x{self.handle or 0:x}>"


class LentColumn:
    """One lent column: numpy reads it through __array_interface__ and keeps it as the base."""

    __slots__ = ("__array_interface__", "lender")

    def __init__(self, lender: Lender, address: int, shape: Tuple[int, ...], typestr: str):
        self.lender = lender
        self.__array_interface__ = {"version": 3, "shape": shape, "typestr": typestr,
                                    "data": (address, True)}


def lend(lender: Lender, address: int, shape: Tuple[int, ...], dtype: str) -> np.ndarray:
    """A read-only array over `address` (borrowed from `lender`), or an empty one when there is
    nothing to lend (no rows, or a column the block does not carry)."""
    dt = np.dtype(dtype)
    if not address or 0 in shape:
        empty = np.zeros(shape, dt)
        empty.flags.writeable = False
        return empty
    return np.asarray(LentColumn(lender, address, shape, dt.str))
