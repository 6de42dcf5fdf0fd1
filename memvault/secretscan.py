"""Secrets never go into memory: find credentials in text without echoing them.

`find_secrets(text)` returns where each suspected secret is and what kind it is, never the
value, so a report about a leaked key does not leak it again (in a terminal, a CI log or
an agent's context). A line carrying `memvault: allow-secret` is a reviewed false positive
and is skipped.

Three layers, most specific first, so a token is named by what it is:
1. provider patterns with a fixed prefix (`ghp_`, `AKIA`, `sk-ant-`, `-----BEGIN ... PRIVATE KEY`);
2. assignments to a credential-named key (`password=...`, `api_key: ...`);
3. high-entropy tokens in any assignment context (`FOO_TOKEN=...`, `"x": "..."`).
Each pattern carries literal hints; a pattern runs only when a hint occurs in the text, which
keeps a whole-vault scan cheap (most notes contain none).
"""

from __future__ import annotations

import math
import re
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass

from .errors import InputError

ALLOW_MARK = "memvault: allow-secret"


@dataclass(frozen=True, slots=True)
class Pattern:
    code: str
    kind: str
    regex: re.Pattern[str]
    hints: tuple[str, ...]  # lower-case literals, one of which every match contains


def _p(code: str, kind: str, regex: str, *hints: str, flags: int = 0) -> Pattern:
    return Pattern(code, kind, re.compile(regex, flags), hints)


B64 = r"A-Za-z0-9+/"
PATTERNS: tuple[Pattern, ...] = (
    _p("MV501", "private key block",
       r"-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----", "private key"),
    _p("MV501", "private key block", r"PuTTY-User-Key-File-\d", "putty-user-key"),
    # -- cloud providers
    _p("MV502", "AWS access key id",
       r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA|ABIA|ACCA)[0-9A-Z]{16}\b",
       "akia", "asia", "agpa", "aida", "aroa", "anpa", "anva", "aipa", "abia", "acca"),
    _p("MV502", "Google Cloud service-account key", r"\"type\"\s*:\s*\"service_account\"", "service_account"),
    _p("MV502", "Google OAuth client secret", r"\bGOCSPX-[A-Za-z0-9_-]{28}\b", "gocspx-"),
    _p("MV502", "Google OAuth access token", r"\bya29\.[A-Za-z0-9_-]{30,}", "ya29."),
    _p("MV502", "Azure storage account key", r"AccountKey=[" + B64 + r"]{40,}={0,2}", "accountkey="),
    _p("MV502", "Azure shared access signature", r"[?&]sig=[A-Za-z0-9%+/]{30,}(?:%3D|=)*", "sig="),
    _p("MV502", "Azure client secret", r"(?<![\w~.-])[A-Za-z0-9_~.-]{3}\dQ~[A-Za-z0-9_~.-]{31,34}(?![\w~.-])", "q~"),
    # -- git hosting
    _p("MV503", "GitHub token", r"\bgh[pousr]_[A-Za-z0-9]{36,255}\b", "gh"),
    _p("MV503", "GitHub token", r"\bgithub_pat_[A-Za-z0-9_]{60,255}\b", "github_pat_"),
    _p("MV503", "GitLab token", r"\bgl(?:pat|dt|rt|ptt|cbt|oas|ft|imt|agent)-[A-Za-z0-9_-]{20,}", "gl"),
    _p("MV503", "Bitbucket app password", r"\bATBB[A-Za-z0-9_=.-]{32,}", "atbb"),
    # -- hosted APIs
    _p("MV504", "Slack token", r"\bxox[abposre]-[A-Za-z0-9-]{10,}", "xox"),
    _p("MV504", "Slack webhook URL", r"hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9/_-]{20,}", "hooks.slack.com"),
    _p("MV504", "Stripe key", r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}", "_live_", "_test_"),
    _p("MV504", "Stripe webhook secret", r"\bwhsec_[A-Za-z0-9]{24,}", "whsec_"),
    _p("MV504", "Google API key", r"\bAIza[0-9A-Za-z_-]{35}\b", "aiza"),
    _p("MV504", "Anthropic API key", r"\bsk-ant-[A-Za-z0-9]+-[A-Za-z0-9_-]{32,}", "sk-ant-"),
    _p("MV504", "OpenAI API key",
       r"\bsk-(?!ant-)(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{32,}", "sk-"),
    _p("MV504", "npm token", r"\bnpm_[A-Za-z0-9]{36}\b", "npm_"),
    _p("MV504", "PyPI token", r"\bpypi-AgE[A-Za-z0-9_-]{50,}", "pypi-age"),
    _p("MV504", "Hugging Face token", r"\bhf_[A-Za-z0-9]{34,}\b", "hf_"),
    _p("MV504", "SendGrid API key", r"\bSG\.[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{20,}", "sg."),
    # -- tokens in transit
    _p("MV505", "bearer token", r"\b[Bb]earer[ \t]+[A-Za-z0-9._~+/-]{20,}=*", "bearer"),
    _p("MV505", "basic-auth header", r"\bAuthorization:[ \t]*Basic[ \t]+[" + B64 + r"]{12,}=*", "basic"),
    _p("MV505", "JSON web token",
       r"\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}", "eyj"),
    _p("MV506", "credentials in a URL",
       r"\b[a-z][a-z0-9+.-]*://[^\s:/@\[\]()<>\"']+:(?P<secret>[^\s:/@\[\]()\"']{3,})@", "://",
       flags=re.I),
)

