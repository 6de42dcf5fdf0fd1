"""The MEMORY.md parser: curated memory to events.

Each top-level bullet under a `## Section` is one entry; `(updated YYYY-MM-DD, was: ...)`,
`(added ...)` and `(sources: [[...]])` annotations and a `^block` id say where it came from.
"""

from __future__ import annotations

import re
from datetime import date, datetime, time

from memvault.config.core import Config
from memvault.entries.front_matter import read_frontmatter
from memvault.entries.markdown import (
    BLOCK_ID_RE,
    BULLET_RE,
    FENCE_RE,
    H2_RE,
    TITLE_RE,
    ParsedFile,
    block_ids,
    dedupe,
    inline_tags,
    wikilinks,
)
from memvault.entries.memory_notes import memory_notes
from memvault.entries.model import Event, Problem
from memvault.entries.timeparse import day_in_range

# Blanks before a part that may itself hold blanks are possessive (`*+`), and `was` ends at the
# `)` itself: re-splitting a run of blanks between the two at every backtrack was quadratic.
ANNOTATION_RE = re.compile(
    r"\((?P<kind>updated|added|since)[ \t]+(?P<date>\d{4}-\d{2}-\d{2})"
    r"(?:[ \t]*,[ \t]*was:[ \t]*+(?P<was>[^()]*(?:\([^()]*\)[^()]*)*?)|[ \t]*)\)",
    re.IGNORECASE,
)
SOURCE_ANN_RE = re.compile(r"\(sources?:[ \t]*+(?P<refs>[^()]*?)\)", re.IGNORECASE)


def slug(text: str, words: int = 6) -> str:
    tokens = re.findall(r"[^\W_]+", text.lower())
    return "-".join(tokens[:words]) or "entry"


def section_type(section: str, config: Config) -> str:
    """Type of the bullets in a MEMORY.md section: config mapping, then the section's name."""
    key = section.strip().lower()
    if key in config.memory_sections:
        return config.memory_sections[key]
    if "decision" in key:
        return "decision"
    if "observation" in key:
        return "observation"
    return "belief"


def parse_memory(text: str, path: str, config: Config) -> ParsedFile:
    """Parse curated memory: each top-level bullet under a `## Section` is one entry."""
    result = ParsedFile(path=path, kind="curated")
    lines = text.split("\n")
    fm, start = read_frontmatter(lines, path, result.problems)
    result.frontmatter = fm
    section: str | None = None
    items: list[tuple[int, int, str | None]] = []  # (first line idx, last line idx, section)
    fence: str | None = None
    current: list[int] | None = None
    for i in range(start, len(lines)):
        line = lines[i]
        m = FENCE_RE.match(line)
        if fence is not None:
            if m and m.group(1)[0] == fence[0]:
                fence = None
            if current is not None:
                current[1] = i
            continue
        if m:
            fence = m.group(1)
        if line.startswith("#"):
            current = None
            h2 = H2_RE.match(line)
            if h2:
                section = h2.group(1)
            elif TITLE_RE.match(line) and result.title is None:
                result.title = TITLE_RE.match(line).group(1)  # type: ignore[union-attr]
            continue
        bullet = BULLET_RE.match(line)
        if bullet and not bullet["indent"]:
            current = [i, i]
            items.append((i, i, section))
            items[-1] = (i, i, section)
            current_idx = len(items) - 1
            continue
        if current is not None:
            if line.strip() and (line[:1] in (" ", "\t") or bullet):
                current[1] = i
                items[current_idx] = (current[0], i, items[current_idx][2])
            elif line.strip():
                current = None
    seen: dict[str, int] = {}
    for first, last, sect in items:
        event = _curated(lines, first, last, sect, path, config, seen, result.problems)
        if event is not None:
            result.events.append(event)
    covered = {i for first, last, _ in items for i in range(first, last + 1)}
    result.events += memory_notes(lines, start, covered, path, config.tz, result.problems)
    return result


def _curated(
    lines: list[str], first: int, last: int, section: str | None, path: str, config: Config,
    seen: dict[str, int], problems: list[Problem],
) -> Event | None:
    raw = "\n".join(lines[first : last + 1])
    m = BULLET_RE.match(lines[first])
    text = (m["text"] if m else "") or ""
    rest = lines[first + 1 : last + 1]
    body = "\n".join([text] + [r for r in rest])
    if not body.strip():
        return None
    ids = block_ids(lines[first]) or block_ids(raw)
    tz = config.tz
    updated: datetime | None = None
    added: datetime | None = None
    previous: str | None = None
    for ann in ANNOTATION_RE.finditer(text):
        try:
            day = date.fromisoformat(ann["date"])
        except ValueError:
            day = None
        if day is None or not day_in_range(day):
            problems.append(Problem(path, first + 1, f"bad date {ann['date']!r} in annotation", code="MV301"))
            continue
        when = datetime.combine(day, time(0), tz)
        if ann["kind"].lower() == "updated":
            updated, previous = when, (ann["was"] or "").strip() or None
        else:
            added = when
    sources: list[str] = []
    for ann in SOURCE_ANN_RE.finditer(body):
        sources.extend(wikilinks(ann["refs"]) or [r.strip() for r in ann["refs"].split(",") if r.strip()])
    content = ANNOTATION_RE.sub("", text)
    content = SOURCE_ANN_RE.sub("", content)
    content = BLOCK_ID_RE.sub("", content).strip()
    extra = [r for r in rest if r.strip()]
    if extra:
        content = "\n".join([content] + [BLOCK_ID_RE.sub("", r).rstrip() for r in extra])
    sect = section or ""
    if ids:
        event_id = ids[0]
    else:
        base = f"M:{slug(sect, 4)}:{slug(content)}"
        n = seen.get(base, 0) + 1
        seen[base] = n
        event_id = base if n == 1 else f"{base}-{n}"
    timestamp = added or updated
    return Event(
        id=event_id,
        type=section_type(sect, config),
        timestamp=timestamp,
        content=content,
        file=path,
        line=first + 1,
        end_line=last + 1,
        kind="curated",
        title=sect,
        heading=sect,
        tags=dedupe(inline_tags(content)),
        links=dedupe([lk for lk in wikilinks(body) if lk not in sources]),
        block_ids=dedupe(ids),
        category=section,
        updated=updated,
        previous=previous,
        sources=dedupe(sources),
        explicit_id=bool(ids),
    )
