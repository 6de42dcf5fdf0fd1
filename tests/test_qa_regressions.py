"""Regressions found by hands-on QA: each test failed before its fix."""

from __future__ import annotations

import json
import re
import tomllib
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from memvault.check.registry import CHECK_DEFAULTS
from memvault.cli import cli
from memvault.config.curate import DEFAULTS as CURATE_DEFAULTS
from memvault.entries.timeparse import parse_time
from memvault.errors import InputError
from memvault.search.index.core import INDEX_DEFAULTS
from memvault.search.weights import SEARCH_DEFAULTS
from memvault.vault import Vault
from memvault.write.log import TEMPLATE

from .conftest import git

TEMPLATE_TOML = TEMPLATE / "memvault.toml"
REPO = Path(__file__).resolve().parent.parent
SECTION_DEFAULTS = {"search": SEARCH_DEFAULTS, "index": INDEX_DEFAULTS, "curate": CURATE_DEFAULTS,
                    "checks": CHECK_DEFAULTS}


def test_template_settings_are_keys_the_code_reads_with_its_defaults():
    # The template said `w_relevance = 0.5`, `w_importance = 0.3`: keys nothing reads, values that
    # were not the defaults; editing them silently changed nothing.
    raw = tomllib.loads(TEMPLATE_TOML.read_text(encoding="utf-8"))
    for name, defaults in SECTION_DEFAULTS.items():
        for key, value in raw.get(name, {}).items():
            assert key in defaults, f"[{name}] {key} is not a setting memvault reads"
            assert value == defaults[key], f"[{name}] {key} = {value!r} but the default is {defaults[key]!r}"


def test_template_points_at_docs_that_exist():
    text = TEMPLATE_TOML.read_text(encoding="utf-8")
    for doc in re.findall(r"docs/[\w-]+\.md", text):
        assert (REPO / doc).is_file(), doc


def _plain_vault(root: Path) -> Path:
    (root / "memory").mkdir(parents=True, exist_ok=True)
    (root / "memvault.toml").write_text('[vault]\ntimezone = "UTC"\n')
    (root / "memory" / "2026-02-21.md").write_text("# 2026-02-21\n\n## 09:00 - Belief\nUser likes tea\n")
    return root


def test_an_os_error_is_a_message_naming_the_path_not_a_traceback(runner, vault_dir):
    # `.memvault` left as a file (or a read-only disk): log and search used to print a traceback.
    _plain_vault(vault_dir)
    (vault_dir / ".memvault").write_text("not a directory")
    for args in (["log", "hello there"], ["search", "tea"]):
        result = runner.invoke(cli, args)
        assert result.exit_code == 1, (args, result.output)
        assert isinstance(result.exception, SystemExit), (args, result.exception)  # not an OSError
        assert str(vault_dir / ".memvault") in result.output, (args, result.output)
    assert [e.content for e in Vault.open(vault_dir).events] == ["User likes tea"]


def test_a_usage_error_from_the_library_shows_the_commands_own_usage(runner, vault_dir):
    _plain_vault(vault_dir)
    result = runner.invoke(cli, ["log", "--at", "next blursday", "hello"], prog_name="memvault")
    assert result.exit_code == 2
    assert "Usage: memvault log [OPTIONS] TEXT..." in result.output
    assert "Try 'memvault log --help'" in result.output
    hook = runner.invoke(cli, ["hook", "install", "--help"], prog_name="memvault")
    assert hook.exit_code == 0 and "Usage: memvault hook install" in hook.output


def _future_vault(root: Path) -> tuple[str, str, str]:
    """A belief from yesterday, a correction of it dated tomorrow, and a plain entry for tomorrow."""
    now = datetime.now(UTC)
    past, future = (now - timedelta(days=1)).date(), (now + timedelta(days=1)).date()
    (root / "memory").mkdir(parents=True)
    (root / "memvault.toml").write_text('[vault]\ntimezone = "UTC"\n')
    (root / "memory" / f"{past}.md").write_text(f"# {past}\n\n## 09:00 - Belief\nStandup is at nine\n")
    (root / "memory" / f"{future}.md").write_text(
        f"# {future}\n\n## 09:00 - Correction\nStandup moves to ten\nSupersedes: {past}T09:00\n"
        "Importance: high\n")
    return f"{past}T09:00", f"{future}T09:00", "Standup moves to ten"


