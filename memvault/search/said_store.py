"""The pairs of texts that say the same, kept in `.memvault/said.sqlite` so retention is cheap.

An entry's retention counts each later entry that says the same (entries/presentations.py).
Which texts say the same depends on the two texts alone, so the pairs are stored by text (a
hash of the entry's content), not by entry: an edit elsewhere in a file, a moved or re-dated
entry, a new file holding known texts change nothing here. `sync` is given the vault's texts;
texts it has not seen are compared with the stored ones through their shared signature tokens
(`post`: per token, the texts holding it, one packed row each), texts no entry holds any more
are dropped with their pairs, and a first build (or one that must compare most of the vault
anew) runs `said_join.join` at once.
What is stored always equals a fresh join of the texts given (tests/test_said_store.py).

Derived state: deleting the file costs one full build (about 25 s on 100k entries), nothing else;
a damaged file is deleted and rebuilt (derived_db); one that cannot be written (a read-only
folder, a lock held too long) leaves the pairs to be joined in memory, said once on stderr.
"""

from __future__ import annotations

import hashlib
import logging
import sqlite3
from array import array
from collections import Counter, defaultdict
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from memvault import derived_db
from memvault.config.curate import DEFAULTS as CURATE_DEFAULTS
from memvault.entries.model import Event
from memvault.entries.presentations import Timeline
from memvault.entries.similarity import signature
from memvault.entries.timeline import sort_key
from memvault.fsio import DERIVED_DIR
from memvault.search import said_join
from memvault.sqlutil import in_chunks

FILE = "said.sqlite"
FORMAT = 5
SOURCES = ("memvault.entries.similarity", "memvault.entries.facts", "memvault.entries.words",
           "memvault.search.said_join")
# More new texts than this share of the stored ones: one join of all is cheaper than probing each.
REJOIN_SHARE = 0.2
REJOIN_MIN = 2000
TIMEOUT = 30.0  # seconds to wait for another process building the pairs
log = logging.getLogger("memvault")

Pairs = set[tuple[str, str]]
Occurrence = tuple[str, float, str, int, str]  # id, timestamp (epoch), file, line, text
NO_TEXT = b""  # the key of an index row that says nothing retention counts (undated, empty, a later copy of an id)


def text_key(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=12).digest()


def fingerprint(threshold: float) -> str:
    return derived_db.source_fingerprint(f"{FORMAT} {threshold!r}", *SOURCES)


def _setup(conn: sqlite3.Connection) -> None:
    conn.execute("PRAGMA journal_mode=WAL")
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version == 4:  # the pairs hold; only the occurrences changed shape (by text key, per file)
        conn.executescript(f"DROP TABLE IF EXISTS occ; DELETE FROM meta WHERE key = 'index_state'; "
                           f"PRAGMA user_version = {FORMAT};")
    elif version != FORMAT:  # another layout: start anew
        conn.executescript("DROP TABLE IF EXISTS meta; DROP TABLE IF EXISTS texts; DROP TABLE IF EXISTS tokens;"
                           "DROP TABLE IF EXISTS post; DROP TABLE IF EXISTS pairs; DROP TABLE IF EXISTS occ;"
                           f"PRAGMA user_version = {FORMAT};")
    conn.executescript("""
        CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE IF NOT EXISTS texts (hid INTEGER PRIMARY KEY, key BLOB UNIQUE NOT NULL, text TEXT NOT NULL);
        CREATE TABLE IF NOT EXISTS post (tok TEXT PRIMARY KEY, hids BLOB NOT NULL) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS pairs (a INTEGER NOT NULL, b INTEGER NOT NULL,
                                          PRIMARY KEY (a, b)) WITHOUT ROWID;
        CREATE INDEX IF NOT EXISTS pairs_b ON pairs (b);
        CREATE TABLE IF NOT EXISTS occ (key BLOB NOT NULL, id TEXT NOT NULL, ts REAL,
                                        file TEXT NOT NULL, line INTEGER NOT NULL);
        CREATE INDEX IF NOT EXISTS occ_key ON occ (key);
        CREATE INDEX IF NOT EXISTS occ_file ON occ (file);
        CREATE INDEX IF NOT EXISTS occ_id ON occ (id);
        CREATE TABLE IF NOT EXISTS occ_files (file TEXT PRIMARY KEY, sha TEXT NOT NULL) WITHOUT ROWID;
    """)


