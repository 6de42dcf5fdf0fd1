"""Freeform daily logs for benchmarks: `python bench/synth.py OUT --freeform` (never committed).

What agents and people write without memvault's format, in the shapes of real workspaces:
a `# YYYY-MM-DD - Topic` title, `##`/`###` topic headings without times, paragraphs, bold
lead-in bullets, `- 14:30 did X` bullets, numbered lists, checklists, tables, fenced code with a
`## heading` line inside, now and then a typed `## 09:15 - Decision` entry; English, German and
mixed days; one day in a hundred compacted, with its original under `memory/archive/`.

A *section* is what a heading (or the title's preamble) holds; --events counts sections. Words
come from synth.py's Zipf-Mandelbrot vocabulary (so bench_index.py's queries have the same
frequencies as on the typed vault); German text mixes German words and function words in.
"""

from __future__ import annotations

import random
from datetime import date, timedelta
from pathlib import Path

from synth import CUM_WEIGHTS, START, VOCAB

GERMAN = (
    "und der die das nicht ist mit auf für noch auch heute morgen gestern wieder schon dann aber "
    "wir ich er sie haben wurde soll muss kann Termin Besprechung Rechnung Angebot Kunde Projekt "
    "Steuer Wohnung Vermieter Arzt Zahnarzt Training Verein Vorstand Kasse Protokoll Einkauf "
    "Geschenk Urlaub Fähre Zug Bahnhof Wetter Regen Schnee Eis Garten Werkstatt Gehäuse Sensor "
    "Akku Kabel Steg Bootshaus Beschluss Entscheidung Erinnerung Aufgabe erledigt offen wichtig "
    "dringend später nächste Woche Monat Montag Dienstag Mittwoch Donnerstag Freitag Samstag Sonntag "
    "Frühstück Mittagessen Abendessen Einstellungen Fehler Ursache Lösung Übersicht Zusammenfassung "
    "Prüfung Änderung Gespräch Nachricht Antwort Frage Überweisung Versicherung Kündigung Vertrag"
).split()
GERMAN_CUM = []
_total = 0.0
for _rank in range(len(GERMAN)):
    _total += 1.0 / (_rank + 5)
    GERMAN_CUM.append(_total)
LANGS = ("en", "en", "de", "mixed")
TYPED = ("Decision", "Observation", "Belief")
CODE_LANGS = ("bash", "python", "yaml", "json", "")


def words(rng: random.Random, n: int, lang: str) -> str:
    out = rng.choices(VOCAB, cum_weights=CUM_WEIGHTS, k=n)
    if lang == "de" or (lang == "mixed" and rng.random() < 0.5):
        german = rng.choices(GERMAN, cum_weights=GERMAN_CUM, k=n)
        out = [g if i % 2 == 0 else w for i, (g, w) in enumerate(zip(german, out, strict=True))]
    return " ".join(out)


def sentence(rng: random.Random, lang: str, lo: int = 6, hi: int = 16) -> str:
    text = words(rng, rng.randint(lo, hi), lang)
    return text[0].upper() + text[1:] + "."


def clock(rng: random.Random, after: int) -> tuple[int, str]:
    minute = min(23 * 60 + 59, after + rng.randint(5, 90))
    return minute, f"{minute // 60:02d}:{minute % 60:02d}"


