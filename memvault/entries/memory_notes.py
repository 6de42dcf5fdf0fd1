"""MEMORY.md's prose as notes: what a curated file says outside its bullets is memory too.

Curated memory written by people and agents is rarely bullets only: bold lead-in paragraphs
(`**What:** …`), fenced commands, `###` sub-headings over a few lines of text. Each such run of
text becomes a curated `note` (kind "curated", type "note"), sectioned and id'd like the notes
of a daily log (`memvault.entries.notes`) with the key `MEMORY.md`: `MEMORY.md#<slug path>[~n][.pN]`.
Bullets stay curated entries; a heading with no prose under it is not a note (an empty
section is a template's; over bullets, its words are theirs). Curated notes carry no date: they are live, never proposed by
curate, never rewritten by it.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import tzinfo

from memvault.entries.daily import scan_headings, unclosed
from memvault.entries.model import Event, Problem
from memvault.entries.notes import NoteFile, Section

KEY = "MEMORY.md"  # the key of a file outside memory/: its path (entries.naming)


def memory_notes(lines: list[str], start: int, covered: set[int], path: str, tz: tzinfo,
                 problems: list[Problem]) -> list[Event]:
    """The notes of MEMORY.md's text outside its bullets (`covered`: the bullets' line indexes)."""
    heads, in_fence = scan_headings(lines, start)
    title = heads[0][0] if heads and heads[0][1] == 1 else None
    if title is not None:
        heads = heads[1:]
    prose = [("" if i in covered or i == title or i < start or _comment(line) else line)
             for i, line in enumerate(lines)]
    notes = NoteFile(path, KEY, None, tz, prose, in_fence, {}, problems)
    out: list[Event] = []
    first = heads[0][0] if heads else len(lines)
    out += notes.notes(Section(None, "", (), start, first, None, True))
    stack: list[tuple[int, str]] = []
    for j, (index, level, text) in enumerate(heads):
        while stack and stack[-1][0] >= level:
            stack.pop()
        text = unclosed(text)
        stack.append((level, text))
        after = heads[j + 1] if j + 1 < len(heads) else None
        end = after[0] if after else len(lines)
        # Never a bare heading's note: an empty section is a template's, and a heading over
        # bullets has its words carried by them (their section).
        section = Section(index, text, tuple(t for _, t in stack), index + 1, end, None, False)
        out += notes.notes(section)
    return [replace(ev, kind="curated", category=ev.path[0] if ev.path else None) for ev in out]


def _comment(line: str) -> bool:
    """A one-line HTML comment (curate's `<!-- memvault: curated … -->` marker): not prose."""
    bare = line.strip()
    return bare.startswith("<!--") and bare.endswith("-->")
