"""The one place memvault starts a git process.

Every git call in the package goes through `run_git` (one command, its output captured) or
`GitProcess` (a long-lived process fed through pipes, such as `git cat-file --batch`), so
these rules hold everywhere:

- **Environment** (`git_env`): the caller's, with the path variables a hook may set relative
  to the repository's top (`GIT_DIR`, `GIT_INDEX_FILE`, `GIT_WORK_TREE`, `GIT_COMMON_DIR`,
  `GIT_OBJECT_DIRECTORY`) made absolute against memvault's own folder, because git runs in
  the vault's folder, which may be below the top. `GIT_TERMINAL_PROMPT=0`: git never waits
  for a password, and its stdin is /dev/null unless memvault feeds it. The locale is left as
  it is: git's words reach the user in the user's language, the user's hooks run in it, and
  `git grep -i` folds case as it would by hand; nothing here parses git's prose.
- **Decoding** (`decode`/`encode`): UTF-8 with `surrogateescape` for output and input, the
  rule Python itself uses for file names on POSIX, so a path git prints (with `-z`) comes back
  as a str that names the same bytes when passed to git or to `open()` again, whatever bytes
  it holds. git's messages are decoded with `replace`, for a person to read.
- **Errors**: one `GitError` that names the command, the folder and git's own words (the
  first and last lines of stderr, or of stdout when stderr is empty, as `git commit` reports
  "nothing to commit"), and says "git is not installed" when the executable is missing.
- **Identity**: a commit memvault makes where git has no `user.email` is made as
  `memvault <memvault@localhost>` (`fallback_identity`) rather than failing.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import IO

from memvault.errors import GitError

ENCODING, ERRORS = "utf-8", "surrogateescape"
# Variables git reads as paths; a hook gets some of them relative to the repository's top.
PATH_VARIABLES = ("GIT_DIR", "GIT_INDEX_FILE", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY")
FALLBACK_IDENTITY = ("-c", "user.name=memvault", "-c", "user.email=memvault@localhost")
NOT_INSTALLED = "git is not installed or not on PATH"
MESSAGE_LINES = 8  # of git's words in an error: the first few and the last few
LINE_CHARS = 300
SHOWN_CHARS = 80  # of the command in an error


def decode(data: bytes) -> str:
    """git's output as text: UTF-8, undecodable bytes kept as surrogates (see the module doc)."""
    return data.decode(ENCODING, ERRORS)


def encode(text: str) -> bytes:
    """The inverse of `decode`: what to write to git's stdin."""
    return text.encode(ENCODING, ERRORS)


def git_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment every git process gets (see the module doc), plus `extra`."""
    env = dict(os.environ)
    for key in PATH_VARIABLES:
        if env.get(key) and not os.path.isabs(env[key]):
            env[key] = os.path.abspath(env[key])
    env["GIT_TERMINAL_PROMPT"] = "0"
    env.update(extra or {})
    return env


def command_text(args: Sequence[str]) -> str:
    """`git <subcommand> <args>` for a message, shortened; leading `-c key=value` are left out."""
    i = 0
    while i < len(args) and args[i] in ("-c", "-C"):
        i += 2
    shown = " ".join(" ".join(["git", *args[i:]]).split())  # a commit message's newlines too
    return shown if len(shown) <= SHOWN_CHARS else shown[: SHOWN_CHARS - 1] + "\u2026"


def words(stderr: bytes, stdout: bytes = b"") -> str:
    """git's own words, on one line: the first and last lines of what it said, hints left out."""
    text = (stderr if stderr.strip() else stdout).decode(ENCODING, "replace")
    lines = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith("hint:")]
    lines = [ln if len(ln) <= LINE_CHARS else ln[: LINE_CHARS - 1] + "\u2026" for ln in lines]
    if len(lines) > MESSAGE_LINES:
        head = MESSAGE_LINES // 2
        lines = [*lines[:head], "\u2026", *lines[len(lines) - (MESSAGE_LINES - head) :]]
    return " | ".join(lines)


