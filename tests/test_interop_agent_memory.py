"""agent-memory/0.1 files in and out of a vault: `memvault import`/`export` (docs/interop.md).

The vault's state is checked through the library (Vault.open, its timeline), the files as bytes.
"""

from __future__ import annotations

import json
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memvault.cli import cli
from memvault.cli.interop import IMPORT_FORMATS
from memvault.errors import SecretRefused
from memvault.interop import agent_memory as am
from memvault.interop import amfile, formats
from memvault.interop.amfile import BadFile, Entry, Tombstone
from memvault.vault import Vault
from memvault.write.forget import forget_soft, tombstone
from memvault.write.log import log_entry

HEADER = {"format": "agent-memory/0.1", "created_at": "2026-11-09T07:50:00Z"}
# Built at run time, so the repository holds no literal credential (tests/helpers_secrets.py).
SECRET = 'aws_secret_access_key = "' + "Zx9Qm2Lp7Rt4Vw8Y" + 'b3Nc6Hd1Jf5Kg0Ts2Ue4Wq7"'


def new_vault(root: Path, zone: str = "Europe/Berlin") -> Path:
    (root / "memory").mkdir(parents=True, exist_ok=True)
    (root / "memvault.toml").write_text(f'[vault]\ntimezone = "{zone}"\n')
    return root


def write_file(path: Path, *records: dict[str, Any], header: dict[str, Any] | None = HEADER) -> Path:
    lines = ([json.dumps(header)] if header is not None else []) + [json.dumps(r, ensure_ascii=False) for r in records]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def entry(id: str, kind: str, text: str, created: str, **more: Any) -> dict[str, Any]:
    return {"id": id, "kind": kind, "text": text, "created_at": created, **more}


def log_bytes(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted((root / "memory").rglob("*.md"))}


SEED = entry("3f9a1c2b7d10", "lesson", "The harbor site blocks requests without a user agent.",
             "2026-11-09T07:51:02Z", scope="harbor.example", tags=["fetching"], source="session:2026-11-08-a",
             confidence=0.9, expires_at=None, supersedes=None)


# -- import -------------------------------------------------------------------------------------

def test_the_seed_example_becomes_an_entry_on_its_day_with_every_field(vault_dir: Path, tmp_path: Path):
    new_vault(vault_dir)
    am.import_file(Vault.open(vault_dir), write_file(tmp_path / "m.jsonl", SEED))
    ev = Vault.open(vault_dir).timeline.by_id["3f9a1c2b7d10"]
    assert ev.file == "memory/2026-11-09.md"
    assert ev.timestamp == datetime(2026, 11, 9, 7, 51, 2, tzinfo=UTC)  # 08:51:02 in Berlin, the same instant
    assert ev.timestamp.utcoffset() == timedelta(hours=1)
    assert (ev.type, ev.content, ev.scope, ev.source, ev.confidence0) == (
        "observation", "The harbor site blocks requests without a user agent.", "harbor.example",
        "session:2026-11-08-a", 0.9)
    assert ev.tags == ("lesson", "fetching") and ev.explicit_id


def test_each_kind_maps_to_a_type_and_comes_back(vault_dir: Path, tmp_path: Path):
    new_vault(vault_dir)
    kinds = amfile.KINDS
    records = [entry(f"k{i}", k, f"Merke dir Nummer {i}.", f"2026-10-0{i + 1}T10:00:00Z") for i, k in enumerate(kinds)]
    am.import_file(Vault.open(vault_dir), write_file(tmp_path / "m.jsonl", *records))
    vault = Vault.open(vault_dir)
    assert {vault.timeline.by_id[f"k{i}"].type for i in range(5)} == {"belief", "observation"}
    back = {e.id: e.kind for e in am.exported(vault) if isinstance(e, Entry)}
    assert back == {f"k{i}": k for i, k in enumerate(kinds)}


def test_a_vault_entry_without_a_kind_tag_is_exported_by_its_type(vault_dir: Path):
    new_vault(vault_dir)
    vault = Vault.open(vault_dir)
    for n, etype in enumerate(("belief", "decision", "observation", "procedure")):
        log_entry(vault, f"Eintrag {n}", type=etype, at=datetime(2026, 5, 1, 9, n, tzinfo=UTC), tags=("atlas",))
    got = [(e.kind, e.tags) for e in am.exported(Vault.open(vault_dir)) if isinstance(e, Entry)]
    assert got == [("fact", ("atlas",)), ("fact", ("atlas",)), ("lesson", ("atlas",)), ("lesson", ("atlas",))]


def test_source_user_is_kept_and_global_scope_writes_no_line(vault_dir: Path, tmp_path: Path):
    new_vault(vault_dir)
    f = write_file(tmp_path / "m.jsonl", entry("p1", "preference", "Dana prefers light mode.",
                                               "2026-11-10T08:00:00Z", source="user", scope="global"))
    am.import_file(Vault.open(vault_dir), f)
    text = (vault_dir / "memory" / "2026-11-10.md").read_text()
    assert "Source: user\n" in text and "Scope:" not in text
    out = am.exported(Vault.open(vault_dir))
    assert [(e.source, amfile.entry_dict(e)["scope"]) for e in out if isinstance(e, Entry)] == [("user", "global")]


def test_created_at_lands_on_its_day_in_the_vaults_zone(vault_dir: Path, tmp_path: Path):
    new_vault(vault_dir)  # 23:30 UTC is 00:30 the next day in Berlin
    am.import_file(Vault.open(vault_dir), write_file(tmp_path / "m.jsonl", entry("n1", "fact", "Spät.", "2026-01-14T23:30:00Z")))
    assert list(log_bytes(vault_dir)) == ["memory/2026-01-15.md"]
    assert "## 00:30 - Belief" in (vault_dir / "memory" / "2026-01-15.md").read_text()


def test_an_entry_goes_before_the_days_later_entries_and_their_ids_hold(vault_dir: Path, tmp_path: Path):
    new_vault(vault_dir)
    (vault_dir / "memory" / "2026-02-21.md").write_text("# 2026-02-21\n\n## 09:00 - Belief\nUser likes tea\n\n"
                                                        "## 18:00 - Observation\nAbends Regen.\n")
    am.import_file(Vault.open(vault_dir), write_file(tmp_path / "m.jsonl", entry("x", "fact", "Mittags Sonne.",
                                                                                 "2026-02-21T11:00:00Z")))
    vault = Vault.open(vault_dir)
    order = [e.id for e in vault.timeline.events if e.file == "memory/2026-02-21.md"]
    assert order == ["2026-02-21T09:00", "x", "2026-02-21T18:00"]


def test_supersedes_becomes_a_supersedes_line_and_the_views_agree(vault_dir: Path, tmp_path: Path):
    new_vault(vault_dir)
    f = write_file(tmp_path / "m.jsonl",
                   entry("p1", "preference", "Prefers dark mode.", "2026-11-09T08:00:00Z", source="user"),
                   entry("p2", "preference", "Prefers light mode.", "2026-11-10T08:00:00Z", source="user", supersedes="p1"))
    am.import_file(Vault.open(vault_dir), f)
    vault = Vault.open(vault_dir)
    assert "Supersedes: p1" in (vault_dir / "memory" / "2026-11-10.md").read_text()
    assert vault.timeline.status(vault.timeline.by_id["p1"]) == "superseded"
    assert [e.text for e in amfile.current_view(amfile.parse(f.read_text(), "m").records, vault.now())] == [
        "Prefers light mode."]


