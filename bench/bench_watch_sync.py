"""`memvault watch --sync` and the status section's sync part, on a synthetic vault shared by two clones.

    python bench/bench_watch_sync.py                         # 20k events in 1,000 files under /tmp
    python bench/bench_watch_sync.py --src /tmp/mv-100k --saves 10   # a copy of the 100k synthetic vault

Builds a bare remote and two clones (A made the vault and pushed it, B cloned it), then:
  - save -> pushed: clone B runs `memvault watch --json --sync 3600 --quiet-period Q` as a child
    process (the interval is long, so only the sync after each quiet-period commit counts); an entry
    is appended to a daily log and the time until the watcher logs the push is taken, minus Q.
    Floor, same run, in clone A with no watcher: the same append, then `commit_vault` and `sync`
    called directly (what the commit and the sync cost on their own, without the watcher).
  - status: the sync section of `memvault status` (`sync.status.status_section`) in clone B,
    median of 20; floor: one `git rev-parse HEAD` process (the section starts about ten).
  - the check before each of the watcher's commits and syncs (`watch.syncer.blocked`), median of 20.
Generated vaults live under /tmp and are reused between runs (never committed).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_watch import Child, make_vault  # noqa: E402


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms"


def setup(src: Path, work: Path) -> tuple[Path, Path, Path]:
    from memvault.sync.run import sync
    from memvault.vault import Vault

    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    a, remote = work / "a", work / "remote.git"
    shutil.copytree(src, a)
    git(work, "init", "-q", "--bare", str(remote))
    git(a, "init", "-q")
    git(a, "add", "-A")
    git(a, "commit", "-qm", "synthetic vault", "--no-verify")
    git(a, "remote", "add", "origin", str(remote))
    sync(Vault.open(a))
    git(work, "clone", "-q", str(remote), "b")
    return a, work / "b", remote


def day_file(root: Path) -> Path:
    return sorted((root / "memory").rglob("*.md"))[-1]


def append(path: Path, n: int) -> None:
    with path.open("a", encoding="utf-8") as fh:
        fh.write(f"\n## 23:{n % 60:02d} - Observation\nBench save sync{n} appended on this clone.\n")


def floor(a: Path, saves: int) -> list[float]:
    from memvault.sync.commit import commit_vault
    from memvault.sync.run import sync
    from memvault.vault import Vault

    times = []
    vault = Vault.open(a)
    for n in range(saves):
        append(day_file(a), 1000 + n)
        start = time.perf_counter()
        commit_vault(a, vault.config, say=lambda _m: None)
        sync(vault, say=lambda _m: None)
        times.append(time.perf_counter() - start)
    return times


def watched(b: Path, saves: int, quiet: float) -> list[float]:
    child = Child(b, "--sync", "3600", "--quiet-period", str(quiet))
    try:
        child.wait_for("ready")
        time.sleep(quiet + 2)  # the first quiet period and sync
        child.drain()
        times = []
        for n in range(saves):
            append(day_file(b), n)
            start = time.perf_counter()
            while True:
                rec = child.wait_for("sync", timeout=120)
                if rec.get("pushed"):
                    break
            times.append(time.perf_counter() - start - quiet)
            time.sleep(0.2)
        return times
    finally:
        child.stop()


def median_of(fn, runs: int = 20) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=20_000)
    ap.add_argument("--files", type=int, default=1_000)
    ap.add_argument("--saves", type=int, default=8)
    ap.add_argument("--quiet", type=float, default=0.5)
    ap.add_argument("--src", type=Path, help="an existing vault to copy (e.g. /tmp/mv-100k); it is never modified")
    args = ap.parse_args()
    src = args.src or Path(f"/tmp/mv-sync-src-{args.events}-{args.files}")
    if args.src is None:
        make_vault(src, args.events, args.files)
    a, b, _ = setup(src, Path(f"/tmp/mv-sync-bench-{args.events}"))
    from memvault.sync.status import status_section
    from memvault.vault import Vault
    from memvault.watch.syncer import blocked

    base = floor(a, args.saves)
    git(b, "pull", "-q")
    got = watched(b, args.saves, args.quiet)
    print(f"vault: {src} ({sum(1 for _ in (src / 'memory').rglob('*.md'))} daily logs); {args.saves} saves; quiet period {args.quiet} s")
    print(f"save -> pushed by the watcher, minus the quiet period: p50 {ms(statistics.median(got))}, "
          f"max {ms(max(got))}")
    print(f"floor, commit_vault + sync called directly:          p50 {ms(statistics.median(base))}, "
          f"max {ms(max(base))}")
    vault = Vault.open(b)
    print(f"status sync section: {ms(median_of(lambda: status_section(vault)))}; floor, one git rev-parse: "
          f"{ms(median_of(lambda: git(b, 'rev-parse', 'HEAD')))}")
    print(f"blocked() before each commit and sync: {ms(median_of(lambda: blocked(b, committing=True)))}")


if __name__ == "__main__":
    main()
