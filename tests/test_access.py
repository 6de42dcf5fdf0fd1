from datetime import UTC, datetime, timedelta

from memvault.search import access


def test_counts_accumulate_and_keep_latest_time(vault_dir):
    t0 = datetime(2026, 2, 21, 9, 0, tzinfo=UTC)
    access.record(vault_dir, ["a", "b"], at=t0)
    access.record(vault_dir, ["a", "a"], at=t0 + timedelta(hours=1))
    access.record(vault_dir, ["a"], at=t0 - timedelta(hours=5))  # late writer keeps the max time
    got = access.stats(vault_dir)
    assert got["a"].count == 3
    assert got["a"].last_accessed == t0 + timedelta(hours=1)
    assert got["b"].count == 1
    assert access.stats(vault_dir, ["b", "zzz"]).keys() == {"b"}


def test_no_state_means_no_counts(vault_dir):
    assert access.stats(vault_dir) == {}
    assert not (vault_dir / ".memvault").exists()
