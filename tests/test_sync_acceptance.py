"""Issue 19's acceptance: three clones of one bare remote, each appending entries through `memvault
log`, memorywire's remember and a text editor, with syncs interleaved at random (seeded).

Afterwards every clone holds every entry exactly once, under the same id on every clone; an id a
clone saw for an entry after any sync still names that entry at the end; `check` is clean; each
clone's index (updated as search updates it, through the run) equals a fresh parse and a rebuild;
and no file held a conflict marker after any sync."""

from __future__ import annotations

import contextlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memvault.check.runner import check_vault
from memvault.cli import cli
from memvault.search.index import open_index, search_vault
from memvault.sync.state import git_dir, in_progress, read_step
from tests.conftest import git
from tests.helpers_index import fresh
from tests.helpers_sync import STOPPER, Clone, both_sides_new, make_clones, pair

NAMES = ["alpha", "bär", "ci-runner.03"]


class Seen:
    """Every (id → token) a clone showed after a sync: an id must keep naming its entry."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}

    def look(self, clone: Clone, where: str) -> None:
        for tok, ids in clone.tokens().items():
            assert len(ids) == 1, f"{where}: {tok} is in {len(ids)} entries on {clone.name}: {ids}"
            before = self.names.setdefault(ids[0], tok)
            assert before == tok, f"{where}: id {ids[0]} named {before}, now names {tok} on {clone.name}"
            for other_id, other_tok in self.names.items():
                if other_tok == tok and other_id != ids[0]:
                    pytest.fail(f"{where}: {tok} was {other_id}, on {clone.name} it is {ids[0]}")


def run(tmp_path: Path, runner, per_clone: int, seed: int, sync_every: float) -> list[Clone]:
    rng = random.Random(seed)
    _, clones = make_clones(tmp_path, NAMES, runner)
    seen = Seen()
    done = dict.fromkeys(NAMES, 0)
    step = 0
    while min(done.values()) < per_clone:
        clone = rng.choice([c for c in clones if done[c.name] < per_clone])
        n = done[clone.name]
        way = rng.choice(["log", "remember", "hand"])
        if way == "log":
            clone.log(n, rng, runner)
        elif way == "remember":
            clone.remember(n, rng)
        else:
            clone.hand_edit(n, step, rng)
        done[clone.name] += 1
        step += 1
        if rng.random() < 0.1:  # search, as a person would: the index follows the files
            assert search_vault(clone.vault(), clone.written[-1], limit=1), clone.written[-1]
        if rng.random() < sync_every:
            synced(clone, seen, f"step {step}")
    for clone in clones + clones[:-1]:  # the last clone to sync had everything; the others catch up
        synced(clone, seen, "last round")
    return clones


def synced(clone: Clone, seen: Seen, where: str) -> None:
    report = clone.sync()
    assert report.result in ("up to date", "pushed", "pulled", "merged"), report
    assert report.conflicts == [], f"{where}: {report.conflicts}"
    assert clone.markers() == [], f"{where}: conflict markers on {clone.name}: {clone.markers()}"
    seen.look(clone, f"{where} ({clone.name})")


def assert_converged(clones: list[Clone]) -> None:
    everything = sorted(tok for c in clones for tok in c.written)
    assert len(everything) == len(set(everything))
    first = clones[0].tokens()
    for clone in clones:
        found = clone.tokens()
        assert sorted(found) == everything, clone.name
        assert all(len(ids) == 1 for ids in found.values()), clone.name
        assert found == first, f"{clone.name} names some entries differently from {clones[0].name}"
        ids = [ev.id for ev in clone.vault().timeline.events]
        assert len(ids) == len(set(ids)), clone.name
        assert clone.markdown() == clones[0].markdown(), clone.name
        report = check_vault(clone.vault())
        assert report.problems == [], [f"{p.code} {p.file}:{p.line} {p.message}" for p in report.problems]
        vault = clone.vault()
        events, sup, rec = fresh(clone.root)
        with open_index(vault, for_search=True) as index:
            index.refresh()
            assert index.events() == events and index.edges() == (sup, rec), clone.name
            index.rebuild()
            assert index.events() == events and index.edges() == (sup, rec), clone.name


def test_three_clones_lose_nothing_and_agree(tmp_path, runner):
    clones = run(tmp_path, runner, per_clone=20, seed=19, sync_every=0.2)
    assert_converged(clones)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2])
def test_three_clones_300_entries_each(tmp_path, runner, seed):
    clones = run(tmp_path, runner, per_clone=300, seed=seed, sync_every=0.15)
    assert_converged(clones)


# -- kill -9 during a sync ----------------------------------------------------------------------

@pytest.fixture
def world(tmp_path, runner) -> Path:
    """Two synced clones of a bare remote, made once per test and copied for each kill."""
    base = tmp_path / "base"
    base.mkdir()
    pair(base, runner)
    return base


def copy_of(world: Path, name: str) -> Path:
    target = world.parent / name
    shutil.copytree(world, target, symlinks=True)
    return target


def child(root: Path, stop_at: str | None = None) -> subprocess.Popen:
    args = ["-c", STOPPER, stop_at, str(root)] if stop_at else ["-m", "memvault", "--vault", str(root), "sync"]
    return subprocess.Popen([sys.executable, *args], start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def killed(proc: subprocess.Popen, group: bool = True) -> None:
    """SIGKILL the sync (with `group`, every git and merge driver it started too, as a crash would)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL) if group else os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    if not group:  # the git it started may still run, orphaned: let it finish as it would
        deadline = time.time() + 10
        while time.time() < deadline and subprocess.run(["pgrep", "-g", str(proc.pid)], capture_output=True).stdout:
            time.sleep(0.02)


