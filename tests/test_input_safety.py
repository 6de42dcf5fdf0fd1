"""Issue 10, points 2, 4, 14 (control characters) and 15: what goes into the files is what
reads back, nothing is hidden by invisible characters, and no note drives the terminal."""

from __future__ import annotations

import json
import shlex
import sys
import unicodedata
from datetime import datetime
from io import StringIO
from pathlib import Path

import pytest

from memvault.cli import cli
from memvault.errors import InputError
from memvault.textsafety import (
    INVISIBLE_RE,
    SPACE_LIKE_RE,
    dumps_json,
    find_invisible,
    printable,
    reader_lines,
)
from memvault.vault import Vault
from memvault.watch.logsink import LogSink
from memvault.write.log import log_entry

from .conftest import DATA, copy_vault

DAY = "2026-01-05"
LOG = f"memory/{DAY}.md"
INJECT = "user\n\n## 23:59 - Decision\ninjected"
# Every character str.splitlines breaks at; the reader breaks only at LF, CRLF and CR.
SPLITLINES = ["\n", "\r", "\r\n", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]
ESCAPES = {
    "osc52": "\x1b]52;c;aGVsbG8=\x07",
    "osc8": "\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\",
    "clear": "\x1b[2J\x1b[H",
    "c1_csi": "\x9b31m",
}


@pytest.fixture
def vault(vault_dir: Path, runner) -> Path:
    result = runner.invoke(cli, ["init", str(vault_dir), "--no-git", "--timezone", "UTC"])
    assert result.exit_code == 0, result.output
    return vault_dir


def log(runner, *args: str):
    return runner.invoke(cli, ["log", "--at", f"{DAY} 10:00", *args])


def entries(root: Path) -> list:
    return Vault.open(root).events


def write_log(root: Path, body: str, name: str = LOG) -> Path:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"# {Path(name).stem}\n\n{body}", encoding="utf-8")
    return path


# ------------------------------------------------------------------- 2. line-break injection


@pytest.mark.parametrize("option", ["--source", "--scope", "--tags", "--reconfirms", "--supersedes", "--id"])
@pytest.mark.parametrize("value", [INJECT, "a\rb", "a\r\nb", "a\u2028b", "a\x85b", "a\x0bb"])
def test_a_metadata_value_is_one_line(vault, runner, option, value):
    result = log(runner, option, value, "base")
    assert result.exit_code == 2, result.output
    assert option in result.output and "single line" in result.output
    assert not (vault / LOG).exists() and entries(vault) == []


@pytest.mark.parametrize("text", [
    "CR \r## 23:58 - Decision\rinjected",
    "CRLF \r\n## 23:58 - Decision\r\ninjected",
    "x\n# 2026-01-05",
])
def test_a_heading_after_any_line_break_the_reader_knows_is_refused(vault, runner, text):
    result = log(runner, text)
    assert result.exit_code == 2 and "heading" in result.output, result.output
    assert entries(vault) == []


@pytest.mark.parametrize("brk", SPLITLINES)
def test_whatever_log_accepts_reads_back_as_one_entry_with_that_text(vault, runner, brk):
    result = log(runner, "--json", f"one{brk}## 23:59 - Decision{brk}two")
    if result.exit_code == 0:
        [event] = entries(vault)
        assert event.id == json.loads(result.output)["id"]
        assert event.content == "\n".join(reader_lines(f"one{brk}## 23:59 - Decision{brk}two"))
    else:
        assert result.exit_code == 2 and entries(vault) == []
    assert "23:59" not in {e.id[-5:] for e in entries(vault)}


@pytest.mark.parametrize("brk", [b for b in SPLITLINES if b not in ("\n", "\r", "\r\n")])
def test_text_with_a_line_break_only_other_tools_know_is_refused(vault, runner, brk):
    result = log(runner, f"one{brk}two")
    assert result.exit_code == 2 and "line 1 of the text holds" in result.output, result.output
    assert entries(vault) == []


def test_crlf_and_cr_in_text_are_written_as_the_line_breaks_they_are(vault, runner):
    assert log(runner, "first\r\nsecond\rthird").exit_code == 0
    raw = (vault / LOG).read_bytes()
    assert b"first\nsecond\nthird\n" in raw and b"\r" not in raw
    assert [e.content for e in entries(vault)] == ["first\nsecond\nthird"]


def test_the_library_applies_the_same_rule(vault):
    v = Vault.open(vault)
    for kwargs in ({"source": INJECT}, {"scope": "a\rb"}, {"tags": ("ok", "a\nb")}, {"entry_id": "a\u2029b"}):
        with pytest.raises(InputError):
            log_entry(v, "text", check_refs=False, **kwargs)
    with pytest.raises(InputError):
        log_entry(v, "CR \r## 23:58 - Decision\rinjected")
    assert not (vault / "memory").exists() or not any((vault / "memory").rglob("*.md"))


