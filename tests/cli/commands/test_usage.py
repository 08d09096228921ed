"""`praisonmem usage`: the fixture homes' recorded usage, grouped, totalled, and printed four ways."""

from __future__ import annotations

import json

import pytest

from tests.helpers import snapshot

# history_* (five) and my_chat, support/ticket #1234 ... : what praisonaiagents 1.7.17 recorded in the fixture
FIXTURE_TOKENS = {"compacted-demo": 1380, "history_fea3173a": 36, "history_8fe938c0": 18, "history_ccc5e5d4": 18,
                  "history_d465a9b7": 18, "my_chat": 18, "support/ticket #1234": 18}
FIXTURE_COST = {"compacted-demo": 0.0021, "history_fea3173a": 1.2e-05} | {
    k: 6e-06 for k in ("history_8fe938c0", "history_ccc5e5d4", "history_d465a9b7", "my_chat", "support/ticket #1234")}
WITHOUT = {"531bcd72-9714-4bca-8431-340003ceed28", "7ca18a8d-7365-46f5-9df9-26d536f25633", "café-日本",
           "history_ec9d38c8", "interrupted-stream"}


def test_by_session_gives_each_recorded_figure_and_counts_the_rest_as_without_usage(cli, fixture_home):
    result = cli("--home", fixture_home, "usage", "--by", "session", "--json")
    assert result.exit_code == 0 and result.stderr == ""
    report = result.json()
    rows = {r["session"]: r for r in report["rows"]}
    assert {k: r["total_tokens"] for k, r in rows.items() if r["total_tokens"] is not None} == FIXTURE_TOKENS
    assert {k: r["cost"] for k, r in rows.items() if r["cost"] is not None} == pytest.approx(FIXTURE_COST)
    assert {k for k, r in rows.items() if r["sessions_without_usage"]} == WITHOUT
    assert report["totals"] == {"sessions": 12, "sessions_without_usage": 5, "turns": 18, "prompt_tokens": None,
                                "completion_tokens": None, "total_tokens": sum(FIXTURE_TOKENS.values()),
                                "cost": pytest.approx(sum(FIXTURE_COST.values()))}
    assert [r["session"] for r in report["rows"]][:2] == ["compacted-demo", "history_fea3173a"]  # most tokens first


def test_by_day_is_a_tsv_table_with_a_totals_row_when_piped(cli, fixture_home):
    result = cli("--home", fixture_home, "usage")
    assert result.exit_code == 0
    assert result.stdout == ("DAY\tSESSIONS\tNO USAGE\tTURNS\tPROMPT\tCOMPLETION\tTOTAL\tCOST\n"
                             "2026-11-30\t12\t5\t18\t\t\t1506\t0.002142\n"
                             "TOTAL\t12\t5\t18\t\t\t1506\t0.002142\n")
    assert result.stderr == "praisonmem: 12 sessions, 5 without usage (nothing recorded)\n"


def test_csv_has_a_header_and_one_line_per_group(cli, fixture_home):
    result = cli("--home", fixture_home, "usage", "--by", "model", "--csv")
    assert result.exit_code == 0
    assert result.stdout == ("model,sessions,sessions_without_usage,turns,prompt_tokens,completion_tokens,"
                             "total_tokens,cost\n"
                             "gpt-4o-mini,9,2,15,,,1506,0.002142\n"
                             ",3,3,3,,,,\n")


def test_a_terminal_gets_a_bar_per_period(cli, fixture_home, monkeypatch):
    from praisonmem.cli import output

    monkeypatch.setattr(output, "stdout_is_tty", lambda: True)
    result = cli("--home", fixture_home, "--no-color", "usage", "--by", "month")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert "tokens per month" in lines
    bar = lines[lines.index("tokens per month") + 1]
    assert bar.startswith("2026-11 ") and "█" in bar and bar.rstrip().endswith("1,506")
    assert any(line.startswith("TOTAL") and "1,506" in line for line in lines)


