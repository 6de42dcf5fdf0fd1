"""Per-call latency of `memvault log`: the whole command, and the write alone.

    python bench/bench_log_write.py --calls 50

In a fresh vault (no git) it times `--calls` runs of the `memvault` command (a process each,
appending at the end of one day's log), then `--calls` in-process `log_entry` calls of each
kind: appending at the end of the day, and inserting before that day's later entries (with
`--no-fsync`, without the fsync those make, whose cost is the disk's). Prints
the minimum, median and 90th percentile of each, in milliseconds (the minimum is the one to
compare on a busy machine).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from memvault.vault import Vault
from memvault.write.log import log_entry


def _summary(name: str, samples: list[float]) -> str:
    ms = sorted(s * 1000 for s in samples)
    p90 = ms[min(len(ms) - 1, int(len(ms) * 0.9))]
    return f"{name:<26} min {ms[0]:7.2f}   median {statistics.median(ms):7.2f}   p90 {p90:7.2f} ms   (n={len(ms)})"


def cli_calls(root: Path, calls: int) -> list[float]:
    exe = Path(sys.executable).with_name("memvault")
    env = dict(os.environ, MEMVAULT_VAULT=str(root))
    out = []
    for i in range(calls):
        t0 = time.perf_counter()
        subprocess.run([str(exe), "log", "--at", f"2026-03-01 12:{i % 60:02d}", f"cli entry {i}"],
                       env=env, check=True, capture_output=True)
        out.append(time.perf_counter() - t0)
    return out


def library_calls(root: Path, calls: int, *, insert: bool) -> list[float]:
    day = datetime(2026, 3, 2, 23, 0, tzinfo=UTC) if insert else datetime(2026, 3, 3, 0, 0, tzinfo=UTC)
    if insert:  # a later entry, so each new one must go before it
        log_entry(Vault.open(root), "the last entry of the day", at=day + timedelta(minutes=59))
    out = []
    for i in range(calls):
        vault = Vault.open(root)
        t0 = time.perf_counter()
        log_entry(vault, f"library entry {i}", at=day + timedelta(minutes=i % 59))
        out.append(time.perf_counter() - t0)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calls", type=int, default=50)
    ap.add_argument("--no-fsync", action="store_true",
                    help="in-process calls skip fsync: the write path's own cost, without the disk's")
    args = ap.parse_args()
    root = Path(tempfile.mkdtemp(prefix="mv-bench-log-"))
    try:
        (root / "memvault.toml").write_text('[vault]\ntimezone = "UTC"\n')
        (root / "memory").mkdir()
        print(_summary("memvault log (process)", cli_calls(root, args.calls)))
        if args.no_fsync:
            os.fsync = lambda fd: None
        print(_summary("log_entry, append", library_calls(root, args.calls, insert=False)))
        print(_summary("log_entry, insert", library_calls(root, args.calls, insert=True)))
    finally:
        shutil.rmtree(root)


if __name__ == "__main__":
    main()
