"""The recent merges of a repository and the files each one changed, as blob pairs.

What `check` needs to see whether a merge moved an id (check/merge_ids.py): the merge commits
among the last `window` commits of HEAD's history (one `git log`), and for each, every
file it changed relative to one of its parents with the parent's blob and the merge's (one
`git diff-tree --stdin -m`, which names both blobs, so no tree is listed). Paths are relative
to `cwd` (`--relative`): the vault may be a folder of a larger repository.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from memvault.gitio.run import run_git


@dataclass(frozen=True, slots=True)
class Merge:
    sha: str
    time: int  # committer date, seconds since the epoch (UTC)


@dataclass(frozen=True, slots=True)
class Change:
    """One file a merge changed relative to one of its parents: the parent's blob, the merge's."""

    merge: str
    path: str
    before: str
    after: str


def recent_merges(cwd: Path, window: int) -> list[Merge]:
    """The merge commits among the last `window` commits of HEAD's history, newest first;
    [] outside a repository or before the first commit.

    All parents, not only the first: after a plain `git pull` the first parent is the local
    commit, and the merge another machine made and pushed before sits on the second parent's
    side, where this clone must see it too."""
    found = run_git(["log", f"-n{window}", "--format=%H %ct %P", "HEAD", "--"], cwd, check=False)
    if not found.ok:
        return []
    return parse_log(found.text)


def parse_log(text: str) -> list[Merge]:
    """`%H %ct %P` lines -> the commits with two parents or more."""
    out = []
    for line in text.split("\n"):
        parts = line.split()
        if len(parts) >= 4:
            out.append(Merge(parts[0], int(parts[1])))
    return out


def merge_changes(cwd: Path, merges: Sequence[str], pathspecs: Sequence[str]) -> list[Change]:
    """The files under `pathspecs` each merge changed relative to each of its parents, both
    sides present (an added or deleted file moves no id)."""
    if not merges:
        return []
    out = run_git(["diff-tree", "--stdin", "-m", "-r", "-z", "--raw", "--no-renames", "--relative",
                   "--", *pathspecs], cwd, input="".join(f"{m}\n" for m in merges)).text
    return parse_diff_tree(out)


def parse_diff_tree(out: str) -> list[Change]:
    """`git diff-tree --stdin -m -r -z --raw` output: a commit's id, then `:meta\\0path\\0` rows
    (once per parent that differs)."""
    fields = out.split("\0")
    changes: list[Change] = []
    commit = ""
    i = 0
    while i < len(fields):
        field = fields[i].strip("\n")
        if field.startswith(":") and i + 1 < len(fields):
            meta = field[1:].split()
            if len(meta) >= 5 and meta[4] == "M":  # modified: both blobs there
                changes.append(Change(commit, fields[i + 1], meta[2], meta[3]))
            i += 2
            continue
        if field:
            commit = field
        i += 1
    return changes
