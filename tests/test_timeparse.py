from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from memvault.entries.timeparse import parse_time
from memvault.errors import InputError

TZ = ZoneInfo("Europe/Berlin")
NOW = datetime(2026, 2, 21, 15, 30, tzinfo=TZ)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("2026-02-21 09:15", datetime(2026, 2, 21, 9, 15, tzinfo=TZ)),
        ("2026-02-21T09:15:00Z", datetime(2026, 2, 21, 10, 15, tzinfo=TZ)),
        ("2026-02-21T09:15+00:00", datetime(2026, 2, 21, 10, 15, tzinfo=TZ)),
        ("2026-02-21", datetime(2026, 2, 21, tzinfo=TZ)),
        ("yesterday 9am", datetime(2026, 2, 20, 9, tzinfo=TZ)),
        ("Yesterday  9:30 PM", datetime(2026, 2, 20, 21, 30, tzinfo=TZ)),
        ("today noon", datetime(2026, 2, 21, 12, tzinfo=TZ)),
        ("14:30", datetime(2026, 2, 21, 14, 30, tzinfo=TZ)),
        ("3 days ago", NOW - timedelta(days=3)),
        ("90 min ago", NOW - timedelta(minutes=90)),
        ("2 weeks ago", NOW - timedelta(weeks=2)),
        ("now", NOW),
    ],
)
def test_accepted_forms(text, expected):
    assert parse_time(text, TZ, NOW) == expected


def test_plain_date_means_end_of_day_for_until():
    got = parse_time("2026-02-21", TZ, NOW, day_end=True)
    assert got == datetime(2026, 2, 22, tzinfo=TZ) - timedelta(microseconds=1)
    assert parse_time("yesterday", TZ, NOW, day_end=True).date().isoformat() == "2026-02-20"


@pytest.mark.parametrize("text", ["", "next blursday", "25:00", "2026-02-30", "13pm", "yesterday at lunch"])
def test_bad_input_says_what_is_accepted(text):
    with pytest.raises(InputError):
        parse_time(text, TZ, NOW)


def test_days_ago_takes_a_time_of_day_like_yesterday_does():
    # `log --at "3 days ago 14:30"` was refused while "yesterday 16:00" worked.
    tz = ZoneInfo("Europe/Berlin")
    now = datetime(2026, 3, 30, 1, 30, tzinfo=tz)  # the night DST started: 72 h ago is another clock
    assert parse_time("3 days ago 14:30", tz, now) == datetime(2026, 3, 27, 14, 30, tzinfo=tz)
    assert parse_time("2 weeks ago at 9am", tz, now) == datetime(2026, 3, 16, 9, tzinfo=tz)
    assert parse_time("1 day ago noon", tz, now) == parse_time("yesterday noon", tz, now)
    with pytest.raises(InputError, match="time of day"):
        parse_time("3 days ago at lunch", tz, now)
