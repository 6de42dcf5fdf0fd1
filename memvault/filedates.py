"""The day of a vault file whose name carries none: its first commit's, else its mtime's.

A daily log's name says its day (`entries.naming`); `memory/projects/ideen.md`, `AGENTS.md`
or `memory/archive/notes.md` do not. Such a file is dated, in this order, by its front
matter's `date:` (the parser reads that), by the day its path first entered git history
(author date, in the vault's zone; a rename carries the date along), and by its mtime when
git has never seen it. `docs/format.md` ("File names") is the normative description.

One `git log` answers for every file at once, and its answer is kept in
`.memvault/filedates.json` under HEAD's id, so a command that parses undated files runs
one `git rev-parse` while HEAD stays put. Nothing runs git for a vault whose files all
carry their date: the dates are asked for only when such a file is parsed.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import time
from datetime import date, datetime, tzinfo
from pathlib import Path

from memvault.entries.naming import log_name
from memvault.errors import GitError
from memvault.fsio import DERIVED_DIR, atomic_write
from memvault.layout import MEMORY_FILE, Selection

CACHE_NAME = "filedates.json"
CACHE_VERSION = 1
REFRESH_SECONDS = 2.0


# A name that starts like a date but is none (`2026-02-30.md`, other digits than 0-9) meant
# one: it is an error (MV001), not a file to date by its commit.
BAD_DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}")


def needs_date(rel: str) -> bool:
    """True for a file whose name carries no day (MEMORY.md needs none: it is curated)."""
    return rel != MEMORY_FILE and log_name(rel).day is None


def meant_a_date(rel: str) -> bool:
    """True for a name that starts like a date that is not a real one (see BAD_DATE_RE)."""
    return log_name(rel).day is None and BAD_DATE_RE.match(rel.rsplit("/", 1)[-1]) is not None


def parse_first_adds(out: str) -> dict[str, int]:
    """path -> the earliest author time (epoch seconds) it was added at, from the output of
    `git log -z --format=%x01%at --name-status -M --diff-filter=AR`; a renamed file keeps
    the time of the path it came from."""
    commits: list[tuple[int, list[str]]] = []
    for chunk in out.split("\x01")[1:]:
        head, _, rest = chunk.partition("\0")
        if head.strip().isdigit():
            commits.append((int(head.strip()), rest.lstrip("\n").split("\0")))
    first: dict[str, int] = {}
    for when, fields in reversed(commits):  # oldest first, so a rename finds its source's time
        i = 0
        while i + 1 < len(fields):
            status = fields[i].strip()
            if status[:1] in ("R", "C") and i + 2 < len(fields):
                old, new = fields[i + 1], fields[i + 2]
                i += 3
                _earliest(first, new, first.get(old, when) if status[:1] == "R" else when)
            else:
                if status[:1] == "A":
                    _earliest(first, fields[i + 1], when)
                i += 2
    return first


def _earliest(first: dict[str, int], path: str, when: int) -> None:
    if path and (path not in first or when < first[path]):
        first[path] = when


class FileDates:
    """The day to give each undated file of one vault (see the module's docstring)."""

    def __init__(self, root: Path, selection: Selection, tz: tzinfo):
        self.root, self.selection, self.tz = Path(root), selection, tz
        self._first: dict[str, int] | None = None
        self._at = ""  # the HEAD `_first` was read at
        self._checked = 0.0  # when HEAD was last asked for (time.monotonic)
        self.git_calls = 0  # for tests and benches: how often git was asked

    def of(self, rel: str, mtime: float | None = None) -> date | None:
        """The date to parse `rel` with: None for MEMORY.md and the days' own files (their
        name says it all), the name's date for other dated names (`2026-01-26-topic.md`,
        `archive/2026-01-15.md`), else the first commit's day, else the day of `mtime`
        (default: the file's own), else None when the file is gone. A name that starts
        like an impossible date (`2026-02-30.md`) gets None too: it is an error (MV001)."""
        name = log_name(rel)
        if rel == MEMORY_FILE or name.canonical:
            return None
        if name.day is not None:
            return name.day
        if meant_a_date(rel):
            return None
        when: float | None = self.first_commits().get(rel)
        if when is None:
            when = mtime if mtime is not None else self._mtime(rel)
        return None if when is None else datetime.fromtimestamp(when, self.tz).date()

    def _mtime(self, rel: str) -> float | None:
        try:
            return os.lstat(self.root / rel).st_mtime
        except OSError:
            return None

    def first_commits(self) -> dict[str, int]:
        """Undated path -> author time of the commit that first added it. Read once per HEAD:
        a long-lived process (the watcher) asks git for HEAD again after REFRESH_SECONDS."""
        now = time.monotonic()
        if self._first is None or now - self._checked > REFRESH_SECONDS:
            self._checked = now
            head = self._head()
            if self._first is None or head != self._at:
                self._first, self._at = self._load(head), head
        return self._first

    def _head(self) -> str:
        """HEAD's commit id, "" outside a repository or before the first commit."""
        from memvault.gitio import (
            run_git,  # not at import: a warm search never needs git (or subprocess)
        )

        try:
            found = run_git(["rev-parse", "-q", "--verify", "HEAD^{commit}"], self.root, check=False)
        except GitError:  # git is not installed
            return ""
        self.git_calls += 1
        return found.text.strip() if found.ok else ""

    def _load(self, head: str) -> dict[str, int]:
        if not head:
            return {}
        key = {"version": CACHE_VERSION, "head": head, "specs": list(self.selection.pathspecs)}
        cache = self.root / DERIVED_DIR / CACHE_NAME
        with contextlib.suppress(OSError, ValueError, TypeError):
            stored = json.loads(cache.read_text(encoding="utf-8"))
            if isinstance(stored, dict) and all(stored.get(k) == v for k, v in key.items()):
                dates = stored.get("dates")
                if isinstance(dates, dict):
                    return {str(p): int(t) for p, t in dates.items()}
        dates = self._from_git()
        with contextlib.suppress(OSError):
            if not (self.root / DERIVED_DIR).exists():
                (self.root / DERIVED_DIR).mkdir()
            if (self.root / DERIVED_DIR).is_dir():
                atomic_write(cache, json.dumps({**key, "dates": dates}, sort_keys=True))
        return dates

    def _from_git(self) -> dict[str, int]:
        """One `git log` over the selected files' history."""
        from memvault.gitio import run_git

        try:
            found = run_git(["log", "-z", "--root", "-M", "--diff-filter=AR", "--relative", "--format=%x01%at",
                             "--name-status", "HEAD", "--", *self.selection.pathspecs], self.root, check=False)
        except GitError:
            return {}
        self.git_calls += 1
        if not found.ok:
            return {}
        return {p: t for p, t in parse_first_adds(found.text).items() if needs_date(p)}
