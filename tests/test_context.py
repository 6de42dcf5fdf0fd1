"""`memvault context`: the prompt block (issue 17), through the CLI with the vault checked through the
library, and the pure choosing and fitting (memvault/context/choose.py) under hypothesis."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memvault import forgotten
from memvault.cli import cli
from memvault.context import context
from memvault.context.choose import TITLE, Item, arrange, fit, heading, kind_of, render, settle
from memvault.context.tokens import ESTIMATOR, Counter, counter, estimate_line
from memvault.entries.similarity import signature
from memvault.search import access
from memvault.vault import Vault

TOML = '[vault]\ntimezone = "Europe/Berlin"\n'
# The spec's daily log (Agent Memory Specification v0.1), a week after the dark-mode belief it corrects.
FEB_14 = """# 2026-02-14

## 10:00 - Observation
User asked about the dashboard colours

## 15:00 - Belief
User prefers dark mode in every tool
Tags: ui
"""
FEB_21 = """# 2026-02-21

## 09:15 - Observation
User mentioned they're starting a new project called "Atlas"

## 14:30 - Decision
Agreed to check in weekly on Atlas progress

## 16:00 - Correction
User prefers light mode, not dark mode
Supersedes: belief about dark mode from 2026-02-14
Source: user
"""
SPEC_MEMORY = """# Long-Term Memory

## User Preferences
- Prefers light mode (updated 2026-02-21, was: dark mode)
- Weekly check-ins on Monday

## Active Projects
- Atlas: Started 2026-02-21, weekly updates

## Lessons Learned
- Always verify day-of-week with calendar before stating it
"""


def write(root: Path, files: dict[str, str]) -> Path:
    (root / "memvault.toml").write_text(TOML, encoding="utf-8")
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def run(runner, *args: str) -> dict:
    result = runner.invoke(cli, ["context", *args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


@pytest.fixture
def story(vault_dir: Path) -> Path:
    return write(vault_dir, {"memory/2026-02-14.md": FEB_14, "memory/2026-02-21.md": FEB_21,
                             "MEMORY.md": SPEC_MEMORY})


# -- the seed story ---------------------------------------------------------------------------

@pytest.mark.parametrize("query", [[], ["dark", "mode"], ["theme", "colours", "mode"]])
def test_the_seed_story_gives_the_light_mode_preference_not_the_superseded_dark_one(runner, story, query):
    with Vault.open(story) as vault:
        assert vault.timeline.superseded_by["2026-02-14T15:00"] == ["2026-02-21T16:00"]
    out = run(runner, *query)
    ids = [d["id"] for d in out["items"]]
    assert "2026-02-21T16:00" in ids and "2026-02-14T15:00" not in ids
    assert "- User prefers light mode, not dark mode [2026-02-21T16:00]" in out["text"].split("\n")
    assert "dark mode in every tool" not in out["text"]
    prefs = out["text"].split("## Preferences\n")[1].split("\n## ")[0]
    assert prefs.startswith("- User prefers light mode, not dark mode")  # the user's word first in its kind
    text = runner.invoke(cli, ["context", *query]).output
    assert text == out["text"] + "\n"


def test_a_bullet_whose_sources_were_all_superseded_is_left_out(runner, story):
    (story / "MEMORY.md").write_text(
        "# Long-Term Memory\n\n## User Preferences\n"
        "- Prefers dark mode (added 2026-02-14) (source: [[2026-02-14#15:00 - Belief]])\n"
        "- Weekly check-ins on Monday\n", encoding="utf-8")
    out = run(runner)
    assert "Prefers dark mode" not in out["text"] and "Weekly check-ins on Monday" in out["text"]
    assert {"id": "M:user-preferences:prefers-dark-mode",
            "reason": "its sources are superseded (by 2026-02-21T16:00)"} in out["left_out"]


def test_search_ranking_and_the_protocol_score_agree_on_the_seed_story(runner, story):
    """The measurement behind docs/context.md's choice: the vault's own weights and the recall
    protocol's 0.5/0.3/0.2 (`[search] preset = "seed-004"`) give the same block here."""
    ours = run(runner, "mode", "--no-record")
    (story / "memvault.toml").write_text(TOML + '\n[search]\npreset = "seed-004"\n', encoding="utf-8")
    protocol = run(runner, "mode", "--no-record")
    assert [d["id"] for d in ours["items"]] == [d["id"] for d in protocol["items"]]
    assert ours["items"][0]["id"] == "2026-02-21T16:00"


