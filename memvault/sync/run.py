"""`memvault sync`: commit what is pending, fetch, integrate, push; again when the remote moved.

The integration never leaves a daily log half merged: when both sides moved, the merge is computed
first without touching the files (`git merge-tree --write-tree`, through the memvault driver), made
a commit whose first parent is the remote's branch (so the first-parent line is the shared history
on every clone: docs/sync.md, "Recorded time"), and then the files are fast-forwarded to it under
the vault's write lock, so `memvault log` and the server wait instead of writing into a file git is
replacing. Only MEMORY.md prose changed on both sides stops a sync: then the merge is left in git's
usual state for the person, and `status` and the next `sync` say what to do.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from memvault.config.core import Config
from memvault.errors import GitError, MemvaultError, Refused
from memvault.fsio import locked
from memvault.gitio import fallback_identity, run_git
from memvault.gitio import locks as gitlock
from memvault.gitio import merge_setup as sync_setup
from memvault.parsed import ParsedVault
from memvault.sync.commit import CommitRefused, CommitResult, commit_vault
from memvault.sync.driver import clear_reviews, pending_reviews
from memvault.sync.memory_merge import BLOCK_ID_RE, BULLET_RE
from memvault.sync.state import (
    alive,
    clear_step,
    git_dir,
    in_progress,
    read_step,
    upstream_of,
    write_last,
    write_step,
)
from memvault.write.log import log_entry

ATTEMPTS = 5
Say = Callable[[str], None]


class SyncStopped(Refused):
    """The sync stopped and needs the person (a prose conflict, a refused commit, a git state)."""

    code = "sync_stopped"


@dataclass
class SyncReport:
    result: str  # "up to date", "pushed", "pulled", "merged", "no remote yet"
    remote: str | None = None
    branch: str | None = None
    committed: list[str] = field(default_factory=list)  # commit subjects made from pending changes
    merged_from: int = 0  # commits brought in
    pushed: int = 0
    attempts: int = 0
    recovered: str | None = None
    conflicts: list[str] = field(default_factory=list)  # "file:line: why" lines a merge marked
    reviews: list[str] = field(default_factory=list)  # ids of correction entries logged for curate
    ahead: int = 0
    behind: int = 0
    message: str = ""

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _git(root: Path, *args: str, check: bool = True) -> Any:
    return run_git(args, root, check=check)


def _sha(root: Path, ref: str) -> str | None:
    found = _git(root, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", check=False)
    return found.text.strip() if found.ok else None


def _is_ancestor(root: Path, a: str, b: str) -> bool:
    return _git(root, "merge-base", "--is-ancestor", a, b, check=False).returncode == 0


def _count(root: Path, spec: str) -> int:
    return int(_git(root, "rev-list", "--count", spec).text.strip() or 0)


def sync(vault: ParsedVault, *, remote: str | None = None, push: bool = True, say: Say | None = None) -> SyncReport:
    """One sync of `vault` (see the module doc)."""
    say = say or logging.getLogger("memvault").info
    root, config, derived, _lock_path = Path(vault.root).resolve(), vault.config, vault.derived, vault.lock_path
    gdir = git_dir(root)
    settings = config.section("sync", {})
    remote = remote or settings.get("remote")
    with locked(derived / "sync.lock", timeout=2.0, what="sync (another sync is running)"):
        report = SyncReport("up to date")
        try:
            report.recovered = _recover(root, gdir, config, say)
            _run(vault, gdir, report, remote, settings.get("branch"), push, say)
        except SyncStopped as exc:
            report.result, report.message = "stopped", str(exc)
            _record(derived, report)
            raise
        except MemvaultError as exc:
            report.result, report.message = "failed", str(exc)
            _record(derived, report)
            clear_step(gdir) if read_step(gdir) and read_step(gdir).get("step") != "stopped" else None  # type: ignore[union-attr]
            raise
        clear_step(gdir)
        _record(derived, report)
        return report


def _record(derived: Path, report: SyncReport) -> None:
    write_last(derived, {"at": datetime.now().astimezone().isoformat(timespec="seconds"), **report.as_dict()})


def _recover(root: Path, gdir: Path, config: Config, say: Say) -> str | None:
    """Put the clone back where a sync can run: finish a merge the person resolved, abort one a
    killed sync left, clear the git locks it left. Refuses a git operation someone else started."""
    step = read_step(gdir)
    busy = in_progress(root, gdir)
    if step is not None and step.get("step") == "stopped":
        return _finish_for_person(root, gdir, step)
    if busy is not None and not busy.ours:
        raise SyncStopped(busy.message)
    if step is None:
        return None
    pid = step.get("pid")
    if isinstance(pid, int) and alive(pid) and pid != os.getpid():
        raise SyncStopped(f"another sync (process {pid}) is at step {step.get('step')}")
    top = Path(_git(root, "rev-parse", "--show-toplevel").text.strip())
    common = (root / _git(root, "rev-parse", "--git-common-dir").text.strip()).resolve()
    gitlock.remove_stale(gdir, common, top, say, stale_after=0.0)
    if (gdir / "MERGE_HEAD").exists():
        _git(root, "merge", "--abort", check=False)
    clear_step(gdir)
    what = f"a sync killed during {step.get('step')} was recovered"
    say(what)
    return what


def _finish_for_person(root: Path, gdir: Path, step: dict) -> str:
    unmerged = _git(root, "diff", "--name-only", "--diff-filter=U").text.split()
    from memvault.entries.blocks import marker_lines

    marked = [f for f in {*(step.get("files") or []), *unmerged} if (root / f).is_file()
              and marker_lines((root / f).read_text(encoding="utf-8", errors="replace"))]
    if marked:
        raise SyncStopped(in_progress(root, gdir).message + f" (still to resolve: {', '.join(sorted(marked))})"  # type: ignore[union-attr]
                          )
    if unmerged:  # edited as the message asks, without `git add`: no markers are left, so they are resolved
        _git(root, "add", "--", *unmerged)
    if (gdir / "MERGE_HEAD").exists():
        try:
            _git(root, *fallback_identity(root), "commit", "-q", "--no-edit")
        except GitError as exc:
            raise SyncStopped(f"the merge you resolved could not be committed: {exc}") from None
    clear_step(gdir)
    return "the merge you resolved was committed"


def _run(vault: ParsedVault, gdir: Path, report: SyncReport, remote: str | None, branch: str | None, push: bool,
         say: Say) -> None:
    root, config, lock_path = Path(vault.root).resolve(), vault.config, vault.lock_path
    write_step(gdir, "setup")
    setup = sync_setup.install(root)
    report.reviews += _log_reviews(vault, gdir)
    write_step(gdir, "commit")
    _commit_pending(root, config, report, setup.attributes_written, say)
    rem, br, ref = upstream_of(root, remote, branch)
    report.remote, report.branch = rem, br
    if rem is None or br is None or ref is None:
        raise Refused("this vault's git repository has no remote to sync with: add one "
                      "(`git remote add origin URL`, docs/sync.md), or check out a branch")
    for attempt in range(1, ATTEMPTS + 1):
        report.attempts = attempt
        write_step(gdir, "fetch")
        fetched = _git(root, "fetch", "--quiet", rem, check=False)
        if not fetched.ok:
            raise MemvaultError(f"fetching from {rem} failed: {fetched.words}")
        if _integrate(root, gdir, report, lock_path, ref, rem, br):
            pass
        if not push or _push(root, gdir, report, rem, br, ref):
            break
        say(f"{rem} moved while syncing; trying again ({attempt}/{ATTEMPTS})")
        _commit_pending(root, config, report, False, say)
        time.sleep(0.05 * attempt)
    else:
        raise MemvaultError(f"{rem} kept moving: gave up after {ATTEMPTS} attempts; run `memvault sync` again")
    up = _sha(root, ref)
    if up:
        report.ahead = _count(root, f"{up}..HEAD")
        report.behind = _count(root, f"HEAD..{up}")


def _log_reviews(vault: ParsedVault, gdir: Path) -> list[str]:
    """Each MEMORY.md bullet a merge found changed on two machines becomes an entry curate proposes:
    a correction of the bullet (its other version), or, when one machine removed the bullet, an
    observation of the version the other machine had."""
    ids = []
    for item in pending_reviews(gdir):
        other = BULLET_RE.sub("", str(item.get("other") or "")).strip()
        other = BLOCK_ID_RE.sub("", other).strip()
        if not other:
            continue
        bullet = f"^{item.get('block_id')}"
        if item.get("kept"):
            ev = log_entry(vault, other, type="correction", supersedes=bullet, check_refs=False,
                           tags=("sync-review",))
        else:
            ev = log_entry(vault, f"{other} (a MEMORY.md bullet, {bullet}, one machine removed and another changed)",
                           type="observation", tags=("sync-review",))
        ids.append(ev.id)
    clear_reviews(gdir)
    return ids


def _commit_pending(root: Path, config: Config, report: SyncReport, attributes: bool, say: Say) -> None:
    try:
        done: CommitResult | None = commit_vault(root, config, say)
    except CommitRefused as exc:
        raise SyncStopped(f"sync stopped before pulling: {exc}") from None
    if done is not None:
        report.committed.append(done.message.split("\n", 1)[0])
    if attributes:
        _git(root, "add", "--", sync_setup.ATTRIBUTES_FILE)
        _git(root, *fallback_identity(root), "commit", "-q", "--no-verify", "-m",
             "memvault: merge memory entry by entry (.gitattributes, docs/sync.md)", "--", sync_setup.ATTRIBUTES_FILE)
        report.committed.append("memvault: .gitattributes")


def _integrate(root: Path, gdir: Path, report: SyncReport, lock_path: Path, ref: str, rem: str, br: str) -> bool:
    """Bring the remote's branch in; True when HEAD moved."""
    up = _sha(root, ref)
    head = _sha(root, "HEAD")
    if up is None or up == head or (head is not None and _is_ancestor(root, up, head)):
        return False
    if head is None or _is_ancestor(root, head, up):
        report.merged_from += _count(root, f"HEAD..{up}") if head else 0
        _fast_forward(root, gdir, lock_path, up)
        report.result = "pulled"
        return True
    write_step(gdir, "merge")
    found = _git(root, "merge-tree", "--write-tree", "--messages", up, head, check=False)
    if found.returncode not in (0, 1):
        raise MemvaultError(f"git merge-tree failed: {found.words}")
    tree = found.text.split("\n", 1)[0].strip()
    if found.returncode == 1:
        _stop_for_person(root, gdir, lock_path, up, found.text)
    report.merged_from += _count(root, f"HEAD..{up}")
    message = f"memvault: sync {report.merged_from} commit(s) from {rem}/{br}"
    merge = _git(root, *fallback_identity(root), "commit-tree", tree, "-p", up, "-p", head, "-m", message).text.strip()
    before = head
    _fast_forward(root, gdir, lock_path, merge)
    report.conflicts += _marked(root, before, merge)
    report.result = "merged"
    return True


