"""Writing to the vault: `init` a new one, `log` a new entry into its daily file."""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from memvault import derived_db
from memvault.config.core import CONFIG_NAME, Config, local_zone_name, parse_toml, valid_zone
from memvault.entries.daily import parse_log
from memvault.entries.model import Event
from memvault.entries.render import META_LABELS, render_entry
from memvault.entries.values import parse_importance
from memvault.errors import Ambiguous, GitError, InputError, MemvaultError, NotFoundError, Refused
from memvault.fsio import append_spacing, atomic_write, decode_text, encode_like, locked, rewrite
from memvault.gitio import NOT_INSTALLED, fallback_identity, merge_setup, run_git
from memvault.gitio.machine import SYNC_DEFAULTS, has_remote, machine, machine_id
from memvault.layout import LOG_DIR, writable
from memvault.parsed import ParsedVault
from memvault.write.guard import (
    check_entry_options,
    check_entry_text,
    check_entry_times,
    check_value,
    check_wall_clock,
    check_written,
)

TEMPLATE = Path(__file__).resolve().parents[1] / "vault_template"
WRITE_ATTEMPTS = 20


def init_vault(target: Path, *, timezone: str | None = None, git: bool = True) -> Path:
    """Create a vault from the template: files, git repository and a first commit.

    Everything that can be refused is checked before anything is created: a refusal leaves the
    disk as it was (no folder, no file, no repository)."""
    target = Path(target).expanduser().resolve()
    config = _init_config(target, timezone)
    if git and shutil.which("git") is None:
        raise GitError(f"{NOT_INSTALLED}; install it, or give --no-git for a vault without history; nothing was created")
    target.mkdir(parents=True, exist_ok=True)
    for src in sorted(TEMPLATE.rglob("*")):
        rel = src.relative_to(TEMPLATE)
        dst = target / rel
        if src.is_dir():
            dst.mkdir(parents=True, exist_ok=True)
        elif rel.as_posix() == CONFIG_NAME:
            atomic_write(dst, config)
        elif not dst.exists():
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, dst)
    if git:
        _git_init(target)
    return target


def template_config(zone: str, judge: str = "all") -> str:
    """The template's memvault.toml for `zone`, its hook judging `judge`."""
    text = (TEMPLATE / CONFIG_NAME).read_text(encoding="utf-8")
    text = text.replace('timezone = "UTC"', f'timezone = "{zone}"', 1)
    return text.replace('judge = "all"', f'judge = "{judge}"', 1)


def _init_config(target: Path, timezone: str | None) -> str:
    """The new vault's memvault.toml, checked as any command will load it; or the reason `init`
    refuses `target`, raised before anything is written."""
    if (target / CONFIG_NAME).exists() or (target / "MEMORY.md").exists() or (target / LOG_DIR).exists():
        raise Refused(f"{target} already holds a vault (found {CONFIG_NAME}, MEMORY.md or memory/); not overwriting")
    if target.exists() and not target.is_dir():
        raise InputError(f"{target} exists and is not a folder; a vault is a folder")
    if not TEMPLATE.is_dir():
        raise MemvaultError(f"vault template missing at {TEMPLATE}; reinstall memvault")
    if timezone is not None and not valid_zone(timezone):
        raise InputError(f"--timezone {timezone!r} is not a known IANA zone name (such as Europe/Berlin, "
                         "America/New_York or UTC); nothing was created")
    text = template_config(timezone or local_zone_name())
    Config.from_dict(parse_toml(text, CONFIG_NAME), target / CONFIG_NAME)  # as every later command reads it
    return text


def _git_init(target: Path) -> None:
    """`git init`, add everything, first commit; inside an existing work tree, commit just the
    vault's files there instead of nesting a repository."""
    found = run_git(["rev-parse", "--show-toplevel"], target, check=False)
    top = Path(found.text.removesuffix("\n")).resolve() if found.ok else None
    if top is not None and top != target:
        merge_setup.install(target)  # .gitattributes goes into the first commit (docs/sync.md)
        # The person's own staged changes stay staged: the commit names the vault's folder only.
        run_git(["add", "--", str(target)], target)
        run_git([*fallback_identity(target), "commit", "-q", "--no-verify", "-m",
                 f"memvault: new vault in {target.name}", "--", str(target)], target)
        return
    run_git(["init", "-q"], target)
    merge_setup.install(target)
    run_git(["add", "-A"], target)
    run_git([*fallback_identity(target), "commit", "-q", "--no-verify", "-m", "memvault: new vault"], target)


def _check_id(vault: ParsedVault, entry_id: str) -> None:
    """An explicit id (one visible token: `check_entry_options`) that no other entry has."""
    clash = vault.timeline.by_id.get(entry_id)
    if clash is not None:
        raise Refused(f"id {entry_id!r} is already used by {clash.file}:{clash.line}; pick another")


