"""Issue 14, what a QA pass as a new user found: history takes what show takes and follows an entry
with an `Id:` between daily logs, a second `Supersedes:` line is refused, `changes` does not call an
entry committed before its window new, curate's summary names whole ids and its window, and a
wall-clock time the clock change skips is refused. Through the CLI on real vaults and real git;
state checked through the library."""

from __future__ import annotations

import json
import os
import subprocess
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

from memvault.cli import cli
from memvault.curate.promote import plan_curation
from memvault.curate.review import left_out
from memvault.vault import Vault

from .helpers_check import git, hook_env, run_memvault


def _write(root: Path, rel: str, text: str) -> None:
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    (root / rel).write_text(text)


def _commit(root: Path, message: str) -> None:
    git(root, "add", "-A")
    git(root, "commit", "-q", "--no-verify", "-m", message)


# -- a second Supersedes: line -----------------------------------------------------------------

DAY = ("# 2026-11-26\n\n## 09:00 - Belief\nOrion ships in January\n\n"
       "## 11:00 - Belief\nOrion slips to March\nSupersedes: 2026-11-26T09:00\n\n"
       "## 14:00 - Correction\nOrion ships in April, Dana confirmed it\nSupersedes: 2026-11-26T11:00\n")


def test_a_second_supersedes_line_naming_another_entry_is_refused_by_check_and_the_hook(runner, tmp_path):
    root = tmp_path / "v"
    _write(root, "memvault.toml", '[vault]\ntimezone = "Europe/Berlin"\n')
    _write(root, "memory/2026-11-26.md", DAY)
    git(root, "init", "-q")
    _commit(root, "orion")
    assert run_memvault(root, "hook", "install").returncode == 0
    _write(root, "memory/2026-11-26.md", DAY + "Supersedes: 2026-11-26T09:00\n")

    res = runner.invoke(cli, ["--vault", str(root), "check"])
    assert res.exit_code == 1, res.output
    assert "MV212" in res.output and "memory/2026-11-26.md:13" in res.output
    git(root, "add", "-A")
    refused = subprocess.run(["git", "commit", "-qm", "two supersedes"], cwd=root, capture_output=True,
                             text=True, env=hook_env())
    assert refused.returncode != 0
    assert "MV212" in refused.stdout + refused.stderr
    assert git(root, "log", "--format=%s").stdout.split("\n")[0] == "orion"

    # The same target written twice stays the MV206 warning: nothing is revived by it.
    _write(root, "memory/2026-11-26.md", DAY + "Supersedes:  2026-11-26T11:00\n")
    res = runner.invoke(cli, ["--vault", str(root), "check"])
    assert res.exit_code == 0 and "MV206" in res.output and "MV212" not in res.output, res.output
    # Reconfirms: lines add up: two targets are no problem.
    _write(root, "memory/2026-11-26.md", DAY.replace("Supersedes: 2026-11-26T11:00\n",
           "Reconfirms: 2026-11-26T11:00\nReconfirms: 2026-11-26T09:00\n"))
    assert runner.invoke(cli, ["--vault", str(root), "check"]).exit_code == 0
    # The library reads the refused version's second line as the error, on its line.
    _write(root, "memory/2026-11-26.md", DAY + "Supersedes: 2026-11-26T09:00\n")
    problems = Vault.open(root).files["memory/2026-11-26.md"].problems
    assert [(p.code, p.line, p.severity) for p in problems] == [("MV212", 13, "error")]


# -- history takes what show takes ------------------------------------------------------------------

def _history_vault(root: Path) -> Path:
    _write(root, "memvault.toml", '[vault]\ntimezone = "Europe/Berlin"\n')
    _write(root, "memory/2026-11-25.md", "# 2026-11-25\n\n## 09:00 - Decision\nWir nehmen Postgres, nicht Mongo\n"
                                         "Tags: db\n\n## 09:05 - Observation\nDana hat zugestimmt\n")
    _write(root, "memory/2026-11-29.md", "# 2026-11-29\n\n## 09:00 - Belief\nOrion launches in Q1\n")
    git(root, "init", "-q")
    _commit(root, "three entries")
    _write(root, "memory/2026-11-25.md", (root / "memory/2026-11-25.md").read_text().replace("Mongo", "MongoDB"))
    _commit(root, "edit")
    return root


