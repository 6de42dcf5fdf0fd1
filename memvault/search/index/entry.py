"""One entry, by id or by cited place, answered from the index: what `Vault.show` gives, fast.

`Vault.show` parses the whole vault to build one timeline (3-4 s on 100k entries); an agent's
`get` must not. The entry named is read from the index's rows (its file brought up to date in
the index first, so the answer is that file as it is on disk), and so are the few entries its
JSON shape depends on: the entries that supersede or reconfirm it and those it points at (the
index's resolved edges, as search uses them), the later entries saying the same (the stored
pairs, `said_hits`), the curated bullets citing it and, for every bullet involved, the entries
its sources can resolve to (so `source_ids`, `cited_by` and a bullet's start are those of the
whole vault). Status asks maintain's record by the index's rule (`forgetting.index_forgotten`),
as search does. Whatever this cannot answer exactly (an id's start, a description, a duplicate
id, a file held back, a name that finds nothing) is None: the caller asks `Vault.show`.
`tests/test_show_fast.py` holds both answers equal.
"""

from __future__ import annotations

import os
import sqlite3
from datetime import datetime, tzinfo
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any

from memvault.config.curate import DEFAULTS as CURATE_DEFAULTS
from memvault.entries.lookup import at_place, place
from memvault.entries.model import Event
from memvault.entries.timeline import Timeline
from memvault.layout import MEMORY_FILE
from memvault.search import access
from memvault.search.index import links, store
from memvault.search.index.forgetting import index_forgotten

if TYPE_CHECKING:
    from memvault.search.index.core import Index

__all__ = ["show"]

MAX_POOL_ROUNDS = 4  # bullets found through a block's pool bring their own pools: a few rounds suffice


def show(index: Index, ref: str, at: datetime, *, record: bool = True, retention: bool = True,
         ) -> dict[str, Any] | None:
    """`Vault.show(ref)` at `at` from the index, or None when only a parse of the vault can tell;
    without its `retention` unless asked (the said-again pairs are read again after an index change)."""
    index.ensure()
    conn, _ = index.reader()
    named = _named(index, conn, ref)
    if named is None:
        return None
    if _stale(index, conn, named[0].file):  # the watcher has not seen the latest save yet
        index.update([named[0].file])
        conn, _ = index.reader()
        named = _named(index, conn, ref)
        if named is None:
            return None
    event, how = named
    conn.execute("BEGIN")  # one snapshot: a concurrent update renumbers rows
    try:
        if record:  # a fetch is a recall, counted before the retention it shows (as `Vault.show`)
            access.record(index.vault.root, [event.id])
        shape = _shape(index, conn, event, at, retention)
    finally:
        conn.execute("COMMIT")
    if shape is None:
        return None
    return shape | {"found_by": {"how": how, "given": ref, "why": None}}


def _named(index: Index, conn: sqlite3.Connection, ref: str) -> tuple[Event, str] | None:
    """The event `ref` names by its id or a place, when it is the only one with its id."""
    rows = store.load_events(conn, "id = ?", (ref,))
    how = "id"
    if not rows:
        where = place(ref)
        if where is None:
            return None
        rel = _indexed_file(index, conn, where[0])
        if rel is None:
            return None
        found = at_place([e for _, e in store.events_of_files(conn, [rel])], rel, where[1], where[2])
        if found is None:
            return None
        rows, how = store.load_events(conn, "id = ?", (found.id,)), "place"
    if len(rows) != 1 or store.held_files(conn).get(rows[0][1].file):
        return None
    return rows[0][1], how


def _indexed_file(index: Index, conn: sqlite3.Connection, given: str) -> str | None:
    """The vault-relative path a place's file names, as `lookup` reads it, if the index has it."""
    path = PurePosixPath(given)
    root = PurePosixPath(index.vault.root.as_posix())
    if path.is_absolute() and path.is_relative_to(root):
        path = path.relative_to(root)
    rel = path.as_posix()
    for candidate in (rel, f"memory/{rel}"):
        if store.file_states(conn, [candidate]):
            return candidate
    return None


