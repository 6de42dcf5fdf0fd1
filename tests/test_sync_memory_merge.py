"""MEMORY.md through a merge (memvault/sync/memory_merge.py): bullets merge, prose is the person's."""

from __future__ import annotations

from memvault.config.core import Config
from memvault.entries.blocks import marker_lines
from memvault.entries.memory_md import parse_memory
from memvault.sync.memory_merge import Review, merge_memory

BASE = """# Long-Term Memory

Was ich über Jana und die Arbeit weiß.

## User Preferences
- Prefers dark mode ^mv-theme
- Trinkt Tee ohne Zucker ^mv-tee

## Active Projects
Quokka is the main project this year.

- Quokka: prototype by March ^mv-quokka
- Hermes: mail server move (added 2025-09-15)
  still waiting for the new host
"""


def bullets(text: str) -> list[str]:
    return [line for line in text.split("\n") if line.startswith("- ")]


def test_bullets_added_on_both_sides_are_both_kept():
    ours = BASE.replace("- Trinkt Tee ohne Zucker ^mv-tee\n", "- Trinkt Tee ohne Zucker ^mv-tee\n- Likes short answers ^mv-short\n")
    theirs = BASE.replace("- Prefers dark mode ^mv-theme\n", "- Prefers dark mode ^mv-theme\n- Mag keine Meetings vor 10 ^mv-meet\n")
    r = merge_memory(BASE, ours, theirs)
    assert bullets(r.text)[:4] == ["- Prefers dark mode ^mv-theme", "- Mag keine Meetings vor 10 ^mv-meet",
                                   "- Trinkt Tee ohne Zucker ^mv-tee", "- Likes short answers ^mv-short"]
    assert r.reviews == [] and r.prose_conflicts == []
    assert "  still waiting for the new host" in r.text
    assert marker_lines(r.text) == []


def test_the_same_bullet_edited_on_both_sides_keeps_ours_and_makes_a_review_item():
    ours = BASE.replace("Prefers dark mode ^mv-theme", "Prefers dark mode everywhere ^mv-theme")
    theirs = BASE.replace("Prefers dark mode ^mv-theme", "Prefers light mode since November ^mv-theme")
    r = merge_memory(BASE, ours, theirs)
    assert "- Prefers dark mode everywhere ^mv-theme" in r.text
    assert "light mode" not in r.text
    assert r.reviews == [Review("mv-theme", "- Prefers dark mode everywhere ^mv-theme",
                                "- Prefers light mode since November ^mv-theme")]
    assert r.prose_conflicts == []
    assert bullets(r.text).count("- Prefers dark mode everywhere ^mv-theme") == 1


def test_a_bullet_edited_on_one_side_and_others_added_on_the_other():
    ours = BASE.replace("Quokka: prototype by March", "Quokka: prototype by April")
    theirs = BASE.replace("- Quokka:", "- Atlas: weekly notes ^mv-atlas\n- Quokka:")
    r = merge_memory(BASE, ours, theirs)
    assert "- Quokka: prototype by April ^mv-quokka" in r.text
    assert "- Atlas: weekly notes ^mv-atlas" in r.text
    assert "by March" not in r.text and r.reviews == []


def test_prose_changed_on_both_sides_is_left_with_markers():
    ours = BASE.replace("Quokka is the main project this year.", "Quokka is the only project this year.")
    theirs = BASE.replace("Quokka is the main project this year.", "Quokka endete im November.")
    r = merge_memory(BASE, ours, theirs)
    assert r.prose_conflicts == ["## Active Projects"]
    assert "Quokka is the only project this year." in r.text and "Quokka endete im November." in r.text
    assert len(marker_lines(r.text)) == 3
    # the other sections are merged, untouched
    assert "## User Preferences\n- Prefers dark mode ^mv-theme\n" in r.text


