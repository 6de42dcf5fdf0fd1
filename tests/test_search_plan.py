"""The common-terms cutoff (`rank.plan_query`) and the ranking shortcuts behind search.

Search scores only the rows that hold the query's rarer words when its words together occur
in more than `[search] score_limit` entries; those rows keep the score the plain query gives
them, and a search that finds too few hits that way scores every match. The vaults here set
a small limit so the cutoff applies to a handful of entries.
"""

from __future__ import annotations

import dataclasses
import sqlite3

import pytest

from memvault.search import access
from memvault.search.index import open_index, store
from memvault.search.index.files import docs_by_file
from memvault.search.plan import EXHAUSTIVE, Plan, plan_query
from memvault.search.rank import rank_events
from memvault.search.textproc import analyze, analyzed, parse_query
from memvault.vault import Vault

from .helpers_index import BACKENDS, UTC_TOML, at, entry, make_vault, write_log

NOW = at("2026-03-01T12:00")
CUTOFF_TOML = UTC_TOML + "[search]\nscore_limit = 20\n"


def plan(text: str, docs: dict[str, int], n: int = 1000, limit: int = 100) -> Plan:
    return plan_query(parse_query(text), docs, n, limit)


def test_plan_selects_the_rarest_words_that_fit_the_limit():
    docs = {"common": 900, "usual": 300, "rare": 40, "rarer": 30, "odd": 50}
    assert plan("common rare rarer usual", docs) == Plan(("rarer", "rare"))
    assert plan("common rare rarer odd", docs) == Plan(("rarer", "rare"))  # 30 + 40 + 50 > 100
    # under the limit together: every match is scored
    assert plan("rare rarer", docs) == EXHAUSTIVE
    # one word, quoted phrases, or the cutoff turned off: exhaustive
    assert plan("common", docs) == EXHAUSTIVE
    assert plan('common rare "odd words"', docs) == EXHAUSTIVE
    assert plan("common rare", docs, limit=0) == EXHAUSTIVE


def test_plan_requires_the_rarest_common_words_together():
    docs = {"common": 900, "usual": 300, "often": 200}
    # 200 * 300 / 1000 = 60 expected entries with both: within the limit
    assert plan("common usual often", docs) == Plan(("often", "usual"), every=True)
    # 900 * 300 / 1000 = 270: still more, but there is nothing else to add
    assert plan("common usual", docs) == Plan(("usual", "common"), every=True)


def test_words_no_entry_holds_select_nothing():
    docs = {"common": 900, "usual": 300, "rare": 40}
    # a typo or a word the vault lacks: the plan is the one without it, not "select by the
    # missing word" (which finds no row and then scores every match of the common words)
    assert plan("common usual typoo", docs) == plan("common usual", docs) == Plan(("usual", "common"), every=True)
    assert plan("common rare typoo", docs) == Plan(("rare",))
    assert plan("common typoo", docs) == EXHAUSTIVE  # one word left: every match of it is scored
    assert plan("typoo other", docs) == EXHAUSTIVE


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_missing_word_ranks_as_the_query_without_it(vault_dir, backend):
    vault = cutoff_vault(vault_dir)
    with open_index(vault, backend) as index:
        index.update()
        for text in ("apple zebra", "apple tart"):
            with_typo = index.search(f"{text} zzqx", limit=5, at=NOW, record_access=False)
            without = index.search(text, limit=5, at=NOW, record_access=False)
            assert with_typo and [h.id for h in with_typo] == [h.id for h in without]
            if backend == "sqlite":  # the in-memory ranking is the default engine's BM25
                mem = rank_events(vault.events, f"{text} zzqx", vault.timeline, NOW, limit=5)
                assert [h.id for h in mem] == [h.id for h in with_typo]


def test_plan_admits():
    assert Plan(("a", "b")).admits({"b"}.__contains__, False)
    assert not Plan(("a", "b"), every=True).admits({"b"}.__contains__, False)
    assert Plan(("a", "b"), every=True).admits(set().__contains__, True)  # a compound matched
    assert EXHAUSTIVE.admits(set().__contains__, False)


