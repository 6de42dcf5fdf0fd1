"""`memvault status`: the sync section (remote, ahead/behind, last sync, what is under way)."""

from __future__ import annotations

import json
import os
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memvault.cli import cli
from memvault.errors import MemvaultError
from memvault.sync.run import SyncStopped, sync
from memvault.sync.state import write_step
from memvault.sync.status import sync_lines
from memvault.vault import Vault
from memvault.write.log import init_vault, log_entry

from .conftest import git
from .helpers_watch import watching
from .helpers_watch_sync import stop_for_prose, two_clones


@pytest.fixture
def clones(tmp_path: Path, vault_dir: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path, Path]:
    monkeypatch.setenv("MEMVAULT_MACHINE", "alpha")
    return two_clones(tmp_path, vault_dir)


def section(runner, root: Path) -> list[str]:
    """The sync section of `memvault status`, as text."""
    result = runner.invoke(cli, ["--vault", str(root), "status"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("sync: "))
    return lines[start:]


def as_json(runner, root: Path) -> dict:
    result = runner.invoke(cli, ["--vault", str(root), "status", "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)["sync"]


def git_dir(root: Path) -> Path:
    return Path(git(root, "rev-parse", "--absolute-git-dir").strip())


def test_a_vault_without_a_remote_is_not_shared(runner, vault_dir):
    init_vault(vault_dir, timezone="UTC")
    assert section(runner, vault_dir) == ["sync: not shared (no git remote); to share it: `git remote add origin "
                                          "URL`, then `memvault sync`"]
    data = as_json(runner, vault_dir)
    assert data["shared"] is False and data["remote"] is None and data["ahead"] is None


def test_a_vault_outside_git_is_not_shared(runner, vault_dir):
    init_vault(vault_dir, timezone="UTC", git=False)
    assert section(runner, vault_dir) == ["sync: not shared (the vault is not in a git repository)"]
    assert as_json(runner, vault_dir) == {"shared": False, "why": "not a git repository"}


def test_behind_then_synced_then_ahead(runner, clones):
    a, b, remote = clones
    first = section(runner, b)
    assert first[0] == f"sync: origin/master ({remote}): up to date (as of the last fetch)"
    assert first[1] == "  never synced from this clone; run `memvault sync` (or `memvault watch --sync`)"
    log_entry(Vault.open(a), "Kundin Ağaoğlu bestätigt den Liefertermin", type="observation")
    sync(Vault.open(a))
    # no fetch yet, and status never asks the network
    assert section(runner, b)[0] == f"sync: origin/master ({remote}): up to date (as of the last fetch)"
    git(b, "fetch", "-q")
    assert section(runner, b)[0] == f"sync: origin/master ({remote}): 1 commit behind (as of the last fetch)"
    sync(Vault.open(b))
    after = section(runner, b)
    assert after[0].endswith(": up to date (as of the last fetch)")
    assert after[1].startswith("  last sync ") and after[1].endswith("s ago): pulled (1 commit in)")
    data = as_json(runner, b)
    assert (data["ahead"], data["behind"], data["last"]["result"], data["in_progress"]) == (0, 0, "pulled", None)
    log_entry(Vault.open(b), "noted on B, committed, not pushed", type="observation")
    git(b, "commit", "-qam", "by hand", "--no-verify")
    assert section(runner, b)[0].endswith(": 1 commit ahead (not pushed yet) (as of the last fetch)")


def test_an_interrupted_sync_shows_with_what_to_do(runner, clones):
    _, b, _ = clones
    dead = subprocess.Popen(["true"])
    dead.wait()
    write_step(git_dir(b), "push")
    step = git_dir(b) / "memvault" / "sync-step.json"
    step.write_text(step.read_text().replace(f'"pid": {os.getpid()}', f'"pid": {dead.pid}'))
    lines = section(runner, b)
    assert lines[-1] == (f"  in progress: a sync was interrupted during push (process {dead.pid} is gone); "
                         "the next `memvault sync` finishes it")
    assert as_json(runner, b)["in_progress"]["what"] == "sync"
    sync(Vault.open(b))
    assert not any("in progress" in line for line in section(runner, b))


def test_a_failed_sync_shows_why(runner, clones):
    _, b, remote = clones
    remote.rename(remote.with_name("elsewhere.git"))
    with pytest.raises(MemvaultError, match="fetching from origin failed"):
        sync(Vault.open(b))
    line = section(runner, b)[1]
    assert line.startswith("  last sync ") and "s ago): failed: fetching from origin failed" in line
    assert as_json(runner, b)["last"]["result"] == "failed"


def test_a_sync_stopped_for_the_person_says_what_to_do(runner, clones):
    a, b, _ = clones
    stop_for_prose(a, b)
    with pytest.raises(SyncStopped):
        sync(Vault.open(b))
    lines = section(runner, b)
    assert "s ago): stopped: sync stopped for you: MEMORY.md: prose changed on two machines" in lines[1]
    assert lines[-1].startswith("  in progress: sync stopped for you: MEMORY.md: prose changed on two machines")
    assert "then run `memvault sync` again" in lines[-1]
    assert as_json(runner, b)["in_progress"]["what"] == "merge"
    (b / "MEMORY.md").write_text("# Long-Term Memory\n\n## User Preferences\n\nDrinks green tea, never coffee.\n\n"
                                 "## Active Projects\n\n## Decisions\n\n## Lessons Learned\n", encoding="utf-8")
    assert sync(Vault.open(b)).result == "pushed"
    after = section(runner, b)
    assert not [line for line in after if "in progress" in line] and after[1].endswith("pushed (2 commits out)")


def test_a_running_watcher_says_it_syncs(runner, clones):
    _, b, _ = clones
    with watching(b, sync_every=30, commit_quiet=0.1):
        result = runner.invoke(cli, ["--vault", str(b), "status"])
    assert "  syncs after each commit and every 30s (--sync)" in result.output.splitlines()


def test_the_lines_say_how_long_ago_and_what_moved():
    now = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
    data = {"shared": True, "remote": "backup", "branch": "main", "url": None, "ahead": 2, "behind": 3,
            "in_progress": None,
            "last": {"at": "2026-03-02T13:57:00+02:00", "result": "merged", "merged_from": 3, "pushed": 1,
                     "conflicts": ["memory/2026-03-01.md:7: edited on two machines"]}}
    assert sync_lines(data, now) == [
        "sync: backup/main: 2 commits ahead (not pushed yet), 3 commits behind (as of the last fetch)",
        "  last sync 2026-03-02T13:57:00+02:00 (3 min ago): merged (3 commits in, 1 commit out); "
        "1 entry conflict(s) marked, `memvault check` lists them",
    ]
    data |= {"ahead": None, "behind": None, "last": {"at": "yesterday?", "result": "stopped"}}
    assert sync_lines(data, now) == ["sync: backup/main: nothing fetched from the remote yet",
                                     "  last sync yesterday?: stopped: no reason recorded"]
