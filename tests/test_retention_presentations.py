"""An entry's presentations come from the files: its own time, `Reconfirms:`, later entries that
say the same (curate's test), its `updated` date; recalls add the access bonus."""

from __future__ import annotations

import math
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memvault.config.core import Config
from memvault.entries.daily import parse_log
from memvault.entries.presentations import SaidAgain, presentation_times, retention_of
from memvault.entries.timeline import Timeline

UTC = ZoneInfo("UTC")

def timeline(*files: tuple[str, str], decay: dict[str, object] | None = None) -> Timeline:
    cfg = Config.from_dict({"vault": {"timezone": "UTC"}, "decay": decay or {}})
    events = []
    for day, body in files:
        events += parse_log(f"# {day}\n\n{body}", f"memory/{day}.md", cfg).events
    return Timeline(events, cfg)

def at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)

LOGS = (
    ("2026-01-01", "## 09:00 - Observation\nAnna Müller arbeitet jetzt bei der Stadtbibliothek Köln.\n\n"
                   "## 10:00 - Belief\nUser prefers dark mode in every editor\n"),
    ("2026-01-20", "## 08:00 - Observation\nFYI: Anna Müller arbeitet jetzt bei der Stadtbibliothek in Köln\n\n"
                   "## 09:30 - Observation\nUser prefers light mode in every editor\n"),
    ("2026-02-10", "## 12:00 - Observation\nstill the case\nReconfirms: 2026-01-01T09:00\n"),
)

def test_presentations_are_own_time_reconfirmations_and_later_entries_saying_the_same():
    tl = timeline(*LOGS)
    said = SaidAgain(tl)
    anna = tl.by_id["2026-01-01T09:00"]
    assert presentation_times(tl, said, anna, at("2026-03-01T00:00")) == [
        at("2026-01-01T09:00"), at("2026-01-20T08:00"), at("2026-02-10T12:00")]
    # only those written by then
    assert presentation_times(tl, said, anna, at("2026-01-25T00:00")) == [
        at("2026-01-01T09:00"), at("2026-01-20T08:00")]
    # a different value (dark / light) is not the same fact said again
    dark = tl.by_id["2026-01-01T10:00"]
    assert presentation_times(tl, said, dark, at("2026-03-01T00:00")) == [at("2026-01-01T10:00")]
    # the later entry is not presented again by the earlier one
    again = tl.by_id["2026-01-20T08:00"]
    assert presentation_times(tl, said, again, at("2026-03-01T00:00")) == [at("2026-01-20T08:00")]

def test_said_again_finds_the_same_pairs_as_comparing_every_pair():
    from memvault.entries.similarity import same_fact
    texts = ["Anna moved to Berlin in March", "Anna moved to Berlin in March 2026 with Tom",
             "Tom likes green tea with honey", "Tom likes green tea with lemon", "Tom likes green tea",
             "Der Server läuft auf Port 8080", "Der Server läuft jetzt auf Port 8080",
             "Meeting with Bob on Friday about the budget", "Budget meeting with Bob on Friday"]
    body = "".join(f"## {9 + i:02d}:00 - Observation\n{t}\n\n" for i, t in enumerate(texts))
    tl = timeline(("2026-01-05", body))
    said = SaidAgain(tl)
    found = {(e.id, later) for e in tl.events for later in said.of(e)}
    brute = {(a.id, b.id) for a in tl.events for b in tl.events
             if a.timestamp < b.timestamp and same_fact(a.content, b.content)}  # type: ignore[operator]
    assert found == brute
    assert found  # the fixture has pairs to find

VOCAB = ("Anna paid pays pay the rent studies study studying running run ran Berlin Köln moved moves "
         "not never tea coffee 2026-03-01 8080 port server läuft jetzt Bob budget meeting jammed jam "
         "went goes made make bought buys kept keeps holds held").split()


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(st.sampled_from(VOCAB), min_size=1, max_size=7), min_size=2, max_size=8))
def test_probing_finds_every_pair_that_comparing_all_pairs_finds(sentences):
    from memvault.entries.similarity import same_fact
    body = "".join(f"## {9 + i:02d}:00 - Observation\n{' '.join(words)}\n\n" for i, words in enumerate(sentences))
    tl = timeline(("2026-01-05", body))
    said = SaidAgain(tl)
    found = {(e.id, later) for e in tl.events for later in said.of(e)}
    brute = {(a.id, b.id) for a in tl.events for b in tl.events
             if a.timestamp < b.timestamp and same_fact(a.content, b.content)}  # type: ignore[operator]
    assert found == brute


def test_retention_under_each_model_and_the_documented_statuses():
    at_ = at("2026-03-01T09:00")
    statuses = {}
    for model in ("exponential", "ebbinghaus", "forgetting-curve"):
        tl = timeline(*LOGS, decay={"model": model})
        said = SaidAgain(tl)
        statuses[model] = {e.id: retention_of(tl, said, e, at_).status for e in tl.events}
    # dark mode, written 59 days before: 0.95^59 = 0.048 (forgotten); seed 001: one presentation,
    # medium: -0.5 ln 59 = -2.039 → logistic(0.461) = 0.613 (active)
    assert statuses["exponential"]["2026-01-01T10:00"] == "forgotten"
    assert statuses["ebbinghaus"]["2026-01-01T10:00"] == "forgotten"
    assert statuses["forgetting-curve"]["2026-01-01T10:00"] == "active"
    # Anna, reconfirmed 18.875 days before: 0.95^18.875 = 0.380 (fading)
    assert statuses["exponential"]["2026-01-01T09:00"] == "fading"
    assert statuses["forgetting-curve"]["2026-01-01T09:00"] == "active"

