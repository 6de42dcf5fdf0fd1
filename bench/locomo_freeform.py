"""LoCoMo through freeform notes: the dev split as plain daily logs, beside the typed conversion.

    python bench/locomo_freeform.py                   # freeform and typed, sqlite, conversations 0-4
    python bench/locomo_freeform.py --no-typed --out /tmp/lf   # keep the vaults, skip the typed run

The typed conversion (bench/bench_locomo.py) writes one `## HH:MM - Observation` entry per turn
with an `id: D1:3` line. Here every conversation becomes what a person or agent would write
without memvault's format: one file per session date, a `# date` title, a `## Session N` heading
per session, one bullet per turn (`- Caroline: …`), no typed headings, no ids. The parser turns
the sections into notes (split at its size bound), so a hit is a passage of several turns.

Hits are mapped back to dialogue ids through line ranges: the converter keeps, outside the vault,
a map file → line → dialogue id (OUT/conv<i>/lines.json). A hit covering several turns expands
to all of them in document order, and the scorer counts every turn against k (locomo_score.py:
"one retrieved chunk covering several turns ... k always counts turns"), so a note of 10 turns
fills R@10 alone. Diagnostics beside the figure (same hits, other readings):
- "hit order by query words": the turns inside each hit ordered by how many query terms they
  hold (what a snippet shows first), document order among equals;
- "top 10 notes": every turn of the top 10 hits counted, whatever their size (what R@10 would be
  if k counted passages, not turns);
- turns per hit: how large the passages search returns are.

The data is CC BY-NC: it is read from ../shared/bench/locomo/ (or $MEMVAULT_LOCOMO) and written
only to a temporary folder or --out, never into this repository.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from types import ModuleType
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_locomo import LOCOMO  # noqa: E402  (the dev split's folder, one rule for both benches)


def load(name: str) -> ModuleType:
    """A module of the dev split's folder (its converter and scorer are standard library only)."""
    spec = importlib.util.spec_from_file_location(name, LOCOMO / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def render_day(day: str, sessions: list[tuple[int, list[dict]]], conv: ModuleType) -> tuple[str, dict[int, str]]:
    """The day's log and its line → dialogue id map (1-based lines)."""
    lines = [f"# {day}", ""]
    ids: dict[int, str] = {}
    for n, turns in sessions:
        lines += [f"## Session {n}", ""]
        for turn in turns:
            lines.append("- " + conv.turn_content(turn))
            ids[len(lines)] = turn["dia_id"]
        lines.append("")
    return "\n".join(lines), ids


def convert(out: Path, spec: str, settings: str = "") -> list[Path]:
    """OUT/conv<i>/{vault/memory/*.md, vault/MEMORY.md, questions.jsonl, lines.json}."""
    conv = load("locomo_to_vault")
    samples = conv.load_samples(LOCOMO / "locomo-dev.json")
    dirs = []
    for i in conv.parse_conversation_spec(spec, len(samples)):
        sample = samples[i]
        days: dict[str, list[tuple[int, list[dict]]]] = defaultdict(list)
        for n, when, turns in conv.sessions_of(sample["conversation"]):
            days[conv.parse_session_datetime(when).date().isoformat()].append((n, turns))
        root = out / f"conv{i}"
        (root / "vault" / "memory").mkdir(parents=True)
        (root / "vault" / "MEMORY.md").write_text("# Long-Term Memory\n", encoding="utf-8")
        (root / "vault" / "memvault.toml").write_text('[vault]\ntimezone = "UTC"\n' + settings, encoding="utf-8")
        lines: dict[str, dict[int, str]] = {}
        for day, sessions in sorted(days.items()):
            text, ids = render_day(day, sessions, conv)
            rel = f"memory/{day}.md"
            (root / "vault" / rel).write_text(text, encoding="utf-8")
            lines[rel] = ids
        questions, _ = conv.extract_questions(sample, i)
        (root / "questions.jsonl").write_text("".join(json.dumps(q) + "\n" for q in questions), encoding="utf-8")
        (root / "lines.json").write_text(json.dumps(lines), encoding="utf-8")
        dirs.append(root)
    return dirs


def search(root: Path, backend: str, k: int) -> list[dict[str, Any]]:
    """Per question: its hits as (file, line, end_line) and the question's analysed terms."""
    from memvault.search.index import open_index
    from memvault.search.textproc import analyze
    from memvault.vault import Vault

    questions = [json.loads(x) for x in (root / "questions.jsonl").read_text().splitlines() if x.strip()]
    out = []
    with open_index(Vault.open(root / "vault"), backend) as index:
        index.update()
        for q in questions:
            hits = index.search(q["question"], limit=k, record_access=False)
            out.append({"q": q, "terms": set(analyze(q["question"])),
                        "hits": [(h.file, h.line, h.end_line) for h in hits]})
    return out


def expand(hit: tuple[str, int, int], lines: dict[str, dict[str, str]], texts: dict[str, list[str]],
           terms: set[str] | None) -> list[str] | None:
    """The dialogue ids a hit covers, in document order (or by query terms held, if `terms`)."""
    from memvault.search.textproc import analyze

    file, start, end = hit
    ids = [(int(n), d) for n, d in lines.get(file, {}).items() if start <= int(n) <= end]
    ids.sort()
    if terms is not None:
        ids.sort(key=lambda nd: -len(terms & set(analyze(texts[file][nd[0] - 1]))))
    return [d for _, d in ids] or None


def results(runs: dict[Path, list[dict[str, Any]]], by_terms: bool) -> dict[Path, list[dict[str, Any]]]:
    out = {}
    for root, rows in runs.items():
        lines = json.loads((root / "lines.json").read_text())
        texts = {f: (root / "vault" / f).read_text(encoding="utf-8").splitlines() for f in lines}
        out[root] = [{"qid": r["q"]["qid"],
                      "hits": [expand(h, lines, texts, r["terms"] if by_terms else None) for h in r["hits"]]}
                     for r in rows]
    return out


def score(runs: dict[Path, list[dict[str, Any]]], res: dict[Path, list[dict[str, Any]]],
          scorer: ModuleType) -> dict[str, Any]:
    pairs = []
    for i, (root, rows) in enumerate(runs.items()):
        pairs.append((i, [r["q"] for r in rows], {x["qid"]: x["hits"] for x in res[root]}))
    return scorer.score(pairs)


def notes_recall(runs: dict[Path, list[dict[str, Any]]], res: dict[Path, list[dict[str, Any]]]) -> float:
    """Share of evidence turns inside the top 10 hits, whatever the hits' sizes."""
    got = []
    for root, rows in runs.items():
        for r, x in zip(rows, res[root], strict=True):
            ev = set(r["q"]["evidence"])
            if ev:
                covered = {d for h in x["hits"][:10] for d in (h or [])}
                got.append(len(ev & covered) / len(ev))
    return sum(got) / len(got)


def typed_figure(spec: str, backend: str) -> str:
    proc = subprocess.run([sys.executable, str(HERE / "bench_locomo.py"), "--conversations", spec,
                           "--backend", backend], capture_output=True, text=True, check=True)
    return proc.stdout


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--backend", default="sqlite")
    ap.add_argument("--conversations", default="0-4")
    ap.add_argument("--out", type=Path, help="folder for the vaults (default: a temporary one)")
    ap.add_argument("--no-typed", action="store_true", help="skip the typed conversion's run")
    ap.add_argument("-k", type=int, default=20)
    ap.add_argument("--bound", type=int, help="diagnostic: another size bound for notes, in characters")
    ap.add_argument("--context", type=float, help="diagnostic: the context field's weight (docs/search.md)")
    args = ap.parse_args(argv)
    settings = ""
    if args.context is not None:
        settings = ("[search]\nfield_weights = { title = 2.0, body = 1.0, tags = 2.0, extra = 0.5, "
                    f"context = {args.context} }}\n")
    if args.bound:
        from bench_freeform import set_bound

        set_bound(args.bound)
    scorer = load("locomo_score")
    with tempfile.TemporaryDirectory(prefix="memvault-locomo-ff-") as tmp:
        out = args.out or Path(tmp)
        started = time.perf_counter()
        runs = {root: search(root, args.backend, args.k) for root in convert(out, args.conversations, settings)}
        secs = time.perf_counter() - started
        plain = results(runs, by_terms=False)
        for root, rows in plain.items():
            (root / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        n = sum(len(r) for r in runs.values())
        sizes = [len(h or []) for rows in plain.values() for r in rows for h in r["hits"]]
        from memvault.vault import Vault

        notes = [e for root in runs for e in Vault.open(root / "vault").timeline.events if e.type == "note"]
        print(f"freeform, backend {args.backend}: {n} questions in {secs:.1f}s incl. conversion and indexing; "
              f"{len(notes)} notes; turns per hit: mean {statistics.mean(sizes or [0]):.1f}, "
              f"median {statistics.median(sizes or [0])}, max {max(sizes or [0])}")
        print(scorer.format_table(score(runs, plain, scorer)))
        ordered = score(runs, results(runs, by_terms=True), scorer)["overall"]
        print(f"diagnostic, turns inside a hit ordered by query words held: R@10 {ordered['R@10']:.3f}, "
              f"R@5 {ordered['R@5']:.3f}")
        print(f"diagnostic, every turn of the top 10 hits (k counts passages): R@10 {notes_recall(runs, plain):.3f}")
    if not args.no_typed:
        print("\ntyped conversion (bench/bench_locomo.py), same run:")
        print(typed_figure(args.conversations, args.backend))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
