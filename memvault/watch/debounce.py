"""Per-path debounce: a burst of events on one file becomes one re-read.

A path is due once it has been quiet for `debounce` seconds (trailing edge), or once it
has waited `max_delay` seconds since its first unprocessed event, so a file that is
written continuously is still indexed regularly. When a path's latest event says the
write is over (closed after writing, renamed into place, deleted), a tenth of the
debounce is enough: editors' saves end that way, so a save is indexed sooner, while a
burst of writes (each ending with a close) still collapses into one read. Time is passed in, never read, so the
rules are tested without sleeping.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

DEFAULT_DEBOUNCE = 0.05
DEFAULT_MAX_DELAY = 1.0
SETTLED_FRACTION = 0.1


@dataclass
class _Pending:
    first: float
    last: float
    complete: bool = False  # the latest event ended a write


class Coalescer:
    def __init__(self, debounce: float = DEFAULT_DEBOUNCE, max_delay: float = DEFAULT_MAX_DELAY):
        if debounce < 0 or max_delay < debounce:
            raise ValueError(f"need 0 <= debounce ({debounce}) <= max_delay ({max_delay})")
        self.debounce = debounce
        self.settled = debounce * SETTLED_FRACTION
        self.max_delay = max_delay
        self._pending: dict[str, _Pending] = {}

    def __len__(self) -> int:
        return len(self._pending)

    def add(self, keys: Iterable[str], now: float, *, complete: bool = False) -> None:
        for key in keys:
            entry = self._pending.get(key)
            if entry is None:
                self._pending[key] = _Pending(now, now, complete)
            else:
                entry.last = max(entry.last, now)
                entry.complete = complete

    def _deadline(self, entry: _Pending) -> float:
        wait = self.settled if entry.complete else self.debounce
        return min(entry.last + wait, entry.first + self.max_delay)

    def next_deadline(self) -> float | None:
        """When the next path falls due, or None when nothing is pending."""
        if not self._pending:
            return None
        return min(self._deadline(e) for e in self._pending.values())

    def take_due(self, now: float) -> list[str]:
        """Remove and return the paths that are due at `now`, oldest first."""
        due = [k for k, e in self._pending.items() if self._deadline(e) <= now]
        for key in due:
            del self._pending[key]
        return due

    def take_all(self) -> list[str]:
        """Remove and return everything pending (shutdown flush)."""
        keys = list(self._pending)
        self._pending.clear()
        return keys

    def oldest(self, now: float) -> float:
        """Seconds the longest-waiting path has waited (0 when none)."""
        if not self._pending:
            return 0.0
        return now - min(e.first for e in self._pending.values())
