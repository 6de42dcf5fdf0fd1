"""kill -9 in the middle of an update or rebuild: the index is the old one or detectably stale."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap

import pytest

from memvault.search.index import open_index

from .helpers_index import BACKENDS, entry, fresh, make_vault, write_log

DIE_IN_COMMIT = textwrap.dedent("""
    import os, signal, sys
    from memvault.vault import Vault
    from memvault.search.index import open_index

    if sys.argv[2] == "sqlite":
        from memvault.search.index.sqlite import SqliteEngine as engine
    else:
        from memvault.search.index.whoosh_backend import WhooshEngine as engine

    index = open_index(Vault.open(sys.argv[1]), sys.argv[2])
    real = engine.commit

    def commit_then_die(self):
        real(self)  # whoosh: its files are committed; sqlite: the transaction is still open
        os.kill(os.getpid(), signal.SIGKILL)

    engine.commit = commit_then_die
    index.rebuild() if sys.argv[3] == "rebuild" else index.update()
""")


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("mode", ["update", "rebuild"])
def test_kill_9_mid_write(vault_dir, backend, mode):
    vault = make_vault(vault_dir)
    write_log(vault.root, "2026-02-14", entry("10:00", "Observation", "alpha particles"))
    write_log(vault.root, "2026-02-15", entry("10:00", "Observation", "beta decay"))
    with open_index(vault, backend) as index:
        index.update()
        old_events = index.events()
    write_log(vault.root, "2026-02-14", entry("10:00", "Observation", "omega point"))
    proc = subprocess.run([sys.executable, "-c", DIE_IN_COMMIT, str(vault.root), backend, mode],
                          capture_output=True, text=True)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    with open_index(vault, backend) as index:
        reason = index.stale_reason()
        if reason is None:  # trusted: then it must be exactly the old index
            assert index.events() == old_events
            assert [h.id for h in index.search("alpha", record_access=False)] == ["2026-02-14T10:00"]
        else:
            assert "interrupted" in reason or "does not match" in reason
        if backend == "sqlite":
            assert reason is None  # one transaction (update) or an unrenamed temp file (rebuild)
        index.update()
        assert index.stale_reason() is None
        assert index.events() == fresh(vault.root)[0]
        assert [h.id for h in index.search("omega", record_access=False)] == ["2026-02-14T10:00"]


def test_an_index_built_by_another_parser_is_rebuilt(tmp_path):
    """A parser change (a new memvault) can read the same files differently: the index says so
    and rebuilds instead of serving what the old parser made of them."""
    import sqlite3

    from memvault.parsed import ParsedVault
    from memvault.search.index import open_index

    root = tmp_path / "v"
    (root / "memory").mkdir(parents=True)
    (root / "memvault.toml").write_text('[vault]\ntimezone = "UTC"\n')
    (root / "memory" / "2026-02-21.md").write_text("# 2026-02-21\n\n## 09:00 - Observation\nquokka sighting\n")
    vault = ParsedVault.open(root)
    index = open_index(vault)
    index.update()
    assert index.stale_reason() is None
    index.close()
    db = next((root / ".memvault").rglob("*.db"))
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE meta SET value = 'older' WHERE key = 'parser'")
    index = open_index(ParsedVault.open(root))
    assert index.stale_reason() == "built by another version of memvault's parser"
    index.update()
    assert index.stale_reason() is None
    index.close()
