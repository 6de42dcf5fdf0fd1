"""What show, history, changes and search say (issue 14, "Options and output"): every fact the
JSON holds is in the text too, a move reads as a move, a revived entry has its category, a
lookup says why it matched, and a query with nothing to search for says so. Through the CLI
on real vaults (real git where history is involved); state checked through the library."""

from __future__ import annotations

from pathlib import Path

from memvault.cli import cli
from memvault.vault import Vault

from .conftest import git, plain_vault


def _log(root: Path, day: str, text: str) -> None:
    (root / "memory" / f"{day}.md").write_text(f"# {day}\n\n{text}")


def _commit(root: Path, message: str, when: str) -> None:
    git(root, "add", "-A")
    git(root, "commit", "-qm", message, env={"GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when})


# -- show: reconfirmations ---------------------------------------------------------------------

def test_show_text_names_what_an_entry_reconfirms_and_who_reconfirmed_it(runner, vault_dir):
    plain_vault(vault_dir, "Europe/Berlin")
    _log(vault_dir, "2026-02-22", "## 10:00 - Observation\nMag immer noch Tee, grünen vor allem\n"
                                  "Reconfirms: [[2026-02-21#09:00]]\n")
    _log(vault_dir, "2026-02-23", "## 08:30 - Belief\nstill tea, checked again\n"
                                  "Reconfirms: [[2026-02-21#09:00]]\nReconfirms: [[2026-01-01#07:00]]\n")
    confirming = runner.invoke(cli, ["show", "2026-02-22T10:00", "--no-record"])
    assert confirming.exit_code == 0, confirming.output
    assert "reconfirms: 2026-02-21T09:00\n" in confirming.output
    old = runner.invoke(cli, ["show", "2026-02-21T09:00", "--no-record"]).output
    assert "reconfirmed by: 2026-02-22T10:00, 2026-02-23T08:30\n" in old
    assert "reconfirms:" not in old
    # One reference that resolves and one that does not: the text says which were written.
    partly = runner.invoke(cli, ["show", "2026-02-23T08:30", "--no-record"]).output
    assert ("reconfirms: 2026-02-21T09:00 (as written: [[2026-02-21#09:00]], [[2026-01-01#07:00]]; "
            "1 not found)") in partly
    # The text says what the library holds.
    vault = Vault.open(vault_dir)
    assert vault.show("2026-02-21T09:00", record=False)["reconfirmed_by"] == ["2026-02-22T10:00", "2026-02-23T08:30"]
    # An entry neither reconfirming nor reconfirmed has no such lines.
    _log(vault_dir, "2026-02-24", "## 11:00 - Decision\nWir bleiben bei Kaffee im Büro\n")
    alone = runner.invoke(cli, ["show", "2026-02-24T11:00", "--no-record"]).output
    assert "reconfirm" not in alone
