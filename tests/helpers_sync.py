"""Clones of one bare remote for the sync acceptance tests (issue 19): set up as a person would
(clone, `memvault hook install`, `memvault sync`), written to through `memvault log`, memorywire's
remember and a text editor, and read back by a fresh parse."""

from __future__ import annotations

import json
import random
import urllib.request
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path

from click.testing import CliRunner

from memvault.cli import cli
from memvault.entries.blocks import marker_lines
from memvault.memorywire import MemoryStore, call
from memvault.sync.run import SyncReport, sync
from memvault.vault import Vault
from memvault.write.log import init_vault, log_entry
from tests.conftest import git

# What people and agents write: freeform, German and English, odd punctuation.
SAYINGS = [
    "Kaffeemaschine im Büro (Flur 2) entkalkt – Wasserhärte 14 °dH, nächstes Mal in 6 Wochen",
    "User prefers `pnpm` over npm; don't suggest yarn again!",
    "Deploy auf staging hing 12 min an der DB-Migration 0042 (lock auf `orders`)",
    "Jörg's laptop: Wi-Fi drops when Bluetooth headset connects → disable 2.4 GHz",
    "Meeting mit Frau Özdemir verschoben auf Do., 14:00 — Raum „Zugspitze“",
    "the CI cache key forgot the lockfile hash; builds were green but stale",
    "Agent notiert: Rechnung #4711 bezahlt, Beleg liegt unter ~/Belege/2026/",
    "Entscheidung: wir bleiben bei Postgres 16, kein Umstieg auf CockroachDB",
]


def token(clone: str, path: str, n: int) -> str:
    """A word no other entry's text contains (fixed width: no token is a prefix of another)."""
    return f"tok{clone}{path}{n:04d}q"


@dataclass
class Clone:
    name: str
    root: Path
    hand_day: str
    written: list[str] = field(default_factory=list)  # tokens, in the order written
    api: str | None = None  # a `memvault serve` of this clone on loopback: remember goes over HTTP

    def vault(self) -> Vault:
        return Vault.open(self.root)

    def tokens(self) -> dict[str, list[str]]:
        """{token: [ids of the entries whose text holds it]} by a fresh parse."""
        found: dict[str, list[str]] = {}
        for ev in self.vault().timeline.events:
            for word in ev.content.split():
                if word.startswith("tok") and word.endswith("q"):
                    found.setdefault(word, []).append(ev.id)
        return found

    def markdown(self) -> dict[str, str]:
        files = sorted(self.root.glob("memory/**/*.md")) + [self.root / "MEMORY.md"]
        return {str(p.relative_to(self.root)): p.read_text(encoding="utf-8") for p in files if p.is_file()}

    def markers(self) -> list[str]:
        return [f"{rel}:{n}" for rel, text in self.markdown().items() for n in marker_lines(text)]

    # -- the three ways in ------------------------------------------------------------------

    def log(self, n: int, rng: random.Random, runner: CliRunner) -> str:
        tok = token(self.name, "log", n)
        text = f"{rng.choice(SAYINGS)} {tok}"
        if n % 3 == 0:  # the command line, as a person types it
            result = runner.invoke(cli, ["--vault", str(self.root), "log", text, "--type",
                                         rng.choice(["observation", "decision", "belief"])])
            assert result.exit_code == 0, result.output
        else:  # the library, as a script or agent calls it
            log_entry(self.vault(), text, tags=(rng.choice(["büro", "ci", "deploy"]),))
        self.written.append(tok)
        return tok

    def remember(self, n: int, rng: random.Random) -> str:
        tok = token(self.name, "mw", n)
        request = {"agent_id": f"agent-{self.name}", "type": rng.choice(["semantic", "episodic"]),
                   "content": f"{rng.choice(SAYINGS)} {tok}"}
        if self.api:
            req = urllib.request.Request(self.api + "/remember", data=json.dumps(request).encode(), method="POST",
                                         headers={"Content-Type": "application/json"})
            with urllib.request.urlopen(req, timeout=30) as resp:
                done = json.loads(resp.read())
        else:
            done = call(MemoryStore(self.vault()), "remember", request)
        assert done["id"], done
        self.written.append(tok)
        return tok

    def hand_edit(self, n: int, minute: int, rng: random.Random) -> str:
        """Append an entry (or, every fourth time, a freeform section) to the hand-kept day's log
        as an editor would: no `Id:`, the time typed by the person (`minute` grows over the run,
        so the file stays in time order on every machine)."""
        tok = token(self.name, "hand", n)
        path = self.root / "memory" / f"{self.hand_day}.md"
        text = path.read_text(encoding="utf-8") if path.exists() else f"# {self.hand_day}\n"
        hhmm = f"{minute // 60:02d}:{minute % 60:02d}"
        if n % 4 == 3:
            block = f"## {hhmm} Notizen {self.name} {n}: Umzug nach Köln\n\nKisten für Küche & Bad, {rng.choice(SAYINGS)} {tok}\n"
        else:
            block = f"## {hhmm} - Observation\n{rng.choice(SAYINGS)} {tok}\n"
        path.write_text(text.rstrip("\n") + "\n\n" + block, encoding="utf-8")
        self.written.append(tok)
        return tok

    def sync(self) -> SyncReport:
        return sync(self.vault())


