"""praisonai 4.7.19's ``MySQLConversationStore`` on a real MariaDB server (tests/mariadbserver.py) and praisonmem:

* what the library writes (through mysql-connector-python, in the oracle venv) praisonmem lists, shows, searches
  exactly; praisonmem's change (a rename) is read back by the library as exactly that change;
* JSON → MySQL → JSON is byte-identical for every fixture session, verified and idempotent; the library reads
  the migrated sessions whole with no praisonmem key anywhere;
* a SIGKILL during a 2,000-session migrate, then a rerun, gives what one uninterrupted run gives;
* bad inputs (unreachable, wrong password, missing tables, another app's tables, a read-only user, a URL with a
  password): one line, the exit code, nothing written, no password shown.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.parse

import pytest

from tests.cli.commands.test_session_conversation import source, tree  # noqa: F401  (fixture)
from tests.conftest import PRAISONAI_FIXTURES, REPO
from tests.mariadbserver import require_pymysql

RESERVED = "_praisonmem"

WRITE = """
import json, sys
from praisonai.persistence.conversation.base import ConversationMessage, ConversationSession
from praisonai.persistence.conversation.mysql import MySQLConversationStore
st = MySQLConversationStore(url=sys.argv[1])
st.create_session(ConversationSession(session_id="direct-my", user_id="u1", agent_id="ag", name="Direct",
    state={"z": 1, "a": [1.5, 2e-06], "nested": {"b": None, "a": "\\u00e9"}},
    metadata={"zz": True, "aa": 0.1, "title": "Direct tool chat"}, created_at=1796050073.07, updated_at=1796050080.5))
turns = [("user", "weather in Lisbon?", None, None, {"k": 0}),
         ("assistant", "", [{"id": "call_1", "type": "function",
                             "function": {"name": "weather", "arguments": "{\\"city\\": \\"Lisbon\\"}"}}], None, None),
         ("tool", "Sunny", None, "call_1", {"k": 2}), ("assistant", "It is sunny \\u2600", None, None, None)]
for i, (role, content, tc, tcid, md) in enumerate(turns):
    st.add_message("direct-my", ConversationMessage(id=f"m{i}", role=role, content=content, tool_calls=tc,
                   tool_call_id=tcid, metadata=md, created_at=1796050073.0 + i * 0.1))
st.create_session(ConversationSession(session_id="bare-my", created_at=1796040000.0, updated_at=1796040001.0))
st.add_message("bare-my", ConversationMessage(id="b0", role="user", content="no metadata at all",
                                              created_at=1796040000.5))
st.add_message("bare-my", ConversationMessage(id="b1", role="assistant", content="same instant",
                                              created_at=1796040000.5))
"""

READ = """
import json, sys
from praisonai.persistence.conversation.mysql import MySQLConversationStore
st = MySQLConversationStore(url=sys.argv[1], auto_create_tables=False)
ids = json.loads(sys.argv[2]) if len(sys.argv) > 2 else [s.session_id for s in st.list_sessions(limit=100000)]
out = {}
for sid in ids:
    s = st.get_session(sid)
    out[sid] = {"session": None if s is None else s.to_dict(), "messages": [m.to_dict() for m in st.get_messages(sid)]}
