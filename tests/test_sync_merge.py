"""The block-level three-way merge of a daily log (memvault/sync/merge.py), pure: text in, text out.

Every case is a day two machines wrote to, in the shapes people and agents write: typed entries,
freeform `## Projekt Quokka` notes with bullets, `# Topic` headings, front matter, fenced code.
"""

from __future__ import annotations

from memvault.config.core import Config
from memvault.entries.blocks import marker_lines, split
from memvault.entries.daily import parse_log
from memvault.sync.merge import DELETED_THERE, TWO_VERSIONS, merge_log

PATH = "memory/2026-12-02.md"
DAY = "# 2026-12-02\n"


def entry(hm: str, kind: str, text: str) -> str:
    return f"\n## {hm} - {kind}\n{text}\n"


def parsed(text: str):
    return parse_log(text, PATH, Config())


def contents(text: str) -> list[str]:
    return [ev.content for ev in parsed(text).events if not ev.is_note]


def headings(text: str) -> list[str]:
    return [b.heading for b in split(text).blocks]


BASE = DAY + entry("09:00", "Observation", "Kaffee mit Jana, sie plant den Umzug nach Leipzig")


def test_both_append_to_the_same_day_keep_everything_in_time_order():
    ours = BASE + entry("10:00", "Belief", "User prefers short answers") + entry("12:30", "Decision", "Deployed v2.3")
    theirs = BASE + entry("11:15", "Observation", "Build on the CI runner took 14 min") + entry("13:00", "Belief", "Jana mag keine Meetings vor 10")
    m = merge_log(BASE, ours, theirs)
    assert headings(m.text) == ["# 2026-12-02", "## 09:00 - Observation", "## 10:00 - Belief",
                                "## 11:15 - Observation", "## 12:30 - Decision", "## 13:00 - Belief"]
    assert m.conflicts == []
    assert not parsed(m.text).problems
    assert len(contents(m.text)) == 5
    assert [o.side for o in m.origins][2:] == ["ours", "theirs", "ours", "theirs"]


def test_merge_is_symmetric_in_what_it_keeps():
    ours = BASE + entry("10:00", "Belief", "A")
    theirs = BASE + entry("08:00", "Belief", "B")
    assert sorted(contents(merge_log(BASE, ours, theirs).text)) == sorted(contents(merge_log(BASE, theirs, ours).text))


def test_one_side_inserts_in_the_middle_the_other_appends():
    base = BASE + entry("15:00", "Decision", "Standup")
    ours = BASE + entry("11:00", "Observation", "Inserted by hand, between the two") + entry("15:00", "Decision", "Standup")
    theirs = base + entry("17:45", "Belief", "Feierabend um sechs")
    m = merge_log(base, ours, theirs)
    assert [h[3:8] for h in headings(m.text)[1:]] == ["09:00", "11:00", "15:00", "17:45"]
    assert m.conflicts == []


def test_both_add_the_identical_entry_it_is_kept_once():
    same = entry("10:00", "Belief", "User prefers dark mode")
    ours = BASE + same + entry("10:30", "Decision", "only ours")
    theirs = BASE + same
    m = merge_log(BASE, ours, theirs)
    assert contents(m.text).count("User prefers dark mode") == 1
    assert "only ours" in m.text
    assert m.conflicts == []


def test_one_edits_the_other_appends():
    base = BASE + entry("10:00", "Belief", "User likes tea")
    ours = BASE + entry("10:00", "Belief", "User likes green tea, no sugar")
    theirs = base + entry("11:00", "Decision", "Meeting moved to Thursday")
    m = merge_log(base, ours, theirs)
    assert contents(m.text) == [
        "Kaffee mit Jana, sie plant den Umzug nach Leipzig", "User likes green tea, no sugar", "Meeting moved to Thursday"]
    assert m.conflicts == []