def test_a_tombstone_becomes_a_forgotten_line(vault_dir: Path, tmp_path: Path):
    new_vault(vault_dir)
    f = write_file(tmp_path / "m.jsonl", entry("f1", "fact", "Büro ist im 3. Stock.", "2026-11-10T09:00:00Z"),
                   {"id": "f1", "deleted": True, "created_at": "2026-11-11T09:00:00Z"})
    res = am.import_file(Vault.open(vault_dir), f)
    assert res.forgotten == ["f1"]
    ev = Vault.open(vault_dir).timeline.by_id["f1"]
    assert ev.forgotten == datetime(2026, 11, 11, 9, tzinfo=UTC)
    assert Vault.open(vault_dir).timeline.status(ev) == "forgotten"


def test_a_tombstone_added_later_forgets_the_entry_already_imported(vault_dir: Path, tmp_path: Path):
    new_vault(vault_dir)
    first = entry("f1", "fact", "Büro ist im 3. Stock.", "2026-11-10T09:00:00Z")
    am.import_file(Vault.open(vault_dir), write_file(tmp_path / "m.jsonl", first))
    f = write_file(tmp_path / "m.jsonl", first, {"id": "f1", "deleted": True, "created_at": "2026-11-12T09:00:00Z"})
    res = am.import_file(Vault.open(vault_dir), f)
    assert (res.written, res.forgotten) == ([], ["f1"])
    text = (vault_dir / "memory" / "2026-11-10.md").read_text()
    assert text.count("Forgotten: 2026-11-12T10:00:00+01:00") == 1
    again = am.import_file(Vault.open(vault_dir), f)  # and a third import changes nothing
    assert again.forgotten == [] and (vault_dir / "memory" / "2026-11-10.md").read_text() == text


def test_importing_the_same_file_twice_adds_nothing(vault_dir: Path, tmp_path: Path):
    new_vault(vault_dir)
    f = write_file(tmp_path / "m.jsonl", SEED,
                   entry("p1", "preference", "Prefers dark mode.", "2026-11-09T08:00:00Z", source="user"),
                   entry("p2", "preference", "Prefers light mode.", "2026-11-10T08:00:00Z", supersedes="p1"),
                   entry("x", "avoid", "Skip the old wiki; it is outdated.", "2026-11-10T09:00:00Z"),
                   {"id": "x", "deleted": True, "created_at": "2026-11-10T12:00:00Z"})
    am.import_file(Vault.open(vault_dir), f)
    before = log_bytes(vault_dir)
    res = am.import_file(Vault.open(vault_dir), f)
    assert res.written == [] and res.forgotten == [] and len(res.skipped) == 5
    assert log_bytes(vault_dir) == before


def test_changed_text_under_the_same_id_is_a_new_version_that_supersedes(vault_dir: Path, tmp_path: Path):
    new_vault(vault_dir)
    old = entry("m1", "fact", "Standup ist um 9:30.", "2026-11-02T08:00:00Z")
    am.import_file(Vault.open(vault_dir), write_file(tmp_path / "m.jsonl", old))
    f = write_file(tmp_path / "m.jsonl", old, {**old, "text": "Standup ist um 10:00.", "created_at": "2026-11-05T08:00:00Z"})
    res = am.import_file(Vault.open(vault_dir), f)
    assert [w["id"] for w in res.written] == ["m1~2"] and "m1~2" in res.warnings[0]
    vault = Vault.open(vault_dir)
    assert vault.timeline.supersedes["m1~2"] == "m1"
    view = [e for e in am.exported(vault) if isinstance(e, Entry)]
    live = amfile.current_view(am.exported(vault), vault.now())
    assert [e.text for e in live] == ["Standup ist um 10:00."] and len(view) == 2
    assert am.import_file(Vault.open(vault_dir), f).written == []  # the version is found again


def test_dry_run_writes_nothing(vault_dir: Path, tmp_path: Path):
    new_vault(vault_dir)
    res = am.import_file(Vault.open(vault_dir), write_file(tmp_path / "m.jsonl", SEED), dry_run=True)
    assert [w["id"] for w in res.written] == ["3f9a1c2b7d10"] and res.files == ["memory/2026-11-09.md"]
    assert log_bytes(vault_dir) == {}


def test_a_supersedes_nobody_holds_is_a_warning_not_a_dangling_line(vault_dir: Path, tmp_path: Path):
    new_vault(vault_dir)
    res = am.import_file(Vault.open(vault_dir), write_file(
        tmp_path / "m.jsonl", entry("a", "fact", "Neu.", "2026-11-02T08:00:00Z", supersedes="gone")))
    assert "gone" in res.warnings[0]
    assert "Supersedes" not in (vault_dir / "memory" / "2026-11-02.md").read_text()


# -- refusals ------------------------------------------------------------------------------------

def test_a_secret_refuses_the_whole_import_before_anything_is_written(vault_dir: Path, tmp_path: Path):
    new_vault(vault_dir)
    f = write_file(tmp_path / "m.jsonl", SEED, entry("s", "fact", f"Deploy key: {SECRET}", "2026-11-10T08:00:00Z"))
    with pytest.raises(SecretRefused) as err:
        am.import_file(Vault.open(vault_dir), f)
    assert err.value.line == 3 and str(err.value).startswith(f"{f}:3:")
    assert log_bytes(vault_dir) == {}


TOKEN = "ghp_" + "Zx9Qm2Lp7Rt4Vw8Yb3Nc6Hd1Jf5Kg0Ts2Ue4W"  # the shape of a GitHub token, built at run time


@pytest.mark.parametrize("field", ["source", "scope", "tags", "id", "supersedes"])
def test_a_secret_in_any_field_is_refused(vault_dir: Path, tmp_path: Path, field: str):
    new_vault(vault_dir)
    value: Any = [TOKEN] if field == "tags" else TOKEN
    # a supersedes is written as the id it names, so the entry it names carries the secret (line 2)
    target = [entry(TOKEN, "fact", "Alt.", "2026-11-09T08:00:00Z")] if field == "supersedes" else []
    f = write_file(tmp_path / "m.jsonl", *target, {**entry("s", "fact", "Harmlos.", "2026-11-10T08:00:00Z"), field: value})
    with pytest.raises(SecretRefused) as err:
        am.import_file(Vault.open(vault_dir), f)
    assert err.value.line == 2 and log_bytes(vault_dir) == {}