def test_kinds_group_the_block_and_every_line_cites_its_id(runner, story):
    out = run(runner)
    kinds = {d["id"]: d["kind"] for d in out["items"]}
    assert kinds["2026-02-21T16:00"] == "preference" and kinds["2026-02-21T14:30"] == "decision"
    assert kinds["M:lessons-learned:always-verify-day-of-week-with"] == "lesson"
    assert kinds["M:active-projects:atlas-started-2026-02-21-weekly"] == "project"
    lines = out["text"].split("\n")
    assert lines[0] == TITLE and lines[1] == "## Preferences"
    headings = [ln for ln in lines if ln.startswith("## ")]
    assert headings == sorted(set(headings), key=headings.index)  # each kind once
    for d in out["items"]:
        assert f"- {d['text']} [{d['id']}]" in lines
        assert d["tokens"] == estimate_line(f"- {d['text']} [{d['id']}]")
    assert out["tokens"] == sum(estimate_line(ln) for ln in lines) <= out["budget"] == 1000


def test_the_same_fact_said_twice_is_in_the_block_once(runner, story):
    """The spec's bullet and the user's correction say the same ("light mode", "light mode, not
    dark mode"): the user's stays; the 2026-02-21 observation repeats none of the bullets."""
    out = run(runner)
    assert {"id": "M:user-preferences:prefers-light-mode",
            "reason": "says the same as 2026-02-21T16:00"} in out["left_out"]


# -- scope, user over inferred, what is never in it ---------------------------------------------------

def test_scope_keeps_its_own_and_the_global_entries(runner, vault_dir):
    write(vault_dir, {"memory/2026-03-02.md": """# 2026-03-02

## 09:00 - Belief
The harbor site blocks requests without a user agent
Scope: harbor.example

## 09:10 - Belief
Atlas staging deploys need the VPN
Scope: project:atlas

## 09:20 - Belief
Reports go out as PDF, never as Word files
Scope: global

## 09:30 - Belief
Dana reads reports on her phone
""", "memory/projekte/möwe.md": "---\nscope: project:möwe\ndate: 2026-03-01\n---\n# Möwe\n\nDie Möwe-API "
                                  "antwortet nur mit gültigem Mandanten-Header.\n"})
    everything = {d["id"] for d in run(runner, "--no-record")["items"]}
    assert len(everything) == 5
    atlas = {d["id"] for d in run(runner, "--scope", "project:atlas")["items"]}
    assert atlas == {"2026-03-02T09:10", "2026-03-02T09:20", "2026-03-02T09:30"}
    harbor = run(runner, "requests", "agent", "--scope", "harbor.example")
    assert [d["id"] for d in harbor["items"]] == ["2026-03-02T09:00"] and harbor["items"][0]["scope"] == "harbor.example"
    möwe = run(runner, "Mandanten", "--scope", "project:möwe")
    assert [d["kind"] for d in möwe["items"]] == ["note"] and "Mandanten-Header" in möwe["text"]
    assert run(runner, "Mandanten", "--scope", "project:atlas")["items"] == []
    bad = runner.invoke(cli, ["context", "--scope", " ", "--json"])
    assert bad.exit_code == 2 and "--scope" in json.loads(bad.stderr)["error"]["message"]


