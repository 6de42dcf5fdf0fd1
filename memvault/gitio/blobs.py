"""Object contents by name through one `git cat-file --batch` (names: blob ids, `:path` for
the staged version of a path, `REV:path`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from memvault.gitio.run import encode, run_git


def read_batch(cwd: Path, names: Sequence[str]) -> list[bytes | None]:
    """The content of each named blob, in order; None where git has no such blob."""
    if not names:
        return []
    data = run_git(["cat-file", "--batch"], cwd, input=encode("".join(f"{n}\n" for n in names))).raw
    return parse_batch(data, len(names))


def parse_batch(data: bytes, count: int) -> list[bytes | None]:
    """`count` answers of `git cat-file --batch`: "<id> blob <size>\\n<bytes>\\n", or a
    one-line "<name> missing" (or "ambiguous"); anything but a blob is None."""
    out: list[bytes | None] = []
    pos = 0
    for _ in range(count):
        nl = data.index(b"\n", pos)
        header = data[pos:nl].split()
        if len(header) != 3:
            out.append(None)
            pos = nl + 1
            continue
        size = int(header[2])
        out.append(data[nl + 1 : nl + 1 + size] if header[1] == b"blob" else None)
        pos = nl + 1 + size + 1
    return out
