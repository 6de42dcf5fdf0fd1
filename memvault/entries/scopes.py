"""`--scope S`, one rule for every command that takes it (`context`, `export` in every format):
the entries scoped S and those that hold everywhere (no `Scope:`, or `Scope: global`),
case-insensitive; an empty S is a usage error."""

from __future__ import annotations

from memvault.errors import InputError


def wanted_scope(scope: str | None) -> str | None:
    """The scope asked for, normalized; None for every entry. An empty one is an InputError."""
    if scope is None:
        return None
    want = scope.strip().lower()
    if not want:
        raise InputError("--scope needs a value: global, a domain, or project:<name>")
    return want


def in_scope(scope: str | None, wanted: str | None) -> bool:
    """Whether an entry scoped `scope` belongs to `--scope wanted` (None: every entry)."""
    if wanted is None:
        return True
    have = (scope or "").strip().lower()
    return have in ("", "global", wanted.strip().lower())
