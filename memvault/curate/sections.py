"""Which MEMORY.md section a new bullet goes to, and why: a pure router over an entry's tags,
type and words (docs/curate.md, "Sections").

The order, first answer wins: the person's `[curate.sections]` rules (`#tag`, then `~word`, then
the type), then what the entry is about by memvault's own cues (a kind tag, a `Lesson:` label, an
"Always ..." instruction, a kind type, then its words), then a section the person made whose name its words say, then
`default_section`. Cues are whole words or phrases ("projection" is no project); a `*` marks a
stem, a `...` any words between within one sentence.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from memvault.curate.document import MemoryDoc, norm_section, plain_text
from memvault.entries.model import Event

# The kinds memvault recognises, in the order they win when an entry has cues of several, and
# the template's section for each (used unless `[curate.sections]` maps `#kind` elsewhere).
KINDS = ("preference", "lesson", "decision", "project")
TEMPLATE = {"preference": "User Preferences", "lesson": "Lessons Learned", "decision": "Decisions",
            "project": "Active Projects"}
KIND_TAGS = {"preference": "preference", "preferences": "preference", "pref": "preference", "lesson": "lesson",
             "lessons": "lesson", "decision": "decision", "decisions": "decision", "project": "project",
             "projects": "project", "projekt": "project", "entscheidung": "decision"}
ABOUT = {"preference": "about the user's preferences", "lesson": "a lesson", "decision": "records a decision",
         "project": "about a project"}

_USER = "user|users|nutzer|nutzers|nutzerin|benutzer|benutzers|benutzerin|anwender|anwenderin"

# A cue: words separated by spaces; `a|b` alternatives, `stem*` a stem, `...` a gap (same sentence).
CUES: dict[str, tuple[str, ...]] = {
    "preference": (
        "prefer*", "favourite*", "favorite*", "would rather", "would like", "wants", "likes", "loves", "enjoys",
        "dislike*", "hates", "can t stand", "timezone*", "time zone*", "dark|light mode|theme",
        "möchte|möchten", "bevorzug*", "mag|mögen", "lieblings*", "vorliebe*", "zeitzone*",
        "dunkelmodus", "hellmodus",
        f"{_USER} ... always|never|usually|habitually|normally|enjoy|like|hate|uses|switched|switches",
        f"{_USER} ... language|languages|speaks|editor|keyboard|font|theme|shell|browser|setup|settings|habit*",
        f"{_USER} ... immer|nie|niemals|meistens|gewöhnlich|lieber|nutzt|benutzt|verwendet|gewechselt|wechselt",
        f"{_USER} ... sprache|tastatur|schriftart|einstellung*|gewohnheit*",
    ),
    "lesson": (
        "lesson|lessons", "learned|learnt", "turns|turned out", "next time", "mistake|mistakes", "gotcha|gotchas",
        "pitfall|pitfalls", "never again", "don t ... again", "do not ... again", "note to self",
        "gelernt", "lektion|lektionen", "nächstes mal", "nie wieder", "stellt|stellte sich ... heraus", "erkenntnis",
    ),
    "decision": (
        "decided|decide|decides", "decision|decisions", "we will|ll use", "we will|ll go with", "we re going with", "going with",
        "settled on", "opted for", "agreed", "entschieden", "entscheidung", "vereinbart", "wir nehmen|verwenden|nutzen",
    ),
    "project": (
        "project|projects", "projekt|projekte|projekten|projekts|projektes", "working|works on", "arbeitet|arbeite an",
        "deadline|deadlines", "due date", "frist|fristen", "release|releases", "milestone|milestones",
        "meilenstein|meilensteine", "repo|repos|repository|repositories", "launch|launches|launched",
        "go live", "roadmap", "sprint", "kickoff", "abgabe*",
    ),
}
# A first line "Lesson: ..." says what the entry is: its writer labelled it.
LABELS = {"lesson": "lesson", "lessons": "lesson", "lesson learned": "lesson", "learned": "lesson",
          "gelernt": "lesson", "lektion": "lesson", "decision": "decision", "decided": "decision",
          "entscheidung": "decision", "project": "project", "projekt": "project", "preference": "preference"}
# An entry that starts as an instruction ("Always verify the weekday ...", the template's own lesson)
# is a rule its writer learned, whatever else it mentions.
RULE_RE = re.compile(r"^\s*(?:always|never|don[\u2019']?t|do not|make sure|remember to|immer|niemals|nie)\b",
                     re.IGNORECASE)
# Sections people keep for what has no place yet; their names say nothing about an entry.
PARKING = {"notes", "scratch", "misc", "miscellaneous", "inbox", "archive", "todo", "other", "notizen"}
# Words a bullet may start with that are no project's name ("User: ...", "Note: ...").
NOT_NAMES = {"user", "note", "notes", "todo", "the", "we", "i", "it", "this", "lesson", "decision", "project",
             "update", "status", "next", "done", "idea", "ideas"}
# Words that start a sentence before a project word without naming one ("New project", "Our repo").
COMMON_STARTS = {"new", "old", "our", "my", "your", "their", "its", "that", "these", "those", "a", "an", "any", "each",
                 "every", "first", "last", "next", "big", "main", "side", "pet", "open", "private", "public", "internal",
                 "current", "previous", "upcoming", "planned", "major", "minor", "final", "initial", "weekly", "monthly",
                 "der", "die", "das", "ein", "eine", "unser", "unsere", "neues", "neue", "neuer", "nächste", "nächstes"}

ROUTE_CHARS = 2000
TOKEN_RE = re.compile(r"[^\W_]+")
WORD_OR_BREAK_RE = re.compile(r"([^\W_]+)|[.!?;](?=\s|$)|\n")
LABEL_RE = re.compile(r"^\s*([^\W\d_][^\W_]*(?:[ \t]+[^\W\d_][^\W_]*){0,2})[ \t]*:(?!\S)")


@dataclass(frozen=True)
class Route:
    section: str
    why: str  # for people: "about the user's preferences (“wants”)"


@dataclass(frozen=True)
class Known:
    """What MEMORY.md itself tells the router: its sections and the projects it names."""

    sections: tuple[str, ...] = ()
    projects: frozenset[str] = frozenset()
    learned: frozenset[str] = frozenset()  # named as a project in the logs ("the Atlas prototype")


def route(rep: Event, others: Sequence[Event], corrected: Sequence[Event], rules: Mapping[str, str],
          default: str, known: Known = Known()) -> Route:
    """The section for a bullet made from `rep` (the first mention; `others` say the same,
    `corrected` is what it corrects, nearest first), and why."""
    about = [rep, *corrected]
    for ev in _unique([rep, *others, *corrected]):
        for tag in ev.tags:
            if f"#{tag}" in rules:
                return Route(rules[f"#{tag}"], f"tagged #{tag} ([curate.sections] \"#{tag}\")" + _whose(ev, rep, corrected))
    for ev in about:
        text = f"{ev.title}\n{ev.content}"[:ROUTE_CHARS]
        for key, name in rules.items():
            if key.startswith("~") and key[1:].strip():
                hit = _word_rule(key[1:]).search(text)
                if hit:
                    return Route(name, f"the words \u201c{hit.group(0)}\u201d ([curate.sections] \"{key}\")" + _whose(ev, rep, corrected))
    for ev in about:
        if ev.type in rules:
            return Route(rules[ev.type], f"{article(ev.type)} {ev.type} ([curate.sections] \"{ev.type}\")" + _whose(ev, rep, corrected))
    found = _about(rep, others, corrected, known)
    if found is not None:
        kind, why = found
        return Route(rules.get(f"#{kind}", TEMPLATE[kind]), why)
    taken = {norm_section(n) for n in (*rules.values(), *TEMPLATE.values(), default)}
    for ev in about:
        for name in known.sections:
            if norm_section(name) not in taken and norm_section(name) not in PARKING and _names(name, ev):
                return Route(name, f"its words name the section \u201c{name}\u201d" + _whose(ev, rep, corrected))
    return Route(default, "nothing in it points to a section ([curate] default_section)")


def known_from(doc: MemoryDoc, rules: Mapping[str, str], logs: Iterable[str] = ()) -> Known:
    """MEMORY.md's section names, the projects its project section's bullets name
    ("Atlas: started 2026-02-16" names Atlas), and those the `logs` name as projects."""
    names: set[str] = set()
    sect = doc.section(rules.get("#project", TEMPLATE["project"]))
    if sect is not None:
        for b in doc.bullets:
            if sect.heading < b.start < sect.end:
                name = project_name(plain_text(doc.lines[b.start]))
                if name:
                    names.add(name)
    return Known(tuple(s.name for s in doc.sections), frozenset(names), named_projects(logs) - names)


# A capitalised name right before a project word ("the Atlas prototype", "Orion launch") or right
# after one ("project Atlas", "Projekt Orion"): how people name a project in passing.
NAMED_BEFORE_RE = re.compile(
    r"\b([A-Z][\w-]{1,30})[ \t]+(?:project|prototype|repo|repository|launch|release|roadmap|rollout|migration|"
    r"Projekt|Prototyp|Release)\b")
NAMED_AFTER_RE = re.compile(r"\b(?:[Pp]roject|[Pp]rojekt)[ \t]+([A-Z][\w-]{1,30})\b")


PROJECT_STEMS = ("roject", "rojekt", "rototyp", "repo", "aunch", "elease", "oadmap", "ollout", "igration")


def named_projects(texts: Iterable[str]) -> frozenset[str]:
    """The names the texts call projects; a common word at a sentence's start ("New project") is not one."""
    out: set[str] = set()
    for text in texts:
        head = text[:ROUTE_CHARS]
        if not any(word in head for word in PROJECT_STEMS):  # most entries: skip the regexes
            continue
        for m in (*NAMED_BEFORE_RE.finditer(head), *NAMED_AFTER_RE.finditer(head)):
            name = m.group(1)
            if name.lower() not in NOT_NAMES and name.lower() not in COMMON_STARTS:
                out.add(name)
    return frozenset(out)


