"""Issue 14, what a QA pass as a new user found: history takes what show takes and follows an entry
with an `Id:` between daily logs, a second `Supersedes:` line is refused, `changes` does not call an
entry committed before its window new, curate's summary names whole ids and its window, and a
wall-clock time the clock change skips is refused. Through the CLI on real vaults and real git;
state checked through the library."""

from __future__ import annotations

import subprocess
from pathlib import Path

from memvault.cli import cli
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
    assert "MV211" in res.output and "memory/2026-11-26.md:13" in res.output
    git(root, "add", "-A")
    refused = subprocess.run(["git", "commit", "-qm", "two supersedes"], cwd=root, capture_output=True,
                             text=True, env=hook_env())
    assert refused.returncode != 0
    assert "MV211" in refused.stdout + refused.stderr
    assert git(root, "log", "--format=%s").stdout.split("\n")[0] == "orion"

    # The same target written twice stays the MV206 warning: nothing is revived by it.
    _write(root, "memory/2026-11-26.md", DAY + "Supersedes:  2026-11-26T11:00\n")
    res = runner.invoke(cli, ["--vault", str(root), "check"])
    assert res.exit_code == 0 and "MV206" in res.output and "MV211" not in res.output, res.output
    # Reconfirms: lines add up: two targets are no problem.
    _write(root, "memory/2026-11-26.md", DAY.replace("Supersedes: 2026-11-26T11:00\n",
           "Reconfirms: 2026-11-26T11:00\nReconfirms: 2026-11-26T09:00\n"))
    assert runner.invoke(cli, ["--vault", str(root), "check"]).exit_code == 0
    # The library reads the refused version's second line as the error, on its line.
    _write(root, "memory/2026-11-26.md", DAY + "Supersedes: 2026-11-26T09:00\n")
    problems = Vault.open(root).files["memory/2026-11-26.md"].problems
    assert [(p.code, p.line, p.severity) for p in problems] == [("MV211", 13, "error")]
