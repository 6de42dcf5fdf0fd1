"""A demo vault: the template plus the seed's story, committed day by day.

`memvault demo DIR` builds it so every command has something real to show, including
recorded-time queries (each day is its own commit, dated that day).
"""

from __future__ import annotations

import os
from datetime import date, timedelta
from pathlib import Path

from memvault.fsio import atomic_write
from memvault.gitio import run_git
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
    run_git(["init", "-q"], root)
    _commit(root, "memvault: new vault", f"{dates['d0']}T08:00:00+00:00")
    for day, text in DAYS:
        day = day.format(**dates)
        atomic_write(root / "memory" / f"{day}.md", text.format(**dates))
        _commit(root, f"memvault: log {day}", f"{day}T18:00:00+00:00")
    return root


def _commit(root: Path, message: str, when: str) -> None:
    """Commit everything, dated `when`, by "memvault demo" unless the environment names someone."""
    env = {"GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when}
    author = (os.environ.get("GIT_AUTHOR_NAME", "memvault demo"),
              os.environ.get("GIT_AUTHOR_EMAIL", "demo@memvault.invalid"))
    env["GIT_AUTHOR_NAME"], env["GIT_AUTHOR_EMAIL"] = author
    env["GIT_COMMITTER_NAME"] = os.environ.get("GIT_COMMITTER_NAME", author[0])
    env["GIT_COMMITTER_EMAIL"] = os.environ.get("GIT_COMMITTER_EMAIL", author[1])
    run_git(["add", "-A"], root, env=env)
    run_git(["commit", "-q", "--no-verify", "-m", message], root, env=env)
