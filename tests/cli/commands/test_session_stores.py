"""Every session command on a gateway home written by the real libraries: the JSON files and sessions.db.

The fixture (tests/fixtures/praisonai-4.7.19-home) holds sessions.db after its one-time import of the JSON
files, then db-only sessions and turns, and JSON written afterwards; its manifest says which pairs are
equal or diverged and where each planted token's bytes are.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from tests.helpers import snapshot
from tests.realhomes import HOME_4719, expected

EXPECTED = expected(HOME_4719)
JSON_IDS = {"bot_slack_7", "bot_telegram_42", "enc-1", "gw-legacy"}
# the REPL/TUI's files in sessions/: the library's JSON store reads them too, praisonmem lists them as theirs
UNIFIED_IDS = {"db5b5fab", "tui0001a", "tui0002b"}
CLI_ROWS = {("proj-sess-1", "project:8ccfb8a2"), ("run_20261128_110000_ec9910", "legacy-run")}
DB_IDS = set(EXPECTED["sqlite_transcript_store"]["session_ids"])
PAIRS = EXPECTED["json_db_pairs"]


def file_store(sid: str) -> str:
    """The store of the file in sessions/ the library's JSON store reads as ``sid``."""
    return "unified" if sid in UNIFIED_IDS else "json"


def rows_of(cli, gh, *args):
    result = cli("--home", gh.home, "session", "list", "--limit", "0", "--json", *args)
    assert result.exit_code == 0, result.stderr
    return result.json()


def db_row(gh, sid: str) -> tuple | None:
    conn = sqlite3.connect(f"file:{gh.db}?mode=ro&immutable=1", uri=True)
    try:
        return conn.execute("SELECT session_id, data, agent_name, gateway_session_id, agent_id, updated_at "
                            "FROM sessions WHERE session_id = ?", (sid,)).fetchone()
    finally:
        conn.close()


def files_holding(root: Path, token: str) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and token.encode() in p.read_bytes())


# ---------------------------------------------------------------- list


def test_list_shows_every_session_once_per_store(cli, gateway_home):
    rows = rows_of(cli, gateway_home)
    assert sorted((r["session_id"], r["store"]) for r in rows) == sorted(
        [(sid, "json") for sid in JSON_IDS] + [(sid, "unified") for sid in UNIFIED_IDS]
        + [(sid, "sessions.db") for sid in DB_IDS] + list(CLI_ROWS))
    assert not any(r["unreadable"] for r in rows)
    db = str(gateway_home.db)
    assert {r["file"] for r in rows if r["store"] == "sessions.db"} == {db}
    for store, ids in (("json", JSON_IDS), ("unified", UNIFIED_IDS)):
        assert {r["file"] for r in rows if r["store"] == store} == {str(gateway_home.sessions / f"{s}.json")
                                                                    for s in ids}


def test_list_marks_each_pair_equal_or_diverged_and_the_overtaken_copy_stale(cli, gateway_home):
    rows = {(r["session_id"], r["store"]): r for r in rows_of(cli, gateway_home)}
    for sid, kind in PAIRS.items():
        for store, other in ((file_store(sid), "sessions.db"), ("sessions.db", file_store(sid))):
            row = rows.get((sid, store))
            if row is None:
                assert kind == ("db-only" if store == file_store(sid) else "json-only")
                continue
            marks = (row["paired_with"], row["pair"])
            assert marks == (([other], kind) if kind in ("equal", "diverged") else ([], None)), (sid, store)
    stale = sorted(k for k, r in rows.items() if r["stale"])
    # bot_telegram_42's JSON got a turn after the import; gw-legacy's row did: the other copy is behind
    assert stale == [("bot_telegram_42", "sessions.db"), ("gw-legacy", "json")]


def test_list_counts_as_the_library_lists_each_store(cli, gateway_home):
    rows = {(r["session_id"], r["store"]): r for r in rows_of(cli, gateway_home)}
    json_listed = EXPECTED["default_session_store"]["list_sessions"]
    # the library's JSON store lists the REPL/TUI's files too; praisonmem lists them as the unified store's, with
    # the TUI's own fields (tests/cli/commands/test_cli_stores.py)
    assert {lib["session_id"] for lib in json_listed} == JSON_IDS | UNIFIED_IDS
    for store, library in (("sessions.db", EXPECTED["sqlite_transcript_store"]["list_sessions"]),
                           ("json", [lib for lib in json_listed if lib["session_id"] in JSON_IDS])):
        for lib in library:
            row = rows[(lib["session_id"], store)]
            for key in ("agent_name", "created_at", "updated_at", "message_count", "model", "total_tokens", "cost",
                        "source", "parent_id"):
                assert row[key] == lib[key], (lib["session_id"], store, key)
            if lib["session_id"] != "gw-1":
                assert row["agent_id"] == lib["agent_id"]
    gateway = rows[("gw-1", "sessions.db")]
    # the gateway's chat, not its two system snapshots (the same number here), and its agent from them
    assert (gateway["message_count"], gateway["agent_id"]) == (2, "support")


