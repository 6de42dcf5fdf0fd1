"""Changed-lines mode of `check --staged`: judge only what a commit adds or changes.

An adopted vault holds years of memory written before memvault, with problems nobody will
fix today. In this mode (`[hook] judge = "changed-lines"`, or `check --staged
--changed-lines`) the pre-commit hook still runs every rule over the staged files, then
keeps a problem only when the commit is to blame for it:

- it sits on a line the commit adds or changes (so a secret on a new line is refused);
- it belongs to an entry whose heading or metadata lines the commit adds, changes or
  deletes: entry-level problems (an unresolved `Supersedes`, a duplicate id, a cycle) are
  reported at the heading, and a new or edited `Supersedes:` line is what caused them;
- it is about the file's name (MV001, MV006, links and non-files) and the commit adds the
  file or renames it;
- it is a metadata line stranded in the body (MV209, MV210) and the commit adds or changes a
  line below it in its entry (the line that strands it).

Everything else, legacy problems elsewhere in a touched file, never blocks. A file new to
the repository is all added lines, so it is judged whole. The changed lines come from one
`git diff --cached -U0` (`staged_changes`); the decision is the pure `keep_changed`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from memvault.check.sourcefile import SourceFile
from memvault.config.core import Config
from memvault.entries.daily import META_RE
from memvault.entries.model import Problem
from memvault.gitio import run_git

HOOK_DEFAULTS = {"judge": "all"}
JUDGES = ("all", "changed-lines")
# Problems about a file's name or kind, not its lines: blamed on a commit that adds or renames it.
PATH_CODES = frozenset({"MV001", "MV006", "MV100", "MV110", "MV111"})
# Problems on a metadata line that the lines below it strand in the body: blamed on a commit that
# adds a line below it in its entry.
STRANDED_CODES = frozenset({"MV209", "MV210"})
HUNK_RE = re.compile(r"^@@ -\d+(?:,(?P<old>\d+))? \+(?P<new>\d+)(?:,(?P<count>\d+))? @@")
HEADING_RE = re.compile(r"^ {0,3}#{1,6}[ \t]")
OCTAL_RE = re.compile(rb"\\([0-7]{3}|.)")
ESCAPES = {b"n": b"\n", b"t": b"\t", b'"': b'"', b"\\": b"\\", b"a": b"\a", b"b": b"\b", b"f": b"\f",
           b"r": b"\r", b"v": b"\v"}


@dataclass
class FileChanges:
    """What the commit does to one file, in the staged (new) file's line numbers."""

    added: set[int] = field(default_factory=set)  # lines added or changed
    cut_heads: set[int] = field(default_factory=set)  # a heading or metadata line was deleted after this line
    new_path: bool = False  # the file is added, copied or renamed here


def judge_mode(config: Config) -> str:
    """`[hook] judge`: "all" (every staged line is judged) or "changed-lines"."""
    judge = config.section("hook", HOOK_DEFAULTS)["judge"]
    if judge not in JUDGES:  # the schema already says so on load; a staged config is checked too
        raise config.error("hook", "judge", f"[hook] judge must be one of {', '.join(JUDGES)}, got {judge!r}")
    return str(judge)


def staged_changes(root: Path) -> dict[str, FileChanges]:
    """The lines each staged file adds or changes, vault-relative: one `git diff --cached -U0`.

    Prefixes, colour, external diff drivers and text conversion are pinned so the user's git
    settings cannot change what is parsed; renames are followed, so moving a legacy file
    judges only what the move changed in it (and its new name).
    """
    out = run_git(["diff", "--cached", "-U0", "-M", "--no-color", "--no-ext-diff", "--no-textconv",
                   "--src-prefix=a/", "--dst-prefix=b/", "--relative"], root).text
    return parse_diff(out)


def parse_diff(text: str) -> dict[str, FileChanges]:
    """`git diff -U0` output to {new path: FileChanges}; deleted files are left out.

    Hunk bodies are consumed by the counts in their headers, so a content line that starts
    with `+++ ` or `diff --git` is never read as a header. A file's path is taken from its
    `+++ b/...` line, or, where there is none (a pure rename, an empty new file), from
    `rename to`/`copy to` or the `diff --git` line."""
    out: dict[str, FileChanges] = {}
    current, path = FileChanges(), None
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if line.startswith("diff --git "):
            current, path = FileChanges(), _git_line_path(line[len("diff --git "):])
            if path is not None:
                out[path] = current
        elif line.startswith(("new file mode", "rename to ", "copy to ")):
            current.new_path = True
            if not line.startswith("new file mode"):
                path = _moved(out, current, path, _unquote(line.split(" to ", 1)[1]))
        elif line.startswith("+++ "):
            name = _unquote(line[4:].removesuffix("\t"))  # git ends a name with spaces with a tab
            path = _moved(out, current, path, name[2:] if name != "/dev/null" else None)
        elif (m := HUNK_RE.match(line)) is not None:
            i = _hunk(lines, i, m, current)
    return out