def test_both_edit_the_same_entry_differently_keep_two_versions_and_a_conflict_line():
    base = BASE + entry("10:00", "Belief", "User likes tea")
    ours = BASE + entry("10:00", "Belief", "User likes green tea")
    theirs = BASE + entry("10:00", "Belief", "User likes black tea")
    m = merge_log(base, ours, theirs)
    assert contents(m.text) == ["Kaffee mit Jana, sie plant den Umzug nach Leipzig", "User likes green tea", "User likes black tea"]
    assert [why for _, why in m.conflicts] == [TWO_VERSIONS]
    assert m.blocks[m.conflicts[0][0]].text.rstrip().endswith(f"Conflict: {TWO_VERSIONS}")
    problems = parsed(m.text).problems
    assert [(p.code, p.line) for p in problems] == [("MV023", m.text.split("\n").index(f"Conflict: {TWO_VERSIONS}") + 1)]
    assert marker_lines(m.text) == []


def test_both_edit_the_same_entry_alike_kept_once():
    base = BASE + entry("10:00", "Belief", "User likes tea")
    ours = theirs = BASE + entry("10:00", "Belief", "User likes green tea")
    m = merge_log(base, ours, theirs)
    assert m.text == ours
    assert m.conflicts == []


def test_delete_against_unchanged_deletes():
    base = BASE + entry("10:00", "Belief", "Wrong: user lives in Bonn") + entry("11:00", "Decision", "Call")
    ours = BASE + entry("11:00", "Decision", "Call")
    m = merge_log(base, ours, base)
    assert "Bonn" not in m.text
    assert m.text == ours
    assert merge_log(base, base, ours).text == ours


def test_delete_against_edit_keeps_the_edit_marked():
    base = BASE + entry("10:00", "Belief", "User lives in Bonn")
    ours = BASE
    theirs = BASE + entry("10:00", "Belief", "User lives in Bonn, moving to Köln in May")
    for o, t in ((ours, theirs), (theirs, ours)):
        m = merge_log(base, o, t)
        assert "moving to Köln in May" in m.text
        assert [why for _, why in m.conflicts] == [DELETED_THERE]
        assert [p.code for p in parsed(m.text).problems] == ["MV023"]


def test_both_delete_the_same_entry():
    base = BASE + entry("10:00", "Belief", "Obsolete")
    m = merge_log(base, BASE, BASE)
    assert m.text == BASE


FREEFORM_BASE = """# Topic: Umzug

Notizen ohne Uhrzeit.

## Projekt Quokka

- Ziel: Prototyp bis März
- Ansprechpartner: Dr. Müller-Lüdenscheidt

## 09:00 - Observation
Standup was short
"""


def test_freeform_sections_merge_bullets_by_section():
    ours = FREEFORM_BASE.replace("- Ansprechpartner: Dr. Müller-Lüdenscheidt\n",
                                 "- Ansprechpartner: Dr. Müller-Lüdenscheidt\n- Budget: 40k €\n")
    theirs = FREEFORM_BASE + "\n# Topic: Reisen\n\n- Zug nach Wien buchen\n"
    m = merge_log(FREEFORM_BASE, ours, theirs)
    assert "- Budget: 40k €" in m.text and "- Zug nach Wien buchen" in m.text
    assert headings(m.text) == ["# Topic: Umzug", "## Projekt Quokka", "## 09:00 - Observation", "# Topic: Reisen"]
    assert m.conflicts == []


def test_a_freeform_section_edited_on_both_sides_keeps_both_versions():
    ours = FREEFORM_BASE.replace("bis März", "bis April")
    theirs = FREEFORM_BASE.replace("bis März", "bis Mai")
    m = merge_log(FREEFORM_BASE, ours, theirs)
    assert "bis April" in m.text and "bis Mai" in m.text
    assert headings(m.text).count("## Projekt Quokka") == 2
    assert len(m.conflicts) == 1
    assert marker_lines(m.text) == []


