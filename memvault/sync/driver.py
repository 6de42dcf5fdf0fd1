"""The git merge driver: `memvault merge-driver %O %A %B %P`, which git runs for each memory file
both sides changed (routed by `.git/info/attributes`, see `setup.py`).

It reads the three versions git hands it, merges them (`merge.py` for a daily log, with moved ids
pinned by `ids.py`; `memory_merge.py` for MEMORY.md), writes the result over %A and exits 0; for
MEMORY.md prose changed on both sides it writes the section with conflict markers and exits 1, so
git reports a conflict and `sync` stops for the person. Review items (a bullet changed on two
machines) wait in the git folder's `memvault/reviews.jsonl` until `sync` logs them.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from dataclasses import asdict
from pathlib import Path

from memvault.config.core import CONFIG_NAME, Config
from memvault.entries.daily import parse_log
from memvault.entries.model import Event
from memvault.errors import InputError
from memvault.fsio import decode_text
from memvault.layout import MEMORY_FILE
from memvault.sync.ids import pin
from memvault.sync.memory_merge import Review, merge_memory
from memvault.sync.merge import merge_log

REVIEWS = "memvault/reviews.jsonl"
BOM = b"\xef\xbb\xbf"


def vault_of(top: Path, path: str) -> tuple[Path, str]:
    """The vault holding `path` (relative to the repository's top): the nearest folder above it with
    a memvault.toml, else the top; and the path relative to that vault."""
    here = (top / path).parent
    while True:
        if (here / CONFIG_NAME).is_file() or here == top or here.parent == here:
            break
        here = here.parent
    root = here if (here / CONFIG_NAME).is_file() else top
    return root, (top / path).relative_to(root).as_posix()


def _read(path: Path, side: str, shown: str) -> tuple[str, bool, bool]:
    """(text, whether CRLF, whether a BOM) of one version; a version that is not UTF-8 is not
    merged at all (decoding would replace its bytes and lose them)."""
    raw = path.read_bytes() if path.exists() else b""
    text, notes = decode_text(raw)
    if notes:
        raise InputError(f"line {notes[0][0]} of {side}'s version is not UTF-8: not merged, the file is left as "
                         "this branch has it", file=shown, line=notes[0][0])
    return text, b"\r\n" in raw, raw.startswith(BOM)


def merge_file(top: Path, base: Path, ours: Path, theirs: Path, path: str, git_dir: Path | None = None) -> int:
    """Merge one file as git asks; returns the exit status git reads (0 merged, 1 conflict)."""
    root, rel = vault_of(top, path)
    config = Config.load(root / CONFIG_NAME)
    (b, _, _), (o, crlf, bom), (t, _, _) = (_read(f, side, path) for f, side in
                                            ((base, "the base"), (ours, "this branch"), (theirs, "the other branch")))
    status = 0
    if rel == MEMORY_FILE:
        result = merge_memory(b, o, t)
        text = result.text
        if result.reviews and git_dir is not None:
            save_reviews(git_dir, rel, result.reviews)
        status = 1 if result.prose_conflicts else 0
    else:
        def parse(text: str) -> list[Event]:
            return parse_log(text, rel, config).events

        merged = merge_log(b, o, t)
        text, _ = pin(merged, o, t, parse)
    data = text.replace("\n", "\r\n") if crlf else text
    ours.write_bytes((BOM if bom else b"") + data.encode("utf-8"))
    return status


def save_reviews(git_dir: Path, rel: str, reviews: list[Review]) -> None:
    """Append review items for `sync` to log; one JSON object per line, appended whole."""
    target = git_dir / REVIEWS
    target.parent.mkdir(parents=True, exist_ok=True)
    lines = "".join(json.dumps({"file": rel, **asdict(r)}, ensure_ascii=False) + "\n" for r in reviews)
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        os.write(fd, lines.encode("utf-8"))
    finally:
        os.close(fd)


def pending_reviews(git_dir: Path) -> list[dict]:
    """The review items waiting, each once."""
    try:
        lines = (git_dir / REVIEWS).read_text(encoding="utf-8").splitlines()
    except OSError:
        return []
    seen: set[str] = set()
    out = []
    for line in lines:
        try:
            item = json.loads(line)
        except ValueError:
            continue
        key = json.dumps(item, sort_keys=True)
        if key not in seen and isinstance(item, dict):
            seen.add(key)
            out.append(item)
    return out


def clear_reviews(git_dir: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        (git_dir / REVIEWS).unlink()


def run_for_git(base: Path, ours: Path, theirs: Path, path: str) -> int:
    """The driver as git runs it, in the repository's top folder: never raises (a failure is a
    conflict git reports, with %A left as ours)."""
    from memvault.gitio import run_git

    try:
        top = Path(run_git(["rev-parse", "--show-toplevel"], Path.cwd()).text.strip())
        gdir = Path(run_git(["rev-parse", "--absolute-git-dir"], Path.cwd()).text.strip())
        return merge_file(top, base, ours, theirs, path, gdir)
    except Exception as exc:  # noqa: BLE001 - git must get an exit status, and the person the reason
        print(f"memvault merge-driver: {path}: {exc}", file=sys.stderr)
        return 2
