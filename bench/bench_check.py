"""Benchmark `memvault check`: the whole vault, and `--staged` with one changed file.

    python bench/bench_check.py [--events 100000] [--files 5000] [--runs 5] [--dir /tmp/...]

Builds (once, cached by size in /tmp) the synthetic vault of bench/synth.py (seed 1),
commits it to git, then prints:
- full check: median/p95 of `check_vault` in-process and of the whole `memvault check`
  process, against the floor of reading every file in the same run;
- `--staged` with one changed file: median/p95 of the whole process (`memvault check
  --staged`, what the pre-commit hook runs), against the floor of starting Python plus
  `git diff --cached` in the same run.
Timings on a shared 2-core machine are noisy: read the medians, and the p95 for spread.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

from synth import generate  # noqa: E402  (bench/synth.py, the shared generator)


def git(root: Path, *args: str) -> str:
    env = dict(os.environ, GIT_AUTHOR_NAME="bench", GIT_AUTHOR_EMAIL="b@x", GIT_COMMITTER_NAME="bench",
               GIT_COMMITTER_EMAIL="b@x")
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True, env=env).stdout


def prepare(base: Path, n_events: int, n_files: int) -> Path:
    root = base / f"check-vault-{n_events}-{n_files}"
    if not (root / ".git").is_dir():
        shutil.rmtree(root, ignore_errors=True)
        root.mkdir(parents=True)
        generate(root, n_events, n_files, seed=1)
        git(root, "init", "-q")
        git(root, "add", "-A")
        git(root, "commit", "-q", "--no-verify", "-m", "synthetic vault")
    git(root, "reset", "-q", "--hard")
    return root


def stage_one_change(root: Path) -> str:
    """Append an entry to the newest log that supersedes, reconfirms and links to older ones."""
    logs = sorted((root / "memory").rglob("*.md"))
    newest, older, recent = logs[-1], logs[-40], logs[-3]

    def first_heading(path: Path) -> str:
        return next(line for line in path.read_text(encoding="utf-8").split("\n") if line.startswith("## "))[3:]

    heading, day = first_heading(older), older.stem
    with newest.open("a", encoding="utf-8") as fh:
        fh.write(f"\n## 23:59 - Correction\nThe user changed their mind about the dashboard "
                 f"(see [[{day}#{heading}]]).\nSupersedes: {day}T{heading[:5]}\n"
                 f"Reconfirms: [[{recent.stem}#{first_heading(recent)}]]\n")
    rel = newest.relative_to(root).as_posix()
    git(root, "add", rel)
    return rel


def stage_description_change(root: Path) -> str:
    """A second change: an entry with an explicit id and a dateless description reference,
    the costliest kind for `--staged` (found by searching the vault's text)."""
    logs = sorted((root / "memory").rglob("*.md"))
    newest, older = logs[-1], logs[-300]
    words = [w for w in older.read_text(encoding="utf-8").split("\n")[3].rstrip(".").split() if len(w) > 3][:4]
    with newest.open("a", encoding="utf-8") as fh:
        fh.write(f"\n## 23:58 - Correction\nNot any more.\nId: bench-unique-id\nSupersedes: {' '.join(words).lower()}\n")
    rel = newest.relative_to(root).as_posix()
    git(root, "add", rel)
    return f"{rel}, Supersedes: {' '.join(words).lower()}"


def timed(fn, runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def fmt(samples: list[float]) -> str:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return f"median {statistics.median(samples) * 1000:7.0f} ms  p95 {p95 * 1000:7.0f} ms"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=100_000)
    ap.add_argument("--files", type=int, default=5_000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--dir", type=Path, default=Path("/tmp/memvault-bench"))
    args = ap.parse_args()
    from memvault.check.runner import check_vault
    from memvault.layout import iter_markdown
    from memvault.vault import Vault

    root = prepare(args.dir, args.events, args.files)
    exe = [sys.executable, "-m", "memvault", "--vault", str(root), "check"]
    paths = list(iter_markdown(root))
    print(f"vault: {root} ({len(paths)} files, {args.events} events); {os.cpu_count()} cores; runs={args.runs}")

    floor = timed(lambda: [(root / p).read_bytes() for p in paths], args.runs)
    report = check_vault(Vault.open(root))
    inproc = timed(lambda: check_vault(Vault.open(root)), args.runs)
    whole = timed(lambda: subprocess.run(exe, capture_output=True), max(3, args.runs // 2))
    print(f"floor: read every file           {fmt(floor)}")
    print(f"check_vault (in process)         {fmt(inproc)}   x{statistics.median(inproc) / statistics.median(floor):.0f} floor"
          f"   ({report.errors} errors, {report.warnings} warnings)")
    print(f"memvault check (whole process)   {fmt(whole)}   target <= 5000 ms")

    rel = stage_one_change(root)
    py_floor = timed(lambda: subprocess.run([sys.executable, "-c", "pass"], capture_output=True), args.runs * 2)
    git_floor = timed(lambda: subprocess.run(["git", "diff", "--cached", "--name-only", "-z"], cwd=root,
                                             capture_output=True), args.runs * 2)
    staged_cmd = exe + ["--staged"]
    out = subprocess.run(staged_cmd, capture_output=True, text=True)
    staged = timed(lambda: subprocess.run(staged_cmd, capture_output=True), args.runs * 4)
    floor_ms = (statistics.median(py_floor) + statistics.median(git_floor)) * 1000
    print(f"floor: python -c pass + git diff  median {floor_ms:7.0f} ms")
    print(f"check --staged, 1 file (whole)   {fmt(staged)}   target <= 300 ms   ({rel}; exit {out.returncode})")
    print("   last line: " + (out.stdout.strip().splitlines() or ["(no output)"])[-1])
    git(root, "reset", "-q", "--hard")
    what = stage_description_change(root)
    out = subprocess.run(staged_cmd, capture_output=True, text=True)
    described = timed(lambda: subprocess.run(staged_cmd, capture_output=True), args.runs * 4)
    print(f"check --staged, id + description  {fmt(described)}   ({what}; exit {out.returncode})")
    print("   last line: " + (out.stdout.strip().splitlines() or ["(no output)"])[-1])
    git(root, "reset", "-q", "--hard")


if __name__ == "__main__":
    main()
