"""The built-in extractor: deterministic rules from turns to facts, English and German. Pure.

What it takes (docs/ingest.md, "The built-in extractor"): explicit instructions ("always/never
...", "immer/nie ..."), preferences ("I prefer ...", "ich mag ..."), names and titles ("call me
...", "ich heiße ..."), decisions ("we decided / let's go with ...", "wir nehmen ..."), what the
user says of themselves ("my budget is ..."), ids (order, tracking, booking numbers in text, tool
calls and tool outputs) and corrections ("actually, X, not Y", "no, it's X", "nein, X"). Anything
else (greetings, thanks, small talk, questions) gives nothing. One fact per clause, the strongest
rule first. Importance follows the protocol's guideline (`IMPORTANCE`); what the agent says of
the user counts less than what the user says (`AGENT_FACTOR`), a tool's output is taken as is.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace

from memvault.entries.similarity import same_fact
from memvault.ingest.facts import Fact
from memvault.ingest.transcript import Turn
from memvault.ingest.wording import (
    ABBREV_RE,
    CORRECTION_DE,
    CORRECTION_EN,
    DECISION_DE,
    DECISION_EMPTY_RE,
    DECISION_EN,
    DECISION_LEAD_RE,
    ID_LABELS,
    ID_RE,
    INSTRUCTION_DE,
    INSTRUCTION_EN,
    NAME_RE,
    NOT_OLD_BUT_NEW,
    PERSONAL_DE,
    PERSONAL_EN,
    PREFERENCE_DE,
    PREFERENCE_EN,
    SOFT_CORRECTION,
    drop_reminder,
    german,
    new_value,
    sentence,
    split_correction,
    third_person,
)

IMPORTANCE = {  # the protocol: 1.0 an explicit instruction or core preference, 0.0 filler
    "instruction": 1.0, "preference": 0.9, "name": 0.9, "correction": 0.9,
    "id": 0.8, "decision": 0.8, "fact": 0.6,
}
AGENT_FACTOR = 0.8  # an agent restating a decision is evidence, not the user's word
ID_KEY_RE = re.compile(r"(?:^|_)(?:id|number|no|code|ref|reference)$|nummer$|^(?:order|tracking|booking|confirmation|"
                       r"reservation|ticket|invoice|case|shipment|flight|awb)", re.IGNORECASE)
CALL_ARG_RE = re.compile(r"(?<!\w)(\w{1,64})[\"']?[ \t]{0,8}[=:][ \t]{0,8}[\"']?([^\"',)}]{1,256})")  # f(order_id="X") or f({"order_id": "X"})


def extract(turns: list[Turn]) -> list[Fact]:
    """Every fact the rules find, in turn order, each said once (a repeat adds its turn)."""
    found: list[Fact] = []
    last_call = ""
    for turn in turns:
        if turn.call:
            last_call = turn.text  # the ids it names are the subject of the output that follows
        elif turn.speaker == "tool":
            found.extend(_tool_output(turn, last_call))
        else:
            for clause in sentences(turn.text):
                found.extend(_clause(clause, turn))
    return merge(found)


def merge(facts: list[Fact]) -> list[Fact]:
    """Facts said again in the same transcript kept once, at their first turn; an id fact that
    names no new id dropped (the order number the agent reads back)."""
    return merged(facts)[0]


def merged(facts: list[Fact]) -> tuple[list[Fact], list[tuple[Fact, int]]]:
    """`merge`'s facts, and each fact said again with the index of the kept fact that says it."""
    out: list[Fact] = []
    again: list[tuple[Fact, int]] = []
    seen_ids: set[str] = set()
    for f in facts:
        if f.ids and f.kind == "id" and f.speaker != "tool" and seen_ids.issuperset(f.ids):
            continue
        seen_ids.update(f.ids)
        same = next((i for i, g in enumerate(out) if g.content == f.content or same_fact(g.content, f.content)), None)
        if same is None:
            out.append(f if f.turns else _with_turns(f, (f.turn,) if f.turn else ()))
            continue
        g = out[same]
        turns = tuple(dict.fromkeys((*g.turns, *((f.turn,) if f.turn else ()))))
        out[same] = replace(g, importance=max(g.importance, f.importance), ids=tuple(dict.fromkeys((*g.ids, *f.ids))),
                            turns=turns)
        again.append((f, same))
    return out, again


