"""One contract for every index backend: what goes in, what comes out, what survives."""

from __future__ import annotations

import os
import sqlite3

import pytest

from memvault.errors import LockTimeout
from memvault.fsio import locked
from memvault.search import access
from memvault.search.index import open_index
from memvault.search.textproc import analyze, parse_query

from .helpers_index import BACKENDS, at, entry, fresh, make_vault, write_log

NOW = at("2026-03-01T12:00")


@pytest.fixture(params=BACKENDS)
def backend(request) -> str:
    return request.param


@pytest.fixture
def vault(vault_dir):
    return make_vault(vault_dir)


def ids(hits) -> list[str]:
    return [h.id for h in hits]


def search(index, q, **kw):
    kw.setdefault("at", NOW)
    kw.setdefault("record_access", False)
    return index.search(q, **kw)


def assert_matches_files(index, root) -> None:
    events, sup, rec = fresh(root)
    assert index.events() == events
    assert index.edges() == (sup, rec)


def test_add_update_delete_rebuild(vault, backend):
    root = vault.root
    write_log(root, "2026-02-14", entry("10:00", "Observation", "The dashboard colours are teal"))
    write_log(root, "2026-02-15", entry("09:00", "Decision", "Deploy the atlas server on Fridays"))
    with open_index(vault, backend) as index:
        report = index.update()
        assert sorted(report.added) == ["memory/2026-02-14.md", "memory/2026-02-15.md"]
        assert report.events_indexed == 2
        assert ids(search(index, "teal dashboard")) == ["2026-02-14T10:00"]

        write_log(root, "2026-02-14", entry("10:00", "Observation", "The dashboard colours are orange"))
        report = index.update()
        assert report.changed == ["memory/2026-02-14.md"] and not report.added
        assert ids(search(index, "orange")) == ["2026-02-14T10:00"]
        assert search(index, "teal") == []

        os.unlink(root / "memory/2026-02-15.md")
        report = index.update()
        assert report.removed == ["memory/2026-02-15.md"]
        assert search(index, "atlas server") == []
        assert_matches_files(index, root)

        before = index.events()
        report = index.rebuild()
        assert report.rebuilt and index.events() == before
        assert_matches_files(index, root)


def test_unchanged_files_are_not_reparsed(vault, backend):
    rel = write_log(vault.root, "2026-02-14", entry("10:00", "Observation", "alpha"))
    with open_index(vault, backend) as index:
        index.update()
        os.utime(vault.root / rel, ns=(1, 1))  # new mtime, same bytes
        report = index.update()
        assert not report.touched and report.events_indexed == 0
        assert index.indexed_files()[rel].mtime_ns == 1


def test_rename_moves_events(vault, backend):
    root = vault.root
    write_log(root, "2026-02-14", entry("10:00", "Observation", "Kiwi fruit is ripe"))
    with open_index(vault, backend) as index:
        index.update()
        (root / "memory/2026").mkdir()
        os.rename(root / "memory/2026-02-14.md", root / "memory/2026/2026-02-14.md")
        report = index.update()
        assert report.removed == ["memory/2026-02-14.md"]
        assert report.added == ["memory/2026/2026-02-14.md"]
        [hit] = search(index, "kiwi")
        assert hit.file == "memory/2026/2026-02-14.md"
        assert set(index.indexed_files()) == {"memory/2026/2026-02-14.md"}


def test_update_exact_paths(vault, backend):
    root = vault.root
    a = write_log(root, "2026-02-14", entry("10:00", "Observation", "apples"))
    b = write_log(root, "2026-02-15", entry("10:00", "Observation", "bananas"))
    with open_index(vault, backend) as index:
        index.update()
        write_log(root, "2026-02-14", entry("10:00", "Observation", "apricots"))
        write_log(root, "2026-02-15", entry("10:00", "Observation", "blueberries"))
        report = index.update([a])
        assert report.changed == [a]
        assert ids(search(index, "apricots")) == ["2026-02-14T10:00"]
        assert ids(search(index, "bananas")) == ["2026-02-15T10:00"]  # not asked for: untouched
        os.unlink(root / b)
        report = index.update([str(root / b), "notes/elsewhere.md"])  # absolute paths work too
        assert report.removed == [b]
        assert search(index, "bananas blueberries") == []