def test_list_human_output_has_the_store_and_pair_columns(cli, gateway_home):
    lines = cli("--home", gateway_home.home, "session", "list", "--limit", "0").stdout.splitlines()
    header = lines[0].split("\t")
    assert header[-2:] == ["STORE", "PAIR"]
    cells = {(c[0], c[-2]): c[-1] for c in (line.split("\t") for line in lines[1:])}
    assert cells[("gw-legacy", "json")] == "STALE: sessions.db newer"
    assert cells[("gw-legacy", "sessions.db")] == "differs from json"
    assert cells[("tui0001a", "unified")] == "same as sessions.db"
    assert cells[("tui0001a", "sessions.db")] == "same as unified"
    assert cells[("gw-1", "sessions.db")] == ""


def test_list_store_narrows_to_one_store(cli, gateway_home):
    assert {r["session_id"] for r in rows_of(cli, gateway_home, "--store", "sessions.db")} == DB_IDS
    json_rows = rows_of(cli, gateway_home, "--store", "json")
    assert {r["session_id"] for r in json_rows} == JSON_IDS
    assert all(r["pair"] is None for r in json_rows)  # the other store is not read


def test_an_unknown_or_missing_store_is_refused(cli, gateway_home, tmp_path):
    bad = cli("--home", gateway_home.home, "session", "list", "--store", "db")
    assert (bad.exit_code, bad.stderr) == (2, "praisonmem: error: unknown store 'db'; this home has: json, "
                                              "sessions.db, project:8ccfb8a2, unified, legacy-run\n")
    home = tmp_path / "plain"
    (home / "sessions").mkdir(parents=True)
    missing = cli("--home", home, "session", "list", "--store", "sessions.db")
    assert missing.exit_code == 3 and f"no sessions.db in {home / 'sessions'}" in missing.stderr


# ---------------------------------------------------------------- show and search


def test_show_finds_a_database_only_session_and_its_gateway_chat(cli, gateway_home):
    result = cli("--home", gateway_home.home, "session", "show", "gw-1")
    assert result.exit_code == 0, result.stderr
    out = result.stdout
    assert "\nStore     sessions.db\n" in out
    assert "Messages  2 chat messages in 2 gateway snapshots, 0 archived\n" in out
    assert "#g0 user · " in out and "[gateway chat from web-1]\nWhere is refund 2002? PLANTED-TOKEN-DBONLY\n" in out
    assert "#g1 assistant · " in out and "[gateway chat from support]\nRefund 2002 was sent today.\n" in out
    stored = cli("--home", gateway_home.home, "session", "show", "gw-1", "--json").stdout
    assert stored == db_row(gateway_home, "gw-1")[1] + "\n"  # the row's data as stored


def test_show_tail_json_lists_the_gateway_turns(cli, gateway_home):
    turns = cli("--home", gateway_home.home, "session", "show", "gw-1", "--tail", "2", "--json").json()
    assert [(t["section"], t["index"], t["role"], t["sender"]) for t in turns] == [
        ("gateway", 0, "user", "web-1"), ("gateway", 1, "assistant", "support")]
    assert turns[0]["content"] == "Where is refund 2002? PLANTED-TOKEN-DBONLY"


def test_a_session_both_stores_hold_is_ambiguous_until_store_picks_one(cli, gateway_home):
    for args in (["show", "gw-legacy"], ["rename", "gw-legacy", "--title", "x"], ["delete", "gw-legacy", "--yes"],
                 ["export", "gw-legacy"]):
        before = snapshot(gateway_home.home)
        result = cli("--home", gateway_home.home, "session", *args)
        assert result.exit_code == 2, (args, result.stderr)
        assert result.stderr == (
            f"praisonmem: error: 'gw-legacy' is in several stores: json (gw-legacy.json), sessions.db "
            f"({gateway_home.db}); give --store json or --store sessions.db\n")
        assert snapshot(gateway_home.home) == before