def test_what_the_user_said_wins_over_what_was_inferred(runner, vault_dir):
    write(vault_dir, {"memory/2026-03-03.md": """# 2026-03-03

## 08:00 - Belief
Jana trinkt morgens lieber Kaffee mit Hafermilch
Source: session:2026-03-03-a
Confidence: 0.7

## 08:30 - Belief
Jana trinkt morgens lieber Tee mit Hafermilch
Source: user

## 09:00 - Belief
Jana prefers meetings after 10 am
Source: session:2026-03-03-a

## 09:05 - Observation
Jana said she prefers meetings after 10 am
Source: user
"""})
    out = run(runner)
    ids = [d["id"] for d in out["items"]]
    assert "2026-03-03T08:30" in ids and "2026-03-03T08:00" not in ids
    assert {"id": "2026-03-03T08:00", "reason": "conflicts with 2026-03-03T08:30 (source: user)"} in out["left_out"]
    assert "2026-03-03T09:05" in ids and "2026-03-03T09:00" not in ids  # the same fact, the user's copy
    assert {d["id"]: d.get("source") for d in out["items"]}["2026-03-03T08:30"] == "user"


def test_expired_and_forgotten_entries_are_never_in_it(runner, vault_dir):
    write(vault_dir, {"memory/2026-03-04.md": """# 2026-03-04

## 09:00 - Belief
The office wifi password rotates on Mondays
Expires: 2026-03-05

## 09:10 - Belief
Dana mag keinen Kaffee nach 15 Uhr
Forgotten: 2026-03-05T10:00+01:00, Dana hat sich korrigiert

## 09:20 - Belief
Dana mag Espresso am Vormittag
"""})
    out = run(runner, "wifi", "Kaffee", "Espresso", "Dana")
    assert [d["id"] for d in out["items"]] == ["2026-03-04T09:20"]
    # what `memvault maintain` forgot (its record, not a line in the file) is out too
    forgotten.save(vault_dir, [forgotten.Forgetting("2026-03-04T09:20", datetime.now(UTC), 0.01, "forget_below",
                                                    "exponential")])
    assert run(runner, "wifi", "Kaffee", "Espresso", "Dana")["items"] == []
    assert run(runner)["items"] == []


# -- the budget --------------------------------------------------------------------------------

@pytest.mark.parametrize("budget", ["0", "1", "3"])
def test_a_tiny_budget_gives_an_empty_block_not_an_error(runner, story, budget):
    result = runner.invoke(cli, ["context", "--budget", budget])
    assert result.exit_code == 0 and result.output == ""
    out = run(runner, "--budget", budget)
    assert out["text"] == "" and out["items"] == [] and out["tokens"] == 0 and out["recorded"] is False
    assert len(out["left_out"]) >= 5
    assert runner.invoke(cli, ["context", "--budget", "-1"]).exit_code == 2


def test_items_are_dropped_whole_worst_first(runner, story):
    full = run(runner, "--no-record")
    order = sorted(full["items"], key=lambda d: (-d["score"], d["id"]))  # the order fit takes them in
    for budget in range(1, full["tokens"] + 1, 7):
        out = run(runner, "--budget", str(budget), "--no-record")
        assert out["tokens"] <= budget
        kept = {d["id"] for d in out["items"]}
        assert all(d["text"] in [i["text"] for i in full["items"]] for d in out["items"])
        best = order[0]
        alone = estimate_line(TITLE) + estimate_line(heading(best["kind"])) + best["tokens"]
        assert (best["id"] in kept) == (budget >= alone)  # the best item goes first, whenever it fits


WORDS = st.sampled_from("Jana Tee Kaffee prefers light mode Atlas deploys Dienstag Möwe Ärger naïve 東京 "
                        "server orca-7 Postgres 16 never immer Hafermilch VPN".split())
TEXTS = st.lists(WORDS, min_size=1, max_size=12).map(" ".join)


@st.composite
def items(draw) -> list[Item]:
    out = []
    for n in range(draw(st.integers(0, 25))):
        text = draw(TEXTS)
        out.append(Item(id=f"2026-03-0{n % 9 + 1}T{n:02d}:00", kind=draw(st.sampled_from(["preference", "fact",
                        "lesson", "note", "custom"])), text=text, cite="memory/x.md#L1-L2",
                        score=draw(st.floats(0, 1)), user=draw(st.booleans()), sig=signature(text)))
    return out


