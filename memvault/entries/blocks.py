"""A Markdown memory file as blocks: the unit a merge, a union repair and an order check work on.

A block is a section that starts at a level-1 or level-2 ATX heading outside fenced code and runs
to the next one (its `###` and deeper headings stay inside, as they do in an entry). What comes
before the first such heading (front matter, a preamble) is the file's head. A `## HH:MM…` heading
(an entry or a timed section) gives its block a time; the file's order of such blocks is its time
order. Pure: text in, text out; the merge driver (`sync/merge.py`) and `check --fix` share it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memvault.entries.daily import scan

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


def split(text: str) -> Split:
    """The file's head and its blocks; `join(split(t)) == t` up to the blank lines between blocks."""
    lines = text.split("\n")
    heads, _, _ = scan(lines, _front_matter_end(lines))
    starts = [i for i, level, _ in heads if level <= 2]
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
    """Each run of consecutive timed blocks in time order (stable: one minute keeps its order, so
    no default id moves). With `touched`, only the runs holding one of those positions."""
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
            out[i:j] = sorted(out[i:j], key=lambda b: b.time or (0, 0, 0))
        i = j
    return out


def out_of_order(blocks: tuple[Block, ...] | list[Block]) -> list[int]:
    """Positions of timed blocks earlier than the timed block before them in the same run."""
    found = []
    for k in range(1, len(blocks)):
        a, b = blocks[k - 1].time, blocks[k].time
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


def marker_lines(text: str) -> list[int]:
    """1-based lines of git conflict markers (`<<<<<<<`, `=======`, `>>>>>>>`, `|||||||`) outside
    code; a `=======` or `|||||||` only after a `<<<<<<<` (alone, `=======` underlines a heading)."""
    lines = text.split("\n")
    _, in_fence, _ = scan(lines, 0)
    found: list[int] = []
    opened = False
    for i, line in enumerate(lines):
        m = None if in_fence[i] else MARKER_RE.match(line)
        if m is None or (m[1][0] in "=|" and not opened):
            continue
        opened = m[1][0] != ">" and (opened or m[1][0] == "<")
        found.append(i + 1)
    return found


def union_of_markers(text: str) -> str | None:
    """The text with each git conflict kept as both sides, ours then theirs (the base part of a
    diff3 conflict dropped): what git's union merge would have written. Marker lines `marker_lines`
    finds are dropped (a stray or nested one too); fenced code is left as it is. None without one."""
    lines = text.split("\n")
    _, in_fence, _ = scan(lines, 0)
    out: list[str] = []
    state = None
    found = False
    for i, line in enumerate(lines):
        m = None if in_fence[i] else MARKER_RE.match(line)
        mark = m[1][0] if m else None
        if mark is None or (mark in "=|" and state is None):  # text, or a heading's underline
            if state != "base":
                out.append(line)
            continue
        found = True
        if mark == "<":
            state = state or "ours"
        elif mark == "|" and state == "ours":
            state = "base"
        elif mark == "=" and state in ("ours", "base"):
            state = "theirs"
        elif mark == ">":
            state = None
    return "\n".join(out) if found else None


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
