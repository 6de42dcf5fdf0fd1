"""What MV024 (ids a merge moved, check/merge_ids.py) adds to a full `memvault check`.

    python bench/bench_merge_ids.py /tmp/mv-100k            # copies it into /tmp/mv-mergeids-bench
    python bench/bench_merge_ids.py /tmp/mv-100k --merges 200 --runs 7

Setup (not timed, once per work folder): the vault committed into a new repository, a second
worktree on a branch `side` (the other machine), then `--merges` rounds of: `side` appends an
entry to one of the last 30 days' logs and commits; `main` appends one at another minute to a log
of those days (the same one every third round, so the file differs from both parents) and
commits it in its merge of `side`, whose first parent is the last merge; `side` fast-forwards.
Half the commits are merges, so the rule's window of 200 commits holds 100 of them; `--window
400` makes the in-process figures read all 200 merges. Every
fifth round both write the same minute at different places of the file, so ids move and the
rule parses and finds them. The repository's objects are loose as made; after the first
figures it is repacked (`git repack -ad`, what `git gc` does) and measured again.

Timed, p50/p95 over --runs, same run:
  - the rule alone in-process (`merge_id_problems`, the current files parsed beforehand, as the
    runner has them): its whole cost; floor: the same `git log -n<window>` + `git diff-tree` alone;
  - the whole `memvault check` process with the rule and with `[checks] disable = ["MV024"]`.
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
sys.path[:0] = [str(HERE.parent)]

ENV = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b", "GIT_COMMITTER_NAME": "b",
       "GIT_COMMITTER_EMAIL": "b@b"}


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, env=ENV, check=True, capture_output=True, text=True).stdout


def stats(xs: list[float]) -> str:
    xs = sorted(xs)
    p95 = xs[min(len(xs) - 1, round(0.95 * (len(xs) - 1)))]
    return f"p50 {statistics.median(xs):7.0f} ms  p95 {p95:7.0f} ms"


def append(path: Path, clock: str, text: str) -> None:
    with path.open("a", encoding="utf-8") as fh:
        fh.write(f"\n## {clock} - Observation\n{text}\n")


def insert_first(path: Path, clock: str, text: str) -> None:
    """An entry right after the title: written in time order before the day's other entries."""
    lines = path.read_text(encoding="utf-8").split("\n")
    at = next(i for i, line in enumerate(lines) if line.startswith("## "))
    lines[at:at] = [f"## {clock} - Observation", text, ""]
    path.write_text("\n".join(lines), encoding="utf-8")


def setup(source: Path, work: Path, merges: int) -> Path:
    main, side = work / "main", work / "side"
    if (work / "done").exists():
        return main
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(source, main, ignore=shutil.ignore_patterns(".memvault", ".git"))
    (main / ".gitattributes").write_text("memory/**/*.md merge=union\n", encoding="utf-8")
    git(main, "init", "-q", "-b", "main")
    git(main, "add", ".")
    git(main, "commit", "-qm", "base")
    git(main, "worktree", "add", "-q", "-b", "side", str(side))
    days = sorted(p.relative_to(main).as_posix() for p in (main / "memory").rglob("*.md"))[-30:]
    for i in range(merges):
        theirs, ours = days[i % 30], days[(i * 7) % 30 if i % 3 else i % 30]
        clock_a, clock_b = f"{(i % 10) + 12:02d}:{i % 60:02d}", f"{(i % 10) + 12:02d}:{(i + 30) % 60:02d}"
        if i % 5 == 0:  # the same minute on both: side appends it, main writes it in time order
            append(side / theirs, "06:05", f"Seite {i}: Notiz über den Build")
            insert_first(main / theirs, "06:05", f"Main {i}: the deploy went out")
        else:
            append(side / theirs, clock_a, f"Seite {i}: Kunde Müller ruft an")
            append(main / ours, clock_b, f"Main {i}: reviewed the PR on sync")
        git(side, "commit", "-qam", f"side {i}")
        git(main, "stash", "-q")  # main's own change is committed in the merge (see the module doc)
        git(main, "merge", "-q", "--no-commit", "--no-ff", "side")
        git(main, "stash", "pop", "-q")
        git(main, "commit", "-qam", f"merge {i}")
        git(side, "merge", "-q", "--ff-only", "main")
    (work / "done").write_text("ok\n")
    return main


