"""Section-level retrieval on freeform daily logs: memvault search beside a plain BM25 floor.

    python bench/bench_freeform.py                          # tests/data/freeform, sqlite backend
    python bench/bench_freeform.py --backend whoosh --json
    python bench/bench_freeform.py --vault DIR --questions FILE

Every line of questions.jsonl names its answer as {"file", "heading", "phrase"} (and, under
"also", other places that answer it equally, e.g. the same fact curated into MEMORY.md or a later
change of a rule): each phrase is on exactly one line of its file, under its heading (checked before anything is searched, so a
fixture edit that moves an answer fails loudly). The vault is copied to a temporary folder (the
index lives inside the vault) and each question is searched in-process, top 10, with access
recording off so questions do not influence each other. A hit counts when it is in an answer's
file and its line range covers that phrase's line; recall@k is the share of questions with such a
hit in the top k, MRR the mean of 1/rank of the first one (0 past rank 10). A question is "hard"
when fewer than half of its words are in any section that answers it (lower-cased words, English
and German stopwords left out, no stemming): another language, or other words for the same thing.

Two moments of asking: the morning after the last log (recency favours recent days, as when a
person asks) and a year later (recency ~0: relevance, importance and confidence only).

The floor, computed in the same run: plain Okapi BM25 (k1 1.2, b 0.75) over every section of every
Markdown file of the vault (split at each heading outside fenced code, the heading included),
lower-cased letter/digit words, no stemming, no stopwords, no field weights. It reads the files
memvault might not (archives, topic files), so it is a floor on ranking, not on coverage.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DATA = HERE.parent / "tests" / "data" / "freeform"
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
WORD = re.compile(r"\w+")
KS = (1, 5, 10)
GROUPS = ("all", "lang:en", "lang:de", "plain", "hard", "in:daily", "in:topic", "in:archive", "in:undated",
          "in:curated")


# Words that say nothing about where an answer is, in both languages of the fixtures.
STOPWORDS = frozenset("""
a an the and or of to in on at for from by with about as is are was were be been do does did
what which who whom whose when where why how much many this that these those it its we our you your
he she they his her their i me my after before over under into there here can could will would
should get got has have had not no all any some one again now then than so if but also just only
der die das den dem des ein eine einen einem einer und oder zu im in am an auf für von mit bei ist
sind war wurde werden wird wie was wer wann wo warum welche welcher welches wir ihr sie er es ich
nach vor über unter aus noch schon auch nur nicht kein keine muss müssen darf dürfen soll hat haben
""".split())


@dataclass(frozen=True)
class Question:
    id: str
    lang: str
    hard: bool  # most of the question's words are in no section that answers it (see `shared`)
    text: str
    file: str
    heading: str
    phrase: str
    line: int  # 1-based line of the phrase in `file`
    also: tuple[tuple[str, int], ...] = ()  # other places that answer it too (file, line)

    @property
    def places(self) -> tuple[tuple[str, int], ...]:
        return ((self.file, self.line), *self.also)

    @property
    def kind(self) -> str:
        """Where the answer lives: the day's log, a topic file, an archive, MEMORY.md, other."""
        if self.file == "MEMORY.md":
            return "curated"
        rest = self.file.removeprefix("memory/")
        if rest.startswith("archive/"):
            return "archive"
        if "/" in rest:
            return "undated"
        return "daily" if re.fullmatch(r"\d{4}-\d\d-\d\d\.md", rest) else "topic"


def markdown_files(root: Path) -> list[str]:
    files = [p.relative_to(root).as_posix() for p in sorted((root / "memory").rglob("*.md"))]
    return (["MEMORY.md"] if (root / "MEMORY.md").exists() else []) + files


def headings(lines: list[str]) -> list[tuple[int, str]]:
    """(1-based line, text) of every heading outside fenced code."""
    out, fence = [], ""
    for i, line in enumerate(lines, 1):
        m = FENCE.match(line)
        if m and (not fence or m[1][0] == fence[0] and len(m[1]) >= len(fence)):
            fence = "" if fence else m[1]
            continue
        h = None if fence else HEADING.match(line)
        if h:
            out.append((i, h[2]))
    return out


def locate(root: Path, answer: dict[str, str]) -> int:
    """The line holding the answer's phrase; ValueError unless it is once in the file, under the heading."""
    lines = (root / answer["file"]).read_text(encoding="utf-8").splitlines()
    found = [i for i, line in enumerate(lines, 1) if answer["phrase"] in line]
    if len(found) != 1:
        raise ValueError(f"{answer['file']}: phrase {answer['phrase']!r} is on {len(found)} lines, not 1")
    above = [text for i, text in headings(lines) if i <= found[0]]
    if not above or above[-1] != answer["heading"]:
        raise ValueError(f"{answer['file']}:{found[0]}: {answer['phrase']!r} is under "
                         f"{above[-1] if above else None!r}, not {answer['heading']!r}")
    return found[0]