def cutoff_vault(root):
    """101 entries: 40 with `apple` (some many times), 12 of them also with `zebra`, and
    one more `zebra` alone."""
    vault = make_vault(root, CUTOFF_TOML)
    for day in ("2026-01-10", "2026-01-11"):
        write_log(root, day, *[entry(f"{h:02d}:{m:02d}", "Observation", f"filler note {h} {m}")
                               for h in range(8, 23) for m in (0, 30)])
    plain = [entry(f"{h:02d}:00", "Observation", "apple apple apple apple pie") for h in range(8, 20)]
    write_log(root, "2026-02-10", *plain)
    both = [entry(f"{h:02d}:00", "Observation", f"zebra number {h} ate an apple") for h in range(8, 20)]
    write_log(root, "2026-02-11", *both)
    rest = [entry(f"{h:02d}:00", "Decision", f"apple tart {h}") for h in range(8, 24)]
    write_log(root, "2026-02-12", *rest)
    write_log(root, "2026-02-13", entry("09:00", "Decision", "zebra crossing painted"))
    return Vault.open(vault.root)


@pytest.mark.parametrize("backend", BACKENDS)
def test_rare_words_select_and_common_words_score(vault_dir, backend):
    vault = cutoff_vault(vault_dir)
    with open_index(vault, backend) as index:
        index.update()
        hits = index.search("apple zebra", limit=5, at=NOW, record_access=False)
        # the rows of the rare word, ranked as the search without the cutoff ranks them
        index.weights = dataclasses.replace(index.weights, score_limit=0)
        everything = index.search("apple zebra", limit=60, at=NOW, record_access=False)
        index.weights = dataclasses.replace(index.weights, score_limit=20)
        assert [h.id for h in hits] == [h.id for h in everything if "zebra" in h.content][:5]
        assert [h.score for h in hits] == pytest.approx([h.score for h in everything[:5]])
        # a filter that leaves too few of the rare word's entries: every match is scored
        hits = index.search("apple zebra", limit=5, types=["decision"], at=NOW, record_access=False)
        assert len(hits) == 5 and hits[0].content == "zebra crossing painted"
        assert any("tart" in h.content for h in hits)


def test_selected_rows_keep_their_exhaustive_score(vault_dir):
    vault = cutoff_vault(vault_dir)
    with open_index(vault) as index:
        index.update()
        conn, engine = index.reader()
        for text in ("apple zebra", "apple zebra ADR-016", "apple pie zebra"):
            q = parse_query(text)
            chosen = index.plan(q)
            assert not chosen.exhaustive
            everything = dict(engine.search(q, 1000))
            selected = dict(engine.search(q, 1000, chosen))
            assert selected and set(selected) < set(everything)
            for rowid, score in selected.items():
                assert score == pytest.approx(everything[rowid], rel=1e-12)


def test_common_words_together_keep_their_exhaustive_score(vault_dir):
    vault = make_vault(vault_dir, CUTOFF_TOML)
    texts = {"2026-01-01": "alpha gamma delta", "2026-01-02": "alpha beta", "2026-01-03": "alpha beta gamma delta",
             "2026-01-04": "gamma", "2026-01-05": "delta"}
    for day, text in texts.items():
        write_log(vault.root, day, *[entry(f"{h:02d}:00", "Observation", f"{text} {h}") for h in range(8, 23)])
    with open_index(vault) as index:
        index.update()
        conn, engine = index.reader()
        q = parse_query("alpha beta gamma delta")
        chosen = index.plan(q)
        assert chosen == Plan(("beta", "alpha"), every=True)  # the rest only adds to scores
        selected = dict(engine.search(q, 1000, chosen))
        everything = dict(engine.search(q, 1000))
        assert len(selected) == 30 and len(everything) == 75
        assert all(everything[r] == pytest.approx(s, rel=1e-12) for r, s in selected.items())


def test_rank_events_applies_the_same_cutoff(vault_dir):
    vault = cutoff_vault(vault_dir)
    with open_index(vault) as index:
        index.update()
        for text in ("apple zebra", "apple pie", "zebra", "apple tart zebra", '"apple pie" zebra'):
            for limit in (3, 5, 30):
                mem = rank_events(vault.events, text, vault.timeline, NOW, limit=limit)
                idx = index.search(text, at=NOW, limit=limit, record_access=False)
                assert [h.id for h in mem] == [h.id for h in idx], (text, limit)
        mem = rank_events(vault.events, "apple zebra", vault.timeline, NOW, limit=5, types=["decision"])
        idx = index.search("apple zebra", at=NOW, limit=5, types=["decision"], record_access=False)
        assert [h.id for h in mem] == [h.id for h in idx]


