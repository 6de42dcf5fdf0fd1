"""An entry's revisions in git: the first-parent commits where its text changed."""

from __future__ import annotations

import re
from datetime import tzinfo
from typing import Any

from memvault.entries.render import iso
from memvault.history.gitrepo import Commit, GitRepo
from memvault.history.snapshot import SnapshotLoader, entry_text

DATED_ID_RE = re.compile(r"^(\d{4}-\d{2}-\d{2})T\d{2}:\d{2}(?:-\d+)?$")  # a day's log's own id


def revisions(repo: GitRepo, loader: SnapshotLoader, event_id: str, file: str, tz: tzinfo,
              *, explicit: bool = False) -> list[dict[str, Any]]:
    """Commits (first parent, oldest first) where the entry's text changed, plus the
    working tree when it differs from the last commit. An entry with an `Id:` line (`explicit`)
    is followed into any file that ever held its id (moved to another day's log, to a topic
    file); one whose id comes from its day and time is another entry in another day's log."""
    state: dict[str, str] = {}
    out: list[dict[str, Any]] = []
    previous: tuple[str, str, int] | None = None  # (file, text, line)
    specs = _pathspecs(file) + ([f for f in held_id(repo, event_id) if f != file] if explicit else [])
    for commit, touched in repo.file_log(specs):
        for path, blob in touched.items():
            if blob is None:
                state.pop(path, None)
            else:
                state[path] = blob
        current = _find(event_id, loader.versions(state), loader.text)
        _note_change(out, previous, current, commit, tz)
        previous = current
    on_disk = loader.worktree_files(sorted(set(state) | {file}))
    current = _find(event_id, on_disk, loader.text)
    _note_change(out, previous, current, None, tz)
    return out


def _pathspecs(file: str) -> list[str]:
    """The entry's file and any daily log of the same date elsewhere (files get moved)."""
    name = file.rsplit("/", 1)[-1]
    if file == "MEMORY.md" or not file.startswith("memory/"):
        return [file]
    return [file, f":(glob)memory/**/{name}"]


def _find(event_id: str, versions: dict[str, Any], text_of: Any) -> tuple[str, str, int] | None:
    """(file, entry text, line) of the first entry with `event_id` among file versions."""
    for path in sorted(versions):
        for ev in versions[path].events:
            if ev.id == event_id:
                return path, entry_text(text_of(versions[path]), ev), ev.line
    return None


def _note_change(out: list[dict[str, Any]], before: tuple[str, str, int] | None, after: tuple[str, str, int] | None,
                 commit: Commit | None, tz: tzinfo) -> None:
    if (before and before[:2]) == (after and after[:2]):  # a line number alone moving is no change
        return
    out.append({
        "commit": commit.sha if commit else None,
        "date": iso(commit.date.astimezone(tz)) if commit else None,
        "change": change_kind(before, after) + ("" if commit else " (uncommitted)"),
        "file": (after or before)[0],  # type: ignore[index]
        "line": (after or before)[2],  # type: ignore[index]
        # Where it was before this commit: a move names both places (`history` says "moved from A to B").
        "old_file": before[0] if before else None,
        "old_line": before[2] if before else None,
        "old": before[1] if before else None,
        "new": after[1] if after else None,
    })


def change_kind(before: tuple[str, str, int] | None, after: tuple[str, str, int] | None) -> str:
    """added, deleted, moved (same text, another file) or edited (the text changed, wherever)."""
    if before is None:
        return "added"
    if after is None:
        return "deleted"
    return "moved" if before[1] == after[1] else "edited"


def files_for_id(repo: GitRepo, event_id: str) -> list[str]:
    """Where a deleted entry may have lived: its date's log, else files whose text had the id."""
    m = DATED_ID_RE.match(event_id)
    if m:
        return [f"memory/{m[1]}.md"]
    return held_id(repo, event_id)


def held_id(repo: GitRepo, event_id: str) -> list[str]:
    """The vault's files whose text ever held `event_id` (git's pickaxe), most recent first."""
    out = repo.run("log", "--first-parent", "-m", "--format=", "--name-only", f"-S{event_id}", "HEAD", "--",
                   *repo.selection.pathspecs, check=False)
    names = [repo._relative(n) for n in out.split("\n") if n.strip()]
    return [n for n in dict.fromkeys(names) if repo.selection.selects(n)]
