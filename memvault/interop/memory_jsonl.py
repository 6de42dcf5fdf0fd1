"""The forgetting-curve skill's `state/memory.jsonl` imported into a vault (docs/interop.md).

Each line (`tick`, `time`, `type`, `summary`, `tags`, `importance`) becomes a daily-log entry at its
`time`, with an id derived from what never changes in the line (`fc-` and a hash of tick, time,
type and summary), so importing the file again, after the skill's maintenance script has rewritten
it, adds only what is new. What the maintenance script writes goes where memvault's retention
already reads it (docs/retention.md):

- `_presentations`: each tick after the entry's own is an entry at that tick's time that
  `Reconfirms:` it (the retention model counts every reconfirming entry as a presentation);
- `_access_count`: the entry's recall count in `.memvault/access.sqlite` (search/access.py);
- `_target_retention_interval`/`_spacing_ratio`: a `Review:` line; `_last_retrieval_success` with
  `_next_review_tick`: a `Reviewed:` line whose interval ends at that tick;
- `_faded` and any other `_` field is the script's own view of retention: memvault recomputes it.

Ticks become times by the file's own pace (the median seconds per tick between its entries), else
the vault's `[decay] tick`.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime, timedelta, tzinfo
from pathlib import Path
from statistics import median
from typing import Any

from memvault.entries.spaced import Plan, Reviewed, format_plan, format_reviewed
from memvault.entries.values import parse_importance
from memvault.interop.agent_memory import Result, read_text
from memvault.interop.amfile import BadFile, parse_time, read_json
from memvault.interop.writer import Planned, prepare, write
from memvault.parsed import ParsedVault
from memvault.search import access

FORMAT = "memory-jsonl"
# memvault's own types stay; any other (event, emotion, plan_outcome, ...) is an observation tagged with it
NATIVE_TYPES = {t: t for t in ("observation", "belief", "decision", "correction", "procedure")}


@dataclass(frozen=True, slots=True)
class Memory:
    line: int
    tick: int | None
    time: datetime
    type: str
    summary: str
    tags: tuple[str, ...]
    importance: float | None
    presentations: tuple[int, ...]
    access_count: int
    target: int | float | None
    ratio: float | None
    next_review: int | float | None
    last_success: bool | None

    @property
    def id(self) -> str:
        key = f"{self.tick}|{self.time.isoformat()}|{self.type}|{self.summary}"
        return "fc-" + hashlib.sha256(key.encode()).hexdigest()[:12]


def sniff(first_line: str) -> bool:
    try:
        obj = json.loads(first_line)
    except (ValueError, RecursionError):
        return False
    return isinstance(obj, dict) and "summary" in obj and "format" not in obj


def parse(text: str, name: str, tz: tzinfo) -> list[Memory]:
    out = []
    for n, line in enumerate(text.lstrip("\ufeff").split("\n"), 1):
        if not line.strip():
            continue
        out.append(_memory(read_json(line, name, n), name, n, tz))
    return out


def _memory(obj: Any, name: str, n: int, tz: tzinfo) -> Memory:
    if not isinstance(obj, dict):
        raise BadFile(name, n, f"a memory is a JSON object, not {type(obj).__name__}")
    summary = obj.get("summary")
    if not isinstance(summary, str) or not summary.strip():
        raise BadFile(name, n, f'"summary" is a non-empty string, not {summary!r}')
    when = parse_time(obj.get("time"), "time", name, n, tz)
    assert when is not None  # required
    tick = _number(obj.get("tick"), "tick", name, n, whole=True)
    etype = obj.get("type") or "event"
    if not isinstance(etype, str) or not etype.strip() or any(c.isspace() for c in etype.strip()):
        raise BadFile(name, n, f'"type" is one word such as "event" or "decision", not {etype!r}')
    tags = obj.get("tags") or []
    if isinstance(tags, str):
        tags = tags.split(",")
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise BadFile(name, n, f'"tags" is a list of words, not {tags!r}')
    importance = _importance(obj.get("importance"), name, n)
    pres = obj.get("_presentations") or []
    if not isinstance(pres, list) or not all(isinstance(p, int | float) and not isinstance(p, bool) for p in pres):
        raise BadFile(name, n, f'"_presentations" is a list of ticks, not {pres!r}')
    count = _number(obj.get("_access_count"), "_access_count", name, n, whole=True) or 0
    success = obj.get("_last_retrieval_success")
    if success is not None and not isinstance(success, bool):
        raise BadFile(name, n, f'"_last_retrieval_success" is true, false or null, not {success!r}')
    ratio = _number(obj.get("_spacing_ratio"), "_spacing_ratio", name, n)
    if ratio is not None and not 0 < ratio <= 1:
        raise BadFile(name, n, f'"_spacing_ratio" is above 0 and at most 1, not {ratio!r}')
    return Memory(n, None if tick is None else int(tick), when, etype.strip().lower(), summary.strip(),
                  tuple(" ".join(t.split()).replace(" ", "-").lower() for t in tags if t.strip()), importance,
                  tuple(int(p) for p in pres), int(count),
                  _number(obj.get("_target_retention_interval"), "_target_retention_interval", name, n),
                  ratio, _number(obj.get("_next_review_tick"), "_next_review_tick", name, n), success)


def _number(value: Any, key: str, name: str, n: int, whole: bool = False) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0 or (whole and value != int(value)):
        raise BadFile(name, n, f'"{key}" is a {"whole " if whole else ""}number of at least 0, not {value!r}')
    return value


def _importance(value: Any, name: str, n: int) -> float | None:
    if value is None:
        return None
    number = parse_importance(str(value)) if isinstance(value, str | int | float) and not isinstance(value, bool) else None
    if number is None:
        raise BadFile(name, n, f'"importance" is high, medium, low or a number 0-1, not {value!r}')
    return number


def seconds_per_tick(memories: list[Memory], fallback: float) -> float:
    """The file's pace: the median of (time gap / tick gap) between entries in tick order."""
    ticked = sorted((m.tick, m.time) for m in memories if m.tick is not None)
    rates = [(b[1] - a[1]).total_seconds() / (b[0] - a[0]) for a, b in zip(ticked, ticked[1:], strict=False)
             if b[0] > a[0] and b[1] > a[1]]
    return median(rates) if rates else fallback


