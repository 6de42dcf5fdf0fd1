"""The vault's git history, read through memvault.gitio (plain `git` commands).

What time travel needs from git is small: the first-parent commit list with committer dates
(one `git log`, binary-searched), the vault's Markdown blobs at a commit (`git ls-tree`), the
blobs' bytes (one long-lived `git cat-file --batch`), and the commits that touched some files.
Everything here reads; the one write is `maybe_pack`, which packs loose objects when that pays.
"""

from __future__ import annotations

import bisect
import contextlib
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from memvault.errors import GitError
from memvault.gitio import GitProcess, run_git
from memvault.layout import DEFAULT, Selection

# Loose objects above which reading history packs them first (`[history] pack_loose`).
PACK_LOOSE_DEFAULT = 1000
NO_GIT = (
    "recorded-time queries need git history, and {root} is not in a git repository "
    "(event-time queries work without git: drop --recorded)"
)


@dataclass(frozen=True, slots=True)
class Commit:
    sha: str
    time: int  # committer date, seconds since the epoch (UTC)

    @property
    def date(self) -> datetime:
        return datetime.fromtimestamp(self.time, UTC)


class CommitList:
    """The first-parent chain from HEAD, oldest first, searchable by committer date.

    Committer dates along a chain are usually increasing but need not be (clock skew,
    rebases). "The last commit whose date is <= T" is found through the suffix minima of
    the dates, which never decrease, so the binary search stays exact either way.
    """

    def __init__(self, commits: list[Commit], *, shallow: bool = False):
        self.commits = commits
        self.shallow = shallow
        self.index = {c.sha: i for i, c in enumerate(commits)}
        mins: list[int] = []
        low = None
        for c in reversed(commits):
            low = c.time if low is None else min(low, c.time)
            mins.append(low)
        self._suffix_min = mins[::-1]

    def __len__(self) -> int:
        return len(self.commits)

    def at(self, when: datetime) -> Commit | None:
        """The last commit (first-parent order) with committer date <= `when`, or None."""
        stamp = when.timestamp()
        # largest i with suffix_min[i] <= stamp; suffix_min is non-decreasing
        i = bisect.bisect_right(self._suffix_min, stamp) - 1
        return self.commits[i] if i >= 0 else None

    def position(self, sha: str) -> int | None:
        return self.index.get(sha)


class BlobReader:
    """One `git cat-file --batch` process, reused for every blob a session reads."""

    def __init__(self, cwd: Path):
        self.cwd = cwd
        self.proc: GitProcess | None = None

    def _start(self) -> GitProcess:
        if self.proc is None or not self.proc.alive():
            self.close()
            self.proc = GitProcess(["cat-file", "--batch"], self.cwd)
        return self.proc

    def read(self, shas: Iterable[str]) -> dict[str, bytes]:
        wanted = list(dict.fromkeys(shas))
        if not wanted:
            return {}
        proc = self._start()
        stdin, stdout = proc.stdin, proc.stdout
        request = "".join(f"{s}\n" for s in wanted).encode()

        # Write from a thread: git answers while we write, and both pipes are bounded.
        def feed() -> None:
            with contextlib.suppress(BrokenPipeError):
                stdin.write(request)
                stdin.flush()

        writer = threading.Thread(target=feed, daemon=True)
        writer.start()
        out: dict[str, bytes] = {}
        for sha in wanted:
            header = stdout.readline().split()
            if len(header) == 2 and header[1] == b"missing":
                continue
            if len(header) != 3:
                error = proc.stopped() if not header else GitError(
                    f"git cat-file gave an unexpected answer for {sha}: {header!r}")
                self.close()
                raise error
            size = int(header[2])
            data = stdout.read(size + 1)
            out[sha] = data[:size]
        writer.join()
        return out

    def close(self) -> None:
        if self.proc is not None:
            self.proc.close()
            self.proc = None


