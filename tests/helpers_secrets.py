"""Build the secret-detector corpus at test time (no literal credentials in the repository)."""

from __future__ import annotations

import random
import re
import string
from pathlib import Path

CORPUS = Path(__file__).parent / "data" / "secrets"
ALPHABETS = {
    "rand": string.ascii_letters + string.digits,
    "b64": string.ascii_letters + string.digits + "+/",
    "b64url": string.ascii_letters + string.digits + "-_",
    "hex": "0123456789abcdef",
    "upper": string.ascii_uppercase + string.digits,
    "lower": string.ascii_lowercase + string.digits,
    "digits": string.digits,
    # base58 (Bitcoin/Solana addresses and keys: no 0, O, I, l), mixed-case hex (EIP-55
    # Ethereum addresses) and bech32 (bc1 addresses)
    "b58": "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz",
    "xdigit": "0123456789abcdefABCDEF",
    "bech32": "qpzry9x8gf2tvdw0s3jn54khce6mua7l",
}
ESCAPE_RE = re.compile(r"\\(n|u[0-9a-fA-F]{4}|\\)")
SLOT_RE = re.compile(r"\{\{(\w+)(?::(\d+))?\}\}")


def expand(template: str, seed: int) -> str:
    """Replace {{kind:N}} slots with N pseudo-random characters (deterministic per seed)."""
    return expand_with_fills(template, seed)[0]


def expand_with_fills(template: str, seed: int) -> tuple[str, list[str]]:
    """The expanded text and the random parts that went into it (what must never be echoed)."""
    rng = random.Random(seed)
    fills: list[str] = []

    def fill(m: re.Match[str]) -> str:
        kind, n = m[1], int(m[2] or 0)
        if kind == "dash":
            return "-" * 5
        alphabet = ALPHABETS[kind]
        while True:
            value = "".join(rng.choice(alphabet) for _ in range(n))
            # random strings must have the mix a real token has (upper, lower and digit)
            if kind not in ("rand", "b64", "b64url", "b58") or n < 8 or (
                any(c.isupper() for c in value) and any(c.islower() for c in value)
                and any(c.isdigit() for c in value)
            ):
                fills.append(value)
                return value

    return ESCAPE_RE.sub(_unescape, SLOT_RE.sub(fill, template)), fills


def _unescape(m: re.Match[str]) -> str:
    """`\\n` a newline, `\\uXXXX` that character (so invisible ones stay visible in the file)."""
    code = m[1]
    return "\n" if code == "n" else "\\" if code == "\\" else chr(int(code[1:], 16))


def _rows(name: str) -> list[tuple[int, str]]:
    out = []
    for n, line in enumerate((CORPUS / name).read_text(encoding="utf-8").split("\n"), 1):
        if line.strip() and not line.startswith("#"):
            out.append((n, line))
    return out


def secret_parts() -> list[str]:
    """Every random part of every true positive, 8 characters or longer."""
    out = []
    for n, line in _rows("true_positives.txt"):
        out += [f for f in expand_with_fills(line.split("\t", 1)[1], n)[1] if len(f) >= 8]
    return out


def true_positives() -> list[tuple[str, str, str]]:
    """(case id, expected code, text) for every line of true_positives.txt."""
    out = []
    for n, line in _rows("true_positives.txt"):
        code, template = line.split("\t", 1)
        out.append((f"tp{n}", code, expand(template, n)))
    return out


def false_positives() -> list[tuple[str, str]]:
    return [(f"fp{n}", expand(line, n)) for n, line in _rows("false_positives.txt")]


def corpus(name: str) -> list[tuple[str, str, str]]:
    """(case id, category, text) for every line of positives.txt or negatives.txt."""
    return [(case, category, text) for case, category, text, _ in corpus_with_fills(name)]


def corpus_with_fills(name: str) -> list[tuple[str, str, str, list[str]]]:
    """(case id, category, text, the random parts of the text) for every line of a corpus file."""
    out = []
    for n, line in _rows(name):
        category, template = line.split("\t", 1)
        text, fills = expand_with_fills(template, n)
        out.append((f"{name.split('.')[0][:3]}{n}", category, text, fills))
    return out
