"""What a `## HH:MM - Word…` heading is (memvault/entries/headings.py): the rule's parts alone.
The parser's use of them is in test_notes.py; what the real vaults' headings became is there too."""

from __future__ import annotations

import pytest

from memvault.config.core import CORE_TYPES
from memvault.entries.headings import edits, entry_kind, near_type, type_ends

TYPES = CORE_TYPES + ("todo",)


@pytest.mark.parametrize("rest, ends", [
    ("", True), ("  ", True), (" - Hosting", True), (": Hosting", True), ("\u2014Hosting", True), (" (Hetzner)", True),
    (" [[Atlas]]", True), (" #infra", True), (" | Preis", True), (" / B", True), (" \u2705", True), ("!", True),
    (" deck visit", False), (" about the DB", False), (" 2", False), ("s", False), (" \u00fcber", False),
])
def test_type_ends(rest, ends):
    assert type_ends(rest) is ends


@pytest.mark.parametrize("word, near", [
    # plurals and prefixes of 3+ letters
    ("decisions", "decision"), ("observations", "observation"), ("todos", "todo"), ("belie", "belief"),
    ("obs", "observation"), ("corr", "correction"), ("tod", "todo"), ("dec", "decision"),
    # a slip: one edit for 5-7 letters, two for 8+ when the first two letters agree; a swap is one
    ("belif", "belief"), ("beleif", "belief"), ("decison", "decision"), ("desicion", "decision"),
    ("obervaton", "observation"), ("corection", "correction"), ("correciton", "correction"),
    # real words that are not slips
    ("brief", None), ("relief", None), ("revision", None), ("precision", None), ("reservation", None),
    ("meeting", None), ("standup", None), ("note", None), ("do", None), ("be", None), ("to", None),
    ("heartbeat", None), ("velief", None), ("connection", "correction"),  # the price of two edits
])
def test_near_type(word, near):
    assert near_type(word, TYPES) == near


def test_edits_counts_swaps_once_and_stops_past_its_limit():
    assert edits("beleif", "belief", 1) == 1
    assert edits("desicion", "decision", 2) == 2
    assert edits("kitten", "sitting", 5) == 3
    assert edits("abcdefgh", "zyxwvuts", 2) == 3  # known to exceed: limit + 1
    assert edits("a", "abcd", 1) == 2


@pytest.mark.parametrize("word, rest, kind", [
    ("Decision", "", "entry"), ("Decision", " - Hosting", "entry"), ("Decision", " on pricing", None),
    ("Meeting", "", "unknown"), ("Meeting", "  ", "unknown"), ("Meeting", " - Bob", None), ("Meeting", " mit Bob", None),
    ("Decisions", ": Q3", "unknown"), ("Decisions", " for Q3", None), ("Todo", "", "entry"),
])
def test_entry_kind(word, rest, kind):
    assert entry_kind(word, rest, TYPES) == kind
