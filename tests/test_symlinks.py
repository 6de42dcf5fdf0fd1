"""Issue 10, points 3 and 8: the layout rule (memvault/layout.py) through the CLI.

memvault reads and writes only regular files reached through real folders inside the vault
and never follows a symbolic link: a link is reported (MV110) by its path and skipped, a
write to or through it is refused; a non-file where a file belongs is MV111, a folder that
cannot be listed MV100; nothing of that kind stops a command that does not need the path.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from memvault.cli import cli
from memvault.sync.commit import commit_vault
from memvault.vault import Vault

from .helpers_check import commit, git, git_repo, run_memvault

TOML = '[vault]\ntimezone = "UTC"\n'
DAY = "# 2026-01-05\n\n## 09:00 - Observation\nUser likes green tea\n"
OUTSIDE_LOG = "# 2026-01-06\n\n## 08:00 - Belief\nOutsider zanzibar secret plan\n"
MEMORY = "# Long-Term Memory\n\n## User Preferences\n- Prefers quokka mode (added 2026-01-01)\n"


def vault_at(root: Path, files: dict[str, str] | None = None) -> Path:
    (root / "memory").mkdir(parents=True, exist_ok=True)
    (root / "memvault.toml").write_text(TOML)
    for rel, text in {"memory/2026-01-05.md": DAY, **(files or {})}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder beside the vault, never to be read or written by memvault."""
    folder = tmp_path / "outside"
    folder.mkdir()
    return folder


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def check_json(runner) -> tuple[int, dict]:
    result = runner.invoke(cli, ["check", "--json"])
    return result.exit_code, json.loads(result.output)


def problem(report: dict, path: str) -> dict:
    found = [p for p in report["problems"] if p["path"] == path]
    assert found, report["problems"]
    return found[0]


def contents(runner, *args: str) -> list[str]:
    result = runner.invoke(cli, [*args, "--json"])
    assert result.exit_code == 0, result.output
    return [item["content"] for item in json.loads(result.output)]


# -- point 3: links pull outside files in and let writes out --------------------------------

def test_a_daily_log_linked_outside_is_neither_read_nor_written(runner, vault_dir, outside):
    # `ln -s /etc/passwd memory/2026-01-06.md`: check gave only MV007, index read the file, and
    # `log --at 2026-01-06` replaced the link with a copy of the outside file plus the entry.
    vault_at(vault_dir)
    secret = outside / "passwd"
    secret.write_text(OUTSIDE_LOG)
    link = vault_dir / "memory" / "2026-01-06.md"
    link.symlink_to(secret)
    code, report = check_json(runner)
    assert code == 1
    found = problem(report, "memory/2026-01-06.md")
    assert (found["code"], found["severity"]) == ("MV110", "error")
    assert str(secret) in found["message"] and "outside the vault" in found["message"]
    assert runner.invoke(cli, ["index"]).exit_code == 0
    assert contents(runner, "search", "zanzibar") == []
    assert contents(runner, "list", "--all") == ["User likes green tea"]
    result = runner.invoke(cli, ["log", "--at", "2026-01-06 10:00", "hello"])
    assert result.exit_code == 1
    assert "refusing to write memory/2026-01-06.md" in result.output and "symbolic link" in result.output
    assert link.is_symlink() and secret.read_text() == OUTSIDE_LOG


def test_a_linked_memory_md_is_not_searchable_and_curate_refuses(runner, vault_dir, outside):
    vault_at(vault_dir)
    target = outside / "MEMORY.md"
    target.write_text(MEMORY)
    (vault_dir / "MEMORY.md").symlink_to(target)
    assert contents(runner, "search", "quokka") == []
    assert contents(runner, "list", "--all") == ["User likes green tea"]
    code, report = check_json(runner)
    assert code == 1 and problem(report, "MEMORY.md")["code"] == "MV110"
    result = runner.invoke(cli, ["curate", "--yes"])
    assert result.exit_code == 1 and "MEMORY.md" in result.output and "symbolic link" in result.output
    assert target.read_text() == MEMORY and (vault_dir / "MEMORY.md").is_symlink()


