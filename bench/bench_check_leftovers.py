"""Benchmark the merge-leftover rules (MV020 markers, MV021 a section twice) and their repair.

    python bench/bench_check_leftovers.py [--dir /tmp/mv-100k] [--runs 5]

On the synthetic vault of bench/synth.py (read only: nothing is written), prints the median of
`--runs` passes of:
- the two new rules over every file (what they add to every `memvault check`), beside all the
  per-file rules over the same files and the floor of reading every file, all in the same run;
- `check --fix`'s repair of one day of 1,000 entries that a merge without the vault's
  attributes left with 100 conflicts (markers resolved, a repeat dropped, entries sorted).
Timings on a shared 2-core machine are noisy: read the medians.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent)]

from memvault.check.fixes import fix_source  # noqa: E402
from memvault.check.leftovers import rule_conflict_markers, rule_repeated_sections  # noqa: E402
from memvault.check.rules import file_problems  # noqa: E402
from memvault.check.sourcefile import load_source  # noqa: E402
from memvault.config.core import Config  # noqa: E402
from memvault.layout import iter_markdown  # noqa: E402


def median_ms(fn, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def conflicted_day(n: int = 1000, conflicts: int = 100) -> str:
    """A day of `n` entries, every tenth pair written as a conflict (this side / the other's)."""
    out = ["# 2026-11-30", ""]
    per = n // conflicts
    for k in range(conflicts):
        block = [f"## {(6 * 60 + k * per + j) // 60:02d}:{(6 * 60 + k * per + j) % 60:02d} - Observation\n"
                 f"Eintrag {k}-{j}: the build ran\n" for j in range(per - 2)]
        late = f"## {(6 * 60 + k * per + per - 1) // 60:02d}:{(6 * 60 + k * per + per - 1) % 60:02d}"
        early = f"## {(6 * 60 + k * per + per - 2) // 60:02d}:{(6 * 60 + k * per + per - 2) % 60:02d}"
        out += block + ["<<<<<<< HEAD", f"{late} - Decision\nlaptop {k}", "=======",
                        f"{early} - Decision\ndesktop {k}", ">>>>>>> origin/main", ""]
    out += out[2:4]  # the first entry once more: what a union leaves when both sides added it
    return "\n".join(out) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", type=Path, default=Path("/tmp/mv-100k"))
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    config = Config.load(args.dir / "memvault.toml")
    paths = list(iter_markdown(args.dir))
    raw = {p: (args.dir / p).read_bytes() for p in paths}
    sources = [load_source(p, b, config) for p, b in raw.items()]
    now = datetime(2026, 12, 2, tzinfo=UTC)

    def read_all() -> None:
        for p in paths:
            (args.dir / p).read_bytes()

    def new_rules() -> None:
        for src in sources:
            list(rule_conflict_markers(src))
            list(rule_repeated_sections(src))

    def all_rules() -> None:
        for src in sources:
            file_problems(src, config, now, (0, 0))

    entries = sum(len(s.parsed.events) for s in sources)
    print(f"{len(paths)} files, {entries} entries ({args.dir}), median of {args.runs}:")
    print(f"  floor: read every file                 {median_ms(read_all, args.runs):8.1f} ms")
    print(f"  all per-file rules                     {median_ms(all_rules, args.runs):8.1f} ms")
    print(f"  MV020 + MV021 rules                    {median_ms(new_rules, args.runs):8.1f} ms")
    day = conflicted_day()
    src = load_source("memory/2026-11-30.md", day.encode(), Config())
    text, codes = fix_source(src, Config())
    assert "<<<<<<<" not in text and {"MV015", "MV020", "MV021"} <= set(codes), codes
    print(f"  fix one day: 1,000 entries, 100 conflicts {median_ms(lambda: fix_source(src, Config()), args.runs):5.1f} ms "
          f"({', '.join(codes)})")


if __name__ == "__main__":
    main()
