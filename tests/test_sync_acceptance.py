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
from datetime import datetime
from pathlib import Path

import pytest

from memvault.check.runner import check_vault
from memvault.cli import cli
from memvault.search.index import open_index, search_vault
from memvault.serve.run import ThreadedServer
from memvault.serve.service import Service
from memvault.serve.settings import ServeSettings
from memvault.sync.state import git_dir, in_progress, read_step
from memvault.write.log import log_entry
from tests.conftest import git
from tests.helpers_index import fresh
from tests.helpers_sync import STOPPER, Clone, both_sides_new, make_clones, pair

NAMES = ["alpha", "bär", "ci-runner.03"]


class Seen:
    """Every (id → token) a clone showed after a sync: an id must keep naming its entry."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}  # id → token
        self.ids: dict[str, str] = {}  # token → id

    def look(self, clone: Clone, where: str) -> None:
        for tok, ids in clone.tokens().items():
            assert len(ids) == 1, f"{where}: {tok} is in {len(ids)} entries on {clone.name}: {ids}"
            before = self.names.setdefault(ids[0], tok)
            assert before == tok, f"{where}: id {ids[0]} named {before}, now names {tok} on {clone.name}"
            was = self.ids.setdefault(tok, ids[0])
            assert was == ids[0], f"{where}: {tok} was {was}, on {clone.name} it is {ids[0]}"


def run(tmp_path: Path, runner, per_clone: int, seed: int, sync_every: float) -> list[Clone]:
    """The run; the last clone is served (`memvault serve` on loopback, its watcher keeping the
    index current while syncs replace files): its remember calls go over HTTP."""
    rng = random.Random(seed)
    _, clones = make_clones(tmp_path, NAMES, runner)
    with ThreadedServer(Service(clones[-1].root), ServeSettings(port=0, rate_per_minute=0)) as server:
        clones[-1].api = server.url + "/v0"
        try:
            interleave(clones, runner, rng, per_clone, sync_every)
            watched(clones[-1])
        finally:
            clones[-1].api = None
    return clones


def watched(clone: Clone, within: float = 20.0) -> None:
    """The served clone's watcher brings its index to the files the syncs left, by itself."""
    events, sup, rec = fresh(clone.root)
    deadline = time.monotonic() + within
    while True:
        with open_index(clone.vault()) as index:
            held = index.events(), index.edges()
        if held == (events, (sup, rec)) or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert {e.id for e in held[0]} == {e.id for e in events}
    assert held == (events, (sup, rec))


def interleave(clones: list[Clone], runner, rng: random.Random, per_clone: int, sync_every: float) -> None:
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


def synced(clone: Clone, seen: Seen, where: str) -> None:
    seen.look(clone, f"before the sync at {where} ({clone.name})")
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
    clones = run(tmp_path, runner, per_clone=12, seed=19, sync_every=0.2)
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


