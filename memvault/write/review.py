"""Spaced review of entries (`memvault review`): what is due, and recording how a review went.

Which entries take part: live typed log entries that carry a `Review:` line, as the seed's
spaced-review metadata is for "memories that should be deliberately revisited", not for every
observation. `start_review` adds that line; `record_review` appends one `Reviewed:` line with the
outcome and the next gap (`memvault.entries.spaced`: the format and the schedule). Both add one
line to the entry's own metadata block in its log, through `fsio.rewrite` under the vault's
lock, and touch no other line (no other byte) of the file.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from memvault.entries.model import Event
from memvault.entries.render import BLOCK_STARTS
from memvault.entries.spaced import (
    DEFAULT_RATIO,
    OUTCOMES,
    Outcome,
    Plan,
    Reviewed,
    Schedule,
    entry_schedule,
    format_duration,
    format_plan,
    format_reviewed,
    next_interval,
    parse_duration,
)
from memvault.errors import InputError, MemvaultError, Refused
from memvault.fsio import decode_text, locked, rewrite
from memvault.layout import MEMORY_FILE, writable
from memvault.parsed import ParsedVault, parse_text
from memvault.search import access
from memvault.write.guard import check_written
from memvault.write.log import WRITE_ATTEMPTS


def scheduled(vault: ParsedVault, at: datetime) -> list[tuple[Event, Schedule]]:
    """Every live typed entry with a `Review:` line and its schedule, soonest due first."""
    found = []
    for ev in vault.timeline.live(at):
        if ev.kind == "log" and not ev.is_note and "review" in ev.meta:
            sched = entry_schedule(ev, vault.config.tz)
            if sched is not None:
                found.append((ev, sched))
    return sorted(found, key=lambda pair: (pair[1].due, pair[0].id))


def due_reviews(vault: ParsedVault, at: datetime | None = None, *, everything: bool = False) -> list[dict[str, Any]]:
    """The entries due for review at `at` (next review at or before it), or with `everything`
    every scheduled entry; as `review --json` prints them."""
    at = at or vault.now()
    return [review_dict(ev, s, at) for ev, s in scheduled(vault, at) if everything or s.due <= at]


def review_of(vault: ParsedVault, ref: str, at: datetime | None = None) -> dict[str, Any]:
    """The schedule and history of the entry `ref` names, due or not."""
    at = at or vault.now()
    event = _reviewable(vault, ref)
    return review_dict(event, _schedule_of(vault, event), at)


def review_dict(event: Event, sched: Schedule, at: datetime) -> dict[str, Any]:
    return {
        "id": event.id, "type": event.type, "title": event.title, "content": event.content,
        "file": event.file, "line": event.line,
        "target": format_duration(sched.plan.target), "ratio": sched.plan.ratio,
        "interval": format_duration(sched.interval), "next_review": sched.due.isoformat(),
        "due": sched.due <= at, "last_success": sched.last_success,
        "history": [{"at": r.at.isoformat(), "outcome": r.outcome, "interval": format_duration(r.interval),
                     "next_review": r.next.isoformat()} for r in sched.history],
    }


def start_review(vault: ParsedVault, ref: str, target: str = "30d", ratio: float = DEFAULT_RATIO,
                 at: datetime | None = None) -> dict[str, Any]:
    """Put the entry `ref` names on the review schedule: add `Review: <target>, ratio <ratio>`."""
    length = parse_duration(target)
    if length is None:
        raise InputError(f"--target {target!r}: give a duration such as 30d, 12h or 90m")
    if not 0 < ratio <= 1:
        raise InputError(f"--ratio {ratio:g} must be above 0 and at most 1")
    event = _reviewable(vault, ref)
    if "review" in event.meta:
        raise Refused(f"{event.id} is already scheduled for review ({event.file}: Review: {event.meta['review']}); "
                      "edit that line to change its plan")
    line = format_plan(Plan(length, ratio))
    return _add_line(vault, event, line, lambda ev: "review" in ev.meta, at or vault.now())


def record_review(vault: ParsedVault, ref: str, outcome: Outcome, at: datetime | None = None) -> dict[str, Any]:
    """Record a review of the entry `ref` names: a success lengthens the next gap, a failure
    shortens it (`spaced.next_interval`); appends the `Reviewed:` line saying so. A success
    also counts one access (recency, curate's recall counts, the retention models' access
    bonus), as recalling it with `show` does; a failure does not."""
    if outcome not in OUTCOMES:
        raise InputError(f"outcome {outcome!r}: ok or failed")
    at = (at or vault.now()).astimezone(vault.config.tz).replace(second=0, microsecond=0)
    event = _reviewable(vault, ref)
    sched = _schedule_of(vault, event)
    if sched.history and at < sched.history[-1].at:
        raise Refused(f"{event.id} was last reviewed at {sched.history[-1].at.isoformat()}, after {at.isoformat()}")
    done = Reviewed(at, outcome, next_interval(sched.plan, sched.interval, outcome))
    count = len(sched.history)
    result = _add_line(vault, event, format_reviewed(done),
                       lambda ev: (s := entry_schedule(ev, vault.config.tz)) is not None and len(s.history) == count + 1, at)
    if outcome == "ok":  # a successful review is a retrieval: one access, as `show` counts one
        access.record(vault.root, [event.id], at)
    return result


def _reviewable(vault: ParsedVault, ref: str) -> Event:
    found = vault.locate(ref).event  # NotFoundError / Ambiguous as `show` raises them
    if found.kind != "log" or found.is_note or found.file == MEMORY_FILE:
        what = "a MEMORY.md bullet" if found.kind == "curated" else "a note (a freeform section)"
        raise Refused(f"{found.id} is {what}; spaced review is for typed log entries (`## HH:MM - Type`)")
    status = vault.timeline.status(found, vault.now())
    if status != "live":
        raise Refused(f"{found.id} is {status}; only live entries are reviewed")
    return found


def _schedule_of(vault: ParsedVault, event: Event) -> Schedule:
    sched = entry_schedule(event, vault.config.tz)
    if sched is None:
        raise Refused(f"{event.id} is not scheduled for review (it has no readable Review: line); "
                      f"`memvault review {event.id} --start` schedules it")
    return sched


def _add_line(vault: ParsedVault, event: Event, line: str, landed: Callable[[Event], bool],
              at: datetime) -> dict[str, Any]:
    """Append `line` to the metadata block of `event` in its file, under the lock; refused when
    the file, as it is now, would not read the line as that entry's metadata (`landed`)."""
    check_written(line, where="the review line")
    rel = event.file
    path = writable(vault.root, rel)
    day = vault.files[rel].date if rel in vault.files else None
    result: list[Event] = []

    def edit(raw: bytes | None) -> bytes:
        if raw is None:
            raise Refused(f"{rel} is gone; nothing was written")
        text, notes = decode_text(raw)
        if notes:
            raise Refused(f"{rel}:{notes[0][0]}: {notes[0][1]}; fix the file first (memvault check lists it)",
                          file=rel, line=notes[0][0])
        current = next((e for e in parse_text(text, rel, vault.config, day).events if e.id == event.id), None)
        if current is None:
            raise Refused(f"{event.id} is no longer in {rel}; nothing was written")
        new = insert_line(raw, current, line)
        after = next((e for e in parse_text(decode_text(new)[0], rel, vault.config, day).events
                      if e.id == event.id), None)
        if after is None or not landed(after):
            raise Refused(f"{rel}:{current.end_line}: the line after {event.id} would not be read as its metadata "
                          "(an unclosed code block?); nothing was written", file=rel, line=current.end_line)
        result[:] = [after]
        return new

    with locked(vault.lock_path, what=rel):
        rewrite(path, edit, attempts=WRITE_ATTEMPTS, what=rel)
    if not result:  # pragma: no cover - rewrite returns only after edit succeeded
        raise MemvaultError(f"{rel}: the review line was not written; please report this")
    after = result[0]
    sched = entry_schedule(after, vault.config.tz)
    assert sched is not None
    return review_dict(after, sched, at) | {"written": line, "line_written": after.end_line}


