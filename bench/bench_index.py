"""Index and search figures on the synthetic vault, each beside a raw floor from the same run.

    python bench/bench_index.py                       # 100k events / 5,000 files, sqlite
    python bench/bench_index.py --backend whoosh
    python bench/bench_index.py --events 20000 --files 1000

Generates the vault with bench/synth.py (seed 1) under /tmp unless --vault is given, copies it
(the incremental part edits files), then prints:
- full rebuild (wall and CPU) vs the floor: read every file and insert each entry's raw text
  into a bare FTS5 table;
- incremental update of one changed file plus the query that finds it, p50/p95, through
  `update([path])` (what the watcher calls) and `update()` (stat walk), vs the floor: one
  FTS5 delete + insert + MATCH;
- warm search p50/p95 (wall and CPU) over 200 queries (100 two-word, 100 five-word) vs the
  planned FTS5 query the search runs underneath and the plain FTS5 `MATCH <words OR-ed>
  ORDER BY bm25() LIMIT` floor; the same search with the common-terms cutoff off
  (`score_limit` 0), and how many of the top 10 the two share;
- the whole `memvault search` process vs `python -c pass`, with memvault's bytecode cached
  (as installed) and without (a checkout under PYTHONDONTWRITEBYTECODE=1);
- index size on disk vs the Markdown, peak RSS of a rebuild and of a search process.
The machine is shared: CPU time is printed next to wall time where it matters.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import random
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def loadavg() -> str:
    return Path("/proc/loadavg").read_text().split()[0]


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def ms(x: float) -> str:
    return f"{1000 * x:.1f} ms"


def make_vault(args) -> Path:
    src = args.vault or Path(f"/tmp/memvault-synth-{args.events}-{args.files}-s1")
    if not (src / "memvault.toml").exists():
        subprocess.run([sys.executable, str(HERE / "synth.py"), str(src), "--events", str(args.events),
                        "--files", str(args.files), "--seed", "1"], check=True)
    return src


def run_child(code: str, *argv: str) -> tuple[str, int]:
    """Run python code in a child; return its stdout and its peak RSS in kB."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    proc = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return proc.stdout, max(after, before)


REBUILD = """
import sys, time, resource
from memvault.vault import Vault
from memvault.search.index import open_index
t, c = time.perf_counter(), time.process_time()
r = open_index(Vault.open(sys.argv[1]), sys.argv[2]).rebuild()
print(time.perf_counter() - t, time.process_time() - c, r.events_indexed,
      resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""

FLOOR_BUILD = """
import os, sys, time, sqlite3
from memvault.layout import iter_markdown
root = sys.argv[1]
t, c = time.perf_counter(), time.process_time()
db = sys.argv[2]
conn = sqlite3.connect(db)
conn.execute("PRAGMA journal_mode=OFF"); conn.execute("PRAGMA synchronous=OFF")
conn.execute("CREATE VIRTUAL TABLE fts USING fts5(body)")
conn.execute("BEGIN")
for rel in iter_markdown(__import__('pathlib').Path(root)):
    text = open(os.path.join(root, rel), encoding="utf-8").read()
    conn.executemany("INSERT INTO fts (body) VALUES (?)", [(p,) for p in text.split("\\n## ")[1:]])
