"""The search index: derived from the Markdown, updated incrementally, rebuilt when in doubt.

Layout under `.memvault/index/`: `<backend>.db` (the store, see `store.py`; for sqlite also
the FTS5 table), `whoosh/` for the whoosh backend, `write.lock` (one writer at a time).

Trust rules: the store carries a schema version, the analyzer version, a fingerprint of the
settings that change parsing, and a state flag. Anything unexpected (missing, other version,
other settings, `state = dirty` left by a crash between the whoosh and SQLite commits, a
whoosh directory of another generation) makes the index *stale*: `update` and `search` then
rebuild it from the Markdown. A rebuild writes a new database beside the old one and renames
it into place, so a crash during a rebuild leaves the old index. A damaged store (found by
a check when it changed behind memvault's back, or by the error) is rebuilt too: heal.py.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memvault.config.core import Config
from memvault.entries.model import Event, Problem
from memvault.entries.timeline import Timeline
from memvault.errors import ConfigError, InputError, UnsafePath
from memvault.fsio import decode_text, locked
from memvault.layout import is_file, is_vault_markdown, open_file, problem_at, walk
from memvault.parsed import BIG_FILE, ParsedVault, parse_text, parser_fingerprint
from memvault.search import access
from memvault.search.access import Access
from memvault.search.index import heal, links, store
from memvault.search.index.engine import Doc, Engine, FileState, IndexStatus, UpdateReport
from memvault.search.rank import (
    EXHAUSTIVE,
    Filter,
    Hit,
    Plan,
    Weights,
    field_texts,
    make_filter,
    plan_query,
    rank_candidates,
    score_ceiling,
)
from memvault.search.textproc import ANALYZER_VERSION, Query, analyzed, parse_query
from memvault.sqlutil import in_chunks

BACKENDS = ("sqlite", "whoosh")
INDEX_DEFAULTS: dict[str, Any] = {"backend": "sqlite", "lock_timeout": 30.0}
RACY_SECONDS = 2.0  # a file changed this recently may change again within its mtime tick
Progress = Callable[[int, int], None]


def resolve_backend(vault: ParsedVault, backend: str | None) -> str:
    name = (backend or vault.config.section("index", INDEX_DEFAULTS)["backend"] or "sqlite").lower()
    if name not in BACKENDS:
        where = "--backend" if backend else f"[index] backend in {vault.config.path or 'memvault.toml'}"
        raise ConfigError(f"{where}: unknown index backend {name!r}; choose one of: {', '.join(BACKENDS)}")
    return name


class Index:
    """One vault's index with one backend. Readers open it freely; writers take the lock."""

    def __init__(self, vault: ParsedVault, backend: str | None = None):
        self.vault = vault
        self.backend = resolve_backend(vault, backend)
        self.dir: Path = vault.derived / "index"
        self.db_path = self.dir / f"{self.backend}.db"
        self.lock_path = self.dir / "write.lock"
        self.weights = Weights.from_config(vault.config)
        self.settings = vault.config.section("index", INDEX_DEFAULTS)
        self._conn: sqlite3.Connection | None = None
        self._engine: Engine | None = None
        self._inode: int | None = None

    # -- opening ---------------------------------------------------------------------

    def _fingerprint(self) -> str:
        cfg = self.vault.config
        key = repr((cfg.timezone, cfg.types, sorted(cfg.memory_sections.items())))
        return hashlib.sha256(key.encode()).hexdigest()[:16]

    def _make_engine(self, conn: sqlite3.Connection, directory: Path) -> Engine:
        if self.backend == "whoosh":
            from memvault.search.index.whoosh_backend import WhooshEngine

            return WhooshEngine(directory, self.weights.field_weights)
        from memvault.search.index.sqlite import SqliteEngine

        return SqliteEngine(conn, self.weights.field_weights)

    def _open(self) -> tuple[sqlite3.Connection, Engine]:
        if self._conn is not None and self._inode != _inode(self.db_path):
            self._reset()  # another process rebuilt the index and renamed a new file in place
        if self._conn is None:
            self._inode = _inode(self.db_path)
            self._conn = store.connect(self.db_path)
            self._engine = self._make_engine(self._conn, self.dir / self.backend)
            if self._inode is None:
                self._inode = _inode(self.db_path)
        assert self._engine is not None
        return self._conn, self._engine

    def _reset(self) -> None:
        if self._engine is not None:
            self._engine.close()
        if self._conn is not None:
            self._conn.close()
        self._conn = self._engine = None

    def close(self) -> None:
        self._reset()

    def __enter__(self) -> Index:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def stale_reason(self) -> str | None:
        """Why the index cannot be trusted as it is, or None."""
        squatted = heal.squatter_reason(self)
        if squatted or not self.db_path.exists():
            return squatted or "no index yet"
        try:
            conn, engine = self._open()
            meta = heal.read_meta(conn)
        except (sqlite3.DatabaseError, OSError) as exc:
            self._reset()
            return heal.damage_reason(exc) or f"unreadable index ({exc})"
        if not meta:
            return "empty or damaged index"
        if meta.get("schema_version") != str(store.SCHEMA_VERSION):
            return f"schema version {meta.get('schema_version')} (this memvault uses {store.SCHEMA_VERSION})"
        if meta.get("analyzer_version") != str(ANALYZER_VERSION):
            return "built with another text analyzer version"
        if meta.get("parser") != parser_fingerprint():
            return "built by another version of memvault's parser"
        if meta.get("fingerprint") != self._fingerprint():
            return "timezone, types or sections changed in memvault.toml"
        if meta.get("state") != "clean":
            return "an update was interrupted"
        if not engine.atomic and engine.generation() != meta.get("generation"):
            return "text index does not match the store"
        return heal.verify(self, conn)

    # -- writing ---------------------------------------------------------------------

    @contextlib.contextmanager
    def _writer(self) -> Iterator[None]:
        timeout = float(self.settings.get("lock_timeout", 30.0))
        with locked(self.lock_path, timeout=timeout, what="the search index"):
            yield

    def update(self, paths: Iterable[str] | None = None, *, progress: Progress | None = None) -> UpdateReport:
        """Bring the index up to date with the files (all, or exactly `paths`)."""
        started = time.perf_counter()
        wanted = None if paths is None else [_relpath(p, self.vault.root) for p in paths]
        with self._writer():
            heal.remove_leftovers(self.dir)
            reason = self.stale_reason()
            report = None
            if reason is None:
                try:
                    report = self._update_locked(wanted, progress)
                except Exception as exc:
                    self._reset()
                    if (reason := heal.damage_reason(exc)) is None:
                        raise
            if report is None:
                report = self._rebuild_locked(progress, reason or "")
            heal.written(self)
        report.seconds = time.perf_counter() - started
        return report

    def rebuild(self, *, progress: Progress | None = None) -> UpdateReport:
        started = time.perf_counter()
        with self._writer():
            report = self._rebuild_locked(progress, "asked for")
            heal.written(self)
        report.seconds = time.perf_counter() - started
        return report

    def _update_locked(self, wanted: list[str] | None, progress: Progress | None) -> UpdateReport:
        conn, engine = self._open()
        indexed = store.file_states(conn, wanted)
        report = UpdateReport()
        if wanted is None:
            disk = _scan(self.vault.root, report.problems)
            todo = [p for p, st in disk.items() if p not in indexed or indexed[p][:2] != st]
            gone = [p for p in indexed if p not in disk]
        else:
            todo, gone = [], []
            for rel in dict.fromkeys(wanted):
                if not is_vault_markdown(rel):
                    continue
                if is_file(self.vault.root, rel):
                    todo.append(rel)
                    continue
                bad = problem_at(self.vault.root, rel)
                if bad is not None:  # a link or not a file now: its entries leave the index
                    report.problems.append(bad)
                if rel in indexed:
                    gone.append(rel)
        parsed: dict[str, tuple[FileState, list[Event], list[Problem]]] = {}
        touched_stat: dict[str, FileState] = {}
        for n, rel in enumerate(todo, 1):
            got = _read(self.vault.root, rel, self.vault.config)
            if isinstance(got, Problem):
                report.problems.append(got)  # keep what was indexed for it
            elif rel in indexed and got[0].sha256 == indexed[rel][2]:
                touched_stat[rel] = got[0]
            else:
                parsed[rel] = got
                report.problems += got[2]
                (report.changed if rel in indexed else report.added).append(rel)
            if progress:
                progress(n, len(todo))
        report.removed = sorted(gone)
        if parsed or gone or touched_stat:
            self._apply(conn, engine, parsed, gone, touched_stat, report)
        return report

    def _apply(self, conn: sqlite3.Connection, engine: Engine,
               parsed: dict[str, tuple[FileState, list[Event], list[Problem]]], gone: list[str],
               touched_stat: dict[str, FileState], report: UpdateReport) -> None:
        files = list(parsed) + list(gone)
        old = _events_of_files(conn, files)
        report.events_removed = len(old)
        if not engine.atomic:
            conn.execute("BEGIN IMMEDIATE")
            store.set_meta(conn, state="dirty")
            conn.execute("COMMIT")
        conn.execute("BEGIN IMMEDIATE")
        try:
            engine.begin()
            rowid = store.next_rowid(conn)
            _delete_files(conn, files)
            old_docs = docs_by_file(old)
            engine.delete(old_docs)
            rows, docs, added_rowids, new_events = [], [], [], []
            for rel, (state, events, problems) in parsed.items():
                numbered = list(enumerate(events, rowid))
                rows += [store.event_row(r, ev) for r, ev in numbered]
                docs += file_docs(numbered)
                added_rowids += [r for r, _ in numbered]
                new_events += events
                rowid += len(events)
                store.put_file(conn, rel, *_stored_stat(state), len(events), problems)
            for rel, state in touched_stat.items():
                conn.execute("UPDATE files SET size=?, mtime_ns=?, sha256=? WHERE path=?", (*_stored_stat(state), rel))
            store.insert_events(conn, rows)
            engine.add(docs)
            store.change_terms(conn, store.count_terms(docs), store.count_terms(old_docs))
            links.update(conn, old, new_events, added_rowids, self.vault.config)
            report.events_indexed = len(rows)
            engine.commit()
            meta: dict[str, Any] = {"last_update": time.time(), "state": "clean", "next_rowid": rowid}
            if not engine.atomic:
                meta["generation"] = engine.generation()
            store.set_meta(conn, **meta)
            conn.execute("COMMIT")
        except BaseException:
            with contextlib.suppress(sqlite3.Error):  # a damaged file may have ended it already
                conn.execute("ROLLBACK")
            engine.abort()
            raise

    def _rebuild_locked(self, progress: Progress | None, reason: str) -> UpdateReport:
        from memvault.search.index.build import build

        self._reset()
        report = build(self, progress, heal.announce(self, reason))
        report.rebuilt, report.reason = True, reason
        return report

    # -- reading ---------------------------------------------------------------------

    def ensure(self) -> None:
        """Rebuild when the index is missing or not to be trusted (not for edited files)."""
        if self.stale_reason() is not None:
            self.update()

    def changed_files(self) -> tuple[list[str], list[str]]:
        """(files new or changed on disk by size/mtime, files gone), without reading them."""
        indexed = self.indexed_files() if self.db_path.exists() else {}
        disk = _scan(self.vault.root)
        changed = [p for p, st in disk.items() if p not in indexed or tuple(indexed[p][:2]) != st]
        return changed, [p for p in indexed if p not in disk]

    def refresh(self) -> UpdateReport | None:
        """Update when the files look changed (a stat walk; no lock when nothing changed)."""
        if self.stale_reason() is None and not heal.leftovers(self.dir):
            changed, gone = self.changed_files()
            if not changed and not gone:
                return None
        return self.update()

    def indexed_files(self) -> dict[str, FileState]:
        if not self.db_path.is_file():  # do not create an empty store just to read it
            return {}
        try:
            conn, _ = self._open()
            return {p: FileState(*st) for p, st in store.file_states(conn).items()}
        except sqlite3.DatabaseError:
            return {}

    def indexed_event_counts(self, paths: list[str] | None = None) -> dict[str, int]:
        """Entries the index holds per indexed file (all, or those of `paths` it holds)."""
        conn, _ = self._open()
        return store.file_event_counts(conn, paths)

    def size_bytes(self) -> int:
        """Bytes on disk of this backend's index (store and text directory)."""
        parts = [self.db_path] + (list((self.dir / self.backend).rglob("*")) if (self.dir / self.backend).is_dir() else [])
        return sum(p.stat().st_size for p in parts if p.is_file())

    @heal.healing
    def events(self) -> list[Event]:
        """Every indexed event (as parsed when indexed), in file and line order."""
        conn, _ = self._open()
        return [e for _, e in sorted(store.load_events(conn), key=lambda p: (p[1].file, p[1].line))]

    @heal.healing
    def edges(self) -> tuple[dict[str, str], set[tuple[str, str]]]:
        """The resolved graph: (supersedes new->old, {(reconfirmer, target)})."""
        conn, _ = self._open()
        sup: dict[str, str] = {}
        rec: set[tuple[str, str]] = set()
        for src, kind, target in conn.execute("SELECT src, kind, target FROM refs WHERE target IS NOT NULL"):
            if kind == "s":
                sup[src] = target
            else:
                rec.add((src, target))
        return sup, rec

    @heal.healing
    def search(self, query: str, *, limit: int = 10, types: Iterable[str] = (), tags: Iterable[str] = (),
               since: datetime | None = None, until: datetime | None = None, include_all: bool = False,
               at: datetime | None = None, record_access: bool = True) -> list[Hit]:
        """Ranked hits for `query` (see docs/search.md). Rebuilds a missing/stale index first."""
        if limit < 1:
            raise InputError("--limit must be at least 1")
        q = parse_query(query)
        if q.empty:
            return []
        self.ensure()
        conn, engine = self._open()
        when = at or datetime.now(UTC)
        keep = make_filter([*types, *q.types], [*tags, *q.tags], since, until)
        n = max(self.weights.candidates, limit * 5)
        plan = self._plan(conn, q)
        while True:
            found = engine.search(q, n, plan)
            hits = self._rank(conn, found, q, when, keep, include_all, limit)
            if len(hits) >= limit:
                break
            if len(found) == n:
                n *= 4
            elif plan.exhaustive:
                break
            else:  # the selected rows ran out before enough hits: score every match
                plan = EXHAUSTIVE
        if record_access and hits:
            access.record(self.vault.root, [h.id for h in hits if h.matched])
        return hits

    def _plan(self, conn: sqlite3.Connection, q: Query) -> Plan:
        if q.phrases or len(q.terms) < 2 or self.weights.score_limit <= 0:
            return EXHAUSTIVE
        docs, n_docs = store.term_docs(conn, q.terms)
        return plan_query(q, docs, n_docs, self.weights.score_limit)

    def _rank(self, conn: sqlite3.Connection, found: list[tuple[int, float]], q: Query, when: datetime,
              keep: Filter, include_all: bool, limit: int) -> list[Hit]:
        """Rank the engine's candidates, decoding only those that can make the hits.

        Every candidate's score is first computed from stored columns (`rank.score_ceiling`:
        exact for a live entry that no other entry supersedes or reconfirms; a filtered-out or
        non-live one is no hit). Candidates are decoded best first until the next one's
        ceiling is below the last hit; candidates linked to others (and all, with --all) are
        always decoded. The hits are those of ranking every candidate: decoding 200 entries and
        building their timeline was most of a search's time above the engine."""
        best = max((s for _, s in found), default=0.0)
        if best <= 0:
            return []
        heads = store.load_heads(conn, [r for r, _ in found])
        ids = {h.id for h in heads.values()}
        supersedes, reconfirms, involved = links.edges_for(conn, ids)
        stats = access.stats(self.vault.root, involved)
        extra = store.load_ids(conn, involved - ids)
        linked = set(supersedes) | set(supersedes.values()) | {i for pair in reconfirms for i in pair}
        pinned, rest = self._triage(found, heads, linked if not include_all else None, stats, best, when)
        events: dict[int, Event] = {}
        m = limit
        while True:
            chosen = pinned + [(r, s) for _, r, s in rest[:m]]
            events.update(store.load_rowids(conn, [r for r, _ in chosen if r not in events]))
            cands = [(events[r], s) for r, s in chosen if r in events]
            timeline = Timeline([e for e, _ in cands] + extra, self.vault.config, edges=(supersedes, reconfirms))
            hits = rank_candidates(cands, q, timeline, when, self.weights, access=stats, include_all=include_all,
                                   keep=keep, limit=limit, best=best)
            if m >= len(rest):
                return hits
            if len(hits) < limit:  # filters or statuses took some: decode more
                m *= 4
                continue
            floor = hits[-1].score - 1e-9  # ceilings read epoch seconds: allow for rounding
            more = next((k for k, (c, _, _) in enumerate(rest[m:]) if c < floor), len(rest) - m)
            if not more:
                return hits
            m += more

    def _triage(self, found: list[tuple[int, float]], heads: dict[int, store.Head], linked: set[str] | None,
                stats: dict[str, Access], best: float, when: datetime,
                ) -> tuple[list[tuple[int, float]], list[tuple[float, int, float]]]:
        """(candidates always decoded, [(score ceiling, rowid, bm25)] of the others, best first).
        Everything is decoded when `linked` is None (--all)."""
        twice = {i for i, n in Counter(h.id for h in heads.values()).items() if n > 1}
        pinned: list[tuple[int, float]] = []
        rest: list[tuple[float, int, float]] = []
        for r, s in found:
            head = heads.get(r)
            if head is None:
                continue
            if linked is None or head.id in linked or head.id in twice:
                pinned.append((r, s))
            else:
                last = getattr(stats.get(head.id), "last_accessed", None)
                rest.append((score_ceiling(s / best, head, last, when, self.weights, self.vault.config), r, s))
        rest.sort(reverse=True)
        return pinned, rest

    def status(self) -> IndexStatus:
        reason = self.stale_reason()
        exists = self.db_path.exists() and reason != "no index yet"
        skipped: list[Problem] = []
        disk = _scan(self.vault.root, skipped)
        meta: dict[str, str] = {}
        indexed: dict[str, tuple[int, int, str, int]] = {}
        if exists and self._conn is not None and not (reason or "").startswith("damaged"):
            meta = store.get_meta(self._conn)
            with contextlib.suppress(sqlite3.DatabaseError):
                indexed = {r[0]: r[1:] for r in self._conn.execute("SELECT path, size, mtime_ns, sha256, events FROM files")}
        changed = sorted(p for p in indexed if p not in disk)
        events_disk = 0
        for rel, st in disk.items():
            if rel in indexed and tuple(indexed[rel][:2]) == st:
                events_disk += indexed[rel][3]
                continue
            got = _read(self.vault.root, rel, self.vault.config)
            if isinstance(got, Problem):
                changed.append(rel)
                continue
            events_disk += len(got[1])
            if rel not in indexed or indexed[rel][2] != got[0].sha256:
                changed.append(rel)
        changed.sort()
        last = float(meta["last_update"]) if meta.get("last_update") else None
        size = self.size_bytes()
        stale_reason = reason or (f"{len(changed)} file(s) changed since the last update" if changed else None)
        return IndexStatus(
            backend=self.backend, path=self.dir, exists=exists, stale=stale_reason is not None,
            stale_reason=stale_reason, files_on_disk=len(disk), files_indexed=len(indexed),
            events_on_disk=events_disk, events_indexed=sum(r[3] for r in indexed.values()),
            changed_files=changed, last_update=datetime.fromtimestamp(last, UTC) if last else None,
            schema_version=int(meta["schema_version"]) if meta.get("schema_version", "").isdigit() else None,
            size_bytes=size, not_read=[f"{p.path}: {p.message}" for p in skipped],
            healed=meta.get("healed") or None,
        )