def _fast_forward(root: Path, gdir: Path, lock_path: Path, target: str) -> None:
    """Move HEAD and the files to `target` (a descendant of HEAD) under the vault's write lock."""
    write_step(gdir, "update files")
    with locked(lock_path, what="the vault (sync)"):
        done = _git(root, "merge", "--ff-only", "--quiet", target, check=False)
    if not done.ok:
        raise MemvaultError(f"the files could not be updated to the merged state (nothing was lost; run "
                            f"`memvault sync` again): {done.words}")


def _marked(root: Path, before: str, after: str) -> list[str]:
    """`file:line: why` of the `Conflict:` lines the merge added."""
    diff = _git(root, "diff", "--unified=0", "--no-color", before, after, "--", ".").text
    out, current, line = [], "", 0
    for raw in diff.split("\n"):
        if raw.startswith("+++ b/"):
            current = raw[6:]
        elif raw.startswith("@@"):
            line = int(raw.split("+", 1)[1].split(",", 1)[0].split(" ", 1)[0]) - 1
        elif raw.startswith("+") and not raw.startswith("+++"):
            line += 1
            if raw[1:].startswith("Conflict: "):
                out.append(f"{current}:{line}: {raw[11:]}")
    return out


def _stop_for_person(root: Path, gdir: Path, lock_path: Path, up: str, messages: str) -> None:
    files = sorted({ln.split("\t")[-1] for ln in messages.split("\n")[1:] if "\t" in ln})
    write_step(gdir, "stopped", files=files)
    with locked(lock_path, what="the vault (sync)"):
        _git(root, *fallback_identity(root), "merge", "--no-ff", "--no-commit", up, check=False)
    conflicted = _git(root, "diff", "--name-only", "--diff-filter=U").text.split() or files
    write_step(gdir, "stopped", files=conflicted)
    raise SyncStopped(in_progress(root, gdir).message + f" ({', '.join(conflicted)})")  # type: ignore[union-attr]


def _push(root: Path, gdir: Path, report: SyncReport, rem: str, br: str, ref: str) -> bool:
    """Push HEAD to the remote's branch; False when the remote moved meanwhile (fetch and retry)."""
    up = _sha(root, ref)
    ahead = _count(root, f"{up}..HEAD") if up else _count(root, "HEAD")
    if ahead == 0:
        return True
    write_step(gdir, "push")
    done = _git(root, "push", "--porcelain", rem, f"HEAD:refs/heads/{br}", check=False)
    if not done.ok:
        if "rejected" in done.text or "fetch first" in done.words or "non-fast-forward" in done.words:
            return False
        raise MemvaultError(f"pushing to {rem} failed: {done.words}")
    report.pushed += ahead
    if report.result == "up to date":
        report.result = "pushed"
    local = _git(root, "symbolic-ref", "--quiet", "--short", "HEAD", check=False).text.strip()
    if local and not _git(root, "config", "--get", f"branch.{local}.remote", check=False).text.strip():
        _git(root, "branch", "--quiet", f"--set-upstream-to={rem}/{br}", check=False)
    _git(root, "fetch", "--quiet", rem, check=False)
    return True