def test_history_takes_an_id_start_and_a_search_hits_place_like_show(runner, vault_dir):
    _history_vault(vault_dir)
    hit = json.loads(runner.invoke(cli, ["search", "Postgres", "--json"]).output)[0]
    assert hit["location"] == "memory/2026-11-25.md#L3-L5" and hit["id"] == "2026-11-25T09:00"
    for spec in (hit["location"], "memory/2026-11-25.md#L3-L6", "memory/2026-11-25.md:3", "2026-11-25.md:4"):
        res = runner.invoke(cli, ["history", spec])
        assert res.exit_code == 0, (spec, res.output)
        assert res.output.startswith("2026-11-25T09:00  [live]\n"), res.output
        assert "edited   memory/2026-11-25.md" in res.output
        shown = runner.invoke(cli, ["show", spec, "--no-record"]).output
        assert shown.startswith("2026-11-25T09:00 ")
    res = runner.invoke(cli, ["history", "2026-11-29T09:0"])
    assert res.exit_code == 0, res.output
    assert res.output.startswith("2026-11-29T09:00  [live]\n") and "added    memory/2026-11-29.md" in res.output
    # A start of several ids is ambiguous for both, naming them.
    for cmd in ("history", "show"):
        res = runner.invoke(cli, [cmd, "2026-11-25T09:0"])
        assert res.exit_code == 1 and "2026-11-25T09:00, 2026-11-25T09:05" in res.output, res.output
    # A place no entry covers says so, rather than looking for an id of that name in git.
    res = runner.invoke(cli, ["history", "memory/2026-11-25.md:1"])
    assert res.exit_code == 1 and "no entry or note covers that line" in res.output
    # The library answers the same.
    data = Vault.open(vault_dir).history("memory/2026-11-25.md#L3-L6")
    assert data["id"] == "2026-11-25T09:00" and data["found_by"]["how"] == "place"
    assert [c["change"] for c in data["commits"]] == ["added", "edited"]


def test_history_of_a_deleted_entry_is_found_before_a_bullet_citing_it(runner, vault_dir):
    _history_vault(vault_dir)
    _write(vault_dir, "MEMORY.md", "# Memory\n\n## Projekte\n- Orion startet in Q1 (sources: [[2026-11-29#09:00]])\n")
    _write(vault_dir, "memory/2026-11-29.md", "# 2026-11-29\n\nnichts mehr\n")
    _commit(vault_dir, "gone")
    res = runner.invoke(cli, ["history", "2026-11-29T09:00"])
    assert res.exit_code == 0, res.output
    assert "[deleted]" in res.output and "deleted  memory/2026-11-29.md" in res.output
    # The link names no entry now: the bullet citing it answers, and history says why, as show does.
    res = runner.invoke(cli, ["history", "[[2026-11-29#09:00]]"])
    assert res.exit_code == 0, res.output
    assert "found by cited source: no entry has the id '[[2026-11-29#09:00]]'; this is the MEMORY.md bullet" in res.output
    assert Vault.open(vault_dir).history("[[2026-11-29#09:00]]")["found_by"]["how"] == "cited source"


# -- history follows an entry with an Id: between daily logs ------------------------------------------

def _cut(root: Path, src: str, dst: str, first: str) -> tuple[int, int]:
    """Move the entry whose heading line is `first` (and its lines up to the next heading) from
    `src` to the end of `dst`, as a person cutting and pasting would; (old line, new line)."""
    lines = (root / src).read_text().splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if line.startswith(first))
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    block = [line for line in lines[start:end] if line.strip()]
    (root / src).write_text("".join(lines[:start] + lines[end:]))
    target = (root / dst).read_text() if (root / dst).exists() else f"# {Path(dst).stem}\n"
    new_line = len(target.splitlines()) + 2
    (root / dst).write_text(target.rstrip("\n") + "\n\n" + "".join(block))
    return start + 1, new_line


def test_history_follows_an_entry_with_an_id_moved_to_another_days_log(runner, vault_dir):
    assert runner.invoke(cli, ["init", str(vault_dir), "--timezone", "Europe/Berlin"]).exit_code == 0
    for text, at in (("Kickoff mit Dana, Orion startet", "2 days ago 09:00"),
                     ("Standup: Build ist grün", "2 days ago 11:00")):
        assert runner.invoke(cli, ["log", text, "--at", at]).exit_code == 0
    res = runner.invoke(cli, ["log", "Orion codename is Hunter", "--id", "orion-codename", "--at", "2 days ago 15:00"])
    assert res.exit_code == 0, res.output
    day = Vault.open(vault_dir).find("orion-codename").file
    assert runner.invoke(cli, ["log", "Retro verschoben", "--at", "3 days ago 10:00"]).exit_code == 0
    _commit(vault_dir, "week")
    other = Vault.open(vault_dir).find(Vault.open(vault_dir).events[0].id).file
    assert other != day
    old_line, new_line = _cut(vault_dir, day, other, "## 15:00")
    _commit(vault_dir, "moved to the day before")
    moved = Vault.open(vault_dir).find("orion-codename")
    assert (moved.file, moved.line) == (other, new_line)

    res = runner.invoke(cli, ["history", "orion-codename"])
    assert res.exit_code == 0, res.output
    assert f"added    {day}\n" in res.output
    assert f"moved    {other}\n" in res.output
    assert f"      moved from {day}:{old_line} to {other}:{new_line}\n" in res.output
    commits = Vault.open(vault_dir).history("orion-codename")["commits"]
    assert [(c["change"], c["old_file"], c["file"]) for c in commits] == [("added", None, day), ("moved", day, other)]
    # Deleted after the move: its history is still found by the id, across both files.
    _write(vault_dir, other, (vault_dir / other).read_text().split("## 15:00")[0])
    _commit(vault_dir, "gone")
    gone = Vault.open(vault_dir).history("orion-codename")
    assert [c["change"] for c in gone["commits"]] == ["added", "moved", "deleted"]


