"""gitio: memvault's one way to talk to git (`run`) and to clear the locks a killed git leaves (`locks`).

Only `memvault/gitio/run.py` starts git processes (tests/test_architecture.py checks it);
every other module calls git through the names below.
"""

from memvault.errors import GitError
from memvault.gitio.blobs import read_batch
from memvault.gitio.run import (
    FALLBACK_IDENTITY,
    NOT_INSTALLED,
    GitProcess,
    GitResult,
    decode,
    encode,
    fallback_identity,
    git_env,
    not_in_repository,
    run_git,
)

__all__ = [
    "FALLBACK_IDENTITY",
    "NOT_INSTALLED",
    "GitError",
    "GitProcess",
    "GitResult",
    "decode",
    "encode",
    "fallback_identity",
    "git_env",
    "not_in_repository",
    "read_batch",
    "run_git",
]