print(json.dumps(out, sort_keys=True))
"""


@pytest.fixture
def db(mysql):
    require_pymysql()
    return mysql


def count(db, table: str = "praison_sessions") -> int:
    exists = db.sql(f"SELECT count(*) FROM information_schema.tables WHERE table_schema = DATABASE() "
                    f"AND table_name = '{table}'").strip()
    return int(db.sql(f"SELECT count(*) FROM `{table}`").strip()) if exists == "1" else -1


def tables(db) -> set[str]:
    return set(db.sql("SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE()").split())


def no_secret(db, *texts: str) -> None:
    for text in texts:
        for secret in (db.rw_password, db.ro_password, "Wr0ng-Passw0rd"):
            assert secret not in text and urllib.parse.quote(secret, safe="") not in text


def library_view(oracle, db, tmp_path, ids=None) -> dict:
    args = [db.rw_url] + ([json.dumps(ids)] if ids is not None else [])
    return oracle.json(READ, *args, cwd=tmp_path)


# ---------------------------------------------------------------- the library writes, praisonmem reads and writes


def test_what_the_library_wrote_praisonmem_reads_exactly_and_its_change_is_all_the_library_sees(
        oracle, cli, db, tmp_path):
    oracle.run(WRITE, db.rw_url, cwd=tmp_path)
    before = library_view(oracle, db, tmp_path)
    listed = cli("session", "list", "--store", db.ro_url, "--json")
    assert listed.exit_code == 0, listed.stderr
    rows = listed.json()
    assert [r["session_id"] for r in rows] == ["direct-my", "bare-my"]  # updated_at DESC, as list_sessions
    direct = rows[0]
    assert (direct["agent_name"], direct["user_id"], direct["message_count"], direct["title"]) == (
        "ag", "u1", 4, "Direct tool chat")
    for sid, theirs in before.items():
        shown = cli("session", "show", sid, "--store", db.ro_url, "--json")
        assert shown.exit_code == 0, shown.stderr
        doc = shown.json()
        assert [(m["role"], m["content"], m.get("tool_calls"), m.get("tool_call_id"), m["timestamp"],
                 m["metadata"]) for m in doc["messages"]] == [
            (m["role"], m["content"], m["tool_calls"], m["tool_call_id"], m["created_at"], m["metadata"] or {})
            for m in theirs["messages"]]
        assert [rid for rid, _ in doc[RESERVED]["rows"]] == [m["id"] for m in theirs["messages"]]
    hits = cli("session", "search", "SUNNY", "--store", db.ro_url, "--json").json()
    assert {h["session_id"] for h in hits} == {"direct-my"}
    # praisonmem writes: a rename; the library then sees that session under its new id and nothing else changed
    renamed = cli("session", "rename", "direct-my", "renamed-my", "--store", db.rw_url, "--force")
    assert renamed.exit_code == 0, renamed.stderr
    after = library_view(oracle, db, tmp_path)
    assert set(after) == {"renamed-my", "bare-my"}
    assert after["bare-my"] == before["bare-my"]
    old, new = before["direct-my"], after["renamed-my"]
    assert new["session"] == {**old["session"], "session_id": "renamed-my"}
    assert [{k: v for k, v in m.items() if k not in ("id", "session_id")} for m in new["messages"]] == [
        {k: v for k, v in m.items() if k not in ("id", "session_id")} for m in old["messages"]]
    assert RESERVED not in json.dumps(after)


def test_mysql_to_json_to_mysql_gives_back_what_the_library_wrote(oracle, cli, db, mysql_server, tmp_path):
    oracle.run(WRITE, db.rw_url, cwd=tmp_path)
    before = library_view(oracle, db, tmp_path)
    raw_before = db.sql("SELECT session_id, user_id, agent_id, name, state, metadata, created_at, updated_at "
                        "FROM praison_sessions ORDER BY 1; SELECT * FROM praison_messages ORDER BY id")
    assert "NULL" in raw_before  # bare-my's state/metadata and several message metadata are SQL NULL
    out = tmp_path / "json"
    assert cli("session", "migrate", "--from", db.ro_url, "--to", out, "--all", "--verify").exit_code == 0
    other = mysql_server.create_database("roundtrip")
    try:
        back = cli("session", "migrate", "--from", out, "--to", other.rw_url, "--all", "--verify")
        assert back.exit_code == 0, back.stderr
        assert other.sql("SELECT session_id, user_id, agent_id, name, state, metadata, created_at, updated_at "
                         "FROM praison_sessions ORDER BY 1; SELECT * FROM praison_messages ORDER BY id") == raw_before
        assert library_view(oracle, other, tmp_path) == before
        assert count(other, "praison_praisonmem_extra") == 0  # the rows alone are the sessions: nothing beside them
    finally:
        mysql_server.drop_database(other.name)


# ---------------------------------------------------------------- JSON -> MySQL -> JSON


def test_json_to_mysql_to_json_is_byte_identical_verified_and_idempotent(cli, db, source, tmp_path):
    first = cli("session", "migrate", "--from", source, "--to", db.rw_url, "--all", "--verify", "--json")
    assert first.exit_code == 0, first.stderr
    n = len(list(source.glob("*.json")))
    assert first.json()["copied"] == n
    no_secret(db, first.stdout, first.stderr)
    assert count(db) == n
    again = cli("session", "migrate", "--from", source, "--to", db.rw_url, "--all", "--verify", "--json")
    assert (again.exit_code, again.json()["unchanged"], again.json()["messages"]) == (0, n, 0)
    back = tmp_path / "back"
    out = cli("session", "migrate", "--from", db.ro_url, "--to", back, "--all", "--verify")
    assert out.exit_code == 0, out.stderr
    assert tree(back) == tree(source)
    create = db.sql("SHOW CREATE TABLE praison_messages")
    assert "FOREIGN KEY (`session_id`) REFERENCES `praison_sessions` (`session_id`) ON DELETE CASCADE" in create
    assert "ENGINE=InnoDB" in create and "utf8mb4" in create


def test_the_tables_praisonmem_creates_are_the_librarys_own(oracle, cli, db, mysql_server, source, tmp_path):
    assert cli("session", "migrate", "--from", source, "--to", db.rw_url, "my_chat").exit_code == 0
    theirs = mysql_server.create_database("ddl")
    try:
        oracle.run("import sys\nfrom praisonai.persistence.conversation.mysql import MySQLConversationStore\n"
                   "MySQLConversationStore(url=sys.argv[1])", theirs.rw_url, cwd=tmp_path)
        for table in ("praison_sessions", "praison_messages"):
            assert db.sql(f"SHOW CREATE TABLE {table}") == theirs.sql(f"SHOW CREATE TABLE {table}"), table
    finally:
        mysql_server.drop_database(theirs.name)


def test_the_library_reads_migrated_sessions_whole_and_sees_no_praisonmem_key(oracle, cli, db, source, tmp_path):
    assert cli("session", "migrate", "--from", source, "--to", db.rw_url, "--all").exit_code == 0
    ids = sorted(json.loads(f.read_text())["session_id"] for f in source.glob("*.json"))
    seen = library_view(oracle, db, tmp_path, ids)
    assert RESERVED not in json.dumps(seen)
    for f in sorted(source.glob("*.json")):
        doc = json.loads(f.read_text())
        got = seen[doc["session_id"]]
        msgs = [m for k in ("archived_messages", "messages") for m in doc.get(k, []) if isinstance(m, dict)]
        assert [(m["role"], m["content"]) for m in got["messages"]] == [
            (m["role"], m["content"] if isinstance(m["content"], str) or m["content"] is None
             else json.dumps(m["content"], separators=(",", ":"))) for m in msgs], doc["session_id"]
        assert (got["session"]["user_id"], got["session"]["agent_id"]) == (doc.get("user_id"), doc.get("agent_name"))


def test_session_commands_on_mysql(cli, db, source, tmp_path):
    assert cli("session", "migrate", "--from", source, "--to", db.rw_url, "--all").exit_code == 0
    from praisonmem.core.sessions.stores.conversation_map import iso_epoch

    docs = [json.loads(f.read_text()) for f in source.glob("*.json")]
    newest = sorted(docs, key=lambda d: (-iso_epoch(d["updated_at"]), d["session_id"]))[:3]
    rows = cli("session", "list", "--store", db.ro_url, "--limit", "3", "--json").json()
    assert [r["session_id"] for r in rows] == [d["session_id"] for d in newest]
    compacted = cli("session", "list", "--store", db.ro_url, "--agent", "Compactor", "--json").json()
    assert [(r["session_id"], r["message_count"], r["archived_count"]) for r in compacted] == [
        ("compacted-demo", 5, 5)]
    by_user = cli("session", "list", "--store", db.ro_url, "--user", "user3", "--sort", "id", "--limit", "0",
                  "--json").json()
    assert [r["session_id"] for r in by_user] == [f"bench-{i:05}" for i in range(25) if i % 5 == 3]
    shown = cli("session", "show", "compacted-demo", "--store", db.ro_url, "--json")
    assert shown.stdout.encode() == (source / "compacted-demo.json").read_bytes() + b"\n"
    hits = cli("session", "search", "alfama", "--store", db.ro_url, "--json").json()
    assert {h["session_id"] for h in hits} == {"compacted-demo"}
    exported = cli("session", "export", "compacted-demo", "--store", db.ro_url)
    assert exported.exit_code == 0, exported.stderr
    assert cli("session", "rename", "bench-00004", "my-renamed", "--store", db.rw_url, "--force").exit_code == 0
    assert cli("session", "delete", "bench-00005", "--store", db.rw_url, "--yes", "--force").exit_code == 0
    assert db.sql("SELECT count(*) FROM praison_messages WHERE session_id IN ('bench-00004', 'bench-00005')"
                  ).strip() == "0"
    assert db.sql("SELECT count(*) FROM praison_messages WHERE session_id = 'my-renamed'").strip() == "20"
    assert db.sql("SELECT count(*) FROM praison_praisonmem_extra WHERE session_id IN ('bench-00004', "
                  "'bench-00005')").strip() == "0"


def test_the_socket_url_and_the_librarys_environment(cli, db, source, monkeypatch):
    sock = db.url("rw", socket=True)
    assert cli("session", "migrate", "--from", source, "--to", sock, "my_chat").exit_code == 0
    monkeypatch.setenv("PRAISONAI_CONVERSATION_STORE", "MySQL")
    monkeypatch.setenv("PRAISONAI_CONVERSATION_URL", db.ro_url)
    listed = cli("session", "list", "--json")
    assert [r["session_id"] for r in listed.json()] == ["my_chat"]
    no_secret(db, listed.stdout, listed.stderr)
    monkeypatch.delenv("PRAISONAI_CONVERSATION_URL")
    monkeypatch.setenv("POSTGRES_URL", db.ro_url)  # the library's own fallback, whatever the store
    assert [r["session_id"] for r in cli("session", "list", "--json").json()] == ["my_chat"]


def test_table_prefix(cli, db, source):
    ok = cli("session", "migrate", "--from", source, "--to", db.rw_url, "my_chat", "--table-prefix", "Team_")
    assert ok.exit_code == 0, ok.stderr
    assert tables(db) == {"team_sessions", "team_messages", "team_praisonmem_extra"}
    listed = cli("session", "list", "--store", db.ro_url, "--table-prefix", "team_", "--json").json()
    assert [r["session_id"] for r in listed] == ["my_chat"]
    missing = cli("session", "list", "--store", db.ro_url)
    assert (missing.exit_code, missing.stderr.count("\n")) == (3, 1)


# ---------------------------------------------------------------- crash


def test_sigkill_mid_migrate_then_rerun_gives_the_same_result(db, tmp_path):
    sys.path.insert(0, str(REPO / "benchmarks"))
    import _data

    src = tmp_path / "big" / "sessions"
    _data.write_sessions(src, 2000, 4)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    cmd = [sys.executable, "-m", "praisonmem", "session", "migrate", "--from", str(src), "--to", db.rw_url, "--all"]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while count(db) < 100 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    partial = count(db)
    assert 0 < partial < 2000, partial
    # whole sessions only: every committed session has all its messages and its side-table rows
    assert db.sql("SELECT count(*) FROM praison_sessions s WHERE (SELECT count(*) FROM praison_messages m "
                  "WHERE m.session_id = s.session_id) <> 4 OR NOT EXISTS (SELECT 1 FROM praison_praisonmem_extra x "
                  "WHERE x.session_id = s.session_id AND x.message_id = '')").strip() == "0"
    rerun = subprocess.run(cmd + ["--verify", "--json"], env=env, capture_output=True, text=True, timeout=600)
    assert rerun.returncode == 0, rerun.stderr
    summary = json.loads(rerun.stdout)
    assert (summary["unchanged"], summary["copied"]) == (partial, 2000 - partial)
    assert all(r.get("verified") for r in summary["records"])
    back = tmp_path / "back"
    out = subprocess.run([sys.executable, "-m", "praisonmem", "session", "migrate", "--from", db.rw_url, "--to",
                          str(back), "--all", "--verify"], env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    assert tree(back) == tree(src)


# ---------------------------------------------------------------- bad inputs


def test_unreachable_and_wrong_password(cli, db, source):
    for url, code, text in ((db.unreachable_url, 5, "cannot connect"),
                            (db.url("rw", password="Wr0ng-Passw0rd"), 5, "Access denied")):
        for args in (("session", "list", "--store", url),
                     ("session", "migrate", "--from", source, "--to", url, "--all")):
            r = cli(*args)
            assert (r.exit_code, r.stdout, r.stderr.count("\n")) == (code, "", 1), (args, r.stderr)
            assert text in r.stderr and "***" in r.stderr and "Traceback" not in r.stderr
            no_secret(db, r.stdout, r.stderr)
    assert tables(db) == set()


def test_missing_tables_and_another_apps_tables(cli, db, source):
    missing = cli("session", "list", "--store", db.rw_url)
    assert (missing.exit_code, missing.stdout, missing.stderr.count("\n")) == (3, "", 1)
    assert "no PraisonAI conversation tables (praison_sessions" in missing.stderr
    assert tables(db) == set()
    db.sql("CREATE TABLE praison_sessions (session_id varchar(255) PRIMARY KEY, doc json);"
           "CREATE TABLE praison_messages (id varchar(255) PRIMARY KEY, doc json);"
           "INSERT INTO praison_sessions VALUES ('theirs', '{}');")
    for args in (("session", "list", "--store", db.rw_url),
                 ("session", "migrate", "--from", source, "--to", db.rw_url, "--all")):
        r = cli(*args)
        assert (r.exit_code, r.stdout, r.stderr.count("\n")) == (4, "", 1), r.stderr
        assert "not PraisonAI's" in r.stderr
        no_secret(db, r.stderr)
    assert count(db) == 1 and tables(db) == {"praison_sessions", "praison_messages"}


def test_a_read_only_user_writes_nothing(cli, db, source):
    fresh = cli("session", "migrate", "--from", source, "--to", db.ro_url, "--all")
    assert (fresh.exit_code, fresh.stdout, fresh.stderr.count("\n")) == (5, "", 1), fresh.stderr
    assert tables(db) == set()
    assert cli("session", "migrate", "--from", source, "--to", db.rw_url, "my_chat").exit_code == 0
    before = db.sql("SELECT * FROM praison_messages ORDER BY id; SELECT * FROM praison_praisonmem_extra ORDER BY 1, 2")
    again = cli("session", "migrate", "--from", source, "--to", db.ro_url, "--all")
    assert (again.exit_code, again.stdout, again.stderr.count("\n")) == (5, "", 1), again.stderr
    assert "may not write" in again.stderr and "nothing written" in again.stderr
    deleted = cli("session", "delete", "my_chat", "--store", db.ro_url, "--yes", "--force")
    assert (deleted.exit_code, deleted.stderr.count("\n")) == (5, 1), deleted.stderr
    renamed = cli("session", "rename", "my_chat", "x", "--store", db.ro_url, "--force")
    assert (renamed.exit_code, renamed.stderr.count("\n")) == (5, 1), renamed.stderr
    assert count(db) == 1
    assert db.sql("SELECT * FROM praison_messages ORDER BY id; SELECT * FROM praison_praisonmem_extra ORDER BY 1, 2"
                  ) == before
    no_secret(db, fresh.stderr, again.stderr, deleted.stderr, renamed.stderr)


def test_a_url_with_a_password_is_never_shown(cli, db, source, config):
    config.write_text(f'store = "{db.rw_url}"\n')
    assert cli("session", "migrate", "--from", source, "--to", db.rw_url, "my_chat").exit_code == 0
    listed = cli("session", "list", "--json")
    assert [x["session_id"] for x in listed.json()] == ["my_chat"]
    shown = cli("config", "show")
    paths = cli("workspace", "paths", "--json")
    assert paths.exit_code == 0 and "mysql://pm_rw:***@" in paths.stdout, paths.stderr
    bad = cli("session", "show", "nope", "--store", db.rw_url)
    assert (bad.exit_code, bad.stderr.count("\n")) == (3, 1)
    assert "mysql://pm_rw:***@" in bad.stderr
    no_secret(db, listed.stdout, listed.stderr, shown.stdout, shown.stderr, paths.stdout, bad.stderr)


WRITE_LEAKY = """
import sys
from praisonai.persistence.conversation.base import ConversationMessage, ConversationSession
from praisonai.persistence.conversation.mysql import MySQLConversationStore
st = MySQLConversationStore(url=sys.argv[1])
st.create_session(ConversationSession(session_id="leaky", agent_id="ag", name="Leaky", state={"s": 1},
                                      created_at=1796050000.0, updated_at=1796050010.0))
