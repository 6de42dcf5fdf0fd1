"""What a merge leaves in a memory file, found and repaired: git's conflict markers (MV020) and
the same section twice (MV021, what git's union merge leaves when both sides added it).

Without memvault's merge driver (a plain `git pull` on a machine where `memvault sync` never
ran), `.gitattributes` makes git merge the logs with `merge=union`: both sides' lines kept, a
block that both sides added written twice, the other machine's entries after later ones (MV015,
rules.py). A merge without that attribute leaves conflict markers, which the parser would read
as text of the entry above. The rules report; the repairs here are what `check --fix` runs
first (fixes.py): the conflicts resolved as git's union would have (both sides kept), then each
repeated section dropped, keeping the first. A repair that would make an id name another entry
(or drop an id something refers to) is held back, with the reason (`held`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from memvault.check.registry import problem as _p
from memvault.check.sourcefile import SourceFile
from memvault.config.core import Config
from memvault.entries.blocks import (
    Block,
    Conflict,
    duplicates,
    join,
    markers,
    split,
    starts,
    union_of_markers,
)
from memvault.entries.model import Event, Problem
from memvault.layout import MEMORY_FILE
from memvault.parsed import parse_text

MEMORY_HELD = ("MEMORY.md is never repaired automatically: the prose is yours to choose "
               "(keep what is right, delete the marker lines)")


def reparsed(src: SourceFile, text: str, config: Config) -> SourceFile:
    """The same file holding `text` instead."""
    return SourceFile(src.path, text, parse_text(text, src.path, config, src.file_date), crlf=src.crlf,
                      bom=src.bom, file_date=src.file_date)


# ------------------------------------------------------------------------------ the rules


def rule_conflict_markers(src: SourceFile) -> Iterator[Problem]:
    """MV020: one problem per git conflict, at its `<<<<<<<` line; one per stray marker line."""
    if "<<<<<<<" not in src.text and ">>>>>>>" not in src.text:
        return
    found = markers(src.text)
    fixable = src.path != MEMORY_FILE and found.whole
    for c in found.conflicts:
        yield _p(src.path, c.start + 1, "MV020", _conflict_message(src, c, fixable))
    for i in found.stray:
        mark = src.lines[i][:7]
        yield _p(src.path, i + 1, "MV020", f"git conflict marker '{mark}' without the rest of its conflict: "
                 "left over from resolving one by hand (the parser reads it as text); check that both "
                 "versions are as you want them and delete the line")


def _conflict_message(src: SourceFile, c: Conflict, fixable: bool) -> str:
    if not c.whole:
        return ("git conflict that never ends (no '=======' and '>>>>>>>' line after it): the merge "
                "was cut short or edited by hand; keep what is right and delete the marker lines")
    assert c.middle is not None and c.end is not None
    ours_end = c.base if c.base is not None else c.middle
    what = (f"git conflict left by a merge: {_span(c.start + 2, ours_end)} this side's version, "
            f"{_span(c.middle + 2, c.end)} the other's")
    if c.base is not None:
        what += f" ({_span(c.base + 2, c.middle)} the common ancestor's)"
    what += ", and the parser reads the marker lines as text of the entry above"
    if src.path == MEMORY_FILE:
        return f"{what}; {MEMORY_HELD}"
    if not fixable:
        return f"{what}; keep what is right and delete the marker lines (another marker in this file has no pair)"
    return (f"{what}; `memvault check --fix` keeps both versions, this side's first, as git's union merge "
            "would; or keep the right one and delete the marker lines")


def _span(first: int, last: int) -> str:
    """1-based lines `first`..`last` as a phrase with its verb ("lines 7-8 are", "nothing is")."""
    if last < first:
        return "nothing is"
    return f"line {first} is" if first == last else f"lines {first}-{last} are"


def rule_repeated_sections(src: SourceFile) -> Iterator[Problem]:
    """MV021: a section (an entry, a note's `## ` section) the file already has word for word."""
    if not _may_repeat(src):
        return
    blocks = split(src.text).blocks
    first: dict[str, int] = {}
    lines = [i + 1 for i in starts(src.text)]
    for k, b in enumerate(blocks):
        first.setdefault(b.body, k)
    for k in _repeats(blocks):
        yield _p(src.path, lines[k], "MV021", f"'{_shown_heading(blocks[k])}' repeats the section on line "
                 f"{lines[first[blocks[k].body]]} word for word (what git's union merge leaves when both "
                 "sides added it); `memvault check --fix` keeps the first, or delete one by hand")


def _may_repeat(src: SourceFile) -> bool:
    """Could a section be there twice? Each copy of one holds an entry or note starting on the
    same line text (its heading, a sub-heading, a bullet), so most files stop at their events'
    first lines, without a second look at the text."""
    lines = src.lines
    firsts = [lines[e.line - 1] for e in src.parsed.events if 0 < e.line <= len(lines)]
    return len(firsts) != len(set(firsts))


def _shown_heading(b: Block) -> str:
    text = b.heading.strip()
    return text if len(text) <= 60 else text[:59] + "\u2026"


def _repeats(blocks: tuple[Block, ...]) -> list[int]:
    """The repeated blocks worth a report: a bare heading said twice holds no entry."""
    return [k for k in duplicates(blocks) if "\n" in blocks[k].body]


# ---------------------------------------------------------------------------- the repairs


def unite(src: SourceFile) -> str | None:
    """MV020's repair: the text with every conflict kept as both sides (None: nothing to do, or
    not for --fix: MEMORY.md, or a marker without its pair)."""
    if src.path == MEMORY_FILE or "<<<<<<<" not in src.text:
        return None
    return union_of_markers(src.text)


def without_repeats(src: SourceFile) -> str | None:
    """MV021's repair: each repeated section dropped, the first kept (None: nothing to drop)."""
    if not _may_repeat(src):
        return None
    parts = split(src.text)
    drop = set(_repeats(parts.blocks))
    if not drop:
        return None
    return join(parts.head, [b for k, b in enumerate(parts.blocks) if k not in drop])


def lost_nothing(before: str, after: str) -> bool:
    """Every line `before` has is still in `after` at least once, and nothing new."""
    old, new = _lines(before), _lines(after)
    return set(old) == set(new) and not (new - old)


def united_as_git_would(before: str, after: str) -> bool:
    """`after` holds exactly `before`'s lines but the marker lines and diff3 base parts."""
    found = markers(before)
    lines = before.split("\n")
    drop: set[int] = set()
    for c in found.conflicts:
        if c.middle is None or c.end is None:
            return False
        drop.update((c.start, c.middle, c.end))
        drop.update(range(c.base, c.middle) if c.base is not None else ())
    kept = "\n".join(line for i, line in enumerate(lines) if i not in drop)
    return _lines(kept) == _lines(after)


def _lines(text: str) -> Counter[str]:
    return Counter(line.strip() for line in text.split("\n") if line.strip())


def _key(ev: Event) -> tuple[object, ...]:
    return ev.type, ev.timestamp, ev.title, " ".join(ev.content.split())


def moved_id(before: SourceFile, after: SourceFile, referenced: frozenset[str]) -> str | None:
    """Why `after` may not replace `before` (None: it may): an id that would name another entry,
    or vanish while something refers to it or its entry is gone. A repeat dropped takes its own
    `-2` id with it; its twin keeps the first."""
    old = {e.id: e for e in before.parsed.events}
    new = {e.id: e for e in after.parsed.events}
    kept = {_key(e) for e in after.parsed.events}
    for eid, ev in old.items():
        other = new.get(eid)
        if other is not None and _key(other) != _key(ev):
            return (f"it would move the id {eid} (the entry on line {ev.line}) to another entry, and what "
                    "refers to it would follow; put the entries in order by hand or give them an 'Id:' line")
        if other is None and eid in referenced:
            return f"it would drop the id {eid} (line {ev.line}), which something refers to; delete the repeat by hand"
        if other is None and _key(ev) not in kept:  # pragma: no cover - a bug in a repair
            return f"it would lose the entry on line {ev.line}"
    return None


def repair_repeats(src: SourceFile, config: Config, referenced: frozenset[str]) -> SourceFile | str | None:
    """The file with its repeats dropped; why not (a str); None when it has none."""
    text = without_repeats(src)
    if text is None:
        return None
    after = reparsed(src, text, config)
    if not lost_nothing(src.text, text):  # pragma: no cover - a bug in blocks.split/join
        return "it would lose a line"
    return moved_id(src, after, referenced) or after
