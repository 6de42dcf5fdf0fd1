"""Time travel: what was believed as of T, what changed since T, what superseded what.

Two clocks (docs/time-travel.md):

- event time: the entries as they are now, judged at T by `Timeline.status` (written by T,
  not superseded by an entry written by T, not expired), confidence decayed to T;
- recorded time: the vault's Markdown in the last first-parent commit whose committer
  date is <= T, parsed, with supersession among the entries present in that commit, and
  the same rule applied at T.

`History(vault)` answers both and returns the dicts the CLI prints as JSON. Times are
compared in UTC.
"""

from __future__ import annotations

from collections import OrderedDict
from datetime import UTC, datetime
from enum import Enum
from typing import TYPE_CHECKING, Any, Final

from memvault.entries.lookup import Found, place
from memvault.entries.model import Event
from memvault.entries.render import iso
from memvault.entries.spans import SpanIndex
from memvault.entries.timeparse import check_window
from memvault.errors import Ambiguous, GitError, InputError, NotFoundError
from memvault.gcpause import no_gc
from memvault.history.compare import compare, diff_states, edited_item, revived
from memvault.history.gitrepo import PACK_LOOSE_DEFAULT, Commit, GitRepo
from memvault.history.revisions import DATED_ID_RE, files_for_id, revisions
from memvault.history.snapshot import Snapshot, SnapshotLoader
from memvault.history.timepoint import REVISION_RE, TimePoint

if TYPE_CHECKING:
    from memvault.entries.timeline import Timeline
    from memvault.history.live_columns import RecordedIndex
    from memvault.history.postings import StoredSearch
    from memvault.history.recorded_search import StateSearch
    from memvault.parsed import ParsedVault

HISTORY_DEFAULTS: dict[str, Any] = {"pack_loose": PACK_LOOSE_DEFAULT, "snapshots": 4, "precompute": True}


class _Unset(Enum):
    """A cache not filled yet (None is a value the caches hold: "there is none")."""

    token = 0


_UNSET: Final = _Unset.token