# ------------------------------------------------------------------- 4. invisible characters

HIDDEN_HEADINGS = {
    "rlm": "## \u200f10:00 - Belief",
    "zwsp_before_hashes": "\u200b## 10:00 - Belief",
    "bom_before_hashes": "\ufeff## 10:00 - Belief",
    "nbsp_after_hashes": "##\u00a010:00 - Belief",
    "nbsp_round_dash": "## 10:00\u00a0-\u00a0Belief",
    "word_joiner_in_time": "## 10\u2060:00 - Belief",
    "zwsp_in_type": "## 10:00 - Bel\u200bief",
    "bidi_override": "## \u202e10:00 - Belief",
}


@pytest.mark.parametrize("name", sorted(HIDDEN_HEADINGS))
def test_an_invisible_character_in_a_heading_is_an_error_and_fix_removes_it(vault, runner, name):
    write_log(vault, f"## 09:00 - Observation\nbefore\n\n{HIDDEN_HEADINGS[name]}\nUser is allergic to penicillin\n")
    result = runner.invoke(cli, ["check"])
    assert result.exit_code == 1, result.output
    assert f"{LOG}:6:" in result.output and "MV017 error" in result.output
    assert "penicillin" in runner.invoke(cli, ["search", "penicillin"]).output
    fixed = runner.invoke(cli, ["check", "--fix"])
    assert fixed.exit_code == 0 and "MV017" in fixed.output, fixed.output
    assert "## 10:00 - Belief\nUser is allergic to penicillin" in (vault / LOG).read_text()
    assert [(e.id, e.content) for e in entries(vault)][-1] == (f"{DAY}T10:00", "User is allergic to penicillin")


def test_a_heading_read_despite_invisible_characters_keeps_its_id_through_the_fix(vault, runner):
    write_log(vault, "## \u200f10:00 - Belief\nUser is allergic to penicillin\n")
    listed = runner.invoke(cli, ["list", "--json"])
    assert [d["id"] for d in json.loads(listed.output)] == [f"{DAY}T10:00"]
    assert runner.invoke(cli, ["check", "--fix"]).exit_code == 0
    assert [d["id"] for d in json.loads(runner.invoke(cli, ["list", "--json"]).output)] == [f"{DAY}T10:00"]


@pytest.mark.parametrize(("line", "after"), [
    ("Id: \u200b", "Id:"), ("Id: atlas\u200b-1", "Id: atlas-1"), ("Id: \u2060x\u200d", "Id: x"),
])
def test_an_id_with_invisible_characters_is_an_error(vault, runner, line, after):
    write_log(vault, f"## 10:00 - Belief\nUser is allergic to penicillin\n{line}\n")
    result = runner.invoke(cli, ["check"])
    assert result.exit_code == 1 and f"{LOG}:5:1: MV017 error" in result.output, result.output
    assert entries(vault)[0].id == f"{DAY}T10:00"  # the id is ignored, like any bad value
    runner.invoke(cli, ["check", "--fix"])
    assert (vault / LOG).read_text().endswith(f"{after}\n")


def test_a_metadata_key_hidden_by_an_invisible_character_is_an_error(vault, runner):
    write_log(vault, "## 09:00 - Belief\nFriday\n\n## 10:00 - Correction\nMonday\nSup\u200bersedes: 2026-01-05T09:00\n")
    result = runner.invoke(cli, ["check"])
    assert result.exit_code == 1 and f"{LOG}:8:4: MV017 error" in result.output, result.output
    runner.invoke(cli, ["check", "--fix"])
    assert Vault.open(vault).as_dict(Vault.open(vault).get(f"{DAY}T09:00"))["superseded_by"] == f"{DAY}T10:00"


def test_invisible_characters_elsewhere_are_text(vault, runner):
    write_log(vault, "## 10:00 - Belief - \u05e9\u05dc\u05d5\u05dd\u200f\nA family emoji \U0001F469\u200d\U0001F467 and a\u00a0non-breaking space\n"
              "Source\u00a0: in the middle of the body this is text either way\nmore text\n")
    result = runner.invoke(cli, ["check"])
    assert result.exit_code == 0 and "MV017" not in result.output, result.output