def block(rng: random.Random, lang: str, minute: int) -> tuple[list[str], int]:
    """One block of a section's body, in one of the shapes real logs use; and the last clock."""
    kind = rng.choices(("para", "bold", "timed", "numbered", "check", "table", "code", "bullets"),
                       weights=(25, 15, 12, 10, 8, 5, 5, 20))[0]
    n = rng.randint(2, 4)
    if kind == "para":
        return [" ".join(sentence(rng, lang) for _ in range(rng.randint(1, 2)))], minute
    if kind == "bold":
        return [f"- **{words(rng, rng.randint(1, 2), lang).title()}:** {sentence(rng, lang, 4, 12)}"
                for _ in range(n)], minute
    if kind == "timed":
        lines = []
        for _ in range(n):
            minute, hhmm = clock(rng, minute)
            lines.append(f"- {hhmm} {sentence(rng, lang, 4, 12)}")
        return lines, minute
    if kind == "numbered":
        return [f"{i}. {sentence(rng, lang, 3, 10)}" for i in range(1, n + 1)], minute
    if kind == "check":
        return [f"- [{rng.choice('x ')}] {sentence(rng, lang, 3, 9)}" for _ in range(n)], minute
    if kind == "table":
        head = [words(rng, 1, lang).title() for _ in range(3)]
        rows = [f"| {' | '.join(head)} |", "|---|---|---|"]
        rows += [f"| {' | '.join(words(rng, rng.randint(1, 3), lang) for _ in range(3))} |" for _ in range(n)]
        return rows, minute
    if kind == "code":
        body = [f"{words(rng, 1, 'en')} --{words(rng, 1, 'en')} {words(rng, 2, 'en')}" for _ in range(n)]
        body.insert(rng.randint(0, n), f"## {words(rng, 2, 'en')}")  # a comment, not a heading
        return [f"```{rng.choice(CODE_LANGS)}", *body, "```"], minute
    return [f"- {sentence(rng, lang, 4, 14)}" for _ in range(n)], minute


def section(rng: random.Random, lang: str, minute: int, sub: bool) -> tuple[list[str], int]:
    if rng.random() < 0.05:  # now and then an agent writes a typed entry
        minute, hhmm = clock(rng, minute)
        return [f"## {hhmm} - {rng.choice(TYPED)}", sentence(rng, lang)], minute
    lines = [f"{'###' if sub else '##'} {words(rng, rng.randint(1, 4), lang).title()}"]
    for _ in range(rng.choices((1, 2), weights=(70, 30))[0]):
        body, minute = block(rng, lang, minute)
        lines += body + [""]
    return lines, minute


def day_text(rng: random.Random, day: date, sections: int) -> str:
    lang = rng.choice(LANGS)
    lines = [f"# {day.isoformat()} - {words(rng, rng.randint(1, 3), lang).title()}", ""]
    minute, left = 6 * 60, sections
    if rng.random() < 0.3:  # a preamble under the title is a section too
        lines += [sentence(rng, lang), ""]
        left -= 1
    for i in range(left):
        text, minute = section(rng, lang, minute, sub=i > 0 and rng.random() < 0.3)
        lines += text + ([""] if text[-1] else [])
    return "\n".join(lines)


def generate_freeform(out: Path, sections: int, files: int, seed: int) -> list[tuple[date, str]]:
    rng = random.Random(seed)
    per_file = max(1, sections // files)
    extra = sections - per_file * files
    written: list[tuple[date, str]] = []
    (out / "memory" / "archive").mkdir(parents=True, exist_ok=True)
    (out / "memvault.toml").write_text('[vault]\ntimezone = "UTC"\n')
    for i in range(files):
        day = START + timedelta(days=i)
        text = day_text(rng, day, per_file + (1 if i < extra else 0))
        rel = f"memory/{day.year}/{day.isoformat()}.md"
        if rng.random() < 0.01:  # compacted: the day's file points to its original in the archive
            arch = f"memory/archive/{day.isoformat()}.md"
            (out / arch).write_text(text)
            written.append((day, arch))
            text = (f"# {day.isoformat()}\n\n> Compacted. The full log is in {arch}\n\n"
                    f"## Summary\n- {sentence(rng, 'en')}\n")
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        written.append((day, rel))
    (out / "MEMORY.md").write_text(
        "# MEMORY.md\n\n## About\n- Prefers short messages; German for personal topics\n"
        "- Weekly check-ins on Monday\n\n## Projects\n- Atlas: weekly updates\n"
    )
    return written
