"""Edits that silently turn entries into something else are errors (issue 13, points 2 and 3 of the QA pass).

An unclosed code fence swallows the entry headings below it (MV018), and a half-typed heading
(`## 12:0`) turns an entry into a note (MV003). Both used to pass `check` and the hook while the
vault's beliefs changed (a corrected belief came back to life); now both are errors at parse
time, so the hook refuses the commit and the index keeps the file's last good entries.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from memvault.cli import cli
from memvault.entries.headings import attempt
from memvault.search.index import open_index
from memvault.vault import Vault

from .helpers_check import commit, git, git_repo, run_memvault
from .helpers_watch import index_rows, wait_for, watching

DAY = "memory/2026-11-26.md"
GOOD = (
    "# 2026-11-26\n\n"
    "## 09:00 - Belief\nUser wants weekly updates on Friday afternoons\n\n"
    "## 09:30 - Correction\nUser wants the updates on Monday mornings now\nSupersedes: 2026-11-26T09:00\n\n"
    "## 12:00 - Observation\nDas Deploy-Fenster ist donnerstags\n"
)
FENCED = GOOD.replace("## 09:30 - Correction", "```\n\n## 09:30 - Correction")
CODE_AT_END = GOOD + "\nDas Skript (noch nicht fertig):\n\n```bash\ndeploy --window thu\n"
TYPES = ("observation", "belief", "decision", "correction")


def repo_with_hook(tmp_path: Path) -> Path:
    repo = git_repo(tmp_path / "v", {DAY: GOOD})
    assert run_memvault(repo, "hook", "install").returncode == 0
    return repo


def save(root: Path, text: str) -> None:
    """Write the day's log as saved a while ago (the index hashes a file written this second again)."""
    path = root / DAY
    path.write_text(text, encoding="utf-8")
    past = time.time() - 3600
    os.utime(path, (past, past))


def status_of(root: Path, eid: str) -> str:
    vault = Vault.open(root)
    return vault.as_dict(vault.get(eid))["status"]


def indexed(root: Path) -> dict[str, str]:
    """id -> content of the day's entries in the index as it is."""
    return {i: c for f, i, c in index_rows(root) if f == DAY}


# ------------------------------------------------------------------------- an unclosed fence


def test_an_unclosed_fence_that_hides_entries_is_an_error_and_the_hook_refuses_it(tmp_path: Path, runner, monkeypatch):
    repo = repo_with_hook(tmp_path)
    monkeypatch.setenv("MEMVAULT_VAULT", str(repo))
    monkeypatch.chdir(repo)
    assert status_of(repo, "2026-11-26T09:00") == "superseded"
    (repo / DAY).write_text(FENCED)
    checked = runner.invoke(cli, ["check", DAY])
    assert checked.exit_code != 0
    assert (f"{DAY}:6:1: MV018 error: code fence '```' is never closed: it hides 2 entry headings below it "
            "(the first: '## 09:30 - Correction' on line 8)") in checked.output
    vault = Vault.open(repo)
    assert [(p.code, p.line) for p in vault.problems if p.path == DAY] == [("MV018", 6)]
    assert status_of(repo, "2026-11-26T09:00") == "live"  # what the file now says, and why it is an error
    git(repo, "add", DAY)
    before = git(repo, "rev-parse", "HEAD").stdout
    refused = commit(repo)
    assert refused.returncode != 0 and "MV018" in refused.stdout + refused.stderr
    assert git(repo, "rev-parse", "HEAD").stdout == before


def test_a_fence_left_open_at_the_end_that_hides_no_entry_is_fine(tmp_path: Path, runner, monkeypatch):
    repo = repo_with_hook(tmp_path)
    monkeypatch.setenv("MEMVAULT_VAULT", str(repo))
    monkeypatch.chdir(repo)
    (repo / DAY).write_text(CODE_AT_END)
    checked = runner.invoke(cli, ["check", DAY])
    assert checked.exit_code == 0, checked.output
    git(repo, "add", DAY)
    assert commit(repo).returncode == 0
    assert status_of(repo, "2026-11-26T09:00") == "superseded"
    assert "deploy --window thu" in Vault.open(repo).get("2026-11-26T12:00").content


