"""Properties of notes over generated freeform logs (issue 12's acceptance):

- every non-empty section, and every block in it, is found by search (the real index) for a
  distinctive word it contains; every heading's own word finds its section;
- editing one section's text changes no other note's id;
- renaming a heading changes only the ids docs/format.md says it may: those of its section and
  the sections under it, and the `~n` of sections with the old or the new heading path.
"""

from __future__ import annotations

import itertools
import string
import tempfile
from dataclasses import dataclass
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memvault.config.core import Config
from memvault.entries.daily import parse_log
from memvault.entries.model import Event
from memvault.entries.notes import slug
from memvault.search.index import open_index
from memvault.vault import Vault

CFG = Config(timezone="UTC")
PATH = "memory/2026-02-01.md"
HEADINGS = ["Notizen", "Log", "Was passiert ist", "Build Action ✅", "Offene Fragen", "Ideen", "Heartbeat Checklist",
            "Projekt Atlas", "notes", "Review", "Tasks"]
WORDS = ["kaffee", "server", "deploy", "lena", "bug", "release", "morgen", "call", "tests", "plan", "budget"]


def fast(n: int) -> settings:
    return settings(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
                    derandomize=True, max_examples=n, database=None)


def words(draw, lo: int = 2, hi: int = 8) -> str:
    return " ".join(draw(st.lists(st.sampled_from(WORDS), min_size=lo, max_size=hi)))


@st.composite
def block(draw) -> list[str]:
    kind = draw(st.sampled_from(["para", "bullets", "timed", "numbered", "checklist", "table", "fence", "long"]))
    if kind == "para":
        return [words(draw) for _ in range(draw(st.integers(1, 3)))]
    if kind in ("bullets", "timed", "numbered", "checklist"):
        out = []
        for i in range(draw(st.integers(1, 4))):
            lead = {"bullets": "- ", "numbered": f"{i + 1}. ", "checklist": "- [x] "}.get(kind, "- ")
            if kind == "timed" and draw(st.booleans()):
                lead += draw(st.sampled_from(["09:30 ", "**14:00** ", "9:05 - ", "14:00 "]))
            out.append(lead + words(draw))
            if draw(st.integers(0, 3)) == 0:
                out.append("  - " + words(draw))
        return out
    if kind == "table":
        return ["| a | b |", "|---|---|", f"| {words(draw, 1, 2)} | {words(draw, 1, 2)} |"]
    if kind == "fence":
        return ["```", "## fake heading " + words(draw, 1, 2), words(draw), "```"]
    return [words(draw, 8, 12) for _ in range(draw(st.integers(6, 10)))]  # over the size bound


@dataclass
class Sec:
    level: int
    heading: str  # "" for a typed entry
    clock: str  # a typed entry's time
    blocks: list[list[str]]


@st.composite
def sections(draw) -> list[Sec]:
    out = []
    for _ in range(draw(st.integers(1, 7))):
        if draw(st.integers(0, 5)) == 0:
            out.append(Sec(2, "", draw(st.sampled_from(["08:00", "12:00", "18:00"])), draw(st.lists(block(), max_size=2))))
            continue
        heading = draw(st.sampled_from(HEADINGS))
        if draw(st.integers(0, 4)) == 0:
            heading = draw(st.sampled_from(["10:00 ", "7:45 "])) + heading
        out.append(Sec(draw(st.integers(1, 4)), heading, "", draw(st.lists(block(), max_size=3))))
    return out


@dataclass
class Rendered:
    text: str
    tokens: dict[str, int]  # a distinctive word -> its 1-based line
    heads: list[tuple[str, int, str]]  # (the heading's own word, its line, the heading text)


def render(secs: list[Sec], preamble: bool = True, head_tokens: bool = True) -> Rendered:
    names = ("zq" + "".join(p) for n in itertools.count(2) for p in itertools.product(string.ascii_lowercase, repeat=n))
    lines = ["# 2026-02-01", ""]
    tokens: dict[str, int] = {}
    heads: list[tuple[str, int, str]] = []
    if preamble:
        tok = next(names)
        lines += [f"Vorwort {tok}", ""]
        tokens[tok] = len(lines) - 1
    for sec in secs:
        if sec.heading:
            own = next(names) if head_tokens else ""
            text = f"{sec.heading} {own}" if head_tokens else sec.heading
            lines.append("#" * sec.level + " " + text)
            heads.append((own, len(lines), text))
        else:
            lines.append(f"## {sec.clock} - Observation")
        for blk in sec.blocks:
            tok = next(names)
            at = 1 if blk[0] == "```" else 0  # inside the fence: code is searchable too
            for i, line in enumerate(blk):
                lines.append(f"{line} {tok}" if i == at else line)
                if i == at:
                    tokens[tok] = len(lines)
            lines.append("")
    return Rendered("\n".join(lines) + "\n", tokens, heads)


