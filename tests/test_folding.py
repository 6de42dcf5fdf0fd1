"""Issue 13 point 6: after curation a fact shows once in `list` and `search`, the bullet with its sources."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memvault.cli import cli
from memvault.demo import build_demo
from memvault.entries.folding import fold_cited
from memvault.vault import Vault


def run(runner, root: Path, *args: str):
    result = runner.invoke(cli, ["--vault", str(root), *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture
def curated(vault_dir: Path, runner) -> Path:
    """The seed story (`memvault demo`), curated once with `curate --yes`."""
    root = build_demo(vault_dir / "demo")
    run(runner, root, "curate", "--yes")
    return root


def ids_of(text: str) -> list[str]:
    return [ln.split()[0] for ln in text.splitlines()[:-1]]


def test_list_shows_each_curated_fact_once_with_its_sources(curated, runner):
    vault = Vault.open(curated)
    now = vault.now()
    tl = vault.timeline
    bullets = [e for e in tl.live(now) if e.kind == "curated"]
    cited = {eid for b in bullets for eid in tl.source_ids(b)}
    assert len(bullets) == 6 and len(cited) == 7  # the Atlas decision cites two entries
    out = run(runner, curated, "list")
    rows = ids_of(out)
    assert not cited & set(rows), out
    assert {b.id for b in bullets} <= set(rows)
    weekly = next(e for e in tl.events if e.content.startswith("User prefers weekly updates") and e.kind != "curated")
    [host] = tl.cited_by(weekly)
    line = next(ln for ln in out.splitlines() if ln.startswith(host))
    assert line.endswith(f"User prefers weekly updates on Monday, not Friday  sources: {weekly.id}")
    assert out.splitlines()[-1] == "8 entries (+7 log entries shown as a bullet's sources; --all lists them)"
    # Nothing is lost: every live entry is a row or a bullet's source.
    assert set(rows) | cited == {e.id for e in tl.live(now)}


def test_all_and_json_still_list_both(curated, runner):
    vault = Vault.open(curated)
    live = {e.id for e in vault.timeline.live(vault.now())}
    assert live <= set(ids_of(run(runner, curated, "list", "--all")))
    data = json.loads(run(runner, curated, "list", "--json"))
    assert {d["id"] for d in data} == live
    by_id = {d["id"]: d for d in data}
    for d in data:
        assert "folded" not in d and "sources" in d  # the existing keys stay
        for src in d["source_ids"]:
            assert d["id"] in by_id[src]["cited_by"]
    bullet = next(d for d in data if d["kind"] == "curated" and d["content"].startswith("Use SQLite"))
    assert len(bullet["source_ids"]) == 2 and all(by_id[s]["kind"] != "curated" for s in bullet["source_ids"])


def test_search_shows_the_bullet_once_with_its_source(curated, runner):
    tl = Vault.open(curated).timeline
    weekly = next(e for e in tl.events if e.content.startswith("User prefers weekly updates") and e.kind != "curated")
    [host] = tl.cited_by(weekly)
    out = run(runner, curated, "search", "weekly updates")
    heads = [ln for ln in out.splitlines() if not ln.startswith("    ")]
    assert heads[0].split()[2] == host and heads[0].endswith(f"sources: {weekly.id}"), out
    assert not any(h.split()[2] == weekly.id for h in heads), out
    hits = json.loads(run(runner, curated, "search", "weekly updates", "--json"))
    ids = [h["id"] for h in hits]
    assert host in ids and weekly.id in ids
    assert next(h for h in hits if h["id"] == weekly.id)["cited_by"] == [host]
    assert weekly.id in [ln.split()[2] for ln in run(runner, curated, "search", "weekly updates", "--all").splitlines()
                         if not ln.startswith("    ")]


def test_before_curation_nothing_folds(vault_dir, runner):
    root = build_demo(vault_dir / "demo")
    out = run(runner, root, "list")
    assert "sources:" not in out and out.splitlines()[-1] == "9 entries"


def test_asof_history_and_curate_are_unchanged_by_folding(curated, runner):
    tl = Vault.open(curated).timeline
    weekly = next(e for e in tl.events if e.content.startswith("User prefers weekly updates") and e.kind != "curated")
    assert weekly.id in run(runner, curated, "asof", "now")  # as-of answers list every live entry
    assert "Chain (oldest first)" in run(runner, curated, "history", weekly.id)
    assert "nothing to curate" in run(runner, curated, "curate", "--dry-run")
    assert f"cited by: {tl.cited_by(weekly)[0]}" in run(runner, curated, "show", weekly.id)


def entry(eid: str, kind: str = "entry", status: str = "live", cited_by: tuple[str, ...] = ()) -> dict:
    return {"id": eid, "kind": kind, "status": status, "cited_by": list(cited_by)}


def test_fold_never_hides_the_only_place_a_fact_shows():
    b = entry("mv-1", "curated")
    e = entry("2026-03-01T09:00", cited_by=("mv-1",))
    assert [d["id"] for d in fold_cited([e, b])] == ["mv-1"]
    assert fold_cited([e, b])[0]["folded"] == ["2026-03-01T09:00"]
    # Its bullet not among the items (filtered out, not a hit): the entry stays.
    assert [d["id"] for d in fold_cited([e])] == [e["id"]]
    # Its bullet superseded or expired: the entry stays.
    gone = entry("mv-1", "curated", "superseded")
    assert [d["id"] for d in fold_cited([e, gone])] == [e["id"], "mv-1"]
    # A superseded log entry (shown with --all) is never folded.
    old = entry("2026-02-01T09:00", status="superseded", cited_by=("mv-1",))
    assert [d["id"] for d in fold_cited([old, b])] == [old["id"], "mv-1"]
    # A bullet citing a bullet: both stay.
    b2 = entry("mv-2", "curated", cited_by=("mv-1",))
    assert [d["id"] for d in fold_cited([b, b2])] == ["mv-1", "mv-2"]
