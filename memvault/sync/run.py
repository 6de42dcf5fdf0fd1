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
from memvault.errors import GitError, MemvaultError, NotFoundError, Refused, SyncStopped
from memvault.fsio import locked
from memvault.gitio import fallback_identity, run_git
from memvault.gitio import locks as gitlock
from memvault.gitio import merge_setup as sync_setup
from memvault.gitio.machine import SYNC_DEFAULTS
from memvault.parsed import ParsedVault
from memvault.sync.commit import CommitRefused, CommitResult, commit_vault
from memvault.sync.driver import clear_reviews, pending_reviews
from memvault.sync.memory_merge import BLOCK_ID_RE, BULLET_RE
from memvault.sync.state import (
    clear_step,
    git_dir,
    in_progress,
    read_step,
    upstream_of,
    write_last,
    write_step,
)

ATTEMPTS = 5
DELETED_ONE_SIDE = "deleted on one machine, changed on the other: `git add {name}` keeps it, `git rm {name}` lets it go"
Say = Callable[[str], None]


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
    root, config, derived = Path(vault.root).resolve(), vault.config, vault.derived
    gdir = git_dir(root)
    settings = config.section("sync", SYNC_DEFAULTS)
    remote = remote or settings.get("remote")
    with locked(derived / "sync.lock", timeout=2.0, what="sync (another sync is running)"):
        report = SyncReport("up to date")
        try:
            report.remote, report.branch, _ = upstream_of(root, remote, settings.get("branch"))  # said even if it stops
            report.recovered = _recover(root, gdir, say)
            _run(vault, gdir, report, remote, settings.get("branch"), push, say)
        except MemvaultError as exc:
            report.result = "stopped" if isinstance(exc, SyncStopped) else "failed"
            report.message = str(exc)
            _record(derived, report)
            _leave_step(gdir)
            raise
        clear_step(gdir)
        _record(derived, report)
        return report


def _leave_step(gdir: Path) -> None:
    """After a sync that failed or stopped: its step marker goes, unless it waits for the person
    (`stopped`); a marker left is what says "interrupted", and this sync was not."""
    step = read_step(gdir)
    if step is not None and step.get("pid") == os.getpid() and step.get("step") != "stopped":
        clear_step(gdir)


def _record(derived: Path, report: SyncReport) -> None:
    write_last(derived, {"at": datetime.now().astimezone().isoformat(timespec="seconds"), **report.as_dict()})


def _recover(root: Path, gdir: Path, say: Say) -> str | None:
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
    # This sync holds the sync lock, so the process that wrote the marker is gone (its pid may even
    # belong to another program by now).
    top = Path(_git(root, "rev-parse", "--show-toplevel").text.strip())
    common = (root / _git(root, "rev-parse", "--git-common-dir").text.strip()).resolve()
    extra = (common / "config.lock", common / "packed-refs.lock", gdir / "ORIG_HEAD.lock", gdir / "MERGE_HEAD.lock",
             gdir / "FETCH_HEAD.lock", *(common / "refs" / "remotes").rglob("*.lock"))
    # The sync that held them is gone (its pid is dead), so their age says nothing.
    gitlock.remove_stale(gdir, common, top, say, stale_after=0.0, extra=extra)
    for left in top.glob(".merge_file_*"):  # the driver's input copies a killed merge-tree leaves
        left.unlink(missing_ok=True)
    if step.get("step") == "update files":
        _undo_half_update(root, step)
    if (gdir / "MERGE_HEAD").exists():
        _git(root, "merge", "--abort", check=False)
    clear_step(gdir)
    what = f"a sync killed during {step.get('step')} was recovered"
    say(what)
    return what