def test_show_of_a_stale_copy_says_so(cli, gateway_home):
    stale = cli("--home", gateway_home.home, "session", "show", "gw-legacy", "--store", "json")
    assert "\nCopies    STALE: sessions.db holds a newer, different copy\n" in stale.stdout
    assert stale.stderr == ("praisonmem: warning: this copy (json) is stale: sessions.db holds a newer, different "
                            "copy of the session\n")
    as_json = cli("--home", gateway_home.home, "session", "show", "gw-legacy", "--store", "json", "--json")
    assert json.loads(as_json.stdout)["session_id"] == "gw-legacy" and "is stale" in as_json.stderr
    newer = cli("--home", gateway_home.home, "session", "show", "gw-legacy", "--store", "sessions.db")
    assert "\nCopies    json holds a different, older copy\n" in newer.stdout and newer.stderr == ""
    assert "second turn, db only PLANTED-TOKEN-STALE" in newer.stdout
    equal = cli("--home", gateway_home.home, "session", "show", "tui0001a", "--store", "sessions.db")
    assert "\nCopies    unified holds the same session\n" in equal.stdout


def test_search_finds_text_that_exists_only_in_the_database(cli, gateway_home):
    hits = cli("--home", gateway_home.home, "session", "search", "PLANTED-TOKEN-DBONLY", "--json").json()
    assert [(h["session_id"], h["store"], h["section"], h["index"], h["role"]) for h in hits] == [
        ("gw-1", "sessions.db", "gateway", 0, "user")]
    assert hits[0]["file"] == str(gateway_home.db)
    agent = cli("--home", gateway_home.home, "session", "search", "PLANTED-TOKEN-AGENTDB", "--json").json()
    assert [(h["session_id"], h["store"], h["section"]) for h in agent] == [("agent-chat-1", "sessions.db", "active")]
    stale = cli("--home", gateway_home.home, "session", "search", "PLANTED-TOKEN-STALE", "--json").json()
    assert [(h["session_id"], h["store"]) for h in stale] == [("gw-legacy", "sessions.db")]
    telegram = cli("--home", gateway_home.home, "session", "search", "PLANTED-TOKEN-TELEGRAM", "--json").json()
    assert sorted(h["store"] for h in telegram) == ["json", "sessions.db"]


def test_search_store_narrows_it(cli, gateway_home):
    hits = cli("--home", gateway_home.home, "session", "search", "refund", "--store", "json", "--json").json()
    assert hits and {h["store"] for h in hits} == {"json"}


# ---------------------------------------------------------------- export and import


def test_export_of_a_database_session_is_its_stored_document(cli, gateway_home, tmp_path):
    out = tmp_path / "gw.json"
    result = cli("--home", gateway_home.home, "session", "export", "gw-1", "-o", out)
    assert result.exit_code == 0, result.stderr
    payload = json.loads(out.read_text(encoding="utf-8"))
    assert payload["sessions"] == [json.loads(db_row(gateway_home, "gw-1")[1])]
    everything = json.loads(cli("--home", gateway_home.home, "session", "export", "--all").stdout)
    assert sorted(d["session_id"] for d in everything["sessions"]) == sorted(
        list(JSON_IDS) + list(UNIFIED_IDS) + list(DB_IDS) + [sid for sid, _ in CLI_ROWS])
    only_db = json.loads(cli("--home", gateway_home.home, "session", "export", "--all", "--store",
                             "sessions.db").stdout)
    assert sorted(d["session_id"] for d in only_db["sessions"]) == sorted(DB_IDS)


def test_a_markdown_export_of_a_gateway_session_holds_its_chat(cli, gateway_home):
    text = cli("--home", gateway_home.home, "session", "export", "gw-1", "--format", "markdown").stdout
    assert "### #1 system · 2026-11-29 09:00:00 UTC\n\nSession closed\n" in text
    assert "### gateway #g0 user (web-1) · 2026-11-29 09:00:00 UTC\n\nWhere is refund 2002? PLANTED-TOKEN-DBONLY\n" in text
    assert "### gateway #g1 assistant (support)" in text


def test_import_into_the_database_writes_the_librarys_row(cli, gateway_home, tmp_path):
    doc = {"session_id": "imported-1", "messages": [{"role": "user", "content": "é ✓ imported", "timestamp": 1.5,
                                                     "metadata": {}}],
           "created_at": "2026-11-30T00:00:00+00:00", "updated_at": "2026-11-30T00:00:01+00:00",
           "agent_name": "Importer", "user_id": None, "metadata": {}, "gateway_session_id": "gw-9",
           "agent_id": "imp", "runtime_state": {}, "archived_messages": []}
    src = tmp_path / "in.json"
    src.write_text(json.dumps({"version": 1, "sessions": [doc]}), encoding="utf-8")
    result = cli("--home", gateway_home.home, "session", "import", src, "--store", "sessions.db", "--json")
    assert result.exit_code == 0, result.stderr
    assert [c["action"] for c in result.json()] == ["imported"]
    assert db_row(gateway_home, "imported-1") == ("imported-1", json.dumps(doc, ensure_ascii=False), "Importer",
                                                  "gw-9", "imp", "2026-11-30T00:00:01+00:00")
    assert not (gateway_home.sessions / "imported-1.json").exists()
    again = cli("--home", gateway_home.home, "session", "import", src, "--store", "sessions.db")
    assert again.exit_code == 4 and "1 session already exists (sessions.db:imported-1)" in again.stderr


