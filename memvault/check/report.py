"""What a check found: the files it judged and their problems, for people and for --json."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from memvault.check.registry import RULES
from memvault.entries.model import Problem
from memvault.layout import MEMORY_FILE


@dataclass
class CheckReport:
    mode: str  # "vault", "paths" or "staged"
    files: list[str]
    problems: list[Problem]
    context_files: int = 0
    fixed: dict[str, list[str]] = field(default_factory=dict)
    left: list[dict[str, Any]] | None = None  # with --fix: what it left and why (fixes.left_by_fix)
    secrets_only: int = 0  # of `files`: staged files that are not memory, scanned for secrets only
    judge: str = "all"  # "changed-lines": only problems the staged changes are to blame for (changed.py)
    excused: int = 0  # problems left out by changed-lines mode: older ones, on lines the commit did not touch

    @property
    def errors(self) -> int:
        return sum(p.severity == "error" for p in self.problems)

    @property
    def warnings(self) -> int:
        return sum(p.severity == "warning" for p in self.problems)

    @property
    def infos(self) -> int:
        return sum(p.severity == "info" for p in self.problems)

    def fix_paths(self) -> list[str]:
        """The refused files (those with an error) in which `check --fix` can repair something
        reported: what a refused commit should fix, and nothing else of the vault. In an adopted
        vault a plain `check --fix` would rewrite every legacy file."""
        refused = {p.path for p in self.problems if p.severity == "error"}
        return sorted({p.path for p in self.problems if p.path in refused and p.code in RULES and RULES[p.code].fixable
                       and not (p.code == "MV020" and p.path == MEMORY_FILE)})  # its prose is the person's

    def to_dict(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "files_checked": len(self.files),
            "context_files": self.context_files,
            "secrets_only": self.secrets_only,
            "judge": self.judge,
            "excused": self.excused,
            "errors": self.errors,
            "warnings": self.warnings,
            "infos": self.infos,
            "fixed": self.fixed,
            **({"left_by_fix": self.left} if self.left is not None else {}),
            "problems": [p.to_dict() for p in self.problems],
        }
