"""The CLI reference (docs/cli.md) rendered from the commands' own --help."""

from __future__ import annotations

import click
from click.testing import CliRunner


def render() -> str:
    from memvault.cli import cli

    runner = CliRunner()
    out = ["## memvault", "", "```", _help(runner, []), "```", ""]
    for name in sorted(cli.commands):
        command = cli.commands[name]
        out += [f"## memvault {name}", "", "```", _help(runner, [name]), "```", ""]
        if isinstance(command, click.Group):
            for sub in sorted(command.commands):
                out += [f"### memvault {name} {sub}", "", "```", _help(runner, [name, sub]), "```", ""]
    return "\n".join(out)


def _help(runner: CliRunner, args: list[str]) -> str:
    from memvault.cli import cli

    result = runner.invoke(cli, [*args, "--help"], prog_name="memvault", terminal_width=100)
    return result.output.rstrip()
