"""praisonai 4.7.19's real ``JSONConversationStore`` and praisonmem on the same directory, both ways.

The store is written by the library itself (sessions with names, state, metadata, tool calls, NULLs, non-ASCII
text and a secret); praisonmem's ``session list``/``show`` must say what the library's ``list_sessions``,
``get_session`` and ``get_messages`` say, and after each praisonmem write the library's whole view (every
session, every message, the listing and its order) must differ from the one before by exactly that change.
"""

from __future__ import annotations

import copy
import json
import shutil
from datetime import datetime, timezone
from pathlib import Path

import pytest

from tests.conftest import PRAISONAI_FIXTURES

SECRET = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD"
INDEX = "_sessions_index.json"

WRITE = """
import sys
from praisonai.persistence.conversation.json_store import JSONConversationStore
from praisonai.persistence.conversation.base import ConversationMessage, ConversationSession
st = JSONConversationStore(path=sys.argv[1])
st.create_session(ConversationSession(session_id="chat-1", user_id="alice", agent_id="helper", name="First chat",
    state={"step": [1, 2]}, metadata={"k": 1}))
for i, (role, content, tc, tcid, md) in enumerate([
        ("user", "my key is %s keep it" % sys.argv[2], None, None, None),
        ("assistant", "", [{"id": "call_1", "type": "function",
                            "function": {"name": "weather", "arguments": "{\\"city\\": \\"Lisbon\\"}"}}], None, None),
        ("tool", "Sunny", None, "call_1", {"ms": 3}),
        ("assistant", "Il fait beau \\u2600 \\u00e9t\\u00e9", None, None, None)]):
    st.add_message("chat-1", ConversationMessage(role=role, content=content, tool_calls=tc, tool_call_id=tcid,
                                                 metadata=md))
st.create_session(ConversationSession(session_id="chat-2", user_id="bob", agent_id="helper"))
st.add_message("chat-2", ConversationMessage(role="user", content="second chat"))
st.create_session(ConversationSession(session_id="old:2001", user_id="bob", name="Ancient",
                                      created_at=1000000000.0, updated_at=1000000000.0))
st.create_session(ConversationSession(session_id="bare"))
"""

VIEW = """
import json, os, sys
from praisonai.persistence.conversation.json_store import JSONConversationStore
st = JSONConversationStore(path=sys.argv[1])
ids = sorted(n[:-5] for n in os.listdir(sys.argv[1]) if n.endswith(".json") and n != "_sessions_index.json")
out = {"list": [s.to_dict() for s in st.list_sessions(limit=10**6)],
       "alice": [s.session_id for s in st.list_sessions(user_id="alice")],
       "helper": [s.session_id for s in st.list_sessions(agent_id="helper")],
       "get": {i: st.get_session(i).to_dict() for i in ids},
       "messages": {i: [m.to_dict() for m in st.get_messages(i)] for i in ids}}
print(json.dumps(out))
"""

APPEND = """
import sys
from praisonai.persistence.conversation.json_store import JSONConversationStore
from praisonai.persistence.conversation.base import ConversationMessage
st = JSONConversationStore(path=sys.argv[1])
st.add_message(sys.argv[2], ConversationMessage(role="user", content=sys.argv[3]))
"""


@pytest.fixture
def store(oracle, tmp_path) -> Path:
    directory = tmp_path / "praisonai_conversations"
    oracle.run(WRITE, str(directory), SECRET)
    return directory


def view(oracle, directory: Path) -> dict:
    return oracle.json(VIEW, str(directory))


def files(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir()) if not p.name.endswith(".lock")}


