"""What a new user ran into (qa18): a read-only vectors folder, a build killed half way."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from memvault.cli import cli

from .helpers_index import entry, write_log
from .helpers_semantic import needs_extra, semantic_vault  # noqa: F401

pytestmark = needs_extra


def hits(runner, *args: str) -> list[str]:
    result = runner.invoke(cli, ["search", "--json", *args])
    assert result.exit_code == 0, result.output
    return [h["id"] for h in json.loads(result.stdout)]


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes through a read-only folder")
def test_a_read_only_vectors_folder_never_fails_a_search(semantic_vault: Path, runner) -> None:  # noqa: F811
    write_log(semantic_vault, "2026-02-14", entry("10:00", "Observation", "Caroline paints landscapes on weekends"))
    assert hits(runner, "How does she unwind?") == ["2026-02-14T10:00"]
    write_log(semantic_vault, "2026-02-15", entry("09:00", "Belief", "Jonas relaxes with watercolors"))
    folder = next((semantic_vault / ".memvault" / "vectors").iterdir())
    modes = {p: p.stat().st_mode for p in [folder, *folder.iterdir()]}
    try:
        for p in modes:
            p.chmod(stat.S_IMODE(modes[p]) & ~0o222)
        found = hits(runner, "How does she unwind?")  # the new entry waits; the search still answers
        assert found[0] == "2026-02-14T10:00"
    finally:
        for p, mode in modes.items():
            p.chmod(stat.S_IMODE(mode))


def test_a_lock_that_cannot_be_taken_leaves_the_search_with_the_vectors_there_are(  # noqa: F811
        semantic_vault: Path, runner, monkeypatch) -> None:  # noqa: F811
    # what a read-only file system does to the lock, for any user (root included)
    from memvault.semantic import vectors

    write_log(semantic_vault, "2026-02-14", entry("10:00", "Observation", "Caroline paints landscapes on weekends"))
    assert hits(runner, "How does she unwind?") == ["2026-02-14T10:00"]
    write_log(semantic_vault, "2026-02-15", entry("09:00", "Belief", "Jonas relaxes with watercolors"))

    def read_only(*args, **kwargs):
        raise OSError(30, "Read-only file system")

    monkeypatch.setattr(vectors, "locked", read_only)
    assert hits(runner, "How does she unwind?")[0] == "2026-02-14T10:00"


def test_a_build_killed_half_way_keeps_what_it_embedded(semantic_vault: Path, monkeypatch) -> None:  # noqa: F811
    # the vectors are appended a chunk of rows at a time: a search sees them while a first build
    # runs, and a build that dies keeps them (the next one encodes only the rest)
    from memvault.search.index import open_index
    from memvault.search.index import semantic as glue
    from memvault.vault import Vault

    monkeypatch.setattr(glue, "ROWS_PER_APPEND", 2)
    write_log(semantic_vault, "2026-02-14", *[entry(f"1{i}:00", "Observation", f"Caroline paints landscapes {i}")
                                              for i in range(6)])

    class Killed(Exception):
        pass

    def progress(done: int, total: int) -> None:
        if done >= 4:  # the second chunk encoded, not yet appended: the process dies
            raise Killed

    with open_index(Vault.open(semantic_vault)) as index, pytest.raises(Killed):
        index.update(progress=progress)
    with open_index(Vault.open(semantic_vault)) as index:
        sem = index.semantic_side()
        assert sem.store.state().live == 2  # the first chunk, searchable already
        report = sem.sync()
        assert (report.encoded, report.reused, report.live) == (2, 2, 6)  # the cache kept chunk 2
