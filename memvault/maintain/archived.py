"""An archived entry read back from its archive file, for `show` (docs/retention.md#maintenance).

`maintain --archive` moves an entry's lines, as written, to `forgotten/YYYY.md`; the vault does
not read that folder, so the entry is in no result. `show ID` still finds it there: the block
under its marker line is parsed as its log would parse it, and the answer says where it is and
where it came from, marked `archived`. No recall is counted: the entry is not in the vault.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memvault.forgotten import DEFAULTS, find_archived
from memvault.fsio import decode_text
from memvault.maintain.archive import archived_blocks
from memvault.parsed import ParsedVault, parse_text


def archived_shape(vault: ParsedVault, event_id: str) -> dict[str, Any] | None:
    """`event_id`'s entry as `show` prints it, from the archive file that holds it; None if none does."""
    folder = str(vault.config.section("retention", DEFAULTS)["archive_dir"]).strip("/")
    found = find_archived(vault.root, folder, event_id)
    if found is None:
        return None
    try:
        text = decode_text((Path(vault.root) / found["file"]).read_bytes())[0]
    except OSError:
        return None
    block = archived_blocks(text).get(event_id, "")
    # parsed as the log it came from (its name dates the entry); a block whose heading does not
    # give the same id is shown as it is, by its lines
    events = [e for e in parse_text(block, found["from"], vault.config).events if e.id == event_id]
    if not events:
        return None
    ev = events[0]
    shape = vault.timeline.to_dict(ev, vault.now())
    line = found["line"] + ev.line - 1
    shape.update(status="archived", file=found["file"], line=line, end_line=line + ev.end_line - ev.line,
                 superseded_by=None, archived=found)
    shape["found_by"] = {"how": "archive", "given": event_id,
                         "why": f"archived to {found['file']}:{line} from {found['from']} by `memvault maintain` "
                                f"at {found['at'][:16]} (retention {found['retention']}, {found['policy']}); "
                                "not in the vault: move its lines back into a log to bring it back"}
    return shape