def connect(root: Path) -> sqlite3.Connection:
    return derived_db.connect(Path(root) / DERIVED_DIR / FILE, _setup, what="the said-again pairs", timeout=TIMEOUT)


@dataclass
class SyncReport:
    texts: int = 0
    added: int = 0
    removed: int = 0
    rejoined: bool = False


class SaidStore:
    """The said-again pairs of one vault's texts at one `[curate] similarity` threshold."""

    def __init__(self, root: Path, threshold: float, *, rejoin_min: int = REJOIN_MIN):
        self.path = Path(root) / DERIVED_DIR / FILE
        self.threshold = threshold
        self.rejoin_min = rejoin_min
        self.report = SyncReport()

    def sync(self, texts: Collection[str], occurrences: Occurrences | None = None,
             index_state: str = "") -> Pairs:
        """Make the stored texts exactly `texts` and return their pairs (a, b): text a says the
        same as text b (`same_fact(a, b)`). Unchanged texts (in the same order) cost one digest
        and one read of the few pairs."""
        try:
            return self._sync(texts, occurrences, index_state)
        except sqlite3.DatabaseError as exc:
            if not derived_db.is_damage(exc):
                raise
            derived_db.discard(self.path, str(exc), "the said-again pairs")
            return self._sync(texts, occurrences, index_state)

    def _sync(self, texts: Collection[str], occurrences: Occurrences | None, index_state: str) -> Pairs:
        digest = set_digest(texts)
        conn = derived_db.connect(self.path, _setup, what="the said-again pairs", timeout=TIMEOUT)
        try:
            with conn:
                conn.execute("BEGIN")  # a snapshot: a writer's half-done work is never read
                if self._meta(conn) == (fingerprint(self.threshold), digest) and occurrences is None:
                    self.report = SyncReport(len(texts))
                    return _pairs(conn)
            with conn:
                conn.execute("BEGIN IMMEDIATE")  # one writer: a second `list` waits, then finds it done
                if self._meta(conn)[0] != fingerprint(self.threshold):
                    _clear(conn)
                self._bring_up_to_date(conn, {text_key(t): t for t in texts})
                conn.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)",
                                 (("fingerprint", fingerprint(self.threshold)), ("digest", digest)))
                # Which entries hold the texts is recorded for search (said_hits.py) with the
                # index state it was read from, by text key: it stays true whatever texts change.
                if occurrences is not None:
                    _record_occurrences(conn, occurrences, index_state)
                return _pairs(conn)
        finally:
            conn.close()

    def seen_files(self) -> dict[str, str]:
        """The index files (and their hashes) the recorded occurrences were read from."""
        conn = derived_db.connect(self.path, _setup, what="the said-again pairs", timeout=TIMEOUT)
        try:
            if self._meta(conn)[0] != fingerprint(self.threshold):
                return {}
            return dict(conn.execute("SELECT file, sha FROM occ_files").fetchall())
        finally:
            conn.close()

    def update_files(self, occurrences: Occurrences, gone: Collection[str], index_state: str) -> bool:
        """Replace the occurrences of the files in `occurrences` (changed) and `gone` (no longer
        indexed), bring the texts along (new ones probed, unheld ones dropped). False, having
        changed nothing, when an id of these files is held elsewhere too (which copy counts is
        the whole vault's question: the caller records everything again)."""
        conn = derived_db.connect(self.path, _setup, what="the said-again pairs", timeout=TIMEOUT)
        try:
            with conn:
                conn.execute("BEGIN IMMEDIATE")
                files = [*occurrences.shas, *gone]
                old = _occ_of_files(conn, files)
                ids = {r[1] for r in occurrences.rows}
                if len(ids) < len(occurrences.rows) or _held_elsewhere(conn, ids | {r[1] for r in old}, files):
                    return False
                for chunk, marks in in_chunks(files):
                    conn.execute(f"DELETE FROM occ WHERE file IN ({marks})", chunk)
                    conn.execute(f"DELETE FROM occ_files WHERE file IN ({marks})", chunk)
                conn.executemany("INSERT INTO occ VALUES (?, ?, ?, ?, ?)", occurrences.rows)
                conn.executemany("INSERT INTO occ_files VALUES (?, ?)", occurrences.shas.items())
                self._follow_texts(conn, occurrences, {r[0] for r in old} - {NO_TEXT})
                conn.execute("INSERT OR REPLACE INTO meta VALUES ('index_state', ?)", (index_state,))
                return True
        finally:
            conn.close()

    def _follow_texts(self, conn: sqlite3.Connection, occurrences: Occurrences, old_keys: set[bytes]) -> None:
        """Texts now held that were not stored are probed; stored ones no row holds are dropped.
        The text set then differs from the one `sync` last digested: its next call compares keys."""
        texts = occurrences.texts
        stored = _hids_of(conn, set(texts) | old_keys)
        new = [k for k in texts if k not in stored]
        unheld = [hid for key, hid in stored.items() if key in old_keys and key not in texts
                  and conn.execute("SELECT 1 FROM occ WHERE key = ? LIMIT 1", (key,)).fetchone() is None]
        if new or unheld:
            conn.execute("DELETE FROM meta WHERE key = 'digest'")
        _drop(conn, unheld)
        if new:
            _probe(conn, _StoredTexts(conn, texts), new, _StoredKeys(conn), self.threshold)

    @staticmethod
    def _meta(conn: sqlite3.Connection) -> tuple[str | None, str | None]:
        meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
        return meta.get("fingerprint"), meta.get("digest")

    def _bring_up_to_date(self, conn: sqlite3.Connection, texts: Mapping[bytes, str]) -> None:
        stored = dict(conn.execute("SELECT key, hid FROM texts").fetchall())
        gone = [hid for key, hid in stored.items() if key not in texts]
        new = [key for key in texts if key not in stored]
        self.report = SyncReport(len(texts), len(new), len(gone))
        if len(new) > max(self.rejoin_min, REJOIN_SHARE * (len(stored) - len(gone))):
            self.report.rejoined = True
            _clear(conn)
            _rejoin(conn, texts, self.threshold)
            return
        _drop(conn, gone)
        if new:
            hids = {hid: key for key, hid in stored.items() if key in texts}
            _probe(conn, texts, new, hids, self.threshold)


