"""``forget`` on praisonai 4.7.19's SQL conversation stores, written and read back by the real
``PostgresConversationStore`` / ``MySQLConversationStore`` (oracle venv) on throwaway servers: alice's sessions
go whole (messages and praisonmem's side-table rows with them), bob's read back unchanged, and the server's
residue search finds a planted leftover by table and column, never by its text."""

from __future__ import annotations

import json

import pytest

from praisonmem.core.forget.model import Subject, SubjectKind, Where
from praisonmem.core.forget.servers import ConversationServer, forget_stores
from tests.mariadbserver import require_pymysql
from tests.pgcluster import require_psycopg

WRITE = """
import json, sys
kind, url = sys.argv[1], sys.argv[2]
from praisonai.persistence.conversation.base import ConversationMessage, ConversationSession
if kind == "pg":
    from praisonai.persistence.conversation.postgres import PostgresConversationStore as S
else:
    from praisonai.persistence.conversation.mysql import MySQLConversationStore as S
st = S(url=url)
for sid, user, agent, texts in json.loads(sys.argv[3]):
    st.create_session(ConversationSession(session_id=sid, user_id=user, agent_id=agent, name="chat " + sid,
                                          created_at=1796050000.0, updated_at=1796050100.0))
    for i, text in enumerate(texts):
        st.add_message(sid, ConversationMessage(id=f"{sid}-m{i}", role="user" if i % 2 == 0 else "assistant",
                                                content=text, created_at=1796050000.0 + i))
st.close()
print("{}")
"""

READ = """
import json, sys
kind, url = sys.argv[1], sys.argv[2]
if kind == "pg":
    from praisonai.persistence.conversation.postgres import PostgresConversationStore as S
else:
    from praisonai.persistence.conversation.mysql import MySQLConversationStore as S
st = S(url=url, auto_create_tables=False)
out = {s.session_id: {"user": s.user_id, "messages": [m.content for m in st.get_messages(s.session_id)]}
       for s in st.list_sessions(limit=1000)}
st.close()
print(json.dumps(out))
"""

SESSIONS = [
    ["alice-chat-one", "alice", "helper", ["Alice keeps her savings at Banco Azul", "Noted, Alice's bank is Azul"]],
    ["alice-chat-two", "alice", "planner", ["Alice flies to Oslo on the ninth"]],
    ["bob-chat-one", "bob", "helper", ["Bob's locker code is 4471 forever", "Noted, Bob's locker code"]],
]


@pytest.fixture(params=["pg", "mysql"])
def server(request, oracle):
    if request.param == "pg":
        require_psycopg()
        db = request.getfixturevalue("pg")
        url = db.rw_url
    else:
        require_pymysql()
        db = request.getfixturevalue("mysql")
        url = db.rw_url
        oracle.require("mysql-connector-python")
    oracle.json(WRITE, request.param, url, json.dumps(SESSIONS))

    class Server:
        kind = request.param

        def __init__(self) -> None:
            self.url = url
            self.db = db

        def read(self) -> dict:
            return oracle.json(READ, request.param, url)

    return Server()


def test_forget_user_removes_alices_sessions_and_the_library_reads_bobs_unchanged(server):
    before = server.read()
    store = ConversationServer(server.url)
    plan = store.plan(Subject(SubjectKind.user, "alice"))
    assert plan.unreachable is None and plan.files == []
    assert [(e.key, e.what) for e in plan.erasures] == [
        ("session:alice-chat-one", "session alice-chat-one, 2 messages"),
        ("session:alice-chat-two", "session alice-chat-two, 1 messages")]
    # the proof's needles: the session id and each message, never a text bob's session also holds
    assert plan.erasures[0].texts == ("alice-chat-one", "Alice keeps her savings at Banco Azul",
                                      "Noted, Alice's bank is Azul")
    needles = [t for e in plan.erasures for t in e.texts]
    assert sorted(store.residue(needles)) == sorted(
        ["praison_messages.content", "praison_messages.id", "praison_messages.session_id",
         "praison_sessions.session_id", "praison_sessions.name"])
    # matched as text, not as a LIKE pattern: '%' and '_' are no wildcards
    assert store.residue(["Alice keeps%her_savings"]) == []
    assert store.erase(plan) == 2
    after = server.read()
    assert after == {"bob-chat-one": before["bob-chat-one"]}
    assert store.plan(Subject(SubjectKind.user, "alice")).erasures == []
    assert store.residue(needles) == []
    assert store.erase(plan) == 2  # a rerun: what is gone counts as done
    assert server.read() == after
    store.close()


