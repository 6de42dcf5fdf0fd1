"""The watcher against real files and a real watchdog observer, running in this process."""

from __future__ import annotations

import errno
import os
import shutil

import pytest

from memvault.vault import Vault
from memvault.watch import WatcherRunning, wait_until_indexed, watcher_health
from memvault.watch.state import read_record
from memvault.write.log import init_vault

from .helpers_watch import (
    DAY,
    atomic_save,
    contents,
    entry,
    in_sync,
    index_rows,
    log_file,
    wait_for,
    watching,
)


@pytest.fixture
def vault(vault_dir):
    init_vault(vault_dir, timezone="UTC", git=False)
    (vault_dir / DAY).write_text(log_file("2026-02-21", entry("09:15", "Atlas kickoff"), entry("10:00", "Budget")))
    return vault_dir


def test_start_reconciles_then_follows_in_place_edits(vault):
    with watching(vault) as w:
        assert contents(vault) >= {"Atlas kickoff", "Budget"}  # indexed before start() returned
        assert read_record(vault)["state"] == "ready"
        with (vault / DAY).open("a") as fh:
            fh.write(entry("11:00", "Appended in place"))
        wait_for(lambda: "Appended in place" in contents(vault), what="in-place append indexed")
        assert w.record.files_indexed >= 1


def test_atomic_save_temp_then_rename(vault):
    with watching(vault) as w:
        atomic_save(vault / DAY, log_file("2026-02-21", entry("09:15", "Atlas renamed to Orion")))
        wait_for(lambda: in_sync(vault) and "Atlas renamed to Orion" in contents(vault), what="atomic save")
        assert "Budget" not in contents(vault)
        assert not any(".tmp" in r[0] for r in index_rows(vault))
    assert not [line for line in w.log.lines if ".tmp" in line["message"]]


def test_vim_backup_dance(vault):
    path = vault / DAY
    with watching(vault) as w:
        (vault / "memory" / "4913").write_text("")  # vim's "may I write here" probe
        (vault / "memory" / "4913").unlink()
        os.rename(path, vault / "memory" / "2026-02-21.md~")  # backup by renaming the original
        path.write_text(log_file("2026-02-21", entry("09:15", "Saved by vim")))
        (vault / "memory" / "2026-02-21.md~").unlink()
        wait_for(lambda: "Saved by vim" in contents(vault) and in_sync(vault), what="vim save")
    assert not [line for line in w.log.lines if "4913" in line["message"] or "md~" in line["message"]]


def test_rename_delete_and_move_out_and_back(vault, tmp_path):
    with watching(vault):
        os.makedirs(vault / "memory" / "2026")
        os.rename(vault / DAY, vault / "memory" / "2026" / "2026-02-21.md")
        wait_for(lambda: {r[0] for r in index_rows(vault)} >= {"memory/2026/2026-02-21.md"} and in_sync(vault),
                 what="renamed file re-indexed without ghosts")
        outside = tmp_path / "outside.md"
        shutil.move(vault / "memory" / "2026" / "2026-02-21.md", outside)
        wait_for(lambda: "Atlas kickoff" not in contents(vault), what="moved-out file dropped")
        shutil.move(outside, vault / DAY)
        wait_for(lambda: "Atlas kickoff" in contents(vault) and in_sync(vault), what="moved-in file indexed")
        (vault / DAY).unlink()
        wait_for(lambda: not {r for r in index_rows(vault) if r[0] == DAY}, what="deleted file dropped")
        assert in_sync(vault)


def test_new_nested_folder_and_folder_moves(vault, tmp_path):
    with watching(vault):
        deep = vault / "memory" / "2027" / "01"
        deep.mkdir(parents=True)
        (deep / "2027-01-05.md").write_text(log_file("2027-01-05", entry("08:00", "Deep new folder")))
        wait_for(lambda: "Deep new folder" in contents(vault), what="file in a new nested folder")
        os.rename(vault / "memory" / "2027", vault / "memory" / "archive")
        wait_for(lambda: ("memory/archive/01/2027-01-05.md" in {r[0] for r in index_rows(vault)}) and in_sync(vault),
                 what="folder rename")
        shutil.move(vault / "memory" / "archive", tmp_path / "archive")
        wait_for(lambda: "Deep new folder" not in contents(vault), what="folder moved out")
        shutil.move(tmp_path / "archive", vault / "memory" / "back")
        wait_for(lambda: "Deep new folder" in contents(vault) and in_sync(vault), what="folder moved back in")


