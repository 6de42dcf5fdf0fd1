"""Notes: every freeform section of a daily log is memory (issue 12). Parser units on logs shaped
like the ones people and agents write (German and English, bold lead-ins, checklists, tables,
fenced code, numbered lists, timed bullets, compacted files and their archive)."""

from __future__ import annotations

from datetime import date, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from memvault.config.core import Config
from memvault.entries.daily import parse_log
from memvault.entries.model import Event
from memvault.entries.notes import BOUND, heading_when, lead_clock, slug
from memvault.vault import Vault

from .conftest import copy_vault

UTC_CFG = Config(timezone="UTC")
BERLIN = ZoneInfo("Europe/Berlin")


def parse(text: str, path: str = "memory/2026-02-01.md", **kw) -> tuple[list[Event], list]:
    got = parse_log(text, path, UTC_CFG, **kw)
    return got.events, got.problems


def by_id(events: list[Event]) -> dict[str, Event]:
    return {e.id: e for e in events}


@pytest.fixture
def notes_vault(vault_dir: Path) -> Vault:
    copy_vault("notes", vault_dir)
    return Vault.open(vault_dir)


# ------------------------------------------------------------------------- sections


def test_a_german_setup_log_is_all_notes_with_heading_paths(notes_vault: Vault):
    day = [e for e in notes_vault.events if e.file == "memory/2026-02-01.md"]
    got = {e.id: (e.type, e.path, e.line, e.end_line) for e in day}
    assert got == {
        "2026-02-01#_": ("note", (), 1, 3),  # the title and the text before the first heading
        "2026-02-01#was-passiert-ist/build-action": ("note", ("Was passiert ist", "Build Action ✅"), 7, 10),
        "2026-02-01#was-passiert-ist/heartbeat-checklist": ("note", ("Was passiert ist", "Heartbeat Checklist"), 12, 15),
        "2026-02-01#entscheidungen": ("note", ("Entscheidungen",), 17, 22),
        "2026-02-01T09:15": ("decision", (), 24, 27),
        "2026-02-01#offene-fragen": ("note", ("Offene Fragen",), 29, 36),
    }
    ev = by_id(day)
    build = ev["2026-02-01#was-passiert-ist/build-action"]
    assert build.title == "Build Action ✅" and build.heading == "Build Action ✅"
    assert build.content.startswith("- **CI**: läuft jetzt grün") and build.tags == ("ci",)
    assert build.timestamp == datetime(2026, 2, 1, tzinfo=BERLIN) and build.kind == "log"
    assert "| Datenbank | Postgres statt SQLite |" in ev["2026-02-01#entscheidungen"].content
    assert "- [ ] Backup-Skript prüfen" in ev["2026-02-01#was-passiert-ist/heartbeat-checklist"].content
    # The entry owns its `### Why`; the fenced `## not a heading` is text of the last section.
    assert ev["2026-02-01T09:15"].content.endswith("### Why\nCosts were compared in the spreadsheet.")
    assert "## not a heading: a comment in a shell script" in ev["2026-02-01#offene-fragen"].content
    assert notes_vault.files["memory/2026-02-01.md"].title == "2026-02-01 - Config & Setup Session"


def test_the_whole_fixture_checks_clean_of_the_rules_notes_touch(notes_vault: Vault, runner):
    from memvault.cli import cli

    result = runner.invoke(cli, ["check", "--json"])
    codes = {p["code"] for p in __import__("json").loads(result.output)["problems"]}
    # MV006 (the archive beside its day) belongs to the layout's rules, not to notes.
    assert codes <= {"MV006"}, result.output


def test_title_is_not_a_section_and_the_preamble_is(tmp_path):
    events, problems = parse("# 2026-02-01\n\nvor dem ersten Abschnitt\n\n## A\na\n")
    assert [(e.id, e.content) for e in events] == [("2026-02-01#_", "vor dem ersten Abschnitt"), ("2026-02-01#a", "a")]
    assert problems == []
    # Text before the title too: one preamble, the title line left out of it.
    events, _ = parse("intro line\n# 2026-02-01\nafter title\n## A\na\n")
    assert events[0].id == "2026-02-01#_" and events[0].content == "intro line\n\nafter title"
    # A second level-1 heading is a section, not a title.
    events, _ = parse("# 2026-02-01\n# Zweiter Teil\nText\n")
    assert [(e.id, e.path) for e in events] == [("2026-02-01#zweiter-teil", ("Zweiter Teil",))]


