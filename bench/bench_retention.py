"""What retention costs: the models alone, and one entry's retention (said-again search) on a vault.

    python bench/synth.py /tmp/mv-100k
    python bench/bench_retention.py /tmp/mv-100k [--entries 20]

Prints the time to parse the vault (what `list` pays anyway), the models' cost per entry for
every entry of the vault (presentations from own time, updates and reconfirmations), and the
cost of a full retention (with the search for later entries saying the same) for the oldest and
the newest few entries: the worst and best case of `memvault show`.
"""

from __future__ import annotations

import argparse
import time
from datetime import UTC, datetime

from memvault.entries import retention
from memvault.entries.decay import elapsed_ticks, vault_params
from memvault.vault import Vault


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("vault")
    ap.add_argument("--entries", type=int, default=20)
    args = ap.parse_args()
    now = datetime.now(UTC)
    t = time.perf_counter()
    vault = Vault.open(args.vault)
    tl = vault.timeline
    dated = [e for e in tl.events if e.timestamp is not None]
    print(f"parse + timeline: {time.perf_counter() - t:.2f} s, {len(dated)} dated entries")
    params, cfg = vault_params(tl.config), tl.config
    for model in retention.MODELS:
        t = time.perf_counter()
        for e in dated:
            times = [e.timestamp, *(tl.by_id[r].timestamp for r in tl.reconfirmed_by.get(e.id, ()))]
            ages = sorted(elapsed_ticks(x, now, cfg.decay_tick) for x in times if x is not None)
            m = retention.Memory(ages[-1], tuple(ages[:-1]), retention.band(e.importance), 0)
            retention.retention(model, m, params)
        print(f"{model}: {(time.perf_counter() - t) / len(dated) * 1e6:.2f} µs an entry, all {len(dated)}: "
              f"{time.perf_counter() - t:.2f} s")
    for label, chosen in (("oldest", dated[: args.entries]), ("newest", dated[-args.entries:])):
        t = time.perf_counter()
        for e in chosen:
            tl.retention(e, now)
        print(f"full retention, {label} {len(chosen)}: {(time.perf_counter() - t) / len(chosen) * 1e3:.1f} ms an entry "
              "(the first also lower-cases the vault's texts once)")


if __name__ == "__main__":
    main()
