"""Issue 10, point 9: the derived databases in .memvault heal themselves.

Random bytes over the search index's pages, a folder where the index file belongs, rebuilds
killed mid-way, and the same damage to the recorded-time cache (history.sqlite) and the
access counts: every command goes on working, says that it rebuilt, and leaves a sound file.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from memvault.cli import cli

from .conftest import git
from .helpers_index import entry, make_vault, write_log

DAYS = [f"2026-01-{d:02d}" for d in range(1, 21)]


@pytest.fixture
def vault(vault_dir: Path) -> Path:
    make_vault(vault_dir)
    for n, day in enumerate(DAYS):
        write_log(vault_dir, day, entry("09:00", "Observation", f"weekly planning note {n} alpha"),
                  entry("10:00", "Decision", f"ship the release {n} bravo"))
    return vault_dir


def scribble(path: Path, seed: int = 7, skip_pages: int = 2) -> None:
    """Random bytes over every page of a SQLite file after the first `skip_pages`."""
    rng = random.Random(seed)
    size = path.stat().st_size
    with open(path, "r+b") as fh:
        for page in range(skip_pages, size // 4096):
            fh.seek(page * 4096)
            fh.write(rng.randbytes(4096))


def keep_stamp(index_dir: Path) -> None:
    """Make the damage invisible to the open-time check (as a write within the same clock
    tick would be): the stamp says the file is as its last writer left it."""
    db = index_dir / "sqlite.db"
    st = os.stat(db)
    (index_dir / "sqlite.db.checked").write_text(f"{st.st_ino} {st.st_size} {st.st_mtime_ns} {st.st_ctime_ns}\n")


def quick_check(path: Path) -> str:
    conn = sqlite3.connect(path)
    try:
        return conn.execute("PRAGMA quick_check").fetchone()[0]
    finally:
        conn.close()


def run(runner, *args: str):
    result = runner.invoke(cli, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


def ids(output: str) -> list[str]:
    return [line.split()[2] for line in output.splitlines() if line[:3].strip().rstrip(".").isdigit()]


# -- the search index ---------------------------------------------------------------------


def test_random_bytes_over_the_index_are_found_and_rebuilt(vault, runner):
    assert run(runner, "index").exit_code == 0
    db = vault / ".memvault" / "index" / "sqlite.db"
    before = ids(run(runner, "search", "bravo", "--limit", "3").stdout)
    scribble(db)
    got = run(runner, "status")
    assert got.exit_code == 0
    assert "damaged index" in got.output and "rebuilds it" in got.output
    got = run(runner, "search", "bravo", "--limit", "3")
    assert got.exit_code == 0, got.output
    assert ids(got.stdout) == before and len(before) == 3
    assert "search index" in got.stderr and "damaged" in got.stderr and "rebuilding" in got.stderr
    assert quick_check(db) == "ok"
    got = run(runner, "status")
    assert "up to date" in got.output and "healed: rebuilt" in got.output
    assert run(runner, "search", "bravo").stderr == ""  # said once, not on every search


@pytest.mark.parametrize("command", [["search", "alpha"], ["index"]])
def test_damage_the_open_check_cannot_see_is_healed_on_the_error(vault, runner, command):
    assert run(runner, "index").exit_code == 0
    index_dir = vault / ".memvault" / "index"
    scribble(index_dir / "sqlite.db")
    keep_stamp(index_dir)
    got = run(runner, *command)
    assert got.exit_code == 0, got.output
    assert "malformed" in got.stderr and "rebuilding" in got.stderr
    if command[0] == "search":
        assert len(ids(got.stdout)) == 10
    else:
        assert "index rebuilt: 20 added" in got.stdout
    assert quick_check(index_dir / "sqlite.db") == "ok"
    assert run(runner, "search", "alpha").stderr == ""


def test_a_folder_where_the_index_file_belongs(vault, runner):
    assert run(runner, "index").exit_code == 0
    db = vault / ".memvault" / "index" / "sqlite.db"
    db.unlink()
    (db / "inner").mkdir(parents=True)
    got = run(runner, "status", "--json")
    assert got.exit_code == 0, got.output
    assert "a directory stands where sqlite.db belongs" in got.stdout
    got = run(runner, "index", "--rebuild")
    assert got.exit_code == 0, got.output
    assert db.is_file() and quick_check(db) == "ok"
    assert not [p for p in db.parent.iterdir() if p.name.startswith(".sqlite.db.tmp")]
    db.unlink()
    db.mkdir()
    got = run(runner, "search", "alpha")  # a plain search heals it too
    assert got.exit_code == 0 and len(ids(got.stdout)) == 10, got.output
    assert db.is_file()


def test_a_file_that_is_not_a_database(vault, runner):
    assert run(runner, "index").exit_code == 0
    db = vault / ".memvault" / "index" / "sqlite.db"
    db.write_bytes(b"not sqlite at all " * 500)
    got = run(runner, "search", "alpha")
    assert got.exit_code == 0 and len(ids(got.stdout)) == 10, got.output
    assert "file is not a database" in got.stderr and "rebuilding" in got.stderr
    assert quick_check(db) == "ok"


KILLED_REBUILD = textwrap.dedent("""
    import os, signal, sys
    from memvault.search.index import open_index
    from memvault.vault import Vault

    replace = os.replace

    def die_at_the_rename(src, dst, **kw):  # the new index is written; the rename never happens
        if os.path.basename(src).startswith(".sqlite.db.tmp"):
            os.kill(os.getpid(), signal.SIGKILL)
        replace(src, dst, **kw)

    os.replace = die_at_the_rename
    open_index(Vault.open(sys.argv[1])).rebuild()
