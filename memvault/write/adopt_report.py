"""What `memvault adopt` found in memory it did not write: files by kind, entries, problems.

Everything here is read from the parsed vault (`ParsedVault.files`, `events`) and a full
check's problems, so the report counts whatever the parser and the layout make of the files.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memvault.check.registry import RULES
from memvault.entries.model import Event, Problem
from memvault.entries.naming import log_name
from memvault.layout import MEMORY_FILE

NOTE_TYPE = "note"  # sections that are not typed entries (docs/format.md)
KINDS = ("memory", "day", "topic", "archive", "other")
KIND_WORDS = {"memory": "MEMORY.md", "day": "day files", "topic": "topic files", "archive": "archive files",
              "other": "other files"}
EXAMPLES = 3  # problems shown per rule code
SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}


def file_kind(path: str) -> str:
    """MEMORY.md, a day's own log, a dated topic file, a file under an archive folder, or other."""
    if path == MEMORY_FILE:
        return "memory"
    name = log_name(path)
    if name.archive:
        return "archive"
    if name.canonical:
        return "day"
    return "topic" if name.day is not None else "other"


def files_by_kind(paths: Iterable[str]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {kind: [] for kind in KINDS}
    for path in sorted(paths):
        out[file_kind(path)].append(path)
    return out


def entry_counts(events: Iterable[Event]) -> dict[str, int]:
    """Typed log entries, notes (untyped sections) and curated MEMORY.md bullets."""
    counts: Counter[str] = Counter()
    for ev in events:
        if ev.kind == "curated":
            counts["curated"] += 1
        elif ev.type == NOTE_TYPE:
            counts["notes"] += 1
        else:
            counts["entries"] += 1
    return {key: counts[key] for key in ("entries", "notes", "curated")}


def problems_by_code(problems: Iterable[Problem]) -> list[dict[str, Any]]:
    """One row per rule code: count, severity, title and the first few examples; errors
    first, then by how often the rule fired."""
    groups: dict[str, list[Problem]] = defaultdict(list)
    for p in problems:
        groups[p.code].append(p)
    rows: list[dict[str, Any]] = []
    for code, found in groups.items():
        rule = RULES.get(code)
        rows.append({
            "code": code, "count": len(found), "severity": found[0].severity,
            "title": rule.title if rule else "",
            "examples": [{"path": p.path, "line": p.line, "message": p.message} for p in found[:EXAMPLES]],
        })
    rows.sort(key=lambda r: (SEVERITY_ORDER.get(str(r["severity"]), 3), -int(r["count"]), str(r["code"])))
    return rows


@dataclass
class AdoptReport:
    """What adopting did and found; `to_dict` for --json, `lines` for people."""

    root: Path
    config: Path
    git: str  # "initialized", "existing" (the repository's top in `repo`) or "none"
    files: dict[str, list[str]]
    counts: dict[str, int]
    problems: list[dict[str, Any]]
    indexed: int = 0
    repo: Path | None = None
    hook: dict[str, Any] = field(default_factory=dict)
    gitignore: str = "ignored"  # or "suggest": the person's ignore rules do not cover .memvault/
    uncommitted: list[str] = field(default_factory=list)
    commit: str | None = None
    refused: str | None = None  # why --commit committed nothing: the command then fails
    next: list[str] = field(default_factory=list)

    @property
    def errors(self) -> int:
        return sum(r["count"] for r in self.problems if r["severity"] == "error")

    @property
    def warnings(self) -> int:
        return sum(r["count"] for r in self.problems if r["severity"] == "warning")

    def to_dict(self) -> dict[str, Any]:
        return {
            "root": str(self.root), "config": str(self.config), "git": self.git,
            "repository": str(self.repo) if self.repo else None,
            "files": {kind: len(paths) for kind, paths in self.files.items()},
            "file_paths": self.files, **self.counts, "indexed": self.indexed,
            "errors": self.errors, "warnings": self.warnings, "problems": self.problems,
            "hook": self.hook, "gitignore": self.gitignore, "uncommitted": self.uncommitted,
            "commit": self.commit, "commit_refused": self.refused, "next": self.next,
        }

    def lines(self) -> list[str]:
        out = [f"adopted {self.root}: wrote {self.config.name}; no existing file was changed"]
        total = sum(len(v) for v in self.files.values())
        kinds = ", ".join(f"{len(v)} {KIND_WORDS[k]}" for k, v in self.files.items() if v)
        out.append(f"files: {total}" + (f" ({kinds})" if kinds else ""))
        c = self.counts
        out.append(f"found: {c['entries']} typed entries, {c['notes']} notes, {c['curated']} MEMORY.md bullets; "
                   f"{self.indexed} indexed for search")
        out += self._problem_lines()
        out.append(self._git_line())
        if self.hook:
            out.append("hook: " + self.hook["message"])
        if self.commit:
            out.append(f"committed the vault's files as they are: {self.commit[:12]}")
        if self.refused:
            out.append(self.refused)
        if self.next:
            out += ["", "next:"] + [f"  {step}" for step in self.next]
        return out

    def _problem_lines(self) -> list[str]:
        if not self.problems:
            return ["problems: none"]
        out = [f"problems: {self.errors} errors, {self.warnings} warnings (memvault check lists them all)"]
        for row in self.problems:
            out.append(f"  {row['code']} {row['severity']:<7} {row['count']:>6}  {row['title']}")
            out += [f"      {e['path']}:{e['line']}: {e['message']}" for e in row["examples"]]
        return out

    def _git_line(self) -> str:
        if self.git == "none":
            return "git: none (--no-git): no hook, no history"
        where = f" (repository at {self.repo})" if self.repo and self.repo != self.root else ""
        return f"git: {'initialized a new repository' if self.git == 'initialized' else 'existing repository'}{where}"
