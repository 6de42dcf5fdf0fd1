"""An entry's presentations, read from the files, and its retention under the vault's model.

The seed's `_presentations` are the ticks at which a memory was encoded or strongly met again.
memvault derives them, never stores them: the entry's own time, its `updated` date, each entry
that `Reconfirms:` it, and each later entry that says the same thing (`similarity.same_fact`,
curate's test for "said again", at `[curate] similarity`). Recalls (`search/access.py`) are the
seed's `_access_count`; the caller passes them in, since they live in `.memvault/`.

Finding what says the same as one entry compares it only with the later entries whose text
contains enough of its words (`probes`), exact for curate's Dice threshold.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_left, bisect_right
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from itertools import accumulate
from typing import Protocol

from memvault.config.core import Config
from memvault.config.curate import DEFAULTS as CURATE_DEFAULTS
from memvault.entries import retention
from memvault.entries.decay import elapsed_ticks, vault_params
from memvault.entries.model import Event
from memvault.entries.similarity import IRREGULAR, Sig, norm, same_fact, signature

PRESENTED_AGAIN = re.compile(r"~p\d+$")  # `<id>~p55`: memvault/interop/memory_jsonl.py writes it


def re_encounter(ev: Event) -> bool:
    """A forgetting-curve presentation an import wrote (`Presented again (tick 55): …`, tagged
    `presentation`, `Reconfirms:` its memory): a retention input, not a memory of its own, so
    the exports and `context` leave it out (it stays in the log, `list` and `show`)."""
    return bool(ev.reconfirms) and "presentation" in ev.tags and PRESENTED_AGAIN.search(ev.id) is not None


class Timeline(Protocol):
    """What this module reads of `entries.timeline.Timeline` (which asks it, so no import)."""

    @property
    def config(self) -> Config: ...
    @property
    def events(self) -> Sequence[Event]: ...
    @property
    def by_id(self) -> Mapping[str, Event]: ...
    @property
    def reconfirmed_by(self) -> Mapping[str, Sequence[str]]: ...


@dataclass(frozen=True, slots=True)
class Retention:
    value: float
    status: retention.Status
    presentations: int  # how many, the entry's own included
    accesses: int
    model: str = "exponential"

    def to_dict(self) -> dict[str, object]:
        return {"value": float(f"{self.value:.6g}"), "status": self.status, "model": self.model,
                "presentations": self.presentations, "accesses": self.accesses}


class SaidSource(Protocol):
    """Who answers "which later entries say the same as this one" (ids, oldest first):
    `SaidAgain` on demand, or the pairs a Vault keeps stored (search/said_store.py)."""

    def of(self, event: Event) -> list[str]: ...


class SaidAgain:
    """The later entries that say the same as an entry (ids, oldest first), found on demand.

    Comparing every pair costs n² (minutes on 100k entries), so one entry is compared only with
    the later entries whose text contains enough of its words (`probes`, a substring test); the
    rest cannot reach the similarity threshold. Answers are kept, so asking again is free.
    """

    def __init__(self, tl: Timeline, threshold: float | None = None):
        self.tl = tl
        self.threshold = float(threshold if threshold is not None else
                               tl.config.section("curate", CURATE_DEFAULTS)["similarity"])
        self._texts: list[Event] | None = None
        self._times: list[datetime] = []
        self._starts: list[int] = []
        self._blob = ""
        self._sigs: dict[str, Sig] = {}
        self._later: dict[str, list[str]] = {}

    def of(self, event: Event) -> list[str]:
        if event.id not in self._later:
            self._later[event.id] = self._find(event)
        return self._later[event.id]

    def _sig(self, event: Event) -> Sig:
        if event.id not in self._sigs:
            self._sigs[event.id] = signature(event.content)
        return self._sigs[event.id]

    def _find(self, event: Event) -> list[str]:
        if event.timestamp is None or not event.content.strip():
            return []
        texts = self._corpus()
        first = bisect_right(self._times, event.timestamp)  # in time order: only later ones repeat it
        mine = self._sig(event)
        groups, floor = probes(mine, self.threshold)
        if floor > 0:
            hits: Counter[int] = Counter()
            for group in groups:
                hits.update(self._containing(group, first))
            candidates = sorted(i for i, n in hits.items() if n >= floor)
        else:
            candidates = list(range(first, len(texts)))
        return [texts[i].id for i in candidates if same_fact(mine, self._sig(texts[i]), self.threshold)]

    def _corpus(self) -> list[Event]:
        """The dated entries in time order, and their lower-cased texts joined into one string
        (one C-speed `find` per probe word instead of a Python loop over the entries)."""
        if self._texts is None:
            self._texts = [e for e in self.tl.events
                           if e.timestamp is not None and self.tl.by_id.get(e.id) is e and e.content.strip()]
            self._times = [e.timestamp for e in self._texts if e.timestamp is not None]
            lows = [e.content.lower().replace("\0", " ") for e in self._texts]
            self._starts = list(accumulate((len(x) + 1 for x in lows[:-1]), initial=0))
            self._blob = "\0".join(lows)
        return self._texts

    def _containing(self, group: tuple[str, ...], first: int) -> set[int]:
        """Indices (from `first`) of the entries whose text contains a string of `group`."""
        found: set[int] = set()
        for probe in group:
            at = self._blob.find(probe, self._starts[first] if first < len(self._starts) else len(self._blob))
            while at != -1:
                found.add(bisect_right(self._starts, at) - 1)
                at = self._blob.find(probe, at + 1)
        return found


def said_again_after(said: SaidAgain, since: datetime) -> dict[str, list[datetime]]:
    """Each entry that an entry dated after `since` says again, with those entries' times
    (oldest first): `SaidAgain.of` read the other way, from the few entries written since (what
    brings an entry `memvault maintain` forgot at `since` back: memvault/forgotten.py).

    `r` says `e` again when `e` is earlier and `same_fact(e, r)`, as `of(e)` tests. Dice is
    symmetric, so the overlap `probes(r)` asks of `e`'s text is as necessary as the other way."""
    texts = said._corpus()
    out: dict[str, list[datetime]] = defaultdict(list)
    for r in texts[bisect_right(said._times, since):]:
        if r.timestamp is None:
            continue
        last = bisect_left(said._times, r.timestamp)  # strictly earlier entries
        mine = said._sig(r)
        groups, floor = probes(mine, said.threshold)
        if floor > 0:
            hits: Counter[int] = Counter()
            for group in groups:
                hits.update(_containing_before(said, group, last))
            candidates = sorted(i for i, n in hits.items() if n >= floor)
        else:
            candidates = list(range(last))
        for i in candidates:
            if same_fact(said._sig(texts[i]), mine, said.threshold):
                out[texts[i].id].append(r.timestamp)
    return out