def _with_turns(f: Fact, turns: tuple[int, ...]) -> Fact:
    return replace(f, turns=turns)


def sentences(text: str) -> list[str]:
    """Sentences and lines; "Dr. Anya Sharma" stays one sentence."""
    pieces = [p.strip() for p in re.split(r"(?<=[.!?])\s+|\n+", text) if p.strip()]
    out: list[str] = []
    for p in pieces:
        if out and ABBREV_RE.search(out[-1]):
            out[-1] += " " + p
        else:
            out.append(p)
    return out


def _fact(kind: str, content: str, turn: Turn, **kw: object) -> Fact:
    weight = AGENT_FACTOR if turn.speaker == "agent" and kind != "id" else 1.0
    return Fact(content=content, kind=kind, importance=round(IMPORTANCE[kind] * weight, 2), speaker=turn.speaker,
                turn=turn.n, **kw)  # type: ignore[arg-type]


def _clause(text: str, turn: Turn) -> list[Fact]:
    out = _ids(text, turn)
    de = german(text)
    if turn.speaker == "user":
        rule = _correction(text, turn, de) or _instruction(text, turn, de) or _name(text, turn) \
            or (None if text.rstrip().endswith("?") else
                _preference(text, turn, de) or _decision(text, turn, de) or _personal(text, turn, de))
    else:
        rule = None if text.rstrip().endswith("?") else _decision(text, turn, de, agent=True)
    if rule is not None and rule.kind == "fact" and out:
        rule = None  # "my order number is X": the id fact says it
    return ([rule] if rule else []) + out


def _ids(text: str, turn: Turn) -> list[Fact]:
    out = []
    for m in ID_RE.finditer(text):
        ident = m["id"].rstrip(".-")
        if not any(c.isdigit() for c in ident):
            continue
        label = ID_LABELS.get(m["label"].lower(), m["label"].lower())
        whose = "The user's" if turn.speaker == "user" else "The"
        out.append(_fact("id", f"{whose} {label} number is {ident}.", turn, ids=(ident,)))
    return out


def _correction(text: str, turn: Turn, de: bool) -> Fact | None:
    m = (CORRECTION_DE if de else CORRECTION_EN).match(text)
    if m:
        how, what = m["how"].lower(), m["what"].strip()
    elif NOT_OLD_BUT_NEW.match(text):
        how, what = "not", text.strip()  # "Not Friday but Saturday."
    else:
        return None
    new, old = split_correction(what)
    if old is None and how.startswith(SOFT_CORRECTION):
        return None  # "Actually, that sounds good" corrects nothing
    value = new_value(new, old)
    if not value:
        return None
    if de:  # German puts the verb second: "Eigentlich ist mein Budget ...": the sentence as said
        return _fact("correction", sentence(f"Korrektur: {text}"), turn, corrects=old, value=value)
    if old is None and (said := _personal(new, turn, False)) is not None:
        # "No, my flight is on Sunday": the statement itself, correcting the one about the same thing
        about = said.content.lower().split(" is ", 1)[0].split(" are ", 1)[0].split(" will be ", 1)[0]
        return replace(said, kind="correction", importance=_fact("correction", "", turn).importance,
                       value=value, about=about)
    if how == "not":
        what = f"{value}, not {old}"
    elif how.startswith("i meant") and not what.lower().startswith("i meant"):
        what = f"I meant {what}"
    return _fact("correction", sentence(f"Correction: {third_person(what)}"), turn, corrects=old, value=value)


def _instruction(text: str, turn: Turn, de: bool) -> Fact | None:
    m = (INSTRUCTION_DE if de else INSTRUCTION_EN).search(text)
    if not m:
        return None
    clause = "" if de else m["clause"] or m["c1"]
    return _fact("instruction", sentence(f"Anweisung: {text}" if de else third_person(clause)), turn)


