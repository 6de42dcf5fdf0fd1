"""Small SQLite helpers shared by the derived stores (index, access counts, history caches)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TypeVar

T = TypeVar("T")

# SQLite limits the number of ? parameters in one statement (999 in older builds).
CHUNK = 500


def in_chunks(items: Sequence[T], size: int = CHUNK) -> Iterator[tuple[list[T], str]]:
    """`items` in slices for `... IN (?, ?, ...)` queries: (slice, its placeholder list)."""
    for start in range(0, len(items), size):
        chunk = list(items[start : start + size])
        yield chunk, ",".join("?" * len(chunk))
