"""StateTimeline (recorded time's fast path) equals Timeline on the same events, always."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memvault.config.core import Config
from memvault.entries.timeline import Timeline
from memvault.history.timelines import StateTimeline, VersionInfos
from memvault.layout import iter_markdown
from memvault.parsed import parse_path, parse_text
from memvault.vault import Vault

from .conftest import DATA

CFG = Config(timezone="Europe/Berlin")

# Versions of files a state may hold: every reference form, duplicates, reconfirmations,
# MEMORY.md with dated and undated bullets, two logs of one date, a text reference whose
# answer depends on which other files are present.
EXTRA = {
    "memory/2026-02-14.md": [
        "# 2026-02-14\n\n## 14:30 - Belief\nUser wants weekly updates on Friday afternoons\n\n"
        "## 15:00 - Belief\nUser prefers dark mode ^dark\n",
        "# 2026-02-14\n\n## 14:30 - Belief\nUser wants weekly updates on Friday\nId: fri\n\n"
        "## 14:30 - Belief\nSame minute twin\n",
    ],
    "memory/2026-02-21.md": [
        "# 2026-02-21\n\n## 16:00 - Correction\nMonday, not Friday\nSupersedes: belief about Friday updates from 2026-02-14\n",
        "# 2026-02-21\n\n## 09:00 - Correction\nLight mode\nSupersedes: [[2026-02-14#^dark]]\n\n"
        "## 16:00 - Correction\nMonday\nSupersedes: fri\n\n## 17:00 - Belief\nStill Monday\nReconfirms: 2026-02-21T16:00\n",
    ],
    "memory/archive/2026-02-21.md": [
        "# 2026-02-21\n\n## 16:00 - Belief\nA second log for the date\nId: fri\n",
    ],
    "memory/2026-02-22.md": [
        "# 2026-02-22\n\n## 08:00 - Decision\nAgreed on Friday updates again\nSupersedes: the Friday updates\n"
        "Expires: 2026-02-25T00:00\n\n## 08:00 - Belief\nCycle one\nId: c1\nSupersedes: c2\n\n"
        "## 08:05 - Belief\nCycle two\nId: c2\nSupersedes: c1\n",
        "# 2026-02-22\n\n## 08:00 - Decision\nSelf\nId: me\nSupersedes: me\n\n## 09:00 - Belief\nDangling\nSupersedes: nothing-like-this\n",
    ],
    "MEMORY.md": [
        "# Long-Term Memory\n\n## User Preferences\n- Prefers light mode (updated 2026-02-21, was: dark mode) ^light\n"
        "- Weekly check-ins on Monday\n\n## Lessons\n- Dated lesson (added 2026-02-10)\n",
        "# Long-Term Memory\n\n## User Preferences\n- Prefers dark mode ^dark\n",
    ],
}


def corpus() -> dict[str, list[list]]:
    """path -> list of versions (each a list of events)."""
    out: dict[str, list[list]] = {}
    for name in ("seed", "messy", "obsidian"):
        root = DATA / name
        for rel in iter_markdown(root):
            out.setdefault(rel, []).append(parse_path(root, rel, CFG).events)
    for rel, texts in EXTRA.items():
        for text in texts:
            out.setdefault(rel, []).append(parse_text(text, rel, CFG).events)
    return out


def same(a: Timeline, b: Timeline) -> None:
    assert [id(e) for e in a.events] == [id(e) for e in b.events]
    assert {k: id(v) for k, v in a.by_id.items()} == {k: id(v) for k, v in b.by_id.items()}
    assert a.supersedes == b.supersedes
    assert {k: v for k, v in a.superseded_by.items() if v} == {k: v for k, v in b.superseded_by.items() if v}
    assert {k: v for k, v in a.reconfirmed_by.items() if v} == {k: v for k, v in b.reconfirmed_by.items() if v}


def test_state_timeline_equals_timeline_on_random_states():
    files = corpus()
    infos = VersionInfos(CFG)
    rng = random.Random(5)
    base = datetime(2026, 1, 1, tzinfo=UTC)
    for _ in range(150):
        chosen = {}
        for path, versions in files.items():
            if rng.random() < 0.7:
                k = rng.randrange(len(versions))
                chosen[(path, str(k))] = versions[k]
        fast = StateTimeline([infos.get(key, evs) for key, evs in chosen.items()], CFG)
        slow = Timeline([e for evs in chosen.values() for e in evs], CFG)
        same(fast, slow)
        for hours in range(0, 60 * 24, 7):
            at = base + timedelta(hours=hours)
            assert fast.live(at) == slow.live(at), at
        assert fast.live() == slow.live()
        for ev in slow.events[:20]:
            assert fast.to_dict(ev, base + timedelta(days=50)) == slow.to_dict(ev, base + timedelta(days=50))


def test_snapshots_use_the_fast_timeline_and_agree_with_a_fresh_parse(tmp_path: Path):
    from .helpers_history import build_history

    hist = build_history(tmp_path / "h", 21, steps=25)
    vault = Vault.open(hist.root)
    past = vault.past
    for c in hist.commits:
        snap = past.snapshot(past.require_repo().resolve(c.sha))  # type: ignore[arg-type]
        assert isinstance(snap.timeline, StateTimeline)
        slow = Timeline(list(snap.events), vault.config)
        same(snap.timeline, slow)
        for dt in (timedelta(0), timedelta(seconds=-1), timedelta(hours=5)):
            assert snap.timeline.live(c.time + dt) == slow.live(c.time + dt)


@pytest.mark.parametrize("n", [0, 1])
def test_empty_states(n):
    infos = VersionInfos(CFG)
    events = parse_text("# 2026-01-01\n", "memory/2026-01-01.md", CFG).events
    state = StateTimeline([infos.get(("memory/2026-01-01.md", "x"), events)] * n, CFG)
    assert state.events == [] and state.live(datetime(2026, 1, 2, tzinfo=UTC)) == []


def test_cached_events_round_trip_exactly():
    from dataclasses import fields

    from memvault.entries.model import Event
    from memvault.history.snapshot import FIELDS, dump_events, load_events

    assert tuple(f.name for f in fields(Event)) == FIELDS
    events = [e for versions in corpus().values() for evs in versions for e in evs]
    assert load_events(dump_events(events, CFG.tz), CFG.tz) == events


def test_cached_live_intervals_round_trip_and_match_probing():
    from memvault.history.snapshot import dump_spans, load_spans
    from memvault.history.timelines import VersionInfo

    infos = VersionInfos(CFG)
    for versions in corpus().values():
        for events in versions:
            probed = VersionInfo.of("x", events, infos.solo)
            spans = [(s, e) for _, s, e in sorted(probed.rows, key=lambda r: events.index(r[0]))]
            assert load_spans(dump_spans(spans)) == spans
            cached = VersionInfo.of("x", events, infos.solo, load_spans(dump_spans(spans)))
            assert cached.rows == probed.rows
