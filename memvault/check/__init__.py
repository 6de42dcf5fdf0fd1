"""Checking a vault: the rules, the runner (whole vault, PATHS, --staged), fixes, secrets, the hook.

Library entry points (what `memvault check` calls):
- `run_check(vault, paths, staged=..., fix=...)`: repair what `--fix` can, then check; a
  `CheckReport` with the problems and the files fixed;
- `rule_table()`: every rule code, its severity and whether `--fix` repairs it.

The submodules are imported when these run, not with the package: every check module
imports this package first, and the pre-commit hook should not pay for what it does not use.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memvault.check.report import CheckReport
    from memvault.parsed import ParsedVault

__all__ = ["rule_table", "run_check"]


def run_check(vault: ParsedVault, paths: Sequence[str] = (), *, staged: bool = False, fix: bool = False,
              now: datetime | None = None, changed_lines: bool | None = None) -> CheckReport:
    """Check the whole vault, the named files, or (`staged`) exactly what git will commit.

    `fix` first repairs, in the working tree, what the fixable rules find (in `paths` when
    given), then checks the result; the report's `fixed` says which files got which fix, its
    `left` which problems remain and why --fix does not repair them.
    It is refused with `staged`: the repairs would not be what the commit holds.
    `changed_lines` (with `staged`) keeps only the problems on what the commit adds or
    changes; None follows `[hook] judge` in memvault.toml (check/changed.py).
    """
    from memvault.check.fixes import fix_vault
    from memvault.check.runner import check_vault
    from memvault.errors import InputError
    from memvault.layout import vault_paths

    fixed: dict[str, list[str]] = {}
    if fix:
        if staged:
            raise InputError("--fix repairs the working tree, --staged judges the index: run --fix, `git add`, then commit")
        fixed = fix_vault(vault, vault_paths(vault.root, paths, selection=vault.selection) if paths else ())
    report = check_vault(vault, paths, staged=staged, now=now, changed_lines=changed_lines)
    report.fixed = fixed
    if fix:
        from memvault.check.fixes import left_by_fix

        report.left = left_by_fix(vault, report.problems)
    return report


def rule_table() -> list[dict[str, Any]]:
    """Every rule: code, severity, title, and whether `--fix` repairs it (docs/checks.md)."""
    from memvault.check.registry import RULES

    return [{"code": r.code, "severity": r.severity, "title": r.title, "fixable": r.fixable} for r in RULES.values()]
