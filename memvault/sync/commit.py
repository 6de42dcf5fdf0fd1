"""`memvault watch --commit`: commit changed Markdown with a message that says what changed.

The message counts entries, not lines (`memvault: +3 entries in memory/2026-02-21.md`),
so `git log` reads as a history of what was learned. Only vault Markdown is ever staged
or committed (the files the vault selects, by default `MEMORY.md` and `memory/**/*.md`; never
`.memvault/` or other files), the
commit names its paths so whatever else the user staged stays staged, and the vault's
own hooks run (no `--no-verify`): a commit they refuse is reported and tried again later.
A commit that fails on a git lock left by a killed git removes the lock when it is stale
(gitlock.py) and is tried once more; a live lock is never touched (`GitLocked`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from memvault.config.core import Config
from memvault.entries.model import Event
from memvault.errors import GitError, UnsafePath
from memvault.filedates import FileDates
from memvault.fsio import decode_text
from memvault.gitio import GitResult, fallback_identity, not_in_repository, run_git
from memvault.gitio import locks as gitlock
from memvault.layout import DEFAULT, Selection, is_watched_file, problem_at, read_file
from memvault.parsed import parse_text

MAX_LISTED = 10


@dataclass
class FileChange:
    """One Markdown file's change since HEAD, in entries."""

    path: str
    status: str  # "added", "modified" or "deleted"
    added: list[Event] = field(default_factory=list)
    removed: list[Event] = field(default_factory=list)
    edited: list[Event] = field(default_factory=list)


@dataclass(frozen=True)
class CommitResult:
    sha: str
    message: str
    paths: tuple[str, ...]


# -- pure: what changed and how to say it ------------------------------------------------

def _fingerprint(ev: Event) -> tuple:
    return (ev.type, ev.timestamp, ev.content, ev.tags, ev.supersedes, ev.reconfirms,
            ev.confidence0, ev.importance, ev.expires, ev.scope, ev.source, ev.category, ev.forgotten)


def diff_events(path: str, status: str, old: list[Event], new: list[Event]) -> FileChange:
    """Entries added, removed and edited between two parses of one file, matched by id."""
    before = {e.id: e for e in old}
    after = {e.id: e for e in new}
    return FileChange(
        path, status,
        added=[e for i, e in after.items() if i not in before],
        removed=[e for i, e in before.items() if i not in after],
        edited=[e for i, e in after.items() if i in before and _fingerprint(before[i]) != _fingerprint(e)],
    )


def _entries(events: list[Event], sign: str) -> list[str]:
    """`+2 entries`, `+1 note`: typed entries and freeform notes counted apart."""
    notes = sum(e.is_note for e in events)
    entries = len(events) - notes
    out = [f"{sign}{entries} entr{'y' if entries == 1 else 'ies'}"] if entries else []
    return out + ([f"{sign}{notes} note{'' if notes == 1 else 's'}"] if notes else [])


def _counts(added: list[Event], edited: list[Event], removed: list[Event]) -> str:
    parts = _entries(added, "+")
    if edited:
        parts.append(f"{len(edited)} edited")
    return ", ".join(parts + _entries(removed, "-"))


def _describe(ch: FileChange) -> str:
    counts = _counts(ch.added, ch.edited, ch.removed)
    if ch.status == "deleted":
        return f"deleted {ch.path}" + (f" ({counts})" if counts else "")
    if not counts:
        return f"{'new file' if ch.status == 'added' else 'edited'} {ch.path}"
    return f"{counts} in {ch.path}"


def _line(ev: Event, sign: str) -> str:
    when = ev.timestamp.strftime("%Y-%m-%d %H:%M") if ev.timestamp else "undated"
    text = " ".join(ev.content.split())
    text = text if len(text) <= 60 else text[:59] + "\u2026"
    return f"{sign} {when} {ev.type}: {text}"


