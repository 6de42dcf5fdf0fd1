"""agent-memory/0.1 files in and out of a vault (docs/interop.md).

Import writes each entry as an ordinary daily-log entry on its `created_at` day with the file's id
as its `Id:`, so a second import of the same file finds every entry and adds nothing; a tombstone
becomes a `Forgotten:` line, `supersedes` a `Supersedes:` line. Export writes the vault's typed
log entries, the superseded and forgotten ones included (a tombstone after a forgotten one), so
the file's current view is the vault's.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from memvault.entries.model import Event
from memvault.fsio import atomic_write
from memvault.interop import amfile
from memvault.interop.amfile import BadFile, Entry, Tombstone
from memvault.interop.writer import Planned, prepare, write
from memvault.parsed import ParsedVault
from memvault.write.forget import forget_soft, tombstone
from memvault.write.guard import strip_trailing_space

# kind -> the entry's type; the kind itself is the entry's first tag, so export gives it back
KIND_TYPES = {"preference": "belief", "fact": "belief", "avoid": "belief", "lesson": "observation",
              "source": "observation"}
# a vault entry without a kind tag: its kind by its type
TYPE_KINDS = {"belief": "fact", "decision": "fact", "correction": "fact", "observation": "lesson",
              "procedure": "lesson"}
VERSION = "~"  # `X~2`: the entry that replaces X when a later import finds X's text changed


@dataclass
class Result:
    file: str
    format: str
    dry_run: bool
    written: list[dict[str, Any]] = field(default_factory=list)
    skipped: list[dict[str, Any]] = field(default_factory=list)
    forgotten: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


# -- vault -> file ------------------------------------------------------------------------------

def to_entry(event: Event, supersedes: str | None) -> Entry:
    """A typed log entry as an agent-memory entry (pure)."""
    kind = next((t for t in event.tags if t in amfile.KINDS), TYPE_KINDS.get(event.type, "fact"))
    assert event.timestamp is not None
    return Entry(id=event.id, kind=kind, text=event.content, created_at=event.timestamp,
                 scope=event.scope if event.scope and event.scope != "global" else None,
                 tags=tuple(t for t in event.tags if t != kind), source=event.source,
                 confidence=event.confidence0, expires_at=event.expires, supersedes=supersedes)


def exported(vault: ParsedVault, scope: str | None = None, at: datetime | None = None) -> list[amfile.Record]:
    """The vault's typed log entries as records, oldest first; a tombstone follows each forgotten one."""
    tl, now = vault.timeline, at or vault.now()
    typed = [ev for ev in tl.events if ev.kind == "log" and not ev.is_note and ev.timestamp is not None
             and tl.by_id.get(ev.id) is ev]
    ids = {ev.id for ev in typed}  # a supersedes naming a note or a bullet names nothing the file holds
    out: list[amfile.Record] = []
    for ev in typed:
        if scope is not None and (ev.scope or "global") not in (scope, "global"):
            continue  # as context and the MemoryBlock export: a global memory holds for every scope
        target = tl.supersedes.get(ev.id)
        out.append(to_entry(ev, target if target in ids else None))
        status = tl.status(ev, now)
        gone = tl.forgotten_at(ev, status) if status == "forgotten" else ev.forgotten
        if gone is not None:
            out.append(Tombstone(ev.id, gone))
    return out


def export_text(vault: ParsedVault, scope: str | None = None) -> str:
    return amfile.dump(vault.now(), exported(vault, scope))


def export_file(vault: ParsedVault, scope: str | None, out: Path | None) -> dict[str, Any]:
    """The file's text (`out` None) or the file written atomically, and what it holds."""
    records = exported(vault, scope)
    text = amfile.dump(vault.now(), records)
    if out is not None:
        atomic_write(out, text)
    return {"format": "agent-memory", "file": str(out) if out else None, "text": None if out else text,
            "entries": sum(isinstance(r, Entry) for r in records),
            "tombstones": sum(isinstance(r, Tombstone) for r in records)}


# -- file -> vault ------------------------------------------------------------------------------

def normal(e: Entry) -> tuple[Any, ...]:
    """What an import compares to decide whether the vault already holds an entry (its time and
    `supersedes` aside: the vault's ids for those differ)."""
    return (e.kind, strip_trailing_space(e.text.replace("\r\n", "\n").strip()),
            None if e.scope in (None, "global") else e.scope,
            tuple(sorted({t.lower().lstrip("#") for t in e.tags} - {e.kind})), e.source,
            1.0 if e.confidence is None else e.confidence, e.expires_at)


def versions(by_id: dict[str, Event], fid: str) -> tuple[str | None, int]:
    """The newest version of `fid` the vault holds (`fid`, `fid~2`, …) and the next number."""
    found = fid if fid in by_id else None
    k = 2
    while f"{fid}{VERSION}{k}" in by_id:
        found, k = f"{fid}{VERSION}{k}", k + 1
    return found, k


def import_file(vault: ParsedVault, path: Path, *, dry_run: bool = False, name: str | None = None) -> Result:
    name = name or str(path)
    text = read_text(path, name)
    mf = amfile.parse(text, name, vault.config.tz)
    return import_records(vault, mf, name, dry_run=dry_run)


