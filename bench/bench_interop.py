"""agent-memory/0.1 export and import on a large vault (issue 17), beside their floors.

    python bench/bench_interop.py /tmp/mv-100k [--no-fsync]

Copies the vault's Markdown (never its .memvault) to a temp folder, then times, in process:

- the floor: parsing the vault (Vault.open + its timeline), what any export must read;
- `export`: a fresh Vault, parsed, every entry written to a file;
- the floor of import: reading that file (amfile.parse);
- `import` of the file into an empty vault (one atomic rewrite per day file, fsync each;
  `--no-fsync` leaves out the disk's share);
- importing it again (idempotent: every entry found, nothing written);
- the export of the new vault, which must equal the first (lossless round trip at scale);
- the whole `memvault export` process.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from memvault.interop import agent_memory as am
from memvault.interop import amfile
from memvault.vault import Vault


def timed(label: str, fn, floor: float | None = None):  # noqa: ANN001, ANN201 (a bench script)
    t0 = time.perf_counter()
    value = fn()
    took = time.perf_counter() - t0
    extra = f"   ({took / floor:.1f}x the floor)" if floor else ""
    print(f"{label:<44} {took:8.2f} s{extra}", flush=True)
    return value, took


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("vault", type=Path)
    ap.add_argument("--no-fsync", action="store_true", help="imports skip fsync (the write path without the disk)")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="mv-bench-interop-"))
    try:
        src, dst, out = tmp / "src", tmp / "dst", tmp / "export.jsonl"
        src.mkdir()
        for name in ("memory", "MEMORY.md", "memvault.toml"):
            if (args.vault / name).is_dir():
                shutil.copytree(args.vault / name, src / name)
            elif (args.vault / name).exists():
                shutil.copy2(args.vault / name, src / name)
        (_, parse) = timed("floor: parse the vault", lambda: len(Vault.open(src).timeline.events))
        summary, _ = timed("export (parse + write the file)",
                           lambda: am.export_file(Vault.open(src), None, out), parse)
        print(f"  {summary['entries']} entries, {summary['tombstones']} tombstones, "
              f"{out.stat().st_size / 1e6:.1f} MB")
        _, read = timed("floor: read the file (amfile.parse)", lambda: amfile.parse(out.read_text(), "export"))
        (dst / "memory").mkdir(parents=True)
        shutil.copy2(src / "memvault.toml", dst / "memvault.toml")
        if args.no_fsync:
            os.fsync = lambda fd: None
        res, _ = timed("import into an empty vault", lambda: am.import_file(Vault.open(dst), out), read)
        print(f"  {len(res.written)} entries written to {len(res.files)} day files")
        again, _ = timed("import again (nothing to write)", lambda: am.import_file(Vault.open(dst), out), read)
        assert again.written == [] and not again.forgotten, "a second import wrote something"
        second, _ = timed("export the imported vault", lambda: am.export_text(Vault.open(dst)), parse)
        first = out.read_text().split("\n")[1:]
        print(f"  round trip lossless: {second.split(chr(10))[1:] == first}")
        exe = Path(sys.executable).with_name("memvault")
        timed("memvault export (whole process)", lambda: subprocess.run(
            [str(exe), "--vault", str(src), "export", "--format", "agent-memory", "-o", str(tmp / "p.jsonl")],
            check=True, capture_output=True), parse)
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