def test_unreadable_file_keeps_its_events(vault, backend, monkeypatch):
    rel = write_log(vault.root, "2026-02-14", entry("10:00", "Observation", "quinces"))
    with open_index(vault, backend) as index:
        index.update()
        write_log(vault.root, "2026-02-14", entry("10:00", "Observation", "changed text"))
        from memvault.search.index import files

        real_open = files.open_file

        def failing_open(root, path, *args, **kwargs):  # root can read anything: simulate EIO
            if str(path).endswith("2026-02-14.md"):
                raise OSError(5, "Input/output error")
            return real_open(root, path, *args, **kwargs)

        monkeypatch.setattr(files, "open_file", failing_open)
        for report in (index.update(), index.update([rel])):
            assert [p.code for p in report.problems] == ["MV100"]
            assert rel in report.problems[0].path
            assert ids(search(index, "quinces")) == ["2026-02-14T10:00"]
        monkeypatch.undo()
        index.update()
        assert ids(search(index, "changed")) == ["2026-02-14T10:00"]


def test_ranking_constructed_cases(vault, backend):
    root = vault.root
    write_log(root, "2026-01-01", entry("09:00", "Observation", "The espresso machine needs descaling"),
              entry("10:00", "Belief", "Gardening happens on Saturdays", confidence="0.3"),
              entry("11:00", "Belief", "Laundry happens on Sundays", importance="low"))
    write_log(root, "2026-02-28", entry("09:00", "Observation", "The espresso machine needs descaling"),
              entry("10:00", "Belief", "Gardening happens on Saturdays", confidence="0.95"),
              entry("11:00", "Belief", "Laundry happens on Sundays", importance="high"),
              entry("12:00", "Correction", "Cooking night is Tuesday, not Monday",
                    supersedes="belief about cooking from 2026-02-27"))
    write_log(root, "2026-02-27", entry("10:00", "Belief", "Cooking night is Monday"))
    with open_index(vault, backend) as index:
        index.update()
        # neighbours match through their context field, below both real matches
        assert ids(search(index, "espresso descaling"))[:2] == ["2026-02-28T09:00", "2026-01-01T09:00"]
        gardening = [h for h in search(index, "gardening", at=at("2026-02-28T10:00")) if "Gardening" in h.content]
        assert [h.confidence > 0.5 for h in gardening] == [True, False]
        laundry = [h for h in search(index, "laundry sundays") if "Laundry" in h.content]
        assert ids(laundry) == ["2026-02-28T11:00", "2026-01-01T11:00"]
        assert laundry[0].importance == 0.9 and laundry[1].importance == 0.2
        # superseded: hidden, but a search for the old belief finds the correction
        def cooking(**kw):
            return [h for h in search(index, "cooking monday", **kw) if "Cooking" in h.content]

        assert ids(cooking()) == ["2026-02-28T12:00"]
        every = cooking(include_all=True)
        assert ids(every) == ["2026-02-28T12:00", "2026-02-27T10:00"]
        assert every[1].status == "superseded" and every[1].superseded_by == "2026-02-28T12:00"
        # as of before the correction, the belief is live and the correction not yet written
        assert ids(cooking(at=at("2026-02-27T12:00"))) == ["2026-02-27T10:00"]


def test_score_parts_and_location(vault, backend):
    write_log(vault.root, "2026-02-28", entry("09:00", "Observation", "Line one about zebras\nline two"))
    with open_index(vault, backend) as index:
        index.update()
        [hit] = search(index, "zebra")
        assert hit.location == "memory/2026-02-28.md#L3-L5"
        assert hit.relevance == 1.0 and 0 < hit.recency < 1 and hit.importance == 0.5
        expected = 0.5 * hit.relevance + 0.2 * hit.importance + 0.2 * hit.recency + 0.1 * hit.confidence
        assert hit.score == pytest.approx(expected)
        assert "**zebras**" in hit.snippet
        assert hit.to_dict()["location"] == hit.location


