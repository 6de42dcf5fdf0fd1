"""`memvault.Vault`: the vault as the library's users see it.

Everything of `ParsedVault` (files, entries, the timeline), plus time travel (`as_of`,
`changes`, `history`, `diff`: memvault/history/). It sits above the subsystems so that none of
them imports it; they work on `ParsedVault`.
"""

from __future__ import annotations

from datetime import datetime
from functools import cached_property
from typing import Any

from memvault.history.timetravel import History, TimePoint
from memvault.parsed import ParsedVault

__all__ = ["Vault"]

When = datetime | str | TimePoint  # a datetime (naive: the vault's zone), a time string or a git revision


class Vault(ParsedVault):
    """A memory vault on disk. Parsed lazily; re-open to see later edits; `close()` or `with`
    releases the caches and git processes time travel opened."""

    def show(self, ref: str, *, record: bool = True) -> dict[str, Any]:
        """The entry `ref` names (an id, its start or a printed place), as `memvault show`
        prints it, with `found_by`: how `ref` named it (`id`, `place`, `id start`, `reference`,
        or, standing in for it, `cited source` or `description`, with `why`). Fetching an entry is a
        recall: it counts one access (recency and curate's recall counts,
        memvault/search/access.py) unless `record` is False."""
        from memvault.search import access

        found = self.locate(ref)
        if record:
            access.record(self.root, [found.event.id])
        return self.as_dict(found.event, self.now()) | {"found_by": found.to_dict(ref)}

    # -- time travel (memvault/history/; T may be a datetime, a time string or a git revision)

    @cached_property
    def past(self) -> History:
        past = History(self)
        self.on_close(past.close)
        return past

    def as_of(self, at: When, query: str | None = None, *, recorded: bool = False, limit: int | None = None) -> list[dict[str, Any]]:
        return self.past.as_of(at, query, recorded=recorded, limit=limit)

    def changes(self, since: When, until: When | None = None, *, limit: int | None = None) -> dict[str, Any]:
        from memvault.history.timetravel import cut_changes

        return cut_changes(self.past.changes(since, until), limit)

    def history(self, event_id: str) -> dict[str, Any]:
        from memvault.entries.lookup import require_spec

        require_spec(event_id)
        return self.past.history(event_id)

    def diff(self, first: When, second: When) -> dict[str, Any]:
        return self.past.diff(first, second)
