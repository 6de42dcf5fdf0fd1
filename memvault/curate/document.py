"""MEMORY.md as lines: where its sections and bullets are, and line-range splices on it.

Everything here is pure. Curate never re-renders the file: it computes `Splice`s (replace
lines [start, end) of the original with new lines) and `apply_splices` copies every other
line through untouched, byte for byte, including CRLF line ends and a BOM.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, datetime

from memvault.config.core import Config
from memvault.entries.markdown import BLOCK_ID_RE, BULLET_RE, FENCE_RE, H2_RE
from memvault.entries.memory_md import ANNOTATION_RE, SOURCE_ANN_RE, parse_memory
from memvault.entries.model import Event
from memvault.errors import InputError, Refused

BOM = b"\xef\xbb\xbf"
SUBHEADING_RE = re.compile(r"^#{3,6}[ \t]")
MARKER_RE = re.compile(r"^<!--[ \t]*memvault:[ \t]*curated[ \t]+(?P<at>\S+)[ \t]*-->[ \t]*$")
# `[[target]]` or `[[target|alias]]` inside a `(source: ...)` annotation.
LINK_ALIAS_RE = re.compile(r"\[\[([^\[\]|]+?)(?:\|([^\[\]]*))?\]\]")
DEFAULT_TITLE = "# Long-Term Memory"


@dataclass(frozen=True)
class Section:
    name: str
    heading: int  # line index of `## name`
    end: int  # index of the next `##` heading, or the number of lines


@dataclass
class Bullet:
    """One top-level bullet: its parsed event and the lines it spans ([start, end))."""

    event: Event
    start: int
    end: int
    refs: list[tuple[str, str | None, bool]] = field(default_factory=list)  # (target, alias, is a link)

    @property
    def id(self) -> str:
        return self.event.id


@dataclass
class MemoryDoc:
    raw_lines: list[str]  # as in the file; may end in "\r"
    lines: list[str]  # without "\r"
    bom: bool
    crlf: bool
    exists: bool
    sections: list[Section]
    bullets: list[Bullet]
    marker_line: int | None
    marker_at: datetime | None
    open_fence: int | None = None  # line index of a code fence that is never closed

    def section(self, name: str) -> Section | None:
        key = norm_section(name)
        return next((s for s in self.sections if norm_section(s.name) == key), None)

    def block_ids(self) -> set[str]:
        return {b for bullet in self.bullets for b in bullet.event.block_ids}


def norm_section(name: str) -> str:
    return " ".join(name.lower().split())


def decode(raw: bytes | None, path: str = "MEMORY.md") -> tuple[str, bool]:
    """The file's text (BOM removed) and whether it had a BOM; refuses what it cannot keep."""
    if raw is None:
        return "", False
    bom = raw.startswith(BOM)
    try:
        text = raw[3 if bom else 0 :].decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise Refused(
            f"{path}:{line}: not valid UTF-8; curate only rewrites files it can keep byte for byte, fix the file first",
            file=path, line=line) from None
    if "\r" in text.replace("\r\n", ""):
        raise Refused(f"{path}: uses bare CR line endings; curate will not rewrite it, convert it to LF first", file=path)
    return text, bom


def load_doc(raw: bytes | None, config: Config, path: str = "MEMORY.md") -> MemoryDoc:
    text, bom = decode(raw, path)
    raw_lines = text.split("\n")
    lines = [ln[:-1] if ln.endswith("\r") else ln for ln in raw_lines]
    parsed = parse_memory("\n".join(lines), "MEMORY.md", config)
    bullets = [Bullet(ev, ev.line - 1, ev.end_line, source_refs(lines[ev.line - 1 : ev.end_line])) for ev in parsed.events if not ev.is_note]
    marker_line, marker_at = _marker(lines)
    sections, open_fence = _sections(lines)
    return MemoryDoc(
        raw_lines=raw_lines, lines=lines, bom=bom, crlf="\r\n" in text, exists=raw is not None,
        sections=sections, bullets=bullets, marker_line=marker_line, marker_at=marker_at, open_fence=open_fence,
    )


def _sections(lines: list[str]) -> tuple[list[Section], int | None]:
    """The `##` sections outside code blocks, and where an unclosed code block starts."""
    heads: list[tuple[int, str]] = []
    fence: str | None = None
    opened = 0
    for i, line in enumerate(lines):
        m = FENCE_RE.match(line)
        if fence is not None:
            if m and m.group(1)[0] == fence[0]:
                fence = None
            continue
        if m:
            fence, opened = m.group(1), i
            continue
        h2 = H2_RE.match(line)
        if h2:
            heads.append((i, h2.group(1)))
    out = []
    for n, (i, name) in enumerate(heads):
        end = heads[n + 1][0] if n + 1 < len(heads) else len(lines)
        out.append(Section(name, i, end))
    return out, (opened if fence is not None else None)