def _name(text: str, turn: Turn) -> Fact | None:
    m = NAME_RE.search(text)
    if not m:
        return None
    name = m["name"].strip()
    how = "wants to be called" if m["verb"].lower().startswith(("call", "nenn", "address")) else "is named"
    return _fact("name", f"The user {how} {name}.", turn)


def _preference(text: str, turn: Turn, de: bool) -> Fact | None:
    if de:
        return _fact("preference", sentence(f"Vorliebe: {text}"), turn) if PREFERENCE_DE.search(text) else None
    m = PREFERENCE_EN.search(text)
    if not m:
        return None
    what = third_person(drop_reminder(m["what"].strip()))
    if what.lower().strip(" .!") in ("it", "that", "this", "them", "those", "you", "so"):
        return None
    verb = " ".join(m["verb"].lower().replace("’", "'").split())
    said = "would rather" if "rather" in verb else {
        "prefer": "prefers", "love": "loves", "like": "likes", "hate": "hates", "dislike": "dislikes",
        "can't stand": "cannot stand", "cant stand": "cannot stand"}.get(verb, "does not like")
    return _fact("preference", sentence(f"The user {said} {what}"), turn)


def _decision(text: str, turn: Turn, de: bool, agent: bool = False) -> Fact | None:
    m = (DECISION_DE if de else DECISION_EN).search(text)
    if not m or (agent and not m["past"]):
        return None  # the agent's "let's go with" is a proposal; "we decided" reports a decision
    if de:
        return _fact("decision", sentence(f"Entscheidung: {text}"), turn)
    what = DECISION_LEAD_RE.sub("", m["what"].strip(), count=1)
    if not what or DECISION_EMPTY_RE.match(what):
        return None  # "I booked it: confirmation number X": the id says it
    new, old = split_correction(what)  # "we decided on X, not Y" corrects the decision Y
    value = new_value(new, old) if old else None
    return _fact("decision", sentence(f"Decided: {third_person(what)}"), turn, corrects=old, value=value)


def _personal(text: str, turn: Turn, de: bool) -> Fact | None:
    m = (PERSONAL_DE if de else PERSONAL_EN).search(text)
    if not m:
        return None
    if de:
        return _fact("fact", sentence(f"Angabe: {text}"), turn)
    return _fact("fact", sentence(f"The user's {m['what'].strip()} {m['verb']} {third_person(m['val'].strip())}"), turn)


def _tool_output(turn: Turn, call: str) -> list[Fact]:
    """A JSON tool output with ids: one fact (subject from the call's id argument, then its
    fields); any other output: the ids its text names."""
    try:
        data = json.loads(turn.text)
    except json.JSONDecodeError:
        return _ids(turn.text, turn)
    if not isinstance(data, dict):
        return []
    fields = {k: v for k, v in data.items() if isinstance(v, str | int | float) and not isinstance(v, bool)}
    subject = [(k, v.strip()) for k, v in CALL_ARG_RE.findall(call) if ID_KEY_RE.search(k) and any(c.isdigit() for c in v)]
    ids = [str(v) for k, v in fields.items() if ID_KEY_RE.search(k) and any(c.isdigit() for c in str(v))]
    if not ids and not subject:
        return []
    head = " ".join(f"{_human(k, strip_id=True).capitalize()} {v}" for k, v in subject[:1]) or "Tool output"
    body = ", ".join(f"{_human(k)} {v}" for k, v in fields.items() if (k, str(v)) not in subject)
    return [_fact("id", sentence(f"{head}: {body}" if body else head), turn,
                  ids=tuple(dict.fromkeys([v for _, v in subject] + ids)))]


def _human(key: str, strip_id: bool = False) -> str:
    words = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", key).replace("_", " ").replace("-", " ").lower().split()
    if strip_id and len(words) > 1 and words[-1] in ("id", "number", "no"):
        words = words[:-1]
    return " ".join(words)