# ---------------------------------------------------------------------- search finds all


def find_all(rendered: Rendered) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "memory").mkdir()
        (root / "memvault.toml").write_text('[vault]\ntimezone = "UTC"\n')
        (root / PATH).write_text(rendered.text)
        vault = Vault.open(root)
        with open_index(vault) as index:
            index.update()
            for tok, line in rendered.tokens.items():
                hits = index.search(tok, limit=20, record_access=False)
                assert any(h.line <= line <= h.end_line for h in hits), (tok, line, [h.id for h in hits])
            for own, line, text in rendered.heads:
                hits = index.search(own, limit=20, record_access=False)
                assert any(h.line <= line <= h.end_line or text in h.event.path for h in hits), (own, line)
        vault.close()


@fast(40)
@given(sections())
def test_every_section_and_block_is_found_by_a_word_it_holds(secs):
    find_all(render(secs))


# --------------------------------------------------------------------------- stable ids


def parse(text: str) -> list[Event]:
    return parse_log(text, PATH, CFG).events


@fast(80)
@given(sections(), st.data())
def test_editing_one_section_changes_no_other_id(secs, data):
    editable = [i for i, s in enumerate(secs) if s.heading]
    if not editable:
        return
    x = data.draw(st.sampled_from(editable))
    changed = list(secs)
    changed[x] = Sec(secs[x].level, secs[x].heading, "", data.draw(st.lists(block(), max_size=3)))
    old, new = render(secs, head_tokens=False), render(changed, head_tokens=False)
    head_old, head_new = old.heads[editable.index(x)][1], new.heads[editable.index(x)][1]
    end_old, end_new = _next_heading(old.text, head_old), _next_heading(new.text, head_new)
    before = [e.id for e in parse(old.text) if not head_old <= e.line < end_old]
    after = [e.id for e in parse(new.text) if not head_new <= e.line < end_new]
    assert before == after


@fast(100)
@given(sections(), st.data())
def test_renaming_a_heading_changes_only_the_documented_ids(secs, data):
    named = [i for i, s in enumerate(secs) if s.heading]
    if not named:
        return
    x = data.draw(st.sampled_from(named))
    renamed = list(secs)
    renamed[x] = Sec(secs[x].level, data.draw(st.sampled_from(HEADINGS)), "", secs[x].blocks)
    old, new = render(secs, head_tokens=False), render(renamed, head_tokens=False)
    old_events, new_events = parse(old.text), parse(new.text)
    assert len(old_events) == len(new_events)
    line = old.heads[named.index(x)][1]
    end = _subtree_end(old.text, line, secs[x].level)
    paths = {slug_paths(secs)[x], slug_paths(renamed)[x]}
    for o, n in zip(old_events, new_events, strict=True):
        if o.id != n.id:
            inside = line <= o.line < end
            assert inside or any(_under(e.id, p) for e in (o, n) for p in paths), (o.id, n.id, paths)


def _next_heading(text: str, line: int) -> int:
    """The 1-based line of the next heading after `line` (outside fences), or past the end."""
    return _subtree_end(text, line, 6)


def _subtree_end(text: str, line: int, level: int) -> int:
    """The 1-based line of the next heading of `level` or above after `line`, or past the end."""
    lines = text.split("\n")
    fence = False
    for i in range(line, len(lines)):
        if lines[i].startswith("```"):
            fence = not fence
        elif not fence and lines[i].startswith("#"):
            marks = len(lines[i]) - len(lines[i].lstrip("#"))
            if marks <= level and lines[i][marks:marks + 1] == " ":
                return i + 1
    return len(lines) + 1


def slug_paths(secs: list[Sec]) -> dict[int, str]:
    """Per named section, the slug path of its id as docs/format.md defines it."""
    stack: list[tuple[int, str]] = []
    out = {}
    for i, s in enumerate(secs):
        if not s.heading:  # an entry closes the sections of level 2 and below
            stack = [(lv, t) for lv, t in stack if lv < 2]
            continue
        stack = [(lv, t) for lv, t in stack if lv < s.level] + [(s.level, s.heading)]
        out[i] = "/".join(slug(t) for _, t in stack)
    return out


def _under(nid: str, path: str) -> bool:
    """Does the note id's slug path start with `path` (the heading path or one below it)?"""
    rest = nid.split("#", 1)[1] if "#" in nid else ""
    return rest == path or (rest.startswith(path) and rest[len(path)] in "/~@.")
