"""The vault's files as the index reads them: stat walks, read-hash-parse, and text-engine documents.

Shared by incremental updates (core.py) and full rebuilds (build.py), below both.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import time
from dataclasses import dataclass
from pathlib import Path

from memvault.entries.model import Event, Problem
from memvault.errors import UnsafePath
from memvault.layout import DEFAULT, Selection, open_file, walk
from memvault.parsed import ParsedVault, parse_bytes
from memvault.search.fields import field_texts, parent_headings
from memvault.search.index.engine import Doc, FileState
from memvault.search.textproc import analyzed

RACY_SECONDS = 2.0  # a file changed this recently may change again within its mtime tick


def relpath(path: str | os.PathLike[str], root: Path) -> str:
    """Vault-relative POSIX path of `path` (relative already, or absolute inside the vault)."""
    p = Path(path)
    if p.is_absolute():
        with contextlib.suppress(ValueError):
            p = p.relative_to(root)
    rel = p.as_posix()
    while rel.startswith("./"):
        rel = rel[2:]
    return rel


def inode(path: Path) -> int | None:
    try:
        return os.stat(path).st_ino
    except OSError:
        return None


def scan(root: Path, skipped: list[Problem] | None = None, selection: Selection = DEFAULT,
         ) -> dict[str, tuple[int, int]]:
    """(size, mtime_ns) of the files `iter_markdown` lists, by relpath (what it skips by the
    layout rule goes to `skipped`)."""
    return {rel: (st.st_size, st.st_mtime_ns) for rel, st in walk(root, skipped, with_stat=True, selection=selection)
            if st}


@dataclass(frozen=True)
class Unchanged:
    """A file read again whose bytes are the version the index holds (not parsed again)."""

    state: FileState


def read_parsed(vault: ParsedVault, rel: str) -> tuple[FileState, list[Event], list[Problem]] | Problem:
    """Read, hash and parse one file; a read failure is a Problem (the caller keeps old data)."""
    got = read_changed(vault, rel, None)
    assert not isinstance(got, Unchanged)
    return got


def read_changed(vault: ParsedVault, rel: str,
                 seen: str | None) -> tuple[FileState, list[Event], list[Problem]] | Unchanged | Problem:
    """`read_parsed`, except that a file whose hash is `seen` (the version the index holds) is
    not parsed: the server indexes what it writes, then its watcher reports the same file."""
    try:
        with open_file(vault.root, rel) as fh:
            st = os.fstat(fh.fileno())
            raw = fh.read()
    except UnsafePath as exc:  # a link or not a file: never read (layout.py)
        return exc.problem
    except OSError as exc:
        return Problem(rel, 1, f"cannot read file: {exc.strerror or exc}", code="MV100")
    state = FileState(st.st_size, st.st_mtime_ns, hashlib.sha256(raw).hexdigest())
    if state.sha256 == seen:
        return Unchanged(state)
    day = vault.dates.of(rel, st.st_mtime)  # None, without git, for files named by their day
    _, parsed = parse_bytes(raw, rel, vault.config, day)
    return state, parsed.events, parsed.problems


def stored_stat(state: FileState) -> tuple[int, int, str]:
    # A file written within the last moments may be rewritten within the same mtime tick
    # and size; store an impossible mtime so the next update compares its hash.
    racy = time.time() - state.mtime_ns / 1e9 < RACY_SECONDS
    return state.size, (-1 if racy else state.mtime_ns), state.sha256


def file_docs(rows: list[tuple[int, Event]]) -> list[Doc]:
    """Text-engine documents for the events of one file, in file order.

    Each entry's content is analysed once and reused as its neighbours' context (the same
    terms `fields.contexts` + `analyzed` give)."""
    bodies = [analyzed(ev.content) for _, ev in rows]
    docs: list[Doc] = []
    for i, (rowid, ev) in enumerate(rows):
        title, _, tags, extra, _ = field_texts(ev)
        near = [bodies[j] for j in (i - 1, i + 1)
                if ev.kind == "log" and 0 <= j < len(rows) and rows[j][1].kind == "log"]
        above = parent_headings(ev)
        context = " ".join(b for b in ([analyzed(above)] if above else []) + near if b)
        docs.append((rowid, (analyzed(title), bodies[i], analyzed(tags), analyzed(extra), context)))
    return docs


def docs_by_file(rows: list[tuple[int, Event]]) -> list[Doc]:
    """`file_docs` over rows of any files (as loaded from the store)."""
    by_file: dict[str, list[tuple[int, Event]]] = {}
    for row in rows:
        by_file.setdefault(row[1].file, []).append(row)
    return [d for group in by_file.values() for d in file_docs(sorted(group, key=lambda r: r[1].line))]
