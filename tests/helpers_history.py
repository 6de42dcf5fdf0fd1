"""Random vault histories in git with known ground truth, for the time-travel tests.

`build_history(root, seed)` writes a vault commit by commit (committer dates set with
GIT_COMMITTER_DATE) from an in-memory model: entries added on their day, backfilled late
into older days' files, chains of 3-7 supersessions by id, same-minute entries (ids -2,
-3), explicit ids, expiries, hand edits and deletions in later commits, commits exactly at
an entry's time and several commits in the same second. The model keeps every committed
state, and the `truth_*` functions answer each question from the model alone — they never
read git or use memvault's parser — so they are an independent oracle.
"""

from __future__ import annotations

import copy
import os
import random
import subprocess
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

TZ_NAME = "Europe/Berlin"
TZ = ZoneInfo(TZ_NAME)
WORDS = ("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november "
         "oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu").split()
TYPES = ("Observation", "Belief", "Decision", "Correction")
RATE = 0.95


@dataclass
class MEntry:
    uid: int
    day: date
    minute: int
    type: str
    text: str
    explicit: str | None = None
    ref: str | None = None
    confidence: float | None = None
    expires: datetime | None = None  # UTC

    @property
    def ts(self) -> datetime:
        return datetime.combine(self.day, time(self.minute // 60, self.minute % 60), TZ).astimezone(UTC)


@dataclass
class Bullet:
    block: str
    section: str
    text: str
    added: date

    @property
    def ts(self) -> datetime:
        return datetime.combine(self.added, time(0), TZ).astimezone(UTC)


@dataclass
class Record:
    """One entry of a committed state, as the oracle sees it."""

    id: str
    ts: datetime
    ref: str | None
    expires: datetime | None
    c0: float
    file: str
    text: str  # the entry's lines as written
    section: str | None = None
    pos: int = 0  # order in its file


@dataclass
class Model:
    files: dict[date, list[MEntry]] = field(default_factory=dict)
    bullets: list[Bullet] = field(default_factory=list)

    def ids(self) -> dict[int, str]:
        """Each log entry's id, as the format defines it (explicit, else date+minute+-n)."""
        out = {}
        for day, entries in self.files.items():
            seen: dict[int, int] = {}
            for e in entries:
                n = seen.get(e.minute, 0) + 1
                seen[e.minute] = n
                auto = f"{day.isoformat()}T{e.minute // 60:02d}:{e.minute % 60:02d}" + ("" if n == 1 else f"-{n}")
                out[e.uid] = e.explicit or auto
        return out

    def block(self, e: MEntry) -> str:
        lines = [f"## {e.minute // 60:02d}:{e.minute % 60:02d} - {e.type}", e.text]
        if e.explicit:
            lines.append(f"Id: {e.explicit}")
        if e.ref:
            lines.append(f"Supersedes: {e.ref}")
        if e.confidence is not None:
            lines.append(f"Confidence: {e.confidence}")
        if e.expires is not None:
            lines.append(f"Expires: {e.expires.isoformat()}")
        return "\n".join(lines)

    def render(self, day: date) -> str:
        return f"# {day.isoformat()}\n\n" + "\n\n".join(self.block(e) for e in self.files[day]) + "\n"

    def render_memory(self) -> str:
        out = ["# Long-Term Memory", ""]
        for section in sorted({b.section for b in self.bullets}):
            out += [f"## {section}"]
            out += [f"- {b.text} (added {b.added.isoformat()}) ^{b.block}" for b in self.bullets if b.section == section]
            out.append("")
        return "\n".join(out)

    def records(self) -> dict[str, Record]:
        ids = self.ids()
        out = {}
        for day, entries in self.files.items():
            for pos, e in enumerate(entries):
                out[ids[e.uid]] = Record(ids[e.uid], e.ts, e.ref, e.expires, e.confidence if e.confidence is not None else 1.0,
                                         f"memory/{day.isoformat()}.md", self.block(e), None, pos)
        ordered = sorted(self.bullets, key=lambda b: b.section)  # as rendered: by section, stable
        for pos, b in enumerate(ordered):
            out[b.block] = Record(b.block, b.ts, None, None, 1.0, "MEMORY.md",
                                  f"- {b.text} (added {b.added.isoformat()}) ^{b.block}", b.section, pos)
        return out


@dataclass
class Committed:
    sha: str
    time: datetime  # UTC, whole seconds
    records: dict[str, Record]


@dataclass
class History:
    root: Path
    commits: list[Committed]
    final: dict[str, Record]
    interesting: list[datetime]  # times worth asking about (boundaries)


# -- the oracle ---------------------------------------------------------------------------


def truth_commit(hist: History, at: datetime) -> Committed | None:
    """The last commit (in commit order) whose committer date is <= at."""
    for c in reversed(hist.commits):
        if c.time <= at:
            return c
    return None


def superseders(records: dict[str, Record], rid: str) -> list[Record]:
    return [r for r in records.values() if r.ref == rid and r.id != rid]


def truth_live(records: dict[str, Record], at: datetime) -> set[str]:
    out = set()
    for r in records.values():
        if r.ts > at or (r.expires is not None and r.expires <= at):
            continue
        if any(s.ts <= at for s in superseders(records, r.id)):
            continue
        out.add(r.id)
    return out


def truth_confidence(r: Record, at: datetime) -> float:
    return r.c0 * RATE ** max(0.0, (at - r.ts).total_seconds() / 86400)


def truth_recorded(hist: History, at: datetime) -> set[str]:
    c = truth_commit(hist, at)
    return truth_live(c.records, at) if c else set()


def truth_changes(hist: History, since: datetime, until: datetime | None) -> dict[str, set[str]]:
    now = hist.final
    new = {r.id for r in now.values() if r.ts > since and (until is None or r.ts <= until)}

    def sup_by(r: Record, t: datetime | None) -> bool:
        return any(t is None or s.ts <= t for s in superseders(now, r.id))

    superseded = {r.id for r in now.values() if not sup_by(r, since) and sup_by(r, until)}
    c1 = truth_commit(hist, since)
    old = c1.records if c1 else {}
    c2 = truth_commit(hist, until) if until is not None else None
    newer = (c2.records if c2 else {}) if until is not None else now
    edited = {i for i, r in old.items() if i in newer and newer[i].text != r.text}
    deleted = {i for i in old if i not in newer}
    backfilled = {i for i, r in newer.items() if i not in old and r.ts <= since}
    return {"new": new, "superseded": superseded, "edited": edited, "deleted": deleted, "backfilled": backfilled}


def truth_chain(records: dict[str, Record], rid: str) -> list[str]:
    seen, todo = set(), [rid]
    while todo:
        node = todo.pop()
        if node in seen or node not in records:
            continue
        seen.add(node)
        ref = records[node].ref
        if ref and ref in records and ref != node:
            todo.append(ref)
        todo += [s.id for s in superseders(records, node)]
    return sorted(seen, key=lambda i: (records[i].ts, records[i].file, records[i].pos))


def truth_revisions(hist: History, rid: str) -> list[tuple[str, str | None, str | None]]:
    """(commit, old text, new text) for each commit that changed the entry's text."""
    out, before = [], None
    for c in hist.commits:
        r = c.records.get(rid)
        now = r.text if r else None
        if now != before:
            out.append((c.sha, before, now))
        before = now
    return out


def truth_diff(hist: History, t1: datetime, t2: datetime) -> dict[str, set[str]]:
    c1, c2 = truth_commit(hist, t1), truth_commit(hist, t2)
    r1, r2 = (c1.records if c1 else {}), (c2.records if c2 else {})
    l1, l2 = truth_live(r1, t1), truth_live(r2, t2)
    return {
        "appeared": l2 - l1,
        "gone": l1 - l2,
        "changed": {i for i in l1 & l2 if r1[i].text != r2[i].text},
    }


# -- the generator ------------------------------------------------------------------------


def _git(root: Path, *args: str, when: datetime | None = None) -> str:
    env = dict(os.environ)
    if when is not None:
        stamp = when.strftime("%Y-%m-%dT%H:%M:%S+00:00")
        env.update(GIT_COMMITTER_DATE=stamp, GIT_AUTHOR_DATE=stamp)
    proc = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)}: {proc.stderr}")
    return proc.stdout.strip()