def test_before_takes_only_sessions_last_updated_earlier(server):
    from datetime import datetime, timezone

    store = ConversationServer(server.url)
    updated = 1796050100.0  # every session's updated_at, as the library stored it
    early = Subject(SubjectKind.user, "alice", before=datetime.fromtimestamp(updated, timezone.utc))
    assert store.plan(early).erasures == []
    late = Subject(SubjectKind.user, "alice", before=datetime.fromtimestamp(updated + 1, timezone.utc))
    assert [e.key for e in store.plan(late).erasures] == ["session:alice-chat-one", "session:alice-chat-two"]
    store.close()


def test_forget_session_and_agent(server):
    store = ConversationServer(server.url)
    plan = store.plan(Subject(SubjectKind.agent, "planner"))
    assert [e.key for e in plan.erasures] == ["session:alice-chat-two"]
    store.erase(plan)
    plan = store.plan(Subject(SubjectKind.session, "bob-chat-one"))
    assert [e.key for e in plan.erasures] == ["session:bob-chat-one"]
    store.erase(plan)
    assert sorted(server.read()) == ["alice-chat-one"]
    store.close()


def test_residue_finds_a_leftover_in_the_side_table(server, cli):
    """A session with what the library's columns cannot hold keeps it in praisonmem's side table: its text found
    there is named (table and column), and the erase removes those rows with the session."""
    store = ConversationServer(server.url)
    secret = "Alice has passport number X1234567"
    extra = json.dumps({"role": "user", "content": secret})
    if server.kind == "pg":
        server.db.psql("CREATE TABLE praison_praisonmem_extra (session_id VARCHAR(255) NOT NULL REFERENCES "
                       "praison_sessions(session_id) ON DELETE CASCADE, message_id VARCHAR(255) NOT NULL, archived "
                       "SMALLINT NOT NULL DEFAULT 0, json TEXT NOT NULL, PRIMARY KEY (session_id, message_id)); "
                       f"INSERT INTO praison_praisonmem_extra VALUES ('alice-chat-one', 'x1', 0, '{extra}'); "
                       f'GRANT ALL ON praison_praisonmem_extra TO "{server.db.rw_user}"')
    else:
        server.db.sql("CREATE TABLE praison_praisonmem_extra (session_id VARCHAR(255) NOT NULL, message_id "
                      "VARCHAR(255) NOT NULL, archived TINYINT NOT NULL DEFAULT 0, json LONGTEXT NOT NULL, PRIMARY "
                      "KEY (session_id, message_id), FOREIGN KEY (session_id) REFERENCES praison_sessions(session_id) "
                      f"ON DELETE CASCADE) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4; INSERT INTO praison_praisonmem_extra "
                      f"VALUES ('alice-chat-one', 'x1', 0, '{extra}')")
    plan = store.plan(Subject(SubjectKind.user, "alice"))
    assert secret in plan.erasures[0].texts
    assert store.residue([secret]) == ["praison_praisonmem_extra.json"]
    store.erase(plan)
    assert store.residue([secret]) == []
    store.close()


def test_an_unreachable_server_is_a_plan_with_the_reason_and_no_password(server):
    db = server.db
    url = db.unreachable_url
    [conv] = [s for s in forget_stores(Where(paths=None, urls=(url,))) if s.store.startswith("conversation")]
    plan = conv.plan(Subject(SubjectKind.user, "alice"))
    assert plan.unreachable and plan.erasures == []
    assert db.rw_password not in plan.unreachable and db.rw_password not in plan.location
    assert "***" in plan.location
    assert conv.residue(["Alice keeps her savings at Banco Azul"]) is None


def test_an_encrypted_message_is_a_needle_by_its_stored_text_and_with_the_key_by_its_clear_text(oracle, server):
    from cryptography.fernet import Fernet

    from praisonmem.core.sessions import Key

    secret = "Alice's encrypted diary entry about Lisbon"
    good, other = Fernet.generate_key(), Fernet.generate_key()
    token = Key(good.decode(), "test").cipher().encrypt(secret)
    oracle.json(WRITE, server.kind, server.url, json.dumps([["alice-sealed-01", "alice", "helper", [token]]]))
    subject = Subject(SubjectKind.session, "alice-sealed-01")
    plain = ConversationServer(server.url).plan(subject)
    assert plain.erasures[0].texts == ("alice-sealed-01", token)
    assert plain.notes == ["encrypted messages: looked for by their stored (encrypted) text only; no session key "
                           "given"] and plain.unverifiable is None
    keyed = ConversationServer(server.url, key=good).plan(subject)
    assert keyed.erasures[0].texts == ("alice-sealed-01", token, secret) and keyed.notes == []
    wrong = ConversationServer(server.url, key=other).plan(subject)
    assert wrong.unverifiable and "does not decrypt" in wrong.unverifiable and secret not in wrong.unverifiable
