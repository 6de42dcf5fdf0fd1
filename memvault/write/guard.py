"""What memvault checks before it writes text into a vault file.

One set of rules for every writer (`log`, `curate`, the library API), so that what is
written reads back as what was meant and passes `memvault check`:

- entry text is checked line by line as the reader splits it (`textsafety.reader_lines`),
  and no line may be, or look like but for invisible characters, a heading or a last
  metadata line;
- every value that becomes a metadata line is one line;
- `check_written` is the last gate for any text about to be written: no control
  characters but tab and LF, no U+2028/U+2029, no secrets.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from datetime import datetime, timedelta

from memvault.entries.daily import META_RE
from memvault.entries.markdown import H2_RE
from memvault.entries.timeparse import FUTURE_SLACK, clock_gap
from memvault.errors import InputError
from memvault.textsafety import clean_invisible, first_disallowed, invisible_in, reader_lines

OPTION_KEYS = ("id", "supersedes", "reconfirms", "confidence", "tags", "source", "importance", "scope", "expires")
TITLE_LINE_RE = re.compile(r"^#\s")


def check_entry_text(text: str) -> str:
    """The body `log` writes for `text` (LF line breaks, trailing spaces `check` flags
    dropped), or an InputError saying which line would not read back as text."""
    body = strip_trailing_space("\n".join(reader_lines(text)).strip("\n"))
    if not body.strip():
        raise InputError("nothing to log: the entry text is empty")
    found = first_disallowed(body, line_breaks=True)
    if found is not None:
        raise InputError(f"line {body.count(chr(10), 0, found[0]) + 1} of the text holds {found[1]}; "
                         "memvault writes no control characters but tab and newline")
    lines = body.split("\n")
    for n, line in enumerate(lines, 1):
        if _is_heading(line):
            raise InputError(
                f"line {n} of the text is a '#'/'##' heading, which would end the entry; use '###' for subheadings")
        if _is_heading(clean_invisible(line)):
            raise InputError(f"line {n} of the text would read as a '#'/'##' heading but for "
                             f"{', '.join(invisible_in(line))}; remove it, or use '###' for subheadings")
    _refuse_reference_lines(lines)
    last = clean_invisible(lines[-1])
    meta = META_RE.match(last)
    if meta:  # it would be read back as metadata (or look like it), not as the text that was logged
        key = meta["key"].lower()
        hint = f"use --{key}" if key in OPTION_KEYS else "reword it"
        raise InputError(f"the text's last line {lines[-1]!r} would be read as the entry's {key.title()}: metadata; {hint}")
    return body


def _refuse_reference_lines(lines: list[str]) -> None:
    """A `Supersedes:`/`Reconfirms:` line in the text would be body text, not a reference: the
    entry would silently supersede nothing (`check`: MV210, an error)."""
    from memvault.check.sourcefile import fence_mask

    fenced = fence_mask(lines)
    for n, line in enumerate(lines, 1):
        meta = META_RE.match(clean_invisible(line)) if not fenced[n - 1] else None
        if meta and meta["key"].lower() in ("supersedes", "reconfirms"):
            key = meta["key"].lower()
            raise InputError(f"line {n} of the text is a '{key.title()}:' line, which in the body would be read "
                             f"as text and {key} nothing (check: MV210); use --{key}")


def _is_heading(line: str) -> bool:
    """A line the reader (or `check`, MV008) takes for a `#`/`##` heading."""
    from memvault.check.sourcefile import LOOSE_HEADING_RE

    if H2_RE.match(line) or TITLE_LINE_RE.match(line):
        return True
    loose = LOOSE_HEADING_RE.match(line)
    return loose is not None and bool(loose["indent"] or not loose["gap"])


def strip_trailing_space(body: str) -> str:
    """Trailing whitespace `check` would warn about (MV104) goes; hard breaks and code keep theirs."""
    from memvault.check.sourcefile import fence_mask, is_hard_break

    lines = body.split("\n")
    fenced = fence_mask(lines)
    for i, line in enumerate(lines):
        following = lines[i + 1] if i + 1 < len(lines) else None
        if not fenced[i] and not is_hard_break(line, following):
            lines[i] = line.rstrip()
    return "\n".join(lines)


def check_value(value: str, what: str) -> str:
    """A value that becomes one metadata line (`Source: ...`): one line, no control characters."""
    found = first_disallowed(value, line_breaks=False)
    if found is not None:
        raise InputError(f"{what} {value!r} holds {found[1]} at character {found[0] + 1}; "
                         "a metadata value is a single line without control characters")
    return value


def check_id_token(entry_id: str, what: str = "--id") -> str:
    """An explicit id: one visible token (`check` reports spaces as MV207, invisible characters as MV017)."""
    check_value(entry_id, what)
    if not entry_id.strip() or any(c.isspace() for c in entry_id):
        raise InputError(f"{what} {entry_id!r}: an id is a single token without spaces")
    hidden = invisible_in(entry_id)
    if hidden:
        raise InputError(f"{what} {entry_id!r} holds {', '.join(hidden)}, which cannot be seen or typed; "
                         "an id is made of visible characters")
    return entry_id


def check_entry_options(*, source: str | None, scope: str | None, tags: Iterable[str],
                        supersedes: str | None, reconfirms: Iterable[str], entry_id: str | None) -> None:
    """Every option `log` writes as a metadata line is a single line; a reference is not empty
    (an empty `--supersedes` would write an entry that corrects nothing, silently)."""
    for what, refs in (("--supersedes", [supersedes] if supersedes is not None else []), ("--reconfirms", reconfirms)):
        if any(not ref.strip() for ref in refs):
            raise InputError(f"{what} needs a value: an entry's id, a [[link]] or a description of it")
    for what, value in (("--source", source), ("--scope", scope), ("--supersedes", supersedes)):
        if value is not None:
            check_value(value, what)
    for tag in tags:
        check_value(tag, "--tags")
    for ref in reconfirms:
        check_value(ref, "--reconfirms")
    if entry_id is not None:
        check_id_token(entry_id)


def check_entry_times(when: datetime, now: datetime, zone: str, *, expires: datetime | None = None,
                      future: bool = False) -> None:
    """An entry's time and expiry as `check` will judge them: not in the future (MV016) unless
    `future` asks for a planned entry, and an expiry after the entry's time (MV208: one at or
    before it means the entry was never live)."""
    if not future and when > now + FUTURE_SLACK:
        raise InputError(f"the entry's time {when:%Y-%m-%d %H:%M} is in the future: now is {now:%Y-%m-%d %H:%M} "
                         f"in {zone} (the vault's zone); give --future to log a planned entry anyway "
                         "(check then warns, MV016)")
    if expires is not None and expires <= when:
        raise InputError(f"--expires {expires.astimezone(when.tzinfo):%Y-%m-%d %H:%M} is not after the entry's time "
                         f"{when:%Y-%m-%d %H:%M} ({zone}): the entry would never be live (check: MV208); "
                         "give a later --expires")


def check_wall_clock(at: datetime, zone: str) -> None:
    """Refuse a wall time the clocks skip in the vault's zone (02:30 on a spring-forward night):
    a heading carries no offset, so it would be written as another time (03:30) without a word."""
    gap = clock_gap(at)
    if gap is not None:
        first, after = gap
        later = f" on {after:%Y-%m-%d}" if after.date() != first.date() else ""
        raise InputError(f"{at:%Y-%m-%d %H:%M} does not exist in {zone}: the clocks went from {first:%H:%M} "
                         f"straight to {after:%H:%M}{later} (a daylight-saving change); give a time before "
                         f"{first:%H:%M} or from {after:%H:%M} on, or one with its UTC offset "
                         f"({at:%Y-%m-%dT%H:%M}{_offset(at)})")


def _offset(at: datetime) -> str:
    """The offset the zone had just before the gap (the one a clock not yet changed shows)."""
    delta = at.replace(fold=0).utcoffset() or timedelta()
    sign, minutes = ("-" if delta < timedelta() else "+"), abs(int(delta.total_seconds())) // 60
    return f"{sign}{minutes // 60:02d}:{minutes % 60:02d}"


def check_written(text: str, *, where: str, file: str | None = None) -> None:
    """The last gate before `text` goes into a file: characters, then secrets.

    Every writer calls this on what it adds (`log` on the rendered entry, curate on the
    bullets it writes), so a rule added here holds for all of them.
    """
    from memvault.check.secrets.scan import refuse_secrets

    found = first_disallowed(text, line_breaks=True)
    if found is not None:
        line = text.count("\n", 0, found[0]) + 1
        raise InputError(f"refusing to write {where}: line {line} of what would be written holds {found[1]}; "
                         "memvault writes no control characters but tab and newline")
    refuse_secrets(text, where=where, file=file)  # file: what a --json error names


def added_lines(old: str, new: str) -> list[str]:
    """The lines of `new` that `old` does not have (as a multiset): what a rewrite adds."""
    have = Counter(reader_lines(old))
    out = []
    for line in reader_lines(new):
        if have[line]:
            have[line] -= 1
        else:
            out.append(line)
    return out