def commit_message(changes: list[FileChange]) -> str:
    """Subject saying what changed in entries and notes; body listing files and events."""
    if not changes:
        raise ValueError("no changes to describe")
    if len(changes) == 1:
        subject = _describe(changes[0])
    else:
        counts = _counts([e for c in changes for e in c.added], [e for c in changes for e in c.edited],
                         [e for c in changes for e in c.removed])
        subject = f"{counts or 'edits'} in {len(changes)} files"
    body: list[str] = []
    if len(changes) > 1:
        body += [_describe(c) for c in changes]
    listed = [(e, "+") for c in changes for e in c.added] + [(e, "~") for c in changes for e in c.edited]
    listed += [(e, "-") for c in changes for e in c.removed]
    if listed:
        if body:
            body.append("")
        body += [_line(e, s) for e, s in listed[:MAX_LISTED]]
        if len(listed) > MAX_LISTED:
            body.append(f"... and {len(listed) - MAX_LISTED} more")
    return f"memvault: {subject}" + ("\n\n" + "\n".join(body) if body else "")


def parse_porcelain(out: str) -> list[tuple[str, str]]:
    """(status, path) pairs from `git status --porcelain=v1 -z`; a rename gives both ends."""
    items: list[tuple[str, str]] = []
    fields = out.split("\0")
    i = 0
    while i < len(fields):
        entry = fields[i]
        i += 1
        if len(entry) < 4:
            continue
        xy, path = entry[:2], entry[3:]
        if "R" in xy or "C" in xy:
            origin = fields[i] if i < len(fields) else ""
            i += 1
            items.append(("A", path))
            if "R" in xy and origin:
                items.append(("D", origin))
            continue
        if "D" in xy:
            items.append(("D", path))
        elif xy == "??" or "A" in xy:
            items.append(("A", path))
        else:
            items.append(("M", path))
    return items


# -- git ----------------------------------------------------------------------------------

def _git(root: Path, *args: str, check: bool = True) -> GitResult:
    return run_git(args, root, check=check)


def still_uncommitted(root: Path, paths: list[str]) -> list[str] | None:
    """Which of the vault-relative `paths` still differ from HEAD (staged, changed or new);
    None when git cannot tell (no repository, no git)."""
    try:
        found = _git(root, "status", "--porcelain", "-z", "--untracked-files=all", "--no-renames", "--", *paths,
                     check=False)
    except GitError:
        return None
    if not found.ok:
        return None
    top = {item[3:] for item in found.text.split("\0") if len(item) > 3}
    prefix = repo_prefix(root)  # porcelain names paths from the repository's top
    return [p for p in paths if prefix + p in top]


def repo_prefix(root: Path) -> str:
    """The vault's folder inside its git repository ("" at the top); fails clearly when not in one."""
    found = _git(root, "rev-parse", "--show-prefix", check=False)
    if not found.ok:
        raise not_in_repository(found, "`git init` it or run watch without --commit")
    return found.text.strip()


