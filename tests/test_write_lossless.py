"""`log`, `check --fix` and `curate` never lose a save another program makes at the same time.

The stress tests race real `memvault log` processes against a script that saves the same daily
file the way careful editors do: a temp file renamed over the original, with
`renameat2(RENAME_EXCHANGE)` so the script can tell when it displaced someone else's save (it puts
that save back and tries again). Nothing may go missing on either side.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from memvault import fsio
from memvault.cli import cli
from memvault.vault import Vault
from memvault.write import log as write

from .conftest import plain_vault

DAY = "2026-03-01"
SEED = f"# {DAY}\n\n## 23:59 - Observation\nseed: the last entry of the day\n"
MEMVAULT = str(Path(sys.executable).with_name("memvault"))

# A careful saver, following the same rules as memvault: temp + rename by exchange; when what it
# displaced is not what it read, it puts that back at once (carrying over lines added to its own
# version meanwhile) and tries again. Each save adds one line at the end; it makes `count` saves,
# and goes on until the file `stop` exists, so that it saves while every logger runs.
SAVER = r"""
import ctypes, os, random, sys, time
path, count, pause, stop = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
libc = ctypes.CDLL(None, use_errno=True)
def exchange(a, b):
    if libc.renameat2(-100, os.fsencode(a), -100, os.fsencode(b), 2) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))
def read(p):
    with open(p, "rb") as fh:
        return fh.read()
tmp = os.path.join(os.path.dirname(path), ".script-save.tmp")
k = retries = 0
while k < count or not os.path.exists(stop):
    before = read(path)
    mine = before + (b"" if before.endswith(b"\n") else b"\n") + b"script edit %d\n" % k
    with open(tmp, "wb") as fh:
        fh.write(mine)
    exchange(tmp, path)
    if read(tmp) == before:
        os.unlink(tmp)
        k += 1
        time.sleep(random.random() * pause)
        continue
    exchange(tmp, path)
    retries += 1
    back = read(tmp)
    if back != mine:  # a save was made on the script's version while it was visible
        if not back.startswith(mine):
            sys.exit("script: a save changed the script's version in the microseconds it was visible")
        with open(path, "ab") as fh:  # it only added lines: carry them over
            fh.write(back[len(mine):])
    os.unlink(tmp)
