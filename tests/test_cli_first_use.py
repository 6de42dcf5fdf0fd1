"""Issue 14, a new user's QA pass: windows, limits, notices and options as people and agents type them.

Through the CLI on real vaults; what the vault holds afterwards is read through the library.
"""

from __future__ import annotations

import json

import pytest

from memvault.cli import cli
from memvault.vault import Vault

# ---------------------------------------------------------------------------- reversed windows


@pytest.mark.parametrize("args", [
    ["list", "--since", "2026-02-21", "--until", "2026-02-14"],
    ["search", "dark mode", "--since", "2026-02-21", "--until", "2026-02-14"],
    ["changes", "--since", "2026-02-21", "--until", "2026-02-14"],
    ["curate", "--dry-run", "--since", "2026-02-21", "--until", "2026-02-14"],
])
def test_a_window_that_ends_before_it_starts_is_a_usage_error_naming_both_times(runner, sample_vault, args):
    text = runner.invoke(cli, args)
    assert text.exit_code == 2, text.output
    assert "before --since" in text.stderr and "'2026-02-14'" in text.stderr and "'2026-02-21'" in text.stderr
    assert text.stderr.startswith("Usage:")
    error = json.loads(runner.invoke(cli, [*args, "--json"]).stderr)["error"]
    assert error["code"] == "usage" and "2026-02-14" in error["message"] and "2026-02-21" in error["message"]


def test_relative_times_reversed_are_refused_and_an_equal_window_is_not(runner, sample_vault):
    result = runner.invoke(cli, ["changes", "--since", "3 days ago", "--until", "5 days ago"])
    assert result.exit_code == 2 and "'5 days ago'" in result.stderr and "'3 days ago'" in result.stderr
    # one day, both ends the same date: --since is its start, --until its end, not reversed
    same = runner.invoke(cli, ["list", "--since", "2026-02-14", "--until", "2026-02-14", "--json"])
    assert same.exit_code == 0 and {d["id"][:10] for d in json.loads(same.stdout)} == {"2026-02-14"}


def test_the_library_refuses_a_reversed_window_for_changes_too(sample_vault):
    from memvault.errors import InputError

    with Vault.open(sample_vault) as vault, pytest.raises(InputError, match="before --since"):
        vault.changes("2026-02-21", "2026-02-14")


# ---------------------------------------------------------------------------- -n/--limit


def test_list_n_shows_the_newest_entries_oldest_first(runner, sample_vault):
    everything = json.loads(runner.invoke(cli, ["list", "--json"]).stdout)
    assert len(everything) > 2
    two = runner.invoke(cli, ["list", "-n", "2", "--json"])
    assert two.exit_code == 0, two.output
    assert [d["id"] for d in json.loads(two.stdout)] == [d["id"] for d in everything][-2:]
    assert runner.invoke(cli, ["list", "--limit", "0"]).exit_code == 2


def test_changes_n_keeps_that_many_of_each_kind_and_counts_the_rest(runner, sample_vault):
    full = json.loads(runner.invoke(cli, ["changes", "--since", "2026-02-01", "--json"]).stdout)
    assert len(full["new"]) > 1
    cut = runner.invoke(cli, ["changes", "--since", "2026-02-01", "-n", "1", "--json"])
    data = json.loads(cut.stdout)
    # ids, not whole entries: a decayed confidence moves between the two calls
    assert [d["id"] for d in data["new"]] == [d["id"] for d in full["new"][:1]]
    assert data["more"]["new"] == len(full["new"]) - 1
    text = runner.invoke(cli, ["changes", "--since", "2026-02-01", "--limit", "1"]).output
    assert f"New (1 of {len(full['new'])})" in text


# ---------------------------------------------------------------------------- notices


