"""One vault file as the checks see it, and the shapes of its lines that several rules share.

`SourceFile` holds the text (LF, no BOM), how it was stored and its parse; `load_source` makes
one from bytes. The line shapes (fenced code, loosely written entry headings, trailing
whitespace that is safe to remove) are used by the rules, by `check --fix` and by the write
guard, so they live here, below all of them.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date
from functools import cached_property

from memvault.config.core import Config
from memvault.entries.front_matter import frontmatter_end
from memvault.entries.markdown import FENCE_RE, ParsedFile
from memvault.entries.model import Problem
from memvault.parsed import parse_bytes

NEWLINE_RE = re.compile("\n")
TRAILING_WS_RE = re.compile(r"(?<![ \t])[ \t]+$", re.M)  # from a run's start only: linear, not quadratic

# `## HH:MM - Type` written loosely: indented, no space after ##, odd spacing round the dash.
LOOSE_HEADING_RE = re.compile(
    r"^(?P<indent>[ ]{0,3})##(?P<gap>[ \t]*)(?P<clock>\d{1,2}:\d{2}(?::\d{2})?)"
    r"(?P<sep>[ \t]*[-\u2013\u2014][ \t]*)(?P<type>[A-Za-z][\w-]*)(?P<rest>.*)$"
)


@dataclass
class SourceFile:
    """One vault file as checked: its text (LF, no BOM), how it was stored, and its parse."""

    path: str
    text: str
    parsed: ParsedFile
    crlf: bool = False
    bom: bool = False
    file_date: date | None = None  # what dates it when its name carries no day (FileDates)

    @cached_property
    def lines(self) -> list[str]:
        return self.text.split("\n")

    @cached_property
    def body_start(self) -> int:
        """Index of the first line after a closed frontmatter block (0 without one)."""
        end = frontmatter_end(self.lines)
        return 0 if end is None else end + 1

    @cached_property
    def in_fence(self) -> list[bool]:
        return fence_mask(self.lines, self.body_start)

    @cached_property
    def _starts(self) -> list[int]:
        return [0] + [m.end() for m in NEWLINE_RE.finditer(self.text)]

    def line_index(self, offset: int) -> int:
        """0-based line of a character offset."""
        return bisect_right(self._starts, offset) - 1

    @property
    def is_log(self) -> bool:
        return self.parsed.kind == "log"


def fence_mask(lines: list[str], start: int = 0) -> list[bool]:
    """True for lines inside a fenced code block, the fences included."""
    mask = [False] * len(lines)
    fence: str | None = None
    for i in range(start, len(lines)):
        line = lines[i]
        m = FENCE_RE.match(line) if line[:1] in ("`", "~", " ", "\t") else None
        if fence is None:
            if m:
                fence, mask[i] = m.group(1), True
            continue
        mask[i] = True
        if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) and not line.strip()[len(m.group(1)):].strip():
            fence = None
    return mask


def load_source(path: str, raw: bytes | None, config: Config, file_date: date | None = None) -> SourceFile:
    """Bytes of one vault file -> SourceFile (dated by `file_date` when its name carries no
    day); unreadable or odd bytes become problems."""
    if raw is None:
        return SourceFile(path, "", ParsedFile(path, "log", problems=[Problem(path, 1, "cannot read file", code="MV100")]))
    text, parsed = parse_bytes(raw, path, config, file_date)
    return SourceFile(path, text, parsed, crlf=b"\r\n" in raw, bom=raw.startswith(b"\xef\xbb\xbf"),
                      file_date=file_date)


def canonical_heading(m: re.Match[str]) -> str:
    dash = m["sep"].strip(" \t") or "-"
    return f"## {m['clock']} {dash} {m['type']}{m['rest'].rstrip()}"


def is_hard_break(line: str, following: str | None) -> bool:
    """Two or more trailing spaces before a text line are a Markdown line break: content."""
    return (
        line.endswith("  ") and line.rstrip(" ") == line.rstrip() and bool(line.strip())
        and not line.lstrip().startswith("#") and following is not None and bool(following.strip())
        and not following.lstrip().startswith("#")  # a heading ends the paragraph: no break to keep
    )


def trailing_ws_lines(src: SourceFile) -> Iterator[int]:
    """Indexes of lines with trailing whitespace that is safe to remove (not code, not a hard break)."""
    lines, text = src.lines, src.text
    if " \n" not in text and "\t\n" not in text and not text.endswith((" ", "\t")):
        return
    for hit in TRAILING_WS_RE.finditer(text):
        i = src.line_index(hit.start())
        if i < src.body_start or src.in_fence[i]:
            continue
        if not is_hard_break(lines[i], lines[i + 1] if i + 1 < len(lines) else None):
            yield i
