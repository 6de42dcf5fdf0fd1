"""The vault as it was at a commit: its Markdown files, parsed, cached by git blob id.

A file's events depend only on its bytes, its path and the parser settings, so a parsed file
is cached under (path, blob id) — in memory for the session and on disk in
`.memvault/history.sqlite` for later ones. Daily logs are append-mostly: most blobs of an
old commit are blobs of a newer one too, so moving through history reads and parses only
the files that changed. The cache is derived: deleting it costs a re-parse, nothing else.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime, tzinfo
from functools import cached_property
from pathlib import Path
from typing import Any

from memvault import derived_db
from memvault.config.core import Config
from memvault.entries.model import Event
from memvault.entries.spans import live_interval
from memvault.entries.timeline import Timeline
from memvault.filedates import FileDates
from memvault.fsio import DERIVED_DIR, decode_text
from memvault.history.gitrepo import Commit, GitRepo
from memvault.history.timelines import NEVER_LIVE, StateTimeline, VersionInfos, VersionTable
from memvault.layout import Selection
from memvault.parsed import parser_fingerprint
from memvault.sqlutil import in_chunks

CACHE_FILE = "history.sqlite"
SCHEMA = 4  # 2: live intervals stored beside the events; 3: a note's heading path; 4: Forgotten:
# Event fields stored per cached event, in this order.
FIELDS = (
    "id", "type", "timestamp", "content", "file", "line", "end_line", "kind", "title", "heading",
    "confidence0", "tags", "links", "block_ids", "source", "importance", "expires", "scope",
    "supersedes", "reconfirms", "explicit_id", "category", "updated", "previous", "sources", "meta", "path",
    "forgotten",
)  # fmt: skip
TIME_FIELDS = {"timestamp", "expires", "updated", "forgotten"}
TUPLE_FIELDS = {"tags", "links", "block_ids", "reconfirms", "sources", "path"}


def blob_id(data: bytes) -> str:
    """The id git gives these bytes as a blob."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def fingerprint(config: Config) -> str:
    """What parsed events depend on besides the bytes: parser code and settings (the files
    read among them: the stored live table covers exactly those)."""
    chosen = Selection.of(config)
    settings = json.dumps([config.timezone, list(config.types), config.memory_sections,
                           list(chosen.include), list(chosen.exclude)], sort_keys=True)
    return parser_fingerprint(f"{SCHEMA} {settings}")


def parse_bytes(data: bytes, path: str, config: Config, file_date: date | None = None) -> list[Event]:
    from memvault.parsed import parse_text

    text, _ = decode_text(data)
    return parse_text(text, path, config, file_date).events


def entry_text(text: str, event: Event) -> str:
    """The entry's lines as written (heading, body, metadata), trailing spaces dropped."""
    lines = text.split("\n")[event.line - 1 : event.end_line]
    return "\n".join(line.rstrip() for line in lines).strip("\n")


# -- (de)serialising events for the disk cache ------------------------------------------


def _time_out(value: datetime | None, tz: tzinfo) -> str | None:
    if value is None:
        return None
    if value.tzinfo is tz:  # the vault's zone: keep wall time, exactly as the parser builds it
        return "L" + value.replace(tzinfo=None).isoformat()
    return value.isoformat()


def _time_in(value: str | None, tz: tzinfo) -> datetime | None:
    if value is None:
        return None
    if value[0] == "L":
        return datetime.fromisoformat(value[1:]).replace(tzinfo=tz)
    return datetime.fromisoformat(value)


def dump_events(events: list[Event], tz: tzinfo) -> str:
    rows = []
    for ev in events:
        row: list[Any] = []
        for name in FIELDS:
            value = getattr(ev, name)
            row.append(_time_out(value, tz) if name in TIME_FIELDS else value)
        rows.append(row)
    return json.dumps(rows, ensure_ascii=False, separators=(",", ":"))


_TIME_AT = [FIELDS.index(n) for n in sorted(TIME_FIELDS)]
_TUPLE_AT = [FIELDS.index(n) for n in sorted(TUPLE_FIELDS)]


def load_events(data: str, tz: tzinfo) -> list[Event]:
    out = []
    for row in json.loads(data):
        for i in _TIME_AT:
            if row[i] is not None:
                row[i] = _time_in(row[i], tz)
        for i in _TUPLE_AT:
            row[i] = tuple(row[i])
        out.append(Event(*row))  # FIELDS is Event's field order (checked by a test)
    return out


def dump_spans(spans: list[tuple[float, float]]) -> str:
    """JSON has no infinity: None stands for it (and [] for never live)."""
    out: list[Any] = []
    for start, end in spans:
        if start > end:
            out.append([])
        else:
            out.append([None if start == -math.inf else start, None if end == math.inf else end])
    return json.dumps(out, separators=(",", ":"))


def load_spans(data: str) -> list[tuple[float, float]]:
    out: list[tuple[float, float]] = []
    for item in json.loads(data):
        if not item:
            out.append(NEVER_LIVE)
        else:
            out.append((-math.inf if item[0] is None else item[0], math.inf if item[1] is None else item[1]))
    return out