def _containing_before(said: SaidAgain, group: tuple[str, ...], last: int) -> set[int]:
    """Indices (below `last`) of the entries whose text contains a string of `group`."""
    found: set[int] = set()
    end = said._starts[last] if last < len(said._starts) else len(said._blob)
    for probe in group:
        at = said._blob.find(probe, 0, end)
        while at != -1:
            found.add(bisect_right(said._starts, at) - 1)
            at = said._blob.find(probe, at + 1, end)
    return found


def probes(sig: Sig, threshold: float) -> tuple[list[tuple[str, ...]], int]:
    """For each word of `sig` (numbers and dates aside), strings one of which the lower-cased text
    of any entry sharing that word contains; and how many of them such a text must contain to
    say the same as `sig` at `threshold`.

    Dice >= t needs an overlap of at least ⌈t·|a|/(2−t)⌉ words, at most `#`-many of them numbers
    and dates (which are written in many ways, so not probed). A word's normal form
    (`similarity.norm`) is a prefix of the word as written, but for `-ies` → `-y` (probed without
    the `y`) and the irregular verbs (each form probed).
    """
    words = sorted(t for t in sig.tokens if not t.startswith("#"))
    overlap = max(1, math.ceil(threshold * len(sig.tokens) / (2 - threshold) - 1e-9))
    groups = [(w[:-1] if w.endswith("y") and len(w) > 1 else w, *IRREGULAR_FORMS.get(w, ())) for w in words]
    return groups, overlap - (len(sig.tokens) - len(words))


