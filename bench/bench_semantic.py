"""Semantic search figures (issue 18), each beside a floor measured in the same run.

    python bench/bench_semantic.py /tmp/mv-100k-sem --copy /tmp/mv-100k          # the extra's model (auto)
    python bench/bench_semantic.py /tmp/mv-100k-sem --copy /tmp/mv-100k --model /tmp/sem/minilm
    python bench/bench_semantic.py /tmp/mv-sem-quick --quick --model /tmp/sem/minilm   # 2k entries, < 1 min

VAULT is changed: its memvault.toml gets `[semantic] model = DIR`, entries are appended to
two day logs, vectors are built. With --copy SRC it is first made a fresh copy of SRC (SRC
is never changed); with --quick it is made with bench/synth.py (2,000 entries, 100 files).
  - build: `memvault index` with `.memvault/vectors` deleted (every entry embedded; the
    lexical index is up to date), texts/s; floor: `memvault index --rebuild` with
    `[semantic] mode = "lexical"` (the lexical index from nothing). Then a semantic
    `--rebuild` (rows renumbered, vectors from the content-hash cache). Sizes on disk.
  - save -> searchable: a real `memvault watch --json` child; an entry with a fresh phrase is
    appended to a day log, this process waits for the watcher's `indexed` line naming the
    file, then runs `Index.search(phrase, mode="semantic")` until the entry is a hit (the
    watcher embeds before it says `indexed`). Floor: the same saves with a watcher of the same
    vault set to `[semantic] mode = "lexical"` and `mode="lexical"` searches.
  - warm queries: one Index kept open, model loaded; --queries queries of 2-3 words from
    entries, every other one paraphrased (topical words swapped for synonyms); hybrid,
    semantic and lexical of each query in turn; the query's encoding and the exact nearest
    rows alone too.
  - whole process: `python -m memvault search` hybrid vs --mode lexical vs `python -c pass`,
    --runs rounds after a warm-up, the three in turn each round.
  - profile of one whole-process hybrid search: `-X importtime` (heaviest imports) and
    cProfile (cumulative), printed.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import pstats
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from queue import Queue
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

MEMVAULT = [sys.executable, "-m", "memvault"]
META = re.compile(r"^[A-Z][A-Za-z-]*:")
# synth.py's topical words and what a person might say instead (the paraphrased queries)
SYNONYMS = {
    "deploy": "roll out", "server": "host machine", "database": "data store", "backup": "copy saved",
    "meeting": "call with the team", "client": "customer", "invoice": "bill", "budget": "spending plan",
    "report": "summary", "design": "layout", "review": "critique", "release": "new version",
    "migration": "move to the new system", "latency": "slowness", "dashboard": "overview page",
    "customer": "client", "ticket": "issue", "roadmap": "plan for the year", "hiring": "recruiting",
    "interview": "candidate talk", "security": "safety", "audit": "inspection", "password": "login secret",
    "coffee": "espresso", "lunch": "midday meal", "travel": "trip", "flight": "plane", "hotel": "lodging",
    "conference": "summit", "slides": "presentation", "paper": "article", "garden": "yard",
    "weekend": "saturday", "family": "relatives", "birthday": "anniversary", "gift": "present",
    "music": "songs", "guitar": "instrument", "running": "jogging", "marathon": "long race",
    "doctor": "physician", "dentist": "teeth appointment", "decided": "chose", "agreed": "settled on",
    "morning": "early hours", "evening": "night", "keyboard": "typing", "cache": "stored copies",
    "security audit": "safety inspection",
}
PHRASE_WORDS = (
    "amber harbour lantern orchard violet meadow copper falcon river quartz cedar lagoon maple "
    "thunder willow ember glacier saffron beacon canyon juniper marble nectar pebble tundra velvet"
).split()


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def summary(values: list[float]) -> str:
    return f"p50 {ms(statistics.median(values))}, p95 {ms(pct(values, 95))}"


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def du(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.exists() else 0


def mb(n: int) -> str:
    return f"{n / 1e6:.1f} MB"


# -- the vault -----------------------------------------------------------------------------


def prepare(root: Path, source: Path | None, events: int, files: int) -> None:
    if source is not None:
        if source.resolve() == root.resolve():
            raise SystemExit("--copy SRC must differ from VAULT (SRC is never changed)")
        if root.exists():
            shutil.rmtree(root)
        shutil.copytree(source, root, symlinks=True)
    elif not (root / "memvault.toml").exists():
        import synth

        synth.generate(root, events, files, seed=1)


def configure(root: Path, model: Any, mode: str) -> None:
    """memvault.toml with this run's [semantic] section (always the last section: ours)."""
    toml = root / "memvault.toml"
    base = toml.read_text(encoding="utf-8").split("\n# bench_semantic\n", 1)[0].rstrip("\n")
    toml.write_text(f'{base}\n\n# bench_semantic\n[semantic]\nmodel = "{model}"\nmode = "{mode}"\n',
                    encoding="utf-8")


