"""The merge driver's work on one big day, beside the floor of parsing that day once.

    python bench/bench_sync_merge.py --entries 300 1000 3000 --runs 5

A day of N entries (many sharing a minute), one side appending, the other editing an entry and
appending: merge_log (the block merge), pin (ids kept: it parses both sides and the result) and
the whole driver step. Medians over the runs; the floor is one parse_log of the base.
"""

from __future__ import annotations

import argparse
import statistics
import time

from memvault.config.core import Config
from memvault.entries.daily import parse_log
from memvault.sync.ids import pin
from memvault.sync.merge import merge_log

PATH = "memory/2026-12-02.md"


def day(n: int) -> tuple[str, str, str]:
    minutes = sorted(((i // 60) % 24, i % 60) for i in range(n))
    base = "# 2026-12-02\n" + "".join(
        f"\n## {h:02d}:{m:02d} - Belief\nEintrag {i}: Jana plant den Umzug, Projekt Quokka\n" for i, (h, m) in enumerate(minutes))
    ours = base + "\n## 23:59 - Decision\nvom Laptop\n"
    theirs = base.replace("Eintrag 5:", "Eintrag 5 (geändert):") + "\n## 23:58 - Belief\nvom Server\n"
    return base, ours, theirs


def once(n: int) -> tuple[float, float, float]:
    base, ours, theirs = day(n)
    config = Config()

    def parse(text: str):
        return parse_log(text, PATH, config).events

    t0 = time.perf_counter()
    parse(base)
    t1 = time.perf_counter()
    merged = merge_log(base, ours, theirs)
    t2 = time.perf_counter()
    text, _ = pin(merged, ours, theirs, parse)
    t3 = time.perf_counter()
    assert "vom Laptop" in text and "vom Server" in text
    return t1 - t0, t2 - t1, t3 - t2


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--entries", type=int, nargs="+", default=[300, 1000, 3000])
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    print(f"{'entries':>8} {'floor: parse':>13} {'merge_log':>10} {'pin':>8} {'merge+pin':>10}")
    for n in args.entries:
        rows = [once(n) for _ in range(args.runs)]
        floor, merge, pinned = (statistics.median(r[i] for r in rows) for i in range(3))
        print(f"{n:>8} {floor * 1000:>10.1f} ms {merge * 1000:>7.1f} ms {pinned * 1000:>5.1f} ms "
              f"{(merge + pinned) * 1000:>7.1f} ms ({(merge + pinned) / floor:.1f}x floor)")


if __name__ == "__main__":
    main()
