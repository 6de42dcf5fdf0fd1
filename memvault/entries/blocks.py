"""A Markdown memory file as blocks: the unit a merge, a union repair and an order check work on.

A block is a section that starts at a level-1 or level-2 ATX heading outside fenced code and runs
to the next one (its `###` and deeper headings stay inside, as they do in an entry). What comes
before the first such heading (front matter, a preamble) is the file's head. A `## HH:MM…` heading
(an entry or a timed section) gives its block a time; the file's order of such blocks is its time
order. Pure: text in, text out; the merge driver (`sync/merge.py`) and `check --fix` share it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from memvault.entries.daily import scan

CONFLICT_LINE = re.compile(r"^conflict[ \t]*:", re.IGNORECASE)
ID_LINE = re.compile(r"^id[ \t]*:", re.IGNORECASE)
TIME_RE = re.compile(r"^##[ \t]+(\d{1,2}):(\d{2})(?::(\d{2}))?(?!\d)")
# The lines git writes around a text conflict; a merge of memory must never leave them in a file.
MARKER_RE = re.compile(r"^(<{7}|={7}|>{7}|\|{7})(?:[ \t].*)?$")


@dataclass(frozen=True)
class Block:
    """One section: its heading line, its whole text (heading included, ending in one newline)."""

    heading: str
    text: str

    @property
    def time(self) -> tuple[int, int, int] | None:
        m = TIME_RE.match(self.heading)
        if m is None:
            return None
        hh, mm = int(m[1]), int(m[2])
        return (hh, mm, int(m[3] or 0)) if hh < 24 and mm < 60 else None

    @property
    def minute(self) -> tuple[int, int] | None:
        t = self.time
        return None if t is None else (t[0], t[1])

    @property
    def body(self) -> str:
        """The text, trailing blank lines aside: what two versions compare by."""
        return self.text.rstrip()

    @property
    def core(self) -> tuple[str, str, bool]:
        """What a merge may have added to a block taken away: (the body without `Conflict:` lines,
        that also without `Id:` lines, whether it has an `Id:` line). The same entry that one side
        got through a merge (a `Conflict:` line, an `Id:` pinning it) and another clone still holds
        as written is one entry, not two."""
        lines = [ln for ln in self.body.split("\n") if not CONFLICT_LINE.match(ln)]
        bare = [ln for ln in lines if not ID_LINE.match(ln)]
        return "\n".join(lines), "\n".join(bare), len(bare) != len(lines)


@dataclass(frozen=True)
class Split:
    head: str
    blocks: tuple[Block, ...]


def _front_matter_end(lines: list[str]) -> int:
    if not lines or lines[0].strip() != "---":
        return 0
    for i in range(1, len(lines)):
        if lines[i].strip() in ("---", "..."):
            return i + 1
    return 0


def _starts(lines: list[str]) -> list[int]:
    heads, _, _ = scan(lines, _front_matter_end(lines))
    return [i for i, level, _ in heads if level <= 2]


def starts(text: str) -> list[int]:
    """The 0-based line where each of `split(text)`'s blocks starts."""
    return _starts(text.split("\n"))


def split(text: str) -> Split:
    """The file's head and its blocks; `join(split(t)) == t` up to the blank lines between blocks."""
    lines = text.split("\n")
    starts = _starts(lines)
    if not starts:
        return Split(text, ())
    head = "\n".join(lines[: starts[0]])
    blocks = []
    for n, at in enumerate(starts):
        end = starts[n + 1] if n + 1 < len(starts) else len(lines)
        chunk = "\n".join(lines[at:end]).rstrip("\n")
        blocks.append(Block(lines[at].rstrip(), chunk + "\n"))
    return Split(head + "\n" if head else "", tuple(blocks))


def join(head: str, blocks: list[Block] | tuple[Block, ...]) -> str:
    """The text of a head and blocks, one blank line between blocks, ending in a newline. The head
    is kept as it is (front matter straight above the title stays so)."""
    text = "\n\n".join(b.text.rstrip("\n") for b in blocks)
    if not head.strip():
        return text + "\n" if text else ""
    head = head if head.endswith("\n") else head + "\n"
    return head + text + "\n" if text else head


def sort_runs(blocks: list[Block], touched: set[int] | None = None) -> list[Block]:
    """Each run of consecutive timed blocks in time order, to the minute (stable: one minute keeps
    its order, seconds included, so no default id moves: ids count a minute's entries in file
    order). With `touched`, only the runs holding one of those positions."""
    out = list(blocks)
    i = 0
    while i < len(out):
        if out[i].time is None:
            i += 1
            continue
        j = i
        while j < len(out) and out[j].time is not None:
            j += 1
        if touched is None or any(i <= k < j for k in touched):
            out[i:j] = sorted(out[i:j], key=lambda b: b.minute or (0, 0))
        i = j
    return out