def test_memory_folder_itself_moved_away_and_back(vault):
    with watching(vault):
        os.rename(vault / "memory", vault / "memory-away")
        wait_for(lambda: "Atlas kickoff" not in contents(vault), what="memory/ moved away")
        os.rename(vault / "memory-away", vault / "memory")
        wait_for(lambda: "Atlas kickoff" in contents(vault), what="memory/ back")
        (vault / "memory" / "2026-02-22.md").write_text(log_file("2026-02-22", entry("07:00", "Still watched")))
        wait_for(lambda: "Still watched" in contents(vault), what="new file in the re-watched memory/")


def test_burst_is_coalesced_and_ends_equal_to_a_fresh_parse(vault):
    files = [vault / "memory" / f"2026-03-{d:02d}.md" for d in range(1, 21)]
    with watching(vault) as w:
        for round_ in range(10):
            for i, path in enumerate(files):
                path.write_text(log_file(path.stem, *(entry(f"{h:02d}:00", f"burst {i} r{h}") for h in range(round_ + 1))))
        wait_for(lambda: in_sync(vault) and "burst 19 r9" in contents(vault), timeout=15, what="burst settled")
        updates = sum(len(line.get("paths", [])) for line in w.log.lines if line["event"] == "indexed")
    assert updates < 200, f"{updates} file updates for 200 writes: the debounce did not coalesce"


def test_a_malformed_heading_is_held_back_until_it_is_an_entry_heading_again(vault):
    # A failed entry heading keeps its text as a note (issue 12), but the entry it was is no
    # longer one (a correction would stop superseding): with the error, the index keeps the last
    # good entries until the heading is fixed (issue 13).
    with watching(vault) as w:
        broken = log_file("2026-02-21", entry("09:15", "Atlas kickoff")) + "## 10:00 Observation\nBudget\n"
        (vault / DAY).write_text(broken)
        wait_for(lambda: any(line["event"] == "broken" for line in w.log.lines), what="the file held back")
        assert ("2026-02-21T10:00", "Budget") in {(i, c) for _, i, c in index_rows(vault)}
        (vault / DAY).write_text(broken.replace("## 10:00 Observation", "## 10:00 - Observation\n\nmehr Budget"))
        wait_for(lambda: "mehr Budget" in " ".join(contents(vault)) and in_sync(vault), what="the fixed file indexed")
        wait_for(lambda: DAY not in w.record.broken, what="the watcher's record to clear")


def test_deleting_entries_on_purpose_is_not_held_back(vault):
    with watching(vault):
        (vault / DAY).write_text(log_file("2026-02-21", entry("09:15", "Atlas kickoff")))
        wait_for(lambda: "Budget" not in contents(vault) and in_sync(vault), what="entry removed")


def test_second_watcher_refuses_clearly(vault):
    with watching(vault), pytest.raises(WatcherRunning, match=rf"pid {os.getpid()}.*already watching"), \
            watching(vault):
        pass
    with watching(vault):  # the lock is free again once the first one stopped
        pass


def test_watch_limit_falls_back_to_polling(vault):
    from watchdog.observers import Observer

    class Refusing(Observer):
        def schedule(self, *a, **k):  # what watchdog raises when inotify_add_watch hits the limit
            raise OSError(errno.ENOSPC, "inotify watch limit reached")

    with watching(vault, observer_factory=Refusing) as w:
        assert w.record.observer == "polling"
        warnings = [line for line in w.log.lines if line["event"] == "warning"]
        assert len(warnings) == 1 and "falling back to polling" in warnings[0]["message"]
        (vault / DAY).write_text(log_file("2026-02-21", entry("09:15", "Seen by polling")))
        wait_for(lambda: "Seen by polling" in contents(vault), what="polling picks up the change")


