import sys

if sys.argv[1:2] == ["merge-driver"] and len(sys.argv) == 6:
    # git runs the merge driver once per file both sides changed: skip loading the CLI (docs/sync.md)
    from pathlib import Path

    from memvault.sync.driver import run_for_git

    base, ours, theirs, path = sys.argv[2:6]
    sys.exit(run_for_git(Path(base), Path(ours), Path(theirs), path))

from memvault.cli import main  # noqa: E402 - after the fast path above

main()
