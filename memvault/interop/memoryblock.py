"""A vault as MemoryBlocks: the fact-extraction protocol's JSON shape (draft-07 schema shipped in
`schemas/memoryblock.json`), one block per entry, note and MEMORY.md bullet.

Log entries and notes are EPISODIC, MEMORY.md's bullets and prose SEMANTIC, with
`metadata.synthesized_from` naming the blocks of the entries a bullet cites. A block's id is a
UUID5 of the memvault id under a fixed namespace, so the same entry gets the same block id on
every machine and in every export. docs/memoryblock.md is the mapping this module implements;
the decisions below (`block_type`, `importance_score`, `speaker`, ...) are pure functions, and
`blocks` is the shell that reads the vault and the recall record.
"""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from functools import cache
from importlib import resources
from typing import Any, Literal, TextIO

from memvault.entries.meta import read_metadata
from memvault.entries.model import Event
from memvault.entries.presentations import re_encounter
from memvault.entries.scopes import in_scope, wanted_scope
from memvault.entries.stale import sources_superseded
from memvault.entries.timeline import Status, Timeline
from memvault.errors import MemvaultError
from memvault.gcpause import no_gc
from memvault.parsed import ParsedVault
from memvault.search import access

__all__ = [
    "NAMESPACE", "SPEAKERS", "block_id", "block_type", "blocks", "bullet_in_scope", "embedding_vectors", "export",
    "importance_score", "in_scope", "schema", "speaker", "validate", "write_json", "write_jsonl",
]

# uuid5(NAMESPACE_URL, "https://memvault.invalid/memoryblock"): fixed forever, since every
# exported block id is derived from it. Changing it re-identifies every block ever exported.
NAMESPACE = uuid.UUID("1a2b33da-7a74-53d0-b87b-a3f05abed28a")
_NS_BYTES = NAMESPACE.bytes
SPEAKERS = ("user", "agent", "system", "tool")  # the schema's enum for metadata.speaker
DEFAULT_IMPORTANCE = 0.5  # an entry without `Importance:`: what search assumes (docs/format.md)
BlockType = Literal["EPISODIC", "SEMANTIC"]
DATE_TIME_RE = re.compile(r"\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})")


# -- the pure decisions ------------------------------------------------------------------------


def block_id(memvault_id: str, place: str | None = None) -> str:
    """The block's UUID: uuid5 of the entry's id under `NAMESPACE`. `place` (`file#Lx`) only for
    an entry whose id an earlier one already holds (MV010): ids hold no spaces, so the space
    keeps `"{id} {place}"` apart from every real id."""
    name = memvault_id if place is None else f"{memvault_id} {place}"
    # uuid.uuid5 by hand (the same bytes: SHA-1 of namespace + name, version 5, RFC 4122
    # variant), without building a UUID object per block: a third of a 100k export's time.
    digest = bytearray(hashlib.sha1(_NS_BYTES + name.encode("utf-8", "surrogatepass")).digest()[:16])
    digest[6] = (digest[6] & 0x0F) | 0x50
    digest[8] = (digest[8] & 0x3F) | 0x80
    h = digest.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def block_type(event: Event) -> BlockType:
    """MEMORY.md (its bullets and its prose) is distilled knowledge: SEMANTIC; a daily log's
    entries and notes are experience: EPISODIC."""
    return "SEMANTIC" if event.kind == "curated" else "EPISODIC"


def importance_score(importance: float | None) -> float:
    """The entry's `Importance:` (already a number: high 0.9, medium 0.5, low 0.2, or 0-1 as
    written), else 0.5, the value search assumes; clamped to the schema's 0-1."""
    value = DEFAULT_IMPORTANCE if importance is None else float(importance)
    return min(1.0, max(0.0, value))


def semantic_importance(own: float | None, cited: Iterable[float | None]) -> float:
    """A bullet's score: its own when it has one, else the highest of the entries it cites (the
    protocol: "the average or maximum importance of the underlying episodic memories")."""
    if own is not None:
        return importance_score(own)
    known = [c for c in cited if c is not None]
    return importance_score(max(known) if known else None)