def test_a_bare_heading_is_a_note_only_when_nothing_below_carries_its_words():
    events, _ = parse("# 2026-02-01\n\n## Projekte\n\n### Atlas\nläuft\n\n## Nur eine Überschrift\n\n## Ende\nx\n")
    got = {e.id: (e.title, e.content, e.path) for e in events}
    assert "2026-02-01#projekte" not in got  # its words are in Atlas's path
    assert got["2026-02-01#projekte/atlas"] == ("Atlas", "läuft", ("Projekte", "Atlas"))
    assert got["2026-02-01#nur-eine-überschrift"] == ("Nur eine Überschrift", "", ("Nur eine Überschrift",))


def test_closing_hashes_and_deep_levels():
    events, _ = parse("# 2026-02-01\n## Notizen ##\nx\n#### Tief\ny\n###### Ganz tief ###\nz\n####### not a heading\n")
    assert [(e.id, e.path) for e in events] == [
        ("2026-02-01#notizen", ("Notizen",)),
        ("2026-02-01#notizen/tief", ("Notizen", "Tief")),
        ("2026-02-01#notizen/tief/ganz-tief", ("Notizen", "Tief", "Ganz tief")),
    ]
    assert events[-1].content == "z\n####### not a heading"


def test_typed_entries_keep_every_rule_and_own_their_subheadings():
    text = ("# 2026-02-01\n\n## 09:15 - Decision - Hosting\nHetzner\n### Details\nmore\n#### deeper\nx\n"
            "Supersedes: 2026-01-31T10:00\n\n## Danach\nfrei\n")
    events, problems = parse(text)
    entry, note = events
    assert (entry.id, entry.type, entry.title, entry.supersedes) == ("2026-02-01T09:15", "decision", "Hosting", "2026-01-31T10:00")
    assert entry.content == "Hetzner\n### Details\nmore\n#### deeper\nx" and entry.end_line == 9
    assert (note.id, note.path, note.supersedes) == ("2026-02-01#danach", ("Danach",), None)
    assert problems == []


def test_fenced_code_with_fake_headings_stays_text():
    text = "# 2026-02-01\n\n## Skript\n~~~md\n# Titel\n## 10:00 - Belief\n### Sub\n~~~\nnach dem Block\n"
    events, problems = parse(text)
    assert [e.id for e in events] == ["2026-02-01#skript"] and problems == []
    assert "## 10:00 - Belief" in events[0].content and events[0].content.endswith("nach dem Block")


# ---------------------------------------------------------------------------- times


@pytest.mark.parametrize("text, clock", [
    ("14:30 did X", (14, 30, 0)), ("9:05 - standup", (9, 5, 0)), ("**14:30** — review", (14, 30, 0)),
    ("`07:00` Laufen", (7, 0, 0)), ("[x] 16:00 Backup", (16, 0, 0)), ("[16:45] Call", (16, 45, 0)),
    ("2:30 pm call with Dana", (14, 30, 0)), ("12:00 AM Mitternacht", (0, 0, 0)), ("23:59:30 spät", (23, 59, 30)),
    ("14:30-15:00 Meeting", (14, 30, 0)), ("10:00: Kaffee", (10, 0, 0)),
    ("14.30 Termin", None), ("14.03. Geburtstag", None), ("25:00 nope", None), ("9:60 nope", None),
    ("1:15pm", (13, 15, 0)), ("13:15 pm", None), ("v1:20 release", None), ("14:30h Termin", None),
    ("\u0661\u0664:\u0663\u0660 arabic", None), ("1430 Uhr", None), ("", None),
])
def test_lead_clock(text, clock):
    assert lead_clock(text) == clock


def test_timed_bullets_split_a_section_at_their_times():
    events, _ = parse("# 2026-02-02\n\n## Log\nMorgens ruhig.\n- 08:30 Kaffee mit Lena\n  - Aufnahmen bis Freitag\n"
                      "- **10:15** — Standup\n- 14:30 Pairing\n* 14:30 quokka benchmark\n- ohne Zeit, gehört zu 14:30\n"
                      "1. 16:00 Numbered\n", "memory/2026-02-02.md")
    got = [(e.id, e.timestamp.strftime("%H:%M"), e.line, e.end_line, e.heading) for e in events]
    assert got == [
        ("2026-02-02#log", "00:00", 3, 4, "Log"),
        ("2026-02-02#log@08:30", "08:30", 5, 6, ""),
        ("2026-02-02#log@10:15", "10:15", 7, 7, ""),
        ("2026-02-02#log@14:30", "14:30", 8, 8, ""),
        ("2026-02-02#log@14:30-2", "14:30", 9, 10, ""),
        ("2026-02-02#log@16:00", "16:00", 11, 11, ""),
    ]
    assert all(e.title == "Log" and e.path == ("Log",) for e in events)
    assert by_id(events)["2026-02-02#log@14:30-2"].content == "* 14:30 quokka benchmark\n- ohne Zeit, gehört zu 14:30"