def test_list_and_show_judge_live_as_of_now_like_search_and_asof(runner, vault_dir):
    # `list` showed a future-dated entry as live (and the entry it will supersede as superseded),
    # while `search` and `asof now` said the opposite.
    belief, correction, _ = _future_vault(vault_dir)
    listed = json.loads(runner.invoke(cli, ["list", "--json"]).output)
    assert [(d["id"], d["status"], d["superseded_by"]) for d in listed] == [(belief, "live", None)]
    asof_now = json.loads(runner.invoke(cli, ["asof", "now", "--json"]).output)
    assert [d["id"] for d in asof_now] == [d["id"] for d in listed]
    everything = json.loads(runner.invoke(cli, ["list", "--all", "--json"]).output)
    assert {d["id"]: d["status"] for d in everything} == {belief: "live", correction: "future"}
    shown = json.loads(runner.invoke(cli, ["show", correction, "--json"]).output)
    assert shown["status"] == "future"
    text = runner.invoke(cli, ["show", correction]).output
    assert "[future]" in text and "importance 0.9" in text
    vault = Vault.open(vault_dir)
    assert vault.timeline.status(vault.get(belief), vault.now()) == "live"


def test_log_refuses_an_explicit_id_that_check_would_reject(runner, vault_dir):
    # `log --id D1` twice wrote a duplicate id (MV010); `--id "a b"` and `--id ""` wrote ids
    # that MV207/MV205 reject, and printed a different id than the one asked for.
    _plain_vault(vault_dir)
    assert runner.invoke(cli, ["log", "--id", "D1", "--at", "2026-02-21 10:00", "first"]).exit_code == 0
    for bad in ("D1", "2026-02-21T09:00", "a b", ""):
        result = runner.invoke(cli, ["log", "--id", bad, "--at", "2026-02-21 11:00", "second"])
        assert result.exit_code == 2, (bad, result.output)
    dup = runner.invoke(cli, ["log", "--id", "D1", "again"])
    assert "already used by memory/2026-02-21.md:6" in dup.output
    vault = Vault.open(vault_dir)
    assert [e.id for e in vault.events] == ["2026-02-21T09:00", "D1"]
    assert vault.problems == []


def test_log_refuses_text_whose_last_line_would_turn_into_metadata(runner, vault_dir):
    # "multi\nline\nTags: fake" was logged as the text "multi\nline" with the tag "fake".
    _plain_vault(vault_dir)
    before = (vault_dir / "memory" / "2026-02-21.md").read_text()
    result = runner.invoke(cli, ["log", "--at", "2026-02-21 10:00", "Deploy notes\nTags: fake"])
    assert result.exit_code == 2 and "--tags" in result.output
    assert (vault_dir / "memory" / "2026-02-21.md").read_text() == before
    ok = runner.invoke(cli, ["log", "--at", "2026-02-21 10:00", "Ratio is 3:1\nNote: tags: later"])
    assert ok.exit_code == 0, ok.output
    assert Vault.open(vault_dir).get(ok.output.strip()).content == "Ratio is 3:1\nNote: tags: later"


def test_days_ago_takes_a_time_of_day_like_yesterday_does():
    # `log --at "3 days ago 14:30"` was refused while "yesterday 16:00" worked.
    tz = ZoneInfo("Europe/Berlin")
    now = datetime(2026, 3, 30, 1, 30, tzinfo=tz)  # the night DST started: 72 h ago is another clock
    assert parse_time("3 days ago 14:30", tz, now) == datetime(2026, 3, 27, 14, 30, tzinfo=tz)
    assert parse_time("2 weeks ago at 9am", tz, now) == datetime(2026, 3, 16, 9, tzinfo=tz)
    assert parse_time("1 day ago noon", tz, now) == parse_time("yesterday noon", tz, now)
    with pytest.raises(InputError, match="time of day"):
        parse_time("3 days ago at lunch", tz, now)


