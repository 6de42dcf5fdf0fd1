"""Which log entries `curate` proposes for MEMORY.md, and why: pure functions over a timeline.

`select` decides for every log entry whether it is promoted, merged into a bullet that
already says it, used to update a bullet it corrects, or left out, and records the reason
so `curate --explain` can say it. Thresholds and section rules come from `[curate]`.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from memvault.check.secrets.scan import find_secrets
from memvault.config.curate import Settings
from memvault.curate import sections
from memvault.curate.document import Bullet, MemoryDoc, plain_text
from memvault.curate.meaning import Meaning, Provider, joins, node_texts, reason
from memvault.curate.sources import curated_sources
from memvault.entries import decay
from memvault.entries.model import Event
from memvault.entries.similarity import Sig, differs, signature, similarity
from memvault.entries.timeline import Timeline
from memvault.entries.words import WORD_RE
from memvault.search.access import Access

LOW_IMPORTANCE = 0.3
CANDIDATE_DF_CAP = 500  # tokens in more entries than this do not propose pairs (see docs)


# ----------------------------------------------------------------------------- results


@dataclass
class Target:
    """What one proposal is made from."""

    kind: str  # add | update | reconfirm
    entries: list[Event]
    section: str
    reasons: list[str]
    bullet: Bullet | None = None
    text_from: Event | None = None
    section_why: str = ""  # add: why this section (curate/sections.py)


@dataclass
class Decision:
    entry: str
    chosen: bool
    reason: str
    target: int | None = None
    facts: dict[str, Any] = field(default_factory=dict)


@dataclass
class Selection:
    targets: list[Target]
    decisions: dict[str, Decision]
    curated_by: dict[str, str]  # log entry id -> id of the bullet citing it


# --------------------------------------------------------------------------- selecting


OLD_PREFIXES = ("before the last curation", "before --since")  # left out as seen before the window


class _Selector:
    def __init__(self, tl: Timeline, doc: MemoryDoc, s: Settings, at: datetime, since: datetime | None,
                 recalls: dict[str, Access], considered: frozenset[str] | None = None, by_option: bool = False,
                 meaning: Provider | None = None):
        self.provider, self.meaning = meaning, Meaning(s.semantic_similarity)
        self.by_meaning: dict[str, tuple[str, float]] = {}  # node -> (node it joined by meaning, cosine)
        self.tl, self.doc, self.s, self.at, self.since, self.recalls = tl, doc, s, at, since, recalls
        # What the window's start is called in reasons: --since T is not the last curation.
        self.mark = "--since" if by_option else "the last curation"
        when = since.isoformat() if since else ""
        self.before = f"before --since {when}" if by_option else f"before the last curation ({when})"
        self.considered = considered  # what the last completed curation looked at (curate/considered.py)
        self.curated_by = curated_sources(tl, doc)
        self.bullets = {b.id: b for b in doc.bullets}
        self.bullet_sig = {b.id: signature(plain_text(doc.lines[b.start]) + " " + "\n".join(
            doc.lines[b.start + 1 : b.end])) for b in doc.bullets}
        self.decisions: dict[str, Decision] = {}
        self.kept_apart: dict[str, tuple[float, str, str]] = {}  # node -> (score, other node, why)
        self.sigs: dict[str, Sig] = {}
        self.block_ids = doc.block_ids()
        self.horizon = self._horizon()
        # Bullets a person updated by hand: (bullet, updated, was, words of was).
        self.was = [(b, b.event.updated, b.event.previous, signature(b.event.previous).tokens)
                    for b in doc.bullets if b.event.updated is not None and b.event.previous]

    def _horizon(self) -> datetime | None:
        """Before this time an entry of confidence 1, never reconfirmed, is below min_confidence."""
        cfg = self.tl.config

        def conf(days: float) -> float:
            return decay.vault_confidence(cfg, 1.0, self.at - timedelta(days=days), self.at)

        lo, hi = 0.0, 36500.0
        if self.s.min_confidence <= 0 or conf(hi) >= self.s.min_confidence:
            return None
        for _ in range(40):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if conf(mid) >= self.s.min_confidence else (lo, mid)
        return self.at - timedelta(days=hi)

    def sig(self, ev: Event) -> Sig:
        if ev.id not in self.sigs:
            self.sigs[ev.id] = signature(f"{ev.title} {ev.content}")
        return self.sigs[ev.id]

    # -- per entry ----------------------------------------------------------------------

    def gate(self, ev: Event) -> str | None:
        s = self.s
        bad = [t for t in ev.tags if t in s.ignore_tags]
        if bad:
            return f"tagged #{bad[0]} (listed in [curate] ignore_tags)"
        if ev.importance is not None and ev.importance < LOW_IMPORTANCE:
            return f"low importance ({ev.importance:g})"
        if self.horizon is not None and ev.timestamp is not None and ev.timestamp < self.horizon \
                and ev.confidence0 <= 1.0 and ev.id not in self.tl.reconfirmed_by:
            # Cheaper than computing the decay for each of a long history's entries.
            return (f"confidence decayed below [curate] min_confidence = {s.min_confidence:g} "
                    f"(written {ev.timestamp.date().isoformat()}, never reconfirmed)")
        if ev.is_note:
            why_not = self.note_gate(ev)
            if why_not:
                return why_not
        words = len(WORD_RE.findall(ev.content))
        if words < s.min_words:
            return f"trivial: {words} word{'s' * (words != 1)} (< [curate] min_words = {s.min_words})"
        if ev.expires is not None:
            return f"temporary: expires {ev.expires.date().isoformat()}; MEMORY.md keeps lasting memory"
        conf = self.tl.confidence(ev, self.at)
        if conf < s.min_confidence:
            return f"confidence {conf:.2f} (from {ev.confidence0:g}, decayed) < [curate] min_confidence = {s.min_confidence:g}"
        if find_secrets(ev.content, honour_allow=False):  # MEMORY.md gets no marked lines either
            return "its text looks like it holds a secret; secrets never go into MEMORY.md"
        return None

    def note_gate(self, ev: Event) -> str | None:
        """Freeform notes are most of a real vault, and what repeats there is mostly template
        (heartbeat checklists, cron reports, session headers): a note is taken only when it says
        it matters or searches keep finding it, never for being said again or for resembling a
        bullet (docs/curate.md, "Notes")."""
        if not prose_lines(ev.content):
            return "a freeform note of code or a table only: MEMORY.md keeps statements"
        if not self.merits(ev):
            return ("a freeform note that does not say it matters (no Importance: >= "
                    f"{self.s.min_importance:g}, no Reconfirms:) and was recalled fewer than {self.s.min_recalls} times")
        return None

    def merits(self, ev: Event) -> list[str]:
        s, out = self.s, []
        if ev.type in s.types:
            out.append(f"a {ev.type}")
        if ev.importance is not None and ev.importance >= s.min_importance:
            out.append(f"importance {ev.importance:g}")
        rc = self.reconfirmers(ev)
        if rc:
            out.append(f"reconfirmed by {', '.join(rc)}")
        n = self.recalls[ev.id].count if ev.id in self.recalls else 0
        if n >= s.min_recalls:
            out.append(f"recalled {n} times")
        return out

    def shortfalls(self, ev: Event, days: int) -> str:
        s = self.s
        imp = "none" if ev.importance is None else f"{ev.importance:g}"
        n = self.recalls[ev.id].count if ev.id in self.recalls else 0
        return (f"{sections.article(ev.type)} {ev.type} that does not matter enough yet: importance {imp} (< {s.min_importance:g}), "
                f"not reconfirmed, seen on {days} day{'s' * (days != 1)} (< {s.min_days}), "
                f"recalled {n} time{'s' * (n != 1)} (< {s.min_recalls})")

    def corrected_in_memory(self, ev: Event) -> str | None:
        """A bullet updated on or after the entry's day whose `was:` is what the entry says."""
        if not self.was or ev.timestamp is None or ev.type == "correction" or ev.id in self.tl.supersedes:
            return None  # a correction states the new value, not the old one
        mine = self.sig(ev)
        for b, upd, was, old in self.was:
            if upd.date() < ev.timestamp.date():
                continue
            if old and old <= mine.tokens and similarity(mine, self.bullet_sig[b.id], guard=False) > 0:
                return (f"MEMORY.md already corrected it: bullet {b.id} (line {b.start + 1}) was updated "
                        f"{upd.date().isoformat()}, was: {was}")
        return None

    def reconfirmers(self, ev: Event) -> list[str]:
        out = []
        for rid in self.tl.reconfirmed_by.get(ev.id, ()):
            ts = self.tl.by_id[rid].timestamp
            if ts is None or ts <= self.at:
                out.append(rid)
        return out

    def newness(self, ev: Event) -> str | None:
        if self.since is None:
            return "no earlier curation"
        if ev.timestamp is not None and ev.timestamp > self.since:
            return f"written since {self.mark}"
        if self.considered is not None and ev.id not in self.considered:
            return f"logged since {self.mark}, with an earlier time"
        if self.considered is None:
            # Without a record of what was considered, a correction of a bullet may never have
            # been seen (logged later with an earlier time): proposing it again is the safe side.
            fix = self._correction_target([ev])
            if fix is not None and fix[2] == "update":
                return f"corrects bullet {fix[0].id}, which does not say it yet"
        for rid in self.reconfirmers(ev):
            ts = self.tl.by_id[rid].timestamp
            if ts is not None and ts > self.since:
                return f"reconfirmed since {self.mark} (by {rid})"
        acc = self.recalls.get(ev.id)
        if acc is not None and acc.count >= self.s.min_recalls and acc.last_accessed > self.since:
            return f"recalled since {self.mark}"
        return None

    # -- the whole vault ----------------------------------------------------------------

    def run(self) -> Selection:
        pool: dict[str, Event] = {}
        new: dict[str, str] = {}
        tl = self.tl
        for ev in tl.events:
            if ev.kind != "log" or tl.by_id.get(ev.id) is not ev:
                continue
            status = tl.status(ev, self.at)
            if status != "live":
                self._leave(ev, self._status_reason(ev, status))
                continue
            if ev.id in self.curated_by:
                bid = self.curated_by[ev.id]
                line = self.bullets[bid].start + 1
                self._leave(ev, f"already in MEMORY.md: bullet ^{bid} (line {line})" if bid in self.block_ids
                            else f"already in MEMORY.md: the bullet on line {line}", line=line)
                continue
            why_not = self.gate(ev)
            if why_not:
                self._leave(ev, why_not)
                continue
            fixed = self.corrected_in_memory(ev)
            if fixed:
                self._leave(ev, fixed)
                continue
            pool[ev.id] = ev
            fresh = self.newness(ev)
            if fresh:
                new[ev.id] = fresh
            else:
                self._leave(ev, f"{self.before} and nothing new about it since; use --all to reconsider")
        groups = self._cluster(pool, new)
        targets: list[Target] = []
        by_bullet: dict[str, int] = {}
        for members, bullet_ids in groups:
            target = self._target(members, bullet_ids, new)
            if target is None:
                continue
            if target.bullet is not None and target.bullet.id in by_bullet:
                self._merge(targets[by_bullet[target.bullet.id]], target)
                index = by_bullet[target.bullet.id]
            else:
                targets.append(target)
                index = len(targets) - 1
                if target.bullet is not None:
                    by_bullet[target.bullet.id] = index
            for ev in target.entries:
                self.decisions[ev.id] = Decision(ev.id, True, "; ".join(target.reasons), index,
                                                 {"new": new.get(ev.id, "an earlier mention of the same thing")})
        return Selection(targets, self.decisions, self.curated_by)

    def _status_reason(self, ev: Event, status: str) -> str:
        if status == "superseded":
            return f"superseded by {self.tl.superseder_at(ev, self.at)}"
        if status == "expired":
            return f"expired {ev.expires.isoformat() if ev.expires else ''}".strip()
        if status == "forgotten":
            if ev.forgotten is not None and ev.forgotten <= self.at:
                return f"forgotten {ev.forgotten.isoformat()}"
            return "forgotten by memvault maintain (docs/retention.md#maintenance)"
        return "written after the curation time"

    def _leave(self, ev: Event, reason: str, **facts: Any) -> None:
        self.decisions[ev.id] = Decision(ev.id, False, reason, None, facts)

    def _cluster(self, pool: dict[str, Event], new: dict[str, str]) -> list[tuple[list[Event], set[str]]]:
        """Groups of entries that say the same thing, with the bullets that already say it."""
        parent: dict[str, str] = {}

        def find(x: str) -> str:
            parent.setdefault(x, x)
            while parent[x] != x:
                parent[x] = parent[parent[x]]
                x = parent[x]
            return x

        def union(a: str, b: str) -> None:
            parent[find(a)] = find(b)

        nodes: dict[str, Sig] = {f"e:{i}": self.sig(ev) for i, ev in pool.items()}
        for eid, bid in self.curated_by.items():
            ev = self.tl.by_id.get(eid)
            if ev is not None and self.tl.status(ev, self.at) == "live":
                nodes[f"c:{eid}"] = self.sig(ev)
                union(f"c:{eid}", f"b:{bid}")
        nodes.update({f"b:{bid}": sig for bid, sig in self.bullet_sig.items()})
        postings: dict[str, list[str]] = defaultdict(list)
        for key, sig in nodes.items():
            for tok in sig.tokens:
                postings[tok].append(key)
        explicit: set[str] = set()
        for eid, ev in pool.items():
            for ref in self.reconfirmed_targets(ev):
                other = f"e:{ref}" if ref in pool else f"b:{ref}" if ref in self.bullets else (
                    f"b:{self.curated_by[ref]}" if ref in self.curated_by else None)
                if other is not None:
                    union(f"e:{eid}", other)
                    explicit.add(eid)
        if self.provider is not None:
            asked = [f"e:{eid}" for eid in new if eid not in explicit]
            events = {k: pool.get(k[2:]) if k[0] == "e" else self.tl.by_id.get(k[2:]) for k in nodes if k[0] != "b"}
            self.meaning = self.provider(node_texts(nodes, events), asked) or self.meaning
        for eid in new:
            if eid in explicit:
                continue  # its author said what it confirms
            best = self._best_match(f"e:{eid}", nodes, postings)
            if best is not None:
                union(f"e:{eid}", best)
        comps: dict[str, tuple[list[Event], set[str]]] = {}
        for key in dict.fromkeys(list(parent) + [f"e:{i}" for i in pool]):
            members, bullets = comps.setdefault(find(key), ([], set()))
            kind, _, ident = key.partition(":")
            if kind == "e":
                members.append(pool[ident])
            elif kind == "b":
                bullets.add(ident)
        out = []
        for members, bullets in comps.values():
            if any(m.id in new for m in members):
                members.sort(key=lambda e: (e.timestamp, e.file, e.line))
                out.append((members, bullets))
        out.sort(key=lambda g: (g[0][-1].timestamp, g[0][-1].file, g[0][-1].line))
        return out

    def _best_match(self, key: str, nodes: dict[str, Sig], postings: dict[str, list[str]]) -> str | None:
        """The one node an entry says the same as: a bullet first, then a cited entry, then any.

        Joining only the best match, not every match, keeps a chain of loosely similar entries
        from merging different facts into one bullet.
        """
        mine = nodes[key]
        best: dict[str, tuple[float, str]] = {}
        seen: set[str] = {key}
        for tok in mine.tokens:
            plist = postings[tok]
            if len(plist) > CANDIDATE_DF_CAP:
                continue
            for other in plist:
                if other in seen:
                    continue
                seen.add(other)
                score = similarity(mine, nodes[other])
                kind = other[0]
                if score >= self.s.similarity and (kind not in best or score > best[kind][0]):
                    why = differs(mine, nodes[other])
                    if why is None:
                        best[kind] = (score, other)
                    elif score > self.kept_apart.get(key, (0.0,))[0]:
                        self.kept_apart[key] = (score, other, why)
        by_meaning = self._near_by_meaning(key, nodes, best)
        for kind in ("b", "c", "e"):
            if kind in best:
                if kind in by_meaning:
                    self.by_meaning[key] = by_meaning[kind]
                return best[kind][1]
        return None

    def _near_by_meaning(self, key: str, nodes: dict[str, Sig], best: dict[str, tuple[float, str]]) -> dict[str, tuple[str, float]]:
        """Add to `best` the nearest text by meaning of each kind words found none of (a word
        match stands); return those added. `differs` vetoes as it does for words."""
        added: dict[str, tuple[str, float]] = {}
        for other, cosine in self.meaning.near(key):
            if other[0] in best:
                continue
            why = differs(nodes[key], nodes[other])
            if joins(cosine, self.meaning.threshold, why):
                best[other[0]], added[other[0]] = (cosine, other), (other, cosine)
            elif why and key not in self.kept_apart:
                self.kept_apart[key] = (cosine, other, why)
        return added

    def reconfirmed_targets(self, ev: Event) -> list[str]:
        if not ev.reconfirms:
            return []
        if not hasattr(self, "_targets_of"):
            self._targets_of: dict[str, list[str]] = defaultdict(list)
            for target, rids in self.tl.reconfirmed_by.items():
                for rid in rids:
                    self._targets_of[rid].append(target)
        return self._targets_of.get(ev.id, [])

    def _target(self, members: list[Event], bullet_ids: set[str], new: dict[str, str]) -> Target | None:
        latest = members[-1]
        days = len({m.timestamp.date() for m in members if m.timestamp is not None})
        if len(members) == 1:
            merits = [", ".join(self.merits(latest))] if self.merits(latest) else []
        else:
            merits = [f"{m.id}: {', '.join(self.merits(m))}" for m in members if self.merits(m)]
        if days >= self.s.min_days:
            merits.append(f"said on {days} different days")
        update = self._correction_target(members)
        if not merits and not bullet_ids and update is None:
            for m in members:
                if m.id in new:
                    self._leave(m, self.shortfalls(m, days))
            return None
        if update is not None:
            bullet, corr, kind = update
            if kind == "reconfirm":
                merits = merits + [f"the bullet was already updated on {bullet.event.updated.date().isoformat()}"]  # type: ignore[union-attr]
            return Target(kind, members, bullet.event.category or "", merits or [f"{corr.id}: a correction"],
                          bullet, corr)
        if bullet_ids:
            rep = self.sig(latest)
            best = max(bullet_ids, key=lambda b: (similarity(rep, self.bullet_sig[b], guard=False), -self.bullets[b].start))
            bullet = self.bullets[best]
            # No merits of its own: proposals() says "says again what the bullet says".
            return Target("reconfirm", members, bullet.event.category or "", merits, bullet)
        where = self.section_for(members)
        return Target("add", members, where.section, merits, None, latest, where.why)

    def _correction_target(self, members: list[Event]) -> tuple[Bullet, Event, str] | None:
        for m in reversed(members):
            node = self.tl.supersedes.get(m.id)
            while node is not None:
                found = self._bullet_for(node)
                if found is not None:
                    return self._maybe_done(found, m)
                node = self.tl.supersedes.get(node)
            if m.type == "correction":
                found = self._most_similar_bullet(self.sig(m))
                if found is not None:
                    return self._maybe_done(found, m)
        return None

    def _maybe_done(self, bullet: Bullet, corr: Event) -> tuple[Bullet, Event, str]:
        """A bullet already updated on or after the correction's day says it: reconfirm instead."""
        upd = bullet.event.updated
        if upd is not None and corr.timestamp is not None and upd.date() >= corr.timestamp.date():
            return bullet, corr, "reconfirm"
        return bullet, corr, "update"

    def _bullet_for(self, eid: str) -> Bullet | None:
        ev = self.tl.by_id.get(eid)
        if ev is None:
            return None
        if ev.kind == "curated":
            return self.bullets.get(eid)
        if eid in self.curated_by:
            return self.bullets.get(self.curated_by[eid])
        return self._most_similar_bullet(self.sig(ev), same=True)

    def _most_similar_bullet(self, sig: Sig, *, same: bool = False) -> Bullet | None:
        """The closest bullet; with `same`, only one that says the same (a correction's own text
        differs from what it corrects by design, so it is matched on words alone)."""
        best, score = None, 0.0
        for bid, bsig in self.bullet_sig.items():
            value = similarity(sig, bsig, guard=False)
            if value >= self.s.similarity and value > score and not (same and differs(sig, bsig)):
                best, score = bid, value
        return self.bullets[best] if best is not None else None

    def _merge(self, into: Target, other: Target) -> None:
        if other.kind == "update" and into.kind != "update":
            into.kind, into.text_from = "update", other.text_from
        elif other.kind == "update" and other.text_from and into.text_from and other.text_from.timestamp > into.text_from.timestamp:  # type: ignore[operator]
            into.text_from = other.text_from
        seen = {e.id for e in into.entries}
        into.entries.extend(e for e in other.entries if e.id not in seen)
        into.entries.sort(key=lambda e: (e.timestamp, e.file, e.line))
        into.reasons.extend(other.reasons)

    def section_for(self, members: list[Event]) -> sections.Route:
        """The section a new bullet goes to, and why (curate/sections.py); a correction is also
        routed by what it corrects."""
        if not hasattr(self, "_known"):
            logs = (f"{e.title}\n{e.content}" for e in self.tl.events if e.kind == "log")
            self._known = sections.known_from(self.doc, self.s.sections, logs)
        return sections.route(members[0], members[1:], self._corrected(members), self.s.sections,
                              self.s.default_section, self._known)

    def _corrected(self, members: list[Event]) -> list[Event]:
        out = []
        for m in members:
            node = self.tl.supersedes.get(m.id)
            while node is not None and node in self.tl.by_id:
                out.append(self.tl.by_id[node])
                node = self.tl.supersedes.get(node)
        return out


