"""Recorded QUERY's stored postings (history.postings) score exactly as the in-memory search."""

from __future__ import annotations

import random
import sqlite3
import zlib
from datetime import timedelta

from memvault.history.postings import PostingStore, StoredSearch, store_fingerprint
from memvault.history.recorded_search import StateSearch
from memvault.search.textproc import parse_query
from memvault.search.weights import Weights
from memvault.vault import Vault

from .helpers_history import build_history
from .test_history_sweep import GIT_ENV, git

QUERIES = ["alpha bravo", "charlie", '"delta echo"', "golf-hotel", "type:belief kilo", "zulu", "nothing-here"]


def stored_search(vault: Vault) -> StoredSearch:
    past = vault.past
    assert past.recorded_index is not None
    search = past.stored_search(past.recorded_index)
    assert isinstance(search, StoredSearch)
    return search


def check_scores(vault: Vault, search: StoredSearch, rng: random.Random) -> None:
    index = vault.past.recorded_index
    memory = StateSearch(Weights.from_config(vault.config))
    for c, commit in enumerate(index.commits.commits):
        keys = [(path, index.keys[vid][1]) for path, vid in index.present(c).items()]
        parsed = vault.past.loader.events_of(keys)
        for at in (commit.date, commit.date - timedelta(hours=20)):  # some files partly after T
            for text in rng.sample(QUERIES, 3):
                q = parse_query(text)
                want = {id(ev): s for ev, s in memory.scores([(k, parsed[k]) for k in keys], q, at)}
                got = {id(ev): s for ev, s in search.scores([(k, None) for k in keys], q, at)}
                assert got == want, (c, text)


def test_stored_postings_score_as_the_in_memory_search_at_every_commit(tmp_path, monkeypatch):
    for k, v in GIT_ENV.items():
        monkeypatch.setenv(k, v)
    hist = build_history(tmp_path / "h", 51, steps=20)
    vault = Vault.open(hist.root)
    check_scores(vault, stored_search(vault), random.Random(1))
    # a new process reads them from disk instead of analysing
    again = Vault.open(hist.root)
    search = stored_search(again)
    assert search.store.analysed_in == 0.0 and search.store.covered == len(again.past.recorded_index.keys)
    check_scores(again, search, random.Random(2))


def canonical(root) -> dict:
    with sqlite3.connect(root / ".memvault" / "history.sqlite") as db:
        meta = dict(db.execute("SELECT name, data FROM postings_meta"))
        rows = [(t, *(zlib.decompress(b) for b in blobs)) for t, *blobs in db.execute("SELECT term, vid, doc, freq FROM postings")]
    return {"meta": {k: v for k, v in meta.items() if k != "meta"}, "rows": sorted(rows)}


def test_new_commits_extend_the_store_as_a_fresh_build_would(tmp_path, monkeypatch):
    for k, v in GIT_ENV.items():
        monkeypatch.setenv(k, v)
    hist = build_history(tmp_path / "h", 52, steps=24)
    root = hist.root
    head = git(root, "rev-parse", "HEAD")
    git(root, "reset", "-q", "--hard", "HEAD~8")
    first = stored_search(Vault.open(root))
    covered = first.store.covered
    git(root, "reset", "-q", "--hard", head)
    vault = Vault.open(root)
    search = stored_search(vault)
    assert search.store.covered > covered
    check_scores(vault, search, random.Random(3))
    extended = canonical(root)
    with sqlite3.connect(root / ".memvault" / "history.sqlite") as db:
        db.execute("DELETE FROM postings_meta")
    fresh = stored_search(Vault.open(root))
    assert fresh.store.covered == search.store.covered
    assert canonical(root) == extended


def test_a_renumbered_index_makes_the_store_start_over(tmp_path, monkeypatch):
    for k, v in GIT_ENV.items():
        monkeypatch.setenv(k, v)
    hist = build_history(tmp_path / "h", 53, steps=10)
    vault = Vault.open(hist.root)
    index = vault.past.recorded_index
    weights = Weights.from_config(vault.config)
    db = vault.past.loader.cache.connection()
    store = PostingStore(db, store_fingerprint(vault.past.loader.cache.fingerprint(), weights))
    store.ensure(index, weights)
    assert store.analysed_in > 0
    index.keys.reverse()  # as a rebuilt index numbering the versions differently would
    again = PostingStore(db, store.fingerprint)
    again.ensure(index, weights)
    assert again.analysed_in > 0 and again.covered == len(index.keys)


def test_a_store_written_by_another_process_meanwhile_is_read_not_overwritten(tmp_path, monkeypatch):
    for k, v in GIT_ENV.items():
        monkeypatch.setenv(k, v)
    hist = build_history(tmp_path / "h", 54, steps=8)
    vault = Vault.open(hist.root)
    index = vault.past.recorded_index
    weights = Weights.from_config(vault.config)
    mark = store_fingerprint(vault.past.loader.cache.fingerprint(), weights)
    other = sqlite3.connect(hist.root / ".memvault" / "history.sqlite", isolation_level=None)
    mine = PostingStore(vault.past.loader.cache.connection(), mark)
    read, busy = index.loader.events_of, []

    def read_while_another_process_stores(keys):
        if not busy:  # while we read the versions to analyse, another process stores everything
            busy.append(keys)
            PostingStore(other, mark).ensure(index, weights)
        return read(keys)

    monkeypatch.setattr(index.loader, "events_of", read_while_another_process_stores)
    mine.ensure(index, weights)
    assert mine.covered == len(index.keys) and mine.analysed_in == 0.0  # read theirs, wrote nothing
    search = StoredSearch(weights, mine, index)
    check_scores(vault, search, random.Random(5))