def test_indented_or_fenced_times_do_not_split():
    events, _ = parse("# 2026-02-02\n\n## Log\n- Tag\n  - 08:30 nested\n```\n- 09:00 in code\n```\n", "memory/2026-02-02.md")
    assert [e.id for e in events] == ["2026-02-02#log"]


def test_a_heading_time_dates_its_section_and_the_sections_below():
    events, problems = parse("# 2026-02-01\n\n## 9:15\nfrüh\n### Details\ndarunter\n## 14:30 Meeting mit Bob\nx\n"
                             "### 25:00 Quatsch\ny\n## Abend\nz\n")
    assert [(e.id, e.timestamp.strftime("%H:%M")) for e in events] == [
        ("2026-02-01#9-15", "09:15"), ("2026-02-01#9-15/details", "09:15"),
        ("2026-02-01#14-30-meeting-mit-bob", "14:30"), ("2026-02-01#14-30-meeting-mit-bob/25-00-quatsch", "14:30"),
        ("2026-02-01#abend", "00:00"),
    ]
    assert problems == []


@pytest.mark.parametrize("text, day, clock", [
    ("2026-01-24 \u2014 Daily notes", date(2026, 1, 24), None), ("2026-06-27 23:00 Health Check", date(2026, 6, 27), (23, 0, 0)),
    ("2026-06-27T23:00 Health Check", date(2026, 6, 27), (23, 0, 0)), ("**2026-06-27** 23:00", date(2026, 6, 27), (23, 0, 0)),
    ("[2026-01-24] Notizen", date(2026, 1, 24), None), ("2026-01-24 (Sa), 14:00 Treffen", date(2026, 1, 24), (14, 0, 0)),
    ("2026-02-30 Tippfehler", None, None), ("2026-01-24-standup", date(2026, 1, 24), None),
    # A time anywhere, as a whole token and a real clock: not a version, a ratio, `14.30` or `14:30h`.
    ("Workboard API Fix (10:00-11:00 BST)", None, (10, 0, 0)), ("Call with Dana at 2:30 pm", None, (14, 30, 0)),
    ("Um 25:00 nichts, um 9:15 Kaffee", None, (9, 15, 0)), ("Meeting 10:00:30", None, (10, 0, 30)),
    ("Release v1.10:30", None, None), ("Ratio 16:9 screens", None, None), ("Termin 14.30 Uhr", None, None),
    ("14:30h Termin", None, None), ("Build 2026.02:15", None, None), ("Was passiert ist", None, None),
])
def test_heading_when(text, day, clock):
    assert heading_when(text) == (day, clock)


def test_a_running_log_archive_dates_each_day_by_its_heading():
    archive = ("# Januar 2026 \u2014 Tagesnotizen (archiviert)\n\n"
               "# 2026-01-24 \u2014 Daily notes\n\n## Tailscale\n- Exit-Node auf dem NAS eingerichtet\n"
               "- 14:30 ACLs f\u00fcr das Handy\n\n## 09:00 - Decision\nNur noch Tailscale, kein WireGuard.\n\n"
               "# 2026-01-25 \u2014 Daily notes\n\nRuhiger Sonntag.\n\n## Einkauf\n- Kaffee\n")
    events, problems = parse(archive, "memory/archive/january-2026-daily-notes.md", file_date=date(2026, 2, 14))
    got = [(e.id, e.type, e.timestamp.strftime("%Y-%m-%d %H:%M")) for e in events]
    assert got == [
        ("archive/january-2026-daily-notes#_", "note", "2026-02-14 00:00"),  # the file's title
        ("archive/january-2026-daily-notes#2026-01-24-daily-notes/tailscale", "note", "2026-01-24 00:00"),
        ("archive/january-2026-daily-notes#2026-01-24-daily-notes/tailscale@14:30", "note", "2026-01-24 14:30"),
        # Typed entries keep the file's day: their ids and times are the format's, not the headings'.
        ("archive/january-2026-daily-notes@09:00", "decision", "2026-02-14 09:00"),
        ("archive/january-2026-daily-notes#2026-01-25-daily-notes", "note", "2026-01-25 00:00"),
        ("archive/january-2026-daily-notes#2026-01-25-daily-notes/einkauf", "note", "2026-01-25 00:00"),
    ]
    assert problems == []
    # No date is part of an id: another file date, the same ids.
    later, _ = parse(archive, "memory/archive/january-2026-daily-notes.md", file_date=date(2026, 3, 1))
    assert [e.id for e in later] == [g[0] for g in got]


