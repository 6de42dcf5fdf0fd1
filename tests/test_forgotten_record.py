"""maintain's record in `.memvault/forgotten.sqlite`: whole (`load`, list and asof) and by id
(`Stored`, search) it says the same; a search never reads the whole record; a damaged, older
or missing record is no record (the rule itself: tests/test_maintain.py)."""

from __future__ import annotations

import json
import shutil
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from memvault import forgotten
from memvault.cli import cli
from memvault.forgotten import Forgetting, Forgotten, Stored, load, path_of, save
from memvault.vault import Vault

from .test_maintain import APRIL, fixture, maintain

BERLIN = ZoneInfo("Europe/Berlin")
TABS = "2026-01-05T11:30"
ODD = ["2026-03-02T09:00", "2026-03-02T09:00-2", "Notizen/Übergabe#Käse & Brot", "id with spaces 'quoted'", "東京"]


def records() -> list[Forgetting]:
    at = datetime(2026, 4, 1, 12, tzinfo=BERLIN)
    return [Forgetting(eid, at + timedelta(minutes=i), 0.1 / (i + 1), ("forget_below", "max_live")[i % 2],
                       "forgetting-curve", f"forgotten/20{20 + i}.md" if i % 2 else None)
            for i, eid in enumerate(ODD)]


def test_what_is_saved_loads_whole_and_by_id_alike(tmp_path):
    save(tmp_path, records())
    whole = load(tmp_path)
    assert whole == {r.id: r for r in records()}  # exact retention, the zone kept, archived or None
    stored = Stored(tmp_path)
    assert bool(stored) and len(stored) == len(ODD) and set(stored) == set(ODD)
    for r in records():
        assert stored.get(r.id) == r and stored[r.id] == r and r.id in stored
    assert stored.get("2026-03-02T09:01") is None and "2026-03-02T09:01" not in stored
    with pytest.raises(KeyError):
        stored["nope"]
    stored.close()
    assert stored.get("nope") is None  # closed: asks nothing more


def test_saving_the_same_record_writes_the_same_bytes_and_replaces_it_whole(tmp_path):
    save(tmp_path, records())
    first = path_of(tmp_path).read_bytes()
    save(tmp_path, list(reversed(records())))
    assert path_of(tmp_path).read_bytes() == first  # by id, whatever the order given
    reader = Stored(tmp_path)  # a reader opened before a run keeps reading what it opened or the new one
    save(tmp_path, records()[:1])
    assert set(load(tmp_path)) == {ODD[0]}
    assert reader.get(ODD[0]) == records()[0]
    reader.close()


@pytest.mark.parametrize("content", [b"", b"not a database at all", b'{"version": 1, "entries": []}',
                                     b"SQLite format 3\x00" + b"\xff" * 200])
def test_a_damaged_or_foreign_record_is_no_record(tmp_path, content):
    path_of(tmp_path).parent.mkdir(parents=True)
    path_of(tmp_path).write_bytes(content)
    assert load(tmp_path) == {}
    stored = Stored(tmp_path)
    assert not stored and stored.get(ODD[0]) is None and len(stored) == 0


def test_a_record_of_another_version_is_no_record(tmp_path):
    save(tmp_path, records())
    raw = path_of(tmp_path).read_bytes()
    path_of(tmp_path).write_bytes(raw[:60] + (1).to_bytes(4, "big") + raw[64:])  # the header's user_version
    assert load(tmp_path) == {} and not Stored(tmp_path)


def test_no_record_and_an_empty_record_hide_nothing(tmp_path):
    assert load(tmp_path) == {} and not Stored(tmp_path)
    save(tmp_path, [])
    assert load(tmp_path) == {} and not Stored(tmp_path) and not Forgotten(Stored(tmp_path), lambda e, s: [])