print(k, retries)
"""


def _vault(root: Path) -> Path:
    (root / "memvault.toml").write_text('[vault]\ntimezone = "UTC"\n')
    (root / "memory").mkdir()
    daily = root / "memory" / f"{DAY}.md"
    daily.write_text(SEED)
    return daily


def _logger(root: Path, name: str, at: str, calls: int, failures: list[str]) -> None:
    for i in range(calls):
        # On a loaded machine the saver can change the file through every one of log's tries: log
        # then refuses, writing nothing, and says to try again, which is what a person does. Any
        # other failure, or a refusal that wrote something, is a failure (the line count below).
        for _ in range(5):
            proc = subprocess.run([MEMVAULT, "--vault", str(root), "log", "--at", f"{DAY} {at}", f"{name} entry {i}"],
                                  capture_output=True, text=True)
            if proc.returncode == 0 or "nothing was written, try again" not in proc.stderr:
                break
        if proc.returncode != 0:
            failures.append(f"{name} {i}: {proc.stderr.strip()}")


def race(root: Path, *, saves: int, calls: int, pause: float) -> None:
    """4 loggers (2 appending at the end of the day, 2 inserting before its last entry) against
    at least `saves` script saves; every line of both sides must be in the file, once."""
    daily = _vault(root)
    stop = root / "stop"
    script = subprocess.Popen([sys.executable, "-c", SAVER, str(daily), str(saves), str(pause), str(stop)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    failures: list[str] = []
    loggers = [("append0", "23:59"), ("append1", "23:59"), ("insert0", "12:00"), ("insert1", "12:00")]
    threads = [threading.Thread(target=_logger, args=(root, name, at, calls, failures)) for name, at in loggers]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    stop.touch()
    out, err = script.communicate(timeout=120)
    assert script.returncode == 0, err
    assert failures == []
    made, retries = map(int, out.split())
    lines = daily.read_text().split("\n")
    missing_script = [k for k in range(made) if lines.count(f"script edit {k}") != 1]
    missing_log = [f"{n} entry {i}" for n, _ in loggers for i in range(calls) if lines.count(f"{n} entry {i}") != 1]
    assert (missing_script, missing_log) == ([], []), f"{made} script saves, {retries} retried"
    # the inserted entries went before the seed, the appended ones after it
    seed = lines.index("seed: the last entry of the day")
    assert all(lines.index(f"insert0 entry {i}") < seed < lines.index(f"append0 entry {i}") for i in range(calls))
    assert [p.name for p in daily.parent.iterdir()] == [daily.name]  # no temp or conflict file left


linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="renameat2 is Linux's")


@linux_only
def test_log_and_a_concurrent_saver_lose_nothing_quick(vault_dir):
    race(vault_dir, saves=60, calls=6, pause=0.01)


@linux_only
@pytest.mark.slow
@pytest.mark.parametrize("run", range(20))
def test_log_and_a_concurrent_saver_lose_nothing(tmp_path, run):
    root = tmp_path / f"run{run}"
    root.mkdir()
    race(root, saves=300, calls=50, pause=0.02)


# ------------------------------------------------------- one interleaving at a time, deterministic


def save_by_rename(path: Path, line: str) -> None:
    """What an editor does: read, add a line, write a temp file, rename it over the original."""
    tmp = path.with_name(".editor.tmp")
    tmp.write_bytes(path.read_bytes() + line.encode() + b"\n")
    os.replace(tmp, path)


def _log(runner, at: str, text: str):
    return runner.invoke(cli, ["log", "--at", f"{DAY} {at}", text])


@linux_only
def test_a_save_between_the_read_and_the_exchange_is_put_back_and_kept(runner, vault_dir, monkeypatch):
    # The defect's window: the old write compared the file, then renamed over it; a save landing
    # in between was lost. Now the exchange hands that save back: it goes straight back in place
    # and the entry is inserted into it.
    daily = _vault(vault_dir)
    real, calls = fsio.exchange, []

    def exchange_after_a_save(a, b):
        if not calls:
            save_by_rename(daily, "editor line")
        calls.append(a)
        return real(a, b)

    monkeypatch.setattr(fsio, "exchange", exchange_after_a_save)
    result = _log(runner, "12:00", "agent note")
    assert result.exit_code == 0, result.output
    text = daily.read_text()
    assert "editor line" in text and text.index("agent note") < text.index("## 23:59")
    assert len(calls) == 3  # in, back out, in again onto the save
    assert sorted(p.name for p in daily.parent.iterdir()) == [daily.name]


def save_by_rename_editing(path: Path, old: str, new: str) -> None:
    tmp = path.with_name(".editor.tmp")
    tmp.write_text(path.read_text().replace(old, new))
    os.replace(tmp, path)


@linux_only
def test_a_second_save_adding_to_memvaults_version_is_carried_over(runner, vault_dir, monkeypatch):
    # A save lands, and before the exchange puts it back another save adds a line to memvault's
    # version, visible for those microseconds: the line is appended to the save put back.
    daily = _vault(vault_dir)
    real, calls = fsio.exchange, []

    def exchange_between_saves(a, b):
        calls.append(a)
        if len(calls) <= 2:
            save_by_rename(daily, f"editor save {len(calls)}")
        return real(a, b)

    monkeypatch.setattr(fsio, "exchange", exchange_between_saves)
    result = _log(runner, "12:00", "agent note")
    assert result.exit_code == 0, result.output
    lines = daily.read_text().split("\n")
    assert [lines.count(x) for x in ("editor save 1", "editor save 2", "agent note")] == [1, 1, 1]
    assert lines.index("agent note") < lines.index("## 23:59 - Observation")
    assert sorted(p.name for p in daily.parent.iterdir()) == [daily.name]


@linux_only
def test_a_second_save_changing_memvaults_version_is_kept_in_a_conflict_file(runner, vault_dir, monkeypatch):
    # The one interleaving memvault cannot undo: the second save changed memvault's version
    # other than at its end. Neither save is dropped; the command says where the second went.
    daily = _vault(vault_dir)
    real, calls = fsio.exchange, []

    def exchange_between_saves(a, b):
        calls.append(a)
        if len(calls) == 1:
            save_by_rename(daily, "editor save 1")
        elif len(calls) == 2:
            save_by_rename_editing(daily, "seed:", "edited seed:")
        return real(a, b)

    monkeypatch.setattr(fsio, "exchange", exchange_between_saves)
    result = _log(runner, "12:00", "agent note")
    assert result.exit_code == 1
    assert "merge by hand" in result.output
    kept = [p for p in daily.parent.iterdir() if p.name.startswith(f"{daily.name}.conflict-")]
    assert len(kept) == 1 and kept[0].name in result.output
    assert "editor save 1" in daily.read_text()
    assert "edited seed: the last entry of the day" in kept[0].read_text()
    assert "agent note" in kept[0].read_text()


@linux_only
def test_the_exchange_returns_the_file_it_displaced(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.write_text("new")
    b.write_text("old")
    assert fsio.exchange(a, b) is True
    assert (a.read_text(), b.read_text()) == ("old", "new")


def test_without_exchange_the_write_falls_back_to_compare_then_replace(runner, vault_dir, monkeypatch):
    daily = _vault(vault_dir)
    monkeypatch.setattr(fsio, "exchange", lambda a, b: False)
    assert _log(runner, "12:00", "agent note").exit_code == 0
    assert daily.read_text().index("agent note") < daily.read_text().index("## 23:59")


@pytest.mark.parametrize("reads_it", [False, True])
def test_an_append_to_a_file_renamed_over_meanwhile_is_made_once(runner, vault_dir, monkeypatch, reads_it):
    # log appends in place; if a save renames over the file around that write, the bytes may have
    # gone to the replaced file. Whether the save read them decides: redone if not, never twice.
    daily = _vault(vault_dir)
    real, calls = fsio._write_all, []

    def write_around_a_save(fd, data):
        calls.append(data)
        if len(calls) == 1 and not reads_it:
            save_by_rename(daily, "editor line")
        real(fd, data)
        if len(calls) == 1 and reads_it:
            save_by_rename(daily, "editor line")

    monkeypatch.setattr(fsio, "_write_all", write_around_a_save)
    assert _log(runner, "23:59", "agent note").exit_code == 0
    lines = daily.read_text().split("\n")
    assert lines.count("agent note") == 1 and lines.count("editor line") == 1
    assert len(calls) == (1 if reads_it else 2)


# ------------------------------------------------------------------ the append keeps every byte


@pytest.mark.parametrize(("raw", "spacing"), [
    (b"\xef\xbb\xbf# 2026-03-01\r\n\r\n## 09:00 - Belief\r\nUser likes tea", b"\r\n\r\n"),
    (b"# 2026-03-01\r\n\r\n## 09:00 - Belief\r\nUser likes tea\r\n", b"\r\n"),
    (b"# 2026-03-01\n\n## 09:00 - Belief\nUser likes tea\n\n\n", b""),
    (b"# 2026-03-01\n\n## 09:00 - Belief\nUser likes tea\n", b"\n"),
])
def test_log_at_the_end_appends_in_place_in_the_files_own_line_endings(runner, vault_dir, raw, spacing):
    daily = _vault(vault_dir)
    daily.write_bytes(raw)
    inode = daily.stat().st_ino
    assert _log(runner, "10:00", "agent note").exit_code == 0
    eol = b"\r\n" if b"\r\n" in raw else b"\n"
    assert daily.read_bytes() == raw + spacing + eol.join([b"## 10:00 - Observation", b"agent note", b""])
    assert daily.stat().st_ino == inode  # written in place, not replaced
    assert runner.invoke(cli, ["list", "--json"]).output.count("agent note") == 1


def test_log_creates_a_missing_daily_file_and_inserts_keeping_crlf_and_bom(runner, vault_dir):
    (vault_dir / "memvault.toml").write_text('[vault]\ntimezone = "UTC"\n')
    assert _log(runner, "23:00", "late").exit_code == 0
    daily = vault_dir / "memory" / f"{DAY}.md"
    assert daily.read_text() == f"# {DAY}\n\n## 23:00 - Observation\nlate\n"
    daily.write_bytes(b"\xef\xbb\xbf" + daily.read_bytes().replace(b"\n", b"\r\n"))
    assert _log(runner, "12:00", "early").exit_code == 0
    assert daily.read_bytes() == b"\xef\xbb\xbf" + (
        f"# {DAY}\n\n## 12:00 - Observation\nearly\n\n## 23:00 - Observation\nlate\n").replace("\n", "\r\n").encode()


# ------------------------------------------------------- check --fix and curate use the same write


@linux_only
def test_check_fix_redoes_its_fix_on_a_save_that_lands_meanwhile(runner, vault_dir, monkeypatch):
    daily = _vault(vault_dir)
    daily.write_text(f"# {DAY}\n\n## 23:59 - Observation\nlate\n\n## 09:00 - Observation\nearly\n")
    real, calls = fsio.exchange, []

    def exchange_after_a_save(a, b):
        if not calls:
            save_by_rename(daily, "editor line")
        calls.append(a)
        return real(a, b)

    monkeypatch.setattr(fsio, "exchange", exchange_after_a_save)
    result = runner.invoke(cli, ["check", "--fix"])
    assert "editor line" in daily.read_text(), result.output
    assert daily.read_text().index("early") < daily.read_text().index("late")  # MV015 fixed
    assert len(calls) == 3


@linux_only
def test_curate_refuses_rather_than_overwrite_a_save_that_lands_while_it_writes(runner, vault_dir, monkeypatch):
    from .conftest import copy_vault

    copy_vault("curate_week", vault_dir)
    memory = vault_dir / "MEMORY.md"
    real, saved = fsio.exchange, []

    def exchange_after_a_save(a, b):
        if Path(b) == memory and not saved:
            save_by_rename(memory, "- a person's line")
            saved.append(b)
        return real(a, b)

    monkeypatch.setattr(fsio, "exchange", exchange_after_a_save)
    result = runner.invoke(cli, ["curate", "--yes", "--at", "2026-02-22 12:00"])
    assert result.exit_code == 1 and "changed on disk while curate was writing it" in result.output
    assert memory.read_text().endswith("- a person's line\n")


# ------------------------------------------ a save in place (no rename) while the new text is made


def test_log_does_not_write_over_an_in_place_save_made_while_it_inserted(runner, vault_dir, monkeypatch):
    # A person's editor saving the daily log in place (it takes no memvault lock) between log's
    # read and its replace: log wrote its stale copy over the save, losing the person's edit (and
    # when it read the file mid-save, everything after the half that was written).
    plain_vault(vault_dir)
    daily = vault_dir / "memory" / "2026-02-21.md"
    real_insert = write.insert_entry
    saves = []

    def insert_while_a_person_saves(old, event, rel, vault):
        result = real_insert(old, event, rel, vault)
        if not saves:  # the editor's in-place save lands now, once
            with open(daily, "r+", encoding="utf-8") as fh:
                text = fh.read().replace("User likes tea", "User likes green tea")
                fh.seek(0)
                fh.truncate()
                fh.write(text)
            saves.append(text)
        return result

    monkeypatch.setattr(write, "insert_entry", insert_while_a_person_saves)
    result = runner.invoke(cli, ["log", "--at", "2026-02-21 10:00", "agent note", "--json"])
    assert result.exit_code == 0, result.output
    contents = [e.content for e in Vault.open(vault_dir).events]
    assert contents == ["User likes green tea", "agent note"]


def test_check_fix_does_not_write_over_an_in_place_save_made_while_it_fixed(runner, vault_dir, monkeypatch):
    # Like log: `check --fix` read a daily log, fixed it, and replaced it with its fixed copy even
    # when an editor had saved the file in place meanwhile, losing that save.
    from memvault.check import fixes

    plain_vault(vault_dir)
    daily = vault_dir / "memory" / "2026-02-21.md"
    daily.write_text("# 2026-02-21\n## 09:00 -  Belief\nUser likes tea\n")
    real_fix = fixes.fix_source
    saves = []

    def fix_while_a_person_saves(src, config, *rest):
        result = real_fix(src, config, *rest)
        if not saves and src.path.endswith("21.md"):
            with open(daily, "r+", encoding="utf-8") as fh:
                text = fh.read().replace("User likes tea", "User likes green tea")
                fh.seek(0)
                fh.truncate()
                fh.write(text)
            saves.append(text)
        return result

    monkeypatch.setattr(fixes, "fix_source", fix_while_a_person_saves)
    result = runner.invoke(cli, ["check", "--fix", "--json"])
    assert result.exit_code == 0, result.output
    assert daily.read_text() == "# 2026-02-21\n\n## 09:00 - Belief\nUser likes green tea\n"
    assert '"memory/2026-02-21.md"' in result.output  # reported as fixed: the second try was