@dataclass(frozen=True)
class GitResult:
    """What one git command did: its exit status and output (bytes in `raw`, text in `text`)."""

    args: tuple[str, ...]
    cwd: Path
    returncode: int
    raw: bytes
    stderr: bytes

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    @cached_property
    def text(self) -> str:
        return decode(self.raw)

    @property
    def command(self) -> str:
        return command_text(self.args)

    @property
    def words(self) -> str:
        """git's own words about what happened (for messages)."""
        return words(self.stderr, self.raw) or f"exit status {self.returncode}"

    def error(self) -> GitError:
        return GitError(f"{self.command} failed in {self.cwd}: {self.words}")


def run_git(
    args: Sequence[str],
    cwd: Path | str,
    *,
    input: bytes | str | None = None,
    check: bool = True,
    ok: Collection[int] = (0,),
    timeout: float | None = None,
    env: Mapping[str, str] | None = None,
) -> GitResult:
    """Run `git ARGS` in `cwd` and wait; GitError when the exit status is not in `ok` (with
    `check`), when it takes longer than `timeout` seconds, or when git cannot be started.

    `env` adds variables to `git_env()`; a str `input` is encoded by `encode`.
    """
    argv = ["git", *args]
    data = encode(input) if isinstance(input, str) else input
    try:
        proc = subprocess.run(
            argv, cwd=cwd, input=data, capture_output=True, timeout=timeout, env=git_env(env),
            stdin=subprocess.DEVNULL if data is None else None,
        )
    except subprocess.TimeoutExpired:
        raise GitError(f"{command_text(args)} did not finish within {timeout:g}s in {cwd}") from None
    except OSError as exc:
        raise _not_started(args, cwd, exc) from None
    result = GitResult(tuple(args), Path(cwd), proc.returncode, proc.stdout, proc.stderr)
    if check and result.returncode not in ok:
        raise result.error()
    return result


def _not_started(args: Sequence[str], cwd: Path | str, exc: OSError) -> GitError:
    """Why git could not be started: missing (or not runnable), or the folder is not there."""
    if exc.filename is not None and os.fspath(exc.filename) == os.fspath(cwd):
        return GitError(f"cannot run {command_text(args)} in {cwd}: {exc.strerror}")
    return GitError(f"{NOT_INSTALLED} ({exc.strerror}); memvault needs it to run {command_text(args)}")


def not_in_repository(result: GitResult, hint: str) -> GitError:
    """The error for a command that found no repository around `result.cwd`, in git's words."""
    return GitError(f"{result.cwd} is not in a git repository ({result.command}: {result.words}); {hint}")


def fallback_identity(cwd: Path | str) -> tuple[str, ...]:
    """`-c` options naming memvault as the committer when git has no `user.email` for `cwd`.

    Environment variables (GIT_AUTHOR_EMAIL, GIT_COMMITTER_EMAIL) still win over them.
    """
    have = run_git(["config", "user.email"], cwd, check=False).text.strip()
    return () if have else FALLBACK_IDENTITY


class GitProcess:
    """A long-lived git process fed through pipes (`git cat-file --batch`), in `git_env()`.

    Its stderr is discarded: such a process answers on stdout, and an unread stderr pipe
    could fill up and stall it. `stopped()` says how it ended, for a message.
    """

    def __init__(self, args: Sequence[str], cwd: Path | str):
        self.args, self.cwd = tuple(args), Path(cwd)
        try:
            self._proc = subprocess.Popen(
                ["git", *args], cwd=cwd, env=git_env(),
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            )
        except OSError as exc:
            raise _not_started(args, cwd, exc) from None
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self.stdin: IO[bytes] = self._proc.stdin
        self.stdout: IO[bytes] = self._proc.stdout

    def alive(self) -> bool:
        return self._proc.poll() is None

    def stopped(self) -> GitError:
        """The error for an answer that did not come."""
        code = self._proc.poll()
        state = "is still running" if code is None else f"exited with status {code}"
        return GitError(f"{command_text(self.args)} in {self.cwd} gave no proper answer ({state})")

    def close(self, timeout: float = 5) -> None:
        """End the process: close its stdin (it exits at end of input), wait, kill if it hangs."""
        with contextlib.suppress(OSError):  # unwritten data and a process that already exited
            self.stdin.close()
        try:
            self._proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        self.stdout.close()