def _undo_half_update(root: Path, step: dict) -> None:
    """A sync killed inside `git merge --ff-only` leaves HEAD where it was and the files half
    updated: some at the merged version, some unlinked and not yet rewritten. Put each file the
    update touches back at HEAD's version when it holds HEAD's, the target's or nothing, so the
    next commit of pending changes does not take git's half-done work for the person's (a missing
    log committed as deleted loses its entries). A file with other content was edited since: it stays."""
    head, target = step.get("head"), step.get("target")
    if not isinstance(head, str) or not isinstance(target, str) or _sha(root, "HEAD") != head:
        return
    listed = _git(root, "diff", "--name-only", "--relative", "-z", head, target, check=False)
    back: list[str] = []
    gone: list[str] = []
    for path in filter(None, listed.text.split("\0") if listed.ok else []):
        was, new = _blob(root, f"{head}:./{path}"), _blob(root, f"{target}:./{path}")
        if (root / path).is_file():
            now = _git(root, "hash-object", "--", path, check=False).text.strip()
            if now not in (was, new):
                continue
        (back if was else gone).append(path)
    if back:
        _git(root, "--literal-pathspecs", "checkout", "-q", head, "--", *back)
    for path in gone:  # new in the target and written already: the update writes it again
        (root / path).unlink(missing_ok=True)
        _git(root, "--literal-pathspecs", "rm", "-q", "--cached", "--ignore-unmatch", "--", path, check=False)


def _blob(root: Path, spec: str) -> str | None:
    found = _git(root, "rev-parse", "--verify", "--quiet", spec, check=False)
    return found.text.strip() if found.ok else None


def _finish_for_person(root: Path, gdir: Path, step: dict) -> str:
    """A merge left for the person: committed once no file holds markers (what the person edited is
    added for them); else the sync stops again, naming what is left."""
    from memvault.entries.blocks import marker_lines

    if not (gdir / "MERGE_HEAD").exists():
        clear_step(gdir)
        return "the merge left for you is gone (aborted); syncing again"
    stages = unmerged_stages(root)
    unmerged = sorted(stages)
    left = []
    for name in unmerged:
        path = root / name
        if not {2, 3} <= stages[name] or not path.is_file():
            left.append(f"{name} ({DELETED_ONE_SIDE.format(name=name)})")
        elif marker_lines(path.read_text(encoding="utf-8", errors="replace")):
            left.append(f"{name} (still holds <<<<<<< ======= >>>>>>> lines)")
        else:
            _git(root, "add", "--", name)  # edited and no markers left: resolved
    marked = [f for f in step.get("files") or [] if f not in unmerged and (root / f).is_file()
              and marker_lines((root / f).read_text(encoding="utf-8", errors="replace"))]
    left += [f"{f} (still holds <<<<<<< ======= >>>>>>> lines)" for f in marked]
    if left:
        raise SyncStopped("sync is still stopped for you: " + "; ".join(left) + "; then run `memvault sync` again",
                          file=(unmerged or marked or [None])[0])
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
    rem, br, ref = upstream_of(root, remote, branch)
    report.remote, report.branch = rem, br
    if rem is None or br is None or ref is None:
        write_step(gdir, "commit")
        _commit_pending(root, config, report, setup.attributes_written, say)
        if br is None:
            raise Refused("HEAD is detached (no branch is checked out): `git switch BRANCH` first, then sync")
        if _git(root, "remote", check=False).text.split():
            raise Refused(f"cannot tell which remote to sync with: set [sync] remote in memvault.toml, give "
                          f"--remote, or set the branch's upstream (`git branch -u REMOTE/{br}`)")
        raise Refused("this vault's git repository has no remote to sync with: add one "
                      "(`git remote add origin URL`, docs/sync.md)")
    if rem not in _git(root, "remote", check=False).text.split():
        raise NotFoundError(f"no git remote named {rem!r}; `git remote -v` lists the ones there are")
    attributes = setup.attributes_written
    for attempt in range(1, ATTEMPTS + 1):
        report.attempts = attempt
        write_step(gdir, "fetch")
        fetched = _git(root, "fetch", "--quiet", rem, check=False)
        if not fetched.ok:
            raise GitError(f"fetching from {rem} failed (nothing was merged or pushed): {fetched.words}")
        # Commit and integrate under the vault's write lock: `memvault log` and the server wait a
        # moment instead of writing into a file between its commit and git replacing it.
        with locked(lock_path, what="the vault (sync)"):
            write_step(gdir, "commit")
            _commit_pending(root, config, report, attributes, say)
            attributes = False
            moved = _integrate(root, gdir, report, ref, rem, br)
        if moved is None:  # a file changed, or another commit landed, between the commit and the update
            say(f"the vault changed while syncing; trying again ({attempt}/{ATTEMPTS})")
            continue
        if not push or _push(root, gdir, report, rem, br, ref):
            break
        say(f"{rem} moved while syncing; trying again ({attempt}/{ATTEMPTS})")
        time.sleep(0.05 * attempt)
    else:
        raise MemvaultError(f"{rem} or the files kept moving: gave up after {ATTEMPTS} attempts; "
                            "run `memvault sync` again")
    if pending_reviews(gdir):  # this merge set a MEMORY.md bullet aside: say it now, and share it
        report.reviews += _log_reviews(vault, gdir)
        with locked(lock_path, what="the vault (sync)"):
            _commit_pending(root, config, report, False, say)
        if push and not _push(root, gdir, report, rem, br, ref):
            say(f"{rem} moved meanwhile: the review entries go with the next sync")
    if report.merged_from and (vault.derived / "index").exists():
        _update_index(vault, say)
    up = _sha(root, ref)
    if up:
        report.ahead = _count(root, f"{up}..HEAD")
        report.behind = _count(root, f"HEAD..{up}")


