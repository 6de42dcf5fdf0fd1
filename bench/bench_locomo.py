"""Retrieval quality on the LoCoMo development split: memvault search vs the scorer's table.

    python bench/bench_locomo.py                      # sqlite backend, in-process search
    python bench/bench_locomo.py --backend whoosh
    python bench/bench_locomo.py --cli                # one `memvault search` process per question
    python bench/bench_locomo.py --preset seed-004    # the vaults' memvault.toml: [search] preset
    python bench/bench_locomo.py --after-last         # rank as of 1 h after each conversation's end

Converts the conversations with ../shared/bench/locomo/locomo_to_vault.py into a temporary
folder (the data is CC BY-NC and never enters this repository), searches every question in
its conversation's vault (top 20, with the defaults: a search records no recall, so questions
do not influence each other), writes conv<i>/results.jsonl and prints the scorer's table.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
LOCOMO = Path(os.environ.get("MEMVAULT_LOCOMO", HERE.parent.parent.parent / "shared" / "bench" / "locomo"))
if not LOCOMO.exists():
    LOCOMO = Path("/work/shared/bench/locomo")


def convert(out: Path, conversations: str) -> None:
    subprocess.run(
        [sys.executable, str(LOCOMO / "locomo_to_vault.py"), "--data", str(LOCOMO / "locomo-dev.json"),
         "--conversations", conversations, "--out", str(out)],
        check=True, capture_output=True,
    )


def set_config(out: Path, args: argparse.Namespace) -> None:
    """Every converted vault gets the settings asked for (the converter writes no memvault.toml)."""
    text = f'[search]\npreset = "{args.preset}"\n' if args.preset else ""
    semantic = {"model": args.model, "fusion": args.fusion}
    lines = [f"{k} = {json.dumps(v)}" for k, v in semantic.items() if v] + (
        [f"weight = {args.weight}"] if args.weight is not None else [])
    if lines:
        text += "[semantic]\n" + "\n".join(lines) + "\n"
    for vault in sorted(out.glob("conv*/vault")):
        (vault / "memvault.toml").write_text(text, encoding="utf-8")


def search_conv(conv: Path, backend: str, use_cli: bool, k: int, after_last: bool = False,
                mode: str = "lexical") -> tuple[int, float]:
    from memvault.search.index import open_index
    from memvault.vault import Vault

    vault = Vault.open(conv / "vault")
    questions = [json.loads(line) for line in (conv / "questions.jsonl").read_text().splitlines() if line.strip()]
    # Searched now, years after the conversations, every entry's recency and confidence are ~0 and
    # the ranking is relevance alone; an hour after the last session they still tell entries apart.
    at = max(e.timestamp for e in vault.events if e.timestamp) + timedelta(hours=1) if after_last else None
    started = time.perf_counter()
    with open_index(vault, backend) as index:
        index.update()
        rows = []
        for q in questions:
            if use_cli and at is not None:
                raise SystemExit("--after-last ranks in-process only")
            if use_cli:
                proc = subprocess.run(
                    ["memvault", "--vault", str(conv / "vault"), "search", "--json", "--limit", str(k),
                     "--backend", backend, "--mode", mode, q["question"]],
                    capture_output=True, text=True, check=True,
                )
                hits = [h["id"] for h in json.loads(proc.stdout)]
            else:
                hits = [h.id for h in index.search(q["question"], limit=k, at=at, mode=mode)]
            rows.append(json.dumps({"qid": q["qid"], "hits": hits}))
    (conv / "results.jsonl").write_text("\n".join(rows) + "\n")
    return len(questions), time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--backend", default="sqlite")
    ap.add_argument("--conversations", default="0-4")
    ap.add_argument("--cli", action="store_true", help="run a memvault process per question")
    ap.add_argument("--out", type=Path, help="folder for the vaults (default: a temporary one)")
    ap.add_argument("-k", type=int, default=20)
    ap.add_argument("--after-last", action="store_true", help="rank as of 1 h after each conversation's last entry")
    ap.add_argument("--preset", help='[search] preset for every vault ("memvault", "seed-004")')
    ap.add_argument("--mode", choices=("lexical", "semantic", "hybrid"), default="lexical",
                    help="search mode (semantic and hybrid need memvault[semantic])")
    ap.add_argument("--model", help="[semantic] model for every vault (a folder or package:NAME; default: auto)")
    ap.add_argument("--fusion", choices=("weighted", "rrf", "max"), help="[semantic] fusion")
    ap.add_argument("--weight", type=float, help="[semantic] weight")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="memvault-locomo-") as tmp:
        out = args.out or Path(tmp)
        convert(out, args.conversations)
        if args.preset or args.model or args.fusion or args.weight is not None:
            set_config(out, args)
        total_q, total_s = 0, 0.0
        for conv in sorted(out.glob("conv*")):
            n, secs = search_conv(conv, args.backend, args.cli, args.k, args.after_last, args.mode)
            total_q, total_s = total_q + n, total_s + secs
        print(f"backend {args.backend}, mode {args.mode}, preset {args.preset or 'memvault (default)'}"
              f"{', as of 1 h after the last entry' if args.after_last else ''}: {total_q} questions searched in {total_s:.1f}s "
              f"({1000 * total_s / max(total_q, 1):.1f} ms/question incl. indexing)")
        subprocess.run(
            [sys.executable, str(LOCOMO / "locomo_score.py"), "--dir", str(out),
             "--conversations", args.conversations, "--results-name", "results.jsonl"],
            check=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