def read_text(path: Path, name: str) -> str:
    try:
        return Path(path).read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        line = exc.object[: exc.start].count(b"\n") + 1
        raise BadFile(name, line, "not UTF-8 text") from None


def import_records(vault: ParsedVault, mf: amfile.MemoryFile, name: str, *, dry_run: bool = False) -> Result:
    tl = vault.timeline
    by_id = tl.by_id
    res = Result(name, "agent-memory", dry_run)
    entries, dead = amfile.latest(mf.records)
    mapped: dict[str, str] = {}  # the file's id -> the vault's id of its newest version
    planned: dict[str, Planned] = {}
    for e in sorted(entries.values(), key=lambda e: (e.created_at, e.line)):
        if e.expires_at is not None and e.expires_at <= e.created_at:
            res.skipped.append({"id": e.id, "line": e.line, "reason": "expires_at is not after created_at: never live"})
            continue
        have, k = versions(by_id, e.id)
        # the same entry, unless the vault forgot it and the file wrote it again after its tombstone
        if have is not None and normal(to_entry(by_id[have], None)) == normal(e) and (
                by_id[have].forgotten is None or e.id in dead):
            mapped[e.id] = have
            res.skipped.append({"id": e.id, "line": e.line, "reason": f"already in the vault as {have}"})
            continue
        new_id = e.id if have is None else f"{e.id}{VERSION}{k}"
        mapped[e.id] = new_id
        planned[e.id] = _planned(e, new_id, have)
        if have is not None:
            res.warnings.append(f"{name}:{e.line}: {e.id} says something else than the vault's {have} (or is "
                                f"live again after a tombstone); written as {new_id}, which supersedes it")
    _link(planned, entries, mapped, by_id, name, res)
    forgets = _tombstones(vault, planned, dead, mapped, name, res)
    ready = prepare(vault, list(planned.values()), name)
    res.written = [{"id": r.event.id, "type": r.event.type, "at": r.event.timestamp.isoformat()
                    if r.event.timestamp else None, "file": r.rel, "from_line": r.planned.line} for r in ready]
    if dry_run:
        res.files = sorted({r.rel for r in ready})
        return res
    res.files = write(vault, ready)
    for event, line in forgets:
        forget_soft(vault, [event], line)
    return res


def _planned(e: Entry, new_id: str, previous: str | None) -> Planned:
    tags = (e.kind, *(t for t in e.tags if t.lower() != e.kind))
    return Planned(id=new_id, type=KIND_TYPES[e.kind], text=e.text, at=e.created_at, line=e.line,
                   tags=tuple(" ".join(t.split()).replace(" ", "-") for t in tags), source=e.source,
                   scope=None if e.scope in (None, "global") else e.scope, confidence=e.confidence,
                   expires=e.expires_at, supersedes=previous)


def _link(planned: dict[str, Planned], entries: dict[str, Entry], mapped: dict[str, str],
          by_id: dict[str, Event], name: str, res: Result) -> None:
    """`supersedes` as the vault's id of the newest version of what it names."""
    for fid, p in list(planned.items()):
        ref = entries[fid].supersedes
        if not ref or ref == fid:
            continue
        target = mapped.get(ref) or versions(by_id, ref)[0]
        if target is None:
            res.warnings.append(f"{name}:{p.line}: {fid} supersedes {ref}, which neither the file nor the vault "
                                "holds; no Supersedes: line written")
        elif p.supersedes is None:
            planned[fid] = replace(p, supersedes=target)
        elif p.supersedes != target:
            res.warnings.append(f"{name}:{p.line}: {p.id} replaces {p.supersedes}; its supersedes {ref} is not "
                                "written (an entry supersedes one other)")


def _tombstones(vault: ParsedVault, planned: dict[str, Planned], dead: dict[str, Tombstone],
                mapped: dict[str, str], name: str, res: Result) -> list[tuple[Event, str]]:
    """Tombstones of entries this import writes join their metadata; those of entries the vault
    holds already become a `Forgotten:` line added to them (the forget edit memorywire uses)."""
    tz, by_id = vault.config.tz, vault.timeline.by_id
    later: list[tuple[Event, str]] = []
    for fid, t in dead.items():
        if fid in planned:
            p = planned[fid]
            when = (t.created_at or p.at).astimezone(tz)
            planned[fid] = replace(p, extra=(*p.extra, tombstone(max(when, p.at.astimezone(tz)), None)))
            res.forgotten.append(p.id)
            continue
        vid = mapped.get(fid) or versions(by_id, fid)[0]
        if vid is None:
            res.warnings.append(f"{name}:{t.line}: tombstone for {fid}, which neither the file nor the vault holds")
            continue
        event = by_id[vid]
        if event.forgotten is not None:
            res.skipped.append({"id": fid, "line": t.line, "reason": f"{vid} is forgotten already"})
            continue
        when = (t.created_at or vault.now()).astimezone(tz)
        later.append((event, tombstone(when, None)))
        res.forgotten.append(vid)
    return later
