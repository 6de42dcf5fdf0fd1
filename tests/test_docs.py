"""Docs that cannot drift: the CLI reference (from --help) and the retention tables (from the
models) are regenerated and compared."""

from __future__ import annotations

from pathlib import Path

from cogapp import Cog

ROOT = Path(__file__).resolve().parent.parent


def test_cli_reference_is_current():
    result = Cog().main(["cog", "--check", str(ROOT / "docs" / "cli.md")])
    assert result == 0, "docs/cli.md is stale: run `cog -r docs/cli.md`"


def test_readme_starts_with_the_two_commands():
    text = (ROOT / "README.md").read_text()
    block = text.split("```sh", 1)[1].split("```", 1)[0]
    commands = [line for line in block.splitlines() if line and not line.startswith("#")]
    assert len(commands) == 2
    assert "memvault demo" in commands[0]
    assert "pytest" in commands[1]
    assert commands[1] in (ROOT / ".ci" / "run").read_text()


def test_retention_tables_are_current():
    result = Cog().main(["cog", "--check", str(ROOT / "docs" / "retention.md")])
    assert result == 0, "docs/retention.md is stale: run `cog -r docs/retention.md`"
