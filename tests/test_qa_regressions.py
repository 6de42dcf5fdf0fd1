"""Regressions found by hands-on QA: each test failed before its fix."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from memvault.curate_settings import DEFAULTS as CURATE_DEFAULTS
from memvault.index.core import INDEX_DEFAULTS
from memvault.rank import SEARCH_DEFAULTS
from memvault.validate import CHECK_DEFAULTS
from memvault.write import TEMPLATE

TEMPLATE_TOML = TEMPLATE / "memvault.toml"
REPO = Path(__file__).resolve().parent.parent
SECTION_DEFAULTS = {"search": SEARCH_DEFAULTS, "index": INDEX_DEFAULTS, "curate": CURATE_DEFAULTS,
                    "checks": CHECK_DEFAULTS}
COMMENTED_KEY_RE = re.compile(r"^#\s*([a-z_]+)\s*=")
TABLE_RE = re.compile(r"^(?:#\s*)?\[([\w.]+)\]")  # a table header, also a commented-out one


def test_template_settings_are_keys_the_code_reads_with_its_defaults():
    # The template said `w_relevance = 0.5`, `w_importance = 0.3`: keys nothing reads, values that
    # were not the defaults; editing them silently changed nothing.
    raw = tomllib.loads(TEMPLATE_TOML.read_text(encoding="utf-8"))
    for name, defaults in SECTION_DEFAULTS.items():
        for key, value in raw.get(name, {}).items():
            assert key in defaults, f"[{name}] {key} is not a setting memvault reads"
            assert value == defaults[key], f"[{name}] {key} = {value!r} but the default is {defaults[key]!r}"


def test_template_commented_settings_are_known_keys():
    section = None
    for line in TEMPLATE_TOML.read_text(encoding="utf-8").splitlines():
        table = TABLE_RE.match(line)
        if table:
            section = table[1]
        m = COMMENTED_KEY_RE.match(line)
        if m and section in SECTION_DEFAULTS:
            assert m[1] in SECTION_DEFAULTS[section], f"[{section}] # {m[1]} is not a setting"


def test_template_points_at_docs_that_exist():
    text = TEMPLATE_TOML.read_text(encoding="utf-8")
    for doc in re.findall(r"docs/[\w-]+\.md", text):
        assert (REPO / doc).is_file(), doc