def test_a_year_folder_linked_outside_is_not_read_and_log_does_not_write_through_it(runner, vault_dir, outside):
    # `memory/2026` a link to an outside folder: log wrote the entry outside the vault, where
    # search and check could not see it.
    vault_at(vault_dir, {"memory/2025/2025-12-31.md": DAY.replace("2026-01-05", "2025-12-31")})
    (vault_dir / "memory" / "2026-01-05.md").unlink()
    (outside / "2026-01-06.md").write_text(OUTSIDE_LOG)
    (vault_dir / "memory" / "2026").symlink_to(outside, target_is_directory=True)
    before = snapshot(outside)
    result = runner.invoke(cli, ["log", "--at", "2026-01-06 10:00", "hello"])
    assert result.exit_code == 1
    assert "refusing to write memory/2026/2026-01-06.md: memory/2026 is a symbolic link" in result.output
    assert snapshot(outside) == before
    assert contents(runner, "search", "zanzibar") == []
    code, report = check_json(runner)
    assert code == 1 and problem(report, "memory/2026")["code"] == "MV110"
    assert "put the folder itself here" in problem(report, "memory/2026")["message"]


def test_a_folder_link_whose_target_is_missing_is_reported_too(runner, vault_dir, tmp_path):
    # QA: `memory/archive -> /Volumes/Backup/archive` (the disk not mounted) was skipped in
    # silence, while a link to a folder that exists was MV110.
    vault_at(vault_dir)
    gone = tmp_path / "Volumes" / "Backup" / "archive"
    (vault_dir / "memory" / "archive").symlink_to(gone, target_is_directory=True)
    (vault_dir / "memory" / "photo.png").symlink_to(tmp_path / "gone.png")  # not a vault file's or folder's name
    code, report = check_json(runner)
    assert code == 1 and [p["path"] for p in report["problems"]] == ["memory/archive"]
    found = problem(report, "memory/archive")
    assert found["code"] == "MV110" and str(gone) in found["message"]
    assert "cannot be followed" in found["message"] and "remove it, or put the folder itself here" in found["message"]
    assert contents(runner, "list", "--all") == ["User likes green tea"]


def test_adopt_names_a_folder_link_whose_target_is_missing(runner, tmp_path):
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "memory" / "2026-01-05.md").write_text(DAY)
    (ws / "memory" / "archive").symlink_to("/nonexistent-volume/Backup/archive", target_is_directory=True)
    result = runner.invoke(cli, ["adopt", str(ws), "--no-git"])
    assert result.exit_code == 0, result.output
    assert "MV110 error" in result.output
    assert "memory/archive:1:1: symbolic link to /nonexistent-volume/Backup/archive which cannot be followed" in result.output


def test_memory_folder_itself_linked_outside(runner, vault_dir, outside):
    (vault_dir / "memvault.toml").write_text(TOML)
    (outside / "2026-01-06.md").write_text(OUTSIDE_LOG)
    (vault_dir / "memory").symlink_to(outside, target_is_directory=True)
    before = snapshot(outside)
    result = runner.invoke(cli, ["log", "--at", "2026-01-07 10:00", "hello"])
    assert result.exit_code == 1 and "memory is a symbolic link" in result.output
    assert snapshot(outside) == before
    assert contents(runner, "list", "--all") == []
    code, report = check_json(runner)
    assert code == 1 and problem(report, "memory")["code"] == "MV110"


def test_a_link_inside_the_vault_is_not_followed_either(runner, vault_dir):
    # git stores the link, not the file: following it would make search and the hook disagree.
    vault_at(vault_dir, {"notes/day.md": OUTSIDE_LOG})
    link = vault_dir / "memory" / "2026-01-06.md"
    link.symlink_to(Path("..") / "notes" / "day.md")
    code, report = check_json(runner)
    assert code == 1 and "inside the vault" in problem(report, "memory/2026-01-06.md")["message"]
    assert contents(runner, "list", "--all") == ["User likes green tea"]
    assert runner.invoke(cli, ["log", "--at", "2026-01-06 10:00", "hello"]).exit_code == 1
    assert link.is_symlink() and (vault_dir / "notes" / "day.md").read_text() == OUTSIDE_LOG


