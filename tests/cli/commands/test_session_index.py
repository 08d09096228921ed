"""sessions_index.db follows every delete, prune, rename and write of a JSON session, as SqliteSessionStore keeps
it, on the real 4.7.19 home: no text of a deleted session stays in any file, the FTS5 segments included."""

from __future__ import annotations

import json
import sqlite3

import pytest

from praisonmem.core.sessions.stores import index as index_module
from praisonmem.core.sessions.stores.indextext import flatten
from tests.helpers import hold_sqlite_lock, snapshot
from tests.indexstate import holding, integrity, matching, rows, terms

SLACK_ONLY_TERMS = {"slack", "created", "after", "import", "indexed", "reply"}  # words only bot_slack_7 has
# what FTS5 keeps of them until its segments are merged: lower-cased terms a raw grep finds (fts5vocab and
# MATCH already leave out deleted rows, so they alone cannot show that a term is gone from disk)
RAW_TERMS = (b"slack", b"after", b"import", b"indexed", b"reply")


def raw_terms_left(root) -> dict[bytes, list[str]]:
    return {term: found for term in RAW_TERMS if (found := holding(root, term))}


def home_cli(cli, gateway_home):
    return lambda *args: cli("--home", gateway_home.home, "session", *args)


def test_delete_removes_the_sessions_text_from_every_file_and_the_fts_segments(cli, gateway_home):
    index = gateway_home.index
    before = rows(index)
    assert SLACK_ONLY_TERMS <= terms(index) and matching(index, "slack") == ["bot_slack_7"]
    assert set(raw_terms_left(gateway_home.home)) == set(RAW_TERMS)
    result = home_cli(cli, gateway_home)("delete", "bot_slack_7", "--yes")
    assert (result.exit_code, result.stdout, result.stderr) == (0, "deleted bot_slack_7 (bot_slack_7.json)\n", "")
    assert holding(gateway_home.root, b"PLANTED-TOKEN-SLACK") == []
    assert raw_terms_left(gateway_home.home) == {}  # nor its route and meta rows, nor its FTS5 terms
    assert terms(index).isdisjoint(SLACK_ONLY_TERMS) and matching(index, "slack") == []
    after = rows(index)
    for table in ("fts", "meta", "route"):
        assert after[table] == [r for r in before[table] if r[0] != "bot_slack_7"], table
    assert after["index_meta"] == before["index_meta"]
    assert integrity(index) == ("ok", "ok")
    assert not any(p.name.endswith(("-wal", "-shm")) for p in gateway_home.sessions.iterdir())


def test_delete_in_a_project_store_keeps_that_directorys_own_index(cli, gateway_home):
    project_index = gateway_home.project_store / "sessions_index.db"
    path = gateway_home.project_store / "proj-sess-1.json"
    top = rows(gateway_home.index)
    assert home_cli(cli, gateway_home)("delete", str(path), "--yes").exit_code == 0
    assert holding(gateway_home.root, b"PLANTED-TOKEN-PROJECT") == []
    assert rows(project_index) == {"fts": [], "meta": [], "route": [], "index_meta": [("content_version", "2")]}
    assert terms(project_index) == set()
    assert rows(gateway_home.index) == top


def test_prune_removes_the_rows_of_what_it_deletes(cli, gateway_home):
    # the JSON store: pruning every row of sessions.db is refused (the gateway would import the JSON files again)
    pruned = home_cli(cli, gateway_home)("prune", "--older-than", "1s", "--store", "json", "--yes", "--json").json()
    gone = {c["session_id"] for c in pruned if c["action"] == "deleted"}
    assert {"gw-legacy", "bot_slack_7", "enc-1"} <= gone
    left = {sid for sid, _ in rows(gateway_home.index)["meta"]}
    assert left.isdisjoint(gone)
    assert holding(gateway_home.root / ".praisonai" / "sessions", b"PLANTED-TOKEN-SLACK") == []
    assert matching(gateway_home.index, "era") == []  # gw-legacy's "file era"


def test_rename_moves_every_row_to_the_new_id(cli, gateway_home):
    index = gateway_home.index
    before = rows(index)
    assert home_cli(cli, gateway_home)("rename", "bot_slack_7", "bot_slack_8", "--force").exit_code == 0
    after = rows(index)
    renamed = {t: [(("bot_slack_8",) + r[1:]) if r[0] == "bot_slack_7" else r for r in before[t]]
               for t in ("fts", "meta", "route")}
    assert {t: sorted(v) for t, v in renamed.items()} == {t: after[t] for t in ("fts", "meta", "route")}
    assert matching(index, "slack") == ["bot_slack_8"]
    assert integrity(index) == ("ok", "ok")