def coherent(directory: Path) -> None:
    """The index names exactly the session files, each with its session's fields, as the library indexes them."""
    index = json.loads((directory / INDEX).read_text())
    stems = sorted(p.name[:-5] for p in directory.glob("*.json") if p.name != INDEX)
    assert sorted(index["sessions"]) == stems
    for sid, entry in index["sessions"].items():
        session = json.loads((directory / f"{sid}.json").read_text())["session"]
        assert {k: entry[k] for k in ("user_id", "agent_id", "name", "created_at")} == \
            {k: session[k] for k in ("user_id", "agent_id", "name", "created_at")}
    assert [p.name for p in directory.iterdir() if p.name.endswith(".tmp")] == []
    for path in directory.glob("*.json"):  # each file as the library serialises it
        text = path.read_text(encoding="ascii")
        assert text == json.dumps(json.loads(text), indent=2, default=str), path.name


def iso(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, timezone.utc).isoformat()


def relisted(before: dict, get: dict) -> dict:
    """The library's view with ``get`` as its sessions: the listing re-derived as list_sessions orders it."""
    out = copy.deepcopy(before)
    out["get"] = get
    order = [s["session_id"] for s in before["list"] if s["session_id"] in get] + \
        [i for i in get if i not in {s["session_id"] for s in before["list"]}]
    listed = sorted((get[i] for i in order), key=lambda s: s["updated_at"], reverse=True)
    out["list"] = listed
    out["alice"] = [s["session_id"] for s in listed if s["user_id"] == "alice"]
    out["helper"] = [s["session_id"] for s in listed if s["agent_id"] == "helper"]
    return out


def test_list_and_show_say_what_the_library_reads(oracle, store, cli):
    lib = view(oracle, store)
    listed = cli("session", "list", "--store", store, "--json")
    assert listed.exit_code == 0, listed.stderr
    rows = {r["session_id"]: r for r in json.loads(listed.stdout)}
    assert sorted(rows) == sorted(lib["get"]) == ["bare", "chat-1", "chat-2", "old:2001"]
    for sid, session in lib["get"].items():
        row = rows[sid]
        assert (row["agent_name"], row["user_id"], row["title"], row["message_count"], row["archived_count"]) == \
            (session["agent_id"], session["user_id"], session["name"], len(lib["messages"][sid]), 0)
        assert row["store"] == "conversations-json" and row["file"] == str(store / f"{sid}.json")
        shown = cli("session", "show", sid, "--store", store, "--json")
        assert shown.exit_code == 0, shown.stderr
        doc = json.loads(shown.stdout)
        assert (doc["session_id"], doc["agent_name"], doc["user_id"]) == (sid, session["agent_id"], session["user_id"])
        assert doc["created_at"] == iso(session["created_at"])
        got = [(m["role"], m["content"], m["timestamp"], m.get("tool_calls"), m.get("tool_call_id"))
               for m in doc["messages"]]
        assert got == [(m["role"], m["content"], m["created_at"], m["tool_calls"], m["tool_call_id"])
                       for m in lib["messages"][sid]]
    # nothing was written by reading: not a byte, not a lock file
    assert sorted(p.name for p in store.iterdir()) == ["_sessions_index.json", "bare.json", "chat-1.json",
                                                       "chat-2.json", "old:2001.json"]


def test_a_retitle_is_the_library_name_and_nothing_else(oracle, store, cli):
    before, raw = view(oracle, store), files(store)
    result = cli("session", "rename", "chat-1", "--title", "Weather talk", "--store", store)
    assert result.exit_code == 0, result.stderr
    after = view(oracle, store)
    stamp = after["get"]["chat-1"]["updated_at"]
    assert stamp > before["get"]["chat-1"]["updated_at"]
    get = copy.deepcopy(before["get"])
    get["chat-1"].update(name="Weather talk", updated_at=stamp)
    assert after == relisted(before, get)
    assert {k: v for k, v in files(store).items() if k not in ("chat-1.json", INDEX)} == \
        {k: v for k, v in raw.items() if k not in ("chat-1.json", INDEX)}
    coherent(store)