class ParseCache:
    """Parsed files by (path, blob id): a dict for this process over SQLite on disk."""

    def __init__(self, root: Path, config: Config):
        self.config = config
        self.path = root / DERIVED_DIR / CACHE_FILE
        self.memory: dict[tuple[str, str], list[Event]] = {}
        # each event's live interval when nothing supersedes it (recorded.VersionInfo)
        self.spans: dict[tuple[str, str], list[tuple[float, float]]] = {}
        self._solo = Timeline([], config)
        self._db: sqlite3.Connection | None = None
        self._fingerprint: str | None = None
        self.disk_ok = True
        self._healed = False

    def _conn(self) -> sqlite3.Connection | None:
        if self._db is None and self.disk_ok:
            try:
                self._db = derived_db.connect(self.path, self._setup, what="the recorded-time cache",
                                              source="git history", timeout=10, isolation_level=None)
            except (sqlite3.Error, OSError):
                self.disk_ok = False  # a read-only cache only costs speed
                return None
        return self._db

    def _setup(self, db: sqlite3.Connection) -> None:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
        mark = self.fingerprint()
        row = db.execute("SELECT value FROM meta WHERE key = 'fingerprint'").fetchone()
        if row is None or row[0] != mark:
            # parser, settings or this layout changed: every cached parse is stale
            db.execute("DROP TABLE IF EXISTS parsed")
            db.execute("INSERT OR REPLACE INTO meta VALUES ('fingerprint', ?)", (mark,))
        db.execute("CREATE TABLE IF NOT EXISTS parsed "
                   "(path TEXT, blob TEXT, events TEXT, spans TEXT, PRIMARY KEY (path, blob))")

    def heal(self, exc: BaseException) -> bool:
        """After an error from the cache's database (this cache, the recorded index, the
        postings): a damaged file is deleted, said, and started anew, once per process (a
        second time the disk cache is left alone). True when that is what happened."""
        if not derived_db.is_damage(exc) or not self.disk_ok:
            return False
        if self._healed:
            self.disk_ok = False
            return False
        self._healed = True
        self.close()
        derived_db.discard(self.path, str(exc), "the recorded-time cache", "git history")
        return True

    def fingerprint(self) -> str:
        if self._fingerprint is None:
            self._fingerprint = fingerprint(self.config)
        return self._fingerprint

    def connection(self) -> sqlite3.Connection | None:
        """The cache's database (other derived tables live beside `parsed`), or None."""
        return self._conn()

    def get_many(self, keys: Iterable[tuple[str, str]]) -> dict[tuple[str, str], list[Event]]:
        found: dict[tuple[str, str], list[Event]] = {}
        missing = []
        for key in keys:
            hit = self.memory.get(key)
            if hit is not None:
                found[key] = hit
            else:
                missing.append(key)
        db = self._conn() if missing else None
        if db is None:
            return found
        tz = self.config.tz
        try:
            for path, blob, data, spans in self._rows(db, missing):
                events = load_events(data, tz)
                self.memory[(path, blob)] = events
                self.spans[(path, blob)] = load_spans(spans)
                found[(path, blob)] = events
        except sqlite3.Error as exc:
            if not self.heal(exc):  # healed: the misses are parsed again
                self.disk_ok = False
        return found

    @staticmethod
    def _rows(db: sqlite3.Connection, keys: list[tuple[str, str]]) -> Iterable[tuple[str, str, str, str]]:
        """Stored rows of `keys`: primary-key lookups for a few, one pass of the table per
        500 for many (a lookup costs ~20 µs; the pass costs about the same as 100 of them)."""
        if len(keys) <= 100:
            for key in keys:
                yield from db.execute("SELECT path, blob, events, spans FROM parsed WHERE path = ? AND blob = ?", key)
            return
        wanted = set(keys)
        blobs = list(dict.fromkeys(blob for _, blob in keys))
        for chunk, marks in in_chunks(blobs):
            query = f"SELECT path, blob, events, spans FROM parsed WHERE blob IN ({marks})"
            for row in db.execute(query, chunk):
                if (row[0], row[1]) in wanted:
                    yield row

    def put_many(self, items: dict[tuple[str, str], list[Event]]) -> None:
        self.memory.update(items)
        db = self._conn() if items else None
        if db is None:
            return
        tz = self.config.tz
        try:
            db.execute("BEGIN")
            db.executemany(
                "INSERT OR REPLACE INTO parsed VALUES (?, ?, ?, ?)",
                [(path, blob, dump_events(evs, tz), dump_spans([self.span(e) for e in evs]))
                 for (path, blob), evs in items.items()],
            )
            db.execute("COMMIT")
        except sqlite3.Error as exc:
            with contextlib.suppress(sqlite3.Error):
                db.execute("ROLLBACK")
            if self.heal(exc):
                self.put_many(items)
            else:
                self.disk_ok = False

    def span(self, ev: Event) -> tuple[float, float]:
        return live_interval(self._solo, ev) or NEVER_LIVE

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None


@dataclass
class FileVersion:
    path: str
    blob: str
    events: list[Event]


