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


def test_a_search_asks_the_running_watcher_and_never_opens_the_model(vault_dir):
    # a one-shot search beside a watcher: the watcher answers its semantic side over
    # .memvault/semantic.sock, so the search process imports neither numpy nor onnxruntime
    import subprocess
    import sys

    init_vault(vault_dir, timezone="UTC", git=False)
    with (vault_dir / "memvault.toml").open("a") as fh:
        fh.write(f'\n[semantic]\nmodel = "{MODEL}"\n')
    (vault_dir / DAY).write_text(log_file("2026-02-21", entry("09:15", "Deployed the servers to production"),
                                          entry("18:30", "Caroline paints landscapes on weekends")))
    code = ("import json, sys\nfrom memvault.vault import Vault\nfrom memvault.search.index import search_vault\n"
            f"hits = search_vault(Vault.open({str(vault_dir)!r}), sys.argv[1], mode='semantic')\n"
            "print(json.dumps([[h.id for h in hits], sorted(m for m in ('numpy', 'onnxruntime', 'tokenizers')"
            " if m in sys.modules)]))\n")

    def search(question: str) -> list:
        out = subprocess.run([sys.executable, "-c", code, question], capture_output=True, text=True, check=True)
        return json.loads(out.stdout)

    with watching(vault_dir):
        assert (vault_dir / ".memvault" / "semantic.sock").exists()
        wait_for(lambda: "answers semantic queries" in runner_status(vault_dir), timeout=10,
                 what="status saying the watcher answers")
        # The watcher loads its model at the first question; on a loaded machine that can take longer
        # than a search waits (2 s), and the search then answers itself: ask once to warm it up.
        search("Who deployed the servers?")
        assert search("How does she unwind?") == [["2026-02-21T18:30"], []]  # the deploy entry is not near
    assert not (vault_dir / ".memvault" / "semantic.sock").exists()  # the watcher took it away
    hits, imported = search("What does she do to relax?")  # no watcher: the search opens the model
    assert hits[0] == "2026-02-21T18:30" and "onnxruntime" in imported


def runner_status(vault_dir) -> str:
    from click.testing import CliRunner

    return CliRunner().invoke(cli, ["--vault", str(vault_dir), "status"]).stdout
