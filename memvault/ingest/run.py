"""`memvault ingest`: read a transcript, extract its facts, decide (plan.py), write. The shell.

Everything that can be refused is decided before the first write: a bad transcript, a failing
or badly answering `--with` command, a secret (skipped), a text the vault cannot hold (skipped).
The entries then go through `write/log.py`'s `log_entry`, one by one, under the vault's lock.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from memvault.entries.model import Event
from memvault.entries.render import render_entry
from memvault.errors import InputError
from memvault.ingest.extract import extract, merged
from memvault.ingest.facts import Fact
from memvault.ingest.plan import WRITES, Step, plan, said_again
from memvault.ingest.transcript import Turn, read_transcript
from memvault.ingest.with_command import extract_with
from memvault.parsed import ParsedVault
from memvault.write.guard import check_entry_times, check_wall_clock
from memvault.write.log import log_entry

DEFAULT_TIMEOUT = 120.0


@dataclass
class IngestReport:
    transcript: str
    source: str
    at: datetime
    dry_run: bool
    extractor: str
    turns: int
    withheld: int  # transcript lines withheld as secrets
    steps: list[Step] = field(default_factory=list)
    drafts: list[str] = field(default_factory=list)  # the entries, as Markdown (dry run: would be written)

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for s in self.steps:
            out[s.action] = out.get(s.action, 0) + 1
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "transcript": self.transcript, "source": self.source, "at": self.at.isoformat(),
            "dry_run": self.dry_run, "extractor": self.extractor, "turns": self.turns,
            "withheld_lines": self.withheld, "counts": self.counts(),
            "facts": [_step_dict(s) for s in self.steps],
            "entries": self.drafts,
        }


def _step_dict(s: Step) -> dict[str, Any]:
    secret = s.action == "secret"
    return {
        "action": s.action, "kind": s.fact.kind, "importance": s.fact.importance, "speaker": s.fact.speaker,
        "turn": s.fact.turn, "source": s.source, "content": None if secret else s.content,
        "target": s.target, "id": s.written, "why": s.why,
    }


def read_file(path: Path) -> str:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise InputError(f"{path}: no such transcript", file=str(path)) from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read it: {exc.strerror}", file=str(path)) from None
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise InputError(f"{path}:{line}: not UTF-8 text; a transcript is UTF-8", file=str(path), line=line) from None


def ingest(vault: ParsedVault, text: str, name: str, *, source: str | None = None, command: str | None = None,
           at: datetime | None = None, dry_run: bool = False, timeout: float = DEFAULT_TIMEOUT) -> IngestReport:
    """Ingest the transcript `text` (read from `name`) into `vault`; see docs/ingest.md."""
    source_id = (source or Path(name).name).strip()
    if not source_id or any(c.isspace() for c in source_id) or "#" in source_id:
        raise InputError(f"--source {source_id!r}: one token without spaces or '#' (ingest adds #turn-N)")
    turns = read_transcript(text, name)
    now = vault.now()
    if at is not None:  # refused before extraction, as the first write would refuse it (a dry run too)
        check_wall_clock(at, vault.config.timezone)
    when = (at or now).astimezone(vault.config.tz).replace(microsecond=0)
    if when > now:  # log's own refusal offers --future, which ingest does not take
        raise InputError(f"--at {when.isoformat(timespec='minutes')} is in the future (now is "
                         f"{now.isoformat(timespec='minutes')}); a conversation is ingested at or before now")
    check_entry_times(when, now, vault.config.timezone)
    facts, again = _facts(turns, source_id, command, timeout, str(vault.root))
    report = IngestReport(name, source_id, when, dry_run, "with" if command else "builtin", len(turns),
                          sum(t.withheld for t in turns))
    report.steps = plan(vault, facts, source_id, when, report.extractor)
    report.steps += said_again(report.steps, again, source_id)
    if dry_run:
        report.drafts = [render_entry(_draft(s, report.steps, when)) for s in report.steps if s.action in WRITES]
        return report
    for step in report.steps:
        if step.action in WRITES:
            ev = _write(vault, step, report.steps, when)
            step.written = ev.id
            report.drafts.append(render_entry(ev))
    return report


def _facts(turns: list[Turn], source_id: str, command: str | None, timeout: float,
           cwd: str) -> tuple[list[Fact], list[tuple[Fact, int]]]:
    """The facts to plan, and (for `--with`) the reply's facts that repeat one of them."""
    if command is None:
        return extract(turns), []
    return merged(extract_with(command, turns, source_id, timeout=timeout, cwd=cwd))


def _ref(step: Step, steps: list[Step]) -> str | None:
    if step.target_step is not None:
        return steps[step.target_step].written or f"(the entry for turn {steps[step.target_step].fact.turn})"
    return step.target


def _draft(step: Step, steps: list[Step], when: datetime) -> Event:
    ref = _ref(step, steps)
    return Event(id="", type=step.type, timestamp=when, content=step.content, file="", line=0, end_line=0,
                 importance=step.fact.importance, tags=step.tags, source=step.source,
                 supersedes=ref if step.action == "supersede" else None,
                 reconfirms=(ref,) if step.action == "reconfirm" and ref else (), meta=step.meta)


def _write(vault: ParsedVault, step: Step, steps: list[Step], when: datetime) -> Event:
    ref = _ref(step, steps)
    # A reference to an entry written by this ingest is its id, just returned by log_entry: the
    # vault's timeline (read before the first write) does not know it yet.
    return log_entry(
        vault, step.content, type=step.type, at=when, importance=step.fact.importance, tags=step.tags,
        source=step.source, meta=step.meta, check_refs=step.target_step is None,
        supersedes=ref if step.action == "supersede" else None,
        reconfirms=(ref,) if step.action == "reconfirm" and ref else (),
    )