BAD = [
    ("not json", ['{"format": "agent-memory/0.1"}', "{not json"], 2, "not JSON"),
    ("wrong header", ['{"format": "agent-memory/0.2"}', json.dumps(SEED)], 1, "header"),
    ("no header", [json.dumps(SEED)], 1, "header"),
    ("unknown kind", ['{"format": "agent-memory/0.1"}', json.dumps({**SEED, "kind": "opinion"})], 2, "unknown kind"),
    ("bad date", ['{"format": "agent-memory/0.1"}', json.dumps({**SEED, "created_at": "gestern"})], 2, "ISO 8601"),
    ("bad expiry", ['{"format": "agent-memory/0.1"}', "", json.dumps({**SEED, "expires_at": "2026-13-01"})], 3, "expires_at"),
    ("no text", ['{"format": "agent-memory/0.1"}', json.dumps({**SEED, "text": ""})], 2, '"text"'),
    ("confidence", ['{"format": "agent-memory/0.1"}', json.dumps({**SEED, "confidence": 1.5})], 2, "confidence"),
    ("array", ['{"format": "agent-memory/0.1"}', "[1, 2]"], 2, "JSON object"),
    ("id with space", ['{"format": "agent-memory/0.1"}', json.dumps({**SEED, "id": "a b"})], 2, "one token"),
    ("heading text", ['{"format": "agent-memory/0.1"}', json.dumps({**SEED, "text": "a\n## 10:00 - Belief"})], 2, "heading"),
    ("future", ['{"format": "agent-memory/0.1"}', json.dumps({**SEED, "created_at": "2999-01-01T00:00:00Z"})], 2, "future"),
    ("lone surrogate", ['{"format": "agent-memory/0.1"}', json.dumps({**SEED, "text": "kaputt \ud800"})], 2, "surrogate"),
    ("nested too deep", ['{"format": "agent-memory/0.1"}', "[" * 100_000 + "]" * 100_000], 2, "too deep"),
]


