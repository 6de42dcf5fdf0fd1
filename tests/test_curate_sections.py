"""Which MEMORY.md section a new bullet goes to (issue 13, point 3): the pure router
(memvault/curate/sections.py) on English and German entries, tags, config overrides and
non-matches; then the issue's repro through the CLI on a vault made by `memvault init`."""

from __future__ import annotations

import json
import shlex
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memvault.cli import cli
from memvault.config.core import Config
from memvault.config.curate import DEFAULTS
from memvault.curate.document import load_doc
from memvault.curate.sections import Known, known_from, named_projects, project_name, route
from memvault.entries.model import Event
from memvault.vault import Vault

from .conftest import DATA, copy_vault

RULES: dict[str, str] = dict(DEFAULTS["sections"])
AT = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)


def ev(text: str, type: str = "belief", tags: tuple[str, ...] = (), id: str = "2026-11-30T09:00",
       title: str = "") -> Event:
    return Event(id=id, type=type, timestamp=AT, content=text, file="memory/2026-11-30.md", line=3, end_line=4,
                 tags=tags, title=title)


def section(text: str, type: str = "belief", tags: tuple[str, ...] = (), rules: dict[str, str] | None = None,
            known: Known | None = None) -> str:
    return route(ev(text, type, tags), [], [], RULES if rules is None else rules, "Notes", known or Known()).section


# ------------------------------------------------------------------------- what it is about

@pytest.mark.parametrize("text", [
    "User wants weekly status reports every Monday morning",
    "User switched to light mode",
    "User's timezone is Europe/Berlin",
    "User prefers short answers without a preamble",
    "The user always reads email in the morning",
    "User never wants emojis in commit messages",
    "User hates long meetings",
    "User likes green tea while working",
    "User's editor is Neovim with a split keyboard",
    "User speaks German at home and English at work",
    "Anya's favourite colour is teal",
    "Time zone: America/New_York",
    # German
    "Nutzer möchte Antworten auf Deutsch",
    "Bevorzugt kurze Antworten ohne Einleitung",
    "Sie mag keinen Jazz beim Arbeiten",
    "Der Nutzer trinkt lieber Tee als Kaffee",
    "Die Zeitzone des Nutzers ist Europe/Berlin",
    "Der Nutzer verwendet immer den Dunkelmodus",
])
def test_what_the_user_wants_likes_or_set_goes_to_user_preferences(text):
    assert section(text) == "User Preferences"


@pytest.mark.parametrize("text", [
    "Project Atlas launches on March 3",
    "Working on the billing rewrite until the end of the quarter",
    "The deadline for the grant application is 2026-12-15",
    "Release 2.4 is planned for next Tuesday",
    "The first milestone is the import tool; the second the web UI",
    "Moved the repo to codeberg.org/anya/quokka",
    "Projekt Quokka: der Kunde will eine Demo im Januar",
    "Abgabetermin für den Bericht ist der 12. Dezember",
])
def test_project_facts_go_to_active_projects(text):
    assert section(text) == "Active Projects"


@pytest.mark.parametrize("text", [
    "Learned that the staging database resets every night",
    "Lesson: always run the migrations before the test suite",
    "Turns out the CI cache is keyed on the lockfile",
    "Next time check the calendar before naming a weekday",
    "Mistake: deployed on a Friday evening",
    "Gotcha: zoneinfo needs tzdata on Windows",
    "Don't push to main without running the hooks again",
    "Gelernt: Backups vor dem Upgrade prüfen",
    # an instruction to itself, the template's own lesson; not the user's habit, whatever it names
    "Always verify the day of the week with a calendar",
    "Always double-check the time zone when scheduling across teams",
    "Nie wieder am Freitag deployen",
])
def test_lessons_go_to_lessons_learned(text):
    assert section(text) == "Lessons Learned"


@pytest.mark.parametrize(("text", "type"), [
    ("Use Postgres for the billing service", "decision"),
    ("Decided to keep the monolith for now", "belief"),
    ("We will use SQLite for the prototype", "observation"),
    ("Wir haben entschieden, Postgres zu nehmen", "observation"),
])
def test_decisions_go_to_decisions(text, type):
    assert section(text, type) == "Decisions"


