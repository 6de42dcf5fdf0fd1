"""Secrets never go into memory: find credentials in text without echoing them.

`find_secrets(text)` returns where each suspected secret is and what kind it is, never the
value. A line carrying `memvault: allow-secret` is a reviewed false positive and is skipped.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from .errors import InputError

ALLOW_MARK = "memvault: allow-secret"

PATTERNS: list[tuple[str, str, re.Pattern[str]]] = [
    ("MV501", "private key block", re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")),
    ("MV502", "AWS access key id", re.compile(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[0-9A-Z]{16}\b")),
    ("MV503", "GitHub token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{60,255})\b")),
    ("MV503", "GitLab token", re.compile(r"\bglpat-[A-Za-z0-9_-]{20,}\b")),
    ("MV504", "Slack token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}\b")),
    ("MV504", "Stripe key", re.compile(r"\b[rs]k_(?:live|test)_[A-Za-z0-9]{20,}\b")),
    ("MV504", "Google API key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b")),
    ("MV504", "OpenAI/Anthropic API key", re.compile(r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{32,}\b")),
    ("MV505", "bearer token", re.compile(r"\b[Bb]earer\s+[A-Za-z0-9._~+/=-]{20,}")),
    ("MV505", "JSON web token", re.compile(r"\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}")),
    ("MV506", "credentials in a URL", re.compile(r"\b[a-z][a-z0-9+.-]*://[^\s:/@]+:[^\s:/@]{3,}@", re.I)),
]
ASSIGN_RE = re.compile(
    r"(?i)\b(?P<key>[\w.-]*(?:password|passwd|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|"
    r"private[_-]?key|client[_-]?secret|auth)[\w.-]*)\b[\"']?\s*[:=]\s*[\"']?(?P<value>[^\s\"',;]{6,})"
)
PLACEHOLDER_RE = re.compile(
    r"(?i)^(?:x+|\*+|\.+|<[^>]*>|\{[^}]*\}|\$\{?[\w]+\}?|changeme|redacted|example|dummy|"
    r"your[_-]?\w*|placeholder|none|null|true|false|\w*_here|env\[.*|os\.environ.*)$"
)


@dataclass(frozen=True, slots=True)
class SecretFinding:
    line: int
    col: int
    kind: str
    code: str

    def message(self) -> str:
        return f"looks like a {self.kind}; secrets must not be stored in memory (value not shown)"


def entropy(value: str) -> float:
    """Shannon entropy in bits per character."""
    if not value:
        return 0.0
    counts = {ch: value.count(ch) for ch in set(value)}
    return -sum(c / len(value) * math.log2(c / len(value)) for c in counts.values())


def _assignment_is_secret(value: str, key: str) -> bool:
    if PLACEHOLDER_RE.match(value):
        return False
    if "password" in key.lower() or "passwd" in key.lower() or key.lower() in ("pwd",):
        return len(value) >= 6
    # token/key/secret: need something random-looking, not a word like "rotation"
    has_digit = any(c.isdigit() for c in value)
    has_alpha = any(c.isalpha() for c in value)
    return len(value) >= 12 and has_digit and has_alpha and entropy(value) >= 3.0


def find_secrets(text: str, *, first_line: int = 1) -> list[SecretFinding]:
    """Suspected secrets in `text`, as (line, column, kind); values are never returned."""
    found: list[SecretFinding] = []
    for offset, line in enumerate(text.split("\n")):
        if ALLOW_MARK in line:
            continue
        lineno = first_line + offset
        hit_cols: set[int] = set()
        for code, kind, pattern in PATTERNS:
            for m in pattern.finditer(line):
                found.append(SecretFinding(lineno, m.start() + 1, kind, code))
                hit_cols.add(m.start())
        if found and found[-1].line == lineno:
            continue
        for m in ASSIGN_RE.finditer(line):
            if _assignment_is_secret(m["value"], m["key"]):
                found.append(SecretFinding(lineno, m.start("value") + 1, f"secret assigned to '{m['key']}'", "MV507"))
    return found


def refuse_secrets(text: str, *, where: str) -> None:
    """Raise InputError when `text` holds something that looks like a secret."""
    hits = find_secrets(text)
    if hits:
        h = hits[0]
        raise InputError(
            f"refusing to write {where}: line {h.line}, column {h.col} {h.message()}. "
            f"If this is a reviewed false positive, add '{ALLOW_MARK}' to that line."
        )
