"""`memvault maintain` after a QA pass: an archive never changes another entry's status or
breaks a reference; a recorded entry whose retention came back is brought back; `[retention]
keep_importance` keeps what is marked important."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from memvault.cli import cli
from memvault.maintain.policy import Candidate, Settings, back, choose
from memvault.vault import Vault

BERLIN = ZoneInfo("Europe/Berlin")
FRIDAY, MONDAY = "2026-08-10T10:00", "2026-08-20T09:00"


def run(runner, *args: str) -> str:
    result = runner.invoke(cli, list(args))
    assert result.exit_code == 0, result.output
    return result.output


def maintain(runner, *args: str) -> dict:
    return json.loads(run(runner, "maintain", "--json", *args))


def start(runner, root: Path, toml: str = "") -> None:
    run(runner, "init", str(root))
    (root / "memvault.toml").write_text('[vault]\ntimezone = "Europe/Berlin"\n' + toml)


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=BERLIN)


def hashes(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


# -- 1. an archive never resurrects a corrected belief


def test_archiving_keeps_a_forgotten_correction_in_its_log(runner, vault_dir):
    start(runner, vault_dir)
    run(runner, "log", "Weekly sync with Mira is on Friday", "--type", "belief", "--at", "2026-08-10 10:00")
    run(runner, "log", "Monday, not Friday", "--type", "correction",
        "--supersedes", "Weekly sync with Mira is on Friday", "--at", "2026-08-20 09:00")
    report = maintain(runner, "--archive", "--at", "2026-12-01 12:00")
    assert [f["id"] for f in report["forgotten"]] == [MONDAY]  # forgotten in the record...
    assert report["archived"] == []  # ...but not moved: moving it would make Friday live again
    assert report["kept_in_log"] == [{"id": MONDAY, "why": f"it corrects {FRIDAY}"}]
    assert "Supersedes:" in (vault_dir / "memory" / "2026-08-20.md").read_text()
    assert not (vault_dir / "forgotten").exists()
    with Vault.open(vault_dir) as vault:
        assert vault.forgotten[MONDAY].archived is None
        assert vault.timeline.status(vault.timeline.by_id[FRIDAY], at("2026-12-01 13:00")) == "superseded"
        assert vault.entries(at=at("2026-12-01 13:00")) == []
    found = json.loads(run(runner, "search", "Mira sync", "--json", "--no-record"))
    assert found["results"] == [] if isinstance(found, dict) else found == []
    text = run(runner, "maintain", "--archive", "--at", "2026-12-01 12:00")
    assert f"{MONDAY} kept in its log: it corrects {FRIDAY}" in text
    assert "0 errors" in run(runner, "check")


def test_a_forgotten_belief_a_later_correction_names_stays_in_its_log(runner, vault_dir):
    """Archiving the superseded belief alone would leave the correction's `Supersedes:` dangling."""
    start(runner, vault_dir)
    run(runner, "log", "Weekly sync with Mira is on Friday", "--type", "belief", "--at", "2026-08-10 10:00")
    assert [f["id"] for f in maintain(runner, "--at", "2026-11-01 12:00")["forgotten"]] == [FRIDAY]
    run(runner, "log", "Monday, not Friday", "--type", "correction", "--supersedes", FRIDAY,
        "--at", "2026-11-10 09:00")
    report = maintain(runner, "--archive", "--at", "2026-11-11 12:00")
    assert report["archived"] == []
    assert report["kept_in_log"] == [{"id": FRIDAY, "why": "2026-11-10T09:00 supersedes it"}]
    assert "Friday" in (vault_dir / "memory" / "2026-08-10.md").read_text()
    assert "0 errors" in run(runner, "check")


def test_an_entry_a_link_names_stays_and_one_nothing_names_moves(runner, vault_dir):
    start(runner, vault_dir)
    run(runner, "log", "Jörg's Zugangscode für das Lager ist 4711", "--at", "2026-08-10 10:00")
    run(runner, "log", "User mag Vim lieber als Emacs", "--at", "2026-08-11 10:00")
    run(runner, "log", "see [[2026-08-10#10:00 - Observation]] for the code", "--at", "2026-11-28 10:00")
    report = maintain(runner, "--archive", "--at", "2026-12-01 12:00")
    assert [m["id"] for m in report["archived"]] == ["2026-08-11T10:00"]
    assert report["kept_in_log"] == [{"id": FRIDAY, "why": "2026-11-28T10:00 links to it"}]
    assert "0 errors" in run(runner, "check")


# -- 2. a recorded entry whose retention came back comes back


