"""`Vault.fetch` (an entry by id or place, from the index) answers what `Vault.show` answers.

Every entry of real-looking vaults is asked both ways at one pinned time: superseded chains,
reconfirmations, a `Forgotten:` tombstone, entries `maintain` forgot, notes under headings,
MEMORY.md bullets citing their sources, German and English text, odd file names."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from memvault.cli import cli
from memvault.search import access
from memvault.search.index import entry, open_index, update_index
from memvault.vault import Vault

from .conftest import copy_vault

BERLIN = ZoneInfo("Europe/Berlin")
NOW = datetime(2026, 4, 20, 12, 0, tzinfo=BERLIN)

WEEK = {
    "memory/2026-03-02.md": """# 2026-03-02

## 09:10 - Belief
Dana trinkt keinen Kaffee nach 15 Uhr #health
Importance: high ^dana-coffee

## 11:00 - Observation
Standup moved to 10:30 because of the Berlin office's new hours

## 16:45 - Belief
The Atlas deploy runs on Fridays

Loose notes after the entries: ask Jörg about the VPN.
""",
    "memory/2026-03-09.md": """# 2026-03-09

## 08:05 - Correction
The Atlas deploy runs on Mondays now, not Fridays
Supersedes: belief about Atlas deploy from 2026-03-02

## 12:00 - Observation
Dana trinkt keinen Kaffee nach 15 Uhr, sagt sie wieder
Reconfirms: 2026-03-02T09:10

## 14:00 - Belief
Lunch order: Pho from the place on Torstraße
Forgotten: 2026-03-10T09:00+01:00, Dana asked to drop it
""",
    "memory/2026-03-16-offsite notes.md": """# Offsite (2026-03-16)

## Agenda
- budget
- hiring plan for Q3

### Hiring
We want two backend people; Jörg leads the interviews.
""",
    "memory/2026-03-23.md": """# 2026-03-23

## 19:20 - Correction
The Atlas deploy runs on Tuesdays since the freeze
Supersedes: 2026-03-09T08:05
""",
    "MEMORY.md": """# Long-Term Memory

## User Preferences
- Dana: no coffee after 3 pm (added 2026-03-02) (source: [[2026-03-02#09:10 - Belief]])
- Standup at 10:30 (added 2026-03-02) (source: [[2026-03-02#^dana-coffee]], [[2026-03-02#11:00]])

## Active Projects
- Atlas deploys on Mondays (added 2026-03-09) (source: [[2026-03-09#08:05 - Correction]])
""",
}


def week_vault(root: Path) -> Path:
    (root / "memvault.toml").write_text('[vault]\ntimezone = "Europe/Berlin"\n\n[retention]\nforget_below = 0.5\n')
    for rel, text in WEEK.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def both(root: Path, ref: str) -> tuple[dict, dict]:
    """(the index's answer, `show`'s), at one time; the index must answer itself."""
    with Vault.open(root) as vault, open_index(vault) as index:
        index.refresh()
        fast = entry.show(index, ref, NOW, record=False)
        assert fast is not None, f"{ref}: the index did not answer"
        vault.now = lambda: NOW  # type: ignore[method-assign]
        return fast, vault.show(ref, record=False)


def unique_ids(root: Path) -> list[str]:
    with Vault.open(root) as vault:
        ids = [e.id for e in vault.timeline.events]
    return [i for i in ids if ids.count(i) == 1]


SAMPLES = ["seed", "notes", "messy", "obsidian", "curate_week", "retention", "freeform/vault"]


@pytest.mark.parametrize("sample", SAMPLES)
def test_every_entry_of_a_sample_vault_is_the_same_from_the_index(vault_dir, sample):
    root = copy_vault(sample, vault_dir)
    update_index(Vault.open(root))
    ids = unique_ids(root)
    assert ids
    for eid in ids:
        fast, slow = both(root, eid)
        assert fast == slow, eid


def test_the_week_vault_by_id_and_by_place_with_statuses_citations_and_retention(vault_dir, runner):
    root = week_vault(vault_dir)
    for _ in range(2):  # recalls count in retention
        access.record(root, ["2026-03-02T09:10"])
    result = runner.invoke(cli, ["--vault", str(root), "maintain", "--json", "--at", "2026-04-15 12:00"])
    assert result.exit_code == 0, result.output
    forgotten = {f["id"] for f in json.loads(result.stdout)["forgotten"]}
    statuses = {}
    for eid in unique_ids(root):
        fast, slow = both(root, eid)
        assert fast == slow, eid
        statuses[eid] = fast["status"]
    assert statuses["2026-03-02T16:45"] == statuses["2026-03-09T08:05"] == "superseded"
    assert statuses["2026-03-09T14:00"] == "forgotten"  # the tombstone
    assert forgotten and all(statuses[i] == "forgotten" for i in forgotten)
    fast, slow = both(root, "2026-03-02T09:10")
    assert fast["reconfirmed_by"] == ["2026-03-09T12:00"] and fast["cited_by"]
    assert fast["retention"]["accesses"] == 2
    for place in ("memory/2026-03-09.md#L4-L5", "2026-03-23.md:4", "MEMORY.md#L5", "memory/2026-03-16-offsite notes.md:8"):
        fast, slow = both(root, place)
        assert fast == slow, place
        assert fast["found_by"]["how"] == "place"


def test_what_the_index_cannot_name_is_answered_by_show(vault_dir):
    root = week_vault(vault_dir)
    for ref in ("2026-03-23", "[[2026-03-02#11:00]]", "Atlas deploy Tuesdays"):
        with Vault.open(root) as vault, open_index(vault) as index:
            assert entry.show(index, ref, NOW, record=False) is None
            vault.now = lambda: NOW  # type: ignore[method-assign]
            assert vault.fetch(ref, record=False) == vault.show(ref, record=False)


def test_an_edit_not_yet_indexed_is_seen_and_a_fetch_counts_as_a_recall(vault_dir):
    root = week_vault(vault_dir)
    update_index(Vault.open(root))
    log = root / "memory/2026-03-23.md"
    log.write_text(log.read_text().replace("Tuesdays since the freeze", "Wednesdays, said Jörg"))
    with Vault.open(root) as vault:
        got = vault.fetch("2026-03-23T19:20", refresh=False)
    assert "Wednesdays, said Jörg" in got["content"]
    assert got["retention"]["accesses"] == 1
    assert access.stats(root)["2026-03-23T19:20"].count == 1


def test_without_retention_the_answers_are_the_same_less_that_field(vault_dir):
    """An agent's get and recall show no retention, and skip what it costs after each write."""
    from memvault.search.index import search_vault

    root = week_vault(vault_dir)
    with Vault.open(root) as vault:
        vault.now = lambda: NOW  # type: ignore[method-assign]
        for eid in unique_ids(root):
            full = vault.fetch(eid, record=False)
            assert "retention" in full
            assert vault.fetch(eid, record=False, retention=False) == {k: v for k, v in full.items() if k != "retention"}
        hits = search_vault(vault, "Atlas deploy Kaffee", record_access=False, at=NOW)
        bare = search_vault(vault, "Atlas deploy Kaffee", record_access=False, at=NOW, retention=False)
    assert [h.id for h in hits] == [h.id for h in bare] and len(hits) > 1
    assert all("retention" in h.to_dict() and "retention" not in b.to_dict() for h, b in zip(hits, bare, strict=True))