class History:
    """Time-travel queries over one vault (both clocks); caches live as long as the object."""

    def __init__(self, vault: ParsedVault):
        self.vault = vault
        self.config = vault.config
        self.settings = vault.config.section("history", HISTORY_DEFAULTS)
        self._repo: GitRepo | None | _Unset = _UNSET
        self._loader: SnapshotLoader | None = None
        self._snapshots: OrderedDict[str, Snapshot] = OrderedDict()
        self._packed = False
        self._spans: SpanIndex | None = None
        self._event_queries = 0
        self._search: StateSearch | None = None  # recorded QUERY without stored postings
        self._index: RecordedIndex | None | _Unset = _UNSET
        self._stored: StoredSearch | None | _Unset = _UNSET

    # -- plumbing --------------------------------------------------------------------------

    @property
    def repo(self) -> GitRepo | None:
        if self._repo is _UNSET:
            self._repo = GitRepo.find(self.vault.root, self.vault.selection)
        return self._repo

    def require_repo(self) -> GitRepo:
        repo = self.repo
        if repo is None:
            GitRepo.require(self.vault.root, self.vault.selection)  # raises the error that names the vault
        assert repo is not None
        if not self._packed:
            self._packed = True
            repo.maybe_pack(int(self.settings.get("pack_loose", PACK_LOOSE_DEFAULT)))
        return repo

    @property
    def loader(self) -> SnapshotLoader:
        if self._loader is None:
            self._loader = SnapshotLoader(self.vault.root, self.config, self.repo, self.vault.dates)
        return self._loader

    def close(self) -> None:
        if self._loader is not None:
            self._loader.close()
        elif isinstance(self._repo, GitRepo):
            self._repo.close()

    def point(self, when: datetime | str | TimePoint, *, day_end: bool = True) -> TimePoint:
        """Read a time: ISO (vault zone if none), plain date (end of day), `yesterday`,
        `3 days ago`, or a git revision (`HEAD~3`, a commit id, a tag)."""
        if isinstance(when, TimePoint):
            return when
        if isinstance(when, datetime):
            if when.tzinfo is None:
                when = when.replace(tzinfo=self.config.tz)
            return TimePoint(when.astimezone(UTC), None, when.isoformat(), self.config.tz)
        from memvault.entries.timeparse import TimeOutOfRange, parse_time

        try:
            return TimePoint(parse_time(when, self.config.tz, day_end=day_end).astimezone(UTC), None, when, self.config.tz)
        except TimeOutOfRange:
            raise  # it read as a time: do not look for a revision of that name
        except InputError as exc:
            repo = self.repo
            commit = repo.resolve(when.strip()) if repo is not None else None
            if commit is None and repo is not None and REVISION_RE.match(when.strip()):
                raise InputError(f"{when.strip()!r} is not a revision in this repository (nor a time)") from None
            if commit is None:
                hint = "" if repo is not None else " (git revisions need the vault to be a git repository)"
                raise InputError(f"{exc}; or a git revision such as HEAD~3, a commit id or a tag{hint}") from None
            return TimePoint(commit.date, commit, when, self.config.tz)

    def commit_at(self, point: TimePoint) -> Commit | None:
        """The commit recorded time reads at `point`; None before the first commit."""
        repo = self.require_repo()
        if point.commit is not None:
            return point.commit
        commits = repo.commits()
        found = commits.at(point.at)
        if repo.shallow and commits.commits and (found is None or found is commits.commits[0]):
            self._check_shallow(repo, commits.commits[0], point)
        return found

    def _check_shallow(self, repo: GitRepo, oldest: Commit, point: TimePoint) -> None:
        grafted = repo.run("rev-parse", "--git-path", "shallow").strip()
        try:
            from pathlib import Path

            path = Path(grafted)
            boundary = set((path if path.is_absolute() else repo.root / path).read_text().split())
        except OSError:
            return
        if oldest.sha in boundary and point.at < oldest.date:
            raise GitError(
                f"this is a shallow clone: its history starts at {iso(oldest.date.astimezone(self.config.tz))}, after "
                f"{iso(point.at.astimezone(self.config.tz))}; run `git fetch --unshallow` to look further back"
            )

    def snapshot(self, commit: Commit) -> Snapshot:
        snap = self._snapshots.get(commit.sha)
        if snap is None:
            snap = self.loader.at(commit)
            self._snapshots[commit.sha] = snap
            while len(self._snapshots) > max(1, int(self.settings.get("snapshots", 4))):
                self._snapshots.popitem(last=False)
        else:
            self._snapshots.move_to_end(commit.sha)
        return snap

    def snapshot_at(self, point: TimePoint) -> Snapshot | None:
        commit = self.commit_at(point)
        return self.snapshot(commit) if commit is not None else None

    @property
    def recorded_index(self) -> RecordedIndex | None:
        """Recorded time's precomputed answers for HEAD's first-parent chain (loaded, or
        built by one sweep of the history on first use); None when turned off
        (`[history] precompute = false`) or when history cannot be swept."""
        if self._index is _UNSET:
            self._index = None
            if self.settings.get("precompute", True):
                from memvault.history.store import RecordedStore

                self._index = RecordedStore(self.loader, self.require_repo(), self.config).open()
        return self._index

    def _recorded_live(self, point: TimePoint, limit: int | None) -> list[dict[str, Any]] | None:
        """`asof --recorded` without QUERY from the precomputed index; None to fall back
        (no index, a revision off the first-parent chain, a stale index)."""
        from memvault.history.live_columns import StaleIndex

        index = self.recorded_index  # first: it knows the commit list, sparing a `git log`
        commit = self.commit_at(point)
        if commit is None:
            return []
        c = index.position(commit.sha) if index is not None else None
        if index is None or c is None:
            return None
        live = index.live(c, point.at)
        try:
            timeline, events = index.answer(c, live[:limit] if limit else live)
        except StaleIndex:
            self._index = None
            return None
        return [timeline.to_dict(e, point.at) for e in events]

    def _event_live(self, at: datetime) -> list[Event]:
        """Entries live at `at` by event time. One query scans the timeline; from the second
        one on, the span index (built once, ~5 µs per entry) answers in a bisect."""
        self._event_queries += 1
        if self._spans is None and self._event_queries < 2:
            return self.vault.timeline.live(at)
        return self.spans.live(at)

    @property
    def spans(self) -> SpanIndex:
        """Event time's live intervals over the current entries, built once per session."""
        if self._spans is None:
            self._spans = SpanIndex(self.vault.timeline)
        return self._spans

    # -- asof ------------------------------------------------------------------------------

    @no_gc()  # many short-lived objects: a cyclic pass over ~1M cached ones would cost more (p95 halved)
    def as_of(
        self, when: datetime | str | TimePoint, query: str | None = None, *,
        recorded: bool = False, limit: int | None = None, mode: str | None = None,
    ) -> list[dict[str, Any]]:
        """The live entries as of `when`; with `query`, those matching it, ranked at `when`
        (`mode`: search's; event time only, see `_recorded_mode`)."""
        _recorded_mode(recorded, mode)
        point = self.point(when)
        if query is None or not query.strip():
            if not recorded:
                live, timeline = self._event_live(point.at), self.vault.timeline
            else:
                fast = self._recorded_live(point, limit)
                if fast is not None:
                    return fast
                snap = self.snapshot_at(point)
                if snap is None:
                    return []
                live, timeline = snap.timeline.live(point.at), snap.timeline
            chosen = live[:limit] if limit else live
            if not recorded:
                return [_with_retention(timeline, e, point.at) for e in chosen]
            return [timeline.to_dict(e, point.at) for e in chosen]
        from memvault.history import event_rank as asof_rank

        if recorded:
            from memvault.history.live_columns import StaleIndex

            commit = self.commit_at(point)
            if commit is None:
                return []
            try:
                return self._search_state(commit, query, point.at, limit or 10)
            except StaleIndex:  # the parse cache disagrees with the index: answer without it
                self._index = self._stored = None
                return self._search_state(commit, query, point.at, limit or 10)
        ranked = asof_rank.rank_with_index(self.vault, query, point.at, limit or 10, mode)
        return [_with_retention(self.vault.timeline, ev, point.at) | parts for ev, parts in ranked]

    def _search_state(self, commit: Commit, query: str, at: datetime, limit: int) -> list[dict[str, Any]]:
        """Recorded QUERY: the commit's entries scored as search scores them, ranked on a
        timeline cut down to the candidates (from the index) or the commit's whole one."""
        from memvault.history.recorded_search import StateSearch, parts
        from memvault.search.weights import Weights

        index = self.recorded_index
        c = index.position(commit.sha) if index is not None else None
        if index is not None and c is not None:
            present = index.present(c)
            search: StateSearch | None = self.stored_search(index)
            keys = [(path, index.keys[vid][1]) for path, vid in present.items()]
            if search is not None:
                state: list[tuple[tuple[str, str], list[Event] | None]] = [(key, None) for key in keys]
            else:
                parsed = self.loader.events_of(keys)
                state = [(key, parsed[key]) for key in keys]

            def timeline_of(events: list[Event]) -> Timeline:
                occs = [index.occurrence(present[ev.file], ev) for ev in events]
                return index.timeline_for(c, occs, chains=True)[0]
        else:
            snap = self.snapshot(commit)
            state = [((v.path, v.blob), v.events) for v in snap.files.values()]
            search = None

            def timeline_of(events: list[Event]) -> Timeline:
                return snap.timeline
        if search is None:
            if self._search is None:
                self._search = StateSearch(Weights.from_config(self.config))
            search = self._search
        hits, tl = search.rank_with(state, query, timeline_of, at, limit)
        if tl is None:  # no words to look for
            return []
        return [tl.to_dict(tl.by_id[h.id], at) | parts(h) for h in hits]

    def stored_search(self, index: RecordedIndex) -> StoredSearch | None:
        """Recorded QUERY's postings from disk (asof_postings), analysing the versions not
        stored yet; None when the cache cannot be written (the in-memory search is used)."""
        if self._stored is _UNSET:
            self._stored = None
            db = self.loader.cache.connection()
            if db is not None:
                import sqlite3

                from memvault.history.postings import PostingStore, StoredSearch, store_fingerprint
                from memvault.search.weights import Weights

                weights = Weights.from_config(self.config)
                try:
                    store = PostingStore(db, store_fingerprint(self.loader.cache.fingerprint(), weights),
                                         self.loader.cache.heal)
                    store.ensure(index, weights)
                except sqlite3.Error as exc:
                    self.loader.cache.heal(exc)  # damaged: deleted; this query is answered without it
                    return None
                if store.covered != len(index.keys):  # lost every race to other writers
                    return None
                self._stored = StoredSearch(weights, store, index)
        return self._stored

    # -- changes ---------------------------------------------------------------------------

    @no_gc()  # many short-lived objects: a cyclic pass over ~1M cached ones would cost more (p95 halved)
    def changes(self, since: datetime | str | TimePoint, until: datetime | str | TimePoint | None = None) -> dict[str, Any]:
        """New and newly superseded entries after `since` (event time), and entries edited,
        deleted or revived (superseded at `since`, live again because what superseded them went
        away) between the commits at `since` and `until` (or the working tree)."""
        p1 = self.point(since, day_end=False)  # like list --since: a plain date is its start
        p2 = self.point(until) if until is not None else None
        t1, t2 = p1.at, (p2.at if p2 else None)
        check_window(t1.astimezone(self.config.tz), None if t2 is None else t2.astimezone(self.config.tz),
                     since_text=p1.text, until_text=p2.text if p2 else None)
        tl = self.vault.timeline
        firsts = [e for e in tl.events if tl.by_id.get(e.id) is e]
        starts = [(e, tl.start(e)) for e in firsts]  # a bullet's start: Timeline.start
        new = [e for e, ts in starts if ts is not None and ts > t1 and (t2 is None or ts <= t2)]
        superseded = [e for e in firsts if tl.superseder_at(e, t1) is None and tl.superseder_at(e, t2) is not None]
        out: dict[str, Any] = {
            "since": p1.describe(),
            "until": p2.describe() if p2 else None,
            "new": [tl.to_dict(e, t2) for e in new],
            "superseded": [tl.to_dict(e, t2) for e in superseded],
            "edited": [],
            "deleted": [],
            "revived": [],
            "backfilled": [],
            "warnings": [],
        }
        if self.repo is None:
            out["warnings"].append(
                f"{self.vault.root} is not a git repository: edited and deleted entries need git history")
            return out
        old = self.snapshot_at(p1)
        if old is not None:  # dated in the window but already recorded before it (planned, --future): not new
            out["new"] = [d for d in out["new"] if d["id"] not in old.timeline.by_id]
        newer = self.snapshot_at(p2) if p2 is not None else self.loader.worktree(self.vault.files, tl)
        out["from_commit"] = old.commit.sha if old and old.commit else None
        out["to_commit"] = newer.commit.sha if newer and newer.commit else None
        edited, deleted, added = compare(old, newer)
        out["edited"] = [edited_item(old, newer, a, b, t2) for a, b in edited]  # type: ignore[arg-type]
        out["deleted"] = [old.timeline.to_dict(e, t1) | {"text": old.entry_text(e)} for e in deleted]  # type: ignore[union-attr]
        out["revived"] = revived(old, newer, t1, t2)
        if newer is not None:
            out["backfilled"] = [
                newer.timeline.to_dict(e, t2) for e in added
                if (ts := newer.timeline.start(e)) is not None and ts <= t1]
        return out

    # -- diff ------------------------------------------------------------------------------

    @no_gc()  # many short-lived objects: a cyclic pass over ~1M cached ones would cost more (p95 halved)
    def diff(self, first: datetime | str | TimePoint, second: datetime | str | TimePoint) -> dict[str, Any]:
        """Live entries that appeared, changed or went away between two recorded times,
        grouped per MEMORY.md section and per daily log."""
        p1, p2 = self.point(first), self.point(second)
        return diff_states(p1, self.snapshot_at(p1), p2, self.snapshot_at(p2))

    # -- history ---------------------------------------------------------------------------

    def history(self, event_id: str) -> dict[str, Any]:
        """The supersession chain `event_id` belongs to (oldest first) and, from git, the
        commits that changed each entry's text."""
        tl = self.vault.timeline
        found = self._locate(event_id)
        if isinstance(found, dict):
            return found
        event = found.event
        chain = tl.chain(event.id)
        repo = self.repo
        links = []
        for ev in chain:
            item = tl.to_dict(ev)
            item["superseded_by_all"] = list(tl.superseded_by.get(ev.id, ()))
            item["commits"] = self.revisions(ev.id, ev.file, explicit=ev.explicit_id) if repo is not None else []
            links.append(item)
        own = next(item for item in links if item["id"] == event.id)
        out: dict[str, Any] = {
            "id": event.id,
            "status": own["status"],
            "superseded_by": own["superseded_by"],
            "chain": links,
            "commits": own["commits"],
            "warnings": [],
            "found_by": found.to_dict(event_id),
        }
        if repo is None:
            out["warnings"].append(f"{self.vault.root} is not a git repository: no commit history")
        elif repo.shallow:
            out["warnings"].append("shallow clone: commits before its first one are not shown")
        return out

    def _locate(self, spec: str) -> Found | dict[str, Any]:
        """The entry `spec` names as `show` reads it (an id, its start, a printed place,
        a reference: `memvault.entries.lookup`), else the history of a deleted entry with that
        id. A deleted entry's own id comes before an entry standing in for it (a bullet citing
        it, a description its words match)."""
        try:
            found = self.vault.locate(spec)
        except Ambiguous:
            raise
        except NotFoundError:
            if place(spec) is not None:  # a place names lines of today's files, not an old id
                raise
            return self._history_of_gone(spec)
        if found.how in ("cited source", "description") and self.repo is not None:
            try:
                return self._history_of_gone(spec)
            except NotFoundError:
                pass
        return found

    def revisions(self, event_id: str, file: str, *, explicit: bool = False) -> list[dict[str, Any]]:
        """Commits (first parent, oldest first) where the entry's text changed, plus the
        working tree when it differs from the last commit; an `explicit` id (an `Id:` line) is
        followed across files."""
        return revisions(self.require_repo(), self.loader, event_id, file, self.config.tz, explicit=explicit)

    def _history_of_gone(self, event_id: str) -> dict[str, Any]:
        """An id no current entry has: look for it in git history (a deleted entry) and in
        maintain's archive (an archived one: `history` says where it went)."""
        repo = self.repo
        archived = self._archived(event_id)
        if repo is None and archived is not None:
            return {"id": event_id, "status": "archived", "superseded_by": None, "chain": [], "commits": [],
                    "archived": archived, "warnings": [_archived_note(archived)]}
        if repo is None:
            raise NotFoundError(f"no entry with id {event_id!r} (and no git history to look in)")
        commits: list[dict[str, Any]] = []
        for path in files_for_id(repo, event_id):
            commits = self.revisions(event_id, path, explicit=DATED_ID_RE.match(event_id) is None)
            if commits:
                break
        if not commits and archived is None:
            raise NotFoundError(f"no entry with id {event_id!r}, now or in the git history")
        chain: list[dict[str, Any]] = []
        seen = next((c for c in reversed(commits) if c["new"] is not None and c["commit"]), None)
        if seen is not None:
            found = repo.resolve(seen["commit"])
            tl = self.snapshot(found).timeline if found else None
            if tl is not None and event_id in tl.by_id:
                chain = [tl.to_dict(e) | {"superseded_by_all": list(tl.superseded_by.get(e.id, ()))}
                         for e in tl.chain(event_id)]
        gone = "this entry is not in the vault any more; the chain is as it was when last seen"
        return {
            "id": event_id, "status": "deleted" if archived is None else "archived", "superseded_by": None,
            "chain": chain, "commits": commits, **({"archived": archived} if archived else {}),
            "warnings": [gone] if archived is None else [_archived_note(archived), gone],
        }

    def _archived(self, event_id: str) -> dict[str, Any] | None:
        """Where `memvault maintain --archive` moved `event_id` (the archive files say it)."""
        from memvault.forgotten import DEFAULTS, find_archived

        folder = str(self.config.section("retention", DEFAULTS)["archive_dir"]).strip("/")
        return find_archived(self.vault.root, folder, event_id)


