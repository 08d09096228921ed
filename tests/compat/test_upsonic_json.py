"""Upsonic 0.77.3's JSONStorage and praisonmem on the same directory: the library writes (its own storage API and
Memory path, the fixture generator's sessions and user memories), praisonmem reads exactly; after each praisonmem
write the library reads back exactly the change, and every byte praisonmem did not mean to change is as it was."""

from __future__ import annotations

import json
import os
import stat

import pytest

from tests.compat.conftest import last_json, run_library
from tests.conftest import FIXTURES

pytest.importorskip("upsonic")

UPSONIC_ENV = {"UPSONIC_TELEMETRY": "false"}
GENERATOR = FIXTURES / "tools" / "gen_upsonic_fixtures.py"
SESSIONS, USERS = "upsonic_sessions.json", "upsonic_user_memories.json"

WRITE = f"""
import asyncio, importlib.util, sys
from pathlib import Path
spec = importlib.util.spec_from_file_location("ugen", {str(GENERATOR)!r})
ugen = importlib.util.module_from_spec(spec); spec.loader.exec_module(ugen)
from upsonic.storage.json import JSONStorage
ugen.SqliteStorage = lambda db_file: JSONStorage(db_path=sys.argv[1])
asyncio.run(ugen.main(Path("/nonexistent/unused.db")))
print("{{}}")
"""

READ = """
import json, sys
from upsonic.storage.json import JSONStorage
storage = JSONStorage(db_path=sys.argv[1])
rows = storage.get_sessions(deserialize=False)
rows = rows[0] if isinstance(rows, tuple) else rows
users = storage.get_user_memories(deserialize=False)
users = users[0] if isinstance(users, tuple) else users
typed = {s.session_id: len(s.messages or []) for s in storage.get_sessions()}
print(json.dumps({"sessions": {r["session_id"]: r for r in rows}, "users": {u["user_id"]: u for u in users},
                  "typed": typed}))
"""


def library(code: str, tmp_path, *args: str):
    return last_json(run_library(code, *map(str, args), home=tmp_path, **UPSONIC_ENV))


@pytest.fixture
def jdb(tmp_path):
    """A JSONStorage directory the real library wrote."""
    where = tmp_path / "upsonic_json_db"
    library(WRITE, tmp_path, where)
    assert sorted(os.listdir(where)) == [SESSIONS, USERS]
    return where


def read_library(tmp_path, where):
    return library(READ, tmp_path, where)


def test_praisonmem_reads_exactly_what_json_storage_wrote(cli, jdb, tmp_path):
    seen = read_library(tmp_path, jdb)
    listed = cli("upsonic", "sessions", "--db", jdb, "--json").json()
    assert [r["session_id"] for r in listed] == sorted(seen["sessions"], key=lambda i: (
        -seen["sessions"][i]["created_at"], [-ord(c) for c in i]))
    assert {r["session_id"]: r["message_count"] for r in listed} == {
        i: len(r["messages"]) for i, r in seen["sessions"].items()} == seen["typed"]
    for session_id, theirs in seen["sessions"].items():
        mine = cli("upsonic", "show", session_id, "--db", jdb, "--json").json()
        assert {k: mine[k] for k in theirs} == theirs, session_id
        assert mine["usage"] is None and mine["team_data"] is None  # JSONStorage keeps neither for an agent session
    for user_id, theirs in seen["users"].items():
        assert cli("upsonic", "user-memory", user_id, "--db", jdb, "--json").json() == theirs
    shown = cli("upsonic", "show", "session_001", "--db", jdb)
    assert shown.exit_code == 0 and "Convert 250 USD to EUR." in shown.stdout and "fx_convert" in shown.stdout


def test_reads_change_nothing(cli, jdb):
    before = {n: ((jdb / n).read_bytes(), os.stat(jdb / n).st_mtime_ns) for n in os.listdir(jdb)}
    for args in (("sessions",), ("show", "session_001"), ("user-memory", "user_123"), ("export",)):
        assert cli("upsonic", *args, "--db", jdb).exit_code == 0, args
    assert cli("usage", "--store", str(jdb), "--by", "session").exit_code == 0
    scanned = cli("check", "--secrets", "--upsonic-db", jdb, "--json").json()["scanned"]
    assert (scanned["upsonic_users"], scanned["upsonic_sessions"]) == (2, 4)
    assert {n: ((jdb / n).read_bytes(), os.stat(jdb / n).st_mtime_ns) for n in os.listdir(jdb)} == before


@pytest.mark.parametrize("edit, expect", [
    (("set", "user_123", "detected_tone=formal", 'key_entities={"bank": "N26"}'),
     lambda m: {**m, "detected_tone": "formal", "key_entities": {"bank": "N26"}}),
    (("unset", "user_123", "current_goal"), lambda m: {k: v for k, v in m.items() if k != "current_goal"}),
])
def test_library_reads_exactly_the_trait_edit_and_nothing_else_changed(cli, jdb, tmp_path, edit, expect):
    before = read_library(tmp_path, jdb)
    sessions_bytes = (jdb / SESSIONS).read_bytes()
    users_doc = json.loads((jdb / USERS).read_bytes())
    mode = stat.S_IMODE(os.stat(jdb / USERS).st_mode)
    result = cli("upsonic", "user-memory", *edit, "--db", jdb)
    assert result.exit_code == 0, result.stderr
    after = read_library(tmp_path, jdb)
    old = before["users"]["user_123"]
    new = after["users"]["user_123"]
    assert new["user_memory"] == expect(old["user_memory"])
    assert {k: new[k] for k in ("agent_id", "team_id", "created_at")} == {
        k: old[k] for k in ("agent_id", "team_id", "created_at")}
    assert new["updated_at"] >= old["updated_at"]
    assert after["users"]["user_456"] == before["users"]["user_456"] and after["sessions"] == before["sessions"]
    assert (jdb / SESSIONS).read_bytes() == sessions_bytes
    # the file is exactly what the library's own write of that change would give: same json.dump arguments,
    # the other record byte for byte, the record's key order kept
    users_doc[0]["user_memory"] = new["user_memory"]
    users_doc[0]["updated_at"] = new["updated_at"]
    assert (jdb / USERS).read_bytes() == json.dumps(users_doc, indent=2, default=str).encode()
    assert stat.S_IMODE(os.stat(jdb / USERS).st_mode) == mode
    assert sorted(os.listdir(jdb)) == [SESSIONS, USERS]  # no lock file, no temp file left