@pytest.mark.parametrize("step", ["update files",
                                  pytest.param("push", marks=pytest.mark.slow),
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



def test_a_sync_killed_while_git_rewrites_the_files_loses_nothing(world, runner):
    """Killed inside `git merge --ff-only`: git had unlinked a log it was replacing and not yet
    written the new one, and held the index lock (what a kill there leaves; the slow tests below
    hit it by timing). The next sync must not take the missing file for the person's deletion."""
    laptop, server = both_sides_new(world, random.Random(7), runner)
    proc = child(laptop.root, stop_at="update files")
    _, status = os.waitpid(proc.pid, os.WUNTRACED)
    assert os.WIFSTOPPED(status)
    killed(proc)
    (laptop.root / "memory" / f"{laptop.hand_day}.md").unlink()
    (git_dir(laptop.root) / "index.lock").write_bytes(b"")
    busy = after_kill(laptop, runner)
    assert busy is not None and "interrupted during update files" in busy
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


def when_step(root: Path, step: str, proc: subprocess.Popen) -> bool:
    """Wait until the sync in `root` writes `step` (False when it ended first)."""
    gdir = git_dir(root)
    while proc.poll() is None:
        if (read_step(gdir) or {}).get("step") == step:
            return True
        time.sleep(0.0005)
    return False


@pytest.mark.slow
@pytest.mark.parametrize("step", ["merge", "update files", "push"])
def test_kill_9_inside_a_step_10_runs(world, runner, step):
    """Kills a few milliseconds into `step` (the merge driver running, git updating the files
    under the vault lock, git pushing), where a kill at a random time of the whole sync rarely falls."""
    rng = random.Random(step)
    for run in range(10):
        laptop, server = both_sides_new(copy_of(world, f"{step}-{run}"), random.Random(run), runner)
        proc = child(laptop.root)
        assert when_step(laptop.root, step, proc), proc.stderr.read().decode() if proc.stderr else ""
        time.sleep(rng.uniform(0, 0.06))
        killed(proc, group=run % 2 == 0)
        recovered(laptop, server, laptop.written + server.written, after_kill(laptop, runner))


# -- recorded time across clones ----------------------------------------------------------------

DAY = "2026-11-20"


def at_clock(monkeypatch, hhmm: str) -> None:
    """Every git commit from now on (the hook's, sync's merge) is dated `DAY hhmm` UTC."""
    stamp = f"{DAY}T{hhmm}:00+00:00"
    monkeypatch.setenv("GIT_COMMITTER_DATE", stamp)
    monkeypatch.setenv("GIT_AUTHOR_DATE", stamp)


def recorded(runner, clone: Clone, hhmm: str) -> list[str]:
    """The texts `asof --recorded` lists at `DAY hhmm` UTC on `clone` (through the CLI)."""
    out = runner.invoke(cli, ["--vault", str(clone.root), "asof", f"{DAY} {hhmm}", "--recorded", "--json"],
                        catch_exceptions=False).output
    return sorted(d["content"] for d in json.loads(out) if d["content"].startswith("Sync-Test"))


def timeless(answer):
    """An answer without the confidence decayed to now (two calls a millisecond apart may differ)."""
    if isinstance(answer, dict):
        return {k: timeless(v) for k, v in answer.items() if k != "confidence"}
    return [timeless(v) for v in answer] if isinstance(answer, list) else answer


def logged(clone: Clone, hhmm: str, text: str) -> None:
    log_entry(clone.vault(), f"Sync-Test {text}", at=datetime.fromisoformat(f"{DAY}T{hhmm}:00+00:00"))


def commit_here(clone: Clone) -> None:
    """A local commit (the hook runs), as `watch --commit` or a person makes one, not pushed."""
    git(clone.root, "add", "-A", "--", "memory")
    git(clone.root, "commit", "-qm", "local")


@pytest.fixture
def two(tmp_path, runner, monkeypatch) -> tuple[Clone, Clone]:
    at_clock(monkeypatch, "09:00")
    _, clones = make_clones(tmp_path, ["laptop", "server"], runner)
    return clones[0], clones[1]


GRID = ["09:30", "10:05", "10:15", "10:25", "10:35", "10:45"]


def test_recorded_time_is_the_shared_first_parent_line(two, runner, monkeypatch):
    """An entry a clone committed at 10:10 and synced at 10:20, when the remote had moved (a merge
    was needed), is recorded from 10:20 (the merge's time) on every clone; before the sync the
    clone that made it said 10:10. An entry pushed without a merge (10:30 commit, 10:40 sync) is
    recorded from its commit's time, 10:30, also on the clone that pulled it later."""
    laptop, server = two
    at_clock(monkeypatch, "10:00")
    logged(laptop, "09:58", "Alpha: Drucker im 2. OG druckt wieder")
    laptop.sync()
    at_clock(monkeypatch, "10:10")
    logged(server, "10:09", "Beta: backup job moved to 03:00 UTC")
    commit_here(server)
    alone = {t: recorded(runner, server, t) for t in GRID}  # builds the server's recorded index
    assert alone["10:15"] == ["Sync-Test Beta: backup job moved to 03:00 UTC"]
    at_clock(monkeypatch, "10:20")
    assert server.sync().result == "merged"
    at_clock(monkeypatch, "10:30")
    logged(server, "10:29", "Beta: Zertifikat für „api.example“ erneuert")
    commit_here(server)
    at_clock(monkeypatch, "10:40")
    assert server.sync().result == "pushed"
    at_clock(monkeypatch, "10:50")
    assert laptop.sync().result == "pulled"

    alpha, beta, cert = ("Sync-Test Alpha: Drucker im 2. OG druckt wieder",
                         "Sync-Test Beta: backup job moved to 03:00 UTC",
                         "Sync-Test Beta: Zertifikat für „api.example“ erneuert")
    expected = {"09:30": [], "10:05": [alpha], "10:15": [alpha], "10:25": [alpha, beta],
                "10:35": sorted([alpha, beta, cert]), "10:45": sorted([alpha, beta, cert])}
    for clone in (laptop, server):
        assert {t: recorded(runner, clone, t) for t in GRID} == expected, clone.name
    # the answers come from each clone's stored index; a fresh index answers the same
    for clone in (laptop, server):
        shutil.rmtree(clone.root / ".memvault")
        assert {t: recorded(runner, clone, t) for t in GRID} == expected, clone.name
    # `changes` and `history` walk the same line: the same answers on both clones
    beta_id = next(e.id for e in laptop.vault().timeline.events if e.content == beta)
    for args in (["changes", "--since", f"{DAY} 10:12", "--until", f"{DAY} 10:22", "--json"], ["history", beta_id, "--json"]):
        answers = [timeless(json.loads(runner.invoke(cli, ["--vault", str(c.root), *args],
                                                     catch_exceptions=False).output)) for c in (laptop, server)]
        assert answers[0] == answers[1], args
        assert beta in json.dumps(answers[0], ensure_ascii=False), answers[0]
    assert [c["date"] for c in answers[0]["commits"]] == [f"{DAY}T10:20:00+00:00"]  # the merge, not 10:10


# -- a freeform section two machines add ---------------------------------------------------------

def test_a_section_heading_two_machines_add_keeps_both_and_reports_the_moved_id(tmp_path, runner):
    """Both machines start `## Notizen` in the same day's log: each side's note was `…#notizen`;
    after the merge one of them is `…#notizen~2`, and check says so on both clones."""
    _, (laptop, server) = make_clones(tmp_path, ["laptop", "server"], runner)
    day = laptop.hand_day
    for clone, text in ((laptop, "Kisten für Küche & Bad gepackt"), (server, "Boxes labelled, keys at Frau Öztürk's")):
        (clone.root / "memory" / f"{day}.md").write_text(f"# {day}\n\n## Notizen\n\n{text}\n", encoding="utf-8")
    for clone in (laptop, server, laptop):
        clone.sync()
    for clone in (laptop, server):
        notes = {e.id: e.content for e in clone.vault().timeline.events if e.file == f"memory/{day}.md"}
        assert sorted(notes) == [f"{day}#notizen", f"{day}#notizen~2"], notes
        problems = check_vault(clone.vault()).problems  # MV023 (the merge's Conflict: line) or MV024 (check's walk)
        assert [p.code in ("MV023", "MV024") and f"{day}#notizen" in p.message for p in problems] == [True], problems
    assert laptop.markdown() == server.markdown()