def rule_alone(root: Path, runs: int) -> tuple[list[float], int]:
    from memvault.check.merge_ids import merge_id_problems
    from memvault.check.sourcefile import load_source
    from memvault.check.sources import WorkingTree
    from memvault.vault import Vault

    vault = Vault.open(root)
    tree = WorkingTree(vault.root, vault.selection, vault.dates)
    files = [load_source(rel, raw, vault.config, tree.dates.of(rel)) for rel, raw in tree.read(tree.paths()).items()]
    times, found = [], 0
    for _ in range(runs):
        t = time.perf_counter()
        found = len(merge_id_problems(vault.root, vault.config, vault.selection, tree.dates, files))
        times.append((time.perf_counter() - t) * 1000)
    return times, found


def timed(args: list[str], cwd: Path) -> float:
    t = time.perf_counter()
    subprocess.run(args, cwd=cwd, env=ENV, capture_output=True)
    return (time.perf_counter() - t) * 1000


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("source", type=Path)
    ap.add_argument("--work", type=Path, default=Path("/tmp/mv-mergeids-bench"))
    ap.add_argument("--merges", type=int, default=200)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--window", type=int, default=0, help="commits the rule reads (default: its WINDOW)")
    a = ap.parse_args()
    if a.window:  # the in-process figures only; a `memvault check` process reads WINDOW
        import memvault.check.merge_ids as rule

        rule.WINDOW = a.window
    t = time.perf_counter()
    root = setup(a.source, a.work, a.merges)
    print(f"setup: {time.perf_counter() - t:.0f} s; {len(git(root, 'log', '--merges', '--format=%H').split())} merges")
    for state in ("as made", "repacked"):
        if state == "repacked":
            git(root, "repack", "-adq")
        loose = git(root, "count-objects").split()[0]
        figures(root, a.runs, f"{state}, {loose} loose objects")
    end_to_end(root, a.runs)


def figures(root: Path, runs: int, state: str) -> None:
    times, found = rule_alone(root, runs)
    from memvault.check.merge_ids import WINDOW

    merges = git(root, "log", f"-n{WINDOW}", "--format=%H %P", "HEAD").split("\n")
    shas = "".join(line.split()[0] + "\n" for line in merges if len(line.split()) > 2)
    floor = []
    for _ in range(runs):
        t0 = time.perf_counter()
        git(root, "log", f"-n{WINDOW}", "--format=%H %ct %P", "HEAD")
        subprocess.run(["git", "diff-tree", "--stdin", "-m", "-r", "-z", "--raw", "--relative", "--", "memory"],
                       cwd=root, input=shas, capture_output=True, text=True, check=True)
        floor.append((time.perf_counter() - t0) * 1000)
    print(f"[{state}] MV024 alone, in-process ({found} found): {stats(times)}")
    print(f"[{state}]   floor: git log + git diff-tree alone:   {stats(floor)}")


def end_to_end(root: Path, runs: int) -> None:
    toml = root / "memvault.toml"
    plain = toml.read_text(encoding="utf-8").split("[checks]")[0]
    with_rule, without = [], []
    check = [sys.executable, "-m", "memvault", "--vault", str(root), "check", "--json"]
    for _ in range(runs):
        toml.write_text(plain, encoding="utf-8")
        with_rule.append(timed(check, root))
        toml.write_text(plain + '\n[checks]\ndisable = ["MV024"]\n', encoding="utf-8")
        without.append(timed(check, root))
    toml.write_text(plain, encoding="utf-8")
    print(f"memvault check, with MV024:    {stats(with_rule)}")
    print(f"memvault check, MV024 disabled: {stats(without)}")


if __name__ == "__main__":
    main()
