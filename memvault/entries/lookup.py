"""The event a person names by what memvault printed: an id, the start of one, or a place.

`search` prints `memory/2026-02-01.md#L128-L130`, `check` prints `memory/2026-02-01.md:128:1:`,
and note ids can be long (`2026-03-22#lofi-shaman-session/setlist`): `show` takes any of them.
A place names the event whose lines cover it (the innermost, where a note's lines enclose a
`MEMORY.md` bullet); the start of an id names the one id it starts, and several are listed.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from pathlib import PurePosixPath

from memvault.entries.model import Event
from memvault.entries.timeline import Timeline
from memvault.errors import Ambiguous, NotFoundError

__all__ = ["at_place", "find_event", "place"]

# `file#L12`, `file#L12-L14` (search's citation), `file:12`, `file:12:1:` (check's problems).
PLACE_RE = re.compile(r"^(?P<file>[^\s#][^#]*?\.md)(?:#L(?P<a>[0-9]{1,9})(?:-L?(?P<b>[0-9]{1,9}))?|:(?P<line>[0-9]{1,9})(?::[0-9]{1,9})?:?)$")
LISTED = 10  # candidates named in an error


def place(spec: str) -> tuple[str, int, int] | None:
    """The file and the lines (first, last) a citation or `file:line` names, else None."""
    m = PLACE_RE.match(spec.strip())
    if m is None:
        return None
    if m["line"] is not None:
        line = int(m["line"])
        return m["file"], line, line
    first = int(m["a"])
    return m["file"], first, max(first, int(m["b"] or first))


def at_place(events: Iterable[Event], file: str, first: int, last: int) -> Event | None:
    """The event of `file` covering the earliest of lines first..last that one covers; of
    several, the innermost (the latest start, then the earliest end)."""
    best: tuple[int, int, int] | None = None
    found = None
    for ev in events:
        if ev.file != file:
            continue
        lo = max(ev.line, first)
        if lo > min(ev.end_line, last):
            continue
        key = (lo, -ev.line, ev.end_line)
        if best is None or key < best:
            best, found = key, ev
    return found


def find_event(timeline: Timeline, spec: str, files: Collection[str], root: str | None = None) -> Event:
    """The event `spec` names: an id; a place in one of the vault's `files` (vault-relative,
    or absolute under `root`, or relative to `memory/`); the one id `spec` starts; or a
    reference (`2026-02-21 16:00`, `[[2026-02-21#16:00]]`). Else `NotFoundError`, naming
    the ids when several start with `spec`."""
    by_id = timeline.by_id
    if spec in by_id:
        return by_id[spec]
    where = place(spec)
    if where is not None:
        return _at(timeline, spec, _in_vault(where[0], files, root), where[1], where[2])
    starting = [i for i in by_id if i.startswith(spec)] if spec and not any(c.isspace() for c in spec) else []
    if len(starting) == 1:
        return by_id[starting[0]]
    if starting:  # what was typed is the start of ids: a reference's looser match would guess
        starting.sort()
        more = f" and {len(starting) - LISTED} more" if len(starting) > LISTED else ""
        raise Ambiguous(f"{spec!r} starts {len(starting)} ids: {', '.join(starting[:LISTED])}{more}; give more of one")
    res = timeline.index.resolve(spec)
    if res.target is not None:
        return by_id[res.target]
    hint = f"; did you mean {', '.join(res.candidates[:5])}?" if res.candidates else ""
    raise NotFoundError(f"no entry with id {spec!r}{hint}")


def _in_vault(file: str, files: Collection[str], root: str | None) -> str:
    """The vault-relative path a place's file names."""
    path = PurePosixPath(file)
    if root is not None and path.is_absolute() and path.is_relative_to(root):
        path = path.relative_to(root)
    rel = path.as_posix()
    if rel not in files and f"memory/{rel}" in files:
        return f"memory/{rel}"
    if rel not in files:
        raise NotFoundError(f"no file {file} in the vault")
    return rel


def _at(timeline: Timeline, spec: str, file: str, first: int, last: int) -> Event:
    found = at_place(timeline.events, file, first, last)
    if found is not None:
        return found
    mine = sorted((e for e in timeline.events if e.file == file), key=lambda e: abs(e.line - first))
    near = ", ".join(f"{e.id} (L{e.line}-L{e.end_line})" for e in mine[:3])
    raise NotFoundError(f"nothing in {spec}: no entry or note covers that line" + (f"; nearest: {near}" if near else ""))