LONG = ("We agreed that the Atlas prototype keeps its data in one SQLite file next to the service, "
        "with nightly copies to the backup bucket, and revisit at {n} users.")


def test_history_text_shows_commit_times_in_the_vault_zone_and_the_edit_itself(runner, vault_dir):
    # Commit times were printed in UTC beside entry times in the vault's zone, and an edit near
    # the end of a long entry was cut off ("was: ... Impo…" / "now: ... I…"), hiding the change.
    (vault_dir / "memory").mkdir()
    (vault_dir / "memvault.toml").write_text('[vault]\ntimezone = "Europe/Berlin"\n')
    log = vault_dir / "memory" / "2026-02-14.md"
    git(vault_dir, "init", "-q")
    for n, when in ((10_000, "2026-02-14T18:00:00+00:00"), (20_000, "2026-02-15T23:30:00+00:00")):
        log.write_text("# 2026-02-14\n\n## 14:30 - Decision\n" + LONG.format(n=f"{n:,}") + "\n")
        git(vault_dir, "add", "-A")
        git(vault_dir, "commit", "-q", "--no-verify", "-m", "x",
            env={"GIT_COMMITTER_DATE": when, "GIT_AUTHOR_DATE": when})
    result = runner.invoke(cli, ["history", "2026-02-14T14:30"])
    assert result.exit_code == 0, result.output
    assert "2026-02-14T19:00" in result.output and "2026-02-16T00:30" in result.output
    assert "revisit at 10,000 users" in result.output and "revisit at 20,000 users" in result.output
    data = json.loads(runner.invoke(cli, ["history", "2026-02-14T14:30", "--json"]).output)
    assert [c["change"] for c in data["commits"]] == ["added", "edited"]


def test_a_description_sharing_one_word_is_unresolved_not_ambiguous(vault_dir):
    # "something that does not exist" was "ambiguous" between five unrelated MEMORY.md bullets,
    # because "not" matched the crude stem of their section title "Notes".
    _plain_vault(vault_dir)
    (vault_dir / "MEMORY.md").write_text(
        "# Long-Term Memory\n\n## Notes\n- CI takes 14 minutes\n- The build server is slow\n")
    day = vault_dir / "memory" / "2026-02-21.md"
    day.write_text(day.read_text() + "\n## 10:00 - Correction\nNo\nSupersedes: something that does not exist\n"
                   "\n## 11:00 - Correction\nCoffee\nSupersedes: tea and something else entirely\n")
    problems = {p.line: p.message for p in Vault.open(vault_dir).problems}
    assert problems[6] == ("Supersedes 'something that does not exist' does not resolve: "
                           "no earlier entry matches 'something that does not exist'")
    assert "does not resolve: no earlier entry has half of its words; closest: 2026-02-21T09:00" in problems[10]


def test_a_failing_editor_in_curate_review_keeps_the_review_going(runner, vault_dir, monkeypatch):
    # EDITOR=false (or a typo'd editor) aborted the whole review: what was accepted was lost.
    _plain_vault(vault_dir)
    (vault_dir / "MEMORY.md").write_text("# Long-Term Memory\n\n## Decisions\n")
    day = vault_dir / "memory" / "2026-02-21.md"
    day.write_text(day.read_text() + "\n## 10:00 - Decision\nUse SQLite for the Atlas prototype\n")
    monkeypatch.setenv("EDITOR", "false")
    result = runner.invoke(cli, ["curate", "-i", "--at", "2026-02-22 12:00"], input="y\ne\nn\n")
    assert result.exit_code == 0, result.output
    assert "not used: " in result.output and "$EDITOR" in result.output
    memory = (vault_dir / "MEMORY.md").read_text()
    assert "User likes tea" in memory and "Use SQLite" not in memory