@pytest.mark.parametrize("text", [
    "The staging server is slow in the mornings",
    "The projection of revenue looks flat",  # "projection" is not a project
    "Projector in room 4 needs an HDMI adapter",
    "Prefetching hides most of the latency",  # no "prefer" stem either
    "Der Build-Server heißt Quokka",
    "Lieber Herr Müller, anbei die Rechnung",
])
def test_what_matches_nothing_stays_in_the_default_section(text):
    assert section(text) == "Notes"


def test_a_lesson_about_the_user_is_the_users_preference_and_a_label_wins():
    # A statement about the user outranks "learned"; the writer's own "Lesson:" label outranks both.
    assert section("Learned that the user prefers concise answers") == "User Preferences"
    assert section("Lesson: never trust the user's timezone from the browser") == "Lessons Learned"


def test_a_project_memory_md_names_is_a_project():
    known = Known(("User Preferences", "Active Projects"), frozenset({"Atlas"}))
    assert section("Atlas CI takes 14 minutes; the integration tests dominate.", known=known) == "Active Projects"
    assert section("an atlas of the Alps is on the shelf", known=known) == "Notes"  # a name is matched as written
    assert section("Agreed with Ben to split the Atlas backend in two", known=known) == "Decisions"  # decision first
    r = route(ev("Atlas CI takes 14 minutes"), [], [], RULES, "Notes", known)
    assert r.why == "about a project (\u201cAtlas\u201d, a project MEMORY.md names)"


def test_project_names_are_read_from_the_project_sections_bullets():
    text = ("# M\n\n## Active Projects\n- Atlas: started 2026-02-16\n- Quokka Sync \u2014 the sync daemon\n"
            "- User: wants reports\n- not a name: lower case\n\n## Notes\n- Hermes: not in the project section\n")
    known = known_from(load_doc(text.encode(), Config(timezone="UTC")), RULES)
    assert known.projects == {"Atlas", "Quokka Sync"}
    assert known.sections == ("Active Projects", "Notes")
    assert project_name("Atlas: started") == "Atlas" and project_name("Atlas started") is None


# ------------------------------------------------------------------------------------ tags

def test_tags_come_first_configured_or_built_in():
    assert section("User wants weekly reports", tags=("lesson",)) == "Lessons Learned"
    assert section("Release on Friday", tags=("preference",)) == "User Preferences"
    # A kind tag still routes when [curate.sections] was replaced and does not list it.
    assert section("Something plain", tags=("project",), rules={"#work": "Work"}) == "Active Projects"
    assert section("Something plain", tags=("work",), rules={"#work": "Work"}) == "Work"


def test_a_correction_is_routed_by_what_it_corrects():
    old = ev("User wants weekly updates on Friday afternoons", id="2026-11-29T09:00")
    corr = ev("Monday mornings instead, not Friday", type="correction")
    r = route(corr, [], [old], RULES, "Notes")
    assert r.section == "User Preferences"
    assert r.why == "about the user's preferences (\u201cwants\u201d) \u2014 in what it corrects (2026-11-29T09:00)"


def test_a_repeats_tag_counts_and_a_correction_of_a_decision_stays_a_decision():
    first = ev("Staging is slow in the mornings", id="2026-11-28T09:00")
    again = ev("Staging slow again this morning", id="2026-11-29T09:00", tags=("project",))
    r = route(first, [again], [], RULES, "Notes")
    assert (r.section, r.why) == ("Active Projects", "tagged #project ([curate.sections] \"#project\") "
                                  "\u2014 in 2026-11-29T09:00, which says the same")
    old = ev("Use Redis for the billing service", type="decision", id="2026-11-27T09:00")
    assert route(ev("Postgres after all", type="correction"), [], [old], RULES, "Notes").section == "Decisions"


# -------------------------------------------------------------------------------- overrides

