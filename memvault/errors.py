"""One error hierarchy for the library; the CLI turns these into click errors.

Each class has a stable `code` that `--json` prints (`{"error": {"code": ...}}`) and that
docs/cli.md lists with its exit status ("Exit status and errors"); a subclass defined elsewhere
inherits its parent's code. `file` and `line` name the place an error is about, when there is one.
"""

from __future__ import annotations

import os
from typing import Any


class MemvaultError(Exception):
    """Something memvault cannot do (the message says what and why)."""

    code = "error"

    def __init__(self, message: str = "", *, file: str | os.PathLike[str] | None = None, line: int | None = None):
        super().__init__(message)
        self.file = None if file is None else str(file)
        self.line = line


class InputError(MemvaultError):
    """A value given on the command line cannot be read or is not one memvault accepts (a time,
    a type, an option that does not go with another): a usage error."""

    code = "usage"


class NotFoundError(MemvaultError):
    """An id, reference or file that the user named does not exist."""

    code = "not_found"


class Ambiguous(NotFoundError):
    """A reference or id prefix that matches more than one entry (the message lists them)."""

    code = "ambiguous"


class Refused(MemvaultError):
    """A well-formed request memvault will not carry out: it would contradict what the vault
    holds (an id already used, a vault already there) or a file could not be kept as it is."""

    code = "refused"


class SecretRefused(Refused):
    """What would be written holds something that looks like a secret (docs/security.md)."""

    code = "secret"


class VaultNotFound(MemvaultError):
    """No vault at the given path, in MEMVAULT_VAULT, or above the current directory."""

    code = "vault_missing"


class ConfigError(MemvaultError):
    """memvault.toml is unreadable or holds a bad value."""

    code = "config"


class LockTimeout(MemvaultError):
    """Another process holds a lock memvault needs for longer than it waits ([index] lock_timeout for
    the search index): the message names the pid only while that process holds the lock."""

    code = "locked"


class GitError(MemvaultError):
    """A git operation failed, or the vault is not a git repository."""

    code = "git"


class UnsafePath(MemvaultError):
    """A vault path memvault must not read or write: a symbolic link on the way, or not a
    regular file (memvault/layout.py).

    Carries the check problem that names it."""

    code = "unsafe_path"

    # Any: a memvault.entries.model.Problem, which this bottom module cannot import
    def __init__(self, message: str, problem: Any = None):
        super().__init__(message, file=getattr(problem, "path", None), line=getattr(problem, "line", None))
        self.problem = problem


class WriteConflict(MemvaultError):
    """A file kept changing while memvault wrote it, or saves collided with memvault's write.

    Nothing is lost: `kept` names the file a colliding save was kept in, if any.
    """

    code = "conflict"

    def __init__(self, message: str, *, kept: object = None, file: str | None = None) -> None:
        super().__init__(message, file=file)
        self.kept = kept


class SyncStopped(Refused):
    """`memvault sync` stopped and needs the person: MEMORY.md prose changed on two machines, the
    hook refused the commit of pending work, or a git operation someone else started is under way
    (the message says which, and what to do: docs/sync.md)."""

    code = "sync_stopped"


class SemanticUnavailable(MemvaultError):
    """Semantic search was asked for, but its extra (`pip install 'memvault[semantic]'`) or its
    model is not installed, or the model named in memvault.toml cannot be loaded."""

    code = "semantic_unavailable"


def hierarchy() -> list[type[MemvaultError]]:
    """The classes above (the catch-all last): what docs/cli.md's error table lists."""
    return [InputError, NotFoundError, Ambiguous, Refused, SecretRefused, VaultNotFound,
            ConfigError, LockTimeout, GitError, UnsafePath, WriteConflict, SyncStopped, SemanticUnavailable, MemvaultError]
