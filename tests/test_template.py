"""The vault template: its memvault.toml names only settings memvault reads, with their defaults,
and its .gitignore keeps memvault's own files out of git."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from memvault.check.changed import HOOK_DEFAULTS
from memvault.check.registry import CHECK_DEFAULTS
from memvault.cli import cli
from memvault.config.core import Config
from memvault.config.curate import DEFAULTS as CURATE
from memvault.forgotten import DEFAULTS as RETENTION
from memvault.history.timetravel import HISTORY_DEFAULTS
from memvault.memorywire.governance import MEMORYWIRE_DEFAULTS
from memvault.search.index.core import INDEX_DEFAULTS
from memvault.search.weights import SEARCH_DEFAULTS
from memvault.serve.settings import SERVE_DEFAULTS
from memvault.watch.watcher import DEFAULTS as WATCH
from memvault.write.log import TEMPLATE as TEMPLATE_DIR

from .conftest import git

REPO = Path(__file__).resolve().parent.parent
TEMPLATE = TEMPLATE_DIR / "memvault.toml"  # the template `init` copies
from memvault.semantic import SEMANTIC_DEFAULTS  # noqa: E402

KNOWN = {
    "vault": {"timezone", "extra_types", "include", "exclude", "workspace_files"},
    "decay": {"model", "rate"},
    "index": set(INDEX_DEFAULTS),
    "search": set(SEARCH_DEFAULTS),
    "curate": set(CURATE) | {"sections"},
    "checks": set(CHECK_DEFAULTS),
    "watch": set(WATCH),
    "history": set(HISTORY_DEFAULTS),
    "memory": {"sections"},
    "hook": set(HOOK_DEFAULTS),
    "serve": set(SERVE_DEFAULTS),
    "retention": set(RETENTION),
    "memorywire": set(MEMORYWIRE_DEFAULTS),
    "semantic": set(SEMANTIC_DEFAULTS),
}
SECTION_DEFAULTS = {"search": SEARCH_DEFAULTS, "index": INDEX_DEFAULTS, "curate": CURATE,
                    "checks": CHECK_DEFAULTS, "hook": HOOK_DEFAULTS, "serve": SERVE_DEFAULTS,
                    "retention": RETENTION, "memorywire": MEMORYWIRE_DEFAULTS}


def _uncommented(text: str) -> str:
    """The template with every commented-out `# key = value` line enabled."""
    return re.sub(r"(?m)^# ?(?=\[[\w.]+\]$|[\w\"~#][\w\"~#-]* = [-\d\"\[{tf])", "", text)


def test_every_key_in_the_template_is_read_by_memvault():
    for text in (TEMPLATE.read_text(), _uncommented(TEMPLATE.read_text())):
        data = tomllib.loads(text)
        for section, values in data.items():
            assert section in KNOWN, f"unknown section [{section}]"
            if section in ("memory",):
                continue
            unknown = {k for k in values if k not in KNOWN[section]}
            if section == "curate":
                unknown.discard("sections")
            assert not unknown, f"[{section}] keys memvault does not read: {unknown}"


def test_the_template_loads_as_a_config():
    Config.from_dict(tomllib.loads(TEMPLATE.read_text()))


def test_the_commented_sections_name_every_setting_with_its_default():
    """[retention] and [memorywire] are commented out: enabled, each names every key memvault
    reads there, with the value memvault uses when the key is absent."""
    raw = tomllib.loads(_uncommented(TEMPLATE.read_text(encoding="utf-8")))
    Config.from_dict(raw)
    for name, defaults in (("retention", RETENTION), ("memorywire", MEMORYWIRE_DEFAULTS), ("serve", SERVE_DEFAULTS)):
        assert raw[name] == defaults, name


def test_template_settings_are_keys_the_code_reads_with_its_defaults():
    # The template said `w_relevance = 0.5`, `w_importance = 0.3`: keys nothing reads, values that
    # were not the defaults; editing them silently changed nothing.
    raw = tomllib.loads(TEMPLATE.read_text(encoding="utf-8"))
    for name, defaults in SECTION_DEFAULTS.items():
        for key, value in raw.get(name, {}).items():
            assert key in defaults, f"[{name}] {key} is not a setting memvault reads"
            assert value == defaults[key], f"[{name}] {key} = {value!r} but the default is {defaults[key]!r}"


def test_template_points_at_docs_that_exist():
    text = TEMPLATE.read_text(encoding="utf-8")
    for doc in re.findall(r"docs/[\w-]+\.md", text):
        assert (REPO / doc).is_file(), doc


def test_a_temp_file_left_by_a_killed_write_is_ignored_by_git(runner, tmp_path):
    # kill -9 during `memvault log` (or curate, check --fix) can leave `.DATE.md.XXXX.mvtmp` next
    # to the daily log: it showed up in `git status` and went in with the next `git add -A`.
    target = tmp_path / "v"
    assert runner.invoke(cli, ["init", str(target)]).exit_code == 0
    (target / "memory" / ".2026-02-21.md.k3j2h1.mvtmp").write_text("# 2026-02-21\n\n## 09:00 - Bel")
    (target / ".MEMORY.md.abc123.mvtmp").write_text("# Long-Term")
    assert git(target, "status", "--porcelain", "--untracked-files=all").strip() == ""
