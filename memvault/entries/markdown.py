"""The Markdown both parsers read: headings, fences, bullets, and what running text holds
(inline `#tags`, `[[wikilinks]]`, `^block` ids); and `ParsedFile`, what a parser returns.

`docs/format.md` is the normative description of what is accepted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from memvault.entries.codespans import blank_code_spans
from memvault.entries.model import Event, Problem

# Linear on any line (see tests/test_hostile_inputs.py): the text is `((?:.*[^ \t\n])?)[ \t]*$`, not
# `(.*?)[ \t]*$`, which re-scanned a run of blanks inside the line from each of its positions
# (20,000 spaces took 2.5 s); blanks before a part that may start with blanks are possessive (`++`).
TITLE_RE = re.compile(r"^#[ \t]++((?:.*[^ \t\n])?)[ \t]*$")
H2_RE = re.compile(r"^##[ \t]++((?:.*[^ \t\n])?)[ \t]*$")
FENCE_RE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})")
# A scheme is tried only where a run of scheme characters starts (the lookbehind): tried at every
# position, a long run such as a hex dump was rescanned from each one, quadratic in its length.
URL_RE = re.compile(r"(?:(?<![a-zA-Z0-9+.-])[0-9+.-]*[a-zA-Z][a-zA-Z0-9+.-]*://|www\.)\S+")
TAG_RE = re.compile(r"(?:(?<=[\s(,;])|^)#([^\W\d_][\w/-]*|\d+[^\W\d][\w/-]*)", re.MULTILINE)
WIKILINK_RE = re.compile(r"!?\[\[([^\[\]|]+?)(?:\|[^\[\]]*)?\]\]")
BLOCK_ID_RE = re.compile(r"(?:^|\s)\^([A-Za-z0-9][A-Za-z0-9-]*)[ \t]*$", re.MULTILINE)
BULLET_RE = re.compile(r"^(?P<indent>[ \t]*)(?:[-*+]|\d{1,9}[.)])(?:[ \t]++(?P<text>.*))?$")


@dataclass
class ParsedFile:
    """What one Markdown file contributed: events, problems and its frontmatter."""

    path: str
    kind: str
    date: date | None = None
    title: str | None = None
    frontmatter: dict[str, Any] = field(default_factory=dict)
    events: list[Event] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)


def inline_tags(text: str) -> list[str]:
    """`#tags` in running text; not inside code, not URL fragments, not headings."""
    if "#" not in text:
        return []
    text = strip_code(text)
    text = URL_RE.sub(" ", text)
    return [t.lower().rstrip("/-") for t in TAG_RE.findall(text)]


def strip_code(text: str) -> str:
    out: list[str] = []
    fence: str | None = None
    for line in text.split("\n"):
        m = FENCE_RE.match(line)
        if fence is None and m:
            fence = m.group(1)[0] * len(m.group(1))
            continue
        if fence is not None:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = None
            continue
        out.append(line)
    return blank_code_spans("\n".join(out))


def wikilinks(text: str) -> list[str]:
    return [m.strip() for m in WIKILINK_RE.findall(text)] if "[[" in text else []


def block_ids(text: str) -> list[str]:
    return BLOCK_ID_RE.findall(text) if "^" in text else []


def link_parts(target: str) -> tuple[str, str]:
    """A `[[link]]`'s target as (page, anchor), both stripped: the page is the file name without
    folder or `.md` (`[[memory/2026/2026-02-21.md#16:00]]` -> `2026-02-21`), "" within a page."""
    page, _, anchor = target.partition("#")
    return page_of(page.strip()), anchor.strip()


def page_of(path: str) -> str:
    """The page name a link uses for a file: its name without folder or `.md`."""
    return path.rsplit("/", 1)[-1].removesuffix(".md")


def dedupe(items: list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))