def test_the_value_is_the_seed_formula_over_those_presentations():

    tl = timeline(*LOGS, decay={"model": "forgetting-curve"})
    r = retention_of(tl, SaidAgain(tl), tl.by_id["2026-01-01T09:00"], at("2026-03-01T09:00"), {"2026-01-01T09:00": 2})
    # ages 59, 40.04167, 18.875 days; ln(Σ t^-0.5) + 0 + 0.16, threshold -2.5
    ages = (59, 40 + 1 / 24, 18.875)
    a = math.log(sum(t**-0.5 for t in ages)) + 0.16
    assert r.value == pytest.approx(max(math.exp(-59 / 100), 1 / (1 + math.exp(-(a + 2.5)))))
    assert (r.presentations, r.accesses, r.status) == (3, 2, "active")

def test_a_recall_never_lowers_retention_and_hours_tick_faster():
    tl = timeline(*LOGS, decay={"model": "forgetting-curve"})
    said = SaidAgain(tl)
    dark = tl.by_id["2026-01-01T10:00"]
    late = at("2026-03-01T10:00")  # 59 days: the ACT-R term carries it, and recalls add to it
    assert retention_of(tl, said, dark, late, {dark.id: 5}).value > retention_of(tl, said, dark, late).value
    when = at("2026-01-08T10:00")
    hourly = timeline(*LOGS, decay={"model": "forgetting-curve", "tick": "1h"})
    # 168 ticks of an hour: -0.5 ln 168 = -2.562 → logistic(-0.062) = 0.484: fading, where days keep it
    value = retention_of(hourly, SaidAgain(hourly), hourly.by_id[dark.id], when).value
    assert value == pytest.approx(1 / (1 + math.exp(-(-0.5 * math.log(168) + 2.5))))
    assert retention_of(hourly, SaidAgain(hourly), hourly.by_id[dark.id], when).status == "fading"
    assert retention_of(tl, said, dark, when).status == "active"

def test_undated_entries_keep_all_of_it():
    cfg = Config.from_dict({"vault": {"timezone": "UTC"}})
    from memvault.entries.memory_md import parse_memory
    parsed = parse_memory("# Long-Term Memory\n\n## Preferences\n- Prefers light mode\n", "MEMORY.md", cfg)
    tl = Timeline(parsed.events, cfg)
    r = retention_of(tl, SaidAgain(tl), tl.events[0], at("2030-01-01T00:00") + timedelta(days=1))
    assert (r.value, r.status, r.presentations) == (1.0, "active", 0)



def _snapshot(root):
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and ".memvault" not in p.parts}


def test_a_vault_under_each_model_changes_no_file_and_counts_its_recalls(vault_dir):
    from memvault.search import access
    from memvault.vault import Vault

    (vault_dir / "memory").mkdir()
    for day, body in LOGS:
        (vault_dir / "memory" / f"{day}.md").write_text(f"# {day}\n\n{body}", encoding="utf-8")
    access.record(vault_dir, ["2026-01-01T10:00"], at("2026-02-01T00:00"))
    access.record(vault_dir, ["2026-01-01T10:00"], at("2026-02-02T00:00"))
    before = _snapshot(vault_dir)
    when = at("2026-03-01T10:00")
    seen = {}
    for model in ("exponential", "ebbinghaus", "forgetting-curve", "exponential"):
        (vault_dir / "memvault.toml").write_text(f'[vault]\ntimezone = "UTC"\n\n[decay]\nmodel = "{model}"\n')
        with Vault.open(vault_dir) as vault:
            r = vault.timeline.retention(vault.timeline.by_id["2026-01-01T10:00"], when)
        seen[model] = (r.status, r.accesses, r.presentations)
        after = _snapshot(vault_dir)
        assert {k: v for k, v in after.items() if k != "memvault.toml"} == \
               {k: v for k, v in before.items() if k != "memvault.toml"}
    # 59 days, 2 recalls: exponential 0.95^59 = 0.049; seed 001: -2.039 + 0.16 → logistic(0.621) = 0.650
    assert seen == {"exponential": ("forgotten", 2, 1), "ebbinghaus": ("forgotten", 2, 1),
                    "forgetting-curve": ("active", 2, 1)}


def test_confidence_decays_per_tick_under_the_vaults_model():
    hourly = timeline(*LOGS, decay={"rate": 0.5, "tick": "1h"})
    dark = hourly.by_id["2026-01-01T10:00"]
    assert hourly.confidence(dark, at("2026-01-01T12:00")) == pytest.approx(0.25)  # 0.5^2
    daily = timeline(*LOGS)
    assert daily.confidence(daily.by_id[dark.id], at("2026-01-15T10:00")) == pytest.approx(0.95**14)
    # seed 001: one presentation at the last confirmation, medium, never recalled:
    # 14 days → max(e^-0.14 = 0.869, logistic(-0.5 ln 14 + 2.5) = 0.765) = 0.869
    curve = timeline(*LOGS, decay={"model": "forgetting-curve"})
    assert curve.confidence(curve.by_id[dark.id], at("2026-01-15T10:00")) == pytest.approx(math.exp(-0.14))