ADR, LEDGER = "2026-02-14T14:30", "2026-02-14T15:00"
HOSTILE = [  # (query, the entry it must rank first, or None: nothing may be found)
    ("ADR-016", ADR), ("C++", ADR), ('"unbalanced', LEDGER), ("O'Brien", LEDGER), ("2026-02-14T14:30", ADR),
    ("a:b:c", ADR),  # its words are OR-ed: "c" is C++'s
    ("AND OR NOT", None), ("title:foo", None), ("*", None), ("(", None), ("NEAR(a b)", None), ('"', None),
    ("^", None), ("-x", None),
    # the entry's distinctive word in FTS5, whoosh and SQL syntax still finds it
    ("ledger*", LEDGER), ("(ledger", LEDGER), ("NEAR(ledger)", LEDGER), ("^ledger", LEDGER),
    ("-ledger", LEDGER), ("ledger:", LEDGER), ("{ledger}", LEDGER), ("'ledger'", LEDGER), ("ledger~2", LEDGER),
    ("title:ledger", LEDGER), ("AND ledger", LEDGER), ("\\ledger", LEDGER), ("ledger;DROP TABLE events;--", LEDGER),
]


def entry_terms(hit) -> set[str]:
    """The analysed terms of the fields an entry is matched on (title, text, tags, id, type)."""
    return set(analyze(" ".join((hit.title, hit.content, *hit.tags, hit.id, hit.type))))


@pytest.mark.parametrize(("query", "first"), HOSTILE)
def test_hostile_queries_find_only_entries_holding_their_words(vault, backend, query, first):
    write_log(vault.root, "2026-02-14",
              entry("14:30", "Decision", "Adopt ADR-016 for the C++ build"),
              entry("15:00", "Observation", "Talked to O'Brien about the unbalanced ledger"))
    with open_index(vault, backend) as index:
        index.update()
        hits = search(index, query)
        assert isinstance(hits, list)
        assert ids(hits)[:1] == ([first] if first else [])
        words = parse_query(query).all_terms
        for hit in hits:
            if hit.matched:
                assert entry_terms(hit) & words, (hit.id, words)
            else:  # shown for a neighbour that holds a query word
                assert any(h.matched and h.file == hit.file for h in hits), hit.id


@pytest.mark.parametrize(("query", "expected"), [
    ("ADR-016", "2026-02-14T14:30"), ("C++", "2026-02-14T14:30"), ('"unbalanced', "2026-02-14T15:00"),
    ("O'Brien", "2026-02-14T15:00"), ("obrien", "2026-02-14T15:00"), ("ledgers", "2026-02-14T15:00"),
    ('"unbalanced ledger"', "2026-02-14T15:00"), ("résumé", "2026-02-14T16:00"), ("RESUME", "2026-02-14T16:00"),
    ("会議", "2026-02-14T16:00"), ("type:decision build", "2026-02-14T14:30"), ("#infra", "2026-02-14T14:30"),
])
def test_queries_find_what_people_mean(vault, backend, query, expected):
    write_log(vault.root, "2026-02-14",
              entry("14:30", "Decision", "Adopt ADR-016 for the C++ build", tags="infra"),
              entry("15:00", "Observation", "Talked to O'Brien about the unbalanced ledger"),
              entry("16:00", "Observation", "Updated my résumé; 東京で会議がありました"))
    with open_index(vault, backend) as index:
        index.update()
        assert ids(search(index, query))[:1] == [expected]


