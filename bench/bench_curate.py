"""What `memvault curate` adds on top of reading the vault, on a synthetic vault.

    python bench/synth.py /tmp/mv-100k            # once: 100k events in 5,000 daily logs
    python bench/bench_curate.py /tmp/mv-100k --runs 5

Prints medians over the runs: the floor (parse + timeline, which every command pays), planning
with no curation point (every live entry), planning the last 7 days (the usual run), rendering
the diff, and applying (MEMORY.md is restored after each run). Curation is "as of" the newest
entry so decay looks like a vault in daily use.
"""

from __future__ import annotations

import argparse
import statistics
import time
from datetime import timedelta
from pathlib import Path

from memvault.curate.promote import apply, plan_curation
from memvault.curate.render import diff, render
from memvault.vault import Vault


def run_once(root: Path) -> dict[str, float]:
    out: dict[str, float] = {}
    t0 = time.perf_counter()
    vault = Vault.open(root)
    tl = vault.timeline
    out["floor"] = time.perf_counter() - t0
    last = max(e.timestamp for e in tl.events if e.timestamp is not None)
    t1 = time.perf_counter()
    full = plan_curation(vault, at=last, everything=True)
    out["plan_all"] = time.perf_counter() - t1
    t2 = time.perf_counter()
    week = plan_curation(vault, at=last, since=last - timedelta(days=7))
    out["plan_week"] = time.perf_counter() - t2
    t3 = time.perf_counter()
    diff(full, render(full, complete=True))
    out["diff"] = time.perf_counter() - t3
    memory = root / "MEMORY.md"
    saved = memory.read_bytes() if memory.exists() else None
    t4 = time.perf_counter()
    apply(vault, week)
    out["apply"] = time.perf_counter() - t4
    if saved is None:
        memory.unlink()
    else:
        memory.write_bytes(saved)
    out["proposals_all"], out["proposals_week"] = len(full.proposals), len(week.proposals)
    out["events"] = len(tl.events)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("vault", type=Path)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    rows = [run_once(args.vault) for _ in range(args.runs)]

    def med(key: str) -> float:
        return statistics.median(r[key] for r in rows)

    floor = med("floor")
    print(f"vault: {args.vault}  events: {int(rows[0]['events'])}  runs: {args.runs} (medians)")
    print(f"{'floor: parse + timeline':<32} {floor:7.3f} s")
    for key, label in (("plan_all", "plan, every live entry"), ("plan_week", "plan, last 7 days"),
                       ("diff", "render + unified diff"), ("apply", "apply (lock, hash check, write)")):
        print(f"{label:<32} {med(key):7.3f} s   ({med(key) / floor:.2f}x floor)")
    print(f"proposals: {int(rows[0]['proposals_all'])} (every live entry), {int(rows[0]['proposals_week'])} (7 days)")


if __name__ == "__main__":
    main()
