"""`list`'s retentions in one pass (`Timeline.retentions`, presentations.retention_dicts) equal
each entry's `retention(...).to_dict()`: every model, entries presented once, updated,
reconfirmed, said again, recalled, undated, curated, future-dated; on-demand and stored pairs."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from memvault.config.core import Config
from memvault.entries.daily import parse_log
from memvault.entries.memory_md import parse_memory
from memvault.entries.retention import MODELS
from memvault.entries.timeline import Timeline
from memvault.search.said_store import StoredSaidAgain

UTC = ZoneInfo("UTC")
LOGS = (
    ("2026-01-01", "## 09:00 - Observation\nAnna Müller arbeitet jetzt bei der Stadtbibliothek Köln.\n\n"
                   "## 10:00 - Belief\nUser prefers dark mode in every editor\nImportance: 0.9\n\n"
                   "## 11:00 - Fact\nDer Server läuft auf Port 8080\n"),
    ("2026-01-20", "## 08:00 - Observation\nFYI: Anna Müller arbeitet jetzt bei der Stadtbibliothek in Köln\n\n"
                   "## 09:30 - Observation\nUser prefers light mode in every editor\nImportance: 0.1\n\n"
                   "## 09:45 - Observation\nUser prefers light mode in every editor\n"),
    ("2026-02-10", "## 12:00 - Observation\nstill the case\nReconfirms: 2026-01-01T09:00\n\n"
                   "## 13:00 - Decision\nWe ship the Q1 release on 2026-03-15, freeze a week before\n"),
    ("2026-06-01", "## 07:00 - Plan\nKäse & Brot für das Sommerfest bestellen\n"),  # after some `at`s: future
)
MEMORY = ("# MEMORY\n\n## Prefs\n- Oskar mag Rooibos-Tee am Abend\n"
          "- Ship dates live in the release doc (added 2026-01-05) (updated 2026-02-15, was: the wiki)\n")
TIMES = ["2025-12-31T00:00", "2026-01-20T08:30", "2026-03-01T00:00", "2027-01-01T00:00"]


def timeline(model: str) -> Timeline:
    cfg = Config.from_dict({"vault": {"timezone": "UTC"}, "decay": {"model": model}})
    events = [e for day, body in LOGS for e in parse_log(f"# {day}\n\n{body}", f"memory/{day}.md", cfg).events]
    events += parse_memory(MEMORY, "MEMORY.md", cfg).events
    tl = Timeline(events, cfg)
    tl.recalls = {"2026-01-01T10:00": 3, "2026-01-20T09:30": 12}
    return tl


@pytest.mark.parametrize("model", sorted(MODELS))
@pytest.mark.parametrize("stored", [False, True])
def test_one_pass_equals_each_entry_asked_alone(model: str, stored: bool, tmp_path: Path):
    tl = timeline(model)
    if stored:
        tl.said_again_source = lambda t: StoredSaidAgain(tmp_path, t)
    events = tl.events
    assert any(e.timestamp is None for e in events) and any(e.updated for e in events)
    for when in TIMES:
        at = datetime.fromisoformat(when).replace(tzinfo=UTC)
        alone = [tl.retention(e, at).to_dict() for e in events]
        assert tl.retentions(events, at) == alone, when
    # the cases the one pass hands to the general path are there: said again, reconfirmed, updated
    late = datetime(2027, 1, 1, tzinfo=UTC)
    counted = {e.id: tl.retention(e, late).presentations for e in events}
    assert counted["2026-01-01T09:00"] == 3 and 2 in {counted[e.id] for e in events if e.updated}
    assert counted["2026-01-20T09:30"] == 2  # the same text at 09:45


def test_an_unknown_model_is_refused_as_before():
    tl = timeline("exponential")
    tl.config.decay_model = "nope"  # type: ignore[misc]
    with pytest.raises(ValueError, match="unknown retention model 'nope'"):
        tl.retentions(tl.events, datetime(2026, 3, 1, tzinfo=UTC))


@pytest.mark.parametrize("model", sorted(MODELS))
def test_the_written_out_curves_equal_the_models(model: str):
    from memvault.entries.retention import Memory, Params, presented_once, retention

    for params in (Params(), Params(rate=0.8, strength=30.0), Params(rate=1.0)):
        once = presented_once(model, params)
        for age in (0.0, 0.5, 1.0, 13.5, 45.0, 400.0, 1e6):
            for importance in ("low", "medium", "high"):
                for accesses in (0, 3, 50):
                    want = retention(model, Memory(age, (), importance, accesses), params)
                    assert once(age, importance, accesses) == want, (age, importance, accesses)
