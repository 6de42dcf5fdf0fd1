"""Secrets found by the word in front of them: `DB_PASS=x`, "the password for prod is x", "PIN 4821".

Two rules, both led by a credential word found with `str.find` (fast, in C) before any regex
runs on the line:
- an identifier naming a credential, assigned a value (`password = x`, `"apiKey": "x"`,
  `<password>x</password>`);
- a credential word in prose or a `.netrc`, followed by its value: directly ("API key x",
  "password hunter2"), or after a connector ("is", ":", "lautet"), optionally after a short
  qualifier introduced by a preposition ("the password for the prod db is x"), or in the next
  cell of a table row (`| API key | x |`); or, in one form, before it ("x is the wifi
  password", "x (the api token)").
What follows the word decides: a password needs a digit or a symbol, a token or key must look
random (or be 32+ hex digits), a PIN is 3-8 digits. A `key` after a lookup word (`configKey`,
"cache key") is not a credential's name.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterator
from functools import lru_cache

from memvault.check.secrets.shapes import key_qualifier, result_verdict
from memvault.check.secrets.shapes import parts as ident_parts
from memvault.check.secrets.values import (
    DIGIT_RE,
    assigned_is_secret,
    looks_random,
    not_a_literal,
    password_like,
    token_like,
)

# -- assignments -------------------------------------------------------------------------

ASSIGN_HINTS = ("pass", "pw", "secret", "token", "key", "auth", "cred", "pin", "cvv", "cvc", "kennwort")
IDENT_TAIL_RE = re.compile(r"[\w.-]{0,128}")
CRED_TAIL_RE = re.compile(r"[\"']?[ \t]{0,16}(?::=|=>|[:=](?![:=]))[ \t]{0,16}(?P<q>[\"']?)(?P<value>[^\s\"',;<>`]{1,512})")
# A value that is itself `name=...` ("credentials: degrees=800yr"): its own name is judged instead.
ASSIGNMENT_RE = re.compile(r"[A-Za-z_][\w.-]{0,63}=")
HEX_GROUP_RE = re.compile(r"[0-9a-f]+")
XML_TAIL_RE = re.compile(r">(?P<value>[^\s<]{1,512})</")
PASSWORD_PARTS = {"password", "passwd", "passphrase", "passcode", "pwd", "pw", "passwort", "kennwort"}
TOKEN_PARTS = {"secret", "secrets", "token", "apikey", "credential", "credentials", "auth", "cred", "creds"}
CRED_ENDS = PASSWORD_PARTS | TOKEN_PARTS
NOT_SECRET_LAST = {
    "id", "ids", "url", "uri", "path", "file", "dir", "name", "names", "length", "len", "size", "ttl", "count",
    "type", "header", "policy", "format", "version", "prefix", "hash", "expiry", "expires", "expiration",
    "endpoint", "field", "rotation", "reset", "min", "max", "hint", "label", "env", "var", "ref", "arn",
    "location", "store", "manager", "provider", "backend", "mode", "enabled", "required", "strength", "rules",
    "timeout", "lifetime", "age", "source", "server", "host", "user", "username", "owner", "budget", "limit",
    "used", "usage", "index", "column", "input", "prompt", "button", "class", "method", "scope", "scopes",
    "days", "hours", "minutes", "seconds", "at", "on", "by", "style", "color", "mask", "flag", "mgr",
    "algorithm", "algo", "cipher", "memory", "parameter", "param",
}


def _ends(parts: list[str], words: set[str] | tuple[str, ...]) -> bool:
    """A part is, or ends with, one of `words` (PGPASSWORD, accesstoken; not secretary)."""
    return any(p.endswith(w) for p in parts for w in words)


@lru_cache(maxsize=1024)
def credential_name(ident: str) -> str | None:
    """'password', 'pin' or 'token' when `ident` names a credential (DB_PASS, apiKey, X-Auth-Token), else None."""
    parts = ident_parts(ident)
    if not parts or "author" in parts:
        return None
    last = max((i for i, p in enumerate(parts) if _ends([p], CRED_ENDS) or p in ("pass", "pin", "cvv", "cvc", "key")),
               default=-1)
    if any(p in NOT_SECRET_LAST for p in parts[last + 1 :]):  # password_min_length, api_key_header
        return None
    if last > 0 and parts[last] == "key" and key_qualifier(parts[last - 1]):  # configKey, cacheKey, publicKey
        return None
    if parts[-1] in ("pin", "cvv", "cvc"):
        return "pin"
    if _ends(parts, PASSWORD_PARTS - {"pw"}) or "pw" in parts or parts[-1] == "pass":
        return "password"
    if _ends(parts, TOKEN_PARTS) or "key" in parts or _ends(parts, ("apikey", "secretkey", "privatekey", "accesskey")):
        return "token"
    return None


def _ident_end(text: str, i: int, end: int | None = None) -> int:
    """Where the identifier characters from `i` end (`i` when there are none)."""
    m = IDENT_TAIL_RE.match(text, i, len(text) if end is None else end)
    return m.end() if m else i  # the pattern matches the empty string: m is never None


class _Text:
    """The text, and (built on first need) its reverse, to find where an identifier begins in C."""

    def __init__(self, text: str):
        self.text = text
        self._rev: str | None = None

    def ident_start(self, i: int) -> int:
        if i == 0 or not _ident_end(self.text, i - 1, i) > i - 1:
            return i
        if self._rev is None:
            self._rev = self.text[::-1]
        n = len(self.text)
        return i - (_ident_end(self._rev, n - i) - (n - i))


def cred_assignments(text: str, low: str, lines: list[tuple[int, str]]) -> Iterator[tuple[int, int, str, str]]:
    """(start, end, kind, code) of each credential-named identifier assigned a secret-looking value.

    `lines` are (offset, line) of the lines holding one of ASSIGN_HINTS, in order.
    """
    seen: set[int] = set()
    src = _Text(text)
    for start, line in lines:
        end = start + len(line)
        for word in ASSIGN_HINTS:
            i = low.find(word, start, end)
            while i >= 0:
                b = _ident_end(text, i)
                if b not in seen:
                    seen.add(b)
                    hit, b = _assigned(src, i, b)
                    if hit:
                        yield hit
                i = low.find(word, max(b, i + 1), end)  # a credential's value holds no further assignment


def _assigned(src: _Text, i: int, b: int) -> tuple[tuple[int, int, str, str] | None, int]:
    """The finding for the identifier ending at `b`, if any, and where to look on from.

    A credential's value was judged whole, so the search resumes after it: text inside a
    value is not a new assignment, and a line of `key=key=key=...` costs one judgement.
    """
    text = src.text
    m = CRED_TAIL_RE.match(text, b)  # prose ("key decision") stops here, before any other work
    if m is None and text[b : b + 1] == ">":
        m = XML_TAIL_RE.match(text, b)
        if m is not None and text[src.ident_start(i) - 1 : src.ident_start(i)] != "<":
            m = None
    if m is None:
        return None, b
    ident = text[src.ident_start(i) : b]
    what = credential_name(ident)
    if what is None or ident.lower() == "key" and key_qualifier(_word_before(text, src.ident_start(i))):
        return None, b  # "cache key: …" is a lookup key
    if ident == "PASS" and _verdict(text, src.ident_start(i), b, m):
        return None, m.end("value")  # "✓ PASS: ACL-Check: ok": a test's result
    value, at = m["value"], m.start("value")
    inner = ASSIGNMENT_RE.match(value)
    if inner:  # `credentials: degrees=800yr`, `creds: DB_PASS=x`: the inner name and value are judged
        ident, value, at = value[: inner.end() - 1], value[inner.end() :], at + inner.end()
        what = credential_name(ident)
        if what is None:
            return None, m.end("value")
    if value.isdigit() and 3 <= len(value) <= 8 if what == "pin" else assigned_is_secret(what == "password", value):
        code = "MV510" if what == "pin" else "MV507"
        return (at, m.end("value"), f"secret assigned to '{ident}'", code), m.end("value")
    return None, m.end("value")


def _verdict(text: str, start: int, b: int, m: re.Match[str]) -> bool:
    """Is `PASS` (from `start` to `b`, its value matched by `m`) a test's verdict? (shapes.result_verdict)

    Only a few characters either side are looked at, so a long line costs no more."""
    line_start = text.rfind("\n", max(0, start - 40), start) + 1 or max(0, start - 40)
    after = text[m.end("value") : m.end("value") + 40].split("\n", 1)[0]
    sign = text[b : m.start("value")].strip(" \t\"'")
    return result_verdict(text[start:b], text[line_start:start], sign, m["value"], after)


# -- stated in prose ---------------------------------------------------------------------

PROSE_HINTS = ("pass", "pw", "kennwort", "token", "secret", "key", "schlüssel", "pin", "puk", "cvv", "cvc",
               "code", "cred", "zugang", "geheimzahl", "login", "basic auth", "basic-auth", "http auth", "http-auth")
PROSE_RE = re.compile(
    r"(?<![\w.<$@/=?&+{\[])(?=[a-z\u00e4\u00f6\u00fc])(?:"  # the lookahead rejects most positions in one step
    r"(?P<pw>pass(?:words?|wd|phrase|code|wort)|kennwort|pwd?)"
    r"|(?P<tok>(?:aws\ )?secret\ access\ key|(?:api|access|secret|auth|signing|encryption|private|app|client|master|"
    r"deploy|bot|license)[ _-]?(?:key|schl\u00fcssel)|(?:api|access|auth|bearer|bot|deploy|refresh|session|"
    r"personal\ access)[ _-]?token|token|(?:shared\ |client\ |signing\ )?secret)"
    r"|(?P<key>key|schl\u00fcssel)"
    r"|(?P<pin>pin(?:[ -]?code)?|puk|cvv2?|cvc2?|security\ code|sicherheitscode|geheimzahl|"
    r"(?:door|alarm|gate|unlock|sim|t\u00fcr|entsperr)[ -]?code|(?:backup|recovery|otp|2fa)[ -]codes?)"
    r"|(?P<creds>credentials?|creds|zugangsdaten|zugang|logins?|login\ data|(?:basic|http)[ -]auth)"
    r")(?=[\s:=\"'`,;)!?]|\.(?!\w)|$)",  # a word of prose, not `form.password.data` or `<password>`
    re.I,
)
CONNECTORS = {"is", "was", "are", "were", "=", ":", "->", "=>", "-", "\u2013", "\u2014", "equals",
              "ist", "lautet", "war", "sind", "lauten", "lautete", "|", "\u2192", "\u21d2"}  # |: a table's next cell
LEADS = {"for", "on", "of", "to", "at", "in", "from", "f\u00fcr", "f\u00fcrs", "von", "vom", "zum", "zur", "bei", "beim",
         "auf", "aufs", "ans", "im", "am", "der", "des", "den", "dem", "the"}
PIN_DIGITS = {"pin": (4, 8), "cvv": (3, 4), "cvc": (3, 4), "puk": (8, 8), "security": (3, 4), "sicherheitscode": (3, 4)}
FILLERS = {"now", "still", "currently", "again", "just", "simply", "probably", "jetzt", "nun", "noch", "immer", "aktuell"}
# "Password Policy: …", "Token Usage: …": a word about the credential, not whose it is
NOT_NAMES = NOT_SECRET_LAST | {"change", "changed", "changes", "update", "updated", "status", "requirements", "note",
                               "notes", "info", "tip", "tips", "check", "test", "page", "screen", "flow", "form",
                               "attempts", "history", "richtlinie", "\u00e4nderung", "hinweis", "regeln", "vergessen"}
QUALIFIER_WORDS = 5
WINDOW = 200
# Every value the prose rule accepts holds a digit or a symbol: a window of letters is skipped unread.
VALUEISH_RE = re.compile(r"[^\sA-Za-z\u00c0-\u024f]")


def _clean(word: str) -> str:
    """The word without the quotes, brackets and sentence punctuation round it."""
    return word.strip("\"'`()[]{}").rstrip(".,;!?").strip("\"'`()[]{}")


def _value_after(words: list[str]) -> tuple[int, bool] | None:
    """(index of the word holding the value, whether a connector stated it), or None.

    "password is x", "password: x", "password for the prod db is x" state a value; in
    "password x" (a .netrc, "API key x") the value follows the word directly.
    """
    found = _value_index(words)
    if found is None:
        return None
    idx, stated = found
    while idx < len(words) and (not _clean(words[idx]) or words[idx].lower() in FILLERS):
        idx += 1  # an empty quote, "now", "still"
    return idx, stated


def _value_index(words: list[str]) -> tuple[int, bool] | None:
    if not words:
        return None
    first = words[0]
    if first.lower() in CONNECTORS:
        return 1, True
    if first[0] in ":=":  # "pw: x", "password=x"; not "key::path"
        return None if first[:2] in ("::", "==") else (0, True) if len(first) > 1 else (1, True)
    if first[0] == "(" and ")" in first:  # "private key (base58): x", "password (prod) x"
        return (1, True) if first.endswith(":") else _shifted(_value_index(words[1:]))
    if first.endswith(":") and first[:-1].isalpha() and first[:-1].lower() not in NOT_NAMES:
        return 1, True  # "Zugang Hetzner: ana / x", "Password Gmail: x"; not "Password Policy: …"
    if first.lower() not in LEADS:
        return 0, False  # "API key x", "password hunter2"; "key ping-sha256: x" names the pin, not the key
    for j, w in enumerate(words[1 : 1 + QUALIFIER_WORDS], 1):
        if w.lower() in CONNECTORS or w.endswith(":"):
            return j + 1, True
        if w[-1] in ".,;!?)":
            return None
    return None


def _shifted(found: tuple[int, bool] | None) -> tuple[int, bool] | None:
    return None if found is None else (found[0] + 1, found[1])


def recovery_code(value: str) -> bool:
    """Backup and recovery codes: 4821-9377, 8F3K-2Q9M-7X4P, a1b2c-3d4e5 (groups of 4-8, half with a digit)."""
    groups = value.split("-")
    if not 2 <= len(groups) <= 8:
        return False
    if not all(4 <= len(g) <= 8 and g.isascii() and g.isalnum() and (g.isupper() or g.isdigit() or HEX_GROUP_RE.fullmatch(g))
               for g in groups):
        return False
    return 2 * sum(1 for g in groups if DIGIT_RE.search(g)) >= len(groups)


def _judge(group: str, keyword: str, value: str, rest: list[str], stated: bool) -> bool:
    if ASSIGNMENT_RE.match(value):  # "credentials: degrees=800yr": the assignment rule judges `name=`
        return False
    if group == "pw":  # right after the word ("password and/or salt") only with a digit
        return password_like(value) and (stated or DIGIT_RE.search(value) is not None)
    if group == "tok":
        return token_like(value, hex_ok=True)
    if group == "key":  # "key" alone is a common word: "the key is X" needs a token, "key X" a random one
        return token_like(value, hex_ok=False) if stated else looks_random(value) and not not_a_literal(value)
    if group == "pin":
        head = keyword.lower().split()[0].split("-")[0][:15]
        if head in ("backup", "recovery", "otp", "2fa") and recovery_code(value):
            return True
        low, high = next((v for k, v in PIN_DIGITS.items() if head.startswith(k)), (4, 8))
        groups = value.split("-")  # backup codes come as 4821-9377
        return all(g.isdigit() and low <= len(g) <= high for g in groups) and len(groups) <= 8
    # credentials: "admin / x", "root/x", "ana:x"; right after the word only in that form
    if "/" in value or ":" in value:
        value = re.split(r"[/:]", value, maxsplit=1)[1]
    elif rest[:1] == ["/"] and len(rest) > 1:
        value = _clean(rest[1])
    elif not stated:
        return False
    return password_like(value) and "." not in value[-5:]


def _offset(tail: str, words: list[str], idx: int) -> int:
    """Where words[idx] starts in `tail` (the words came from tail.split())."""
    at = 0
    for k, w in enumerate(words[: idx + 1]):
        at = tail.find(w, at) + (len(w) if k < idx else 0)
    return at


def _stated(group: str, keyword: str, tail: str) -> tuple[int, int] | None:
    """(start, end) in `tail` of the secret stated after `keyword`, if there is one."""
    words = tail.split(None, QUALIFIER_WORDS + 4)[: QUALIFIER_WORDS + 4]
    found = _value_after(words)
    if found is None or found[0] >= len(words):
        return None
    idx, stated = found
    raw = words[idx]
    at = _offset(tail, words, idx)
    if idx == 0 and raw[0] in ":=":
        at, raw = at + 1, raw[1:]
    value = _clean(raw)
    if not value or not _judge(group, keyword, value, words[idx + 1 :], stated=stated):
        return None
    at += raw.find(value)
    return at, at + len(value)


# -- stated before the word: "hunter2 is the wifi password", "X (the api token)" --------------

BEFORE_WINDOW = 80
BEFORE_CONNECTORS = {"is", "was", "are", "were", "=", "ist", "war", "sind", "that's", "that\u2019s", "that", "\u2014",
                     "\u2013", "-", "->", "\u2192", "it's", "das"}
DETERMINERS = {"the", "my", "our", "your", "his", "her", "their", "its", "das", "der", "die", "mein", "meine",
               "dein", "deine", "unser", "unsere", "sein", "seine", "ihr", "ihre"}
# "Password1 is the most common password", "X is not a password": a word about passwords, not one stated
NOT_QUALIFIERS = {"most", "common", "commonest", "weak", "weakest", "bad", "worst", "popular", "typical", "default",
                  "example", "sample", "banned", "famous", "classic", "leaked", "breached", "top", "favourite",
                  "favorite", "every", "no", "not", "any", "some", "such", "like", "only", "same", "wrong", "dummy",
                  "fake", "test", "h\u00e4ufigste", "beliebteste", "schlechteste", "typische", "bekannteste", "kein",
                  "keine", "nicht", "falsche"}
QUALIFIER_RE = re.compile(r"[^\W\d_][\w-]{0,30}")
# What the window before the word must hold for the rule to be worth a look: a link or a parenthesis.
BEFORE_GATE_RE = re.compile(r"(?i)\s(?:is|was|are|were|ist|war|sind|that|it's)\s|[(=\u2014\u2013\u2192]|\s-\s")
TOKEN_RE = re.compile(r"\S+")


def _phrase_ends(after: str) -> bool:
    """The credential word ends its phrase: "… the wifi password", "… password for prod", "…token)"."""
    rest = after.lstrip()
    return not rest or rest[0] in ".,;!?)|" or rest.split(None, 1)[0].lower() in LEADS


@lru_cache(maxsize=1024)  # a pasted table or a pathological line repeats the same window
def stated_before(group: str, keyword: str, before: str, after: str) -> tuple[int, int] | None:
    """(start, end) in `before` of a secret stated in front of its word, if there is one.

    "hunter2 is the wifi password", "Sommer2024! ist das WLAN-Passwort", "new one is X (the api
    token)": a value, `is` (or an opening parenthesis), a possessive or `the`, at most three
    qualifiers, then the word ending its phrase. The value is judged as it would be after the word.
    """
    if not _phrase_ends(after):
        return None
    tokens = list(TOKEN_RE.finditer(before))
    i = len(tokens) - 1
    if i >= 0 and tokens[i].end() == len(before) and tokens[i][0].endswith("-"):
        i -= 1  # the first half of "WLAN-Passwort"
    quals = 0
    while i >= 0 and quals < 3 and tokens[i][0].lower() not in DETERMINERS and tokens[i][0][:1] != "(":
        word = tokens[i][0].lower()
        if word in NOT_QUALIFIERS or not QUALIFIER_RE.fullmatch(word):
            return None
        i, quals = i - 1, quals + 1
    if i < 1 or tokens[i][0].lstrip("(").lower() not in DETERMINERS:
        return None
    if tokens[i][0][:1] != "(":  # "X is the …", "X — that's the …", "X ist das …"
        links = 0
        while i >= 1 and links < 2 and tokens[i - 1][0].lower() in BEFORE_CONNECTORS:
            i, links = i - 1, links + 1
        if not links or i < 1:
            return None
    raw = tokens[i - 1]
    value = _clean(raw[0])
    if not value or not _judge(group, keyword, value, [], stated=True):
        return None
    at = raw.start() + raw[0].find(value)
    return at, at + len(value)


def _word_before(line: str, at: int) -> str:
    """The word in front of `at` (from a bounded window: a line of repeated words stays linear)."""
    words = line[max(0, at - 24) : at].rsplit("\n", 1)[-1].split()
    return words[-1].strip("*_`(\"'") if words else ""


def prose_hits(start: int, line: str) -> Iterator[tuple[int, int, str, str]]:
    """(start, end, kind, code) of each secret stated after (or before) a credential word in `line`."""
    if VALUEISH_RE.search(line) is None:
        return
    seen: dict[tuple[str, str, str], tuple[int, int] | None] = {}  # a repeated phrase is judged once
    gates: list[int] | None = None  # where a link ("is", "—", "(") ends, for the rule looking back
    for m in PROSE_RE.finditer(line):
        quote = line[m.start() - 1 : m.start()]
        if quote and quote in "\"'`" and line[m.end() : m.end() + 1] == quote:
            continue  # the word "password" mentioned, not a password stated
        group = m.lastgroup or "tok"
        if group == "key" and key_qualifier(_word_before(line, m.start())):
            continue  # "cache key: …", "public key …", "partition key: …": a lookup key, not a credential
        code, kind = ("MV510", "PIN or card security code") if group == "pin" else ("MV507", f"secret given after '{m[0]}'")
        if VALUEISH_RE.search(line, m.end(), m.end() + WINDOW) is not None:
            tail = line[m.end() : m.end() + WINDOW]
            key = (group, m[0], tail)
            span = seen[key] if key in seen else _stated(group, m[0], tail)
            if len(seen) < 4096:
                seen[key] = span
            if span is not None:
                yield start + m.end() + span[0], start + m.end() + span[1], kind, code
                continue
        after = line[m.end() : m.end() + 40]
        if not _phrase_ends(after):
            continue
        if gates is None:  # one pass over the line, only when a word ends its phrase
            gates = [g.end() for g in BEFORE_GATE_RE.finditer(line)]
        begin = max(0, m.start() - BEFORE_WINDOW)
        k = bisect_right(gates, begin)
        if k < len(gates) and gates[k] <= m.start():
            span = stated_before(group, m[0], line[begin : m.start()], after)
            if span is not None:
                kind = kind if group == "pin" else f"secret given before '{m[0]}'"
                yield start + begin + span[0], start + begin + span[1], kind, code


# -- a passphrase of letters only ----------------------------------------------------------

# "my password is correcthorsebatterystaple", "das WLAN-Passwort lautet sonnenblumenfeld": the
# prose rule wants a digit or a symbol, so a long run of letters stated as the password, ending
# its sentence, is judged here. Words people say *about* a password end the way adjectives
# and adverbs do ("unchangeable", "incomprehensible", "automatically"): those are kept.
PASSPHRASE_RE = re.compile(
    r"(?<![\w.<$@/=?&+{\[])(?:pass(?:word|phrase|wort)|kennwort)s?"
    r"[ \t]{1,4}(?:is|was|ist|lautet|war|:)[ \t]{1,4}[\"'`]?(?P<value>[a-z\u00e4\u00f6\u00fc\u00df]{12,64})[\"'`]?"
    r"[ \t]*(?:[.!;]|$)",
    re.I,
)
ABOUT_ENDS = ("able", "ible", "ed", "ly", "tial", "ive", "ous", "ing", "ment", "tion", "ness", "ful", "less",
              "ich", "lich", "bar", "ig", "isch", "los", "end")


def passphrase_hits(start: int, line: str) -> Iterator[tuple[int, int, str, str]]:
    """(start, end, kind, code) of a letters-only passphrase stated as the password in `line`."""
    for m in PASSPHRASE_RE.finditer(line):
        value = m["value"]
        if value.islower() and not value.endswith(ABOUT_ENDS):
            yield start + m.start("value"), start + m.end("value"), "passphrase given after 'password'", "MV507"