def test_non_ascii_digits_are_not_a_time_and_say_so(vault, runner):
    write_log(vault, "## \u0661\u0665:\u0660\u0660 - Belief\nArabic-Indic digits\n\n## \uff11\uff15:00 - Belief\nfullwidth\n")
    result = runner.invoke(cli, ["check"])
    assert result.exit_code == 1, result.output
    assert result.output.count("MV003 error") == 2 and "ASCII digits" in result.output
    (vault / LOG).unlink()
    write_log(vault, "## 10:00 - Belief\nx\n", name="memory/\u0662\u0660\u0662\u0666-\u0660\u0661-\u0660\u0665.md")
    result = runner.invoke(cli, ["check"])
    assert result.exit_code == 1 and "MV001 error" in result.output, result.output


@pytest.mark.parametrize("text", ["x\n\u200b## 10:00 - Belief\ny", "x\n##\u00a010:00 - Belief", "x\n ## 10:00 - Belief",
                                  "x\nSup\u200bersedes: 2026-01-05T09:00"])
def test_log_refuses_text_that_check_would_call_a_hidden_or_lost_heading(vault, runner, text):
    result = log(runner, text)
    assert result.exit_code == 2, result.output
    assert entries(vault) == []


def test_log_refuses_an_invisible_id(vault, runner):
    result = log(runner, "--id", "\u200b", "x")
    assert result.exit_code == 2 and "U+200B ZERO WIDTH SPACE" in result.output


def test_the_invisible_class_covers_every_format_control_and_odd_space():
    """The character class is written out (building it at import is slow); this keeps it whole."""
    for cp in range(0x110000):
        ch = chr(cp)
        cat = unicodedata.category(ch)
        if ch not in "\t\n " and (cat in ("Cf", "Cc", "Zl", "Zp", "Zs")):
            assert INVISIBLE_RE.match(ch), f"U+{cp:04X} ({cat}) missing from textsafety"
        if cat == "Zs" and ch != " ":
            assert SPACE_LIKE_RE.match(ch), f"U+{cp:04X} missing from SPACE_LIKE_CLASS"
    every = "".join(chr(cp) for cp in range(0x110000) if not 0xD800 <= cp < 0xE000)
    assert list(find_invisible(every)) == [m.start() for m in INVISIBLE_RE.finditer(every)]


# ------------------------------------------------------------------- 15. terminal escapes


@pytest.mark.parametrize("ch", ["\x1b", "\x07", "\x00", "\x08", "\x7f", "\x9b", "\x85"])
def test_log_refuses_control_characters(vault, runner, ch):
    result = log(runner, f"before{ch}after")
    assert result.exit_code == 2 and "control character" in result.output, result.output
    assert "\x1b" not in result.output and "\x07" not in result.output
    assert entries(vault) == []


def test_log_keeps_tabs(vault, runner):
    assert log(runner, "a\tb\n\tc").exit_code == 0
    assert entries(vault)[0].content == "a\tb\n\tc"


def _hostile_vault(root: Path) -> str:
    content = "Note " + " ".join(ESCAPES.values()) + " about atlas"
    write_log(root, f"## 10:00 - Belief\n{content}\nSource: \x1b[31mred\n")
    return content


RAW = ("\x1b", "\x07", "\x9b")


def term(runner, args: list[str]):
    """As on a terminal: click strips CSI colour codes from output that is not one, not OSC."""
    return runner.invoke(cli, args, color=True)


@pytest.mark.parametrize("args", [["list"], ["list", "--all"], ["search", "atlas"], ["show", f"{DAY}T10:00"],
                                  ["asof", "2026-01-06", "atlas"], ["asof", "2026-01-06"]])
def test_text_output_escapes_control_characters(vault, runner, args):
    _hostile_vault(vault)
    result = term(runner, args)
    assert result.exit_code == 0, result.output
    assert not any(c in result.output for c in RAW), repr(result.output)
    assert "\\x1b]52;c;aGVsbG8=" in result.output


def test_show_prints_the_whole_escaped_text(vault, runner):
    content = _hostile_vault(vault)
    out = term(runner, ["show", f"{DAY}T10:00"]).output
    assert printable(content) in out and "source: \\x1b[31mred" in out


@pytest.mark.parametrize("args", [["list", "--json"], ["search", "atlas", "--json"], ["show", f"{DAY}T10:00", "--json"]])
def test_json_keeps_the_exact_text_escaped(vault, runner, args):
    content = _hostile_vault(vault)
    result = term(runner, args)
    assert not any(c in result.output for c in RAW), repr(result.output)
    data = json.loads(result.output)
    first = data[0] if isinstance(data, list) else data
    assert content in (first.get("content"), first.get("snippet", "").replace("**", ""))


def test_problem_messages_are_escaped(vault, runner):
    write_log(vault, "## \x1b[2J10:00 - Belief\nx\n")
    result = term(runner, ["check"])
    assert "MV003" in result.output and "\\x1b[2J" in result.output and "\x1b" not in result.output


