"""Benchmark the secret scan: recall and false-positive rate on the corpus, and throughput.

    python bench/bench_secrets.py [--events 20000] [--files 1000] [--runs 5] [--dir /tmp] [--baseline FILE]
                                  [--src DIR] [--quality-only]

Prints:
- recall and false-positive rate on tests/data/secrets/positives.txt and negatives.txt, over
  all rows and per round (round 1: written with the scanner; round 2: written after it was
  tuned, to measure it on unseen text; round 3: regression rows), with every miss and every
  false alarm;
- throughput in MB/s of `find_secrets` over the synthetic vault of bench/synth.py (seed 1),
  one call per file as `memvault check` makes them, beside floors measured in the same run
  over the same text: `str.count("\\n")`, `str.lower()` and one pass of a plain regex
  (`\\S{15,}`, the scan's own first step);
- with --baseline (another version of memvault/secretscan.py, e.g. from
  `git show 12f054d:memvault/secretscan.py > /tmp/old_secretscan.py`), its throughput on the
  same text in the same run;
- the worst case found on 1 MB pathological inputs (dense credential words), in s/MB.
Medians of --runs runs; timings on a shared machine are noisy.

With --src DIR the memvault package in DIR is measured instead of this checkout's, on this
checkout's corpus: the scan before a change, e.g. before issue 12,
`mkdir /tmp/before && git archive dc2abba memvault | tar -x -C /tmp/before`, then
`--src /tmp/before`. The quality summary gives precision (of the rows flagged, the share that
hold a secret), recall and the false-positive rate over all rows.
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _early_src(argv: list[str]) -> list[str]:
    """--src DIR must be on sys.path before memvault is imported."""
    for i, arg in enumerate(argv):
        if arg == "--src" and i + 1 < len(argv):
            return [str(Path(argv[i + 1]).resolve())]
        if arg.startswith("--src="):
            return [str(Path(arg.split("=", 1)[1]).resolve())]
    return []


sys.path[:0] = [str(HERE), *_early_src(sys.argv), str(HERE.parent)]

from synth import generate  # noqa: E402  (bench/synth.py, the shared generator)

import memvault  # noqa: E402
from memvault.check.secrets.scan import find_secrets  # noqa: E402
from tests.helpers_secrets import CORPUS, corpus  # noqa: E402

PATHOLOGICAL = ["PIN: ", "cvv ", "password ", "password=", "key is ", "the password for ", "a://a:b@",
                "sshpass -p x ", "--password x ", "AccountKey=", "\u200b", "AAAAAAAAAAAAAAA ", ":", "a",
                "hunter2 is the wifi password ", "| password | ", "seed phrase: ", "abandon ", "post_id: "]


def rounds(name: str) -> dict[int, int]:
    """{line number: round} from the '# -- Round N' markers (rows before the first are round 1)."""
    out, current = {}, 1
    for n, line in enumerate((CORPUS / name).read_text(encoding="utf-8").split("\n"), 1):
        marker = re.match(r"# -- Round (\d+)", line)
        current = int(marker[1]) if marker else current
        out[n] = current
    return out


def quality() -> None:
    print(f"scan: {Path(memvault.__file__).parent}")
    flagged: dict[str, int] = {}
    total: dict[str, int] = {}
    for name, want in (("positives.txt", True), ("negatives.txt", False)):
        rows = corpus(name)
        of_round = rounds(name)
        wrong = [(case, cat, text) for case, cat, text in rows if bool(find_secrets(text)) != want]
        what = "recall" if want else "false-positive rate"

        def rate(bad: int, n: int, want: bool = want) -> float:
            return 1 - bad / n if want else bad / n

        parts = []
        for r in sorted(set(of_round[int(c[3:])] for c, _, _ in rows)):
            in_round = [c for c, _, _ in rows if of_round[int(c[3:])] == r]
            bad = [c for c, _, _ in wrong if of_round[int(c[3:])] == r]
            parts.append(f"round {r}: {rate(len(bad), len(in_round)):.3f} of {len(in_round)}")
        print(f"{name}: {what} {rate(len(wrong), len(rows)):.3f} over {len(rows)} rows ({'; '.join(parts)})")
        for case, cat, text in wrong:
            print(f"   {'missed' if want else 'flagged'} {case} [{cat}] {text[:90]!r}")
        total[name] = len(rows)
        flagged[name] = len(rows) - len(wrong) if want else len(wrong)
    tp, fp = flagged["positives.txt"], flagged["negatives.txt"]
    print(f"all rows: precision {tp / max(tp + fp, 1):.3f} ({tp}/{tp + fp}), recall {tp / total['positives.txt']:.3f} "
          f"({tp}/{total['positives.txt']}), false-positive rate {fp / total['negatives.txt']:.3f} "
          f"({fp}/{total['negatives.txt']})")


def timed(fn, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def load_baseline(path: Path):
    """Another secretscan.py, loaded inside the memvault package so its relative imports work."""
    spec = importlib.util.spec_from_file_location("memvault._baseline_secretscan", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module.find_secrets


def throughput(base: Path, events: int, files: int, runs: int, baseline: Path | None) -> None:
    root = base / f"secrets-vault-{events}-{files}"
    if not (root / "memory").is_dir():
        root.mkdir(parents=True, exist_ok=True)
        generate(root, events, files, seed=1)
    texts = [p.read_text(encoding="utf-8") for p in sorted((root / "memory").rglob("*.md"))]
    whole = "\n".join(texts)
    mb = len(whole.encode("utf-8")) / 1e6
    run_re = re.compile(r"\S{15,}")
    rows = [
        ("floor: str.count('\\n')", timed(lambda: whole.count("\n"), runs)),
        ("floor: str.lower()", timed(lambda: whole.lower(), runs)),
        ("floor: one regex pass (\\S{15,})", timed(lambda: run_re.findall(whole), runs)),
        ("find_secrets, one call per file", timed(lambda: [find_secrets(t) for t in texts], runs)),
        ("find_secrets, one call for all", timed(lambda: find_secrets(whole), runs)),
    ]
    if baseline:
        old = load_baseline(baseline)
        rows.append((f"baseline {baseline.name}, per file", timed(lambda: [old(t) for t in texts], runs)))
    print(f"\nthroughput over {len(texts)} files, {mb:.1f} MB ({events} synthetic events), median of {runs}:")
    for label, secs in rows:
        print(f"   {label:<36} {secs * 1000:9.1f} ms  {mb / secs:9.1f} MB/s")


def worst_case() -> None:
    print("\npathological 1 MB inputs (each unit repeated), seconds:")
    results = []
    for unit in PATHOLOGICAL:
        text = (unit * (1_000_000 // len(unit) + 1))[:1_000_000]
        start = time.perf_counter()
        find_secrets(text)
        results.append((time.perf_counter() - start, unit))
    for secs, unit in sorted(results, reverse=True):
        print(f"   {unit!r:<22} {secs:6.2f} s")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--events", type=int, default=20_000)
    ap.add_argument("--files", type=int, default=1_000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--dir", type=Path, default=Path("/tmp"))
    ap.add_argument("--baseline", type=Path, help="another secretscan.py to time on the same text")
    ap.add_argument("--src", type=Path, help="measure the memvault package in DIR (e.g. an older version)")
    ap.add_argument("--quality-only", action="store_true", help="only the corpus figures")
    args = ap.parse_args(argv)
    quality()
    if not args.quality_only:
        throughput(args.dir, args.events, args.files, args.runs, args.baseline)
        worst_case()
    return 0


if __name__ == "__main__":
    sys.exit(main())
