"""The pure pieces: analyzer, query parser, ranking parts and the in-memory ranker."""

from __future__ import annotations

import math
import os
from datetime import timedelta

import pytest

from memvault.config.core import Config
from memvault.layout import iter_markdown
from memvault.search.index import open_index
from memvault.search.index.files import scan as _scan
from memvault.search.rank import rank_events
from memvault.search.snippets import snippet
from memvault.search.textproc import analyze, fold, parse_query
from memvault.search.weights import Weights, recency
from memvault.vault import Vault

from .helpers_index import at, entry, make_vault, write_log

NOW = at("2026-03-01T12:00")


def test_analyzer_folds_stems_and_splits_cjk():
    assert analyze("Updates UPDATED updating") == ["updat", "updat", "updat"]
    assert analyze("Café NAÏVE Straße") == ["cafe", "naiv", "strass"]
    assert analyze("O'Brien's dog; don't") == ["obrien", "dog", "dont"]
    assert analyze("東京タワー") == ["東京", "京タ", "タワ", "ワー"]
    assert analyze("ADR-016 C++ 2026-02-14T14:30") == ["adr", "016", "c", "2026", "02", "14t14", "30"]
    assert analyze("") == [] and analyze("!!! --- ***") == []
    assert fold("Ångström") == "angstrom"


def test_query_parser():
    q = parse_query('When did "dark mode" start? type:Belief tag:ui #work ADR-016')
    assert q.phrases == [("dark", "mode")]
    assert q.compounds == [("adr", "016")]
    assert q.terms == ["start", "adr", "016"]  # stopwords (when, did) dropped
    assert q.types == ["belief"] and q.tags == ["ui", "work"]
    assert parse_query("the of and").terms == ["the", "of", "and"]  # nothing but stopwords: keep
    assert parse_query("tag:").empty and parse_query('"').empty and parse_query("").empty
    assert parse_query("#infra").terms == ["infra"] and parse_query("#infra").tags == ["infra"]


def test_recency_and_weights():
    assert recency(NOW, None, NOW, 0.01) == 1.0
    assert recency(NOW - timedelta(hours=100), None, NOW, 0.01) == pytest.approx(math.exp(-1))
    # the later of written and last access counts, but never an access after `at`
    assert recency(NOW - timedelta(hours=100), NOW - timedelta(hours=1), NOW, 0.01) == pytest.approx(math.exp(-0.01))
    assert recency(NOW - timedelta(hours=100), NOW + timedelta(hours=1), NOW, 0.01) == pytest.approx(math.exp(-1))
    assert recency(None, None, NOW, 0.01) == 0.0
    cfg = Config.from_dict({"search": {"relevance": 1, "recency": 0, "field_weights": {"body": 3}}})
    w = Weights.from_config(cfg)
    assert (w.relevance, w.recency, w.field_weights[1], w.field_weights[0]) == (1.0, 0.0, 3.0, 2.0)


def test_snippet_marks_matches_in_a_window():
    text = "intro " * 60 + "the Friday updates moved to Monday " + "outro " * 60
    out = snippet(text, {"friday", "monday"})
    assert "**Friday**" in out and "**Monday**" in out
    assert out.startswith("\u2026") and out.endswith("\u2026") and len(out) < 220
    assert snippet("no match here", {"zzz"}) == "no match here"


def test_rank_events_matches_the_index(vault_dir):
    vault = make_vault(vault_dir)
    write_log(vault.root, "2026-02-14", entry("10:00", "Belief", "Team standup is at nine"),
              entry("11:00", "Observation", "Coffee machine broke"))
    write_log(vault.root, "2026-02-20", entry("09:00", "Correction", "Team standup moved to ten",
                                              supersedes="belief about standup from 2026-02-14"),
              entry("10:00", "Observation", "Standup notes shared", importance="high"))
    vault = Vault.open(vault.root)
    for query in ("standup nine", "standup", "coffee standup", '"standup moved"'):
        for when in (NOW, at("2026-02-15T00:00")):
            mem = rank_events(vault.events, query, vault.timeline, when, include_all=True)
            with open_index(vault) as index:
                idx = index.search(query, at=when, include_all=True, record_access=False)
            assert [h.id for h in mem] == [h.id for h in idx], (query, when)
            assert [h.status for h in mem] == [h.status for h in idx]
    # as of before the correction the old belief is live and ranks first
    early = rank_events(vault.events, "standup nine", vault.timeline, at("2026-02-15T00:00"))
    assert early[0].id == "2026-02-14T10:00" and early[0].status == "live"
    late = rank_events(vault.events, "standup nine", vault.timeline, NOW)
    assert late[0].id == "2026-02-20T09:00"
    assert "2026-02-14T10:00" not in [h.id for h in late]


def test_fast_scan_lists_what_iter_markdown_lists(vault_dir):
    root = vault_dir
    for rel in ("MEMORY.md", "memory/2026-01-01.md", "memory/a/b/2026-01-02.md", "memory/.hidden/x.md",
                "memory/node_modules/y.md", "memory/notes.txt", "memory/.dot.md", "other/2026-01-03.md"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("x")
    (root / "memory/dir.md").mkdir()
    os.symlink(root / "memory/a", root / "memory/link")
    assert sorted(_scan(root)) == sorted(iter_markdown(root))