# A credential-named key with a value: `password = x`, `"api_key": "x"`, `DB_PASSWORD: x`.
# Found from the word: the identifier round it must be a credential name (CRED_KEY_RE) and be
# followed by an assignment (CRED_TAIL_RE); cheaper than scanning every line with one regex.
CRED_HINTS = ("pass", "pwd", "secret", "token", "key", "auth", "cred")
CRED_KEY_RE = re.compile(
    r"(?i)[\w.-]*?(?:password|passwd|passphrase|pwd|secret|token|api[_-]?key|apikey|"
    r"access[_-]?key|(?<![a-z])key|auth(?!or)|credentials?)[\w.-]*"
)
IDENT_RE = re.compile(r"[\w.-]*")
CRED_TAIL_RE = re.compile(r"[\"']?[ \t]*(?::=|=>|[:=])[ \t]*(?P<q>[\"']?)(?P<value>[^\s\"',;<>`]{6,})")
# "my password is hunter2": prose, trusted only after a password word (see _cred_value_is_secret)
PROSE_TAIL_RE = re.compile(r"[ \t]+(?:is|was|are)[ \t]+(?P<q>[\"'`]?)(?P<value>[^\s\"',;<>`]{6,})")
# Any `key = value` / `key: value` / `"key": "value"` whose value is one long token.
ASSIGN_TOKEN_RE = re.compile(
    r"(?<![\w.-])(?P<key>[A-Za-z_][\w.-]{0,63})[\"']?[ \t]*(?::=|[:=])[ \t]*(?P<q>[\"']?)"
    r"(?P<value>[A-Za-z0-9+/_~.=-]{20,})"
)
LONG_RUN_RE = re.compile(r"\S{15,}")  # the shortest token a PATTERNS entry matches
# Patterns that can match without a 15-character run: look at lines holding these.
SHORT_HINTS = ("private key", "putty-user", "service_account", "://", "authorization:")
ALL_HINTS = frozenset(h for p in PATTERNS for h in p.hints)
PLACEHOLDER_RE = re.compile(
    r"(?i)^(?:x{3,}|\*{3,}|\.{3,}|<[^>]*>|\{\{?[^}]*\}\}?|\$\{?\w+\}?|%\w+%|changeme|changeit|redacted|"
    r"example\w*|dummy\w*|sample\w*|fake\w*|test(?:ing)?|secret|password|passw[o0]rd|pass|token|"
    r"your[_-]?\w*|my[_-]?\w*|placeholder|none|null|nil|true|false|undefined|"
    r"\w*_here|env\[.*|os\.environ.*|process\.env.*|getenv.*|secrets?\.\w+.*|vault:.*|op://.*)$"
)
SECRET_WORDS = ("password", "passwd", "passphrase", "pwd")
PATH_RE = re.compile(r"^(?:~|\.{1,2})?/[\w./-]*$")


