"""`memvault watch --sync`: real watchers, a bare remote and two clones (issue 19)."""

from __future__ import annotations

import math
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from memvault.errors import Refused
from memvault.sync.run import sync
from memvault.sync.state import write_step
from memvault.vault import Vault
from memvault.watch.syncer import decide, describe, sync_interval
from memvault.watch.watcher import Watcher, WatchOptions
from memvault.write.log import init_vault, log_entry

from .conftest import git
from .helpers_watch import WatchProcess, contents, wait_for, watching
from .helpers_watch_sync import stop_for_prose, two_clones

TODAY_EN = "Kunde Müller-Lüdenscheidt wants the Q3 report in German, not English"


@pytest.fixture
def clones(tmp_path: Path, vault_dir: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path, Path]:
    monkeypatch.setenv("MEMVAULT_MACHINE", "alpha")
    return two_clones(tmp_path, vault_dir)


def events(w: Watcher, kind: str) -> list[str]:
    return [x["message"] for x in w.log.lines if x["event"] == kind]


def pushed(remote: Path, path: str) -> str:
    """`path` as the remote's branch has it ("" while it has none)."""
    found = subprocess.run(["git", "show", f"HEAD:{path}"], cwd=remote, capture_output=True, text=True)
    return found.stdout if found.returncode == 0 else ""


def test_a_log_in_one_clone_reaches_the_other_when_its_watcher_syncs(clones):
    a, b, remote = clones
    with watching(b, sync_every=0.3, commit_quiet=0.2) as w:
        log_entry(Vault.open(a), TODAY_EN, type="observation")
        sync(Vault.open(a))
        wait_for(lambda: TODAY_EN in contents(b), timeout=3, what="A's entry indexed in B")
        wait_for(lambda: any("brought in 1 commit" in m for m in events(w, "sync")), timeout=3, what="logged")
        # ... and what B writes goes out after B's quiet period, without waiting for the interval
        log_entry(Vault.open(b), "Rückruf bei Frau Øster: Termin auf Donnerstag verschoben", type="decision")
        wait_for(lambda: "Øster" in pushed(remote, _day_of(b)), timeout=3, what="B's entry pushed")
        wait_for(lambda: any("pushed 1 commit" in m for m in events(w, "sync")), timeout=3, what="logged")
    assert not events(w, "error")
    assert git(b, "status", "--porcelain", "--", "memory", "MEMORY.md") == ""


def _day_of(root: Path) -> str:
    return sorted(p.relative_to(root).as_posix() for p in (root / "memory").glob("*.md"))[-1]


def test_a_failing_sync_is_logged_and_tried_again_at_the_next_interval(clones):
    a, b, remote = clones
    gone = remote.with_name("moved-away.git")
    remote.rename(gone)  # the network is down, the disk unmounted: the remote is not there
    with watching(b, sync_every=0.2, commit_quiet=0.1) as w:
        wait_for(lambda: len(events(w, "error")) >= 2, timeout=3, what="two failed syncs")
        assert all(m.startswith("sync failed, will retry in 0.2s: fetching from origin failed") for m in events(w, "error"))
        assert w.record.sync["result"] == "failed"
        gone.rename(remote)
        log_entry(Vault.open(a), "the remote is back", type="observation")
        sync(Vault.open(a))
        wait_for(lambda: "the remote is back" in contents(b), timeout=3, what="the sync after the remote came back")
        wait_for(lambda: w.record.sync["result"] == "pulled", timeout=3, what="the record says so")


def test_a_vault_without_a_remote_is_refused_at_start(vault_dir):
    init_vault(vault_dir, timezone="UTC")
    with pytest.raises(Refused, match="no remote"), watching(vault_dir, sync_every=1):
        pass