def test_phrases_are_required_and_words_are_ored(vault, backend):
    write_log(vault.root, "2026-02-14",
              entry("10:00", "Observation", "dark mode everywhere"),
              entry("11:00", "Observation", "the mode is dark"),
              entry("12:00", "Observation", "unrelated kittens"))
    with open_index(vault, backend) as index:
        index.update()
        assert ids(search(index, '"dark mode"')) == ["2026-02-14T10:00"]
        assert set(ids(search(index, "dark kittens"))) == {"2026-02-14T10:00", "2026-02-14T11:00", "2026-02-14T12:00"}
        assert search(index, "the of and") != []  # only stopwords: still searched


def test_filters(vault, backend):
    write_log(vault.root, "2026-02-14", entry("10:00", "Observation", "budget review", tags="work"))
    write_log(vault.root, "2026-02-20", entry("10:00", "Decision", "budget approved"))
    with open_index(vault, backend) as index:
        index.update()
        assert ids(search(index, "budget", types=["decision"])) == ["2026-02-20T10:00"]
        assert ids(search(index, "budget", tags=["work"])) == ["2026-02-14T10:00"]
        assert ids(search(index, "budget tag:work")) == ["2026-02-14T10:00"]
        assert ids(search(index, "budget", since=at("2026-02-15T00:00"))) == ["2026-02-20T10:00"]
        assert ids(search(index, "budget", until=at("2026-02-15T00:00"))) == ["2026-02-14T10:00"]
        assert len(search(index, "budget", limit=1)) == 1


def test_search_records_access(vault, backend):
    write_log(vault.root, "2026-02-14", entry("10:00", "Observation", "walrus sighting"))
    with open_index(vault, backend) as index:
        index.update()
        search(index, "walrus")
        index.search("walrus")  # a plain search is no recall ([search] record = false)
        assert access.stats(vault.root) == {}
        index.search("walrus", record_access=True)
        index.search("walrus", record_access=True)
        assert access.stats(vault.root)["2026-02-14T10:00"].count == 2
        # a recent access makes an old entry recent again
        assert index.search("walrus", record_access=False)[0].recency > 0.99


def test_second_writer_waits_then_fails_clearly(vault_dir, backend):
    vault = make_vault(vault_dir, '[vault]\ntimezone = "UTC"\n[index]\nlock_timeout = 0.2\n')
    with open_index(vault, backend) as index:
        index.update()
        with locked(index.lock_path), pytest.raises(LockTimeout, match="search index"):
            index.update()


def test_schema_change_is_stale_and_rebuilt(vault, backend):
    write_log(vault.root, "2026-02-14", entry("10:00", "Observation", "narwhal"))
    with open_index(vault, backend) as index:
        index.update()
        assert not index.status().stale
    conn = sqlite3.connect(vault.derived / "index" / f"{backend}.db")
    conn.execute("UPDATE meta SET value = '0' WHERE key = 'schema_version'")
    conn.commit()
    conn.close()
    with open_index(vault, backend) as index:
        st = index.status()
        assert st.stale and "schema version 0" in st.stale_reason
        assert ids(search(index, "narwhal")) == ["2026-02-14T10:00"]  # rebuilt on the way
        assert not index.status().stale


def test_status_counts(vault, backend):
    write_log(vault.root, "2026-02-14", entry("10:00", "Observation", "a"), entry("11:00", "Observation", "b"))
    with open_index(vault, backend) as index:
        st = index.status()
        assert not st.exists and st.stale and st.files_on_disk == 1 and st.events_on_disk == 2
        index.update()
        st = index.status()
        assert (st.files_indexed, st.events_indexed, st.stale, st.backend) == (1, 2, False, backend)
        write_log(vault.root, "2026-02-15", entry("10:00", "Observation", "c"))
        st = index.status()
        assert st.stale and st.changed_files == ["memory/2026-02-15.md"]
        assert (st.events_on_disk, st.events_indexed) == (3, 2)
        assert st.size_bytes > 0 and st.last_update is not None