def project_name(text: str) -> str | None:
    """The name a project bullet starts with: one to three capitalised words before a colon or dash."""
    head = re.split(r":\s| [-\u2013\u2014] ", text, maxsplit=1)
    if len(head) < 2:
        return None
    words = head[0].split()
    if not 1 <= len(words) <= 3 or not all(w[:1].isupper() or w[:1].isdigit() for w in words):
        return None
    return None if words[0].lower() in NOT_NAMES else " ".join(words)


# ----------------------------------------------------------------------------- the cues


def _about(rep: Event, others: Sequence[Event], corrected: Sequence[Event], known: Known) -> tuple[str, str] | None:
    """The kind an entry is about, by memvault's own cues, and why."""
    for ev in _unique([rep, *others, *corrected]):
        for tag in ev.tags:
            if tag in KIND_TAGS:
                return KIND_TAGS[tag], f"tagged #{tag}" + _whose(ev, rep, corrected)
    for ev in [rep, *corrected]:
        label = LABEL_RE.match(ev.content)
        if label and " ".join(label.group(1).lower().split()) in LABELS:
            kind = LABELS[" ".join(label.group(1).lower().split())]
            return kind, f"labelled \u201c{label.group(1)}:\u201d" + _whose(ev, rep, corrected)
        rule = RULE_RE.match(ev.content)
        if rule:
            return "lesson", f"an instruction (\u201c{rule.group(0).strip()} \u2026\u201d)" + _whose(ev, rep, corrected)
        if ev.type in TEMPLATE:
            return ev.type, f"{article(ev.type)} {ev.type} (its type)" + _whose(ev, rep, corrected)
        words = _Words(f"{ev.title}\n{ev.content}" if ev.title else ev.content)
        for kind in KINDS:
            hits = [f"\u201c{h}\u201d" for h in words.find(KIND_RES[kind])]
            if kind == "project":
                hits += [f"\u201c{n}\u201d, a project MEMORY.md names" for n in sorted(known.projects) if words.names(n)]
                hits += [f"\u201c{n}\u201d, a project the logs name" for n in sorted(known.learned) if words.names(n)]
            if hits:
                return kind, f"{ABOUT[kind]} ({', '.join(hits)})" + _whose(ev, rep, corrected)
    return None