def test_check_fix_leaves_a_linked_daily_log_a_link(runner, vault_dir, outside):
    # `check --fix` used to turn a linked daily log into a (fixed) copy of its target.
    vault_at(vault_dir)
    untitled = "## 08:00 - Belief\nOutsider zanzibar\n"  # MV007: --fix would add a title
    (outside / "day.md").write_text(untitled)
    link = vault_dir / "memory" / "2026-01-06.md"
    link.symlink_to(outside / "day.md")
    result = runner.invoke(cli, ["check", "--fix", "--json"])
    assert result.exit_code == 1 and json.loads(result.output)["fixed"] == {}
    assert link.is_symlink() and (outside / "day.md").read_text() == untitled
    named = runner.invoke(cli, ["check", str(link), "--fix"])  # named on the command line: the same
    assert named.exit_code == 1 and "MV110" in named.output and "not inside the vault" not in named.output
    assert link.is_symlink() and (outside / "day.md").read_text() == untitled


def test_the_hook_refuses_a_staged_link_without_reading_its_target(tmp_path: Path, outside):
    repo = git_repo(tmp_path / "v", {"memory/2026-01-05.md": DAY})
    assert run_memvault(repo, "hook", "install").returncode == 0
    (outside / "passwd").write_text("## 08:00 - Belief\nnot a log at all\n")
    (repo / "memory" / "2026-01-06.md").symlink_to(outside / "passwd")
    (repo / "memory" / "2026-01-07.md").write_text(DAY.replace("2026-01-05", "2026-01-07"))
    git(repo, "add", "-A")
    before = git(repo, "rev-parse", "HEAD").stdout
    result = commit(repo)
    out = result.stdout + result.stderr
    assert result.returncode != 0, out
    assert "memory/2026-01-06.md:1:1: MV110 error: staged as a symbolic link" in out
    assert "MV007" not in out  # the target (no title) was not read as a log
    assert git(repo, "rev-parse", "HEAD").stdout == before


def test_index_and_wait_drop_a_log_replaced_by_a_link(runner, vault_dir, outside):
    # The watcher's path (index --wait reconciles with its rules) and the plain update both
    # stop reading a file the moment it becomes a link, and say so.
    vault_at(vault_dir)
    assert contents(runner, "search", "green") == ["User likes green tea"]
    daily = vault_dir / "memory" / "2026-01-05.md"
    (outside / "day.md").write_text(OUTSIDE_LOG.replace("2026-01-06", "2026-01-05"))
    daily.unlink()
    daily.symlink_to(outside / "day.md")
    result = runner.invoke(cli, ["index", "--wait", "--json"])
    assert result.exit_code == 0, result.output
    assert contents(runner, "search", "green zanzibar") == []
    status = runner.invoke(cli, ["status", "--json"])
    assert status.exit_code == 0, status.output
    data = json.loads(status.output)
    assert data["watcher"]["behind"] == [] and not data["index"]["stale"]
    assert any(line.startswith("memory/2026-01-05.md: symbolic link") for line in data["index"]["not_read"])
    indexed = runner.invoke(cli, ["index", "--json"])
    assert indexed.exit_code == 0


def test_time_travel_and_autocommit_leave_links_alone(runner, vault_dir, outside):
    vault_at(vault_dir)
    git(vault_dir, "init", "-q")
    git(vault_dir, "add", "-A")
    git(vault_dir, "commit", "-q", "--no-verify", "-m", "first")
    (outside / "day.md").write_text(OUTSIDE_LOG)
    (vault_dir / "memory" / "2026-01-06.md").symlink_to(outside / "day.md")
    changes = runner.invoke(cli, ["changes", "--since", "2020-01-01", "--json"])
    assert changes.exit_code == 0, changes.output
    assert "zanzibar" not in changes.output
    vault = Vault.open(vault_dir)
    assert commit_vault(vault.root, vault.config) is None  # nothing to commit: the link is not a vault file
    assert git(vault_dir, "ls-files", "memory").stdout.split() == ["memory/2026-01-05.md"]


# -- point 8: a loop, an unreadable folder, MEMORY.md as a folder -----------------------------