@dataclass(frozen=True, slots=True)
class SecretFinding:
    line: int
    col: int
    kind: str
    code: str

    def message(self) -> str:
        article = "an" if self.kind[:1].lower() in "aeiou" else "a"
        return f"looks like {article} {self.kind}; secrets must not be stored in memory (value not shown)"


def entropy(value: str) -> float:
    """Shannon entropy in bits per character."""
    if not value:
        return 0.0
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in (value.count(ch) for ch in set(value)))


def _classes(value: str) -> tuple[bool, bool, bool]:
    return (
        any(c.isupper() for c in value),
        any(c.islower() for c in value),
        any(c.isdigit() for c in value),
    )


def looks_random(value: str) -> bool:
    """A machine-made token rather than a word, identifier, path, hash or UUID.

    Random base64/base62 mixes cases and digits everywhere; CamelCase identifiers change
    case only at word starts, and hex digests (git commits) have one case: both are common
    in notes and are not flagged without a credential-named key.
    """
    core = value.strip("=")
    if len(core) < 20 or core.startswith(("http", "www.")) or "//" in core or core.count("/") > 2:
        return False
    upper, lower, digit = _classes(core)
    if not (upper and lower and digit):
        return False
    letters = [c for c in core if c.isalpha()]
    flips = sum(a.isupper() != b.isupper() for a, b in zip(letters, letters[1:], strict=False))
    if flips < 0.25 * max(len(letters) - 1, 1):
        return False
    digits = sum(c.isdigit() for c in core)
    return digits >= 2 and entropy(core) >= 3.7


def _demo(value: str) -> bool:
    """Documentation's own sample keys (AWS's `...EXAMPLE`, `xxxx` fillers) are not secrets."""
    low = value.lower()
    return "example" in low or "xxxxx" in low or "00000000" in low


def _cred_value_is_secret(key: str, value: str) -> bool:
    value = value.rstrip(".)]}")
    if PLACEHOLDER_RE.match(value) or set(value) <= set("*x.-_#"):
        return False
    upper, lower, digit = _classes(value)
    symbol = any(not c.isalnum() for c in value)
    if any(w in key.lower() for w in SECRET_WORDS):
        if PATH_RE.match(value):  # `pwd: /home/me/src` is a directory
            return False
        # A password is rarely one plain lower-case word; prose such as
        # "password: changed on Monday" is.
        return len(value) >= 6 and (digit or symbol or (upper and lower))
    # token / key / secret: something random-looking, not a word like "rotation".
    return len(value) >= 12 and digit and (upper or lower) and entropy(value) >= 3.0


class _Lines:
    """Offset -> (line, column) for one text, built only when something was found."""

    def __init__(self, text: str):
        self.text = text
        self.starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def where(self, offset: int) -> tuple[int, int]:
        idx = bisect_right(self.starts, offset) - 1
        return idx, offset - self.starts[idx]

    def line_text(self, idx: int) -> str:
        end = self.starts[idx + 1] - 1 if idx + 1 < len(self.starts) else len(self.text)
        return self.text[self.starts[idx] : end]


def _line_starts(text: str, low: str, words: tuple[str, ...]) -> set[int]:
    """Start offsets of the lines where any of `words` occurs (str.find: fast, in C)."""
    starts: set[int] = set()
    for word in words:
        i = low.find(word)
        while i >= 0:
            start = text.rfind("\n", 0, i) + 1
            starts.add(start)
            end = text.find("\n", i)
            if end < 0:
                break
            i = low.find(word, end)
    return starts


def _lines_at(text: str, starts: set[int]) -> Iterator[tuple[int, str]]:
    for start in sorted(starts):
        end = text.find("\n", start)
        yield start, text[start : end if end >= 0 else len(text)]