def _marker(lines: list[str]) -> tuple[int | None, datetime | None]:
    """The last curation marker: `<!-- memvault: curated 2026-02-22T12:00:00+01:00 -->`."""
    found: tuple[int | None, datetime | None] = (None, None)
    for i, line in enumerate(lines):
        m = MARKER_RE.match(line)
        if not m:
            continue
        try:
            when = datetime.fromisoformat(m["at"])
        except ValueError:
            when = None
        if when is not None and when.tzinfo is None:
            when = None
        if found[1] is None or (when is not None and when > found[1]):
            found = (i, when)
    return found


def marker_line(at: datetime) -> str:
    return f"<!-- memvault: curated {at.isoformat(timespec='seconds')} -->"


def source_refs(lines: list[str]) -> list[tuple[str, str | None, bool]]:
    """What a bullet's `(source: ...)` annotations cite: (link target, `|alias`, is a link)."""
    refs: list[tuple[str, str | None, bool]] = []
    for ann in SOURCE_ANN_RE.finditer("\n".join(lines)):
        found = LINK_ALIAS_RE.findall(ann["refs"])
        if found:
            refs.extend((t.strip(), (a.strip() or None), True) for t, a in found)
        else:
            refs.extend((r.strip(), None, False) for r in ann["refs"].split(",") if r.strip())
    return refs


# ------------------------------------------------------------------------ bullet text


def bullet_prefix(line: str) -> str:
    """`- `, `* `, `1. `: what precedes a bullet's text on its first line."""
    m = BULLET_RE.match(line)
    if not m or m["text"] is None:
        return "- "
    return line[: m.start("text")]


def plain_text(line: str) -> str:
    """A bullet's first line without its marker, annotations and block id."""
    m = BULLET_RE.match(line)
    text = (m["text"] or "") if m else line
    text = ANNOTATION_RE.sub("", text)
    text = SOURCE_ANN_RE.sub("", text)
    text = BLOCK_ID_RE.sub("", text)
    return " ".join(text.split())


def safe_was(text: str) -> str:
    """Text that can sit inside `(updated D, was: ...)` and parse back unchanged."""
    flat = " ".join(text.split())
    if flat.count("(") != flat.count(")") or re.search(r"\([^()]*\(", flat):
        flat = flat.replace("(", "").replace(")", "")
    return flat


def render_bullet(
    text: str, *, prefix: str = "- ", added: date | None = None, updated: date | None = None,
    was: str | None = None, links: tuple[str, ...] = (), block_id: str | None = None,
) -> str:
    parts = [prefix + text.strip()]
    if added is not None:
        parts.append(f"(added {added.isoformat()})")
    if updated is not None:
        parts.append(f"(updated {updated.isoformat()}, was: {safe_was(was)})" if was else f"(updated {updated.isoformat()})")
    if links:
        parts.append(f"(source: {', '.join(links)})")
    if block_id:
        parts.append(f"^{block_id}")
    return " ".join(parts)


def cap_links(links: list[str], limit: int) -> list[str]:
    """Keep the first link (where it was learned) and the latest ones, `limit` in all."""
    unique = list(dict.fromkeys(links))
    if limit <= 0 or len(unique) <= limit:
        return unique
    return unique[:1] + unique[len(unique) - (limit - 1) :] if limit > 1 else unique[:1]


def add_sources(lines: list[str], links: tuple[str, ...], limit: int) -> list[str]:
    """`lines` with `links` added to the bullet's source annotation (made if missing)."""
    out = list(lines)
    new = [lk for lk in links if not any(lk in ln for ln in lines)]
    if not new:
        return out
    for i, line in enumerate(out):
        ann = SOURCE_ANN_RE.search(line)
        if ann is None:
            continue
        old = [r.strip() for r in _split_refs(ann["refs"])]
        merged = cap_links(old + new, limit)
        keyword = line[ann.start() + 1 : ann.start("refs")].rstrip()
        out[i] = line[: ann.start()] + f"({keyword} {', '.join(merged)})" + line[ann.end() :]
        return out
    out[0] = _before_block_id(out[0], f"(source: {', '.join(cap_links(new, limit))})")
    return out


def _split_refs(refs: str) -> list[str]:
    links = [m.group(0) for m in LINK_ALIAS_RE.finditer(refs)]
    return links or [r for r in refs.split(",") if r.strip()]


def _before_block_id(line: str, insert: str) -> str:
    """Insert ` insert` before a trailing `^block-id`, or at the end of the line."""
    m = BLOCK_ID_RE.search(line)
    if m and m.end() >= len(line.rstrip()):
        cut = m.start() + (1 if line[m.start()].isspace() else 0)
        head = line[:cut].rstrip()
        return f"{head} {insert} {line[cut:].strip()}"
    return f"{line.rstrip()} {insert}"


def added_date(line: str) -> date | None:
    """The bullet's `(added DATE)`: an update in place rewrites the text, not when it was learned."""
    for ann in ANNOTATION_RE.finditer(line):
        if ann["kind"].lower() == "added":
            try:
                return date.fromisoformat(ann["date"])
            except ValueError:
                return None
    return None