def plan(m: Memory, spt: float, now: datetime) -> tuple[list[Planned], list[str]]:
    """The entry, its later presentations as reconfirming entries, and what could not be carried."""
    notes: list[str] = []
    base = m.tick if m.tick is not None else 0

    def at(tick: float) -> datetime:
        return m.time + timedelta(seconds=(tick - base) * spt)

    etype = NATIVE_TYPES.get(m.type, "observation")
    tags = m.tags if m.type in NATIVE_TYPES else (m.type, *(t for t in m.tags if t != m.type))
    extra = _review_lines(m, at, spt, notes)
    out = [Planned(id=m.id, type=etype, text=m.summary, at=m.time, line=m.line, tags=tags,
                   importance=m.importance, extra=extra)]
    for tick in sorted(set(m.presentations)):
        when = at(tick)
        if m.tick is None or tick <= m.tick:
            continue
        if when > now:
            notes.append(f"presentation at tick {tick} ({when:%Y-%m-%d %H:%M}) is in the future; left out")
            continue
        out.append(Planned(id=f"{m.id}~p{tick}", type="observation", line=m.line, at=when,
                           text=f"Presented again (tick {tick}): {m.summary}", reconfirms=(m.id,),
                           tags=("presentation",)))
    return out, notes


def _review_lines(m: Memory, at: Any, spt: float, notes: list[str]) -> tuple[str, ...]:
    if m.target is None:
        if m.next_review is not None or m.last_success is not None:
            notes.append("review fields without _target_retention_interval; not carried")
        return ()
    target = timedelta(seconds=m.target * spt)
    if target < timedelta(minutes=1):
        notes.append(f"_target_retention_interval {m.target} ticks is under a minute; not carried")
        return ()
    lines = [format_plan(Plan(target, m.ratio if m.ratio is not None else 0.2))]
    if m.last_success is not None and m.next_review is not None:
        last = max([p for p in m.presentations if p <= m.next_review] + [m.tick or 0])
        gap = at(m.next_review) - at(last)
        if gap >= timedelta(minutes=1):
            outcome = "ok" if m.last_success else "failed"
            lines.append(format_reviewed(Reviewed(at(last), outcome, gap)))  # type: ignore[arg-type]
        else:
            notes.append("_next_review_tick is not after the last presentation; Reviewed: not written")
    return tuple(lines)


def import_file(vault: ParsedVault, path: Path, *, dry_run: bool = False, name: str | None = None) -> Result:
    name = name or str(path)
    memories = parse(read_text(path, name), name, vault.config.tz)
    by_id = vault.timeline.by_id
    res = Result(name, FORMAT, dry_run)
    spt = seconds_per_tick(memories, vault.config.decay_tick)
    now = vault.now()
    planned: list[Planned] = []
    counts: dict[str, tuple[int, datetime]] = {}
    seen: set[str] = set()
    for m in memories:
        entries, notes = plan(m, spt, now)
        res.warnings += [f"{name}:{m.line}: {note}" for note in notes]
        for p in entries:
            if p.id in seen:  # the same tick, time, type and summary twice in the file
                res.skipped.append({"id": p.id, "line": m.line, "reason": "a duplicate of an earlier line in the file"})
            elif p.id in by_id:
                changed = p.importance is not None and by_id[p.id].importance != p.importance
                res.skipped.append({"id": p.id, "line": m.line, "reason": "already in the vault" + (
                    f" (the file's importance {p.importance:g} is not carried: edit its Importance: line)"
                    if changed else "")})
            else:
                planned.append(p)
            seen.add(p.id)
        if m.access_count:
            counts[m.id] = (m.access_count, max(p.at for p in entries))
    ready = prepare(vault, planned, name)
    res.written = [{"id": r.event.id, "type": r.event.type, "at": r.event.timestamp.isoformat()
                    if r.event.timestamp else None, "file": r.rel, "from_line": r.planned.line} for r in ready]
    res.files = sorted({r.rel for r in ready})
    if not dry_run:
        res.files = write(vault, ready)
        access.raise_counts(vault.root, counts)
    return res