def find_secrets(text: str, *, first_line: int = 1) -> list[SecretFinding]:
    """Suspected secrets in `text`, as (line, column, kind, code); values are never returned.

    Regexes run only on lines where they can match: every token pattern needs an unbroken
    run of 15+ characters (or one of a few literals, such as `://`), and the assignment
    rules need a credential word or a 20+ character run. Prose has few such lines, so a
    whole-vault check stays near the cost of reading the files.
    """
    low = text.lower()
    runs = {text.rfind("\n", 0, m.start()) + 1 for m in LONG_RUN_RE.finditer(text)}
    hits: list[tuple[int, int, str, str]] = []  # (start, end, kind, code)
    for start, line in _lines_at(text, runs | _line_starts(text, low, SHORT_HINTS)):
        hits.extend(_pattern_hits(start, line))
    for key, m in _cred_assignments(text, low):
        if not _demo(m["value"]) and _cred_value_is_secret(key, m["value"]):
            hits.append((m.start("value"), m.end("value"), f"secret assigned to '{key}'", "MV507"))
    for start, line in _lines_at(text, runs):
        for m in ASSIGN_TOKEN_RE.finditer(line):
            if not _demo(m["value"]) and looks_random(m["value"]):
                hits.append((start + m.start("value"), start + m.end("value"),
                             f"high-entropy value assigned to '{m['key']}'", "MV508"))
    if not hits:
        return []
    return _located(text, hits, first_line)


def _is_ident(ch: str) -> bool:
    return ch.isalnum() or ch in "_.-"


def _cred_assignments(text: str, low: str) -> Iterator[tuple[str, re.Match[str]]]:
    """(key, match of the assigned value) for each credential-named identifier being assigned."""
    seen: set[int] = set()
    for word in CRED_HINTS:
        i = low.find(word)
        while i >= 0:
            b = IDENT_RE.match(text, i).end()  # type: ignore[union-attr]
            m = CRED_TAIL_RE.match(text, b)  # prose ("key decision") stops here
            if m is None and any(w in low[i:b] for w in SECRET_WORDS):
                m = PROSE_TAIL_RE.match(text, b)
            if m and b not in seen:
                seen.add(b)
                a = i
                while a and _is_ident(text[a - 1]):
                    a -= 1
                if CRED_KEY_RE.fullmatch(text, a, b):
                    yield text[a:b], m
            i = low.find(word, b)


def _pattern_hits(start: int, line: str) -> Iterator[tuple[int, int, str, str]]:
    low = line.lower()
    present = {h for h in ALL_HINTS if h in low}
    for pat in PATTERNS if present else ():
        if present.intersection(pat.hints):
            for m in pat.regex.finditer(line):
                if _demo(m[0]) or (pat.code == "MV506" and PLACEHOLDER_RE.match(m["secret"])):
                    continue
                yield start + m.start(), start + m.end(), pat.kind, pat.code


def _located(text: str, hits: list[tuple[int, int, str, str]], first_line: int) -> list[SecretFinding]:
    """One finding per secret: the most specific kind wins where matches overlap."""
    lines = _Lines(text)
    hits.sort(key=lambda h: (h[3] >= "MV507", h[0]))  # provider patterns first
    taken: list[tuple[int, int]] = []
    allowed: dict[int, bool] = {}
    out: list[SecretFinding] = []
    for start, end, kind, code in hits:
        if any(start < e and s < end for s, e in taken):
            continue
        idx, col = lines.where(start)
        if idx not in allowed:
            allowed[idx] = ALLOW_MARK in lines.line_text(idx)
        if allowed[idx]:
            continue
        taken.append((start, end))
        out.append(SecretFinding(first_line + idx, col + 1, kind, code))
    return sorted(out, key=lambda f: (f.line, f.col))


def refuse_secrets(text: str, *, where: str) -> None:
    """Raise InputError when `text` holds something that looks like a secret."""
    hits = find_secrets(text)
    if hits:
        h = hits[0]
        raise InputError(
            f"refusing to write {where}: line {h.line}, column {h.col} of what would be written {h.message()}. "
            f"If this is a reviewed false positive, add '{ALLOW_MARK}' to that line."
        )