def test_a_health_log_dates_each_check_and_the_sections_under_it():
    log = ("# Health Log\n\n## 2026-06-27 23:00 Health Check\n- Disk 71 %\n### Backups\n- restic ok\n"
           "## 2026-06-28 07:15 Health Check\n- Disk 72 %\n## Offene Punkte\n- Zertifikat erneuern\n")
    events, _ = parse(log, "memory/health-log.md", file_date=date(2026, 6, 1))
    assert [(e.id, e.timestamp.strftime("%Y-%m-%d %H:%M")) for e in events] == [
        ("health-log#_", "2026-06-01 00:00"),  # the title, dated like the file
        ("health-log#2026-06-27-23-00-health-check", "2026-06-27 23:00"),
        ("health-log#2026-06-27-23-00-health-check/backups", "2026-06-27 23:00"),
        ("health-log#2026-06-28-07-15-health-check", "2026-06-28 07:15"),
        ("health-log#offene-punkte", "2026-06-01 00:00"),  # a heading at the same level ends the dated run
    ]


def test_a_days_own_file_takes_earlier_heading_dates_not_plans():
    text = ("# 2026-02-01\n\n## 09:00 Morgens\nKaffee\n### 2026-01-30 Nachtrag\nvergessen: Miete\n#### Details\nDauerauftrag\n"
            "## 2026-02-15 10:00 Steuerberater\nUnterlagen mitbringen\n")
    events, problems = parse(text)
    assert [(e.id, e.timestamp.strftime("%Y-%m-%d %H:%M")) for e in events] == [
        ("2026-02-01#09-00-morgens", "2026-02-01 09:00"),
        ("2026-02-01#09-00-morgens/2026-01-30-nachtrag", "2026-01-30 00:00"),  # a new day: not 09:00
        ("2026-02-01#09-00-morgens/2026-01-30-nachtrag/details", "2026-01-30 00:00"),
        ("2026-02-01#2026-02-15-10-00-steuerberater", "2026-02-01 00:00"),  # a plan, dated when written
    ]
    assert problems == []
    # In an undated file a later date is how a running log goes on: it counts.
    events, _ = parse(text.replace("# 2026-02-01", "# Notizen"), "memory/notizen.md", file_date=date(2026, 1, 1))
    assert events[-1].timestamp.date() == date(2026, 2, 15)


# ------------------------------------------------------------------------------ ids


@pytest.mark.parametrize("text, expected", [
    ("Was passiert ist", "was-passiert-ist"), ("Build Action ✅", "build-action"), ("  ", "_"), ("✅", "_"),
    ("Ｆｕｌｌｗｉｄｔｈ ＡＢＣ", "fullwidth-abc"), ("Über_Straße", "über-straße"), ("14:30 Standup", "14-30-standup"),
    ("C++ / Rust?", "c-rust"),
    # At most 40 characters, cut after a whole word when there is one.
    ("14:00 \u2014 Brand Lead Gen Deep Dive: results of the outreach campaign and next steps", "14-00-brand-lead-gen-deep-dive-results"),
    ("\u00dcberpr\u00fcfung der Datenschutzerkl\u00e4rung f\u00fcr das neue Kundenportal", "\u00fcberpr\u00fcfung-der-datenschutzerkl\u00e4rung-f\u00fcr"),
    ("Donaudampfschifffahrtsgesellschaftskapit\u00e4nsm\u00fctzenabzeichen", "donaudampfschifffahrtsgesellschaftskapit"),
])
def test_slug(text, expected):
    assert slug(text) == expected


def test_long_headings_give_short_ids_still_unique():
    long = "## 14:00 \u2014 Brand Lead Gen Deep Dive: results of the outreach campaign and {}\nx\n"
    text = "# 2026-02-01\n" + long.format("next steps") + long.format("what we learned") + "### " + long[3:].format("Q2")
    ids = [e.id for e in parse(text)[0]]
    assert ids == ["2026-02-01#14-00-brand-lead-gen-deep-dive-results", "2026-02-01#14-00-brand-lead-gen-deep-dive-results~2",
                   "2026-02-01#14-00-brand-lead-gen-deep-dive-results/14-00-brand-lead-gen-deep-dive-results"]
    assert max(len(i) for i in ids) < 100


def test_equal_headings_are_numbered_by_position():
    text = "# 2026-02-01\n## Notizen\na\n## Notizen\nb\n## Other\n### Notizen\nc\n## NOTIZEN!\nd\n"
    assert [e.id for e in parse(text)[0]] == [
        "2026-02-01#notizen", "2026-02-01#notizen~2", "2026-02-01#other/notizen", "2026-02-01#notizen~3"]


