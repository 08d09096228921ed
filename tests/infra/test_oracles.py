"""The oracle venv (tests/oracles.py): skip/fail rules, and that it really is praisonai 4.7.19."""

from __future__ import annotations

import json
import os
import sqlite3
import sys

import pytest

from tests import oracles
from tests.realhomes import CONVERSATIONS_4719, HOME_4719, PROJECT_ID, expected


def test_unset_skips_and_required_fails(monkeypatch):
    monkeypatch.delenv("PRAISONMEM_ORACLE_PYTHON", raising=False)
    monkeypatch.delenv("PRAISONMEM_REQUIRE_ORACLES", raising=False)
    with pytest.raises(pytest.skip.Exception, match="PRAISONMEM_ORACLE_PYTHON is not set"):
        oracles.require_oracle()
    monkeypatch.setenv("PRAISONMEM_REQUIRE_ORACLES", "1")
    with pytest.raises(pytest.fail.Exception, match="PRAISONMEM_REQUIRE_ORACLES=1 but PRAISONMEM_ORACLE_PYTHON"):
        oracles.require_oracle()


def test_a_wrong_interpreter_always_fails(monkeypatch, tmp_path):
    monkeypatch.delenv("PRAISONMEM_REQUIRE_ORACLES", raising=False)
    monkeypatch.setenv("PRAISONMEM_ORACLE_PYTHON", str(tmp_path / "nope" / "python"))
    with pytest.raises(pytest.fail.Exception, match="is not an executable"):
        oracles.require_oracle()
    # the test venv itself has no praisonai: not the pinned oracle
    monkeypatch.setenv("PRAISONMEM_ORACLE_PYTHON", sys.executable)
    with pytest.raises(pytest.fail.Exception, match=r"has \{'praisonai': None"):
        oracles.require_oracle()


def test_the_oracle_is_the_pinned_venv(oracle):
    versions = oracle.versions()
    assert versions["praisonai"] == "4.7.19" and versions["praisonaiagents"] == "1.7.17"
    assert versions["cryptography"] and versions["psycopg2-binary"]


def test_a_failing_snippet_raises_with_its_stderr(oracle):
    with pytest.raises(oracles.OracleError, match="ZeroDivisionError"):
        oracle.run("1 / 0")
    assert oracle.run("import sys; sys.exit(3)", check=False).returncode == 3


def test_snippets_get_args_stdin_and_the_isolated_environment(oracle, tmp_path):
    got = oracle.json("""
        import json, os, sys
        payload = json.load(sys.stdin)
        print("noise first")
        print(json.dumps({"argv": sys.argv[1:], "payload": payload, "home": os.environ["HOME"],
                          "praisonai_home": os.environ.get("PRAISONAI_HOME"), "cwd": os.getcwd(),
                          "tests_importable": __import__("importlib.util").util.find_spec("tests.compat.fakellm") is not None}))
    """, "a b", "c", payload={"x": [1, "é"]}, home=tmp_path / "h", cwd=tmp_path)
    assert got == {"argv": ["a b", "c"], "payload": {"x": [1, "é"]}, "home": os.environ["HOME"],
                   "praisonai_home": str(tmp_path / "h"), "cwd": str(tmp_path), "tests_importable": True}


def test_the_real_conversation_store_reads_the_fixture_db(oracle, conversations_db):
    got = oracle.json("""
        import json, sys
        from praisonai.persistence.conversation.sqlite import SQLiteConversationStore
        st = SQLiteConversationStore(path=sys.argv[1], auto_create_tables=False)
        out = {"list_sessions": [s.to_dict() for s in st.list_sessions(limit=100)]}
        out["get_messages"] = {s["session_id"]: [m.to_dict() for m in st.get_messages(s["session_id"])]
                               for s in out["list_sessions"]}
        print(json.dumps(out))
    """, conversations_db)
    want = expected(CONVERSATIONS_4719)
    assert got["list_sessions"] == want["list_sessions"]
    assert got["get_messages"] == want["get_messages"]


def test_the_real_stores_read_the_gateway_home_and_decrypt_with_its_key(oracle, gateway_home):
    got = oracle.json("""
        import json, sys
        from praisonaiagents.session import EncryptedSessionStore
        from praisonaiagents.session.sqlite_transcript_store import SqliteTranscriptStore
        from praisonaiagents.session.store import DefaultSessionStore
        from praisonai_code.cli.utils.project import resolve_project_identity
        s, key, proj = sys.argv[1:4]
        ts = SqliteTranscriptStore(session_dir=s)
        print(json.dumps({
            "list": ts.list_sessions(limit=1000),
            "enc-1": EncryptedSessionStore(DefaultSessionStore(session_dir=s), key=key).get_chat_history("enc-1"),
            "enc-db-1": EncryptedSessionStore(ts, key=key).get_chat_history("enc-db-1"),
            "project": list(resolve_project_identity(proj)),
        }))
    """, gateway_home.sessions, gateway_home.key, gateway_home.project, home=gateway_home.home)
    want = expected(HOME_4719)
    assert got["list"] == want["sqlite_transcript_store"]["list_sessions"]
    assert got["enc-1"] == want["encrypted"]["enc-1 (JSON, EncryptedSessionStore(DefaultSessionStore))"]
    assert got["enc-1"][0]["content"] == "my card is 4111 1111 1111 1111 PLANTED-TOKEN-ENC"
    assert got["enc-db-1"][0]["content"].endswith("PLANTED-TOKEN-ENCDB")
    assert got["project"] == [PROJECT_ID, "git-remote"]


def test_postgres_conversation_store_writes_what_psycopg_reads(oracle, pg):
    """Both fixtures together: the real psycopg2-based store in the oracle venv, read back here."""
    from tests.pgcluster import require_psycopg

    psycopg = require_psycopg()
    oracle.run("""
        import sys
        from praisonai.persistence.conversation.base import ConversationMessage, ConversationSession
        from praisonai.persistence.conversation.postgres import PostgresConversationStore
        st = PostgresConversationStore(url=sys.argv[1])
        st.create_session(ConversationSession(session_id="s1", user_id="u", agent_id="Bot", name="N",
                                              metadata={"zz": 1, "aa": 2}, created_at=10.5, updated_at=11.5))
        st.add_message("s1", ConversationMessage(id="m1", role="user", content="café", created_at=12.25))
        st.close()
    """, pg.rw_url)
    with psycopg.connect(pg.ro_url) as conn:
        assert conn.execute("SELECT session_id, user_id, agent_id, name, metadata::text, created_at, updated_at "
                            "FROM public.praison_sessions").fetchall() == [
            ("s1", "u", "Bot", "N", json.dumps({"aa": 2, "zz": 1}), 10.5, 11.5)]
        assert conn.execute("SELECT id, session_id, role, content, created_at FROM public.praison_messages"
                            ).fetchall() == [("m1", "s1", "user", "café", 12.25)]


def test_fixture_db_matches_what_sqlite_reads_here(conversations_db):
    """No oracle needed: the expected file agrees with the raw rows (ids and order of messages)."""
    con = sqlite3.connect(f"file:{conversations_db}?mode=ro&immutable=1", uri=True)
    ids = [r[0] for r in con.execute("SELECT id FROM praison_messages WHERE session_id = 'direct-1' ORDER BY rowid")]
    assert ids == ["m0", "m1", "m2", "m3", "tie-b", "tie-a"]
    want = expected(CONVERSATIONS_4719)["get_messages"]["direct-1"]
    assert sorted(m["id"] for m in want) == sorted(ids)
