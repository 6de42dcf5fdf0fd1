"""Issue 12, "file names that real vaults use": topic files, archives, year folders, notes
with no date in the name, OpenClaw's workspace files. Every subsystem reads the same files.

The vaults here hold typed entries in every file shape, so these run on the parser as it is;
the untyped prose of such files is the notes parser's (tests/test_parse*.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memvault.check.runner import check_vault
from memvault.check.sources import GitIndex
from memvault.cli import cli
from memvault.history.gitrepo import GitRepo
from memvault.history.timelines import VersionTable
from memvault.search.index import open_index
from memvault.vault import Vault
from memvault.watch.sync import disk_state

from .conftest import git
from .helpers_check import NOW, codes, write_vault

FILES = {
    "MEMORY.md": "# Long-Term Memory\n\n## Preferences\n- Prefers green tea\n",
    "AGENTS.md": "# AGENTS.md\n\n## 09:00 - Decision\nAlways answer in German before noon\n",
    "SOUL.md": "# SOUL.md\n\nCalm, precise.\n",
    "README.md": "# clawd\n\n## 09:00 - Decision\nZebrastreifen are not memory\n",
    "memory/2026-01-15.md": "# 2026-01-15\n\nArchived to archive/2026-01-15.md\n\n## 18:00 - Observation\nCompacted the day\n",
    "memory/archive/2026-01-15.md": "# 2026-01-15\n\n## 09:00 - Decision\nUse Postgres for the gateway\n",
    "memory/2026-01-26-fologram-research.md": "# 2026-01-26\n\n## 14:00 - Observation\nFologram streams to HoloLens\n",
    "memory/2026-02-05-memory-leak-incident.md": "# 2026-02-05\n\n## 14:30 - Correction\nThe leak was in the websocket pool\n",
    "memory/2025/12/2025-12-31.md": "# 2025-12-31\n\n## 23:00 - Observation\nSilvesterfeuerwerk im Hof\n",
    "memory/projects/ideen.md": "# Ideen\n\n## 10:00 - Decision\nRegal für die Garage bauen\n",
    "memory/Notizen über Müller & Söhne.md": "# Müller\n\n## 08:00 - Observation\nAngebot für Dachrinne kommt Montag\n",
    "memory/README.md": "# memory\n\n## 07:00 - Observation\nDaily logs live here\n",
}


@pytest.fixture
def real(vault_dir: Path) -> Path:
    write_vault(vault_dir, {"memvault.toml": '[vault]\ntimezone = "UTC"\n', **FILES})
    git(vault_dir, "init", "-q")
    git(vault_dir, "add", "-A")
    git(vault_dir, "commit", "-q", "-m", "adopt", env={"GIT_AUTHOR_DATE": "2026-02-10T12:00:00+00:00",
                                                       "GIT_COMMITTER_DATE": "2026-02-10T12:00:00+00:00"})
    return vault_dir


def found(runner, query: str) -> list[dict]:
    result = runner.invoke(cli, ["search", query, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)["hits"] if isinstance(json.loads(result.output), dict) else json.loads(result.output)


@pytest.mark.parametrize(("query", "file", "day"), [
    ("Postgres gateway", "memory/archive/2026-01-15.md", "2026-01-15"),
    ("Fologram HoloLens", "memory/2026-01-26-fologram-research.md", "2026-01-26"),
    ("websocket leak", "memory/2026-02-05-memory-leak-incident.md", "2026-02-05"),
    ("Silvesterfeuerwerk", "memory/2025/12/2025-12-31.md", "2025-12-31"),
    ("Regal Garage", "memory/projects/ideen.md", "2026-02-10"),  # no date in the name: first commit
    ("Dachrinne", "memory/Notizen über Müller & Söhne.md", "2026-02-10"),
    ("Daily logs live", "memory/README.md", "2026-02-10"),
])
def test_every_file_under_memory_is_searched_and_dated(real, runner, query, file, day):
    hits = found(runner, query)
    assert hits and hits[0]["file"] == file, hits
    assert hits[0]["timestamp"].startswith(day)


def test_workspace_files_are_read_only_when_asked_for(real, runner):
    assert not found(runner, "German noon")
    (real / "memvault.toml").write_text('[vault]\ntimezone = "UTC"\nworkspace_files = true\n')
    hits = found(runner, "German noon")
    assert {(h["file"], h["timestamp"][:10]) for h in hits} == {("AGENTS.md", "2026-02-10")}
    assert not found(runner, "Zebrastreifen")  # README.md is not a workspace file


def test_an_archive_or_a_topic_file_is_no_duplicate_day(real):
    vault = Vault.open(real)
    assert [p for p in vault.problems if p.code in ("MV001", "MV006")] == []
    assert codes(check_vault(vault, now=NOW)).count("MV006") == 0
    (real / "memory/2026/01").mkdir(parents=True)
    (real / "memory/2026/01/2026-01-15.md").write_text("# 2026-01-15\n\n## 20:00 - Observation\nTwice\n")
    vault = Vault.open(real)
    twice = sorted(p.path for p in vault.problems if p.code == "MV006")
    assert twice == ["memory/2026-01-15.md", "memory/2026/01/2026-01-15.md"]
    assert sorted(p.path for p in check_vault(vault, now=NOW).problems if p.code == "MV006") == twice


def test_log_writes_the_days_own_file_never_a_topic_or_an_archive(real, runner):
    vault = Vault.open(real)
    assert vault.log_path_for("2026-01-15") == real / "memory/2026-01-15.md"
    # only a topic file exists for that day: a new day's own file, laid out like the latest
    # own file (memory/2026-01-15.md, not the older memory/2025/12/2025-12-31.md)
    assert vault.log_path_for("2026-01-26") == real / "memory/2026-01-26.md"
    (real / "memory/2026-01-15.md").unlink()
    assert Vault.open(real).log_path_for("2026-01-26") == real / "memory/2026/01/2026-01-26.md"
    (real / "memory/archive/2026-03-01.md").write_text("# 2026-03-01\n")
    result = runner.invoke(cli, ["log", "--at", "2026-03-01 10:00", "New material"])
    assert result.exit_code == 0, result.output
    assert "New material" in (real / "memory/2026/03/2026-03-01.md").read_text()
    assert (real / "memory/archive/2026-03-01.md").read_text() == "# 2026-03-01\n"


SETTINGS = ('[vault]\ntimezone = "UTC"\nworkspace_files = true\n'
            'include = ["MEMORY.md", "memory/**/*.md", "notes/*.md"]\nexclude = ["memory/archive", "notes/draft-*"]\n')


def test_watcher_index_history_check_and_hook_agree_on_one_set_of_files(real):
    write_vault(real, {"memvault.toml": SETTINGS, "notes/kunde.md": "# Kunde\n\n## 11:00 - Belief\nKunde zahlt pünktlich\n",
                       "notes/draft-x.md": "# x\n", "notes/sub/deep.md": "# deep\n"})
    git(real, "add", "-A")
    git(real, "commit", "-q", "-m", "settings")
    vault = Vault.open(real)
    expected = {"MEMORY.md", "AGENTS.md", "SOUL.md", "notes/kunde.md", "memory/2026-01-15.md",
                "memory/2026-01-26-fologram-research.md", "memory/2026-02-05-memory-leak-incident.md",
                "memory/2025/12/2025-12-31.md", "memory/projects/ideen.md", "memory/Notizen über Müller & Söhne.md",
                "memory/README.md"}
    assert set(vault.paths()) == expected
    with open_index(vault) as index:
        index.update()
        assert set(index.indexed_files()) == expected
    assert set(disk_state(real, selection=vault.selection)) == expected
    repo = GitRepo.require(real, vault.selection)
    head = repo.commits().commits[-1].sha
    assert set(repo.tree(head)) == expected
    assert set(VersionTable(repo, repo.commits()).tree(len(repo.commits()) - 1)) == expected
    assert set(GitIndex(real, vault.selection).paths()) == expected
    assert set(check_vault(vault, now=NOW).files) == expected
    recorded = {e["file"] for e in vault.as_of("HEAD", recorded=True)}
    assert expected - {"SOUL.md"} <= recorded <= expected  # SOUL.md holds no typed entry


def test_the_hook_judges_staged_workspace_files_by_the_staged_settings(real):
    bad = "# AGENTS.md\n\n## 25:00 - Decision\nNo such hour\n"
    (real / "AGENTS.md").write_text(bad)
    git(real, "add", "AGENTS.md")
    off = check_vault(Vault.open(real), staged=True, now=NOW)
    assert "MV004" not in codes(off) and off.secrets_only == 1  # not memory yet: scanned for secrets only
    before = (real / "memvault.toml").read_text()
    (real / "memvault.toml").write_text('[vault]\ntimezone = "UTC"\nworkspace_files = true\n')
    git(real, "add", "memvault.toml")
    (real / "memvault.toml").write_text(before)  # the commit holds the new settings, the folder not yet
    on = check_vault(Vault.open(real), staged=True, now=NOW)
    assert [(p.path, p.code) for p in on.problems if p.severity == "error"] == [("AGENTS.md", "MV004")]
    assert on.files == ["AGENTS.md", "memvault.toml"] and on.secrets_only == 1  # the settings: for secrets
