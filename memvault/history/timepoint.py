"""A moment to look at in time travel: a time, and the commit when a git revision named one."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, tzinfo
from typing import Any

from memvault.entries.render import iso
from memvault.history.gitrepo import Commit

# what can only be meant as a git revision: HEAD~3, main^, a commit id
REVISION_RE = re.compile(r"^(?:HEAD|@|[0-9a-f]{7,40}|[\w./-]+(?=[~^]))(?:[~^]\d*)*$")


@dataclass(frozen=True, slots=True)
class TimePoint:
    """A moment to look at: a time, and the commit when a git revision named one."""

    at: datetime  # in UTC
    commit: Commit | None = None
    text: str = ""
    tz: tzinfo = UTC  # the vault's zone, for output

    def describe(self) -> dict[str, Any]:
        return {"time": iso(self.at.astimezone(self.tz)), "given": self.text,
                "commit": self.commit.sha if self.commit else None}
