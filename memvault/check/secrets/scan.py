"""Secrets never go into memory: find credentials in text without echoing them.

`find_secrets(text)` returns where each suspected secret is and what kind it is, never the
value, so a report about a leaked key does not leak it again (in a terminal, a CI log or
an agent's context).

The rules, most specific first, so a token is named by what it is:
1. fixed shapes (secretpatterns.py): provider tokens (`ghp_`, `AKIA`, `sk-ant-`), private
   key blocks and bodies, webhook URLs, credentials in URLs, password hashes;
2. a credential word in front of the value (secretwords.py): assignments (`password=...`,
   `"apiKey": "..."`), prose ("the password for prod is ..."), PINs and card codes;
3. command lines (secretcli.py): `sshpass -p`, `mysql -p...`, `curl -u user:...`, `--password`;
4. wallet seed phrases after their word (seed.py);
5. high-entropy tokens in any assignment (`FOO_SIG=...`, `"nonce": "..."`), unless the key or
   the value is public by its shape (shapes.py: `post_id`, `wallet_address`, `feature/…`).
Invisible format characters (zero-width space, soft hyphen, bidi marks) are removed before
scanning, so `gh<ZWSP>p_...` is still a GitHub token; positions are reported in the original.

A line carrying `memvault: allow-secret` is a reviewed false positive: `check` reports its
findings as information, not errors. Only a person editing the file can add it: text written
by memvault itself (`log`, curate) is scanned with the mark ignored (`refuse_secrets`).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from memvault.check.secrets.cli import HINTS as CLI_HINTS
from memvault.check.secrets.cli import cli_hits
from memvault.check.secrets.patterns import SHORT_HINTS, pattern_hits
from memvault.check.secrets.seed import HINTS as SEED_HINTS
from memvault.check.secrets.seed import seed_hits
from memvault.check.secrets.shapes import (
    chain_address,
    identifier,
    key_qualifier,
    label_names_id,
    object_id,
    public_name,
    ref_or_url,
)
from memvault.check.secrets.values import demo, entropy, looks_random
from memvault.check.secrets.words import (
    ASSIGN_HINTS,
    PROSE_HINTS,
    cred_assignments,
    passphrase_hits,
    prose_hits,
)
from memvault.errors import SecretRefused

__all__ = ["ALLOW_MARK", "SecretFinding", "entropy", "find_secrets", "looks_random",
           "refuse_secrets", "scan_secrets"]

ALLOW_MARK = "memvault: allow-secret"
# Format characters (Unicode Cf), variation selectors, the combining grapheme joiner and the
# Hangul fillers: they render as nothing, so they can hide inside a token.
INVISIBLE_RE = re.compile(
    "[\u00ad\u034f\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u115f\u1160\u17b4\u17b5\u180b-\u180f"
    "\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff9-\ufffb"
    "\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0001\U000e0020-\U000e007f\U000e0100-\U000e01ef]"
)
# Any `key = value` / `key: value` / `"key": "value"` whose value is one long token.
ASSIGN_TOKEN_RE = re.compile(
    r"(?<![\w.-])(?P<key>[A-Za-z_][\w.-]{0,63})[\"']?[ \t]{0,16}(?::=|[:=])[ \t]{0,16}(?P<q>[\"']?)"
    r"(?P<value>[A-Za-z0-9+/_~.=-]{20,1024})"
)
LONG_RUN_RE = re.compile(r"\S{15,}")  # the shortest token a fixed-shape pattern matches


@dataclass(frozen=True, slots=True)
class SecretFinding:
    line: int
    col: int
    kind: str
    code: str
    allowed: bool = False  # on a line marked `memvault: allow-secret`

    def message(self) -> str:
        article = "" if self.kind.startswith("credentials") else "an " if self.kind[:1].lower() in "aeiou" else "a "
        return f"looks like {article}{self.kind}; secrets must not be stored in memory (value not shown)"


Hit = tuple[int, int, str, str]  # (start, end, kind, code) in the scanned text


class _Visible:
    """The text without invisible characters, and the way back to the original offsets."""

    def __init__(self, text: str):
        removed = [] if text.isascii() else [m.start() for m in INVISIBLE_RE.finditer(text)]
        self.text = INVISIBLE_RE.sub("", text) if removed else text
        self.at = [r - j for j, r in enumerate(removed)]  # where each removal sits in self.text

    def original(self, offset: int) -> int:
        return offset + bisect_right(self.at, offset) if self.at else offset


def _lower(text: str) -> str:
    """text.lower() with the same length (a few characters lower-case to two)."""
    low = text.lower()
    return low if len(low) == len(text) else "".join(c if len(c.lower()) != 1 else c.lower() for c in text)


def _word_lines(text: str, low: str, words: Iterable[str]) -> dict[str, set[int]]:
    """{word: start offsets of the lines where it occurs}, one str.find pass per word (fast, in C)."""
    out: dict[str, set[int]] = {}
    for word in words:
        starts = out[word] = set()
        i = low.find(word)
        while i >= 0:
            starts.add(text.rfind("\n", 0, i) + 1)
            end = text.find("\n", i)
            if end < 0:
                break
            i = low.find(word, end)
    return out


def _shortest_within(words: Iterable[str]) -> dict[str, str]:
    """Each hint -> the shortest hint it contains: a line with 'sshpass' is among the lines with 'pass'."""
    words = sorted(set(words), key=len)
    return {w: next(v for v in words if v in w) for w in words}


def _run_lines(text: str) -> set[int]:
    """Start offsets of the lines holding an unbroken run of 15+ characters (one pass)."""
    starts: set[int] = set()
    line_end = -1  # the newline ending the line of the last run (-1: none seen yet)
    for m in LONG_RUN_RE.finditer(text):
        at = m.start()
        if line_end >= 0 and at < line_end:
            continue  # same line as the previous run
        start = text.rfind("\n", 0, at) + 1  # scans back over this line only
        starts.add(start)
        line_end = text.find("\n", at)
        if line_end < 0:
            break
    return starts


def _lines_at(text: str, starts: set[int]) -> Iterator[tuple[int, str]]:
    for start in sorted(starts):
        end = text.find("\n", start)
        yield start, text[start : end if end >= 0 else len(text)]


# One line search per distinct word: a hint that contains another (sshpass, private key) uses its lines.
BASE_HINTS = _shortest_within((*ASSIGN_HINTS, *PROSE_HINTS, *CLI_HINTS, *SHORT_HINTS, *SEED_HINTS))


def _hits(text: str) -> list[Hit]:
    """Every rule over the lines where it can match.

    Fixed-shape tokens need an unbroken run of 15+ characters (or a literal such as `://`);
    the word-led rules need their word. Prose has few such lines, so a whole-vault check
    stays near the cost of reading the files.
    """
    low = _lower(text)
    runs = _run_lines(text)
    found = _word_lines(text, low, set(BASE_HINTS.values()))

    def lines(words: tuple[str, ...]) -> list[tuple[int, str]]:
        return list(_lines_at(text, set().union(*(found[BASE_HINTS[w]] for w in words))))

    hits: list[Hit] = []
    for start, line in _lines_at(text, runs | set().union(*(found[BASE_HINTS[w]] for w in SHORT_HINTS))):
        hits.extend(pattern_hits(start, line))
    hits.extend(cred_assignments(text, low, lines(ASSIGN_HINTS)))
    for start, line in lines(PROSE_HINTS):
        hits.extend(prose_hits(start, line))
        hits.extend(passphrase_hits(start, line))
    for start, line in lines(CLI_HINTS):
        hits.extend(cli_hits(start, line))
    for start, line in lines(SEED_HINTS):
        hits.extend(seed_hits(start, line))
    for start, line in _lines_at(text, runs):
        for m in ASSIGN_TOKEN_RE.finditer(line):
            if line[m.start() - 1 : m.start()] in ("?", "&") and m.start() > 0:
                continue  # a URL's query parameter: credential-named ones (token=, key=) have their own rule
            if random_assigned(m["key"], m["value"], line[max(0, m.start() - 60) : m.start()]):
                hits.append((start + m.start("value"), start + m.end("value"),
                             f"high-entropy value assigned to '{m['key']}'", "MV508"))
    return hits


def random_assigned(key: str, value: str, label: str) -> bool:
    """A random-looking value under a key that is no credential word: a secret unless it is public.

    Public: what the key names (`post_id`, `wallet_address`, `Branch`, `contentHash`; or the
    words before it: "Nano ID for the invite:", "cache key:") or what the value is (an address, a host path,
    a git branch, a lower-case name; `_Z…` is a mangled C++ symbol).
    """
    if demo(value) or value.startswith("_Z") or not looks_random(value):
        return False
    label = label.rsplit(",", 1)[-1].rsplit(";", 1)[-1]
    if public_name(key) or label_names_id(label):
        return False
    if key.lower() == "key" and label.split() and key_qualifier(label.split()[-1].strip("*_`(")):
        return False  # "cache key: …"
    return not (chain_address(value) or ref_or_url(value) or identifier(value) or object_id(value))


def _one_per_secret(hits: list[Hit]) -> list[Hit]:
    """Where matches overlap, the most specific kind wins: fixed shapes, then the word-led rules.

    Both groups are swept in order of position (n log n: a file of thousands of matches must
    not cost a scan per match).
    """
    fixed = sorted((h for h in hits if h[3] < "MV507"), key=lambda h: h[0])  # ties: pattern order
    led = sorted((h for h in hits if h[3] >= "MV507"), key=lambda h: h[0])
    out: list[Hit] = []
    end = -1
    for h in fixed:
        if h[0] >= end:
            out.append(h)
            end = h[1]
    fixed_starts = [h[0] for h in out]
    kept = len(out)
    end = -1
    for h in led:
        k = bisect_right(fixed_starts, h[0])  # the fixed match at or before, and the one after
        if h[0] < end or (k and out[k - 1][1] > h[0]) or (k < kept and fixed_starts[k] < h[1]):
            continue
        out.append(h)
        end = h[1]
    return out


def scan_secrets(text: str, *, first_line: int = 1) -> list[SecretFinding]:
    """Every suspected secret in `text`, those on `memvault: allow-secret` lines marked `allowed`."""
    visible = _Visible(text)
    hits = _hits(visible.text)
    if not hits:
        return []
    starts = [0] + [m.end() for m in re.finditer("\n", text)]
    allowed: dict[int, bool] = {}
    out: list[SecretFinding] = []
    for start, _end, kind, code in _one_per_secret(hits):
        offset = visible.original(start)
        idx = bisect_right(starts, offset) - 1
        if idx not in allowed:
            line_end = starts[idx + 1] - 1 if idx + 1 < len(starts) else len(text)
            allowed[idx] = ALLOW_MARK in text[starts[idx] : line_end]
        out.append(SecretFinding(first_line + idx, offset - starts[idx] + 1, kind, code, allowed[idx]))
    return sorted(out, key=lambda f: (f.line, f.col))


def find_secrets(text: str, *, first_line: int = 1, honour_allow: bool = True) -> list[SecretFinding]:
    """Suspected secrets in `text`, as (line, column, kind, code); values are never returned.

    With `honour_allow` (reading a file a person may have marked), findings on a line marked
    `memvault: allow-secret` are left out; without it (checking what memvault is about to
    write), the mark counts for nothing.
    """
    return [f for f in scan_secrets(text, first_line=first_line) if not (honour_allow and f.allowed)]


def refuse_secrets(text: str, *, where: str, file: str | None = None) -> None:
    """Raise SecretRefused when `text`, about to be written by memvault into `file` (vault-relative,
    when known), holds what looks like a secret. The error's `line` stays None: the message gives
    the line within what would be written, which has no line in the file yet.

    The allow mark is ignored here: it records a person's review of a line in a file, and
    text arriving through `log` or curate has had no such review.
    """
    hits = find_secrets(text, honour_allow=False)
    if hits:
        h = hits[0]
        raise SecretRefused(
            f"refusing to write {where}: line {h.line}, column {h.col} of what would be written {h.message()}. "
            f"Store where the secret lives instead (\"in the team vault under atlas/prod\"). The "
            f"'{ALLOW_MARK}' mark is not honoured here: it is for a person who reviewed a line in the file.",
            file=file,
        )
