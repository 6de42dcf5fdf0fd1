"""Passwords and tokens on a command line: `sshpass -p X`, `mysql -pX`, `curl -u user:X`, `--password X`.

Shell history pasted into a note is a common way a password lands in memory. The line is
split into words (no regex over it beyond `\\S+`); a known command's password option, or any
`--password`/`--token` style option, with a literal value (not `$VAR`, `<...>`, a path or
another option) is a finding. `mysql -p` alone (prompt) and `docker run -p 8080:80` (a port)
are not.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from memvault.check.secrets.values import PATH_RE, placeholder, token_like

WORD_RE = re.compile(r"\S+")
SEPARATORS = {"|", "||", "&&", ";", "&"}
# A line is looked at when it holds one of these (wget --password, --api-key: found by "pass", "key").
HINTS = ("sshpass", "mysql", "mariadb", "login", "redis-cli", "mongo", "curl", "htpasswd", "net use", "smb",
         "openssl", "--pass", "--token", "key", "--secret", "--client-secret", "--access-token",
         "--auth-token", "-password")
MYSQL = {"mysql", "mysqldump", "mysqladmin", "mysqlimport", "mysqlsh", "mariadb", "mariadb-dump"}
MONGO = {"mongo", "mongosh", "mongodump", "mongorestore", "mongoexport", "mongoimport"}
LOGIN = {"docker", "podman", "nerdctl", "helm", "buildah", "skopeo", "oras", "crane", "az", "oc", "cf", "argocd"}
CURL_USER = {"-u", "--user", "-U", "--proxy-user"}
SECRET_FLAG_ENDS = ("password", "passwd", "-pass", "token", "secret", "api-key", "apikey", "access-key", "secret-key")
NOT_SECRET_FLAGS = ("-stdin", "-file", "-env", "-prompt", "-less", "-command", "-cmd", "-length", "-url", "-path")
KIND = "password or token on a command line"
COMMANDS = MYSQL | MONGO | LOGIN | {"sshpass", "redis-cli", "curl", "openssl", "htpasswd", "vault", "net", "echo",
                                    "printf", "smbclient", "rpcclient", "smbmap"}
MAX_COMMANDS = 8  # per line: a pasted history line holds a few; a pathological one holds thousands
MAX_ARGS = 64

Word = tuple[int, str]  # (offset in the line, the word without quotes)


def _words(line: str) -> list[Word]:
    out = []
    for m in WORD_RE.finditer(line):
        w, at = m[0], m.start()
        if len(w) > 1 and w[0] in "'\"" and w[-1] == w[0]:
            w, at = w[1:-1], at + 1
        out.append((at, w))
    return out


def _segments(words: list[Word]) -> Iterator[list[Word]]:
    seg: list[Word] = []
    for at, w in words:
        if w in SEPARATORS:
            yield seg
            seg = []
        else:
            seg.append((at, w))
    yield seg


def _literal(value: str) -> bool:
    """A value typed out, not asked for or taken from elsewhere."""
    v = value.strip("'\"")
    return len(v) >= 3 and not v.startswith("-") and v != "*" and not placeholder(v) and not PATH_RE.match(v)


def _option(args: list[Word], names: set[str], *, attached: bool = False) -> Iterator[Word]:
    """Values of `-p X`, `--password X`, `--password=X` (and `-pX` when `attached`)."""
    for i, (at, w) in enumerate(args):
        name, eq, rest = w.partition("=")
        if name in names and eq:
            yield at + len(name) + 1, rest
        elif w in names and i + 1 < len(args):
            yield args[i + 1]
        elif attached and len(w) > 2 and w[:2] in names and not w.startswith("--"):
            yield at + 2, w[2:]


def _generic(args: list[Word]) -> Iterator[Word]:
    """`--password X`, `--api-token=X`, any tool: the option name says what the value is."""
    for i, (at, w) in enumerate(args):
        if not w.startswith("-"):
            continue
        name, eq, rest = w.partition("=")
        low = name.lower()
        if not low.endswith(SECRET_FLAG_ENDS) or low.endswith(NOT_SECRET_FLAGS):
            continue
        at_value, value = (at + len(name) + 1, rest) if eq else args[i + 1] if i + 1 < len(args) else (0, "")
        password = "pass" in low
        if _literal(value) and (password or token_like(value.strip("'\""), hex_ok=True)):
            yield at_value, value


def _command(cmd: str, args: list[Word]) -> Iterator[Word]:
    names = [w for _, w in args]
    if cmd == "sshpass":
        yield from _option(args, {"-p"}, attached=True)
    elif cmd in MYSQL:
        yield from (v for v in _option(args, {"-p", "--password"}, attached=True) if v[1] and v not in args)
    elif cmd in LOGIN and "login" in names:
        yield from _option(args, {"-p", "--password"}, attached=True)
    elif cmd in MONGO:
        yield from _option(args, {"-p", "--password"})
    elif cmd in ("smbclient", "rpcclient", "smbmap"):
        for at, v in _option(args, {"-U", "--user"}, attached=True):
            user, pct, pw = v.partition("%")
            if pct and _literal(pw):
                yield at + len(user) + 1, pw
    elif cmd == "redis-cli":
        yield from _option(args, {"-a", "--pass"})
    elif cmd == "curl":
        for at, v in _option(args, CURL_USER, attached=True):
            user, colon, pw = v.partition(":")
            if colon and _literal(pw):
                yield at + len(user) + 1, pw
    elif cmd == "openssl":
        yield from _option(args, {"-k"})
        for at, v in _option(args, {"-pass", "-passin", "-passout", "-password"}):
            if v.startswith("pass:"):
                yield at + 5, v[5:]
    elif cmd == "htpasswd":
        yield from _htpasswd(args)
    elif cmd == "vault" and names[:1] == ["login"] and len(args) > 1 and "=" not in names[1] and (
            token_like(names[1], hex_ok=True) or names[1].startswith(("hvs.", "s."))):
        yield args[1]


def _htpasswd(args: list[Word]) -> Iterator[Word]:
    flags = "".join(w[1:] for _, w in args if w.startswith("-"))
    if "b" in flags:
        positional = [a for a in args if not a[1].startswith("-")]
        idx = 1 if "n" in flags else 2
        if len(positional) > idx:
            yield positional[idx]


def cli_hits(start: int, line: str) -> Iterator[tuple[int, int, str, str]]:
    """(start, end, kind, code) for each password or token typed on a command line in `line`."""
    segments = list(_segments(_words(line)))
    budget = MAX_COMMANDS
    for n, seg in enumerate(segments):
        found: list[Word] = list(_generic(seg))
        for i, (_, w) in enumerate(seg):
            cmd = w.rsplit("/", 1)[-1]
            if cmd not in COMMANDS or budget <= 0:
                continue
            budget -= 1
            if cmd in ("echo", "printf") and n + 1 < len(segments) and any(
                    x[1] == "--password-stdin" for x in segments[n + 1]) and len(seg) > i + 1:
                found.append(seg[i + 1])
            found.extend(_command(cmd, seg[i + 1 : i + 1 + MAX_ARGS]))
            if cmd == "net" and i + 1 < len(seg) and seg[i + 1][1].lower() == "use":
                found.extend(a for a in seg[i + 2 : i + 2 + MAX_ARGS] if not a[1].startswith(("/", "\\\\")) and not a[1].endswith(":"))
        for at, value in dict.fromkeys(found):
            if _literal(value):
                yield start + at, start + at + len(value), KIND, "MV509"