def test_since_and_until_select_by_the_last_write(cli, gateway_home):
    home = gateway_home.home
    days = {r["day"]: r for r in cli("--home", home, "usage", "--json").json()["rows"]}
    assert sorted(days) == ["2026-11-28", "2026-11-29", "2026-11-30"]
    only = cli("--home", home, "usage", "--since", "2026-11-29", "--until", "2026-11-29", "--json").json()
    assert [r["day"] for r in only["rows"]] == ["2026-11-29"]
    assert only["totals"]["total_tokens"] == days["2026-11-29"]["total_tokens"]
    after = cli("--home", home, "usage", "--since", "2026-11-29T00:00:00+00:00", "--json").json()
    assert [r["day"] for r in after["rows"]] == ["2026-11-29", "2026-11-30"]


def test_until_a_day_takes_that_whole_utc_day_and_not_a_moment_after(cli, tmp_path):
    """``--until 2026-11-30`` keeps a session last written at 23:59:59.999999 that day and leaves out one written
    at midnight after it; ``--since`` the same day keeps its first moment."""
    sessions = tmp_path / "home" / "sessions"
    sessions.mkdir(parents=True)
    written = {"day-before": "2026-11-29T23:59:59.999999+00:00", "first-moment": "2026-11-30T00:00:00+00:00",
               "last-moment": "2026-11-30T23:59:59.999999+00:00", "midnight-after": "2026-12-01T00:00:00+00:00",
               "an-hour-behind": "2026-11-30T23:30:00-01:00"}  # 00:30 UTC on the 1st
    for sid, when in written.items():
        doc = {"session_id": sid, "messages": [{"role": "user", "content": "hi"}], "created_at": when,
               "updated_at": when, "metadata": {"total_tokens": 10}}
        (sessions / f"{sid}.json").write_text(json.dumps(doc), encoding="utf-8")
    home = ("--home", tmp_path / "home", "usage", "--by", "session", "--json")
    day = cli(*home, "--since", "2026-11-30", "--until", "2026-11-30")
    assert day.exit_code == 0, day.stderr
    assert sorted(r["session"] for r in day.json()["rows"]) == ["first-moment", "last-moment"]
    until = cli(*home, "--until", "2026-11-30").json()
    assert sorted(r["session"] for r in until["rows"]) == ["day-before", "first-moment", "last-moment"]
    moment = cli(*home, "--until", "2026-12-01T00:00:00+00:00").json()  # a date-time: before it, not at it
    assert sorted(r["session"] for r in moment["rows"]) == ["day-before", "first-moment", "last-moment"]


def test_a_session_both_stores_hold_counts_once(cli, gateway_home):
    report = cli("--home", gateway_home.home, "usage", "--by", "session", "--json").json()
    keys = [r["session"] for r in report["rows"]]
    assert len(keys) == len(set(keys))
    assert report["copies_counted_once"] == 5 and report["stores"] == ["json", "sessions.db", "project:8ccfb8a2",
                                                                       "unified", "legacy-run"]
    db_only = cli("--home", gateway_home.home, "usage", "--store", "sessions.db", "--by", "session", "--json").json()
    assert db_only["copies_counted_once"] == 0 and {r["store"] for r in db_only["rows"]} == {"sessions.db"}
    assert len(db_only["rows"]) > len([r for r in report["rows"] if r["store"] == "sessions.db"])
    both = cli("--home", gateway_home.home, "usage", "--store", "sessions.db", "--store", "json", "--store", "json",
               "--store", "unified", "--store", "project:8ccfb8a2", "--store", "legacy-run", "--by", "session",
               "--json").json()
    assert both["rows"] == report["rows"] and both["totals"] == report["totals"]
    assert both["copies_counted_once"] == 5 and both["stores"] == ["sessions.db", "json", "unified",
                                                                   "project:8ccfb8a2", "legacy-run"]


def test_an_upsonic_database_reports_its_usage_column(cli, fixture_home, db):
    report = cli("--home", fixture_home, "usage", "--store", db, "--by", "session", "--json").json()
    rows = {r["session"]: r for r in report["rows"]}
    assert rows["session_001"] == {"session": "session_001", "store": f"upsonic:{db}", "sessions": 1,
                                   "sessions_without_usage": 0, "turns": 2, "prompt_tokens": 300,
                                   "completion_tokens": 84, "total_tokens": 384, "cost": None}
    assert (rows["session_002"]["prompt_tokens"], rows["session_002"]["completion_tokens"]) == (150, 42)
    assert {k for k, r in rows.items() if r["sessions_without_usage"]} == {"session_003", "session_004"}
    assert report["totals"]["total_tokens"] == 300 + 84 + 150 + 42 and report["stores"] == [f"upsonic:{db}"]


