"""Benchmark `check --staged` (the hook) where MV019 resolves links of unchanged files.

    python bench/synth.py /tmp/mv-100k --events 100000 --files 5000 --seed 1
    python bench/bench_staged_links.py /tmp/mv-100k

Commits the vault (if it is not a repository yet) with a MEMORY.md of 200 bullets citing one
entry each (`(source: [[day#HH:MM - Type]])`), then stages one change at a time and prints the
best of 5 in-process `check_vault(staged=True)` runs in CPU seconds (this process and its git
children: stable on a busy machine, unlike wall time), with the codes reported. Run it with
`PYTHONPATH` pointing at another checkout to compare. The vault is reset after each case.
"""

from __future__ import annotations

import re
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from memvault.check.runner import check_vault
from memvault.vault import Vault

HEAD_RE = re.compile(r"^## (\d\d:\d\d - \w+)", re.M)


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.email=b@b", "-c", "user.name=bench", *args], cwd=root,
                          check=True, capture_output=True, text=True).stdout


def cpu() -> float:
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + kids.ru_utime + kids.ru_stime


def setup(root: Path) -> list[Path]:
    if not (root / ".git").exists():
        git(root, "init", "-q")
    logs = sorted(p for p in (root / "memory").rglob("*.md"))
    lines = []
    for i, f in enumerate(logs[-400:-200]):
        heads = HEAD_RE.findall(f.read_text())
        if heads:
            lines.append(f"- Fact number {i} (added 2024-01-01) (source: [[{f.stem}#{heads[0]}]]) ^mv-{i:06d}")
    memory = root / "MEMORY.md"
    text = memory.read_text() if memory.exists() else "# Long-Term Memory\n\n## Notes\n"
    memory.write_text(text.rstrip("\n") + "\n\n## Cited\n" + "\n".join(lines) + "\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "--no-verify", "-m", "bench: cited bullets")
    return logs


def case(root: Path, label: str, change: Callable[[], None]) -> None:
    change()
    git(root, "add", "-A")
    best, codes = float("inf"), []
    for _ in range(5):
        start = cpu()
        report = check_vault(Vault.open(root), staged=True)
        best = min(best, cpu() - start)
        codes = sorted({p.code for p in report.problems})
    print(f"{label:58s} {best:.3f} s cpu  {codes}")
    git(root, "reset", "-q", "--hard")


def retime(path: Path, extra: str = "") -> Callable[[], None]:
    def change() -> None:
        text = path.read_text()
        head = HEAD_RE.findall(text)[0]
        new = head if extra else f"{head[:3]}59{head[5:]}"
        path.write_text(text.replace(f"## {head}\n", f"## {new}\n{extra}", 1))
    return change


def main() -> None:
    root = Path(sys.argv[1])
    logs = setup(root)
    newest, cited, linked = logs[-1], logs[-300], logs[len(logs) // 2]
    case(root, "entry appended to the newest log",
         lambda: newest.write_text(newest.read_text() + "\n## 23:30 - Observation\nNoch ein Eintrag am Abend\n"))
    case(root, "entry re-timed in a day nothing cites", retime(linked))
    case(root, "cited entry's text edited (MEMORY.md: 200 cited bullets)", retime(cited, "Ergänzt: ein Satz.\n"))
    case(root, "cited entry re-timed (MV019 expected)", retime(cited))
    git(root, "reset", "-q", "--hard", "HEAD~1")


if __name__ == "__main__":
    main()
