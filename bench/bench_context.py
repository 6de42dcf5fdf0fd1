"""`memvault context` on the 100k synthetic vault: the whole process, beside its floors in the same run.

    python bench/bench_context.py /tmp/mv-100k [--runs 30]

The vault is copied first (the copy's index is built once if missing; the runs pass --no-record, so
the access record stays as it was). Prints p50/p95 of the whole `memvault context` process without a
query and with one, beside `python -c pass` and the whole `memvault search` process for the same words
(both start Python and stat-walk the vault to find changed files first), and the in-process figures.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

QUERIES = ["backup server", "atlas migration budget", "coffee", "client design review"]


def timed(cmd: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True)
    return time.perf_counter() - start


def pct(values: list[float], p: int) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[p - 1] if len(values) > 1 else values[0]


def line(label: str, values: list[float]) -> None:
    print(f"{label:<48} p50 {pct(values, 50) * 1000:7.1f} ms   p95 {pct(values, 95) * 1000:7.1f} ms   (n={len(values)})")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("vault", type=Path)
    ap.add_argument("--runs", type=int, default=30)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="mv-context-"))
    vault = work / "vault"
    shutil.copytree(args.vault, vault, symlinks=True)
    mv = [sys.executable, "-m", "memvault", "--vault", str(vault)]
    subprocess.run([*mv, "index"], check=True, capture_output=True)
    subprocess.run([*mv, "context", "--no-record"], check=True, capture_output=True)  # bytecode, page cache
    rows: dict[str, list[float]] = {k: [] for k in ("floor", "search", "none", "query")}
    for i in range(args.runs):
        q = QUERIES[i % len(QUERIES)].split()
        rows["floor"].append(timed([sys.executable, "-c", "pass"]))
        rows["search"].append(timed([*mv, "search", *q]))
        rows["none"].append(timed([*mv, "context", "--no-record"]))
        rows["query"].append(timed([*mv, "context", *q, "--no-record"]))
    line("floor: python -c pass", rows["floor"])
    line("floor: whole `memvault search QUERY` process", rows["search"])
    line("whole `memvault context` process (no query)", rows["none"])
    line("whole `memvault context QUERY` process", rows["query"])
    in_process(vault, args.runs)
    shutil.rmtree(work)


def in_process(root: Path, runs: int) -> None:
    from memvault.context import context
    from memvault.vault import Vault

    with Vault.open(root) as vault:
        for query in (None, "backup server"):
            got = []
            for _ in range(runs):
                start = time.perf_counter()
                context(vault, query, record=False)
                got.append(time.perf_counter() - start)
            line(f"in process, warm, {'no query' if query is None else 'a query'}", got)
        got = []
        for _ in range(runs):
            start = time.perf_counter()
            context(vault, "backup server", record=False, refresh=False)
            got.append(time.perf_counter() - start)
        line("in process, warm, a query, index trusted (watcher)", got)


if __name__ == "__main__":
    main()