def log_entry(
    vault: ParsedVault,
    text: str,
    *,
    type: str = "observation",
    at: datetime | None = None,
    supersedes: str | None = None,
    reconfirms: tuple[str, ...] = (),
    confidence: float | None = None,
    importance: float | str | None = None,
    tags: tuple[str, ...] = (),
    source: str | None = None,
    scope: str | None = None,
    expires: datetime | None = None,
    entry_id: str | None = None,
    check_refs: bool = True,
    future: bool = False,
    meta: Mapping[str, str] | None = None,
    fresh_id: bool = False,
) -> Event:
    """Append an entry to its day's log, in time order, under the vault's write lock.

    `importance` is a number 0-1, or a word or number as an `Importance:` line takes it. A time
    after now is refused unless `future`; an `expires` at or before the entry's time always is.
    `meta`: more metadata lines by key (`agent-id`, `user-id`, `metadata`: render.META_LABELS).
    `fresh_id`: `entry_id` is new by construction (random), so the vault is not parsed to look
    for it (a full parse, seconds on a large vault)."""
    importance = _importance(importance)
    etype = type.lower()
    if etype not in vault.config.types:
        raise InputError(f"unknown type {type!r}; known: {', '.join(vault.config.types)}")
    if confidence is not None and not 0 <= confidence <= 1:
        raise InputError(f"confidence must be between 0 and 1, got {confidence}")
    body = check_entry_text(text)
    check_entry_options(source=source, scope=scope, tags=tags, supersedes=supersedes, reconfirms=reconfirms,
                        entry_id=entry_id)
    extra = _extra_meta(meta or {})
    if entry_id is not None and not fresh_id:
        _check_id(vault, entry_id)
    if at is not None:  # 02:30 on a spring-forward night: refused, not silently written as 03:30
        check_wall_clock(at, vault.config.timezone)
    # Through UTC: an instant given with another offset is written in the vault's zone.
    now = vault.now()
    when = (at or now).astimezone(UTC).astimezone(vault.config.tz).replace(microsecond=0)
    check_entry_times(when, now, vault.config.timezone, expires=expires, future=future)
    if check_refs and (supersedes or reconfirms):
        supersedes = _pin_ref(vault, supersedes, when, "supersede") if supersedes else None
        reconfirms = tuple(_pin_ref(vault, ref, when, "reconfirm") for ref in reconfirms)
    draft = Event(
        id=entry_id or "", type=etype, timestamp=when, content=body, file="", line=0, end_line=0,
        confidence0=1.0 if confidence is None else confidence, importance=importance,
        tags=tuple(t.lower().lstrip("#") for t in tags if t.strip()), source=source, scope=scope, expires=expires,
        supersedes=supersedes, reconfirms=tuple(reconfirms), explicit_id=entry_id is not None, meta=extra,
    )
    path = vault.log_path_for(when.date().isoformat())
    rel = path.relative_to(vault.root).as_posix()
    check_written(render_entry(draft), where="the new entry", file=rel)
    writable(vault.root, rel)  # never through a link, never over a non-file (layout.py)
    path.parent.mkdir(parents=True, exist_ok=True)
    done: list[tuple[str, int]] = []
    machine = None if entry_id is not None else shared_machine(vault)

    def add(raw: bytes | None) -> bytes:
        event = draft if machine is None else _with_machine_id(draft, raw or b"", rel, vault, machine)
        data, text, line = with_entry(raw or b"", event, rel, vault)
        done[:] = [(text, line)]
        return data

    derived_db.clear_folder(vault.derived)  # a file there is derived state gone wrong
    with locked(vault.lock_path, what=rel, file=rel):
        rewrite(path, add, attempts=WRITE_ATTEMPTS, what=rel)
    new_text, line = done[0]
    parsed = parse_log(new_text, rel, vault.config)
    for ev in parsed.events:
        if ev.line == line:
            return ev
    raise MemvaultError(f"{rel}: the new entry at line {line} did not parse back; please report this")  # pragma: no cover


def shared_machine(vault: ParsedVault) -> str | None:
    """This clone's machine name when entries written here need ids no other clone writes
    (`[sync] ids`: `machine`, or `auto` and the repository has a remote); None otherwise."""
    ids = vault.config.section("sync", SYNC_DEFAULTS)["ids"]
    if ids == "minute" or (ids == "auto" and not has_remote(vault.root)):
        return None
    return machine(vault.root)


def _with_machine_id(draft: Event, raw: bytes, rel: str, vault: ParsedVault, name: str) -> Event:
    """The draft with `Id: <minute>-<machine>` (docs/sync.md), unique in its file."""
    assert draft.timestamp is not None
    taken = {e.id for e in parse_log(decode_text(raw)[0], rel, vault.config).events} if raw else set()
    return with_id(draft, machine_id(draft.timestamp.strftime("%Y-%m-%dT%H:%M"), name, taken))


def _extra_meta(meta: Mapping[str, str]) -> dict[str, str]:
    """The extra metadata lines, each one line under a key `render` writes."""
    unknown = sorted(set(meta) - set(META_LABELS))
    if unknown:
        raise InputError(f"no metadata line {', '.join(unknown)}; known: {', '.join(META_LABELS)}")
    return {k: check_value(v.strip(), META_LABELS[k] + ":") for k, v in meta.items() if v.strip()}


