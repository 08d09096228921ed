"""Grouping and the choice of one copy per session id."""

from __future__ import annotations

import pytest

from praisonmem.core.errors import UsageError
from praisonmem.core.usage import SessionUsage, parse_date
from praisonmem.core.usage.report import GroupBy, _once_per_id, period_of


def copy(store, when, tokens=None):
    return SessionUsage(store=store, session_id="s", when=when, model=None, agent=None, user=None, turns=1,
                        total_tokens=tokens)


def test_one_copy_per_id_prefers_recorded_usage_then_the_latest_write_then_the_json_file():
    older_with, newer_without = copy("json", 10.0, 50), copy("sessions.db", 20.0)
    assert _once_per_id([older_with, newer_without]) == ([older_with], 1)
    old, new = copy("json", 10.0, 50), copy("sessions.db", 20.0, 70)
    assert _once_per_id([old, new]) == ([new], 1)
    a, b = copy("sessions.db", 10.0, 5), copy("json", 10.0, 6)
    assert _once_per_id([a, b]) == ([b], 1)
    assert _once_per_id([b, a]) == ([b], 1)


def test_periods_are_utc_days_iso_weeks_and_months():
    stamp = parse_date("2027-01-01T23:30:00-01:00", "--since")  # 2027-01-02 00:30 UTC, ISO week 2026-W53
    assert [period_of(stamp, by) for by in (GroupBy.day, GroupBy.week, GroupBy.month)] == \
        ["2027-01-02", "2026-W53", "2027-01"]
    assert period_of(None, GroupBy.day) is None and period_of(1e20, GroupBy.day) is None


def test_a_day_until_includes_the_whole_day():
    assert parse_date("2026-11-30", "--until", end=True) - parse_date("2026-11-30", "--since") == 86400
    with pytest.raises(UsageError, match="--until must be a duration back from now"):
        parse_date("30/11/2026", "--until")
