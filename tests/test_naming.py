"""How daily-log paths are dated and keyed (memvault.entries.naming)."""

from datetime import date

import pytest

from memvault.entries.naming import log_name, name_day


@pytest.mark.parametrize(
    ("path", "day", "key", "canonical", "archive"),
    [
        ("memory/2026-02-01.md", date(2026, 2, 1), "2026-02-01", True, False),
        ("memory/2026/2026-02-01.md", date(2026, 2, 1), "2026-02-01", True, False),
        ("memory/2026/02/2026-02-01.md", date(2026, 2, 1), "2026-02-01", True, False),
        ("memory/2025/02/2026-02-01.md", date(2026, 2, 1), "2025/02/2026-02-01", False, False),
        ("memory/2026-01-26-fologram-research.md", date(2026, 1, 26), "2026-01-26-fologram-research", False, False),
        ("memory/2026-02-05_incident.md", date(2026, 2, 5), "2026-02-05_incident", False, False),
        ("memory/archive/2026-01-15.md", date(2026, 1, 15), "archive/2026-01-15", False, True),
        ("memory/projects/ideas.md", None, "projects/ideas", False, False),
        ("memory/Notizen über Dinge.md", None, "Notizen über Dinge", False, False),
        ("memory/2026-02-30.md", None, "2026-02-30", False, False),
        ("AGENTS.md", None, "AGENTS.md", False, False),
        ("memory/AGENTS.md", None, "AGENTS", False, False),
    ],
)
def test_log_name(path: str, day: date | None, key: str, canonical: bool, archive: bool) -> None:
    got = log_name(path)
    assert (got.day, got.key, got.canonical, got.archive) == (day, key, canonical, archive)


def test_name_day_needs_ascii_digits_and_a_separator() -> None:
    assert name_day("2026-02-01.md") == date(2026, 2, 1)
    assert name_day("2026-02-01topic.md") is None
    assert name_day("２０２６-02-01.md") is None
