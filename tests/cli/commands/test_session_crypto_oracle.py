"""Encrypted sessions praisonmem wrote are read by the real EncryptedSessionStore (praisonai 4.7.19's venv, with
its cryptography): same plaintext, new title, and no plaintext anywhere on disk."""

from __future__ import annotations

import json

from tests.indexstate import holding
from tests.realhomes import HOME_4719, expected

ENC_1 = expected(HOME_4719)["encrypted"]["enc-1 (JSON, EncryptedSessionStore(DefaultSessionStore))"]
READ = """
    import json, sys
    from praisonaiagents.session import EncryptedSessionStore
    from praisonaiagents.session.store import DefaultSessionStore
    sessions, key, sid = sys.argv[1:4]
    store = EncryptedSessionStore(DefaultSessionStore(session_dir=sessions), key=key)
    session = store.get_session(sid)
    print(json.dumps({"history": store.get_chat_history(sid), "title": session.metadata.get("title"),
                      "metadata": [m.metadata for m in session.messages]}))
"""
PLAINTEXTS = [b"my card is", b"PLANTED-TOKEN-ENC", b"Card noted", b"streaming partial", b"lookup"]  # in no file


def library_reads(oracle, gateway_home, sid: str) -> dict:
    return oracle.json(READ, gateway_home.sessions, gateway_home.key, sid, home=gateway_home.home)


def test_an_encrypted_session_retitled_by_praisonmem_still_decrypts_and_holds_no_plaintext(cli, oracle, gateway_home):
    assert cli("--home", gateway_home.home, "session", "rename", "enc-1", "--title", "Card question, solved"
               ).exit_code == 0
    got = library_reads(oracle, gateway_home, "enc-1")
    assert got["history"] == ENC_1 and got["title"] == "Card question, solved"
    assert got["metadata"][0] == {"channel": "web"}
    for text in PLAINTEXTS:
        assert holding(gateway_home.home, text) == [], text


def test_a_renamed_encrypted_session_decrypts_under_its_new_id(cli, oracle, gateway_home):
    assert cli("--home", gateway_home.home, "session", "rename", "enc-1", "enc-renamed", "--force").exit_code == 0
    assert library_reads(oracle, gateway_home, "enc-renamed")["history"] == ENC_1
    for text in PLAINTEXTS:
        assert holding(gateway_home.home, text) == [], text


def test_what_an_import_brings_into_an_encrypted_session_is_encrypted_with_its_key(cli, oracle, gateway_home,
                                                                                   tmp_path):
    doc = json.loads((gateway_home.sessions / "enc-1.json").read_text())
    doc["messages"].append({"role": "user", "content": "PLANTED-IMPORTED-PLAIN", "timestamp": 1796032900.0,
                            "metadata": {"channel": "import"}})
    doc["messages"].append({"role": "assistant", "content": "", "timestamp": 1796032901.0, "metadata": {},
                            "tool_calls": [{"id": "call_x", "type": "function",
                                            "function": {"name": "refund", "arguments": "{}"}}]})
    payload = tmp_path / "payload.json"
    payload.write_text(json.dumps(doc))
    result = cli("--home", gateway_home.home, "session", "import", payload, "--on-conflict", "replace", "--yes",
                 "--key-file", gateway_home.key_file)
    assert result.exit_code == 0, result.stderr
    got = library_reads(oracle, gateway_home, "enc-1")
    assert got["history"] == ENC_1 + [
        {"role": "user", "content": "PLANTED-IMPORTED-PLAIN"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "call_x", "type": "function",
                                                             "function": {"name": "refund", "arguments": "{}"}}]}]
    assert got["metadata"][5] == {"channel": "import"}
    for text in PLAINTEXTS + [b"PLANTED-IMPORTED-PLAIN", b"refund", b"call_x", b"channel"]:
        assert holding(gateway_home.home / "sessions" / "enc-1.json", text) == [], text


def test_an_adopt_merge_into_an_encrypted_history_decrypts_with_the_library(cli, oracle, fixture_home, tmp_path):
    from praisonmem.core.sessions import crypto

    key = "YWRvcHQtdGVzdC1rZXktMzItYnl0ZXMtbG9uZy4uLi4="
    cipher = crypto.Key(key, "test").cipher()
    legacy = fixture_home / "sessions" / "history_8fe938c0.json"
    plain = json.loads(legacy.read_text())
    target = cli("--home", fixture_home, "session", "adopt", "Legacy Bot", "--copy", "--json").json()[0]["target"]
    doc = json.loads(open(target).read())
    doc["messages"] = [crypto.seal_message(m, cipher) for m in doc["messages"]]
    open(target, "w").write(json.dumps(doc, indent=2))
    plain["messages"].append({"role": "user", "content": "one more turn", "timestamp": 1.9e9, "metadata": {}})
    legacy.write_text(json.dumps(plain, indent=2))
    key_file = tmp_path / "k"
    key_file.write_text(key)
    key_file.chmod(0o600)
    assert cli("--home", fixture_home, "session", "adopt", "Legacy Bot", "--merge", "--key-file", key_file
               ).exit_code == 0
    sid = json.loads(open(target).read())["session_id"]
    got = oracle.json(READ, fixture_home / "sessions", key, sid, home=fixture_home)
    assert [m["content"] for m in got["history"]] == [m["content"] for m in plain["messages"]]


