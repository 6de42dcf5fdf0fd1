"""What ingest does with each fact, decided against the vault before anything is written. Pure
over the parsed vault (its timeline) and the facts.

For each fact, in order:
- **secret**: its text looks like a secret: skipped, never written (its text is not shown);
- **trivial**: importance below `MIN_IMPORTANCE` (the protocol's "greeting or filler"): skipped;
- **known**: an entry with the same `Source:` (transcript and turn) already says it: this
  transcript was ingested before, nothing to do;
- **supersede**: a correction whose earlier statement is found (in this transcript, or a live
  entry of the vault): a `Correction` that `Supersedes:` it;
- **reconfirm**: a live entry of the vault already says it (`same_fact`, curate's "said again"):
  an entry that `Reconfirms:` it, instead of a second copy of the fact;
- **new**: an entry of its own.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from memvault.check.secrets.scan import find_secrets
from memvault.config.curate import DEFAULTS as CURATE_DEFAULTS
from memvault.entries.model import Event
from memvault.entries.presentations import probes
from memvault.entries.similarity import Sig, same_fact, signature, similarity
from memvault.errors import InputError
from memvault.ingest.facts import Fact
from memvault.parsed import ParsedVault
from memvault.write.guard import check_entry_text

MIN_IMPORTANCE = 0.1
CORRECTS_SIMILARITY = 0.34  # a correction without "not Y": the earlier statement must share this much
Action = Literal["new", "reconfirm", "supersede", "known", "secret", "trivial", "unwritable"]
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

    @property
    def type(self) -> str:
        return "correction" if self.action == "supersede" else TYPES.get(self.fact.kind, "observation")

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
    lows = [e.content.lower() for e in live]
    steps: list[Step] = []
    for fact in facts:
        source = f"{source_id}#turn-{fact.turn}" if fact.turn else source_id
        step = Step(fact, "new", source, fact.content, meta=_meta(fact, extractor))
        _decide(step, steps, by_source, live, lows, threshold)
        steps.append(step)
    return steps


def _meta(fact: Fact, extractor: str) -> dict[str, str]:
    data: dict[str, object] = {"speaker": fact.speaker, "extractor": extractor}
    if len(fact.turns) > 1:
        data["turns"] = list(fact.turns)
    return {"metadata": json.dumps(data, ensure_ascii=False)}


def _decide(step: Step, steps: list[Step], by_source: dict[str, list[Event]], live: list[Event], lows: list[str],
            threshold: float) -> None:
    fact = step.fact
    if find_secrets(fact.content, honour_allow=False):
        step.action, step.why = "secret", "looks like a secret; never written"
        return
    if fact.importance < MIN_IMPORTANCE:
        step.action, step.why = "trivial", f"importance {fact.importance:g}: a greeting or filler"
        return
    try:
        check_entry_text(fact.content)
    except InputError as exc:
        step.action, step.why = "unwritable", str(exc)
        return
    if fact.kind == "correction" or fact.corrects:
        _correct(step, steps, live)
    known = next((e for e in by_source.get(step.source, ()) if _says(e.content, step.content, threshold)), None)
    if known is not None:
        step.action, step.written, step.why = "known", known.id, f"already ingested as {known.id}"
        step.target = step.target_step = None
        return
    if step.action == "supersede":
        return
    same = _said(signature(step.content), live, lows, threshold)
    if same is not None:
        step.action, step.target, step.why = "reconfirm", same.id, f"the vault already says it ({same.id})"


def _says(a: str, b: str, threshold: float) -> bool:
    return a.strip() == b.strip() or same_fact(a, b, threshold)


def _said(sig: Sig, live: list[Event], lows: list[str], threshold: float) -> Event | None:
    """The newest live entry that says the same as `sig` (only entries holding enough of its words
    are compared: `probes`, as retention's said-again does)."""
    groups, floor = probes(sig, threshold)
    for i in range(len(live) - 1, -1, -1):
        if floor > 0 and sum(any(p in lows[i] for p in g) for g in groups) < floor:
            continue
        if same_fact(sig, signature(live[i].content), threshold):
            return live[i]
    return None


def _correct(step: Step, steps: list[Step], live: list[Event]) -> None:
    """Find what the correction corrects: an earlier fact of this transcript, else a live entry."""
    fact = step.fact
    old = (fact.corrects or "").lower()
    mine = signature(fact.content)

    def fits(text: str) -> float:
        if old:
            return 1.0 if re.search(rf"(?<!\w){re.escape(old)}(?!\w)", text.lower()) else 0.0
        score = similarity(mine, signature(text), guard=False)
        return score if score >= CORRECTS_SIMILARITY else 0.0

    earlier = [(fits(s.content), i) for i, s in enumerate(steps) if s.action in WRITES + ("known",)]
    earlier = [(score, i) for score, i in earlier if score > 0]
    if earlier:
        _, i = max(earlier, key=lambda x: (x[0], x[1]))  # the best, the latest of equals
        target = steps[i]
        step.action, step.content = "supersede", _substituted(target.content, fact)
        if target.action == "known":
            step.target = target.written
        else:
            step.target_step = i
        step.why = f"corrects turn {target.fact.turn}"
        return
    found = sorted(((fits(e.content), e) for e in live), key=lambda x: x[0], reverse=True)
    if found and found[0][0] > 0 and (len(found) == 1 or found[1][0] < found[0][0]):
        target_ev = found[0][1]
        step.action, step.target, step.content = "supersede", target_ev.id, _substituted(target_ev.content, fact)
        step.why = f"corrects {target_ev.id}"


def _substituted(earlier: str, fact: Fact) -> str:
    """The earlier statement with the corrected value in place of the old one, when it names the
    old value and the new one is short; else the correction as said."""
    if not fact.corrects or not fact.value or len(fact.value.split()) > 6 or "\n" in earlier:
        return fact.content
    pattern = re.compile(rf"(?<!\w){re.escape(fact.corrects)}(?!\w)", re.IGNORECASE)
    if not pattern.search(earlier):
        return fact.content
    return pattern.sub(lambda _: fact.value or "", earlier, count=1)