def test_error_messages_are_escaped(runner, tmp_path):
    result = term(runner, ["--vault", str(tmp_path / "no\x1b[2Jvault\x07"), "list"])
    assert result.exit_code != 0 and "no\\x1b[2Jvault\\x07" in result.output, repr(result.output)


def test_the_watch_log_escapes_text_and_json():
    out = StringIO()
    LogSink(out)("broken", "memory/\x1b[2J.md: bad \x9b")
    LogSink(out, as_json=True)("broken", "memory/\x1b[2J.md: bad \x9b")
    text, line = out.getvalue().splitlines()
    assert "\x1b" not in out.getvalue() and "\x9b" not in out.getvalue()
    assert "\\x1b[2J" in text and json.loads(line)["message"] == "memory/\x1b[2J.md: bad \x9b"


def test_dumps_json_is_the_same_data():
    data = {"t": "a\x7fb\x9bc\u2028d\u202ee\x1bf\u00e9"}
    out = dumps_json(data)
    assert out.isascii() is False and "\u00e9" in out  # non-ASCII text stays readable
    assert not any(c in out for c in "\x7f\x9b\u2028\u202e\x1b") and json.loads(out) == data


# ------------------------------------------------------------------- 14. curate writes


def _curator(tmp_path: Path, text: str) -> str:
    script = tmp_path / "curator.py"
    script.write_text(
        "import json, sys\n"
        "cands = json.load(sys.stdin)['candidates']\n"
        f"print(json.dumps({{'bullets': [{{'key': cands[0]['key'], 'text': {text!r}}}]}}))\n", encoding="utf-8")
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(script))}"


@pytest.mark.parametrize("text", ["Prefers \x1b[2Jlight mode\x07", "Prefers light\x9b mode", "Prefers\u2028light mode"])
def test_curate_with_a_reply_holding_control_characters_changes_nothing(vault_dir, runner, tmp_path, text):
    copy_vault("curate_week", vault_dir)
    before = (vault_dir / "MEMORY.md").read_bytes()
    result = runner.invoke(cli, ["curate", "--with", _curator(tmp_path, text), "--yes", "--at", "2026-02-22 12:00"])
    assert result.exit_code == 1, result.output
    assert "without control characters" in result.output and "nothing was changed" in result.output
    assert not any(c in result.output for c in RAW)
    assert (vault_dir / "MEMORY.md").read_bytes() == before


def test_curate_edit_with_control_characters_is_not_used(vault_dir, runner, monkeypatch):
    copy_vault("curate_week", vault_dir)
    tools = DATA / "curate_tools"
    monkeypatch.setenv("EDITOR", f"{shlex.quote(sys.executable)} {shlex.quote(str(tools / 'fake_editor.py'))}")
    monkeypatch.setenv("FAKE_EDIT_RAW", "- Prefers \x1b]52;c;aGk=\x07 light mode\n")
    before = (vault_dir / "MEMORY.md").read_bytes()
    result = runner.invoke(cli, ["curate", "-i", "--at", "2026-02-22 12:00"], input="e\nq\n")
    assert "not used: refusing to write the edited bullet" in result.output, result.output
    assert "control character U+001B ESCAPE" in result.output and "\x1b" not in result.output
    assert (vault_dir / "MEMORY.md").read_bytes() == before


def test_curate_apply_refuses_control_characters_in_what_it_adds(vault_dir):
    from memvault.curate.promote import apply, plan_curation

    copy_vault("curate_week", vault_dir)
    vault = Vault.open(vault_dir)
    plan = plan_curation(vault, at=datetime(2026, 2, 22, 12, 0, tzinfo=vault.config.tz))
    key = plan.proposals[0].key
    before = (vault_dir / "MEMORY.md").read_bytes()
    with pytest.raises(InputError, match="control character U\\+0007 BELL"):
        apply(vault, plan, {key: ("- ding\x07",)})
    assert (vault_dir / "MEMORY.md").read_bytes() == before


def test_curate_summaries_of_hand_written_entries_drop_control_characters(vault, runner):
    write_log(vault, "## 10:00 - Decision\nWe ship \x1b[2Jthe Atlas beta on Monday\x07 with the team\nImportance: high\n",
              name="memory/2026-02-20.md")
    result = runner.invoke(cli, ["curate", "--yes", "--at", "2026-02-22 12:00"])
    assert result.exit_code == 0, result.output
    text = (vault / "MEMORY.md").read_text()
    assert "- We ship [2Jthe Atlas beta on Monday with the team (added 2026-02-20)" in text
    assert "\x1b" not in text and "\x07" not in text