# ---------------------------------------------------------------- retitle, rename


def test_retitle_of_a_database_session_writes_data_then_the_columns(cli, gateway_home):
    before = json.loads(db_row(gateway_home, "agent-chat-1")[1])
    result = cli("--home", gateway_home.home, "session", "rename", "agent-chat-1", "--title", "  Cancelled ✓ ")
    assert (result.exit_code, result.stdout) == (0, "set the title of 'agent-chat-1' to 'Cancelled ✓'\n"), result.stderr
    sid, data, agent_name, gateway_id, agent_id, updated = db_row(gateway_home, "agent-chat-1")
    doc = json.loads(data)
    assert data == json.dumps(doc, ensure_ascii=False)  # the library's serialisation, raw UTF-8
    assert list(doc) == list(before)  # the library's key order kept
    assert doc["metadata"]["title"] == "Cancelled ✓" and doc["updated_at"] > before["updated_at"]
    assert {k: v for k, v in doc.items() if k not in ("metadata", "updated_at")} == \
        {k: v for k, v in before.items() if k not in ("metadata", "updated_at")}
    assert (agent_name, gateway_id, agent_id, updated) == ("Billing Bot", "gw-1", "billing", doc["updated_at"])
    assert not (gateway_home.sessions / "agent-chat-1.json").exists()


def test_rename_of_a_database_session_moves_the_row_in_one_transaction(cli, gateway_home):
    before = json.loads(db_row(gateway_home, "agent-chat-1")[1])
    result = cli("--home", gateway_home.home, "session", "rename", "agent-chat-1", "billing-chat", "--force",
                 "--json")
    assert result.exit_code == 0, result.stderr
    [change] = result.json()
    assert (change["action"], change["session_id"], change["new_session_id"], change["file"], change["target"]) == (
        "renamed", "agent-chat-1", "billing-chat", str(gateway_home.db), str(gateway_home.db))
    assert db_row(gateway_home, "agent-chat-1") is None
    sid, data, *_ = db_row(gateway_home, "billing-chat")
    assert data == json.dumps({**before, "session_id": "billing-chat"}, ensure_ascii=False)


def test_rename_onto_an_existing_database_session_is_refused(cli, gateway_home):
    before = snapshot(gateway_home.home)
    result = cli("--home", gateway_home.home, "session", "rename", "agent-chat-1", "gw-1", "--force")
    assert (result.exit_code, result.stderr) == (4, "praisonmem: error: cannot rename to 'gw-1': session 'gw-1' in "
                                                    f"{gateway_home.db} already exists\n")
    assert snapshot(gateway_home.home) == before


def test_a_database_session_written_in_the_last_minute_is_refused_without_force(cli, gateway_home):
    from datetime import datetime, timezone

    conn = sqlite3.connect(gateway_home.db, isolation_level=None)
    doc = json.loads(conn.execute("SELECT data FROM sessions WHERE session_id = 'gw-1'").fetchone()[0])
    doc["updated_at"] = datetime.now(timezone.utc).isoformat()
    conn.execute("UPDATE sessions SET data = ?, updated_at = ? WHERE session_id = 'gw-1'",
                 (json.dumps(doc, ensure_ascii=False), doc["updated_at"]))
    conn.close()
    result = cli("--home", gateway_home.home, "session", "delete", "gw-1", "--yes")
    assert result.exit_code == 4 and "an agent may still be writing it" in result.stderr
    assert db_row(gateway_home, "gw-1") is not None


# ---------------------------------------------------------------- delete and prune


@pytest.mark.parametrize("sid, token", [("gw-1", "PLANTED-TOKEN-DBONLY"), ("agent-chat-1", "PLANTED-TOKEN-AGENTDB")])
def test_deleting_a_database_session_leaves_its_text_in_no_file(cli, gateway_home, sid, token):
    where = gateway_home.manifest["planted_tokens"][token]["files"]
    assert files_holding(gateway_home.home, token) == where == ["sessions/sessions.db"]
    result = cli("--home", gateway_home.home, "session", "delete", sid, "--yes", "--json")
    assert result.exit_code == 0, result.stderr
    assert [(c["action"], c["session_id"], c["file"], c["detail"]) for c in result.json()] == [
        ("deleted", sid, str(gateway_home.db), None)]
    assert files_holding(gateway_home.home, token) == []
    assert db_row(gateway_home, sid) is None
    conn = sqlite3.connect(f"file:{gateway_home.db}?mode=ro&immutable=1", uri=True)
    assert conn.execute("PRAGMA quick_check").fetchone() == ("ok",)
    assert {r[0] for r in conn.execute("SELECT session_id FROM sessions")} == DB_IDS - {sid}


