"""When a note was written, as real agent workspaces say it (issue 12): dates anywhere in a
heading (ISO, German numeric, English and German month names, Chinese), am/pm written once at
the end of a range, and agent log items stamped `2026-03-19T03:14:04.630Z`."""

from __future__ import annotations

import json
from datetime import date
from zoneinfo import ZoneInfo

import pytest

from memvault.cli import cli
from memvault.config.core import Config
from memvault.entries.daily import parse_log
from memvault.entries.model import Event
from memvault.entries.notes import heading_when, lead_clock, stamp, timed_items

from .conftest import git

BERLIN = ZoneInfo("Europe/Berlin")
D = date


def parse(text: str, path: str = "memory/2026-03-19.md", zone: str = "UTC", **kw) -> tuple[list[Event], list]:
    got = parse_log(text, path, Config(timezone=zone), **kw)
    return got.events, got.problems


def stamps(events: list[Event]) -> list[tuple[str, str]]:
    return [(e.id, e.timestamp.strftime("%Y-%m-%d %H:%M:%S")) for e in events]


# ------------------------------------------------------------------- heading dates


@pytest.mark.parametrize("text, day, clock", [
    # Where real workspaces put the date: not only at the start.
    ("Daily Log \u2014 2026-01-31 (Saturday)", D(2026, 1, 31), None),
    ("Session: 2026-01-29 23:30:11 UTC", D(2026, 1, 29), (23, 30, 11)),
    ("Session 2026-01-29T08:05", D(2026, 1, 29), (8, 5, 0)),
    ("Daily Notes - January 26, 2026", D(2026, 1, 26), None),
    ("Daily Notes \u2014 Feb 8, 2026", D(2026, 2, 8), None),
    ("Saturday, January 31st, 2026 \u2014 14:00 Retro", D(2026, 1, 31), (14, 0, 0)),
    ("Notes 26 January 2026", D(2026, 1, 26), None),
    ("26. Januar 2026", D(2026, 1, 26), None),
    ("Montag, 3. Februar 2026", D(2026, 2, 3), None),
    ("M\u00e4rz: 1. M\u00e4rz 2026, 9:30 Steuer", D(2026, 3, 1), (9, 30, 0)),
    ("24.01.2026", D(2026, 1, 24), None),
    ("Tagebuch 24.1.2026 \u2013 Umzug", D(2026, 1, 24), None),
    ("Besprechung am 10.02.2026, 14:00", D(2026, 2, 10), (14, 0, 0)),
    ("2026\u5e741\u670831\u65e5 \u5468\u516d", D(2026, 1, 31), None),
    ("**2026-06-27** 23:00", D(2026, 6, 27), (23, 0, 0)),
    ("[2026-01-24] Notizen", D(2026, 1, 24), None),
    ("14:00 Call \u2014 2026-01-24", D(2026, 1, 24), (14, 0, 0)),
    # The same day twice is one date.
    ("2026-01-24 Daily notes (24.01.2026)", D(2026, 1, 24), None),
    # Two different days: a range or a reference, not when it was written.
    ("2026-01-01 to 2026-01-31 review", None, None),
    ("Woche 26.01.2026 \u2013 01.02.2026, 10:00", None, None),
    # Not dates: versions, ids, ratios, months without a day, impossible days, words near month names.
    ("Release v2026.01.31", None, None), ("Upgrade 1.2.2026.3", None, None), ("Build 2026.01.31", None, None),
    ("task-2026-01-31", None, None), ("Ticket 2026-01-31-001", None, None), ("Ratio 16:9 screens", None, None),
    ("Januar 2026 \u2014 Tagesnotizen", None, None), ("May 2026 plans", None, None), ("30. Februar 2026", None, None),
    ("Marathon 12, 2026", None, None), ("Pfad /2026-01-31/", None, None),
])
def test_a_headings_one_date_anywhere_dates_it(text, day, clock):
    assert heading_when(text) == (day, clock)


def test_a_date_after_the_file_names_day_is_a_plan_wherever_it_stands():
    assert heading_when("Steuerberater am 15. Februar 2026, 10:00", D(2026, 2, 1)) == (None, None)
    assert heading_when("Nachtrag vom 30.01.2026", D(2026, 2, 1)) == (D(2026, 1, 30), None)


# ---------------------------------------------------------------- am/pm on ranges


