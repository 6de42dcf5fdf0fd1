"""A demo vault: the template plus the seed's story, committed day by day.

`memvault demo DIR` builds it so every command has something real to show, including
recorded-time queries (each day is its own commit, dated that day).
"""

from __future__ import annotations

import os
import subprocess
from datetime import date, timedelta
from pathlib import Path

from memvault.errors import GitError
from memvault.fsio import atomic_write
from memvault.write.log import init_vault

# The seed's story, with dates relative to today so decay and "3 days ago" mean something.
# {d0}..{d3} are filled in by build_demo.
DAYS: list[tuple[str, str]] = [
    ("{d0}", """# {d0}

## 10:00 - Observation
User asked for a weekly status note on their projects. #status

## 14:30 - Belief
User wants weekly updates on Friday afternoons
Confidence: 0.8
Tags: status

## 15:00 - Belief
User prefers dark mode in every tool
Tags: ui
"""),
    ("{d1}", """# {d1}

## 09:30 - Decision
Use SQLite for the Atlas prototype; revisit at 10k users.
Importance: high
Tags: atlas

## 11:00 - Observation
The CI pipeline for Atlas takes 14 minutes; the integration tests dominate. #atlas #ci
"""),
    ("{d2}", """# {d2}

## 09:15 - Observation
User mentioned they're starting a new project called "Atlas"

## 14:30 - Decision
Agreed to check in weekly on Atlas progress

## 16:00 - Correction
User prefers weekly updates on Monday, not Friday
Supersedes: belief about Friday updates from {d0}

## 16:05 - Correction
User switched to light mode; dark mode strains their eyes in daylight.
Supersedes: [[{d0}#15:00 - Belief]]
Source: user
"""),
    ("{d3}", """# {d3}

## 09:00 - Correction
Atlas CI now takes 6 minutes after splitting the integration tests. #atlas #ci
Supersedes: {d1}T11:00

## 10:00 - Observation
Atlas is still on SQLite with 2k users and no load problems. #atlas
Reconfirms: {d1}T09:30

## 10:30 - Belief
Always verify the day of the week with a calendar before stating it.
Tags: lesson
"""),
]


OFFSETS = (16, 13, 9, 6)  # days before today


def demo_dates(today: date | None = None) -> dict[str, str]:
    today = today or date.today()
    return {f"d{i}": (today - timedelta(days=n)).isoformat() for i, n in enumerate(OFFSETS)}


def build_demo(target: Path, today: date | None = None) -> Path:
    """Create the demo vault in `target` (which must not hold a vault)."""
    dates = demo_dates(today)
    root = init_vault(Path(target), timezone="UTC", git=False)
    _git(root, ["init", "-q"], dict(os.environ))
    _commit(root, "memvault: new vault", f"{dates['d0']}T08:00:00+00:00")
    for day, text in DAYS:
        day = day.format(**dates)
        atomic_write(root / "memory" / f"{day}.md", text.format(**dates))
        _commit(root, f"memvault: log {day}", f"{day}T18:00:00+00:00")
    return root


def _commit(root: Path, message: str, when: str) -> None:
    env = dict(os.environ, GIT_AUTHOR_DATE=when, GIT_COMMITTER_DATE=when)
    env.setdefault("GIT_AUTHOR_NAME", "memvault demo")
    env.setdefault("GIT_AUTHOR_EMAIL", "demo@memvault.invalid")
    env.setdefault("GIT_COMMITTER_NAME", env["GIT_AUTHOR_NAME"])
    env.setdefault("GIT_COMMITTER_EMAIL", env["GIT_AUTHOR_EMAIL"])
    _git(root, ["add", "-A"], env)
    _git(root, ["commit", "-q", "--no-verify", "-m", message], env)


def _git(root: Path, args: list[str], env: dict[str, str]) -> None:
    try:
        proc = subprocess.run(["git", *args], cwd=root, env=env, capture_output=True, text=True)
    except FileNotFoundError:
        raise GitError("git is not installed or not on PATH; the demo needs it") from None
    if proc.returncode != 0:
        raise GitError(f"git {args[0]} failed in {root}: {proc.stderr.strip()}")