def test_only_common_words_is_a_json_notice_under_json(runner, sample_vault):
    result = runner.invoke(cli, ["search", "the", "of", "and", "--json"])
    assert result.exit_code == 0
    json.loads(result.stdout)  # stdout stays the hits
    notice = json.loads(result.stderr)["notice"]["message"]
    assert "common" in notice, notice
    assert "note: " in runner.invoke(cli, ["search", "the", "of", "and"]).stderr


# ---------------------------------------------------------------------------- options


def test_json_before_a_sub_groups_command(runner, sample_vault):
    from tests.conftest import git

    git(sample_vault, "init", "-q")
    before = runner.invoke(cli, ["hook", "--json", "status"])
    after = runner.invoke(cli, ["hook", "status", "--json"])
    assert before.exit_code == after.exit_code == 0, before.output
    assert json.loads(before.stdout) == json.loads(after.stdout)


def test_an_option_is_not_taken_as_the_vault(runner, sample_vault):
    result = runner.invoke(cli, ["list", "--vault", "--json"])
    assert result.exit_code == 2
    error = json.loads(result.stderr)["error"]
    assert error["code"] == "usage" and "'--json'" in error["message"] and "--vault" in error["message"]
    assert runner.invoke(cli, ["--vault", "--all", "list"]).exit_code == 2
    # a directory that really is named so is reachable as ./--odd
    odd = sample_vault / "--odd"
    Vault  # noqa: B018 (the library reads it below)
    from tests.conftest import plain_vault

    plain_vault(odd)
    ok = runner.invoke(cli, ["list", "--json", "--vault", f"{sample_vault}/--odd"])
    assert ok.exit_code == 0 and [d["content"] for d in json.loads(ok.stdout)] == ["User likes tea"]


def test_a_missing_option_value_shows_the_usage_line(runner, sample_vault):
    for args in (["status", "--vault"], ["--vault"], ["list", "--since"]):
        result = runner.invoke(cli, args)
        assert result.exit_code == 2 and result.stderr.startswith("Usage: "), (args, result.stderr)


def test_json_with_a_value_is_refused_as_json(runner, sample_vault):
    result = runner.invoke(cli, ["list", "--json=yes"])
    assert result.exit_code == 2
    assert json.loads(result.stderr)["error"]["code"] == "usage"


@pytest.mark.parametrize("command", ["show", "history"])
def test_an_empty_id_is_a_usage_error(runner, sample_vault, command):
    for spec in ("", "   "):
        text = runner.invoke(cli, [command, spec])
        assert text.exit_code == 2 and text.stderr.startswith("Usage:"), text.stderr
        error = json.loads(runner.invoke(cli, [command, spec, "--json"]).stderr)["error"]
        assert error["code"] == "usage" and "no entry named" in error["message"]


# ---------------------------------------------------------------------------- file and line in errors

TEMPLATE_EDITS = [  # (what a person changed in the template's memvault.toml, the key's table and name)
    (r'^rate = .*$', "rate = 1.5", "decay", "rate"),
    (r'^backend = .*$', 'backend = "bogus"', "index", "backend"),
    (r'^judge = .*$', 'judge = "some"', "hook", "judge"),
    (r'^timezone = .*$', 'timezone = "Mars/Olympus"', "vault", "timezone"),
    (r'^disable = .*$', 'disable = ["MV999"]', "checks", "disable"),
    (r'^budget_chars = .*$', "budget_chars = -5", "curate", "budget_chars"),
]