def test_prose_changed_on_one_side_only_is_applied():
    ours = BASE.replace("Quokka is the main project this year.", "Quokka is the main project in 2027 too.")
    theirs = BASE.replace("- Hermes:", "- Zephyr: new, from the server agent ^mv-zephyr\n- Hermes:")
    r = merge_memory(BASE, ours, theirs)
    assert "Quokka is the main project in 2027 too." in r.text
    assert "main project this year" not in r.text
    assert "- Zephyr: new, from the server agent ^mv-zephyr" in r.text
    assert r.prose_conflicts == [] and marker_lines(r.text) == []


def test_bullets_without_ids_edited_on_both_sides_keep_both_texts():
    ours = BASE.replace("Hermes: mail server move (added 2025-09-15)", "Hermes: mail server moved (done 2026-12-01)")
    theirs = BASE.replace("Hermes: mail server move (added 2025-09-15)", "Hermes: Umzug verschoben auf Januar")
    r = merge_memory(BASE, ours, theirs)
    assert "- Hermes: mail server moved (done 2026-12-01)" in r.text
    assert "- Hermes: Umzug verschoben auf Januar" in r.text
    assert "(added 2025-09-15)" not in r.text
    assert r.reviews == [] and r.prose_conflicts == []


def test_a_bullet_removed_on_one_side_and_left_alone_on_the_other_goes():
    ours = BASE.replace("- Trinkt Tee ohne Zucker ^mv-tee\n", "")
    theirs = BASE.replace("- Quokka:", "- Atlas ^mv-atlas\n- Quokka:")
    for o, t in ((ours, theirs), (theirs, ours)):
        r = merge_memory(BASE, o, t)
        assert "Tee" not in r.text and "- Atlas ^mv-atlas" in r.text


def test_a_bullet_edited_on_one_side_and_removed_on_the_other_is_never_lost():
    edited = BASE.replace("Trinkt Tee ohne Zucker", "Trinkt Tee mit Honig")
    removed = BASE.replace("- Trinkt Tee ohne Zucker ^mv-tee\n", "- Neu ^mv-neu\n")
    for o, t in ((edited, removed), (removed, edited)):
        r = merge_memory(BASE, o, t)
        kept = "Trinkt Tee mit Honig" in r.text
        in_review = any("Trinkt Tee mit Honig" in (rv.kept + rv.other) for rv in r.reviews)
        assert kept or in_review
        assert "- Neu ^mv-neu" in r.text


def test_a_section_added_on_each_side_both_kept_and_the_file_still_parses():
    ours = BASE + "\n## Lessons Learned\n- Always check the weekday ^mv-weekday\n"
    theirs = BASE + "\n## Kontakte\n- Dr. Müller-Lüdenscheidt: Quokka sponsor ^mv-mueller\n"
    r = merge_memory(BASE, ours, theirs)
    assert "^mv-weekday" in r.text and "^mv-mueller" in r.text
    events = parse_memory(r.text, "MEMORY.md", Config()).events
    assert {"mv-weekday", "mv-mueller", "mv-theme"} <= {b for ev in events for b in ev.block_ids}


# Property: bullets added and removed at random in two sections on both sides.

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@st.composite
def memories(draw):
    counter = iter(range(10_000))
    base = [[f"- Fakt {next(counter)} über Jana ^mv-{n}" for n in range(draw(st.integers(0, 3)))] for _ in range(2)]
    base = [[b.replace("^mv-", f"^mv-{s}x") for b in sec] for s, sec in enumerate(base)]
    sides = []
    for _ in range(2):
        secs = [list(sec) for sec in base]
        for _ in range(draw(st.integers(0, 4))):
            sec = secs[draw(st.integers(0, 1))]
            if draw(st.booleans()) and sec:
                sec.pop(draw(st.integers(0, len(sec) - 1)))
            else:
                n = next(counter)
                sec.insert(draw(st.integers(0, len(sec))), f"- Neu {n}, geschrieben auf einer Maschine ^mv-n{n}")
        sides.append(secs)

    def text(secs):
        return "# Long-Term Memory\n" + "".join(f"\n## Abschnitt {k}\n" + "".join(b + "\n" for b in sec) for k, sec in enumerate(secs))
    return (text(base), *(text(s) for s in sides)), (base, *sides)


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True, max_examples=150, database=None)
@given(memories())
def test_added_bullets_all_kept_once_removed_ones_gone(case):
    (base, ours, theirs), (b, o, t) = case
    r = merge_memory(base, ours, theirs)
    got = bullets(r.text)
    flat = [set(x for sec in secs for x in sec) for secs in (b, o, t)]
    expected = (flat[1] & flat[2]) | (flat[1] - flat[0]) | (flat[2] - flat[0])
    assert sorted(got) == sorted(expected)
    assert r.reviews == [] and r.prose_conflicts == [] and marker_lines(r.text) == []