def memvault(root: Path, *args: str) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run([*MEMVAULT, "--vault", str(root), *args], capture_output=True, text=True)
    took = time.perf_counter() - start
    if done.returncode:
        raise SystemExit(f"memvault {' '.join(args)} failed ({done.returncode}): {done.stderr[-2000:]}")
    return took, done.stdout


# -- 1. build ------------------------------------------------------------------------------


def build(root: Path, model: Any, limit: float | None) -> dict:
    configure(root, model, "lexical")
    lex_s, out = memvault(root, "index", "--rebuild", "--json")
    events = json.loads(out)["events_indexed"]
    print(f"floor: lexical index from nothing (`memvault index --rebuild`, [semantic] mode = \"lexical\"): "
          f"{lex_s:.1f}s for {events} entries")
    configure(root, model, "auto")
    shutil.rmtree(root / ".memvault" / "vectors", ignore_errors=True)
    if limit:
        return partial_build(root, events, lex_s, limit)
    sem_s, out = memvault(root, "index", "--json")
    rep = json.loads(out)["semantic"] or {}
    encoded, inner = rep.get("encoded", 0), rep.get("seconds", 0.0)
    print(f"full embedding build (`memvault index`, vectors deleted, lexical index up to date): {sem_s:.1f}s, "
          f"{encoded} texts encoded ({encoded / max(inner, 1e-9):.0f} texts/s in the sync, "
          f"{encoded / sem_s:.0f}/s whole command), {rep.get('vectors')} vectors; "
          f"{sem_s / lex_s:.1f}x the lexical build")
    re_s, out = memvault(root, "index", "--rebuild", "--json")
    rep2 = json.loads(out)["semantic"] or {}
    print(f"semantic `memvault index --rebuild` (warm content-hash cache): {re_s:.1f}s, encoded "
          f"{rep2.get('encoded')}, reused {rep2.get('reused')}; floor (lexical rebuild) {lex_s:.1f}s")
    vectors = root / ".memvault" / "vectors"
    total = du(vectors)
    cache = sum(p.stat().st_size for p in vectors.rglob("cache.sqlite*"))
    live = int(rep.get("vectors") or events)
    print(f"on disk: vectors folder {mb(total)} (cache.sqlite {mb(cache)}, live table {mb(total - cache)}); "
          f"{mb(int(total * 100_000 / max(live, 1)))} per 100k entries; lexical index "
          f"{mb(du(root / '.memvault' / 'index'))}")
    return {"events": events}


