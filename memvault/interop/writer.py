"""Imported entries written into the vault's daily logs: every entry checked first (the whole
import is refused, nothing written, when one would not be: a secret, a heading in the text, a bad
time), then one atomic rewrite per day file, all under the vault's write lock, through the same
rendering, insertion and guard as `memvault log` (memvault/write/log.py).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from memvault import derived_db
from memvault.check.secrets.scan import find_secrets
from memvault.entries.daily import parse_log
from memvault.entries.model import Event
from memvault.entries.render import render_entry
from memvault.errors import InputError, Refused, SecretRefused
from memvault.fsio import append_spacing, decode_text, encode_like, locked, rewrite
from memvault.interop.amfile import BadFile
from memvault.layout import writable
from memvault.parsed import ParsedVault
from memvault.textsafety import first_disallowed
from memvault.write.guard import (
    check_entry_options,
    check_entry_text,
    check_entry_times,
    check_written,
)
from memvault.write.log import WRITE_ATTEMPTS, insert_entry, refuse_broken_frontmatter


@dataclass(frozen=True, slots=True)
class Planned:
    """One entry an import will write, with the line of the imported file it comes from."""

    id: str
    type: str
    text: str
    at: datetime
    line: int
    tags: tuple[str, ...] = ()
    source: str | None = None
    scope: str | None = None
    confidence: float | None = None
    importance: float | None = None
    expires: datetime | None = None
    supersedes: str | None = None
    reconfirms: tuple[str, ...] = ()
    extra: tuple[str, ...] = field(default=())  # more metadata lines: Forgotten:, Review:, Reviewed:


@dataclass(frozen=True, slots=True)
class Ready:
    planned: Planned
    event: Event
    block: str
    rel: str


def prepare(vault: ParsedVault, planned: list[Planned], name: str) -> list[Ready]:
    """Each entry rendered and checked as `log` checks it; the first that would be refused
    refuses the import, naming `name:line`."""
    now = vault.now()
    days: dict[str, str] = {}  # a day -> its log (finding it walks the vault: once per day)
    ready = [_ready(vault, p, name, now, days) for p in planned]
    _refuse_secrets(ready, name)
    return ready


def _refuse_secrets(ready: list[Ready], name: str) -> None:
    """`log`'s secret refusal, over all entries at once: the scanner reads a text line by line
    and is made for whole files (the pre-commit hook's scan of the day files these entries go
    to), so the blocks are scanned together and each block a finding lands in is checked alone,
    for `log`'s exact verdict and message."""
    starts, lines = [], 0
    for r in ready:
        starts.append(lines)
        lines += r.block.count("\n") + 1  # the blank line between blocks
    hits = find_secrets("\n".join(r.block for r in ready), honour_allow=False)
    for index in dict.fromkeys(bisect_right(starts, h.line - 1) - 1 for h in hits):
        r = ready[index]
        try:
            check_written(r.block, where=f"the entry from {name}:{r.planned.line}", file=name)
        except SecretRefused:
            raise secret_in(r.block, name, r.planned.line) from None


def secret_in(block: str, name: str, line: int) -> SecretRefused:
    """`log`'s refusal, said of the imported line: the field the secret is in, never its value."""
    hit = find_secrets(block, honour_allow=False)[0]
    written = block.split("\n")[hit.line - 1]
    key = written.partition(": ")[0] if FIELD.match(written) else "text"
    field = {"Tags": "a tag"}.get(key, f"the {key.lower()}")  # "looks like" needs a singular subject
    return SecretRefused(f"{name}:{line}: {field} {hit.message()}; nothing was imported. Store where the "
                         "secret lives instead (\"in the team vault under atlas/prod\")", file=name, line=line)


FIELD = re.compile(r"^(Id|Tags|Source|Scope|Supersedes|Reconfirms|Expires|Confidence|Importance): ")