def test_no_commit_and_no_sync_while_a_merge_is_under_way(clones):
    a, b, remote = clones
    before = git(b, "rev-parse", "HEAD").strip()
    (Path(git(b, "rev-parse", "--absolute-git-dir").strip()) / "MERGE_HEAD").write_text(before + "\n")
    day = b / "memory" / "2026-03-02.md"
    with watching(b, sync_every=0.2, commit_quiet=0.1) as w:
        day.write_text("# 2026-03-02\n\n## 09:00 - Observation\nDuring someone's merge\n", encoding="utf-8")
        wait_for(lambda: "During someone's merge" in contents(b), timeout=3, what="indexed")
        wait_for(lambda: events(w, "warning"), timeout=3, what="the hold said")
        log_entry(Vault.open(a), "meanwhile on A", type="observation")
        sync(Vault.open(a))
        with day.open("a", encoding="utf-8") as fh:
            fh.write("\n## 09:30 - Observation\nstill merging\n")
        wait_for(lambda: "still merging" in contents(b), timeout=3, what="indexed again")
        time.sleep(0.6)  # three intervals and quiet periods: none may commit or sync
        held = events(w, "warning")
        assert held == ["not committing or syncing: a git merge memvault did not start is in progress: finish it "
                        "(`git commit`) or abort it (`git merge --abort`), then run `memvault sync`"]
        assert git(b, "rev-parse", "HEAD").strip() == before and "meanwhile on A" not in contents(b)
        (Path(git(b, "rev-parse", "--absolute-git-dir").strip()) / "MERGE_HEAD").unlink()
        with day.open("a", encoding="utf-8") as fh:
            fh.write("\n## 10:00 - Observation\nmerge done\n")
        wait_for(lambda: "meanwhile on A" in contents(b), timeout=3, what="synced after the merge")
        wait_for(lambda: "merge done" in pushed(remote, "memory/2026-03-02.md"), timeout=3,
                 what="B's day pushed")


def test_commit_alone_waits_for_a_rebase_too(vault_dir):
    init_vault(vault_dir, timezone="UTC")
    before = git(vault_dir, "rev-parse", "HEAD").strip()
    busy = Path(git(vault_dir, "rev-parse", "--absolute-git-dir").strip()) / "rebase-merge"
    busy.mkdir()
    with watching(vault_dir, commit=True, commit_quiet=0.05) as w:
        for n in range(3):
            log_entry(Vault.open(vault_dir), f"Notiz {n} während des Rebase", type="observation")
            wait_for(lambda n=n: f"Notiz {n} während des Rebase" in contents(vault_dir), timeout=3, what="indexed")
            time.sleep(0.1)
        assert events(w, "warning") == ["not committing: a git rebase is in progress: finish or abort it, then run "
                                        "`memvault sync`"]
        assert git(vault_dir, "rev-parse", "HEAD").strip() == before
        busy.rmdir()
        log_entry(Vault.open(vault_dir), "rebase done", type="observation")
        wait_for(lambda: git(vault_dir, "rev-parse", "HEAD").strip() != before, timeout=3, what="the commit")
    assert "+4 entries" in git(vault_dir, "log", "-1", "--format=%s")


def test_a_sync_interrupted_by_a_dead_process_is_recovered_by_the_watcher(clones):
    a, b, _ = clones
    dead = subprocess.Popen(["true"])
    dead.wait()
    gdir = Path(git(b, "rev-parse", "--absolute-git-dir").strip())
    write_step(gdir, "fetch")
    step = gdir / "memvault" / "sync-step.json"
    step.write_text(step.read_text().replace(f'"pid": {os.getpid()}', f'"pid": {dead.pid}'))
    log_entry(Vault.open(a), "after the crash", type="observation")
    sync(Vault.open(a))
    with watching(b, sync_every=0.2, commit_quiet=0.1) as w:
        wait_for(lambda: "after the crash" in contents(b), timeout=3, what="synced")
        assert any("a sync killed during fetch was recovered" in m for m in events(w, "sync"))
    assert not step.exists()


def test_a_sync_stopped_for_the_person_is_said_once_and_not_tried_again(clones):
    a, b, remote = clones
    stop_for_prose(a, b)
    with watching(b, sync_every=0.1, commit_quiet=0.1) as w:
        wait_for(lambda: events(w, "warning"), timeout=3, what="the stop said")
        time.sleep(0.3)  # three intervals: said once, not tried again
        said = events(w, "warning")
        assert len(said) == 1 and said[0].startswith("sync stopped for you: MEMORY.md")
        assert said[0].endswith("; the watcher tries again once that changes")
        assert w.record.sync["result"] == "stopped"
        assert "<<<<<<<" in (b / "MEMORY.md").read_text(encoding="utf-8")
        # the person resolves it and runs `memvault sync`; the watcher takes over again
        resolved = "# Long-Term Memory\n\n## User Preferences\n\nTrinkt morgens grünen Tee.\n\n" \
                   "## Active Projects\n\n## Decisions\n\n## Lessons Learned\n"
        (b / "MEMORY.md").write_text(resolved, encoding="utf-8")
        sync(Vault.open(b))
        log_entry(Vault.open(b), "after the resolution", type="observation")
        wait_for(lambda: "after the resolution" in pushed(remote, _day_of(b)), timeout=3, what="synced again")
        assert pushed(remote, "MEMORY.md") == resolved
        assert len(events(w, "warning")) == 1 and not events(w, "error")