def test_a_delete_beside_an_idle_library_connection_still_leaves_no_text(cli, gateway_home):
    from tests.sqlitestate import live_wal

    with live_wal(gateway_home.db, "UPDATE sessions SET updated_at = updated_at WHERE session_id = ?", "tui0001a"):
        result = cli("--home", gateway_home.home, "session", "delete", "gw-1", "--yes", "--json")
        assert result.exit_code == 0, result.stderr
        assert result.json()[0]["detail"] is None  # the checkpoint went through
        # the gateway's connection is still open: -wal and -shm stay, emptied of the session
        assert Path(f"{gateway_home.db}-wal").exists()
        assert files_holding(gateway_home.home, "PLANTED-TOKEN-DBONLY") == []


def test_deleting_the_stale_copy_in_the_database_keeps_the_json_one(cli, gateway_home):
    result = cli("--home", gateway_home.home, "session", "delete", "gw-legacy", "--store", "sessions.db", "--yes")
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "deleted gw-legacy (sessions.db)\n"
    assert files_holding(gateway_home.home, "PLANTED-TOKEN-STALE") == []
    assert (gateway_home.sessions / "gw-legacy.json").is_file()


def test_old_versions_left_in_free_pages_by_a_writer_without_secure_delete_are_gone_too(cli, gateway_home):
    conn = sqlite3.connect(gateway_home.db, isolation_level=None)
    conn.execute("PRAGMA secure_delete=OFF")  # as SQLite builds without SQLITE_SECURE_DELETE write
    doc = json.loads(conn.execute("SELECT data FROM sessions WHERE session_id = 'gw-legacy'").fetchone()[0])
    for content in ("OLD-VERSION " + "x" * 20000, "short now"):  # a long turn, then edited down (a REPLACE)
        doc["messages"][-1]["content"] = content
        conn.execute("INSERT OR REPLACE INTO sessions (session_id, data) VALUES ('gw-legacy', ?)",
                     (json.dumps(doc, ensure_ascii=False),))
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    assert b"OLD-VERSION" in gateway_home.db.read_bytes()  # in free pages: the row holds "short now"
    result = cli("--home", gateway_home.home, "session", "delete", "gw-legacy", "--store", "sessions.db", "--yes")
    assert result.exit_code == 0, result.stderr
    assert files_holding(gateway_home.home, "OLD-VERSION") == []


def test_a_reader_that_stops_the_checkpoint_is_reported(cli, gateway_home):
    import subprocess
    import sys

    reader = subprocess.Popen([sys.executable, "-c", (
        "import sqlite3, sys\n"
        "c = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
        "c.execute('BEGIN'); c.execute('SELECT count(*) FROM sessions').fetchone()\n"
        "print('reading', flush=True); sys.stdin.read()\n"), str(gateway_home.db)], stdin=subprocess.PIPE,
        stdout=subprocess.PIPE, text=True)
    try:
        assert reader.stdout.readline().strip() == "reading"
        result = cli("--home", gateway_home.home, "--lock-timeout", "1", "session", "delete", "gw-1", "--yes",
                     "--json")
        assert Path(f"{gateway_home.db}-wal").stat().st_size > 0  # the delete is committed, in -wal
        held = files_holding(gateway_home.home, "PLANTED-TOKEN-DBONLY")
    finally:
        reader.stdin.close()
        reader.wait(timeout=30)
    assert result.exit_code == 0, result.stderr
    [change] = result.json()
    assert change["action"] == "deleted"
    assert change["detail"] == ("another process was reading sessions.db, so sessions.db and its -wal keep older "
                                "copies of the session's text until the next checkpoint (the library checkpoints as "
                                "it writes and when it exits)")
    assert held == ["sessions/sessions.db"]  # the reader's snapshot: pages it may still read are kept
    # the reader closed last: it checkpointed, and the zeroed and vacuumed pages went into the database
    assert files_holding(gateway_home.home, "PLANTED-TOKEN-DBONLY") == []
    assert db_row(gateway_home, "gw-1") is None


