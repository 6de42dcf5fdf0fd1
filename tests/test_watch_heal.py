"""Issue 10, points 10 and 11: stale git locks, the single-watcher lock, polling, status.

Real git repositories, real leftover locks (a git killed with its process group), real
processes holding files open, and `memvault watch` as a real process.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from memvault.cli import cli
from memvault.sync.commit import GitLocked, commit_vault
from memvault.vault import Vault
from memvault.watch.state import WatchLock, lock_path
from memvault.write.log import init_vault

from .conftest import git
from .helpers_watch import DAY, WatchProcess, contents, entry, in_sync, log_file, wait_for

OLD = 120  # seconds: a lock this old is past memvault's bound (60 s)


@pytest.fixture
def vault(vault_dir: Path) -> Path:
    init_vault(vault_dir, timezone="UTC")
    (vault_dir / DAY).write_text(log_file("2026-02-21", entry("09:15", "Atlas kickoff")))
    git(vault_dir, "add", "-A")
    git(vault_dir, "commit", "-qm", "base")
    return vault_dir


def age(path: Path, seconds: float = OLD) -> None:
    then = time.time() - seconds
    os.utime(path, (then, then))


def subjects(root: Path) -> list[str]:
    return git(root, "log", "--format=%s").splitlines()


SLOW_HOOK = "#!/bin/sh\ntouch hook-ran\nsleep 60\n"  # hooks run at the top of the work tree


def slow_hook(root: Path) -> None:
    """A pre-commit hook that marks that it runs, then sleeps (the one there is kept aside)."""
    hook = root / ".git" / "hooks" / "pre-commit"
    if hook.exists():
        shutil.copy2(hook, root / "pre-commit.saved")
    hook.parent.mkdir(parents=True, exist_ok=True)
    hook.write_text(SLOW_HOOK)
    hook.chmod(0o755)


def git_commit_in_hook(root: Path) -> subprocess.Popen:
    """A `git commit` in its own process group, held in its (slow) pre-commit hook."""
    slow_hook(root)
    with (root / DAY).open("a") as fh:
        fh.write(entry("10:00", "Committed by hand"))
    proc = subprocess.Popen(["git", "commit", "-aqm", "by hand"], cwd=root, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for(lambda: (root / "hook-ran").exists(), timeout=20, what="the hook to run")
    return proc


def restore_hook(root: Path) -> None:
    hook, saved = root / ".git" / "hooks" / "pre-commit", root / "pre-commit.saved"
    if saved.exists():
        shutil.copy2(saved, hook)
        saved.unlink()
    else:
        hook.unlink()
    (root / "hook-ran").unlink(missing_ok=True)


# -- point 10: stale git locks --------------------------------------------------------------


def test_lock_left_by_a_killed_watcher_commit_is_removed(vault):
    """kill -9 of the watcher's process group mid-commit leaves .git/index.lock; the next
    watcher removes it once it is stale and commits."""
    slow_hook(vault)
    first = subprocess.Popen([sys.executable, "-m", "memvault", "--vault", str(vault), "watch", "--commit",
                              "--quiet-period", "0.2"], start_new_session=True,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        with (vault / DAY).open("a") as fh:
            fh.write(entry("10:00", "Logged while watched"))
        wait_for(lambda: (vault / "hook-ran").exists(), timeout=30, what="the auto-commit's hook to run")
    finally:
        os.killpg(first.pid, signal.SIGKILL)
        first.wait()
    lock = vault / ".git" / "index.lock"
    wait_for(lambda: lock.exists(), what="the leftover lock")  # a real leftover of a killed git
    restore_hook(vault)
    age(lock)
    second = WatchProcess(vault, "--commit", "--quiet-period", "0.2")
    try:
        second.read_until("ready")
        done = second.read_until("commit", timeout=30)
        assert done["message"].endswith(f"memvault: +1 entry in {DAY}")
        warned = [x for x in second.lines if x["event"] == "warning" and "stale git lock" in x["message"]]
        assert len(warned) == 1 and str(lock) in warned[0]["message"]
    finally:
        second.proc.send_signal(signal.SIGTERM)
        second.finish()
    assert not lock.exists()
    assert subjects(vault)[0] == f"memvault: +1 entry in {DAY}"


HOLD_OPEN = textwrap.dedent("""
    import os, sys, time
    fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT | os.O_EXCL)  # as git takes it
    print("ready", flush=True)
    time.sleep(60)