st.add_message("leaky", ConversationMessage(id="l0", role="user", content="my token is " + sys.argv[2],
                                            created_at=1796050001.0))
st.add_message("leaky", ConversationMessage(id="l1", role="assistant", content="noted", metadata={"k": 1},
                                            created_at=1796050002.0))
st.create_session(ConversationSession(session_id="old", created_at=1.0e9, updated_at=1.0e9))
st.add_message("old", ConversationMessage(id="o0", role="user", content="long ago", created_at=1.0e9))
"""


def test_every_session_command_on_a_library_written_mysql_session(oracle, cli, db, tmp_path):
    """scan, redact, usage, export, delete, import and prune through --store mysql://: the library reads back
    exactly each change (the redacted text; the session deleted and imported back whole; the old one pruned)."""
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0" + "k1L2m3N4o5P6q7R8"
    oracle.run(WRITE_LEAKY, db.rw_url, token, cwd=tmp_path)
    before = library_view(oracle, db, tmp_path)
    scan = cli("session", "scan", "--store", db.ro_url, "--json")
    assert scan.exit_code == 1 and "leaky" in scan.stdout and token not in scan.stdout
    redacted = cli("session", "redact", "leaky", "--store", db.rw_url, "--yes")
    assert redacted.exit_code == 0, redacted.stderr
    after = library_view(oracle, db, tmp_path)
    assert token not in json.dumps(after) and after["old"] == before["old"]
    assert after["leaky"]["session"] == before["leaky"]["session"]
    changed = [m for m, was in zip(after["leaky"]["messages"], before["leaky"]["messages"]) if m != was]
    assert len(changed) == 1 and changed[0]["id"] == "l0" and changed[0]["content"].startswith("my token is [REDACTED")
    assert {k: v for k, v in changed[0].items() if k != "content"} == {
        k: v for k, v in before["leaky"]["messages"][0].items() if k != "content"}
    # watch/tail follow the home's own stores only (as for postgresql:// and sqlite:// stores): one line, exit 2
    tail = cli("session", "tail", "leaky", "--store", db.ro_url)
    assert (tail.exit_code, tail.stdout, tail.stderr.count("\n")) == (2, "", 1)
    assert "follows the home's stores" in tail.stderr and db.ro_password not in tail.stderr
    assert cli("usage", "--store", db.ro_url, "--json").exit_code == 0
    export = tmp_path / "leaky.json"
    assert cli("session", "export", "leaky", "--store", db.ro_url, "-o", export).exit_code == 0
    assert cli("session", "delete", "leaky", "--store", db.rw_url, "--yes", "--force").exit_code == 0
    assert set(library_view(oracle, db, tmp_path)) == {"old"}
    imported = cli("session", "import", export, "--store", db.rw_url)
    assert imported.exit_code == 0, imported.stderr
    assert library_view(oracle, db, tmp_path) == after
    pruned = cli("session", "prune", "--older-than", "365d", "--store", db.rw_url, "--yes")
    assert pruned.exit_code == 0, pruned.stderr
    assert library_view(oracle, db, tmp_path) == {"leaky": after["leaky"]}


def test_a_message_longer_than_mysqls_text_column_goes_across_whole(oracle, cli, db, tmp_path):
    """MySQL's TEXT holds 65,535 bytes: the column keeps the first 64 KiB (whole characters), the side table the
    rest, so the file comes back byte for byte."""
    src = tmp_path / "src"
    src.mkdir()
    long_text = "é☀" * 20_000 + " the end"  # 100,008 bytes of UTF-8
    doc = {"session_id": "long", "messages": [
        {"role": "user", "content": long_text, "timestamp": 1796050001.0, "metadata": {}},
        {"role": "assistant", "content": "short", "timestamp": 1796050002.0, "metadata": {}}],
        "created_at": "2026-12-01T10:00:00+00:00", "updated_at": "2026-12-01T10:00:02+00:00",
        "agent_name": "A", "user_id": "u", "metadata": {}}
    (src / "long.json").write_text(json.dumps(doc, indent=2, ensure_ascii=False), encoding="utf-8")
    moved = cli("session", "migrate", "--from", src, "--to", db.rw_url, "--all", "--verify")
    assert moved.exit_code == 0, moved.stderr
    seen = library_view(oracle, db, tmp_path, ["long"])["long"]
    column = seen["messages"][0]["content"]
    assert long_text.startswith(column) and 65_535 - 3 < len(column.encode()) <= 65_535
    assert seen["messages"][1]["content"] == "short"
    back = tmp_path / "back"
    assert cli("session", "migrate", "--from", db.ro_url, "--to", back, "--all").exit_code == 0
    assert tree(back) == tree(src)


def test_every_fixture_session_file_goes_json_to_mysql_to_json_byte_identical(cli, db, tmp_path):
    """The sessions of every shipped home (praisonaiagents 1.5.122, 1.6.157, 1.7.17 and praisonai 4.7.19's gateway
    and REPL files, encrypted ones included), each era in its own directory."""
    import shutil

    homes = {"1.7.17": PRAISONAI_FIXTURES / "home" / "sessions",
             "4.7.19": REPO / "tests" / "fixtures" / "praisonai-4.7.19-home" / "home" / "sessions"}
    for era in ("1.5.122", "1.6.157"):
        homes[era] = REPO / "tests" / "fixtures" / "praisonai-eras" / era / "home" / "sessions"
    for era, sessions in homes.items():
        src = tmp_path / era / "sessions"
        src.mkdir(parents=True)
        for f in sessions.glob("*.json"):
            shutil.copy(f, src / f.name)
        prefix = "e" + era.replace(".", "_") + "_"
        moved = cli("session", "migrate", "--from", src, "--to", db.rw_url, "--all", "--verify", "--table-prefix",
                    prefix, "--json")
        assert moved.exit_code == 0, (era, moved.stderr)
        assert moved.json()["copied"] == len(list(src.glob("*.json"))) > 0, era
        back = tmp_path / era / "back"
        out = cli("session", "migrate", "--from", db.ro_url, "--to", back, "--all", "--table-prefix", prefix)
        assert out.exit_code == 0, (era, out.stderr)
        assert tree(back) == tree(src), era


def test_a_change_waits_for_the_row_an_agent_holds_then_gives_up_with_nothing_written(cli, db, source):
    """Each change locks its session's row (SELECT ... FOR UPDATE): while another transaction holds it, praisonmem
    waits --lock-timeout, then stops (exit 4, one line); once it is released the change goes through."""
    assert cli("session", "migrate", "--from", source, "--to", db.rw_url, "my_chat").exit_code == 0
    holder = db.connect()
    try:
        holder.begin()
        holder.cursor().execute("SELECT 1 FROM praison_sessions WHERE session_id = 'my_chat' FOR UPDATE")
        held = cli("--lock-timeout", "1", "session", "delete", "my_chat", "--store", db.rw_url, "--yes", "--force")
        assert (held.exit_code, held.stdout, held.stderr.count("\n")) == (4, "", 1), held.stderr
        assert "locked by another writer" in held.stderr and db.rw_password not in held.stderr
    finally:
        holder.rollback()
        holder.close()
    assert count(db) == 1 and count(db, "praison_messages") > 0
    done = cli("session", "delete", "my_chat", "--store", db.rw_url, "--yes", "--force")
    assert done.exit_code == 0, done.stderr
    assert (count(db), count(db, "praison_messages"), count(db, "praison_praisonmem_extra")) == (0, 0, 0)
