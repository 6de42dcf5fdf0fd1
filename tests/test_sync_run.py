"""`memvault sync`'s own paths: no remote, a prose conflict left for the person and finished,
a refused commit, review items becoming corrections, a git operation of the person's own."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from memvault.cli import cli
from memvault.errors import Refused
from memvault.sync.run import SyncStopped, sync
from memvault.sync.state import in_progress
from memvault.vault import Vault
from memvault.write.log import init_vault, log_entry
from tests.conftest import git

MEMORY = """# Memory

## Preferences

- Trinkt morgens Tee, keinen Kaffee ^mv-tee001
- Prefers dark mode in every editor ^mv-dark01

Notes on how the user works: mornings are for writing.
"""


def _pair(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """A vault pushed to a bare remote, and a second clone set up for sync."""
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    a = init_vault(tmp_path / "a", timezone="UTC")
    (a / "MEMORY.md").write_text(MEMORY, encoding="utf-8")
    git(a, "add", "MEMORY.md")
    git(a, "commit", "-qm", "memory")
    git(a, "remote", "add", "origin", str(remote))
    monkeypatch.setenv("MEMVAULT_MACHINE", "alpha")
    sync(Vault.open(a))
    git(tmp_path, "clone", "-q", str(remote), str(tmp_path / "b"))
    b = tmp_path / "b"
    monkeypatch.setenv("MEMVAULT_MACHINE", "beta")
    sync(Vault.open(b))
    return a, b


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")


def test_no_remote_is_refused_and_pending_work_is_still_committed(tmp_path: Path) -> None:
    root = init_vault(tmp_path / "solo", timezone="UTC")
    vault = Vault.open(root)
    log_entry(vault, "Nothing to share yet")
    with pytest.raises(Refused, match="no remote"):
        sync(vault)
    assert git(root, "status", "--porcelain", "--", "memory") == ""


def test_prose_changed_on_both_machines_stops_for_the_person_then_goes_on(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = _pair(tmp_path, monkeypatch)
    monkeypatch.setenv("MEMVAULT_MACHINE", "alpha")
    _edit(a / "MEMORY.md", "mornings are for writing.", "mornings are for writing, afternoons for calls.")
    sync(Vault.open(a))
    monkeypatch.setenv("MEMVAULT_MACHINE", "beta")
    _edit(b / "MEMORY.md", "mornings are for writing.", "Morgens wird geschrieben, abends gelesen.")
    with pytest.raises(SyncStopped, match="MEMORY.md"):
        sync(Vault.open(b))
    text = (b / "MEMORY.md").read_text(encoding="utf-8")
    assert "<<<<<<<" in text and "afternoons for calls" in text and "abends gelesen" in text
    busy = in_progress(b)
    assert busy is not None and busy.what == "merge" and "memvault sync" in busy.message
    # Not resolved yet: it stops again, saying the same.
    with pytest.raises(SyncStopped, match="still stopped for you: MEMORY.md"):
        sync(Vault.open(b))
    resolved = (MEMORY.replace("mornings are for writing.",
                               "mornings are for writing, afternoons for calls; abends gelesen."))
    (b / "MEMORY.md").write_text(resolved, encoding="utf-8")  # no `git add`: editing it is enough
    report = sync(Vault.open(b))
    assert report.recovered == "the merge you resolved was committed"
    assert in_progress(b) is None
    monkeypatch.setenv("MEMVAULT_MACHINE", "alpha")
    sync(Vault.open(a))
    assert (a / "MEMORY.md").read_text(encoding="utf-8") == resolved


def test_a_bullet_changed_on_both_machines_becomes_a_correction_curate_proposes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = _pair(tmp_path, monkeypatch)
    monkeypatch.setenv("MEMVAULT_MACHINE", "alpha")
    _edit(a / "MEMORY.md", "Prefers dark mode in every editor", "Prefers dark mode, except in the terminal")
    sync(Vault.open(a))
    monkeypatch.setenv("MEMVAULT_MACHINE", "beta")
    _edit(b / "MEMORY.md", "Prefers dark mode in every editor", "Prefers a light theme since March")
    second = sync(Vault.open(b))  # merges, and logs the version set aside for curate at once
    assert second.result == "merged" and len(second.reviews) == 1
    memory = (b / "MEMORY.md").read_text(encoding="utf-8")
    assert "except in the terminal" in memory and "light theme" not in memory  # the remote's stays
    assert git(b, "status", "--porcelain", "--", "memory") == ""  # the review entry is committed and pushed
    assert git(b, "rev-parse", "HEAD") == git(b, "rev-parse", "@{u}")
    vault = Vault.open(b)
    entry = vault.timeline.by_id[second.reviews[0]]
    assert entry.type == "correction" and "light theme" in entry.content
    assert entry.supersedes == "^mv-dark01" and "sync-review" in entry.tags
    from memvault.curate.promote import plan_curation

    plan = plan_curation(vault)
    assert any(p.kind == "update" and "light theme" in " ".join(p.lines) for p in plan.proposals)


def test_a_commit_the_hook_refuses_stops_the_sync_before_anything_moves(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = _pair(tmp_path, monkeypatch)
    monkeypatch.setenv("MEMVAULT_MACHINE", "beta")
    result = CliRunner().invoke(cli, ["--vault", str(b), "hook", "install"])
    assert result.exit_code == 0, result.output
    day = b / "memory" / "2026-11-30.md"
    day.write_text("# 2026-11-30\n\n## 09:00 - Observation\nDeploy key AKIAIOSFODNN7EXAMPLF for prod\n",
                   encoding="utf-8")
    before = git(b, "rev-parse", "HEAD")
    with pytest.raises(SyncStopped, match="before pulling"):
        sync(Vault.open(b))
    assert git(b, "rev-parse", "HEAD") == before
    assert day.exists()  # nothing lost: the file stays as it was, uncommitted
    assert in_progress(b) is None  # stopped, not interrupted: status has nothing under way to report
    last = json.loads((b / ".memvault" / "sync.json").read_text(encoding="utf-8"))
    assert last["result"] == "stopped" and "before pulling" in last["message"]


def test_sync_refuses_a_merge_the_person_started(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = _pair(tmp_path, monkeypatch)
    (b / ".git" / "MERGE_HEAD").write_text(git(b, "rev-parse", "HEAD") + "\n")
    with pytest.raises(SyncStopped, match="did not start"):
        sync(Vault.open(b))


def test_cli_sync_json_reports_the_merge(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = _pair(tmp_path, monkeypatch)
    monkeypatch.setenv("MEMVAULT_MACHINE", "alpha")
    log_entry(Vault.open(a), "Quokka-Projekt: Kickoff am Montag")
    sync(Vault.open(a))
    monkeypatch.setenv("MEMVAULT_MACHINE", "beta")
    log_entry(Vault.open(b), "The kickoff room is 4.12")
    result = CliRunner().invoke(cli, ["--vault", str(b), "sync", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["result"] == "merged" and data["merged_from"] >= 1 and data["ahead"] == 0
    texts = [e.content for e in Vault.open(b).entries()]
    assert "Quokka-Projekt: Kickoff am Montag" in texts and "The kickoff room is 4.12" in texts
    ids = [e.id for e in Vault.open(b).entries() if e.content in texts[-2:]]
    assert all(i.endswith(("-alpha", "-beta")) for i in ids)


def test_a_hosted_repository_created_with_a_license_is_merged_not_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    remote = tmp_path / "hosted.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "master", str(remote))
    seed = tmp_path / "seed"
    git(tmp_path, "clone", "-q", str(remote), str(seed))
    (seed / "LICENSE").write_text("All rights reserved.\n", encoding="utf-8")
    git(seed, "add", "LICENSE")
    git(seed, "commit", "-qm", "Initial commit")
    git(seed, "push", "-q", "origin", "HEAD:master")
    root = init_vault(tmp_path / "vault", timezone="UTC")
    git(root, "branch", "-M", "master")
    git(root, "remote", "add", "origin", str(remote))
    monkeypatch.setenv("MEMVAULT_MACHINE", "laptop")
    log_entry(Vault.open(root), "First entry before the first push")
    report = sync(Vault.open(root))
    assert report.result == "merged" and (root / "LICENSE").is_file()
    assert git(root, "rev-parse", "HEAD") == git(root, "rev-parse", "origin/master")


def test_a_vault_in_a_subfolder_of_a_bigger_repository_syncs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    top = tmp_path / "work"
    top.mkdir()
    git(top, "init", "-q")
    (top / "code.py").write_text("print('hi')\n", encoding="utf-8")
    git(top, "add", "code.py")
    git(top, "commit", "-qm", "code")
    a = init_vault(top / "notes" / "agent", timezone="UTC")
    git(top, "remote", "add", "origin", str(remote))
    monkeypatch.setenv("MEMVAULT_MACHINE", "alpha")
    sync(Vault.open(a))
    git(tmp_path, "clone", "-q", str(remote), str(tmp_path / "other"))
    b = tmp_path / "other" / "notes" / "agent"
    monkeypatch.setenv("MEMVAULT_MACHINE", "beta")
    sync(Vault.open(b))
    assert "merge: memvault" in git(b, "check-attr", "merge", "memory/2026-12-01.md")
    log_entry(Vault.open(b), "Notiz vom Server: Backups laufen nachts")
    sync(Vault.open(b))
    monkeypatch.setenv("MEMVAULT_MACHINE", "alpha")
    log_entry(Vault.open(a), "Laptop note: the backup window is 02:00-03:00")
    report = sync(Vault.open(a))
    assert report.result == "merged"
    texts = {e.content for e in Vault.open(a).entries()}
    assert {"Notiz vom Server: Backups laufen nachts", "Laptop note: the backup window is 02:00-03:00"} <= texts


def test_a_push_the_remote_refuses_says_what_the_remote_said(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from memvault.errors import GitError

    a, b = _pair(tmp_path, monkeypatch)
    hook = tmp_path / "remote.git" / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho 'pushes are frozen until Monday' >&2\nexit 1\n", encoding="utf-8")
    hook.chmod(0o755)
    monkeypatch.setenv("MEMVAULT_MACHINE", "beta")
    log_entry(Vault.open(b), "Eine Notiz, die warten muss")
    with pytest.raises(GitError, match="pushes are frozen"):
        sync(Vault.open(b))
    assert in_progress(b) is None


def test_detached_head_and_an_unknown_remote_are_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from memvault.errors import NotFoundError

    a, b = _pair(tmp_path, monkeypatch)
    with pytest.raises(NotFoundError, match="no git remote named 'nope'"):
        sync(Vault.open(b), remote="nope")
    git(b, "checkout", "-q", "--detach", "HEAD")
    with pytest.raises(Refused, match="HEAD is detached"):
        sync(Vault.open(b))


def test_recovery_removes_what_a_killed_merge_left_in_the_work_tree(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from memvault.sync.state import write_step

    a, b = _pair(tmp_path, monkeypatch)
    (b / ".merge_file_Ab12Cd").write_text("half of a merge\n", encoding="utf-8")
    write_step(b / ".git", "merge")  # as a sync killed during merge-tree leaves it
    report = sync(Vault.open(b))
    assert report.recovered and "merge" in report.recovered
    assert not (b / ".merge_file_Ab12Cd").exists()


def test_a_log_deleted_on_one_machine_and_changed_on_the_other_is_the_persons_choice(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = _pair(tmp_path, monkeypatch)
    monkeypatch.setenv("MEMVAULT_MACHINE", "alpha")
    day = "memory/2026-11-20.md"
    (a / day).write_text("# 2026-11-20\n\n## 09:00 - Observation\nUmzugskartons bestellt\n", encoding="utf-8")
    sync(Vault.open(a))
    monkeypatch.setenv("MEMVAULT_MACHINE", "beta")
    sync(Vault.open(b))
    monkeypatch.setenv("MEMVAULT_MACHINE", "alpha")
    (a / day).unlink()
    sync(Vault.open(a))
    monkeypatch.setenv("MEMVAULT_MACHINE", "beta")
    with (b / day).open("a", encoding="utf-8") as f:
        f.write("\n## 10:00 - Observation\nThe boxes arrive on Friday\n")
    with pytest.raises(SyncStopped, match=f"{day}: deleted on one machine, changed on the other: `git add {day}`"):
        sync(Vault.open(b))
    with pytest.raises(SyncStopped, match="git rm"):  # nothing decided yet: it says the same again
        sync(Vault.open(b))
    git(b, "add", day)  # keep it
    report = sync(Vault.open(b))
    assert report.recovered == "the merge you resolved was committed"
    assert "The boxes arrive on Friday" in (b / day).read_text(encoding="utf-8")
