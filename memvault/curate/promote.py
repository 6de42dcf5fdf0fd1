"""Curate: promote what the daily logs taught into MEMORY.md, with the person in control.

`plan_curation(vault)` reads MEMORY.md once and returns a `Plan`: proposals (add a bullet,
update a bullet a correction contradicts, reconfirm a bullet that new entries repeat,
archive bullets to keep the file within its budget), the reason for every log entry, and
the budget. Planning and rendering are pure: a proposal is a line-range splice on the text
that was read. `apply(vault, plan, ...)` is the only writer: under the vault lock it checks
MEMORY.md still has the bytes the plan was made from, then replaces it atomically.

docs/curate.md describes the rules and the choices made.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any

from memvault.config.curate import Settings
from memvault.curate import considered, meaning
from memvault.curate.budget import (
    archives_for,
    budget,
    budget_warnings,
    measure,
    over_budget,
    stale_bullets,
)
from memvault.curate.document import load_doc
from memvault.curate.plan import Plan, Proposal, chosen_lines
from memvault.curate.proposals import proposals as make_proposals
from memvault.curate.render import diff, marker_time, records_point, render
from memvault.curate.select import OLD_PREFIXES, Decision, select
from memvault.entries.timeline import Timeline
from memvault.errors import InputError, Refused, WriteConflict
from memvault.fsio import append_spacing, decode_text, encode_like, locked, rewrite
from memvault.layout import MEMORY_FILE, read_file, writable
from memvault.parsed import ParsedVault
from memvault.search import access
from memvault.write.guard import added_lines, check_written


class StaleMemory(WriteConflict):  # code "conflict" (memvault/errors.py)
    """MEMORY.md changed on disk between the proposal and the write."""


def digest(raw: bytes | None) -> str | None:
    return hashlib.sha256(raw).hexdigest() if raw is not None else None


def _read(path: Path) -> bytes | None:
    """A file in the vault root by the layout rule: a link there raises UnsafePath, never followed."""
    try:
        return read_file(path.parent, path.name)
    except FileNotFoundError:
        return None


def plan_curation(
    vault: ParsedVault, *, at: datetime | None = None, since: datetime | None = None, everything: bool = False,
) -> Plan:
    """What curate proposes for the vault as of `at` (now by default). Changes nothing."""
    settings = Settings.from_config(vault.config)
    at = at or vault.now()
    path = vault.root / MEMORY_FILE
    raw = _read(path)
    doc = load_doc(raw, vault.config)
    since_from = "option" if since is not None else "none"
    if everything:
        since, since_from = None, "all"
    elif since is None and doc.marker_at is not None:
        since, since_from = doc.marker_at, "marker"
    tl = vault.timeline
    recalls = access.stats(vault.root)
    # `--since` names the window itself; only the marker's window is widened by the record.
    record = considered.load(vault.root, doc.marker_at) if since_from == "marker" else None
    sel = select(tl, doc, settings, at=at, since=since, recalls=recalls, considered=record,
                 by_option=since_from == "option", meaning=meaning.provider(vault, settings.semantic_similarity))
    proposals = make_proposals(sel, tl, doc, settings)
    plan = Plan(
        at=at, since=since, since_from=since_from, path=path, archive_path=vault.root / settings.archive_file,
        digest=digest(raw), doc=doc, settings=settings, proposals=proposals, decisions=sel.decisions,
        stale=stale_bullets(tl, doc, settings, at, recalls, sel.curated_by),
        seen=_seen(tl, sel.decisions, at) | (record or frozenset()), record_used=record is not None,
    )
    plan.archives = archives_for(plan)
    check_fence(plan)
    return plan


def _seen(tl: Timeline, decisions: Mapping[str, Decision], at: datetime) -> frozenset[str]:
    """Every log entry a completed review has considered: all dated up to `at` (one before the
    window was considered by an earlier curation, or `--since` chose to pass it over). The plan
    adds the record it used: a curation `--at` an earlier time keeps what a later one saw."""
    return frozenset(eid for eid in decisions
                     if (ts := tl.by_id[eid].timestamp) is None or ts <= at)


def check_fence(plan: Plan) -> None:
    """New bullets after a code block that never closes would become code: say so instead."""
    fence = plan.doc.open_fence
    if fence is None:
        return
    if any(p.kind == "add" and (p.start < 0 or p.start > fence) for p in plan.proposals):
        raise Refused(f"{plan.path}:{fence + 1}: this code block is never closed, so new bullets after it "
                      "would be code; close it with ``` and run curate again", file=plan.path, line=fence + 1)


@dataclass
class Applied:
    written: bool
    counts: dict[str, int]
    budget: dict[str, Any]
    archived_to: str | None
    marker: bool


def apply(vault: ParsedVault, plan: Plan, choice: Mapping[str, tuple[str, ...]] | None = None,
          archives: list[Proposal] | None = None, *, complete: bool = True) -> Applied:
    """Write the chosen proposals into MEMORY.md, atomically, if it still is what was planned on."""
    chosen = chosen_lines(plan, choice)
    archived = plan.archives if archives is None else archives
    new_text = render(plan, chosen, archived, complete=complete)
    old_text = ("\ufeff" if plan.doc.bom else "") + "\n".join(plan.doc.raw_lines)
    counts = {k: sum(1 for p in plan.proposals if p.kind == k and p.key in chosen) for k in ("add", "update", "reconfirm")}
    counts["archive"] = len(archived)
    # What curate adds passes the checks `log` applies (moved and untouched lines are the person's).
    check_written("\n".join(added_lines(old_text, new_text)), where=MEMORY_FILE)
    with locked(vault.lock_path, what=MEMORY_FILE):
        writable(vault.root, MEMORY_FILE)  # never through a link (layout.py)
        if archived:
            writable(vault.root, plan.settings.archive_file)
        if digest(_read(plan.path)) != plan.digest:
            raise StaleMemory(
                f"{plan.path}: changed on disk since curate read it; nothing was written. "
                "Run `memvault curate` again to review against the new text."
            )
        if archived:  # first: if MEMORY.md then cannot be written, a bullet is in both, not lost
            _append_archive(plan, archived)
        if new_text != old_text:
            rewrite(plan.path, partial(_reviewed, plan, new_text.encode("utf-8"), bool(archived)), what=MEMORY_FILE)
        if records_point(plan, chosen, complete):  # after MEMORY.md: the record is only ever behind it
            considered.save(vault.root, marker_time(plan), plan.seen)
    size = budget(plan, chosen, archived)
    size["after"] = measure(new_text)
    size["over"] = over_budget(size["after"], plan.settings)
    return Applied(new_text != old_text, counts, size, plan.settings.archive_file if archived else None,
                   complete and new_text != old_text)


def _reviewed(plan: Plan, new: bytes, archived: bool, raw: bytes | None) -> bytes:
    """The reviewed text, provided MEMORY.md still is what the review was made on."""
    if digest(raw) != plan.digest:
        also = (f" {plan.settings.archive_file} already holds the archived bullets, which MEMORY.md still has too."
                if archived else "")
        raise StaleMemory(f"{plan.path}: changed on disk while curate was writing it; it was left as it is.{also} "
                          "Run `memvault curate` again to review against the new text.")
    return new


def _append_archive(plan: Plan, archived: list[Proposal]) -> None:
    """Archived bullets keep their exact text, under the day and section they left."""
    parts = [f"## {plan.at.date().isoformat()}\n"]
    for a in archived:
        parts.append("\n".join(a.old) + "\n")
        parts.append(f"  - archived from \u201c{a.section or 'MEMORY.md'}\u201d: {a.reason}\n")
    block = "".join(parts)

    def add(raw: bytes | None) -> bytes:
        old = decode_text(raw)[0] if raw else ""
        head = old + append_spacing(old) if old.strip() else (
            "# Archived memory\n\nBullets `memvault curate` moved out of MEMORY.md to keep it within its budget.\n\n")
        return encode_like(raw or b"", old, head + block)

    plan.archive_path.parent.mkdir(parents=True, exist_ok=True)
    rewrite(plan.archive_path, add, what=plan.settings.archive_file)


# ------------------------------------------------------------------------------ reports


def plan_dict(plan: Plan, *, with_diff: bool = True) -> dict[str, Any]:
    new_text = render(plan, None, None, complete=True)
    data = {
        "memory": str(plan.path), "at": plan.at.isoformat(),
        "since": plan.since.isoformat() if plan.since else None, "since_from": plan.since_from,
        "proposals": [p.to_dict() for p in plan.proposals], "archives": [a.to_dict() for a in plan.archives],
        "budget": budget(plan), "warnings": list(plan.warnings) + budget_warnings(plan, budget(plan), planned=True),
    }
    if with_diff:
        data["diff"] = diff(plan, new_text)
    return data


def explain(plan: Plan, vault: ParsedVault, entry: str | None = None) -> list[dict[str, Any]]:
    """Why each log entry was or was not chosen (one entry when `entry` is given)."""
    decisions = plan.decisions
    if entry:
        if entry not in decisions:
            ev = vault.get(entry)  # resolves `[[links]]` and `2026-02-21 16:00`, or raises
            entry = ev.id
        if entry not in decisions:
            raise InputError(f"{entry} is not a daily-log entry; curate only promotes log entries")
        chosen = [decisions[entry]]
    else:
        chosen = [d for d in decisions.values() if d.chosen or not d.reason.startswith(OLD_PREFIXES)]
    tl = vault.timeline
    out = []
    for d in chosen:
        ev = tl.by_id[d.entry]
        out.append({"id": d.entry, "type": ev.type, "chosen": d.chosen, "proposal": d.facts.get("proposal"),
                    "reason": "; ".join(filter(None, (d.reason, d.facts.get("meaning"), d.facts.get("kept_apart")))),
                    "file": ev.file, "line": ev.line,
                    "timestamp": ev.timestamp.isoformat() if ev.timestamp else None})
    out.sort(key=lambda x: (x["timestamp"] or "", x["file"], x["line"]))
    return out