IRREGULAR_FORMS: dict[str, list[str]] = {}
for _form, _base in IRREGULAR.items():
    IRREGULAR_FORMS.setdefault(norm(_form), []).append(_form)


def presentation_times(tl: Timeline, said: SaidSource, event: Event, at: datetime) -> list[datetime]:
    """When `event` was presented by `at`: written, updated, reconfirmed, said again (oldest first)."""
    if event.timestamp is None:
        return []
    times = [event.timestamp]
    if event.updated is not None and event.timestamp < event.updated <= at:
        times.append(event.updated)
    later = said.of(event)
    confirmers = tl.reconfirmed_by.get(event.id)
    if not later and not confirmers:  # most entries: asked for every entry of `list`
        return times if len(times) == 1 else sorted(times)
    for rid in dict.fromkeys([*(confirmers or ()), *later]):
        ts = tl.by_id[rid].timestamp
        if ts is not None and event.timestamp <= ts <= at:
            times.append(ts)
    return sorted(times)


def retention_dicts(tl: Timeline, said: SaidSource, events: Sequence[Event], at: datetime,
                    accesses: Mapping[str, int] | None = None,
                    params: retention.Params | None = None) -> list[dict[str, object]]:
    """`retention_of(...).to_dict()` of each event (what `list` prints for 100k entries).

    Most entries were presented once, when written: their retention is the model at their age,
    computed here without the general path's lists and objects (~2x faster); the others take it."""
    cfg = tl.config
    model, tick = cfg.decay_model, cfg.decay_tick
    params = params or vault_params(cfg)
    once = retention.presented_once(model, params)
    counts = dict(accesses.items()) if accesses else {}
    confirmed = tl.reconfirmed_by
    band, status = retention.band, retention.status
    # the texts that can have a later partner, when the source knows them (the stored pairs do)
    partnered = said.partnered() if hasattr(said, "partnered") else None
    out: list[dict[str, object]] = []
    for ev in events:
        ts, upd, count = ev.timestamp, ev.updated, counts.get(ev.id, 0)
        if ts is None or (upd is not None and ts < upd <= at) or ev.id in confirmed or (
                (partnered is None or ev.content in partnered) and said.of(ev)):
            out.append(retention_of(tl, said, ev, at, counts, params).to_dict())
            continue
        age = (at - ts).total_seconds() / tick
        value = once(age if age > 0 else 0.0, band(ev.importance, ev.kind == "curated"), count)
        out.append({"value": float(f"{value:.6g}"), "status": status(value), "model": model,
                    "presentations": 1, "accesses": count})
    return out


def retention_of(tl: Timeline, said: SaidSource, event: Event, at: datetime,
                 accesses: Mapping[str, int] | None = None, params: retention.Params | None = None) -> Retention:
    """The entry's retention at `at` under the vault's `[decay]` model (`params`: its `[decay]`
    table, read once by the caller that asks for every entry); an undated entry keeps it all."""
    count = accesses.get(event.id, 0) if accesses else 0
    cfg = tl.config
    times = presentation_times(tl, said, event, at)
    if not times:
        return Retention(1.0, "active", 0, count, cfg.decay_model)
    tick = cfg.decay_tick
    memory = retention.Memory(
        max(0.0, (at - times[0]).total_seconds() / tick),  # elapsed_ticks, inline: asked for every entry
        tuple(elapsed_ticks(t, at, tick) for t in times[1:]) if len(times) > 1 else (),
        retention.band(event.importance, event.kind == "curated"),
        count,
    )
    value = retention.retention(cfg.decay_model, memory, params or vault_params(cfg))
    return Retention(value, retention.status(value), len(times), count, cfg.decay_model)
