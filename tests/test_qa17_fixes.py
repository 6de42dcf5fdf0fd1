"""Issue 17's QA findings (qa17), each with the test that failed before its fix: ingest's
re-runs and corrections, context's view of ingested user statements, `--with` timeouts, the
MemoryBlock export of stale bullets, `log --supersedes ""`.

CLI through CliRunner, the vault's state read back through the library, real scripts for `--with`.
"""

from __future__ import annotations

import os
import shlex
import sys
import time
from pathlib import Path

from memvault.cli import cli
from memvault.vault import Vault
from tests.conftest import DATA

HERE = DATA / "ingest"
AT = "2026-02-20 18:00"


def make_vault(root: Path, log: str | None = None, day: str = "2026-02-10") -> Path:
    (root / "memory").mkdir(parents=True, exist_ok=True)
    (root / "memvault.toml").write_text('[vault]\ntimezone = "Europe/Berlin"\n')
    if log:
        (root / "memory" / f"{day}.md").write_text(log)
    return root


def ingest(runner, *args: str, input: str | None = None):
    return runner.invoke(cli, ["ingest", *args], input=input, catch_exceptions=False)


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and ".memvault" not in p.parts}


def live(root: Path) -> list[str]:
    with Vault.open(root) as v:
        return [e.content for e in v.timeline.live() if e.kind == "log"]


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return stat.rsplit(")", 1)[1].split()[0] != "Z"  # a zombie is dead, only not yet reaped


# ------------------------------------------------------------------ #8: --with timeout kills the group


def test_a_timed_out_with_command_takes_its_children_with_it(vault_dir, runner, tmp_path):
    make_vault(vault_dir)
    pidfile = tmp_path / "child.pid"
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(HERE / 'hang_wrapper.py'))} {shlex.quote(str(pidfile))}"
    result = ingest(runner, str(HERE / "protocol_example.txt"), "--with", command, "--timeout", "0.5")
    assert result.exit_code == 1 and "did not answer within 0.5s" in result.output
    pid = int(pidfile.read_text())
    deadline = time.monotonic() + 5
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(pid)
