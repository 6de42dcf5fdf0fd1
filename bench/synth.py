"""Generate a deterministic synthetic vault for benchmarks (never committed).

    python bench/synth.py /tmp/mv-100k --events 100000 --files 5000 --seed 1
    python bench/synth.py /tmp/mv-hist --events 100000 --files 5000 --commits 1000
    python bench/synth.py /tmp/mv-ff-100k --freeform      # 100k freeform sections (synth_freeform.py)

Daily logs from 2012 onward, ~events/files entries each, in the documented format: typed
entries, metadata lines, inline #tags, [[links]], supersession chains by id, by link and by
description, reconfirmations. With --commits N the files are committed to git in N commits,
one per stretch of days, with committer dates at the end of each stretch.
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
from datetime import date, timedelta
from pathlib import Path

WORDS = (
    "project atlas deploy server database backup meeting client invoice budget report design "
    "review release migration python rust kubernetes cluster latency dashboard customer support "
    "ticket roadmap quarter planning hiring interview onboarding security audit password policy "
    "coffee lunch travel flight hotel conference talk slides paper draft editor vim obsidian "
    "garden weekend family birthday gift music guitar running marathon training doctor dentist "
    "prefers likes dislikes wants needs decided agreed mentioned asked noticed learned found "
    "weekly monthly friday monday morning evening afternoon light dark mode theme font keyboard "
    "api endpoint schema index query cache memory vault note entry belief decision correction"
).split()
SYLLABLES = "ka lo mi ne ru ta be so vi da pe gu ri mo sa te no fi la zu ko me ar en ol is".split()


def vocabulary(size: int = 20_000) -> tuple[list[str], list[float]]:
    """Topical words plus pronounceable made-up ones, with Zipf-Mandelbrot weights.

    Real notes draw on a vocabulary of tens of thousands of words with a long tail; a tiny
    vocabulary would make every query match most entries and misrepresent search cost.
    """
    rng = random.Random(12345)
    words = list(WORDS)
    seen = set(words)
    while len(words) < size:
        w = "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4)))
        if w not in seen:
            seen.add(w)
            words.append(w)
    # the topical words are spread over the head of the distribution, not all at the top
    head = words[: len(WORDS)]
    tail = words[len(WORDS) :]
    mixed = []
    for i, w in enumerate(tail):
        if i % 10 == 0 and head:
            mixed.append(head.pop(0))
        mixed.append(w)
    weights = [1.0 / (rank + 10) for rank in range(len(mixed))]
    cum, total = [], 0.0
    for w in weights:
        total += w
        cum.append(total)
    return mixed, cum


VOCAB, CUM_WEIGHTS = vocabulary()
TYPES = ["Observation"] * 5 + ["Belief"] * 3 + ["Decision"] * 2 + ["Correction"]
TAGS = ["work", "home", "health", "atlas", "infra", "people", "ideas", "travel", "finance"]
START = date(2012, 1, 1)


def sentence(rng: random.Random, n: int) -> str:
    words = rng.choices(VOCAB, cum_weights=CUM_WEIGHTS, k=n)
    words[0] = words[0].capitalize()
    return " ".join(words)


def make_entry(rng: random.Random, day: date, minute: int, recent: list[str]) -> tuple[str, str]:
    etype = rng.choice(TYPES)
    hh, mm = divmod(minute, 60)
    lines = [f"## {hh:02d}:{mm:02d} - {etype}", sentence(rng, rng.randint(6, 18)) + "."]
    if rng.random() < 0.25:
        lines.append(sentence(rng, rng.randint(4, 10)) + f" #{rng.choice(TAGS)}")
    if rng.random() < 0.05:
        lines += ["", "- " + sentence(rng, 5), "- " + sentence(rng, 4)]
    if rng.random() < 0.04 and recent:
        lines.append(f"See [[{rng.choice(recent)[:10]}]] for context.")
    meta = []
    if etype == "Correction" and recent:
        target = rng.choice(recent[-200:])
        meta.append(f"Supersedes: {target}")
    elif etype == "Belief" and recent and rng.random() < 0.05:
        meta.append(f"Reconfirms: {rng.choice(recent[-200:])}")
    if rng.random() < 0.3:
        meta.append(f"Confidence: {rng.choice([0.5, 0.6, 0.7, 0.8, 0.9])}")
    if rng.random() < 0.2:
        meta.append(f"Tags: {', '.join(rng.sample(TAGS, 2))}")
    if rng.random() < 0.1:
        meta.append(f"Importance: {rng.choice(['high', 'medium', 'low'])}")
    if rng.random() < 0.1:
        meta.append("Source: user")
    return f"{day.isoformat()}T{hh:02d}:{mm:02d}", "\n".join(lines + meta) + "\n"


def generate(out: Path, events: int, files: int, seed: int) -> list[tuple[date, str]]:
    rng = random.Random(seed)
    per_file = max(1, events // files)
    extra = events - per_file * files
    recent: list[str] = []
    written: list[tuple[date, str]] = []
    (out / "memory").mkdir(parents=True, exist_ok=True)
    (out / "memvault.toml").write_text('[vault]\ntimezone = "UTC"\n')
    for i in range(files):
        day = START + timedelta(days=i)
        n = per_file + (1 if i < extra else 0)
        minutes = sorted(rng.sample(range(6 * 60, 23 * 60), n))
        blocks = [f"# {day.isoformat()}\n"]
        for minute in minutes:
            eid, text = make_entry(rng, day, minute, recent)
            blocks.append(text)
            recent.append(eid)
        if len(recent) > 2000:
            del recent[:-1000]
        rel = f"memory/{day.year}/{day.isoformat()}.md"
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(blocks))
        written.append((day, rel))
    (out / "MEMORY.md").write_text(
        "# Long-Term Memory\n\n## User Preferences\n- Prefers light mode (updated 2020-02-21, was: dark mode)\n"
        "- Weekly check-ins on Monday\n\n## Active Projects\n- Atlas: weekly updates\n"
    )
    return written


def commit_history(out: Path, written: list[tuple[date, str]], commits: int) -> None:
    def git(*args: str, env: dict[str, str] | None = None) -> None:
        subprocess.run(["git", *args], cwd=out, check=True, capture_output=True, env=env)

    git("init", "-q")
    base = dict(os.environ, GIT_AUTHOR_NAME="synth", GIT_AUTHOR_EMAIL="synth@example.com",
                GIT_COMMITTER_NAME="synth", GIT_COMMITTER_EMAIL="synth@example.com")
    per = max(1, len(written) // commits)
    for start in range(0, len(written), per):
        chunk = written[start : start + per]
        stamp = f"{chunk[-1][0].isoformat()}T23:30:00+00:00"
        env = dict(base, GIT_AUTHOR_DATE=stamp, GIT_COMMITTER_DATE=stamp)
        paths = [rel for _, rel in chunk] + (["memvault.toml", "MEMORY.md"] if start == 0 else [])
        git("add", *paths)
        git("commit", "-q", "--no-verify", "-m", f"logs up to {chunk[-1][0]}", env=env)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", type=Path)
    ap.add_argument("--events", type=int, default=100_000)
    ap.add_argument("--files", type=int, default=5_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--commits", type=int, default=0, help="commit the files to git in N commits")
    ap.add_argument("--freeform", action="store_true",
                    help="freeform logs (headings, bullets, tables, code; two languages): --events counts sections")
    args = ap.parse_args(argv)
    if args.out.exists() and any(args.out.iterdir()):
        print(f"{args.out} is not empty; refusing to overwrite", file=sys.stderr)
        return 2
    if args.freeform:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from synth_freeform import generate_freeform

        written = generate_freeform(args.out, args.events, args.files, args.seed)
    else:
        written = generate(args.out, args.events, args.files, args.seed)
    if args.commits:
        commit_history(args.out, written, args.commits)
    print(f"wrote {args.events} {'sections' if args.freeform else 'events'} in {args.files} files to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