def _importance(value: float | str | None) -> float | None:
    if not isinstance(value, str):
        return value
    number = parse_importance(value)
    if number is None:
        raise InputError(f"--importance {value!r}: use high, medium, low or a number 0-1")
    return number


def with_entry(raw: bytes, event: Event, rel: str, vault: ParsedVault) -> tuple[bytes, str, int]:
    """The file's bytes with `event` added, their text, and the line of the new heading.

    Only the added lines are encoded: the file's own bytes (line endings, BOM) are kept, and an
    entry that goes at the end is a pure addition, which the write appends in place.
    """
    old, notes = decode_text(raw)
    if notes:
        raise Refused(f"{rel}:{notes[0][0]}: {notes[0][1]}; logging would rewrite those bytes, "
                      "so fix the file first (memvault check lists it)", file=rel, line=notes[0][0])
    refuse_broken_frontmatter(old, rel)
    text, line = insert_entry(old, event, rel, vault)
    return encode_like(raw, old, text), text, line


def refuse_broken_frontmatter(text: str, rel: str) -> None:
    """Refuse to log into a file whose front matter does not parse (MV101): the entry would be
    written, and then the pre-commit hook would refuse the file, the new entry with it."""
    from memvault.entries.front_matter import read_frontmatter
    from memvault.entries.model import Problem

    problems: list[Problem] = []
    read_frontmatter(text.split("\n"), rel, problems)
    broken = [p for p in problems if p.code == "MV101"]
    if broken:
        p = broken[0]
        raise Refused(f"{rel}:{p.line}: {p.message} (MV101); the hook would refuse to commit this file, so "
                      "nothing was logged: fix the front matter first (memvault check lists it)",
                      file=rel, line=p.line)


def insert_entry(old: str, event: Event, rel: str, vault: ParsedVault, block: str | None = None) -> tuple[str, int]:
    """The file text with `event` inserted after every entry at or before its minute (`block`: its
    lines, when the caller renders more than `render_entry` does, as an import does).

    Returns the new text and the 1-based line of the new heading.
    """
    when = event.timestamp
    assert when is not None, "insert_entry takes a log entry, which has a time"
    day = when.date().isoformat()
    block = block or render_entry(event)
    if not old.strip():
        text = f"# {day}\n\n{block}"
        return text, 3
    lines = old.split("\n")
    parsed = parse_log(old, rel, vault.config)
    # By the minute: going in front of an entry of the same minute (10:00:30 before 10:00:45) would
    # renumber its default id (…T10:00 -> …T10:00-2), and references to it would move to the new one.
    minute = _minute(when)
    # Entries only: a note's time (a `- 14:30` bullet) is inside a section, where no entry goes.
    later = [e for e in parsed.events if e.timestamp and not e.is_note and _minute(e.timestamp) > minute]
    if later:
        at = later[0].line - 1
        new_lines = lines[:at] + block.rstrip("\n").split("\n") + [""] + lines[at:]
        return "\n".join(new_lines), at + 1
    head = old + append_spacing(old)
    return head + block, head.count("\n") + 1


def _minute(when: datetime) -> datetime:
    return when.replace(second=0, microsecond=0)


def log_result(vault: ParsedVault, event: Event) -> dict:
    """What `log --json` prints: where the entry went, its time, and the ids its references name
    (a program that passed a description or a link learns which entry it superseded)."""
    def target(ref: str) -> str | None:
        return vault.timeline.index.resolve(ref, event).target

    return {
        "id": event.id, "file": event.file, "line": event.line, "end_line": event.end_line,
        "timestamp": event.timestamp.isoformat() if event.timestamp else None,
        "supersedes": target(event.supersedes) if event.supersedes else None,
        "reconfirms": [target(ref) for ref in event.reconfirms],
    }


def _pin_ref(vault: ParsedVault, ref: str, when: datetime, verb: str) -> str:
    """Check a reference resolves now, to an entry not later than the new one; a description
    is written as the id it resolves to.

    A description is matched against the entries that exist when it is read, so a later
    backfill could change what it means; the id cannot change.
    """
    res = vault.timeline.index.resolve(ref)
    if res.candidates:
        raise Ambiguous(f"reference {ref!r} is ambiguous; candidates: {', '.join(res.candidates)}")
    if res.target is None:  # not `res.ok`: this way the type narrows
        raise NotFoundError(f"reference {ref!r} does not resolve: {res.reason}")
    target = vault.timeline.by_id[res.target]
    if target.timestamp is not None and target.timestamp > when:
        raise Refused(
            f"the new entry ({when.isoformat()}) cannot {verb} {res.target}, which is later "
            f"({target.timestamp.isoformat()}); log it with a later --at")
    literal = ref.strip()
    if literal == res.target or literal.startswith(("[[", "![[", "^")):
        return literal
    return res.target


def with_id(event: Event, new_id: str) -> Event:
    return replace(event, id=new_id, explicit_id=True)
