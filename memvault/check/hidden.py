"""MV017: lines that would be an entry heading or a metadata line but for invisible characters.

A zero-width space or a right-to-left mark in `## 10:00 - Belief` is not on screen, but the
parser no longer sees a heading, so the entry would vanish from list and search. The parser
reads an `## ` heading like that as the entry it looks like and reports it (and an `Id:` made
invisible); this rule finds the rest: `\\u200b## 10:00 - Belief` or `##\\u00a010:00 - Belief`,
which Markdown does not take for headings, and metadata keys (`Sup\\u200bersedes:`) that
would silently be body text. `check --fix` removes the characters (`fix_invisible`).
"""

from __future__ import annotations

from collections.abc import Iterator

from memvault.check.registry import RULES
from memvault.check.sourcefile import LOOSE_HEADING_RE, SourceFile
from memvault.entries.daily import META_RE
from memvault.entries.markdown import H2_RE
from memvault.entries.model import Problem
from memvault.textsafety import INVISIBLE_RE, clean_invisible, find_invisible, invisible_in


def hidden_lines(src: SourceFile, *, ids: bool = False) -> Iterator[tuple[int, str]]:
    """(line index, "an entry heading" or "a metadata line") the parser did not report itself;
    with `ids`, also `Id:` lines holding invisible characters anywhere (the parser reports
    those in an entry's metadata block; --fix cleans them wherever they are)."""
    if not src.is_log or src.parsed.date is None:
        return
    seen: set[int] = set()
    for offset in find_invisible(src.text):
        i = src.line_index(offset)
        if i in seen or i < src.body_start or src.in_fence[i]:
            continue
        seen.add(i)
        raw = src.lines[i]
        visible = clean_invisible(raw)
        if LOOSE_HEADING_RE.match(visible) and not H2_RE.match(raw) and not LOOSE_HEADING_RE.match(raw):
            yield i, "an entry heading"
        elif META_RE.match(visible) and not META_RE.match(raw) and _ends_entry(src, i):
            yield i, "a metadata line"
        elif ids and (m := META_RE.match(raw)) and m["key"].lower() == "id":
            yield i, "an Id"


def _ends_entry(src: SourceFile, i: int) -> bool:
    """Only metadata-looking or blank lines follow line `i` to the next heading: it would be
    metadata (in the body it would be text anyway, MV209)."""
    lines, fence = src.lines, src.in_fence
    for j in range(i + 1, len(lines)):
        visible = clean_invisible(lines[j])
        if H2_RE.match(visible):
            return True
        if visible.strip() and (fence[j] or not META_RE.match(visible)):
            return False
    return True


def rule_hidden(src: SourceFile) -> Iterator[Problem]:
    """MV017 for the lines `hidden_lines` finds (the parser reports `## ` headings and `Id:` values)."""
    for i, what in hidden_lines(src):
        raw = src.lines[i]
        m = INVISIBLE_RE.search(raw)
        assert m is not None, "hidden_lines yields lines holding an invisible character"
        col = m.start() + 1
        yield Problem(src.path, i + 1, f"'{clean_invisible(raw).strip()}' would be {what} but for "
                      f"{', '.join(invisible_in(raw))}; remove it (memvault check --fix)",
                      RULES["MV017"].severity, "MV017", col)


def fix_invisible(src: SourceFile) -> tuple[list[str], list[str]] | None:
    """MV017: drop the invisible characters from the lines reported, and only those."""
    todo = {i for i, _ in hidden_lines(src, ids=True)}
    todo |= {p.line - 1 for p in src.parsed.problems if p.code == "MV017"}
    if not todo:
        return None
    lines = list(src.lines)
    for i in todo:
        lines[i] = clean_invisible(lines[i])
    return lines, ["MV017"]