def test_configured_rules_win_over_built_in_words():
    rules = {**RULES, "~deploy": "Ops", "~weekly status": "Reporting", "observation": "Observations"}
    assert section("User wants deploys on Tuesdays only", rules=rules) == "Ops"
    assert section("User wants weekly status reports", rules=rules) == "Reporting"  # a phrase, last word a stem
    assert section("Turns out the CI cache is keyed on the lockfile", "observation", rules=rules) == "Observations"
    assert section("Plan C is the fallback", rules={"~c++": "C++"}) == "Notes"  # a sign ends the stem
    assert section("The C++ build needs clang", rules={"~c++": "C++"}) == "C++"
    r = route(ev("User wants deploys on Tuesdays"), [], [], rules, "Notes")
    assert r.why == "the words \u201cdeploys\u201d ([curate.sections] \"~deploy\")"


def test_a_kind_goes_where_its_tag_rule_points():
    rules = {"#preference": "Vorlieben", "#project": "Projekte"}
    assert section("Nutzer möchte Antworten auf Deutsch", rules=rules) == "Vorlieben"
    assert section("Projekt Quokka startet im Januar", rules=rules) == "Projekte"
    assert section("Learned to check the backups", rules=rules) == "Lessons Learned"  # not mapped: the template's


def test_a_section_the_person_made_is_used_when_its_name_is_said():
    known = Known(("User Preferences", "Health & Fitness", "Scratch", "Notes"))
    assert section("Knee pain: fitness plan and health insurance call on Tuesday", known=known) == "Health & Fitness"
    assert section("Fitness class moved to Tuesday", known=known) == "Notes"  # every word of the name is needed
    assert section("Rewrote the parser from scratch", known=known) == "Notes"  # a parking section attracts nothing
    assert section("User wants the health insurance letters scanned", known=known) == "User Preferences"


def test_every_route_says_why():
    cases = {
        ("User's timezone is Europe/Berlin", "belief", ()): "about the user's preferences (\u201ctimezone\u201d)",
        ("Use SQLite", "decision", ()): "a decision ([curate.sections] \"decision\")",
        ("Plain", "belief", ("lessons",)): "tagged #lessons ([curate.sections] \"#lessons\")",
        ("Lesson: run migrations first", "belief", ()): "labelled \u201cLesson:\u201d",
        ("Never deploy on Fridays", "belief", ()): "an instruction (\u201cNever \u2026\u201d)",
        ("The staging server is slow", "belief", ()): "nothing in it points to a section ([curate] default_section)",
    }
    for (text, type, tags), why in cases.items():
        assert route(ev(text, type, tags), [], [], RULES, "Notes").why == why


def test_a_long_note_is_routed_by_its_start():
    start = "Meeting notes about the office move. " + "Nothing in particular was said. " * 200
    assert section(start + "User prefers tea.") == "Notes"


# -------------------------------------------------------------------------- through the CLI

REPRO = [
    ("User wants weekly status reports every Monday", "2026-11-24 09:00"),
    ("User switched to light mode", "2026-11-25 10:00"),
    ("User's timezone is Europe/Berlin", "2026-11-26 11:00"),
    ("Project Atlas launches on March 3", "2026-11-27 12:00"),
    ("Learned that the staging database resets every night", "2026-11-28 13:00"),
    ("The coffee machine on floor 3 is broken", "2026-11-29 14:00"),
]