@pytest.mark.parametrize("pattern, replacement, table, key", TEMPLATE_EDITS)
def test_a_bad_setting_names_the_file_and_the_line_of_its_key(runner, tmp_path, pattern, replacement, table, key):
    import re

    root = tmp_path / "Tagebuch"
    assert runner.invoke(cli, ["init", str(root), "--no-git"]).exit_code == 0
    toml = root / "memvault.toml"
    text, n = re.subn(pattern, replacement, toml.read_text(), count=1, flags=re.M)
    assert n == 1
    toml.write_text(text)
    want = text.splitlines().index(replacement) + 1
    # the shape of every setting is checked on load, whatever runs; [checks] disable's codes and
    # [curate]'s ranges when the command that reads them runs
    commands = {"disable": [["check"]], "budget_chars": [["check"], ["curate", "--dry-run"]]}.get(
        key, [["check"], ["curate", "--dry-run"], ["list"]])
    for command in commands:
        result = runner.invoke(cli, [*command, "--vault", str(root), "--json"])
        error = json.loads(result.stderr)["error"]
        assert result.exit_code == 1 and error["code"] == "config", (command, error)
        assert (error["file"], error["line"]) == (str(toml), want), (command, error)
        assert f"[{table}] {key}" in error["message"]
        text_error = runner.invoke(cli, [*command, "--vault", str(root)]).stderr
        assert f"{toml}:{want}: " in text_error, text_error


def test_a_key_not_on_a_line_of_its_own_names_its_table_or_only_the_file(runner, vault_dir):
    from tests.conftest import plain_vault

    plain_vault(vault_dir)
    toml = vault_dir / "memvault.toml"
    toml.write_text('[vault]\ntimezone = "UTC"\n\n[search]\nfield_weights = { title = 2.0, body = "viel" }\n')
    error = json.loads(runner.invoke(cli, ["list", "--json"]).stderr)["error"]
    assert error["line"] == 5 and "field_weights" in error["message"], error
    toml.write_text('decay = { rate = 7 }\n[vault]\ntimezone = "UTC"\n')  # an inline table: its key's line
    error = json.loads(runner.invoke(cli, ["list", "--json"]).stderr)["error"]
    assert error["line"] == 1 and error["file"] == str(toml), error


def test_memvault_toml_that_is_not_utf8_names_the_line(runner, vault_dir):
    from tests.conftest import plain_vault

    plain_vault(vault_dir)
    (vault_dir / "memvault.toml").write_bytes(b'[vault]\ntimezone = "UTC"\n# Notiz f\xfcr sp\xe4ter\n')
    result = runner.invoke(cli, ["list", "--json"])
    error = json.loads(result.stderr)["error"]
    assert result.exit_code == 1 and error["code"] == "config" and error["line"] == 3, error
    assert error["file"].endswith("memvault.toml") and "UTF-8" in error["message"]


def test_show_of_an_empty_place_names_the_file_and_line(runner, sample_vault):
    result = runner.invoke(cli, ["show", "memory/2026-02-14.md:999", "--json"])
    error = json.loads(result.stderr)["error"]
    assert result.exit_code == 1 and error["code"] == "not_found"
    assert (error["file"], error["line"]) == ("memory/2026-02-14.md", 999), error


def test_a_refused_secret_names_the_file_it_would_have_gone_to(runner, sample_vault):
    before = sorted(e.id for e in Vault.open(sample_vault).events)
    result = runner.invoke(cli, ["log", "--at", "2026-02-21 11:00", "DB password=hunter2hunter2", "--json"])
    error = json.loads(result.stderr)["error"]
    assert result.exit_code == 1 and error["code"] == "secret"
    # the entry has no line in the file yet: line stays null (the message names the line within it)
    assert (error["file"], error["line"]) == ("memory/2026-02-21.md", None), error
    assert sorted(e.id for e in Vault.open(sample_vault).events) == before


# ---------------------------------------------------------------------------- locks


def _hold(path, *, write_pid: str | None = None):
    """A python process, not memvault, that holds an flock on `path` until its stdin closes."""
    import subprocess
    import sys

    path.parent.mkdir(parents=True, exist_ok=True)
    code = ("import fcntl, os, sys\n"
            f"fd = os.open({str(path)!r}, os.O_RDWR | os.O_CREAT)\n"
            "fcntl.flock(fd, fcntl.LOCK_EX)\n"
            + (f"os.ftruncate(fd, 0); os.write(fd, b{write_pid!r})\n" if write_pid else "")
            + "print('held', flush=True)\nsys.stdin.read()\n")
    proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline() == "held\n"
    return proc


