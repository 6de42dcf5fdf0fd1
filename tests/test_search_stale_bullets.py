"""Issue 13 point 5, search side: a bullet whose every source is superseded ranks as a superseded entry.

Repro: a belief curated into MEMORY.md, then a correction of it logged with an earlier time than the
curation. Until curate applies it, the bullet states the corrected belief; it ranked above the
correction. Through the CLI in a real vault, checked through the library.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memvault.cli import cli
from memvault.search.rank import rank_events, sources_superseded
from memvault.vault import Vault

QUERY = "README GIF top"


def run(runner, *args: str) -> str:
    result = runner.invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture
def stale(vault_dir: Path, runner) -> Path:
    run(runner, "init", str(vault_dir))
    run(runner, "log", "--type", "belief", "--at", "2026-11-20 09:00", "User wants a GIF at the top of the README")
    run(runner, "log", "--type", "decision", "--at", "2026-11-20 10:00", "Nutzer will das Changelog auf Deutsch")
    run(runner, "curate", "--yes", "--at", "2026-11-21 12:00")
    run(runner, "log", "--type", "correction", "--at", "2026-11-20 11:00", "--supersedes", "2026-11-20T09:00",
        "User wants a screenshot at the top of the README, not a GIF")
    return vault_dir


def bullet_id(root: Path) -> str:
    tl = Vault.open(root).timeline
    (bid,) = tl.cited_by(tl.by_id["2026-11-20T09:00"])
    return bid


def test_the_stale_bullet_ranks_below_the_correction_and_says_why(stale, runner):
    bid = bullet_id(stale)
    hits = json.loads(run(runner, "search", "--json", QUERY))
    ids = [h["id"] for h in hits]
    assert ids.index("2026-11-20T11:00") < ids.index(bid)
    (bullet,) = [h for h in hits if h["id"] == bid]
    assert bullet["status"] == "live" and bullet["sources_superseded_by"] == "2026-11-20T11:00"
    assert all(h["sources_superseded_by"] is None for h in hits if h["id"] != bid)
    text = run(runner, "search", QUERY)
    line = Vault.open(stale).timeline.by_id[bid].line
    mark = {"active": "\u25cf", "fading": "\u25d0", "forgotten": "\u25cb"}[bullet["retention"]["status"]]
    assert f"{bid}  belief  {mark} MEMORY.md#L{line}-L{line}  [sources superseded by 2026-11-20T11:00]" in text
    # The in-memory ranking (time travel's) agrees with the index.
    vault = Vault.open(stale)
    mem = rank_events(vault.events, QUERY, vault.timeline, vault.now(), vault.config)
    assert [h.id for h in mem] == ids
    # The bullet is scored down exactly as a superseded entry is.
    plain = [h for h in rank_events(vault.events, QUERY, vault.timeline, vault.now(), vault.config,
                                    include_all=True) if h.id == "2026-11-20T09:00"]
    assert plain and plain[0].sources_superseded_by is None


def test_once_curate_applies_the_correction_the_bullet_is_live_again(stale, runner):
    bid = bullet_id(stale)
    run(runner, "curate", "--yes", "--at", "2026-11-22 12:00")  # proposes the update without --all
    vault = Vault.open(stale)
    ev = vault.timeline.by_id[bid]
    assert "screenshot" in ev.content or "screenshot" in ev.title
    assert sources_superseded(ev, vault.timeline, vault.now()) is None  # it cites the live correction too
    hits = json.loads(run(runner, "search", "--json", QUERY))
    assert hits[0]["id"] == bid and hits[0]["sources_superseded_by"] is None


def test_a_bullet_with_one_live_source_or_none_is_not_marked(vault_dir, runner):
    run(runner, "init", str(vault_dir))
    (vault_dir / "MEMORY.md").write_text(
        "# Long-Term Memory\n\n## Notes\n"
        "- Staging deploys go through Jenkins (source: [[2026-11-20#09:00 - Belief]], "
        "[[2026-11-20#10:00 - Observation]]) ^mv-aaaaaa\n"
        "- Staging deploys need a VPN (source: user) ^mv-bbbbbb\n"
        "- Staging deploys are manual ^mv-cccccc\n", encoding="utf-8")
    run(runner, "log", "--type", "belief", "--at", "2026-11-20 09:00", "Staging deploys go through Jenkins")
    run(runner, "log", "--at", "2026-11-20 10:00", "Staging deploys through Jenkins again today")
    run(runner, "log", "--type", "correction", "--at", "2026-11-20 11:00", "--supersedes", "2026-11-20T09:00",
        "Staging deploys go through GitHub Actions now")
    vault = Vault.open(vault_dir)
    tl = vault.timeline
    assert tl.status(tl.by_id["2026-11-20T09:00"]) == "superseded"
    for bid in ("mv-aaaaaa", "mv-bbbbbb", "mv-cccccc"):
        assert sources_superseded(tl.by_id[bid], tl, vault.now()) is None
    hits = json.loads(run(runner, "search", "--json", "staging deploys"))
    assert {h["id"] for h in hits} >= {"mv-aaaaaa", "mv-bbbbbb", "mv-cccccc"}
    assert all(h["sources_superseded_by"] is None for h in hits)