def partial_build(root: Path, events: int, lex_s: float, limit: float) -> dict:
    """`memvault index` stopped after `limit` seconds: texts/s from the vectors the cache holds
    then (it commits every 512), the whole build extrapolated. What it embedded stays cached."""
    import sqlite3

    start = time.perf_counter()
    proc = subprocess.Popen([*MEMVAULT, "--vault", str(root), "index", "--json"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        proc.wait(timeout=limit)
        finished = True
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
        finished = False
    took = time.perf_counter() - start
    caches = list((root / ".memvault" / "vectors").rglob("cache.sqlite"))
    conn = sqlite3.connect(caches[0])
    done = int(conn.execute("SELECT count(*) FROM vec").fetchone()[0])
    conn.close()
    rate = max(done, 1) / took  # nothing committed yet: a floor of one text
    print(f"full embedding build (`memvault index`, vectors deleted), {'finished' if finished else 'stopped'} after "
          f"{took:.0f}s: {done} of {events} texts embedded, {rate:.1f} texts/s (model load included); "
          f"whole build at that rate {events / rate / 60:.0f} min = {events / rate / lex_s:.0f}x the lexical build; "
          f"cache.sqlite {mb(caches[0].stat().st_size)} = {caches[0].stat().st_size / max(done, 1):.0f} bytes a vector")
    return {"events": events}


def scale(dim: int, rows: int, n: int) -> None:
    """Exact nearest-rows search over `rows` random unit vectors in a real VectorStore (no model:
    the cost depends on rows and dim only): View.top alone, and store.view() + top as a search
    does it each time."""
    import tempfile

    import numpy as np

    from memvault.semantic.vectors import HASH_BYTES, State, VectorStore

    rng = np.random.default_rng(1)
    with tempfile.TemporaryDirectory() as tmp:
        store = VectorStore(Path(tmp), "bench")
        with store.writing():
            st = State(index_id="bench", dim=dim, model="bench")
            for start in range(0, rows, 10_000):
                m = rng.standard_normal((min(10_000, rows - start), dim)).astype(np.float32)
                m /= np.linalg.norm(m, axis=1, keepdims=True)
                ids = list(range(start + 1, start + 1 + len(m)))
                st = store.append(st, ids, [i.to_bytes(HASH_BYTES, "big") for i in ids], m.tobytes(), ids[-1])
        qs = rng.standard_normal((n, dim)).astype(np.float32)
        qs /= np.linalg.norm(qs, axis=1, keepdims=True)
        view = store.view()
        view.top(qs[0], 100)
        alone, each = [], []
        for q in qs:
            t = time.perf_counter()
            view.top(q, 100)
            alone.append(time.perf_counter() - t)
            t = time.perf_counter()
            store.view().top(q, 100)
            each.append(time.perf_counter() - t)
        print(f"exact top-100 over {rows} vectors of {dim} dims (memory-mapped, random): View.top {summary(alone)}; "
              f"store.view() + top (a search's way) {summary(each)}; live table {mb(du(Path(tmp)))}")


# -- 2. save -> searchable -----------------------------------------------------------------


class Child:
    """`memvault watch --json` and its log lines."""

    def __init__(self, root: Path):
        self.started = time.perf_counter()
        self.proc = subprocess.Popen([*MEMVAULT, "--vault", str(root), "watch", "--json"], stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True, env=dict(os.environ, PYTHONUNBUFFERED="1"))
        self.lines: Queue[dict] = Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if line.strip():
                self.lines.put(json.loads(line))

    def wait_for(self, event: str, path: str | None = None, timeout: float = 600) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            rec = self.lines.get(timeout=max(0.01, deadline - time.monotonic()))
            if rec["event"] == event and (path is None or path in rec.get("paths", [])):
                return rec

    def stop(self) -> int:
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout=120)


def phrases(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    out: set[str] = set()
    while len(out) < n:
        out.add(" ".join(rng.sample(PHRASE_WORDS, 5)))
    return sorted(out)


def saves(root: Path, model: Any, mode: str, n: int, day: str) -> list[float]:
    """Save -> searchable times (see the module docstring); `mode` is both the vault's
    [semantic] mode for the watcher and the search's mode."""
    from memvault.search.index import open_index
    from memvault.vault import Vault

    configure(root, model, "lexical" if mode == "lexical" else "auto")
    target = root / "memory" / day[:4] / f"{day}.md"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(f"# {day}\n", encoding="utf-8")
    rel = target.relative_to(root).as_posix()
    vault = Vault.open(root)
    index = open_index(vault)
    index.update([rel])
    index.search(phrases(1, 99)[0], mode=mode, record_access=False, retention=False)  # model loaded, warm
    child = Child(root)
    child.wait_for("ready")
    times = []
    for i, phrase in enumerate(phrases(n, int(day.replace("-", "")))):
        first = len(target.read_text(encoding="utf-8").splitlines()) + 1
        hh, mm = divmod(6 * 60 + i, 60)
        entry = f"\n## {hh:02d}:{mm:02d} - Observation\nThe {phrase} note {i} was written down.\n"
        start = time.perf_counter()
        with target.open("a", encoding="utf-8") as fh:  # an agent's append
            fh.write(entry)
        child.wait_for("indexed", rel, timeout=60)
        deadline = start + 60
        while not any(h.file == rel and first <= h.line <= first + 3 for h in
                      index.search(f"{phrase} note {i}", mode=mode, record_access=False, retention=False)):
            if time.perf_counter() > deadline:
                raise SystemExit(f"{mode}: the entry with {phrase!r} never became searchable")
            time.sleep(0.002)
        times.append(time.perf_counter() - start)
        time.sleep(0.05)
    child.stop()
    index.close()
    vault.close()
    return times


# -- 3. warm queries -----------------------------------------------------------------------


def queries(root: Path, n: int, seed: int = 7) -> list[str]:
    """Two or three words of an entry; every other query paraphrased: an entry's topical words
    said otherwise (a search by meaning's case), with one of its other words kept."""
    rng = random.Random(seed)
    files = sorted((root / "memory").rglob("*.md"))
    out: list[str] = []
    while len(out) < n:
        text = rng.choice(files).read_text(encoding="utf-8")
        body = [line for line in text.splitlines() if line and not line.startswith("#") and not META.match(line)]
        if not body:
            continue
        words = [w.lower() for w in re.findall(r"[A-Za-z]{5,}", rng.choice(body))]
        if len(out) % 2:
            topical = [SYNONYMS[w] for w in words if w in SYNONYMS]
            if topical:
                others = [w for w in words if w not in SYNONYMS]
                out.append(" ".join(topical[:2] + others[:1]))
        elif len(words) >= 3:
            out.append(" ".join(rng.sample(words, rng.choice((2, 3)))))
    return out


def warm(root: Path, model: Any, qs: list[str]) -> None:
    from memvault.search.index import open_index
    from memvault.vault import Vault

    configure(root, model, "auto")
    vault = Vault.open(root)
    index = open_index(vault, for_search=True)
    for q in qs[:5]:  # model loaded, pages mapped
        for mode in ("hybrid", "lexical"):
            index.search(q, mode=mode, record_access=False, retention=False)
    sem = index.semantic_side()
    got: dict[str, list[float]] = {"hybrid": [], "semantic": [], "lexical": [], "encode": [], "nearest": []}
    for q in qs:
        for mode in ("hybrid", "semantic", "lexical"):
            start = time.perf_counter()
            index.search(q, mode=mode, record_access=False, retention=False)
            got[mode].append(time.perf_counter() - start)
        start = time.perf_counter()
        vec = sem.query_vector(q)
        got["encode"].append(time.perf_counter() - start)
        start = time.perf_counter()
        sem.nearest(vec, 100)
        got["nearest"].append(time.perf_counter() - start)
    print(f"warm queries, one Index open, n={len(qs)} (half paraphrased), limit 10, no retention/recording:")
    print(f"  hybrid   {summary(got['hybrid'])}  (target p95 <= 30 ms)")
    print(f"  semantic {summary(got['semantic'])}")
    print(f"  floor: lexical {summary(got['lexical'])}")
    print(f"  parts: query encoding {summary(got['encode'])}; exact top-100 over "
          f"{sem.store.state().live} vectors {summary(got['nearest'])}")
    index.close()
    vault.close()


# -- 4. whole process and its profile ------------------------------------------------------


def whole_process(root: Path, qs: list[str], runs: int) -> None:
    cmds = {
        "hybrid": lambda q: [*MEMVAULT, "--vault", str(root), "search", "--mode", "hybrid", q],
        "lexical": lambda q: [*MEMVAULT, "--vault", str(root), "search", "--mode", "lexical", q],
        "python -c pass": lambda q: [sys.executable, "-c", "pass"],
    }
    times: dict[str, list[float]] = {k: [] for k in cmds}
    for r in range(runs + 1):
        q = qs[r % len(qs)]
        for name, cmd in cmds.items():
            start = time.perf_counter()
            done = subprocess.run(cmd(q), capture_output=True)
            took = time.perf_counter() - start
            if done.returncode:
                raise SystemExit(f"{cmd(q)} failed: {done.stderr.decode()[-1000:]}")
            if r:  # the first round warms the page cache
                times[name].append(took)
    child = Child(root)  # a running watcher answers the semantic side (.memvault/semantic.sock)
    child.wait_for("ready")
    times["hybrid, watcher running"] = []
    for r in range(runs + 1):
        q = qs[(r + runs + 1) % len(qs)] + " again"  # not a query the cache holds
        start = time.perf_counter()
        done = subprocess.run(cmds["hybrid"](q), capture_output=True)
        if done.returncode:
            raise SystemExit(f"hybrid beside the watcher failed: {done.stderr.decode()[-1000:]}")
        if r:
            times["hybrid, watcher running"].append(time.perf_counter() - start)
    child.stop()
    print(f"whole-process `memvault search`, {runs} runs each after a warm-up, in turn (wall):")
    print(f"  hybrid {summary(times['hybrid'])}, min {ms(min(times['hybrid']))}  (target <= 400 ms)")
    print(f"  hybrid with a watcher running {summary(times['hybrid, watcher running'])}, "
          f"min {ms(min(times['hybrid, watcher running']))}  (target <= 400 ms)")
    print(f"  floor: --mode lexical {summary(times['lexical'])}, min {ms(min(times['lexical']))}; "
          f"python -c pass {summary(times['python -c pass'])}")


PROFILED = r"search_vault|index/core.py.*\(search\)|semantic|onnxruntime|tokenizers|memmap|encoder|vectors.py|rank|said_hits"


def profile(root: Path, q: str, top: int) -> None:
    args = ["--vault", str(root), "search", "--mode", "hybrid", q]
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "memvault", *args], capture_output=True, text=True)
    rows = []
    for line in done.stderr.splitlines():
        m = re.match(r"import time:\s+(\d+) \|\s+(\d+) \| (\s*)(\S+)", line)
        if m:
            rows.append((int(m.group(2)), int(m.group(1)), len(m.group(3)) // 2, m.group(4)))
    total = sum(c for c, _, depth, _ in rows if depth == 0)
    print(f"imports of one hybrid search (-X importtime): {total / 1000:.0f} ms in all; the heaviest top-level ones:")
    for cum, _self, _, name in sorted((r for r in rows if r[2] == 0), reverse=True)[:top]:
        print(f"  {cum / 1000:7.1f} ms  {name}")
    out = Path(f"/tmp/bench_semantic.{os.getpid()}.prof")
    subprocess.run([sys.executable, "-m", "cProfile", "-o", str(out), "-m", "memvault", *args],
                   capture_output=True, check=True)
    buf = io.StringIO()
    stats = pstats.Stats(str(out), stream=buf)
    stats.sort_stats("cumulative").print_stats(PROFILED, top * 2)
    print("cProfile of the same search (cumulative seconds; the search, the semantic side, the runtimes):")
    for line in buf.getvalue().splitlines():
        if re.match(r"\s+\d", line):
            print("  " + re.sub(r"\S*/(site-packages|memvault)/", "", line.strip()))
    out.unlink(missing_ok=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("vault", type=Path, help="the vault measured (changed: see above)")
    ap.add_argument("--model", default="auto",
                    help="[semantic] model: a folder (model.onnx + tokenizer.json), package:NAME, or auto (default: "
                         "the model the extra installs)")
    ap.add_argument("--copy", type=Path, metavar="SRC", help="make VAULT a fresh copy of SRC first")
    ap.add_argument("--quick", action="store_true", help="a 2k-entry vault, fewer saves/queries/runs")
    ap.add_argument("--events", type=int, help="entries of a vault made with synth.py when VAULT has none "
                    "(default 100000; --quick 2000)")
    ap.add_argument("--files", type=int, help="its day logs (default events/20)")
    ap.add_argument("--build-seconds", type=float, help="stop the embedding build after this long and "
                    "extrapolate (the later parts then need vectors: give --skip)")
    ap.add_argument("--scale-rows", type=int, help="rows of the nearest-rows scale test (default 100000; "
                    "--quick 20000; 0: none)")
    ap.add_argument("--saves", type=int, help="saves per watcher (default 40; --quick 10)")
    ap.add_argument("--queries", type=int, help="warm queries (default 200; --quick 40)")
    ap.add_argument("--runs", type=int, help="whole-process runs (default 15; --quick 3)")
    ap.add_argument("--skip", default="", help="comma-separated parts to skip: build,saves,warm,process,profile,scale")
    args = ap.parse_args(argv)
    n_saves = args.saves or (10 if args.quick else 40)
    n_queries = args.queries or (40 if args.quick else 200)
    runs = args.runs or (3 if args.quick else 15)
    skip = set(filter(None, args.skip.split(",")))
    root = args.vault.resolve()
    model: Any = args.model if args.model == "auto" or args.model.startswith("package:") else Path(args.model).resolve()

    t0 = time.perf_counter()
    print(f"load average at start: {load()}; {os.cpu_count()} cores")
    events = args.events or (2000 if args.quick else 100_000)
    prepare(root, args.copy, events, args.files or max(1, events // 20))
    print(f"vault {root}, model {model}")
    if "build" not in skip:
        build(root, model, args.build_seconds)
    if "saves" not in skip:
        floor = saves(root, model, "lexical", n_saves, "2026-03-02")
        sem = saves(root, model, "semantic", n_saves, "2026-03-01")
        print(f"save -> searchable with `memvault watch` running, n={len(sem)}: semantic {summary(sem)}, "
              f"max {ms(max(sem))}  (target p95 <= 300 ms)")
        print(f"  floor: save -> lexically searchable, watcher with [semantic] mode = \"lexical\": {summary(floor)}; "
              f"semantic adds {ms(statistics.median(sem) - statistics.median(floor))} at p50")
    configure(root, model, "auto")
    qs = queries(root, n_queries)
    if "warm" not in skip:
        warm(root, model, qs)
    if "process" not in skip:
        whole_process(root, qs, runs)
    if "profile" not in skip:
        profile(root, qs[1], 12)
    rows = args.scale_rows if args.scale_rows is not None else (20_000 if args.quick else 100_000)
    if rows and "scale" not in skip:
        scale(384, rows, n_queries)
    print(f"load average at end: {load()}; {time.perf_counter() - t0:.0f}s in all")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