class Snapshot:
    """The vault's Markdown at one commit (or in the working tree when `commit` is None)."""

    def __init__(self, commit: Commit | None, files: dict[str, FileVersion], config: Config, loader: SnapshotLoader):
        self.commit = commit
        self.files = files
        self.config = config
        self._loader = loader

    @cached_property
    def events(self) -> list[Event]:
        return [e for path in sorted(self.files) for e in self.files[path].events]

    @cached_property
    def timeline(self) -> Timeline:
        return self._loader.timeline(self)

    def text(self, path: str) -> str:
        return self._loader.text(self.files[path])

    def entry_text(self, event: Event) -> str:
        return entry_text(self.text(event.file), event)


class SnapshotLoader:
    """Builds snapshots from git trees, reading and parsing only files not already cached."""

    def __init__(self, root: Path, config: Config, repo: GitRepo | None, dates: FileDates | None = None):
        self.root = root
        self.config = config
        self.repo = repo
        self.selection = repo.selection if repo is not None else Selection.of(config)
        self.dates = dates or FileDates(root, self.selection, config.tz)
        self.cache = ParseCache(root, config)
        self.infos = VersionInfos(config)
        self._table: VersionTable | None = None
        self._texts: dict[str, str] = {}

    def at(self, commit: Commit) -> Snapshot:
        assert self.repo is not None
        commits = self.repo.commits()
        idx = commits.position(commit.sha)
        if idx is not None and self._table is None:
            self._table = VersionTable(self.repo, commits)
        if idx is not None and self._table is not None and self._table.complete:
            tree = self._table.tree(idx)
        else:  # a revision off the first-parent chain
            tree = self.repo.tree(commit.sha)
        return Snapshot(commit, self.versions(tree), self.config, self)

    def timeline(self, snap: Snapshot) -> Timeline:
        spans = self.cache.spans
        infos = (self.infos.get((v.path, v.blob), v.events, spans.get((v.path, v.blob))) for v in snap.files.values())
        return StateTimeline(infos, self.config)

    def versions(self, tree: dict[str, str]) -> dict[str, FileVersion]:
        found = self.events_of(list(tree.items()))
        return {path: FileVersion(path, blob, found[(path, blob)]) for path, blob in tree.items()}

    def events_of(self, keys: list[tuple[str, str]]) -> dict[tuple[str, str], list[Event]]:
        """Parsed events of each (path, blob): from the cache, else read from git and parsed."""
        found = self.cache.get_many(keys)
        missing = [k for k in dict.fromkeys(keys) if k not in found]
        if missing:
            assert self.repo is not None
            data = self.repo.blobs(blob for _, blob in missing)
            parsed = {}
            for path, blob in missing:
                raw = data.get(blob)
                day = self.dates.of(path)  # a path's first commit dates all its versions
                parsed[(path, blob)] = parse_bytes(raw, path, self.config, day) if raw is not None else []
            self.cache.put_many(parsed)
            found.update(parsed)
        return found

    def worktree(self, parsed: dict[str, Any] | None = None, timeline: Timeline | None = None) -> Snapshot:
        """The files on disk now, uncommitted edits included. `parsed` (the vault's current
        parse, path -> ParsedFile) and its `timeline` are reused when given."""
        from memvault.layout import iter_markdown

        paths = list(parsed) if parsed is not None else list(iter_markdown(self.root, selection=self.selection))
        reuse = {p: f.events for p, f in parsed.items()} if parsed is not None else {}
        snap = Snapshot(None, self.worktree_files(paths, reuse), self.config, self)
        if timeline is not None and parsed is not None:
            snap.__dict__["timeline"] = timeline  # same events, already resolved
        return snap

    def worktree_files(self, paths: Iterable[str], reuse: dict[str, list[Event]] | None = None) -> dict[str, FileVersion]:
        """Working-tree versions of `paths` (missing files are left out)."""
        from memvault.errors import UnsafePath
        from memvault.layout import read_file
        from memvault.parsed import parse_text

        files: dict[str, FileVersion] = {}
        for rel in paths:
            try:
                raw = read_file(self.root, rel)
            except (OSError, UnsafePath):  # gone, or a link memvault does not follow (layout.py)
                continue
            blob = blob_id(raw)
            text = self._texts.get(blob)
            if text is None:
                text = decode_text(raw)[0]
                self._texts[blob] = text
            events = (reuse or {}).get(rel)
            if events is None:
                events = self.cache.memory.get((rel, blob))
            if events is None:
                events = parse_text(text, rel, self.config, self.dates.of(rel)).events
                self.cache.memory[(rel, blob)] = events
            files[rel] = FileVersion(rel, blob, events)
        return files

    def text(self, version: FileVersion) -> str:
        text = self._texts.get(version.blob)
        if text is None:
            if self.repo is None:
                raise KeyError(version.blob)
            raw = self.repo.blobs([version.blob]).get(version.blob, b"")
            text = decode_text(raw)[0]
            self._texts[version.blob] = text
        return text

    def close(self) -> None:
        self.cache.close()
        if self.repo is not None:
            self.repo.close()
