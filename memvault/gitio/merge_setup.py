"""What a clone needs so git merges memory through memvault: the attributes and the driver.

- `.gitattributes` in the vault (committed, shared): `memory/**/*.md merge=union`. A clone without
  memvault (a plain `git pull`, Obsidian Git on a phone) then keeps both sides' lines instead of
  writing conflict markers into a log; `check` finds and `check --fix` repairs what union leaves.
- `.git/info/attributes` (this clone only, above `.gitattributes`): the vault's logs and MEMORY.md
  to `merge=memvault`, and `merge.memvault.driver` in `.git/config`: this Python running
  `memvault merge-driver`. git does not copy either into a clone, so `init`, `hook install` and
  `sync` write them.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

from memvault.fsio import atomic_write
from memvault.gitio.machine import machine
from memvault.gitio.run import run_git

ATTRIBUTES_FILE = ".gitattributes"
BEGIN, END = "# memvault:begin (docs/sync.md)", "# memvault:end"
SHARED_LINES = ("memory/**/*.md merge=union",)
DRIVER = "memvault"


@dataclass(frozen=True)
class Setup:
    attributes_written: bool  # .gitattributes changed (it is the vault's to commit)
    driver: str
    machine: str


def _block(lines: tuple[str, ...] | list[str]) -> str:
    return "\n".join((BEGIN, *lines, END)) + "\n"


def with_block(text: str, lines: tuple[str, ...] | list[str]) -> str:
    """`text` with memvault's block (between its marker lines) replaced or added at the end."""
    block = _block(lines)
    if BEGIN in text and END in text:
        before, _, rest = text.partition(BEGIN)
        _, _, after = rest.partition(END)
        return before + block.rstrip("\n") + after
    return text + ("\n" if text and not text.endswith("\n") else "") + block


def git_path(root: Path, name: str) -> Path:
    found = run_git(["rev-parse", "--git-path", name], root).text.strip()
    return (root / found).resolve()


def repo_prefix(root: Path) -> str:
    return run_git(["rev-parse", "--show-prefix"], root).text.strip()


def pattern(prefix: str, rest: str) -> str:
    """An attributes pattern for `rest` in the folder `prefix` (from the repository's top): glob
    characters of folder names escaped, and C-quoted when it holds a space or a quote (git reads
    an unquoted space as the end of the pattern)."""
    found = "/" + re.sub(r"([\\\[\]*?])", r"\\\1", prefix) + rest
    if re.search(r'[\s"]', found):
        found = '"' + found.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return found


def driver_command(python: str | None = None) -> str:
    exe = (python or sys.executable).replace("'", "'\\''")
    return f"'{exe}' -m memvault merge-driver %O %A %B %P"


def install(root: Path, *, python: str | None = None, shared: bool = True) -> Setup:
    """Write the attributes and register the driver in this clone; `shared`: also `.gitattributes`."""
    root = Path(root).resolve()
    prefix = repo_prefix(root)
    written = False
    if shared:
        target = root / ATTRIBUTES_FILE
        old = target.read_text(encoding="utf-8") if target.is_file() else ""
        new = with_block(old, SHARED_LINES)
        if new != old:
            atomic_write(target, new)
            written = True
    info = git_path(root, "info/attributes")
    old_info = info.read_text(encoding="utf-8") if info.is_file() else ""
    mine = [f"{pattern(prefix, 'memory/**/*.md')} merge={DRIVER}", f"{pattern(prefix, 'MEMORY.md')} merge={DRIVER}"]
    new_info = with_block(old_info, mine)
    if new_info != old_info:
        info.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(info, new_info)
    command = driver_command(python)
    found = run_git(["config", "--get-regexp", r"^(merge\.memvault\.|memvault\.machine)"], root, check=False)
    have = dict(line.split(" ", 1) for line in found.text.splitlines() if " " in line)
    wanted = {f"merge.{DRIVER}.name": "memvault: memory merged entry by entry", f"merge.{DRIVER}.driver": command}
    for key, value in wanted.items():  # written only when different: each write takes git's config lock
        if have.get(key) != value:
            run_git(["config", key, value], root)
    return Setup(written, command, machine(root))  # a clone gets its machine name here, once


def installed(root: Path) -> bool:
    """Whether this clone routes memory to the driver (attributes and config both there)."""
    found = run_git(["config", "--get", f"merge.{DRIVER}.driver"], root, check=False)
    if not found.ok:
        return False
    info = git_path(root, "info/attributes")
    return info.is_file() and f"merge={DRIVER}" in info.read_text(encoding="utf-8")
