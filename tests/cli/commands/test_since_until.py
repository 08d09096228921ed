"""``--since`` and ``--until`` on session list, search, export and prune and on usage: a duration back from now
(7d, 12h, 2w, 30m), a UTC day or an ISO date-time, read by the one parser; a bad value is one usage error, exit 2,
nothing printed or changed."""

from __future__ import annotations

import json
import os
import time
from datetime import datetime, timezone

import pytest

from praisonmem.core.errors import UsageError
from praisonmem.core.io.timeutil import Window, parse_when, window
from tests.conftest import PRAISONAI_FIXTURES
from tests.helpers import snapshot

HOUR = 3600
DAY = 86400
AGES = {"fresh": 2 * HOUR, "last-week": 3 * DAY, "old": 20 * DAY}  # how long ago each was last updated


def iso(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, timezone.utc).isoformat()


@pytest.fixture
def home(tmp_path):
    """A home of three sessions last updated 2 hours, 3 days and 20 days ago, each saying 'invoice'."""
    home = tmp_path / "home"
    (home / "sessions").mkdir(parents=True)
    template = json.loads((PRAISONAI_FIXTURES / "home" / "sessions" / "my_chat.json").read_text(encoding="utf-8"))
    now = time.time()
    for sid, age in AGES.items():
        doc = {**template, "session_id": sid, "created_at": iso(now - age - 60), "updated_at": iso(now - age)}
        doc["messages"] = [{"role": "user", "content": f"the invoice of {sid}", "timestamp": now - age}]
        (home / "sessions" / f"{sid}.json").write_text(json.dumps(doc), encoding="utf-8")
    return home


def listed(cli, home, *args: str) -> list[str]:
    result = cli("--home", home, "session", "list", "--format", "tsv", "--columns", "id", *args)
    assert result.exit_code == 0 and result.stderr == "", result.stderr
    return result.stdout.splitlines()[1:]


@pytest.mark.parametrize("args, ids", [
    ([], ["fresh", "last-week", "old"]),
    (["--since", "1d"], ["fresh"]),
    (["--since", "7d"], ["fresh", "last-week"]),
    (["--since", "1w", "--until", "1d"], ["last-week"]),
    (["--until", "2w"], ["old"]),
    (["--since", "90m"], []),
    (["--since", "1d12h"], ["fresh"]),
    (["--since", "2000-01-01", "--until", "2000-01-02"], []),
])
def test_list_keeps_the_sessions_updated_in_the_window(cli, home, args, ids):
    assert listed(cli, home, *args) == ids


def test_a_day_and_a_date_time_are_utc(cli, home):
    stamp = json.loads((home / "sessions" / "last-week.json").read_text(encoding="utf-8"))["updated_at"]
    day = stamp[:10]
    assert "last-week" in listed(cli, home, "--since", day, "--until", day)  # --until's day is included
    assert listed(cli, home, "--since", stamp) == ["fresh", "last-week"]  # at or after
    assert "last-week" not in listed(cli, home, "--until", stamp)  # before


def test_search_finds_only_in_the_window(cli, home):
    rows = cli("--home", home, "session", "search", "invoice", "--since", "7d", "--json").json()
    assert sorted(r["session_id"] for r in rows) == ["fresh", "last-week"]
    rows = cli("--home", home, "session", "search", "invoice", "--until", "7d", "--json").json()
    assert [r["session_id"] for r in rows] == ["old"]


def test_export_picks_from_every_session_or_the_named_ones(cli, home):
    out = cli("--home", home, "session", "export", "--since", "7d")
    assert out.exit_code == 0
    assert sorted(s["session_id"] for s in json.loads(out.stdout)["sessions"]) == ["fresh", "last-week"]
    out = cli("--home", home, "session", "export", "old", "fresh", "--until", "1d")
    assert [s["session_id"] for s in json.loads(out.stdout)["sessions"]] == ["old"]
    out = cli("--home", home, "session", "export", "--all", "--since", "1d")
    assert [s["session_id"] for s in json.loads(out.stdout)["sessions"]] == ["fresh"]


def test_prune_deletes_only_the_window(cli, home):
    before = snapshot(home)
    dry = cli("--home", home, "session", "prune", "--since", "1w", "--until", "1d", "--dry-run")
    assert (dry.exit_code, dry.stdout) == (0, "would delete last-week (last-week.json)\n")
    assert snapshot(home) == before
    done = cli("--home", home, "session", "prune", "--since", "1w", "--until", "1d", "--yes")
    assert done.exit_code == 0 and done.stdout.startswith("deleted last-week")
    assert sorted(p.name for p in (home / "sessions").glob("*.json")) == ["fresh.json", "old.json"]
    nothing = cli("--home", home, "session", "prune", "--since", "1w", "--until", "1d", "--yes")
    assert (nothing.exit_code, nothing.stdout) == (0, "")
    assert "nothing since 1w and before 1d to prune" in nothing.stderr
    older = cli("--home", home, "session", "prune", "--until", "2w", "--dry-run")
    assert older.stdout == "would delete old (old.json)\n"


