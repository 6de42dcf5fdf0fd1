"""The pure parts of curate: MEMORY.md splices, bullet annotations, links, similarity, settings."""

from __future__ import annotations

from datetime import date, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memvault.cli import cli
from memvault.config.core import Config
from memvault.config.curate import Settings
from memvault.curate.document import (
    Splice,
    add_sources,
    apply_splices,
    bump_updated,
    cap_links,
    check_edit,
    load_doc,
    render_bullet,
    section_insert,
)
from memvault.curate.proposals import bullet_text, link_for
from memvault.curate.sources import resolve_source
from memvault.entries.daily import parse_log
from memvault.entries.memory_md import parse_memory
from memvault.entries.model import Event
from memvault.entries.similarity import signature, similarity
from memvault.entries.timeline import Timeline
from memvault.errors import ConfigError, InputError, MemvaultError

CFG = Config(timezone="UTC")


def doc_of(text: str):
    return load_doc(text.encode("utf-8"), CFG)


def insert(text: str, section: str, line: str) -> str:
    doc = doc_of(text)
    index, blank = section_insert(doc, section)
    return apply_splices(doc, [Splice(index, index, tuple([""] * blank + [line]))])


def test_new_bullets_go_after_the_last_bullet_of_their_section():
    text = "# M\n\n## A\n- one\n  - nested\n\nprose after\n\n## B\n"
    assert insert(text, "a", "- two") == "# M\n\n## A\n- one\n  - nested\n- two\n\nprose after\n\n## B\n"
    assert insert(text, "B", "- x") == "# M\n\n## A\n- one\n  - nested\n\nprose after\n\n## B\n- x\n"


def test_new_bullets_go_above_the_sections_first_subsection():
    # "### Someday" under "Active Projects" holds its own list; an active project's fact goes above it.
    text = "## Active Projects\n- Atlas: started\n\n### Someday\n1. Learn Rust\n- later\n\n## B\n"
    assert insert(text, "Active Projects", "- new") == (
        "## Active Projects\n- Atlas: started\n- new\n\n### Someday\n1. Learn Rust\n- later\n\n## B\n")
    only_sub = "## A\n### Sub\n- s\n"
    assert insert(only_sub, "A", "- new") == "## A\n- new\n### Sub\n- s\n"
    fenced = "## A\n- a\n```\n### not a heading\n```\n- b\n"
    assert insert(fenced, "A", "- new") == "## A\n- a\n```\n### not a heading\n```\n- b\n- new\n"


def test_a_section_with_only_prose_gets_a_blank_line_first():
    text = "## Notes\nWritten by hand.\n"
    assert insert(text, "Notes", "- x") == "## Notes\nWritten by hand.\n\n- x\n"


def test_code_blocks_are_not_sections_or_bullets():
    doc = doc_of("## A\n```\n## B\n- not a bullet\n```\n")
    assert [s.name for s in doc.sections] == ["A"]
    assert doc.bullets == []


def test_mixed_line_endings_and_bom_survive_a_splice():
    raw = b"\xef\xbb\xbf# M\r\n\r\n## A\n- one\r\n"
    doc = load_doc(raw, CFG)
    out = apply_splices(doc, [Splice(4, 4, ("- two",))])
    assert out.encode("utf-8") == b"\xef\xbb\xbf# M\r\n\r\n## A\n- one\r\n- two\r\n"


def test_files_curate_cannot_keep_byte_for_byte_are_refused():
    with pytest.raises(MemvaultError, match="MEMORY.md:2: not valid UTF-8"):
        load_doc(b"# M\n- caf\xe9\n", CFG)
    with pytest.raises(MemvaultError, match="bare CR"):
        load_doc(b"# M\r- one\r", CFG)


def test_a_marker_without_a_zone_is_ignored():
    doc = doc_of("# M\n<!-- memvault: curated 2026-02-22T12:00:00 -->\n<!-- memvault: curated 2026-02-20T12:00:00+00:00 -->\n")
    assert doc.marker_at == datetime.fromisoformat("2026-02-20T12:00:00+00:00")
    assert doc.marker_line == 2