def speaker(source: str | None) -> str:
    """`Source: user` (or `system`, `tool`, `agent`) names who said it; anything else (a session,
    a URL, nothing) was written into the vault by whoever keeps it: the agent."""
    word = (source or "").strip().lower()
    return word if word in SPEAKERS else "agent"


def source_id(event: Event) -> str:
    """The `Source:` line, unless it only names a speaker (`user`: that goes to `speaker`); then,
    and without one, the entry's place as memvault cites it (`memory/2026-02-21.md#L12-L14`)."""
    src = (event.source or "").strip()
    return src if src and src.lower() not in SPEAKERS else event.location


def bullet_in_scope(scope: str | None, cited: Sequence[str | None], wanted: str | None) -> bool:
    """A MEMORY.md bullet without a scope of its own belongs where the entries it cites do: in
    `wanted` when it cites none or any of them is (`in_scope`)."""
    if scope or not cited:
        return in_scope(scope, wanted)
    return any(in_scope(c, wanted) for c in cited)


def exported(status: Status, include_all: bool) -> bool:
    """Live entries always; superseded, expired and forgotten ones (and those dated after `at`)
    only with `include_all`, their `metadata.status` saying which: a store that knows no status
    would recall a corrected belief as true."""
    return include_all or status == "live"


def stamp(when: datetime) -> str:
    """RFC 3339 (the schema's date-time): seconds and the offset. An offset with seconds
    (local mean time before ~1900) is no RFC 3339 offset: such a time is written in UTC."""
    offset = when.utcoffset()
    if offset is None or offset.seconds % 60 or offset.microseconds:
        when = when.astimezone(UTC)
    return when.isoformat(timespec="seconds")


def last_access(created: datetime, recalled: datetime | None, at: datetime) -> datetime:
    """The last recall memvault recorded (memvault/search/access.py) when it happened by `at`, else
    the creation time; never before the creation time (a recall of an earlier text of the id)."""
    if recalled is None or recalled > at:
        return created
    return max(created, recalled)


def undated_time(cited: Iterable[datetime | None], fallback: datetime) -> datetime:
    """When an undated MEMORY.md bullet or note was written, at the latest known: after the newest
    entry it cites; else `fallback` (the file's modification time, or `at` when that is later:
    undated text is live at every time, so it existed by `at`)."""
    return max((t for t in cited if t is not None), default=fallback)


def embedding_vectors(contents: Sequence[str]) -> list[list[float]]:
    """THE EMBEDDING HOOK: one dense vector per content, in order. memvault has no embedding
    model yet (the semantic extra does not exist), so every vector is empty, which the schema
    allows (`embedding_vector` is required, its length is not); a consumer embeds `content` with
    its own model. When the extra exists, this is the one function that calls it."""
    return [[] for _ in contents]


def entry_metadata(event: Event) -> dict[str, Any] | str | None:
    """The entry's own `Metadata:` JSON object (memorywire's `metadata`), when it holds one; its
    text when it holds NaN or Infinity, which Python's reader takes and strict JSON has not."""
    raw = event.meta.get("metadata")
    value = read_metadata(raw) if raw else None
    if not isinstance(value, dict):
        return None
    try:
        json.dumps(value, allow_nan=False)
    except ValueError:
        return raw
    return value


