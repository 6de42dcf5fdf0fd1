"""MV024: an id that changed meaning in a merge made without memvault's merge driver.

A default id counts the entries at a minute in file order (`2026-12-02T10:15`, `…T10:15-2`). Two
machines that both wrote a 10:15 entry by hand, merged by git's `union` driver (a plain `git pull`)
or by a person, end up with one of them at `…T10:15-2`: what was written on that machine about
`…T10:15` now names the other entry, and nothing in the files says so. memvault's own driver pins
such ids or marks them (`Conflict:`, MV023); this rule finds the merges it did not make.

In a full check of a vault in a git repository: the merges among the last `WINDOW` commits of
HEAD's history (every parent: gitio/merges.py says why) and the logs each changed relative to a
parent (two git calls), both versions read in one `cat-file --batch`. Most merges append to a log
or add entries at other minutes: a look at the bytes rules them out without a parse (`may_move`);
the rest are parsed, once per blob. Entries are matched across versions by their content (type,
time, title, text): an id that named entry X in the parent and names another entry Y in the
merge, while X is still there under another id, moved. An edited or deleted X matches nothing
and is left alone. It is reported at Y's current line as long as the id still names Y, by
default, in the working tree: an `Id:` line written on Y (a person saying what the id means now),
an edit of Y, or a renumbering clears it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from memvault.check.registry import problem
from memvault.check.sourcefile import SourceFile
from memvault.config.core import Config
from memvault.entries.model import Event, Problem
from memvault.errors import GitError
from memvault.filedates import FileDates
from memvault.gitio import read_batch
from memvault.gitio.merges import Change, merge_changes, recent_merges
from memvault.layout import LOG_DIR, Selection
from memvault.parsed import parse_bytes

WINDOW = 200  # the newest commits of HEAD's history whose merges are looked at (docs/checks.md, MV024)
SHOWN = 60  # characters of an entry's text in the message
Key = tuple[object, ...]
HEADING_LINE_RE = re.compile(rb"^[ \t]*#", re.M)
CLOCK_RE = re.compile(rb"(\d{1,2}):(\d{2})")


@dataclass(frozen=True, slots=True)
class Moved:
    """`id` named `was` in a parent of `merge` and names `now` in the merge; `was` is `was_now` there."""

    merge: str
    path: str
    id: str
    was: Event
    now: Event
    was_now: str


def key(ev: Event) -> Key:
    """What an entry is, whatever its id and line: metadata (`Id:`, `Conflict:`) left out."""
    return (ev.type, ev.timestamp, ev.title, ev.content.strip())


def merge_id_problems(root: Path, config: Config, selection: Selection, dates: FileDates,
                      files: Sequence[SourceFile]) -> list[Problem]:
    """MV024 for every id a recent merge moved that still names the entry it moved to; nothing
    where history cannot be read (no git, no repository, a shallow clone's missing parents)."""
    try:
        merges = recent_merges(root, WINDOW)
        changes = merge_changes(root, [m.sha for m in merges], (LOG_DIR,))
        moved = _moved(root, config, dates, [c for c in changes if selection.selects(c.path)])
    except GitError:
        return []  # the rest of the check does not need history: it goes on
    if not moved:
        return []
    paths = {m.path for m in moved}  # the vault's other files need no look (100k entries: 40 ms)
    current = {(f.path, ev.id): ev for f in files if f.path in paths for ev in f.parsed.events}
    times = {m.sha: m.time for m in merges}
    found: dict[tuple[str, str], Problem] = {}
    for m in moved:
        now = current.get((m.path, m.id))
        if now is None or now.explicit_id or key(now) != key(m.now) or (m.path, m.id) in found:
            continue
        found[(m.path, m.id)] = problem(m.path, now.line, "MV024", _message(m, times[m.merge]))
    return list(found.values())


def _moved(root: Path, config: Config, dates: FileDates, changes: list[Change]) -> list[Moved]:
    """The moved ids of every change, newest merge first (git log's order)."""
    if not changes:
        return []
    shas = list(dict.fromkeys(s for c in changes for s in (c.before, c.after)))
    raws = dict(zip(shas, read_batch(root, shas), strict=True))
    parsed: dict[str, list[Event]] = {}

    def events(sha: str, path: str) -> list[Event]:
        if sha not in parsed:  # a blob is parsed once, however many merges hold it
            raw = raws.get(sha)
            parsed[sha] = [] if raw is None else parse_bytes(raw, path, config, dates.of(path))[1].events
        return parsed[sha]

    runs: dict[str, dict[bytes, list[bytes]]] = {}
    out: list[Moved] = []
    for c in changes:
        before, after = raws.get(c.before), raws.get(c.after)
        if before is None or after is None or after.startswith(before.rstrip()):
            continue  # appended to: every entry there keeps its place among its minute's
        for sha, raw in ((c.before, before), (c.after, after)):
            if sha not in runs:
                runs[sha] = minute_runs(raw)
        if not may_move(runs[c.before], runs[c.after]):
            continue  # the usual sync merge: entries added at other minutes, or after the others
        out += moved_ids(c.merge, c.path, events(c.before, c.path), events(c.after, c.path))
    return out


def minute_runs(raw: bytes) -> dict[bytes, list[bytes]]:
    """The file cut before every line that starts with `#` (a superset of entry and note
    headings), the pieces grouped by the first clock on that line (`b""`: none), in file order."""
    starts = [m.start() for m in HEADING_LINE_RE.finditer(raw)] + [len(raw)]
    out: dict[bytes, list[bytes]] = {}
    for a, b in zip(starts, starts[1:], strict=False):
        piece = raw[a:b]
        end = piece.find(b"\n")
        clock = CLOCK_RE.search(piece if end < 0 else piece[:end])
        out.setdefault(b"%d:%s" % (int(clock[1]), clock[2]) if clock else b"", []).append(piece.rstrip())
    return out


def may_move(before: dict[bytes, list[bytes]], after: dict[bytes, list[bytes]]) -> bool:
    """Could an id of `before` name another entry in `after`? Not when, at every minute (and
    among the notes), `after` has `before`'s pieces first, in the same order: a default id is
    the minute and the place among that minute's entries, and none of those places changed.
    Cheap (no parse) and on the safe side: a piece edited or removed anywhere says "maybe"."""
    return any(after.get(clock, [])[: len(pieces)] != pieces for clock, pieces in before.items())


def moved_ids(merge: str, path: str, before: list[Event], after: list[Event]) -> list[Moved]:
    """The ids that name one entry in `before` (a parent's version) and another in `after`
    (the merge's), where the first is still in `after` under another id. An entry the merge
    marked with `Conflict:` (memvault's driver: MV023) on either side of the move is left out."""
    after_by_id = {ev.id: ev for ev in after}
    after_by_key: dict[Key, Event] = {}
    for ev in after:
        after_by_key.setdefault(key(ev), ev)
    out = []
    for was in before:
        now = after_by_id.get(was.id)
        if now is None or key(now) == key(was):
            continue
        still = after_by_key.get(key(was))
        if still is None or "conflict" in now.meta or "conflict" in still.meta:
            continue  # edited or deleted: no way to say which entry it became; or marked already
        out.append(Moved(merge, path, was.id, was, now, still.id))
    return out


def _message(moved: Moved, when: int) -> str:
    day = datetime.fromtimestamp(when, UTC).date().isoformat()
    return (f"id {moved.id} named '{_snippet(moved.was)}' on one side of merge {moved.merge[:7]} ({day}) "
            f"and names this entry since; a reference to {moved.id} written on that side may mean "
            f"that entry, now {moved.was_now}")


def _snippet(ev: Event) -> str:
    text = " ".join((ev.title or ev.content).split()) or ev.type
    return text if len(text) <= SHOWN else text[: SHOWN - 1] + "\u2026"
