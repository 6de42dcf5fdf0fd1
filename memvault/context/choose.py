"""Choosing and fitting the prompt block (pure): items from ranked hits, their kind, conflicts,
the budget, the text.

docs/context.md is the prose of these rules:

- **kind**: an agent-memory kind tag (`#preference`, `#lesson`, `#fact`, `#source`, `#avoid`, and
  curate's kind tags); for a MEMORY.md bullet, what its section's name says ("User Preferences");
  then curate's cues in the words ("prefers", "Always ...", "Lesson:"); then the type (a belief or
  correction is a fact, a decision a decision, ...).
- **conflicts**: two items *about the same thing* (curate's word overlap, `similarity`, at
  curate's threshold, counting a `not` as a word) conflict. Of two that *say the same*
  (`same_fact`) only one is kept: the user's, else the curated bullet, else the better ranked.
  Of two that differ, the inferred one is set aside when the other is the user's word
  (`entries/provenance.said_by_user`: `Source: user`, or ingest's `"speaker": "user"`); two
  inferred ones both stay (memvault does not guess which is right: supersession says that).
- **budget**: items are taken best first (search's score), each only if the block with it still
  fits; a kind's heading and the block's title count from the first item that needs them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from memvault.context.tokens import Counter
from memvault.curate.sections import (
    KIND_RES,
    KIND_TAGS,
    LABEL_RE,
    LABELS,
    ROUTE_CHARS,
    RULE_RE,
    WORD_OR_BREAK_RE,
)
from memvault.entries.provenance import said_by_user
from memvault.entries.similarity import DEFAULT_SIMILARITY, Sig, same_fact, signature, similarity
from memvault.search.hits import Hit

TITLE = "# Memory"
# What a `not` denies: the words after it, to the end of its clause ("light mode, not dark mode").
NEGATED_RE = re.compile(r"(?<![^\W_])(?:not|never|nicht|kein|keine|keinen|nie|niemals)\s+([^.,;:!?()]+)", re.IGNORECASE)
MAX_TEXT = 300  # characters of one item's line; the id leads to the whole entry
KINDS = ("preference", "avoid", "lesson", "decision", "project", "fact", "procedure", "source", "observation",
         "note")
LABEL = {"preference": "Preferences", "avoid": "Avoid", "lesson": "Lessons", "decision": "Decisions",
         "project": "Projects", "fact": "Facts", "procedure": "Procedures", "source": "Sources",
         "observation": "Observations", "note": "Notes"}
TAG_KIND = {**KIND_TAGS, "fact": "fact", "facts": "fact", "source": "source", "sources": "source", "avoid": "avoid",
            # memvault ingest's tags (docs/ingest.md): an instruction is kept in view as a lesson is
            "instruction": "lesson", "name": "preference", "ids": "fact", "correction": "fact"}
# Words of a MEMORY.md section's name, and the kind they say (English and German).
SECTION_KIND = (("preferen", "preference"), ("vorlieb", "preference"), ("präferenz", "preference"),
                ("avoid", "avoid"), ("vermeid", "avoid"), ("lesson", "lesson"), ("learn", "lesson"),
                ("gelernt", "lesson"), ("lektion", "lesson"), ("decision", "decision"), ("entscheid", "decision"),
                ("project", "project"), ("projekt", "project"), ("source", "source"), ("quelle", "source"))
TYPE_KIND = {"belief": "fact", "correction": "fact", "decision": "decision", "procedure": "procedure",
             "observation": "observation", "note": "note"}


@dataclass
class Item:
    id: str
    kind: str
    text: str
    cite: str
    score: float
    user: bool = False
    curated: bool = False
    source: str | None = None
    scope: str | None = None
    sig: Sig = field(default_factory=lambda: signature(""), repr=False, compare=False)

    @property
    def line(self) -> str:
        return f"- {self.text} [{self.id}]"

    def to_dict(self, counter: Counter) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "kind": self.kind, "text": self.text, "cite": self.cite,
                               "tokens": counter.line(self.line), "score": round(self.score, 4)}
        for key in ("source", "scope"):
            if getattr(self, key):
                out[key] = getattr(self, key)
        return out


LIST_MARK_RE = re.compile(r"^\s*(?:[-*+]|\d{1,3}[.)])\s+(?:\[[ xX]\]\s+)?")


def one_line(text: str, width: int = MAX_TEXT) -> str:
    """The text on one line: a note's list items joined as one sentence, their markers dropped (a
    prompt line "- - a - b" reads as a list inside a list)."""
    lines = [line for line in text.splitlines() if line.strip()]
    if len(lines) > 1 and any(LIST_MARK_RE.match(line) for line in lines):
        items = [LIST_MARK_RE.sub("", line).strip() for line in lines]
        text = " ".join(item if item[-1:] in ".!?;:" else item + ";" for item in items).rstrip(";")
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1].rstrip() + "\u2026"


def kind_of(tags: Iterable[str], type_: str, text: str, section: str | None = None) -> str:
    """The agent-memory kind of an entry (module docstring)."""
    for tag in tags:
        if tag in TAG_KIND:
            return TAG_KIND[tag]
    if section is not None:
        name = section.lower()
        return next((kind for word, kind in SECTION_KIND if word in name), "fact")
    if type_ in ("decision", "procedure"):
        return type_
    label = LABEL_RE.match(text)
    if label and " ".join(label.group(1).lower().split()) in LABELS:
        return LABELS[" ".join(label.group(1).lower().split())]
    if RULE_RE.match(text):
        return "lesson"
    words = " ".join(m.group(1).lower() if m.group(1) else "|" for m in WORD_OR_BREAK_RE.finditer(text[:ROUTE_CHARS]))
    for kind in ("preference", "lesson"):
        if KIND_RES[kind].search(words):
            return kind
    return TYPE_KIND.get(type_, type_)


def item(hit: Hit) -> Item:
    ev = hit.event
    text = one_line(hit.content or hit.title)
    section = ev.category if ev is not None and hit.kind == "curated" else None
    source = ev.source if ev is not None else None
    return Item(id=hit.id, kind=kind_of(hit.tags, hit.type, text, section), text=text, cite=hit.location,
                score=hit.score, user=ev is not None and said_by_user(source, ev.meta), curated=hit.kind == "curated", source=source,
                scope=ev.scope if ev is not None else None, sig=signature(text))


def settle(items: list[Item]) -> tuple[list[Item], list[dict[str, str]]]:
    """The items without those a conflict sets aside (module docstring), best first; and what was
    set aside, with why. Only pairs that share a content word are compared."""
    ranked = sorted(items, key=lambda i: (not i.user, not i.curated, -i.score, i.id))
    by_word: dict[str, list[Item]] = {}
    kept: list[Item] = []
    aside: list[dict[str, str]] = []
    for it in ranked:
        rivals = {id(o): o for w in it.sig.tokens for o in by_word.get(w, ())}.values()
        why = next((r for r in (_beaten(it, o) for o in rivals) if r), None)
        if why:
            aside.append({"id": it.id, "reason": why})
            continue
        kept.append(it)
        for w in it.sig.tokens:
            by_word.setdefault(w, []).append(it)
    kept.sort(key=lambda i: (-i.score, i.id))
    return kept, aside


def _beaten(it: Item, other: Item) -> str | None:
    """Why `it` gives way to `other` (which sorted before it), or None."""
    if similarity(it.sig, other.sig, guard=False) < DEFAULT_SIMILARITY:
        return None
    if same_fact(it.sig, other.sig) or _agrees(it.sig, other.sig):
        return f"says the same as {other.id}"
    if other.user and not it.user:
        return f"conflicts with {other.id} (source: user)"
    return None


def _agrees(a: Sig, b: Sig) -> bool:
    """"Prefers light mode" and "prefers light mode, not dark mode": one says `not`, and the other
    says only what the first says outside its negated words (same_fact calls any `not` a difference)."""
    if a.negated == b.negated:
        return False
    neg, plain = (a, b) if a.negated else (b, a)
    said = signature(NEGATED_RE.sub(" ", neg.text)).tokens
    denied = frozenset(w for m in NEGATED_RE.finditer(neg.text) for w in signature(m.group(1)).tokens) - said
    return bool(denied) and plain.tokens <= said


@dataclass
class Block:
    items: list[Item]
    text: str
    tokens: int
    left_out: list[dict[str, str]]


def fit(items: list[Item], budget: int, counter: Counter) -> Block:
    """The best items (in the order given) whose block fits `budget` tokens, as text grouped by
    kind (the kinds in KINDS order, then others by name; user-sourced items first in a kind)."""
    chosen: list[Item] = []
    kinds: set[str] = set()
    used = 0
    left: list[dict[str, str]] = []
    for it in items:
        cost = counter.line(it.line) + (0 if it.kind in kinds else counter.line(heading(it.kind)))
        cost += 0 if chosen else counter.line(TITLE)
        if used + cost > budget:
            left.append({"id": it.id, "reason": "over the budget"})
            continue
        chosen.append(it)
        kinds.add(it.kind)
        used += cost
    ordered = arrange(chosen)
    text = render(ordered)
    return Block(ordered, text, counter.text(text), left)


def arrange(items: list[Item]) -> list[Item]:
    """The block's order: by kind, the user's first within a kind, then best first."""
    return sorted(items, key=lambda i: (_kind_rank(i.kind), not i.user, -i.score, i.id))


def heading(kind: str) -> str:
    return f"## {LABEL.get(kind, kind.capitalize())}"


def _kind_rank(kind: str) -> tuple[int, str]:
    return (KINDS.index(kind), "") if kind in KINDS else (len(KINDS), kind)


def render(items: list[Item]) -> str:
    """The block: a title, then per kind a heading and one line per item citing its id."""
    if not items:
        return ""
    lines = [TITLE]
    for it in items:
        if len(lines) == 1 or heading(it.kind) != _last_heading(lines):
            lines.append(heading(it.kind))
        lines.append(it.line)
    return "\n".join(lines)


def _last_heading(lines: list[str]) -> str:
    return next(ln for ln in reversed(lines) if ln.startswith("## "))