def test_file_keys_for_topic_archive_and_undated_files():
    text = "# Whatever\n\n## 09:00 - Decision\nx\n\n## Notes\ny\n"
    cases = {  # the name's date wins over `file_date`, the layout's guess for an undated file
        "memory/2026-02-05-memory-leak-incident.md": ("2026-02-05-memory-leak-incident@09:00", "2026-02-05-memory-leak-incident#notes", 5),
        "memory/archive/2026-01-15.md": ("archive/2026-01-15@09:00", "archive/2026-01-15#notes", 1),
        "memory/2026/02/2026-02-05.md": ("2026-02-05T09:00", "2026-02-05#notes", 5),
        "memory/projects/ideas.md": ("projects/ideas@09:00", "projects/ideas#notes", 9),
    }
    for path, (entry, note, day) in cases.items():
        events, _ = parse(text, path, file_date=date(2026, 2, 9))
        title = note.split("#")[0] + "#_"  # `# Whatever` says more than a date: a note of its own
        assert tuple(e.id for e in events) == (title, entry, note), path
        assert {e.timestamp.date() for e in events} == {date(2026, 2, 5) if day == 5 else date(2026, 1, 15) if day == 1 else date(2026, 2, 9)}


def test_long_sections_split_along_their_blocks():
    items = [f"- Punkt {i}: " + "wort " * 12 for i in range(30)]
    code = ["```python", *[f"x{i} = {i}  # {'c' * 40}" for i in range(15)], "```"]
    text = "# 2026-02-01\n\n## Lange Liste\n" + "\n".join(items[:15] + ["", *code, ""] + items[15:]) + "\nTags: lang\n"
    events, _ = parse(text)
    assert len(events) > 5
    assert [e.id for e in events][:3] == ["2026-02-01#lange-liste", "2026-02-01#lange-liste.p2", "2026-02-01#lange-liste.p3"]
    assert all(e.path == ("Lange Liste",) and e.title == "Lange Liste" and "lang" in e.tags for e in events)
    fence = [e for e in events if "```python" in e.content]
    assert len(fence) == 1 and fence[0].content.startswith("```python") and fence[0].content.endswith("```")
    for e in events:
        assert len(e.content) <= BOUND or e is fence[0]
        assert e.content.startswith(("- Punkt", "```")), e.content[:20]  # cut only where a block starts
    joined = "\n".join(e.content for e in events).replace("\n\n", "\n")
    assert joined == "\n".join(items[:15] + code + items[15:])  # nothing lost, nothing twice
    assert events[0].line == 3 and events[-1].end_line == text.count("\n")  # the metadata line is the last one's


def test_one_long_paragraph_splits_between_its_lines_only():
    para = "\n".join(f"Satz nummer {i} ist lang genug, um etwas Platz zu brauchen." for i in range(20))
    events, _ = parse(f"# 2026-02-01\n\n## Prosa\n{para}\n")
    assert len(events) > 1 and "\n".join(e.content for e in events) == para
    single, _ = parse("# 2026-02-01\n\n## Prosa\n" + "x" * (3 * BOUND) + "\n")
    assert len(single) == 1  # one line: nothing to cut between


def test_metadata_of_a_note():
    text = ("# 2026-02-01\n\n## Bob\nBob bevorzugt Tee. #people\n- 10:00 sagte es nochmal\n\n"
            "Importance: high\nTags: bob\nSupersedes: belief about coffee\nId: bob-tee\n")
    events, problems = parse(text)
    first, timed = events
    assert (first.id, first.explicit_id, first.supersedes, first.importance) == ("bob-tee", True, "belief about coffee", 0.9)
    assert (timed.id, timed.supersedes, timed.importance) == ("2026-02-01#bob@10:00", None, 0.9)
    assert first.tags == ("bob", "people") and timed.tags == ("bob",)
    assert timed.end_line == 10 and "Importance" not in timed.content
    assert problems == []
    # Prose that looks like a key stays prose (no MV209 noise for notes either).
    events, _ = parse("# 2026-02-01\n\n## Quellen\nSource: das Meeting am Montag\nmehr Text\n")
    assert events[0].content.startswith("Source: das Meeting") and events[0].source is None


def test_links_block_ids_and_tags_in_notes():
    events, _ = parse("# 2026-02-01\n\n## Links\nSiehe [[People/Dana|Dana]] und #projekt/atlas ^wichtig\n")
    note = events[0]
    assert note.links == ("People/Dana",) and note.tags == ("projekt/atlas",) and note.block_ids == ("wichtig",)


# ---------------------------------------------------------------------------- days


def test_how_a_file_is_dated():
    body = "## Abschnitt\nx\n"
    assert parse("# 2026-02-01\n" + body)[0][0].timestamp.date() == date(2026, 2, 1)  # the name
    fm = "---\ndate: 2026-03-04\n---\n# Ideen\n" + body
    assert parse(fm, "memory/ideas.md", file_date=date(2020, 1, 1))[0][0].timestamp.date() == date(2026, 3, 4)
    titled = "# 2026-03-05 Retro\n" + body
    assert parse(titled, "memory/retro.md", file_date=date(2020, 1, 1))[0][0].timestamp.date() == date(2026, 3, 5)
    assert parse("# Ideen\n" + body, "memory/ideas.md", file_date=date(2020, 1, 1))[0][0].timestamp.date() == date(2020, 1, 1)
    undated, problems = parse("# Ideen\n" + body + "## 09:00 - Belief\ny\n", "memory/ideas.md")
    assert [(e.type, e.timestamp) for e in undated] == [("note", None)] * 3
    assert [(p.code, p.line, p.severity) for p in problems] == [("MV001", 4, "warning")]