def after_kill(laptop: Clone, runner) -> str | None:
    """What status says is under way (None: nothing); asserts git is in no state status hides."""
    gdir = git_dir(laptop.root)
    busy = in_progress(laptop.root)
    shown = json.loads(runner.invoke(cli, ["--vault", str(laptop.root), "status", "--json"]).output)
    if "sync" in shown:  # the status section (i19-watch) says the same as the library
        assert (shown["sync"]["in_progress"] or {}).get("message") == (busy.message if busy else None)
    if read_step(gdir) is not None:
        assert busy is not None and busy.what == "sync" and busy.ours and "interrupted" in busy.message, busy
    leftovers = [name for name in ("MERGE_HEAD", "index.lock", "HEAD.lock") if (gdir / name).exists()]
    assert not leftovers or busy is not None, f"git has {leftovers} and status says nothing"
    return busy.message if busy else None


def recovered(laptop: Clone, server: Clone, expected: list[str], busy: str | None) -> None:
    report = laptop.sync()
    assert report.result in ("pushed", "merged", "up to date", "pulled"), report
    assert (report.recovered is not None) == (busy is not None), (report.recovered, busy)
    assert in_progress(laptop.root) is None and read_step(git_dir(laptop.root)) is None
    server.sync()
    laptop.sync()
    for clone in (laptop, server):
        assert clone.markers() == [], clone.markers()
        found = clone.tokens()
        assert sorted(found) == sorted(expected), clone.name
        assert all(len(ids) == 1 for ids in found.values()), {t: i for t, i in found.items() if len(i) > 1}
        report = check_vault(clone.vault())
        assert report.problems == [], [f"{p.code} {p.file}:{p.line} {p.message}" for p in report.problems]
        assert not git(clone.root, "status", "--porcelain", "--", "memory", "MEMORY.md").strip()
    assert laptop.tokens() == server.tokens()


@pytest.mark.parametrize("step", ["update files", "push",
                                  pytest.param("commit", marks=pytest.mark.slow),
                                  pytest.param("merge", marks=pytest.mark.slow)])
def test_a_sync_killed_at_a_step_is_reported_and_recovered(world, runner, step):
    laptop, server = both_sides_new(world, random.Random(step), runner)
    proc = child(laptop.root, stop_at=step)
    _, status = os.waitpid(proc.pid, os.WUNTRACED)
    assert os.WIFSTOPPED(status), proc.stderr.read().decode() if proc.stderr else status
    killed(proc)
    busy = after_kill(laptop, runner)
    assert busy is not None and f"interrupted during {step}" in busy
    recovered(laptop, server, laptop.written + server.written, busy)


@pytest.mark.slow
def test_kill_9_at_random_points_20_runs(world, runner, capsys):
    """20 kills spread over a sync's measured duration; half kill only the sync's own process
    (its git runs on, orphaned), half its whole process group (a crash)."""
    laptop, _ = both_sides_new(copy_of(world, "timing"), random.Random(0), runner)
    start = time.monotonic()
    assert child(laptop.root).wait() == 0
    duration = time.monotonic() - start
    rng, hit = random.Random(1919), []
    for run in range(20):
        laptop, server = both_sides_new(copy_of(world, f"run{run}"), random.Random(run), runner)
        proc = child(laptop.root)
        time.sleep(rng.uniform(0, duration))
        killed(proc, group=run % 2 == 0)
        step = read_step(git_dir(laptop.root))
        hit.append((step or {}).get("step", "-"))
        recovered(laptop, server, laptop.written + server.written, after_kill(laptop, runner))
    with capsys.disabled():
        print(f"\nsync took {duration:.2f}s; killed at steps: {hit}")
    assert len(set(hit)) >= 3, hit