def test_front_matter_edited_on_one_side():
    base = "---\ntags: [arbeit]\n---\n" + BASE
    ours = "---\ntags: [arbeit, quokka]\n---\n" + BASE
    theirs = base + entry("10:00", "Belief", "B")
    m = merge_log(base, ours, theirs)
    assert m.text.startswith("---\ntags: [arbeit, quokka]\n---\n")
    assert "B" in contents(m.text)
    assert parsed(m.text).frontmatter == {"tags": ["arbeit", "quokka"]}
    assert merge_log(base, theirs, ours).text == m.text


def test_front_matter_edited_on_both_sides_stays_front_matter():
    base = "---\ntags: [arbeit]\n---\n" + BASE
    ours = "---\ntags: [arbeit]\nsource: laptop\n---\n" + BASE
    theirs = "---\ntags: [arbeit]\nscope: team\n---\n" + BASE
    m = merge_log(base, ours, theirs)
    fm = parsed(m.text).frontmatter
    assert fm.get("source") == "laptop" and fm.get("scope") == "team"
    assert not [p for p in parsed(m.text).problems if p.code != "MV023"]


def test_heading_inside_a_fence_does_not_split():
    fenced = entry("09:30", "Observation", "Example of the format:\n\n```markdown\n## 10:00 - Belief\nnot an entry\n```")
    base = BASE + fenced
    ours = base + entry("10:00", "Belief", "The real 10:00")
    theirs = base.replace("Example of the format", "Beispiel für das Format") + entry("08:00", "Decision", "Early")
    m = merge_log(base, ours, theirs)
    assert "```markdown\n## 10:00 - Belief\nnot an entry\n```" in m.text
    assert "Beispiel für das Format" in m.text
    assert [h[3:8] for h in headings(m.text)[1:]] == ["08:00", "09:00", "09:30", "10:00"]
    assert m.conflicts == []


def test_entries_of_one_minute_keep_their_order_whatever_their_seconds():
    # ids count a minute's entries in file order: sorting by the second would move them
    ours = BASE + entry("10:15:40", "Decision", "second write")
    theirs = BASE + entry("10:15:05", "Decision", "first write") + entry("10:16", "Decision", "later")
    m = merge_log(BASE, ours, theirs)
    assert contents(m.text)[1:] == ["second write", "first write", "later"]


def test_same_minute_entries_from_both_sides_both_kept_ours_first():
    ours = BASE + entry("10:15", "Belief", "from the laptop")
    theirs = BASE + entry("10:15", "Belief", "from the server agent")
    m = merge_log(BASE, ours, theirs)
    assert contents(m.text)[1:] == ["from the laptop", "from the server agent"]
    ids = [ev.id for ev in parsed(m.text).events]
    assert len(ids) == len(set(ids))


def test_no_base_both_sides_created_the_day():
    ours = DAY + entry("10:00", "Belief", "A")
    theirs = DAY + entry("09:00", "Belief", "B")
    m = merge_log("", ours, theirs)
    assert headings(m.text) == ["# 2026-12-02", "## 09:00 - Belief", "## 10:00 - Belief"]


def test_untimed_runs_keep_their_place_only_touched_runs_are_sorted():
    # A run the merge did not add to stays as the person wrote it (check reports it, not the merge)
    base = DAY + entry("11:00", "Decision", "late") + entry("10:00", "Decision", "early") + "\n## Notizen\n\nfrei\n"
    theirs = base + entry("09:00", "Decision", "added after the notes")
    m = merge_log(base, base, theirs)
    assert [h[3:8] for h in headings(m.text)[1:]] == ["11:00", "10:00", "Notiz", "09:00"]


def test_never_writes_git_markers():
    base = BASE + entry("10:00", "Belief", "X")
    ours = BASE + entry("10:00", "Belief", "Y")
    theirs = BASE
    for o, t in ((ours, theirs), (theirs, ours), (ours, ours.replace("Y", "Z"))):
        assert marker_lines(merge_log(base, o, t).text) == []


def test_a_preamble_line_added_after_front_matter_stays_after_it():
    base = "---\ntags: [arbeit]\n---\n" + BASE
    ours = "---\ntags: [arbeit]\nsource: laptop\n---\n" + BASE
    theirs = "---\ntags: [arbeit]\n---\nNotizen vom Dienstag.\n" + BASE
    m = merge_log(base, ours, theirs)
    assert m.text.startswith("---\ntags: [arbeit]\nsource: laptop\n---\nNotizen vom Dienstag.\n")


