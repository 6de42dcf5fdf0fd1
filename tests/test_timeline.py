"""Supersession resolution, the live-at-T rule, and confidence decay."""

from __future__ import annotations

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from memvault.config.core import Config
from memvault.entries import decay
from memvault.entries.daily import parse_log
from memvault.entries.timeline import Timeline
from memvault.vault import Vault

from .conftest import plain_vault

UTC = ZoneInfo("UTC")
CFG = Config(timezone="UTC")


def timeline(*files: tuple[str, str]) -> Timeline:
    events = []
    for day, body in files:
        events += parse_log(f"# {day}\n\n{body}", f"memory/{day}.md", CFG).events
    return Timeline(events, CFG)


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


DAY1 = ("2026-02-14", "## 14:30 - Belief\nUser wants weekly updates on Friday\n\n## 15:00 - Belief\nUser prefers dark mode\n")


@pytest.mark.parametrize(
    "ref",
    [
        "2026-02-14T14:30",
        "2026-02-14 14:30",
        "[[2026-02-14#14:30 - Belief]]",
        "[[2026-02-14#14:30]]",
        "[[memory/2026-02-14#14:30 - Belief|the Friday belief]]",
        "belief about Friday updates from 2026-02-14",
        "the Friday updates",
    ],
)
def test_every_reference_form_resolves(ref):
    tl = timeline(DAY1, ("2026-02-21", f"## 16:00 - Correction\nMonday, not Friday\nSupersedes: {ref}\n"))
    assert tl.problems == []
    assert tl.supersedes == {"2026-02-21T16:00": "2026-02-14T14:30"}
    assert tl.superseded_by["2026-02-14T14:30"] == ["2026-02-21T16:00"]


def test_block_reference_resolves():
    tl = timeline(("2026-02-14", "## 14:30 - Belief\nFriday updates ^fri\n"),
                  ("2026-02-21", "## 16:00 - Correction\nMonday\nSupersedes: [[2026-02-14#^fri]]\n"))
    assert tl.supersedes == {"2026-02-21T16:00": "2026-02-14T14:30"}


@pytest.mark.parametrize(
    "ref, fragment",
    [
        ("belief from 2026-02-14", "ambiguous; candidates: 2026-02-14T14:30 (memory/2026-02-14.md:3), 2026-02-14T15:00"),
        ("belief about pizza from 2026-02-14", "does not resolve"),
        ("2026-01-01T09:00", "does not resolve: no entry with id 2026-01-01T09:00"),
        ("[[2026-02-14#09:00 - Belief]]", "does not resolve"),
    ],
)
def test_unclear_references_are_reported_not_guessed(ref, fragment):
    tl = timeline(DAY1, ("2026-02-21", f"## 16:00 - Correction\nsomething\nSupersedes: {ref}\n"))
    assert tl.supersedes == {}
    (problem,) = tl.problems
    assert fragment in problem.message and problem.line == 3


def test_description_only_matches_earlier_entries():
    tl = timeline(("2026-02-14", "## 09:00 - Belief\ncoffee is good\n\n## 10:00 - Correction\ncoffee is bad\nSupersedes: belief about coffee\n\n## 11:00 - Belief\ncoffee maybe\n"))
    assert tl.supersedes == {"2026-02-14T10:00": "2026-02-14T09:00"}


def test_chain_and_live_at_boundaries():
    tl = timeline(
        ("2026-02-01", "## 09:00 - Belief\nA\n"),
        ("2026-02-02", "## 09:00 - Correction\nB\nSupersedes: 2026-02-01T09:00\n"),
        ("2026-02-03", "## 09:00 - Correction\nC\nSupersedes: 2026-02-02T09:00\n"),
    )
    a, b, c = (tl.by_id[f"2026-02-0{i}T09:00"] for i in (1, 2, 3))
    assert [e.id for e in tl.chain(b.id)] == [a.id, b.id, c.id]
    # exactly at B's timestamp, B is live and A is superseded (<=, not <)
    t_b = at("2026-02-02T09:00")
    assert tl.status(a, t_b) == "superseded" and tl.status(b, t_b) == "live"
    assert tl.status(c, t_b) == "future"
    just_before = t_b - timedelta(microseconds=1)
    assert tl.status(a, just_before) == "live" and tl.status(b, just_before) == "future"
    assert [e.id for e in tl.live(at("2026-02-03T09:00"))] == [c.id]
    assert tl.superseder_at(a, at("2026-02-05T00:00")) == b.id


def test_cycles_and_self_supersession_are_reported():
    tl = timeline(("2026-02-01", "## 09:00 - Belief\nA\nId: A\nSupersedes: B\n\n## 10:00 - Belief\nB\nId: B\nSupersedes: A\n\n## 11:00 - Belief\nC\nId: C\nSupersedes: C\n"))
    messages = [p.message for p in tl.problems]
    assert any("cycle" in m for m in messages) and any("supersedes itself" in m for m in messages)
    assert tl.supersedes == {"A": "B"}


