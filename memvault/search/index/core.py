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
import sqlite3
import time
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memvault import derived_db
from memvault.entries.model import Event, Problem
from memvault.errors import InputError
from memvault.forgotten import Stored
from memvault.fsio import locked
from memvault.layout import is_file, problem_at
from memvault.parsed import ParsedVault, parser_fingerprint
from memvault.search import access
from memvault.search.hits import Hit
from memvault.search.index import files, heal, links, store
from memvault.search.index.engine import Engine, FileState, IndexStatus, Progress, UpdateReport
from memvault.search.index.forgetting import index_forgotten
from memvault.search.index.lastgood import errors_of, held_reason, keeps_last_good, typed
from memvault.search.index.query import Ranker, plan_for
from memvault.search.plan import EXHAUSTIVE, Plan
from memvault.search.rank import Filter, both, make_filter
from memvault.search.textproc import ANALYZER_VERSION, Query, parse_query
from memvault.search.weights import Weights

if TYPE_CHECKING:
    from memvault.search.index import semantic  # imported when a search or update needs vectors
from memvault.semantic import FUSIONS, choice

BACKENDS = ("sqlite", "whoosh")
INDEX_DEFAULTS: dict[str, Any] = {"backend": "sqlite", "lock_timeout": 30.0}


def resolve_backend(vault: ParsedVault, backend: str | None) -> str:
    name = (backend or vault.config.section("index", INDEX_DEFAULTS)["backend"] or "sqlite").lower()
    if name not in BACKENDS:
        if backend:  # typed on the command line: a usage error, not a bad memvault.toml
            raise InputError(f"--backend: unknown index backend {name!r}; choose one of: {', '.join(BACKENDS)}")
        raise vault.config.error("index", "backend",
                                 f"[index] backend: unknown index backend {name!r}; choose one of: {', '.join(BACKENDS)}")
    return name