def test_a_retitle_refreshes_updated_at_and_leaves_the_text_row_alone(cli, gateway_home):
    index = gateway_home.index
    before = rows(index)
    assert home_cli(cli, gateway_home)("rename", "bot_slack_7", "--title", "Slack thread").exit_code == 0
    doc = json.loads((gateway_home.sessions / "bot_slack_7.json").read_text())
    after = rows(index)
    assert dict(after["meta"])["bot_slack_7"] == doc["updated_at"] != dict(before["meta"])["bot_slack_7"]
    assert after["fts"] == before["fts"] and after["route"] == before["route"]


def test_an_import_that_replaces_a_session_replaces_its_text(cli, gateway_home, tmp_path):
    doc = json.loads((gateway_home.sessions / "bot_slack_7.json").read_text())
    doc["messages"] = [{"role": "user", "content": "a fresh start", "timestamp": 1.0, "metadata": {}}]
    export = tmp_path / "one.json"
    export.write_text(json.dumps(doc))
    assert home_cli(cli, gateway_home)("import", export, "--on-conflict", "replace", "--yes").exit_code == 0
    assert dict(rows(gateway_home.index)["fts"])["bot_slack_7"] == "a fresh start"
    assert terms(gateway_home.index).isdisjoint(SLACK_ONLY_TERMS)
    assert holding(gateway_home.root, b"PLANTED-TOKEN-SLACK") == []
    assert set(raw_terms_left(gateway_home.home)) == {b"slack"}  # its route: 'slack:C42', 'slackbot'
    assert ("bot_slack_7", "slack:C42", "slackbot") in rows(gateway_home.index)["route"]


def test_a_new_session_is_indexed_as_the_library_would(cli, gateway_home, tmp_path):
    doc = {"session_id": "new one", "messages": [{"role": "user", "content": "hello index", "timestamp": 1.0,
                                                  "metadata": {}}], "updated_at": "2026-11-30T12:00:00+00:00"}
    export = tmp_path / "new.json"
    export.write_text(json.dumps(doc))
    assert home_cli(cli, gateway_home)("import", export).exit_code == 0
    after = rows(gateway_home.index)
    assert dict(after["fts"])["new one"] == "hello index"
    assert dict(after["meta"])["new one"] == "2026-11-30T12:00:00+00:00"
    assert "new one" not in {r[0] for r in after["route"]}


def test_an_index_this_sqlite_cannot_write_refuses_and_changes_nothing(cli, gateway_home, monkeypatch):
    monkeypatch.setattr(index_module, "fts5_available", lambda: False)
    before = snapshot(gateway_home.root)
    result = home_cli(cli, gateway_home)("delete", "bot_slack_7", "--yes")
    assert result.exit_code == 4
    assert result.stderr.count("\n") == 1 and "uses FTS5, which this Python's SQLite" in result.stderr
    assert "nothing changed" in result.stderr
    assert snapshot(gateway_home.root) == before