def test_periodic_reconcile_catches_what_the_os_never_reported(vault):
    from watchdog.observers.polling import PollingObserver

    with watching(vault, reconcile=0.2, observer_factory=lambda: PollingObserver(timeout=3600)) as w:
        (vault / DAY).write_text(log_file("2026-02-21", entry("09:15", "Missed by the observer")))
        wait_for(lambda: "Missed by the observer" in contents(vault), what="reconcile")
        wait_for(lambda: any(line["event"] == "reconcile" and DAY in line["message"] for line in w.log.lines),
                 what="reconcile log line")


def test_health_and_wait_until_indexed(vault):
    v = Vault.open(vault)
    assert watcher_health(v).state == "not running"
    (vault / DAY).write_text(log_file("2026-02-21", entry("09:15", "Written before any watcher")))
    report = wait_until_indexed(v, timeout=10)
    assert DAY in report.updated and report.watcher == "not running"
    assert in_sync(vault)
    with watching(vault, debounce=5.0, max_delay=5.0):  # a slow watcher: wait must not wait for it
        h = watcher_health(v)
        assert h.state == "running" and "pid" in h.message
        (vault / DAY).write_text(log_file("2026-02-21", entry("09:15", "Then searched at once")))
        report = wait_until_indexed(v, timeout=10)
        assert report.watcher == "running" and report.seconds < 2
        assert "Then searched at once" in contents(vault)
    assert watcher_health(v).state == "not running"


def test_config_change_is_picked_up(vault):
    with watching(vault) as w:
        cfg = vault / "memvault.toml"
        cfg.write_text(cfg.read_text().replace('timezone = "UTC"', 'timezone = "Europe/Paris"'))
        wait_for(lambda: w.vault.config.timezone == "Europe/Paris", what="settings reloaded")
        wait_for(lambda: in_sync(vault), what="index rebuilt for the new zone")


def test_files_the_vault_includes_outside_memory_are_watched(vault):
    """Issue 12: OpenClaw's workspace files and `[vault] include` folders, with a real observer."""
    (vault / "memvault.toml").write_text('[vault]\ntimezone = "UTC"\nworkspace_files = true\n'
                                         'include = ["MEMORY.md", "memory/**/*.md", "notes/*.md"]\n'
                                         'exclude = ["memory/archive"]\n')
    with watching(vault) as w:
        (vault / "AGENTS.md").write_text("# AGENTS.md\n\n" + entry("09:00", "Answer in German", "Decision"))
        (vault / "README.md").write_text("# readme\n\n" + entry("09:00", "Not memory"))
        wait_for(lambda: "Answer in German" in contents(vault), what="a workspace file indexed")
        (vault / "notes").mkdir()  # a watched top folder that did not exist when the watcher started
        (vault / "notes" / "kunde.md").write_text("# Kunde\n\n" + entry("11:00", "Kunde zahlt pünktlich"))
        wait_for(lambda: "Kunde zahlt pünktlich" in contents(vault), what="a file in a new included folder")
        (vault / "memory" / "archive").mkdir()
        (vault / "memory" / "archive" / "2026-02-21.md").write_text(log_file("2026-02-21", entry("07:00", "Archived")))
        atomic_save(vault / "AGENTS.md", "# AGENTS.md\n\n" + entry("09:00", "Answer in English", "Decision"))
        wait_for(lambda: "Answer in English" in contents(vault) and in_sync(vault), what="workspace file saved")
        assert not {"Not memory", "Archived"} & contents(vault)
        indexed = {r[0] for r in index_rows(vault)}
        assert {DAY, "AGENTS.md", "notes/kunde.md"} <= indexed
        assert not indexed & {"README.md", "memory/archive/2026-02-21.md"}
    assert not [line for line in w.log.lines if "reconcile found" in line["message"]]  # the events said it all


def test_changed_settings_change_what_is_watched(vault):
    (vault / "AGENTS.md").write_text("# AGENTS.md\n\n" + entry("09:00", "Answer in German", "Decision"))
    with watching(vault):
        assert "Answer in German" not in contents(vault)
        (vault / "memvault.toml").write_text('[vault]\ntimezone = "UTC"\nworkspace_files = true\n')
        wait_for(lambda: "Answer in German" in contents(vault), what="settings reloaded, workspace file indexed")
        (vault / "AGENTS.md").write_text("# AGENTS.md\n\n" + entry("09:00", "Answer in Dutch", "Decision"))
        wait_for(lambda: "Answer in Dutch" in contents(vault) and in_sync(vault), what="workspace file followed")