def _gone_pid() -> int:
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return int(done.stdout)


@pytest.mark.slow  # log waits its lock timeout (10 s) before it refuses
def test_a_lock_error_names_only_a_pid_that_holds_the_lock(runner, sample_vault):
    lock = Vault.open(sample_vault).lock_path
    lock.parent.mkdir(parents=True, exist_ok=True)
    # what the last memvault holder left behind (a killed one does not clear it): a pid long gone
    lock.write_text(str(_gone_pid()))
    holder = _hold(lock)
    try:
        from memvault.fsio import locked

        with pytest.raises(Exception) as caught, locked(lock, timeout=0.05, what="memory/2026-02-21.md"):
            pass
        assert f"(pid {holder.pid})" in str(caught.value), caught.value  # the real holder, from /proc/locks
        result = runner.invoke(cli, ["log", "--at", "2026-02-21 11:00", "noch ein Tee", "--json"])
    finally:
        holder.communicate("")
    error = json.loads(result.stderr)["error"]
    assert result.exit_code == 1 and error["code"] == "locked"
    assert error["file"] == "memory/2026-02-21.md" and "memory/2026-02-21.md" in error["message"]
    assert "memvault process" not in error["message"]


def test_the_pid_is_cleared_when_memvault_lets_go(runner, sample_vault):
    result = runner.invoke(cli, ["log", "--at", "2026-02-21 11:00", "Grüner Tee am Nachmittag"])
    assert result.exit_code == 0, result.output
    assert Vault.open(sample_vault).lock_path.read_text() == ""


def test_lock_holder_without_proc_locks_names_a_live_pid_only(monkeypatch, tmp_path):
    import os

    from memvault import fsio

    monkeypatch.setattr(fsio, "flock_holders", lambda st: None)  # a system without /proc/locks
    path = tmp_path / "write.lock"
    fd = os.open(path, os.O_RDWR | os.O_CREAT)
    try:
        os.write(fd, str(_gone_pid()).encode())
        assert fsio.lock_holder(fd) == "another process"
        os.pwrite(fd, str(os.getpid()).encode().ljust(12), 0)
        assert fsio.lock_holder(fd) == f"another process (pid {os.getpid()})"
    finally:
        os.close(fd)


def test_a_search_waits_for_a_locked_index_only_as_long_as_the_config_says(runner, sample_vault):
    import time

    from memvault.search.index import open_index

    with Vault.open(sample_vault) as vault:
        index = open_index(vault, None)
        lock = index.lock_path
        index.close()
    with (sample_vault / "memvault.toml").open("a") as f:
        f.write("\n[index]\nlock_timeout = 0.2\n")
    (sample_vault / "memory" / "2026-02-21.md").open("a").write("\n## 18:00 - Observation\nTee ist alle\n")
    holder = _hold(lock)
    try:
        start = time.monotonic()
        result = runner.invoke(cli, ["search", "Tee", "--json"])
        took = time.monotonic() - start
    finally:
        holder.communicate("")
    error = json.loads(result.stderr)["error"]
    assert result.exit_code == 1 and error["code"] == "locked", error
    assert took < 10 and "[index] lock_timeout" in error["message"] and f"pid {holder.pid}" in error["message"]


# ---------------------------------------------------------------------------- writing into broken files


def test_log_refuses_a_file_whose_front_matter_is_broken(runner, sample_vault):
    day = sample_vault / "memory" / "2026-02-21.md"
    broken = b"---\ntags: [tee, kaffee\n---\n" + day.read_bytes()
    day.write_bytes(broken)
    result = runner.invoke(cli, ["log", "--at", "2026-02-21 11:00", "Matcha probiert", "--json"])
    error = json.loads(result.stderr)["error"]
    assert result.exit_code == 1 and error["code"] == "refused" and "MV101" in error["message"], error
    assert error["file"] == "memory/2026-02-21.md" and isinstance(error["line"], int)
    assert day.read_bytes() == broken
    assert runner.invoke(cli, ["log", "--at", "2026-02-14 11:00", "Matcha probiert"]).exit_code == 0  # other days


