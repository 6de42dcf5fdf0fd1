"""Supersession and reconfirmation between events, and the one rule of what is live when.

`build_timeline(events)` resolves every `Supersedes:`/`Reconfirms:` reference once and gives
a `Timeline`. `Timeline.status(event, at)` is the single place that decides whether an entry
is live, superseded, expired, forgotten (by `memvault maintain`, memvault/forgotten.py) or not
yet written at a time; every query goes through it.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal, Protocol

from memvault.config.core import Config
from memvault.entries import decay
from memvault.entries.markdown import link_parts, page_of
from memvault.entries.model import Event, Problem
from memvault.entries.render import iso
from memvault.entries.words import STOPWORDS, WORD_RE, stem

if TYPE_CHECKING:  # retention is asked for by few commands: its modules load on first use
    from memvault.entries import presentations
    from memvault.entries import retention as retention_models

Status = Literal["live", "superseded", "expired", "forgotten", "future"]
NEVER = datetime.min.replace(tzinfo=UTC)

ID_SPACE_RE = re.compile(r"^(\d{4}-\d{2}-\d{2})[ T](\d{1,2}:\d{2})(-\d+)?$")
LINK_RE = re.compile(r"^!?\[\[([^\]|]+?)(?:\|[^\]]*)?\]\]$")
DATE_RE = re.compile(r"\b(\d{4}-\d{2}-\d{2})\b")


class Forgets(Protocol):
    """What the timeline asks of maintain's record (memvault/forgotten.py `Forgotten`, a room
    above this one): whether an entry is forgotten at a time, and when that can change."""

    def hides(self, event: Event, at: datetime) -> bool: ...
    def change_points(self, event: Event) -> list[datetime]: ...


def sort_key(event: Event) -> tuple[datetime, str, int]:
    return (event.timestamp or NEVER, event.file, event.line)


@lru_cache(maxsize=65536)
def _stems(text: str) -> frozenset[str]:
    """The stemmed words of an entry's text, computed once: every text reference without a
    date scores every earlier entry of the vault against its words."""
    return frozenset(stem(w) for w in WORD_RE.findall(text))


@dataclass
class RefResult:
    target: str | None = None
    candidates: list[str] = field(default_factory=list)
    reason: str = ""

    @property
    def ok(self) -> bool:
        return self.target is not None


class EventIndex:
    """Lookup tables over a list of events: by id, by date, by block id."""

    def __init__(self, events: list[Event]):
        self.by_id: dict[str, Event] = {}
        self.duplicates: list[Event] = []
        self.by_date: dict[str, list[Event]] = defaultdict(list)
        self.by_block: dict[str, list[Event]] = defaultdict(list)
        for ev in events:
            if ev.id in self.by_id:
                self.duplicates.append(ev)
            else:
                self.by_id[ev.id] = ev
            if ev.kind == "log" and ev.timestamp is not None:
                self.by_date[ev.file.rsplit("/", 1)[-1][:10]].append(ev)
            for block in ev.block_ids:
                self.by_block[block].append(ev)
        self.events = events

    def resolve(self, ref: str, source: Event | None = None) -> RefResult:
        """Find the entry a `Supersedes:`/`Reconfirms:` reference points at."""
        ref = ref.strip()
        if not ref:
            return RefResult(reason="empty reference")
        if ref in self.by_id:
            return RefResult(ref)
        m = ID_SPACE_RE.match(ref)
        if m:
            key = f"{m[1]}T{int(m[2].split(':')[0]):02d}:{m[2].split(':')[1]}{m[3] or ''}"
            if key in self.by_id:
                return RefResult(key)
            return RefResult(reason=f"no entry with id {key}")
        link = LINK_RE.match(ref)
        if link:
            return self._resolve_link(link[1])
        if ref.startswith("^"):
            return self._one(self.by_block.get(ref[1:], []), f"no block ^{ref[1:]}")
        return self._resolve_text(ref, source)

    def _all_events(self, source: Event | None) -> list[Event]:
        """The pool a text reference without a date searches (those before `source` kept
        below); a method so that an index answering from other tables can note the read."""
        return self.events

    def _one(self, found: list[Event], missing: str) -> RefResult:
        found = _typed_first(found)
        if len(found) == 1:
            return RefResult(found[0].id)
        if not found:
            return RefResult(reason=missing)
        return RefResult(candidates=[_label(e) for e in found], reason="ambiguous")

    def _resolve_link(self, target: str) -> RefResult:
        page, anchor = link_parts(target)
        if anchor.startswith("^"):
            found = [e for e in self.by_block.get(anchor[1:], []) if _on_page(e, page)]
            return self._one(found, f"no block ^{anchor[1:]} in {page or 'the vault'}")
        day = self.by_date.get(page, [])
        if not anchor:
            return self._one(day, f"no entries on {page}")
        want = _norm(anchor)
        exact = [e for e in day if _norm(e.heading) == want]
        if exact:
            return self._one(exact, "")
        if "#" in anchor:  # Obsidian's nested form, `[[day#Parent#Child]]`: a note's heading path
            path = [_norm(p) for p in anchor.split("#")]
            nested = [e for e in day if e.heading and [_norm(p) for p in e.path[-len(path):]] == path]
            return self._one(nested, f"no section '{anchor}' on {page}")
        clock = want.split(" ", 1)[0]
        if ":" in clock:
            hh, mm = clock.split(":")[:2]
            prefix = f"{int(hh):02d}:{mm}" if hh.isdigit() else clock
            same = [e for e in day if _norm(e.heading).startswith(prefix) or _norm(e.heading).startswith(clock)]
            return self._one(same, f"no entry '{anchor}' on {page}")
        return RefResult(reason=f"no entry '{anchor}' on {page}")

    def _resolve_text(self, ref: str, source: Event | None) -> RefResult:
        date_m = DATE_RE.search(ref)
        words = [w.lower() for w in WORD_RE.findall(DATE_RE.sub(" ", ref))]
        type_words = {w.rstrip("s") for w in words} & {"belief", "decision", "observation", "correction"}
        keys = {stem(w) for w in words if w not in STOPWORDS and w.rstrip("s") not in type_words}
        pool = self.by_date.get(date_m[1], []) if date_m else self._all_events(source)
        # Notes are never what a description means: adding them must not change an answer.
        # Nor are MEMORY.md bullets for a description a daily log holds: curate writes bullets
        # from log entries, and a new bullet must never steal or blur what a log's reference
        # means (a corrected belief would come back to life). Ids and links still name bullets.
        if source is not None:
            log_only = source.kind == "log"
            pool = [e for e in pool if e is not source and not e.is_note and _before(e, source)
                    and not (log_only and e.kind == "curated")]
        else:
            pool = [e for e in pool if not e.is_note]
        if type_words:
            typed = [e for e in pool if e.type in type_words]
            pool = typed or pool
        if not pool:
            where = f" on {date_m[1]}" if date_m else ""
            return RefResult(reason=f"no earlier entry{where} matches '{ref}'")
        if not keys:
            return self._one(pool, "")
        scored = sorted(
            ((len(keys & _stems(f"{e.title} {e.content}")) / len(keys), e) for e in pool),
            key=lambda pair: -pair[0],
        )
        best = scored[0][0]
        second = scored[1][0] if len(scored) > 1 else 0.0
        if best >= 0.5 and best > second:
            return RefResult(scored[0][1].id)
        top = [_label(e) for s, e in scored[:5] if s > 0]
        if best >= 0.5:
            return RefResult(candidates=top, reason="ambiguous")
        if best > 0:  # a word or two in common is no match: say so, and show the closest
            return RefResult(reason=f"no earlier entry has half of its words; closest: {', '.join(top)}")
        return RefResult(reason=f"no earlier entry matches '{ref}'")


def _typed_first(found: list[Event]) -> list[Event]:
    """Entries and bullets when there are any, else notes: a heading, block or time that an
    entry answers to means that entry, as it did before notes were read."""
    if len(found) < 2 or not any(e.is_note for e in found):
        return found
    return [e for e in found if not e.is_note] or found


def _label(event: Event) -> str:
    return f"{event.id} ({event.file}:{event.line})"


def _on_page(event: Event, page: str) -> bool:
    return not page or page_of(event.file) == page


def _norm(text: str) -> str:
    return " ".join(text.lower().replace("\u2013", "-").replace("\u2014", "-").split())


def _before(a: Event, b: Event) -> bool:
    if a.timestamp is None or b.timestamp is None:
        return True
    return (a.timestamp, a.file, a.line) < (b.timestamp, b.file, b.line)


def _describe(result: RefResult, ref: str, what: str) -> str:
    if result.candidates:
        return f"{what} '{ref}' is ambiguous; candidates: {', '.join(result.candidates)}"
    return f"{what} '{ref}' does not resolve: {result.reason}"


class Timeline:
    """Events plus their resolved supersession graph; answers questions at a time T."""

    # Who cites whom, built on first use; a class default because history's StateTimeline
    # assembles itself without calling __init__.
    _citations: tuple[dict[str, tuple[str, ...]], dict[str, tuple[str, ...]]] | None = None
    _starts: dict[str, datetime] | None = None
    # Whether a curated bullet's start is moved to its newest source of the day (`start`).
    # Recorded time says no: there a bullet exists from the commit that wrote it, and its
    # precomputed intervals (history/sweep.py) know each entry alone.
    sourced_start: bool = True
    recalls: Mapping[str, int] = {}  # access counts by id, set by whoever read them (Vault)
    forgotten: Forgets | None = None  # what `memvault maintain` forgot, set by whoever read it (ParsedVault)
    # Who finds the later entries that say the same (a Vault's stored pairs); None: found on
    # demand by `presentations.SaidAgain`, exact but ~0.1 s for an old entry of 100k.
    said_again_source: Callable[[Timeline], presentations.SaidSource] | None = None
    _said_again: presentations.SaidSource | None = None
    _said_scan: presentations.SaidAgain | None = None
    _said_after_cache: dict[datetime, dict[str, list[datetime]]] | None = None
    _retention_of: Callable[..., presentations.Retention]
    _decay_params: retention_models.Params

    def __init__(
        self,
        events: list[Event],
        config: Config | None = None,
        *,
        edges: tuple[dict[str, str], list[tuple[str, str]]] | None = None,
        sourced_start: bool = True,
    ):
        """`edges` = (supersedes new->old, [(reconfirmer, target)]) already resolved, e.g. by
        the search index for a subset of events; without it references are resolved here."""
        self.config = config or Config()
        self.sourced_start = sourced_start
        self.events = sorted(events, key=sort_key)
        self.index = EventIndex(self.events)
        self.supersedes: dict[str, str] = {}
        self.superseded_by: dict[str, list[str]] = defaultdict(list)
        self.reconfirmed_by: dict[str, list[str]] = defaultdict(list)
        self.reconfirms_of: dict[str, list[str]] = defaultdict(list)  # reconfirmer -> targets
        self.problems: list[Problem] = []
        if edges is None:
            self._build()
        else:
            self._use(*edges)

    @property
    def by_id(self) -> dict[str, Event]:
        return self.index.by_id

    def _build(self) -> None:
        for dup in self.index.duplicates:
            first = self.index.by_id[dup.id]
            self.problems.append(Problem(
                dup.file, dup.line, f"duplicate id '{dup.id}' (also {first.file}:{first.line})", code="MV010"))
        for ev in self.events:
            if self.index.by_id.get(ev.id) is not ev:
                continue
            if ev.supersedes:
                self._link_supersedes(ev)
            for ref in ev.reconfirms:
                res = self.index.resolve(ref, ev)
                if res.target is not None:  # `res.ok`, spelled so that the type narrows
                    self.reconfirmed_by[res.target].append(ev.id)
                    self.reconfirms_of[ev.id].append(res.target)
                else:
                    self.problems.append(Problem(ev.file, ev.line, _describe(res, ref, "Reconfirms"), code="MV012"))
        for ids in self.superseded_by.values():
            ids.sort(key=lambda i: sort_key(self.by_id[i]))

    def _use(self, supersedes: dict[str, str], reconfirms: list[tuple[str, str]]) -> None:
        for new, old in supersedes.items():
            if new in self.by_id and old in self.by_id:
                self.supersedes[new] = old
                self.superseded_by[old].append(new)
        for src, target in reconfirms:
            if src in self.by_id:
                self.reconfirmed_by[target].append(src)
                self.reconfirms_of[src].append(target)
        for ids in self.superseded_by.values():
            ids.sort(key=lambda i: sort_key(self.by_id[i]))

    def _link_supersedes(self, ev: Event) -> None:
        ref = ev.supersedes or ""
        res = self.index.resolve(ref, ev)
        if not res.ok:
            self.problems.append(Problem(ev.file, ev.line, _describe(res, ref, "Supersedes"), code="MV011"))
            return
        target = res.target or ""
        if target == ev.id:
            self.problems.append(Problem(ev.file, ev.line, f"entry '{ev.id}' supersedes itself", code="MV013"))
            return
        node: str | None = target
        while node is not None:
            if node == ev.id:
                self.problems.append(Problem(
                    ev.file, ev.line, f"'{ev.id}' superseding '{target}' would make a cycle; ignored", code="MV013"))
                return
            node = self.supersedes.get(node)
        old = self.by_id[target]
        if old.kind == "curated" and ev.id in self._cited_by(old):
            return  # curate already rewrote the bullet with this correction: it is not stale
        if old.timestamp and ev.timestamp and old.timestamp > ev.timestamp:
            self.problems.append(Problem(
                ev.file, ev.line, f"'{ev.id}' supersedes '{target}', which is later", "warning", "MV014"))
        self.supersedes[ev.id] = target
        self.superseded_by[target].append(ev.id)

    def _cited_by(self, curated: Event) -> set[str]:
        """Ids of the log entries a curated bullet names as its sources."""
        return set(self._cited_ids(curated))

    def _cited_ids(self, curated: Event) -> list[str]:
        """The ids a curated bullet's sources resolve to, in the order it names them."""
        cited: dict[str, None] = {}
        for src in curated.sources:
            res = self.index.resolve(src if src.startswith("[[") else f"[[{src}]]")
            if res.target is not None and res.target != curated.id:
                cited[res.target] = None
        return list(cited)

    def _cite_maps(self) -> tuple[dict[str, tuple[str, ...]], dict[str, tuple[str, ...]]]:
        """(bullet id -> the entries it cites, entry id -> the bullets that cite it), built once."""
        if self._citations is None:
            cites = {ev.id: tuple(self._cited_ids(ev)) for ev in self.events if ev.kind == "curated" and ev.sources}
            citers: dict[str, list[str]] = defaultdict(list)
            for bullet, ids in cites.items():
                for eid in ids:
                    citers[eid].append(bullet)
            self._citations = (cites, {eid: tuple(bs) for eid, bs in citers.items()})
        return self._citations

    def source_ids(self, event: Event) -> tuple[str, ...]:
        """The entries a curated bullet cites as its sources (none for a log entry)."""
        return self._cite_maps()[0].get(event.id, ())

    def cited_by(self, event: Event) -> tuple[str, ...]:
        """The curated bullets that cite this entry as a source, whatever their status."""
        return self._cite_maps()[1].get(event.id, ())

    # -- the rule ---------------------------------------------------------------------

    def start(self, event: Event) -> datetime | None:
        """When the entry's current text starts to be live in event time: its timestamp, but
        for a curated bullet (dated by day only) not before the newest source it cites that
        was written by the end of the day its text dates from (docs/format.md)."""
        if event.kind != "curated" or not self.sourced_start or event.timestamp is None:
            return event.timestamp
        if self._starts is None:
            self._starts = self._bullet_starts()
        if self.by_id.get(event.id) is not event:
            return event.timestamp
        return self._starts.get(event.id, event.timestamp)

    def not_started(self, at: datetime) -> int:
        """How many bullets are dated by `at` but start after it (`start`): those a rule
        that reads their timestamp alone (the search index) takes for live at `at`."""
        if not self.sourced_start:
            return 0
        if self._starts is None:
            self._starts = self._bullet_starts()
        return sum(1 for eid, t in self._starts.items() if t > at >= (self.by_id[eid].timestamp or t))

    def _bullet_starts(self) -> dict[str, datetime]:
        """The bullets whose start `bullet_start` moves from their timestamp."""
        out: dict[str, datetime] = {}
        for ev in self.events:
            if ev.kind != "curated" or ev.timestamp is None or self.by_id.get(ev.id) is not ev:
                continue
            cited = [t for i in self.source_ids(ev) if (t := self.by_id[i].timestamp) is not None]
            when = bullet_start(ev, cited)
            if when is not None and when != ev.timestamp:
                out[ev.id] = when
        return out

    def superseder_at(self, event: Event, at: datetime | None) -> str | None:
        """The first entry written at or before `at` that supersedes `event`."""
        for sid in self.superseded_by.get(event.id, ()):
            ts = self.by_id[sid].timestamp
            if at is None or ts is None or ts <= at:
                return sid
        return None

    def status(self, event: Event, at: datetime | None = None) -> Status:
        """Live when written at or before `at`, not forgotten, superseded or expired by then
        (forgotten: a `Forgotten:` line at or before `at`, or `memvault maintain` forgot it at or
        before `at` and nothing presented it again between; memvault/forgotten.py)."""
        start = self.start(event) if event.kind == "curated" else event.timestamp
        if at is not None and start is not None and start > at:
            return "future"
        if event.forgotten is not None and event.forgotten <= (at or datetime.now(UTC)):
            return "forgotten"  # a tombstone (`Forgotten:`, docs/format.md) says it outright
        if self.superseder_at(event, at) is not None:
            return "superseded"
        if event.expires is not None and event.expires <= (at or datetime.now(UTC)):
            return "expired"
        if self.forgotten is not None and self.forgotten.hides(event, at or datetime.now(UTC)):
            return "forgotten"
        return "live"

    def confirmed_at(self, event: Event, at: datetime) -> datetime | None:
        """The latest of the entry's timestamp, its `updated` date and reconfirmations by `at`."""
        times = [t for t in (event.timestamp, event.updated) if t is not None and t <= at]
        for rid in self.reconfirmed_by.get(event.id, ()):
            ts = self.by_id[rid].timestamp
            if ts is not None and ts <= at:
                times.append(ts)
        return max(times) if times else event.timestamp

    def confidence(self, event: Event, at: datetime) -> float:
        return decay.vault_confidence(self.config, event.confidence0, self.confirmed_at(event, at), at)

    def retention(self, event: Event, at: datetime) -> presentations.Retention:
        """The entry's retention and its status at `at` under `[decay] model` (entries/retention.py).

        Later entries that say the same count, so ask a timeline of the whole vault (a Vault's),
        not one of a few search candidates."""
        said = self._retention_setup()
        return self._retention_of(self, said, event, at, self.recalls, self._decay_params)

    def retentions(self, events: Sequence[Event], at: datetime) -> list[dict[str, Any]]:
        """`retention(e, at).to_dict()` of each of `events`, in one pass (`list`'s 100k entries)."""
        from memvault.entries import presentations

        said = self._retention_setup()
        return presentations.retention_dicts(self, said, events, at, self.recalls, self._decay_params)

    def _retention_setup(self) -> presentations.SaidSource:
        if self._said_again is None:
            from memvault.entries import presentations

            make = self.said_again_source
            self._said_again = make(self) if make is not None else presentations.SaidAgain(self)
            self._retention_of = presentations.retention_of
            self._decay_params = decay.vault_params(self.config)
        return self._said_again

    @property
    def _said_after(self) -> dict[datetime, dict[str, list[datetime]]]:
        if self._said_after_cache is None:
            self._said_after_cache = {}
        return self._said_after_cache

    def presented(self, event: Event, since: datetime) -> list[datetime]:
        """The times after `since` the entry was presented again (updated, reconfirmed, said
        again), oldest first: what brings a forgotten entry back (memvault/forgotten.py). The
        presentations `retention` counts; "said again" is asked of the entries dated after `since`."""
        from memvault.entries import presentations

        if self._said_scan is None:  # read backwards from the few entries since: the texts, not the pairs
            self._said_scan = presentations.SaidAgain(self)
        if since not in self._said_after:
            self._said_after[since] = presentations.said_again_after(self._said_scan, since)
        times = [t for t in (event.timestamp, event.updated) if t is not None and t > since]
        times += self._said_after[since].get(event.id, ())
        for rid in self.reconfirmed_by.get(event.id, ()):
            ts = self.by_id[rid].timestamp
            if ts is not None and ts > since and (event.timestamp is None or ts >= event.timestamp):
                times.append(ts)
        return sorted(set(times))

    def live(self, at: datetime | None = None) -> list[Event]:
        return [e for e in self.events if self.by_id.get(e.id) is e and self.status(e, at) == "live"]

    def chain(self, event_id: str) -> list[Event]:
        """Every entry connected to `event_id` by supersession, oldest first."""
        seen: set[str] = set()
        todo = [event_id]
        while todo:
            node = todo.pop()
            if node in seen or node not in self.by_id:
                continue
            seen.add(node)
            if node in self.supersedes:
                todo.append(self.supersedes[node])
            todo.extend(self.superseded_by.get(node, ()))
        return sorted((self.by_id[i] for i in seen), key=sort_key)

    def to_dict(self, event: Event, at: datetime | None = None) -> dict[str, Any]:
        """The JSON shape of an entry as seen at `at` (now when None)."""
        when = at or datetime.now(UTC)
        status = self.status(event, at)
        return {
            "id": event.id,
            "type": event.type,
            "kind": event.kind,
            "timestamp": iso(event.timestamp),
            "title": event.title,
            "path": list(event.path),
            "content": event.content,
            "confidence": float(f"{self.confidence(event, when):.6g}"),
            "confidence_0": event.confidence0,
            "importance": event.importance,
            "supersedes": self.supersedes.get(event.id),
            "supersedes_ref": event.supersedes,
            "superseded_by": self.superseder_at(event, at),
            "status": status,
            "tags": list(event.tags),
            "links": list(event.links),
            "source": event.source,
            "scope": event.scope,
            "expires": iso(event.expires),
            "forgotten": iso(self.forgotten_at(event, status)),
            "file": event.file,
            "line": event.line,
            "end_line": event.end_line,
            "category": event.category,
            "updated": iso(event.updated),
            "previous": event.previous,
            "sources": list(event.sources),
            "source_ids": list(self.source_ids(event)),
            "cited_by": list(self.cited_by(event)),
            "reconfirms": list(self.reconfirms_of.get(event.id, ())) if event.reconfirms else [],
            "reconfirms_ref": list(event.reconfirms),
            "reconfirmed_by": self.reconfirmers_at(event, when),
        }

    def forgotten_at(self, event: Event, status: Status) -> datetime | None:
        """Since when the entry is forgotten: its `Forgotten:` line, else, when `memvault
        maintain` is what hides it, the time maintain forgot it (None otherwise)."""
        if event.forgotten is not None or status != "forgotten" or self.forgotten is None:
            return event.forgotten
        points = self.forgotten.change_points(event)
        return points[0] if points else None

    def reconfirmers_at(self, event: Event, at: datetime) -> list[str]:
        """Ids of the entries that reconfirm `event` by `at` (they reset its decay)."""
        return [rid for rid in self.reconfirmed_by.get(event.id, ())
                if (ts := self.by_id[rid].timestamp) is None or ts <= at]


def bullet_start(bullet: Event, cited: list[datetime]) -> datetime | None:
    """When a curated bullet's current text starts to be live, from its day and the times of
    the entries it cites (pure). The text dates from its `(updated D, was: ...)` day when it
    has one (it was rewritten that day), else from its timestamp's day (`added`, or a bare
    `updated`). A bullet is dated by day only: its text cannot be older than the newest cited
    source written by the end of that day, so it starts there, and never before the day
    itself; with no such source it starts with the day. It never starts before its timestamp
    (an `updated` written before `added` moves nothing earlier)."""
    if bullet.timestamp is None:
        return None
    day = bullet.updated if bullet.previous is not None and bullet.updated is not None else bullet.timestamp
    day_end = day + timedelta(days=1)
    newest = max((t for t in cited if t < day_end), default=day)
    return max(bullet.timestamp, day, newest)
