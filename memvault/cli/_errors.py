"""The CLI's edge for errors: library errors become click errors with memvault's exit status,
and under `--json` every error is one JSON object on stderr.

`{"error": {"code": ..., "message": ..., "file": ..., "line": ...}}`: the code is the error
class's `code` (memvault/errors.py), `usage` for what click itself refuses (an unknown option, a
missing argument, a bad value), `io` for an operating-system error and `aborted` for Ctrl-C at a
prompt. The exit status is the same with and without --json: `exit_status` is the one table.
"""

from __future__ import annotations

import errno
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import IO, Any

import click

from memvault.errors import MemvaultError
from memvault.textsafety import dumps_json, printable

JSON_KEY = "memvault.json"  # ctx.meta: whether the command line holds --json
USAGE = "usage"
EXIT_STATUS = {USAGE: 2}  # every other code: 1


def exit_status(code: str) -> int:
    """2 for a command line that is wrong (fix the command), 1 for everything else."""
    return EXIT_STATUS.get(code, 1)


class Failure(click.ClickException):
    """A library error that is not a usage error: exit 1, no usage banner."""

    def __init__(self, message: str, code: str, file: str | None = None, line: int | None = None):
        super().__init__(message)
        self.code, self.file, self.line = code, file, line


class Usage(click.UsageError):
    """A library error about the command line (InputError): exit 2 with the command's usage."""

    def __init__(self, message: str, ctx: click.Context, code: str = USAGE, file: str | None = None,
                 line: int | None = None):
        super().__init__(message, ctx)
        self.code, self.file, self.line = code, file, line


@contextmanager
def mapped_errors(ctx: click.Context) -> Iterator[None]:
    """Library errors become click errors (`exit_status` decides which kind).

    An OS error (a read-only disk, a permission, `.memvault` that is a file) is a failure
    named by its path, not a traceback. A closed stdout is left to click.
    """
    try:
        yield
    except MemvaultError as exc:
        message = printable(str(exc))
        if exit_status(exc.code) == 2:
            raise Usage(message, ctx, exc.code, exc.file, exc.line) from None
        raise Failure(message, exc.code, exc.file, exc.line) from None
    except OSError as exc:
        if exc.errno == errno.EPIPE:
            raise
        where = f"{exc.filename}: " if exc.filename else ""
        raise Failure(printable(f"{where}{exc.strerror or exc}"), "io",
                      None if exc.filename is None else str(exc.filename)) from None


def wants_json(args: Sequence[str]) -> bool:
    """Whether the command line asks for JSON: `--json` (or a mistyped `--json=...`) anywhere before a `--`. Read from the
    raw arguments so that an error in parsing them is JSON too."""
    args = list(args)
    before = args[: args.index("--")] if "--" in args else args
    return any(a == "--json" or a.startswith("--json=") for a in before)  # `--json=yes` is refused, as JSON


def error_fields(exc: click.ClickException) -> dict[str, Any]:
    if isinstance(exc, Failure | Usage):
        code, file, line = exc.code, exc.file, exc.line
    else:
        code = USAGE if isinstance(exc, click.UsageError) else "error"
        file, line = getattr(exc, "ui_filename", None), None  # click.FileError names its file
    return {"code": code, "message": exc.format_message(), "file": file, "line": line}


class JsonError(click.ClickException):
    """An error shown as one line of JSON on stderr, with the exit status it had as text."""

    def __init__(self, fields: dict[str, Any], exit_code: int):
        super().__init__(fields["message"])
        self.fields = fields
        setattr(self, "exit_code", exit_code)  # noqa: B010 (a ClassVar in click's types; one per error here)

    def show(self, file: IO[Any] | None = None) -> None:
        click.echo(dumps_json({"error": self.fields}), err=True)


@contextmanager
def json_errors(wanted: bool) -> Iterator[None]:
    """With `wanted`, any click error (and Ctrl-C at a prompt) leaves as a JsonError."""
    try:
        yield
    except JsonError:
        raise
    except click.ClickException as exc:
        if not wanted:
            raise
        raise JsonError(error_fields(exc), exc.exit_code) from None
    except click.Abort:
        if not wanted:
            raise
        raise JsonError({"code": "aborted", "message": "aborted", "file": None, "line": None}, 1) from None


def json_notice(message: str) -> str | None:
    """A notice (see _common._Notices) as a JSON line when the command line asked for --json,
    so that stderr stays one JSON object per line."""
    ctx = click.get_current_context(silent=True)
    if ctx is None or not ctx.meta.get(JSON_KEY):
        return None
    return dumps_json({"notice": {"message": message}})


def describe_codes() -> list[tuple[str, int, str]]:
    """(code, exit status, meaning) for every code memvault prints: docs/cli.md's table."""
    from memvault.errors import hierarchy

    rows = []
    for cls in hierarchy():
        doc = " ".join((cls.__doc__ or "").split("\n\n")[0].split())  # the first paragraph
        if cls.code == USAGE:
            doc += " Also what click refuses itself: an unknown option, a missing argument."
        rows.append((cls.code, exit_status(cls.code), doc))
    rows += [("io", 1, "An operating-system error (a permission, a full or read-only disk); `file` names the path."),
             ("aborted", 1, "Interrupted at a prompt (Ctrl-C, end of input).")]
    return rows