def _record_occurrences(conn: sqlite3.Connection, occurrences: Occurrences, index_state: str) -> None:
    conn.execute("DELETE FROM occ")
    conn.execute("DELETE FROM occ_files")
    conn.executemany("INSERT INTO occ VALUES (?, ?, ?, ?, ?)", occurrences.rows)
    conn.executemany("INSERT INTO occ_files VALUES (?, ?)", occurrences.shas.items())
    conn.execute("INSERT OR REPLACE INTO meta VALUES ('index_state', ?)", (index_state,))


@dataclass
class Occurrences:
    """Which entries hold which texts, as search reads them from the index (said_hits.py): one
    row per index row, (key, id, ts, file, line), `key` the text's (`NO_TEXT` for a row
    retention does not count), and the files' hashes they were read from."""

    rows: list[tuple[bytes, str, float | None, str, int]]
    shas: dict[str, str]
    texts: dict[bytes, str]  # the counted rows' texts by key


def _occ_of_files(conn: sqlite3.Connection, files: list[str]) -> list[tuple[bytes, str]]:
    out: list[tuple[bytes, str]] = []
    for chunk, marks in in_chunks(files):
        out += conn.execute(f"SELECT key, id FROM occ WHERE file IN ({marks})", chunk).fetchall()
    return out


def _held_elsewhere(conn: sqlite3.Connection, ids: set[str], files: list[str]) -> bool:
    inside = set(files)
    for chunk, marks in in_chunks(sorted(ids)):
        for (file,) in conn.execute(f"SELECT file FROM occ WHERE id IN ({marks})", chunk):
            if file not in inside:
                return True
    return False


def _hids_of(conn: sqlite3.Connection, keys: Collection[bytes]) -> dict[bytes, int]:
    out: dict[bytes, int] = {}
    for chunk, marks in in_chunks(list(keys)):
        out.update(conn.execute(f"SELECT key, hid FROM texts WHERE key IN ({marks})", chunk).fetchall())
    return out