def _update_index(vault: ParsedVault, say: Say) -> None:
    """Bring the search index up to date with what the sync brought (a search would, later)."""
    from memvault.search.index import update_index

    try:
        update_index(vault)
    except MemvaultError as exc:  # the sync itself went well; the next search tries again
        say(f"the search index was not updated after the sync: {exc}")


def _first_words(message: str, limit: int = 300) -> str:
    """The start of a long git message (a hook's whole output), for one line of ours: git's own
    words, without the command and folder our GitError puts before them."""
    text = " ".join(message.split())
    if " failed in " in text:
        text = text.split(" failed in ", 1)[1].split(": ", 1)[-1]
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def _log_reviews(vault: ParsedVault, gdir: Path) -> list[str]:
    """Each MEMORY.md bullet a merge found changed on two machines becomes an entry curate proposes:
    a correction of the bullet (its other version), or, when one machine removed the bullet, an
    observation of the version the other machine had."""
    from memvault.write.log import log_entry  # only when a merge left review items

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
        raise SyncStopped("sync stopped before pulling: the pre-commit hook refused the commit of pending "
                          f"changes ({', '.join(exc.paths) or 'the vault'}); fix what `memvault check` lists, then "
                          f"run `memvault sync` again. The hook said: {_first_words(str(exc))}",
                          file=exc.paths[0] if exc.paths else None) from None
    if done is not None:
        report.committed.append(done.message.split("\n", 1)[0])
    if attributes:
        _git(root, "add", "--", sync_setup.ATTRIBUTES_FILE)
        _git(root, *fallback_identity(root), "commit", "-q", "--no-verify", "-m",
             "memvault: merge memory entry by entry (.gitattributes, docs/sync.md)", "--", sync_setup.ATTRIBUTES_FILE)
        report.committed.append("memvault: .gitattributes")


def _integrate(root: Path, gdir: Path, report: SyncReport, ref: str, rem: str, br: str) -> bool | None:
    """Bring the remote's branch in (the caller holds the vault's write lock); True when HEAD moved,
    None when a file changed meanwhile kept git from updating the files (nothing changed then)."""
    up = _sha(root, ref)
    head = _sha(root, "HEAD")
    if up is None or up == head or (head is not None and _is_ancestor(root, up, head)):
        return False
    if head is None or _is_ancestor(root, head, up):
        if not _fast_forward(root, gdir, up):
            return None
        report.merged_from += _count(root, f"{head}..{up}") if head else 0
        report.result = "pulled" if report.result == "up to date" else report.result
        return True
    write_step(gdir, "merge")
    # Unrelated histories: a hosted repository created with a README, then the vault pushed to it.
    found = _git(root, "merge-tree", "--write-tree", "--messages", "--allow-unrelated-histories", up, head, check=False)
    if found.returncode not in (0, 1):
        raise MemvaultError(f"git merge-tree failed: {found.words}")
    tree = found.text.split("\n", 1)[0].strip()
    if found.returncode == 1:
        _stop_for_person(root, gdir, up, found.text)
    brought = _count(root, f"HEAD..{up}")
    message = f"memvault: sync {brought} commit(s) from {rem}/{br}"
    merge = _git(root, *fallback_identity(root), "commit-tree", tree, "-p", up, "-p", head, "-m", message).text.strip()
    if not _fast_forward(root, gdir, merge):
        return None
    report.merged_from += brought
    report.conflicts += _marked(root, head, merge)
    report.result = "merged"
    return True