@pytest.mark.parametrize("lines, line, words", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_a_bad_file_is_an_error_naming_file_and_line(vault_dir: Path, tmp_path: Path, lines, line, words):
    new_vault(vault_dir)
    f = tmp_path / "bad.jsonl"
    f.write_text("\n".join(lines) + "\n")
    with pytest.raises(BadFile) as err:
        am.import_file(Vault.open(vault_dir), f)
    assert (err.value.file, err.value.line) == (str(f), line)
    assert str(err.value).startswith(f"{f}:{line}: ") and words in str(err.value), str(err.value)
    assert log_bytes(vault_dir) == {}


def test_not_utf8_and_empty_files_are_errors_too(vault_dir: Path, tmp_path: Path):
    new_vault(vault_dir)
    f = tmp_path / "latin1.jsonl"
    f.write_bytes(b'{"format": "agent-memory/0.1"}\n{"text": "M\xfcnchen"}\n')
    with pytest.raises(BadFile, match=r"latin1.jsonl:2: not UTF-8"):
        am.import_file(Vault.open(vault_dir), f)
    (tmp_path / "empty.jsonl").write_text("\n\n")
    with pytest.raises(BadFile, match=r"empty.jsonl:1: empty file"):
        am.import_file(Vault.open(vault_dir), tmp_path / "empty.jsonl")


# -- export --------------------------------------------------------------------------------------

def test_export_filters_by_scope_and_writes_a_file_atomically(vault_dir: Path, tmp_path: Path):
    new_vault(vault_dir)
    f = write_file(tmp_path / "m.jsonl", SEED, entry("g", "fact", "Global.", "2026-11-09T09:00:00Z"),
                   entry("p", "fact", "Atlas uses Postgres.", "2026-11-09T10:00:00Z", scope="project:atlas"))
    am.import_file(Vault.open(vault_dir), f)
    vault = Vault.open(vault_dir)
    assert [e.id for e in am.exported(vault, "project:atlas")] == ["g", "p"]  # and the global ones
    assert [e.id for e in am.exported(vault, "global")] == ["g"]
    out = tmp_path / "out" / "export.jsonl"
    summary = am.export_file(vault, None, out)
    assert summary["entries"] == 3 and summary["text"] is None
    back = amfile.parse(out.read_text(), "out")
    assert [e.id for e in back.records] == ["3f9a1c2b7d10", "g", "p"]


def test_export_tombstones_what_maintain_forgot(vault_dir: Path, tmp_path: Path):
    from memvault import forgotten as record

    new_vault(vault_dir)
    am.import_file(Vault.open(vault_dir), write_file(tmp_path / "m.jsonl", entry("a", "fact", "Alt.", "2025-01-02T08:00:00Z")))
    when = datetime(2026, 1, 1, tzinfo=UTC)
    record.save(vault_dir, [record.Forgetting("a", when, 0.01, "forget_below", "exponential")])
    out = am.exported(Vault.open(vault_dir))
    assert isinstance(out[-1], Tombstone) and out[-1].created_at == when


def test_export_escapes_characters_that_change_what_a_terminal_shows(vault_dir: Path, tmp_path: Path):
    new_vault(vault_dir)
    # written by hand (log refuses it): a right-to-left override turns what follows around on screen
    (vault_dir / "memory" / "2026-05-01.md").write_text("# 2026-05-01\n\n## 09:00 - Belief\nPreis \u202e99 €\n")
    text = am.export_text(Vault.open(vault_dir))
    assert "\u202e" not in text and "\\u202e" in text and "€" in text
    assert [e.text for e in amfile.parse(text, "x").records if isinstance(e, Entry)] == ["Preis \u202e99 €"]


# -- the CLI -------------------------------------------------------------------------------------

def test_cli_import_sniffs_the_format_and_export_prints_the_file(runner, vault_dir: Path, tmp_path: Path):
    new_vault(vault_dir)
    f = write_file(tmp_path / "m.jsonl", SEED)
    result = runner.invoke(cli, ["import", str(f), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["format"] == "agent-memory" and [w["id"] for w in data["written"]] == ["3f9a1c2b7d10"]
    assert "3f9a1c2b7d10" in Vault.open(vault_dir).timeline.by_id
    again = runner.invoke(cli, ["import", str(f)])
    assert again.exit_code == 0 and "wrote 0 entries, skipped 1" in again.output
    out = runner.invoke(cli, ["export", "--format", "agent-memory"])
    assert out.exit_code == 0
    assert amfile.parse(out.output, "stdout").records[0].id == "3f9a1c2b7d10"  # type: ignore[union-attr]


def test_cli_export_to_a_file_and_dry_run(runner, vault_dir: Path, tmp_path: Path):
    new_vault(vault_dir)
    f = write_file(tmp_path / "m.jsonl", SEED)
    dry = runner.invoke(cli, ["import", str(f), "--dry-run"])
    assert dry.exit_code == 0 and "would write 1 entry," in dry.output and log_bytes(vault_dir) == {}
    runner.invoke(cli, ["import", str(f)])
    result = runner.invoke(cli, ["export", "--format", "agent-memory", "-o", str(tmp_path / "e.jsonl"), "--json"])
    assert result.exit_code == 0 and json.loads(result.output)["entries"] == 1
    assert amfile.sniff((tmp_path / "e.jsonl").read_text().split("\n")[0])


@pytest.mark.parametrize("lines, line, words", [b[1:] for b in BAD[:5]], ids=[b[0] for b in BAD[:5]])
def test_cli_bad_files_give_json_errors_with_file_and_line(runner, vault_dir: Path, tmp_path: Path, lines, line, words):
    new_vault(vault_dir)
    f = tmp_path / "bad.jsonl"
    f.write_text("\n".join(lines) + "\n")
    result = runner.invoke(cli, ["import", str(f), "--format", "agent-memory", "--json"])
    assert result.exit_code == 1
    err = json.loads(result.stderr)["error"]
    assert (err["code"], err["file"], err["line"]) == ("refused", str(f), line) and words in err["message"]


def test_cli_secret_is_a_secret_error(runner, vault_dir: Path, tmp_path: Path):
    new_vault(vault_dir)
    f = write_file(tmp_path / "m.jsonl", entry("s", "fact", SECRET, "2026-11-10T08:00:00Z"))
    result = runner.invoke(cli, ["import", str(f), "--json"])
    assert result.exit_code == 1 and json.loads(result.stderr)["error"]["code"] == "secret"
    assert log_bytes(vault_dir) == {}


def test_cli_an_unknown_file_shape_and_a_missing_file(runner, vault_dir: Path, tmp_path: Path):
    new_vault(vault_dir)
    (tmp_path / "x.jsonl").write_text('{"hello": 1}\n')
    result = runner.invoke(cli, ["import", str(tmp_path / "x.jsonl"), "--json"])
    assert result.exit_code == 1 and "give --format" in json.loads(result.stderr)["error"]["message"]
    missing = runner.invoke(cli, ["import", str(tmp_path / "nope.jsonl"), "--json"])
    assert missing.exit_code == 1 and json.loads(missing.stderr)["error"]["code"] == "not_found"


def test_the_cli_offers_exactly_the_librarys_formats(runner, vault_dir: Path):
    new_vault(vault_dir)
    assert tuple(formats.IMPORTERS) == IMPORT_FORMATS
    result = runner.invoke(cli, ["export", "--format", "yaml", "--json"])
    assert result.exit_code == 2 and "agent-memory" in json.loads(result.stderr)["error"]["message"]


# -- round trips (hypothesis) ----------------------------------------------------------------------

WORDS = ["Dana", "prefers", "light", "mode", "Kaffee", "nach", "15", "Uhr", "Postgres", "statt", "MySQL", "the",
         "harbor", "site", "blocks", "requests", "Frau", "Müller", "mag", "keinen", "Tee", "Zanzibar", "offsite",
         "Büro", "im", "dritten", "Stock", "order", "O-9987", "ships", "FedEx", "weekly", "updates", "Montag", "ß"]
SCOPES = [None, "global", "github.com", "project:atlas", "harbor.example"]
SOURCES = [None, "user", "session:2026-11-08-a", "https://example.org/notes"]
TAGS = ["fetching", "atlas", "kaffee", "büro", "preference", "lesson", "ops"]
# what agents write that the vault normalizes (qa17b #1): capitals, spaces and commas inside a tag
FILE_TAGS = [*TAGS, "Key Bindings", "a,b", "Ops", "#atlas"]
NOW = datetime(2026, 12, 1, tzinfo=UTC)


@st.composite
def memory_files(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Lines of an agent-memory file: entries of every kind, supersedes chains (always naming an
    earlier entry), tombstones, expiry on either side of now, and ids written again (later wins)."""
    n = draw(st.integers(1, 7))
    starts = sorted(draw(st.lists(st.integers(0, 60 * 24 * 700), min_size=n, max_size=n, unique=True)))
    base = datetime(2024, 6, 1, tzinfo=UTC)
    out: list[dict[str, Any]] = []
    for i, minutes in enumerate(starts):
        created = base + timedelta(minutes=minutes, seconds=draw(st.integers(0, 59)))
        rec: dict[str, Any] = {
            "id": f"e{i}x{draw(st.integers(0, 99))}", "kind": draw(st.sampled_from(amfile.KINDS)),
            "text": " ".join(draw(st.lists(st.sampled_from([*WORDS, "#postgres", "#Ops"]), min_size=1, max_size=8))) + ".",
            "scope": draw(st.sampled_from(SCOPES)),
            "tags": draw(st.lists(st.sampled_from(FILE_TAGS), max_size=3, unique=True)),
            "source": draw(st.sampled_from(SOURCES)),
            "confidence": draw(st.one_of(st.none(), st.sampled_from([0.0, 0.35, 0.9, 1.0]))),
            "expires_at": None, "supersedes": None, "created_at": amfile.zulu(created)}
        if draw(st.booleans()) and draw(st.booleans()):
            rec["expires_at"] = amfile.zulu(created + timedelta(days=draw(st.integers(1, 1200))))
        if out and draw(st.booleans()):
            rec["supersedes"] = draw(st.sampled_from([r["id"] for r in out if "kind" in r]))
        out.append(rec)
        if draw(st.integers(0, 4)) == 0:
            out.append({"id": rec["id"], "deleted": True,
                        "created_at": amfile.zulu(created + timedelta(hours=draw(st.integers(1, 5000))))})
        elif draw(st.integers(0, 5)) == 0:  # the same id written again, later lines win
            out.append({**rec, "text": rec["text"] + " Aktualisiert."})
    return out


def view(records: list[amfile.Record], now: datetime) -> list[tuple[Any, ...]]:
    # a time in the hour a DST change repeats reads back as the first of the two (docs/interop.md, Limits)
    berlin = ZoneInfo("Europe/Berlin")
    return [(e.id, *am.normal(e), e.created_at.astimezone(berlin).replace(fold=0))
            for e in amfile.current_view(records, now)]


def fresh_vault(tmp: str, name: str) -> Vault:
    return Vault.open(new_vault(Path(tmp) / name))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(memory_files())
def test_file_to_vault_to_file_keeps_the_current_view(lines: list[dict[str, Any]]):
    with tempfile.TemporaryDirectory() as tmp:
        f = write_file(Path(tmp) / "m.jsonl", *lines)
        vault = fresh_vault(tmp, "v")
        am.import_file(vault, f)
        vault = Vault.open(vault.root)
        now = vault.now()
        before = view(list(amfile.parse(f.read_text(), "m").records), now)
        after = view(am.exported(vault), now)
        assert after == before
        files = log_bytes(vault.root)
        assert am.import_file(Vault.open(vault.root), f).written == []  # and importing again adds nothing
        (Path(tmp) / "e.jsonl").write_text(am.export_text(vault))  # nor does the vault's own export (qa17b #2)
        res = am.import_file(Vault.open(vault.root), Path(tmp) / "e.jsonl")
        assert (res.written, res.forgotten) == ([], []) and log_bytes(vault.root) == files


@st.composite
def vault_entries(draw: st.DrawFn) -> list[dict[str, Any]]:
    """What `log` writes: any type, with or without a kind tag, supersession chains, forgetting."""
    n = draw(st.integers(1, 6))
    starts = sorted(draw(st.lists(st.integers(0, 60 * 24 * 600), min_size=n, max_size=n, unique=True)))
    return [{"at": datetime(2024, 9, 1, tzinfo=UTC) + timedelta(minutes=m),
             "type": draw(st.sampled_from(["observation", "belief", "decision", "correction", "procedure"])),
             "text": " ".join(draw(st.lists(st.sampled_from(WORDS + ["#ops", "#kaffee"]), min_size=1, max_size=8))),
             "tags": tuple(draw(st.lists(st.sampled_from(TAGS + list(amfile.KINDS)), max_size=3, unique=True))),
             "scope": draw(st.sampled_from(SCOPES)), "source": draw(st.sampled_from(SOURCES)),
             "confidence": draw(st.one_of(st.none(), st.sampled_from([0.2, 0.75]))),
             "expires_days": draw(st.one_of(st.none(), st.integers(1, 900))),
             "supersedes": draw(st.one_of(st.none(), st.integers(0, i - 1))) if i else None,
             "forget_hours": draw(st.one_of(st.none(), st.integers(1, 3000)))} for i, m in enumerate(starts)]


def comparable(vault: Vault, now: datetime) -> dict[str, tuple[Any, ...]]:
    tl = vault.timeline
    out = {}
    for e in tl.events:
        if e.kind == "log" and not e.is_note:
            kind = am.to_entry(e, None).kind
            out[e.id] = (e.timestamp, e.content, e.scope if e.scope != "global" else None, e.source, e.confidence0,
                         e.expires, e.forgotten, tl.supersedes.get(e.id), tl.status(e, now),
                         tuple(t for t in e.tags if t != kind), kind)
    return out


@settings(max_examples=25, deadline=None)
@given(vault_entries())
def test_vault_to_file_to_vault_to_file_is_lossless(specs: list[dict[str, Any]]):
    with tempfile.TemporaryDirectory() as tmp:
        first = fresh_vault(tmp, "a")
        ids: list[str] = []
        for s in specs:
            ev = log_entry(first, s["text"], type=s["type"], at=s["at"], tags=s["tags"], scope=s["scope"],
                           source=s["source"], confidence=s["confidence"],
                           expires=s["at"] + timedelta(days=s["expires_days"]) if s["expires_days"] else None,
                           supersedes=ids[s["supersedes"]] if s["supersedes"] is not None else None)
            ids.append(ev.id)
            first = Vault.open(first.root)
        for s, eid in zip(specs, ids, strict=True):
            if s["forget_hours"]:
                forget_soft(first, [first.timeline.by_id[eid]],
                            tombstone((s["at"] + timedelta(hours=s["forget_hours"])).astimezone(first.config.tz), None))
                first = Vault.open(first.root)
        text1 = am.export_text(first)
        (Path(tmp) / "one.jsonl").write_text(text1)
        second = fresh_vault(tmp, "b")
        am.import_file(second, Path(tmp) / "one.jsonl")
        second = Vault.open(second.root)
        text2 = am.export_text(second)
        assert text2.split("\n")[1:] == text1.split("\n")[1:]  # all but the header's own time
        now = first.now()
        assert comparable(second, now) == comparable(first, now)
        files = log_bytes(first.root)  # the export imported back where it came from adds nothing (qa17b #2, #3)
        res = am.import_file(Vault.open(first.root), Path(tmp) / "one.jsonl")
        assert (res.written, res.forgotten) == ([], []) and log_bytes(first.root) == files


def test_a_day_file_that_would_refuse_refuses_before_any_file_is_written(vault_dir: Path, tmp_path: Path):
    new_vault(vault_dir)
    (vault_dir / "memory" / "2026-11-10.md").write_text("---\ntags: [unclosed\n---\n# 2026-11-10\n")
    before = log_bytes(vault_dir)
    f = write_file(tmp_path / "m.jsonl", entry("a", "fact", "Früher.", "2026-11-09T08:00:00Z"),
                   entry("b", "fact", "Später.", "2026-11-10T08:00:00Z"))
    with pytest.raises(Exception, match="2026-11-10.md"):
        am.import_file(Vault.open(vault_dir), f)
    assert log_bytes(vault_dir) == before  # 2026-11-09 was not written either


def test_import_waits_for_the_write_lock(vault_dir: Path, monkeypatch: pytest.MonkeyPatch):
    from functools import partial

    from memvault import fsio
    from memvault.errors import LockTimeout
    from memvault.interop import writer

    new_vault(vault_dir)
    vault = Vault.open(vault_dir)
    ready = writer.prepare(vault, [writer.Planned("a", "belief", "Gesperrt.", datetime(2026, 1, 2, tzinfo=UTC), 2)], "m")
    monkeypatch.setattr(writer, "locked", partial(fsio.locked, timeout=0.2))  # wait 0.2 s, not 10
    with fsio.locked(vault.lock_path), pytest.raises(LockTimeout):
        writer.write(vault, ready)  # another writer holds the lock: nothing is written
    assert log_bytes(vault_dir) == {}
    writer.write(vault, ready)
    assert "a" in Vault.open(vault_dir).timeline.by_id


def test_an_entry_written_again_after_its_tombstone_lives_again(vault_dir: Path, tmp_path: Path):
    new_vault(vault_dir)
    rec = entry("r", "fact", "Das Café hat wieder offen.", "2026-11-02T08:00:00Z")
    f = write_file(tmp_path / "m.jsonl", rec, {"id": "r", "deleted": True, "created_at": "2026-11-03T08:00:00Z"})
    am.import_file(Vault.open(vault_dir), f)
    f = write_file(tmp_path / "m.jsonl", rec, {"id": "r", "deleted": True, "created_at": "2026-11-03T08:00:00Z"},
                   {**rec, "created_at": "2026-11-04T08:00:00Z"})
    res = am.import_file(Vault.open(vault_dir), f)
    assert [w["id"] for w in res.written] == ["r~2"]
    vault = Vault.open(vault_dir)
    live = amfile.current_view(am.exported(vault), vault.now())
    assert [(e.id, e.text) for e in live] == [("r~2", "Das Café hat wieder offen.")]
    assert am.import_file(Vault.open(vault_dir), f).written == []


def test_a_file_nested_too_deep_to_sniff_is_an_error_not_a_crash(runner, vault_dir: Path, tmp_path: Path):
    new_vault(vault_dir)
    (tmp_path / "deep.jsonl").write_text("[" * 100_000 + "]" * 100_000 + "\n")
    result = runner.invoke(cli, ["import", str(tmp_path / "deep.jsonl"), "--json"])
    assert result.exit_code == 1 and json.loads(result.stderr)["error"]["line"] == 1


def test_export_leaves_out_a_supersedes_naming_a_note(vault_dir: Path):
    new_vault(vault_dir)
    (vault_dir / "memory" / "2026-05-01.md").write_text(
        "# 2026-05-01\n\n## Notizen\nDer Drucker im 2. Stock ist kaputt.\n\n"
        "## 10:00 - Correction\nDer Drucker geht wieder.\nSupersedes: 2026-05-01#notizen\n")
    vault = Vault.open(vault_dir)
    assert vault.timeline.supersedes["2026-05-01T10:00"] == "2026-05-01#notizen"  # the vault links them
    assert [(e.id, e.supersedes) for e in am.exported(vault)] == [("2026-05-01T10:00", None)]


def test_tag_order_survives_a_tag_also_written_inline(vault_dir: Path, tmp_path: Path):
    """`log` would drop `ideas` from the Tags: line (the text has #ideas) and the reader would then
    put it last: the second export would list the tags in another order."""
    new_vault(vault_dir)
    (vault_dir / "memory" / "2026-05-01.md").write_text(
        "---\ntags: [ideas]\n---\n# 2026-05-01\n\n## 10:00 - Belief\nBudget im Mai prüfen #ideas\nTags: finance\n")
    first = am.export_text(Vault.open(vault_dir))
    (tmp_path / "one.jsonl").write_text(first)
    other = new_vault(tmp_path / "other")
    am.import_file(Vault.open(other), tmp_path / "one.jsonl")
    assert am.export_text(Vault.open(other)).split("\n")[1:] == first.split("\n")[1:]
    assert '"tags": ["ideas", "finance"]' in first


# -- qa17b: re-imports, the vault's own export, ids shared by accident, cycles -----------------------

@pytest.mark.parametrize("more", [{"tags": ["key bindings"]}, {"tags": ["Key Bindings", "#Editor"]},
                                  {"tags": ["a,b"]}, {"text": "Plain fact about #postgres."}])
def test_importing_again_writes_nothing_whatever_the_tags_and_text_hold(runner, vault_dir: Path, tmp_path: Path,
                                                                         more: dict[str, Any]):
    new_vault(vault_dir)
    f = write_file(tmp_path / "f1.jsonl", {**entry("a", "fact", "Plain fact.", "2026-11-20T10:00:00Z"), **more})
    assert runner.invoke(cli, ["--vault", str(vault_dir), "import", str(f)]).exit_code == 0
    before = log_bytes(vault_dir)
    for _ in range(2):
        out = runner.invoke(cli, ["--vault", str(vault_dir), "import", str(f), "--json"])
        assert out.exit_code == 0 and json.loads(out.output)["written"] == []
    assert log_bytes(vault_dir) == before
    assert list(Vault.open(vault_dir).timeline.by_id) == ["a"]


def test_a_tag_with_a_comma_stays_one_tag(vault_dir: Path, tmp_path: Path):
    new_vault(vault_dir)
    am.import_file(Vault.open(vault_dir), write_file(
        tmp_path / "m.jsonl", entry("a", "fact", "Tastenkürzel.", "2026-11-20T10:00:00Z", tags=["a,b", "Key Bindings"])))
    assert Vault.open(vault_dir).timeline.by_id["a"].tags == ("fact", "a-b", "key-bindings")


def test_the_vaults_own_export_imported_back_writes_nothing_and_no_old_fact_comes_back(
        runner, vault_dir: Path, tmp_path: Path):
    new_vault(vault_dir)
    v = ["--vault", str(vault_dir)]
    f1 = write_file(tmp_path / "f1.jsonl", entry("a", "fact", "The API limit is 60/h.", "2026-11-20T10:00:00Z"))
    f2 = write_file(tmp_path / "f2.jsonl", entry("a", "fact", "The API limit is 5000/h.", "2026-11-21T10:00:00Z"))
    f3 = write_file(tmp_path / "f3.jsonl", entry("b", "fact", "Gone soon.", "2026-11-21T11:00:00Z"),
                    {"id": "b", "deleted": True, "created_at": "2026-11-22T10:00:00Z"})
    for f in (f1, f2, f3):
        assert runner.invoke(cli, [*v, "import", str(f)]).exit_code == 0
    assert runner.invoke(cli, [*v, "export", "--format", "agent-memory", "-o", str(tmp_path / "e.jsonl")]).exit_code == 0
    before = log_bytes(vault_dir)
    for f in (tmp_path / "e.jsonl", f1):  # the export, and the outdated file imported again
        out = runner.invoke(cli, [*v, "import", str(f), "--json"])
        assert out.exit_code == 0 and (json.loads(out.output)["written"], json.loads(out.output)["forgotten"]) == ([], [])
    assert log_bytes(vault_dir) == before
    vault = Vault.open(vault_dir)
    assert [e.content for e in vault.timeline.events if vault.timeline.status(e, vault.now()) == "live"] == [
        "The API limit is 5000/h."]


def test_an_id_a_local_entry_has_from_its_time_is_not_the_same_memory(runner, tmp_path: Path):
    vx, vy = new_vault(tmp_path / "vX"), new_vault(tmp_path / "vY")
    log_entry(Vault.open(vx), "Alice's laptop is a ThinkPad X1.", at=datetime(2026, 11, 25, 8, 0, tzinfo=UTC))
    log_entry(Vault.open(vy), "We ship release 2.0 on Friday.", type="decision", at=datetime(2026, 11, 25, 8, 0, tzinfo=UTC))
    local = next(iter(Vault.open(vy).timeline.by_id))
    x = tmp_path / "x.jsonl"
    assert runner.invoke(cli, ["--vault", str(vx), "export", "--format", "agent-memory", "-o", str(x)]).exit_code == 0
    assert json.loads(x.read_text().split("\n")[1])["id"] == local  # the same time id in both vaults
    out = runner.invoke(cli, ["--vault", str(vy), "import", str(x), "--json"])
    assert out.exit_code == 0 and [w["id"] for w in json.loads(out.output)["written"]] == [f"{local}~2"]
    vault = Vault.open(vy)
    tl = vault.timeline
    assert tl.status(tl.by_id[local], vault.now()) == "live" and f"{local}~2" not in tl.supersedes
    assert tl.by_id[local].content == "We ship release 2.0 on Friday."
    before = log_bytes(vy)  # importing it again finds the imported entry
    assert am.import_file(Vault.open(vy), x).written == [] and log_bytes(vy) == before
    # a tombstone or a supersedes naming the local entry's id does not touch it either
    t = write_file(tmp_path / "t.jsonl", entry("n", "fact", "Neu.", "2026-11-26T08:00:00Z", supersedes=local),
                   {"id": local, "deleted": True, "created_at": "2026-11-26T09:00:00Z"})
    vault = Vault.open(vy)
    res = am.import_file(vault, t)
    vault = Vault.open(vy)
    assert vault.timeline.status(vault.timeline.by_id[local], vault.now()) == "live"
    # they name the imported entry (the newest version with an Id: line), never the local one
    assert vault.timeline.supersedes["n"] == f"{local}~2" and res.forgotten == [f"{local}~2"]


@pytest.mark.parametrize(("lines", "line", "words"), [
    ([entry("A", "fact", "Cycle A.", "2026-11-20T10:00:00Z", supersedes="B"),
      entry("B", "fact", "Cycle B.", "2026-11-21T10:00:00Z", supersedes="A")], 2, "cycle"),
    ([entry("S", "fact", "Self.", "2026-11-20T10:00:00Z", supersedes="S")], 2, "supersedes itself"),
])
def test_a_supersession_cycle_is_refused_before_anything_is_written(runner, vault_dir: Path, tmp_path: Path,
                                                                    lines, line, words):
    new_vault(vault_dir)
    f = write_file(tmp_path / "cy.jsonl", *lines)
    out = runner.invoke(cli, ["--vault", str(vault_dir), "import", str(f), "--json"])
    err = json.loads(out.output)["error"]
    assert out.exit_code == 1 and err["line"] in (line, line + 1) and words in err["message"]
    assert err["file"] == str(f) and log_bytes(vault_dir) == {}


SCOPED = [entry("A", "fact", "Deploys go through Jenkins.", "2026-11-20T10:00:00Z", scope="project:x"),
          entry("B", "fact", "Deploys go through GitHub Actions now.", "2026-11-21T10:00:00Z", scope="project:y",
                supersedes="A"),
          entry("C", "fact", "Staging lives on box 3.", "2026-11-19T10:00:00Z", scope="project:x"),
          entry("D", "fact", "Staging lives on box 4.", "2026-11-20T11:00:00Z", scope="project:x", supersedes="C"),
          entry("E", "fact", "Staging lives on box 5.", "2026-11-21T11:00:00Z", scope="project:y", supersedes="D")]


def test_export_scope_keeps_the_vaults_current_view_when_a_superseder_is_out_of_scope(
        runner, vault_dir: Path, tmp_path: Path):
    new_vault(vault_dir)
    am.import_file(Vault.open(vault_dir), write_file(tmp_path / "sc.jsonl", *SCOPED))
    out = runner.invoke(cli, ["--vault", str(vault_dir), "export", "--format", "agent-memory", "--scope", "project:x"])
    assert out.exit_code == 0
    records = amfile.parse(out.output, "x").records
    vault = Vault.open(vault_dir)
    live_x = [e.id for e in vault.timeline.events if vault.timeline.status(e, vault.now()) == "live"
              and e.scope in (None, "project:x")]
    assert [e.id for e in amfile.current_view(records, vault.now())] == live_x == []
    assert [r.id for r in records] == []  # A, C and D are superseded by entries of project:y
    assert [r.id for r in am.exported(vault, "project:y")] == ["B", "E"]


@pytest.mark.parametrize("fmt", ["agent-memory", "memoryblock"])
def test_export_scope_is_case_insensitive_and_an_empty_one_a_usage_error(runner, vault_dir: Path, tmp_path: Path,
                                                                          fmt: str):
    new_vault(vault_dir)
    am.import_file(Vault.open(vault_dir), write_file(tmp_path / "m.jsonl", entry(
        "p", "fact", "Atlas uses Postgres.", "2026-11-09T10:00:00Z", scope="project:atlas")))
    v = ["--vault", str(vault_dir), "export", "--format", fmt]
    upper, lower = (runner.invoke(cli, [*v, "--scope", s]) for s in ("PROJECT:Atlas", "project:atlas"))
    assert upper.exit_code == 0 and upper.output.count("Atlas uses Postgres.") == 1
    assert upper.output.split("\n")[1:] == lower.output.split("\n")[1:]
    assert runner.invoke(cli, [*v, "--scope", ""]).exit_code == 2
    assert runner.invoke(cli, ["--vault", str(vault_dir), "context", "--scope", ""]).exit_code == 2


def test_a_time_a_dst_change_skips_or_repeats_is_written_with_a_warning(vault_dir: Path, tmp_path: Path):
    new_vault(vault_dir)  # Europe/Berlin: 2026-03-29 02:00-03:00 does not exist, 2026-10-25 02:00-03:00 twice
    f = write_file(tmp_path / "tz.jsonl", entry("n1", "fact", "Naive.", "2026-11-20T23:30:00"),
                   entry("n3", "fact", "DST gap.", "2026-03-29T02:30:00"),
                   entry("n4", "fact", "Second 02:30.", "2026-10-25T01:30:00Z"))
    res = am.import_file(Vault.open(vault_dir), f)
    assert [w.split(":")[1] for w in res.warnings] == ["3", "4"]
    assert "does not exist" in res.warnings[0] and "03:30" in res.warnings[0]
    assert "repeats" in res.warnings[1]
    tl = Vault.open(vault_dir).timeline
    assert tl.by_id["n1"].timestamp == datetime(2026, 11, 20, 22, 30, tzinfo=UTC)  # naive: the vault's zone
    assert tl.by_id["n3"].timestamp == datetime(2026, 3, 29, 1, 30, tzinfo=UTC)


# -- qa17b: messages, -o, Expires: ------------------------------------------------------------------

@pytest.mark.parametrize("field", ["source", "scope", "tags"])
def test_a_secret_refusal_names_the_field_not_a_line_of_what_would_be_written(vault_dir: Path, tmp_path: Path,
                                                                              field: str):
    new_vault(vault_dir)
    value: Any = [TOKEN] if field == "tags" else TOKEN
    f = write_file(tmp_path / "m.jsonl", {**entry("s", "fact", "Harmlos.", "2026-11-10T08:00:00Z"), field: value})
    with pytest.raises(SecretRefused) as err:
        am.import_file(Vault.open(vault_dir), f)
    message = str(err.value)
    noun = "a tag" if field == "tags" else f"the {field}"  # "the tags looks like" (qa17c NEW-3)
    assert f"m.jsonl:2: {noun} looks like" in message and "column" not in message and TOKEN not in message
    assert message.count("nothing was imported") == 1


def test_a_tombstone_whose_id_is_a_token_is_refused_and_never_echoed(runner, vault_dir: Path, tmp_path: Path):
    new_vault(vault_dir)
    f = write_file(tmp_path / "m.jsonl", entry("good1", "fact", "A good first line.", "2026-11-25T10:00:00Z"),
                   {"id": TOKEN, "deleted": True, "created_at": "2026-11-25T10:00:00Z"})
    out = runner.invoke(cli, ["--vault", str(vault_dir), "import", str(f), "--json"])
    err = json.loads(out.output)["error"]
    assert out.exit_code == 1 and err["code"] == "secret" and err["line"] == 3 and TOKEN not in out.output
    assert log_bytes(vault_dir) == {}


def test_a_supersedes_naming_a_never_live_line_says_so(vault_dir: Path, tmp_path: Path):
    new_vault(vault_dir)
    f = write_file(tmp_path / "m.jsonl", entry("old", "fact", "Nie.", "2026-11-02T08:00:00Z",
                                               expires_at="2026-11-01T08:00:00Z"),
                   entry("a", "fact", "Neu.", "2026-11-03T08:00:00Z", supersedes="old"))
    res = am.import_file(Vault.open(vault_dir), f)
    assert "the file holds but does not import" in res.warnings[0]


def test_a_missing_file_names_it_in_the_json_error(runner, vault_dir: Path, tmp_path: Path):
    new_vault(vault_dir)
    out = runner.invoke(cli, ["--vault", str(vault_dir), "import", str(tmp_path / "nope.jsonl"), "--json"])
    err = json.loads(out.output)["error"]
    assert out.exit_code == 1 and err["code"] == "not_found" and err["file"] == str(tmp_path / "nope.jsonl")


def test_export_dash_is_stdout_and_a_file_the_vault_reads_is_refused(runner, vault_dir: Path, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch):
    new_vault(vault_dir)
    am.import_file(Vault.open(vault_dir), write_file(tmp_path / "m.jsonl", SEED))
    monkeypatch.chdir(tmp_path)
    v = ["--vault", str(vault_dir), "export", "--format", "agent-memory"]
    out = runner.invoke(cli, [*v, "-o", "-"])
    assert out.exit_code == 0 and SEED["text"] in out.output and not (tmp_path / "-").exists()
    before = log_bytes(vault_dir)
    for target in (vault_dir / "memory" / "evil.md", vault_dir / "memory" / "x.jsonl", vault_dir / "MEMORY.md"):
        out = runner.invoke(cli, [*v, "-o", str(target), "--json"])
        assert out.exit_code == 1 and json.loads(out.output)["error"]["code"] == "refused"
        assert not target.exists()
    assert log_bytes(vault_dir) == before and len(Vault.open(vault_dir).timeline.events) == 1
    out = runner.invoke(cli, [*v, "-o", str(vault_dir / "exports" / "am.jsonl")])  # beside memory/: fine
    assert out.exit_code == 0 and (vault_dir / "exports" / "am.jsonl").exists()


def test_expires_is_written_in_the_vaults_zone_as_the_other_times(vault_dir: Path, tmp_path: Path):
    new_vault(vault_dir)
    f = write_file(tmp_path / "m.jsonl", entry("e", "fact", "Gilt bis Juni.", "2026-11-22T10:00:00Z",
                                               expires_at="2027-06-01T00:00:00Z"))
    am.import_file(Vault.open(vault_dir), f)
    assert "Expires: 2027-06-01T02:00:00+02:00" in (vault_dir / "memory" / "2026-11-22.md").read_text()
    assert Vault.open(vault_dir).timeline.by_id["e"].expires == datetime(2027, 6, 1, tzinfo=UTC)


# -- ids the vault holds already (qa17c NEW-2) ---------------------------------------------------

def id_problems(root: Path) -> list[str]:
    """`check`'s duplicate-id and cycle errors (MV010, MV013), which the pre-commit hook refuses."""
    return [f"{p.code} {p.message}" for p in Vault.open(root).problems if p.code in ("MV010", "MV013")]


def test_a_renamed_entry_never_takes_an_id_the_file_holds_too(vault_dir: Path, tmp_path: Path):
    new_vault(vault_dir, "UTC")
    log_entry(Vault.open(vault_dir), "Lokaler Eintrag um neun.", at=datetime(2026, 11, 25, 9, 0, tzinfo=UTC))
    t = "2026-11-25T09:00"
    f = write_file(tmp_path / "f.jsonl", entry(t, "fact", "Foreign one.", "2026-11-25T09:00:00Z"),
                   entry(f"{t}~2", "fact", "Foreign two.", "2026-11-25T09:00:00Z"))
    res = am.import_file(Vault.open(vault_dir), f)
    assert sorted(w["id"] for w in res.written) == [f"{t}~2", f"{t}~3"] and id_problems(vault_dir) == []
    by_id = Vault.open(vault_dir).timeline.by_id
    assert (by_id[f"{t}~2"].content, by_id[f"{t}~3"].content) == ("Foreign two.", "Foreign one.")
    assert by_id[f"{t}~3"].meta["metadata"] == '{"imported_id": "2026-11-25T09:00"}'  # the file's id, kept
    before = log_bytes(vault_dir)
    assert am.import_file(Vault.open(vault_dir), f).written == [] and log_bytes(vault_dir) == before
    # a changed text later supersedes the renamed entry, found by the file's id
    g = write_file(tmp_path / "g.jsonl", entry(t, "fact", "Foreign one, changed.", "2026-11-26T09:00:00Z"))
    res = am.import_file(Vault.open(vault_dir), g)
    tl = Vault.open(vault_dir).timeline
    assert tl.supersedes[res.written[0]["id"]] == f"{t}~3" and id_problems(vault_dir) == []


def test_a_foreign_id_ending_in_a_version_suffix_is_its_own_memory(vault_dir: Path, tmp_path: Path):
    new_vault(vault_dir, "UTC")
    log_entry(Vault.open(vault_dir), "Lokal.", at=datetime(2026, 11, 25, 9, 0, tzinfo=UTC))
    t = "2026-11-25T09:00"
    am.import_file(Vault.open(vault_dir), write_file(tmp_path / "s.jsonl", entry(
        f"{t}~2", "fact", "Imported earlier.", "2026-11-25T09:00:00Z")))
    res = am.import_file(Vault.open(vault_dir), write_file(tmp_path / "h.jsonl", entry(
        t, "fact", "Another foreign.", "2026-11-25T09:00:00Z")))
    vault = Vault.open(vault_dir)
    new = res.written[0]["id"]
    assert new not in (t, f"{t}~2") and new not in vault.timeline.supersedes  # beside, superseding nothing
    assert [e.content for e in vault.timeline.events if vault.timeline.status(e, vault.now()) == "live"] == [
        "Lokal.", "Imported earlier.", "Another foreign."] and id_problems(vault_dir) == []


def exchange(src: Path, dst: Path, tmp: Path) -> list[dict[str, Any]]:
    f = tmp / "x.jsonl"
    f.write_text(am.export_text(Vault.open(src)), encoding="utf-8")
    return am.import_file(Vault.open(dst), f).written


@st.composite
def two_vaults(draw: st.DrawFn) -> list[tuple[int, int, int, str]]:
    """Entries as (vault, minute, type index, text): few minutes, so time ids collide often."""
    texts = st.sampled_from(["Alice's laptop is a ThinkPad X1.", "Wir liefern am Freitag.", "Port 8080.", "Café Ö."])
    return draw(st.lists(st.tuples(st.integers(0, 1), st.integers(0, 2), st.integers(0, 2), texts), max_size=6))


@settings(max_examples=25, deadline=None)
@given(two_vaults())
def test_vaults_exchanging_exports_never_write_a_duplicate_id(specs: list[tuple[int, int, int, str]]):
    types = ("observation", "decision", "belief")
    with tempfile.TemporaryDirectory() as tmp:
        roots = [new_vault(Path(tmp) / "vX", "UTC"), new_vault(Path(tmp) / "vY", "UTC")]
        for which, minute, kind, text in specs:
            log_entry(Vault.open(roots[which]), text, type=types[kind],
                      at=datetime(2026, 11, 25, 9, minute, tzinfo=UTC))
        for src, dst in ((0, 1), (1, 0), (0, 1), (1, 0)):  # vX -> vY -> vX -> vY -> vX
            exchange(roots[src], roots[dst], Path(tmp))
            assert id_problems(roots[dst]) == []
        before = [log_bytes(r) for r in roots]
        for src, dst in ((0, 1), (1, 0)):  # a second exchange writes nothing
            assert exchange(roots[src], roots[dst], Path(tmp)) == []
        assert [log_bytes(r) for r in roots] == before


def test_export_and_secret_messages_say_one_thing_in_the_singular(runner, vault_dir: Path, tmp_path: Path):
    new_vault(vault_dir)
    am.import_file(Vault.open(vault_dir), write_file(tmp_path / "m.jsonl", SEED,
                                                     {"id": SEED["id"], "deleted": True, "created_at": "2026-11-10T08:00:00Z"}))
    out = runner.invoke(cli, ["export", "--format", "agent-memory", "-o", str(tmp_path / "e.jsonl")])
    assert out.exit_code == 0 and "e.jsonl: 1 entry, 1 tombstone (agent-memory)" in out.output
    out = runner.invoke(cli, ["export", "--format", "memoryblock", "-o", str(tmp_path / "b.jsonl")])
    assert out.exit_code == 0 and "entries" not in out.output and " 0 blocks" in out.output  # forgotten: none live


def test_a_plain_observation_comes_back_to_its_vault_as_itself(vault_dir: Path, tmp_path: Path):
    """The documented round trip: an untagged Observation exports as a `lesson`; another vault
    writes it with `Tags: lesson`, and its export imported back writes nothing."""
    vx, vy = new_vault(tmp_path / "vX"), new_vault(tmp_path / "vY")
    log_entry(Vault.open(vx), "Der Drucker im 2. Stock braucht Papier.", at=datetime(2026, 11, 25, 8, 0, tzinfo=UTC))
    exchange(vx, vy, tmp_path)
    ev = next(iter(Vault.open(vy).timeline.by_id.values()))
    assert (ev.type, ev.tags) == ("observation", ("lesson",))
    before = log_bytes(vx)
    assert exchange(vy, vx, tmp_path) == [] and log_bytes(vx) == before
