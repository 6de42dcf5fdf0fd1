"""What ingest does with each fact, decided against the vault before anything is written. Pure
over the parsed vault (its timeline) and the facts.

For each fact, in order:
- **secret**: its text looks like a secret: skipped, never written (its text is not shown);
- **trivial**: importance below `MIN_IMPORTANCE` (the protocol's "greeting or filler"): skipped;
- **known**: an entry with the same `Source:` (transcript and turn) already says it: this
  transcript was ingested before, nothing to do;
- **supersede** (an edited turn): a live entry of the same `Source:` that no fact of this reading
  says, about the same thing: the transcript was edited since, the newest reading of a turn wins;
- **overtaken** (an edited turn): what the turn said before was since superseded by an entry of
  another source: that later statement holds, nothing is written;
- **supersede**: a correction whose earlier statement is found (in this transcript, or a live
  entry of the vault): a `Correction` that `Supersedes:` it;
- **reconfirm**: a live entry of the vault already says it (`same_fact`, curate's "said again"):
  an entry that `Reconfirms:` it, instead of a second copy of the fact;
- **new**: an entry of its own.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from itertools import accumulate
from typing import Literal

from memvault.check.secrets.scan import find_secrets
from memvault.config.curate import DEFAULTS as CURATE_DEFAULTS
from memvault.entries.model import Event
from memvault.entries.presentations import probes
from memvault.entries.similarity import Sig, same_fact, signature, similarity
from memvault.errors import InputError
from memvault.ingest.facts import MAX_CONTENT, Fact
from memvault.parsed import ParsedVault
from memvault.write.guard import check_entry_text

MIN_IMPORTANCE = 0.1
CORRECTS_SIMILARITY = 0.34  # a correction without "not Y": the earlier statement must share this much
CLEAR_FIT = 0.5  # of several vault entries a correction may mean, one fits this well and no other does
Action = Literal["new", "reconfirm", "supersede", "known", "overtaken", "secret", "trivial", "unwritable",
                 "said again"]
WRITES = ("new", "reconfirm", "supersede")
TYPES = {"decision": "decision"}
TAGS = {"id": "ids"}


@dataclass
class Step:
    fact: Fact
    action: Action
    source: str
    content: str
    target: str | None = None  # an entry of the vault
    target_step: int | None = None  # an earlier step of this ingest (its entry's id is known once written)
    why: str = ""
    written: str | None = None  # the id of the entry written for it
    meta: dict[str, str] = field(default_factory=dict)
    revises: bool = False  # supersedes what an earlier reading of its (edited) turn wrote

    @property
    def type(self) -> str:
        if self.action == "supersede" and (not self.revises or self.fact.kind == "correction"):
            return "correction"
        return TYPES.get(self.fact.kind, "observation")

    @property
    def tags(self) -> tuple[str, ...]:
        return (TAGS.get(self.fact.kind, self.fact.kind),)


def plan(vault: ParsedVault, facts: list[Fact], source_id: str, when: datetime, extractor: str) -> list[Step]:
    tl = vault.timeline
    threshold = float(vault.config.section("curate", CURATE_DEFAULTS)["similarity"])
    by_source: dict[str, list[Event]] = defaultdict(list)
    for ev in tl.events:
        if ev.source and ev.source.split("#", 1)[0] == source_id:
            by_source[ev.source].append(ev)
    live = [e for e in tl.live() if not e.is_note and e.kind == "log" and e.timestamp is not None and e.timestamp <= when]
    corpus = Corpus(sorted(live, key=lambda e: e.timestamp or when))
    sources = [f"{source_id}#turn-{fact.turn}" if fact.turn else source_id for fact in facts]
    earlier = Readings(by_source, {e.id for e in tl.live()}, tl.by_id, threshold, tl.superseded_by)
    for fact, source in zip(facts, sources, strict=True):
        earlier.claim(fact, source)
    steps: list[Step] = []
    for fact, source in zip(facts, sources, strict=True):
        step = Step(fact, "new", source, fact.content, meta=_meta(fact, extractor))
        _decide(step, steps, earlier, corpus, threshold)
        steps.append(step)
    return steps


class Readings:
    """What earlier ingests of this transcript wrote, by `Source:` (transcript and turn). A turn
    whose live entry no fact of this reading says was edited since: a fact of that turn about the
    same thing replaces it (docs/ingest.md, "Ingesting an edited transcript")."""

    def __init__(self, by_source: dict[str, list[Event]], live: set[str], by_id: dict[str, Event], threshold: float,
                 superseded_by: dict[str, list[str]]):
        self.by_source, self.live, self.by_id, self.threshold = by_source, live, by_id, threshold
        self.superseded_by = superseded_by
        self.claimed: set[str] = set()
        self.sigs = {e.id: (e, signature(e.content)) for evs in by_source.values() for e in evs}
        self.words: dict[str, list[str]] = defaultdict(list)  # word -> entries: same_fact needs a shared one
        for eid, (_, sig) in self.sigs.items():
            for word in sig.tokens:
                self.words[word].append(eid)
        self._moved: dict[tuple[str, str], list[Event]] = {}
        self._revised: list[tuple[Event, Event]] | None = None

    def revised(self) -> list[tuple[Event, Event]]:
        """Each statement an edit of its transcript replaced (by an entry of the same `Source:`,
        of any transcript), with the live entry that now says it: a correction of the old value
        corrects what the edited turn says now."""
        if self._revised is None:
            self._revised = []
            for old_id in self.superseded_by:
                ev = self.by_id.get(old_id)
                if ev is None or not ev.source or ev.id in self.live:
                    continue
                head, seen = ev, {ev.id}
                while head.id not in self.live:
                    nxt = [n for n in self.superseded_by.get(head.id, ()) if n in self.by_id
                           and self.by_id[n].source == head.source and n not in seen]
                    if len(nxt) != 1:
                        break
                    head = self.by_id[nxt[0]]
                    seen.add(head.id)
                if head.id in self.live and head is not ev:
                    self._revised.append((ev, head))
        return self._revised

    def own(self, fact: Fact, source: str) -> Event | None:
        """The entry an earlier ingest wrote for this fact, a live one first."""
        mine = [e for e in self.by_source.get(source, ()) if _ingested(e, fact, self.threshold)]
        return next((e for e in mine if e.id in self.live), mine[0] if mine else None)

    def claim(self, fact: Fact, source: str) -> None:
        """The entries this reading still says: the fact's own, and any of another turn that says it
        (a turn inserted before it moved it), which a fact of its old turn must not replace."""
        if (ev := self.own(fact, source)) is not None and ev.id in self.live:
            self.claimed.add(ev.id)
        self.claimed.update(e.id for e in self.moved(fact, source) if e.id in self.live)

    def moved(self, fact: Fact, source: str) -> list[Event]:
        """The entries of another turn of this transcript that say the fact."""
        key = (fact.content, source)
        if key not in self._moved:
            mine = signature(fact.content)
            near = dict.fromkeys(eid for word in mine.tokens for eid in self.words.get(word, ()))
            self._moved[key] = [e for e, sig in map(self.sigs.__getitem__, near)
                                if e.source != source and same_fact(mine, sig, self.threshold)]
        return self._moved[key]

    def replaced(self, fact: Fact, source: str) -> Event | None:
        """The live entry of the fact's turn that this reading no longer says and that is about
        the same thing (shares enough words, or begins as the correction's subject); taken once."""
        ev = self._about(fact, source, live=True)
        if ev is not None:
            self.claimed.add(ev.id)
        return ev

    def overtaken(self, fact: Fact, source: str) -> Event | None:
        """The entry of another source that superseded what the fact's turn said about the same
        thing before the edit: that later statement holds."""
        ev = self._about(fact, source, live=False)
        later = [self.by_id[n] for n in self.superseded_by.get(ev.id, ()) if n in self.by_id] if ev else []
        return next((n for n in later if n.source != source), None)

    def _about(self, fact: Fact, source: str, live: bool) -> Event | None:
        if self.moved(fact, source):
            return None  # said at another turn before: its turn moved, it was not edited
        mine = signature(fact.content)
        best: tuple[float, str] | None = None
        for ev in self.by_source.get(source, ()):
            if (ev.id in self.live) != live or ev.id in self.claimed or ev.is_note or ev.kind != "log":
                continue
            about = fact.about is not None and ev.content.lower().startswith(fact.about)
            score = 1.0 if about else similarity(mine, signature(ev.content), guard=False)
            if score >= CORRECTS_SIMILARITY and (best is None or score > best[0]):
                best = (score, ev.id)
        return None if best is None else self.by_id[best[1]]


def said_again(steps: list[Step], again: list[tuple[Fact, int]], source_id: str) -> list[Step]:
    """A step for each `--with` reply fact that repeats a kept one (`merged`): every fact of the
    reply is in the report, the one written for it named."""
    out = []
    for fact, kept in again:
        step = steps[kept]
        source = f"{source_id}#turn-{fact.turn}" if fact.turn else source_id
        out.append(Step(fact, "said again", source, fact.content, why=f"said again: kept as the fact of "
                        f"{'turn ' + str(step.fact.turn) if step.fact.turn else 'the transcript'} ({step.action})"))
    return out


def _meta(fact: Fact, extractor: str) -> dict[str, str]:
    data: dict[str, object] = {"speaker": fact.speaker, "extractor": extractor}
    if len(fact.turns) > 1 or (fact.turns and fact.turns[0] != fact.turn):  # a --with fact of no turn said again
        data["turns"] = list(fact.turns)
    return {"metadata": json.dumps(data, ensure_ascii=False)}


def _decide(step: Step, steps: list[Step], earlier: Readings, corpus: Corpus, threshold: float) -> None:
    fact = step.fact
    if find_secrets(fact.content, honour_allow=False):
        step.action, step.why = "secret", "looks like a secret; never written"
        return
    if fact.importance < MIN_IMPORTANCE:
        step.action, step.why = "trivial", f"importance {fact.importance:g}: a greeting or filler"
        return
    if len(fact.content) > MAX_CONTENT:  # as a --with reply's fact (facts.py): a fact is a line, not a page
        step.action, step.why = "unwritable", f"{len(fact.content)} characters, more than {MAX_CONTENT}"
        return
    try:
        check_entry_text(fact.content)
    except InputError as exc:
        step.action, step.why = "unwritable", str(exc)
        return
    # Before looking for what a correction corrects: once ingested, its target is superseded and
    # the entry it wrote holds the new value, so a second run would find another target or none.
    # An edited turn is looked at first too: its new value must replace the old one, not correct
    # some other entry and leave two live values from one turn.
    known = earlier.own(fact, step.source)
    if known is None or known.id not in earlier.live:
        old = earlier.replaced(fact, step.source)
        if old is not None:
            _revise(step, old, earlier.by_id)
            return
    if known is not None:
        step.action, step.written, step.why = "known", known.id, f"already ingested as {known.id}"
        return
    later = earlier.overtaken(fact, step.source)
    if later is not None:
        step.action, step.target = "overtaken", later.id
        step.why = f"the transcript was edited, but what turn {fact.turn} said before was since superseded by {later.id}"
        return
    if fact.kind == "correction" or fact.corrects:
        _correct(step, steps, corpus, earlier)
    if step.action == "supersede":
        return
    same = corpus.said(signature(step.content), threshold)
    if same is not None:
        step.action, step.target, step.why = "reconfirm", same.id, f"the vault already says it ({same.id})"


def _revise(step: Step, old: Event, by_id: dict[str, Event]) -> None:
    """The fact of an edited turn replaces what the turn said before. A correction is put in the
    words of the statement its earlier reading superseded ("budget is 5000 euros", not "5000,
    not 3000"), as on its first ingest."""
    fact = step.fact
    root = _readings(old, by_id)[-1]  # the turn's first reading: what the correction first corrected
    first = by_id.get(root.supersedes) if root.supersedes else None
    if first is not None and (fact.kind == "correction" or fact.corrects):
        # that statement, or (its own transcript edited since) an earlier reading of it naming the old value
        said = (_substituted(ev.content, fact) for ev in _readings(first, by_id))
        step.content = next((c for c in said if c != fact.content), fact.content)
    step.action, step.target, step.revises = "supersede", old.id, True
    step.why = f"the transcript was edited: replaces {old.id}, which turn {fact.turn} said before"


def _readings(ev: Event, by_id: dict[str, Event]) -> list[Event]:
    """`ev` and the entries of the same `Source:` it replaced, back to the first reading."""
    out = [ev]
    while (prev := by_id.get(out[-1].supersedes or "")) is not None and prev.source == ev.source and prev not in out:
        out.append(prev)
    return out


def _says(a: str, b: str, threshold: float) -> bool:
    return a.strip() == b.strip() or same_fact(a, b, threshold)


def _ingested(ev: Event, fact: Fact, threshold: float) -> bool:
    """Whether `ev` (an entry of the fact's source: transcript and turn) is what ingesting `fact`
    wrote: it says the fact; or, for a correction, it is the supersession that put its new value
    in the earlier statement's words."""
    if _says(ev.content, fact.content, threshold):
        return True
    if not ev.supersedes or not (fact.kind == "correction" or fact.corrects):
        return False
    if fact.value and _names(ev.content, fact.value):
        return True
    return fact.about is not None and ev.content.lower().startswith(fact.about)


def _names(text: str, value: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(value.lower())}(?!\w)", text.lower()) is not None


class Corpus:
    """The live entries a fact may say again, their texts lower-cased and joined into one string:
    one C-speed `find` per probe word instead of a Python loop over the entries (as retention's
    `SaidAgain` does)."""

    def __init__(self, live: list[Event]):
        self.live = live
        self.by_id = {e.id: e for e in live}
        lows = [e.content.lower().replace("\0", " ") for e in live]
        self.starts = list(accumulate((len(x) + 1 for x in lows[:-1]), initial=0)) if lows else []
        self.blob = "\0".join(lows)
        self._sigs: dict[int, Sig] = {}

    def sig(self, i: int) -> Sig:
        if i not in self._sigs:
            self._sigs[i] = signature(self.live[i].content)
        return self._sigs[i]

    def containing(self, group: tuple[str, ...]) -> set[int]:
        found: set[int] = set()
        for probe in group:
            at = self.blob.find(probe)
            while at != -1:
                found.add(bisect_right(self.starts, at) - 1)
                at = self.blob.find(probe, at + 1)
        return found

    def candidates(self, sig: Sig, threshold: float) -> list[int]:
        """The entries that hold enough of `sig`'s words to reach `threshold`, newest first."""
        groups, floor = probes(sig, threshold)
        if floor <= 0:
            return list(range(len(self.live) - 1, -1, -1))
        hits: Counter[int] = Counter()
        for group in groups:
            hits.update(self.containing(group))
        return sorted((i for i, n in hits.items() if n >= floor), reverse=True)

    def said(self, sig: Sig, threshold: float) -> Event | None:
        """The live entry that says the same as `sig`, the newest; the entry a reconfirmation
        confirms rather than the reconfirmation itself, so repeats all point at the first."""
        for i in self.candidates(sig, threshold):
            ev = self.live[i]
            if same_fact(sig, self.sig(i), threshold):
                first = self.by_id.get(ev.reconfirms[0]) if ev.reconfirms else None
                return first if first is not None and same_fact(sig, signature(first.content), threshold) else ev
        return None


def _correct(step: Step, steps: list[Step], corpus: Corpus, readings: Readings) -> None:
    """Find what the correction corrects: an earlier fact of this transcript (the best, the latest
    of equals), else the one live entry of the vault that fits clearly; never a guess between two."""
    fact = step.fact
    old = (fact.corrects or "").lower()
    mine = signature(fact.content)
    named = re.compile(rf"(?<!\w){re.escape(old)}(?!\w)") if old else None
    denied = re.compile(rf"(?<!\w)(?:not|nicht|statt|anstatt|instead of|rather than)\s+{re.escape(old)}(?!\w)") \
        if old else None

    def fits(text: str) -> float:
        """With "not Y": texts stating Y (not denying it), by shared words, the value itself one of
        them; with a subject ("no, my flight is ..."): texts about it; else shared words."""
        low = text.lower()
        if named is not None and denied is not None:
            return _dice(mine, signature(text)) if named.search(low) and not denied.search(low) else 0.0
        if fact.about is not None and low.startswith(fact.about):
            return 1.0
        score = similarity(mine, signature(text), guard=False)  # "not" is what a correction says
        return score if score >= CORRECTS_SIMILARITY else 0.0

    earlier = [(score, i) for i, s in enumerate(steps) if s.action in WRITES + ("known",)
               if (score := fits(s.content)) > 0]
    if earlier:
        target = steps[max(earlier)[1]]
        step.action, step.content = "supersede", _substituted(target.content, fact)
        if target.action == "known":
            step.target = target.written
        else:
            step.target_step = steps.index(target)
        step.why = f"corrects turn {target.fact.turn}"
        return
    pool = corpus.containing((old,)) if old else corpus.candidates(mine, CORRECTS_SIMILARITY)
    found = sorted(((fits(corpus.live[i].content), i) for i in pool), reverse=True)
    found = [(score, i) for score, i in found if score > 0]
    if len(found) == 1 or (found and found[0][0] >= CLEAR_FIT > found[1][0]):
        ev = corpus.live[found[0][1]]
        step.action, step.target, step.content = "supersede", ev.id, _substituted(ev.content, fact)
        step.why = f"corrects {ev.id}"
        return
    was = sorted(((fits(old_ev.content), n) for n, (old_ev, _) in enumerate(readings.revised())), reverse=True)
    was = [(score, n) for score, n in was if score > 0]
    if len(was) == 1 or (was and was[0][0] >= CLEAR_FIT > was[1][0]):
        stated, now = readings.revised()[was[0][1]]  # "4500, not 3000", and the turn that said 3000 says 3500 now
        step.action, step.target, step.content = "supersede", now.id, _substituted(stated.content, fact)
        step.why = f"corrects {now.id} (its transcript was edited: it said {stated.id} before)"


def _dice(a: Sig, b: Sig) -> float:
    """Shared content words, at least the one value both name (similarity asks for two)."""
    shared = len(a.tokens & b.tokens)
    return 2 * shared / (len(a.tokens) + len(b.tokens)) if shared else 0.01


def _substituted(earlier: str, fact: Fact) -> str:
    """The earlier statement with the corrected value in place of the old one, when it names the
    old value and the new one is short; else the correction as said."""
    if not fact.corrects or not fact.value or len(fact.value.split()) > 6 or "\n" in earlier:
        return fact.content
    pattern = re.compile(rf"(?<!\w){re.escape(fact.corrects)}(?!\w)", re.IGNORECASE)
    if not pattern.search(earlier) or _names(earlier, fact.value):
        return fact.content  # never "4500 euros, not 4500 euros"
    return pattern.sub(lambda _: fact.value or "", earlier, count=1)
