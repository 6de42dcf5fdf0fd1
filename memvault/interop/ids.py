"""Which vault entry an imported file's id stands for, and the id a new one is written under.

An import writes a file's entry under the file's id when the vault (and the file) leaves it free;
otherwise under `ID~N`, the first N free in both, with `Metadata: {"imported_id": ID}` so every
later import finds it as ID. A version (`~N`) is only ever one the vault wrote itself: an entry's
file id is its `imported_id`, else its explicit `Id:`; a foreign id that ends in `~2` is its own
memory, never a version of another. A local entry's id comes from its time: it shares a file's id
by accident, and only an entry with the same time and content is taken for it (its own export
coming back, under the id another vault gave it).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime

from memvault.entries.meta import read_metadata
from memvault.entries.model import Event

ORIGIN_KEY = "imported_id"  # the `Metadata:` key holding the file's id of an entry written under another
VERSION = "~"  # `X~2`: X's id taken in the vault, or a later version of X


def origin(ev: Event) -> str | None:
    """The file id an entry stands for: its `imported_id`, else its explicit `Id:`; None for an
    id the vault derived from the entry's time."""
    if not ev.explicit_id:
        return None
    raw = ev.meta.get("metadata")
    data = read_metadata(raw) if raw else None
    if isinstance(data, dict) and isinstance(data.get(ORIGIN_KEY), str) and data[ORIGIN_KEY]:
        return str(data[ORIGIN_KEY])
    return ev.id


def instant(at: datetime) -> datetime:
    return at.replace(microsecond=0)


@dataclass
class Ids:
    """The vault's entries by file id (oldest version first) and by time; the ids taken."""

    by_id: dict[str, Event]
    supersedes: dict[str, str]
    taken: set[str]
    by_origin: dict[str, list[Event]] = field(default_factory=dict)
    by_time: dict[datetime, list[Event]] = field(default_factory=dict)

    def versions(self, fid: str) -> list[Event]:
        return self.by_origin.get(fid, [])

    def replaceable(self, fid: str) -> str | None:
        """The vault's newest version of `fid`, which an import may supersede or forget."""
        found = self.versions(fid)
        return found[-1].id if found else None

    def candidates(self, fid: str, at: datetime) -> list[Event]:
        """The entries that may hold a file entry already, newest version first: its versions,
        the entry with its id, the entries at its time."""
        out = [*reversed(self.versions(fid))]
        if fid in self.by_id:
            out.append(self.by_id[fid])
        out.extend(self.by_time.get(instant(at), []))
        return list({id(ev): ev for ev in out}.values())

    def free(self, fid: str, also: set[str]) -> str:
        """`fid` when neither the vault nor `also` (the file's ids, this import's) holds it, else
        the first free `fid~N`."""
        if fid not in self.taken and fid not in also:
            return fid
        k = 2
        while f"{fid}{VERSION}{k}" in self.taken or f"{fid}{VERSION}{k}" in also:
            k += 1
        return f"{fid}{VERSION}{k}"


def index(by_id: dict[str, Event], supersedes: dict[str, str]) -> Ids:
    ids = Ids(by_id, supersedes, set(by_id))
    groups: dict[str, list[Event]] = defaultdict(list)
    times: dict[datetime, list[Event]] = defaultdict(list)
    for ev in by_id.values():
        fid = origin(ev)
        if fid is not None:
            groups[fid].append(ev)
        if ev.timestamp is not None and ev.kind == "log" and not ev.is_note:
            times[instant(ev.timestamp)].append(ev)
    ids.by_origin = {fid: sorted(evs, key=lambda e: _depth(e, evs, supersedes)) for fid, evs in groups.items()}
    ids.by_time = dict(times)
    return ids


def _depth(ev: Event, group: list[Event], supersedes: dict[str, str]) -> int:
    """How many of `group` the entry's `Supersedes:` chain passes: the newest version has the most."""
    members, seen, at, n = {e.id for e in group}, {ev.id}, supersedes.get(ev.id), 0
    while at is not None and at in members and at not in seen:
        seen.add(at)
        n += 1
        at = supersedes.get(at)
    return n