def select(tl: Timeline, doc: MemoryDoc, settings: Settings, *, at: datetime, since: datetime | None,
           recalls: dict[str, Access], considered: frozenset[str] | None = None, by_option: bool = False,
           meaning: Provider | None = None) -> Selection:
    """Decide, for every log entry, whether and how it goes into MEMORY.md. An entry dated at or
    before `since` is new only if something new happened to it, it is not in `considered` (when
    given: the entries the last curation looked at), or it corrects a bullet that does not say it.
    With `meaning` (curate/meaning.py), texts close enough by meaning also say the same."""
    selector = _Selector(tl, doc, settings, at, since, recalls, considered, by_option, meaning)
    selection = selector.run()
    for key, (_, other, why) in selector.kept_apart.items():
        decision = selection.decisions.get(key[2:])
        if decision is not None:  # `--explain` says why a similar text was not merged
            name = ("bullet " if other[0] == "b" else "entry ") + other[2:]
            decision.facts["kept_apart"] = f"not merged with {name}: {why}"
    for key, (other, cosine) in selector.by_meaning.items():
        decision = selection.decisions.get(key[2:])
        if decision is not None:
            name = ("bullet " if other[0] == "b" else "entry ") + other[2:]
            decision.facts["meaning"] = f"{reason(cosine)} as {name}"
    return selection


def prose_lines(text: str) -> list[str]:
    """The lines of `text` outside fenced code and tables (a table row starts with `|`)."""
    out, fence = [], False
    for line in text.split("\n"):
        bare = line.strip()
        if bare.startswith(("```", "~~~")):
            fence = not fence
            continue
        if not fence and bare and not bare.startswith("|"):
            out.append(bare)
    return out