def bump_updated(line: str, when: date) -> str:
    """Set the bullet's `(updated DATE...)` to `when` (keeping `was:`), or add one."""
    for ann in ANNOTATION_RE.finditer(line):
        if ann["kind"].lower() != "updated":
            continue
        try:
            old = date.fromisoformat(ann["date"])
        except ValueError:
            old = None
        if old is not None and old >= when:
            return line
        return line[: ann.start("date")] + when.isoformat() + line[ann.end("date") :]
    insert = f"(updated {when.isoformat()})"
    src = SOURCE_ANN_RE.search(line)
    if src is not None:
        return line[: src.start()] + insert + " " + line[src.start() :]
    return _before_block_id(line, insert)


def ensure_block_id(lines: list[str], block_id: str) -> list[str]:
    if any(BLOCK_ID_RE.search(ln) for ln in lines):
        return list(lines)
    return [f"{lines[0].rstrip()} ^{block_id}"] + list(lines[1:])


def confirmed_date(lines: list[str]) -> date | None:
    """The latest `(updated|added DATE)` on a bullet's first line."""
    dates = []
    for ann in ANNOTATION_RE.finditer(lines[0] if lines else ""):
        try:
            dates.append(date.fromisoformat(ann["date"]))
        except ValueError:
            continue
    return max(dates) if dates else None


# ----------------------------------------------------------------------------- splices


@dataclass(frozen=True)
class Splice:
    """Replace lines [start, end) of the original with `lines`; inserts have start == end."""

    start: int
    end: int
    lines: tuple[str, ...]
    order: int = 0  # among inserts at one point: lower goes first


def apply_splices(doc: MemoryDoc, splices: list[Splice]) -> str:
    """The document's text with `splices` applied; every other line is copied as it was."""
    ordered = sorted(splices, key=lambda s: (s.start, s.end != s.start, s.order))
    out: list[str] = []
    cursor = 0
    eol = "\r" if doc.crlf else ""
    for sp in ordered:
        if sp.start < cursor:
            raise ValueError(f"overlapping edits at line {sp.start + 1}")  # a bug, never content
        out.extend(doc.raw_lines[cursor : sp.start])
        out.extend(ln + eol for ln in sp.lines)
        cursor = sp.end
    out.extend(doc.raw_lines[cursor:])
    return ("\ufeff" if doc.bom else "") + "\n".join(out)


def section_insert(doc: MemoryDoc, name: str) -> tuple[int, bool] | None:
    """Where new bullets of section `name` go, and whether they need a blank line first."""
    sect = doc.section(name)
    if sect is None:
        return None
    end = _own_end(doc, sect)
    inside = [b for b in doc.bullets if sect.heading < b.start < end]
    if inside:
        return inside[-1].end, False
    last = sect.heading
    for i in range(sect.heading + 1, end):
        if doc.lines[i].strip() and not MARKER_RE.match(doc.lines[i]):
            last = i
    after_prose = last != sect.heading and not doc.lines[last].startswith("#")
    return last + 1, after_prose


def _own_end(doc: MemoryDoc, sect: Section) -> int:
    """Where a section's own part ends: at its first `###` subsection ("### Someday" under
    "Active Projects" holds its own list; a new bullet belongs above it)."""
    fence: str | None = None
    for i in range(sect.heading + 1, sect.end):
        m = FENCE_RE.match(doc.lines[i])
        if fence is not None:
            fence = None if m and m.group(1)[0] == fence[0] else fence
        elif m:
            fence = m.group(1)
        elif SUBHEADING_RE.match(doc.lines[i]):
            return i
    return sect.end


def tail_index(doc: MemoryDoc) -> int:
    """Where new sections go: after the last content line, before a trailing marker."""
    last = -1
    for i, line in enumerate(doc.lines):
        if line.strip():
            last = i
    if doc.marker_line is not None and doc.marker_line == last:
        prev = last - 1
        while prev >= 0 and not doc.lines[prev].strip():
            prev -= 1
        return prev + 1
    return last + 1


def blank_before(doc: MemoryDoc, index: int) -> bool:
    return index > 0 and bool(doc.lines[index - 1].strip())


def blank_after(doc: MemoryDoc, index: int) -> bool:
    return index < len(doc.lines) and bool(doc.lines[index].strip())


def check_edit(text: str, block_id: str) -> tuple[str, ...]:
    """A bullet the person edited: exactly one top-level bullet (its id kept), or () to skip."""
    lines = text.replace("\r\n", "\n").rstrip("\n").split("\n")
    while lines and not lines[-1].strip():
        lines.pop()
    if not any(ln.strip() for ln in lines):
        return ()
    parsed = parse_memory("## x\n" + "\n".join(lines), "MEMORY.md", _EDIT_CONFIG)
    if len(parsed.events) != 1 or parsed.events[0].line != 2 or parsed.events[0].end_line != len(lines) + 1:
        raise InputError("the edited text must be one bullet ('- text'); lines after the first must be indented")
    from memvault.write.guard import check_written

    check_written("\n".join(lines), where="the edited bullet")
    return tuple(ensure_block_id(lines, block_id))


_EDIT_CONFIG = Config()
