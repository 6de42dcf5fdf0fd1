"""The `Forgotten:` tombstone in the format (docs/format.md, "Forgetting"): the one live rule,
live intervals, search, the index and time travel all read it; and the new metadata lines."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from memvault.cli import cli
from memvault.entries.spans import SpanIndex
from memvault.errors import InputError
from memvault.search.index import search_vault
from memvault.vault import Vault
from memvault.write.log import log_entry
from tests.conftest import git

BERLIN = ZoneInfo("Europe/Berlin")
LOG = """# 2026-03-02

## 09:00 - Belief
Oskar mag Rooibos-Tee am Abend
Agent-Id: tea-bot
Forgotten: 2026-03-05T10:00+01:00, Oskar trinkt jetzt Kaffee

## 10:00 - Belief
Oskar mag Pfefferminztee am Morgen
"""


@pytest.fixture
def root(vault_dir: Path) -> Path:
    (vault_dir / "memory").mkdir()
    (vault_dir / "memvault.toml").write_text('[vault]\ntimezone = "Europe/Berlin"\n', encoding="utf-8")
    (vault_dir / "memory" / "2026-03-02.md").write_text(LOG, encoding="utf-8")
    git(vault_dir, "init", "-q")
    git(vault_dir, "add", "-A")
    git(vault_dir, "commit", "-q", "-m", "tea")
    return vault_dir


def at(day: int, hour: int = 12) -> datetime:
    return datetime(2026, 3, day, hour, tzinfo=BERLIN)


def test_the_live_rule_and_the_intervals_read_the_tombstone(root):
    tl = Vault.open(root).timeline
    gone = tl.by_id["2026-03-02T09:00"]
    assert [tl.status(gone, at(d)) for d in (1, 3, 5, 6)] == ["future", "live", "forgotten", "forgotten"]
    assert tl.status(gone, datetime(2026, 3, 5, 9, 59, tzinfo=BERLIN)) == "live"
    spans = SpanIndex(tl)
    for day in (3, 4, 6):
        assert [e.id for e in spans.live(at(day))] == [e.id for e in tl.live(at(day))]
    assert tl.to_dict(gone)["forgotten"] == "2026-03-05T10:00:00+01:00"


def test_search_leaves_it_out_and_all_shows_it_forgotten(root, runner):
    vault = Vault.open(root)
    assert [h.id for h in search_vault(vault, "Oskar Tee")] == ["2026-03-02T10:00"]
    everything = search_vault(vault, "Oskar Tee", include_all=True)
    assert {h.id: h.status for h in everything} == {"2026-03-02T09:00": "forgotten", "2026-03-02T10:00": "live"}
    asof = runner.invoke(cli, ["asof", "2026-03-04", "Rooibos", "--json"])
    assert asof.exit_code == 0 and "2026-03-02T09:00" in [d["id"] for d in json.loads(asof.output)]
    later = runner.invoke(cli, ["asof", "2026-03-06", "Rooibos", "--json"])
    assert "2026-03-02T09:00" not in [d["id"] for d in json.loads(later.output)]


def test_recorded_time_reads_the_tombstone_from_the_commit(root):
    past = Vault.open(root).as_of("HEAD", recorded=True)
    assert "2026-03-02T09:00" not in [d["id"] for d in past]  # forgotten by now, in the committed text
    text = (root / "memory" / "2026-03-02.md").read_text(encoding="utf-8")
    (root / "memory" / "2026-03-02.md").write_text(text.replace("Forgotten: 2026", "Forgotten: 2099"), encoding="utf-8")
    git(root, "commit", "-qam", "later")
    assert "2026-03-02T09:00" in [d["id"] for d in Vault.open(root).as_of("HEAD", recorded=True)]


def test_log_writes_the_agent_lines_and_refuses_unknown_or_broken_ones(root):
    vault = Vault.open(root)
    ev = log_entry(vault, "Oskar hat Geburtstag am 12. Mai", type="procedure", at=at(2, 11),
                   meta={"agent-id": "kalender-bot", "user-id": "oskar", "metadata": '{"quelle": "kalender"}'})
    text = (root / "memory" / "2026-03-02.md").read_text(encoding="utf-8")
    assert "## 11:00 - Procedure\nOskar hat Geburtstag am 12. Mai\nAgent-Id: kalender-bot\nUser-Id: oskar\n" \
           'Metadata: {"quelle": "kalender"}\n' in text
    back = Vault.open(root).timeline.by_id[ev.id]
    assert (back.type, back.meta["agent-id"], back.meta["user-id"]) == ("procedure", "kalender-bot", "oskar")
    with pytest.raises(InputError, match="no metadata line agent"):
        log_entry(vault, "x", meta={"agent": "a"})
    with pytest.raises(InputError, match="a single line"):
        log_entry(vault, "x", meta={"agent-id": "a\nb"})
    assert not Vault.open(root).problems


def test_an_edit_that_forgets_counts_as_an_edit_for_the_watcher(root):
    from memvault.sync.commit import diff_events

    vault = Vault.open(root)
    old = vault.timeline.by_id["2026-03-02T10:00"]
    new = type(old)(**{**{f: getattr(old, f) for f in old.__dataclass_fields__},
                       "forgotten": at(6) + timedelta(hours=1)})
    assert diff_events("memory/2026-03-02.md", "M", [old], [new]).edited == [new]


def test_curate_leaves_a_forgotten_entry_out_and_says_why(root):
    from memvault.curate.promote import plan_curation

    plan = plan_curation(Vault.open(root), at=at(9), everything=True)
    reason = plan.decisions["2026-03-02T09:00"].reason
    assert reason == "forgotten 2026-03-05T10:00:00+01:00"


def test_a_tombstone_under_a_freeform_section_forgets_its_notes(root):
    (root / "memory" / "2026-03-03.md").write_text(
        "# 2026-03-03\n\n## Einkauf\n\n- Hafermilch\n- Kaffeebohnen\n\nForgotten: 2026-03-04T08:00+01:00\n",
        encoding="utf-8")
    tl = Vault.open(root).timeline
    note = next(e for e in tl.events if e.file == "memory/2026-03-03.md" and e.is_note and "Hafermilch" in e.content)
    assert tl.status(note, at(3, 20)) == "live" and tl.status(note, at(4, 9)) == "forgotten"