def _fast_forward(root: Path, gdir: Path, target: str) -> bool:
    """Move HEAD and the files to `target` (a descendant of HEAD); False when git refused because
    the vault changed since the commit (a file edited by hand, another commit: git then changed
    nothing, and the caller integrates again)."""
    head = _sha(root, "HEAD")
    write_step(gdir, "update files", head=head, target=target)  # what _undo_half_update needs
    done = _git(root, "merge", "--ff-only", "--quiet", target, check=False)
    if done.ok:
        return True
    # Judged from the state, not from git's words (they are in the user's language).
    if _sha(root, "HEAD") != head or _dirty(root) or (head is not None and not _is_ancestor(root, head, target)):
        return False
    raise MemvaultError(f"the files could not be updated to the merged state (nothing was lost; run "
                        f"`memvault sync` again): {done.words}")


def _dirty(root: Path) -> bool:
    return bool(_git(root, "status", "--porcelain", "--untracked-files=normal", "--", ".").text.strip())


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


def unmerged_stages(root: Path) -> dict[str, set[int]]:
    """{vault-relative path: its index stages} of the paths a merge left unmerged: 2 and 3 both for
    two versions to reconcile; one of them missing for a file deleted on one side."""
    out = _git(root, "ls-files", "-u", "-z", "--", ".").text
    stages: dict[str, set[int]] = {}
    for item in filter(None, out.split("\0")):
        info, _, name = item.partition("\t")
        stages.setdefault(name, set()).add(int(info.split()[2]))
    return stages


def _stop_for_person(root: Path, gdir: Path, up: str, messages: str) -> None:
    """Leave the merge in git's usual state for the person (the caller holds the vault's lock)."""
    files = sorted({ln.split("\t")[-1] for ln in messages.split("\n")[1:] if "\t" in ln})
    write_step(gdir, "stopping", files=files)
    _git(root, *fallback_identity(root), "merge", "--no-ff", "--no-commit", "--allow-unrelated-histories", up, check=False)
    stages = unmerged_stages(root)
    conflicted = sorted(stages) or files
    deleted = [f for f in conflicted if f in stages and not {2, 3} <= stages[f]]
    write_step(gdir, "stopped", files=conflicted, deleted=deleted)
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
        # --porcelain's flags are git's, not the user's language: `!` a refused ref, `[rejected]` because
        # the remote moved (fetch and merge again), `[remote rejected]` the remote's own refusal.
        refused = [ln for ln in done.text.splitlines() if ln.startswith("!")]
        if refused and all("[rejected]" in ln for ln in refused):
            return False
        raise GitError(f"pushing to {rem} was refused (the merge is kept here; nothing was lost): {done.words}")
    report.pushed += ahead
    if report.result == "up to date":
        report.result = "pushed"
    local = _git(root, "symbolic-ref", "--quiet", "--short", "HEAD", check=False).text.strip()
    if local and not _git(root, "config", "--get", f"branch.{local}.remote", check=False).text.strip():
        _git(root, "branch", "--quiet", f"--set-upstream-to={rem}/{br}", check=False)
    if _sha(root, ref) != _sha(root, "HEAD"):  # a remote without a fetch refspec: its ref did not move
        _git(root, "fetch", "--quiet", rem, check=False)
    return True