class Generator:
    def __init__(self, root: Path, seed: int, start: datetime):
        self.root = root
        self.rng = random.Random(seed)
        self.model = Model()
        self.uid = 0
        self.clock = start  # UTC
        self.chains: list[list[int]] = []  # uids, oldest first
        self.by_uid: dict[int, MEntry] = {}
        self.interesting: list[datetime] = []
        self.commits: list[Committed] = []
        self.explicit_n = 0

    def sentence(self) -> str:
        return " ".join(self.rng.choice(WORDS) for _ in range(self.rng.randint(3, 7)))

    def new_entry(self, when: datetime, ref_uid: int | None = None) -> MEntry:
        local = when.astimezone(TZ)
        self.uid += 1
        e = MEntry(self.uid, local.date(), local.hour * 60 + local.minute, self.rng.choice(TYPES), self.sentence())
        if self.rng.random() < 0.15:
            self.explicit_n += 1
            e.explicit = "".join(self.rng.choice("bcdfghjkmnpqrstvwxz") for _ in range(6)) + "".join(
                self.rng.choice("bcdfghjkmnpqrstvwxz") for _ in range(self.explicit_n % 3 + 1))
        if self.rng.random() < 0.3:
            e.confidence = self.rng.choice([0.5, 0.7, 0.9])
        if self.rng.random() < 0.05:
            e.expires = (e.ts + timedelta(hours=self.rng.randint(1, 72))).replace(second=0)
        if ref_uid is not None:
            e.ref = self.model.ids()[ref_uid]
        self.by_uid[e.uid] = e
        return e

    def place(self, e: MEntry, *, at_end: bool) -> None:
        entries = self.model.files.setdefault(e.day, [])
        if at_end:
            entries.append(e)
        else:  # in time order, after entries of the same minute
            pos = len([x for x in entries if x.minute <= e.minute])
            entries.insert(pos, e)

    def live_uids(self) -> list[int]:
        return [e.uid for entries in self.model.files.values() for e in entries]

    def step(self, force: bool = False) -> None:
        rng = self.rng
        gap = rng.choice([0, 1, 60, 3600, 5 * 3600, 20 * 3600, 30 * 3600])
        prev = self.clock
        now = prev + timedelta(seconds=gap + rng.randint(0, 59) * (gap > 60))
        for _ in range(rng.choice([0, 1, 1, 2, 3])):
            when = prev + (now - prev) * rng.random()
            when = when.replace(second=0, microsecond=0)
            if when <= prev.replace(second=0, microsecond=0) - timedelta(seconds=1):
                when = now.replace(second=0, microsecond=0)
            self.add(when)
        if rng.random() < 0.2 and self.model.files:
            self.add(now.replace(second=0, microsecond=0), same_minute=True)
        if rng.random() < 0.25 and len(self.model.files) > 1:
            self.backfill(now)
        if force or rng.random() < 0.15:
            self.hand_edit()
        if force or rng.random() < 0.1:
            self.delete()
        if rng.random() < 0.15:
            self.curate(now)
        if rng.random() < 0.3:  # commit exactly at the newest entry's time
            newest = max((e.ts for e in self.by_uid.values()), default=now)
            if prev < newest <= now:
                now = newest
        self.commit(now)

    def add(self, when: datetime, same_minute: bool = False) -> None:
        ref = None
        rng = self.rng
        if rng.random() < 0.45:
            ref = self.chain_target(when)
        e = self.new_entry(when, ref)
        self.place(e, at_end=True)
        self.extend_chain(e, ref)
        if same_minute:
            twin = self.new_entry(when, None)
            self.place(twin, at_end=True)
            self.interesting.append(e.ts)

    def chain_target(self, when: datetime) -> int | None:
        """The head of a chain (3-7 long at most), or a fresh start; always an older minute."""
        existing = set(self.live_uids())
        options = [c for c in self.chains if c[-1] in existing and len(c) < self.rng.randint(3, 7)]
        if options and self.rng.random() < 0.8:
            head = self.rng.choice(options)[-1]
        else:
            pool = [u for u in existing if self.by_uid[u].ts < when - timedelta(minutes=1)]
            if not pool:
                return None
            head = self.rng.choice(pool)
        target = self.by_uid[head]
        return head if target.ts < when.replace(second=0) - timedelta(seconds=59) else None

    def extend_chain(self, e: MEntry, ref: int | None) -> None:
        if ref is None:
            return
        for c in self.chains:
            if c[-1] == ref:
                c.append(e.uid)
                return
        self.chains.append([ref, e.uid])

    def backfill(self, now: datetime) -> None:
        day = self.rng.choice(sorted(self.model.files)[:-1])
        minute = self.rng.randint(6 * 60, 22 * 60)
        when = datetime.combine(day, time(minute // 60, minute % 60), TZ).astimezone(UTC)
        if when >= now:
            return
        ref = self.chain_target(when) if self.rng.random() < 0.3 else None
        e = self.new_entry(when, ref)
        self.place(e, at_end=self.rng.random() < 0.5)
        self.extend_chain(e, ref)
        self.interesting.append(e.ts)

    def hand_edit(self) -> None:
        uids = self.live_uids()
        if uids:
            e = self.by_uid[self.rng.choice(uids)]
            e.text = e.text + " " + self.sentence()

    def delete(self) -> None:
        uids = self.live_uids()
        if uids:
            victim = self.by_uid[self.rng.choice(uids)]
            self.model.files[victim.day].remove(victim)
            if not self.model.files[victim.day]:
                del self.model.files[victim.day]

    def curate(self, now: datetime) -> None:
        bullets = self.model.bullets
        if bullets and self.rng.random() < 0.4:
            b = self.rng.choice(bullets)
            b.text = b.text + " " + self.rng.choice(WORDS)
            return
        self.uid += 1
        added = (now - timedelta(days=self.rng.randint(0, 3))).astimezone(TZ).date()
        bullets.append(Bullet(f"b{self.uid}", self.rng.choice(["Preferences", "Projects"]), self.sentence(), added))

    def commit(self, when: datetime) -> None:
        when = when.replace(microsecond=0)
        memory = self.root / "memory"
        memory.mkdir(exist_ok=True)
        wanted = {f"{d.isoformat()}.md" for d in self.model.files}
        for path in memory.glob("*.md"):
            if path.name not in wanted:
                path.unlink()
        for day in self.model.files:
            target = memory / f"{day.isoformat()}.md"
            text = self.model.render(day)
            if not target.exists() or target.read_text() != text:
                target.write_text(text)
        if self.model.bullets:
            (self.root / "MEMORY.md").write_text(self.model.render_memory())
        _git(self.root, "add", "-A")
        _git(self.root, "commit", "-q", "--allow-empty", "--no-verify", "-m", f"step {len(self.commits)}", when=when)
        sha = _git(self.root, "rev-parse", "HEAD")
        self.commits.append(Committed(sha, when, copy.deepcopy(self.model.records())))
        self.interesting.append(when)
        self.clock = when


def build_history(root: Path, seed: int, steps: int = 30, start: datetime | None = None) -> History:
    """A vault in `root` with `steps` commits and its ground truth."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "memvault.toml").write_text(f'[vault]\ntimezone = "{TZ_NAME}"\n')
    _git(root, "init", "-q")
    gen = Generator(root, seed, start or datetime(2026, 3, 20, 8, 0, tzinfo=UTC))
    for n in range(steps):
        gen.step(force=n in (steps // 2, steps - 3))
    return History(root, gen.commits, gen.model.records(), sorted(set(gen.interesting)))


def question_times(hist: History, rng: random.Random, n: int) -> list[datetime]:
    """Boundaries (exact commit and entry times, one second and one microsecond around them),
    random times, before the first commit and in the future."""
    out: list[datetime] = []
    for t in hist.interesting:
        out += [t, t - timedelta(seconds=1), t + timedelta(seconds=1), t - timedelta(microseconds=1)]
    rng.shuffle(out)
    out = out[: n // 2]
    first, last = hist.commits[0].time, hist.commits[-1].time
    span = (last - first).total_seconds()
    out += [first + timedelta(seconds=rng.random() * span) for _ in range(n - len(out) - 2)]
    out += [first - timedelta(days=3), last + timedelta(days=400)]
    return out