LINE_KINDS = st.sampled_from([
    "## A", "## B", "## C", "- bullet", "* star bullet  ", "  - nested", "1. numbered", "prose text",
    "", "   ", "> quote", "### sub", "```", "<!-- comment -->", "\t- tabbed",
])


@settings(max_examples=150, deadline=None)
@given(lines=st.lists(LINE_KINDS, max_size=25), section=st.sampled_from(["A", "B", "C"]), crlf=st.booleans())
def test_inserting_never_changes_a_single_existing_line(lines, section, crlf):
    eol = "\r\n" if crlf else "\n"
    text = eol.join(lines)
    doc = load_doc(text.encode("utf-8"), CFG)
    where = section_insert(doc, section)
    if where is None or (doc.open_fence is not None and where[0] > doc.open_fence):
        return  # plan_curation refuses that case (see test_an_unclosed_code_block_is_refused)
    index, blank = where
    new = ["", "- NEW"] if blank else ["- NEW"]
    out = apply_splices(doc, [Splice(index, index, tuple(new))])
    out_lines = out.split("\n")
    marker = "- NEW\r" if "\r\n" in text else "- NEW"
    at = out_lines.index(marker)
    del out_lines[at - len(new) + 1 : at + 1]
    assert "\n".join(out_lines) == text
    parsed = parse_memory(out.replace("\r\n", "\n"), "MEMORY.md", CFG)
    assert any(e.content == "NEW" and e.category == section for e in parsed.events)


def test_sources_join_the_annotation_where_it_is_and_stay_capped():
    lines = ["- fact", "  (source: [[a]])"]
    assert add_sources(lines, ("[[b]]",), 5) == ["- fact", "  (source: [[a]], [[b]])"]
    assert add_sources(["- fact ^id1"], ("[[b]]",), 5) == ["- fact (source: [[b]]) ^id1"]
    assert add_sources(lines, ("[[a]]",), 5) == lines
    assert cap_links(["1", "2", "3", "4", "5", "6"], 3) == ["1", "5", "6"]


def test_bumping_the_updated_date_keeps_was_and_never_goes_back():
    line = "- Prefers light mode (updated 2026-02-21, was: dark mode) ^t"
    assert bump_updated(line, date(2026, 3, 1)) == "- Prefers light mode (updated 2026-03-01, was: dark mode) ^t"
    assert bump_updated(line, date(2026, 2, 1)) == line
    assert bump_updated("- fact (source: [[a]])", date(2026, 3, 1)) == "- fact (updated 2026-03-01) (source: [[a]])"


def test_rendered_bullets_parse_back():
    line = render_bullet("Prefers light mode", updated=date(2026, 2, 21), was="dark (the old) mode",
                         links=("[[2026-02-21#16:00 - Correction]]",), block_id="mv-abc")
    ev = parse_memory(f"## Prefs\n{line}\n", "MEMORY.md", CFG).events[0]
    assert (ev.content, ev.previous, ev.id) == ("Prefers light mode", "dark (the old) mode", "mv-abc")
    assert ev.sources == ("2026-02-21#16:00 - Correction",)


def _log(text: str, day: str = "2026-02-21") -> list[Event]:
    return parse_log(text, f"memory/{day}.md", CFG).events


def test_links_use_the_heading_and_an_alias_only_when_needed():
    events = _log("# 2026-02-21\n\n## 09:15 - Observation\nA\n\n## 09:15 - Observation\nB\n\n"
                  "## 10:00 - Belief - Atlas (kickoff)\nC\n\n## 11:00 - Decision\nD\n")
    tl = Timeline(events, CFG)
    assert [link_for(e, tl) for e in events] == [
        "[[2026-02-21#09:15 - Observation|2026-02-21T09:15]]",
        "[[2026-02-21#09:15 - Observation|2026-02-21T09:15-2]]",
        "[[2026-02-21|2026-02-21T10:00]]",
        "[[2026-02-21#11:00 - Decision]]",
    ]
    assert resolve_source(tl, "2026-02-21#09:15 - Observation", "2026-02-21T09:15-2") == "2026-02-21T09:15-2"
    # Obsidian's own completion drops the colon; both forms find the entry.
    assert resolve_source(tl, "2026-02-21#11 00 - Decision", None) == "2026-02-21T11:00"
    assert resolve_source(tl, "user", None, is_link=False) is None


