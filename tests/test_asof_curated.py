"""Issue 13 (asof): a curated bullet is live from its newest source of the day, not from the
day's start; and `asof`/`changes` show a cited log entry once, under its bullet."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memvault.cli import cli
from memvault.entries.model import Event
from memvault.entries.spans import SpanIndex
from memvault.entries.timeline import bullet_start
from memvault.vault import Vault
from tests.conftest import git


def run(runner, root: Path, *args: str) -> str:
    result = runner.invoke(cli, ["--vault", str(root), *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def rows(out: str) -> list[str]:
    """The ids of an `asof` text listing (its last line is the tally)."""
    return [ln.split()[0] for ln in out.splitlines()[:-1]]


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


@pytest.fixture
def week(vault_dir: Path, runner) -> Path:
    """The QA repro: a belief at 09:00, its correction at 09:30, a decision at 11:00 (and a
    German note at 14:00), curated with `curate --yes` and committed late that evening."""
    root = vault_dir / "v"
    run(runner, vault_dir, "init", str(root))
    toml = root / "memvault.toml"
    toml.write_text(re.sub(r'(?m)^timezone = ".*"$', 'timezone = "UTC"', toml.read_text()))
    run(runner, root, "log", "--type", "belief", "--at", "2026-11-26 09:00",
        "User wants weekly status reports on Friday")
    run(runner, root, "log", "--type", "correction", "--at", "2026-11-26 09:30",
        "--supersedes", "belief about weekly status reports", "User wants weekly status reports on Monday instead")
    run(runner, root, "log", "--type", "decision", "--at", "2026-11-26 11:00",
        "Use GitHub Actions for the deployment pipeline")
    run(runner, root, "log", "--at", "2026-11-26 14:00", "Jörg mag keinen Kaffee nach 15 Uhr")
    run(runner, root, "curate", "--yes")
    git(root, "add", "-A")
    stamp = "2026-11-26T23:30:00+00:00"
    git(root, "commit", "-qm", "week", env={"GIT_COMMITTER_DATE": stamp, "GIT_AUTHOR_DATE": stamp})
    return root


def bullet_of(vault: Vault, words: str) -> Event:
    return next(e for e in vault.timeline.events if e.kind == "curated" and words in e.content)


def test_a_curated_correction_is_not_live_before_it_was_made(week, runner):
    vault = Vault.open(week)
    monday = bullet_of(vault, "on Monday instead")
    correction = vault.get("2026-11-26T09:30")
    assert monday.timestamp == at("2026-11-26T00:00")  # dated by day only
    assert correction.id in vault.timeline.source_ids(monday)
    assert vault.timeline.start(monday) == correction.timestamp

    assert rows(run(runner, week, "asof", "2026-11-26 09:15", "weekly status reports")) == ["2026-11-26T09:00"]
    # The index takes the bullet (dated 00:00) for a candidate; a cap of one still finds the belief.
    assert rows(run(runner, week, "asof", "2026-11-26 09:15", "weekly status reports", "-n", "1")) == [
        "2026-11-26T09:00"]
    assert run(runner, week, "asof", "2026-11-26 00:30", "weekly status").splitlines() == ["0 entries"]
    assert rows(run(runner, week, "asof", "2026-11-26 00:30")) == []
    later = run(runner, week, "asof", "2026-11-26 09:45", "weekly status reports")
    assert rows(later)[0] == monday.id and later.splitlines()[0].endswith("sources: 2026-11-26T09:30"), later
    # The library answers the same, at the edge: live from the source's minute on.
    assert monday.id not in {d["id"] for d in vault.as_of(at("2026-11-26T09:29:59"))}
    assert monday.id in {d["id"] for d in vault.as_of(at("2026-11-26T09:30"))}


def test_asof_changes_spans_and_search_agree_on_the_bullets_start(week):
    vault = Vault.open(week)
    tl = vault.timeline
    spans = SpanIndex(tl)
    start = at("2026-11-25T23:00")
    for step in range(0, 26 * 4):
        t = start + timedelta(minutes=15 * step)
        want = [e.id for e in tl.live(t)]
        assert [e.id for e in spans.live(t)] == want, t
        assert [d["id"] for d in vault.as_of(t)] == want, t
        ranked = {d["id"] for d in vault.as_of(t, "weekly status reports deployment pipeline Kaffee")}
        assert ranked <= set(want), t
    monday, actions = bullet_of(vault, "on Monday"), bullet_of(vault, "GitHub Actions")
    assert tl.start(actions) == at("2026-11-26T11:00")
    quiet = vault.changes(at("2026-11-26T09:10"), at("2026-11-26T09:20"))
    assert quiet["new"] == [] and quiet["backfilled"] == []
    morning = vault.changes(at("2026-11-26T09:10"), at("2026-11-26T10:00"))
    assert {d["id"] for d in morning["new"]} == {"2026-11-26T09:30", monday.id}


def test_recorded_time_still_reads_the_commit(week, runner):
    """Recorded time is what the files held: nothing before the evening's commit, and after
    it the same entries as event time (every source was written by then)."""
    assert json.loads(run(runner, week, "asof", "2026-11-26 12:00", "--recorded", "--json")) == []
    recorded = json.loads(run(runner, week, "asof", "2026-11-26 23:45", "--recorded", "--json"))
    event = json.loads(run(runner, week, "asof", "2026-11-26 23:45", "--json"))
    assert sorted(d["id"] for d in recorded) == sorted(d["id"] for d in event)


def test_asof_query_shows_a_curated_fact_once(week, runner):
    vault = Vault.open(week)
    actions = bullet_of(vault, "GitHub Actions")
    out = run(runner, week, "asof", "2026-11-26T23:00", "deployment pipeline")
    ids = rows(out)
    assert actions.id in ids and "2026-11-26T11:00" not in ids, out
    line = next(ln for ln in out.splitlines() if ln.startswith(actions.id))
    assert line.endswith("sources: 2026-11-26T11:00")
    assert "+1 log entry shown as a bullet's sources" in out.splitlines()[-1]
    both = rows(run(runner, week, "asof", "2026-11-26T23:00", "deployment pipeline", "--all"))
    assert {actions.id, "2026-11-26T11:00"} <= set(both)
    data = json.loads(run(runner, week, "asof", "2026-11-26T23:00", "deployment pipeline", "--json"))
    by_id = {d["id"]: d for d in data}
    assert by_id[actions.id]["source_ids"] == ["2026-11-26T11:00"]
    assert by_id["2026-11-26T11:00"]["cited_by"] == [actions.id]
    assert all("folded" not in d for d in data)


def test_asof_without_query_and_recorded_fold_too(week, runner):
    vault = Vault.open(week)
    live = {e.id for e in vault.timeline.live(at("2026-11-26T23:45"))}
    for extra in ((), ("--recorded",)):
        out = run(runner, week, "asof", "2026-11-26 23:45", *extra)
        shown = set(rows(out))
        folded = {s for ln in out.splitlines() if "sources: " in ln
                  for s in ln.split("sources: ", 1)[1].split(", ")}
        assert folded == {"2026-11-26T09:30", "2026-11-26T11:00"}, out
        assert not shown & folded and shown | folded == live, out  # nothing lost, nothing twice
        assert set(rows(run(runner, week, "asof", "2026-11-26 23:45", "--all", *extra))) == live


def test_changes_folds_a_new_cited_entry_under_its_bullet(week, runner):
    vault = Vault.open(week)
    actions = bullet_of(vault, "GitHub Actions")
    out = run(runner, week, "changes", "--since", "2026-11-26")
    new = [ln for ln in out.splitlines() if ln.startswith("  + ")]
    assert any(f"({actions.id})  sources: 2026-11-26T11:00" in ln for ln in new), out
    assert not any(ln.rstrip().endswith("(2026-11-26T11:00)") for ln in new), out
    assert "Backfilled" not in out  # the bullets start with their sources, after the 26th began
    every = run(runner, week, "changes", "--since", "2026-11-26", "--all")
    assert any(ln.rstrip().endswith("(2026-11-26T11:00)") for ln in every.splitlines())
    data = json.loads(run(runner, week, "changes", "--since", "2026-11-26", "--json"))
    assert {"2026-11-26T11:00", actions.id} <= {d["id"] for d in data["new"]}


def test_an_updated_bullet_is_live_from_its_correction(vault_dir, runner):
    """A hand-written history: the bullet said Friday from the 20th and was rewritten on the
    26th (`was:`). Its current text is live from the correction's minute; a bullet that cites
    nothing keeps its day."""
    root = vault_dir
    (root / "memvault.toml").write_text('[vault]\ntimezone = "Europe/Berlin"\n')
    (root / "memory").mkdir()
    (root / "memory" / "2026-11-20.md").write_text(
        "# 2026-11-20\n\n## 10:00 - Belief\nDer Wochenbericht geht freitags an Jörg\n")
    (root / "memory" / "2026-11-21.md").write_text(
        "# 2026-11-21\n\n## 16:00 - Observation\nWeekly status reports go to Anya as PDF\n")
    (root / "memory" / "2026-11-26.md").write_text(
        "# 2026-11-26\n\n## 09:30 - Correction\n"
        "Statusbericht kommt ab jetzt montags, nicht freitags\nSupersedes: 2026-11-20T10:00\n")
    (root / "MEMORY.md").write_text(
        "# Memory\n\n## User Preferences\n"
        "- User wants weekly status reports on Monday instead (added 2026-11-20) "
        "(updated 2026-11-26, was: Der Wochenbericht geht freitags an Jörg) "
        "(sources: [[2026-11-20#10:00 - Belief]], [[2026-11-26#09:30 - Correction]]) ^mv-weekly\n"
        "- Straße und Café: Müller-Lüdenscheid zahlt bar (added 2026-11-20) ^mv-cash\n")
    vault = Vault.open(root)
    weekly = vault.get("mv-weekly")
    assert vault.timeline.start(weekly) == datetime(2026, 11, 26, 8, 30, tzinfo=UTC)  # 09:30 in Berlin
    assert vault.timeline.start(vault.get("mv-cash")) == vault.get("mv-cash").timestamp
    for when, want in (("2026-11-22 12:00", ["2026-11-20T10:00", "2026-11-21T16:00", "mv-cash"]),
                       ("2026-11-26 09:00", ["2026-11-20T10:00", "2026-11-21T16:00", "mv-cash"]),
                       ("2026-11-26 09:30", ["2026-11-21T16:00", "2026-11-26T09:30", "mv-cash", "mv-weekly"])):
        got = json.loads(run(runner, root, "asof", when, "--json"))
        assert sorted(d["id"] for d in got) == want, when
    # Of the bullet's sources only German text, no hit for these words: the index alone takes
    # the bullet (dated the 26th) for live at 09:00 and ranks it first. The one rule leaves it
    # out, and a cap of one still finds the entry that was live and matching.
    query = ("weekly", "status", "reports", "Monday")
    assert rows(run(runner, root, "asof", "2026-11-26 09:00", *query, "-n", "1")) == ["2026-11-21T16:00"]
    assert rows(run(runner, root, "asof", "2026-11-26 09:45", *query, "-n", "1")) == ["mv-weekly"]


def test_bullet_start_rule():
    day = datetime(2026, 11, 26, tzinfo=UTC)
    bullet = Event("b", "belief", day, "x", "MEMORY.md", 3, 3, kind="curated")
    nine, next_day, before = day + timedelta(hours=9), day + timedelta(days=1, hours=1), day - timedelta(days=2)
    assert bullet_start(bullet, []) == day
    assert bullet_start(bullet, [nine, day + timedelta(hours=8)]) == nine  # the newest of the day
    assert bullet_start(bullet, [next_day]) == day  # a later day's source (a reconfirmation) does not move it
    assert bullet_start(bullet, [before]) == day  # never before its own day
    rewritten = Event("b", "belief", day - timedelta(days=6), "x", "MEMORY.md", 3, 3, kind="curated",
                      updated=day, previous="old text")
    assert bullet_start(rewritten, [before, nine]) == nine
    bumped = Event("b", "belief", day - timedelta(days=6), "x", "MEMORY.md", 3, 3, kind="curated", updated=day)
    assert bullet_start(bumped, [nine]) == day - timedelta(days=6)  # reconfirmed, not rewritten
    odd = Event("b", "belief", day, "x", "MEMORY.md", 3, 3, kind="curated", updated=before, previous="old")
    assert bullet_start(odd, [before]) == day  # an `updated` before `added` moves nothing earlier
