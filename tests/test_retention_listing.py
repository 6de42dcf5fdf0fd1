"""`list`, `search` and `asof` carry each entry's retention (JSON and a mark per text row),
computed under the vault's model at the answer's time from the stored said-again pairs; the
values are the library's, and switching models changes statuses, never a file."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from memvault.cli import cli
from memvault.entries.presentations import SaidAgain
from memvault.search.said_store import StoredSaidAgain
from memvault.vault import Vault

from .conftest import DATA

APRIL = "2026-04-01T12:00"
MARK = {"active": "\u25cf", "fading": "\u25d0", "forgotten": "\u25cb"}
# docs/retention.md, "A vault under each model", at 2026-04-01 12:00
DOCUMENTED = {
    "exponential": {"2026-01-05T09:10": "fading", "2026-01-05T11:30": "forgotten", "2026-01-05T16:45": "fading",
                    "2026-02-20T08:05": "fading", "2026-02-20T14:00": "fading", "2026-03-28T19:20": "active"},
    "forgetting-curve": {"2026-01-05T09:10": "active", "2026-01-05T11:30": "fading", "2026-01-05T16:45": "active",
                         "2026-02-20T08:05": "active", "2026-02-20T14:00": "active", "2026-03-28T19:20": "active"},
}


def vault_under(root: Path, model: str) -> Path:
    if not (root / "memory").exists():
        shutil.copytree(DATA / "retention", root, dirs_exist_ok=True)
    (root / "memvault.toml").write_text(f'[vault]\ntimezone = "Europe/Berlin"\n\n[decay]\nmodel = "{model}"\n')
    return root


def run(runner, root: Path, *args: str) -> str:
    result = runner.invoke(cli, ["--vault", str(root), *args])
    assert result.exit_code == 0, result.output
    return result.output


def library(root: Path, when: str) -> dict[str, dict]:
    """Each entry's retention at the time `asof WHEN` means, asked of the library."""
    with Vault.open(root) as vault:
        at = vault.past.point(when).at
        tl = vault.timeline
        return {e.id: tl.retention(e, at).to_dict() for e in tl.events}


def files(root: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in root.rglob("*") if p.is_file() and ".memvault" not in p.parts}


@pytest.mark.parametrize("model", ["exponential", "forgetting-curve"])
def test_asof_carries_the_documented_statuses_and_switching_models_changes_no_file(runner, vault_dir, model):
    root = vault_under(vault_dir, "ebbinghaus")
    run(runner, root, "asof", APRIL, "--json")  # the pairs are stored under another model first
    before = files(root)
    vault_under(root, model)
    before[root / "memvault.toml"] = (root / "memvault.toml").read_bytes()
    items = json.loads(run(runner, root, "asof", APRIL, "--json"))
    assert {d["id"]: d["retention"]["status"] for d in items} == DOCUMENTED[model]
    assert {d["retention"]["model"] for d in items} == {model}
    expected = library(root, APRIL)
    assert {d["id"]: d["retention"] for d in items} == expected
    # the allergy said again and the backup reconfirmed: two presentations each
    assert {d["id"]: d["retention"]["presentations"] for d in items}["2026-01-05T09:10"] == 2
    text = run(runner, root, "asof", APRIL)
    for d in items:
        row = next(line for line in text.splitlines() if line.startswith(d["id"]))
        assert f" {MARK[d['retention']['status']]} " in row
    assert files(root) == before


def test_list_json_and_text_carry_retention_now(runner, vault_dir):
    root = vault_under(vault_dir, "forgetting-curve")
    items = json.loads(run(runner, root, "list", "--json"))
    with Vault.open(root) as vault:
        now = vault.now()
        tl = vault.timeline
        for d in items:
            r = tl.retention(tl.by_id[d["id"]], now).to_dict()
            assert d["retention"]["presentations"] == r["presentations"]
            assert d["retention"]["status"] == r["status"]
            assert abs(d["retention"]["value"] - r["value"]) < 1e-4  # a few seconds later
    text = run(runner, root, "list")
    rows = [line for line in text.splitlines() if line[:4] == "2026"]
    assert len(rows) == len(items)
    for d, row in zip(items, rows, strict=True):
        assert f" {MARK[d['retention']['status']]} " in row
    assert text.splitlines()[-1] == "6 entries"