def _ready(vault: ParsedVault, p: Planned, name: str, now: datetime, days: dict[str, str]) -> Ready:
    cfg = vault.config
    try:
        if p.type not in cfg.types:
            raise InputError(f"type {p.type!r} is not one of the vault's types ({', '.join(cfg.types)})")
        body = check_entry_text(p.text)
        check_entry_options(source=p.source, scope=p.scope, tags=p.tags, supersedes=p.supersedes,
                            reconfirms=p.reconfirms, entry_id=p.id)
        when = p.at.astimezone(UTC).astimezone(cfg.tz).replace(microsecond=0)
        check_entry_times(when, now, cfg.timezone, expires=p.expires)
        event = Event(id=p.id, type=p.type, timestamp=when, content=body, file="", line=0, end_line=0,
                      confidence0=1.0 if p.confidence is None else p.confidence, importance=p.importance,
                      tags=tuple(dict.fromkeys(t.lower().lstrip("#") for t in p.tags if t.strip())),
                      source=p.source, scope=p.scope, supersedes=p.supersedes,
                      expires=p.expires.astimezone(cfg.tz) if p.expires else None,  # as the other times
                      reconfirms=p.reconfirms, explicit_id=True)
        block = _all_tags(render_entry(event), event)
        if p.extra:  # after the Id: line, so they join the entry's metadata block
            block += "\n".join(p.extra) + "\n"
        day = when.date().isoformat()
        if day not in days:
            days[day] = vault.log_path_for(day).relative_to(vault.root).as_posix()
        found = first_disallowed(block, line_breaks=True)
        if found is not None:
            raise InputError(f"line {block.count(chr(10), 0, found[0]) + 1} of the entry holds {found[1]}")
    except (InputError, Refused) as exc:
        raise BadFile(name, p.line, f"{exc}; nothing was imported") from None
    return Ready(p, event, block, days[day])


def _all_tags(block: str, event: Event) -> str:
    """The entry with every tag on its `Tags:` line, in order. `render_entry` leaves out a tag the
    text carries inline (`#ops`), which the reader then puts after the others: an exported
    file's tag order would not come back."""
    if not event.tags:
        return block
    lines = block.rstrip("\n").split("\n")
    meta = max(i for i, line in enumerate(lines) if line == f"Id: {event.id}")  # render writes Id: first
    tagline = f"Tags: {', '.join(event.tags)}"
    at = next((i for i in range(meta, len(lines)) if lines[i].startswith("Tags: ")), None)
    if at is None:
        lines.insert(meta + 1, tagline)
    else:
        lines[at] = tagline
    return "\n".join(lines) + "\n"


def write(vault: ParsedVault, ready: list[Ready]) -> list[str]:
    """Write the entries, one atomic rewrite per day file under the lock; the files written."""
    by_file: dict[str, list[Ready]] = defaultdict(list)
    for r in ready:
        by_file[r.rel].append(r)
    if not by_file:
        return []
    paths = {rel: writable(vault.root, rel) for rel in by_file}  # never through a link (layout.py)
    derived_db.clear_folder(vault.derived)
    with locked(vault.lock_path, what="the import", file=next(iter(by_file))):
        for rel in sorted(by_file):  # every file first: one that refuses refuses before any is written
            if paths[rel].exists():
                _readable(paths[rel].read_bytes(), rel)
        for rel in sorted(by_file):
            items = sorted(by_file[rel], key=lambda r: r.event.timestamp)  # type: ignore[arg-type, return-value]
            _write_file(vault, paths[rel], rel, items)
    return sorted(by_file)


def _write_file(vault: ParsedVault, path: Path, rel: str, items: list[Ready]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)

    def add(raw: bytes | None) -> bytes:
        raw = raw or b""
        old = _readable(raw, rel)
        return encode_like(raw, old, with_entries(old, items, rel, vault))

    rewrite(path, add, attempts=WRITE_ATTEMPTS, what=rel)


def _readable(raw: bytes, rel: str) -> str:
    """The file's text, or a refusal when adding to it would rewrite bytes it holds (invalid
    UTF-8) or the pre-commit hook would refuse it (broken front matter), as `log` refuses."""
    old, notes = decode_text(raw)
    if notes:
        raise Refused(f"{rel}:{notes[0][0]}: {notes[0][1]}; importing would rewrite those bytes, so fix the "
                      "file first (memvault check lists it); nothing was imported", file=rel, line=notes[0][0])
    refuse_broken_frontmatter(old, rel)
    return old


def with_entries(old: str, items: list[Ready], rel: str, vault: ParsedVault) -> str:
    """`old` with every entry inserted in time order. When none goes before an entry the file
    already has (an import into new days, or after the day's last entry), they are appended
    together, without parsing the file again for each."""
    first = items[0].event.timestamp
    assert first is not None
    if not old.strip():
        return f"# {first.date().isoformat()}\n\n" + "\n".join(r.block for r in items)
    minute = first.replace(second=0)
    later = [e for e in parse_log(old, rel, vault.config).events
             if e.timestamp and not e.is_note and e.timestamp.replace(second=0, microsecond=0) > minute]
    if not later:
        return old + append_spacing(old) + "\n".join(r.block for r in items)
    text = old
    for r in items:
        text, _ = insert_entry(text, r.event, rel, vault, block=r.block)
    return text
