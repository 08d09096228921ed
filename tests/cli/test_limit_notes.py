"""--json and --ndjson never truncate silently: when --limit cut the rows, stderr says
"showing N of M", as it does under a table; with everything shown it says nothing."""

from __future__ import annotations

import json

import pytest


def all_rows(cli, *args: str) -> list:
    result = cli(*args, "--limit", "0", "--json")
    assert result.exit_code == 0 and result.stderr == "", result.stderr
    return result.json()


@pytest.mark.parametrize("form", ["--json", "--ndjson", None])
def test_session_list_says_how_many_the_limit_left_out(cli, fixture_home, form):
    total = sum(1 for r in all_rows(cli, "--home", fixture_home, "session", "list") if not r["unreadable"])
    assert total > 3
    result = cli("--home", fixture_home, "session", "list", "--limit", "3", *([form] if form else []))
    assert result.exit_code == 0
    assert result.stderr == f"praisonmem: showing 3 of {total} sessions; --limit 0 shows all\n"
    if form == "--json":
        assert sum(1 for r in result.json() if not r["unreadable"]) == 3
    elif form == "--ndjson":
        assert sum(1 for line in result.stdout.splitlines() if not json.loads(line)["unreadable"]) == 3


@pytest.mark.parametrize("form", ["--json", "--ndjson", None])
def test_session_search_says_how_many_hits_the_limit_left_out(cli, fixture_home, form):
    total = len(all_rows(cli, "--home", fixture_home, "session", "search", "the"))
    assert total > 1
    result = cli("--home", fixture_home, "session", "search", "the", "--limit", "1", *([form] if form else []))
    assert result.exit_code == 0
    assert result.stderr.endswith(f"praisonmem: showing 1 of {total} hits; --limit 0 shows all\n")
    assert result.stderr.count("showing") == 1


@pytest.mark.parametrize("form", ["--json", "--ndjson", None])
def test_upsonic_sessions_says_how_many_the_limit_left_out(cli, db, form):
    assert len(all_rows(cli, "upsonic", "sessions", "--db", db)) == 4
    result = cli("upsonic", "sessions", "--db", db, "--limit", "2", *([form] if form else []))
    assert (result.exit_code, result.stderr) == (0, "praisonmem: showing 2 of 4 sessions; --limit 0 shows all\n")
    if form == "--json":
        assert [r["session_id"] for r in result.json()] == ["session_002", "session_001"]


@pytest.mark.parametrize("args", [["session", "list"], ["session", "search", "the"]])
def test_nothing_is_said_when_nothing_was_left_out(cli, fixture_home, args):
    result = cli("--home", fixture_home, *args, "--limit", "0", "--ndjson")
    assert result.exit_code == 0
    assert "showing" not in result.stderr


def test_a_limit_of_exactly_the_count_says_nothing(cli, db):
    result = cli("upsonic", "sessions", "--db", db, "--limit", "4", "--json")
    assert (result.exit_code, result.stderr) == (0, "")