# Property: random days, each side appending and inserting entries of its own.

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

MINUTES = ["08:00", "09:30", "10:15", "10:15:30", "10:16", "23:59"]
KINDS = ["Belief", "Observation", "Decision"]


def fast(n: int) -> settings:
    return settings(deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True,
                    max_examples=n, database=None)


@st.composite
def days(draw):
    """(base, ours, theirs): a sorted base day, each side with appended and inserted entries."""
    counter = iter(range(10_000))

    def new() -> tuple[str, str]:
        hm = draw(st.sampled_from(MINUTES))
        return hm, entry(hm, draw(st.sampled_from(KINDS)), f"Eintrag {next(counter)} über Jana's Quokka")

    base = sorted((new() for _ in range(draw(st.integers(0, 5)))), key=lambda e: e[0])
    sides = []
    for _ in range(2):
        side = list(base)
        for _ in range(draw(st.integers(0, 5))):
            at = draw(st.integers(0, len(side))) if draw(st.booleans()) else len(side)
            side.insert(at, new())
        sides.append(side)

    def text(es):
        return DAY + "".join(e for _, e in es)
    return text(base), text(sides[0]), text(sides[1])


def bodies(text: str) -> list[str]:
    return [b.body for b in split(text).blocks]


@fast(150)
@given(days())
def test_every_block_of_both_sides_exactly_once_sorted_and_idempotent(day):
    base, ours, theirs = day
    m = merge_log(base, ours, theirs)
    got = bodies(m.text)
    assert sorted(got) == sorted(set(bodies(ours)) | set(bodies(theirs)))
    if ours != base and theirs != base and ours != theirs:  # else one side, as written
        times = [b.minute for b in m.blocks if b.minute is not None]
        assert times == sorted(times)
    assert m.conflicts == []
    assert merge_log(base, m.text, m.text).text == m.text
    assert merge_log(ours, m.text, m.text).text == m.text
    assert merge_log(m.text, m.text, m.text).text == m.text
    assert [b.body for b in m.blocks] == got
    assert all((ours, theirs)[o.side == "theirs"] and split((ours, theirs)[o.side == "theirs"]).blocks[o.index] == b
               for o, b in zip(m.origins, m.blocks, strict=True))


def test_a_run_one_side_sorted_stays_sorted_when_the_other_edits():
    base = DAY + entry("11:00", "Decision", "late") + entry("10:00", "Decision", "early")
    ours = DAY + entry("10:00", "Decision", "early") + entry("11:00", "Decision", "late")  # check --fix
    theirs = base.replace("early", "early, edited")
    m = merge_log(base, ours, theirs)
    assert contents(m.text) == ["early, edited", "late"]


def test_one_side_changed_is_that_side_as_written():
    ours = BASE + "\n\n## 10:00 - Belief\nspacing as the person left it\n\n\n"
    assert merge_log(BASE, ours, BASE).text == ours
    assert merge_log(BASE, BASE, ours).text == ours
    assert merge_log(BASE, ours, ours).text == ours


@st.composite
def edited_days(draw):
    """(base, ours, theirs) where each side also edits and deletes entries of the base."""
    counter = iter(range(10_000))

    def new() -> str:
        return entry(draw(st.sampled_from(MINUTES)), draw(st.sampled_from(KINDS)), f"Eintrag {next(counter)}")

    base = [new() for _ in range(draw(st.integers(1, 5)))]
    sides = []
    for name in ("ours", "theirs"):
        side = list(base)
        for _ in range(draw(st.integers(0, 5))):
            op = draw(st.sampled_from(["add", "edit", "delete"]))
            if op != "add" and side:
                at = draw(st.integers(0, len(side) - 1))
                if op == "delete":
                    side.pop(at)
                else:
                    side[at] = side[at].rstrip("\n") + f", geändert auf {name} {next(counter)}\n"
            else:
                side.insert(draw(st.integers(0, len(side))), new())
        sides.append(side)
    return tuple(DAY + "".join(es) for es in (base, *sides))