def test_a_new_user_is_the_library_s_record(cli, jdb, tmp_path):
    assert cli("upsonic", "user-memory", "set", "fresh", "tone=dry", "--db", jdb).exit_code == 0
    seen = read_library(tmp_path, jdb)["users"]["fresh"]
    assert seen["user_memory"] == {"tone": "dry"} and seen["agent_id"] is None and seen["created_at"] > 0
    assert list(json.loads((jdb / USERS).read_bytes())[-1]) == ["user_id", "user_memory", "agent_id", "team_id",
                                                                "created_at", "updated_at"]


def test_export_import_into_a_new_directory_the_library_reads_whole(cli, jdb, tmp_path):
    export = tmp_path / "export.json"
    assert cli("upsonic", "export", "--db", jdb, "-o", export).exit_code == 0
    new = tmp_path / "copy"
    result = cli("upsonic", "import", export, "--db", f"{new}/")
    assert result.exit_code == 0, result.stderr
    theirs, mine = read_library(tmp_path, jdb), read_library(tmp_path, new)
    assert mine == theirs
    for name, key in ((SESSIONS, "session_id"), (USERS, "user_id")):  # each record as the library wrote it, exactly
        def records(where):
            return {r[key]: json.dumps(r, indent=2) for r in json.loads((where / name).read_bytes())}
        assert records(new) == records(jdb)


def test_convert_from_praisonai_into_json_storage(cli, jdb, tmp_path, fixture_home):
    assert cli("--home", fixture_home, "upsonic", "convert", "history_ec9d38c8", "--from-praisonai",
               "--db", jdb).exit_code == 0
    seen = library("""
        import json, sys
        from upsonic.storage.json import JSONStorage
        from upsonic.messages.messages import ModelMessagesTypeAdapter
        raw = JSONStorage(db_path=sys.argv[1]).get_session(session_id="history_ec9d38c8", deserialize=False)
        print(json.dumps({"user": raw["user_id"],
                          "kinds": [m.kind for m in ModelMessagesTypeAdapter.validate_python(raw["messages"])]}))
    """, tmp_path, jdb)
    assert seen == {"user": "bob", "kinds": ["request", "response", "request", "response"]}


def test_a_torn_table_file_is_reported_and_never_overwritten(cli, jdb):
    whole = (jdb / USERS).read_bytes()
    (jdb / USERS).write_bytes(whole[:len(whole) // 2])  # as a reader sees the library's write half done
    torn = (jdb / USERS).read_bytes()
    for args in (("user-memory", "user_123"), ("user-memory", "set", "user_123", "a=1"), ("export",)):
        result = cli("upsonic", *args, "--db", jdb)
        assert result.exit_code == 4 and result.stdout == "", args
        assert result.stderr.startswith(f"praisonmem: error: {jdb / USERS}: ") and "invalid JSON" in result.stderr
        assert result.stderr.count("\n") == 1
    assert (jdb / USERS).read_bytes() == torn
    assert cli("upsonic", "sessions", "--db", jdb).exit_code == 0  # the other table still reads


def test_a_directory_that_is_not_json_storage_is_refused(cli, tmp_path, db):
    other = tmp_path / "photos"
    other.mkdir()
    (other / "cat.jpg").write_bytes(b"\xff\xd8")
    listed = cli("upsonic", "sessions", "--db", other)
    assert (listed.exit_code, listed.stdout) == (3, "") and "no Upsonic JSONStorage tables" in listed.stderr
    moved = cli("upsonic", "migrate", "--from", db, "--to", other)
    assert moved.exit_code == 4 and moved.stderr == (
        f"praisonmem: error: {other}: not a JSONStorage directory (it holds 'cat.jpg'); give a new or empty "
        "directory; nothing written\n")
    assert os.listdir(other) == ["cat.jpg"]


def test_a_library_write_between_read_and_write_is_never_overwritten(cli, jdb, tmp_path, monkeypatch):
    from praisonmem.core.upsonic import json_backend

    commit = json_backend.JsonTransaction.commit

    def agent_writes_first(self):
        run_library("""
            import sys
            from upsonic.storage.json import JSONStorage
            from upsonic.storage.schemas import UserMemory
            JSONStorage(db_path=sys.argv[1]).upsert_user_memory(UserMemory(user_id="user_123", agent_id="agent_fin",
                                                                           user_memory={"by": "agent"}))
        """, str(jdb), home=tmp_path, **UPSONIC_ENV)
        commit(self)

    monkeypatch.setattr(json_backend.JsonTransaction, "commit", agent_writes_first)
    result = cli("upsonic", "user-memory", "set", "user_123", "by=praisonmem", "--db", jdb)
    assert result.exit_code == 4 and "changed while praisonmem was writing it" in result.stderr
    assert read_library(tmp_path, jdb)["users"]["user_123"]["user_memory"] == {"by": "agent"}
