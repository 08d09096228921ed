"""Deleting a session removes its text from every file of the real 4.7.19 home: every store holding a copy (the JSON
files, sessions.db, the praisonai CLI's stores) and the search indexes beside them, found by grepping the raw bytes
of the whole home (sidecars included) for the planted tokens the fixture's manifest places."""

from __future__ import annotations

from tests.indexstate import holding
from tests.realhomes import HOME_4719, manifest

RUN = "run_20261128_110000_ec9910"
TOKENS = manifest(HOME_4719)["planted_tokens"]
# each planted token's session, in every store that holds a copy of it
HOLDERS = {
    "PLANTED-TOKEN-TELEGRAM": [("bot_telegram_42", "json"), ("bot_telegram_42", "sessions.db")],
    "PLANTED-TOKEN-JSONONLY": [("bot_telegram_42", "json")],
    "PLANTED-TOKEN-UNIFIED": [("tui0001a", "unified"), ("tui0001a", "sessions.db")],
    "PLANTED-TOKEN-PROJECT": [("proj-sess-1", "project:8ccfb8a2")],
    "PLANTED-TOKEN-SLACK": [("bot_slack_7", "json")],
    "PLANTED-TOKEN-LEGACY": [(RUN, "legacy-run")],
    "PLANTED-TOKEN-DBONLY": [("gw-1", "sessions.db")],
    "PLANTED-TOKEN-AGENTDB": [("agent-chat-1", "sessions.db")],
    "PLANTED-TOKEN-STALE": [("gw-legacy", "json"), ("gw-legacy", "sessions.db")],
}


def test_every_planted_token_is_where_the_manifest_says(gateway_home):
    assert set(HOLDERS) == {t for t, entry in TOKENS.items() if entry["files"]}
    for token, entry in TOKENS.items():
        assert holding(gateway_home.home, token.encode()) == entry["files"], token


def test_deleting_each_copy_leaves_no_byte_of_it_in_any_file(cli, gateway_home):
    deleted = sorted({holder for holders in HOLDERS.values() for holder in holders})
    for sid, store in deleted:
        result = cli("--home", gateway_home.home, "session", "delete", sid, "--store", store, "--yes", "--force",
                     "--json")
        assert result.exit_code == 0, (sid, store, result.stderr)
        assert [(c["action"], c["session_id"]) for c in result.json()] == [("deleted", sid)]
    for token in HOLDERS:
        assert holding(gateway_home.home, token.encode()) == [], token
    listed = cli("--home", gateway_home.home, "session", "list", "--json").json()
    assert sorted((r["session_id"], r["store"]) for r in listed) == [
        ("db5b5fab", "sessions.db"), ("db5b5fab", "unified"), ("enc-1", "json"), ("enc-db-1", "sessions.db"),
        ("tui0002b", "sessions.db"), ("tui0002b", "unified")]
    assert cli("--home", gateway_home.home, "check", "--json").json()["ok"] is True
