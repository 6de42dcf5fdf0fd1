"""Watcher figures on a synthetic vault: save -> searchable latency, a burst, watcher RSS.

    python bench/bench_watch.py                      # 100k events in 5,000 files under /tmp
    python bench/bench_watch.py --events 20000 --files 1000 --saves 50

Runs `memvault watch --json` as a child process (as people run it), writes files from this
process and polls the index with searches from here, so every figure is end to end:
  - latency: append an entry with a fresh word to a daily log (alternately in place and
    write-temp-then-rename), time until `Index.search` finds it; p50/p95 over --saves saves,
    default debounce. Floor, same run, no watcher: the same save followed directly by
    `Index.update([path])` and the search (what the index costs on its own).
  - burst: --burst-writes writes spread evenly over one second across --burst-files files;
    time from the last write until every file's indexed hash equals the file's, then a full
    comparison of the index against a fresh parse of the vault; update batches counted from
    the watcher's log.
  - RSS of the watcher process (VmRSS now, VmHWM peak) after start, latency and burst.
Generated vaults live under /tmp and are reused between runs (never committed).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import queue
import signal
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def make_vault(path: Path, events: int, files: int) -> None:
    if (path / "memvault.toml").exists():
        return
    import synth

    synth.generate(path, events, files, seed=1)


class Child:
    """The watcher process and its JSON log lines."""

    def __init__(self, root: Path, *args: str):
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "memvault", "--vault", str(root), "watch", "--json", *args],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=dict(os.environ, PYTHONUNBUFFERED="1"))
        self.lines: queue.Queue[dict] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            if line.strip():
                self.lines.put(json.loads(line))

    def wait_for(self, event: str, timeout: float = 600) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            rec = self.lines.get(timeout=max(0.01, deadline - time.monotonic()))
            if rec["event"] == event:
                return rec

    def drain(self) -> list[dict]:
        out = []
        while not self.lines.empty():
            out.append(self.lines.get())
        return out

    def rss(self) -> tuple[float, float]:
        fields = dict(line.split(":", 1) for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines()
                      if ":" in line)
        return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024

    def cpu_seconds(self) -> float:
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self) -> int:
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout=120)


def save(path: Path, text: str, atomic: bool) -> None:
    """Write the whole file, in place or as temp-file-then-rename."""
    if atomic:
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    else:
        path.write_text(text, encoding="utf-8")


def until_found(index, word: str, timeout: float = 30.0) -> float:
    deadline = time.perf_counter() + timeout
    while time.perf_counter() < deadline:
        if index.search(word, limit=1, record_access=False):
            return time.perf_counter()
        time.sleep(0.001)
    raise SystemExit(f"{word} never became searchable")


def entry_text(n: int, word: str) -> str:
    hh, mm = divmod(n % 1440, 60)
    return f"\n## {hh:02d}:{mm:02d} - Observation\nBenchmark save {word} appended.\n"


def latency(root: Path, index, saves: int, mode: str, tag: str,
            child: Child | None = None) -> tuple[list[float], list[float]]:
    """Save -> searchable times, split by how the file was saved (in place, temp+rename).

    mode "edit": a daily log of 20 entries (the synthetic vault's size) is saved with one
    entry's text changed, as a person editing it would. Mode "append": an entry is added
    to a log that grows from empty to `saves` entries, as an agent logging all day would.
    Without `child` the index is updated directly after each save (the floor). With a
    watcher this process blocks on the watcher's log until it reports the file indexed,
    then searches (polling the index in a tight loop instead would steal a core from the
    watcher on a 2-core machine and measure the poller)."""
    target = root / "memory" / "2026" / ("2026-03-01.md" if mode == "append" else "2026-03-02.md")
    target.parent.mkdir(parents=True, exist_ok=True)
    base = [entry_text(n * 37, f"stable{n}") for n in range(20)]
    text = f"# {target.stem}\n" + ("" if mode == "append" else "".join(base))
    target.write_text(text)
    rel = target.relative_to(root).as_posix()
    index.update([rel])
    time.sleep(0.2)
    in_place, atomic = [], []
    for i in range(saves):
        word = f"zq{tag}{mode[0]}{os.getpid()}n{i:04d}x"
        if mode == "append":
            text += entry_text(i, word)
        else:
            edited = list(base)
            edited[i % 20] = entry_text((i % 20) * 37, word)
            text = f"# {target.stem}\n" + "".join(edited)
        start = time.perf_counter()
        save(target, text, atomic=bool(i % 2))
        if child is None:
            index.update([rel])
        else:
            while rel not in child.wait_for("indexed", timeout=30).get("paths", []):
                pass
        found = until_found(index, word)
        (atomic if i % 2 else in_place).append(found - start)
        time.sleep(0.02)
    return in_place, atomic


def summary(values: list[float]) -> str:
    return f"p50 {ms(statistics.median(values))}, p95 {ms(pct(values, 95))}"


def file_hashes_match(index, root: Path, paths: list[Path]) -> bool:
    states = index.indexed_files()
    for p in paths:
        rel = p.relative_to(root).as_posix()
        st = states.get(rel)
        if st is None or st.sha256 != hashlib.sha256(p.read_bytes()).hexdigest():
            return False
    return True


def index_equals_fresh_parse(root: Path) -> bool:
    from memvault.search.index import open_index, store
    from memvault.vault import Vault

    vault = Vault.open(root)
    with open_index(vault) as index:
        conn = store.connect(index.db_path)
        got = sorted((e.file, e.line, e.id, e.content) for _, e in store.load_events(conn))
        conn.close()
    want = sorted((e.file, e.line, e.id, e.content) for f in vault.files.values() for e in f.events)
    return got == want


def burst(root: Path, index, child: Child, n_files: int, writes: int) -> dict:
    files = [root / "memory" / "2030" / f"2030-01-{1 + i % 28:02d}.md" if i < 28 else
             root / "memory" / "2030" / f"2030-{2 + (i - 28) // 28:02d}-{1 + (i - 28) % 28:02d}.md"
             for i in range(n_files)]
    files[0].parent.mkdir(parents=True, exist_ok=True)
    bodies = {p: f"# {p.stem}\n" for p in files}
    child.drain()
    start = time.perf_counter()
    for k in range(writes):
        p = files[k % n_files]
        bodies[p] += entry_text(k // n_files, f"burst{k}")
        p.write_text(bodies[p])
        delay = start + (k + 1) / writes - time.perf_counter()  # spread over one second
        if delay > 0:
            time.sleep(delay)
    last = time.perf_counter()
    while not file_hashes_match(index, root, files):
        time.sleep(0.005)
        if time.perf_counter() - last > 120:
            raise SystemExit("burst never settled")
    settled = time.perf_counter()
    time.sleep(0.3)
    batches = [r for r in child.drain() if r["event"] == "indexed"]
    return {"write_seconds": last - start, "settle": settled - last, "batches": len(batches),
            "file_updates": sum(len(r.get("paths", [])) for r in batches), "equal": index_equals_fresh_parse(root)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vault", type=Path, help="default: /tmp/mv-watch-<events>")
    ap.add_argument("--events", type=int, default=100_000)
    ap.add_argument("--files", type=int, default=5_000)
    ap.add_argument("--saves", type=int, default=200)
    ap.add_argument("--floor-saves", type=int, help="default: as many as --saves")
    ap.add_argument("--idle", type=float, default=20.0, help="seconds of idle CPU measurement")
    ap.add_argument("--burst-files", type=int, default=100)
    ap.add_argument("--burst-writes", type=int, default=1000)
    args = ap.parse_args(argv)
    root = args.vault or Path(f"/tmp/mv-watch-{args.events}")

    from memvault.search.index import open_index
    from memvault.vault import Vault

    t = time.perf_counter()
    make_vault(root, args.events, args.files)
    vault = Vault.open(root)
    index = open_index(vault)
    report = index.update()
    print(f"vault {root}: {args.events} events in {args.files} files; index update/rebuild "
          f"{time.perf_counter() - t:.1f}s (rebuilt: {report.rebuilt})")

    floors = {}
    for mode in ("edit", "append"):
        a, b = latency(root, index, args.floor_saves or args.saves, mode, "f")
        floors[mode] = a + b
        print(f"floor, {mode} (no watcher: save + Index.update([path]) + search), n={len(a + b)}: "
              f"{summary(a + b)}")

    child = Child(root)
    ready = child.wait_for("ready")
    print(f"watcher ready in {time.perf_counter() - child.started:.2f}s (process start + reconcile): "
          f"{ready['message']}")
    rss0 = child.rss()
    cpu0 = child.cpu_seconds()
    time.sleep(args.idle)
    idle = (child.cpu_seconds() - cpu0) / args.idle
    print(f"idle watcher CPU over {args.idle:g}s: {idle * 100:.2f}% of one core")
    debounce = 50.0
    for mode in ("edit", "append"):
        child.drain()
        in_place, atomic = latency(root, index, args.saves, mode, "w", child)
        both = in_place + atomic
        floor = floors[mode]
        print(f"save -> searchable, {mode}, default debounce {debounce:.0f} ms, n={len(both)}: {summary(both)}, "
              f"max {ms(max(both))}  (target p95 <= 100 ms)")
        print(f"  in place: {summary(in_place)}; temp+rename: {summary(atomic)}; "
              f"watcher adds {ms(statistics.median(both) - statistics.median(floor))} at p50, "
              f"{ms(pct(both, 95) - pct(floor, 95))} at p95 over the floor")
    rss1 = child.rss()

    b = burst(root, index, child, args.burst_files, args.burst_writes)
    rss2 = child.rss()
    print(f"burst: {args.burst_writes} writes over {args.burst_files} files in {b['write_seconds']:.2f}s; "
          f"settled {ms(b['settle'])} after the last write; {b['batches']} update batches, "
          f"{b['file_updates']} file re-reads; index == fresh parse: {b['equal']}")
    print(f"watcher RSS (MB, now/peak): after start {rss0[0]:.0f}/{rss0[1]:.0f}, after saves {rss1[0]:.0f}/{rss1[1]:.0f}, "
          f"after burst {rss2[0]:.0f}/{rss2[1]:.0f}  (target <= 150)")
    code = child.stop()
    index.close()
    print(f"watcher exit status after SIGTERM: {code}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
