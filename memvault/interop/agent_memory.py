"""agent-memory/0.1 files in and out of a vault (docs/interop.md).

Import writes each entry as an ordinary daily-log entry on its `created_at` day with the file's id
as its `Id:`, so a second import of the same file finds every entry and adds nothing; a tombstone
becomes a `Forgotten:` line, `supersedes` a `Supersedes:` line. Export writes the vault's typed
log entries, the superseded and forgotten ones included (a tombstone after a forgotten one), so
the file's current view is the vault's.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, tzinfo
from pathlib import Path
from typing import Any

from memvault.check.secrets.scan import find_secrets
from memvault.entries.markdown import inline_tags
from memvault.entries.model import Event
from memvault.entries.presentations import re_encounter
from memvault.entries.scopes import in_scope, wanted_scope
from memvault.errors import SecretRefused
from memvault.fsio import atomic_write
from memvault.interop import amfile
from memvault.interop.amfile import BadFile, Entry, Tombstone
from memvault.interop.amfile import zulu as zulu_time
from memvault.interop.ids import ORIGIN_KEY, Ids, index, origin
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
    """The vault's typed log entries as records, oldest first; a tombstone follows each forgotten one.
    `scope`: the entries of that scope and the global ones (`entries/scopes.py`, as context and the
    MemoryBlock export), less those the vault holds superseded by an entry the file leaves out."""
    tl, now, want = vault.timeline, at or vault.now(), wanted_scope(scope)
    typed = [ev for ev in tl.events if ev.kind == "log" and not ev.is_note and ev.timestamp is not None
             and tl.by_id.get(ev.id) is ev and in_scope(ev.scope, want) and not re_encounter(ev)]
    superseded = {ev.id for ev in typed if tl.status(ev, now) == "superseded"}
    while True:  # dropping an entry may leave what it superseded without a superseder in the file
        ids = {ev.id for ev in typed}  # a supersedes naming a note or a bullet names nothing the file holds
        covered = {tl.supersedes[i] for i in ids if tl.supersedes.get(i) in ids}
        keep = [ev for ev in typed if ev.id not in superseded or ev.id in covered]
        if len(keep) == len(typed):
            break
        typed = keep
    out: list[amfile.Record] = []
    for ev in typed:
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

def vault_tag(tag: str) -> str:
    """A file's tag as the vault writes and reads it: one lower-case word. Spaces and commas (the
    `Tags:` line's separators) inside it become `-`, so `"key bindings"` and `"a,b"` stay one tag."""
    parts = (p.lstrip("#") for p in re.split(r"[,\s]+", tag.strip().lower()))
    return "-".join(p for p in parts if p)


def entry_tags(e: Entry) -> tuple[str, ...]:
    """The tags an imported entry has in the vault, the kind first: the file's, normalized, and
    the inline `#tags` of its text (the vault reads those as tags too)."""
    tags = (e.kind, *(vault_tag(t) for t in e.tags), *inline_tags(e.text))
    return tuple(t for t in dict.fromkeys(tags) if t)


def normal(e: Entry) -> tuple[Any, ...]:
    """What an import compares to decide whether the vault already holds an entry (its time and
    `supersedes` aside: the vault's ids for those differ); the file's side as the vault would read it."""
    return (e.kind, strip_trailing_space(e.text.replace("\r\n", "\n").strip()),
            None if e.scope in (None, "global") else e.scope,
            tuple(sorted(set(entry_tags(e)) - {e.kind})), e.source,
            1.0 if e.confidence is None else e.confidence, e.expires_at)


def same_in_vault(vault: ParsedVault, ids: Ids, e: Entry, dead: bool) -> str | None:
    """The entry the vault holds with `e`'s content: any version of `e.id` counts (an older line
    of the vault's own export, an old file imported again), so what a later version replaced never
    comes back; so does the entry with its id, or one at its time (a local entry's export coming
    back under the id another vault gave it). A version with a `Forgotten:` line counts only when
    the file's entry is deleted too (written again after its tombstone, it lives again); one that
    `maintain` forgot counts (the file saying it again is no reason to bring it back)."""
    want = normal(e)
    for ev in ids.candidates(e.id, e.created_at):
        if ev.timestamp is not None and normal(to_entry(ev, None)) == want and (dead or ev.forgotten is None):
            return ev.id
    return None


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
    refuse_secret_ids(mf.records, name)
    entries, dead = amfile.latest(mf.records)
    ids = index(by_id, tl.supersedes)
    also = {r.id for r in mf.records}  # a new id is free in the vault and the file
    mapped: dict[str, str] = {}  # the file's id -> the vault's id of its newest version
    planned: dict[str, Planned] = {}
    for e in sorted(entries.values(), key=lambda e: (e.created_at, e.line)):
        if e.expires_at is not None and e.expires_at <= e.created_at:
            res.skipped.append({"id": e.id, "line": e.line, "reason": "expires_at is not after created_at: never live"})
            continue
        same = same_in_vault(vault, ids, e, e.id in dead)
        if same is not None:
            mapped[e.id] = same
            res.skipped.append({"id": e.id, "line": e.line, "reason": f"already in the vault as {same}"})
            continue
        have = ids.replaceable(e.id)
        new_id = ids.free(e.id, also - {e.id})
        ids.taken.add(new_id)
        mapped[e.id] = new_id
        planned[e.id] = _planned(e, new_id, have)
        note = dst_note(e.created_at, vault.config.tz)
        if note:
            res.warnings.append(f"{name}:{e.line}: created_at {note}")
        if have is not None:
            res.warnings.append(f"{name}:{e.line}: {e.id} says something else than the vault's {have} (or is "
                                f"live again after a tombstone); written as {new_id}, which supersedes it")
        elif new_id != e.id:
            res.warnings.append(f"{name}:{e.line}: {taken_by(by_id, e.id)}; written as {new_id} beside it")
    _link(planned, entries, mapped, ids, name, res)
    refuse_cycles(planned, tl.supersedes, name)
    forgets = _tombstones(vault, ids, planned, dead, mapped, name, res)
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