# ---------------------------------------------------------------- every store that can hold an encrypted session

ENC_DB_1 = expected(HOME_4719)["encrypted"]["enc-db-1 (sessions.db, EncryptedSessionStore(SqliteTranscriptStore))"]
READ_DB = """
    import json, sys
    from praisonaiagents.session import EncryptedSessionStore
    from praisonaiagents.session.sqlite_transcript_store import SqliteTranscriptStore
    db, key, sid = sys.argv[1:4]
    store = EncryptedSessionStore(SqliteTranscriptStore(db_path=db), key=key)
    session = store.get_session(sid)
    print(json.dumps({"history": store.get_chat_history(sid), "title": session.metadata.get("title")}))
"""
DB_PLAINTEXTS = [b"my IBAN is", b"DE89 3704", b"PLANTED-TOKEN-ENCDB"]


def test_an_encrypted_database_session_retitled_by_praisonmem_still_decrypts_and_holds_no_plaintext(
        cli, oracle, gateway_home):
    for text in DB_PLAINTEXTS:
        assert holding(gateway_home.home, text) == [], text
    result = cli("--home", gateway_home.home, "session", "rename", "enc-db-1", "--title", "IBAN question")
    assert result.exit_code == 0, result.stderr
    got = oracle.json(READ_DB, gateway_home.db, gateway_home.key, "enc-db-1", home=gateway_home.home)
    assert got == {"history": ENC_DB_1, "title": "IBAN question"}
    for text in DB_PLAINTEXTS:
        assert holding(gateway_home.home, text) == [], text


def test_plaintext_never_goes_into_an_encrypted_database_session(cli, gateway_home, tmp_path):
    row = json.loads(cli("--home", gateway_home.home, "session", "show", "enc-db-1", "--json").stdout)
    row["messages"].append({"role": "user", "content": "PLANTED-PLAIN-INTO-DB", "timestamp": 1796032900.0,
                            "metadata": {}})
    payload = tmp_path / "p.json"
    payload.write_text(json.dumps(row))
    before = holding(gateway_home.home, b"PLANTED-PLAIN-INTO-DB")
    refused = cli("--home", gateway_home.home, "session", "import", payload, "--store", "sessions.db",
                  "--on-conflict", "replace", "--yes")
    assert (refused.exit_code, refused.stdout) == (4, "")
    assert refused.stderr == ("praisonmem: error: session 'enc-db-1': the session is encrypted; writing new messages "
                              "into it needs its key (PRAISONAI_SESSION_KEY or --key-file), so they are stored "
                              "encrypted too; nothing changed\n")
    assert before == holding(gateway_home.home, b"PLANTED-PLAIN-INTO-DB") == []
    done = cli("--home", gateway_home.home, "session", "import", payload, "--store", "sessions.db",
               "--on-conflict", "replace", "--yes", "--key-file", gateway_home.key_file)
    assert done.exit_code == 0, done.stderr
    assert holding(gateway_home.home, b"PLANTED-PLAIN-INTO-DB") == []
    shown = cli("--home", gateway_home.home, "session", "show", "enc-db-1", "--key-file", gateway_home.key_file)
    assert "PLANTED-PLAIN-INTO-DB" in shown.stdout


def test_an_encrypted_session_in_a_project_store_is_read_and_retitled_encrypted(cli, oracle, gateway_home):
    # the TUI's project store is a DefaultSessionStore on its directory: EncryptedSessionStore wraps it as any
    moved = gateway_home.project_store / "enc-1.json"
    moved.write_bytes((gateway_home.sessions / "enc-1.json").read_bytes())
    (gateway_home.sessions / "enc-1.json").unlink()
    moved.chmod(0o600)
    shown = cli("--home", gateway_home.home, "session", "show", "enc-1", "--key-file", gateway_home.key_file)
    assert shown.exit_code == 0 and "\nStore     project:8ccfb8a2\n" in shown.stdout
    assert "my card is 4111 1111 1111 1111 PLANTED-TOKEN-ENC" in shown.stdout
    hits = cli("--home", gateway_home.home, "session", "search", "my card is", "--json", "--key-file",
               gateway_home.key_file).json()
    assert [(h["session_id"], h["store"], h["index"]) for h in hits if "my card is 4111" in h["snippet"]] == [
        ("enc-1", "project:8ccfb8a2", 0)]
    assert cli("--home", gateway_home.home, "session", "rename", "enc-1", "--title", "Moved", "--store",
               "project:8ccfb8a2").exit_code == 0
    got = oracle.json(READ, gateway_home.project_store, gateway_home.key, "enc-1", home=gateway_home.home)
    assert got["history"] == ENC_1 and got["title"] == "Moved"
    for text in PLAINTEXTS:  # nor in the project's sessions_index.db, which the retitle refreshed
        assert holding(gateway_home.home, text) == [], text
