"""Recorded time's precomputed index (history.sweep + history.live_columns) equals Timeline, always."""

from __future__ import annotations

import os
import random
import shutil
import subprocess
from datetime import timedelta
from pathlib import Path

import pytest

from memvault.entries.spans import live_interval
from memvault.entries.timeline import Timeline
from memvault.history.sweep import DUPLICATE, RECONFIRMS, SUPERSEDES, Occurrences, Sweep
from memvault.history.timelines import NEVER_LIVE, VersionInfos
from memvault.vault import Vault

from .helpers_history import build_history
from .test_history_timelines import CFG, corpus

GIT_ENV = dict(GIT_AUTHOR_NAME="T", GIT_AUTHOR_EMAIL="t@example.com", GIT_COMMITTER_NAME="T",
               GIT_COMMITTER_EMAIL="t@example.com", GIT_CONFIG_NOSYSTEM="1")


def expected(sweep: Sweep, occ: Occurrences) -> tuple[dict[int, tuple[float, float]], set[tuple[int, int, int]]]:
    """Every present entry's live interval and every edge, from a full Timeline of the state."""
    where = {}
    events = []
    for vid in sweep.present.values():
        for o in occ.span(vid):
            where[id(occ.events[o])] = o
            events.append(occ.events[o])
    full = Timeline(events, CFG)
    spans = {}
    for ev in events:
        first = full.by_id.get(ev.id) is ev
        spans[where[id(ev)]] = (live_interval(full, ev) or NEVER_LIVE) if first else NEVER_LIVE
    edges = {(SUPERSEDES, where[id(full.by_id[h])], where[id(full.by_id[t])]) for h, t in full.supersedes.items()}
    edges |= {(RECONFIRMS, where[id(full.by_id[h])], where[id(full.by_id[t])])
              for t, hs in full.reconfirmed_by.items() for h in hs}
    edges |= {(DUPLICATE, where[id(ev)], where[id(full.by_id[ev.id])]) for ev in events if full.by_id[ev.id] is not ev}
    return spans, edges


def swept(sweep: Sweep, occ: Occurrences) -> dict[int, tuple[float, float]]:
    """The sweep's answer: each present entry's solo interval unless overridden."""
    out = {}
    for vid in sweep.present.values():
        for o, (_, s, e) in zip(occ.span(vid), occ.infos[vid].rows, strict=True):
            out[o] = sweep.ovr_open[o][0] if o in sweep.ovr_open else (s, e)
    return out


@pytest.mark.parametrize("seed", range(6))
def test_the_sweep_equals_a_full_timeline_at_every_step_of_a_random_walk(seed):
    """Files appear, change to other versions and go away, a few at a time, through every
    reference form, duplicate ids, cycles, self-references and curated sources."""
    files = corpus()
    infos = VersionInfos(CFG)
    occ = Occurrences()
    vids = {path: [occ.add((path, str(k)), infos.get((path, str(k)), evs)) for k, evs in enumerate(versions)]
            for path, versions in files.items()}
    sweep = Sweep(occ, CFG)
    rng = random.Random(seed)
    paths = sorted(files)
    for step in range(60):
        changes = []
        for path in rng.sample(paths, rng.randint(1, 4)):
            changes.append((path, None if rng.random() < 0.25 else rng.choice(vids[path])))
        sweep.step(step, changes)
        spans, edges = expected(sweep, occ)
        assert swept(sweep, occ) == spans, step
        assert set(sweep.edge_open) == edges, step


def test_cycles_keep_exactly_the_edges_timeline_keeps():
    from memvault.parsed import parse_text

    text = ("# 2026-03-01\n\n## 08:00 - Belief\nA\nId: a\nSupersedes: c\n\n## 09:00 - Belief\nB\nId: b\nSupersedes: a\n\n"
            "## 10:00 - Belief\nC\nId: c\nSupersedes: b\n\n## 11:00 - Belief\nD\nId: d\nSupersedes: c\n")
    tail = "# 2026-03-02\n\n## 08:00 - Correction\nbreaks the cycle\nId: b\nSupersedes: d\n"
    infos = VersionInfos(CFG)
    occ = Occurrences()
    one = occ.add(("memory/2026-03-01.md", "1"), infos.get(("1",), parse_text(text, "memory/2026-03-01.md", CFG).events))
    two = occ.add(("memory/2026-03-02.md", "2"), infos.get(("2",), parse_text(tail, "memory/2026-03-02.md", CFG).events))
    sweep = Sweep(occ, CFG)
    for step, change in enumerate([("memory/2026-03-01.md", one), ("memory/2026-03-02.md", two),
                                   ("memory/2026-03-02.md", None)]):
        sweep.step(step, [change])
        spans, edges = expected(sweep, occ)
        assert swept(sweep, occ) == spans and set(sweep.edge_open) == edges, step
    assert sweep.cyclic  # the cycle a -> c -> b -> a is back