def test_the_rule_over_the_stored_record_equals_the_rule_over_the_whole_one(runner, vault_dir):
    """Relearning and asof before the forgetting judged through `Stored` (what search asks) and
    through the whole record (what list and asof ask): the same answer at every time."""
    fixture(vault_dir)
    maintain(runner, "--at", APRIL)
    day = vault_dir / "memory" / "2026-04-10.md"
    day.write_text("# 2026-04-10\n\n## 10:00 - Belief\nStill tabs in Go, gofmt does it anyway.\n"
                   f"Reconfirms: {TABS}\n")
    with Vault.open(vault_dir) as vault:
        tl = vault.timeline
        whole = Forgotten(load(vault_dir), tl.presented)
        by_id = Forgotten(Stored(vault_dir), tl.presented)
        assert set(whole) == {TABS}
        for ev in tl.events:
            assert whole.change_points(ev) == by_id.change_points(ev)
            for when in ("2026-03-01", "2026-04-01 12:00", "2026-04-05", "2026-04-11"):
                at = datetime.fromisoformat(when).replace(tzinfo=BERLIN)
                assert whole.hides(ev, at) == by_id.hides(ev, at), (ev.id, when)
        assert by_id.hides(tl.by_id[TABS], datetime(2026, 4, 5, tzinfo=BERLIN))
        assert not by_id.hides(tl.by_id[TABS], datetime(2026, 3, 1, tzinfo=BERLIN))  # before the forgetting
        assert not by_id.hides(tl.by_id[TABS], datetime(2026, 4, 11, tzinfo=BERLIN))  # relearned


def test_search_reads_only_its_candidates_rows(runner, vault_dir, monkeypatch):
    fixture(vault_dir)
    maintain(runner, "--at", APRIL)

    def whole(self: Stored) -> dict:
        raise AssertionError("search read the whole record")

    asked: list[str] = []
    fetch = Stored._fetch

    def one(self: Stored, key: str) -> Forgetting | None:
        asked.append(key)
        return fetch(self, key)

    monkeypatch.setattr(forgotten.Stored, "_all", whole)
    monkeypatch.setattr("memvault.parsed.load_forgotten", lambda root: pytest.fail("search loaded the whole record"))
    monkeypatch.setattr(forgotten.Stored, "_fetch", one)
    assert TABS not in {h["id"] for h in json.loads(runner.invoke(cli, ["search", "tabs", "spaces", "--json"]).stdout)}
    hits = json.loads(runner.invoke(cli, ["search", "tabs", "spaces", "--all", "--json"]).stdout)
    assert (hits[0]["id"], hits[0]["status"]) == (TABS, "forgotten")
    assert TABS in asked and len(asked) <= 2 * 6  # per search, at most each of the six entries once


def test_deleting_the_record_alone_brings_the_entries_back_to_search(runner, vault_dir):
    fixture(vault_dir)
    maintain(runner, "--at", APRIL)
    assert TABS not in runner.invoke(cli, ["search", "tabs", "spaces"]).output
    path_of(vault_dir).unlink()
    assert TABS in runner.invoke(cli, ["search", "tabs", "spaces"]).output
    shutil.rmtree(vault_dir / ".memvault")
    assert TABS in runner.invoke(cli, ["search", "tabs", "spaces"]).output
    assert Path(path_of(vault_dir)).exists() is False


@pytest.mark.parametrize("change", ["UPDATE forgotten SET retention = 9e999", "UPDATE forgotten SET retention = 'low'",
                                    "UPDATE forgotten SET at = '2026-04-01T12:00:00'", "UPDATE forgotten SET archived = x'00'"])
def test_a_record_with_an_odd_row_is_no_record(tmp_path, change):
    import sqlite3

    save(tmp_path, records())
    with sqlite3.connect(path_of(tmp_path)) as conn:
        conn.execute(change + " WHERE id = ?", (ODD[1],))
    conn.close()
    assert load(tmp_path) == {}
    stored = Stored(tmp_path)
    assert stored.get(ODD[1]) is None and stored.get(ODD[0]) == records()[0]  # by id: only that row is odd