def section_text(root: Path, file: str, line: int) -> str:
    """The text of the section (heading to next heading) holding `line`."""
    lines = (root / file).read_text(encoding="utf-8").splitlines()
    starts = [1] + [i for i, _ in headings(lines) if i > 1]
    start = max(i for i in starts if i <= line)
    end = min([i for i in starts if i > line] + [len(lines) + 1])
    return "\n".join(lines[start - 1 : end - 1])


def shared(question: str, text: str) -> float:
    """The share of a question's words (lower-cased, no stemming, stopwords left out) in a text."""
    words = set(WORD.findall(question.lower())) - STOPWORDS
    return len(words & set(WORD.findall(text.lower()))) / max(1, len(words))


def load_questions(root: Path, path: Path) -> list[Question]:
    out = []
    for raw in path.read_text(encoding="utf-8").splitlines():
        if raw.strip():
            q = json.loads(raw)
            a = q["answer"]
            line = locate(root, a)
            also = tuple((b["file"], locate(root, b)) for b in q.get("also", []))
            hard = max(shared(q["question"], section_text(root, f, n)) for f, n in ((a["file"], line), *also)) < 0.5
            out.append(Question(q["id"], q["lang"], hard, q["question"], a["file"], a["heading"],
                                a["phrase"], line, also))
    return out


# --- the floor: plain BM25 over sections -------------------------------------------------------

@dataclass
class Section:
    file: str
    line: int
    end_line: int
    terms: Counter[str] = field(default_factory=Counter)


def sections(root: Path) -> list[Section]:
    out = []
    for rel in markdown_files(root):
        lines = (root / rel).read_text(encoding="utf-8").splitlines()
        starts = [1] + [i for i, _ in headings(lines) if i > 1]
        for start, end in zip(starts, [*starts[1:], len(lines) + 1], strict=True):
            text = "\n".join(lines[start - 1 : end - 1])
            out.append(Section(rel, start, end - 1, Counter(WORD.findall(text.lower()))))
    return out


class PlainBM25:
    def __init__(self, docs: list[Section], k1: float = 1.2, b: float = 0.75) -> None:
        self.docs, self.k1, self.b = docs, k1, b
        self.avg = sum(sum(d.terms.values()) for d in docs) / max(1, len(docs))
        self.df: Counter[str] = Counter()
        for d in docs:
            self.df.update(d.terms.keys())

    def search(self, query: str, k: int) -> list[Section]:
        n = len(self.docs)
        words = WORD.findall(query.lower())
        scored = []
        for d in self.docs:
            length = sum(d.terms.values())
            s = 0.0
            for w in words:
                tf = d.terms.get(w, 0)
                if tf:
                    idf = math.log(1 + (n - self.df[w] + 0.5) / (self.df[w] + 0.5))
                    s += idf * tf * (self.k1 + 1) / (tf + self.k1 * (1 - self.b + self.b * length / self.avg))
            if s > 0:
                scored.append((s, d))
        scored.sort(key=lambda x: -x[0])
        return [d for _, d in scored[:k]]


# --- scoring ----------------------------------------------------------------------------------

def first_rank(q: Question, hits: list[tuple[str, int, int]]) -> int | None:
    """1-based rank of the first hit (file, line, end_line) covering an answer's line."""
    for rank, (f, start, end) in enumerate(hits, 1):
        if any(f == file and start <= line <= end for file, line in q.places):
            return rank
    return None


def summarise(ranks: list[int | None]) -> dict[str, float]:
    n = max(1, len(ranks))
    out = {f"R@{k}": sum(1 for r in ranks if r is not None and r <= k) / n for k in KS}
    out["MRR"] = sum(1 / r for r in ranks if r is not None and r <= 10) / n
    out["n"] = len(ranks)
    return out


def breakdown(questions: list[Question], ranks: list[int | None]) -> dict[str, dict[str, float]]:
    groups: dict[str, list[int | None]] = {"all": list(ranks)}
    for q, r in zip(questions, ranks, strict=True):
        for key in (f"lang:{q.lang}", "hard" if q.hard else "plain", f"in:{q.kind}"):
            groups.setdefault(key, []).append(r)
    return {k: summarise(v) for k, v in groups.items()}


