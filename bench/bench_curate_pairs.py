"""Curate's merge decision on the labelled pairs, beside the rule it replaced (issue 13).

    python bench/bench_curate_pairs.py [--threshold 0.6]

For each label of `tests/data/curate_pairs.jsonl`, how many pairs each rule merges: the old rule
(Dice overlap of content words ≥ threshold, with the negation guard) and `same_fact` (the same
overlap, and `differs` finds nothing stated differently). Repeats (reworded, reconfirmed) should
merge; different facts and corrections never. Also prints the decision's cost per pair.
"""

from __future__ import annotations

import argparse
import json
import re
import time
from collections.abc import Callable
from pathlib import Path

from memvault.entries.similarity import Sig, same_fact, signature, similarity
from memvault.entries.words import STOPWORDS, WORD_RE, stem

PAIRS = Path(__file__).resolve().parent.parent / "tests" / "data" / "curate_pairs.jsonl"
LABELS = ("reworded", "reconfirmed", "different", "correction")
OLD_NEGATION = frozenset({"not", "no", "never", "nor", "without", "cannot"})


# The rule before issue 13, verbatim: its stop words, plain stems, no numbers, English negations.
OLD_STOP = frozenset({
    "user", "users", "they", "them", "their", "he", "she", "his", "her", "i", "we", "you", "me", "my",
    "our", "said", "says", "say", "mentioned", "again", "also", "still", "really", "very", "just",
    "has", "have", "had", "will", "would", "should", "does", "do", "did", "are", "am", "been", "being",
})
OLD_NEGATION_RE = re.compile(r"\b(?:not|no|never|nor|without|cannot)\b|n[’']t\b", re.IGNORECASE)


def old_signature(text: str) -> Sig:
    words = WORD_RE.findall(text.lower())
    toks = frozenset(stem(w) for w in words if w not in STOPWORDS and w not in OLD_STOP
                     and w not in OLD_NEGATION and len(w) > 1 and not w.isdigit())
    return Sig(toks, bool(OLD_NEGATION_RE.search(text)))


def score(rows: list[dict], merge: Callable[[str, str], bool]) -> dict[str, tuple[int, int]]:
    out = {}
    for label in LABELS:
        mine = [r for r in rows if r["label"] == label]
        out[label] = (sum(merge(r["a"], r["b"]) for r in mine), len(mine))
    return out


def summary(counts: dict[str, tuple[int, int]]) -> tuple[float, float]:
    good = counts["reworded"][0] + counts["reconfirmed"][0]
    bad = counts["different"][0] + counts["correction"][0]
    total = counts["reworded"][1] + counts["reconfirmed"][1]
    return (good / (good + bad) if good + bad else 1.0), good / total


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--threshold", type=float, default=0.6, help="[curate] similarity (default 0.6)")
    args = ap.parse_args()
    rows = [json.loads(line) for line in PAIRS.read_text(encoding="utf-8").splitlines()]

    def old(a: str, b: str) -> bool:
        return similarity(old_signature(a), old_signature(b)) >= args.threshold

    def new(a: str, b: str) -> bool:
        return same_fact(a, b, args.threshold)

    before, after = score(rows, old), score(rows, new)
    print(f"pairs: {len(rows)}  threshold: {args.threshold}")
    print(f"{'label':<14}{'pairs':>6}  {'merged, old rule':>17}  {'merged, same_fact':>18}")
    for label in LABELS:
        (o, n), (a, _) = before[label], after[label]
        print(f"{label:<14}{n:>6}  {o:>11} ({o / n:.2f})  {a:>12} ({a / n:.2f})")
    for name, counts in (("old rule (floor)", before), ("same_fact", after)):
        p, r = summary(counts)
        print(f"{name:<18} precision {p:.3f}  recall of repeats {r:.3f}")
    t0 = time.process_time()  # CPU time: the machine is often shared
    runs = 20
    for _ in range(runs):
        for r in rows:
            sa, sb = signature(r["a"]), signature(r["b"])
            if similarity(sa, sb) >= args.threshold:
                same_fact(sa, sb, args.threshold)
    per = (time.process_time() - t0) / (runs * len(rows)) * 1e6
    print(f"cost: {per:.0f} µs CPU per pair (two signatures, the overlap, and differs when the overlap passes)")


if __name__ == "__main__":
    main()