def linked_vault(root):
    """Thirty entries about the garden with every ranking part varied: superseded and
    reconfirmed entries, importance, confidence, expiry, tags, and access records."""
    make_vault(root)
    for day in range(1, 7):
        date = f"2026-02-{day:02d}"
        items = []
        for hour in range(9, 14):
            meta: dict[str, str] = {}
            if hour == 10:
                meta["importance"] = "high" if day % 2 else "low"
            if hour == 11:
                meta["confidence"] = "0.4"
            if hour == 12 and day == 3:
                meta["expires"] = "2026-02-20"
            if hour == 13:
                meta["tags"] = "garden"
            if hour == 9 and day > 1:
                meta["supersedes"] = f"2026-02-{day - 1:02d}T09:00"
            if hour == 12 and day == 5:
                meta["reconfirms"] = "2026-02-01T11:00"
            words = "garden roses" if hour % 2 else "garden tomatoes and roses and more roses"
            items.append(entry(f"{hour:02d}:00", "Belief" if hour < 12 else "Decision", f"{words} {day}", **meta))
        write_log(root, date, *items)
    # a strong match replaced by a weak one, which inherits its relevance
    write_log(root, "2026-02-07", entry("09:00", "Belief", "tomatoes tomatoes tomatoes everywhere"))
    write_log(root, "2026-02-08", entry("09:00", "Correction", "the garden plan changed", supersedes="2026-02-07T09:00"))
    access.record(root, ["2026-02-02T10:00", "2026-02-01T13:00"], at("2026-02-28T12:00"))
    return Vault.open(root)


@pytest.mark.parametrize("limit", [1, 3, 10])
def test_decoding_only_what_can_rank_gives_the_full_ranking(vault_dir, limit):
    vault = linked_vault(vault_dir)
    stats = access.stats(vault.root)
    with open_index(vault) as index:
        index.update()
        for text in ("garden roses", "tomatoes", "roses garden tomatoes", "garden tomatoes everywhere"):
            for kw in ({}, {"types": ["decision"]}, {"tags": ["garden"]}, {"include_all": True},
                       {"since": at("2026-02-04T00:00")}):
                for when in (NOW, at("2026-02-03T12:00")):
                    mem = rank_events(vault.events, text, vault.timeline, when, limit=limit, access=stats, **kw)
                    idx = index.search(text, at=when, limit=limit, record_access=False, **kw)
                    assert [(h.id, h.status) for h in mem] == [(h.id, h.status) for h in idx], (text, kw, when)
                    assert [h.score for h in mem] == pytest.approx([h.score for h in idx], rel=1e-9)


@pytest.mark.parametrize("backend", BACKENDS)
def test_term_counts_follow_updates(vault_dir, backend):
    vault = cutoff_vault(vault_dir)
    with open_index(vault, backend) as index:
        index.update()
        write_log(vault.root, "2026-02-11", entry("08:00", "Observation", "only a zebra now"))
        (vault.root / "memory/2026-02-13.md").unlink()
        index.update()
        assert_term_counts(index)
        index.rebuild()
        assert_term_counts(index)


def assert_term_counts(index) -> None:
    conn, _ = index.reader()
    docs = docs_by_file(store.load_events(conn))
    expected = {t: n for t, n in store.count_terms(docs).items() if n}
    assert dict(conn.execute("SELECT term, docs FROM terms").fetchall()) == expected


def test_index_terms_are_the_ones_fts5_sees():
    """FTS5's ascii tokenizer splits the stored text exactly where the analyzer put spaces:
    folding that leaves punctuation or capitals ("⑴" is "(1)", "ᴬ" is "A") splits or folds."""
    text = "⑴ ᴬᴮᶜ 𝐀𝐁𝐂 ½ Straße ǅungla ﷺ café O'Brien 東京タワー x²"
    terms = analyze(text)
    assert all(t.isalnum() and t == t.lower() for t in terms)
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE f USING fts5(a, tokenize = 'ascii')")
    conn.execute("INSERT INTO f (a) VALUES (?)", (analyzed(text),))
    conn.execute("CREATE VIRTUAL TABLE temp.v USING fts5vocab(main, f, 'row')")
    assert {t for (t,) in conn.execute("SELECT term FROM temp.v")} == set(terms)
