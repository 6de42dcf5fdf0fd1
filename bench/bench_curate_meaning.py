"""What curate's "same thing said twice" by meaning costs, on a copy of a synthetic vault.

    python bench/synth.py /tmp/mv-100k            # once
    python bench/bench_curate_meaning.py /tmp/mv-100k --model /tmp/sem/minilm --runs 3

The vault is copied (its memvault.toml gets `[semantic] model`, and an empty vector cache).
Prints, beside the floor (parse + timeline): planning in lexical mode; the first planning by
meaning with an empty cache (it encodes every text curate compares: the entries that pass the
gates and the bullets); planning by meaning again (vectors from the cache, as after `memvault
index`); and how many proposals each made. Curation is "as of" the newest entry.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import time
from datetime import timedelta
from pathlib import Path

from memvault.curate.promote import plan_curation
from memvault.vault import Vault


def plan(root: Path, everything: bool) -> tuple[float, float, int, int]:
    t0 = time.perf_counter()
    vault = Vault.open(root)
    tl = vault.timeline
    floor = time.perf_counter() - t0
    last = max(e.timestamp for e in tl.events if e.timestamp is not None)
    t1 = time.perf_counter()
    p = (plan_curation(vault, at=last, everything=True) if everything
         else plan_curation(vault, at=last, since=last - timedelta(days=7)))
    joined = sum("meaning" in d.facts for d in p.decisions.values())
    return floor, time.perf_counter() - t1, len(p.proposals), joined


def cached(root: Path) -> int:
    import sqlite3

    total = 0
    for path in (root / ".memvault" / "vectors").glob("*/cache.sqlite"):
        conn = sqlite3.connect(path)
        total += conn.execute("SELECT count(*) FROM vec").fetchone()[0]
        conn.close()
    return total


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("vault", type=Path)
    ap.add_argument("--model", default="/tmp/sem/minilm")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--work", type=Path, default=Path("/tmp/bench-curate-meaning"))
    args = ap.parse_args()
    shutil.rmtree(args.work, ignore_errors=True)
    shutil.copytree(args.vault, args.work, ignore=shutil.ignore_patterns(".memvault", ".git"))
    toml = args.work / "memvault.toml"
    base = toml.read_text(encoding="utf-8")
    for everything, label in ((True, "every live entry (--all)"), (False, "last 7 days")):
        toml.write_text(base + '\n[semantic]\nmode = "lexical"\n', encoding="utf-8")
        lex = [plan(args.work, everything) for _ in range(args.runs)]
        toml.write_text(base + f'\n[semantic]\nmodel = "{args.model}"\n', encoding="utf-8")
        shutil.rmtree(args.work / ".memvault" / "vectors", ignore_errors=True)
        cold = plan(args.work, everything)
        encoded = cached(args.work)
        warm = [plan(args.work, everything) for _ in range(args.runs)]
        floor = statistics.median(r[0] for r in lex + warm)
        med_lex = statistics.median(r[1] for r in lex)
        med_warm = statistics.median(r[1] for r in warm)
        print(f"{label}: floor (parse + timeline) {floor:.3f} s")
        print(f"  lexical plan           {med_lex:7.3f} s  ({med_lex / floor:.2f}x floor)  proposals {lex[0][2]}")
        print(f"  meaning, empty cache   {cold[1]:7.3f} s  ({cold[1] / floor:.2f}x floor)  proposals {cold[2]}, "
              f"joined by meaning {cold[3]}, texts encoded {encoded}")
        print(f"  meaning, cached        {med_warm:7.3f} s  ({med_warm / floor:.2f}x floor)  proposals {warm[0][2]}, "
              f"joined by meaning {warm[0][3]}")


if __name__ == "__main__":
    main()
