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
KIND_WORDS = {"memory": "MEMORY.md", "day": "day file", "topic": "topic file", "archive": "archive file",
              "other": "other file"}
EXAMPLES = 3  # problems shown per rule code
SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}


def plural(n: int, word: str, many: str | None = None) -> str:
    """`1 topic file`, `2 topic files`, `1 typed entry`, `3 typed entries` (MEMORY.md stays as it is)."""
    if n == 1 or word.endswith(".md"):
        return f"{n} {word}"
    return f"{n} {many or (word[:-1] + 'ies' if word.endswith('y') else word + 's')}"


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
            "examples": [{"path": p.path, "line": p.line, "col": p.col, "message": p.message} for p in found[:EXAMPLES]],
        })
    rows.sort(key=lambda r: (SEVERITY_ORDER.get(str(r["severity"]), 3), -int(r["count"]), str(r["code"])))
    return rows


def secret_places(problems: Iterable[Problem], codes: frozenset[str]) -> list[dict[str, Any]]:
    """Where the secret scan found something: path, line, column and code (never the value)."""
    return [{"path": p.path, "line": p.line, "col": p.col, "code": p.code} for p in problems if p.code in codes]


def places(found: list[dict[str, Any]], most: int = 5) -> str:
    """`memory/a.md:3:7 MV503, memory/a.md:4:3 MV507 and 2 more`."""
    shown = ", ".join(f"{s['path']}:{s['line']}:{s['col']} {s['code']}" for s in found[:most])
    return shown + (f" and {len(found) - most} more" if len(found) > most else "")


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
    timezone: str = "UTC"
    zone_given: bool = False  # --timezone, rather than this machine's zone
    secrets: list[dict[str, Any]] = field(default_factory=list)  # secret_places: where, never what
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
            "file_paths": self.files, **self.counts, "indexed": self.indexed, "timezone": self.timezone,
            "secrets": self.secrets,
            "errors": self.errors, "warnings": self.warnings, "problems": self.problems,
            "hook": self.hook, "gitignore": self.gitignore, "uncommitted": self.uncommitted,
            "commit": self.commit, "commit_refused": self.refused, "next": self.next,
        }

    def lines(self) -> list[str]:
        out = [f"adopted {self.root}: wrote {self.config.name}; no existing file was changed"]
        total = sum(len(v) for v in self.files.values())
        kinds = ", ".join(plural(len(v), KIND_WORDS[k]) for k, v in self.files.items() if v)
        out.append(f"files: {total}" + (f" ({kinds})" if kinds else ""))
        c = self.counts
        out.append(f"found: {plural(c['entries'], 'typed entry')}, {plural(c['notes'], 'note')}, "
                   f"{plural(c['curated'], 'MEMORY.md bullet')}; {self.indexed} indexed for search")
        out.append(self._zone_line())
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
        out = [f"problems: {plural(self.errors, 'error')}, {plural(self.warnings, 'warning')} "
               "(memvault check lists them all)"]
        for row in self.problems:
            out.append(f"  {row['code']} {row['severity']:<7} {row['count']:>6}  {row['title']}")
            out += [f"      {e['path']}:{e['line']}:{e['col']}: {e['message']}" for e in row["examples"]]
        return out

    def _zone_line(self) -> str:
        """Which zone times without one are read in: adopt chose it, the logs never said."""
        if self.zone_given:
            return f"timezone: {self.timezone} (from --timezone; [vault] timezone in memvault.toml)"
        return (f"timezone: {self.timezone} (from this machine; set [vault] timezone in memvault.toml "
                "if your logs use another)")

    def _git_line(self) -> str:
        if self.git == "none":
            return "git: none (--no-git): no hook, no history"
        where = f" (repository at {self.repo})" if self.repo and self.repo != self.root else ""
        return f"git: {'initialized a new repository' if self.git == 'initialized' else 'existing repository'}{where}"