# -- through git: the index against the snapshot path ------------------------------------------


@pytest.fixture(autouse=True)
def _git_env(monkeypatch):
    for k, v in GIT_ENV.items():
        monkeypatch.setenv(k, v)


def check_every_commit(vault: Vault) -> None:
    past = vault.past
    index = past.recorded_index
    assert index is not None
    repo = past.require_repo()
    commits = repo.commits().commits
    assert [c.sha for c in index.commits.commits] == [c.sha for c in commits]
    for c, commit in enumerate(commits):
        tl = past.loader.at(commit).timeline
        points = {commit.date, commit.date - timedelta(days=2), commit.date + timedelta(days=30)}
        for ev in tl.events[::3]:
            if ev.timestamp is not None:
                points |= {ev.timestamp, ev.timestamp - timedelta(microseconds=1)}
        for at in sorted(points):
            want = tl.live(at)
            got = index.live(c, at)
            small, events = index.answer(c, got)
            assert events == want, (c, at)
            assert [small.to_dict(e, at) for e in events] == [tl.to_dict(e, at) for e in want], (c, at)


@pytest.mark.parametrize("seed", [31, 32])
def test_the_index_equals_the_snapshot_timeline_at_every_commit(tmp_path, seed):
    hist = build_history(tmp_path / "h", seed, steps=30)
    check_every_commit(Vault.open(hist.root))


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True,
                          env=dict(os.environ, **GIT_ENV)).stdout.strip()


def stored(root: Path) -> dict[str, set]:
    """The stored runs with entries named by (path, blob, position): numbering aside."""
    import sqlite3

    from memvault.history.live_columns import Columns

    with sqlite3.connect(root / ".memvault" / "history.sqlite") as db:
        mark = dict(db.execute("SELECT name, data FROM recorded"))["meta"]
        import json

        cols = Columns.load(db, json.loads(mark)["fingerprint"])
    assert cols is not None
    a = cols.a
    keys = cols.meta["versions"]
    base = list(a["base"])

    def name(o: int) -> tuple:
        import bisect

        vid = bisect.bisect_right(base, o) - 1
        return (*keys[vid], o - base[vid])

    return {
        "entries": {(name(o), a["tsus"][o], a["line"][o], a["s"][o], a["e"][o]) for o in range(len(a["s"]))},
        "present": {(tuple(keys[v]), f, t) for v, f, t in zip(a["pv"], a["pf"], a["pt"], strict=True)},
        "overrides": {(name(o), f, t, s, e) for o, f, t, s, e in
                      zip(a["o_occ"], a["o_from"], a["o_to"], a["o_s"], a["o_e"], strict=True)},
        "edges": {(k, name(s), name(d), f, t) for k, s, d, f, t in
                  zip(a["g_kind"], a["g_src"], a["g_dst"], a["g_from"], a["g_to"], strict=True)},
        "commits": {tuple(c) for c in cols.meta["commits"]},
    }


def test_moving_head_on_resumes_the_sweep_and_equals_a_fresh_build(tmp_path):
    hist = build_history(tmp_path / "h", 33, steps=30)
    root = hist.root
    head = git(root, "rev-parse", "HEAD")
    git(root, "reset", "-q", "--hard", "HEAD~12")
    first = Vault.open(root).past
    assert first.recorded_index is not None and len(first.recorded_index.commits) == 18
    git(root, "reset", "-q", "--hard", head)
    vault = Vault.open(root)
    from memvault.history.store import RecordedStore

    store = RecordedStore(vault.past.loader, vault.past.require_repo(), vault.config)
    store.open()
    assert store.resumed
    resumed = stored(root)
    check_every_commit(vault)
    shutil.rmtree(root / ".memvault")
    fresh_store = RecordedStore(Vault.open(root).past.loader, GitRepoFor(root), vault.config)
    fresh_store.open()
    assert not fresh_store.resumed
    assert stored(root) == resumed  # resuming gives what a fresh sweep gives


def GitRepoFor(root: Path):  # noqa: N802 - reads like a constructor
    from memvault.history.gitrepo import GitRepo

    return GitRepo.require(root)