def _stale(index: Index, conn: sqlite3.Connection, rel: str) -> bool:
    seen = store.file_states(conn, [rel]).get(rel)
    try:
        st = os.stat(index.vault.root / rel, follow_symlinks=False)
    except OSError:
        return True
    return seen is None or (seen[0], seen[1]) != (st.st_size, st.st_mtime_ns)


def _shape(index: Index, conn: sqlite3.Connection, event: Event, at: datetime, retention: bool,
           ) -> dict[str, Any] | None:
    from memvault.search.said_hits import IndexSaid, Known

    vault = index.vault
    supersedes, reconfirms, involved = links.edges_for(conn, {event.id})
    for src, kind, target in conn.execute("SELECT src, kind, target FROM refs WHERE src = ? AND target IS NOT NULL",
                                          (event.id,)):
        if kind == "s":
            supersedes[src] = target
        else:
            reconfirms.append((src, target))
        involved.add(target)
    threshold = float(vault.config.section("curate", CURATE_DEFAULTS)["similarity"])
    later: dict[str, list[str]] = {event.id: []}
    try:
        if retention:
            later = IndexSaid(conn, vault.root, threshold).later([event])
    except (sqlite3.OperationalError, OSError):  # the pairs cannot be read: the slow path says why
        return None
    wanted = (involved | set(later[event.id])) - {event.id}
    events = _with_citations(conn, [event, *store.load_ids(conn, wanted)])
    for e in events:
        _zoned(e, vault.config.tz)
    timeline = Timeline(events, vault.config, edges=(supersedes, reconfirms))
    if vault.forgotten:
        timeline.forgotten = index_forgotten(conn, vault.forgotten.records, vault.config)
    timeline.recalls = {i: a.count for i, a in access.stats(vault.root, [event.id]).items()}
    timeline.said_again_source = lambda _tl: Known(later)
    shape = timeline.to_dict(event, at)
    if retention:
        shape["retention"] = timeline.retention(event, at).to_dict()
    return shape


def _zoned(event: Event, tz: tzinfo) -> None:
    """Its times in the vault's zone, as a parse gives them: the index stores a fixed offset, and
    the difference of two times in one zone is wall-clock time (an hour off across a DST change)."""
    for name in store.DATETIME_FIELDS:
        when = getattr(event, name)
        if when is not None and when.tzinfo is not tz:
            setattr(event, name, when.astimezone(tz))


def _with_citations(conn: sqlite3.Connection, events: list[Event]) -> list[Event]:
    """`events` plus the curated bullets that may cite one of them and, for every bullet among
    them, every entry its sources can resolve to (a day's entries, a block's holders)."""
    have = {(e.file, e.line): e for e in events}
    scopes = set().union(*(links.event_scopes(e) for e in events))
    # Curated bullets are MEMORY.md's alone (parsed.parse_text): its rows, by the file's index.
    for _, bullet in store.load_events(conn, "file = ? AND kind = 'curated'", (MEMORY_FILE,)):
        if bullet.sources and (bullet.file, bullet.line) not in have and source_scopes(bullet) & scopes:
            have[(bullet.file, bullet.line)] = bullet
    done: set[tuple[str, int]] = set()
    for _ in range(MAX_POOL_ROUNDS):
        todo = [e for key, e in have.items() if e.kind == "curated" and e.sources and key not in done]
        if not todo:
            break
        for bullet in todo:
            done.add((bullet.file, bullet.line))
            for e in links.scope_pool(conn, source_scopes(bullet)).values():
                have.setdefault((e.file, e.line), e)
    return list(have.values())


def source_scopes(bullet: Event) -> set[str]:
    """What the resolution of a bullet's `(sources: ...)` depends on (`Timeline._cited_ids`)."""
    out: set[str] = set()
    for src in bullet.sources:
        out |= links.ref_scopes(src if src.startswith("[[") else f"[[{src}]]", bullet)
    return out - {f"id:{bullet.id}"}