def block(
    event: Event, *, uid: str, created: datetime, accessed: datetime, importance: float, status: Status,
    confidence: float, synthesized_from: list[str] | None, cites: Sequence[str], duplicate: bool, undated: bool,
) -> dict[str, Any]:
    """One MemoryBlock (pure): the protocol's fields, then memvault's own under `metadata`."""
    meta: dict[str, Any] = {"speaker": speaker(event.source)}
    agent = event.meta.get("agent-id")
    if agent:
        meta["source_agent_id"] = agent
    if synthesized_from is not None:
        meta["synthesized_from"] = synthesized_from
    meta |= {
        "memvault_id": event.id, "type": event.type, "kind": event.kind, "status": status,
        "tags": list(event.tags), "confidence": round(confidence, 6), "confidence_0": event.confidence0,
        "importance": event.importance, "source": event.source, "scope": event.scope,
        "user_id": event.meta.get("user-id"), "title": event.title, "path": list(event.path),
        "file": event.file, "line": event.line, "end_line": event.end_line,
        "expires": stamp(event.expires) if event.expires else None,
        "forgotten": stamp(event.forgotten) if event.forgotten else None,
    }
    if event.kind == "curated":
        meta["sources"] = list(cites)  # every cited memvault id, exported or not
    if undated:
        meta["undated"] = True  # the file names no day: `timestamp` is the latest it can be
    if duplicate:
        meta["duplicate_id"] = True  # MV010: another entry holds this memvault id
    extra = entry_metadata(event)
    if isinstance(extra, dict):
        meta["entry_metadata"] = extra
    elif extra is not None:
        meta["entry_metadata_text"] = extra
    return {
        "id": uid, "timestamp": stamp(created), "last_accessed": stamp(accessed), "type": block_type(event),
        "source_id": source_id(event), "importance_score": importance, "content": event.content or event.title,
        "embedding_vector": [], "metadata": meta,
    }


# -- the shell -----------------------------------------------------------------------------


@no_gc()  # ~100k dicts and no cycles: the collector's passes would cost more than they free
def blocks(
    vault: ParsedVault, *, scope: str | None = None, at: datetime | None = None, include_all: bool = False,
) -> list[dict[str, Any]]:
    """The vault's entries, notes and MEMORY.md bullets as MemoryBlocks as of `at` (default now;
    a naive time is in the vault's zone), in the timeline's order: live ones (all, with
    `include_all`), in `scope` (`in_scope`). Reads the files and the recall record; writes nothing."""
    scope = wanted_scope(scope)
    when = _aware(vault, at)
    tl = vault.timeline
    chosen: list[tuple[Event, Status, bool]] = []
    for ev in tl.events:
        if re_encounter(ev):
            continue  # a presentation: the memory it presents is the block
        cited = [tl.by_id[i].scope for i in tl.source_ids(ev)] if ev.kind == "curated" else []
        if not bullet_in_scope(ev.scope, cited, scope):
            continue
        status = tl.status(ev, when)
        if status == "live" and sources_superseded(ev, tl, when) is not None:
            status = "superseded"  # a bullet stating what the logs corrected: context leaves it out too
        if exported(status, include_all):
            chosen.append((ev, status, tl.by_id.get(ev.id) is not ev))
    out_ids = {ev.id for ev, _, dup in chosen if not dup}
    recalls = access.stats(vault.root, [ev.id for ev, _, _ in chosen])
    vectors = embedding_vectors([ev.content or ev.title for ev, _, _ in chosen])
    out = []
    for (ev, status, dup), vector in zip(chosen, vectors, strict=True):
        made = _block(vault, tl, ev, status, dup, when, out_ids, recalls)
        made["embedding_vector"] = vector
        out.append(made)
    return out


def _block(vault: ParsedVault, tl: Timeline, ev: Event, status: Status, dup: bool, when: datetime,
           out_ids: set[str], recalls: Mapping[str, access.Access]) -> dict[str, Any]:
    cites = tl.source_ids(ev)
    cited = [tl.by_id[i] for i in cites]
    created = ev.timestamp
    if created is None:
        created = undated_time((c.timestamp for c in cited), min(_mtime(vault, ev.file, when), when))
    recall = recalls.get(ev.id)
    recalled = recall.last_accessed.astimezone(created.tzinfo) if recall else None
    curated = ev.kind == "curated"
    importance = semantic_importance(ev.importance, (c.importance for c in cited)) if curated \
        else importance_score(ev.importance)
    return block(
        ev, uid=block_id(ev.id, f"{ev.file}#L{ev.line}" if dup else None), created=created,
        accessed=last_access(created, recalled, when), importance=importance, status=status, confidence=tl.confidence(ev, when),
        synthesized_from=[block_id(i) for i in cites if i in out_ids] if curated else None,
        cites=cites, duplicate=dup, undated=ev.timestamp is None,
    )


def _aware(vault: ParsedVault, at: datetime | None) -> datetime:
    if at is None:
        return vault.now()
    return at if at.tzinfo is not None else at.replace(tzinfo=vault.config.tz)