def test_the_index_keeps_the_last_good_entries_behind_an_unclosed_fence(vault_dir, runner):
    (vault_dir / "memory").mkdir()
    (vault_dir / "memvault.toml").write_text('[vault]\ntimezone = "UTC"\n')
    save(vault_dir, GOOD)
    assert runner.invoke(cli, ["index"]).exit_code == 0
    good = indexed(vault_dir)
    assert set(good) == {"2026-11-26T09:00", "2026-11-26T09:30", "2026-11-26T12:00"}
    save(vault_dir, FENCED)
    data = json.loads(runner.invoke(cli, ["index", "--json"]).stdout)
    assert list(data["held"]) == [DAY] and data["held"][DAY].startswith(f"{DAY}:6: code fence")
    found = json.loads(runner.invoke(cli, ["search", "--json", "--no-record", "Monday updates"]).stdout)
    assert [h["id"] for h in found][:1] == ["2026-11-26T09:30"]
    assert indexed(vault_dir) == good
    with open_index(Vault.open(vault_dir)) as index:
        assert index.refresh() is None  # held, and not read again until it changes
    rebuilt = json.loads(runner.invoke(cli, ["index", "--rebuild", "--json"]).stdout)
    assert list(rebuilt["held"]) == [DAY] and indexed(vault_dir) == good
    save(vault_dir, FENCED.replace("```\n\n## 09:30", "```\ncode\n```\n\n## 09:30"))  # closed: parses again
    runner.invoke(cli, ["index"])
    assert set(indexed(vault_dir)) == set(good)
    assert "code" in indexed(vault_dir)["2026-11-26T09:00"]


# ------------------------------------------------------------------------ a half-typed heading


@pytest.mark.parametrize("half", ["## 12:0", "## 12:", "## 1200 -", "## 12:0 - Observation"])
def test_a_half_typed_heading_is_mv003_and_the_hook_refuses_it(half: str, tmp_path: Path, runner, monkeypatch):
    repo = repo_with_hook(tmp_path)
    monkeypatch.setenv("MEMVAULT_VAULT", str(repo))
    monkeypatch.chdir(repo)
    (repo / DAY).write_text(GOOD.replace("## 12:00 - Observation", half))
    checked = runner.invoke(cli, ["check", DAY])
    assert checked.exit_code != 0
    assert f"{DAY}:10:1: MV003 error: malformed entry heading '{half}': expected '## HH:MM - Type'" in checked.output
    assert [(p.code, p.line) for p in Vault.open(repo).problems if p.path == DAY] == [("MV003", 10)]
    fixed = runner.invoke(cli, ["check", "--fix", DAY])
    assert "--fix does not guess which time is meant" in fixed.output, fixed.output
    assert half in (repo / DAY).read_text()  # left as the person wrote it
    git(repo, "add", DAY)
    assert commit(repo).returncode != 0


def test_the_index_holds_back_a_half_typed_heading_that_turns_an_entry_into_a_note(vault_dir, runner):
    (vault_dir / "memory").mkdir()
    (vault_dir / "memvault.toml").write_text('[vault]\ntimezone = "UTC"\n')
    save(vault_dir, GOOD)
    runner.invoke(cli, ["index"])
    good = indexed(vault_dir)
    save(vault_dir, GOOD.replace("## 12:00 - Observation", "## 12:0"))
    assert {e.id for e in Vault.open(vault_dir).events if e.file == DAY} >= {"2026-11-26#12-0"}  # a note, same count
    data = json.loads(runner.invoke(cli, ["index", "--json"]).stdout)
    assert list(data["held"]) == [DAY] and "malformed entry heading '## 12:0'" in data["held"][DAY]
    found = json.loads(runner.invoke(cli, ["search", "--json", "--no-record", "Deploy-Fenster"]).stdout)
    assert [(h["id"], h["type"]) for h in found][:1] == [("2026-11-26T12:00", "observation")]
    assert indexed(vault_dir) == good


def test_the_watcher_holds_back_a_half_typed_heading(vault_dir):
    (vault_dir / "memory").mkdir()
    (vault_dir / "memvault.toml").write_text('[vault]\ntimezone = "UTC"\n')
    save(vault_dir, GOOD)
    with watching(vault_dir) as w:
        wait_for(lambda: "2026-11-26T12:00" in indexed(vault_dir), what="the log indexed")
        (vault_dir / DAY).write_text(GOOD.replace("## 12:00 - Observation", "## 12:0"), encoding="utf-8")
        wait_for(lambda: any(x["event"] == "broken" for x in w.log.lines), what="the watcher to hold the file back")
        assert "2026-11-26T12:00" in indexed(vault_dir) and "2026-11-26#12-0" not in indexed(vault_dir)
        (vault_dir / DAY).write_text(GOOD.replace("## 12:00 - Observation", "## 12:05 - Observation"), encoding="utf-8")
        wait_for(lambda: "2026-11-26T12:05" in indexed(vault_dir), what="the finished heading indexed")


@pytest.mark.parametrize(("heading", "clock"), [
    ("12:0", "12:0"), ("12:", "12:"), ("1200 -", "1200"), ("12:3 Decision", "12:3"), ("0930 - Belief", "0930"),
    ("1:1", None), ("1:1 with Anna", None), ("16:9", None), ("2026 plans", None), ("2026 - plans", None),
    ("1200", None), ("Q3", None), ("10x ideas", None), ("12:0 Uhr Mittagessen", None), ("12: Notizen", None),
    ("14:00 — Brand Lead Gen Deep Dive", None), ("9:15", None),
])
def test_what_counts_as_a_half_typed_time(heading: str, clock: str | None):
    assert attempt(heading, TYPES) == clock