def test_the_last_database_session_is_not_deleted_while_json_files_lie_beside_it(cli, gateway_home):
    conn = sqlite3.connect(gateway_home.db, isolation_level=None)
    conn.execute("DELETE FROM sessions WHERE session_id != 'gw-1'")
    conn.close()
    before = snapshot(gateway_home.home)
    for flag in ("--dry-run", "--yes"):
        result = cli("--home", gateway_home.home, "session", "delete", "gw-1", flag)
        assert (result.exit_code, result.stdout) == (4, "")
        assert result.stderr == (
            f"praisonmem: error: {gateway_home.db}: 'gw-1' is the last session in sessions.db: with it gone the "
            "gateway would import all 7 JSON session files beside it again on its next start (its one-time import "
            "runs whenever the table is empty); nothing deleted\n")
        assert snapshot(gateway_home.home) == before


def test_an_empty_table_gets_no_first_row_while_json_files_lie_beside_it(cli, gateway_home, tmp_path):
    conn = sqlite3.connect(gateway_home.db, isolation_level=None)
    conn.execute("DELETE FROM sessions")
    conn.close()
    src = tmp_path / "one.json"
    src.write_text(json.dumps({"session_id": "new-1", "messages": []}), encoding="utf-8")
    before = snapshot(gateway_home.home)
    result = cli("--home", gateway_home.home, "session", "import", src, "--store", "sessions.db")
    assert result.exit_code == 4 and "a row written now would stop that import for good" in result.stderr
    assert snapshot(gateway_home.home) == before


def test_prune_reaches_database_sessions_and_keeps_per_store(cli, gateway_home):
    dry = cli("--home", gateway_home.home, "session", "prune", "--older-than", "1d", "--store", "sessions.db",
              "--keep", "2", "--dry-run", "--json")
    assert dry.exit_code == 0, dry.stderr
    kept = {"enc-db-1", "gw-legacy"}  # the two newest rows
    assert sorted(c["session_id"] for c in dry.json()) == sorted(DB_IDS - kept)
    assert {c["file"] for c in dry.json()} == {str(gateway_home.db)}
    both = cli("--home", gateway_home.home, "session", "prune", "--older-than", "1d", "--keep", "1", "--dry-run",
               "--json").json()
    assert {c["file"] for c in both if c["session_id"] == "gw-legacy"} == {str(gateway_home.db),
                                                                         str(gateway_home.sessions / "gw-legacy.json")}


def test_prune_never_empties_the_database_while_json_files_lie_beside_it(cli, gateway_home):
    before = snapshot(gateway_home.home)
    result = cli("--home", gateway_home.home, "session", "prune", "--older-than", "1d", "--store", "sessions.db",
                 "--yes")
    assert (result.exit_code, result.stdout) == (4, "")
    assert result.stderr.endswith(f"{len(DB_IDS)} sessions are all the sessions in sessions.db: with them gone the "
                                  "gateway would import all 7 JSON session files beside it again on its next start "
                                  "(its one-time import runs whenever the table is empty); nothing deleted "
                                  "(--keep 1 keeps the newest)\n")
    assert snapshot(gateway_home.home) == before
    kept = cli("--home", gateway_home.home, "session", "prune", "--older-than", "1d", "--store", "sessions.db",
               "--keep", "1", "--yes", "--json")
    assert kept.exit_code == 0, kept.stderr
    assert [c["action"] for c in kept.json()] == ["deleted"] * (len(DB_IDS) - 1)
    conn = sqlite3.connect(f"file:{gateway_home.db}?mode=ro&immutable=1", uri=True)
    assert conn.execute("SELECT session_id FROM sessions").fetchall() == [("enc-db-1",)]


# ---------------------------------------------------------------- check, and sessions.db that cannot be read


def findings(cli, gh, *paths):
    result = cli("--home", gh.home, "check", "--json", *paths)
    return result, result.json()["findings"]


def test_check_says_which_json_sessions_the_gateway_does_not_see(cli, gateway_home):
    result, found = findings(cli, gateway_home)
    missing = [f for f in found if f["code"] == "sessions_db.missing_json"]
    assert missing == [{"severity": "info", "file": str(gateway_home.db), "code": "sessions_db.missing_json",
                        "message": "2 JSON sessions the gateway does not see (bot_slack_7, enc-1): sessions.db "
                                   "holds sessions, so its one-time import of the JSON files will not run again; "
                                   "import them with 'praisonmem migrate'",
                        "fix": f"praisonmem --home {gateway_home.home} migrate"}]
    # the database's rows are checked like files (the unified rows keep their ISO-string timestamps)
    assert {f["file"] for f in found if f["file"].startswith(f"{gateway_home.db}:")} == {
        f"{gateway_home.db}:{sid}" for sid in ("db5b5fab", "tui0001a", "tui0002b", "enc-db-1")}
    # ... and an encrypted row is known as one (its encrypted tool calls and metadata are no damage)
    assert [(f["severity"], f["code"]) for f in found if f["file"] == f"{gateway_home.db}:enc-db-1"] == [
        ("info", "session.encrypted")]