def _word_rule(text: str) -> re.Pattern[str]:
    """A `~word` rule as a pattern: its text from the start of a word, the last word a stem
    ("~weekly status" finds "weekly statuses"; "~c++" finds "C++" and not "Plan C")."""
    body = r"\s+".join(re.escape(w) for w in text.split())
    stem = r"[^\W_]*" if TOKEN_RE.fullmatch(text.strip()[-1]) else ""
    return re.compile(rf"(?<![^\W_]){body}{stem}", re.IGNORECASE)


GAP = r"(?:[^ |]+ )*?"  # any words, within one sentence ("|" separates sentences)


def _cue_pattern(cue: str) -> str:
    """A cue as a pattern over an entry's lowercased words joined by spaces."""
    out, glue = "", ""
    for part in cue.split():
        if part == "...":
            out, glue = out + " " + GAP, ""
            continue
        alts = [re.escape(a[:-1]) + r"[^ |]*" if a.endswith("*") else re.escape(a) for a in part.split("|")]
        out, glue = out + glue + "(?:" + "|".join(alts) + ")", " "
    return out


# One pattern per kind: its cues as alternatives, each from the start to the end of a word.
KIND_RES = {kind: re.compile(r"(?<![^ |])(?:" + "|".join(_cue_pattern(c) for c in cues) + r")(?![^ |])")
            for kind, cues in CUES.items()}


