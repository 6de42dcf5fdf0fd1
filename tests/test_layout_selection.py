"""Issue 12: which files are the vault's. `[vault] include`/`exclude`/`workspace_files` make
one `Selection`; the pure decision is tested by table, the walk on real folders, the
settings through memvault.toml."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memvault.cli import cli
from memvault.config.core import Config
from memvault.errors import ConfigError, InputError
from memvault.layout import DEFAULT, WORKSPACE_FILES, Selection, iter_markdown, vault_paths, walk
from memvault.parsed import ParsedVault

from .helpers_check import write_vault

OPENCLAW = Selection.of(Config.from_dict({"vault": {"workspace_files": True}}))
CUSTOM = Selection(("MEMORY.md", "memory/**/*.md", "notes/*.md", "Journal"),
                   ("memory/archive", "memory/**/entwurf-*.md", "notes/private*.md"))


@pytest.mark.parametrize(("selection", "path", "selected"), [
    # the default: MEMORY.md and every Markdown file under memory/, at any depth
    (DEFAULT, "MEMORY.md", True),
    (DEFAULT, "memory/2026-01-15.md", True),
    (DEFAULT, "memory/2026-01-26-fologram-research.md", True),
    (DEFAULT, "memory/archive/2026-01-15.md", True),
    (DEFAULT, "memory/2025/12/2025-12-31.md", True),
    (DEFAULT, "memory/projects/ideen.md", True),
    (DEFAULT, "memory/Notizen über Müller & Söhne.md", True),
    (DEFAULT, "memory/README.md", True),
    (DEFAULT, "memory/MEMORY.md", True),  # memory too: read as notes, not as the curated file
    (DEFAULT, "memory/2026-01-15.txt", False),
    (DEFAULT, "memory/2026-01-15.md.swp", False),
    (DEFAULT, "memory/.obsidian/x.md", False),
    (DEFAULT, "memory/.2026-01-15.md", False),
    (DEFAULT, "memory/node_modules/x.md", False),
    (DEFAULT, "memory/.trash/2026-01-15.md", False),
    (DEFAULT, "AGENTS.md", False),
    (DEFAULT, "README.md", False),
    (DEFAULT, "notes/2026-01-15.md", False),
    (DEFAULT, "memory", False),
    # OpenClaw's workspace files, opted in
    (OPENCLAW, "AGENTS.md", True),
    (OPENCLAW, "SOUL.md", True),
    (OPENCLAW, "HEARTBEAT.md", True),
    (OPENCLAW, "README.md", False),
    (OPENCLAW, "docs/AGENTS.md", False),
    (OPENCLAW, "memory/2026-01-15.md", True),
    # globs: `*` stays in one folder, a pattern naming a folder covers what is in it
    (CUSTOM, "notes/a.md", True),
    (CUSTOM, "notes/sub/a.md", False),
    (CUSTOM, "notes/private-x.md", False),
    (CUSTOM, "Journal/2026/woche 3.md", True),
    (CUSTOM, "journal/x.md", False),  # case counts, as in git
    (CUSTOM, "memory/archive/2026-01-15.md", False),
    (CUSTOM, "memory/archive/old/notes.md", False),
    (CUSTOM, "memory/p/entwurf-1.md", False),
    (CUSTOM, "memory/entwurf-1.md", False),
    (CUSTOM, "memory/p/final.md", True),
    # MEMORY.md and the days' own files are where memvault writes: never excluded
    (Selection(("notes/**",), ("**",)), "MEMORY.md", True),
    (Selection(("notes/**",), ("**",)), "memory/2026-01-15.md", True),
    (Selection(("notes/**",), ("**",)), "memory/2026/2026-01-15.md", True),
    (Selection(("notes/**",), ("**",)), "memory/2026/01/2026-01-15.md", True),
    (Selection(("notes/**",), ("**",)), "memory/2026/02/2026-01-15.md", False),  # folders disagree: a note
    (Selection(("notes/**",), ("**",)), "memory/2026-01-15-topic.md", False),
    (Selection(("notes/**",), ("**",)), "notes/x.md", False),
    (Selection(("**/*.md",)), "deep/down/x.md", True),
    (Selection(("**/*.md",)), "x.md", True),
    (Selection(("**/*.md",)), ".git/x.md", False),
    (Selection(("*/[!_]*.md",)), "a/b.md", True),
    (Selection(("*/[!_]*.md",)), "a/_b.md", False),
    (Selection(("memory/?.md",)), "memory/a.md", True),
    (Selection(("memory/?.md",)), "notes/ab.md", False),
])
def test_which_files_are_the_vaults(selection, path, selected):
    assert selection.selects(path) is selected


@pytest.mark.parametrize(("selection", "folder", "holds"), [
    (DEFAULT, "", True), (DEFAULT, "memory", True), (DEFAULT, "memory/archive/2026", True),
    (DEFAULT, "notes", False), (DEFAULT, ".git", False), (DEFAULT, "memory/.obsidian", False),
    (CUSTOM, "notes", True), (CUSTOM, "notes/sub", False), (CUSTOM, "Journal/a/b", True),
    (CUSTOM, "memory/archive", False), (CUSTOM, "memory/archive/x", False),
    (CUSTOM, "other", False), (CUSTOM, "memory/2026/01", True),
    (Selection(("notes/**",), ("memory/**",)), "memory/2026", True),  # the days' own files may be there
    (Selection(("notes/**",), ("memory/**",)), "memory/projects", False),
])
def test_which_folders_can_hold_vault_files(selection, folder, holds):
    assert selection.may_hold(folder) is holds


def test_git_pathspecs_and_walk_roots_cover_every_selected_file():
    assert DEFAULT.pathspecs == ("MEMORY.md", "memory") and DEFAULT.roots == ("memory",) and not DEFAULT.top_files
    assert set(OPENCLAW.pathspecs) == {"MEMORY.md", "memory", *WORKSPACE_FILES} and OPENCLAW.top_files
    assert CUSTOM.pathspecs == ("Journal", "MEMORY.md", "memory", "notes")
    assert CUSTOM.roots == ("memory", "notes", "Journal")
    assert Selection(("**/*.md",)).pathspecs == (".",) and "" in Selection(("**/*.md",)).roots
    assert Selection(("memory/sub/**/*.md", "memory")).pathspecs == ("MEMORY.md", "memory")


def test_selection_comes_from_the_vault_table_and_is_shared():
    config = Config.from_dict({"vault": {"include": ["memory/**/*.md", "notes"], "exclude": ["memory/archive"]}})
    chosen = Selection.of(config)
    assert chosen.include == ("memory/**/*.md", "notes") and chosen.exclude == ("memory/archive",)
    assert Selection.of(config) is chosen  # built once: the walk and the watcher ask the same object
    assert Selection.of(Config()) == DEFAULT
    with_files = Selection.of(Config.from_dict({"vault": {"include": ["AGENTS.md"], "workspace_files": True}}))
    assert with_files.include.count("AGENTS.md") == 1 and "SOUL.md" in with_files.include


def real_vault(root: Path) -> Path:
    """What agents' memory folders look like: topic files, archives, year folders, notes."""
    return write_vault(root, {
        "MEMORY.md": "# Long-Term Memory\n\n## Preferences\n- Tea\n",
        "AGENTS.md": "# AGENTS.md\n\n## Memory\n- Write daily logs\n",
        "README.md": "# my agent\n",
        "memory/2026-01-15.md": "# 2026-01-15\n\nArchived to archive/2026-01-15.md\n",
        "memory/archive/2026-01-15.md": "# 2026-01-15\n\n## 09:00 - Decision\nUse Postgres\n",
        "memory/2026-01-26-fologram-research.md": "# Fologram research\n\n## 14:00 - Observation\nFologram runs on HoloLens\n",
        "memory/2026-02-05-memory-leak-incident.md": "# 2026-02-05 - Memory leak\n\n- 14:30 restarted the gateway\n",
        "memory/2025/12/2025-12-31.md": "# 2025-12-31\n\n## 23:00 - Observation\nSilvester\n",
        "memory/projects/ideen.md": "# Ideen\n\n## Werkstatt\n- Regal für die Garage bauen\n",
        "memory/Notizen über Müller.md": "# Müller\n\nAnruf wegen Angebot\n",
        "memory/notes.txt": "not markdown\n",
        "memory/.obsidian/workspace.md": "editor state\n",
        "other/2026-01-15.md": "# 2026-01-15\n",
    })