def test_check_of_the_database_alone(cli, gateway_home):
    result, found = findings(cli, gateway_home, gateway_home.db)
    assert result.json()["files_checked"] == 1
    assert [f["code"] for f in found].count("sessions_db.missing_json") == 1


def corrupt(db: Path) -> None:
    raw = bytearray(db.read_bytes())
    raw[4096 * 2: 4096 * 2 + 64] = b"\xff" * 64  # a b-tree page's header
    db.write_bytes(bytes(raw))


def test_a_damaged_database_is_reported_never_repaired(cli, gateway_home):
    corrupt(gateway_home.db)
    before = snapshot(gateway_home.home)
    result, found = findings(cli, gateway_home)
    assert result.exit_code == 1
    [damage] = [f for f in found if f["code"] in ("sessions_db.integrity", "sessions_db.unreadable")]
    assert damage["severity"] == "error" and damage["file"] == str(gateway_home.db)
    listed = cli("--home", gateway_home.home, "session", "list", "--limit", "0", "--json")
    rows = listed.json()
    assert listed.exit_code == 0
    assert {r["session_id"] for r in rows if r["store"] == "json"} == JSON_IDS  # the JSON files still listed
    assert snapshot(gateway_home.home) == before  # no quarantine copy, no repair ledger, no rebuilt file


def test_a_database_without_the_table_is_unreadable_and_never_written(cli, gateway_home, tmp_path):
    gateway_home.db.unlink()
    conn = sqlite3.connect(gateway_home.db)
    conn.execute("CREATE TABLE other (x)")
    conn.close()
    rows = cli("--home", gateway_home.home, "session", "list", "--json").json()
    [bad] = [r for r in rows if r["store"] == "sessions.db"]
    assert (bad["unreadable"], bad["file"], bad["error"]) == (
        True, str(gateway_home.db), "no 'sessions' table, so not a transcript store the gateway wrote; nothing changed")
    src = tmp_path / "one.json"
    src.write_text(json.dumps({"session_id": "new-1", "messages": []}), encoding="utf-8")
    before = snapshot(gateway_home.home)
    result = cli("--home", gateway_home.home, "session", "import", src, "--store", "sessions.db")
    assert result.exit_code == 4 and "no 'sessions' table" in result.stderr
    assert snapshot(gateway_home.home) == before


# ---------------------------------------------------------------- plan_db_import (praisonmem migrate's finder)


def test_plan_db_import_imports_the_json_sessions_the_database_lacks(gateway_home):
    from praisonmem.core.paths import resolve
    from praisonmem.core.sessions import library_form, plan_db_import

    paths = resolve(gateway_home.home, env={})
    plan = plan_db_import(paths)
    assert (plan.question, plan.notes) == (None, [])
    dry = plan.run(dry_run=True)
    assert [(c.action.value, c.target, c.where, c.dry_run) for c in dry.changes] == [
        ("imported", "bot_slack_7", "bot_slack_7.json → sessions.db", True),
        ("imported", "enc-1", "enc-1.json → sessions.db", True)]
    assert db_row(gateway_home, "bot_slack_7") is None
    done = plan.run()
    assert done.exit_code == 0 and [c.action.value for c in done.changes] == ["imported", "imported"]
    for sid in ("bot_slack_7", "enc-1"):
        file_doc = json.loads((gateway_home.sessions / f"{sid}.json").read_text(encoding="utf-8"))
        row = db_row(gateway_home, sid)
        normal = library_form(file_doc)
        assert row == (sid, json.dumps(normal, ensure_ascii=False), normal["agent_name"],
                       normal["gateway_session_id"], normal["agent_id"], file_doc["updated_at"])
    assert plan_db_import(paths) is None  # nothing left to import


def test_plan_db_import_has_nothing_to_do_without_a_populated_database(gateway_home, tmp_path):
    from praisonmem.core.paths import resolve
    from praisonmem.core.sessions import plan_db_import

    paths = resolve(gateway_home.home, env={})
    conn = sqlite3.connect(gateway_home.db, isolation_level=None)
    conn.execute("DELETE FROM sessions")
    conn.close()
    assert plan_db_import(paths) is None  # the gateway imports them itself on its next start
    gateway_home.db.unlink()
    assert plan_db_import(paths) is None
    assert plan_db_import(resolve(tmp_path / "nothing", env={})) is None