def insert_line(raw: bytes, event: Event, line: str) -> bytes:
    """`raw` with `line` as a new line after the entry's last line (`event.end_line`, as parsed
    from these bytes), byte for byte the same elsewhere; a blank line goes first when the entry
    has no metadata yet and ends in a list, quote, table or code block, which it would join."""
    lines = raw.split(b"\n")
    if raw.count(b"\r") != raw.count(b"\r\n"):  # a lone CR ends a line for the parser, not here
        raise Refused(f"{event.file} has bare carriage returns as line ends; memvault check --fix can "
                      "normalise them; nothing was written", file=event.file)
    k = event.end_line
    crlf = lines[k - 1].endswith(b"\r") or (k == len(lines) and b"\r\n" in raw)
    last = event.content.split("\n")[-1] if event.content else ""
    joins = last.startswith(BLOCK_STARTS) or last[:1].isdigit()
    block = ([""] if not event.meta and joins else []) + [line]
    added = [text.encode("utf-8") for text in block]
    if k == len(lines):  # the file's last line, without a newline after it: keep it that way
        eol = b"\r\n" if crlf else b"\n"
        return raw + b"".join(eol + a for a in added)
    tail = b"\r" if crlf else b""
    return b"\n".join(lines[:k] + [a + tail for a in added] + lines[k:])
