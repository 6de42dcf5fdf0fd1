"""Whether a candidate `memvault maintain` forgot is hidden, answered from the index.

The rule is memvault/forgotten.py's (hidden from its forgetting on, until a later presentation);
the vault's timeline answers it by parsing every file, which a search must not need. Only entries
dated after the forgetting can bring an entry back, and they are few (those written since
`maintain` ran): they come from the index's rows by time, reconfirmations from its resolved
references, and "said again" is `same_fact` at `[curate] similarity`, the test retention uses.
`tests/test_maintain.py` checks that search and list agree.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from datetime import UTC, datetime

from memvault.config.core import Config
from memvault.config.curate import DEFAULTS as CURATE_DEFAULTS
from memvault.entries.model import Event
from memvault.entries.similarity import Sig, same_fact, signature
from memvault.forgotten import Forgetting, Forgotten
from memvault.search.index import store


def index_forgotten(conn: sqlite3.Connection, records: Mapping[str, Forgetting], config: Config) -> Forgotten:
    threshold = float(config.section("curate", CURATE_DEFAULTS)["similarity"])
    recent: dict[datetime, list[tuple[Event, Sig]]] = {}

    def later(since: datetime) -> list[tuple[Event, Sig]]:
        if since not in recent:
            rows = store.load_events(conn, "ts > ?", (since.timestamp(),))
            recent[since] = [(e, signature(e.content)) for _, e in rows if e.content.strip()]
        return recent[since]

    def presented(event: Event, since: datetime) -> list[datetime]:
        times = [t for t in (event.timestamp, event.updated) if t is not None and t > since]
        if event.timestamp is not None and event.content.strip():
            mine = signature(event.content)
            times += [r.timestamp for r, sig in later(since) if r.timestamp is not None and r.id != event.id
                      and r.timestamp > event.timestamp and same_fact(mine, sig, threshold)]
        rows = conn.execute("SELECT e.ts FROM refs r JOIN events e ON e.rowid = r.src_rowid "
                            "WHERE r.kind = 'r' AND r.target = ? AND e.ts > ?", (event.id, since.timestamp()))
        start = event.timestamp.timestamp() if event.timestamp is not None else float("-inf")
        times += [datetime.fromtimestamp(ts, UTC) for (ts,) in rows if ts >= start]
        return sorted(set(times))

    return Forgotten(records, presented)