def test_a_database_too_large_to_vacuum_safely_is_not_vacuumed_and_the_change_says_so(cli, gateway_home,
                                                                                        monkeypatch):
    from praisonmem.core.sessions.stores import sqlite_transcript

    monkeypatch.setattr(sqlite_transcript, "VACUUM_LIMIT", 4096)
    before = gateway_home.db.stat().st_size
    result = cli("--home", gateway_home.home, "session", "delete", "gw-1", "--yes", "--json")
    assert result.exit_code == 0, result.stderr
    assert result.json()[0]["detail"] == ("sessions.db is 0 MiB, too large to vacuum while an agent may be waiting "
                                          "for it: free pages may still hold text the library wrote without secure "
                                          "delete")
    assert gateway_home.db.stat().st_size == before  # not rewritten
    assert files_holding(gateway_home.home, "PLANTED-TOKEN-DBONLY") == []  # secure_delete zeroed the row itself


def test_check_of_an_empty_database_says_the_gateway_will_import_the_json_files(cli, gateway_home):
    conn = sqlite3.connect(gateway_home.db, isolation_level=None)
    conn.execute("DELETE FROM sessions")
    conn.close()
    _, found = findings(cli, gateway_home, gateway_home.db)
    assert [(f["severity"], f["code"], f["message"]) for f in found] == [
        ("info", "sessions_db.import_pending", "no sessions yet: the gateway imports the 7 JSON files beside it on "
                                               "its next start")]


def test_check_reports_a_row_whose_columns_or_key_disagree_with_its_document(cli, gateway_home):
    conn = sqlite3.connect(gateway_home.db, isolation_level=None)
    conn.execute("UPDATE sessions SET agent_id = 'someone-else' WHERE session_id = 'agent-chat-1'")
    conn.execute("UPDATE sessions SET data = replace(data, '\"session_id\": \"gw-1\"', '\"session_id\": \"gw-9\"') "
                 "WHERE session_id = 'gw-1'")
    conn.execute("UPDATE sessions SET data = '{not json' WHERE session_id = 'gw-legacy'")
    conn.close()
    _, found = findings(cli, gateway_home, gateway_home.db)
    got = {(f["file"].rsplit(":", 1)[-1], f["code"]) for f in found if f["file"] != str(gateway_home.db)}
    assert {("agent-chat-1", "sessions_db.columns"), ("gw-1", "sessions_db.key"), ("gw-legacy", "parse")} <= got
    [bad] = [f for f in found if f["code"] == "parse"]
    assert bad["severity"] == "error" and bad["message"].endswith(
        "the library loads it as a new, empty session and overwrites it on its next write")


def test_migrate_imports_the_json_sessions_the_gateway_does_not_see(cli, gateway_home):
    """The sessions.db finder of migrate: the dry run names the fix and changes nothing; the real run puts
    both sessions into sessions.db in the library's form; a rerun has nothing left to do."""
    from tests.helpers import snapshot

    before = snapshot(gateway_home.home)
    dry = cli("--home", str(gateway_home.home), "migrate", "--dry-run", "--json")
    assert dry.exit_code == 0, dry.stderr
    assert snapshot(gateway_home.home) == before
    [fix] = [f for f in dry.json() if f["kind"] == "sessions_db.missing_json"]
    assert (fix["action"], fix["subject"], fix["fix_command"]) == (
        "imported", str(gateway_home.db), f"praisonmem --home {gateway_home.home} migrate")
    assert [(c["action"], c["session_id"]) for c in fix["changes"]] == [("imported", "bot_slack_7"),
                                                                         ("imported", "enc-1")]
    done = cli("--home", str(gateway_home.home), "migrate", "--yes", "--json")
    assert done.exit_code == 0, done.stderr
    conn = sqlite3.connect(f"file:{gateway_home.db}?mode=ro", uri=True)
    rows = dict(conn.execute("SELECT session_id, data FROM sessions WHERE session_id IN ('bot_slack_7', 'enc-1')"))
    conn.close()
    assert sorted(rows) == ["bot_slack_7", "enc-1"]
    assert all(json.loads(data)["session_id"] == sid for sid, data in rows.items())
    again = cli("--home", str(gateway_home.home), "migrate", "--dry-run", "--json")
    assert [f for f in again.json() if f["kind"] == "sessions_db.missing_json"] == []


def test_check_of_a_session_file_and_its_home_reports_no_index_orphan(cli, gateway_home):
    """A file checked first as a PATH of its own still counts as a session of its directory for the index."""
    alone = cli("--home", gateway_home.home, "check", gateway_home.home, "--json").json()["findings"]
    both = cli("--home", gateway_home.home, "check", gateway_home.sessions / "bot_slack_7.json", gateway_home.home,
               "--json").json()["findings"]
    index = [f for f in both if f["code"].startswith("index.")]
    assert index == [f for f in alone if f["code"].startswith("index.")]