def memvault_ranks(root: Path, questions: list[Question], backend: str,
                   at: datetime) -> tuple[list[int | None], dict[str, int]]:
    from memvault.search.index import open_index
    from memvault.vault import Vault

    vault = Vault.open(root)
    counts = Counter(e.type if e.type == "note" else "typed" for e in vault.timeline.events)
    ranks = []
    with open_index(vault, backend) as index:
        index.update()
        for q in questions:
            hits = index.search(q.text, limit=10, at=at, record_access=False)
            ranks.append(first_rank(q, [(h.file, h.line, h.end_line) for h in hits]))
    return ranks, dict(counts)


def asked_at(root: Path) -> datetime:
    """09:00 the morning after the newest dated file, in the vault's zone."""
    from memvault.vault import Vault

    days = [p.name[:10] for p in (root / "memory").rglob("*.md") if re.match(r"\d{4}-\d\d-\d\d", p.name)]
    day = datetime.fromisoformat(max(days)) + timedelta(days=1, hours=9)
    return day.replace(tzinfo=Vault.open(root).config.tz)


def pin_mtimes(root: Path) -> None:
    """Every file's modification time at 09:00 on the first log's day. A file with no date in its
    name is dated by its first commit, else by this time (docs/format.md); a fixture copy has no
    history, and the time of the copy would put its notes after the moment of asking."""
    days = [p.name[:10] for p in (root / "memory").rglob("*.md") if re.match(r"\d{4}-\d\d-\d\d", p.name)]
    stamp = datetime.fromisoformat(min(days) + "T09:00:00+00:00").timestamp()
    for p in root.rglob("*"):
        if p.is_file():
            os.utime(p, (stamp, stamp))


def run(vault: Path = DATA / "vault", questions_path: Path = DATA / "questions.jsonl",
        backend: str = "sqlite") -> dict[str, Any]:
    questions = load_questions(vault, questions_path)
    floor = PlainBM25(sections(vault))
    floor_ranks = [first_rank(q, [(s.file, s.line, s.end_line) for s in floor.search(q.text, 10)])
                   for q in questions]
    result: dict[str, Any] = {"questions": len(questions), "backend": backend,
                              "floor": breakdown(questions, floor_ranks)}
    with tempfile.TemporaryDirectory(prefix="memvault-freeform-") as tmp:
        root = Path(tmp) / "vault"
        shutil.copytree(vault, root, ignore=shutil.ignore_patterns(".memvault", ".git"))
        at = asked_at(root)
        pin_mtimes(root)
        for label, when in (("next morning", at), ("a year later", at + timedelta(days=365))):
            ranks, counts = memvault_ranks(root, questions, backend, when)
            result[label] = breakdown(questions, ranks)
            result[label]["_missed"] = [q.id for q, r in zip(questions, ranks, strict=True)
                                        if r is None or r > 10]
        result["asked_at"] = at.isoformat()
        result["events"] = counts
    return result


def table(result: dict[str, Any]) -> str:
    rows = [f"{result['questions']} questions, backend {result['backend']}, events {result['events']}, "
            f"asked {result['asked_at']} (next morning) and a year later"]
    groups = [g for g in GROUPS if g in result["floor"]]
    rows.append(f"{'':<22}" + "".join(f"{g.removeprefix('in:'):>9}" for g in groups))
    for label in ("next morning", "a year later", "floor"):
        for metric in ("R@5", "R@10", "MRR"):
            cells = "".join(f"{result[label][g][metric]:>9.3f}" for g in groups)
            rows.append(f"{label + ' ' + metric:<22}{cells}")
    rows.append(f"{'questions':<22}" + "".join(f"{result['floor'][g]['n']:>9}" for g in groups))
    rows.append("missed in the top 10 (next morning): " + " ".join(result["next morning"]["_missed"]))
    return "\n".join(rows)


def set_bound(chars: int) -> None:
    """Diagnostic: the parser's size bound for a note's part (memvault.entries.notes.BOUND)."""
    from memvault.entries import notes  # type: ignore[attr-defined]

    notes.BOUND = chars
    if notes.parts.__defaults__ != (None,):  # a default bound bound at definition time
        notes.parts.__defaults__ = (chars,)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vault", type=Path, default=DATA / "vault")
    ap.add_argument("--questions", type=Path, default=DATA / "questions.jsonl")
    ap.add_argument("--backend", default="sqlite")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--bound", type=int, help="diagnostic: another size bound for notes, in characters")
    args = ap.parse_args(argv)
    if args.bound:
        set_bound(args.bound)
    result = run(args.vault, args.questions, args.backend)
    print(json.dumps(result, indent=1) if args.json else table(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