def test_a_rename_moves_the_session_to_the_new_id_and_nothing_else(oracle, store, cli):
    before, raw = view(oracle, store), files(store)
    result = cli("session", "rename", "chat-1", "weather:lisbon", "--force", "--store", store)
    assert result.exit_code == 0, result.stderr
    after = view(oracle, store)
    get = {("weather:lisbon" if k == "chat-1" else k): v for k, v in copy.deepcopy(before["get"]).items()}
    get["weather:lisbon"]["session_id"] = "weather:lisbon"
    expected = relisted(before, dict(sorted(get.items())))
    expected["messages"] = {("weather:lisbon" if k == "chat-1" else k): v for k, v in before["messages"].items()}
    for m in expected["messages"]["weather:lisbon"]:
        m["session_id"] = "weather:lisbon"
    expected["messages"] = dict(sorted(expected["messages"].items()))
    assert after == expected
    assert not (store / "chat-1.json").exists()
    index = json.loads((store / INDEX).read_text())["sessions"]
    assert list(index) == ["weather:lisbon", "chat-2", "old:2001", "bare"]  # in the old entry's place
    assert files(store)["chat-2.json"] == raw["chat-2.json"]
    coherent(store)


def test_delete_export_and_import_give_back_the_library_session_byte_for_byte(oracle, store, cli, tmp_path):
    before, raw = view(oracle, store), files(store)
    exported = cli("session", "export", "chat-1", "--store", store, "--output", tmp_path / "x.json")
    assert exported.exit_code == 0, exported.stderr
    deleted = cli("session", "delete", "chat-1", "--yes", "--force", "--store", store)
    assert deleted.exit_code == 0, deleted.stderr
    gone = view(oracle, store)
    get = {k: v for k, v in before["get"].items() if k != "chat-1"}
    expected = relisted(before, get)
    expected["messages"] = {k: v for k, v in before["messages"].items() if k != "chat-1"}
    assert gone == expected
    assert SECRET.encode() not in b"".join(files(store).values())  # not in the index, no copy left
    coherent(store)
    imported = cli("session", "import", tmp_path / "x.json", "--store", store)
    assert imported.exit_code == 0, imported.stderr
    assert view(oracle, store)["get"] == before["get"]
    assert view(oracle, store)["messages"] == before["messages"]
    assert files(store)["chat-1.json"] == raw["chat-1.json"]
    coherent(store)


def test_prune_deletes_only_the_old_session(oracle, store, cli):
    before, raw = view(oracle, store), files(store)
    result = cli("session", "prune", "--older-than", "365d", "--yes", "--store", store)
    assert result.exit_code == 0, result.stderr
    after = view(oracle, store)
    expected = relisted(before, {k: v for k, v in before["get"].items() if k != "old:2001"})
    expected["messages"] = {k: v for k, v in before["messages"].items() if k != "old:2001"}
    assert after == expected
    assert {k: v for k, v in files(store).items() if k != INDEX} == \
        {k: v for k, v in raw.items() if k not in (INDEX, "old:2001.json")}
    coherent(store)


def test_redact_changes_the_secret_s_text_only(oracle, store, cli):
    before, raw = view(oracle, store), files(store)
    result = cli("session", "redact", "chat-1", "--yes", "--store", store)
    assert result.exit_code == 0, result.stderr
    after = view(oracle, store)
    expected = copy.deepcopy(before)
    expected["messages"]["chat-1"][0]["content"] = "my key is [REDACTED:openai_api_key] keep it"
    expected["get"]["chat-1"]["updated_at"] = after["get"]["chat-1"]["updated_at"]
    expected = relisted(expected, expected["get"])
    assert after == expected
    assert SECRET.encode() not in b"".join(files(store).values())
    assert [p.name for p in store.iterdir() if SECRET.encode() in p.read_bytes()] == []
    assert files(store)["chat-2.json"] == raw["chat-2.json"]
    coherent(store)
    scan = cli("session", "scan", "--store", store)
    assert scan.exit_code == 0, scan.stdout