def test_a_date_shaped_name_that_is_no_date_is_mv001_and_still_read():
    events, problems = parse("# 2026-02-30\n\n## 09:00 - Belief\nx\n", "memory/2026-02-30.md")
    assert [(p.code, p.line, p.severity) for p in problems] == [("MV001", 1, "error")]
    assert [e.type for e in events] == ["note", "note"] and events[-1].content == "x"
    _, problems = parse("# x\n", "memory/2026-13-01-planung.md")
    assert [p.code for p in problems] == ["MV001"]


@pytest.mark.parametrize("title, warned", [
    ("2026-02-01", False), ("2026-02-01 - Config & Setup Session", False), ("Config Session", False),
    ("2026-02-02", True), ("2026-02-02 - Config", True), ("2026-02-30 typo", False),
])
def test_mv002_only_for_a_title_that_starts_with_another_date(title, warned):
    _, problems = parse(f"# {title}\n\n## A\nx\n")
    assert [p.code for p in problems] == (["MV002"] if warned else [])


# ---------------------------------------------------------------------------- MV003


@pytest.mark.parametrize("heading, attempt", [
    ("Was passiert ist", False), ("Build Action ✅", False), ("Heartbeat Checklist", False),
    ("14:30 Meeting", False), ("9:15", False), ("Decision - use Postgres", False), ("Decisions", False),
    ("Meeting notes - Decision on DB", False), ("Config - Belief system", False), ("2026-02-01 Review", False),
    ("14:30 decision about the DB", False), ("14:30 - Decision about the DB", False),
    ("12:00 - Observation deck visit", False), ("14:30 - Standup with the team", False),
    ("14:30 Decision", True), ("14:30 Decision: Postgres", True), ("9am - Decision", True),
    ("14.30 - Belief", True), ("Morning - Belief", True), ("Morgens \u2013 Observation: Kaffee", True),
    ("\u0661\u0665:\u0660\u0660 - Belief", True), ("10:00 | Correction", True), ("14:38 - Standup - Decision", True),
])
def test_mv003_only_for_an_attempt_at_an_entry_heading(heading, attempt):
    events, problems = parse(f"# 2026-02-01\n\n## {heading}\nText bleibt erhalten\n")
    assert [p.code for p in problems] == (["MV003"] if attempt else [])
    assert [e.type for e in events] == ["note"] and events[0].content == "Text bleibt erhalten"


def test_mv003_is_for_level_two_only_and_other_failures_keep_their_text():
    events, problems = parse("# 2026-02-01\n\n### 14:30 Decision\na\n## 25:00 - Belief\nb\n## 10:00 - Feeling\nc\n")
    assert [(p.code, p.line) for p in problems] == [("MV004", 5), ("MV005", 7)]
    assert [(e.type, e.content) for e in events] == [("note", "a"), ("note", "b"), ("feeling", "c")]


def test_extra_types_count_as_attempts():
    cfg = Config(timezone="UTC", extra_types=("Lesson",))
    got = parse_log("# 2026-02-01\n\n## 14:30 Lesson\nx\n", "memory/2026-02-01.md", cfg)
    assert [p.code for p in got.problems] == ["MV003"]


# ----------------------------------------------------------- timed titles and MV005


