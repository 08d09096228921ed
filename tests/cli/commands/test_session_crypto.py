"""Encrypted sessions (praisonaiagents' EncryptedSessionStore) on the real 4.7.19 home: show, search and export
decrypt with the key (PRAISONAI_SESSION_KEY or --key-file) and stay opaque without it; writes keep every
encrypted value encrypted with the same key."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from praisonmem.core.sessions import crypto
from tests.helpers import snapshot
from tests.realhomes import expected, HOME_4719

ENC_1 = expected(HOME_4719)["encrypted"]["enc-1 (JSON, EncryptedSessionStore(DefaultSessionStore))"]
OTHER_KEY = "ZmVybmV0LWtleS10aGF0LWlzLW5vdC10aGUtb25lLTE="  # a valid Fernet key, not enc-1's
OPAQUE_NOTE = "praisonmem: 7 encrypted values not shown: set PRAISONAI_SESSION_KEY or give --key-file to decrypt them\n"


@pytest.fixture
def run(cli, gateway_home, monkeypatch):
    monkeypatch.delenv("PRAISONAI_SESSION_KEY", raising=False)
    return lambda *args: cli("--home", gateway_home.home, "session", *args)


@pytest.fixture
def with_key(gateway_home, monkeypatch):
    monkeypatch.setenv("PRAISONAI_SESSION_KEY", gateway_home.key)


def tokens(path) -> list[str]:
    """Every encrypted value in a session file, in order."""
    return list(crypto.encrypted_values(json.loads(path.read_text())))


def no_secret_in(*texts: str, key: str) -> None:
    for text in texts:
        assert key not in text


# ---------------------------------------------------------------- reading


def test_show_without_the_key_stays_opaque_and_says_why_once(run, gateway_home):
    result = run("show", "enc-1")
    assert result.exit_code == 0 and result.stderr == OPAQUE_NOTE
    assert result.stdout.count("‹encrypted content›") == 5
    assert "[metadata encrypted]" in result.stdout and "[tool calls encrypted]" in result.stdout
    assert "4111" not in result.stdout


def test_show_with_the_key_decrypts_content_tool_calls_and_metadata(run, gateway_home, with_key):
    result = run("show", "enc-1")
    assert (result.exit_code, result.stderr) == (0, "")
    for message in ENC_1:
        if message["content"]:
            assert message["content"] in result.stdout
    assert '→ tool call lookup({"card": "4111"}) [call_9]' in result.stdout
    assert "‹encrypted content›" not in result.stdout and result.stdout.count("[decrypted]") == 5
    turns = run("show", "enc-1", "--tail", "5", "--json").json()
    assert [(t["role"], t["content"]) for t in turns] == [(m["role"], m["content"]) for m in ENC_1]
    assert turns[1]["tool_calls"] == [{"id": "call_9", "name": "lookup", "arguments": '{"card": "4111"}'}]
    assert all(t["encrypted"] and t["decrypted"] for t in turns)
    no_secret_in(result.stdout, result.stderr, key=gateway_home.key)


def test_show_json_prints_the_stored_document_and_says_so(run, gateway_home, with_key):
    result = run("show", "enc-1", "--json")
    assert json.loads(result.stdout) == json.loads((gateway_home.sessions / "enc-1.json").read_text())
    assert result.stderr == ("praisonmem: --json prints the session as stored, its 7 encrypted values encrypted; "
                             "the transcript and --tail N --json decrypt them with the key\n")


def test_a_key_file_works_like_the_variable(run, gateway_home):
    keyed = run("show", "enc-1", "--key-file", gateway_home.key_file)
    assert keyed.exit_code == 0 and "PLANTED-TOKEN-ENC" in keyed.stdout and keyed.stderr == ""


@pytest.mark.parametrize("problem, code, message", [
    ("shared", 4, "key file is readable by others (mode 0644); make it private (chmod 600"),
    ("missing", 3, "no such key file"),
    ("directory", 2, "a key file must be a regular file"),
    ("empty", 2, "the key file is empty"),
])
def test_a_key_file_must_be_a_private_regular_file(run, gateway_home, tmp_path, problem, code, message):
    path = tmp_path / "key"
    if problem == "shared":
        path.write_text(gateway_home.key)
        path.chmod(0o644)
    elif problem == "directory":
        path.mkdir()
    elif problem == "empty":
        path.write_text("\n")
        path.chmod(0o600)
    result = run("show", "enc-1", "--key-file", path)
    assert (result.exit_code, result.stdout) == (code, "") and result.stderr.count("\n") == 1
    assert message in result.stderr
    no_secret_in(result.stderr, key=gateway_home.key)


def test_a_wrong_key_is_exit_4_with_one_line(run, gateway_home, monkeypatch):
    monkeypatch.setenv("PRAISONAI_SESSION_KEY", OTHER_KEY)
    for args in (["show", "enc-1"], ["search", "4111"], ["export", "enc-1", "--format", "jsonl"]):
        result = run(*args)
        assert (result.exit_code, result.stdout) == (4, ""), args
        assert result.stderr == ("praisonmem: error: session 'enc-1': the key from PRAISONAI_SESSION_KEY does not "
                                 "decrypt it (it was encrypted with another key)\n")
        no_secret_in(result.stderr, key=OTHER_KEY)


def test_a_value_that_is_no_fernet_key_is_a_usage_error(run, monkeypatch):
    monkeypatch.setenv("PRAISONAI_SESSION_KEY", "hunter2")
    result = run("show", "enc-1")
    assert result.exit_code == 2 and result.stderr.count("\n") == 1
    assert "the key from PRAISONAI_SESSION_KEY is not a session key" in result.stderr and "hunter2" not in result.stderr
    assert run("show", "bot_slack_7").exit_code == 0  # met only when a session is encrypted


def test_search_decrypts_with_the_key_and_counts_what_it_skipped_without(run, with_key, monkeypatch):
    plain = ("agent-chat-1", "sessions.db", 0, "Cancel my subscription, card 4111 1111 1111 1111 PLANTED-TOKEN-AGENTDB")
    hits = run("search", "4111", "--json").json()
    assert [(h["session_id"], h["store"], h["index"], h["snippet"]) for h in hits] == [
        ("enc-1", "json", 0, "my card is 4111 1111 1111 1111 PLANTED-TOKEN-ENC"), plain]
    in_db = run("search", "PLANTED-TOKEN-ENCDB", "--json").json()  # an encrypted sessions.db row
    assert [(h["session_id"], h["store"], h["index"]) for h in in_db] == [("enc-db-1", "sessions.db", 0)]
    monkeypatch.delenv("PRAISONAI_SESSION_KEY")
    blind = run("search", "4111", "--json")
    assert [(h["session_id"], h["store"], h["index"], h["snippet"]) for h in blind.json()] == [plain]
    assert blind.stderr == ("praisonmem: 7 encrypted messages in 2 sessions not searched: set "
                            "PRAISONAI_SESSION_KEY or give --key-file to decrypt and search them\n")


def test_export_jsonl_and_markdown_decrypt_json_keeps_what_is_stored(run, gateway_home, with_key):
    lines = [json.loads(line) for line in run("export", "enc-1", "--format", "jsonl").stdout.splitlines()]
    assert [(r["role"], r["content"]) for r in lines] == [(m["role"], m["content"]) for m in ENC_1]
    assert lines[0]["metadata"] == {"channel": "web"}
    assert lines[1]["tool_calls"] == ENC_1[1]["tool_calls"]
    markdown = run("export", "enc-1", "--format", "markdown")
    assert "my card is 4111 1111 1111 1111 PLANTED-TOKEN-ENC" in markdown.stdout and markdown.stderr == ""
    assert "*(encrypted)*" not in markdown.stdout
    lossless = run("export", "enc-1")
    assert list(crypto.encrypted_values(json.loads(lossless.stdout)["sessions"][0])) == \
        tokens(gateway_home.sessions / "enc-1.json")
    assert lossless.stderr == ("praisonmem: 7 encrypted values exported as stored (json is the lossless copy: "
                               "importing it restores them encrypted); jsonl and markdown decrypt them with the key\n")


def test_export_without_the_key_keeps_them_encrypted_and_says_so(run):
    markdown = run("export", "enc-1", "--format", "markdown")
    assert markdown.stdout.count("*(encrypted)*") == 5 and "*(tool calls encrypted)*" in markdown.stdout
    assert markdown.stderr == ("praisonmem: 7 encrypted values left encrypted: set PRAISONAI_SESSION_KEY or give "
                               "--key-file to decrypt them\n")


def test_without_cryptography_the_message_says_how_to_install_it(run, with_key, monkeypatch):
    crypto._fernet.cache_clear()
    monkeypatch.setitem(sys.modules, "cryptography", None)  # what `import cryptography` meets when it is absent
    monkeypatch.setitem(sys.modules, "cryptography.fernet", None)
    result = run("show", "enc-1")
    assert (result.exit_code, result.stdout) == (4, "")
    assert result.stderr == ("praisonmem: error: decrypting sessions needs the cryptography package: "
                             "pip install 'praisonmem[crypto]'\n")
    assert run("show", "bot_slack_7").exit_code == 0
    monkeypatch.delenv("PRAISONAI_SESSION_KEY")
    assert run("show", "enc-1").exit_code == 0  # opaque: nothing to import


IMPORTS = """
import sys
from praisonmem.cli.app import run
code = run(sys.argv[1:])
print(code, "cryptography" in sys.modules)
"""


@pytest.mark.parametrize("session, imported", [("bot_slack_7", False), ("enc-1", True)])
def test_cryptography_is_imported_only_when_an_encrypted_value_is_met(gateway_home, tmp_path, session, imported):
    env = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "PRAISONAI_SESSION_KEY": gateway_home.key}
    done = subprocess.run([sys.executable, "-c", IMPORTS, "--home", str(gateway_home.home), "session", "show",
                           session], capture_output=True, text=True, env=env, check=True)
    assert done.stdout.splitlines()[-1] == f"0 {imported}"


# ---------------------------------------------------------------- writing


def test_retitle_and_rename_copy_every_token_byte_for_byte(run, gateway_home):
    before = tokens(gateway_home.sessions / "enc-1.json")
    assert run("rename", "enc-1", "--title", "Card question (done)").exit_code == 0
    assert tokens(gateway_home.sessions / "enc-1.json") == before
    assert run("rename", "enc-1", "enc-2", "--force").exit_code == 0
    assert tokens(gateway_home.sessions / "enc-2.json") == before


def test_importing_plaintext_over_an_encrypted_session_needs_its_key(run, gateway_home, tmp_path):
    doc = json.loads((gateway_home.sessions / "enc-1.json").read_text())
    doc["messages"].append({"role": "user", "content": "PLANTED-IMPORTED-PLAIN", "timestamp": 1.0,
                            "metadata": {"channel": "import"}})
    payload = tmp_path / "payload.json"
    payload.write_text(json.dumps({"version": 1, "sessions": [doc]}))
    before = snapshot(gateway_home.home)
    refused = run("import", payload, "--on-conflict", "replace", "--yes")
    assert (refused.exit_code, refused.stdout) == (4, "") and refused.stderr.count("\n") == 1
    assert "the session is encrypted; writing new messages into it needs its key" in refused.stderr
    assert snapshot(gateway_home.home) == before
    wrong = tmp_path / "wrong.key"
    wrong.write_text(OTHER_KEY)
    wrong.chmod(0o600)
    assert run("import", payload, "--on-conflict", "replace", "--yes", "--key-file", wrong).exit_code == 4
    assert snapshot(gateway_home.home) == before
    done = run("import", payload, "--on-conflict", "replace", "--yes", "--key-file", gateway_home.key_file)
    assert done.exit_code == 0, done.stderr
    path = gateway_home.sessions / "enc-1.json"
    assert b"PLANTED-IMPORTED-PLAIN" not in path.read_bytes() and b"import" not in path.read_bytes()
    now = tokens(path)
    assert now[:7] == tokens(HOME_4719 / "home" / "sessions" / "enc-1.json") and len(now) == 9
    shown = run("show", "enc-1", "--tail", "1", "--json", "--key-file", gateway_home.key_file).json()
    assert shown[0]["content"] == "PLANTED-IMPORTED-PLAIN"


def test_a_store_write_never_puts_plaintext_into_an_encrypted_session(gateway_home):
    from praisonmem.core.errors import Refused
    from tests.helpers import rewrite

    path = gateway_home.sessions / "enc-1.json"
    before = path.read_bytes()

    def add_plaintext(doc):
        doc["messages"].append({"role": "user", "content": "leak", "timestamp": 2.0, "metadata": {}})
        return doc

    with pytest.raises(Refused, match=r"the session is encrypted, and messages\[5\] would be written with its "
                                      r"content in plaintext; nothing changed"):
        rewrite(path, add_plaintext)
    assert path.read_bytes() == before


def test_check_knows_encrypted_sessions_are_no_damage(cli, gateway_home):
    report = cli("check", gateway_home.sessions / "enc-1.json", "--json").json()
    assert [(f["severity"], f["code"], f["message"]) for f in report["findings"]] == [
        ("info", "session.encrypted", "5 of 5 messages encrypted (EncryptedSessionStore): readable only with the "
                                      "session key")]


ADOPT_KEY = "YWRvcHQtdGVzdC1rZXktMzItYnl0ZXMtbG9uZy4uLi4="  # a Fernet key for this test


def encrypt_file(path, key: str) -> None:
    """Encrypt every message of a session file as EncryptedSessionStore would have written it."""
    cipher = crypto.Key(key, "test").cipher()
    doc = json.loads(path.read_text())
    doc["messages"] = [crypto.seal_message(m, cipher) for m in doc["messages"]]
    path.write_text(json.dumps(doc, indent=2))


def test_adopt_moves_an_encrypted_history_token_for_token(cli, fixture_home):
    legacy = fixture_home / "sessions" / "history_8fe938c0.json"
    encrypt_file(legacy, ADOPT_KEY)
    before = tokens(legacy)
    moved = cli("--home", fixture_home, "session", "adopt", "Legacy Bot", "--json").json()[0]
    assert tokens(__import__("pathlib").Path(moved["target"])) == before and len(before) == 4


def test_adopt_merge_into_an_encrypted_history_encrypts_what_it_brings(cli, fixture_home, monkeypatch, tmp_path):
    from pathlib import Path

    legacy = fixture_home / "sessions" / "history_8fe938c0.json"
    plain = json.loads(legacy.read_text())
    target = Path(cli("--home", fixture_home, "session", "adopt", "Legacy Bot", "--copy", "--json").json()[0]["target"])
    encrypt_file(target, ADOPT_KEY)  # the workspace history is encrypted from now on
    sealed_before = tokens(target)
    plain["messages"].append({"role": "user", "content": "PLANTED-MERGED-TURN", "timestamp": 1.9e9, "metadata": {}})
    legacy.write_text(json.dumps(plain, indent=2))
    before = snapshot(fixture_home)
    refused = cli("--home", fixture_home, "session", "adopt", "Legacy Bot", "--merge")
    assert refused.exit_code == 4 and "the session is encrypted; writing new messages into it needs its key" in \
        refused.stderr
    assert snapshot(fixture_home) == before
    key_file = tmp_path / "k"
    key_file.write_text(ADOPT_KEY)
    key_file.chmod(0o600)
    done = cli("--home", fixture_home, "session", "adopt", "Legacy Bot", "--merge", "--key-file", key_file)
    assert done.exit_code == 0, done.stderr
    raw = target.read_bytes()
    assert b"PLANTED-MERGED-TURN" not in raw and b"(old version)" not in raw and b"continuing the legacy" not in raw
    now = tokens(target)
    assert now[:4] == sealed_before and len(now) == 5  # each turn once: the merge compares them decrypted
    shown = cli("--home", fixture_home, "session", "show", target, "--tail", "1", "--json", "--key-file",
                key_file).json()
    assert shown[0]["content"] == "PLANTED-MERGED-TURN"
