"""Keep the index current as files change: `memvault watch`, `index --wait`, watcher health.

Library entry points:
- `Watcher(vault, WatchOptions(...))`: the watcher (`start()`/`stop()`, or `run()` in the CLI);
- `wait_until_indexed(vault, timeout)`: return once the index reflects the files as they are
  now, whether a watcher runs or not;
- `watcher_health(vault)`: running / not running / gone / stale, and whether the index is
  behind the files, for `memvault status`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memvault.errors import LockTimeout
from memvault.watch.state import (
    Health,
    WatcherRunning,
    _age,
    _ago,
    classify,
    read_record,
    watcher_alive,
)

if TYPE_CHECKING:
    from memvault.parsed import ParsedVault
    from memvault.watch.watcher import Watcher, WatchOptions


@dataclass
class WaitReport:
    """What `wait_until_indexed` did."""

    seconds: float
    updated: list[str] = field(default_factory=list)
    broken: dict[str, str] = field(default_factory=dict)
    watcher: str = "not running"

    def to_dict(self) -> dict[str, Any]:
        return {"seconds": round(self.seconds, 3), "updated": self.updated, "broken": self.broken,
                "watcher": self.watcher}


def wait_until_indexed(vault: ParsedVault, timeout: float = 30.0, *, backend: str | None = None) -> WaitReport:
    """Return once the index reflects every vault file as it is at the time of the call.

    Rather than wait for a watcher's debounce, the caller reconciles the index itself,
    under the index's single-writer lock, with the index's one rule (files that fail to
    parse keep their last good entries; every such file is listed in `broken`). A running watcher then
    finds nothing left to do. Raises LockTimeout when another writer (a rebuild) holds the
    index longer than `timeout` seconds.
    """
    from memvault.search.index import open_index
    from memvault.watch.sync import held_files, sync

    start = time.monotonic()
    alive = watcher_alive(vault.root)
    index = open_index(vault, backend)
    if isinstance(getattr(index, "settings", None), dict):
        index.settings["lock_timeout"] = max(timeout, 0.01)  # wait for the writer lock this long at most
    try:
        result = sync(vault.root, vault.config, index, None)
        broken = {path: why for path, (_, _, why) in (held_files(index) or {}).items()}  # this pass's and earlier
    except LockTimeout as exc:
        raise LockTimeout(f"gave up waiting after {timeout:g}s: {exc}; the index may not reflect the files "
                          f"yet") from None
    finally:
        index.close()
    return WaitReport(time.monotonic() - start, result.updated, broken | result.broken,
                      "running" if alive else "not running")


def behind_files(vault: ParsedVault, *, backend: str | None = None, ignore: set[str] | None = None) -> list[str]:
    """Vault files whose size or mtime differ from what the index recorded (or new, or gone)."""
    from memvault.search.index import open_index
    from memvault.watch.sync import differing, disk_state, split_by_hash

    index = open_index(vault, backend)
    try:
        indexed = index.indexed_files()
    finally:
        index.close()
    disk = disk_state(vault.root, selection=vault.selection)
    changed, _ = differing(disk, indexed)
    changed, _ = split_by_hash(vault.root, disk, changed, indexed)  # a moved mtime alone is no news
    return sorted(changed - (ignore or set()))


def watcher_health(vault: ParsedVault, *, backend: str | None = None, now: datetime | None = None) -> Health:
    """The watcher's state as `memvault status` shows it."""
    alive = watcher_alive(vault.root)
    record = read_record(vault.root)
    behind = behind_files(vault, backend=backend)  # a file held back is not behind: the index saw it
    return classify(record, alive, behind, now or datetime.now(UTC))


def status_section(vault: ParsedVault) -> tuple[str, dict[str, Any], list[str]]:
    """The watcher part of `memvault status`: (name, data for --json, lines for people)."""
    health = watcher_health(vault)
    data = health.to_dict()
    if data["record"]:  # the index's section is the one account of files, entries and files held back
        data["record"] = {k: v for k, v in data["record"].items() if k not in INDEX_COUNTS}
    failure = commit_failure(vault.root, health.record)
    data["commit_failure"] = failure
    return "watcher", data, health_lines(health, failure)


# What the watcher's record repeats of the index; `memvault status` shows them once, in the index's section.
INDEX_COUNTS = ("files_on_disk", "files_indexed", "events_indexed", "events_on_disk", "broken")


def commit_failure(root: Path, record: dict[str, Any] | None) -> dict[str, Any] | None:
    """The watcher's last failed commit, if its last commit failed: when, why, the files it
    unstaged again and which of them are still not committed (git asked now). `resolved` when
    all of them were committed (or put back) since: `status` then says nothing about it."""
    commit = (record or {}).get("commit") or {}
    if not commit.get("error"):
        return None
    paths = [p.strip() for p in commit.get("unstaged", "").split(",") if p.strip()]
    left: list[str] | None = None
    if paths:
        from memvault.sync.commit import still_uncommitted

        left = still_uncommitted(root, paths)
    return {"at": commit.get("at"), "error": commit["error"], "unstaged": paths, "uncommitted": left,
            "resolved": bool(paths) and left == []}


def health_lines(health: Health, failure: dict[str, Any] | None = None, now: datetime | None = None) -> list[str]:
    lines = [f"watcher: {health.message}"]
    rec = health.record or {}
    running = health.state in ("running", "stale")
    shown = failure_lines(failure, running=running, now=now or datetime.now(UTC))
    if not running or not rec:
        return lines + shown  # a refusal outlives the watcher while its files are still uncommitted
    lines.append(f"  started {rec.get('started')}; last event {rec.get('last_event') or 'none'}; "
                 f"last update {rec.get('last_update') or 'none'}")
    commit = rec.get("commit") or {}
    if commit.get("error"):
        lines += shown
    elif commit.get("sha"):
        lines.append(f"  last commit {commit['sha'][:8]} {commit.get('message', '')}")
    if rec.get("sync_every"):  # the sync section says how the last sync went
        lines.append(f"  syncs after each commit and every {rec['sync_every']:g}s (--sync)")
    said = f"commit failed: {commit.get('error')}"  # the failure above, said once
    lines += [f"  error {e.get('at')}: {e.get('message')}" for e in (rec.get("errors") or [])[-3:]
              if e.get("message") != said]
    return lines


def failure_lines(failure: dict[str, Any] | None, *, running: bool, now: datetime) -> list[str]:
    """A failed commit as `status` says it (pure): when (and how long ago) in the past tense,
    nothing once its files were committed since, and what the watcher will do only while one runs."""
    if not failure or failure["resolved"]:
        return []
    seen = _age(failure.get("at"), now)
    when = f"{failure.get('at')}" + (f", {_ago(seen)}" if seen is not None else "")
    lines = [f"  last commit failed ({when}{'' if running else ', by a watcher no longer running'}): "
             f"{failure['error']}"]
    left = failure["uncommitted"] if failure["uncommitted"] is not None else failure["unstaged"]
    if left:
        then = ("the watcher commits after the next change" if running else
                "then commit them, or start `memvault watch --commit` and change them")
        lines.append(f"  not committed, unstaged again: {', '.join(left)} (fix what the hook names; {then})")
    return lines


def __getattr__(name: str) -> Any:  # the watcher pulls in watchdog: import it on demand
    if name in ("Watcher", "WatchOptions"):
        from memvault.watch import watcher

        return getattr(watcher, name)
    raise AttributeError(name)


__all__ = ["Health", "WaitReport", "WatcherRunning", "Watcher", "WatchOptions", "behind_files",
           "health_lines", "status_section", "wait_until_indexed", "watcher_health"]