def _mtime(vault: ParsedVault, rel: str, default: datetime) -> datetime:
    try:
        seconds = (vault.root / rel).stat(follow_symlinks=False).st_mtime
    except OSError:
        return default
    return datetime.fromtimestamp(int(seconds), UTC).astimezone(vault.config.tz)


# -- output --------------------------------------------------------------------------------

# Characters JSON leaves raw that some line readers (Python's str.splitlines, editors) take for
# line breaks: escaped, so one block stays one line of a JSON Lines file. They occur only
# inside strings, where the escape means the same character.
_LINE_BREAKS = {"\u2028": "\\u2028", "\u2029": "\\u2029", "\x85": "\\u0085"}


def _dumps(value: Any, indent: int | None = None) -> str:
    text = json.dumps(value, ensure_ascii=False, allow_nan=False, indent=indent,
                      separators=None if indent else (",", ":"))
    for char, escape in _LINE_BREAKS.items():
        text = text.replace(char, escape)
    return text


def write_jsonl(blocks: Iterable[Mapping[str, Any]], fh: TextIO) -> int:
    """Write one block per line (JSON Lines, UTF-8 text); returns how many."""
    count = 0
    for item in blocks:
        fh.write(_dumps(item) + "\n")
        count += 1
    return count


def write_json(blocks: Iterable[Mapping[str, Any]], fh: TextIO) -> int:
    """Write the blocks as one JSON array (indented); returns how many."""
    items = list(blocks)
    fh.write(_dumps(items, indent=2) + "\n")
    return len(items)


def export(vault: ParsedVault, fh: TextIO, *, scope: str | None = None, at: datetime | None = None,
           include_all: bool = False, array: bool = False) -> int:
    """`blocks(...)` written to `fh`: JSON Lines, or one JSON array with `array`; returns how many
    (what `memvault export --format memoryblock` calls)."""
    made = blocks(vault, scope=scope, at=at, include_all=include_all)
    return write_json(made, fh) if array else write_jsonl(made, fh)


# -- the schema ----------------------------------------------------------------------------


def schema() -> dict[str, Any]:
    """The MemoryBlock JSON Schema (draft-07) as the protocol gives it, as a new dict."""
    return json.loads(_schema_text())


@cache
def _schema_text() -> str:
    return resources.files("memvault.interop").joinpath("schemas", "memoryblock.json").read_text(encoding="utf-8")


def validate(item: Any) -> list[str]:
    """Every way `item` fails the schema (formats `uuid` and `date-time` checked), as
    `$.path: message`; empty when it is a valid MemoryBlock. Needs the jsonschema package."""
    return [f"${''.join(f'[{p}]' if isinstance(p, int) else f'.{p}' for p in e.absolute_path)}: {e.message}"
            for e in _validator().iter_errors(item)]


@cache
def _validator() -> Any:
    try:
        from jsonschema import Draft7Validator, FormatChecker
    except ImportError as exc:  # pragma: no cover - the test extra installs it
        raise MemvaultError("validating MemoryBlocks needs the jsonschema package: pip install 'memvault[serve]'") from exc
    # jsonschema checks these formats only with optional packages: memvault's own checks, always on
    checker = FormatChecker()
    checker.checks("uuid")(_is_uuid)
    checker.checks("date-time")(_is_date_time)
    return Draft7Validator(schema(), format_checker=checker)


def _is_uuid(value: object) -> bool:
    """A UUID written in the canonical 8-4-4-4-12 lower-case hex form."""
    if not isinstance(value, str):
        return True  # formats judge strings only; `type` judges the rest
    try:
        return str(uuid.UUID(value)) == value
    except ValueError:
        return False


def _is_date_time(value: object) -> bool:
    """RFC 3339: a date, `T`, a time with seconds and a zone (`Z` or `±HH:MM`)."""
    if not isinstance(value, str):
        return True
    if not DATE_TIME_RE.fullmatch(value):
        return False
    try:
        datetime.fromisoformat(value.replace("z", "Z").replace("t", "T"))
    except ValueError:
        return False
    return True
