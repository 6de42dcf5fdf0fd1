"""What the last completed curation considered: the log entries it looked at, kept as derived state.

The curation marker in MEMORY.md is a time; an entry logged later with an earlier time
(`memvault log --at`) falls before it and would never be looked at. So when a review goes through
every proposal, curate also records the ids of every log entry it considered (all those dated
up to the curation's time) in `.memvault/curate-considered.json`, tied to the marker it wrote. The
next curation treats an entry dated before the marker but missing from the record as new: it is
proposed once, and once a review completes it is in the record too.

The record is derived state: MEMORY.md stays the source of truth. It counts only while its marker
is the one MEMORY.md carries (a MEMORY.md checked out from git, or a marker edited by hand, makes
it stale); a missing, damaged or stale record falls back to the marker alone, i.e. to the time
point. Corrections of curated bullets do not depend on it (curate/select.py proposes them until
MEMORY.md says them), so deleting `.memvault/` loses nothing a person needs.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path

from memvault.fsio import DERIVED_DIR, atomic_write

FILE = "curate-considered.json"
VERSION = 1


def path_of(root: Path) -> Path:
    return Path(root) / DERIVED_DIR / FILE


def _instant(when: datetime) -> datetime:
    """The marker's precision: MEMORY.md keeps whole seconds."""
    return when.replace(microsecond=0)


def load(root: Path, marker: datetime | None) -> frozenset[str] | None:
    """The entries the curation that wrote `marker` considered; None when there is no usable record
    (none, unreadable, another version, or made for another marker): then the marker alone counts."""
    if marker is None:
        return None
    try:
        data = json.loads(path_of(root).read_text(encoding="utf-8"))
        if data.get("version") != VERSION or datetime.fromisoformat(data["marker"]) != _instant(marker):
            return None
        entries = data["entries"]
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None  # derived state: a damaged record is as good as none
    if not isinstance(entries, list) or not all(isinstance(e, str) for e in entries):
        return None
    return frozenset(entries)


def save(root: Path, marker: datetime, entries: Iterable[str]) -> None:
    """Record, atomically, that the curation which wrote `marker` considered `entries`.

    Best effort: MEMORY.md is already written. A record that cannot be written is removed, so
    the next curation uses the marker alone rather than an older record."""
    data = {"version": VERSION, "marker": _instant(marker).isoformat(), "entries": sorted(entries)}
    try:
        atomic_write(path_of(root), json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n")
    except OSError:
        with contextlib.suppress(OSError):
            path_of(root).unlink()