def test_the_command_alone_takes_the_interval_from_the_settings_and_logs_json_lines(clones):
    a, b, remote = clones
    with (b / "memvault.toml").open("a", encoding="utf-8") as fh:
        fh.write("\n[sync]\ninterval_seconds = 0.2\n")
    remote.rename(remote.with_name("offline.git"))
    log_entry(Vault.open(b), "written offline, in the train", type="observation")
    w = WatchProcess(b, "--quiet-period", "0.1", "--sync")
    try:
        first = w.read_until("error", timeout=10)
        second = w.read_until("error", timeout=3)
        assert first["message"].startswith("sync failed, will retry in 0.2s: fetching from origin failed")
        assert second["message"] == first["message"]
        remote.with_name("offline.git").rename(remote)
        assert w.read_until("sync", timeout=3)["result"] == "pushed"
        assert "in the train" in pushed(remote, _day_of(b))
        w.proc.send_signal(signal.SIGTERM)
        code, _ = w.finish()
    finally:
        w.kill()
    assert code == 0


# -- the pure pieces --------------------------------------------------------------------

def test_decide_commits_after_the_quiet_period_and_syncs_on_time():
    kw = {"quiet": 10.0, "stopping": False}
    assert decide(5, dirty=True, last_change=0, sync_at=math.inf, **kw) == ("wait", 5)
    assert decide(10, dirty=True, last_change=0, sync_at=math.inf, **kw) == ("commit", 0)
    assert decide(10, dirty=False, last_change=0, sync_at=math.inf, **kw) == ("wait", None)
    assert decide(10, dirty=False, last_change=0, sync_at=60, **kw) == ("wait", 50)
    assert decide(60, dirty=False, last_change=0, sync_at=60, **kw) == ("sync", 0)


def test_decide_lets_a_due_sync_wait_for_the_quiet_period_but_not_for_ever():
    kw = {"quiet": 10.0, "stopping": False}
    assert decide(60, dirty=True, last_change=55, sync_at=60, **kw) == ("wait", 5)  # the commit comes first
    assert decide(69, dirty=True, last_change=68, sync_at=60, **kw) == ("wait", 1)
    assert decide(70, dirty=True, last_change=69, sync_at=60, **kw) == ("sync", 0)  # written without pause


def test_decide_on_stop_commits_what_is_left_and_never_syncs():
    assert decide(1, dirty=True, last_change=0.9, quiet=10, sync_at=0, stopping=True) == ("commit", 0)
    assert decide(1, dirty=False, last_change=0, quiet=10, sync_at=0, stopping=True) == ("stop", 0)


def test_the_interval_comes_from_the_option_then_the_settings(vault_dir):
    init_vault(vault_dir, timezone="UTC")
    config = Vault.open(vault_dir).config
    assert sync_interval(config, None) is None
    assert sync_interval(config, 0) == 60
    assert sync_interval(config, 5) == 5
    with (vault_dir / "memvault.toml").open("a") as fh:
        fh.write("\n[sync]\ninterval_seconds = 900\n")
    config = Vault.open(vault_dir).config
    assert sync_interval(config, 0) == 900 and sync_interval(config, 30) == 30
    assert WatchOptions.from_config(Vault.open(vault_dir), sync_every=0).sync_every == 0


def test_describe_says_nothing_when_nothing_moved():
    base = {"remote": "origin", "branch": "main", "result": "up to date", "merged_from": 0, "pushed": 0,
            "conflicts": [], "reviews": [], "recovered": None}
    assert describe(base) is None
    line = describe(base | {"result": "merged", "merged_from": 2, "pushed": 1, "conflicts": ["memory/x.md:4: both"]})
    assert line == ("synced with origin/main: merged; brought in 2 commit(s); pushed 1 commit(s); "
                    "1 entry conflict(s) marked (`memvault check` lists them)")
