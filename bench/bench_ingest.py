"""`memvault ingest` on a large vault, beside the floor it cannot go under (parsing the vault).

    python bench/bench_ingest.py /tmp/mv-100k --runs 3

Copies the vault to a temporary folder (the source is never written), then times, `--runs`
times each, in-process: the floor (open the vault and build its timeline, which ingest needs to
know what the vault already says; after one warm-up open), `ingest --dry-run` of the 50-turn fixture conversation, the
ingest that writes it (a fresh copy of the logs each run), and the second ingest (nothing to
write), interleaved round by round. Prints min and median in seconds, and what each did.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from memvault.ingest.run import ingest
from memvault.vault import Vault

CHAT = Path(__file__).resolve().parents[1] / "tests" / "data" / "ingest" / "move_chat.txt"


def timed(runs: int, setup: Callable[[], None], call: Callable[[], object]) -> tuple[list[float], object]:
    out, result = [], None
    for _ in range(runs):
        setup()
        t0 = time.perf_counter()
        result = call()
        out.append(time.perf_counter() - t0)
    return out, result


def line(name: str, samples: list[float], extra: str = "") -> str:
    return f"{name:<34} min {min(samples):6.2f} s   median {statistics.median(samples):6.2f} s   {extra}"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("vault", type=Path)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    text = CHAT.read_text(encoding="utf-8")
    with tempfile.TemporaryDirectory(prefix="bench-ingest-") as tmp:
        root = Path(tmp) / "vault"
        shutil.copytree(args.vault, root, ignore=shutil.ignore_patterns(".memvault", ".git"))
        logs = {p: p.read_bytes() for p in (root / "memory").rglob("*.md")}

        def reset() -> None:  # the vault as copied: the entries of the last run gone
            for p in (root / "memory").rglob("*.md"):
                if p not in logs:
                    p.unlink()
            for p, data in logs.items():
                if p.read_bytes() != data:
                    p.write_bytes(data)

        def run(dry: bool) -> object:
            with Vault.open(root) as v:
                return ingest(v, text, CHAT.name, dry_run=dry, at=None)

        def floor() -> object:
            with Vault.open(root) as v:
                return len(v.timeline.events)

        floor()  # warm: the first open of the copy builds the derived caches every later one reads
        floor_s: list[float] = []
        dry_s: list[float] = []
        write_s: list[float] = []
        again_s: list[float] = []
        for _ in range(args.runs):  # interleaved, so a busy spell of the machine hits all alike
            t, n = timed(1, reset, floor)
            floor_s += t
            t, dry = timed(1, reset, lambda: run(True))
            dry_s += t
            t, done = timed(1, reset, lambda: run(False))
            write_s += t
            t, again = timed(1, lambda: None, lambda: run(False))
            again_s += t
        print(f"vault: {args.vault} ({n} events), transcript: {CHAT.name} (50 turns), python {sys.version.split()[0]}")
        print(line("floor: open + timeline", floor_s))
        print(line("ingest --dry-run", dry_s, f"{dry.counts()}"))  # type: ignore[attr-defined]
        print(line("ingest (writes)", write_s, f"{done.counts()}"))  # type: ignore[attr-defined]
        print(line("ingest again (writes nothing)", again_s, f"{again.counts()}"))  # type: ignore[attr-defined]


if __name__ == "__main__":
    main()
