"""`memvault.Vault`: the vault as the library's users see it.

Everything of `ParsedVault` (files, entries, the timeline), plus time travel (`as_of`,
`changes`, `history`, `diff`: memvault/history/). It sits above the subsystems so that none of
them imports it; they work on `ParsedVault`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memvault.entries.model import Event
from memvault.entries.timeline import Timeline
from memvault.errors import NotFoundError
from memvault.gcpause import no_gc
from memvault.history.timetravel import History, TimePoint
from memvault.parsed import ParsedVault

if TYPE_CHECKING:
    from memvault.entries.presentations import SaidSource

__all__ = ["Vault"]

When = datetime | str | TimePoint  # a datetime (naive: the vault's zone), a time string or a git revision


class Vault(ParsedVault):
    """A memory vault on disk. Parsed lazily; re-open to see later edits; `close()` or `with`
    releases the caches and git processes time travel opened."""

    @cached_property
    def timeline(self) -> Timeline:
        """The vault's timeline, with its recalls (access counts) and its stored said-again pairs
        (`.memvault/said.sqlite`, synced on the first retention asked) for retention."""
        timeline = super().timeline
        timeline.recalls = Recalls(self.root)
        timeline.said_again_source = self._stored_said
        return timeline

    def _stored_said(self, timeline: Timeline) -> SaidSource:
        from memvault.search.said_store import StoredSaidAgain

        return StoredSaidAgain(self.root, timeline)

    @no_gc()  # ~100k dicts and retentions, no cycles: the collector's passes cost more than the work
    def shapes(self, events: Iterable[Event], at: datetime) -> list[dict[str, Any]]:
        """`as_dict` of each event at `at`: what `list` prints."""
        events = list(events)
        tl = self.timeline
        shapes = [tl.to_dict(e, at) for e in events]
        for shape, kept in zip(shapes, tl.retentions(events, at), strict=True):
            shape["retention"] = kept
        return shapes

    def as_dict(self, event: Event, at: datetime | None = None) -> dict[str, Any]:
        """The entry's JSON shape as of `at` (default now), with its `retention` then
        (docs/retention.md): what `list` and `show` print."""
        when = at or self.now()
        shape = self.timeline.to_dict(event, when)
        shape["retention"] = self.timeline.retention(event, when).to_dict()
        return shape

    def show(self, ref: str, *, record: bool = True) -> dict[str, Any]:
        """The entry `ref` names (an id, its start or a printed place), as `memvault show`
        prints it, with `found_by`: how `ref` named it (`id`, `place`, `id start`, `reference`,
        or, standing in for it, `cited source` or `description`, with `why`; `archive` for an entry
        `maintain --archive` moved out, read from its archive file, status `archived`), and its `retention`
        (docs/retention.md). Fetching an entry is a recall: it counts one access (recency, curate's
        recall counts, retention; memvault/search/access.py) unless `record` is False."""
        from memvault.search import access

        try:
            found = self.locate(ref)
        except NotFoundError:
            from memvault.maintain.archived import archived_shape

            archived = archived_shape(self, ref.strip())  # moved out by `maintain --archive`
            if archived is None:
                raise
            return archived
        if record:
            access.record(self.root, [found.event.id])
        return self.as_dict(found.event, self.now()) | {"found_by": found.to_dict(ref)}

    def fetch(self, ref: str, *, record: bool = True, backend: str | None = None, refresh: bool = True,
              retention: bool = True) -> dict[str, Any]:
        """What `show(ref)` gives, answered from the search index when `ref` is an id or a place
        (milliseconds, not a parse of the vault: memvault/search/index/entry.py), else by `show`.
        `refresh`: bring the index up to date with the files first (not needed while a watcher
        keeps it so; the entry's own file is checked either way). `retention=False` leaves it out
        of the answer from the index (after an index change it re-reads the changed files' rows: ~50 ms
        for one file of a 100k vault, seconds when most files changed)."""
        from memvault.search.index import open_index
        from memvault.search.index.entry import show

        with open_index(self, backend) as index:
            if refresh:
                index.refresh()
            found = show(index, ref, self.now(), record=record, retention=retention)
        return found if found is not None else self.show(ref, record=record)

    # -- time travel (memvault/history/; T may be a datetime, a time string or a git revision)

    @cached_property
    def past(self) -> History:
        past = History(self)
        self.on_close(past.close)
        return past

    def as_of(self, at: When, query: str | None = None, *, recorded: bool = False, limit: int | None = None,
              mode: str | None = None) -> list[dict[str, Any]]:
        return self.past.as_of(at, query, recorded=recorded, limit=limit, mode=mode)

    def changes(self, since: When, until: When | None = None, *, limit: int | None = None) -> dict[str, Any]:
        from memvault.history.timetravel import cut_changes

        return cut_changes(self.past.changes(since, until), limit)

    def history(self, event_id: str) -> dict[str, Any]:
        from memvault.entries.lookup import require_spec

        require_spec(event_id)
        return self.past.history(event_id)

    def diff(self, first: When, second: When) -> dict[str, Any]:
        return self.past.diff(first, second)


class Recalls(Mapping[str, int]):
    """Access counts by id (memvault/search/access.py), read on first use: most commands never
    ask for an entry's retention."""

    def __init__(self, root: Path):
        self.root = root
        self._counts: dict[str, int] | None = None

    @property
    def counts(self) -> dict[str, int]:
        if self._counts is None:
            from memvault.search import access

            self._counts = {i: a.count for i, a in access.stats(self.root).items()}
        return self._counts

    def __getitem__(self, key: str) -> int:
        return self.counts[key]

    def get(self, key: str, default: int = 0) -> int:  # type: ignore[override]  # asked once an entry of `list`
        return self.counts.get(key, default)

    def __iter__(self) -> Iterator[str]:
        return iter(self.counts)

    def __len__(self) -> int:
        return len(self.counts)