class GitRepo:
    """The git repository holding a vault (the vault may be a subdirectory of it)."""

    def __init__(self, root: Path, toplevel: Path, prefix: str, shallow: bool, selection: Selection = DEFAULT):
        self.root = root
        self.toplevel = toplevel
        self.prefix = prefix  # the vault's path inside the repository, "" or "sub/dir/"
        self.shallow = shallow
        self.selection = selection  # which files are the vault's ([vault] include/exclude)
        self._commits: CommitList | None = None
        self._blobs = BlobReader(root)

    @classmethod
    def find(cls, root: Path, selection: Selection = DEFAULT) -> GitRepo | None:
        """The repository `root` is in, or None when it is in none (or git is missing)."""
        try:
            found = run_git(["rev-parse", "--show-toplevel", "--show-prefix", "--is-shallow-repository"],
                            root, check=False)
        except GitError:
            return None
        if not found.ok:
            return None
        lines = found.text.split("\n")
        if len(lines) < 3:
            return None
        return cls(Path(root), Path(lines[0]), lines[1], lines[2].strip() == "true", selection)

    @classmethod
    def require(cls, root: Path, selection: Selection = DEFAULT) -> GitRepo:
        repo = cls.find(root, selection)
        if repo is None:
            raise GitError(NO_GIT.format(root=root))
        return repo

    def run(self, *args: str, check: bool = True) -> str:
        return run_git(args, self.root, check=check).text

    def close(self) -> None:
        self._blobs.close()

    # -- commits ------------------------------------------------------------------------

    def head(self) -> str | None:
        out = self.run("rev-parse", "--verify", "-q", "HEAD^{commit}", check=False).strip()
        return out or None

    def commits(self) -> CommitList:
        """The first-parent chain from HEAD (one `git log`), oldest first; read once."""
        if self._commits is None:
            commits: list[Commit] = []
            if self.head() is not None:
                out = self.run("log", "--first-parent", "--format=%H %ct", "HEAD")
                for line in out.split("\n"):
                    sha, _, stamp = line.partition(" ")
                    if stamp:
                        commits.append(Commit(sha, int(stamp)))
                commits.reverse()
            self._commits = CommitList(commits, shallow=self.shallow)
        return self._commits

    def resolve(self, rev: str) -> Commit | None:
        """A revision (`HEAD~3`, a sha, a tag) as a commit, or None if git does not know it."""
        if not rev or rev.startswith("-"):
            return None
        out = self.run("rev-parse", "--verify", "-q", "--end-of-options", f"{rev}^{{commit}}", check=False).strip()
        if not out:
            return None
        stamp = self.run("show", "-s", "--format=%ct", out).strip()
        return Commit(out, int(stamp))

    # -- trees and blobs -------------------------------------------------------------------

    def tree(self, commit: str) -> dict[str, str]:
        """Vault-relative path -> blob id of the vault's Markdown at `commit`."""
        out = self.run("ls-tree", "-r", "-z", commit, "--", *self.selection.pathspecs)
        files: dict[str, str] = {}
        for record in out.split("\0"):
            meta, _, path = record.partition("\t")
            parts = meta.split()
            # regular files only: symlinks and submodules are not notes
            regular = len(parts) == 3 and parts[1] == "blob" and parts[0] in ("100644", "100755")
            if regular and self.selection.selects(path):
                files[path] = parts[2]
        return files

    def blobs(self, shas: Iterable[str]) -> dict[str, bytes]:
        return self._blobs.read(shas)

    def file_log(self, pathspecs: list[str]) -> list[tuple[Commit, dict[str, str | None]]]:
        """First-parent commits touching `pathspecs`, oldest first, with each path's new blob
        (None when deleted). Merges are compared with their first parent."""
        if self.head() is None or not pathspecs:
            return []
        out = self.run(
            "log", "--first-parent", "-m", "--root", "--no-renames", "--raw", "-z", "--no-abbrev",
            "--format=%x01%H %ct", "HEAD", "--", *pathspecs,
        )
        result: list[tuple[Commit, dict[str, str | None]]] = []
        for chunk in out.split("\x01")[1:]:
            head, _, rest = chunk.partition("\0")  # with -z the header ends in NUL
            sha, _, stamp = head.strip().partition(" ")
            changes: dict[str, str | None] = {}
            fields = rest.strip("\n\0").split("\0")
            i = 0
            while i + 1 < len(fields):
                meta, path = fields[i].lstrip("\n"), fields[i + 1]
                i += 2
                parts = meta.split()
                if len(parts) < 5:
                    continue
                new_mode, new_blob, status = parts[1], parts[3], parts[4]
                gone = status.startswith("D") or new_mode not in ("100644", "100755")
                changes[self._relative(path)] = None if gone else new_blob
            result.append((Commit(sha, int(stamp)), changes))
        result.reverse()
        return result

    def _relative(self, path: str) -> str:
        return path[len(self.prefix):] if self.prefix and path.startswith(self.prefix) else path

    # -- loose objects ---------------------------------------------------------------------

    def loose_objects(self) -> int:
        out = self.run("count-objects", "-v", check=False)
        for line in out.split("\n"):
            key, _, value = line.partition(":")
            if key == "count":
                return int(value.strip() or 0)
        return 0

    def maybe_pack(self, threshold: int) -> bool:
        """Pack loose objects into one pack when there are more than `threshold` of them.

        Auto-commit vaults collect thousands of loose objects below git's own `gc.auto`
        limit (6700), and every history read then opens and inflates files one by one.
        `git repack -d` (incremental: only the loose objects) is what `git gc --auto`
        would do first; it is safe beside other git processes.
        """
        if threshold <= 0 or self.loose_objects() <= threshold:
            return False
        return run_git(["repack", "-d", "-q"], self.root, check=False).ok
