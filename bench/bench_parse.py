"""Parse throughput on a synthetic vault, beside the floor of just reading its files.

    python bench/synth.py /tmp/mv-100k            # once: 100k events in 5,000 daily logs
    python bench/bench_parse.py /tmp/mv-100k --runs 5

Prints medians over the runs: read floor (read + decode every file), parse (read + parse
into events), timeline (supersession and reconfirmation resolution), and events per second.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from memvault.fsio import read_text
from memvault.layout import iter_markdown
from memvault.vault import Vault


def run_once(root: Path) -> tuple[float, float, float, int, int]:
    t0 = time.perf_counter()
    for rel in iter_markdown(root):
        read_text(root / rel)
    floor = time.perf_counter() - t0
    vault = Vault.open(root)
    t1 = time.perf_counter()
    files = vault.files
    t2 = time.perf_counter()
    timeline = vault.timeline
    t3 = time.perf_counter()
    assert files and timeline.events
    notes = sum(1 for e in timeline.events if e.type == "note")
    return floor, t2 - t1, t3 - t2, len(timeline.events), notes


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("vault", type=Path)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    rows = [run_once(args.vault) for _ in range(args.runs)]
    floor, parse, tl = (statistics.median(r[i] for r in rows) for i in range(3))
    events, notes = rows[0][3], rows[0][4]
    print(f"vault: {args.vault}  events: {events} ({notes} notes)  runs: {args.runs} (medians)")
    print(f"read floor        {floor:7.3f} s")
    print(f"parse             {parse:7.3f} s   ({parse / floor:.1f}x floor, {events / parse:,.0f} events/s)")
    print(f"timeline          {tl:7.3f} s")
    print(f"parse + timeline  {parse + tl:7.3f} s   (target < 3 s)")


if __name__ == "__main__":
    main()