def test_superseding_a_later_entry_is_a_warning():
    tl = timeline(("2026-02-01", "## 09:00 - Belief\nA\nSupersedes: 2026-02-01T10:00\n\n## 10:00 - Belief\nB\n"))
    assert [p.severity for p in tl.problems] == ["warning"]


def test_expired_entries_are_not_live():
    tl = timeline(("2026-02-01", "## 09:00 - Belief\nA\nExpires: 2026-02-05\n"))
    ev = tl.events[0]
    assert tl.status(ev, at("2026-02-04T23:59:59")) == "live"
    assert tl.status(ev, at("2026-02-05T00:00")) == "expired"


def test_decay_is_fractional_days_from_last_confirmation():
    tl = timeline(
        ("2026-02-01", "## 12:00 - Belief\nA\nConfidence: 0.8\n"),
        ("2026-02-03", "## 00:00 - Observation\nstill true\nReconfirms: 2026-02-01T12:00\n"),
    )
    ev = tl.by_id["2026-02-01T12:00"]
    assert tl.confidence(ev, at("2026-02-01T12:00")) == pytest.approx(0.8)
    assert tl.confidence(ev, at("2026-02-02T00:00")) == pytest.approx(0.8 * 0.95**0.5)
    # reconfirmed at 2026-02-03 00:00: decay restarts from there
    assert tl.confidence(ev, at("2026-02-04T06:00")) == pytest.approx(0.8 * 0.95**1.25)
    assert decay.confidence_at(1.0, at("2026-02-01T00:00"), at("2026-02-15T00:00")) == pytest.approx(0.95**14)


def test_decay_rate_and_model_come_from_config():
    assert decay.confidence_at(1.0, at("2026-02-01T00:00"), at("2026-02-02T00:00"), rate=0.5) == pytest.approx(0.5)
    assert decay.confidence_at(1.0, at("2026-02-01T00:00"), at("2026-02-02T00:00"), rate=0.5, model="ebbinghaus") == pytest.approx(0.5)
    with pytest.raises(ValueError):
        decay.confidence_at(1.0, at("2026-02-01T00:00"), at("2026-02-02T00:00"), model="nope")


def test_curated_updated_date_counts_as_reconfirmation(sample_vault):
    vault = Vault.open(sample_vault)
    light = next(e for e in vault.events if e.content == "Prefers light mode")
    t = datetime(2026, 2, 23, tzinfo=ZoneInfo("Europe/Berlin"))
    assert vault.timeline.confidence(light, t) == pytest.approx(0.95**2)


def test_seed_correction_supersedes_the_friday_belief(sample_vault):
    vault = Vault.open(sample_vault)
    belief = vault.get("2026-02-14T14:30")
    data = vault.as_dict(belief)
    assert data["status"] == "superseded" and data["superseded_by"] == "2026-02-21T16:00"
    assert vault.as_dict(vault.get("2026-02-21T16:00"))["supersedes"] == "2026-02-14T14:30"


def test_a_curated_bullet_that_cites_its_correction_is_not_superseded_by_it(vault_dir):
    (vault_dir / "memory").mkdir()
    (vault_dir / "memvault.toml").write_text('[vault]\ntimezone = "UTC"\n')
    (vault_dir / "memory" / "2026-02-21.md").write_text(
        "# 2026-02-21\n\n## 16:00 - Correction\nPrefers light mode\nSupersedes: ^mv-aaaaaa\n"
    )
    memory = "# Long-Term Memory\n\n## Prefs\n- {text} ^mv-aaaaaa\n"
    (vault_dir / "MEMORY.md").write_text(memory.format(text="Prefers dark mode"))
    vault = Vault.open(vault_dir)
    assert vault.as_dict(vault.get("mv-aaaaaa"))["status"] == "superseded"
    (vault_dir / "MEMORY.md").write_text(memory.format(
        text="Prefers light mode (updated 2026-02-21, was: dark mode) (source: [[2026-02-21#16:00 - Correction]])"))
    vault = Vault.open(vault_dir)
    assert vault.as_dict(vault.get("mv-aaaaaa"))["status"] == "live"
    assert vault.timeline.problems == []


def test_a_description_sharing_one_word_is_unresolved_not_ambiguous(vault_dir):
    # "something that does not exist" was "ambiguous" between five unrelated MEMORY.md bullets,
    # because "not" matched the crude stem of their section title "Notes".
    plain_vault(vault_dir)
    (vault_dir / "MEMORY.md").write_text(
        "# Long-Term Memory\n\n## Notes\n- CI takes 14 minutes\n- The build server is slow\n")
    day = vault_dir / "memory" / "2026-02-21.md"
    day.write_text(day.read_text() + "\n## 10:00 - Correction\nNo\nSupersedes: something that does not exist\n"
                   "\n## 11:00 - Correction\nCoffee\nSupersedes: tea and something else entirely\n")
    problems = {p.line: p.message for p in Vault.open(vault_dir).problems}
    assert problems[6] == ("Supersedes 'something that does not exist' does not resolve: "
                           "no earlier entry matches 'something that does not exist'")
    assert "does not resolve: no earlier entry has half of its words; closest: 2026-02-21T09:00" in problems[10]
