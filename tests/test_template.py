"""The vault template's memvault.toml names only settings memvault reads."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from memvault.check.registry import CHECK_DEFAULTS
from memvault.config.core import Config
from memvault.config.curate import DEFAULTS as CURATE
from memvault.history.timetravel import HISTORY_DEFAULTS
from memvault.search.index.core import INDEX_DEFAULTS
from memvault.search.weights import SEARCH_DEFAULTS
from memvault.watch.watcher import DEFAULTS as WATCH

TEMPLATE = Path(__file__).resolve().parent.parent / "vault_template" / "memvault.toml"
KNOWN = {
    "vault": {"timezone", "extra_types"},
    "decay": {"model", "rate"},
    "index": set(INDEX_DEFAULTS),
    "search": set(SEARCH_DEFAULTS),
    "curate": set(CURATE) | {"sections"},
    "checks": set(CHECK_DEFAULTS),
    "watch": set(WATCH),
    "history": set(HISTORY_DEFAULTS),
    "memory": {"sections"},
}


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