conn.execute("COMMIT")
print(time.perf_counter() - t, time.process_time() - c)
"""


def bench_rebuild(vault: Path, backend: str, work: Path) -> None:
    out, _ = run_child(REBUILD, str(vault), backend)
    wall, cpu, n, rss = out.split()
    floor, _ = run_child(FLOOR_BUILD, str(vault), str(work / "floor.db"))
    fwall, fcpu = map(float, floor.split())
    print(f"full rebuild ({n} events): {float(wall):.2f} s wall, {float(cpu):.2f} s CPU; "
          f"floor (read + raw FTS5 insert) {fwall:.2f} s wall, {fcpu:.2f} s CPU; "
          f"ratio {float(wall) / fwall:.1f}x wall, {float(cpu) / fcpu:.1f}x CPU")
    print(f"peak RSS of the rebuild process: {int(rss) / 1024:.0f} MB")
    md = sum(p.stat().st_size for p in vault.rglob("*.md"))
    from memvault.search.index import open_index
    from memvault.vault import Vault

    with open_index(Vault.open(vault), backend) as index:
        size = index.size_bytes()
    print(f"index size: {size / 1048576:.1f} MB for {md / 1048576:.1f} MB of Markdown ({size / md:.1f}x)")


def queries(n: int, seed: int = 7) -> list[str]:
    from synth import CUM_WEIGHTS, VOCAB  # the generator's vocabulary and word frequencies

    rng = random.Random(seed)
    # people search for words their notes use: draw query words with the notes' frequencies
    return [" ".join(rng.choices(VOCAB, cum_weights=CUM_WEIGHTS, k=2 if i % 2 == 0 else 5)) for i in range(n)]


def bench_search(vault: Path, backend: str) -> None:
    from memvault.search.index import open_index
    from memvault.search.plan import EXHAUSTIVE
    from memvault.search.textproc import parse_query
    from memvault.vault import Vault

    qs = queries(200)
    with open_index(Vault.open(vault), backend) as index:
        index.ensure()
        conn, engine = index._open()
        for q in qs[:20]:  # warm the page cache and the analyzer
            index.search(q, record_access=False)
        planned = index.weights
        runs = {}
        for label, weights in (("planned", planned), ("exhaustive", dataclasses.replace(planned, score_limit=0))):
            index.weights = weights
            runs[label] = search_run(index, qs)
        index.weights = planned
        floor = {"planned": [], "exhaustive": []}
        for q in qs:
            pq = parse_query(q)
            for label, plan in (("planned", index._plan(conn, pq)), ("exhaustive", EXHAUSTIVE)):
                t = time.perf_counter()
                engine.search(pq, planned.candidates, plan)
                floor[label].append(time.perf_counter() - t)
    wall, cpu, got = runs["planned"]
    for k in (2, 5):
        sel = [t for q, t in zip(qs, wall, strict=True) if len(q.split()) == k]
        print(f"search, {k}-word queries (n={len(sel)}, warm): p50 {ms(pct(sel, 50))}, p95 {ms(pct(sel, 95))}")
    print(f"search, all 200: p50 {ms(pct(wall, 50))}, p95 {ms(pct(wall, 95))} wall; "
          f"p50 {ms(pct(cpu, 50))}, p95 {ms(pct(cpu, 95))} CPU (score_limit {planned.score_limit})")
    plain = (f"FTS5 `MATCH <all words OR-ed> ORDER BY bm25() LIMIT {planned.candidates}`" if backend == "sqlite"
             else f"{backend} query of all words OR-ed")
    print(f"  underneath, the planned {backend} query: p50 {ms(pct(floor['planned'], 50))}, "
          f"p95 {ms(pct(floor['planned'], 95))} (overhead p50 "
          f"{ms(statistics.median(wall) - statistics.median(floor['planned']))})")
    print(f"  floor, the plain {plain}: p50 {ms(pct(floor['exhaustive'], 50))}, "
          f"p95 {ms(pct(floor['exhaustive'], 95))}")
    xwall, _, xgot = runs["exhaustive"]
    same = [len(set(a) & set(b)) / max(1, len(b)) for a, b in zip(got, xgot, strict=True)]
    print(f"  exhaustive search (score_limit 0): p50 {ms(pct(xwall, 50))}, p95 {ms(pct(xwall, 95))}; "
          f"top-10 shared with it: mean {sum(same) / len(same):.3f}, identical sets "
          f"{sum(x == 1 for x in same)}/{len(same)}, worst {min(same):.1f}")


def search_run(index, qs: list[str]) -> tuple[list[float], list[float], list[list[str]]]:
    wall, cpu, got = [], [], []
    for q in qs:
        t, c = time.perf_counter(), time.process_time()
        hits = index.search(q, record_access=False)
        wall.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
        got.append([h.id for h in hits])
    return wall, cpu, got


def bench_incremental(vault: Path, backend: str, rounds: int = 40) -> None:
    from memvault.search.index import open_index
    from memvault.vault import Vault

    files = sorted(vault.glob("memory/*/*.md"))
    rng = random.Random(3)
    by_path, by_walk = [], []
    with open_index(Vault.open(vault), backend) as index:
        index.update()
        for i in range(rounds):
            for mode, bucket in (("paths", by_path), ("walk", by_walk)):
                path = rng.choice(files)
                word = f"zq{mode}{i}x"
                text = path.read_text()
                path.write_text(text + f"\n## 23:5{i % 10} - Observation\nUnique {word} marker\n")
                rel = path.relative_to(vault).as_posix()
                t = time.perf_counter()
                index.update([rel]) if mode == "paths" else index.update()
                hits = index.search(word, record_access=False, limit=1)
                bucket.append(time.perf_counter() - t)
                assert hits and hits[0].file == rel, (word, hits)
                path.write_text(text)
                index.update([rel])
        conn, _ = index._open()
    floor = raw_update_floor(index.db_path, rounds) if backend == "sqlite" else []
    print(f"incremental update of one file + the query that finds it (n={rounds}): "
          f"update([path]) p50 {ms(pct(by_path, 50))}, p95 {ms(pct(by_path, 95))}; "
          f"update() with stat walk p50 {ms(pct(by_walk, 50))}, p95 {ms(pct(by_walk, 95))}")
    if floor:
        print(f"  floor (raw FTS5 delete + insert + commit + MATCH in the same database): "
              f"p50 {ms(pct(floor, 50))}, p95 {ms(pct(floor, 95))}")


def raw_update_floor(db: Path, rounds: int) -> list[float]:
    conn = sqlite3.connect(db, isolation_level=None)
    out = []
    for i in range(rounds):
        t = time.perf_counter()
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("INSERT INTO fts (rowid, title, body, tags, extra, context) VALUES (?, '', ?, '', '', '')",
                     (10**9 + i, f"floor{i} marker"))
        conn.execute("INSERT INTO fts (fts, rowid, title, body, tags, extra, context) "
                     "VALUES ('delete', ?, '', ?, '', '', '')", (10**9 + i, f"floor{i} marker"))
        conn.execute("COMMIT")
        conn.execute("SELECT rowid FROM fts WHERE fts MATCH ?", (f"floor{i}",)).fetchall()
        out.append(time.perf_counter() - t)
    conn.close()
    return out


SEARCH_RSS = """
import atexit, resource, sys
atexit.register(lambda: sys.stderr.write(f"RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}\\n"))
from memvault.cli import main
sys.argv = ["memvault", *sys.argv[1:]]
main()
"""


def bench_process(vault: Path, backend: str, n: int = 15) -> None:
    rare = [f"zqnothing{i} marker" for i in range(n)]
    # An installed package has its modules compiled to bytecode; a checkout run with
    # PYTHONDONTWRITEBYTECODE=1 (as on this machine) compiles memvault's modules in every
    # process. Both, the second from a copy of the package without a bytecode cache.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run(["memvault", "--vault", str(vault), "search", "warm"], check=True, capture_output=True, env=env)
    fresh = Path(tempfile.mkdtemp(prefix="memvault-nopyc-"))
    shutil.copytree(HERE.parent / "memvault", fresh / "memvault", ignore=shutil.ignore_patterns("__pycache__"))
    uncached = [sys.executable, "-B", "-c", f"import sys; sys.path.insert(0, {str(fresh)!r}); "
                "from memvault.cli import main; sys.argv[0] = 'memvault'; main()"]
    variants = {"bytecode cached": ["memvault"], "no bytecode cache": uncached}
    for label, qs in (("synthetic 2/5-word", queries(n, seed=11)), ("rare-word", rare)):
        times: dict[str, list[float]] = {v: [] for v in variants}
        floor = []
        for q in qs:  # the variants take turns, so the machine's load falls on both alike
            for variant, command in variants.items():
                t = time.perf_counter()
                subprocess.run([*command, "--vault", str(vault), "search", "--backend", backend, *q.split()],
                               check=True, capture_output=True, env=env)
                times[variant].append(time.perf_counter() - t)
            t = time.perf_counter()
            subprocess.run([sys.executable, "-c", "pass"], check=True, env=env)
            floor.append(time.perf_counter() - t)
        for variant, got in times.items():
            print(f"whole `memvault search` process, {label} queries (n={n}), {variant}: "
                  f"p50 {ms(pct(got, 50))}, p95 {ms(pct(got, 95))}; floor `python -c pass` p50 {ms(pct(floor, 50))}")
    shutil.rmtree(fresh, ignore_errors=True)
    proc = subprocess.run([sys.executable, "-c", SEARCH_RSS, "--vault", str(vault), "search", "--backend",
                           backend, *queries(1, seed=5)[0].split()], capture_output=True, text=True, check=True)
    rss = int(proc.stderr.split("RSS ")[-1].split()[0])
    print(f"peak RSS of a search process: {rss / 1024:.0f} MB")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--backend", default="sqlite")
    ap.add_argument("--events", type=int, default=100_000)
    ap.add_argument("--files", type=int, default=5_000)
    ap.add_argument("--vault", type=Path)
    args = ap.parse_args(argv)
    src = make_vault(args)
    with tempfile.TemporaryDirectory(prefix="memvault-bench-") as tmp:
        work = Path(tmp)
        vault = work / "vault"
        shutil.copytree(src, vault, ignore=shutil.ignore_patterns(".memvault", ".git"))
        print(f"vault: {args.events} events in {args.files} files (copy of {src}); backend {args.backend}; "
              f"load average {loadavg()}")
        bench_rebuild(vault, args.backend, work)
        bench_search(vault, args.backend)
        bench_incremental(vault, args.backend)
        bench_process(vault, args.backend)
        print(f"load average at the end: {loadavg()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