# ------------------------------------------------------------------------------ helpers


def _relpath(path: str | os.PathLike[str], root: Path) -> str:
    """Vault-relative POSIX path of `path` (relative already, or absolute inside the vault)."""
    p = Path(path)
    if p.is_absolute():
        with contextlib.suppress(ValueError):
            p = p.relative_to(root)
    rel = p.as_posix()
    while rel.startswith("./"):
        rel = rel[2:]
    return rel


def _inode(path: Path) -> int | None:
    try:
        return os.stat(path).st_ino
    except OSError:
        return None


def _scan(root: Path, skipped: list[Problem] | None = None) -> dict[str, tuple[int, int]]:
    """(size, mtime_ns) of the files `iter_markdown` lists, by relpath (what it skips by the
    layout rule goes to `skipped`)."""
    return {rel: (st.st_size, st.st_mtime_ns) for rel, st in walk(root, skipped, with_stat=True) if st}


def _read(root: Path, rel: str, config: Config) -> tuple[FileState, list[Event], list[Problem]] | Problem:
    """Read, hash and parse one file; a read failure is a Problem (the caller keeps old data)."""
    try:
        with open_file(root, rel) as fh:
            st = os.fstat(fh.fileno())
            raw = fh.read()
    except UnsafePath as exc:  # a link or not a file: never read (layout.py)
        return exc.problem
    except OSError as exc:
        return Problem(rel, 1, f"cannot read file: {exc.strerror or exc}", code="MV100")
    text, notes = decode_text(raw)
    parsed = parse_text(text, rel, config)
    problems = [Problem(rel, line, msg, "warning", "MV102") for line, msg in notes] + parsed.problems
    if len(text) > BIG_FILE:
        problems.append(Problem(rel, 1, f"file is {len(text) // 1048576} MB; daily logs this large are slow to search", "warning", "MV103"))
    state = FileState(st.st_size, st.st_mtime_ns, hashlib.sha256(raw).hexdigest())
    return state, parsed.events, problems


