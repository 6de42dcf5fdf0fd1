"""Time-travel figures: `asof --recorded` warm/cold, its index's one-off costs, event-time
`asof` warm, loose vs packed.

    python bench/bench_history.py                      # builds /tmp/mv-hist-bench with synth.py
    python bench/bench_history.py --vault /tmp/mv-hist --queries 40

The vault: bench/synth.py --events 100000 --files 5000 --commits 1000 (1,000 commits of 5 daily
logs each, committer dates at the end of each stretch). Prints medians and p95 next to floors
measured in the same run (a bare `git log`, a bare `git` process, a 100k-item list pass).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
QUERIES = ["deploy server", "weekly budget meeting", "kubernetes cluster latency", "dark mode theme",
           "coffee", "client invoice", "python release migration", "garden weekend family"]


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def fmt(values: list[float]) -> str:
    return f"median {statistics.median(values) * 1000:8.1f} ms   p95 {pct(values, 95) * 1000:8.1f} ms   (n={len(values)})"


def timed(fn, *args, **kw) -> tuple[float, object]:
    t = time.perf_counter()
    out = fn(*args, **kw)
    return time.perf_counter() - t, out


def ensure_vault(args: argparse.Namespace) -> Path:
    vault = Path(args.vault)
    if (vault / "memvault.toml").exists():
        return vault
    print(f"building {vault} with synth.py ({args.events} events, {args.files} files, {args.commits} commits)...")
    subprocess.run([sys.executable, str(HERE / "synth.py"), str(vault), "--events", str(args.events),
                    "--files", str(args.files), "--commits", str(args.commits)], check=True)
    return vault


def random_times(vault: Path, n: int, seed: int) -> list[datetime]:
    out = subprocess.run(["git", "log", "--first-parent", "--format=%ct"], cwd=vault, capture_output=True, text=True).stdout
    stamps = [int(s) for s in out.split()]
    lo, hi = min(stamps), max(stamps)
    rng = random.Random(seed)
    # the later half of history holds most entries: that is where the p95 lives
    return [datetime.fromtimestamp(rng.uniform(lo, hi), UTC) for _ in range(n)]


def floors(vault: Path) -> None:
    from memvault.history.gitrepo import GitRepo

    runs = [timed(subprocess.run, ["git", "log", "--first-parent", "--format=%H %ct"], cwd=vault, capture_output=True)[0] for _ in range(5)]
    print(f"floor  git log --first-parent (1 process)     {fmt(runs)}")
    runs = [timed(subprocess.run, ["git", "--version"], capture_output=True)[0] for _ in range(5)]
    print(f"floor  bare git process                      {fmt(runs)}")
    repo = GitRepo.require(vault)
    commits = repo.commits()
    times = random_times(vault, 200, 9)
    t = time.perf_counter()
    for when in times:
        commits.at(when)
    print(f"floor  binary search of {len(commits)} commits        {(time.perf_counter() - t) / len(times) * 1e6:8.1f} us per lookup")
    runs = [timed(lambda: [x for x in range(100_000)])[0] for _ in range(5)]
    print(f"floor  Python pass over 100k items            {fmt(runs)}")


def recorded_warm(vault: Path, n: int) -> None:
    from memvault.gcpause import no_gc
    from memvault.history.store import RecordedStore
    from memvault.vault import Vault

    v = Vault.open(vault)
    past = v.past
    store = RecordedStore(past.loader, past.require_repo(), v.config)
    t, index = timed(store.open)
    how = "resumed" if store.resumed else ("built" if store.built_in is not None else "loaded")
    print(f"recorded index: {how} in {t * 1000:8.1f} ms (this process)")
    past._index = index
    last = index.commits.commits[-1]  # type: ignore[union-attr]
    t, _ = timed(lambda: v.as_of(last.date, recorded=True, limit=1))
    print(f"warm-up (first recorded query, this process)  {t * 1000:8.1f} ms")
    times = random_times(vault, n, 1)
    sel, live_n, split = [], [], []
    for when in times:
        # the whole live set is selected; --limit 1 keeps JSON building out of the figure
        dt, _ = timed(lambda w=when: v.as_of(w, recorded=True, limit=1))
        sel.append(dt)
        c = index.position(past.commit_at(past.point(when)).sha)  # type: ignore[union-attr]
        with no_gc():
            dt, live = timed(index.live, c, when)  # type: ignore[union-attr]
        split.append(dt)
        live_n.append(len(live))
    print(f"recorded asof --limit 1 (live set), warm    {fmt(sel)}   live entries at T: median {statistics.median(live_n):.0f}")
    print(f"    of which the index scan (live ids only) {fmt(split)}")
    t, _ = timed(lambda: v.as_of(last.date, QUERIES[0], recorded=True, limit=10))
    built = past._stored is not None and past._stored.store.analysed_in > 0
    how = "stored postings built: every version analysed, one-off" if built else "stored postings loaded"
    print(f"warm-up (first recorded QUERY at HEAD; {how}) {t * 1000:8.1f} ms")
    qs = [timed(lambda w=when, i=i: v.as_of(w, QUERIES[i % len(QUERIES)], recorded=True, limit=10))[0]
          for i, when in enumerate(times)]
    print(f"recorded asof T QUERY --limit 10, warm      {fmt(qs)}")
    full = [timed(lambda w=when: json.dumps(v.as_of(w, recorded=True)))[0] for when in times[:5]]
    print(f"recorded asof, all entries as JSON, warm    {fmt(full)}")
    past.close()


BUILD = """
import sys, time
from memvault.history.store import RecordedStore
from memvault.vault import Vault
v = Vault.open(sys.argv[1])
p = v.past
store = RecordedStore(p.loader, p.require_repo(), v.config)
t = time.perf_counter()
store.open()
print(time.perf_counter() - t, store.resumed, store.built_in is not None)
"""


def cache_size(vault: Path) -> None:
    import sqlite3

    path = vault / ".memvault" / "history.sqlite"
    with sqlite3.connect(path) as db:
        try:
            rows = db.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC").fetchall()
        except sqlite3.Error:
            rows = []
    parts = ", ".join(f"{name} {size / 1e6:.1f} MB" for name, size in rows if size > 1e6)
    print(f".memvault/history.sqlite: {path.stat().st_size / 1e6:.1f} MB ({parts})")


def index_costs(vault: Path) -> None:
    """One-off costs of the precomputed index: a sweep from scratch (parse cache present),
    and resuming it after one more commit (in a clone)."""
    import sqlite3

    cache_size(vault)
    runs = []
    for _ in range(2):
        with sqlite3.connect(vault / ".memvault" / "history.sqlite") as db:
            db.execute("DELETE FROM recorded")
        out = subprocess.run([sys.executable, "-c", BUILD, str(vault)], capture_output=True, text=True, check=True)
        runs.append(float(out.stdout.split()[0]))
    print(f"index sweep from scratch (parse cache present), new process   {fmt(runs)}")
    with tempfile.TemporaryDirectory(prefix="mv-resume-") as tmp:
        clone = Path(tmp) / "v"
        subprocess.run(["git", "clone", "-q", "--no-local", str(vault), str(clone)], check=True)
        shutil.copytree(vault / ".memvault", clone / ".memvault", dirs_exist_ok=True)
        last = sorted((clone / "memory").rglob("*.md"))[-1]
        with open(last, "a") as fh:
            fh.write("\n## 23:59 - Belief\nOne more entry, committed after the index was built.\n")
        env = dict(os.environ, GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@example.com",
                   GIT_COMMITTER_NAME="b", GIT_COMMITTER_EMAIL="b@example.com")
        subprocess.run(["git", "commit", "-qam", "one more"], cwd=clone, check=True, env=env)
        out = subprocess.run([sys.executable, "-c", BUILD, str(clone)], capture_output=True, text=True, check=True)
        secs, resumed = float(out.stdout.split()[0]), out.stdout.split()[1]
        print(f"index resumed after one new commit (resumed={resumed}), new process   {secs * 1000:8.1f} ms")


COLD = """
import sys, time
t0 = time.perf_counter()
from memvault.vault import Vault
v = Vault.open(sys.argv[1])
t1 = time.perf_counter()
out = v.as_of(sys.argv[2], sys.argv[3] or None, recorded=True, limit=10 if sys.argv[3] else 1)
t2 = time.perf_counter()
print(t2 - t1, t2 - t0)
"""


def recorded_cold(vault: Path, n: int, *, drop_cache: bool, query: str = "") -> None:
    times = random_times(vault, n, 2)
    inner, whole = [], []
    for when in times:
        if drop_cache:
            shutil.rmtree(vault / ".memvault", ignore_errors=True)
        out = subprocess.run([sys.executable, "-c", COLD, str(vault), when.isoformat(), query],
                             capture_output=True, text=True, check=True).stdout.split()
        inner.append(float(out[0]))
        whole.append(float(out[1]))
    what = "no .memvault cache" if drop_cache else "disk cache present"
    label = f"QUERY {query!r} --limit 10" if query else "--limit 1"
    print(f"recorded asof cold ({what}, {label}), new process")
    print(f"    query only                              {fmt(inner)}")
    print(f"    imports + open + query                  {fmt(whole)}")


def event_time(vault: Path, n: int) -> None:
    from memvault.vault import Vault

    v = Vault.open(vault)
    t, tl = timed(lambda: v.timeline)
    print(f"event time: parse + timeline of {len(tl.events)} entries   {t * 1000:8.1f} ms (once per process)")  # type: ignore[attr-defined]
    t, _ = timed(lambda: v.past.spans)
    print(f"event time: span index build                  {t * 1000:8.1f} ms (once per process)")
    times = random_times(vault, n, 3)
    sel = [timed(lambda w=when: v.as_of(w, limit=1))[0] for when in times]
    print(f"event-time asof --limit 1 (live set), warm  {fmt(sel)}")
    t, _ = timed(lambda: v.as_of(times[0], QUERIES[0], limit=10))
    print(f"event time: first QUERY (index refresh/build) {t * 1000:8.1f} ms")
    qs = [timed(lambda w=when, i=i: v.as_of(w, QUERIES[i % len(QUERIES)], limit=10))[0] for i, when in enumerate(times)]
    print(f"event-time asof T QUERY --limit 10, warm    {fmt(qs)}")


def loose_vs_packed(vault: Path, n: int) -> None:
    with tempfile.TemporaryDirectory(prefix="mv-loose-") as tmp:
        clone = Path(tmp) / "v"
        subprocess.run(["git", "clone", "-q", "--no-local", str(vault), str(clone)], check=True)
        packs = list((clone / ".git" / "objects" / "pack").glob("*.pack"))
        for pack in packs:  # explode every pack into loose objects, as auto-commit leaves them
            moved = Path(tmp) / pack.name
            shutil.move(pack, moved)
            pack.with_suffix(".idx").unlink()
            with open(moved, "rb") as fh:
                subprocess.run(["git", "unpack-objects", "-q"], cwd=clone, stdin=fh, check=True)
        shutil.copytree(vault / ".memvault", clone / ".memvault", dirs_exist_ok=True)
        count = subprocess.run(["git", "count-objects"], cwd=clone, capture_output=True, text=True).stdout.strip()
        print(f"loose clone: {count}")
        toml = clone / "memvault.toml"
        base = toml.read_text()
        toml.write_text(base + "\n[history]\npack_loose = 0\n")
        recorded_cold(clone, n, drop_cache=False)
        toml.write_text(base)
        t, _ = timed(subprocess.run, [sys.executable, "-c", COLD, str(clone), "2030-01-01", ""], check=True, capture_output=True)
        count = subprocess.run(["git", "count-objects"], cwd=clone, capture_output=True, text=True).stdout.strip()
        print(f"first recorded query with packing on (repack -d included): {t * 1000:.0f} ms; after: {count}")
        recorded_cold(clone, n, drop_cache=False)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vault", default=os.path.join(tempfile.gettempdir(), "mv-hist-bench"))
    ap.add_argument("--events", type=int, default=100_000)
    ap.add_argument("--files", type=int, default=5_000)
    ap.add_argument("--commits", type=int, default=1_000)
    ap.add_argument("--queries", type=int, default=40)
    ap.add_argument("--cold", type=int, default=5, help="new processes per cold figure")
    ap.add_argument("--skip-loose", action="store_true")
    ap.add_argument("--only", choices=["warm", "index", "cold", "event", "loose"], help="run one part")
    args = ap.parse_args(argv)
    vault = ensure_vault(args)
    print(f"vault {vault}; machine: {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}")
    floors(vault)
    if args.only in (None, "warm"):
        recorded_warm(vault, args.queries)
    if args.only in (None, "index"):
        index_costs(vault)
    if args.only in (None, "cold"):
        recorded_cold(vault, args.cold, drop_cache=False)
        recorded_cold(vault, args.cold, drop_cache=False, query=QUERIES[1])
        recorded_cold(vault, 2, drop_cache=True)
    if args.only in (None, "event"):
        event_time(vault, args.queries)
    if args.only in (None, "loose") and not args.skip_loose:
        loose_vs_packed(vault, args.cold)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