@settings(max_examples=120, deadline=None)
@given(items(), st.integers(0, 400))
def test_the_block_never_exceeds_its_budget(its, budget):
    kept, _ = settle(its)
    block = fit(kept, budget, ESTIMATOR)
    assert block.tokens == ESTIMATOR.text(block.text) <= budget
    assert block.text == render(block.items) and (block.text == "") == (block.items == [])
    assert {i.id for i in block.items} <= {i.id for i in kept}
    for k, worse in enumerate(kept):  # left out only when it did not fit beside the better ones kept
        if worse not in block.items:
            better = [i for i in kept[:k] if i in block.items]
            assert ESTIMATOR.text(render(arrange(better + [worse]))) > budget


ENTRY = st.tuples(TEXTS, st.sampled_from(["Belief", "Observation", "Decision"]),
                  st.sampled_from([None, "user", "session:a"]), st.sampled_from([None, "project:atlas", "global"]))


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(ENTRY, min_size=1, max_size=15), st.lists(st.integers(0, 300), min_size=1, max_size=4),
       st.sampled_from([None, "Tee Atlas", "mode"]), st.sampled_from([None, "project:atlas"]))
def test_random_vaults_never_exceed_the_budget(tmp_path_factory, entries, budgets, query, scope):
    root = write(tmp_path_factory.mktemp("v"), {"memory/2026-03-05.md": "# 2026-03-05\n\n" + "\n".join(
        f"## {9 + i // 60:02d}:{i % 60:02d} - {kind}\n{text}\n" + (f"Source: {src}\n" if src else "")
        + (f"Scope: {sc}\n" if sc else "") for i, (text, kind, src, sc) in enumerate(entries))})
    with Vault.open(root) as vault:
        for budget in budgets:
            out = context(vault, query, scope=scope, budget=budget, record=False)
            assert out["tokens"] == ESTIMATOR.text(out["text"]) <= budget
            assert sum(d["tokens"] for d in out["items"]) <= out["tokens"]


def test_another_tokenizer_counts_the_same_way():
    """An exact tokenizer plugs in as a Counter; fit counts every line with it."""
    words = Counter("words", lambda line: len(line.split()) + 1)
    its = [Item(id=f"e{n}", kind="fact", text="eins zwei drei vier", cite="c", score=1 - n / 10,
                sig=signature(f"eins zwei drei vier {n}")) for n in range(5)]
    block = fit(its, 20, words)
    assert block.tokens == words.text(block.text) <= 20 and [i.id for i in block.items] == ["e0", "e1"]  # 3 + 3 + 7 + 7
    assert counter("estimate") is ESTIMATOR


def test_the_estimate_counts_bytes_with_the_newline():
    assert estimate_line("") == 1 and estimate_line("abc") == 1 and estimate_line("abcd") == 2
    assert estimate_line("Ärger") == 2 and estimate_line("東京") == 2  # 6 bytes + newline


# -- recall, notes, German -----------------------------------------------------------------------

def test_what_it_returns_counts_as_recalled_unless_no_record(runner, story):
    quiet = run(runner, "Atlas", "--no-record")
    assert quiet["recorded"] is False and access.stats(story) == {}
    before = datetime.now(UTC)
    out = run(runner, "Atlas")
    stats = access.stats(story)
    assert set(stats) == {d["id"] for d in out["items"]} and out["recorded"] is True
    assert all(s.count == 1 and s.last_accessed >= before.replace(microsecond=0) for s in stats.values())
    run(runner, "Atlas")
    assert {s.count for s in access.stats(story).values()} == {2}


