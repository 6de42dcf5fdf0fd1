"""The event a person names by what memvault printed: an id, the start of one, or a place.

`search` prints `memory/2026-02-01.md#L128-L130`, `check` prints `memory/2026-02-01.md:128:1:`,
and note ids can be long (`2026-03-22#lofi-shaman-session/setlist`): `show` takes any of them.
A place names the event whose lines cover it (the innermost, where a note's lines enclose a
`MEMORY.md` bullet); the start of an id names the one id it starts, and several are listed.
A name no id answers to may be a source the curated bullets cite (a log renamed away), then a
description. `lookup` says how it matched and, unless by the id itself, why: a bullet standing
in for a log's old name must say so.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from pathlib import PurePosixPath

from memvault.entries.markdown import link_parts
from memvault.entries.model import Event
from memvault.entries.timeline import ID_SPACE_RE, LINK_RE, Timeline
from memvault.errors import Ambiguous, InputError, NotFoundError

__all__ = ["Found", "at_place", "lookup", "place", "require_spec"]

# `file#L12`, `file#L12-L14` (search's citation), `file:12`, `file:12:1:` (check's problems).
PLACE_RE = re.compile(r"^(?P<file>[^\s#][^#]*?\.md)(?:#L(?P<a>[0-9]{1,9})(?:-L?(?P<b>[0-9]{1,9}))?|:(?P<line>[0-9]{1,9})(?::[0-9]{1,9})?:?)$")
LISTED = 10  # candidates named in an error
# What `EventIndex.resolve` reads as a reference rather than a description (a block, a link, a time).
REFERENCE_RE = re.compile(f"\\^|{LINK_RE.pattern}|{ID_SPACE_RE.pattern}")


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


@dataclass(frozen=True, slots=True)
class Found:
    """The event a spec named and how: `id`, `place`, `id start`, `reference` name it; a
    `cited source` or a `description` is an entry standing in for what was typed, and `why`
    says so in a sentence (`show` prints it: a bullet answering for a renamed log's name must
    not pass for that log)."""

    event: Event
    how: str
    why: str | None = None

    def to_dict(self, spec: str) -> dict[str, str | None]:
        return {"how": self.how, "given": spec, "why": self.why}


def require_spec(spec: str) -> None:
    """An empty (or blank) id is a command line to fix, as an empty search is: InputError."""
    if not spec.strip():
        raise InputError("no entry named: give an id, the start of one, or a place such as memory/2026-02-01.md:12")


def lookup(timeline: Timeline, spec: str, files: Collection[str], root: str | None = None) -> Found:
    """The event `spec` names, and how: an id; a place in one of the vault's `files`
    (vault-relative, or absolute under `root`, or relative to `memory/`); the one id `spec`
    starts; the one curated bullet citing `spec` as its source (a log renamed away leaves its
    name in the bullets that cite it); or a reference (`2026-02-21 16:00`,
    `[[2026-02-21#16:00]]`, a description). Else `NotFoundError`, naming the ids when several
    start with `spec` or several bullets cite it."""
    require_spec(spec)
    by_id = timeline.by_id
    if spec in by_id:
        return Found(by_id[spec], "id")
    where = place(spec)
    if where is not None:
        file = _in_vault(where[0], files, root)
        return Found(_at(timeline, spec, file, where[1], where[2]), "place")
    starting = [i for i in by_id if i.startswith(spec)] if spec and not any(c.isspace() for c in spec) else []
    if len(starting) == 1:
        return Found(by_id[starting[0]], "id start")
    if starting:  # what was typed is the start of ids: a reference's looser match would guess
        raise Ambiguous(f"{spec!r} starts {len(starting)} ids: {_listed(sorted(starting))}; give more of one")
    res = timeline.index.resolve(spec)
    reference = REFERENCE_RE.match(spec.strip()) is not None
    if res.target is not None and reference:  # a link or a time says which entry: no bullet stands in for it
        return Found(by_id[res.target], "reference")
    cited = _citing(timeline, spec)
    if cited is not None:
        return cited
    if res.target is not None:
        return Found(by_id[res.target], "description",
                     f"no entry has the id {spec!r}; read as a description, this entry's words match it best")
    hint = f"; did you mean {', '.join(res.candidates[:5])}?" if res.candidates else ""
    raise NotFoundError(f"no entry with id {spec!r}{hint}")


def _citing(timeline: Timeline, spec: str) -> Found | None:
    """The one curated bullet whose `(sources: ...)` names `spec` (a page, or a page#anchor),
    when no id answers to `spec` itself; several are an error naming them."""
    target = spec.strip().removeprefix("[[").removesuffix("]]")
    page = link_parts(target)[0]
    if not page:
        return None
    hits: dict[str, str] = {}
    for ev in timeline.events:
        if ev.kind != "curated" or ev.id in hits:
            continue
        for src in ev.sources:
            bare = src.removeprefix("[[").removesuffix("]]")
            if bare == target or link_parts(bare)[0] == page:
                hits[ev.id] = src
                break
    if len(hits) > 1:
        raise Ambiguous(f"no entry has the id {spec!r}; {len(hits)} curated bullets cite it as a source: "
                            f"{_listed(sorted(hits))}; show one of them")
    if not hits:
        return None
    (bullet, src), = hits.items()
    ev = timeline.by_id[bullet]
    gone = timeline.index.resolve(f"[[{src.removeprefix('[[').removesuffix(']]')}]]").target is None
    why = (f"no entry has the id {spec!r}; this is the {ev.file} bullet citing it as a source "
           f"([[{src.removeprefix('[[').removesuffix(']]')}]])"
           + ("; no entry answers to that source now (its file renamed or deleted?)" if gone else ""))
    return Found(ev, "cited source", why)


def _listed(ids: list[str]) -> str:
    ids = sorted(ids)
    more = f" and {len(ids) - LISTED} more" if len(ids) > LISTED else ""
    return ", ".join(ids[:LISTED]) + more


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
    raise NotFoundError(f"nothing in {spec}: no entry or note covers that line" + (f"; nearest: {near}" if near else ""),
                        file=file, line=first)