@pytest.mark.parametrize("text, clock", [
    ("Debugging (9:18-10:00 PM)", (21, 18, 0)),
    ("System Audit (~12:30-12:45am)", (0, 30, 0)),
    ("Late fix (11:16 PM)", (23, 16, 0)),
    ("6:00 AM \u2014 Wake-up routine", (6, 0, 0)),
    ("Call 9:00 \u2013 9:30 p.m.", (21, 0, 0)),
    ("Lunch 11:00-1:00 PM", (11, 0, 0)),  # the start is in the other half of the day
    ("Night shift 11:30 to 12:15 AM", (23, 30, 0)),
    ("Workboard API Fix (10:00-11:00 BST)", (10, 0, 0)),
    ("Review 14:00-15:00 pm", (14, 0, 0)),  # a 24-hour start keeps its hour
    ("\u665a\u4e0a\uff0820:30-21:00\uff09", (20, 30, 0)),
    ("\u4e0a\u5348 9:00-10:30 \u4f1a\u8bae", (9, 0, 0)),
])
def test_am_pm_at_the_end_of_a_range_is_the_starts_too(text, clock):
    assert heading_when(text) == (None, clock)


def test_a_timed_bullet_range_takes_its_am_pm_too():
    assert lead_clock("9:18-10:00 PM debugging the gateway") == (21, 18, 0)
    assert lead_clock("9:18-10:00 debugging") == (9, 18, 0)


# ------------------------------------------------------------- timestamped items


@pytest.mark.parametrize("text, zone, expected", [
    ("2026-03-19T03:14:04.630Z [decision:agent:main] use sqlite", "UTC", (D(2026, 3, 19), (3, 14, 4), "@2026-03-19T03:14")),
    ("2026-03-19T03:14:04.630Z [decision:agent:main] use sqlite", "Europe/Berlin", (D(2026, 3, 19), (4, 14, 4), "@2026-03-19T03:14")),
    ("2026-03-19T23:30:00Z late", "Europe/Berlin", (D(2026, 3, 20), (0, 30, 0), "@2026-03-19T23:30")),
    ("2026-03-19 03:14 restarted the gateway", "Europe/Berlin", (D(2026, 3, 19), (3, 14, 0), "@2026-03-19T03:14")),
    ("[2026-03-19 10:00:05 +01:00] cron ok", "UTC", (D(2026, 3, 19), (9, 0, 5), "@2026-03-19T10:00")),
    ("`2026-03-19T10:00-0530` Mumbai", "UTC", (D(2026, 3, 19), (15, 30, 0), "@2026-03-19T10:00")),
    ("**2026-03-19 07:45 UTC** Backup", "Europe/Berlin", (D(2026, 3, 19), (8, 45, 0), "@2026-03-19T07:45")),
    ("2026-03-19: no time, a changelog line", "UTC", None),
    ("2026-03-19T25:00Z", "UTC", None), ("2026-02-30T10:00Z", "UTC", None), ("2026-03-19T10:00+25:00", "UTC", None),
    ("2026-03-19T10:00Zulu", "UTC", None),
])
def test_stamp(text, zone, expected):
    assert stamp(text, ZoneInfo(zone)) == expected


def test_timed_items_mix_times_and_stamps_only_at_the_top_level():
    lines = ["- 14:30 Standup", "  - 2026-03-19T03:14Z nested", "- 2026-03-19T03:14Z top", "text 2026-03-19 03:14",
             "1. 2026-03-20 08:00 numbered", "- 2026-04-01 10:00 Zahnarzt"]
    got = timed_items(lines, [False] * len(lines), 0, len(lines), BERLIN, D(2026, 3, 20))
    assert got == [(0, (14, 30, 0), None, "@14:30"), (2, (4, 14, 0), D(2026, 3, 19), "@2026-03-19T03:14"),
                   (4, (8, 0, 0), D(2026, 3, 20), "@2026-03-20T08:00")]  # the April item is a plan
    assert timed_items(lines, [False] * len(lines), 0, len(lines)) == [(0, (14, 30, 0), None, "@14:30")]


AGENT_LOG = """# Agent log

## Decisions
- 2026-03-19T03:14:04.630Z [decision:agent:main] Use SQLite for the queue
  - reason: one process, no server
- 2026-03-19T03:14:40.002Z [decision:agent:main] Retry twice, then alert
- 2026-03-19T23:30:00Z [observation:agent:cron] Disk 71 %
- untimed follow-up of the disk check
"""


def test_an_agent_logs_stamped_items_are_notes_at_their_own_time_in_the_vaults_zone():
    events, problems = parse(AGENT_LOG, "memory/agent-log.md", zone="Europe/Berlin", file_date=D(2026, 1, 5))
    assert stamps(events) == [
        ("agent-log#_", "2026-01-05 00:00:00"),  # the file's title, dated like the file
        ("agent-log#decisions@2026-03-19T03:14", "2026-03-19 04:14:04"),
        ("agent-log#decisions@2026-03-19T03:14-2", "2026-03-19 04:14:40"),
        ("agent-log#decisions@2026-03-19T23:30", "2026-03-20 00:30:00"),  # UTC 23:30 is Berlin's next day
    ]
    assert events[1].content.endswith("reason: one process, no server")
    assert events[-1].content.endswith("untimed follow-up of the disk check")
    assert problems == []
    # Ids say what is written: the vault's zone changes no id.
    assert [e.id for e in parse(AGENT_LOG, "memory/agent-log.md", zone="UTC", file_date=D(2026, 1, 5))[0]] == [
        e.id for e in events]