def _archived_note(archived: dict[str, Any]) -> str:
    return (f"archived to {archived['file']}:{archived['line']} from {archived['from']} by `memvault maintain` "
            f"at {archived['at'][:16]} (retention {archived['retention']}, {archived['policy']})")


CHANGE_KINDS = ("new", "superseded", "edited", "deleted", "revived", "backfilled")


def cut_changes(data: dict[str, Any], limit: int | None) -> dict[str, Any]:
    """`changes` with at most `limit` entries of each kind (`-n`); `more` counts, per kind, the
    ones left out (absent when nothing was)."""
    if limit is None:
        return data
    more = {k: len(data[k]) - limit for k in CHANGE_KINDS if len(data.get(k) or ()) > limit}
    if not more:
        return data
    return {**data, **{k: data[k][:limit] for k in more}, "more": more}


def _with_retention(timeline: Timeline, event: Event, at: datetime) -> dict[str, Any]:
    """An entry of event-time `asof` with its retention at `at` (docs/retention.md); the vault's
    timeline answers from its stored said-again pairs. Recorded `asof` reads other timelines
    (a commit's entries, often cut down to the candidates) and carries none yet."""
    return timeline.to_dict(event, at) | {"retention": timeline.retention(event, at).to_dict()}


def _recorded_mode(recorded: bool, mode: str | None) -> None:
    """`--recorded` ranks the files of a past commit in memory, by words: they have no vectors
    (docs/decisions.md, "Semantic search (issue 18): asof, context,
    recall, status"). Asking it for meaning is refused
    rather than answered by words without saying so."""
    if recorded and mode in ("semantic", "hybrid"):
        raise InputError(f"--mode {mode} ranks today's index by meaning; --recorded ranks a past commit's "
                         "files by words only: drop --recorded (event time) or use --mode lexical")
