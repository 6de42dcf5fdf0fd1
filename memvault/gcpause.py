"""Pausing the cyclic garbage collector around work that builds many objects and no cycles.

A full check, an index rebuild, building a recorded state and a time-travel query each
allocate up to millions of small objects that are freed together at the end (or stay cached).
The cyclic collector's passes over them (each new generation rescans what is alive) cost
about a tenth of the work and find nothing to free. Reference counting still frees
everything as usual; only the cycle search waits until the work returns.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def no_gc() -> Iterator[None]:
    """`with no_gc():` or `@no_gc()`: the collector is off inside, back as it was after
    (a nested pause leaves it off until the outermost one ends)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