def test_a_file_only_one_side_changed_is_kept_as_written():
    ours = BASE.replace("## Active Projects\n", "\n\n## Active Projects\n\n")
    assert merge_memory(BASE, ours, BASE).text == ours
    assert merge_memory(BASE, BASE, ours).text == ours
    assert merge_memory(BASE, ours, ours).text == ours


def test_a_merged_section_keeps_the_layout_under_its_heading():
    ours = BASE.replace("- Trinkt Tee ohne Zucker ^mv-tee\n", "- Trinkt Tee ohne Zucker ^mv-tee\n- A ^mv-a\n")
    theirs = BASE.replace("- Prefers dark mode ^mv-theme\n", "- Prefers dark mode ^mv-theme\n- B ^mv-b\n")
    assert "## User Preferences\n- Prefers dark mode ^mv-theme\n- B ^mv-b\n" in merge_memory(BASE, ours, theirs).text


@st.composite
def edited_memories(draw):
    """Bullets (with ids) added, removed and edited in two sections on both sides."""
    counter = iter(range(10_000))
    base = [[f"- Fakt {s}.{n} ^mv-{s}x{n}" for n in range(draw(st.integers(0, 3)))] for s in range(2)]
    sides = []
    for name in ("ours", "theirs"):
        secs = [list(sec) for sec in base]
        for _ in range(draw(st.integers(0, 4))):
            sec = secs[draw(st.integers(0, 1))]
            op = draw(st.sampled_from(["add", "remove", "edit"]))
            if op != "add" and sec:
                at = draw(st.integers(0, len(sec) - 1))
                if op == "remove":
                    sec.pop(at)
                else:
                    text, _, bid = sec[at].rpartition(" ^")
                    sec[at] = f"{text}, geändert auf {name} {next(counter)} ^{bid}"
            else:
                n = next(counter)
                sec.insert(draw(st.integers(0, len(sec))), f"- Neu {n} ^mv-n{n}")
        sides.append(secs)

    def text(secs):
        return "# Long-Term Memory\n" + "".join(f"\n## Abschnitt {k}\n" + "".join(b + "\n" for b in sec) for k, sec in enumerate(secs))
    return text(base), *(text(s) for s in sides)


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True, max_examples=200, database=None)
@given(edited_memories())
def test_no_bullet_a_side_wrote_is_lost_and_ids_stay_unique(case):
    base, ours, theirs = case
    r = merge_memory(base, ours, theirs)
    got = bullets(r.text)
    in_reviews = {x for rv in r.reviews for x in (rv.kept, rv.other)}
    for side in (ours, theirs):
        for b in set(bullets(side)) - set(bullets(base)):
            assert b in got or b in in_reviews, b
    ids = [b.rpartition(" ^")[2] for b in got]
    assert len(ids) == len(set(ids))
    assert r.prose_conflicts == [] and marker_lines(r.text) == []


def test_two_sections_with_one_heading_each_merge_against_their_own_base():
    base = "# M\n\n## Notes\n- a1 ^a1\n- a2 ^a2\n\n## Notes\n- b1 ^b1\n- frei\n"
    ours = base.replace("- b1 ^b1", "- b1 vom Laptop ^b1")
    theirs = base.replace("- b1 ^b1", "- b1 vom Server ^b1").replace("- frei\n", "- frei\n- neu\n")
    r = merge_memory(base, ours, theirs)
    assert r.reviews == [Review("b1", "- b1 vom Laptop ^b1", "- b1 vom Server ^b1")]
    assert "- neu" in r.text and "- a1 ^a1" in r.text and "- b1 vom Laptop ^b1" in r.text