def test_a_symlink_loop_is_reported_and_every_command_goes_on(runner, vault_dir):
    # `Too many levels of symbolic links` from iter_markdown made every command exit 1.
    vault_at(vault_dir)
    (vault_dir / "memory" / "a.md").symlink_to("b.md")
    (vault_dir / "memory" / "b.md").symlink_to("a.md")
    assert runner.invoke(cli, ["log", "--at", "2026-01-07 10:00", "still works"]).exit_code == 0
    assert contents(runner, "list", "--all") == ["User likes green tea", "still works"]
    assert contents(runner, "search", "works") == ["still works"]
    for args in (["index"], ["status"], ["index", "--wait"]):
        result = runner.invoke(cli, args)
        assert result.exit_code == 0, (args, result.output)
    code, report = check_json(runner)
    assert code == 1
    for path in ("memory/a.md", "memory/b.md"):
        assert "cannot be followed" in problem(report, path)["message"]


def test_memory_md_as_a_folder_is_a_problem_and_status_is_not_behind_forever(runner, vault_dir):
    vault_at(vault_dir)
    (vault_dir / "MEMORY.md").mkdir()
    (vault_dir / "MEMORY.md" / "notes.md").write_text(MEMORY)
    assert runner.invoke(cli, ["index"]).exit_code == 0
    status = runner.invoke(cli, ["status", "--json"])
    assert status.exit_code == 0, status.output
    data = json.loads(status.output)
    assert data["watcher"]["behind"] == [] and not data["index"]["stale"]
    assert data["index"]["not_read"] == ["MEMORY.md: a folder, not a regular file; memvault reads vault "
                                         "files only as regular files"]
    code, report = check_json(runner)
    assert code == 1 and problem(report, "MEMORY.md")["code"] == "MV111"
    result = runner.invoke(cli, ["curate", "--yes"])
    assert result.exit_code == 1 and "MEMORY.md: a folder" in result.output


def test_a_named_pipe_is_not_opened(vault_dir):
    # Opening a FIFO blocks until a writer comes: every reader would hang.
    vault_at(vault_dir)
    os.mkfifo(vault_dir / "memory" / "2026-01-06.md")
    for args in (["check", "--json"], ["list", "--json"], ["index"]):
        proc = subprocess.run([sys.executable, "-m", "memvault", *args], capture_output=True, text=True, timeout=60)
        assert proc.returncode == (1 if args[0] == "check" else 0), proc.stderr
    report = json.loads(subprocess.run([sys.executable, "-m", "memvault", "check", "--json"],
                                       capture_output=True, text=True, timeout=60).stdout)
    assert problem(report, "memory/2026-01-06.md")["code"] == "MV111"
    log = subprocess.run([sys.executable, "-m", "memvault", "log", "--at", "2026-01-06 10:00", "x"],
                         capture_output=True, text=True, timeout=60)
    assert log.returncode == 1 and "a named pipe" in log.stderr


def _as_other_user() -> list[str] | None:
    """How to run memvault without root's power to read anything (None: cannot here)."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    return [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"] if setpriv else None


def test_an_unreadable_folder_is_reported_by_its_path():
    # chmod 000 on a folder: its logs were skipped silently.
    prefix = _as_other_user()
    if prefix is None:
        pytest.skip("running as root without setpriv: a chmod-000 folder is readable")
    top = Path(tempfile.mkdtemp(prefix="mv-perm-"))
    try:
        os.chmod(top, 0o755)  # the other user must reach the vault
        vault = vault_at(top / "v", {"memory/2026/2026-01-06.md": OUTSIDE_LOG})
        (top / "v" / ".memvault").mkdir(mode=0o777)
        os.chmod(top / "v" / ".memvault", 0o777)
        os.chmod(vault / "memory" / "2026", 0)
        env = {k: v for k, v in os.environ.items() if k != "MEMVAULT_VAULT"}

        def run(*args: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run([*prefix, sys.executable, "-m", "memvault", "--vault", str(vault), *args],
                                  capture_output=True, text=True, env=env, cwd=top, timeout=60)

        check = run("check", "--json")
        assert check.returncode == 1, check.stderr
        found = problem(json.loads(check.stdout), "memory/2026")
        assert found["code"] == "MV100" and "cannot be read" in found["message"]
        listed = run("list", "--json")
        assert listed.returncode == 0, listed.stderr
        assert [e["content"] for e in json.loads(listed.stdout)] == ["User likes green tea"]
    finally:
        os.chmod(top / "v" / "memory" / "2026", 0o755)
        shutil.rmtree(top, ignore_errors=True)
