"""The reconcile's content check: files whose size and mtime match the index, hashed in turn.

A change that keeps the size and puts the old mtime back (`touch -r`, `rsync -t`, some sync
tools and editors) leaves nothing for the light reconcile's stat comparison to see, and
nothing at all for a polling observer (it compares the same stat fields). The OS's file events
do report it, so under inotify this only matters when events were lost; under polling it is
the only way such an edit is ever found.

The scanner thread, after taking the sizes and mtimes of every file, hashes some of them, in
path order from where its previous pass stopped, up to `BUDGET` bytes (4 MiB: ~30 ms; a
100k-entry vault is 15 MB, so every file is hashed every four reconciles, every file of a
smaller vault every time). The worker then re-reads the files whose hash differs from the one
the index recorded (sync.plan). Hashing on the scanner thread keeps it off the worker, so a
save is never queued behind it.
"""

from __future__ import annotations

import bisect
import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any

BUDGET = 4 * 1024 * 1024  # bytes hashed per reconcile


class ContentCheck:
    """Remembers where the last pass's hashing stopped."""

    def __init__(self, budget: int = BUDGET):
        self.budget = budget
        self.after = ""  # the last path hashed

    def pick(self, sizes: Mapping[str, int]) -> list[str]:
        """The next paths to hash, in path order from after the last one, within the budget."""
        order = sorted(sizes)
        start = bisect.bisect_right(order, self.after)
        chosen: list[str] = []
        spent = 0
        for rel in order[start:] + order[:start]:
            if chosen and spent + sizes[rel] > self.budget:
                break
            chosen.append(rel)
            spent += sizes[rel]
        if chosen:
            self.after = chosen[-1]
        return chosen

    def hash_slice(self, root: Path, disk: Mapping[str, Any]) -> dict[str, Any]:
        """`disk` (path -> Stat) with the content hash of the next slice of files filled in."""
        from memvault.watch.sync import sha256_of

        out = dict(disk)
        for rel in self.pick({p: st.size for p, st in disk.items()}):
            digest = sha256_of(root, rel)  # None: unreadable now, which the stat pass handles
            if digest is not None:
                out[rel] = dataclasses.replace(disk[rel], sha256=digest)
        return out