def test_rewritten_history_is_swept_again(tmp_path):
    hist = build_history(tmp_path / "h", 34, steps=12)
    root = hist.root
    assert Vault.open(root).past.recorded_index is not None
    log = sorted((root / "memory").glob("*.md"))[-1]
    log.write_text(log.read_text() + "\n## 23:59 - Belief\nAmended in\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "--amend", "--no-edit")
    vault = Vault.open(root)
    from memvault.history.store import RecordedStore

    store = RecordedStore(vault.past.loader, vault.past.require_repo(), vault.config)
    assert store.open() is not None and not store.resumed
    check_every_commit(vault)


def test_a_revision_off_the_first_parent_chain_still_answers(tmp_path):
    hist = build_history(tmp_path / "h", 35, steps=8)
    root = hist.root
    git(root, "checkout", "-q", "-b", "side", "HEAD~3")
    (root / "memory" / "2026-01-01.md").write_text("# 2026-01-01\n\n## 09:00 - Belief\nOnly on the side\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "side")
    side = git(root, "rev-parse", "HEAD")
    git(root, "checkout", "-q", "-")
    vault = Vault.open(root)
    got = vault.as_of(side, recorded=True)
    assert any(d["content"] == "Only on the side" for d in got)
    assert vault.past.recorded_index is not None and vault.past.recorded_index.position(side) is None


def test_an_undated_holder_of_a_text_reference_is_resolved_again_when_anything_changes():
    """Parsed log entries always have a time; a hand-built undated one searches every entry."""
    from dataclasses import replace

    from memvault.parsed import parse_text

    tea = parse_text("# 2026-01-01\n\n## 09:00 - Belief\nUser likes green tea\n", "memory/2026-01-01.md", CFG).events
    ref = parse_text("# 2026-01-02\n\n## 09:00 - Correction\nCoffee now\nSupersedes: green tea\n",
                     "memory/2026-01-02.md", CFG).events
    undated = [replace(ev, timestamp=None) for ev in ref]
    infos = VersionInfos(CFG)
    occ = Occurrences()
    a = occ.add(("memory/2026-01-01.md", "a"), infos.get(("a",), tea))
    b = occ.add(("memory/2026-01-02.md", "b"), infos.get(("b",), undated))
    sweep = Sweep(occ, CFG)
    for step, change in enumerate([("memory/2026-01-02.md", b), ("memory/2026-01-01.md", a)]):
        sweep.step(step, [change])
        spans, edges = expected(sweep, occ)
        assert swept(sweep, occ) == spans and set(sweep.edge_open) == edges, step
    assert set(sweep.edge_open) == {(SUPERSEDES, occ.base[b], occ.base[a])}


def odd_history(root: Path, seed: int, commits: int = 14) -> list[str]:
    """Two logs of one date (files overlapping in time), MEMORY.md, cycles, duplicate ids and
    every reference form, committed in random order. Returns the commit ids, oldest first."""
    from .test_history_timelines import EXTRA

    files = dict(EXTRA)  # a second log of 2026-02-14 whose entry falls between the first's
    files["memory/old/2026-02-14.md"] = ["# 2026-02-14\n\n## 14:45 - Observation\nBetween the two beliefs\n"]
    root.mkdir()
    (root / "memvault.toml").write_text('[vault]\ntimezone = "Europe/Berlin"\n')
    git(root, "init", "-q")
    rng = random.Random(seed)
    shas = []
    for k in range(commits):
        for path in rng.sample(sorted(files), rng.randint(1, 3)):
            target = root / path
            if rng.random() < 0.2:
                target.unlink(missing_ok=True)
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(rng.choice(files[path]))
        stamp = f"2026-02-{13 + k:02d}T12:00:00+00:00"
        subprocess.run(["git", "add", "-A"], cwd=root, check=True)
        subprocess.run(["git", "commit", "-q", "--allow-empty", "-m", str(k)], cwd=root, check=True,
                       env=dict(os.environ, **GIT_ENV, GIT_COMMITTER_DATE=stamp, GIT_AUTHOR_DATE=stamp))
        shas.append(git(root, "rev-parse", "HEAD"))
    return shas


@pytest.mark.parametrize("seed", [1, 2])
def test_odd_states_through_git_equal_the_snapshot_timeline(tmp_path, seed):
    odd_history(tmp_path / "v", seed)
    check_every_commit(Vault.open(tmp_path / "v"))


@pytest.mark.parametrize("seed", [3, 4])
def test_resuming_step_by_step_equals_one_sweep(tmp_path, seed):
    """Swept at an early commit, then resumed each time HEAD moves on: the stored runs and
    the state resumed from are what one sweep of the whole history gives."""
    from memvault.history.store import RecordedStore

    root = tmp_path / "v"
    shas = odd_history(root, seed, commits=16)
    for k, sha in enumerate(shas[2::3] + shas[-1:]):
        git(root, "reset", "-q", "--hard", sha)
        vault = Vault.open(root)
        store = RecordedStore(vault.past.loader, vault.past.require_repo(), vault.config)
        assert store.open() is not None
        assert store.resumed == (k > 0)
    resumed = stored(root)
    check_every_commit(Vault.open(root))
    shutil.rmtree(root / ".memvault")
    vault = Vault.open(root)
    RecordedStore(vault.past.loader, vault.past.require_repo(), vault.config).open()
    assert stored(root) == resumed


def without_index(vault: Vault):
    from memvault.history.timetravel import History

    slow = History(vault)
    slow.settings["precompute"] = False
    return slow


QUERIES = ["weekly updates", "dark mode", "Friday", '"light mode"', "monday updates friday", "type:belief mode",
           "alpha bravo", "charlie", "second log", "nothing-matches-this"]


@pytest.mark.parametrize("seed", [1, 3])
def test_recorded_query_ranks_the_same_with_the_index(tmp_path, seed):
    """QUERY ranks on a timeline cut down to the candidates: the same hits, scores and dicts
    as on the commit's whole timeline, duplicates and superseder chains included."""
    from .test_history_timelines import EXTRA

    hist = build_history(tmp_path / "h", 40 + seed, steps=16)
    root = hist.root
    rng = random.Random(seed)
    for path, texts in EXTRA.items():  # odd files on top: duplicates, cycles, MEMORY.md
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(rng.choice(texts))
    # a second occurrence of id `fri` that matches "second log": ranked as the first one
    (root / "memory/2026-02-14.md").write_text(EXTRA["memory/2026-02-14.md"][1])
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "odd files")
    vault = Vault.open(root)
    fast, slow = vault.past, without_index(vault)
    assert fast.recorded_index is not None and slow.recorded_index is None
    commits = fast.require_repo().commits().commits
    for commit in commits[::3] + commits[-1:]:
        for at in (commit.date, commit.date + timedelta(days=40), commit.date - timedelta(hours=30)):
            for text in [*rng.sample(QUERIES, 3), "second log"]:
                assert fast.as_of(at, text, recorded=True, limit=5) == slow.as_of(at, text, recorded=True, limit=5), (text, at)
            assert fast.as_of(at, recorded=True) == slow.as_of(at, recorded=True), at


def test_a_parse_cache_that_disagrees_with_the_index_is_noticed_not_trusted(tmp_path):
    """Were the cached parse of a file to change under a stored index (it is keyed by parser
    code, but say the parser's caller changed), answers must not mix the two numberings."""
    import json
    import sqlite3

    hist = build_history(tmp_path / "h", 36, steps=10)
    root = hist.root
    Vault.open(root).as_of("2030-01-01", "alpha", recorded=True)  # index and postings stored
    with sqlite3.connect(root / ".memvault" / "history.sqlite") as db:
        path = sorted(p.relative_to(root).as_posix() for p in (root / "memory").glob("*.md"))[-1]
        blob = git(root, "rev-parse", f"HEAD:{path}")
        events = db.execute("SELECT events FROM parsed WHERE path = ? AND blob = ?", (path, blob)).fetchone()[0]
        db.execute("UPDATE parsed SET events = ? WHERE path = ? AND blob = ?", (json.dumps(json.loads(events)[1:]), path, blob))
    vault = Vault.open(root)
    got = vault.as_of("2030-01-01", recorded=True)
    assert vault.past.recorded_index is None  # dropped for this process: answered from the snapshot path
    assert {d["id"] for d in got} == {d["id"] for d in without_index(Vault.open(root)).as_of("2030-01-01", recorded=True)}
    assert isinstance(Vault.open(root).as_of("2030-01-01", "alpha bravo", recorded=True), list)


def test_without_a_writable_cache_recorded_time_answers_the_old_way(tmp_path):
    """`.memvault` unusable (here a file where the directory should be): no index is swept
    per process; answers come from the per-commit path and equal the oracle's."""
    from .helpers_history import truth_recorded

    hist = build_history(tmp_path / "h", 37, steps=8)
    (hist.root / ".memvault").write_text("not a directory")
    vault = Vault.open(hist.root)
    at = hist.commits[-1].time
    assert {d["id"] for d in vault.as_of(at, recorded=True)} == truth_recorded(hist, at)
    assert vault.past.recorded_index is None
    assert isinstance(vault.as_of(at, "alpha", recorded=True), list)
