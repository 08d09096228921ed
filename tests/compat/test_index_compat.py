"""The real SqliteSessionStore uses the index rows praisonmem leaves: routes and search follow a rename, a deleted
session is neither found nor re-added, and the library finds nothing to repair."""

from __future__ import annotations

import os

from tests.compat.conftest import last_json, run_library

USE_INDEX = """
    import json, os, sys
    from praisonaiagents.session import SqliteSessionStore
    sessions = sys.argv[1]
    store = SqliteSessionStore(session_dir=sessions)
    routed = store.get_by_gateway_session("slack:C42")
    hits = {q: sorted(h.session_id for h in store.search(q, limit=20)) for q in ("indexed", "refund", "era")}
    by_agent = store.list_sessions_by_gateway_agent("slackbot")
    print(json.dumps({"routed": routed.session_id if routed else None, "hits": hits, "by_agent": by_agent,
                      "quarantined": sorted(n for n in os.listdir(sessions) if "corrupt" in n or "repair" in n)}))
"""


def test_the_library_routes_and_searches_a_renamed_session_by_praisonmems_rows(cli, gateway_home):
    assert cli("--home", gateway_home.home, "session", "rename", "bot_slack_7", "bot_slack_8", "--force").exit_code == 0
    found = last_json(run_library(USE_INDEX, str(gateway_home.sessions), home=gateway_home.home))
    assert found["routed"] == "bot_slack_8" and found["by_agent"] == ["bot_slack_8"]
    assert found["hits"]["indexed"] == ["bot_slack_8"]
    assert found["quarantined"] == []


def test_after_a_delete_the_library_finds_nothing_of_it_and_everything_else(cli, gateway_home):
    for sid in ("bot_slack_7", "gw-legacy"):  # gw-legacy's JSON file (sessions.db has a copy, not indexed)
        assert cli("--home", gateway_home.home, "session", "delete", sid, "--store", "json", "--yes").exit_code == 0
    found = last_json(run_library(USE_INDEX, str(gateway_home.sessions), home=gateway_home.home))
    assert found["routed"] is None and found["by_agent"] == []
    assert found["hits"]["indexed"] == [] and found["hits"]["era"] == []
    assert found["hits"]["refund"] == ["bot_telegram_42", "db5b5fab", "tui0001a"]
    assert found["quarantined"] == []
    assert not any(name.endswith(".corrupt") for name in os.listdir(gateway_home.sessions))