""")


def test_temporary_files_of_a_killed_rebuild_are_removed(vault, runner):
    assert run(runner, "index").exit_code == 0
    proc = subprocess.Popen([sys.executable, "-c", KILLED_REBUILD, str(vault)], stderr=subprocess.PIPE, text=True)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL, err
    index_dir = vault / ".memvault" / "index"
    left = [p.name for p in index_dir.iterdir() if p.name.startswith(".sqlite.db.tmp")]
    assert left == [f".sqlite.db.tmp{proc.pid}"]
    got = run(runner, "search", "alpha")  # nothing changed in the files: a search cleans up anyway
    assert got.exit_code == 0 and len(ids(got.stdout)) == 10
    assert not [p for p in index_dir.iterdir() if p.name.startswith(".sqlite.db.tmp")]


HOLD_WRITER_LOCK = textwrap.dedent("""
    import fcntl, os, sys, time
    fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    open(sys.argv[2] + str(os.getpid()), "wb").write(b"a rebuild in progress")
    print("ready", flush=True)
    time.sleep(60)
""")


def test_a_rebuild_in_progress_is_not_taken_for_a_leftover(vault, runner):
    """Another process's rebuild (it holds the writer lock) is no leftover: a search with
    nothing to update neither waits for it nor touches its file."""
    old = 1_700_000_000
    for path in (vault / "memory").iterdir():
        os.utime(path, (old, old))  # not just written: the index trusts their stat
    assert run(runner, "index").exit_code == 0
    index_dir = vault / ".memvault" / "index"
    holder = subprocess.Popen([sys.executable, "-c", HOLD_WRITER_LOCK, str(index_dir / "write.lock"),
                               str(index_dir / ".sqlite.db.tmp")], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "ready"
        (vault / "memvault.toml").write_text('[vault]\ntimezone = "UTC"\n[index]\nlock_timeout = 1\n')
        got = run(runner, "search", "alpha")
        assert got.exit_code == 0 and len(ids(got.stdout)) == 10, got.output
        assert (index_dir / f".sqlite.db.tmp{holder.pid}").exists()
    finally:
        holder.kill()
        holder.wait()


def test_whoosh_files_with_random_bytes_are_rebuilt(vault, runner):
    pytest.importorskip("whoosh")
    assert run(runner, "index", "--backend", "whoosh").exit_code == 0
    before = ids(run(runner, "search", "--backend", "whoosh", "bravo", "--limit", "3").stdout)
    rng = random.Random(3)
    for path in (vault / ".memvault" / "index" / "whoosh").iterdir():
        if path.suffix in (".seg", ".toc"):
            data = bytearray(path.read_bytes())
            data[len(data) // 3:] = rng.randbytes(len(data) - len(data) // 3)
            path.write_bytes(bytes(data))
    got = run(runner, "search", "--backend", "whoosh", "bravo", "--limit", "3")
    assert got.exit_code == 0, got.output
    assert ids(got.stdout) == before and len(before) == 3
    assert "whoosh" in got.stderr and "rebuilding" in got.stderr
    assert run(runner, "search", "--backend", "whoosh", "bravo").stderr == ""


def test_whoosh_store_with_random_bytes_is_rebuilt(vault, runner):
    pytest.importorskip("whoosh")
    assert run(runner, "index", "--backend", "whoosh").exit_code == 0
    scribble(vault / ".memvault" / "index" / "whoosh.db")
    got = run(runner, "index", "--backend", "whoosh")
    assert got.exit_code == 0 and "index rebuilt" in got.stdout, got.output
    assert "damaged" in got.stderr


def test_access_counts_with_random_bytes_are_started_anew(vault, runner):
    assert run(runner, "search", "--record", "alpha").exit_code == 0
    access = vault / ".memvault" / "access.sqlite"
    run(runner, "search", "--record", "alpha")  # some counts, then the file is damaged
    scribble(access, skip_pages=0)
    got = run(runner, "search", "--record", "alpha")
    assert got.exit_code == 0 and len(ids(got.stdout)) == 10, got.output
    assert "access counts" in got.stderr
    assert quick_check(access) == "ok"


# -- the recorded-time cache (history.sqlite) ----------------------------------------------


@pytest.fixture
def history(vault: Path) -> Path:
    git(vault, "init", "-q")
    for n, day in enumerate(DAYS[:6]):
        with (vault / f"memory/{day}.md").open("a") as fh:
            fh.write(entry("11:00", "Belief", f"recorded fact {n} charlie"))
        git(vault, "add", "-A")
        git(vault, "commit", "-qm", f"day {n}")
    return vault


def answer(output: str) -> list[tuple[str, str]]:
    return [(d["id"], d["content"]) for d in json.loads(output)]


def recorded_rows(path: Path) -> int:
    conn = sqlite3.connect(path)
    try:
        return conn.execute("SELECT count(*) FROM recorded").fetchone()[0]
    finally:
        conn.close()


@pytest.mark.parametrize("damage", ["random bytes", "not a database", "a folder"])
def test_recorded_time_cache_damage_is_healed(history, runner, damage):
    ask = ["asof", "--recorded", "now", "charlie", "--json"]
    want = answer(run(runner, *ask).stdout)
    assert run(runner, "asof", "--recorded", "now").exit_code == 0  # the recorded index too
    cache = history / ".memvault" / "history.sqlite"
    if damage == "random bytes":
        scribble(cache, skip_pages=1)
    elif damage == "not a database":
        cache.write_bytes(b"garbage " * 2000)
    else:
        cache.unlink()
        cache.mkdir()
    got = run(runner, *ask)
    assert got.exit_code == 0, got.output
    assert answer(got.stdout) == want and len(want) >= 6
    assert "recorded-time cache was damaged" in got.stderr
    assert cache.is_file() and quick_check(cache) == "ok"
    assert recorded_rows(cache) > 0  # the recorded index was built again and kept
    again = run(runner, *ask)
    assert answer(again.stdout) == want and again.stderr == ""


@pytest.mark.parametrize("where", [".memvault/index", ".memvault"])
def test_a_file_where_a_derived_folder_belongs_is_removed_and_said(tmp_path, where):
    from click.testing import CliRunner

    from memvault.cli import cli

    root = tmp_path / "v"
    (root / "memory").mkdir(parents=True)
    (root / "memvault.toml").write_text('[vault]\ntimezone = "UTC"\n')
    (root / "memory" / "2026-02-21.md").write_text("# 2026-02-21\n\n## 09:00 - Observation\nquokka sighting\n")
    (root / where).parent.mkdir(parents=True, exist_ok=True)
    (root / where).write_text("not a folder")
    if where == ".memvault":  # log writes its lock there
        logged = CliRunner().invoke(cli, ["--vault", str(root), "log", "--at", "2026-02-21 10:00", "wombat"])
        assert logged.exit_code == 0, logged.output
        assert "stood where memvault's folder of derived state belongs" in logged.stderr
        (root / where).rename(root / "gone")
        (root / where).write_text("not a folder")
    result = CliRunner().invoke(cli, ["--vault", str(root), "search", "quokka"])
    assert result.exit_code == 0, result.output
    assert "quokka" in result.stdout
    assert "stood where memvault's folder of derived state belongs" in result.stderr
    assert (root / where).is_dir()


def test_the_derived_folder_ignores_itself_in_git(tmp_path):
    """A search in a folder never adopted must not leave `?? .memvault/` in `git status`."""
    import subprocess

    from memvault.search.index import open_index
    from memvault.vault import Vault

    root = tmp_path / "ws"
    (root / "memory").mkdir(parents=True)
    (root / "memory" / "2026-02-01.md").write_text("# 2026-02-01\n\n## Plan\n- Quokka\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    with open_index(Vault.open(root), "sqlite") as index:
        index.update()
    status = subprocess.run(["git", "status", "--porcelain"], cwd=root, capture_output=True, text=True, check=True)
    assert status.stdout.split() == ["??", "memory/"]
    assert (root / ".memvault" / ".gitignore").read_text().endswith("*\n")
