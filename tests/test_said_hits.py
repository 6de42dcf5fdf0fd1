"""Search's said-again answers (search/said_hits.py) follow the index file by file: after any
series of edits they equal the on-demand answers of a fresh parse (`presentations.SaidAgain`),
and a write re-reads only the files it changed."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memvault.config.curate import DEFAULTS as CURATE_DEFAULTS
from memvault.entries.presentations import SaidAgain
from memvault.search.index import open_index
from memvault.search.said_hits import IndexSaid
from memvault.search.said_store import FILE, SaidStore
from memvault.vault import Vault

from .helpers_index import entry, make_vault, write_log

FACTS = [
    "Lena's daughter Mia is allergic to peanuts, keep snacks nut-free",
    "Mia (Lena's daughter) is allergic to peanuts, snacks must be nut-free",
    "Mia is not allergic to peanuts any more",
    "Wir nehmen für das Backup die Hetzner Storage Box BX21, nicht S3",
    "Für das Backup nehmen wir die Hetzner Storage Box BX21 und nicht S3",
    "The coffee machine on floor 3 is broken, use the one on floor 2",
    "Coffee machine on floor 3 is broken again, use floor 2",
    "",
]
DAYS = [f"2026-03-{d:02d}" for d in range(1, 9)]
THRESHOLD = float(CURATE_DEFAULTS["similarity"])


def entries_of(picks: list[tuple[int, int, bool]]) -> list[str]:
    """Entries at 09:00, 10:00, ...; some carry an explicit `Id:` shared with other days."""
    out = []
    for n, (fact, hour, shared_id) in enumerate(picks):
        meta = {"id": f"shared-{hour % 2}"} if shared_id else {}
        out.append(entry(f"{9 + n:02d}:{hour:02d}", "Observation", FACTS[fact], **meta))
    return out


def index_answers(vault: Vault) -> dict[str, list[str]]:
    with open_index(vault) as index:
        index.update()
        conn, _ = index.reader()
        events = [e for e in vault.timeline.events if vault.timeline.by_id.get(e.id) is e]
        return IndexSaid(conn, vault.root, THRESHOLD).later(events)


def parsed_answers(vault: Vault) -> dict[str, list[str]]:
    tl = vault.timeline
    fresh = SaidAgain(tl)
    return {e.id: fresh.of(e) for e in tl.events if tl.by_id.get(e.id) is e}


edit = st.tuples(st.sampled_from(DAYS),
                 st.lists(st.tuples(st.integers(0, len(FACTS) - 1), st.integers(0, 59), st.integers(0, 9).map(lambda n: n == 0)),
                          max_size=4))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(edit, min_size=1, max_size=6))
def test_answers_follow_any_series_of_edits(tmp_path_factory, edits):
    root = tmp_path_factory.mktemp("said") / "vault"
    make_vault(root)
    for day, picks in edits:
        if picks:
            write_log(root, day, *entries_of(picks))
        else:
            (root / f"memory/{day}.md").unlink(missing_ok=True)
        vault = Vault.open(root)
        assert index_answers(vault) == parsed_answers(vault), (day, picks)
    shutil.rmtree(root)


def test_a_write_rereads_only_its_file(vault_dir, monkeypatch):
    root = vault_dir
    make_vault(root)
    for n, day in enumerate(DAYS):
        write_log(root, day, *entries_of([(n % 7, 0, False), ((n + 1) % 7, 30, False)]))
    vault = Vault.open(root)
    first = index_answers(vault)
    assert first == parsed_answers(vault)
    assert first["2026-03-01T09:00"][:2] == ["2026-03-01T10:30", "2026-03-02T09:00"]  # the peanuts, said again
    read: list[list[str] | None] = []
    original = IndexSaid._rows

    def counting(self: IndexSaid, files: list[str] | None) -> list:
        read.append(files)
        return original(self, files)

    monkeypatch.setattr(IndexSaid, "_rows", counting)
    write_log(root, "2026-03-20", entry("08:00", "Observation", FACTS[1]))
    vault = Vault.open(root)
    assert index_answers(vault) == parsed_answers(vault)
    assert read == [["memory/2026-03-20.md"]]  # not the whole index again
    assert "2026-03-20T08:00" in index_answers(vault)["2026-03-01T09:00"]
    # the stored record equals one made from nothing
    with sqlite3.connect(root / ".memvault" / FILE) as conn:
        kept = sorted(conn.execute("SELECT key, id, ts, file, line FROM occ").fetchall())
    (root / ".memvault" / FILE).unlink()
    read.clear()
    assert index_answers(Vault.open(root)) == parsed_answers(vault)
    assert read == [None]
    with sqlite3.connect(root / ".memvault" / FILE) as conn:
        assert sorted(conn.execute("SELECT key, id, ts, file, line FROM occ").fetchall()) == kept
    assert set(SaidStore(root, THRESHOLD).seen_files()) == {f"memory/{d}.md" for d in [*DAYS, "2026-03-20"]}


def test_an_id_held_twice_is_recorded_from_the_whole_index(vault_dir):
    root = vault_dir
    make_vault(root)
    write_log(root, DAYS[0], entry("09:00", "Observation", FACTS[0], id="mia"))
    write_log(root, DAYS[1], entry("09:00", "Observation", FACTS[0]))
    vault = Vault.open(root)
    assert index_answers(vault) == parsed_answers(vault)
    # the same id in a later file, saying the peanuts again: only the first copy of an id counts
    # (found by recording everything again), so it is not a repeat of the day before
    write_log(root, DAYS[2], entry("09:00", "Observation", FACTS[1], id="mia"),
              entry("10:00", "Observation", FACTS[6]))
    vault = Vault.open(root)
    assert index_answers(vault) == parsed_answers(vault)
    assert index_answers(vault)["2026-03-02T09:00"] == []
    Path(root / f"memory/{DAYS[0]}.md").unlink()  # now the later copy is the one
    vault = Vault.open(root)
    assert index_answers(vault) == parsed_answers(vault)
