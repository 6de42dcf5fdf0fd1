"""memorywire through the library on a large vault: remember, remember → recallable, recall.

    python bench/synth.py /tmp/mv-100k && cp -a /tmp/mv-100k /tmp/copy   # remember writes to it
    python bench/bench_memorywire.py /tmp/copy --calls 50

Times, in one process (what a server does per request, without HTTP): `call(store, "remember")`
(schema checks, the append under the lock); remember then a recall that finds it (the index
brought up to date for the changed file first, as every search does); `call(store, "recall")` of
a few words; and, beside them as the floor, `log_entry` alone and `search_vault` alone on the
same vault. Prints min, median, p95 in milliseconds.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from memvault.memorywire import MemoryStore, call
from memvault.search.index import search_vault, update_index
from memvault.vault import Vault
from memvault.write.log import log_entry

QUERIES = ["project deadline", "coffee machine", "weekly updates", "atlas launch", "backup storage",
           "meeting notes", "customer email", "flight booking"]


def _summary(name: str, samples: list[float]) -> str:
    ms = sorted(s * 1000 for s in samples)
    p95 = ms[min(len(ms) - 1, int(len(ms) * 0.95))]
    return f"{name:<34} min {ms[0]:8.2f}   median {statistics.median(ms):8.2f}   p95 {p95:8.2f} ms   (n={len(ms)})"


def timed(fn, calls: int) -> list[float]:  # type: ignore[no-untyped-def]
    out = []
    for i in range(calls):
        t0 = time.perf_counter()
        fn(i)
        out.append(time.perf_counter() - t0)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("vault", type=Path)
    ap.add_argument("--calls", type=int, default=50)
    args = ap.parse_args()
    root = args.vault.resolve()
    update_index(Vault.open(root))
    store = MemoryStore(Vault.open(root))
    n = args.calls

    def remember(i: int) -> dict:
        return call(store, "remember", {"agent_id": "bench", "type": "semantic", "user_id": "u1",
                                        "content": f"Bench fact {i}: Kiwi{i}x likes green tea", "confidence": 0.9})

    def round_trip(i: int) -> None:
        got = remember(1000 + i)
        hits = call(store, "recall", {"agent_id": "bench", "query": f"Kiwi{1000 + i}x", "k": 1})["results"]
        assert hits and hits[0]["id"] == got["id"], (got, hits)

    def recall(i: int) -> None:
        call(store, "recall", {"agent_id": "bench", "query": QUERIES[i % len(QUERIES)], "k": 5})

    print(f"vault {root}, {n} calls each")
    print(_summary("floor: log_entry", timed(lambda i: log_entry(Vault.open(root), f"floor entry {i} Pomelo"), n)))
    print(_summary("memorywire remember", timed(remember, n)))
    print(_summary("memorywire remember -> recallable", timed(round_trip, n)))
    print(_summary("floor: search_vault (k=5)", timed(
        lambda i: search_vault(Vault.open(root), QUERIES[i % len(QUERIES)], limit=5), n)))
    print(_summary("memorywire recall (k=5)", timed(recall, n)))


if __name__ == "__main__":
    main()
