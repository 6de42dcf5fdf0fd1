"""Retention for search hits, without parsing the vault: what `memvault search` prints.

A hit's retention counts its reconfirmations (the index's edges) and the later entries that say
the same (the stored pairs, said_store.py). Search reads no Markdown, so the entries holding each
text are read from the index's own rows: `said.sqlite` keeps them (`occ`, by text key) with the index state they were
read at (`last_update`/`next_rowid`, which every index update changes) and each file's hash.
A search of an unchanged index reads a few rows per hit; the first after an update reads the
rows of the files whose hash changed (a write: one file, ~50 ms on a 100k vault), or all of
them when many changed or an id is held in two files (which copy counts is the whole index's
question; 2-3 s on 100k; docs/performance.md).
"""

from __future__ import annotations

import logging
import sqlite3
from datetime import datetime
from pathlib import Path

from memvault.config.core import Config
from memvault.config.curate import DEFAULTS as CURATE_DEFAULTS
from memvault.entries.model import Event
from memvault.entries.similarity import signature
from memvault.entries.timeline import NEVER, Timeline
from memvault.search import access, said_join
from memvault.search.hits import Hit
from memvault.search.index import links, store
from memvault.search.said_store import NO_TEXT, Occurrences, SaidStore, connect, text_key
from memvault.sqlutil import in_chunks

log = logging.getLogger("memvault")


def attach(conn: sqlite3.Connection, root: Path, config: Config, hits: list[Hit], at: datetime) -> None:
    """Put each hit's `retention` at `at` into its JSON shape (`Hit.entry`)."""
    events = [h.event for h in hits if h.event is not None]
    if not events:
        return
    threshold = float(config.section("curate", CURATE_DEFAULTS)["similarity"])
    try:
        later = IndexSaid(conn, Path(root), threshold).later(events)
    except (sqlite3.OperationalError, OSError) as exc:  # read-only, locked too long: the search still answers
        log.warning("the said-again pairs could not be read (%s): search shows no retention", exc)
        return
    ids = {e.id for e in events}
    supersedes, reconfirms, involved = links.edges_for(conn, ids)
    wanted = (involved | {i for found in later.values() for i in found}) - ids
    timeline = Timeline([*events, *store.load_ids(conn, wanted)], config, edges=(supersedes, reconfirms))
    timeline.recalls = {i: a.count for i, a in access.stats(root).items()}
    timeline.said_again_source = lambda _tl: Known(later)
    for h in hits:
        if h.event is not None:
            h.entry["retention"] = timeline.retention(h.event, at).to_dict()


class Known:
    """Said-again answers found beforehand, by id."""

    def __init__(self, later: dict[str, list[str]]):
        self.later = later

    def of(self, event: Event) -> list[str]:
        return self.later.get(event.id, [])


Row = tuple[str, float | None, str, int, str]  # id, ts, file, line, content, as the index holds them
INCREMENTAL_FILES = 50  # at most this many changed files (or a fifth of all) are recorded one by one


def occurrences(rows: list[Row], shas: dict[str, str], *, first_only: bool) -> Occurrences:
    """The occurrence rows of index rows: each keyed by its text when retention counts it (dated,
    with text, and with `first_only` the first row of its id, as in a Timeline), else `NO_TEXT`.
    Texts come in time order (the order `SaidStore.sync` digests)."""
    ordered = sorted(rows, key=lambda r: (r[1] if r[1] is not None else NEVER.timestamp(), r[2], r[3]))
    first: set[str] = set()
    out: list[tuple[bytes, str, float | None, str, int]] = []
    texts: dict[bytes, str] = {}
    for eid, ts, file, line, content in ordered:
        counted = ts is not None and content and not content.isspace() and eid not in first
        if first_only:
            first.add(eid)
        key = text_key(content) if counted else NO_TEXT
        if counted:
            texts.setdefault(key, content)
        out.append((key, eid, ts, file, line))
    return Occurrences(out, shas, texts)


class IndexSaid:
    """The later entries saying the same as given entries, from the index's rows and the pairs."""

    def __init__(self, conn: sqlite3.Connection, root: Path, threshold: float):
        self.conn = conn
        self.root = root
        self.threshold = threshold

    def state(self) -> str:
        meta = store.get_meta(self.conn)
        return f"{meta.get('last_update', '')} {meta.get('next_rowid', '')} {meta.get('fingerprint', '')}"

    def later(self, events: list[Event]) -> dict[str, list[str]]:
        state = self.state()
        said = connect(self.root)
        try:
            row = said.execute("SELECT value FROM meta WHERE key = 'index_state'").fetchone()
            if row is None or row[0] != state:
                said.close()
                self._sync(state)
                said = connect(self.root)
            return {e.id: self._later_one(said, e) for e in events}
        finally:
            said.close()

    def _sync(self, state: str) -> None:
        """Record which entries hold which texts: only the files that changed since the last
        record (a write changes one), or all of them when many changed or an id is held twice."""
        said = SaidStore(self.root, self.threshold)
        shas = dict(self.conn.execute("SELECT path, sha256 FROM files").fetchall())
        seen = said.seen_files()
        changed = sorted(p for p, sha in shas.items() if seen.get(p) != sha)
        gone = [p for p in seen if p not in shas]
        if seen and len(changed) + len(gone) <= max(INCREMENTAL_FILES, len(shas) // 5):
            rows = self._rows(changed)
            if said.update_files(occurrences(rows, {p: shas[p] for p in changed}, first_only=False), gone, state):
                return
        occ = occurrences(self._rows(None), shas, first_only=True)
        said.sync(list(dict.fromkeys(occ.texts.values())), occ, state)

    def _rows(self, files: list[str] | None) -> list[Row]:
        sql = "SELECT id, ts, file, line, coalesce(json_extract(data, '$.content'), '') FROM events"
        if files is None:
            return self.conn.execute(sql).fetchall()
        out: list[Row] = []
        for chunk, marks in in_chunks(files):
            out += self.conn.execute(f"{sql} WHERE file IN ({marks})", chunk).fetchall()
        return out

    def _later_one(self, said: sqlite3.Connection, event: Event) -> list[str]:
        if event.timestamp is None or not event.content or event.content.isspace():
            return []
        row = said.execute("SELECT hid FROM texts WHERE key = ?", (text_key(event.content),)).fetchone()
        if row is None:
            return []
        hid = row[0]
        partners = [b for (b,) in said.execute("SELECT b FROM pairs WHERE a = ?", (hid,))]
        if said_join.self_same(signature(event.content), self.threshold):
            partners.append(hid)
        ts = event.timestamp.timestamp()
        found = []
        for chunk, marks in in_chunks(partners):
            found += said.execute(f"SELECT o.ts, o.file, o.line, o.id FROM texts t JOIN occ o ON o.key = t.key "
                                  f"WHERE t.hid IN ({marks}) AND o.ts > ?", (*chunk, ts)).fetchall()
        return [eid for _, _, _, eid in sorted(found) if eid != event.id]