def dst_note(at: datetime, tz: tzinfo) -> str | None:
    """What a daylight-saving change does to `at` in the vault's zone (pure): a time without an
    offset that the clocks skip (read as the same instant an hour on), or an instant in the hour
    they repeat (a heading has no offset, so the vault reads it as the first of the two)."""
    local = at.astimezone(UTC).astimezone(tz)  # through UTC: astimezone to its own zone changes nothing
    if at.tzinfo is tz and local.replace(tzinfo=None) != at.replace(tzinfo=None):
        return (f"{at.replace(tzinfo=None).isoformat()} does not exist in {tz} (the clocks skip it); "
                f"written as {local.replace(tzinfo=None).isoformat()}")
    if local.fold and local.replace(fold=0).utcoffset() != local.utcoffset():
        return (f"{zulu_time(at)} falls in the hour {tz} repeats; the vault reads "
                f"{local.replace(tzinfo=None).isoformat()} as the first of the two, an hour earlier")
    return None


def taken_by(by_id: dict[str, Event], fid: str) -> str:
    """Why a file's id is not free (pure): who holds it."""
    ev = by_id.get(fid)
    if ev is not None and not ev.explicit_id:
        return f"the vault's {fid} is a local entry whose id comes from its time, not the same memory"
    if ev is not None:
        return f"the vault's {fid} is another memory (imported as {origin(ev)})"
    return f"the file's id {fid} is another entry's in this import or the file"


def _planned(e: Entry, new_id: str, previous: str | None) -> Planned:
    extra = () if new_id == e.id else (f"Metadata: {json.dumps({ORIGIN_KEY: e.id}, ensure_ascii=False)}",)
    return Planned(id=new_id, type=KIND_TYPES[e.kind], text=e.text, at=e.created_at, line=e.line,
                   tags=entry_tags(e), source=e.source,
                   scope=None if e.scope in (None, "global") else e.scope, confidence=e.confidence,
                   expires=e.expires_at, supersedes=previous, extra=extra)


def _link(planned: dict[str, Planned], entries: dict[str, Entry], mapped: dict[str, str],
          ids: Ids, name: str, res: Result) -> None:
    """`supersedes` as the vault's id of the newest version of what it names."""
    for fid, p in list(planned.items()):
        ref = entries[fid].supersedes
        if not ref or ref == fid:
            continue
        target = mapped.get(ref) or ids.replaceable(ref)
        if target is None:
            held = ("the file holds but does not import (never live)" if ref in entries else
                    "neither the file nor the vault holds" if ref not in ids.by_id else
                    "the vault holds only as a local entry whose id comes from its time")
            res.warnings.append(f"{name}:{p.line}: {fid} supersedes {ref}, which {held}; no Supersedes: line written")
        elif p.supersedes is None:
            planned[fid] = replace(p, supersedes=target)
        elif p.supersedes != target:
            res.warnings.append(f"{name}:{p.line}: {p.id} replaces {p.supersedes}; its supersedes {ref} is not "
                                "written (an entry supersedes one other)")


def _tombstones(vault: ParsedVault, ids: Ids, planned: dict[str, Planned], dead: dict[str, Tombstone],
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
        vid = mapped.get(fid) or ids.replaceable(fid)
        if vid is None:
            res.warnings.append(f"{name}:{t.line}: tombstone for {fid}, which neither the file nor the vault holds")
            continue
        event = by_id[vid]
        if event.forgotten is not None or vault.timeline.status(event, vault.now()) == "forgotten":
            res.skipped.append({"id": fid, "line": t.line, "reason": f"{vid} is forgotten already"})
            continue
        when = (t.created_at or vault.now()).astimezone(tz)
        later.append((event, tombstone(when, None)))
        res.forgotten.append(vid)
    return later


def refuse_cycles(planned: dict[str, Planned], vault_links: dict[str, str], name: str) -> None:
    """A `Supersedes:` chain that comes back to where it started (`check`'s MV013, which the
    pre-commit hook refuses) refuses the import before anything is written, naming the line."""
    links = dict(vault_links)
    links.update({p.id: p.supersedes for p in planned.values() if p.supersedes})
    for p in planned.values():
        seen, at = {p.id}, links.get(p.id)
        while at is not None:
            if at in seen:
                raise BadFile(name, p.line, f"{p.id} supersedes {p.supersedes}, which leads back to {at}: a "
                                            "supersession cycle (check's MV013); nothing was imported")
            seen.add(at)
            at = links.get(at)


def refuse_secret_ids(records: tuple[amfile.Record, ...], name: str) -> None:
    """A tombstone's id is never written, but messages name it: one that looks like a secret
    refuses the import as a secret anywhere else would (an entry's id is checked when rendered)."""
    for rec in records:
        hits = find_secrets(f"Id: {rec.id}", honour_allow=False) if isinstance(rec, Tombstone) else []
        if hits:
            raise SecretRefused(f"{name}:{rec.line}: the tombstone's id {hits[0].message()}; nothing was imported",
                                file=name, line=rec.line)
