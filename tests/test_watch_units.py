"""The watcher's pure parts: the ignore filter, event -> paths, debounce, sync decisions, health."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memvault.layout import Selection
from memvault.search.index.lastgood import keeps_last_good
from memvault.watch.debounce import Coalescer
from memvault.watch.paths import (
    expand,
    is_ignored,
    is_watched_dir,
    is_watched_file,
    relative,
    touched,
)
from memvault.watch.state import STALE_AFTER, classify
from memvault.watch.sync import Stat, differing, state_tuple

ROOT = "/v"


@pytest.mark.parametrize("rel", [
    "memory/.2026-02-21.md.swp", "memory/2026-02-21.md.swp", "memory/2026-02-21.md~", "memory/.#2026-02-21.md",
    "memory/#2026-02-21.md#", "memory/2026-02-21.md.tmp", "memory/.DS_Store", "memory/4913",
    "memory/.2026-02-21.md.k3j4h.mvtmp", ".git/index", ".git/objects/ab/cdef", ".memvault/index.db",
    ".obsidian/workspace.json", "memory/.obsidian/x.md", "memory/.hidden/2026-02-21.md", ".trash/2026-02-21.md",
    "memory/node_modules/x.md",
])
def test_filter_ignores_temp_files_and_tool_folders(rel):
    assert is_ignored(rel)
    assert not is_watched_file(rel)


@pytest.mark.parametrize("rel,watched", [
    ("MEMORY.md", True), ("memory/2026-02-21.md", True), ("memory/2026/02/2026-02-21.md", True),
    ("memory/notes.md", True),  # parsed (and reported as not a daily log), so watched
    ("README.md", False), ("memvault.toml", False), ("memory/2026-02-21.txt", False),
    ("other/2026-02-21.md", False), ("memory", False),
])
def test_filter_keeps_vault_markdown_only(rel, watched):
    assert is_watched_file(rel) is watched


def test_watched_dirs():
    assert is_watched_dir("memory") and is_watched_dir("memory/2026/") and is_watched_dir("memory/a/b")
    assert not is_watched_dir("other") and not is_watched_dir(".git") and not is_watched_dir("memory/.git")


def test_relative_paths_outside_the_vault_are_none():
    assert relative("/v/memory/a.md", ROOT) == "memory/a.md"
    assert relative("/v", ROOT) == ""
    assert relative("/tmp/x.md", ROOT) is None
    assert relative("/v2/memory/a.md", ROOT) is None
    assert relative("", ROOT) is None


def t(kind, src, dest="", is_dir=False):
    return touched(kind, src, dest, is_dir, ROOT)


def test_every_change_event_means_reread():
    for kind in ("created", "modified", "deleted", "closed", "attrib"):
        assert t(kind, "/v/memory/2026-02-21.md").keys == {"memory/2026-02-21.md"}
    assert not t("opened", "/v/memory/2026-02-21.md")
    assert not t("closed_no_write", "/v/memory/2026-02-21.md")
    assert not t("modified", "/v/memory", is_dir=True)  # folder listing changes carry no news


def test_atomic_save_temp_then_rename_reads_the_real_file():
    assert not t("created", "/v/memory/.2026-02-21.md.tmp")
    assert not t("modified", "/v/memory/2026-02-21.md.swp")
    assert t("moved", "/v/memory/.2026-02-21.md.tmp", "/v/memory/2026-02-21.md").keys == {"memory/2026-02-21.md"}
    # vim backup dance: the original moved to a backup name; both ends matter only if watched
    assert t("moved", "/v/memory/2026-02-21.md", "/v/memory/2026-02-21.md~").keys == {"memory/2026-02-21.md"}


def test_moves_count_both_ends_and_leave_the_vault_quietly():
    assert t("moved", "/v/memory/a/2026-01-01.md", "/v/memory/b/2026-01-01.md").keys == {
        "memory/a/2026-01-01.md", "memory/b/2026-01-01.md"}
    assert t("moved", "/v/memory/2026-01-01.md", "/tmp/out.md").keys == {"memory/2026-01-01.md"}
    assert t("moved", "/tmp/in.md", "/v/memory/2026-01-01.md").keys == {"memory/2026-01-01.md"}


def test_folder_events_rescan_the_folder():
    assert t("moved", "/v/memory/2025", "/v/memory/old", is_dir=True).keys == {"memory/2025/", "memory/old/"}
    assert t("deleted", "/v/memory/2025", is_dir=True).keys == {"memory/2025/"}
    assert t("created", "/v/memory/new/deeper", is_dir=True).keys == {"memory/new/deeper/"}
    assert not t("created", "/v/.git/objects", is_dir=True)


def test_log_dir_and_config_are_flagged():
    moved = t("moved", "/v/memory", "/v/memory-old", is_dir=True)
    assert moved.log_dir and moved.keys == {"memory/"}
    assert t("modified", "/v/memvault.toml").config
    assert t("moved", "/v/.memvault.toml.x.mvtmp", "/v/memvault.toml").config


CHOSEN = Selection(("MEMORY.md", "memory/**/*.md", "AGENTS.md", "notes/*.md"), ("memory/archive",))


@pytest.mark.parametrize(("kind", "src", "dest", "is_dir", "keys", "rewatch"), [
    ("modified", "/v/AGENTS.md", "", False, {"AGENTS.md"}, False),
    ("modified", "/v/README.md", "", False, set(), False),
    ("created", "/v/notes/kunde.md", "", False, {"notes/kunde.md"}, False),
    ("created", "/v/notes/sub/kunde.md", "", False, set(), False),
    ("modified", "/v/memory/archive/2026-01-15.md", "", False, set(), False),
    ("modified", "/v/memory/2026-01-15.md", "", False, {"memory/2026-01-15.md"}, False),
    ("moved", "/v/notes-old", "/v/notes", True, {"notes/"}, True),  # a watched top folder arrives
    ("created", "/v/notes/sub", "", True, set(), False),  # cannot hold a selected file
    ("created", "/v/memory/archive/x", "", True, set(), False),
    ("moved", "/v/.AGENTS.md.x.mvtmp", "/v/AGENTS.md", False, {"AGENTS.md"}, False),
])
def test_events_follow_the_selection(kind, src, dest, is_dir, keys, rewatch):
    got = touched(kind, src, dest, is_dir, ROOT, CHOSEN)
    assert set(got.keys) == keys and got.log_dir is rewatch


def test_watched_files_and_folders_follow_the_selection():
    assert is_watched_file("AGENTS.md", CHOSEN) and not is_watched_file("AGENTS.md")
    assert not is_watched_file("memory/archive/2026-01-15.md", CHOSEN) and is_watched_file("memory/archive/2026-01-15.md")
    assert not is_watched_file("notes/.kunde.md.swp", CHOSEN)
    assert is_watched_dir("notes", CHOSEN) and not is_watched_dir("notes") and not is_watched_dir("", CHOSEN)


def test_expand_folders_to_files_on_disk_and_in_the_index():
    on_disk = {"memory/new/2026-01-02.md", "memory/2026-01-03.md"}
    indexed = {"memory/old/2026-01-01.md", "memory/2026-01-03.md"}
    assert expand({"memory/old/", "memory/new/", "MEMORY.md"}, on_disk, indexed) == {
        "memory/old/2026-01-01.md", "memory/new/2026-01-02.md", "MEMORY.md"}
    assert expand({"memory/"}, on_disk, indexed) == on_disk | indexed


def test_debounce_coalesces_a_burst_into_one_read():
    c = Coalescer(debounce=0.05, max_delay=1.0)
    for i in range(10):
        c.add(["a.md"], now=i * 0.01)
    c.add(["b.md"], now=0.0)
    assert c.take_due(0.06) == ["b.md"]  # quiet since 0.0
    assert c.take_due(0.13) == []  # a.md last touched at 0.09
    assert c.next_deadline() == pytest.approx(0.14)
    assert c.take_due(0.14) == ["a.md"]
    assert len(c) == 0 and c.next_deadline() is None


def test_a_finished_write_is_read_after_a_tenth_of_the_debounce():
    c = Coalescer(debounce=0.05, max_delay=1.0)
    c.add(["a.md"], now=0.0)  # modified: the writer may not be done
    c.add(["a.md"], now=0.001, complete=True)  # closed after writing
    assert c.take_due(0.005) == []
    assert c.take_due(0.0061) == ["a.md"]
    c.add(["b.md"], now=0.0, complete=True)
    c.add(["b.md"], now=0.005)  # written again: back to the full debounce
    assert c.take_due(0.02) == [] and c.take_due(0.055) == ["b.md"]
    assert t("closed", "/v/memory/2026-02-21.md").complete
    assert t("moved", "/v/memory/.x.tmp", "/v/memory/2026-02-21.md").complete
    assert not t("modified", "/v/memory/2026-02-21.md").complete
    assert not t("created", "/v/memory/2026-02-21.md").complete


def test_debounce_caps_the_wait_for_a_file_written_continuously():
    c = Coalescer(debounce=0.05, max_delay=0.2)
    now = 0.0
    while now < 0.19:
        c.add(["busy.md"], now)
        assert c.take_due(now) == []
        now += 0.02
    assert c.take_due(0.2) == ["busy.md"]
    with pytest.raises(ValueError):
        Coalescer(debounce=1.0, max_delay=0.5)


def test_take_all_flushes_everything():
    c = Coalescer()
    c.add(["a.md", "b.md"], 0.0)
    assert sorted(c.take_all()) == ["a.md", "b.md"] and len(c) == 0
    assert c.oldest(5.0) == 0.0


def test_differing_by_size_and_mtime():
    disk = {"a.md": Stat(10, 100), "b.md": Stat(10, 100), "new.md": Stat(1, 1)}
    indexed = {"a.md": (10, 100, "h", 2), "b.md": (11, 100, "h", 2), "gone.md": (5, 5, "h", 1)}
    changed, same = differing(disk, indexed)
    assert changed == {"b.md", "new.md", "gone.md"} and same == {"a.md"}


def test_state_tuple_accepts_tuples_objects_and_dicts():
    class S:
        size, mtime_ns, sha256, events = 1, 2, "h", 3
    assert state_tuple((1, 2, "h")) == (1, 2, "h", None)
    assert state_tuple(S()) == (1, 2, "h", 3)
    assert state_tuple({"size": 1, "mtime_ns": 2, "sha256": "h", "events": 3}) == (1, 2, "h", 3)


def test_last_good_kept_only_when_errors_lose_entries():
    assert keeps_last_good(errors=1, new_events=2, indexed_events=3)
    assert not keeps_last_good(errors=1, new_events=3, indexed_events=3)  # errors, nothing lost
    assert not keeps_last_good(errors=0, new_events=0, indexed_events=3)  # entries deleted on purpose
    assert not keeps_last_good(errors=2, new_events=0, indexed_events=None)  # never indexed


NOW = datetime(2026, 2, 21, 12, 0, tzinfo=UTC)


def rec(**kw):
    base = {"pid": 4242, "state": "ready", "observer": "inotify", "heartbeat": NOW.isoformat(), "pending": 0,
            "broken": {}}
    return base | kw


def test_health_running_and_behind():
    h = classify(rec(), alive=True, behind=[], now=NOW)
    assert h.state == "running" and "pid 4242" in h.message and "behind" not in h.message
    h = classify(rec(), alive=True, behind=["memory/a.md"], now=NOW)
    assert h.state == "running" and "index is behind the files" in h.message and "memory/a.md" in h.message
    h = classify(rec(pending=2, broken={"memory/b.md": "x"}), alive=True, behind=["memory/a.md"], now=NOW)
    assert "2 pending" in h.message and "catching up" in h.message
    assert "failing to parse" not in h.message  # the index's section lists them, watcher or not


def test_health_gone_stale_and_not_running():
    old = (NOW - timedelta(seconds=STALE_AFTER + 1)).isoformat()
    h = classify(rec(heartbeat=old), alive=True, behind=[], now=NOW)
    assert h.state == "stale" and "pid 4242" in h.message
    h = classify(rec(), alive=False, behind=["memory/a.md"], now=NOW)
    assert h.state == "gone" and "stopped without shutting down" in h.message and "behind" in h.message
    h = classify(rec(state="stopped"), alive=False, behind=[], now=NOW)
    assert h.state == "not running" and h.message == "no watcher running"
    h = classify(None, alive=False, behind=["MEMORY.md"], now=NOW)
    assert h.state == "not running" and "memvault index" in h.message


def test_watch_limit_errors_are_recognised():
    import errno

    from memvault.watch.observe import is_watch_limit, limit_message

    assert is_watch_limit(OSError(errno.ENOSPC, "inotify watch limit reached"))
    assert is_watch_limit(OSError(errno.EMFILE, "inotify instance limit reached"))
    assert not is_watch_limit(OSError(errno.ENOENT, "gone"))
    assert not is_watch_limit(ValueError("x"))
    msg = limit_message(OSError(errno.ENOSPC, "inotify watch limit reached"))
    assert "falling back to polling" in msg and "max_user_watches" in msg
