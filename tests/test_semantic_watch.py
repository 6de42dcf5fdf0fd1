"""The watcher keeps the vectors in step: an entry saved while it runs is found by meaning."""

from __future__ import annotations

import json

from memvault.cli import cli
from memvault.write.log import init_vault

from .helpers_semantic import MODEL, embedded_ids, needs_extra
from .helpers_watch import DAY, atomic_save, entry, log_file, wait_for, watching

pytestmark = needs_extra


def test_a_saved_entry_is_found_by_meaning_within_seconds(vault_dir, runner):
    init_vault(vault_dir, timezone="UTC", git=False)
    with (vault_dir / "memvault.toml").open("a") as fh:
        fh.write(f'\n[semantic]\nmodel = "{MODEL}"\n')
    (vault_dir / DAY).write_text(log_file("2026-02-21", entry("09:15", "Deployed the servers to production")))
    with watching(vault_dir):
        assert embedded_ids(vault_dir) == {"2026-02-21T09:15"}  # embedded before start() returned
        atomic_save(vault_dir / DAY, log_file("2026-02-21", entry("09:15", "Deployed the servers to production"),
                                              entry("18:30", "Caroline malt am Wochenende Landschaften")))
        wait_for(lambda: "2026-02-21T18:30" in embedded_ids(vault_dir), timeout=10, what="the new entry embedded")
        result = runner.invoke(cli, ["search", "--json", "--mode", "semantic", "How does she unwind?"])
        assert result.exit_code == 0, result.output
        assert json.loads(result.output)[0]["id"] == "2026-02-21T18:30"