def _stored_stat(state: FileState) -> tuple[int, int, str]:
    # A file written within the last moments may be rewritten within the same mtime tick
    # and size; store an impossible mtime so the next update compares its hash.
    racy = time.time() - state.mtime_ns / 1e9 < RACY_SECONDS
    return state.size, (-1 if racy else state.mtime_ns), state.sha256


def file_docs(rows: list[tuple[int, Event]]) -> list[Doc]:
    """Text-engine documents for the events of one file, in file order.

    Each entry's content is analysed once and reused as its neighbours' context (the same
    terms `rank.contexts` + `analyzed` give)."""
    bodies = [analyzed(ev.content) for _, ev in rows]
    docs: list[Doc] = []
    for i, (rowid, ev) in enumerate(rows):
        title, _, tags, extra, _ = field_texts(ev)
        near = [bodies[j] for j in (i - 1, i + 1)
                if ev.kind == "log" and 0 <= j < len(rows) and rows[j][1].kind == "log"]
        context = " ".join(b for b in near if b)
        docs.append((rowid, (analyzed(title), bodies[i], analyzed(tags), analyzed(extra), context)))
    return docs


def docs_by_file(rows: list[tuple[int, Event]]) -> list[Doc]:
    """`file_docs` over rows of any files (as loaded from the store)."""
    by_file: dict[str, list[tuple[int, Event]]] = {}
    for row in rows:
        by_file.setdefault(row[1].file, []).append(row)
    return [d for group in by_file.values() for d in file_docs(sorted(group, key=lambda r: r[1].line))]


def _events_of_files(conn: sqlite3.Connection, files: list[str]) -> list[tuple[int, Event]]:
    out: list[tuple[int, Event]] = []
    for chunk, marks in in_chunks(files):
        out += store.load_events(conn, f"file IN ({marks})", tuple(chunk))
    return out


def _delete_files(conn: sqlite3.Connection, files: list[str]) -> None:
    for chunk, marks in in_chunks(files):
        conn.execute(f"DELETE FROM events WHERE file IN ({marks})", chunk)
        conn.execute(f"DELETE FROM files WHERE path IN ({marks})", chunk)
