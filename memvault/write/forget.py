"""Forgetting in the files (memorywire's `forget`, interop's imported tombstones): a `Forgotten:`
tombstone line added to entries (soft), or their lines removed (hard). One atomic rewrite per file
under the vault's lock (`fsio.rewrite`), the entries found again in the bytes as they are then, so
an edit saved meanwhile is neither lost nor overwritten; git keeps what a hard delete removed.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from datetime import datetime

from memvault.entries.model import Event
from memvault.errors import MemvaultError, Refused
from memvault.fsio import decode_text, locked, rewrite
from memvault.layout import writable
from memvault.parsed import ParsedVault, parse_text
from memvault.write.guard import check_value, check_written
from memvault.write.log import WRITE_ATTEMPTS
from memvault.write.review import insert_line


def tombstone(when: datetime, reason: str | None) -> str:
    """The `Forgotten:` line (docs/format.md, "Forgetting"): its time to the second, a reason."""
    line = f"Forgotten: {when.replace(microsecond=0).isoformat()}"
    if reason and reason.strip():
        line += ", " + " ".join(check_value(reason, "reason").split())
    check_written(line, where="the Forgotten: line")
    return line


def forgettable(event: Event) -> str | None:
    """Why `forget` will not touch this event (None: it will): it takes typed log entries, whose
    lines are theirs alone; a note's metadata would forget its whole section, a bullet is curate's."""
    if event.kind == "curated":
        return f"{event.id} is a MEMORY.md bullet; curate owns that file (edit it, or supersede it from a log)"
    if event.is_note:
        return f"{event.id} is a note (a freeform section of {event.file}); forget takes typed entries"
    return None


def forget_soft(vault: ParsedVault, events: list[Event], line: str) -> list[str]:
    """Add `line` (a tombstone) to each entry's metadata; the ids written."""
    return _per_file(vault, events, lambda raw, current: _add_lines(raw, current, line), "forgotten",
                     landed=lambda e: e.forgotten is not None)


def forget_hard(vault: ParsedVault, events: list[Event]) -> list[str]:
    """Remove each entry's lines (heading to last metadata line, and the blank line before it)."""
    return _per_file(vault, events, _remove_lines, "removed")


def _add_lines(raw: bytes, current: list[Event], line: str) -> bytes:
    for event in sorted(current, key=lambda e: -e.line):  # bottom up: earlier line numbers hold
        raw = insert_line(raw, event, line)
    return raw


def _remove_lines(raw: bytes, current: list[Event]) -> bytes:
    lines = raw.split(b"\n")
    for event in sorted(current, key=lambda e: -e.line):
        start, end = event.line - 1, event.end_line
        while end < len(lines) and not lines[end].strip():  # the blank lines after it go too,
            end += 1
        if end == len(lines) and start > 0 and not lines[start - 1].strip():  # or, at the end, those before
            while start > 0 and not lines[start - 1].strip():
                start -= 1
            lines = lines[:start] + [b""]
            continue
        del lines[start:end]
    return b"\n".join(lines)


Edit = Callable[[bytes, list[Event]], bytes]


def _per_file(vault: ParsedVault, events: list[Event], edit_bytes: Edit, verb: str,
              landed: Callable[[Event], bool] | None = None) -> list[str]:
    by_file: dict[str, list[Event]] = defaultdict(list)
    for event in events:
        by_file[event.file].append(event)
    done: list[str] = []
    for rel in sorted(by_file):
        done += _edit_file(vault, rel, {e.id for e in by_file[rel]}, edit_bytes, verb, landed)
    return done


def _edit_file(vault: ParsedVault, rel: str, ids: set[str], edit_bytes: Edit, verb: str,
               landed: Callable[[Event], bool] | None) -> list[str]:
    path = writable(vault.root, rel)
    day = vault.files[rel].date if rel in vault.files else None
    found: list[str] = []

    def edit(raw: bytes | None) -> bytes:
        if raw is None:
            raise Refused(f"{rel} is gone; nothing was {verb}", file=rel)
        text, notes = decode_text(raw)
        if notes:
            raise Refused(f"{rel}:{notes[0][0]}: {notes[0][1]}; fix the file first (memvault check lists it)",
                          file=rel, line=notes[0][0])
        current = [e for e in parse_text(text, rel, vault.config, day).events if e.id in ids]
        missing = ids - {e.id for e in current}
        if missing:
            raise Refused(f"{', '.join(sorted(missing))} no longer in {rel}; nothing was {verb}", file=rel)
        new = edit_bytes(raw, current)
        if landed is not None:
            after = {e.id: e for e in parse_text(decode_text(new)[0], rel, vault.config, day).events}
            lost = sorted(i for i in ids if i not in after or not landed(after[i]))
            if lost:
                raise Refused(f"{rel}: the line added to {', '.join(lost)} would not be read as its metadata "
                              "(an unclosed code block?); nothing was written", file=rel)
        found[:] = [e.id for e in current]
        return new

    with locked(vault.lock_path, what=rel, file=rel):
        rewrite(path, edit, attempts=WRITE_ATTEMPTS, what=rel)
    if not found:  # pragma: no cover - rewrite returns only after edit succeeded
        raise MemvaultError(f"{rel}: nothing was {verb}; please report this")
    return found