def out_of_order(blocks: tuple[Block, ...] | list[Block]) -> list[int]:
    """Positions of timed blocks earlier (to the minute) than the timed block before them."""
    found = []
    for k in range(1, len(blocks)):
        a, b = blocks[k - 1].minute, blocks[k].minute
        if a is not None and b is not None and b < a:
            found.append(k)
    return found


def duplicates(blocks: tuple[Block, ...] | list[Block]) -> list[int]:
    """Positions of blocks whose text an earlier block of the file already has, word for word."""
    seen: set[str] = set()
    found = []
    for k, b in enumerate(blocks):
        if b.body in seen:
            found.append(k)
        seen.add(b.body)
    return found


@dataclass(frozen=True)
class Conflict:
    """One git conflict, by 0-based line: `<<<<<<<`, the `|||||||` of a diff3 base (None without
    one), `=======` and `>>>>>>>` (None for the last three when the conflict never gets there)."""

    start: int
    base: int | None = None
    middle: int | None = None
    end: int | None = None

    @property
    def whole(self) -> bool:
        return self.middle is not None and self.end is not None


@dataclass(frozen=True)
class Markers:
    """The conflicts of a text, and marker lines outside any conflict (0-based)."""

    conflicts: tuple[Conflict, ...]
    stray: tuple[int, ...]

    @property
    def whole(self) -> bool:
        """Every conflict complete and no stray marker: a union can resolve them all."""
        return not self.stray and all(c.whole for c in self.conflicts)


def markers(text: str) -> Markers:
    """Git's conflict markers outside fenced code, as conflicts. Only `<<<<<<<` opens one and only
    `>>>>>>>` stands out alone: a lone `=======` is also a Markdown heading underline, `|||||||` a
    table row of empty cells, so outside a conflict (or where its part is over) they are text."""
    if "<<<<<<<" not in text and ">>>>>>>" not in text:
        return Markers((), ())
    lines = text.split("\n")
    _, in_fence, _ = scan(lines, 0)
    conflicts: list[Conflict] = []
    stray: list[int] = []
    cur: Conflict | None = None
    for i, line in enumerate(lines):
        m = MARKER_RE.match(line) if line[:1] in "<=>|" and not in_fence[i] else None
        if m is None:
            continue
        mark = m[1][0]
        if mark == "<":
            if cur is not None:
                conflicts.append(cur)
            cur = Conflict(i)
        elif cur is None:
            if mark == ">":
                stray.append(i)
        elif mark == "|" and cur.base is None and cur.middle is None:
            cur = replace(cur, base=i)
        elif mark == "=" and cur.middle is None:
            cur = replace(cur, middle=i)
        elif mark == ">" and cur.middle is not None:
            conflicts.append(replace(cur, end=i))
            cur = None
        elif mark == ">":  # before the `=======`: the conflict is broken, the marker stands alone
            stray.append(i)
    if cur is not None:
        conflicts.append(cur)
    return Markers(tuple(conflicts), tuple(stray))


def marker_lines(text: str) -> list[int]:
    """1-based lines of git conflict markers (`<<<<<<<`, `=======`, `>>>>>>>`, `|||||||`) outside code."""
    found = markers(text)
    lines = [c for k in found.conflicts for c in (k.start, k.base, k.middle, k.end) if c is not None]
    return sorted(i + 1 for i in (*lines, *found.stray))


def union_of_markers(text: str) -> str | None:
    """The text with each git conflict kept as both sides, ours then theirs (the base part of a
    diff3 conflict dropped): what git's union merge would have written. None without a conflict,
    or when a conflict is incomplete or a marker stray (which side is which is then a guess)."""
    found = markers(text)
    if not found.conflicts or not found.whole:
        return None
    drop: set[int] = set()
    for c in found.conflicts:
        assert c.middle is not None and c.end is not None
        drop.update((c.start, c.middle, c.end))
        if c.base is not None:
            drop.update(range(c.base, c.middle))
    return "\n".join(line for i, line in enumerate(text.split("\n")) if i not in drop)


def repaired(text: str) -> str | None:
    """What a union merge left, repaired: conflict markers resolved as a union, blocks said twice
    kept once, timed blocks in time order. None when nothing needed it."""
    unioned = union_of_markers(text)
    current = text if unioned is None else unioned
    parts = split(current)
    dups = set(duplicates(parts.blocks))
    kept = [b for k, b in enumerate(parts.blocks) if k not in dups]
    ordered = sort_runs(kept)
    if unioned is None and not dups and ordered == kept:
        return None
    return join(parts.head, ordered)