class _Words:
    """An entry's words, lowercased and joined by spaces ("|" between sentences), mapped back to
    where each stands in the text as written."""

    def __init__(self, text: str):
        # What an entry is about is said near its start; a long note is not read to its end.
        self.text = text[:ROUTE_CHARS]
        parts: list[str] = []
        self.starts: list[int] = []  # each word's offset in `joined`
        self.spans: list[tuple[int, int]] = []  # each word's place in `text`
        size = 0
        for m in WORD_OR_BREAK_RE.finditer(self.text):
            if m.group(1) is None:
                if parts and parts[-1] != "|":
                    parts.append("|")
                    size += 2
                continue
            parts.append(m.group(1).lower())
            self.starts.append(size)
            self.spans.append(m.span())
            size += len(parts[-1]) + 1
        self.joined = " ".join(parts)

    def find(self, pattern: re.Pattern[str]) -> list[str]:
        """Each place `pattern` matches, as written ("User's timezone"), long ones shortened."""
        out = []
        for m in pattern.finditer(self.joined):
            first = bisect_right(self.starts, m.start()) - 1
            last = bisect_right(self.starts, m.end() - 1) - 1
            written = self.text[self.spans[first][0] : self.spans[last][1]]
            if len(written) > 40 or "\n" in written:
                written = (f"{self.text[slice(*self.spans[first])]} \u2026 "
                           f"{self.text[slice(*self.spans[last])]}")
            out.append(written)
        return list(dict.fromkeys(out))

    def names(self, name: str) -> bool:
        """Whether a name occurs as written, as whole words ("Atlas", not "atlas" or "Atlassian")."""
        return re.search(rf"(?<![^\W_]){re.escape(name)}(?![^\W_])", self.text) is not None


def _names(section: str, ev: Event) -> bool:
    """Every word of a section's name (3+ letters, singular or plural) is a word of the entry."""
    want = [w for w in TOKEN_RE.findall(section.lower()) if len(w) >= 3 and w not in {"and", "und", "the", "der", "die", "das"}]
    have = {w.lower().removesuffix("s") for w in TOKEN_RE.findall(f"{ev.title} {ev.content}"[:ROUTE_CHARS])}
    return bool(want) and all(w.removesuffix("s") in have for w in want)


def _unique(events: list[Event]) -> list[Event]:
    seen: dict[str, Event] = {}
    for ev in events:
        seen.setdefault(ev.id, ev)
    return list(seen.values())


def _whose(ev: Event, rep: Event, corrected: Sequence[Event]) -> str:
    if ev is rep:
        return ""
    if any(ev is c for c in corrected):
        return f" \u2014 in what it corrects ({ev.id})"
    return f" \u2014 in {ev.id}, which says the same"


def article(word: str) -> str:
    return "an" if word[:1] in "aeiou" else "a"