def changed_files(root: Path, prefix: str, selection: Selection = DEFAULT) -> list[tuple[str, str]]:
    """(status, vault-relative path) of vault Markdown that differs from HEAD, ignored files excluded."""
    out = _git(root, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--", *selection.pathspecs).text
    found: dict[str, str] = {}
    for status, path in parse_porcelain(out):
        rel = path[len(prefix):] if prefix and path.startswith(prefix) else path
        if is_watched_file(rel, selection) and problem_at(root, rel) is None:  # never commit a link (layout.py)
            found[rel] = status
    return sorted((s, p) for p, s in found.items())


def _head_text(root: Path, prefix: str, rel: str) -> str:
    found = _git(root, "show", f"HEAD:{prefix}{rel}", check=False)
    return decode_text(found.raw)[0] if found.ok else ""


def describe_changes(root: Path, prefix: str, config: Config, files: list[tuple[str, str]]) -> list[FileChange]:
    out = []
    dates = FileDates(root, Selection.of(config), config.tz)
    for status, rel in files:
        day = dates.of(rel)
        old = parse_text(_head_text(root, prefix, rel), rel, config, day).events if status != "A" else []
        try:
            new = parse_text(decode_text(read_file(root, rel))[0], rel, config, day).events if status != "D" else []
        except (OSError, UnsafePath):
            new, status = [], "D"
        kind = {"A": "added", "D": "deleted"}.get(status, "modified")
        out.append(diff_events(rel, kind, old, new))
    return out


class GitLocked(GitError):
    """The commit failed on a git lock file that another git may still hold (try again later)."""


def commit_vault(root: Path, config: Config, say: Callable[[str], None] | None = None) -> CommitResult | None:
    """Commit every changed vault Markdown file (and nothing else); None when nothing changed.

    Raises GitError (with the hook's or git's own words) when the commit fails, GitLocked
    when it failed on a lock that is not stale yet; the changes stay in the working tree for
    the next attempt. A stale lock is removed (said through `say`) and the commit retried.
    """
    prefix = repo_prefix(root)
    if merging(root):  # a partial commit would fail, and the merge is the person's (sync's stop)
        return None
    files = changed_files(root, prefix, Selection.of(config))
    if not files:
        return None
    paths = [p for _, p in files]
    message = commit_message(describe_changes(root, prefix, config, files))
    try:
        return _commit(root, paths, message)
    except GitError as exc:
        locks = _clear_stale_locks(root, say or logging.getLogger("memvault").warning)
        live = [lock for lock in locks if not lock.stale]
        if live:
            why = "; ".join(f"{lock.path}: {lock.holder}" for lock in live)
            raise GitLocked(f"{exc} (git lock not removed: {why})") from None
        if not locks:
            raise
    return _commit(root, paths, message)


def _commit(root: Path, paths: list[str], message: str) -> CommitResult:
    """Stage `paths` and commit them; when the commit fails (a hook refuses it: a secret, a
    broken reference), the index of `paths` is put back as it was, so nothing the refusal was
    about stays staged for the person's next `git commit`."""
    saved = _index_entries(root, paths)
    # A path neither on disk nor in the index is a deletion already staged (`git rm`, `git mv`):
    # `git add` would fail on it ("did not match any files"), `git commit -- PATH` takes it as it is.
    prefix = repo_prefix(root)
    addable = [p for p in paths if (root / p).exists() or (root / p).is_symlink() or prefix + p in saved]
    if addable:
        _git(root, "add", "-A", "--", *addable)
    try:
        _git(root, *fallback_identity(root), "commit", "-q", "-m", message, "--", *paths)
    except GitError as exc:
        _restore_index(root, paths, saved)
        raise CommitRefused(f"{exc}; the files were unstaged again and stay changed in the working tree",
                            paths=tuple(paths)) from None
    sha = _git(root, "rev-parse", "HEAD").text.strip()
    return CommitResult(sha, message, tuple(paths))


ZERO_SHA = "0" * 40


def merging(root: Path) -> bool:
    """Whether a merge is under way in the clone (MERGE_HEAD exists)."""
    found = _git(root, "rev-parse", "--git-path", "MERGE_HEAD", check=False)
    return found.ok and (root / found.text.strip()).exists()


def _index_entries(root: Path, paths: list[str]) -> dict[str, list[str]]:
    """{top-relative path: its `mode sha stage` entries} of `paths` in the index (a path in a
    merge conflict has up to three), for `_restore_index`."""
    out = _git(root, "ls-files", "-s", "-z", "--full-name", "--", *paths).text
    entries: dict[str, list[str]] = {}
    for item in filter(None, out.split("\0")):
        info, _, name = item.partition("\t")
        entries.setdefault(name, []).append(info)
    return entries


def _restore_index(root: Path, paths: list[str], saved: dict[str, list[str]]) -> None:
    """The index entries of `paths` as `saved` holds them, every stage; one it did not hold is removed."""
    prefix = repo_prefix(root)
    lines = []
    for rel in paths:
        name = prefix + rel
        # Removing the path first (mode 0) clears every stage `git add` left, then the saved ones go back.
        lines.append(f"0 {ZERO_SHA} 0\t{name}\0")
        lines += [f"{info}\t{name}\0" for info in saved.get(name, [])]
    lines += [f"{info}\t{name}\0" for name, infos in saved.items() if name not in {prefix + p for p in paths}
              for info in infos]
    run_git(["update-index", "-z", "--index-info"], root, input="".join(lines))


class CommitRefused(GitError):
    """The commit failed (most often a hook refused it); what it staged was unstaged again."""

    def __init__(self, message: str, *, paths: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.paths = paths


def _clear_stale_locks(root: Path, say: Callable[[str], None]) -> list[gitlock.LockState]:
    """The git locks a commit needs that exist; the stale ones are removed."""
    found = _git(root, "rev-parse", "--show-toplevel", "--absolute-git-dir", "--git-common-dir", check=False)
    lines = found.text.splitlines()
    if not found.ok or len(lines) < 3:
        return []
    top, git_dir = Path(lines[0]), Path(lines[1])
    common = (root / lines[2]).resolve()
    return gitlock.remove_stale(git_dir, common, top, say)
