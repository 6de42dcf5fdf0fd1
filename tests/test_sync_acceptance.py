"""Issue 19's acceptance: three clones of one bare remote, each appending entries through `memvault
log`, memorywire's remember and a text editor, with syncs interleaved at random (seeded).

Afterwards every clone holds every entry exactly once, under the same id on every clone; an id a
clone saw for an entry after any sync still names that entry at the end; `check` is clean; each
clone's index (updated as search updates it, through the run) equals a fresh parse and a rebuild;
and no file held a conflict marker after any sync."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from memvault.check.runner import check_vault
from memvault.search.index import open_index, search_vault
from tests.helpers_index import fresh
from tests.helpers_sync import Clone, make_clones

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
    clones = run(tmp_path, runner, per_clone=20, seed=19, sync_every=0.3)
    assert_converged(clones)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2])
def test_three_clones_300_entries_each(tmp_path, runner, seed):
    clones = run(tmp_path, runner, per_clone=300, seed=seed, sync_every=0.15)
    assert_converged(clones)