def test_bullet_text_is_the_first_paragraph_on_one_line():
    ev = _log("# 2026-02-21\n\n## 09:00 - Belief\n- User likes\n- short answers ^blk\n\nMore detail here.\n")[0]
    assert bullet_text(ev, 280) == "User likes short answers"
    long = _log("# 2026-02-21\n\n## 09:00 - Belief\n" + "word " * 100 + "\n")[0]
    assert len(bullet_text(long, 50)) <= 50 and bullet_text(long, 50).endswith("\u2026")
    tricky = _log("# 2026-02-21\n\n## 09:00 - Belief\nIt said (updated 2020-01-01) in the doc\n")[0]
    assert bullet_text(tricky, 280) == "It said [updated 2020-01-01] in the doc"


def test_similarity_respects_negation():
    a, b = signature("User prefers dark mode"), signature("User does not prefer dark mode")
    assert similarity(a, b) == 0.0
    assert similarity(a, b, guard=False) == 1.0  # "does" and "not" are not content words
    assert similarity(signature("Staging is slow in the mornings"), signature("staging slow again mornings")) == 1.0


def test_an_edited_bullet_must_be_one_bullet():
    assert check_edit("- edited text\n\n", "mv-1") == ("- edited text ^mv-1",)
    assert check_edit("- edited ^keep\n  - detail\n", "mv-1") == ("- edited ^keep", "  - detail")
    assert check_edit("\n\n", "mv-1") == ()
    with pytest.raises(InputError):
        check_edit("- one\n- two\n", "mv-1")
    with pytest.raises(InputError):
        check_edit("just prose\n", "mv-1")


def test_settings_are_checked():
    assert Settings.from_config(Config.from_dict({})).budget_chars == 8000
    with pytest.raises(ConfigError, match=r"\[curate\] similarity must be a number between 0.1 and 1"):
        Settings.from_config(Config.from_dict({"curate": {"similarity": 2}}))
    with pytest.raises(ConfigError, match="archive_file"):
        Settings.from_config(Config.from_dict({"curate": {"archive_file": "MEMORY.md"}}))


def test_a_bad_setting_is_a_clear_cli_error(vault_dir, runner):
    (vault_dir / "memvault.toml").write_text('[curate]\nmin_days = "two"\n')
    result = runner.invoke(cli, ["curate", "--dry-run"])
    assert result.exit_code == 1 and "min_days must be a whole number" in result.output


def test_an_unclosed_code_block_is_refused(vault_dir, runner):
    (vault_dir / "memory").mkdir()
    (vault_dir / "memory" / "2026-02-21.md").write_text("# 2026-02-21\n\n## 14:30 - Decision\nShip the beta in March\n")
    (vault_dir / "MEMORY.md").write_text("# M\n\n## Decisions\n- Old one\n\n```\nnever closed\n")
    ok = runner.invoke(cli, ["curate", "--dry-run", "--at", "2026-02-22"])
    assert ok.exit_code == 0 and "+- Ship the beta in March" in ok.output  # lands before the fence
    (vault_dir / "MEMORY.md").write_text("# M\n\n```\nnever closed\n\n## Decisions\n")
    result = runner.invoke(cli, ["curate", "--dry-run", "--at", "2026-02-22"])
    assert result.exit_code == 1
    assert "MEMORY.md:3: this code block is never closed" in result.output


def test_with_replies_must_be_inline_markdown():
    from memvault.curate.with_command import inline_markdown

    assert inline_markdown("Prefers **light** mode, see `docs`")
    for block in ("# Heading", "- nested list", "> quote", "1. item", "---", "```"):
        assert not inline_markdown(block), block