def test_check_fix_says_a_non_utf8_file_is_why_it_left_problems(runner, vault_dir):
    from tests.conftest import plain_vault

    plain_vault(vault_dir)
    day = vault_dir / "memory" / "2026-02-22.md"
    raw = b"#  2026-02-22\n\n## 10:00 - Belief   \nUser mag Tee \xe4\n\n\n\n## 09:00 - Decision\nKaffee\n"
    day.write_bytes(raw)
    result = runner.invoke(cli, ["check", "--fix", "--json"])
    assert day.read_bytes() == raw
    report = json.loads(result.stdout)
    left = [d for d in report["left_by_fix"] if d["path"] == "memory/2026-02-22.md"]
    assert left and all("not UTF-8 at line 4" in d["why"] and "never rewrites" in d["why"] for d in left), report
    text = runner.invoke(cli, ["check", "--fix"]).output
    assert "could not be repaired without changing content" not in text and "not UTF-8 at line 4" in text


# ---------------------------------------------------------------------------- status after a refused commit

TOKEN = "ghp_" + "Zk3Qp9Lm2Xv8Rt5Yw7Nb4Hc6Jd1Fg0Sa2Ty3Ui"


def test_status_shows_a_refused_watcher_commit_as_past_and_drops_it_once_committed(runner, tmp_path):
    import signal

    from memvault.watch.state import read_record
    from tests.helpers_check import git
    from tests.helpers_watch import WatchProcess, wait_for

    root = tmp_path / "Gedächtnis"
    assert runner.invoke(cli, ["init", str(root), "--timezone", "Europe/Berlin"]).exit_code == 0  # the real hook
    day = root / "memory" / "2026-02-21.md"
    w = WatchProcess(root, "--commit", "--quiet-period", "0.2")
    try:
        w.read_until("ready")
        day.write_text(f"# 2026-02-21\n\n## 09:15 - Observation\nDeploy mit {TOKEN} gemacht\n")
        wait_for(lambda: "unstaged" in ((read_record(root) or {}).get("commit") or {}), what="refusal recorded",
                 timeout=30)
        running = runner.invoke(cli, ["--vault", str(root), "status"]).output
        assert running.count("looks like a GitHub token") == 1, running  # the hook's message once
        assert "the watcher commits after the next change" in running
        w.proc.send_signal(signal.SIGTERM)
        assert w.finish()[0] == 0
    finally:
        if w.proc.poll() is None:
            w.proc.kill()
    at = read_record(root)["commit"]["at"]
    stopped = runner.invoke(cli, ["--vault", str(root), "status"]).output
    assert f"last commit failed ({at}, " in stopped and "by a watcher no longer running" in stopped, stopped
    assert "the watcher commits" not in stopped and stopped.count("looks like a GitHub token") == 1
    assert "not committed, unstaged again: memory/2026-02-21.md" in stopped

    day.write_text("# 2026-02-21\n\n## 09:15 - Observation\nDeploy gemacht (Token im Tresor)\n")
    git(root, "add", "memory/2026-02-21.md")
    git(root, "commit", "-q", "-m", "Deploy ohne Token")
    done = runner.invoke(cli, ["--vault", str(root), "status"])
    assert "commit failed" not in done.output and "not committed" not in done.output, done.output
    failure = json.loads(runner.invoke(cli, ["--vault", str(root), "status", "--json"]).stdout)["watcher"]["commit_failure"]
    assert failure["resolved"] is True and failure["uncommitted"] == [] and failure["at"] == at