def test_freeform_notes_and_german_text(runner, vault_dir):
    write(vault_dir, {"memory/2026-03-06.md": """# 2026-03-06 – Umzug & Zahnarzt

## Was passiert ist
Zahnarzttermin bei Dr. Özdemir auf Donnerstag, 14:30 verschoben. Jana möchte immer eine
Erinnerung am Vorabend.

### Umzug
- Kisten für Küche gepackt
- Übergabe der alten Wohnung am 31.03.

## 16:00 - Entscheidung
Wir nehmen den Transporter von Mietwagen Müller
""", "MEMORY.md": "# Langzeitgedächtnis\n\n## Vorlieben\n- Jana mag keine Anrufe vor 9 Uhr\n\n"
                           "## Gelernt\n- Immer die Hausnummer doppelt prüfen\n"})
    (vault_dir / "memvault.toml").write_text(TOML + 'extra_types = ["Entscheidung"]\n', encoding="utf-8")
    out = run(runner, "Zahnarzttermin", "Erinnerung")
    kinds = {d["text"][:20]: d["kind"] for d in out["items"]}
    assert kinds["Jana mag keine Anruf"] == "preference" and kinds["Immer die Hausnummer"] == "lesson"
    note = next(d for d in out["items"] if "Özdemir" in d["text"])
    assert note["id"] == "2026-03-06#was-passiert-ist" and note["cite"].startswith("memory/2026-03-06.md#L")
    assert "\n" not in note["text"] and note["kind"] == "preference"  # "möchte immer": curate's cue
    assert f"[{note['id']}]" in out["text"]
    plain = run(runner, "--no-record")
    assert "Transporter von Mietwagen Müller" in plain["text"]


def test_kind_of_reads_tags_sections_cues_and_types():
    assert kind_of(("avoid",), "belief", "x") == "avoid"
    assert kind_of((), "belief", "x", section="Quellen") == "source"
    assert kind_of((), "belief", "x", section="Team") == "fact"
    assert kind_of((), "observation", "Lesson: retries need a jitter") == "lesson"
    assert kind_of((), "belief", "Never deploy on Fridays") == "lesson"
    assert kind_of((), "correction", "Der Server heißt orca-7") == "fact"
    assert kind_of((), "procedure", "x") == "procedure" and kind_of((), "meeting", "x") == "meeting"


def test_a_query_of_only_punctuation_is_a_usage_error(runner, story):
    result = runner.invoke(cli, ["context", "?!", "--json"])
    assert result.exit_code == 2 and json.loads(result.stderr)["error"]["code"]


def test_without_a_query_the_pool_holds_the_newest_the_important_and_the_recalled(vault_dir):
    from memvault.search.index import open_index
    from memvault.search.index.standing import standing_rows

    write(vault_dir, {"memory/2026-01-05.md": "# 2026-01-05\n\n## 09:00 - Belief\nDer Schlüssel liegt beim "
                      "Hausmeister\n\n## 10:00 - Belief\nAtlas budget is 40k EUR\nImportance: high\n",
                      "memory/2026-03-01.md": "# 2026-03-01\n\n## 09:00 - Observation\nKaffee alle\n\n"
                      "## 10:00 - Observation\nDrucker druckt wieder\n"})
    access.record(vault_dir, ["2026-01-05T09:00"])
    with Vault.open(vault_dir) as vault, open_index(vault) as index:
        index.refresh()
        conn, _ = index.reader()

        def pool(n: int) -> set[str]:
            return {conn.execute("SELECT id FROM events WHERE rowid = ?", (r,)).fetchone()[0]
                    for r in standing_rows(index, pool=n)}

        # one each: the newest, the newest important one, the one recalled last
        assert pool(1) == {"2026-03-01T10:00", "2026-01-05T10:00", "2026-01-05T09:00"}
        assert pool(2) == pool(1) | {"2026-03-01T09:00"}


def test_a_tiktoken_without_its_cached_file_is_not_used(monkeypatch, tmp_path):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))  # empty: tiktoken would download
    assert counter() is ESTIMATOR and counter("auto").name == "utf8-bytes/4"


def test_a_note_of_bullets_is_one_line_without_its_markers():
    # qa18 #12: "- - a - b" in a prompt reads as a list inside a list
    from memvault.context.choose import one_line

    text = "- The queue is a cron job.\n- Kafka was judged overkill\n  * pgmq is the favourite\n1. who owns on-call?"
    assert one_line(text) == "The queue is a cron job. Kafka was judged overkill; pgmq is the favourite; who owns on-call?"
    assert one_line("A plain note\nover two lines") == "A plain note over two lines"