def test_the_walk_reads_every_markdown_file_under_memory(vault_dir):
    real_vault(vault_dir)
    assert sorted(iter_markdown(vault_dir)) == [
        "MEMORY.md", "memory/2025/12/2025-12-31.md", "memory/2026-01-15.md",
        "memory/2026-01-26-fologram-research.md", "memory/2026-02-05-memory-leak-incident.md",
        "memory/Notizen über Müller.md", "memory/archive/2026-01-15.md", "memory/projects/ideen.md",
    ]


def test_the_walk_follows_the_selection_and_lists_only_what_it_selects(vault_dir):
    real_vault(vault_dir)
    (vault_dir / "notes").mkdir()
    (vault_dir / "notes" / "a.md").write_text("# a\n")
    (vault_dir / "notes" / "private-b.md").write_text("# b\n")
    (vault_dir / "Journal" / "2026").mkdir(parents=True)
    (vault_dir / "Journal" / "2026" / "woche 3.md").write_text("# w3\n")
    for selection in (OPENCLAW, CUSTOM, Selection(("**/*.md",)), Selection(("memory/projects",), ("**",))):
        listed = sorted(iter_markdown(vault_dir, selection=selection))
        every = sorted(p.relative_to(vault_dir).as_posix() for p in vault_dir.rglob("*") if p.is_file())
        assert listed == [p for p in every if selection.selects(p)], selection