class _StoredTexts(dict[bytes, str]):
    """The given texts by key, and any stored one read when `_probe` compares with it."""

    def __init__(self, conn: sqlite3.Connection, given: dict[bytes, str]):
        super().__init__(given)
        self.conn = conn

    def __missing__(self, key: bytes) -> str:
        text = str(self.conn.execute("SELECT text FROM texts WHERE key = ?", (key,)).fetchone()[0])
        self[key] = text
        return text


class _StoredKeys(dict[int, bytes]):
    """Stored texts' keys by hid, read as `_probe` meets them."""

    def __init__(self, conn: sqlite3.Connection):
        super().__init__()
        self.conn = conn

    def __missing__(self, hid: int) -> bytes:
        key = bytes(self.conn.execute("SELECT key FROM texts WHERE hid = ?", (hid,)).fetchone()[0])
        self[hid] = key
        return key


def set_digest(texts: Collection[str]) -> str:
    """A digest of the texts in their order: equal for an unchanged vault (events are in time order)."""
    return hashlib.blake2b("\0".join(texts).encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def _pairs(conn: sqlite3.Connection) -> Pairs:
    return set(conn.execute("SELECT x.text, y.text FROM pairs JOIN texts x ON x.hid = a JOIN texts y ON y.hid = b"))


def _clear(conn: sqlite3.Connection) -> None:
    for table in ("texts", "post", "pairs"):
        conn.execute(f"DELETE FROM {table}")


def _packed(hids: Iterable[int]) -> bytes:
    return array("i", hids).tobytes()


def _unpacked(blob: bytes) -> list[int]:
    out = array("i")
    out.frombytes(blob)
    return out.tolist()


def _postings(conn: sqlite3.Connection, toks: Iterable[str]) -> dict[str, list[int]]:
    wanted = sorted(set(toks))
    out: dict[str, list[int]] = {}
    for chunk, marks in in_chunks(wanted):
        out.update((tok, _unpacked(blob)) for tok, blob in
                   conn.execute(f"SELECT tok, hids FROM post WHERE tok IN ({marks})", chunk))
    return out


def _drop(conn: sqlite3.Connection, hids: list[int]) -> None:
    """Forget texts: their rows, their pairs, and their place in the postings of their tokens."""
    gone = set(hids)
    toks: set[str] = set()
    for chunk, marks in in_chunks(hids):
        for (text,) in conn.execute(f"SELECT text FROM texts WHERE hid IN ({marks})", chunk):
            toks.update(said_join.keyed_tokens(signature(text)))
        for sql in ("DELETE FROM texts WHERE hid IN ({})", "DELETE FROM pairs WHERE a IN ({})",
                    "DELETE FROM pairs WHERE b IN ({})"):
            conn.execute(sql.format(marks), chunk)
    for tok, found in _postings(conn, toks).items():
        kept = [h for h in found if h not in gone]
        if kept:
            conn.execute("UPDATE post SET hids = ? WHERE tok = ?", (_packed(kept), tok))
        else:
            conn.execute("DELETE FROM post WHERE tok = ?", (tok,))


def _rejoin(conn: sqlite3.Connection, texts: Mapping[bytes, str], threshold: float) -> None:
    keys = list(texts)
    conn.executemany("INSERT INTO texts (hid, key, text) VALUES (?, ?, ?)", ((i, k, texts[k]) for i, k in enumerate(keys)))
    sigs = {i: signature(texts[k]) for i, k in enumerate(keys)}
    post: dict[str, list[int]] = defaultdict(list)
    for hid, sig in sigs.items():
        for tok in said_join.keyed_tokens(sig):
            post[tok].append(hid)
    conn.executemany("INSERT INTO post (tok, hids) VALUES (?, ?)", ((t, _packed(h)) for t, h in post.items()))
    conn.executemany("INSERT INTO pairs (a, b) VALUES (?, ?)", sorted(said_join.join(sigs, threshold)))


def _probe(conn: sqlite3.Connection, texts: Mapping[bytes, str], new: list[bytes], hids: dict[int, bytes],
           threshold: float) -> None:
    """Compare each new text with the stored ones sharing enough tokens with it (and with the new
    ones before it), then store the new texts and write each touched posting once."""
    sigs = {hid: signature(texts[key]) for hid, key in
            zip(range(_next_hid(conn), _next_hid(conn) + len(new)), new, strict=True)}
    fresh = list(sigs)
    for hid, key in zip(fresh, new, strict=True):
        hids[hid] = key
    post = _postings(conn, (t for hid in fresh for t in said_join.keyed_tokens(sigs[hid])))
    pairs: set[tuple[int, int]] = set()
    for hid in fresh:
        sig = sigs[hid]
        toks = said_join.keyed_tokens(sig)
        found = said_join.at_least([post.get(t, []) for t in toks], said_join.probe_floor(sig, threshold))
        for other in found:
            if other not in sigs:
                sigs[other] = signature(texts[hids[other]])
        pairs |= said_join.partners(hid, found, sigs, threshold)
        for t in toks:
            post.setdefault(t, []).append(hid)
    conn.executemany("INSERT INTO texts (hid, key, text) VALUES (?, ?, ?)",
                     ((hid, hids[hid], texts[hids[hid]]) for hid in fresh))
    conn.executemany("INSERT INTO pairs (a, b) VALUES (?, ?)", sorted(pairs))
    conn.executemany("INSERT OR REPLACE INTO post (tok, hids) VALUES (?, ?)",
                     ((t, _packed(h)) for t, h in post.items()))


def _next_hid(conn: sqlite3.Connection) -> int:
    return int(conn.execute("SELECT coalesce(max(hid), -1) + 1 FROM texts").fetchone()[0])


def pairs_of(root: Path, texts: list[str], threshold: float) -> Pairs:
    """The stored pairs of `texts`, synced; joined in memory when the store cannot be written."""
    try:
        return SaidStore(root, threshold).sync(texts)
    except (sqlite3.OperationalError, OSError) as exc:  # read-only, locked too long, disk full
        log.warning("the said-again pairs could not be stored (%s): compared in memory", exc)
        return said_join.join({t: signature(t) for t in texts}, threshold)


class StoredSaidAgain:
    """`presentations.SaidAgain` answered from the stored pairs: the later entries that say the
    same as an entry (ids, oldest first). The vault's texts are synced on the first question."""

    def __init__(self, root: Path, tl: Timeline, threshold: float | None = None):
        self.root = Path(root)
        self.tl = tl
        self.threshold = float(threshold if threshold is not None else
                               tl.config.section("curate", CURATE_DEFAULTS)["similarity"])
        self._partners: dict[str, list[str]] | None = None
        self._groups: dict[str, list[Event]] = {}

    def of(self, event: Event) -> list[str]:
        partners = self._load().get(event.content)
        ts = event.timestamp
        if not partners or ts is None:  # any entry, as SaidAgain: a second one with an id too
            return []
        later = [e for text in partners for e in self._groups[text] if e.timestamp is not None and e.timestamp > ts]
        return [e.id for e in sorted(later, key=sort_key)]

    def partnered(self) -> Collection[str]:
        """The texts some other text says the same as: `of` is [] for any entry whose text is not here."""
        return self._load().keys()

    def _load(self) -> dict[str, list[str]]:
        if self._partners is None:
            by_id = self.tl.by_id
            # As SaidAgain's corpus: dated, the first entry of its id, with text; in time order.
            corpus = [e for e in self.tl.events
                      if e.timestamp is not None and e.content and not e.content.isspace() and by_id.get(e.id) is e]
            texts = [e.content for e in corpus]
            partners: dict[str, list[str]] = defaultdict(list)
            for a, b in pairs_of(self.root, list(dict.fromkeys(texts)), self.threshold):
                partners[a].append(b)
            # Two entries with the very same text (counted in C: most texts are there once).
            for text, n in Counter(texts).items():
                if n > 1 and said_join.self_same(signature(text), self.threshold):
                    partners[text].append(text)
            wanted = {t for pair in partners.values() for t in pair}
            for e in corpus:
                if e.content in wanted:
                    self._groups.setdefault(e.content, []).append(e)
            self._partners = dict(partners)
        return self._partners