def _moved(out: dict[str, FileChanges], current: FileChanges, old: str | None, new: str | None) -> str | None:
    """File `current` is at `new` (None: deleted), not at `old` as first thought."""
    if old is not None and out.get(old) is current:
        del out[old]
    if new is not None:
        out[new] = current
    return new


def _git_line_path(rest: str) -> str | None:
    """The path of `diff --git a/P b/P` when both sides name the same file (else None: the
    rename or `+++` lines that follow say it)."""
    if rest.startswith('"'):
        m = re.fullmatch(r'("(?:[^"\\]|\\.)*") ("(?:[^"\\]|\\.)*")', rest)
        if m is None:
            return None
        a, b = _unquote(m[1]), _unquote(m[2])
    else:
        half = (len(rest) - 1) // 2
        a, b = rest[:half], rest[half + 1:]
    return b[2:] if a[2:] == b[2:] and a.startswith("a/") and b.startswith("b/") else None


def _hunk(lines: list[str], i: int, m: re.Match[str], into: FileChanges) -> int:
    """Read one hunk's body from `lines[i]`; return the index after it."""
    old = int(m["old"]) if m["old"] is not None else 1
    start = int(m["new"])
    count = int(m["count"]) if m["count"] is not None else 1
    into.added.update(range(start, start + count))
    seen_old = seen_new = 0
    while (seen_old < old or seen_new < count) and i < len(lines):
        body = lines[i]
        i += 1
        if body.startswith("-"):
            seen_old += 1
            if _is_head(body[1:]):
                # With no new lines the hunk's start is the line the deletion follows.
                into.cut_heads.add(start if count == 0 else start + count - 1)
        elif body.startswith("+"):
            seen_new += 1
    return i


def _is_head(text: str) -> bool:
    return bool(HEADING_RE.match(text) or META_RE.match(text.strip()))


def _unquote(raw: str) -> str:
    """A path as git prints it: C-quoted (`"b/\\303\\274.md"`) when it holds odd bytes."""
    if len(raw) >= 2 and raw.startswith('"') and raw.endswith('"'):
        data = OCTAL_RE.sub(_unescape, raw[1:-1].encode("utf-8", "surrogateescape"))
        return data.decode("utf-8", "surrogateescape")
    return raw


def _unescape(m: re.Match[bytes]) -> bytes:
    code = m[1]
    if len(code) == 3:
        return bytes([int(code, 8)])
    return ESCAPES.get(code, code)


def keep_changed(problems: Iterable[Problem], changes: dict[str, FileChanges],
                 files: Iterable[SourceFile]) -> list[Problem]:
    """The problems the commit is to blame for (see the module doc); `files` are the staged
    memory files as checked, for the entry rule."""
    staged = {f.path: f for f in files if f.path in changes}
    touched = {path: _touched_heads(changes[path], f) for path, f in staged.items()}
    kept = []
    for p in problems:
        got = changes.get(p.path)
        if got is None:
            continue  # not staged, or staged with no line of its own changed (a mode change)
        stranded = p.code in STRANDED_CODES and p.path in staged and _added_below(got, staged[p.path], p.line)
        if p.line in got.added or p.line in touched.get(p.path, ()) or (got.new_path and p.code in PATH_CODES) or stranded:
            kept.append(p)
    return kept


def _added_below(got: FileChanges, src: SourceFile, line: int) -> bool:
    """Does the commit add or change a line below `line` in the same entry? A metadata line is
    stranded in the body (MV209, MV210) by what follows it: a stray line added under an older
    `Supersedes:` is what this commit does wrong."""
    for ev in src.parsed.events:
        if ev.line <= line <= ev.end_line:
            return any(n in got.added for n in range(line + 1, ev.end_line + 1))
    return False


def _touched_heads(got: FileChanges, src: SourceFile) -> set[int]:
    """Heading lines of the entries whose heading or metadata lines the commit added, changed
    or deleted. A body line added to a legacy entry does not make its old problems new."""
    heads = set()
    for ev in src.parsed.events:
        span = range(ev.line, ev.end_line + 1)
        head_cut = any(n in span for n in got.cut_heads)
        if ev.line in got.added or head_cut or any(n in got.added and _is_meta(src, n) for n in span):
            heads.add(ev.line)
    return heads


def _is_meta(src: SourceFile, line: int) -> bool:
    text = src.lines[line - 1] if 0 < line <= len(src.lines) else ""
    return bool(META_RE.match(text.strip()))
