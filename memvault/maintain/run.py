"""`memvault maintain`: the `[retention]` policies applied to the live entries (the thin shell).

Plan (reads only): every live, dated log entry's retention now (`Timeline.retention`, the one
entry point), `policy.choose`, and, with archiving, which forgotten entries leave which log for
which archive file. Apply (under the vault's lock, every write atomic): the record first
(`.memvault/forgotten.sqlite`), then the archive files, then the logs, then the record again
with where each entry went. A kill between two writes leaves every file whole; an entry in both
its archive and its log (killed between the two) is moved on the next run, and never appended twice.
A dry run plans and writes nothing.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any

from memvault.config.core import Config
from memvault.entries.model import Event
from memvault.entries.naming import LOG_DIR
from memvault.errors import Refused
from memvault.forgotten import DEFAULTS, Forgetting, Forgotten, dumps, path_of, save
from memvault.fsio import decode_text, encode_like, locked, rewrite
from memvault.maintain import archive
from memvault.maintain.policy import Candidate, Settings, back, choose
from memvault.parsed import ParsedVault, parse_text


@dataclass
class Report:
    at: datetime
    model: str
    dry_run: bool
    considered: int = 0  # live dated log entries whose retention was computed
    forgotten: list[Forgetting] = field(default_factory=list)  # newly forgotten
    moves: list[archive.Block] = field(default_factory=list)  # archived (or, in a dry run, to be)
    back: list[tuple[str, float, str]] = field(default_factory=list)  # brought back: id, retention, why
    kept: list[tuple[str, str]] = field(default_factory=list)  # forgotten but kept in its log: id, why
    record_written: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"at": self.at.isoformat(), "model": self.model, "dry_run": self.dry_run,
                "considered": self.considered, "forgotten": [f.to_dict() for f in self.forgotten],
                "archived": [{"id": m.record.id, "from": m.source, "to": m.target} for m in self.moves],
                "brought_back": [{"id": i, "retention": float(f"{r:.6g}"), "why": w} for i, r, w in self.back],
                "kept_in_log": [{"id": i, "why": w} for i, w in self.kept],
                "record": str(Path(".memvault") / path_of(Path()).name), "record_written": self.record_written}


def settings_of(vault: ParsedVault, archive_flag: bool | None) -> Settings:
    found = Settings.of(vault.config.section("retention", DEFAULTS))
    if archive_flag is not None:
        found = replace(found, archive=archive_flag)
    if found.archive and vault.selection.selects(f"{found.archive_dir}/2000.md"):
        raise vault.config.error("retention", "archive_dir", f"[retention] archive_dir {found.archive_dir!r} is "
                                 "inside what the vault reads ([vault] include): archived entries would still "
                                 "be found; choose a folder the vault does not read")
    return found


def candidates(vault: ParsedVault, at: datetime) -> list[Candidate]:
    """Every live, dated log entry with its retention at `at`. Undated entries never fade, and
    MEMORY.md's bullets are what a person chose to keep: neither is maintain's to forget."""
    tl = vault.timeline
    return [Candidate(ev.id, tl.retention(ev, at).value, ev.timestamp, ev.importance) for ev in tl.live(at)
            if ev.kind == "log" and ev.timestamp is not None]


def held(vault: ParsedVault, at: datetime) -> list[Candidate]:
    """The dated log entries still in their logs that only the record hides at `at` (no tombstone,
    not superseded or expired), with their retention at `at`: `choose` judges them again, and
    those it no longer chooses come back (docs/retention.md#maintenance)."""
    tl = vault.timeline
    out = []
    for rid in vault.forgotten.records:
        ev = tl.by_id.get(rid)
        if ev is not None and ev.kind == "log" and ev.timestamp is not None and ev.forgotten is None \
                and tl.status(ev, at) == "forgotten":
            out.append(Candidate(ev.id, tl.retention(ev, at).value, ev.timestamp, ev.importance))
    return out


def plan(vault: ParsedVault, at: datetime, settings: Settings) -> tuple[dict[str, Forgetting], Report]:
    """The record after this run, and the report of what changes (nothing is written)."""
    report = Report(at, vault.config.decay_model, dry_run=True)
    found, hidden = candidates(vault, at), held(vault, at)
    report.considered = len(found)
    records = dict(vault.forgotten.records)
    chosen = choose(found + hidden, settings)
    still = {c.id for c in hidden}
    for choice in chosen:
        if choice.id not in still:  # one held stays forgotten as it was recorded
            records[choice.id] = Forgetting(choice.id, at, choice.retention, choice.policy, vault.config.decay_model)
            report.forgotten.append(records[choice.id])
    for c, why in back(hidden, chosen, settings):
        del records[c.id]
        report.back.append((c.id, c.retention, why))
    if settings.archive or _half_moved(vault, records, settings):
        report.moves, report.kept = _moves(vault, records, at, settings)
    return records, report


def _hidden(vault: ParsedVault, records: dict[str, Forgetting], at: datetime) -> list[Event]:
    """The entries of the logs under memory/ that `records` hide at `at` (by the timeline's one rule)."""
    tl = vault.timeline
    rule = Forgotten(records, tl.presented)
    out = []
    for rid in records:
        ev = tl.by_id.get(rid)
        if ev is not None and ev.kind == "log" and not ev.is_note and ev.file.startswith(LOG_DIR + "/") \
                and rule.hides(ev, at):
            out.append(ev)
    return out


def _half_moved(vault: ParsedVault, records: dict[str, Forgetting], settings: Settings) -> bool:
    """Whether a killed run left an entry both in its archive file and in its log."""
    return any(r.archived is None for r in records.values()) and (vault.root / settings.archive_dir).is_dir()


def _moves(vault: ParsedVault, records: dict[str, Forgetting], at: datetime,
           settings: Settings) -> tuple[list[archive.Block], list[tuple[str, str]]]:
    """The forgotten entries still in a daily log, each with its archive file. Without
    `settings.archive`, only those a killed run already put into their archive file. An entry
    whose move would change another's status or break a reference stays in its log (the
    second list, with why): it stays forgotten, only not moved."""
    out = []
    kept: list[tuple[str, str]] = []
    links: dict[str, list[str]] | None = None
    texts: dict[str, str] = {}
    archived: dict[str, dict[str, str]] = {}
    for ev in _hidden(vault, records, at):
        target = archive.target_of(settings.archive_dir, ev)
        if target not in archived:
            archived[target] = archive.archived_blocks(_read(vault.root / target))
        if not settings.archive and ev.id not in archived[target]:
            continue
        links = _linked(vault) if links is None else links
        why = archive.pinned(vault.timeline, ev, links)
        if why is not None:
            kept.append((ev.id, why))
            continue
        if ev.file not in texts:
            texts[ev.file] = _read(vault.root / ev.file)
        # a move a kill cut short: the log loses the entry only if it still reads as its archived copy
        lines = archived[target].get(ev.id, archive.lines_of(texts[ev.file], ev))
        out.append(archive.Block(records[ev.id], ev.file, lines, target))
    return out, kept


def _linked(vault: ParsedVault) -> dict[str, list[str]]:
    """For each entry a `[[day#heading]]`/`[[day#^block]]` link names, the entries linking to it."""
    tl = vault.timeline
    out: dict[str, list[str]] = defaultdict(list)
    for ev in tl.events:
        for target in dict.fromkeys((*ev.links, *ev.sources)):
            if "#" in target and (res := tl.index.resolve(f"[[{target}]]")).ok and res.target != ev.id:
                out[str(res.target)].append(ev.id)
    return out


def _read(path: Path) -> str:
    try:
        return decode_text(path.read_bytes())[0]
    except OSError:
        return ""


def maintain(vault: ParsedVault, *, dry_run: bool = False, archive_flag: bool | None = None,
             at: datetime | None = None) -> Report:
    """Apply `[retention]` (docs/retention.md#maintenance); `dry_run` writes nothing."""
    settings = settings_of(vault, archive_flag)
    when = at or vault.now()
    if dry_run:
        return plan(vault, when, settings)[1]
    with locked(vault.lock_path, what="the vault (maintain)"):
        records, report = plan(vault, when, settings)
        report.dry_run = False
        _write_record(vault.root, records, report)
        if report.moves:
            _move(vault, report.moves)
            for m in report.moves:
                records[m.record.id] = records[m.record.id]._replace(archived=m.target)
            _write_record(vault.root, records, report)
    return report


def _write_record(root: Path, records: dict[str, Forgetting], report: Report) -> None:
    """Write the record only when it changes: a second run changes no byte."""
    path = path_of(root)
    new = dumps(records.values())
    try:
        if path.read_bytes() == new:
            return
    except OSError:
        pass
    save(root, records.values())
    report.record_written = True


def _move(vault: ParsedVault, moves: list[archive.Block]) -> None:
    """Archive files first, then the logs: a kill in between leaves an entry twice, which the
    next run finishes moving; the other order could lose it."""
    by_target: dict[str, list[archive.Block]] = defaultdict(list)
    by_source: dict[str, dict[str, str]] = defaultdict(dict)
    for m in moves:
        by_target[m.target].append(m)
        by_source[m.source][m.record.id] = m.text
    for target, blocks in by_target.items():
        (vault.root / target).parent.mkdir(parents=True, exist_ok=True)
        rewrite(vault.root / target, partial(_add, target=target, blocks=blocks), what=target)
    for source, ids in by_source.items():
        rewrite(vault.root / source, partial(_cut, vault.config, source=source, moved=ids), what=source)


def _add(raw: bytes | None, *, target: str, blocks: list[archive.Block]) -> bytes | None:
    old = decode_text(raw)[0] if raw is not None else None
    new = archive.add(old, target, blocks)
    if new is None:
        return None
    return encode_like(raw, old or "", new) if raw is not None else new.encode("utf-8")


def _cut(config: Config, raw: bytes | None, *, source: str, moved: dict[str, str]) -> bytes | None:
    """The log without the entries `moved` (id -> the lines the archive got), found again in its
    bytes as they are now; an entry edited since it was archived stays (its edit is not lost)."""
    if raw is None:
        return None
    text, _ = decode_text(raw)
    events = [e for e in parse_text(text, source, config).events
              if e.id in moved and archive.lines_of(text, e) == moved[e.id]]
    if not events:
        return None
    if len(events) != len({e.id for e in events}):
        raise Refused(f"{source}: an id to archive is there twice; nothing was moved out of it")
    return encode_like(raw, text, archive.cut(text, events))
