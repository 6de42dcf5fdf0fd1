"""Issue 14, "wrong input refused before anything is written": each refusal through the CLI, with
what is on disk (or in git) checked afterwards."""

from __future__ import annotations

from pathlib import Path

from memvault.cli import cli


def _tree(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*"))


def test_init_with_an_unknown_zone_creates_nothing(runner, tmp_path):
    target = tmp_path / "new" / "vault"
    res = runner.invoke(cli, ["init", str(target), "--timezone", "Mars/Olympus"])
    assert res.exit_code == 2, res.output
    assert "'Mars/Olympus' is not a known IANA zone" in res.output and "nothing was created" in res.output
    assert not (tmp_path / "new").exists()


def test_init_with_an_unknown_zone_leaves_an_existing_folder_as_it_was(runner, tmp_path):
    target = tmp_path / "notes"
    target.mkdir()
    (target / "todo.txt").write_text("milk\n")
    res = runner.invoke(cli, ["init", str(target), "--timezone", "Europe/Berln"])
    assert res.exit_code == 2, res.output
    assert _tree(target) == ["todo.txt"]  # no memvault.toml, no memory/, no .git


def test_init_with_a_known_zone_writes_it_and_later_commands_work(runner, tmp_path):
    from memvault.vault import Vault

    target = tmp_path / "v"
    res = runner.invoke(cli, ["init", str(target), "--timezone", "Europe/Berlin"])
    assert res.exit_code == 0, res.output
    assert Vault.open(target).config.timezone == "Europe/Berlin"
    assert runner.invoke(cli, ["--vault", str(target), "log", "Kaffee ist alle"]).exit_code == 0


def test_adopt_with_an_unknown_zone_writes_nothing(runner, tmp_path):
    target = tmp_path / "legacy"
    (target / "memory").mkdir(parents=True)
    (target / "memory" / "2026-02-21.md").write_text("# 2026-02-21\n\n## 09:00 - Belief\nUser likes tea\n")
    res = runner.invoke(cli, ["init", "--adopt", str(target), "--timezone", "Mars/Olympus"])
    assert res.exit_code != 0
    assert "Mars/Olympus" in res.output
    assert _tree(target) == ["memory", "memory/2026-02-21.md"]
