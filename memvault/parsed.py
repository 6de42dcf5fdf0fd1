"""The vault's files parsed: a directory of Markdown under git, and the events read from it.

`Vault.open(path)` finds the vault and reads its config; files are parsed on first use, so
commands that only write (e.g. `log`) stay fast.
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Callable, Iterable
from datetime import UTC, date, datetime
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from memvault.config.core import CONFIG_NAME, Config
from memvault.derived_db import source_fingerprint
from memvault.entries.daily import parse_log
from memvault.entries.lookup import Found, lookup
from memvault.entries.markdown import ParsedFile
from memvault.entries.memory_md import parse_memory
from memvault.entries.model import NOTE, Event, Problem
from memvault.entries.naming import log_name, name_day
from memvault.entries.timeline import Timeline
from memvault.errors import InputError, NotFoundError, UnsafePath, VaultNotFound
from memvault.forgotten import Forgotten
from memvault.forgotten import load as load_forgotten
from memvault.fsio import DERIVED_DIR, decode_text
from memvault.layout import (
    LOG_DIR,
    MEMORY_FILE,
    Selection,
    is_file,
    iter_markdown,
    open_file,
)

if TYPE_CHECKING:
    from memvault.filedates import FileDates

__all__ = ["BIG_FILE", "ENV_VAR", "ParsedVault", "by_day", "discover", "looks_like_memory", "parse_bytes",
           "parse_path", "parse_text",
           "parser_fingerprint"]

ENV_VAR = "MEMVAULT_VAULT"
BIG_FILE = 10 * 1024 * 1024



def parser_fingerprint(seed: str = "") -> str:
    """A digest of the code that turns files into events: derived state (the index, history's
    caches) made by another version of it is rebuilt rather than trusted."""
    return source_fingerprint(seed, "memvault.entries", "memvault.textsafety", "memvault.parsed")

def discover(path: str | os.PathLike[str] | None = None, cwd: Path | None = None) -> Path:
    """--vault PATH, else $MEMVAULT_VAULT, else the nearest memvault.toml above cwd, else the
    nearest folder above cwd that holds memory not yet adopted (`looks_like_memory`)."""
    given = path or os.environ.get(ENV_VAR)
    if given:
        root = Path(given).expanduser().resolve()
        if not root.is_dir():
            raise VaultNotFound(f"vault {root} does not exist or is not a directory")
        if not (root / CONFIG_NAME).is_file() and not (root / LOG_DIR).is_dir():
            raise VaultNotFound(f"{root} is not a memvault vault (no {CONFIG_NAME}); run `memvault init {root}`")
        return root
    here = (cwd or Path.cwd()).resolve()
    for candidate in (here, *here.parents):
        if (candidate / CONFIG_NAME).is_file():
            return candidate
    for candidate in (here, *here.parents):
        if looks_like_memory(candidate):
            return candidate
    raise VaultNotFound(
        f"no vault found: pass --vault PATH, set {ENV_VAR}, or run inside a vault "
        f"(a directory with {CONFIG_NAME}); `memvault init DIR` creates one, `memvault adopt DIR` "
        "takes on memory you already have"
    )


def looks_like_memory(folder: Path) -> bool:
    """Is `folder` a vault that was never adopted (no memvault.toml), found from inside it?

    Only with evidence, so that a stray `~/memory/` of other notes does not capture every
    command run below it: a real `memory/` folder holding a dated log (`2026-02-01*.md`,
    directly or one folder down: `memory/2026/`, `memory/archive/`), and beside it a
    `MEMORY.md` file or the top of a git repository (`.git`). `--vault DIR` needs less.
    """
    logs = folder / LOG_DIR
    if logs.is_symlink() or not logs.is_dir():
        return False
    if not ((folder / MEMORY_FILE).is_file() or (folder / ".git").exists()):
        return False
    return _holds_dated_log(logs, depth=1)


def _holds_dated_log(folder: Path, depth: int) -> bool:
    try:
        with os.scandir(folder) as entries:
            items = list(entries)
    except OSError:
        return False
    if any(e.name.endswith(".md") and name_day(e.name) and e.is_file(follow_symlinks=False) for e in items):
        return True
    return depth > 0 and any(
        e.is_dir(follow_symlinks=False) and not e.name.startswith(".") and _holds_dated_log(Path(e.path), depth - 1)
        for e in items
    )


def parse_text(text: str, relpath: str, config: Config, file_date: date | None = None) -> ParsedFile:
    """Parse a file's text by what it is: MEMORY.md, or a log (any other vault Markdown).

    `file_date` dates a file whose name carries no day (`FileDates.of`)."""
    if relpath == MEMORY_FILE:
        return parse_memory(text, relpath, config)
    return parse_log(text, relpath, config, file_date=file_date)


def parse_path(root: Path, relpath: str, config: Config, dates: FileDates | None = None) -> ParsedFile:
    """Read and parse one vault file (dated by `dates` when its name carries no day);
    unreadable files become problems, never exceptions."""
    try:
        with open_file(root, relpath) as fh:
            raw = fh.read()
            mtime = os.fstat(fh.fileno()).st_mtime
    except UnsafePath as exc:  # a link or not a file: never read (see layout.py)
        return ParsedFile(relpath, "log", problems=[exc.problem])
    except OSError as exc:
        return ParsedFile(relpath, "log", problems=[Problem(relpath, 1, f"cannot read file: {exc.strerror}", code="MV100")])
    day = dates.of(relpath, mtime) if dates is not None else None
    return parse_bytes(raw, relpath, config, day)[1]


def parse_bytes(raw: bytes, relpath: str, config: Config, file_date: date | None = None) -> tuple[str, ParsedFile]:
    """A file's bytes decoded (its text, LF, no BOM) and parsed; undecodable bytes are MV102
    warnings (first), a very large file MV103 (last)."""
    text, notes = decode_text(raw)
    parsed = parse_text(text, relpath, config, file_date)
    parsed.problems[:0] = [Problem(relpath, line, msg, "warning", "MV102") for line, msg in notes]
    if len(raw) > BIG_FILE:
        parsed.problems.append(Problem(
            relpath, 1, f"file is {len(raw) // 1048576} MB; daily logs this large are slow to search", "warning", "MV103"))
    return text, parsed


def new_log_path(day_iso: str, example: str | None) -> str:
    """Where a new daily log goes: beside the layout of `example`, an existing log's path."""
    year, month = day_iso[:4], day_iso[5:7]
    if example:
        parts = example.split("/")
        ex_year, ex_month = parts[-1][:4], parts[-1][5:7]
        if parts[1:-1] == [ex_year, ex_month]:
            return f"{LOG_DIR}/{year}/{month}/{day_iso}.md"
        if parts[1:-1] == [ex_year]:
            return f"{LOG_DIR}/{year}/{day_iso}.md"
    return f"{LOG_DIR}/{day_iso}.md"