def test_list_names_the_known_types_when_given_an_unknown_one(runner, vault_dir):
    _plain_vault(vault_dir)
    day = vault_dir / "memory" / "2026-02-21.md"
    day.write_text(day.read_text() + "\n## 10:00 - Feeling\nKept though unknown\n")
    result = runner.invoke(cli, ["list", "--type", "beliefs"])
    assert result.exit_code == 2
    assert "no such type; known: belief, correction, decision, feeling, observation" in result.output
    found = json.loads(runner.invoke(cli, ["list", "--type", "Belief", "--type", "feeling", "--json"]).output)
    assert [d["type"] for d in found] == ["belief", "feeling"]


def test_log_keeps_a_files_crlf_and_bom_and_refuses_to_mangle_bad_utf8(runner, vault_dir):
    # Logging into a CRLF file (Notepad) rewrote every line to LF; a BOM was dropped; invalid
    # UTF-8 bytes elsewhere in the file were silently replaced with U+FFFD.
    _plain_vault(vault_dir)
    crlf = vault_dir / "memory" / "2026-02-20.md"
    crlf.write_bytes(b"\xef\xbb\xbf# 2026-02-20\r\n\r\n## 08:00 - Observation\r\nFrom Notepad\r\n")
    for at in ("2026-02-20 09:00", "2026-02-20 07:00"):  # appended, then inserted before
        assert runner.invoke(cli, ["log", "--at", at, "logged"]).exit_code == 0
    raw = crlf.read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf# 2026-02-20\r\n") and b"\n" not in raw.replace(b"\r\n", b"")
    assert [e.timestamp.hour for e in Vault.open(vault_dir).events if e.file.endswith("20.md")] == [7, 8, 9]
    bad = vault_dir / "memory" / "2026-02-19.md"
    bad.write_bytes(b"# 2026-02-19\n\n## 08:00 - Observation\nbad \xff byte\n")
    result = runner.invoke(cli, ["log", "--at", "2026-02-19 09:00", "more"])
    assert result.exit_code == 1 and "memory/2026-02-19.md:4: invalid UTF-8" in result.output
    assert bad.read_bytes() == b"# 2026-02-19\n\n## 08:00 - Observation\nbad \xff byte\n"


def test_log_never_renumbers_an_existing_entry_of_the_same_minute(runner, vault_dir):
    # `log --at 10:00:30` went in front of "## 10:00:45", which became …T10:00-2: the correction's
    # `Supersedes: …T10:00` then pointed at the new entry and the original belief came back live.
    _plain_vault(vault_dir)
    (vault_dir / "memory" / "2026-02-20.md").write_text(
        "# 2026-02-20\n\n## 10:00:45 - Belief\nThe original belief\n\n"
        "## 11:00 - Correction\nCorrects it\nSupersedes: 2026-02-20T10:00\n")
    result = runner.invoke(cli, ["log", "--at", "2026-02-20 10:00:30", "logged later"])
    assert result.exit_code == 0 and result.output.strip() == "2026-02-20T10:00-2"
    vault = Vault.open(vault_dir)
    assert vault.get("2026-02-20T10:00").content == "The original belief"
    assert vault.as_dict(vault.get("2026-02-20T10:00"))["superseded_by"] == "2026-02-20T11:00"
    assert vault.get("2026-02-20T10:00-2").content == "logged later"
    early = runner.invoke(cli, ["log", "--at", "2026-02-20 09:59:59", "just before"])
    assert early.output.strip() == "2026-02-20T09:59"
    in_file = sorted((e for e in Vault.open(vault_dir).events if e.file.endswith("20.md")), key=lambda e: e.line)
    assert [e.content for e in in_file] == ["just before", "The original belief", "logged later", "Corrects it"]


def test_log_dash_reads_the_text_from_stdin(runner, vault_dir):
    # `memvault log -` logged an entry whose whole text was "-".
    _plain_vault(vault_dir)
    text = "Meeting notes:\n\n- Alice owns the API\n- ship on Tuesday\n"
    result = runner.invoke(cli, ["log", "--at", "2026-02-21 10:00", "-"], input=text)
    assert result.exit_code == 0, result.output
    assert Vault.open(vault_dir).get(result.output.strip()).content == text.strip()
    empty = runner.invoke(cli, ["log", "-"], input="")
    assert empty.exit_code == 2 and "empty" in empty.output
