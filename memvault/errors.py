"""One error hierarchy for the library; the CLI turns these into click errors."""

from __future__ import annotations

from typing import Any


class MemvaultError(Exception):
    """Base class of every error memvault raises on purpose."""


class VaultNotFound(MemvaultError):
    """No vault at the given path, in MEMVAULT_VAULT, or above the current directory."""


class ConfigError(MemvaultError):
    """memvault.toml is unreadable or holds a bad value."""


class InputError(MemvaultError):
    """A value given by the user (a time, an id, a reference) cannot be used."""


class NotFoundError(MemvaultError):
    """An id or a file that the user named does not exist."""


class LockTimeout(MemvaultError):
    """Another memvault process holds the lock for longer than we are willing to wait."""


class GitError(MemvaultError):
    """A git operation failed, or the vault is not a git repository."""


class UnsafePath(MemvaultError):
    """A vault path memvault must not read or write: a symbolic link on the way, or not a
    regular file (see memvault/layout.py). Carries the check problem that names it."""

    # Any: a memvault.entries.model.Problem, which this bottom module cannot import
    def __init__(self, message: str, problem: Any = None):
        super().__init__(message)
        self.problem = problem


class WriteConflict(MemvaultError):
    """A file kept changing while memvault wrote it, or saves collided with memvault's write.

    Nothing is lost: `kept` names the file a colliding save was kept in, if any.
    """

    def __init__(self, message: str, *, kept: object = None) -> None:
        super().__init__(message)
        self.kept = kept