@pytest.mark.parametrize("heading, kind, codes", [
    # A known type alone or before a separator: the entry the format documents.
    ("09:15 - Decision", "decision", []), ("09:15 - Decision - Hosting", "decision", []),
    ("09:15 \u2014 Decision: Hosting", "decision", []), ("09:15 - decision (Hetzner)", "decision", []),
    ("09:15 - Observation \u2705", "observation", []), ("09:15:30 - Belief #kaffee", "belief", []),
    ("09:15 \u2013 Correction | Preis", "correction", []),
    # A time before a title: a timed note, no problem (the real vaults' 19 MV005 were these).
    ("14:00 \u2014 Brand Lead Gen Deep Dive", "note", []), ("05:03 \u2014 Heartbeat / Night Shift Check", "note", []),
    ("12:00 - Observation deck visit", "note", []), ("14:30 - Standup with the team", "note", []),
    ("07:00 \u2013 Brief: M\u00e4rkte und Termine", "note", []), ("10:00 - \u00dcbergabe an Team B", "note", []),
    ("19:30 - Reservation: Tisch f\u00fcr vier", "note", []), ("14:30 - Decisions for Q3", "note", []),
    ("16:00 - Revision: Entwurf 2", "note", []), ("08:00 - Note: Zahnarzt anrufen", "note", []),
    # An attempt: the word alone, or a slip of a known type before a separator (MV005, kept typed).
    ("14:30 - Meeting", "meeting", ["MV005"]), ("14:30 - Decisions: Preise Q3", "decisions", ["MV005"]),
    ("14:30 - Decison", "decison", ["MV005"]), ("14:30 - Belie - Kaffee", "belie", ["MV005"]),
    ("14:30 - Obervaton: Vogel", "obervaton", ["MV005"]), ("14:30 - Desicion - DB", "desicion", ["MV005"]),
    ("14:30 - Obs: Eisvogel", "obs", ["MV005"]), ("14:30 - Beleif", "beleif", ["MV005"]),
    # A bad time stays an attempt.
    ("25:00 - Standup with the team", "note", ["MV004"]),
])
def test_only_a_type_standing_alone_makes_a_timed_heading_an_entry(heading, kind, codes):
    events, problems = parse(f"# 2026-02-01\n\n## {heading}\nInhalt\n")
    (ev,) = events
    assert (ev.type, [p.code for p in problems]) == (kind, codes)
    assert ev.content == "Inhalt"
    if kind == "note":  # the heading keeps its words and gives the note its time
        assert ev.title == heading and ev.id.startswith("2026-02-01#")
        assert ev.timestamp.strftime("%H:%M") == ("00:00" if "MV004" in codes else heading[:5])


def test_a_typed_entry_keeps_its_title_and_a_slip_is_named():
    events, problems = parse("# 2026-02-01\n\n## 09:15 - Decision: Hosting bei Hetzner\nx\n"
                             "## 10:00 - Decisions - Preise\ny\n## 11:00 - Meeting\nz\n")
    assert [(e.id, e.type, e.title) for e in events] == [
        ("2026-02-01T09:15", "decision", "Hosting bei Hetzner"), ("2026-02-01T10:00", "decisions", "Preise"),
        ("2026-02-01T11:00", "meeting", "")]
    assert "did you mean 'Decision'?" in problems[0].message and "did you mean" not in problems[1].message


def test_a_timed_title_with_invisible_characters_is_no_hidden_entry():
    events, problems = parse("# 2026-02-01\n\n## 14:30\u00a0- Standup with the team\nx\n## 15:00 - Be\u200blief\ny\n")
    assert [e.type for e in events] == ["note", "belief"]
    assert [(p.code, p.line) for p in problems] == [("MV017", 5)]


# ------------------------------------------------------------------------- references


REFERENCE_LOG = """# 2026-02-10

## 09:00 - Belief
User prefers coffee in the morning
^cof

## 10:00 - Observation
The README shows an animated GIF of the dashboard

## 11:00 - Correction
User prefers tea in the morning, not coffee
Supersedes: belief about coffee in the morning

## 12:00 - Correction
The README now shows a screenshot, not a GIF
Supersedes: observation about GIF in README from 2026-02-10

## 13:00 - Observation
reconfirm
Reconfirms: [[2026-02-10#09:00]]
Reconfirms: ^cof
"""

FREEFORM_NOISE = """
## Kaffee und Tee
User prefers coffee in the morning, the README GIF of the dashboard, a screenshot, coffee morning ^cof

### 09:00 Morgenroutine
- 09:00 coffee in the morning, README, GIF, dashboard
"""


def test_adding_notes_changes_no_existing_reference(tmp_path):
    def resolved(extra: str) -> dict[str, str | None]:
        root = tmp_path / str(len(extra))
        (root / "memory").mkdir(parents=True)
        (root / "memvault.toml").write_text('[vault]\ntimezone = "UTC"\n')
        (root / "MEMORY.md").write_text("# Memory\n\n## Prefs\n- Likes coffee (source: [[2026-02-10#09:00 - Belief]])\n")
        (root / "memory" / "2026-02-10.md").write_text(REFERENCE_LOG + extra)
        (root / "memory" / "2026-02-11.md").write_text("# 2026-02-11\n\n## 08:00 - Correction\nno GIF at all\n"
                                                       "Supersedes: the screenshot in the README\nReconfirms: the README GIF\n" + extra)
        with Vault.open(root) as vault:
            tl = vault.timeline
            assert any(e.is_note for e in tl.events) == bool(extra)
            out = {e.id: tl.supersedes.get(e.id) for e in tl.events if not e.is_note}
            out |= {f"r:{k}": ",".join(v) for k, v in tl.reconfirms_of.items()}
            out["links"] = ",".join(str(tl.index.resolve(f"[[{s}]]").target) for e in tl.events for s in e.sources)
            return out

    before = resolved("")
    assert before["2026-02-10T11:00"] == "2026-02-10T09:00" and before["2026-02-10T12:00"] == "2026-02-10T10:00"
    assert before["2026-02-11T08:00"] == "2026-02-10T12:00" and "r:2026-02-11T08:00" not in before  # ambiguous stays so
    assert before["r:2026-02-10T13:00"] == "2026-02-10T09:00,2026-02-10T09:00"
    assert resolved(FREEFORM_NOISE) == before