class Index:
    """One vault's index with one backend. Readers open it freely; writers take the lock."""

    def __init__(self, vault: ParsedVault, backend: str | None = None, *, for_search: bool = False):
        self.vault = vault
        self.for_search = for_search  # an update embeds at most [semantic] search_encode_limit texts
        self.backend = resolve_backend(vault, backend)
        self.dir: Path = vault.derived / "index"
        self.db_path = self.dir / f"{self.backend}.db"
        self.lock_path = self.dir / "write.lock"
        for folder in (vault.derived, self.dir):
            derived_db.clear_folder(folder)
        self.weights = Weights.from_config(vault.config)
        self.settings = vault.config.section("index", INDEX_DEFAULTS)
        self._conn: sqlite3.Connection | None = None
        self._engine: Engine | None = None
        self._inode: int | None = None
        self._semantic: semantic.Semantic | None = None
        self.removed_rowids: list[int] = []  # rows this Index's updates deleted, until the vectors drop them

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
        if self._conn is not None and self._inode != files.inode(self.db_path):
            self._reset()  # another process rebuilt the index and renamed a new file in place
        if self._conn is None:
            self._inode = files.inode(self.db_path)
            self._conn = store.connect(self.db_path)
            self._engine = self._make_engine(self._conn, self.dir / self.backend)
            if self._inode is None:
                self._inode = files.inode(self.db_path)
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
        if self._semantic is not None:
            self._semantic.close()
            self._semantic = None

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
        with locked(self.lock_path, timeout=timeout, what="the search index",
                    setting="[index] lock_timeout in memvault.toml sets the wait"):
            yield

    def update(self, paths: Iterable[str] | None = None, *, progress: Progress | None = None) -> UpdateReport:
        """Bring the index up to date with the files (all, or exactly `paths`)."""
        started = time.perf_counter()
        wanted = None if paths is None else [files.relpath(p, self.vault.root) for p in paths]
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
        report.seconds = time.perf_counter() - started  # the words; the embedding reports its own time
        report.semantic = self._embed(progress)
        return report

    def rebuild(self, *, progress: Progress | None = None) -> UpdateReport:
        started = time.perf_counter()
        with self._writer():
            report = self._rebuild_locked(progress, "asked for")
            heal.written(self)
        report.seconds = time.perf_counter() - started
        report.semantic = self._embed(progress)
        return report

    def _update_locked(self, wanted: list[str] | None, progress: Progress | None) -> UpdateReport:
        conn, engine = self._open()
        indexed = store.file_states(conn, wanted)
        report = UpdateReport()
        if wanted is None:
            disk = files.scan(self.vault.root, report.problems, self.vault.selection)
            todo = [p for p, st in disk.items() if p not in indexed or indexed[p][:2] != st]
            gone = [p for p in indexed if p not in disk]
        else:
            todo, gone = [], []
            for rel in dict.fromkeys(wanted):
                if not self.vault.selection.selects(rel):
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
        held: dict[str, tuple[FileState, int, str]] = {}
        for n, rel in enumerate(todo, 1):
            got = files.read_changed(self.vault, rel, indexed[rel][2] if rel in indexed else None)
            if isinstance(got, Problem):
                report.problems.append(got)  # keep what was indexed for it
            elif isinstance(got, files.Unchanged):  # the version the index holds: only its stat changed
                touched_stat[rel] = got.state
            elif rel in indexed and (kept := self._kept(conn, rel, got)) is not None:
                held[rel] = (got[0], len(got[1]), held_reason(got[2], kept))
                report.held[rel] = held[rel][2]
                report.problems += got[2]
            else:
                parsed[rel] = got
                report.problems += got[2]
                (report.changed if rel in indexed else report.added).append(rel)
            if progress:
                progress(n, len(todo))
        report.removed = sorted(gone)
        if touched_stat:  # the same version as seen: a file held back is still held back
            report.held.update((p, why) for p, (_, _, why) in store.held_files(conn).items() if p in touched_stat)
        if parsed or gone or touched_stat or held:
            self._apply(conn, engine, parsed, gone, touched_stat, report, held)
        return report

    @staticmethod
    def _kept(conn: sqlite3.Connection, rel: str, got: tuple[FileState, list[Event], list[Problem]]) -> int | None:
        """The entries the index keeps for `rel` when its new version is held back (lastgood.py)."""
        errors = errors_of(got[2])
        if not errors:
            return None
        count = store.file_event_counts(conn, [rel]).get(rel)
        entries = store.file_entry_counts(conn, [rel]).get(rel, 0) if count is not None else 0
        return count if keeps_last_good(len(errors), len(got[1]), count, typed(got[1]), entries) else None

    def _apply(self, conn: sqlite3.Connection, engine: Engine,
               parsed: dict[str, tuple[FileState, list[Event], list[Problem]]], gone: list[str],
               touched_stat: dict[str, FileState], report: UpdateReport,
               held: dict[str, tuple[FileState, int, str]]) -> None:
        paths = list(parsed) + list(gone)
        old = store.events_of_files(conn, paths)
        report.events_removed = len(old)
        self.removed_rowids.extend(r for r, _ in old)  # the vectors drop these without a scan (semantic.py)
        if not engine.atomic:
            conn.execute("BEGIN IMMEDIATE")
            store.set_meta(conn, state="dirty")
            conn.execute("COMMIT")
        conn.execute("BEGIN IMMEDIATE")
        try:
            engine.begin()
            rowid = store.next_rowid(conn)
            store.delete_files(conn, paths)
            old_docs = files.docs_by_file(old)
            engine.delete(old_docs)
            rows, docs, added_rowids, new_events = [], [], [], []
            for rel, (state, events, problems) in parsed.items():
                numbered = list(enumerate(events, rowid))
                rows += [store.event_row(r, ev) for r, ev in numbered]
                docs += files.file_docs(numbered)
                added_rowids += [r for r, _ in numbered]
                new_events += events
                rowid += len(events)
                store.put_file(conn, rel, *files.stored_stat(state), len(events), problems)
            for rel, state in touched_stat.items():
                store.touch_file(conn, rel, *files.stored_stat(state))
            for rel, (state, n_events, why) in held.items():  # rows stay those of the last good version
                store.put_held(conn, rel, *files.stored_stat(state), n_events, why)
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
        disk = files.scan(self.vault.root, selection=self.vault.selection)
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

    def held_files(self) -> dict[str, tuple[int, int, str]]:
        """Files failing to parse whose last good entries the index keeps:
        path -> (entries kept, entries the failing version holds, why)."""
        if not self.db_path.is_file():
            return {}
        conn, _ = self._open()
        return store.held_files(conn)

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
               at: datetime | None = None, record_access: bool | None = None, retention: bool = True,
               where: Filter | None = None, mode: str | None = None, fusion: str | None = None) -> list[Hit]:
        """Ranked hits for `query` (see docs/search.md). Rebuilds a missing/stale index first.
        `where`: a further test an entry must pass (context's `--scope`), before the limit.
        `record_access`: count the first hits as recalled (None: as `[search] record` says;
        `access.search_recalls`). `retention`: put each hit's retention in its JSON shape (the
        first search after an index change reads the changed files' rows again for it, ~50 ms
        for one file of a 100k vault: a caller that shows none, such as an agent's recall, says False).
        `mode`: lexical, semantic or hybrid (None: `[semantic] mode`; `semantic.choose_mode`);
        `fusion`: how hybrid fuses the two rankings in this call (None: `[semantic] fusion`)."""
        if limit < 1:
            raise InputError("--limit must be at least 1")
        if fusion is not None and fusion not in FUSIONS:
            raise InputError(f"fusion must be one of {', '.join(FUSIONS)}, got {fusion!r}")
        q = parse_query(query)
        asked, mode = mode, choice.choose_mode(self.vault.config, mode, self.vault.root)
        text = choice.query_text(query) if mode != "lexical" else ""
        if q.empty and not text:
            return []
        self.ensure()
        probe = None
        if mode != "lexical":  # the vectors' code, imported only for a search by meaning
            from memvault.search.index import semantic

            mode, probe = semantic.prepare(self, mode, text, asked)
        conn, engine = self._open()
        when = at or datetime.now(UTC)
        keep = both(make_filter([*types, *q.types], [*tags, *q.tags], since, until), where)
        n = max(self.weights.candidates, limit * 5)
        with _one_snapshot(conn), contextlib.ExitStack() as stack:
            plan = self._plan(conn, q)
            forgotten = stack.enter_context(contextlib.closing(Stored(self.vault.root)))  # reads candidates' rows only
            ranker = Ranker(conn, self.weights, self.vault.root, self.vault.config,
                            index_forgotten(conn, forgotten, self.vault.config) if forgotten else None)
            while True:
                lexical = engine.search(q, n, plan) if not q.empty and mode != "semantic" else []
                found, by_meaning = (lexical, set()) if probe is None else probe.found(mode, lexical, n, fusion)
                hits = ranker.rank(found, q, when, keep, include_all, limit, by_meaning)
                if probe is not None:
                    probe.mark(hits, ranker.heads, lexical, by_meaning)
                if len(hits) >= limit:
                    break
                if len(found) >= n:
                    n *= 4
                elif plan.exhaustive:
                    break
                else:  # the selected rows ran out before enough hits: score every match
                    plan = EXHAUSTIVE
            if retention:
                from memvault.search import said_hits

                said_hits.attach(conn, self.vault.root, self.vault.config, hits, when)  # before this search's recalls
        access.record(self.vault.root, access.search_recalls(self.vault.config, q, hits, record_access))
        return hits

    def _embed(self, progress: Progress | None) -> dict[str, Any] | None:
        """What an update's embedding did (search/index/semantic.py `after_update`); nothing,
        and nothing imported, in a vault that cannot search by meaning."""
        if self.for_search or choice.surely_lexical(self.vault.config):
            return None
        from memvault.search.index import semantic

        return semantic.after_update(self, progress)

    def semantic_side(self) -> semantic.Semantic:
        """The vectors and model (opened once per Index; search/index/semantic.py)."""
        if self._semantic is None:
            from memvault.search.index import semantic

            self._semantic = semantic.Semantic.open(self)
        return self._semantic

    def semantic(self, mode: str) -> semantic.Semantic | None:
        """The semantic side for `mode` (None: lexical), its vectors in step with the rows as
        far as a search may embed (an update keeps them so; this catches a lexical-only
        update, such as another process's)."""
        if mode == "lexical":
            return None
        sem = self.semantic_side()
        sem.sync(limit=int(sem.opts.get("search_encode_limit", 2000)), wait=False)
        return sem

    def _plan(self, conn: sqlite3.Connection, q: Query) -> Plan:
        return plan_for(conn, q, self.weights)

    def reader(self) -> tuple[sqlite3.Connection, Engine]:
        """The read connection and text engine searches use (opened on first use; replaced
        when another process renames a rebuilt index into place)."""
        return self._open()

    def plan(self, q: Query) -> Plan:
        """Which entries a search for `q` may skip without changing its top hits (search.md)."""
        return self._plan(self._open()[0], q)

    def status(self) -> IndexStatus:
        reason = self.stale_reason()
        exists = self.db_path.exists() and reason != "no index yet"
        skipped: list[Problem] = []
        disk = files.scan(self.vault.root, skipped, self.vault.selection)
        meta: dict[str, str] = {}
        indexed: dict[str, tuple[int, int, str, int, int]] = {}
        held: dict[str, tuple[int, int, str]] = {}
        if exists and self._conn is not None and not (reason or "").startswith("damaged"):
            meta = store.get_meta(self._conn)
            with contextlib.suppress(sqlite3.DatabaseError):
                indexed = store.file_records(self._conn)
                held = store.held_files(self._conn)
        changed = sorted(p for p in indexed if p not in disk)
        events_disk = 0
        for rel, st in disk.items():
            if rel in indexed and tuple(indexed[rel][:2]) == st:
                events_disk += indexed[rel][4]  # what the version seen holds, held back or not
                continue
            got = files.read_parsed(self.vault, rel)
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
            healed=meta.get("healed") or None, broken={p: why for p, (_, _, why) in held.items() if p in disk},
        )


@contextlib.contextmanager
def _one_snapshot(conn: sqlite3.Connection) -> Iterator[None]:
    """One read transaction for a whole search. An update renumbers a file's rows; between
    the text search and the reading of its rows, another writer's commit (a server's
    concurrent `remember`, the watcher) would make the file's hits vanish from the answer."""
    if conn.in_transaction:
        yield
        return
    conn.execute("BEGIN")
    try:
        yield
    finally:
        with contextlib.suppress(sqlite3.Error):
            conn.execute("COMMIT")