def test_secrets_are_found_by_session_scan_and_check_secrets(store, cli, monkeypatch):
    scan = cli("session", "scan", "--store", store, "--json")
    assert scan.exit_code == 1
    found = json.loads(scan.stdout)
    assert [(f["store"], f["session"], f["kind"]) for f in found] == \
        [("conversations-json", "chat-1", "openai_api_key")]
    checked = cli("check", "--secrets", store, "--json")
    assert checked.exit_code == 1
    assert [(f["session"], f["kind"]) for f in json.loads(checked.stdout)["findings"]] == [("chat-1", "openai_api_key")]
    monkeypatch.chdir(store.parent)  # no PATH: the library's default ./praisonai_conversations is scanned too
    default = cli("check", "--secrets", "--json")
    assert [(f["session"], f["kind"]) for f in json.loads(default.stdout)["findings"]] == [("chat-1", "openai_api_key")]
    redacted = cli("session", "export", "chat-1", "--redact", "standard", "--store", store)
    assert redacted.exit_code == 0 and SECRET not in redacted.stdout and "[REDACTED:openai_api_key]" in redacted.stdout


def test_a_migrate_in_adds_the_session_the_library_then_reads_whole(oracle, store, cli, tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(PRAISONAI_FIXTURES / "home" / "sessions" / "my_chat.json", src)
    before, raw = view(oracle, store), files(store)
    result = cli("session", "migrate", "--from", src, "--to", store, "--all")
    assert result.exit_code == 0, result.stderr
    after = view(oracle, store)
    source = json.loads((src / "my_chat.json").read_text())
    assert {k: v for k, v in after["get"].items() if k != "my_chat"} == before["get"]
    assert {k: v for k, v in after["messages"].items() if k != "my_chat"} == before["messages"]
    assert [(m["role"], m["content"]) for m in after["messages"]["my_chat"]] == \
        [(m["role"], m["content"]) for m in source["messages"]]
    assert after["get"]["my_chat"]["agent_id"] == source.get("agent_name")
    assert {k: v for k, v in files(store).items() if k not in (INDEX, "my_chat.json")} == \
        {k: v for k, v in raw.items() if k != INDEX}
    coherent(store)
    # the library appends to it; praisonmem shows the new turn after the migrated ones
    assert list(json.loads((store / "my_chat.json").read_text())) == ["session", "messages", "_praisonmem"]
    oracle.run(APPEND, str(store), "my_chat", "a turn the library added")
    # the library's own rewrite of the file keeps praisonmem's key (its loader ignores it)
    assert list(json.loads((store / "my_chat.json").read_text())) == ["session", "messages", "_praisonmem"]
    shown = json.loads(cli("session", "show", "my_chat", "--store", store, "--json").stdout)
    assert [m["content"] for m in shown["messages"]] == [m["content"] for m in source["messages"]] + \
        ["a turn the library added"]


def test_json_dir_to_the_store_and_back_is_byte_identical(oracle, cli, tmp_path):
    src = tmp_path / "src"
    shutil.copytree(PRAISONAI_FIXTURES / "home" / "sessions", src)
    conv, back = tmp_path / "conv", tmp_path / "back"
    there = cli("session", "migrate", "--from", src, "--to", f"jsonconv:{conv}", "--all", "--json")
    # two fixture ids are not ids the library's store takes (non-ASCII; '/', '#' and a space)
    assert there.exit_code == 1
    failed = {r["session_id"]: r["reason"] for r in json.loads(there.stdout)["records"] if r["action"] == "failed"}
    assert sorted(failed) == ["café-日本", "support_ticket__1234"]
    assert all("cannot be a JSON conversation-store file name" in r for r in failed.values())
    copied = sorted(p.name for p in src.glob("*.json") if p.stem not in failed)
    assert len(copied) == 10
    lib = view(oracle, conv)
    assert sorted(s["session_id"] for s in lib["list"]) == sorted(n[:-5] for n in copied)
    coherent(conv)
    home = cli("session", "migrate", "--from", conv, "--to", f"{back}/", "--all")
    assert home.exit_code == 0, home.stderr
    assert sorted(p.name for p in back.glob("*.json")) == copied
    for name in copied:
        assert (back / name).read_bytes() == (src / name).read_bytes(), name
