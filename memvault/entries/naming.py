"""What a daily log's path says: its day, whether it is the day's own file, its id key.

Real vaults name their logs more ways than `memory/YYYY-MM-DD.md`: a topic after the date
(`memory/2026-01-26-fologram-research.md`), year and month folders (`memory/2026/01/…`), an
archive of compacted days (`memory/archive/2026-01-15.md`), and other notes with no date in
the name at all. This module is the one reading of such paths; `docs/format.md` ("File
names") is its normative description.

- The **day's own file** (`canonical`) is `YYYY-MM-DD.md` directly in `memory/`, or in
  `memory/YYYY/` or `memory/YYYY/MM/` folders that agree with the date. `memvault log`
  writes there, and its entries' ids are the plain `YYYY-MM-DDTHH:MM` of the format.
- Every other file under `memory/` (and any other included Markdown) is read too. Its
  **key**, the prefix of the ids of what it holds, is its path under `memory/` without
  `.md` (`2026-01-26-fologram-research`, `archive/2026-01-15`, `projects/ideas`); a file outside
  `memory/` (`AGENTS.md`, MEMORY.md's prose) by its whole path. So its ids never collide with
  another file's and never change when other files come or go.
- Its **day** is the date its name starts with, or None: such a file is dated by its
  front matter, else by its first commit (see `memvault.layout`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from functools import lru_cache

from memvault.entries.timeparse import day_in_range

LOG_DIR = "memory"
ARCHIVE_DIR = "archive"
# Dates in file names are ASCII digits (\d would take ١٥ or １５ too: docs/format.md).
_TEXT_DAY_RE = re.compile(r"^([0-9]{4})-([0-9]{2})-([0-9]{2})(?![0-9])")
_DAY_NAME_RE = re.compile(r"^([0-9]{4})-([0-9]{2})-([0-9]{2})(?P<topic>[-_ .].*)?\.md$")


@dataclass(frozen=True, slots=True)
class LogName:
    """The reading of one daily-log path (vault-relative, `/`-separated)."""

    path: str
    day: date | None
    key: str
    canonical: bool
    archive: bool

    @property
    def topic(self) -> bool:
        """True for a dated file that is not the day's own file (a topic file, an archive)."""
        return self.day is not None and not self.canonical


def real_day(year: str | int, month: str | int, day: str | int) -> date | None:
    """The date these parts name, if it is a real one in the format's range (else None)."""
    try:
        found = date(int(year), int(month), int(day))
    except ValueError:
        return None
    return found if day_in_range(found) else None


def name_day(name: str) -> date | None:
    """The real date (in range) a file name starts with: `2026-02-05.md`, `2026-02-05-topic.md`."""
    m = _DAY_NAME_RE.match(name)
    return real_day(m[1], m[2], m[3]) if m else None


def text_day(text: str) -> date | None:
    """The real date (in range) a text starts with: `2026-02-01 - Config & Setup Session`."""
    m = _TEXT_DAY_RE.match(text)
    return real_day(m[1], m[2], m[3]) if m else None


@lru_cache(maxsize=1 << 17)  # a partial check groups the same 100k paths by day up to three times
def log_name(path: str) -> LogName:
    """How the file at the vault-relative `path` is dated and keyed."""
    parts = path.split("/")
    under = parts[1:] if len(parts) > 1 and parts[0] == LOG_DIR else parts
    name = under[-1]
    day = name_day(name)
    folders = under[:-1]
    archive = ARCHIVE_DIR in folders
    canonical = (
        day is not None and _DAY_NAME_RE.match(name)["topic"] is None  # type: ignore[index]
        and len(parts) > 1 and parts[0] == LOG_DIR and _date_folders(folders, day)
    )
    # Outside memory/ the whole path, `.md` kept, is the key: `MEMORY.md` and `AGENTS.md` never
    # share one with `memory/MEMORY.md` or `memory/AGENTS.md` (keyed `MEMORY`, `AGENTS`).
    rest = "/".join(under).removesuffix(".md") if under is not parts else path
    key = day.isoformat() if canonical and day is not None else rest
    return LogName(path=path, day=day, key=key, canonical=canonical, archive=archive)


def _date_folders(folders: list[str], day: date) -> bool:
    """True for no folders, `YYYY` or `YYYY/MM` agreeing with `day`: the day's own places."""
    expected = [f"{day.year:04d}", f"{day.month:02d}"]
    return folders == expected[: len(folders)] and len(folders) <= 2