def test_a_days_file_keeps_plain_timed_bullets_and_dates_stamped_ones():
    text = ("# 2026-03-19\n\n## Log\nMorgens ruhig.\n- 08:30 Kaffee\n- 2026-03-18 23:50 Nachtrag von gestern\n"
            "- 2026-03-25 10:00 Zahnarzt (geplant)\n- 09:15 Standup\n")
    events, _ = parse(text)
    assert stamps(events) == [
        ("2026-03-19#log", "2026-03-19 00:00:00"),
        ("2026-03-19#log@08:30", "2026-03-19 08:30:00"),
        ("2026-03-19#log@2026-03-18T23:50", "2026-03-18 23:50:00"),  # the plan stays with it
        ("2026-03-19#log@09:15", "2026-03-19 09:15:00"),
    ]
    assert "Zahnarzt" in events[2].content


# ------------------------------------------------------------------ whole files


def test_real_workspace_headings_date_their_sections():
    text = ("# Daily Notes\n\n## Daily Log \u2014 2026-01-31 (Saturday)\n- Gateway neu gestartet\n"
            "### Debugging (9:18-10:00 PM)\n- Token erneuert\n"
            "## Session: 2026-01-29 23:30:11 UTC\nKurz vor Mitternacht\n"
            "## Montag, 3. Februar 2026\n### System Audit (~12:30-12:45am)\nalles gr\u00fcn\n"
            "## 2026-01-01 to 2026-01-31 review\nJanuar war gut.\n"
            "## \u665a\u4e0a\uff0820:30-21:00\uff09\n\u8bfb\u4e66\n")
    events, problems = parse(text, "memory/notes.md", file_date=D(2026, 2, 10))
    assert stamps(events) == [
        ("notes#_", "2026-02-10 00:00:00"),  # the file's title, dated like the file
        ("notes#daily-log-2026-01-31-saturday", "2026-01-31 00:00:00"),
        ("notes#daily-log-2026-01-31-saturday/debugging-9-18-10-00-pm", "2026-01-31 21:18:00"),
        ("notes#session-2026-01-29-23-30-11-utc", "2026-01-29 23:30:11"),
        ("notes#montag-3-februar-2026/system-audit-12-30-12-45am", "2026-02-03 00:30:00"),
        ("notes#2026-01-01-to-2026-01-31-review", "2026-02-10 00:00:00"),  # two days: the file's
        ("notes#\u665a\u4e0a-20-30-21-00", "2026-02-10 20:30:00"),
    ]
    assert problems == []


ARCHIVE = """# Daily Notes Archive \u2014 January 2026

# Daily Notes - January 26, 2026

## Morning
- 8:15 AM Tailscale exit node on the NAS
- Pi-hole as the resolver

## Evening (9:18-10:00 PM)
Watched the quokka documentary.

# Daily Notes - January 27, 2026

## Errands
- Bought coffee
"""


def test_asof_sees_a_month_name_archive_by_its_headings(vault_dir, runner):
    (vault_dir / "memory" / "archive").mkdir(parents=True)
    (vault_dir / "memvault.toml").write_text('[vault]\ntimezone = "UTC"\n')
    (vault_dir / "memory" / "archive" / "january-2026-daily-notes.md").write_text(ARCHIVE)
    env = {"GIT_COMMITTER_DATE": "2026-02-15T20:00:00+00:00", "GIT_AUTHOR_DATE": "2026-02-15T20:00:00+00:00"}
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "compact January"]):
        git(vault_dir, *args, env=env)

    def asof(*args: str) -> list[dict]:
        result = runner.invoke(cli, ["asof", *args, "--json"])
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)

    key = "archive/january-2026-daily-notes#daily-notes-january-26-2026"
    hits = asof("2026-01-26T12:00", "tailscale")
    assert [(h["id"], h["timestamp"]) for h in hits] == [(f"{key}/morning@08:15", "2026-01-26T08:15:00+00:00")]
    assert asof("2026-01-26T08:00", "tailscale") == []  # not yet written; not the commit's day either
    evening = f"{key}/evening-9-18-10-00-pm"
    assert evening not in [h["id"] for h in asof("2026-01-26T21:00", "quokka")]
    assert [(h["id"], h["timestamp"]) for h in asof("2026-01-26T21:30", "quokka")][0] == (evening, "2026-01-26T21:18:00+00:00")
    assert [(h["id"], h["timestamp"]) for h in asof("2026-01-27", "coffee")][0] == (
        "archive/january-2026-daily-notes#daily-notes-january-27-2026/errands", "2026-01-27T00:00:00+00:00")
    assert "errands" not in json.dumps(asof("2026-01-26", "coffee"))