def by_stem(paths: Iterable[str]) -> dict[str, list[str]]:
    """File name without `.md` -> its paths: a daily log's stem is its date."""
    out: dict[str, list[str]] = defaultdict(list)
    for path in paths:
        out[path.rsplit("/", 1)[-1][:-3]].append(path)
    return out


def by_day(paths: Iterable[str]) -> dict[str, list[str]]:
    """ISO day -> every file whose name carries that day: the day's own file, its topic
    files (`2026-01-26-topic.md`) and its archive (`archive/2026-01-26.md`)."""
    out: dict[str, list[str]] = defaultdict(list)
    for path in paths:
        day = log_name(path).day
        if day is not None:
            out[day.isoformat()].append(path)
    return out


def duplicate_dates(paths: Iterable[str]) -> list[Problem]:
    """MV006: every day's own file (`memory/[YYYY/[MM/]]YYYY-MM-DD.md`) that shares its day
    with another one. A topic file or an archive of the same day is no duplicate: it holds
    other (or older) material of that day.

    Judged from file names alone, so a partial check (which parses few files) finds the same."""
    days: dict[str, list[str]] = defaultdict(list)
    for path in paths:
        name = log_name(path)
        if name.canonical:
            days[name.key].append(path)
    out = []
    for day, group in days.items():
        for path in group if len(group) > 1 else ():
            others = ", ".join(p for p in group if p != path)
            out.append(Problem(path, 1, f"another daily log for {day}: {others}; merge them into one file", code="MV006"))
    return out