@fast(200)
@given(edited_days())
def test_no_change_of_either_side_is_lost(day):
    base, ours, theirs = day
    m = merge_log(base, ours, theirs)
    got = [b.body.split("\nConflict: ")[0] for b in m.blocks]
    was = set(bodies(base))
    for side, other in ((ours, theirs), (theirs, ours)):
        for body in set(bodies(side)) - was:  # added or edited there
            assert body in got, body
        for body in was - set(bodies(side)):  # deleted there
            if body in bodies(other):  # and left alone on the other side
                assert body not in got
    assert marker_lines(m.text) == []
    assert len(got) == len(set(got))


def test_front_matter_lines_removed_on_one_side_and_added_on_the_other():
    base = "---\ntags: [arbeit]\nsource: laptop\n---\n\n" + BASE
    ours = "---\ntags: [arbeit]\nsource: laptop\nscope: team\n---\n\n" + BASE
    theirs = "---\ntags: [arbeit]\n---\n\n" + BASE + entry("10:00", "Belief", "B")
    m = merge_log(base, ours, theirs)
    assert m.text.startswith("---\ntags: [arbeit]\nscope: team\n---\n\n# 2026-12-02\n")
    assert parsed(m.text).frontmatter == {"tags": ["arbeit"], "scope": "team"}


PIECES = ["## 10:00 - Belief", "## 10:00 - Belief", "# Thema", "## Notizen", "### tiefer", "```", "~~~", "text",
          "Conflict: x", "Id: 2026-12-02T10:00", "- bullet ^mv-a", "", "---", "tags: [a]", "## 09:30:15 - Decision",
          "<<<<<<< HEAD", "=======", ">>>>>>> b", "## 25:99 - Belief", "Ärger mit Ümlauten"]


@fast(300)
@given(st.lists(st.lists(st.sampled_from(PIECES), max_size=12), min_size=3, max_size=3))
def test_any_text_merges_without_an_error_and_keeps_every_line_a_side_added(texts):
    from memvault.sync.ids import pin
    from memvault.sync.memory_merge import merge_memory

    base, ours, theirs = ("\n".join(t) for t in texts)
    m = merge_log(base, ours, theirs)
    got = set(m.text.split("\n"))
    for side in (ours, theirs):
        for line in set(side.split("\n")) - set(base.split("\n")):
            assert line in got or not line.strip(), line
    pin(m, ours, theirs, lambda text: parsed(text).events)
    r = merge_memory(base, ours, theirs)
    kept = set(r.text.split("\n")) | {line for rv in r.reviews for line in (rv.kept + "\n" + rv.other).split("\n")}
    for side in (ours, theirs):
        for line in set(side.split("\n")) - set(base.split("\n")):
            assert line in kept or not line.strip(), line


def test_an_entry_a_merge_marked_elsewhere_is_still_the_same_entry_here():
    # a copy of a clone holds an entry as written; the remote's version of it gained a `Conflict:`
    # line (and an `Id:` pin) in another clone's merge: one entry, the remote's version
    written = entry("09:00", "Observation", "laptop at nine")
    marked = written.rstrip("\n") + "\nId: 2026-12-02T09:00-2\nConflict: id 2026-12-02T09:00 named this entry\n"
    ours, theirs = BASE + marked, BASE + written
    m = merge_log(BASE, ours, theirs)
    assert contents(m.text).count("laptop at nine") == 1 and "Conflict: id" in m.text
    # two entries that differ only by their own Id: lines are two entries
    a = written.rstrip("\n") + "\nId: 2026-12-02T09:00-alpha\n"
    b = written.rstrip("\n") + "\nId: 2026-12-02T09:00-beta\n"
    assert contents(merge_log(BASE, BASE + a, BASE + b).text).count("laptop at nine") == 2
