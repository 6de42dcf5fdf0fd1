"""Sync figures on the 100k synthetic vault: `memvault sync` end to end beside git's own floor.

    python bench/bench_sync.py /tmp/mv-100k            # copies it into /tmp/mv-sync-bench first
    python bench/bench_sync.py /tmp/mv-100k --runs 10

Setup (not timed): the vault committed into a new repository, a bare clone as the remote, and a
second clone (two machines). Then, each a whole `memvault sync` process, p50/p95 over --runs:
  - up to date: nothing pending, nothing new on the remote; floor: `git fetch` alone, same clone;
  - push: one `memvault log` entry pending here, the remote has not moved (commit through the
    hook, fetch, push); floors: `git fetch` + `git push` of a one-line change committed without hook,
    and `git commit` of a logged entry through the pre-commit hook alone;
  - merge: both machines logged an entry to today's file since the last sync; the second one's
    sync merges (merge-tree through the memvault driver, commit-tree, fast-forward, push); floor:
    `git merge-tree` of the same two commits with git's union driver (no Python);
  - `memvault log` in the shared clone (an `Id: <minute>-<machine>` costs two git calls) against the
    same vault with no remote, and `python -c pass`.
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

PY = sys.executable
ENV = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b", "GIT_COMMITTER_NAME": "b",
       "GIT_COMMITTER_EMAIL": "b@b"}


def run(args: list[str], cwd: Path, machine: str | None = None) -> float:
    env = dict(ENV, MEMVAULT_MACHINE=machine) if machine else ENV
    t = time.perf_counter()
    subprocess.run(args, cwd=cwd, env=env, check=True, capture_output=True)
    return (time.perf_counter() - t) * 1000


def mv(cwd: Path, *args: str, machine: str = "alpha") -> float:
    return run([PY, "-m", "memvault", *args], cwd, machine)


def git(cwd: Path, *args: str) -> float:
    return run(["git", *args], cwd)


def out(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, env=ENV, check=True, capture_output=True, text=True).stdout.strip()


def stats(xs: list[float]) -> str:
    xs = sorted(xs)
    p95 = xs[min(len(xs) - 1, round(0.95 * (len(xs) - 1)))]
    return f"p50 {statistics.median(xs):7.0f} ms  p95 {p95:7.0f} ms"


def setup(source: Path, work: Path) -> tuple[Path, Path, Path]:
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    a, remote, b = work / "a", work / "remote.git", work / "b"
    shutil.copytree(source, a, ignore=shutil.ignore_patterns(".memvault", ".git"))
    git(a, "init", "-q")
    git(a, "add", "-A")
    git(a, "commit", "-qm", "vault")
    git(work, "clone", "-q", "--bare", str(a), str(remote))
    git(a, "remote", "add", "origin", str(remote))
    git(a, "fetch", "-q", "origin")
    git(a, "branch", "-q", "--set-upstream-to", f"origin/{out(a, 'branch', '--show-current')}")
    git(work, "clone", "-q", str(remote), str(b))
    for clone, name in ((a, "alpha"), (b, "beta")):
        mv(clone, "hook", "install", machine=name)
        mv(clone, "sync", machine=name)
    mv(a, "sync", machine="alpha")
    return a, remote, b


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("vault", type=Path)
    ap.add_argument("--work", type=Path, default=Path("/tmp/mv-sync-bench"))
    ap.add_argument("--runs", type=int, default=10)
    args = ap.parse_args()
    t = time.perf_counter()
    a, remote, b = setup(args.vault, args.work)
    files = sum(1 for _ in (a / "memory").rglob("*.md"))
    print(f"setup: {files} logs committed, remote and two clones in {time.perf_counter() - t:.0f} s")
    n = args.runs
    print(f"up to date  sync     {stats([mv(a, 'sync') for _ in range(n)])}")
    print(f"  floor     fetch    {stats([git(a, 'fetch', '-q', 'origin') for _ in range(n)])}")
    push, floor = [], []
    for i in range(n):
        mv(a, "log", f"bench push {i}")
        push.append(mv(a, "sync"))
        (a / "bench-floor.txt").write_text(f"{i}\n")
        git(a, "add", "bench-floor.txt")
        git(a, "commit", "-qn", "-m", "floor")
        floor.append(git(a, "fetch", "-q", "origin") + git(a, "push", "-q", "origin", "HEAD"))
    hook = []
    for i in range(n):  # what the push's commit of pending work costs alone: git commit through the hook
        mv(a, "log", f"bench hook {i}")
        git(a, "add", "-A", "memory")
        hook.append(git(a, "commit", "-q", "-m", f"hook {i}"))
    mv(a, "sync")
    print(f"push        sync     {stats(push)}")
    print(f"  floor     fetch+push {stats(floor)}")
    print(f"  floor     git commit through the pre-commit hook {stats(hook)}")
    mv(b, "sync", machine="beta")
    merge, mfloor, gfloor = [], [], []
    for i in range(n):
        mv(a, "log", f"bench merge alpha {i}")
        mv(a, "sync")
        mv(b, "log", f"bench merge beta {i}", machine="beta")
        git(b, "commit", "-qn", "-am", "beta", "--allow-empty")
        git(b, "fetch", "-q", "origin")
        up = out(b, "rev-parse", "@{u}")
        # floors: the same merge by git alone (the driver a no-op), and through the memvault driver
        gfloor.append(run(["git", "-c", "merge.memvault.driver=true", "merge-tree", "--write-tree", up, "HEAD"], b))
        mfloor.append(run(["git", "merge-tree", "--write-tree", up, "HEAD"], b))
        merge.append(mv(b, "sync", machine="beta"))
    print(f"merge       sync     {stats(merge)}")
    print(f"  floor     merge-tree, git alone       {stats(gfloor)}")
    print(f"  floor     merge-tree, memvault driver {stats(mfloor)}")
    logs_shared = [mv(a, "log", f"bench log {i}") for i in range(n)]
    lone = args.work / "lone"
    shutil.copytree(a, lone, ignore=shutil.ignore_patterns(".memvault"))
    git(lone, "remote", "remove", "origin")
    logs_lone = [mv(lone, "log", f"bench log {i}") for i in range(n)]
    print(f"log, shared (machine id) {stats(logs_shared)}")
    print(f"log, no remote           {stats(logs_lone)}")
    print(f"python -c pass           {stats([run([PY, '-c', 'pass'], a) for _ in range(n)])}")


if __name__ == "__main__":
    main()
