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


# -- history: a move -----------------------------------------------------------------------------

def test_history_of_a_moved_entry_says_from_where_to_where(runner, vault_dir):
    # A log moved into its year folder kept its text, and history printed it twice as was:/now:.
    plain_vault(vault_dir, "Europe/Berlin")
    _log(vault_dir, "2026-02-22", "## 10:00 - Decision\nDeploys gehen freitags raus, nicht donnerstags\n")
    git(vault_dir, "init", "-q")
    _commit(vault_dir, "two days", "2026-02-22T12:00:00+00:00")
    (vault_dir / "memory" / "2026").mkdir()
    git(vault_dir, "mv", "memory/2026-02-22.md", "memory/2026/2026-02-22.md")
    _commit(vault_dir, "into the year folder", "2026-03-01T09:00:00+00:00")
    assert Vault.open(vault_dir).find("2026-02-22T10:00").file == "memory/2026/2026-02-22.md"

    result = runner.invoke(cli, ["history", "2026-02-22T10:00"])
    assert result.exit_code == 0, result.output
    assert "moved    memory/2026/2026-02-22.md\n" in result.output
    assert "      moved from memory/2026-02-22.md:3 to memory/2026/2026-02-22.md:3\n" in result.output
    assert "was:" not in result.output and "now:" not in result.output

    commits = Vault.open(vault_dir).history("2026-02-22T10:00")["commits"]
    assert [(c["change"], c["old_file"], c["file"]) for c in commits] == [
        ("added", None, "memory/2026-02-22.md"), ("moved", "memory/2026-02-22.md", "memory/2026/2026-02-22.md")]
    assert commits[1]["old"] == commits[1]["new"]


def test_history_of_an_entry_moved_and_edited_says_both(runner, vault_dir):
    plain_vault(vault_dir, "Europe/Berlin")
    git(vault_dir, "init", "-q")
    _commit(vault_dir, "tea", "2026-02-21T12:00:00+00:00")
    (vault_dir / "memory" / "2026" / "02").mkdir(parents=True)
    git(vault_dir, "mv", "memory/2026-02-21.md", "memory/2026/02/2026-02-21.md")
    (vault_dir / "memory" / "2026" / "02" / "2026-02-21.md").write_text(
        "# 2026-02-21\n\nKurz notiert.\n\n## 09:00 - Belief\nUser likes green tea\n")
    # Uncommitted: the working tree's item says so, and names both places too.
    out = runner.invoke(cli, ["history", "2026-02-21T09:00"]).output
    assert "edited (uncommitted) memory/2026/02/2026-02-21.md" in out
    assert "      moved from memory/2026-02-21.md:3 to memory/2026/02/2026-02-21.md:5\n" in out
    assert "was: ## 09:00 - Belief User likes tea" in out and "now: ## 09:00 - Belief User likes green tea" in out
    # An edit that only shifts the entry's lines in its own file is no move.
    _commit(vault_dir, "moved", "2026-02-22T12:00:00+00:00")
    (vault_dir / "memory" / "2026" / "02" / "2026-02-21.md").write_text(
        "# 2026-02-21\n\nKurz notiert.\nUnd noch was.\n\n## 09:00 - Belief\nUser likes black tea\n")
    out = runner.invoke(cli, ["history", "2026-02-21T09:00"]).output
    assert out.count("moved from") == 1