def test_an_entry_whose_id_is_its_day_and_time_moved_to_another_day_is_another_entry(runner, vault_dir):
    # Its id changed with the move: what cited the old id no longer finds it, and history does
    # not pretend they are one (docs/time-travel.md).
    assert runner.invoke(cli, ["init", str(vault_dir), "--timezone", "Europe/Berlin"]).exit_code == 0
    assert runner.invoke(cli, ["log", "Orion codename is Hunter", "--at", "2026-11-29 15:00"]).exit_code == 0
    assert runner.invoke(cli, ["log", "Retro verschoben", "--at", "2026-11-28 10:00"]).exit_code == 0
    _commit(vault_dir, "two days")
    _cut(vault_dir, "memory/2026-11-29.md", "memory/2026-11-28.md", "## 15:00")
    _commit(vault_dir, "moved")
    new = runner.invoke(cli, ["history", "2026-11-28T15:00"]).output
    assert "added    memory/2026-11-28.md" in new and "moved" not in new
    old = runner.invoke(cli, ["history", "2026-11-29T15:00"]).output
    assert "[deleted]" in old and "deleted  memory/2026-11-29.md" in old


# -- changes: a planned entry committed before the window is not new in it ---------------------------

def _dated_commit(root: Path, message: str, when: str) -> None:
    git(root, "add", "-A")
    subprocess.run(["git", "commit", "-q", "--no-verify", "-m", message], cwd=root, check=True,
                   env={**os.environ, "GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when})


def test_changes_does_not_call_a_planned_entry_committed_before_the_window_new(runner, vault_dir):
    assert runner.invoke(cli, ["init", str(vault_dir), "--timezone", "Europe/Berlin"]).exit_code == 0
    assert runner.invoke(cli, ["log", "Kickoff mit Dana", "--at", "2026-11-20 09:00"]).exit_code == 0
    res = runner.invoke(cli, ["log", "Orion-Launch, Demo für den Vorstand", "--type", "Decision",
                              "--at", "2026-12-10 10:00", "--future"])
    assert res.exit_code == 0, res.output
    _dated_commit(vault_dir, "kickoff and the plan", "2026-11-20T10:00:00+01:00")
    assert runner.invoke(cli, ["log", "Standup: Build ist grün", "--at", "2026-11-24 09:30"]).exit_code == 0
    _dated_commit(vault_dir, "standup", "2026-11-24T10:00:00+01:00")

    res = runner.invoke(cli, ["changes", "--since", "HEAD~1"])
    assert res.exit_code == 0, res.output
    assert "New (1)" in res.output and "Standup" in res.output and "Orion-Launch" not in res.output
    res = runner.invoke(cli, ["changes", "--since", "HEAD"])
    assert res.output.endswith("nothing changed\n"), res.output
    # A planned entry written inside the window is new in it; the one planned before is not.
    assert runner.invoke(cli, ["log", "Retro nach dem Launch", "--at", "2026-12-11 15:00", "--future"]).exit_code == 0
    data = Vault.open(vault_dir).changes("HEAD")
    assert [d["content"] for d in data["new"]] == ["Retro nach dem Launch"]
    # Before the plan was committed, it is new (written in the window, dated after its start).
    data = Vault.open(vault_dir).changes("2026-11-19")
    assert "Orion-Launch, Demo für den Vorstand" in [d["content"] for d in data["new"]]


# -- curate's summary: whole ids, and the window it used ------------------------------------------

def test_curate_summary_counts_reasons_without_cutting_ids_and_names_since(runner, vault_dir):
    _write(vault_dir, "memvault.toml", '[vault]\ntimezone = "Europe/Berlin"\n')
    _write(vault_dir, "memory/2026-11-24.md", "# 2026-11-24\n\n## 10:00 - Observation\n"
                                              "Dana bevorzugt asynchrone Standups per Slack-Thread\n")
    _write(vault_dir, "memory/2026-11-25.md", "# 2026-11-25\n\n## 09:00 - Belief\nOrion codename is Falcon for the quarter\n")
    _write(vault_dir, "memory/2026-11-27.md", "# 2026-11-27\n\n## 09:00 - Correction\nOrion codename is Hunter, not Falcon\n"
                                              "Supersedes: 2026-11-25T09:00\nImportance: low\n")
    res = runner.invoke(cli, ["curate", "--since", "2026-11-25 00:00", "--at", "2026-11-28 12:00", "--dry-run"])
    assert res.exit_code == 0, res.output
    assert "nothing to curate: entries since 2026-11-25T00:00:00+01:00 (--since)" in res.output
    assert "1 superseded" in res.output and "2026-11-27T09," not in res.output and "T09 " not in res.output
    assert "1 before --since 2026-11-25T00:00:00+01:00" in res.output and "last curation" not in res.output
    # --explain names the superseder in full, and the window it used.
    why = {d["id"]: d["reason"] for d in json.loads(runner.invoke(
        cli, ["curate", "--since", "2026-11-25 00:00", "--at", "2026-11-28 12:00", "--explain", "--json"]).output)}
    assert why["2026-11-25T09:00"] == "superseded by 2026-11-27T09:00"
    assert "2026-11-24T10:00" not in why  # before the window: only asked for by its id
    one = runner.invoke(cli, ["curate", "--since", "2026-11-25 00:00", "--at", "2026-11-28 12:00",
                              "--explain", "2026-11-24T10:00"]).output
    assert "before --since 2026-11-25T00:00:00+01:00 and nothing new about it since" in one
    # The library's plan says the same.
    berlin = ZoneInfo("Europe/Berlin")
    plan = plan_curation(Vault.open(vault_dir), at=datetime(2026, 11, 28, 12, tzinfo=berlin),
                         since=datetime(2026, 11, 25, tzinfo=berlin))
    assert "1 superseded" in left_out(plan) and "1 before --since 2026-11-25T00:00:00+01:00" in left_out(plan)


# -- a wall time the clock change skips ---------------------------------------------------------------

def test_log_at_a_time_the_spring_clock_change_skips_is_refused_naming_the_gap(runner, vault_dir):
    assert runner.invoke(cli, ["init", str(vault_dir), "--timezone", "Europe/Berlin"]).exit_code == 0
    before = sorted(p.relative_to(vault_dir).as_posix() for p in (vault_dir / "memory").rglob("*"))
    for at in ("2026-03-29 02:30", "2026-03-29T02:00", "2026-03-29T02:59:59"):
        res = runner.invoke(cli, ["log", "Umstellung auf Sommerzeit, Deploy verschoben", "--at", at])
        assert res.exit_code == 2, (at, res.output)
        assert "does not exist in Europe/Berlin: the clocks went from 02:00 straight to 03:00" in res.output
        assert "give a time before 02:00 or from 03:00 on" in res.output
    assert sorted(p.relative_to(vault_dir).as_posix() for p in (vault_dir / "memory").rglob("*")) == before
    # The minute before and the first after the gap are written as given.
    for at in ("2026-03-29 01:59", "2026-03-29 03:00"):
        assert runner.invoke(cli, ["log", "Nachtschicht", "--at", at]).exit_code == 0
    assert [e.timestamp.isoformat() for e in Vault.open(vault_dir).events if e.file == "memory/2026-03-29.md"] == [
        "2026-03-29T01:59:00+01:00", "2026-03-29T03:00:00+02:00"]


def test_log_at_a_time_the_autumn_clock_change_repeats_takes_its_first_occurrence(runner, vault_dir):
    assert runner.invoke(cli, ["init", str(vault_dir), "--timezone", "Europe/Berlin"]).exit_code == 0
    res = runner.invoke(cli, ["log", "Umstellung auf Winterzeit", "--at", "2026-10-25 02:30", "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["timestamp"] == "2026-10-25T02:30:00+02:00"  # summer time: the first 02:30
    assert Vault.open(vault_dir).get("2026-10-25T02:30").timestamp.isoformat() == "2026-10-25T02:30:00+02:00"


def test_clock_gap_names_the_skipped_span_in_odd_zones():
    from memvault.entries.timeparse import clock_gap

    def gap(zone: str, *parts: int) -> tuple[str, str] | None:
        found = clock_gap(datetime(*parts, tzinfo=ZoneInfo(zone)))  # type: ignore[misc]
        return None if found is None else (found[0].isoformat(), found[1].isoformat())

    assert gap("Australia/Lord_Howe", 2026, 10, 4, 2, 15) == ("2026-10-04T02:00:00", "2026-10-04T02:30:00")
    assert gap("Pacific/Apia", 2011, 12, 30, 12, 0) == ("2011-12-30T00:00:00", "2011-12-31T00:00:00")  # a day skipped
    assert gap("Europe/Berlin", 2026, 10, 25, 2, 30) is None  # happens twice: no gap
    assert gap("UTC", 2026, 3, 29, 2, 30) is None