def hand_day() -> str:
    return (date.today() - timedelta(days=3)).isoformat()


def make_clones(tmp_path: Path, names: list[str], runner: CliRunner) -> tuple[Path, list[Clone]]:
    """A bare remote and one clone per name: the first made by `init` and pushed by its first sync,
    the others cloned, `hook install`ed and synced; each names its machine in its git config."""
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    clones = []
    for k, name in enumerate(names):
        root = tmp_path / f"clone-{name}"
        if k == 0:
            init_vault(root, timezone="UTC")
            git(root, "remote", "add", "origin", str(remote))
        else:
            git(tmp_path, "clone", "-q", str(remote), str(root))
        result = runner.invoke(cli, ["--vault", str(root), "hook", "install"])
        assert result.exit_code == 0, result.output
        git(root, "config", "memvault.machine", name)
        clone = Clone(name, root, hand_day())
        clone.sync()
        clones.append(clone)
    return remote, clones


# -- kill -9 during a sync ------------------------------------------------------------------

# A `memvault sync` that stops itself (SIGSTOP) right after writing step `argv[1]` to its step
# file, so the test can kill it there: a kill point that does not depend on timing.
STOPPER = """
import os, signal, sys
from memvault.sync import run
STOP, ROOT = sys.argv[1], sys.argv[2]
written = run.write_step
def write_step(gdir, step, **extra):
    written(gdir, step, **extra)
    if step == STOP:
        os.kill(os.getpid(), signal.SIGSTOP)
run.write_step = write_step
from memvault.cli import main
sys.argv = ["memvault", "--vault", ROOT, "sync"]
main()
"""


def pair(base: Path, runner: CliRunner) -> None:
    """`base/remote.git` and two synced clones, `base/clone-laptop` and `base/clone-server`, that
    name their remote by a relative path, so a copy of `base` is a world of its own."""
    _, clones = make_clones(base, ["laptop", "server"], runner)
    for clone in clones:
        git(clone.root, "remote", "set-url", "origin", "../remote.git")


def both_sides_new(base: Path, rng: random.Random, runner: CliRunner) -> tuple[Clone, Clone]:
    """The server logs and pushes; the laptop logs, remembers and hand-edits without syncing: the
    laptop's next sync commits, fetches, merges both days' logs, updates its files and pushes."""
    laptop = Clone("laptop", base / "clone-laptop", hand_day())
    server = Clone("server", base / "clone-server", hand_day())
    for n in range(3):
        server.log(n, rng, runner)
        server.hand_edit(n, 600 + n, rng)
    server.sync()
    for n in range(3):
        laptop.log(n, rng, runner)
        laptop.remember(n, rng)
        laptop.hand_edit(n, 660 + n, rng)
    return laptop, server
