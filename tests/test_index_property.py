"""Property: after any sequence of file writes and deletes plus `update`, the index holds
exactly what a fresh parse of the files gives (events and resolved supersession graph)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memvault.search.index import open_index, store
from memvault.search.index.files import docs_by_file
from memvault.search.textproc import parse_query

from .helpers_index import fresh, make_vault

DAYS = ["2026-01-01", "2026-01-02", "2026-01-03"]
FILES = [f"memory/{d}.md" for d in DAYS] + ["MEMORY.md", "memory/sub/2026-01-04.md"]
WORDS = ["coffee", "tea", "monday", "friday", "dark", "light", "atlas", "deploy"]
TIMES = ["09:00", "09:30", "10:00"]

refs = st.one_of(
    st.builds(lambda d, t: f"{d}T{t}", st.sampled_from(DAYS), st.sampled_from(TIMES)),
    st.builds(lambda d, t: f"[[{d}#{t}]]", st.sampled_from(DAYS), st.sampled_from(TIMES)),
    st.builds(lambda w, d: f"belief about {w} from {d}", st.sampled_from(WORDS), st.sampled_from(DAYS)),
    st.builds(lambda w: f"the {w} one", st.sampled_from(WORDS)),
    st.sampled_from(["^blk", "[[#^blk]]", "custom-1", "custom-2"]),
)


@st.composite
def log_entry(draw) -> str:
    lines = [f"## {draw(st.sampled_from(TIMES))} - {draw(st.sampled_from(['Observation', 'Belief', 'Correction']))}"]
    text = " ".join(draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=4)))
    if draw(st.booleans()) and draw(st.booleans()):
        text += " ^blk"
    lines.append(text)
    if draw(st.booleans()):
        lines.append(f"Supersedes: {draw(refs)}")
    if draw(st.integers(0, 4)) == 0:
        lines.append(f"Reconfirms: {draw(refs)}")
    if draw(st.integers(0, 4)) == 0:
        lines.append(f"Id: {draw(st.sampled_from(['custom-1', 'custom-2']))}")
    return "\n".join(lines) + "\n"


@st.composite
def file_text(draw, rel: str) -> str:
    if rel == "MEMORY.md":  # bullets may cite log entries as sources (curate's rule)
        bullets = draw(st.lists(st.tuples(st.sampled_from(WORDS), st.one_of(st.none(), refs)), max_size=3))
        return "# Memory\n\n## Preferences\n" + "".join(
            f"- likes {w}" + (f" (source: [[{src.strip('[]')}]])" if src else "") + (" ^blk" if i == 0 else "") + "\n"
            for i, (w, src) in enumerate(bullets))
    return f"# {rel[-13:-3]}\n\n" + "\n".join(draw(st.lists(log_entry(), max_size=4)))


@st.composite
def operations(draw) -> list[tuple[str, str, str | None]]:
    ops = []
    for _ in range(draw(st.integers(1, 8))):
        kind = draw(st.sampled_from(["write", "write", "write", "delete", "update", "update_paths"]))
        rel = draw(st.sampled_from(FILES))
        ops.append((kind, rel, draw(file_text(rel)) if kind == "write" else None))
    return ops


def run(backend: str, ops) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        vault = make_vault(root)
        pending: set[str] = set()
        with open_index(vault, backend) as index:
            index.update()
            for kind, rel, text in ops:
                path = root / rel
                if kind == "write":
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.write_text(text or "")
                    pending.add(rel)
                elif kind == "delete":
                    if path.exists():
                        os.unlink(path)
                        pending.add(rel)
                elif kind == "update_paths":
                    index.update(sorted(pending))
                    pending.clear()
                    check(index, root)
                else:
                    index.update()
                    pending.clear()
                    check(index, root)
            index.update()
            check(index, root)


def check(index, root: Path) -> None:
    events, sup, rec = fresh(root)
    assert index.events() == events
    assert index.edges() == (sup, rec)
    check_text(index)
    check_terms(index)


def check_text(index) -> None:
    """The text engine finds exactly the documents holding each word: no stale postings."""
    conn, engine = index.reader()
    docs = docs_by_file(store.load_events(conn))
    for word in WORDS:
        q = parse_query(word)
        found = {r for r, _ in engine.search(q, 10**6)}
        assert found == {r for r, fields in docs if q.terms[0] in " ".join(fields).split()}


def check_terms(index) -> None:
    """The document frequencies search plans with stay those of the indexed documents."""
    conn, _ = index.reader()
    docs = docs_by_file(store.load_events(conn))
    expected = {t: n for t, n in store.count_terms(docs).items() if n}
    assert dict(conn.execute("SELECT term, docs FROM terms").fetchall()) == expected


def fast(n: int) -> settings:
    return settings(deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True,
                    max_examples=n, database=None)


@fast(120)
@given(operations())
def test_sqlite_index_equals_fresh_parse(ops):
    run("sqlite", ops)


@pytest.mark.slow
@fast(1500)
@given(operations())
def test_sqlite_index_equals_fresh_parse_long(ops):
    run("sqlite", ops)


@fast(12)
@given(operations())
def test_whoosh_index_equals_fresh_parse(ops):
    pytest.importorskip("whoosh")
    run("whoosh", ops)
