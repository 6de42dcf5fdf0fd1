"""What `status` says about sync, and what a sync leaves behind for the next one.

- `$GIT_DIR/memvault/sync-step.json` (this clone's, never committed): written at each step of a
  running sync (its pid, the step, when). When a sync is killed it stays, and the next `status`
  says so; the next `sync` recovers from it. A sync stopped for the person (MEMORY.md prose
  changed on two machines) writes step `stopped`, with the files and what to do.
- `.memvault/sync.json`: the last sync's time, result and message.
- ahead/behind from the local refs (no network): what the last fetch knew.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memvault.fsio import atomic_write
from memvault.gitio import run_git

STEP_FILE = "memvault/sync-step.json"
LAST_FILE = "sync.json"


def git_dir(root: Path) -> Path:
    found = run_git(["rev-parse", "--absolute-git-dir"], root).text.strip()
    return Path(found)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def write_step(gdir: Path, step: str, **extra: Any) -> None:
    target = gdir / STEP_FILE
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(target, json.dumps({"pid": os.getpid(), "step": step, "at": time.time(), **extra}))


def read_step(gdir: Path) -> dict[str, Any] | None:
    try:
        data = json.loads((gdir / STEP_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def clear_step(gdir: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        (gdir / STEP_FILE).unlink()


def write_last(derived: Path, record: dict[str, Any]) -> None:
    derived.mkdir(parents=True, exist_ok=True)
    atomic_write(derived / LAST_FILE, json.dumps(record, ensure_ascii=False, indent=1))


def read_last(derived: Path) -> dict[str, Any] | None:
    try:
        data = json.loads((derived / LAST_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


@dataclass(frozen=True)
class Progress:
    """A git operation under way in the clone: whose, and what to do."""

    what: str  # "merge", "rebase", "cherry-pick", "sync"
    ours: bool
    message: str


def in_progress(root: Path, gdir: Path | None = None) -> Progress | None:
    """A merge, rebase or interrupted sync the clone is in the middle of; None when none."""
    gdir = gdir or git_dir(root)
    step = read_step(gdir)
    merging = (gdir / "MERGE_HEAD").exists()
    if step is not None and step.get("step") == "stopped":
        deleted = [f for f in step.get("deleted") or [] if isinstance(f, str)]
        names = [f for f in step.get("files") or [] if f not in deleted] or ([] if deleted else ["MEMORY.md"])
        parts = []
        if names:
            why = ("prose changed on two machines, which memvault leaves to you" if names == ["MEMORY.md"]
                   else "changed on two machines in ways neither memvault (MEMORY.md prose) nor git could merge")
            parts.append(f"{', '.join(names)}: {why}; edit each file (keep what should stay, remove the "
                         "<<<<<<< ======= >>>>>>> lines)")
        parts += [f"{f}: deleted on one machine, changed on the other: `git add {f}` keeps it, `git rm {f}` "
                  "lets it go" for f in deleted]
        return Progress("merge", True, "sync stopped for you: " + "; ".join(parts) + "; then run `memvault sync` again")
    if step is not None and not (isinstance(step.get("pid"), int) and alive(step["pid"]) and step["pid"] != os.getpid()):
        return Progress("sync", True, f"a sync was interrupted during {step.get('step')} (process {step.get('pid')} "
                        "is gone); the next `memvault sync` finishes it")
    if step is not None:
        return Progress("sync", True, f"a sync is running (process {step.get('pid')}, {step.get('step')})")
    if merging:
        return Progress("merge", False, "a git merge memvault did not start is in progress: finish it "
                        "(`git commit`) or abort it (`git merge --abort`), then run `memvault sync`")
    for name, what in (("rebase-merge", "rebase"), ("rebase-apply", "rebase"), ("CHERRY_PICK_HEAD", "cherry-pick")):
        if (gdir / name).exists():
            return Progress(what, False, f"a git {what} is in progress: finish or abort it, then run `memvault sync`")
    return None


def ahead_behind(root: Path, upstream: str | None) -> tuple[int, int] | None:
    """(commits here not on the upstream, commits there not here), as the last fetch knew it."""
    if not upstream:
        return None
    found = run_git(["rev-list", "--left-right", "--count", f"HEAD...{upstream}"], root, check=False)
    if not found.ok:
        return None
    a, _, b = found.text.strip().partition("\t")
    return int(a), int(b)


def upstream_of(root: Path, remote: str | None = None, branch: str | None = None) -> tuple[str | None, str | None, str | None]:
    """(remote, branch, remote-tracking ref) sync uses: `[sync]` settings, else the branch's upstream,
    else the only remote (or `origin`) and the current branch's name there."""
    head = run_git(["symbolic-ref", "--quiet", "--short", "HEAD"], root, check=False)
    local = head.text.strip() if head.ok else None
    if local and not remote:
        found = run_git(["config", "--get", f"branch.{local}.remote"], root, check=False)
        remote = found.text.strip() or None
        if remote and not branch:
            merge = run_git(["config", "--get", f"branch.{local}.merge"], root, check=False).text.strip()
            branch = merge.removeprefix("refs/heads/") or None
    if not remote:
        remotes = run_git(["remote"], root, check=False).text.split()
        remote = "origin" if "origin" in remotes else (remotes[0] if len(remotes) == 1 else None)
    branch = branch or local
    if not remote or not branch:
        return remote, branch, None
    return remote, branch, f"refs/remotes/{remote}/{branch}"


def summary(root: Path, derived: Path, remote: str | None = None, branch: str | None = None) -> dict[str, Any]:
    """The `sync` section of `status`: remote, ahead/behind, last sync, anything under way."""
    rem, br, ref = upstream_of(root, remote, branch)
    exists = bool(ref) and run_git(["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], root, check=False).ok
    counts = ahead_behind(root, ref) if exists else None
    busy = in_progress(root)
    return {
        "remote": rem, "branch": br,
        "url": run_git(["remote", "get-url", rem], root, check=False).text.strip() or None if rem else None,
        "ahead": counts[0] if counts else None, "behind": counts[1] if counts else None,
        "last": read_last(derived),
        "in_progress": None if busy is None else {"what": busy.what, "ours": busy.ours, "message": busy.message},
    }
