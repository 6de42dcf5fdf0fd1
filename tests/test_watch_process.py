"""The watcher as a real process (signals, SIGKILL, the CLI) and with --commit."""

from __future__ import annotations

import os
import signal
import stat

import pytest

from memvault.vault import Vault
from memvault.watch import watcher_health
from memvault.watch.state import read_record
from memvault.write.log import init_vault

from .conftest import git
from .helpers_watch import (
    DAY,
    WatchProcess,
    contents,
    entry,
    in_sync,
    log_file,
    wait_for,
    watching,
)


@pytest.fixture
def vault(vault_dir):
    init_vault(vault_dir, timezone="UTC")
    (vault_dir / DAY).write_text(log_file("2026-02-21", entry("09:15", "Atlas kickoff")))
    return vault_dir


def test_sigterm_flushes_pending_work_and_exits_0(vault):
    w = WatchProcess(vault, "--debounce", "10000")  # nothing would be indexed for 10 s
    try:
        w.read_until("ready")
        (vault / DAY).write_text(log_file("2026-02-21", entry("09:15", "Written just before SIGTERM")))
        wait_for(lambda: (read_record(vault) or {}).get("last_event"), what="event seen")
        w.proc.send_signal(signal.SIGTERM)
        code, lines = w.finish()
    finally:
        w.kill()
    assert code == 0
    assert "Written just before SIGTERM" in contents(vault)
    assert [line["event"] for line in lines][-1] == "stop"
    assert read_record(vault)["state"] == "stopped"


def test_sigint_exits_0_with_readable_log_lines(vault):
    import subprocess
    import sys

    proc = subprocess.Popen([sys.executable, "-m", "memvault", "--vault", str(vault), "watch"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        first = proc.stdout.readline()
        assert "watching" in first and "entries indexed" in first and not first.startswith("{")
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert "stopped" in out


def test_sigkill_then_restart_reconciles(vault):
    w = WatchProcess(vault)
    try:
        w.read_until("ready")
        os.kill(w.proc.pid, signal.SIGKILL)
        w.proc.wait()
    finally:
        w.kill()
    # while nobody watches
    (vault / DAY).write_text(log_file("2026-02-21", entry("09:15", "Changed while the watcher was dead")))
    (vault / "memory" / "2026-02-22.md").write_text(log_file("2026-02-22", entry("08:00", "New while dead")))
    health = watcher_health(Vault.open(vault))
    assert health.state == "gone" and "stopped without shutting down" in health.message
    assert "behind the files" in health.message and DAY in health.message
    w2 = WatchProcess(vault)
    try:
        ready = w2.read_until("ready")
        assert "caught up on 2 files" in ready["message"]
        assert {"Changed while the watcher was dead", "New while dead"} <= contents(vault)
        assert in_sync(vault)
        assert watcher_health(Vault.open(vault)).state == "running"
        w2.proc.send_signal(signal.SIGTERM)
        assert w2.finish()[0] == 0
    finally:
        w2.kill()


def test_second_watcher_process_refuses(vault):
    w = WatchProcess(vault)
    try:
        w.read_until("ready")
        second = WatchProcess(vault)
        code, _ = second.finish()
        err = second.proc.stderr.read()
        assert code == 1 and f"pid {w.proc.pid}" in err and "already watching" in err
    finally:
        w.proc.send_signal(signal.SIGTERM)
        w.finish()
        w.kill()


def subjects(root):
    return git(root, "log", "--format=%s").splitlines()


def test_commit_after_a_quiet_period(vault):
    git(vault, "add", "-A")
    git(vault, "commit", "-qm", "base")
    with watching(vault, commit=True, commit_quiet=0.3):
        with (vault / DAY).open("a") as fh:
            fh.write(entry("10:00", "B") + entry("11:00", "C") + entry("12:00", "D"))
        wait_for(lambda: subjects(vault)[0] == f"memvault: +3 entries in {DAY}", what="first commit")
        assert set(git(vault, "show", "--name-only", "--format=", "HEAD").split()) == {DAY}
        (vault / "memory" / "2026-02-22.md").write_text(log_file("2026-02-22", entry("08:00", "E")))
        (vault / DAY).unlink()
        wait_for(lambda: subjects(vault)[0] == "memvault: +1 entry, -4 entries in 2 files", what="second commit")
    files = git(vault, "ls-files").split()
    assert not [f for f in files if f.startswith(".memvault")]
    assert git(vault, "status", "--porcelain", "--", "memory", "MEMORY.md") == ""


def test_failed_commit_is_reported_and_retried_after_the_next_change(vault):
    git(vault, "add", "-A")
    git(vault, "commit", "-qm", "base")
    hook = vault / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\nif [ -e refuse ]; then echo 'hook refuses' >&2; exit 1; fi\n")
    hook.chmod(hook.stat().st_mode | stat.S_IEXEC)
    (vault / "refuse").write_text("")
    with watching(vault, commit=True, commit_quiet=0.2) as w:
        (vault / DAY).write_text(log_file("2026-02-21", entry("09:15", "Atlas kickoff"), entry("10:00", "B")))
        wait_for(lambda: [x for x in w.log.lines if x["event"] == "error" and "hook refuses" in x["message"]],
                 what="commit failure reported")
        wait_for(lambda: "hook refuses" in read_record(vault)["commit"].get("error", ""), what="error in record")
        assert subjects(vault)[0] == "base"
        (vault / "refuse").unlink()
        with (vault / DAY).open("a") as fh:
            fh.write(entry("11:00", "C"))
        wait_for(lambda: subjects(vault)[0] == f"memvault: +2 entries in {DAY}", what="retried commit")
    assert "sha" in read_record(vault)["commit"]  # the final record, written on stop


def test_cli_status_and_index_wait(vault, runner):
    import json

    from memvault.cli import cli

    (vault / DAY).write_text(log_file("2026-02-21", entry("09:15", "Waited for")))
    got = runner.invoke(cli, ["status"])
    assert got.exit_code == 0, got.output
    assert "watcher: no watcher running; the index is behind the files" in got.output
    got = runner.invoke(cli, ["index", "--wait", "--json"])
    assert got.exit_code == 0, got.output
    assert json.loads(got.output)["watcher"] == "not running"
    assert "Waited for" in contents(vault)
    with watching(vault):
        got = runner.invoke(cli, ["status", "--json"])
        assert got.exit_code == 0, got.output
        data = json.loads(got.output)["watcher"]
        assert data["state"] == "running" and data["behind"] == []
        got = runner.invoke(cli, ["index", "--wait"])
        assert got.exit_code == 0 and "watcher running" in got.output
    got = runner.invoke(cli, ["index", "--wait", "--rebuild"])
    assert got.exit_code == 2 and "do not go together" in got.output


def test_commit_needs_a_git_repository(vault_dir, runner):
    from memvault.cli import cli

    init_vault(vault_dir, timezone="UTC", git=False)
    got = runner.invoke(cli, ["watch", "--commit"])
    assert got.exit_code == 1 and "not in a git repository" in got.output
    got = runner.invoke(cli, ["status"])  # the refused watcher left no lock and no "gone" record
    assert "watcher: no watcher running" in got.output


def test_rebuild_by_another_process_while_watching(vault, runner):
    from memvault.cli import cli

    with watching(vault):
        got = runner.invoke(cli, ["index", "--rebuild"])  # replaces the index file under the watcher
        assert got.exit_code == 0, got.output
        (vault / DAY).write_text(log_file("2026-02-21", entry("09:15", "After the rebuild")))
        wait_for(lambda: "After the rebuild" in contents(vault), what="update lands in the new index file")
