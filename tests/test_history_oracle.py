"""Time travel against independently generated histories with ground truth (helpers_history)."""

from __future__ import annotations

import random
from datetime import timedelta

import pytest

from memvault.vault import Vault

from .helpers_history import (
    build_history,
    question_times,
    truth_chain,
    truth_changes,
    truth_commit,
    truth_confidence,
    truth_diff,
    truth_live,
    truth_recorded,
    truth_revisions,
)

SEEDS = (11, 12, 13)


@pytest.fixture(scope="module", params=SEEDS)
def hist(request, tmp_path_factory):
    import os

    saved = dict(os.environ)
    os.environ.update(GIT_AUTHOR_NAME="T", GIT_AUTHOR_EMAIL="t@example.com",
                      GIT_COMMITTER_NAME="T", GIT_COMMITTER_EMAIL="t@example.com", GIT_CONFIG_NOSYSTEM="1")
    try:
        yield build_history(tmp_path_factory.mktemp(f"hist{request.param}"), request.param, steps=36)
    finally:
        os.environ.clear()
        os.environ.update(saved)


def close(a: float, b: float) -> bool:
    return abs(a - b) <= 2e-6 * max(1.0, abs(b))


def test_the_generated_history_has_the_hard_cases(hist):
    # not a test of memvault: a guard that the generator keeps producing what the issue lists
    ids = set().union(*(c.records for c in hist.commits))
    assert any(i.endswith("-2") for i in ids), "same-minute ids"
    assert len({c.time for c in hist.commits}) < len(hist.commits), "two commits in one second"
    refs = [r for c in hist.commits for r in c.records.values() if r.ref]
    assert refs, "supersessions"
    assert any(truth_revisions(hist, i)[1:] for i in hist.final), "hand edits in later commits"
    assert any(i not in hist.final for i in ids), "deletions"
    longest = max(len(truth_chain(hist.final, i)) for i in hist.final)
    assert longest >= 3, "chains of 3 or more"


def test_event_time_asof_matches_the_oracle(hist):
    vault = Vault.open(hist.root)
    for at in question_times(hist, random.Random(1), 100):
        got = {d["id"]: d for d in vault.as_of(at)}
        assert set(got) == truth_live(hist.final, at), at
        for rid, d in got.items():
            assert close(d["confidence"], truth_confidence(hist.final[rid], at)), (rid, at)
            assert d["superseded_by"] is None and d["status"] == "live"


def test_recorded_time_asof_matches_the_oracle(hist):
    vault = Vault.open(hist.root)
    for at in question_times(hist, random.Random(2), 100):
        got = {d["id"]: d for d in vault.as_of(at, recorded=True)}
        assert set(got) == truth_recorded(hist, at), at
        commit = truth_commit(hist, at)
        for rid, d in got.items():
            assert close(d["confidence"], truth_confidence(commit.records[rid], at)), (rid, at)
            assert d["content"] in commit.records[rid].text


def test_recorded_time_by_git_revision_is_that_commit(hist):
    vault = Vault.open(hist.root)
    for back in (0, 3, len(hist.commits) - 1):
        commit = hist.commits[-1 - back]
        got = {d["id"] for d in vault.as_of(f"HEAD~{back}", recorded=True)}
        assert got == truth_live(commit.records, commit.time)
        assert got == {d["id"] for d in vault.as_of(commit.sha, recorded=True)}


def test_changes_match_the_oracle(hist):
    vault = Vault.open(hist.root)
    rng = random.Random(3)
    times = question_times(hist, rng, 24)
    pairs = [(t, None) for t in times[:12]] + [tuple(sorted(rng.sample(times, 2))) for _ in range(12)]
    for since, until in pairs:
        got = vault.changes(since, until)
        want = truth_changes(hist, since, until)
        for key in ("new", "superseded", "edited", "deleted", "backfilled"):
            assert {d["id"] for d in got[key]} == want[key], (key, since, until)


def test_history_matches_the_oracle(hist):
    vault = Vault.open(hist.root)
    rng = random.Random(4)
    ids = sorted(hist.final)
    for rid in rng.sample(ids, min(8, len(ids))):
        got = vault.history(rid)
        assert [d["id"] for d in got["chain"]] == truth_chain(hist.final, rid)
        want = truth_revisions(hist, rid)
        assert [(c["commit"], c["old"], c["new"]) for c in got["commits"]] == want
        for link in got["chain"]:
            sups = [r.id for r in hist.final.values() if r.ref == link["id"]]
            assert link["superseded_by"] == (min(sups, key=lambda i: hist.final[i].ts) if sups else None)


def test_history_of_a_deleted_entry_comes_from_git(hist):
    gone = sorted({i for c in hist.commits for i in c.records} - set(hist.final))
    vault = Vault.open(hist.root)
    for rid in gone[:3]:
        got = vault.history(rid)
        assert got["status"] == "deleted"
        assert [(c["commit"], c["old"], c["new"]) for c in got["commits"]] == truth_revisions(hist, rid)


def test_diff_matches_the_oracle(hist):
    vault = Vault.open(hist.root)
    rng = random.Random(5)
    times = question_times(hist, rng, 20)
    for _ in range(10):
        t1, t2 = sorted(rng.sample(times, 2))
        got = vault.diff(t1, t2)
        want = truth_diff(hist, t1, t2)
        for key in ("appeared", "changed", "gone"):
            assert {d["id"] for g in got["groups"] for d in g[key]} == want[key], (key, t1, t2)
        assert all(g["section"] is not None for g in got["groups"] if g["file"] == "MEMORY.md")


def test_a_commit_exactly_at_t_counts_and_one_microsecond_earlier_does_not(hist):
    vault = Vault.open(hist.root)
    for c in hist.commits[1:]:
        at = c.time
        before = truth_commit(hist, at - timedelta(microseconds=1))
        if before is not None and truth_live(before.records, at) != truth_live(c.records, at):
            assert {d["id"] for d in vault.as_of(at, recorded=True)} == truth_live(c.records, at)
            earlier = at - timedelta(microseconds=1)
            assert {d["id"] for d in vault.as_of(earlier, recorded=True)} == truth_live(before.records, earlier)
            return
    pytest.skip("no commit in this history changes the answer")


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(100, 110))
def test_many_longer_histories(seed, tmp_path):
    """The same questions on ten longer histories (run with -m slow)."""
    hist = build_history(tmp_path / "h", seed, steps=70)
    vault = Vault.open(hist.root)
    rng = random.Random(seed)
    times = question_times(hist, rng, 120)
    for at in times:
        assert {d["id"] for d in vault.as_of(at)} == truth_live(hist.final, at)
        assert {d["id"] for d in vault.as_of(at, recorded=True)} == truth_recorded(hist, at)
    for _ in range(15):
        t1, t2 = sorted(rng.sample(times, 2))
        got, want = vault.changes(t1, t2), truth_changes(hist, t1, t2)
        for key in want:
            assert {d["id"] for d in got[key]} == want[key], key
        diff, want_diff = vault.diff(t1, t2), truth_diff(hist, t1, t2)
        for key in want_diff:
            assert {d["id"] for g in diff["groups"] for d in g[key]} == want_diff[key], key
