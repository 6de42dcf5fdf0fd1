"""Supersession and reconfirmation edges in the index, kept equal to a fresh `Timeline`.

A reference (`Supersedes: belief about Friday updates from 2026-02-14`) resolves against the
entries of a date, an id or a block id, so its answer can change when another file changes.
Each reference is stored with the *scopes* its resolution depends on (`id:X`, `day:D`,
`block:B`, or `all` for an undated description). When files change, only references whose
scopes touch the changed events are resolved again, by `EventIndex.resolve` over exactly
the events in those scopes, which gives the answer a resolution over the whole vault gives.
Cycles make the answer depend on processing order, and a curated bullet that cites its
superseder as a source is not superseded by it (a rule that looks at other files); while either
case exists, the whole graph is recomputed with `Timeline` itself.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

from memvault.config.core import Config
from memvault.entries.markdown import link_parts
from memvault.entries.model import Event
from memvault.entries.timeline import DATE_RE, ID_SPACE_RE, LINK_RE, EventIndex, Timeline, sort_key
from memvault.search.index import store
from memvault.sqlutil import CHUNK, in_chunks

CYCLE = "cycle"
# Answers that depend on more than the reference's scopes: a cycle (processing order) or a
# curated bullet that cites its superseder as a source (the bullet's sources resolve against
# other files). While any reference has one of these, every update recomputes the graph.
WHOLE_GRAPH = (CYCLE, "cites")


def ref_scopes(ref: str, src: Event) -> set[str]:
    """What the resolution of `ref` written in `src` depends on (mirrors EventIndex.resolve)."""
    scopes = {f"id:{src.id}"}  # only the first entry with an id has its references used
    ref = ref.strip()
    if not ref:
        return scopes
    scopes.add(f"id:{ref}")
    m = ID_SPACE_RE.match(ref)
    if m:
        scopes.add(f"id:{m[1]}T{int(m[2].split(':')[0]):02d}:{m[2].split(':')[1]}{m[3] or ''}")
        return scopes
    link = LINK_RE.match(ref)
    if link:
        page, anchor = link_parts(link[1])
        scopes.add(f"block:{anchor[1:]}" if anchor.startswith("^") else f"day:{page}")
        return scopes
    if ref.startswith("^"):
        scopes.add(f"block:{ref[1:]}")
        return scopes
    date = DATE_RE.search(ref)
    scopes.add(f"day:{date[1]}" if date else "all")
    return scopes


def event_scopes(ev: Event) -> set[str]:
    """The scopes an event belongs to: changing it can change references in these scopes."""
    out = {f"id:{ev.id}"} | {f"block:{b}" for b in ev.block_ids}
    day = store.event_day(ev)
    if day:
        out.add(f"day:{day}")
    return out


def _refs(ev: Event) -> list[tuple[str, str]]:
    out = [("s", ev.supersedes)] if ev.supersedes else []
    return out + [("r", r) for r in ev.reconfirms]


# ------------------------------------------------------------------------------ full


def recompute_all(conn: sqlite3.Connection, events: list[tuple[int, Event]] | None = None,
                  config: Config | None = None) -> None:
    """Resolve every reference with a real Timeline over all indexed events."""
    if events is None:
        events = store.load_events(conn)
    timeline = Timeline([e for _, e in events], config)
    conn.execute("DELETE FROM refs")
    conn.execute("DELETE FROM ref_scopes")
    ref_rows, scope_rows = [], []
    for rowid, ev in events:
        refs = _refs(ev)
        if not refs:
            continue
        canonical = timeline.by_id.get(ev.id) is ev
        for kind, ref in refs:
            target, problem = None, None
            if canonical:
                target, problem = _full_target(timeline, ev, kind, ref)
            ref_rows.append((rowid, ev.id, kind, ref, target, problem))
            scope_rows += [(s, rowid) for s in ref_scopes(ref, ev)]
    conn.executemany("INSERT INTO refs VALUES (?,?,?,?,?,?)", ref_rows)
    conn.executemany("INSERT INTO ref_scopes VALUES (?,?)", scope_rows)


def _full_target(tl: Timeline, ev: Event, kind: str, ref: str) -> tuple[str | None, str | None]:
    res = tl.index.resolve(ref, ev)
    if kind == "s":
        accepted = tl.supersedes.get(ev.id)
        target = accepted or (res.target if res.ok and res.target != ev.id else None)
        old = tl.by_id.get(target) if target else None
        if old is not None and old.kind == "curated" and old.sources:
            return accepted, "cites"
        if accepted:
            return accepted, None
        if target:
            return None, CYCLE
        return None, res.reason or "self"
    return (res.target, None) if res.ok else (None, res.reason or "unresolved")


# ------------------------------------------------------------------------------ incremental


def update(conn: sqlite3.Connection, removed: list[tuple[int, Event]], added: list[Event],
           added_rowids: Iterable[int], config: Config | None = None) -> None:
    """Re-resolve what the removed and added events can affect; rows of removed events
    must already be gone from `events`, those of added ones present."""
    scopes = set().union(set(), *(event_scopes(e) for e in [e for _, e in removed] + added))
    _delete_refs(conn, [r for r, _ in removed])
    if conn.execute("SELECT 1 FROM refs WHERE problem IN (?, ?) LIMIT 1", WHOLE_GRAPH).fetchone():
        recompute_all(conn, config=config)
        return
    srcs = set(added_rowids)
    wanted = sorted(scopes | {"all"})
    for chunk, marks in in_chunks(wanted):
        srcs.update(r for (r,) in conn.execute(f"SELECT src_rowid FROM ref_scopes WHERE scope IN ({marks})", chunk))
    if not srcs:
        return
    sources = store.load_rowids(conn, sorted(srcs))
    _delete_refs(conn, list(sources))
    ref_rows, scope_rows = [], []
    for rowid, ev in sources.items():
        refs = _refs(ev)
        if not refs:
            continue
        canonical = _is_canonical(conn, rowid, ev)
        for kind, ref in refs:
            s = ref_scopes(ref, ev)
            target, problem = _resolve(conn, s, rowid, ev, ref, kind) if canonical else (None, "duplicate id")
            ref_rows.append((rowid, ev.id, kind, ref, target, problem))
            scope_rows += [(x, rowid) for x in s]
    conn.executemany("INSERT INTO refs VALUES (?,?,?,?,?,?)", ref_rows)
    conn.executemany("INSERT INTO ref_scopes VALUES (?,?)", scope_rows)
    if any(problem in WHOLE_GRAPH or _closes_cycle(conn, src, target)
           for _, src, kind, _, target, problem in ref_rows if kind == "s" and target):
        recompute_all(conn, config=config)


def _delete_refs(conn: sqlite3.Connection, rowids: list[int]) -> None:
    for chunk, marks in in_chunks(rowids):
        conn.execute(f"DELETE FROM refs WHERE src_rowid IN ({marks})", chunk)
        conn.execute(f"DELETE FROM ref_scopes WHERE src_rowid IN ({marks})", chunk)


def _is_canonical(conn: sqlite3.Connection, rowid: int, ev: Event) -> bool:
    rows = store.load_events(conn, "id = ?", (ev.id,))
    if len(rows) <= 1:
        return True
    first = min(rows, key=lambda pair: sort_key(pair[1]))
    return first[0] == rowid


def _resolve(conn: sqlite3.Connection, scopes: set[str], rowid: int, ev: Event, ref: str,
             kind: str) -> tuple[str | None, str | None]:
    pool = scope_pool(conn, scopes)
    pool[rowid] = ev  # the very object: resolution leaves its own source out by identity
    index = EventIndex(sorted(pool.values(), key=sort_key))
    res = index.resolve(ref, ev)
    if not res.ok:
        return None, res.reason or "unresolved"
    if kind == "s" and res.target == ev.id:
        return None, "self"
    if kind == "s":
        old = next((e for e in pool.values() if e.id == res.target), None)
        if old is not None and old.kind == "curated" and old.sources:
            return res.target, "cites"  # decided by recompute_all
    return res.target, None


def scope_pool(conn: sqlite3.Connection, scopes: set[str]) -> dict[int, Event]:
    if "all" in scopes:
        return dict(store.load_events(conn))
    clauses, args = [], []
    for scope in scopes:
        kind, _, value = scope.partition(":")
        if kind == "id":
            clauses.append("id = ?")
            args.append(value)
        elif kind == "day":
            clauses.append("day = ?")
            args.append(value)
        elif kind == "block":
            clauses.append("blocks LIKE ? ESCAPE '\\'")
            args.append("%|" + value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "|%")
    return dict(store.load_events(conn, " OR ".join(clauses), tuple(args))) if clauses else {}


def _closes_cycle(conn: sqlite3.Connection, src: str, target: str) -> bool:
    node: str | None = target
    seen: set[str] = set()
    while node is not None and node not in seen:
        if node == src:
            return True
        seen.add(node)
        row = conn.execute("SELECT target FROM refs WHERE src = ? AND kind = 's' AND target IS NOT NULL", (node,)).fetchone()
        node = row[0] if row else None
    return False


# ------------------------------------------------------------------------------ queries


def edges_for(conn: sqlite3.Connection, ids: set[str]) -> tuple[dict[str, str], list[tuple[str, str]], set[str]]:
    """Edges touching `ids`, following superseders to the end of their chains.

    Returns (supersedes new->old, reconfirm pairs, every id involved)."""
    supersedes: dict[str, str] = {}
    reconfirms: list[tuple[str, str]] = []
    involved = set(ids)
    todo = set(ids)
    while todo:
        chunk = list(todo)[:CHUNK]
        todo -= set(chunk)
        marks = ",".join("?" * len(chunk))
        for src, kind, target in conn.execute(
            f"SELECT src, kind, target FROM refs WHERE target IN ({marks})", chunk
        ):
            if kind == "s":
                supersedes[src] = target
                if src not in involved:
                    involved.add(src)
                    todo.add(src)
            else:
                reconfirms.append((src, target))
                involved.add(src)
    return supersedes, reconfirms, involved