""")


def test_a_lock_a_live_process_holds_open_is_never_removed(vault):
    lock = vault / ".git" / "index.lock"
    holder = subprocess.Popen([sys.executable, "-c", HOLD_OPEN, str(lock)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "ready"
        age(lock)
        with (vault / DAY).open("a") as fh:
            fh.write(entry("10:00", "Waiting for the lock"))
        with pytest.raises(GitLocked, match=f"process {holder.pid} has it open"):
            commit_vault(vault, Vault.open(vault).config)
        assert lock.exists()
    finally:
        holder.kill()
        holder.wait()
    said = []
    done = commit_vault(vault, Vault.open(vault).config, say=said.append)  # its holder is gone: stale now
    assert done is not None and not lock.exists()
    assert len(said) == 1 and "stale git lock" in said[0]


def test_the_lock_of_a_commit_whose_hook_runs_is_live(vault):
    """git closes index.lock while its hook runs: the git process in the repository is what
    shows the lock is live."""
    proc = git_commit_in_hook(vault)
    lock = vault / ".git" / "index.lock"
    try:
        assert lock.exists()
        age(lock)
        (vault / "memory" / "2026-02-22.md").write_text(log_file("2026-02-22", entry("08:00", "Meanwhile")))
        with pytest.raises(GitLocked, match="runs in the repository"):
            commit_vault(vault, Vault.open(vault).config)
        assert lock.exists()
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    restore_hook(vault)
    assert commit_vault(vault, Vault.open(vault).config, say=lambda _m: None) is not None
    assert not lock.exists()


def test_a_young_leftover_lock_is_left_until_it_is_stale(vault):
    proc = git_commit_in_hook(vault)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    restore_hook(vault)
    lock = vault / ".git" / "index.lock"
    assert lock.exists()
    (vault / "memory" / "2026-02-22.md").write_text(log_file("2026-02-22", entry("08:00", "Soon")))
    with pytest.raises(GitLocked, match="only .*s old"):
        commit_vault(vault, Vault.open(vault).config)
    assert lock.exists()


# -- point 11: the watcher ------------------------------------------------------------------


def test_rm_rf_memvault_under_a_running_watcher_still_refuses_a_second(vault, runner):
    first = WatchProcess(vault)
    try:
        first.read_until("ready")
        shutil.rmtree(vault / ".memvault")
        second = WatchProcess(vault)
        try:
            code, _ = second.finish(timeout=20)
        except subprocess.TimeoutExpired:
            second.kill()
            raise AssertionError("a second watcher started after .memvault was deleted") from None
        assert code == 1
        assert "already watching" in second.proc.stderr.read()
        got = runner.invoke(cli, ["status", "--json"])
        assert json.loads(got.stdout)["watcher"]["state"] == "running"
        # the first one goes on: the index comes back with the next change, the pid file with a heartbeat
        (vault / DAY).write_text(log_file("2026-02-21", entry("09:15", "After the purge")))
        wait_for(lambda: "After the purge" in contents(vault), timeout=20, what="the index rebuilt")
        wait_for(lambda: lock_path(vault).exists() and lock_path(vault).read_text() == str(first.proc.pid),
                 timeout=20, what="the pid file written again")
    finally:
        first.proc.send_signal(signal.SIGTERM)
        first.finish()


@pytest.mark.slow  # a few seconds of real reindexing / polling; the slow suite runs it
def test_polling_sees_a_same_size_edit_with_the_mtime_put_back(vault):
    path = vault / DAY
    path.write_text(log_file("2026-02-21", entry("09:15", "Atlas kickoff Monday")))
    age(path, 86400)  # an old file: the index trusts its size and mtime
    watcher = WatchProcess(vault, "--polling")
    try:
        watcher.read_until("ready")
        st = path.stat()
        path.write_text(log_file("2026-02-21", entry("09:15", "Atlas kickoff Friday")))
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
        assert path.stat().st_size == st.st_size and path.stat().st_mtime_ns == st.st_mtime_ns
        wait_for(lambda: "Atlas kickoff Friday" in contents(vault), timeout=10,
                 what="the edit indexed (polling and the stat comparison cannot see it)")
    finally:
        watcher.proc.send_signal(signal.SIGTERM)
        watcher.finish()


@pytest.mark.slow
def test_polling_follows_git_stash(vault):
    days = [f"2026-01-{d:02d}" for d in range(1, 21)]
    for day in days:
        (vault / "memory" / f"{day}.md").write_text(log_file(day, entry("09:00", f"base {day}")))
    git(vault, "add", "-A")
    git(vault, "commit", "-qm", "days")
    watcher = WatchProcess(vault, "--polling")
    try:
        watcher.read_until("ready")
        for day in days:
            with (vault / "memory" / f"{day}.md").open("a") as fh:
                fh.write(entry("10:00", f"first {day}") + entry("11:00", f"second {day}"))
        wait_for(lambda: in_sync(vault), timeout=15, what="40 entries indexed")
        git(vault, "stash")
        wait_for(lambda: in_sync(vault), timeout=10, what="the stash followed")
        git(vault, "stash", "pop")
        wait_for(lambda: in_sync(vault), timeout=10, what="the stash pop followed")
    finally:
        watcher.proc.send_signal(signal.SIGTERM)
        watcher.finish()


def test_content_check_hashes_every_file_in_turn_within_its_budget(tmp_path):
    from memvault.watch.sync import Stat, hashed_otherwise
    from memvault.watch.verify import ContentCheck

    sizes = {f"memory/{n}.md": 40 for n in range(10)}
    check = ContentCheck(budget=100)  # two files a pass
    passes = [check.pick(sizes) for _ in range(6)]
    assert [len(p) for p in passes] == [2] * 6
    assert sorted(sum(passes[:5], [])) == sorted(sizes)  # all ten in five passes, then round again
    assert passes[5] == passes[0]
    assert ContentCheck(budget=1).pick({"memory/big.md": 10**9}) == ["memory/big.md"]  # never stuck
    (tmp_path / "memory").mkdir()
    (tmp_path / "memory" / "a.md").write_text("new")
    disk = ContentCheck().hash_slice(tmp_path, {"memory/a.md": Stat(3, 1)})
    indexed = {"memory/a.md": (3, 1, "0" * 64, 1)}
    assert hashed_otherwise(disk, {"memory/a.md"}, indexed) == {"memory/a.md"}
    assert hashed_otherwise({"memory/a.md": Stat(3, 1)}, {"memory/a.md"}, indexed) == set()


BROKEN_RECORDS = [
    {"state": "ready", "broken": ["memory/x.md"], "heartbeat": "2099-01-01T00:00:00+00:00"},
    {"state": "ready", "errors": "oops", "commit": "abc", "heartbeat": "2099-01-01T00:00:00+00:00"},
    {"state": "ready", "errors": [1, {"at": 2}], "heartbeat": 5},
    {"state": "ready", "heartbeat": "2026-01-01T00:00:00"},  # no zone
    {"state": ["ready"], "pid": "12", "pending": "many"},
]


@pytest.mark.parametrize("record", BROKEN_RECORDS)
def test_status_with_a_broken_watch_record(vault, runner, record):
    lock = WatchLock(vault)
    lock.acquire()  # a running watcher, as far as status can tell
    try:
        (vault / ".memvault" / "watch.json").write_text(json.dumps(record))
        got = runner.invoke(cli, ["status"])
        assert got.exit_code == 0 and got.exception is None, got.output
        assert "watcher" in got.output
        got = runner.invoke(cli, ["status", "--json"])
        assert got.exit_code == 0 and json.loads(got.stdout)["watcher"]["state"] in ("running", "stale")
    finally:
        lock.release()


@pytest.mark.parametrize("broken", [
    "## 10:00 Observation\nBudget\n",  # the watcher keeps the last good entries
    "---\ndate: 2026-02-30\n---\n",  # a value the frontmatter cannot hold
])
def test_status_while_a_broken_file_is_present(vault, runner, broken):
    from .helpers_watch import watching

    with watching(vault) as w:
        seen = len(w.log.lines)
        (vault / DAY).write_text(broken + log_file("2026-02-21", entry("09:15", "Atlas kickoff")))
        wait_for(lambda: [x for x in w.log.lines[seen:] if x["event"] in ("indexed", "broken", "error")],
                 what="the watcher to look at the file")
        got = runner.invoke(cli, ["status"])
        assert got.exception is None or isinstance(got.exception, SystemExit), got.exception
        assert got.exit_code == 0, got.output
        assert "watcher: watcher running" in got.output
