"""Ids through a merge (memvault/sync/ids.py): an entry keeps the id it had where possible; a true
collision is a `Conflict:` line, never two entries with one id."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memvault.config.core import Config
from memvault.entries.daily import parse_log
from memvault.entries.model import Event
from memvault.sync.ids import block_lines, pin
from memvault.sync.merge import merge_log

PATH = "memory/2026-12-02.md"
DAY = "# 2026-12-02\n"


def parse(text: str) -> list[Event]:
    return parse_log(text, PATH, Config()).events


def entry(hm: str, text: str, kind: str = "Belief") -> str:
    return f"\n## {hm} - {kind}\n{text}\n"


def ids(text: str) -> dict[str, str]:
    """{content: id} of the typed entries."""
    return {ev.content: ev.id for ev in parse(text) if not ev.is_note}


def merged(base: str, ours: str, theirs: str) -> tuple[str, list[tuple[str, str]]]:
    return pin(merge_log(base, ours, theirs), ours, theirs, parse)


def test_an_entry_whose_default_id_would_shift_is_pinned():
    # both wrote a 10:15 entry: a merge orders by the minute (stable: ours first), so ours' entry
    # keeps its id and theirs' entry, which had the same id on its side, is a true collision
    base = DAY + entry("09:00", "Frühstück mit Jana")
    ours = base + entry("10:15:40", "from the laptop")
    theirs = base + entry("10:15:05", "vom Server-Agenten")
    text, lost = merged(base, ours, theirs)
    got = ids(text)
    assert got["from the laptop"] == "2026-12-02T10:15"
    # theirs' entry had the same id on its side: a true collision, reported on it, not silently moved
    assert lost == [("2026-12-02T10:15", got["vom Server-Agenten"])]
    assert got["vom Server-Agenten"] != "2026-12-02T10:15"
    assert [p.code for p in parse_log(text, PATH, Config()).problems] == ["MV023"]


def test_unmoved_ids_get_no_id_line():
    base = DAY + entry("09:00", "A")
    text, lost = merged(base, base + entry("10:00", "B"), base + entry("11:00", "C"))
    assert "Id:" not in text and lost == []


def test_a_deletion_shifting_later_ids_pins_them():
    base = DAY + entry("10:15", "erste") + entry("10:15", "zweite") + entry("10:15", "dritte")
    ours = DAY + entry("10:15", "erste") + entry("10:15", "dritte") + entry("11:00", "neu")  # zweite deleted
    theirs = base + entry("12:00", "anderswo")
    text, lost = merged(base, ours, theirs)
    got = ids(text)
    # ours already said "dritte" is …T10:15-2: it keeps that; nothing claims a lost id
    assert got == {"erste": "2026-12-02T10:15", "dritte": "2026-12-02T10:15-2",
                   "neu": "2026-12-02T11:00", "anderswo": "2026-12-02T12:00"}
    assert lost == []


def test_explicit_ids_are_left_alone():
    base = DAY + entry("09:00", "A")
    ours = base + entry("10:15", "ours\nId: 2026-12-02T10:15-laptop")
    theirs = base + entry("10:15", "theirs\nId: 2026-12-02T10:15-server")
    text, lost = merged(base, ours, theirs)
    assert ids(text) == {"A": "2026-12-02T09:00", "ours": "2026-12-02T10:15-laptop", "theirs": "2026-12-02T10:15-server"}
    assert lost == [] and "Conflict" not in text


def test_block_lines_match_split_with_front_matter_and_fences():
    text = "---\ntitle: x\n---\n# Tag\n\n```\n## 10:00 - Belief\n```\n\n## 11:00 - Belief\nB\n"
    assert block_lines(text) == [4, 10]


# Property: after any merge of appended and inserted entries, ids are unique and ours' ids stay.

MINUTES = ["10:15", "10:15:20", "10:15:40", "10:16", "09:00"]


@st.composite
def days(draw):
    counter = iter(range(10_000))

    def new() -> str:
        return entry(draw(st.sampled_from(MINUTES)), f"Notiz {next(counter)}: Jana's Quokka-Projekt")

    base = [new() for _ in range(draw(st.integers(0, 4)))]
    sides = []
    for _ in range(2):
        side = list(base)
        for _ in range(draw(st.integers(0, 4))):
            op = draw(st.sampled_from(["append", "insert", "delete", "edit"]))
            if op == "delete" and side:
                side.pop(draw(st.integers(0, len(side) - 1)))
            elif op == "edit" and side:
                at = draw(st.integers(0, len(side) - 1))
                side[at] = side[at].rstrip("\n") + f" (geändert {next(counter)})\n"
            else:
                side.insert(draw(st.integers(0, len(side))) if op == "insert" else len(side), new())
        sides.append(side)
    return tuple(DAY + "".join(es) for es in (base, *sides))


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True, max_examples=200, database=None)
@given(days())
def test_ids_unique_and_ours_ids_name_the_same_entry(day):
    base, ours, theirs = day
    text, lost = merged(base, ours, theirs)
    events = [ev for ev in parse(text) if not ev.is_note]
    all_ids = [ev.id for ev in events]
    assert len(all_ids) == len(set(all_ids))
    by_id = {ev.id: ev.content for ev in events}
    kept = set(by_id.values())
    mine = ids(ours)
    for content, old in mine.items():
        if content in kept:  # not deleted by theirs
            assert by_id.get(old) == content, (old, content)
    # an entry only theirs has: its id kept, or reported with the id it has now (the second of
    # two versions is already marked: the person keeps one, and the id goes back to it)
    now = {c: i for i, c in by_id.items()}
    marked = {ev.content for ev in events if any(k.lower() == "conflict" for k in ev.meta)}
    for content, old in ids(theirs).items():
        if content not in mine and content in kept and content not in marked:
            assert now[content] == old or (old, now[content]) in lost
    assert pin(merge_log(base, text, text), text, text, parse)[0] == text


def test_two_versions_of_an_entry_with_an_id_line_do_not_share_it():
    # an entry `memvault log` wrote (an `Id:` line) edited on two machines: a duplicate id would make
    # `check` fail (MV010) and the hook refuse every later commit; the second version gets its own
    base = DAY + "\n## 10:15 - Belief\nTea is good\nId: 2026-12-02T10:15-laptop\n"
    ours, theirs = base.replace("Tea is good", "Tea is very good"), base.replace("Tea is good", "Tee ist gut")
    text, lost = merged(base, ours, theirs)
    got = ids(text)
    assert got["Tea is very good"] == "2026-12-02T10:15-laptop"
    assert got["Tee ist gut"] == "2026-12-02T10:15-laptop-2"
    assert lost == [("2026-12-02T10:15-laptop", "2026-12-02T10:15-laptop-2")]
    assert [p.code for p in parse_log(text, PATH, Config()).problems] == ["MV023"]


def test_two_clones_with_one_machine_name_get_apart():
    one = DAY + "\n## 10:16 - Observation\nfrom clone one\nId: 2026-12-02T10:16-vm\n"
    two = DAY + "\n## 10:16 - Observation\nvom zweiten Klon\nId: 2026-12-02T10:16-vm\n"
    text, lost = merged(DAY, one, two)
    got = ids(text)
    assert got == {"from clone one": "2026-12-02T10:16-vm", "vom zweiten Klon": "2026-12-02T10:16-vm-2"}
    problems = parse_log(text, PATH, Config()).problems
    assert [p.code for p in problems] == ["MV023"] and "machine name" in problems[0].message
