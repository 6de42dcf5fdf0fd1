"""MV019 for links: a staged log edit that breaks or moves a link in an unchanged file (issue 13, point 1).

A curated bullet cites its source as `[[2026-11-24#14:00 - Decision]]`; re-timing that entry in
the log (and committing only the log) used to pass the hook while a full `check` reported MV401
in MEMORY.md. The hook now resolves, against HEAD and the index, the links of unchanged files
that the staged entries could answer, and refuses the commit naming the holder's line and the
staged change. Everything runs through the CLI and a real `git commit` with the installed hook.
"""

from __future__ import annotations

from pathlib import Path

from memvault.check.runner import check_vault
from memvault.vault import Vault

from .helpers_check import commit, git, git_repo, run_memvault

DAY = "# 2026-11-24\n\n## 14:00 - Decision\nUse Postgres for the billing service\nImportance: high\n"
LATER = "# 2026-11-27\n\nRückblick: siehe [[2026-11-24#14:00 - Decision]], das gilt weiter.\n"


def run_check(repo: Path, staged: bool = False):
    return check_vault(Vault.open(repo), staged=staged)  # now: these days are in the past


def head(repo: Path) -> str:
    return git(repo, "rev-parse", "HEAD").stdout.strip()


def curated_repo(tmp_path: Path) -> Path:
    """A vault with the hook, a log entry curated into MEMORY.md, everything committed."""
    repo = git_repo(tmp_path / "v", {"memory/2026-11-24.md": DAY})
    assert run_memvault(repo, "hook", "install").returncode == 0
    done = run_memvault(repo, "curate", "--yes", "--at", "2026-11-25 10:00")
    assert done.returncode == 0, done.stderr
    assert "[[2026-11-24#14:00 - Decision]]" in (repo / "MEMORY.md").read_text()
    git(repo, "add", "-A")
    assert commit(repo).returncode == 0
    return repo


def test_retiming_a_curated_entry_is_refused_naming_the_bullet_and_the_change(tmp_path: Path):
    repo = curated_repo(tmp_path)
    before = head(repo)
    log = repo / "memory" / "2026-11-24.md"
    log.write_text(DAY.replace("## 14:00 - Decision", "## 14:05 - Decision"))
    git(repo, "add", "memory/2026-11-24.md")
    result = commit(repo)
    out = result.stdout + result.stderr
    assert result.returncode != 0 and head(repo) == before, out
    bullet = next(i for i, line in enumerate((repo / "MEMORY.md").read_text().splitlines(), 1) if "Postgres" in line)
    assert (f"MEMORY.md:{bullet}:1: MV019 error: this change makes link [[2026-11-24#14:00 - Decision]] "
            "resolve to nothing instead of 2026-11-24T14:00; the staged change: memory/2026-11-24.md:3 (in HEAD) "
            "removes '14:00 - Decision' (2026-11-24T14:00); memory/2026-11-24.md:3 adds '14:05 - Decision' "
            "(2026-11-24T14:05)") in out
    # the library says the same, and what a full check would have found after the commit
    staged = run_check(repo, staged=True)
    assert [(p.code, p.path, p.line) for p in staged.problems] == [("MV019", "MEMORY.md", bullet)]
    git(repo, "commit", "-q", "--no-verify", "-m", "forced")
    assert [(p.code, p.path, p.line) for p in run_check(repo).problems] == [("MV401", "MEMORY.md", bullet)]


def test_an_edit_that_keeps_the_heading_passes_and_so_does_fixing_the_link_too(tmp_path: Path):
    repo = curated_repo(tmp_path)
    log = repo / "memory" / "2026-11-24.md"
    log.write_text(DAY.replace("billing service", "billing service und die Rechnungen"))
    git(repo, "add", "-A")
    assert commit(repo).returncode == 0  # the link still names the same entry
    log.write_text(log.read_text().replace("## 14:00 - Decision", "## 14:05 - Decision"))
    memory = repo / "MEMORY.md"
    memory.write_text(memory.read_text().replace("#14:00 - Decision]]", "#14:05 - Decision]]"))
    git(repo, "add", "-A")
    result = commit(repo)
    assert result.returncode == 0, result.stdout + result.stderr
    assert run_check(repo).problems == []


def test_a_link_in_an_unchanged_log_that_becomes_ambiguous_is_refused(tmp_path: Path):
    repo = git_repo(tmp_path / "v", {"memory/2026-11-24.md": DAY, "memory/2026-11-27.md": LATER})
    assert run_memvault(repo, "hook", "install").returncode == 0
    log = repo / "memory" / "2026-11-24.md"
    log.write_text(DAY + "\n## 14:00 - Decision\nBilling läuft doch über Redis\n")
    git(repo, "add", "-A")
    result = commit(repo)
    out = result.stdout + result.stderr
    assert result.returncode != 0, out
    assert ("memory/2026-11-27.md:3:1: MV019 error: this change makes link [[2026-11-24#14:00 - Decision]] "
            "resolve to nothing (ambiguous: 2026-11-24T14:00, 2026-11-24T14:00-2) instead of 2026-11-24T14:00; "
            "the staged change: memory/2026-11-24.md:7 adds '14:00 - Decision' (2026-11-24T14:00-2)") in out
    # an unrelated day's edit reads neither holder and passes
    log.write_text(DAY)
    (repo / "memory" / "2026-11-26.md").write_text("# 2026-11-26\n\n## 10:00 - Observation\nDeploy window is Thursday\n")
    git(repo, "add", "-A")
    assert commit(repo).returncode == 0


def test_deleting_a_linked_log_is_refused(tmp_path: Path):
    repo = git_repo(tmp_path / "v", {"memory/2026-11-24.md": "# 2026-11-24\n\nnur Notizen, keine Einträge\n",
                                     "memory/2026-11-27.md": "# 2026-11-27\n\nsiehe [[2026-11-24]]\n"})
    git(repo, "rm", "-q", "memory/2026-11-24.md")
    found = run_check(repo, staged=True).problems
    assert [(p.code, p.path, p.line) for p in found] == [("MV019", "memory/2026-11-27.md", 3)]
    assert "link [[2026-11-24]] resolve to nothing (no daily log for 2026-11-24) instead of the daily log 2026-11-24" \
        in found[0].message
