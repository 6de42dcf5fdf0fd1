"""Retention for search hits, without parsing the vault: what `memvault search` prints.

A hit's retention counts its reconfirmations (the index's edges) and the later entries that say
the same (the stored pairs, said_store.py). Search reads no Markdown, so the entries holding each
text are read from the index's own rows, once per index state: `said.sqlite` keeps them
(`occ`) with the index's `last_update`/`next_rowid`, which every index update changes. A
search of an unchanged index reads a few rows per hit; the first after an update reads the
index's texts again (about 0.5 s on 100k entries; docs/performance.md).
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
from memvault.search.said_store import Occurrence, SaidStore, connect, text_key

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
        rows = self.conn.execute(
            "SELECT id, ts, file, line, coalesce(json_extract(data, '$.content'), '') FROM events").fetchall()
        rows.sort(key=lambda r: (r[1] if r[1] is not None else NEVER.timestamp(), r[2], r[3]))
        first: dict[str, Occurrence] = {}
        for r in rows:  # the first entry of an id is the one that counts, as in a Timeline
            first.setdefault(r[0], r)
        corpus = [r for r in first.values() if r[1] is not None and r[4] and not r[4].isspace()]
        corpus.sort(key=lambda r: (r[1], r[2], r[3]))
        SaidStore(self.root, self.threshold).sync(list(dict.fromkeys(r[4] for r in corpus)), corpus, state)

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
        for chunk_start in range(0, len(partners), 500):
            chunk = partners[chunk_start:chunk_start + 500]
            marks = ",".join("?" * len(chunk))
            found += said.execute(f"SELECT ts, file, line, id FROM occ WHERE hid IN ({marks}) AND ts > ?",
                                  (*chunk, ts)).fetchall()
        return [eid for _, _, _, eid in sorted(found) if eid != event.id]