def test_usage_counts_only_the_window(cli, home):
    assert cli("--home", home, "usage", "--json").json()["totals"]["sessions"] == 3
    assert cli("--home", home, "usage", "--since", "7d", "--json").json()["totals"]["sessions"] == 2
    assert cli("--home", home, "usage", "--since", "1w", "--until", "12h", "--json").json()["totals"]["sessions"] == 1


FORMS = "a duration back from now (7d, 12h, 2w, 30m) or a date (YYYY-MM-DD, UTC, or an ISO date-time)"


@pytest.mark.parametrize("command", [["session", "list"], ["session", "search", "invoice"],
                                     ["session", "export", "--all"], ["session", "prune", "--yes"], ["usage"]])
@pytest.mark.parametrize("args, message", [
    (["--since", "yesterday"], f"--since must be {FORMS}, got 'yesterday'"),
    (["--until", "7x"], f"--until must be {FORMS}, got '7x'"),
    (["--since", ""], f"--since must be {FORMS}, got ''"),
    (["--since", "2026-02-30"], f"--since must be {FORMS}, got '2026-02-30'"),
    (["--since", "1d", "--until", "7d"], "--since 1d is not before --until 7d"),
])
def test_a_bad_value_is_one_line_exit_2_nothing_changed(cli, home, command, args, message):
    before = snapshot(home)
    result = cli("--home", home, *command, *args)
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", f"praisonmem: error: {message}\n")
    assert snapshot(home) == before


@pytest.mark.parametrize("args, message", [
    ([], "give --older-than DURATION, or --since/--until, to say which sessions to prune"),
    (["--older-than", "30d", "--until", "7d"], "give --older-than or --until, not both (--until 30d is "
                                               "--older-than 30d)"),
    (["--older-than", "30d", "--since", "7d"], "--since 7d is not before --older-than 30d"),
])
def test_prune_needs_one_upper_bound(cli, home, args, message):
    before = snapshot(home)
    result = cli("--home", home, "session", "prune", "--yes", *args)
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", f"praisonmem: error: {message}\n")
    assert snapshot(home) == before


def test_the_parser_itself():
    now = 1_800_000_000.0
    assert parse_when("7d", "--since", now=now) == now - 7 * DAY
    assert parse_when("12h", "--since", now=now) == now - 12 * HOUR
    assert parse_when("2w", "--since", now=now) == now - 14 * DAY
    assert parse_when("30m", "--since", now=now) == now - 1800
    assert parse_when(" 1D12H ", "--since", now=now) == now - 36 * HOUR
    assert parse_when("2026-11-30", "--since") == datetime(2026, 11, 30, tzinfo=timezone.utc).timestamp()
    assert parse_when("2026-11-30", "--until", end=True) == datetime(2026, 12, 1, tzinfo=timezone.utc).timestamp()
    assert parse_when("2026-11-30T10:00+01:00", "--since") == datetime(2026, 11, 30, 9, tzinfo=timezone.utc).timestamp()
    assert window(None, None) is None
    span = window("2d", "1d", now=now)
    assert span == Window(now - 2 * DAY, now - DAY)
    assert span.holds(iso(now - 1.5 * DAY)) and span.holds(now - 2 * DAY) and not span.holds(now - DAY)
    assert not span.holds(None) and not span.holds("not a date")
    with pytest.raises(UsageError):
        parse_when("-7d", "--since")


def test_search_in_a_window_is_the_same_with_the_search_index_warm(cli, home, tmp_path, monkeypatch):
    """The index's records know no session's time: a search with --since/--until over a warm index finds what
    it finds without the cache."""
    monkeypatch.setenv("PRAISONMEM_CACHE_DIR", str(tmp_path / "cache"))
    from praisonmem.core.io import cache

    real = cache.now_ns  # files seen as settled (the clock 10 s ahead): the index keeps no record of one just written
    monkeypatch.setattr(cache, "now_ns", lambda: real() + 10_000_000_000)
    for _ in range(2):  # the index built, then used
        assert cli("--home", home, "session", "search", "invoice", "--json").exit_code == 0
    assert any((tmp_path / "cache").rglob("*")), "the index was written"
    for window in (["--since", "7d"], ["--until", "7d"]):
        warm = cli("--home", home, "session", "search", "invoice", *window, "--json")
        cold = cli("--home", home, "--no-cache", "session", "search", "invoice", *window, "--json")
        assert (warm.exit_code, warm.stdout) == (cold.exit_code, cold.stdout)
    rows = cli("--home", home, "session", "search", "invoice", "--until", "7d", "--json").json()
    assert [r["session_id"] for r in rows] == ["old"]