class ParsedVault:
    """A memory vault on disk: its files parsed into entries and one timeline.

    Parsed lazily; re-open to see later edits. Every subsystem works on this; the public
    `memvault.Vault` adds time travel on top. `close()` (or `with`) releases what subsystems
    opened for it (caches, git processes), registered with `on_close`.
    """

    def __init__(self, root: Path, config: Config):
        self.root = root
        self.config = config
        self._closers: list[Callable[[], object]] = []

    @classmethod
    def open(cls, path: str | os.PathLike[str] | None = None, *, cwd: Path | None = None) -> Self:
        root = discover(path, cwd)
        return cls(root, Config.load(root / CONFIG_NAME))

    # -- derived state -----------------------------------------------------------------

    @property
    def derived(self) -> Path:
        return self.root / DERIVED_DIR

    @property
    def lock_path(self) -> Path:
        return self.derived / "write.lock"

    # -- parsing -----------------------------------------------------------------------

    @cached_property
    def selection(self) -> Selection:
        """Which files are the vault's (`[vault] include`/`exclude`)."""
        return Selection.of(self.config)

    @cached_property
    def dates(self) -> FileDates:
        """The days of files whose names carry none (first commit, else mtime)."""
        from memvault.filedates import FileDates  # not at import: a warm search parses nothing

        return FileDates(self.root, self.selection, self.config.tz)

    def paths(self, skipped: list[Problem] | None = None) -> list[str]:
        """The vault files memvault reads; what the layout rule skips goes to `skipped`."""
        return list(iter_markdown(self.root, skipped, selection=self.selection))

    @cached_property
    def files(self) -> dict[str, ParsedFile]:
        self._skipped: list[Problem] = []
        return {rel: parse_path(self.root, rel, self.config, self.dates) for rel in self.paths(self._skipped)}

    @property
    def skipped(self) -> list[Problem]:
        """What the walk behind `files` did not read: links, non-files, unreadable folders."""
        _ = self.files
        return self._skipped

    @cached_property
    def timeline(self) -> Timeline:
        timeline = Timeline([e for f in self.files.values() for e in f.events], self.config)
        if self.forgotten:
            timeline.forgotten = self.forgotten
        return timeline

    @cached_property
    def forgotten(self) -> Forgotten:
        """What `memvault maintain` forgot (`.memvault/forgotten.sqlite`), as this vault's timeline
        asks it: relearning is judged on the whole vault (memvault/forgotten.py)."""
        return Forgotten(load_forgotten(self.root), lambda event, since: self.timeline.presented(event, since))

    @property
    def events(self) -> list[Event]:
        return self.timeline.events

    @property
    def problems(self) -> list[Problem]:
        found = [p for f in self.files.values() for p in f.problems] + self.skipped
        found += duplicate_dates(self.files)
        found += self.timeline.problems
        return sorted(found, key=lambda p: (p.path, p.line))

    def log_path_for(self, day_iso: str) -> Path:
        """The day's own file if it exists, else a new one laid out like the latest day's own
        file: `memory/DATE.md`, `memory/YYYY/DATE.md` or `memory/YYYY/MM/DATE.md`. Topic
        files and archives of the day are never written to.

        The day's own file can only be one of those three places (always selected), so they are
        looked at first, in the walk's order (a duplicate, MV006, answers as the walk did); the
        walk over every file (~30 ms on 5,000 files) is left for a day's first entry."""
        year, month = day_iso[:4], day_iso[5:7]
        for rel in sorted((f"{LOG_DIR}/{day_iso}.md", f"{LOG_DIR}/{year}/{day_iso}.md",
                           f"{LOG_DIR}/{year}/{month}/{day_iso}.md")):
            if log_name(rel).canonical and is_file(self.root, rel):
                return self.root / rel
        latest: tuple[str, str] | None = None
        for rel in sorted(self.paths()):
            name = log_name(rel)
            if not name.canonical:
                continue
            if name.key == day_iso:
                return self.root / rel
            if latest is None or name.key > latest[0]:
                latest = (name.key, rel)
        return self.root / new_log_path(day_iso, latest[1] if latest else None)

    # -- queries -----------------------------------------------------------------------

    def get(self, event_id: str) -> Event:
        tl = self.timeline
        if event_id in tl.by_id:
            return tl.by_id[event_id]
        res = tl.index.resolve(event_id)
        if res.target is not None:  # `res.ok`, spelled so that the type narrows
            return tl.by_id[res.target]
        hint = f"; did you mean {', '.join(res.candidates[:5])}?" if res.candidates else ""
        raise NotFoundError(f"no entry with id {event_id!r}{hint}")

    def find(self, spec: str) -> Event:
        """The event `spec` names as memvault prints it: an id, a place (`memory/2026-02-01.md#L12-L14`,
        `memory/2026-02-01.md:12`), the one id it starts (`2026-03-22#lofi`), or a reference;
        `NotFoundError` lists the ids when it starts several (`memvault.entries.lookup`)."""
        return self.locate(spec).event

    def locate(self, spec: str) -> Found:
        """What `find` finds, with how `spec` named it and why (`memvault.entries.lookup.Found`)."""
        return lookup(self.timeline, spec, self.files.keys(), self.root.as_posix())

    def check_types(self, types: Iterable[str], what: str = "--type ") -> None:
        """Refuse a type no entry can have: `--type beliefs` once listed nothing, silently.

        Known types are the configured ones, `note`, plus any an entry uses (a `## 10:00 - Feeling`
        entry is kept though unconfigured, so it can be asked for). The entries are read
        only when a type is not configured: search answers from its index without them.
        `what` names where the type was given (`--type `, or `type:` in a search query).
        """
        given = list(types)
        configured = set(self.config.types) | {NOTE}
        if all(t.lower() in configured for t in given):
            return
        known = configured | {e.type for e in self.events}
        unknown = [t for t in given if t.lower() not in known]
        if unknown:
            raise InputError(f"{what}{unknown[0]!r}: no such type; known: {', '.join(sorted(known))}")

    def entries(
        self,
        *,
        types: tuple[str, ...] = (),
        since: datetime | None = None,
        until: datetime | None = None,
        tags: tuple[str, ...] = (),
        include_all: bool = False,
        at: datetime | None = None,
        limit: int | None = None,
    ) -> list[Event]:
        """Entries filtered by type, time window and tag; live ones (as of `at`, default now)
        unless `include_all`; the newest `limit` of them, when given (still oldest first). An
        unknown type is an `InputError` (`check_types`)."""
        self.check_types(types)
        when = at or self.now()
        tl = self.timeline
        wanted_types = {t.lower() for t in types}
        wanted_tags = {t.lower().lstrip("#") for t in tags}
        out = []
        for ev in tl.events:
            if wanted_types and ev.type not in wanted_types:
                continue
            if wanted_tags and not wanted_tags & set(ev.tags):
                continue
            if since is not None and (ev.timestamp is None or ev.timestamp < since):
                continue
            if until is not None and (ev.timestamp is None or ev.timestamp > until):
                continue
            if not include_all and tl.status(ev, when) != "live":
                continue
            out.append(ev)
        return out[-limit:] if limit else out

    def as_dict(self, event: Event, at: datetime | None = None) -> dict[str, Any]:
        """The entry's JSON shape as of `at` (default now: a future-dated entry is `future`)."""
        return self.timeline.to_dict(event, at or self.now())

    def now(self) -> datetime:
        return datetime.now(UTC).astimezone(self.config.tz)

    # -- resources ---------------------------------------------------------------------

    def on_close(self, closer: Callable[[], object]) -> None:
        """Have `close()` call `closer` (last registered, first closed)."""
        self._closers.append(closer)

    def close(self) -> None:
        while self._closers:
            self._closers.pop()()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