@pytest.fixture
def fresh(runner, tmp_path) -> Path:
    root = tmp_path / "fresh"
    result = runner.invoke(cli, ["init", str(root), "--timezone", "Europe/Berlin"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    for text, at in REPRO:
        logged = runner.invoke(cli, ["--vault", str(root), "log", "--type", "belief", "--at", at, text])
        assert logged.exit_code == 0, logged.output
    return root


def where(root: Path) -> dict[str, str]:
    """Each curated bullet's text -> its MEMORY.md section, as the library reads it."""
    vault = Vault.open(root)
    return {e.content.split(" (added")[0]: e.category or "" for e in vault.timeline.events
            if e.kind == "curated" and not e.is_note}


def test_the_issues_repro_lands_in_the_templates_sections(fresh, runner):
    result = runner.invoke(cli, ["--vault", str(fresh), "curate", "--yes", "--at", "2026-11-30 12:00"])
    assert result.exit_code == 0, result.output
    assert where(fresh) == {
        "User wants weekly status reports every Monday": "User Preferences",
        "User switched to light mode": "User Preferences",
        "User's timezone is Europe/Berlin": "User Preferences",
        "Project Atlas launches on March 3": "Active Projects",
        "Learned that the staging database resets every night": "Lessons Learned",
        "The coffee machine on floor 3 is broken": "Notes",
    }
    text = (fresh / "MEMORY.md").read_text()
    assert text.index("## User Preferences") < text.index("User switched") < text.index("## Active Projects")


def test_explain_and_the_plan_say_why_each_section(fresh, runner):
    explained = runner.invoke(cli, ["--vault", str(fresh), "curate", "--explain", "--at", "2026-11-30 12:00"])
    assert explained.exit_code == 0, explained.output
    lines = {ln.split()[0]: ln for ln in explained.output.splitlines()}
    assert "add to \u201cUser Preferences\u201d" in lines["2026-11-25T10:00"]
    assert "section: about the user's preferences (\u201cUser switched\u201d, \u201clight mode\u201d)" \
        in lines["2026-11-25T10:00"]
    assert ("section: about a project (\u201cProject\u201d, \u201claunches\u201d, \u201cAtlas\u201d, "
            "a project the logs name)") in lines["2026-11-27T12:00"]
    assert "section: nothing in it points to a section ([curate] default_section)" in lines["2026-11-29T14:00"]
    plan = json.loads(runner.invoke(cli, ["--vault", str(fresh), "curate", "--json", "--at", "2026-11-30 12:00"]).output)
    by_text = {p["text"]: p for p in plan["proposals"]}
    tz = by_text["User's timezone is Europe/Berlin"]
    assert (tz["section"], tz["section_why"]) == ("User Preferences", "about the user's preferences (\u201ctimezone\u201d)")
    assert tz["reason"].endswith("; section: about the user's preferences (\u201ctimezone\u201d)")
    lesson = by_text["Learned that the staging database resets every night"]
    assert lesson["section_why"] == "a lesson (\u201cLearned\u201d)"


def test_a_section_named_by_with_says_so_once(vault_dir, runner):
    # The fake curator merges the Atlas decision ("Decisions") with the Atlas CI fact ("Active
    # Projects") and names "Active Projects": the merged reason says one section, the command's.
    copy_vault("curate_week", vault_dir)
    tool = f"{shlex.quote(sys.executable)} {shlex.quote(str(DATA / 'curate_tools' / 'fake_curator.py'))}"
    plan = json.loads(runner.invoke(cli, ["curate", "--with", tool, "--json", "--at", "2026-02-22 12:00"]).output)
    merged = next(p for p in plan["proposals"] if p["origin"] == "with" and p["kind"] == "add")
    assert (merged["section"], merged["section_why"]) == ("Active Projects", "named by the --with command")
    assert merged["reason"].endswith("(merged p3, p7); section: named by the --with command")
    assert merged["reason"].count("section:") == 1


@pytest.mark.parametrize(("text", "names"), [
    ("Use SQLite for the Atlas prototype; revisit at 10k users.", {"Atlas"}),
    ("Kickoff for project Orion moved to Monday", {"Orion"}),
    ("Projekt Hermes startet im März", {"Hermes"}),
    ("New project idea: a garden planner", set()),  # a sentence's first word is no name
    ("Our repo moved to GitHub", set()),
    ("the atlas prototype", set()),  # not written as a name
])
def test_the_logs_name_projects_in_passing(text, names):
    assert named_projects([text]) == frozenset(names)


def test_a_project_the_logs_name_routes_a_fact_about_it():
    doc = load_doc(b"# Long-Term Memory\n\n## Active Projects\n", Config(timezone="UTC"))
    known = known_from(doc, RULES, ["Use SQLite for the Atlas prototype"])
    fact = ev("Atlas CI now takes 6 minutes after splitting the integration tests", "correction")
    found = route(fact, [], [], RULES, "Notes", known)
    assert found.section == "Active Projects" and "a project the logs name" in found.why
    assert route(fact, [], [], RULES, "Notes", known_from(doc, RULES)).section == "Notes"