def test_search_json_and_text_carry_the_library_retention(runner, vault_dir):
    root = vault_under(vault_dir, "forgetting-curve")
    hits = json.loads(run(runner, root, "search", "peanuts", "allergic", "--json"))
    assert [h["id"] for h in hits][:2] == ["2026-01-05T09:10", "2026-02-20T08:05"]
    with Vault.open(root) as vault:
        tl = vault.timeline
        now = vault.now()
        for h in hits:
            r = tl.retention(tl.by_id[h["id"]], now).to_dict()
            assert (h["retention"]["presentations"], h["retention"]["status"]) == (r["presentations"], r["status"])
            assert abs(h["retention"]["value"] - r["value"]) < 1e-4
    assert hits[0]["retention"]["presentations"] == 2  # said again on 2026-02-20, found without parsing
    backup = json.loads(run(runner, root, "search", "Hetzner", "--json"))
    assert backup[0]["retention"]["presentations"] == 2  # reconfirmed
    text = run(runner, root, "search", "peanuts")
    assert f"2026-01-05T09:10  observation  {MARK[hits[0]['retention']['status']]} memory/2026-01-05.md" in text


def test_search_sees_a_repeat_written_after_the_last_search(runner, vault_dir):
    root = vault_under(vault_dir, "exponential")
    first = json.loads(run(runner, root, "search", "Coffee", "machine", "--json"))[0]
    assert first["retention"]["presentations"] == 1
    day = root / "memory" / "2026-03-29.md"
    day.write_text("# 2026-03-29\n\n## 08:00 - Observation\n"
                   "Coffee machine on floor 3 is broken again, use the one on floor 2 (still).\n", encoding="utf-8")
    again = json.loads(run(runner, root, "search", "Coffee", "machine", "--json"))
    old = next(h for h in again if h["id"] == "2026-03-28T19:20")
    assert old["retention"]["presentations"] == 2


def test_stored_answers_equal_the_on_demand_search(vault_dir):
    root = vault_under(vault_dir, "exponential")
    day = root / "memory" / "2026-05-02.md"
    day.write_text(
        "# 2026-05-02\n\n## 09:00 - Observation\nWir nehmen für das Backup den Hetzner Storage Box BX21, nicht S3.\n\n"
        "## 10:00 - Observation\nLena's daughter Mia is allergic to peanuts, keep snacks nut-free at the offsite.\n\n"
        "## 11:00 - Observation\nMia is not allergic to peanuts any more.\n\n"
        "## 11:00 - Observation\nMia (Lena's daughter) is allergic to peanuts, snacks must be nut-free.\n",
        encoding="utf-8")  # the last: a second entry of the minute (2026-05-02T11:00-2)
    with Vault.open(root) as vault:
        tl = vault.timeline
        stored, fresh = StoredSaidAgain(root, tl), SaidAgain(tl)
        answers = {e.id: stored.of(e) for e in tl.events}
        assert answers == {e.id: fresh.of(e) for e in tl.events}
    # the same text later, and a later rewording (the minute's second entry): counted
    assert answers["2026-01-05T09:10"] == ["2026-02-20T08:05", "2026-05-02T10:00", "2026-05-02T11:00-2"]
    assert "2026-05-02T11:00" not in answers["2026-02-20T08:05"]  # "not": a different fact


def test_a_store_locked_by_another_process_leaves_the_pairs_to_memory(runner, vault_dir, monkeypatch):
    """A `list` while another process holds the pairs' database answers the same, a little slower."""
    import sqlite3

    from memvault.search import said_store

    root = vault_under(vault_dir, "exponential")
    expected = {d["id"]: d["retention"]["presentations"] for d in json.loads(run(runner, root, "asof", APRIL, "--json"))}
    (root / "memory" / "2026-03-30.md").write_text(
        "# 2026-03-30\n\n## 08:00 - Observation\nBackup läuft wieder sauber auf der Storage Box (geprüft).\n", encoding="utf-8")
    expected["2026-02-20T14:00"] += 1  # said again: the store must be written to know it
    expected["2026-03-30T08:00"] = 1
    holder = sqlite3.connect(root / ".memvault" / "said.sqlite")
    holder.execute("BEGIN IMMEDIATE")
    monkeypatch.setattr(said_store, "TIMEOUT", 0.05)
    try:
        listed = runner.invoke(cli, ["--vault", str(root), "asof", APRIL, "--json"])
        found = runner.invoke(cli, ["--vault", str(root), "search", "Backup", "Storage", "--json"])
    finally:
        holder.rollback()
        holder.close()
    assert listed.exit_code == 0 and found.exit_code == 0, listed.output + found.output
    items, hits = json.loads(listed.stdout), json.loads(found.stdout)
    assert {d["id"]: d["retention"]["presentations"] for d in items} == expected
    assert "compared in memory" in listed.stderr  # said, as a JSON notice under --json
    assert hits and all("retention" not in h for h in hits)  # search answers, without retention
    assert "search shows no retention" in found.stderr