def test_links_may_name_a_note(notes_vault: Vault):
    idx = notes_vault.timeline.index
    assert idx.resolve("[[2026-02-01#Was passiert ist#Build Action ✅]]").target == "2026-02-01#was-passiert-ist/build-action"
    assert idx.resolve("[[2026-02-01#Heartbeat Checklist]]").target == "2026-02-01#was-passiert-ist/heartbeat-checklist"
    assert idx.resolve("[[2026-02-02#Log]]").target == "2026-02-02#log@08:30"  # a section: its first note
    assert idx.resolve("[[2026-02-01#09:15]]").target == "2026-02-01T09:15"  # the entry, as before
    assert idx.resolve("2026-02-02#log@14:30-2").target == "2026-02-02#log@14:30-2"
    # A description never means a note, even one that matches every word.
    res = idx.resolve("the LRU cache of parsed feeds")
    assert not res.ok and "2026-02-05" not in str(res.candidates)


def test_check_reports_a_link_to_a_missing_section_and_accepts_one_to_a_note(tmp_path, runner):
    from memvault.cli import cli

    from .helpers_check import write_vault

    root = write_vault(tmp_path / "v", {
        "memory/2026-02-01.md": "# 2026-02-01\n\n## Was passiert ist\nviel\n",
        "memory/2026-02-02.md": "# 2026-02-02\n\n## Rückblick\nsiehe [[2026-02-01#Was passiert ist]] und [[2026-02-01#Gibt es nicht]]\n",
    })
    result = runner.invoke(cli, ["--vault", str(root), "check"])
    assert result.output.count("MV401") == 1 and "Gibt es nicht" in result.output, result.output


# ---------------------------------------------------------------------------- writing


def test_log_into_a_freeform_day_keeps_every_note_id(tmp_path):
    from memvault.write.log import insert_entry

    text = (Path(__file__).parent / "data" / "notes" / "memory" / "2026-02-02.md").read_text()
    rel = "memory/2026-02-02.md"
    root = tmp_path / "v"
    (root / "memory").mkdir(parents=True)
    (root / "memvault.toml").write_text('[vault]\ntimezone = "UTC"\n')
    (root / rel).write_text(text)
    with Vault.open(root) as vault:
        before = {e.id: e.content for e in parse_log(text, rel, vault.config).events}
        draft = Event("", "decision", datetime(2026, 2, 2, 12, 0, tzinfo=ZoneInfo("UTC")), "Noon decision", rel, 0, 0)
        new, line = insert_entry(text, draft, rel, vault)
        after = {e.id: e.content for e in parse_log(new, rel, vault.config).events}
    assert new.split("\n")[line - 1] == "## 12:00 - Decision"
    assert line < text.split("\n").index("## 16:00 - Observation") + 1 + 2  # before the later entry …
    assert line > 9  # … not inside the Log section's timed bullets
    assert {k: v for k, v in after.items() if k != "2026-02-02T12:00"} == before


def test_a_title_that_says_more_than_its_date_is_searchable():
    events, _ = parse("# 2026-03-02 - Zanzibar offsite\n\n## Plan\n- book flights\n", "memory/2026-03-02.md")
    title = by_id(events)["2026-03-02#_"]
    assert (title.title, title.content, title.line, title.end_line) == ("2026-03-02 - Zanzibar offsite", "", 1, 1)
    bare, _ = parse("# 2026-03-02\n\n## Plan\n- book flights\n", "memory/2026-03-02.md")
    assert [e.id for e in bare] == ["2026-03-02#plan"]  # a date alone is no note
    with_text, _ = parse("# Quokka-Ideen\n\nLose Sammlung.\n\n## Plan\n- x\n", "memory/projects/ideen.md",
                         file_date=date(2026, 3, 1))
    assert by_id(with_text)["projects/ideen#_"].title == "Quokka-Ideen"


def test_a_section_of_rules_alone_is_no_note_text():
    events, _ = parse("# 2026-02-01\n\n## Trennlinie\n\n---\n\n## Inhalt\nText\n\n***\n", "memory/2026-02-01.md")
    got = {e.id: (e.content, e.line, e.end_line) for e in events}
    assert got == {"2026-02-01#trennlinie": ("", 3, 3), "2026-02-01#inhalt": ("Text", 7, 8)}