def test_the_plain_table_fallback_index_is_kept_too(cli, gateway_home):
    fallback = gateway_home.index
    fallback.unlink()
    conn = sqlite3.connect(fallback, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    # the library's schema without FTS5 (sqlite_store.py _init_schema)
    conn.execute("CREATE TABLE IF NOT EXISTS session_fts (session_id TEXT PRIMARY KEY, content TEXT)")
    conn.execute("CREATE TABLE IF NOT EXISTS session_meta (session_id TEXT PRIMARY KEY, updated_at TEXT)")
    conn.execute("CREATE TABLE IF NOT EXISTS session_route (  session_id TEXT PRIMARY KEY,  gateway_session_id "
                 "TEXT,  agent_id TEXT)")
    conn.execute("CREATE TABLE IF NOT EXISTS session_index_meta (  key TEXT PRIMARY KEY,  value TEXT)")
    conn.execute("INSERT INTO session_fts VALUES ('bot_slack_7', 'created after the import PLANTED-TOKEN-SLACK')")
    conn.execute("INSERT INTO session_fts VALUES ('gw-legacy', 'hello from the file era')")
    conn.execute("INSERT INTO session_meta VALUES ('bot_slack_7', 'x'), ('gw-legacy', 'y')")
    conn.execute("INSERT INTO session_index_meta VALUES ('import_pending:bot_slack_7', '1')")
    conn.close()
    assert home_cli(cli, gateway_home)("delete", "bot_slack_7", "--yes").exit_code == 0
    con = sqlite3.connect(f"file:{fallback}?mode=ro", uri=True)
    assert con.execute("SELECT * FROM session_fts").fetchall() == [("gw-legacy", "hello from the file era")]
    assert con.execute("SELECT * FROM session_meta").fetchall() == [("gw-legacy", "y")]
    assert con.execute("SELECT * FROM session_index_meta").fetchall() == []
    con.close()
    assert holding(gateway_home.root, b"PLANTED-TOKEN-SLACK") == []


def test_old_text_another_writer_left_in_free_pages_goes_too(cli, gateway_home):
    index = gateway_home.index
    conn = sqlite3.connect(index, isolation_level=None)
    conn.execute("PRAGMA secure_delete=OFF")  # a writer whose SQLite does not zero what it frees
    old = "an earlier version PLANTED-OLD-VERSION " + "filler " * 2000  # large enough to own whole pages
    conn.execute("UPDATE session_fts SET content = ? WHERE session_id = 'bot_slack_7'", (old,))
    conn.execute("UPDATE session_fts SET content = 'created after the import PLANTED-TOKEN-SLACK\nindexed reply' "
                 "WHERE session_id = 'bot_slack_7'")
    conn.execute("INSERT INTO session_fts(session_fts) VALUES('optimize')")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    assert holding(gateway_home.root, b"PLANTED-OLD-VERSION") == [".praisonai/sessions/sessions_index.db"]
    assert home_cli(cli, gateway_home)("delete", "bot_slack_7", "--yes").exit_code == 0
    assert holding(gateway_home.root, b"PLANTED-OLD-VERSION") == []
    assert integrity(index) == ("ok", "ok")


def test_where_sqlite_leaves_freed_cells_unzeroed_the_index_is_vacuumed(cli, gateway_home, monkeypatch):
    conn = sqlite3.connect(gateway_home.index, isolation_level=None)
    conn.execute("PRAGMA secure_delete=OFF")  # the library deleting a row with an SQLite that keeps freed bytes
    conn.execute("INSERT INTO session_fts (session_id, content) VALUES ('gone', 'PLANTED-SMALL-OLD')")
    conn.execute("DELETE FROM session_fts WHERE session_id = 'gone'")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    assert holding(gateway_home.root, b"PLANTED-SMALL-OLD") == [".praisonai/sessions/sessions_index.db"]
    monkeypatch.setattr(index_module, "zeroes_freed_space", lambda: False)
    assert home_cli(cli, gateway_home)("delete", "bot_slack_7", "--yes").exit_code == 0
    assert holding(gateway_home.root, b"PLANTED-SMALL-OLD") == []


def test_a_locked_index_refuses_before_the_file_is_touched(cli, gateway_home):
    before = snapshot(gateway_home.sessions / "bot_slack_7.json")
    holder = hold_sqlite_lock(gateway_home.index, 30)
    try:
        result = home_cli(cli, gateway_home)("delete", "bot_slack_7", "--yes")
    finally:
        holder.kill()
        holder.wait()
    assert result.exit_code == 4 and "the session index is locked by another writer (waited 5s)" in result.stderr
    assert (gateway_home.sessions / "bot_slack_7.json").is_file()
    assert snapshot(gateway_home.sessions / "bot_slack_7.json") == before


def test_a_damaged_index_refuses_and_keeps_the_session(cli, gateway_home):
    gateway_home.index.write_bytes(b"not a database at all" * 100)
    result = home_cli(cli, gateway_home)("delete", "bot_slack_7", "--yes")
    assert result.exit_code == 4 and "the session index is damaged" in result.stderr
    assert result.stderr.count("\n") == 1
    assert (gateway_home.sessions / "bot_slack_7.json").is_file()


@pytest.mark.parametrize("name", ["sessions_index.db"])
def test_a_directory_without_an_index_gets_none(cli, gateway_home, name):
    (gateway_home.sessions / name).unlink()
    assert home_cli(cli, gateway_home)("delete", "bot_slack_7", "--yes").exit_code == 0
    assert not (gateway_home.sessions / name).exists()


# ---------------------------------------------------------------- the index changes ahead of the file


def index_at_file_change(monkeypatch, gateway_home, call: str) -> list[tuple[dict, list[str]]]:
    """Run with ``os.<call>`` watched: at each call on a session file of the home, the index's rows as another
    process would read them then (a copy of the database and its -wal) and the files holding the slack token."""
    import os

    seen = []
    real = getattr(os, call)

    def watched(*args, **kwargs):
        target = str(args[-1] if call == "replace" else args[0])
        if target.startswith(str(gateway_home.sessions)) and target.endswith(".json"):
            seen.append((rows(gateway_home.index), holding(gateway_home.sessions, b"PLANTED-TOKEN-SLACK")))
        return real(*args, **kwargs)

    monkeypatch.setattr(os, call, watched)
    return seen


def test_a_delete_has_removed_the_rows_and_their_text_from_disk_before_it_removes_the_file(cli, gateway_home,
                                                                                          monkeypatch):
    seen = index_at_file_change(monkeypatch, gateway_home, "unlink")
    assert home_cli(cli, gateway_home)("delete", "bot_slack_7", "--yes").exit_code == 0
    [(at_unlink, holders)] = seen
    assert "bot_slack_7" not in {r[0] for r in at_unlink["fts"] + at_unlink["meta"] + at_unlink["route"]}
    assert holders == ["bot_slack_7.json"]  # a kill now leaves the text only in the file that still holds it
    assert at_unlink["index_meta"] == rows(gateway_home.index)["index_meta"]  # the scrub is done: no marker


TOKEN = "ghp_Zq3vLm8Rt2Wx9Kp4Nd7Bf1Hs6Jc0Ya5Ge2Ui"  # a GitHub token by the secret rules' pattern
ADD_TURN = """
    import sys
    from praisonaiagents.session import SqliteSessionStore
    SqliteSessionStore(session_dir=sys.argv[1]).add_message(sys.argv[2], "user", sys.argv[3])
"""


def library_turn(gateway_home, sid: str, text: str) -> None:
    """A turn written by the real SqliteSessionStore: into the JSON file and its index row."""
    from tests.compat.conftest import run_library

    run_library(ADD_TURN, str(gateway_home.sessions), sid, text, home=gateway_home.home)


def test_a_redaction_has_replaced_the_indexed_text_before_it_replaces_the_file(cli, gateway_home, monkeypatch):
    import os

    library_turn(gateway_home, "bot_slack_7", f"the key is {TOKEN}")
    assert TOKEN in dict(rows(gateway_home.index)["fts"])["bot_slack_7"]
    path, seen, real = gateway_home.sessions / "bot_slack_7.json", [], os.replace

    def watched(src, dst, *args, **kwargs):
        if str(dst) == str(path):
            seen.append((rows(gateway_home.index), holding(gateway_home.sessions, TOKEN[4:].encode()),
                         terms(gateway_home.index)))
        return real(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "replace", watched)
    assert home_cli(cli, gateway_home)("redact", "bot_slack_7", "--yes").exit_code == 0
    [(at_replace, holders, indexed_terms)] = seen
    assert dict(at_replace["fts"])["bot_slack_7"] == flatten(json.loads(path.read_text())) == (
        "created after the import PLANTED-TOKEN-SLACK\nindexed reply\nthe key is [REDACTED:github_token]")
    assert holders == ["bot_slack_7.json"]  # the file about to be replaced, and nothing of the index's
    assert TOKEN[4:].lower() not in indexed_terms


def test_a_rename_that_rewrites_the_same_file_moves_the_rows_off_the_old_id(cli, gateway_home):
    """'chat room' lives in chat_room.json, which is also the file of 'chat_room': renaming one to the other
    rewrites the file in place, and the old id's rows must go with the old id."""
    library_turn(gateway_home, "chat room", "a word only this room has: quokkaville")
    assert (gateway_home.sessions / "chat_room.json").is_file()
    before = rows(gateway_home.index)
    assert dict(before["fts"])["chat room"] == "a word only this room has: quokkaville"
    result = home_cli(cli, gateway_home)("rename", "chat room", "chat_room", "--force")
    assert (result.exit_code, result.stderr) == (0, "")
    after = rows(gateway_home.index)
    ids = {table: {r[0] for r in after[table]} for table in ("fts", "meta")}
    assert ids == {table: {r[0] for r in before[table]} - {"chat room"} | {"chat_room"} for table in ("fts", "meta")}
    assert dict(after["fts"])["chat_room"] == "a word only this room has: quokkaville"
    assert matching(gateway_home.index, "quokkaville") == ["chat_room"]
    assert json.loads((gateway_home.sessions / "chat_room.json").read_text())["session_id"] == "chat_room"


def test_a_file_change_that_fails_puts_the_rows_back_as_the_file_is(cli, gateway_home, monkeypatch):
    import errno
    import os

    before, real = rows(gateway_home.index), os.unlink
    path = gateway_home.sessions / "bot_slack_7.json"

    def failing(target, *args, **kwargs):
        if str(target) == str(path):
            raise OSError(errno.EROFS, "Read-only file system")
        return real(target, *args, **kwargs)

    monkeypatch.setattr(os, "unlink", failing)
    result = home_cli(cli, gateway_home)("delete", "bot_slack_7", "--yes")
    assert result.exit_code == 5 and "read-only file system" in result.stderr
    assert path.is_file()
    assert rows(gateway_home.index) == before  # the rows the delete had removed first are back
    assert matching(gateway_home.index, "slack") == ["bot_slack_7"]
