"""The CLI reference (docs/cli.md) rendered from the commands' own --help, and its table of
error codes and exit statuses rendered from the error hierarchy (memvault/errors.py)."""

from __future__ import annotations

import click
from click.testing import CliRunner

CONVENTIONS = """\
## Options every command shares

- `--vault DIR` goes before the subcommand or anywhere after it, arguments included
  (`memvault search tea --vault ~/memory`); one after the subcommand wins over one before it,
  and both over `$MEMVAULT_VAULT`. `init`, `adopt` and `demo` take a DIRECTORY instead.
- `--json` (every command but `init` and `demo`) goes before the subcommand (or a sub-group's:
  `memvault hook --json status`) or anywhere after it. The result is JSON on stdout; an error is one line of JSON on stderr (below), and a notice
  memvault prints on its own (an index rebuilt, a stale lock removed) is a line
  `{"notice": {"message": ...}}`.
- `-n/--limit N` wherever a command prints a list of entries (`search`, `asof`, `list`: the
  newest N; `changes`: N of each kind, the rest counted).
- `--since T` / `--until T` wherever a command considers a window of time (`list`, `search`,
  `changes`, `curate`, where `--until` is also spelled `--at`); a window whose end is before its
  start is a usage error naming both. A single point in time is an argument (`asof T`,
  `diff T1 T2`) or `--at` (`log`).
- A value for `--vault` that starts with `-` is refused as a usage error (`list --vault --json`
  forgot the directory); write `./-dir` for a directory named so.

## Exit status and errors

0: done. 1: the command ran and failed or refused (an error below), or found what it reports
as failure (`check` found errors, `adopt --commit` was refused by the secret scan: the report
says so on stdout). 2: the command line is wrong; fix the command (a usage error, shown with
the command's usage line).

With `--json`, an error is printed on stderr as one line,
`{"error": {"code": "not_found", "message": "...", "file": null, "line": null}}`, with the
same exit status as without it; `file` and `line` name the place the error is about when there
is one: the line of the key in `memvault.toml` (null when the key is not on a line of its own
and its table has no header), a line of a daily log, the file a refused secret or a locked write
was for (`line` null: the entry had no line yet). The codes are stable:
"""


def render() -> str:
    from memvault.cli import cli

    runner = CliRunner()
    out = ["## memvault", "", "```", _help(runner, []), "```", ""]
    for name in sorted(cli.commands):
        command = cli.commands[name]
        if command.hidden:  # `merge-driver`: git runs it (docs/sync.md)
            continue
        out += [f"## memvault {name}", "", "```", _help(runner, [name]), "```", ""]
        if isinstance(command, click.Group):
            for sub in sorted(command.commands):
                out += [f"### memvault {name} {sub}", "", "```", _help(runner, [name, sub]), "```", ""]
    return "\n".join(out)


def render_conventions() -> str:
    from memvault.cli._errors import describe_codes

    rows = ["| code | exit | meaning |", "|---|---|---|"]
    rows += [f"| `{code}` | {status} | {meaning} |" for code, status, meaning in describe_codes()]
    return CONVENTIONS + "\n" + "\n".join(rows) + "\n"


def _help(runner: CliRunner, args: list[str]) -> str:
    from memvault.cli import cli

    result = runner.invoke(cli, [*args, "--help"], prog_name="memvault", terminal_width=100)
    return result.output.rstrip()