def test_indexed_event_counts_per_file(vault, backend):
    write_log(vault.root, "2026-02-14", entry("10:00", "Observation", "a"), entry("11:00", "Observation", "b"))
    write_log(vault.root, "2026-02-15", entry("10:00", "Observation", "c"))
    with open_index(vault, backend) as index:
        index.update()
        assert index.indexed_event_counts() == {"memory/2026-02-14.md": 2, "memory/2026-02-15.md": 1}
        assert index.indexed_event_counts(["memory/2026-02-15.md", "memory/nope.md"]) == {"memory/2026-02-15.md": 1}


def test_deleting_the_index_loses_nothing(vault, backend):
    import shutil

    write_log(vault.root, "2026-02-14", entry("10:00", "Observation", "okapi"))
    with open_index(vault, backend) as index:
        index.update()
    shutil.rmtree(vault.derived / "index")
    with open_index(vault, backend) as index:
        assert ids(search(index, "okapi")) == ["2026-02-14T10:00"]


def test_supersession_follows_edits_in_other_files(vault, backend):
    root = vault.root
    write_log(root, "2026-02-20", entry("10:00", "Correction", "Standup is at ten",
                                        supersedes="belief about standup from 2026-02-14"))
    with open_index(vault, backend) as index:
        index.update()
        assert index.edges()[0] == {}
        write_log(root, "2026-02-14", entry("09:00", "Belief", "Standup is at nine"))
        index.update()
        assert index.edges()[0] == {"2026-02-20T10:00": "2026-02-14T09:00"}
        assert ids(search(index, "standup nine")) == ["2026-02-20T10:00"]
        os.unlink(root / "memory/2026-02-14.md")
        index.update()
        assert index.edges()[0] == {}
        assert_matches_files(index, root)


def test_a_long_lived_reader_sees_a_rebuild_by_another_process(vault, backend):
    write_log(vault.root, "2026-02-14", entry("10:00", "Observation", "first words"))
    with open_index(vault, backend) as reader, open_index(vault, backend) as writer:
        reader.update()
        assert ids(search(reader, "first")) == ["2026-02-14T10:00"]
        write_log(vault.root, "2026-02-14", entry("10:00", "Observation", "second words"))
        writer.rebuild()  # a new database file renamed over the old one
        assert ids(search(reader, "second")) == ["2026-02-14T10:00"]
        assert search(reader, "first") == []


def test_expired_entries_are_hidden_unless_all(vault, backend):
    write_log(vault.root, "2026-02-14", entry("10:00", "Observation", "Parking permit valid", expires="2026-02-20"),
              entry("11:00", "Observation", "Parking garage closes at ten"))
    with open_index(vault, backend) as index:
        index.update()
        assert [h.id for h in search(index, "parking") if "Parking" in h.content] == ["2026-02-14T11:00"]
        every = {h.id: h.status for h in search(index, "parking", include_all=True)}
        assert every["2026-02-14T10:00"] == "expired"
        before = search(index, "parking permit", at=at("2026-02-15T00:00"))
        assert before[0].id == "2026-02-14T10:00" and before[0].status == "live"


def test_curated_bullet_citing_its_correction_is_not_superseded(vault, backend):
    """curate's rule: a bullet rewritten from a correction names it as its source and stays live."""
    root = vault.root
    write_log(root, "2026-01-01", entry("09:00", "Correction", "coffee, not tea", supersedes="^blk"))
    with open_index(vault, backend) as index:
        index.update()
        (root / "MEMORY.md").write_text("# M\n\n## Preferences\n- likes coffee (source: [[2026-01-01#09:00]]) ^blk\n")
        index.update()
        assert index.edges()[0] == {} == fresh(root)[1]
        (root / "MEMORY.md").write_text("# M\n\n## Preferences\n- likes tea ^blk\n")
        index.update()
        assert index.edges()[0] == {"2026-01-01T09:00": "blk"} == fresh(root)[1]
        write_log(root, "2026-01-01", entry("09:00", "Correction", "coffee, not tea", supersedes="^blk"),
                  entry("10:00", "Observation", "unrelated"))
        index.update()
        assert_matches_files(index, root)
