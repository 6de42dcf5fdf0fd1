"""MemoryBlock export of a large vault, beside its floor: parsing the vault into a timeline.

    python bench/synth.py /tmp/mv-100k && cp -a /tmp/mv-100k /tmp/copy   # parsing may cache file dates
    python bench/bench_memoryblock.py /tmp/copy --runs 3

Each run opens the vault afresh (nothing cached in the process) and times, in one process:
the floor (`Vault.open` + every entry's status: the parse and the timeline the export needs
anyway); `blocks(vault)` (the same parse plus building every block: live entries); the JSON Lines
write of them to a file; and `blocks(include_all=True)`. Prints min and median in seconds, the
block count and the file's size.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from memvault.interop import memoryblock
from memvault.vault import Vault


def floor(root: Path) -> int:
    vault = Vault.open(root)
    now = vault.now()
    tl = vault.timeline
    return sum(1 for e in tl.events if tl.status(e, now) == "live")


def export_live(root: Path) -> int:
    return len(memoryblock.blocks(Vault.open(root)))


def export_all(root: Path) -> int:
    return len(memoryblock.blocks(Vault.open(root), include_all=True))


def export_file(root: Path, out: Path) -> int:
    with out.open("w", encoding="utf-8") as fh:
        return memoryblock.export(Vault.open(root), fh)


def timed(fn, runs: int) -> tuple[list[float], int]:  # type: ignore[no-untyped-def]
    samples, result = [], 0
    for _ in range(runs):
        t0 = time.perf_counter()
        result = fn()
        samples.append(time.perf_counter() - t0)
    return samples, result


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("vault", type=Path)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    root = args.vault.resolve()
    floor(root)  # warm the OS cache and the file-dates cache once, for every line alike
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "blocks.jsonl"
        rows = [
            ("floor: parse + status of every entry", lambda: floor(root)),
            ("blocks(vault)  (live)", lambda: export_live(root)),
            ("export to JSON Lines  (live)", lambda: export_file(root, out)),
            ("blocks(vault, include_all=True)", lambda: export_all(root)),
        ]
        for name, fn in rows:
            samples, count = timed(fn, args.runs)
            print(f"{name:<40} min {min(samples):7.2f} s   median {statistics.median(samples):7.2f} s   ({count} items)")
        print(f"JSON Lines file: {os.path.getsize(out) / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