def test_an_earlier_dated_reconfirmation_written_later_brings_the_entry_back(runner, vault_dir):
    start(runner, vault_dir)
    run(runner, "log", "Lena's bike is a green Brompton", "--at", "2026-08-10 10:00")
    assert [f["id"] for f in maintain(runner, "--at", "2026-11-01 12:00")["forgotten"]] == [FRIDAY]
    # written after the forgetting, dated before it: no presentation after the forgetting
    run(runner, "log", "Yes, still the green Brompton", "--reconfirms", FRIDAY, "--at", "2026-10-30 10:00")
    with Vault.open(vault_dir) as vault:
        ev = vault.timeline.by_id[FRIDAY]
        assert vault.timeline.status(ev, at("2026-11-05 12:00")) == "forgotten"
        assert vault.timeline.retention(ev, at("2026-11-05 12:00")).value > 0.1
    before = hashes(vault_dir)
    text = run(runner, "maintain", "--dry-run", "--at", "2026-11-05 12:00")
    assert f"would bring back {FRIDAY}: retention 0.73 ≥ 0.1" in text and "nothing to forget" not in text
    assert hashes(vault_dir) == before
    report = maintain(runner, "--at", "2026-11-05 12:00")
    assert report["brought_back"] == [{"id": FRIDAY, "retention": pytest.approx(0.73, abs=0.005),
                                       "why": "retention 0.73 ≥ 0.1"}]
    assert report["record_written"]
    with Vault.open(vault_dir) as vault:
        assert FRIDAY not in vault.forgotten
        assert FRIDAY in {e.id for e in vault.entries(at=at("2026-11-05 13:00"))}
    assert maintain(runner, "--at", "2026-11-05 12:00")["brought_back"] == []  # once


def test_back_is_what_choose_no_longer_chooses():
    t = datetime(2026, 1, 1, tzinfo=BERLIN)
    held = [Candidate("low", 0.02, t), Candidate("up", 0.7, t), Candidate("vip", 0.0, t, 0.9)]
    settings = Settings()
    chosen = choose(held, settings)
    assert [c.id for c in chosen] == ["low"]
    assert [(c.id, why) for c, why in back(held, chosen, settings)] == [
        ("up", "retention 0.70 ≥ 0.1"), ("vip", "importance 0.9 ≥ keep_importance 0.7")]


# -- 3. [retention] keep_importance


def test_high_importance_is_never_forgotten_and_a_recorded_one_comes_back(runner, vault_dir):
    start(runner, vault_dir, "[retention]\nkeep_importance = 1.1\n")
    run(runner, "log", "Mia is allergic to peanuts", "--importance", "high", "--at", "2026-01-05 09:10")
    run(runner, "log", "Kaffeemaschine im 3. Stock kaputt", "--importance", "low", "--at", "2026-01-06 09:10")
    allergy, coffee = "2026-01-05T09:10", "2026-01-06T09:10"
    assert {f["id"] for f in maintain(runner, "--at", "2026-06-01 12:00")["forgotten"]} == {allergy, coffee}
    (vault_dir / "memvault.toml").write_text('[vault]\ntimezone = "Europe/Berlin"\n')  # the default: 0.7
    report = maintain(runner, "--at", "2026-06-02 12:00")
    assert report["forgotten"] == []
    assert [(b["id"], b["why"]) for b in report["brought_back"]] == [(allergy, "importance 0.9 ≥ keep_importance 0.7")]
    with Vault.open(vault_dir) as vault:
        assert set(vault.forgotten) == {coffee}
        assert {e.id for e in vault.entries(at=at("2027-06-01 12:00"))} == {allergy}
    assert maintain(runner, "--at", "2030-01-01 12:00")["forgotten"] == []


def test_max_live_counts_the_important_ones_among_the_live():
    t = datetime(2026, 1, 1, tzinfo=BERLIN)
    found = [Candidate("vip", 0.2, t, 0.9), Candidate("a", 0.3, t), Candidate("b", 0.4, t)]
    assert [c.id for c in choose(found, Settings(max_live=2))] == ["a"]
    assert [c.id for c in choose(found, Settings(max_live=1))] == ["a", "b"]


def test_a_bad_keep_importance_names_the_file_and_key(runner, vault_dir):
    start(runner, vault_dir, "[retention]\nkeep_importance = \"high\"\n")
    result = runner.invoke(cli, ["maintain"])
    assert result.exit_code != 0
    assert "memvault.toml:4" in result.output and "keep_importance" in result.output


# -- 4. show finds an archived entry in its archive file


def test_show_reads_an_archived_entry_from_its_archive_file(runner, vault_dir):
    start(runner, vault_dir)
    run(runner, "log", "User prefers tabs over spaces in Go code", "--importance", "low", "--at", "2026-08-10 10:00")
    run(runner, "log", "Lena's Zugangscode ist 0815", "--at", "2026-08-10 11:00")
    report = maintain(runner, "--archive", "--at", "2026-12-01 12:00")
    assert [m["id"] for m in report["archived"]] == [FRIDAY, "2026-08-10T11:00"]
    with Vault.open(vault_dir) as vault:
        assert FRIDAY not in vault.timeline.by_id
        shown = vault.show(FRIDAY)
    assert (shown["status"], shown["content"], shown["importance"]) == ("archived", "User prefers tabs over spaces "
                                                                       "in Go code", 0.2)
    assert shown["archived"]["from"] == "memory/2026-08-10.md" and shown["found_by"]["how"] == "archive"
    lines = (vault_dir / shown["file"]).read_text().split("\n")
    assert shown["file"] == "forgotten/2026.md" and lines[shown["line"] - 1] == "## 10:00 - Observation"
    assert lines[shown["line"]] == "User prefers tabs over spaces in Go code"
    text = run(runner, "show", FRIDAY)
    assert f"{FRIDAY}  observation" in text and "[archived]" in text
    assert f"archived to forgotten/2026.md:{shown['line']} from memory/2026-08-10.md" in text
    missing = runner.invoke(cli, ["show", "2026-08-10T12:00"])
    assert missing.exit_code == 1 and "no entry with id" in missing.output