def test_a_link_is_reported_only_where_a_vault_file_could_be(vault_dir):
    real_vault(vault_dir)
    os.symlink(vault_dir / "README.md", vault_dir / "SOUL.md")
    os.symlink(vault_dir / "other", vault_dir / "memory" / "linked")
    os.symlink(vault_dir / "README.md", vault_dir / "notes.md")  # not the vault's under any selection here
    for selection, reported in ((DEFAULT, {"memory/linked"}), (OPENCLAW, {"memory/linked", "SOUL.md"})):
        skipped: list = []
        listed = [rel for rel, _ in walk(vault_dir, skipped, selection=selection)]
        assert {p.path for p in skipped} == reported and {p.code for p in skipped} == {"MV110"}
        assert "SOUL.md" not in listed and not any(p.startswith("memory/linked") for p in listed)


def test_command_line_paths_follow_the_selection(vault_dir, monkeypatch):
    real_vault(vault_dir)
    monkeypatch.chdir(vault_dir)
    assert vault_paths(vault_dir, ["AGENTS.md"], selection=OPENCLAW) == ["AGENTS.md"]
    with pytest.raises(InputError, match=r"AGENTS.md is not a vault file: the vault reads MEMORY.md, memory/\*\*/\*.md \("):
        vault_paths(vault_dir, ["AGENTS.md"])
    assert vault_paths(vault_dir, ["memory/projects"]) == ["memory/projects/ideen.md"]


@pytest.mark.parametrize(("toml", "key"), [
    ('include = "memory/**/*.md"', "include"),
    ('include = ["/etc/*.md"]', "include"),
    ('include = ["../other/*.md"]', "include"),
    ('exclude = ["memory//x"]', "exclude"),
    ('exclude = ["memory\\\\archive"]', "exclude"),
    ('exclude = [""]', "exclude"),
    ('workspace_files = "yes"', "workspace_files"),
])
def test_bad_include_and_exclude_are_one_error_naming_the_key(runner, vault_dir, toml, key):
    write_vault(vault_dir, {"memvault.toml": f"[vault]\n{toml}\n", "memory/2026-01-15.md": "# 2026-01-15\n"})
    result = runner.invoke(cli, ["list"])
    assert result.exit_code == 1 and f"[vault] {key} must be" in result.output, result.output
    with pytest.raises(ConfigError, match=rf"\[vault\] {key} must be"):
        ParsedVault.open(vault_dir)
