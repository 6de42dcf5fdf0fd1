"""The archive's text: forgotten entries moved out of the daily logs, never deleted. Pure.

An archived entry keeps its lines exactly as the log had them, under one marker line
(`forgotten.ARCHIVED_RE`) naming its id, the log it came from, when and why. Archive files
(`[retention] archive_dir`: `forgotten/YYYY.md` by the entry's year, beside `memory/`, not the
`memory/archive/` of compacted days, which the vault reads) lie outside what the vault
reads, so an archived entry is in no result; to bring one back, move its lines back into a log.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from memvault.entries.model import Event
from memvault.entries.timeline import Timeline
from memvault.forgotten import ARCHIVED_RE, Forgetting, archived_line


@dataclass(frozen=True, slots=True)
class Block:
    """One entry on its way to the archive."""

    record: Forgetting
    source: str  # the log it leaves (vault-relative)
    text: str  # its lines as written
    target: str  # the archive file (vault-relative)


def target_of(folder: str, event: Event) -> str:
    year = event.timestamp.year if event.timestamp is not None else "undated"
    return f"{folder}/{year}.md"


def pinned(tl: Timeline, ev: Event, linked: dict[str, list[str]]) -> str | None:
    """Why moving `ev` out of the vault would change another entry's status or a reference (it
    supersedes or reconfirms one, or a `Supersedes:`, `Reconfirms:`, `[[link]]` or MEMORY.md
    bullet names it); None when nothing would. Such an entry stays in its log, forgotten."""
    if (target := tl.supersedes.get(ev.id)) is not None:
        return f"it {'corrects' if ev.type == 'correction' else 'supersedes'} {target}"
    if targets := tl.reconfirms_of.get(ev.id):
        return f"it reconfirms {', '.join(targets)}"
    for names, one, many in ((tl.superseded_by.get(ev.id), "supersedes", "supersede"),
                             (tl.reconfirmed_by.get(ev.id), "reconfirms", "reconfirm"),
                             (linked.get(ev.id), "links to", "link to"), (list(tl.cited_by(ev)), "cites", "cite")):
        if names:
            return f"{', '.join(names)} {one if len(names) == 1 else many} it"
    return None


def lines_of(text: str, event: Event) -> str:
    """The entry's lines exactly as the file has them (blank lines around it left out)."""
    return "\n".join(text.split("\n")[event.line - 1 : event.end_line]).strip("\n")


def header(target: str) -> str:
    name = target.rsplit("/", 1)[-1].removesuffix(".md")
    return (f"# Archive {name}\n\nEntries `memvault maintain --archive` moved out of the daily logs: forgotten "
            "(docs/retention.md#maintenance), never deleted. memvault does not read this file; to bring an "
            "entry back, move its lines back into a log.\n")


def archived_ids(text: str) -> set[str]:
    return set(archived_blocks(text))


def archived_blocks(text: str) -> dict[str, str]:
    """Each archived entry's lines, by id (from its marker line to the next marker)."""
    marks = list(ARCHIVED_RE.finditer(text))
    ends = [m.start() for m in marks[1:]] + [len(text)] if marks else []
    return {m["id"]: text[m.end():end].strip("\n") for m, end in zip(marks, ends, strict=True)}


def add(existing: str | None, target: str, blocks: Iterable[Block]) -> str | None:
    """The archive file with `blocks` appended (those it does not hold yet); None when all are there."""
    text = existing if existing is not None else header(target)
    have = archived_ids(text)
    new = [b for b in blocks if b.record.id not in have]
    if not new:
        return None
    parts = [text.rstrip("\n")] + [f"{archived_line(b.record, b.source)}\n{b.text}" for b in new]
    return "\n\n".join(parts) + "\n"


def cut(text: str, events: Iterable[Event]) -> str:
    """`text` without the lines of `events` (each removed with one blank line around it, so no
    gap of blank lines is left where it was)."""
    lines = text.split("\n")
    for ev in sorted(events, key=lambda e: e.line, reverse=True):
        start, end = ev.line - 1, ev.end_line
        while end < len(lines) and not lines[end].strip():
            end += 1  # the blank lines after it go with it...
        if end < len(lines) and start > 0 and lines[start - 1].strip():
            end = max(ev.end_line, end - 1)  # ...but one stays between the lines it separated
        del lines[start:end]
    return "\n".join(lines)