def test_the_configured_upsonic_db_joins_the_home_by_default(cli, fixture_home, db, config):
    config.write_text(f'[upsonic]\ndb = "{db}"\n')
    report = cli("--home", fixture_home, "usage", "--json").json()
    assert report["stores"] == ["json", "unified", "legacy-run", f"upsonic:{db}"]  # the home's stores (two empty)
    assert report["totals"]["total_tokens"] == sum(FIXTURE_TOKENS.values()) + 576


def test_unreadable_sessions_are_said_and_left_out(cli, fixture_home):
    (fixture_home / "sessions" / "broken.json").write_bytes(b'{"session_id": "broken", "messages": [')
    result = cli("--home", fixture_home, "usage", "--json")
    assert result.exit_code == 0
    assert result.stderr.startswith("praisonmem: warning: skipped unreadable session ")
    assert "broken.json" in result.stderr and len(result.stderr.splitlines()) == 1
    assert result.json()["totals"]["sessions"] == 12 and len(result.json()["unreadable"]) == 1


@pytest.mark.parametrize("args, code, message", [
    (["--since", "2026-13-01"], 2, "--since must be a duration back from now (7d, 12h, 2w, 30m) or a date (YYYY-MM-DD, UTC, "
                                   "or an ISO date-time), got '2026-13-01'"),
    (["--until", "yesterday"], 2, "--until must be a duration back from now (7d, 12h, 2w, 30m) or a date (YYYY-MM-DD, UTC, "
                                 "or an ISO date-time), got 'yesterday'"),
    (["--since", "2026-12-01", "--until", "2026-11-30"], 2, "--since 2026-12-01 is not before --until 2026-11-30"),
    (["--store", "nowhere.db"], 3, "--store nowhere.db: neither a store of the home (json) nor an Upsonic database "
                                   "file"),
    (["--store", "sessions.db"], 3, None),
])
def test_bad_inputs_get_one_line_and_their_exit_code(cli, fixture_home, args, code, message):
    before = snapshot(fixture_home)
    result = cli("--home", fixture_home, "usage", *args)
    assert result.exit_code == code and result.stdout == ""
    assert len(result.stderr.splitlines()) == 1 and result.stderr.startswith("praisonmem: error: ")
    if message:
        assert result.stderr == f"praisonmem: error: {message}\n"
    assert snapshot(fixture_home) == before


def test_bad_by_is_a_usage_error(cli, fixture_home):
    result = cli("--home", fixture_home, "usage", "--by", "year")
    assert result.exit_code == 2 and len(result.stderr.splitlines()) == 1 and result.stdout == ""
    assert "'--by'" in result.stderr and "'year' is not one of 'day', 'week', 'month'" in result.stderr


def test_json_gets_its_error_as_json(cli, fixture_home):
    result = cli("--home", fixture_home, "usage", "--since", "x", "--json")
    assert result.exit_code == 2 and json.loads(result.stderr)["error"]["code"] == "usage"
    both = cli("--home", fixture_home, "usage", "--csv", "--json")
    assert both.exit_code == 2 and both.stdout == ""
    assert json.loads(both.stderr)["error"]["message"] == "conflicting output formats: --json and --csv (give one)"


def test_a_conversation_store_reports_the_usage_its_sessions_recorded(cli, fixture_home, tmp_path):
    """usage works on PraisonAI's SQL conversation store too: the sessions migrated there report what they did in
    the JSON files, and a session in both counts once."""
    db = tmp_path / "conv.db"
    assert cli("--home", fixture_home, "session", "migrate", "--from", "json", "--to", f"sqlite:///{db}",
               "--all").exit_code == 0
    files = cli("--home", fixture_home, "usage", "--store", "json", "--by", "month", "--json").json()
    sql = cli("--home", fixture_home, "usage", "--store", f"sqlite:///{db}", "--by", "month", "--json").json()
    assert sql["totals"] == files["totals"] and sql["totals"]["total_tokens"] == sum(FIXTURE_TOKENS.values())
    assert sql["sessions_without_usage"] == files["sessions_without_usage"]
    both = cli("--home", fixture_home, "usage", "--store", "json", "--store", str(db), "--json").json()
    assert both["totals"] == files["totals"] and both["copies_counted_once"] == files["totals"]["sessions"]
