"""Curate's "same meaning" threshold, measured: paraphrase pairs (should join) and near-miss
pairs (must never join), English and German, through a real model.

    python bench/curate_meaning.py --model /tmp/sem/minilm

Prints, for a range of thresholds, how many paraphrases join by meaning (recall) and how many
near misses would join by meaning alone and after `differs` vetoes (precision). Words alone
(`same_fact` at [curate] similarity) are printed beside it as the floor.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from memvault.entries.similarity import differs, same_fact
from memvault.semantic.encoder import Encoder
from memvault.semantic.models import resolve

PARAPHRASES = [
    ("User prefers dark mode", "The user likes the dark theme"),
    ("Anna is allergic to peanuts", "Anna has a peanut allergy"),
    ("Prefers tea over coffee in the morning", "Likes tea better than coffee in the morning"),
    ("We deploy to production on Fridays", "Production deployments happen on Fridays"),
    ("The user works remotely from Lisbon", "User is working remote, based in Lisbon"),
    ("Tom does not like long meetings", "Tom dislikes long meetings"),
    ("Use pnpm instead of npm in this repo", "This repo uses pnpm, not npm"),
    ("User wants answers short and to the point", "Keep replies brief and concise for the user"),
    ("The staging database is Postgres", "Staging runs on a Postgres database"),
    ("Caroline paints landscapes on weekends", "On weekends Caroline paints landscapes"),
    ("User is vegetarian", "The user doesn't eat meat, vegetarian diet"),
    ("Meeting notes go into the shared drive", "Put meeting notes in the shared drive"),
    ("Tests must pass before merging", "Never merge before the tests pass"),
    ("The API key rotates every 90 days", "Every 90 days the API key is rotated"),
    ("User's daughter Mia starts school in September", "Mia, the user's daughter, begins school in September"),
    ("Prefers email over phone calls", "Would rather be emailed than called"),
    ("The build takes about 12 minutes", "A build needs roughly 12 minutes"),
    ("User is learning Spanish", "The user is studying Spanish"),
    ("Backups run nightly at 2am", "Nightly backups run at 2am"),
    ("User hates being interrupted while coding", "Don't interrupt the user when they are coding"),
    ("Lives in Hamburg with two cats", "Has two cats and lives in Hamburg"),
    ("Project Falcon was cancelled", "Falcon project got cancelled"),
    ("Reviews should be done within a day", "Code reviews are expected within one day"),
    # German
    ("Nutzer bevorzugt den dunklen Modus", "Der Nutzer mag das dunkle Design lieber"),
    ("Anna ist allergisch gegen Erdnüsse", "Anna hat eine Erdnussallergie"),
    ("Wir deployen freitags in die Produktion", "Deployments in Produktion passieren freitags"),
    ("Der Nutzer trinkt morgens lieber Tee als Kaffee", "Morgens bevorzugt der Nutzer Tee statt Kaffee"),
    ("Besprechungsnotizen kommen in das geteilte Laufwerk", "Notizen aus Meetings werden im geteilten Laufwerk abgelegt"),
    ("Tests müssen vor dem Merge grün sein", "Vor dem Mergen müssen die Tests grün sein"),
    ("Der Nutzer lernt Spanisch", "Der Nutzer studiert Spanisch"),
    ("Tom mag keine langen Meetings", "Lange Meetings gefallen Tom nicht"),
    ("Sie wohnt in Köln", "Ihr Wohnort ist Köln"),
    ("Backups laufen jede Nacht um 2 Uhr", "Jede Nacht um 2 Uhr läuft das Backup"),
    ("Der Nutzer ist Vegetarier", "Der Nutzer isst kein Fleisch, vegetarisch"),
    ("Antworten sollen kurz und knapp sein", "Der Nutzer will kurze, knappe Antworten"),
    ("Projekt Falke wurde eingestellt", "Das Projekt Falke ist gestoppt worden"),
    ("Der Build dauert etwa 12 Minuten", "Ein Build braucht ungefähr 12 Minuten"),
    ("Lisa arbeitet remote aus Leipzig", "Lisa arbeitet von Leipzig aus im Homeoffice"),
    ("Code-Reviews innerhalb eines Tages erledigen", "Reviews sollen binnen eines Tages fertig sein"),
    ("Die Katze heißt Minka", "Minka ist der Name der Katze"),
]

NEAR_MISSES = [
    ("User prefers dark mode", "User prefers light mode"),
    ("The build takes about 12 minutes", "The build takes about 20 minutes"),
    ("Anna is allergic to peanuts", "Tom is allergic to peanuts"),
    ("We deploy to production on Fridays", "We deploy to production on Thursdays"),
    ("We deploy to staging on Fridays", "We deploy to production on Fridays"),
    ("The staging database is Postgres", "The staging database is MySQL"),
    ("Backups run nightly at 2am", "Backups run nightly at 4am"),
    ("User likes long meetings", "User does not like long meetings"),
    ("The API key rotates every 90 days", "The API key rotates every 30 days"),
    ("Mia starts school in September", "Mia starts school in October"),
    ("Use pnpm in this repo", "Use yarn in this repo"),
    ("Tests must pass before merging", "Tests must pass after merging"),
    ("Lives in Hamburg", "Lives in Berlin"),
    ("Prefers tea in the morning", "Prefers tea in the evening"),
    ("The meeting is at 9:00 on Monday", "The meeting is at 10:00 on Monday"),
    ("Anna reports to Tom", "Tom reports to Anna"),
    ("Release v2 ships on 2026-03-01", "Release v2 ships on 2026-04-01"),
    ("The team has 5 engineers", "The team has 7 engineers"),
    ("Standup is daily", "Standup is weekly"),
    ("Project Falcon was cancelled", "Project Eagle was cancelled"),
    ("User is learning Spanish", "User is learning Italian"),
    ("Budget is at most 500 EUR", "Budget is at least 500 EUR"),
    ("The user was a vegetarian", "The user is a vegetarian"),
    ("Feature flags are enabled in production", "Feature flags are disabled in production"),
    # German
    ("Nutzer bevorzugt den dunklen Modus", "Nutzer bevorzugt den hellen Modus"),
    ("Der Build dauert 12 Minuten", "Der Build dauert 20 Minuten"),
    ("Anna ist allergisch gegen Erdnüsse", "Lisa ist allergisch gegen Erdnüsse"),
    ("Wir deployen freitags in die Produktion", "Wir deployen donnerstags in die Produktion"),
    ("Backups laufen um 2 Uhr", "Backups laufen um 4 Uhr"),
    ("Tom mag lange Meetings", "Tom mag keine langen Meetings"),
    ("Sie wohnt in Köln", "Sie wohnt in München"),
    ("Das Team hat 5 Entwickler", "Das Team hat 8 Entwickler"),
    ("Das Meeting ist am Montag", "Das Meeting ist am Dienstag"),
    ("Die Katze heißt Minka", "Die Katze heißt Luna"),
    ("Standup ist täglich", "Standup ist wöchentlich"),
    ("Der Vertrag läuft bis März", "Der Vertrag läuft bis Mai"),
    ("Der Nutzer lernt Spanisch", "Der Nutzer lernt Französisch"),
    ("Projekt Falke wurde eingestellt", "Projekt Adler wurde eingestellt"),
    ("Deploys auf Staging vor 17 Uhr", "Deploys auf Staging nach 17 Uhr"),
    ("Die Funktion ist aktiviert", "Die Funktion ist deaktiviert"),
]

# Same topic, another fact, often with few shared words (so no word swap to veto them): what
# the threshold itself must keep apart.
RELATED = [
    ("User prefers dark mode", "User prefers large fonts"),
    ("The user likes hiking", "The user likes swimming"),
    ("Deploys happen on Fridays", "Code freezes happen on Fridays"),
    ("Use pnpm in this repo", "Use ruff for linting in this repo"),
    ("Tom leads the backend team", "Tom joined the backend team"),
    ("The user drinks coffee black", "The user drinks tea with milk"),
    ("User wants short answers", "User wants answers with sources"),
    ("Anna is allergic to peanuts", "Anna is allergic to cat hair"),
    ("The staging database is Postgres", "The staging database is backed up hourly"),
    ("User works remotely", "User works from the office"),
    ("Prefers email for updates", "Prefers Slack for updates"),
    ("Mia plays the piano", "Mia plays football"),
    ("The user is learning Spanish", "The user speaks Spanish fluently"),
    ("CI runs the unit tests", "CI runs the linters"),
    ("Ask before deleting files", "Ask before pushing to main"),
    ("Der Nutzer mag Jazz", "Der Nutzer mag Rockmusik"),
    ("Sie trinkt Kaffee schwarz", "Sie trinkt Tee mit Milch"),
    ("Der Nutzer wandert gern", "Der Nutzer schwimmt gern"),
    ("Wir nutzen Postgres für Analytics", "Wir nutzen Postgres für Logs"),
    ("Vor dem Löschen von Dateien fragen", "Vor dem Pushen auf main fragen"),
]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="/tmp/sem/minilm")
    ap.add_argument("--similarity", type=float, default=0.6, help="[curate] similarity (words)")
    args = ap.parse_args()
    spec = resolve(args.model, Path.cwd())
    started = time.perf_counter()
    enc = Encoder(spec, bulk=True)
    texts = sorted({t for pair in PARAPHRASES + NEAR_MISSES + RELATED for t in pair})
    vectors = dict(zip(texts, enc.encode(texts), strict=True))
    took = time.perf_counter() - started

    def cos(a: str, b: str) -> float:
        return float(vectors[a] @ vectors[b])

    para = [(cos(a, b), differs(a, b), same_fact(a, b, args.similarity)) for a, b in PARAPHRASES]
    near = [(cos(a, b), differs(a, b), same_fact(a, b, args.similarity)) for a, b in NEAR_MISSES]
    rel = [(cos(a, b), differs(a, b), same_fact(a, b, args.similarity)) for a, b in RELATED]
    print(f"model {spec.name}: {len(texts)} texts encoded in {took:.2f}s; "
          f"{len(PARAPHRASES)} paraphrase pairs, {len(NEAR_MISSES)} near-miss pairs, {len(RELATED)} related pairs")
    words_tp = sum(s for _, _, s in para)
    words_fp = sum(s for _, _, s in near)
    print(f"floor, words alone (similarity {args.similarity}): recall {words_tp}/{len(para)}, "
          f"near misses joined {words_fp}/{len(near)}")
    vetoed_para = sum(w is not None for _, w, _ in para)
    print(f"differs vetoes {vetoed_para} paraphrase pairs and {sum(w is not None for _, w, _ in near)} near misses")
    print("threshold  recall           near misses >=t / joined   related >=t / joined   precision")
    for t in [0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9]:
        tp = sum(s or (c >= t and w is None) for c, w, s in para)
        raw_fp = sum(c >= t for c, _, _ in near)
        fp = sum(s or (c >= t and w is None) for c, w, s in near)
        raw_rel = sum(c >= t for c, _, _ in rel)
        fp_rel = sum(s or (c >= t and w is None) for c, w, s in rel)
        prec = tp / (tp + fp + fp_rel) if tp + fp + fp_rel else 1.0
        print(f"{t:9.2f}  {tp:3d}/{len(para)} = {tp / len(para):.2f}   {raw_fp:3d}/{len(near)} / {fp:2d}"
              f"                {raw_rel:3d}/{len(rel)} / {fp_rel:2d}             {prec:.2f}")
    print("paraphrases joined by neither (cosine, veto):")
    for (a, b), (c, w, s) in zip(PARAPHRASES, para, strict=True):
        if not s:
            print(f"  {c:.2f} {w or '-':30.30} {a} / {b}")
    print("near misses by cosine, and what vetoes them:")
    for (a, b), (c, w, _) in sorted(zip(NEAR_MISSES, near, strict=True), key=lambda x: -x[1][0])[:12]:
        print(f"  {c:.2f} {w or 'NOT VETOED':30.30} {a} / {b}")
    labelled(enc, args.similarity)
    print("related pairs by cosine, and what vetoes them:")
    for (a, b), (c, w, _) in sorted(zip(RELATED, rel, strict=True), key=lambda x: -x[1][0])[:10]:
        print(f"  {c:.2f} {w or 'NOT VETOED':30.30} {a} / {b}")


def labelled(enc: Encoder, similarity: float) -> None:
    """The same measure on issue 13's labelled set (tests/data/curate_pairs.jsonl)."""
    path = Path(__file__).resolve().parent.parent / "tests" / "data" / "curate_pairs.jsonl"
    pairs = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    texts = sorted({t for p in pairs for t in (p["a"], p["b"])})
    vec = dict(zip(texts, enc.encode(texts), strict=True))
    same = [p for p in pairs if p["label"] in ("reworded", "reconfirmed")]
    apart = [p for p in pairs if p["label"] not in ("reworded", "reconfirmed")]
    words = sum(same_fact(p["a"], p["b"], similarity) for p in same)
    print(f"labelled set ({len(same)} repeats, {len(apart)} different facts or corrections): "
          f"words alone join {words}/{len(same)}")
    for t in (0.8, 0.85, 0.9):
        def join(p: dict[str, str], t: float = t) -> bool:
            return same_fact(p["a"], p["b"], similarity) or (
                float(vec[p["a"]] @ vec[p["b"]]) >= t and differs(p["a"], p["b"]) is None)
        print(f"  threshold {t:.2f}: repeats joined {sum(map(join, same))}/{len(same)}, "
              f"different facts joined {sum(map(join, apart))}/{len(apart)}")


if __name__ == "__main__":
    main()
