"""praisonai's JSON conversation store (``JSONConversationStore``) as a session store: recognition, the library's
file shape and serialisation, bad inputs (a torn session file, a torn or lying index, a path that is not a
directory), and a kill at any write call finished by the rerun.

The store files here are written as the library writes them (``json.dump(indent=2, default=str)``, or without
indent for ``pretty=False``); tests/compat/test_jsonconv_library.py has the real library write and read them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import refused, snapshot

SECRET = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD"
INDEX = "_sessions_index.json"


def lib_dumps(data: object, pretty: bool = True) -> str:
    return json.dumps(data, indent=2, default=str) if pretty else json.dumps(data, default=str)


def session(sid: str, *, user: str | None = "alice", agent: str | None = "helper", name: str | None = None,
            t: float = 1796183211.25) -> dict:
    return {"session_id": sid, "user_id": user, "agent_id": agent, "name": name, "state": None, "metadata": None,
            "created_at": t, "updated_at": t + 1.5}


def message(sid: str, n: int, role: str, content: str, t: float) -> dict:
    return {"id": f"{sid}-m{n}", "session_id": sid, "role": role, "content": content, "tool_calls": None,
            "tool_call_id": None, "metadata": None, "created_at": t}


def make_store(directory: Path, *, pretty: bool = True, index: bool = True) -> Path:
    """chat-1 (alice, titled, a secret), chat-2 (bob), as the library writes them."""
    directory.mkdir(parents=True, exist_ok=True)
    docs = {"chat-1": {"session": session("chat-1", name="First chat"),
                       "messages": [message("chat-1", 0, "user", f"my key {SECRET}", 1796183211.5),
                                    message("chat-1", 1, "assistant", "noted ☀", 1796183212.0)]},
            "chat-2": {"session": session("chat-2", user="bob", t=1796183300.0),
                       "messages": [message("chat-2", 0, "user", "second", 1796183300.5)]}}
    for sid, doc in docs.items():
        (directory / f"{sid}.json").write_text(lib_dumps(doc, pretty))
    if index:
        entries = {sid: {k: d["session"][k] for k in ("user_id", "agent_id", "name", "created_at", "updated_at")}
                   for sid, d in docs.items()}
        (directory / INDEX).write_text(lib_dumps({"sessions": entries}, pretty))
    return directory


def listed(cli, store: object) -> list[dict]:
    result = cli("session", "list", "--store", store, "--json")
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


# ---------------------------------------------------------------- recognition


def test_a_store_dir_is_recognised_by_its_index_and_the_index_is_no_session(cli, tmp_path):
    store = make_store(tmp_path / "convs")
    rows = listed(cli, store)
    assert sorted((r["session_id"], r["store"], r["agent_name"], r["user_id"], r["title"]) for r in rows) == [
        ("chat-1", "conversations-json", "helper", "alice", "First chat"),
        ("chat-2", "conversations-json", "helper", "bob", None)]


def test_without_an_index_the_files_shape_names_the_store(cli, tmp_path):
    store = make_store(tmp_path / "convs", index=False)
    assert {r["store"] for r in listed(cli, store)} == {"conversations-json"}
    assert not (store / INDEX).exists()  # reading wrote nothing


def test_an_empty_dir_stays_a_json_dir_unless_named_jsonconv(cli, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    src = tmp_path / "src"
    src.mkdir()
    (src / "s1.json").write_text(json.dumps({"session_id": "s1", "messages": [
        {"role": "user", "content": "hi", "timestamp": 1796183211.5, "metadata": {}}]}, indent=2))
    plain = cli("session", "migrate", "--from", src, "--to", empty, "--all")
    assert plain.exit_code == 0, plain.stderr
    assert sorted(p.name for p in empty.iterdir() if not p.name.endswith(".lock")) == ["s1.json"]
    assert "messages" in json.loads((empty / "s1.json").read_text()) and \
        "session" not in json.loads((empty / "s1.json").read_text())
    named = tmp_path / "named"
    named.mkdir()
    conv = cli("session", "migrate", "--from", src, "--to", f"jsonconv:{named}", "--all")
    assert conv.exit_code == 0, conv.stderr
    data = json.loads((named / "s1.json").read_text())
    # the library's two keys, then what its fields cannot hold (the layout) under praisonmem's own top-level key,
    # which the library's loader ignores: nothing of praisonmem's inside the session or message rows
    assert list(data) == ["session", "messages", "_praisonmem"]
    assert "_praisonmem" not in json.dumps([data["session"], data["messages"]])
    assert list(json.loads((named / INDEX).read_text())["sessions"]) == ["s1"]
    new = tmp_path / "praisonai_conversations"  # the library's default name, not there yet
    assert cli("session", "migrate", "--from", src, "--to", new, "--all").exit_code == 0
    assert (new / INDEX).is_file()
    assert {r["store"] for r in listed(cli, named)} == {"conversations-json"}


def test_jsonconv_naming_a_file_is_a_usage_error(cli, tmp_path):
    (tmp_path / "afile").write_text("x")
    line = refused(cli, tmp_path, "session", "list", "--store", f"jsonconv:{tmp_path / 'afile'}", code=2)
    assert line == f"praisonmem: error: {tmp_path / 'afile'}: not a directory (jsonconv: names a JSON " \
                   "conversation-store directory)\n"


# ---------------------------------------------------------------- the library's serialisation


def test_a_compact_store_stays_compact_and_untouched_files_stay_byte_identical(cli, tmp_path):
    store = make_store(tmp_path / "convs", pretty=False)
    chat2 = (store / "chat-2.json").read_bytes()
    result = cli("session", "rename", "chat-1", "--title", "Renamed", "--store", store)
    assert result.exit_code == 0, result.stderr
    data = json.loads((store / "chat-1.json").read_text())
    assert (store / "chat-1.json").read_text() == lib_dumps(data, pretty=False)
    assert data["session"]["name"] == "Renamed" and data["session"]["metadata"] is None
    assert [m["metadata"] for m in data["messages"]] == [None, None]
    index = json.loads((store / INDEX).read_text())
    assert (store / INDEX).read_text() == lib_dumps(index, pretty=False)
    assert index["sessions"]["chat-1"]["name"] == "Renamed"
    assert (store / "chat-2.json").read_bytes() == chat2
    assert oct((store / "chat-1.json").stat().st_mode & 0o777) == "0o600"
    assert sorted(p.name for p in store.iterdir()) == [INDEX, f"{INDEX}.lock", "chat-1.json", "chat-2.json"]


def test_read_commands_change_nothing(cli, tmp_path):
    store = make_store(tmp_path / "convs")
    before = snapshot(store)
    for args in (("session", "list"), ("session", "show", "chat-1"), ("session", "search", "noted"),
                 ("session", "scan"), ("session", "export", "chat-1")):
        cli(*args, "--store", store)
    assert cli("check", store).exit_code == 0
    assert snapshot(store) == before


def test_an_id_the_library_refuses_is_not_written(cli, tmp_path):
    store = make_store(tmp_path / "convs")
    before = snapshot(store)
    result = cli("session", "rename", "chat-1", "has space", "--force", "--store", store)
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == ("praisonmem: error: session id 'has space' cannot be a JSON conversation-store file "
                             "name (the library's ids: letters, digits, '_-:.', at most 128, no '..'); nothing "
                             "written (give it such an id with 'session rename' first)\n")
    assert {k: v for k, v in snapshot(store).items() if not k.endswith(".lock")} == before


# ---------------------------------------------------------------- bad inputs


def test_a_torn_session_file_is_reported_and_never_overwritten(cli, tmp_path):
    store = make_store(tmp_path / "convs")
    (store / "chat-2.json").write_bytes(b'{"session": {"session_id": "chat-2", "user')
    line = refused(cli, store, "session", "show", "chat-2", "--store", store, code=4)
    assert line.startswith(f"praisonmem: error: {store / 'chat-2.json'}: invalid JSON: unterminated string starting at line 1")
    cli("session", "rename", "chat-1", "--title", "x", "--store", store)  # the lock sidecar exists from now on
    for args in (("session", "rename", "chat-2", "--title", "x"), ("session", "rename", "chat-2", "c3", "--force"),
                 ("session", "redact", "chat-2", "--yes")):
        refused(cli, store, *args, "--store", store, code=4)
    rows = {r["session_id"]: r for r in listed(cli, store)}
    assert rows["chat-2"]["unreadable"] is True and rows["chat-1"]["title"] == "x"
    checked = cli("check", store, "--json")
    assert checked.exit_code == 1
    assert [(f["code"], Path(f["file"]).name) for f in json.loads(checked.stdout)["findings"]] == \
        [("conversation.parse", "chat-2.json")]
    # deleting it is no overwrite (as in a JSON directory): the file goes, and its index entry
    assert cli("session", "delete", "chat-2", "--yes", "--force", "--store", store).exit_code == 0
    assert list(json.loads((store / INDEX).read_text())["sessions"]) == ["chat-1"]


@pytest.mark.parametrize("text", ['{"sessions": {"chat-1": {', '{"sessions": []}', '[]'])
def test_an_index_that_does_not_parse_or_is_not_the_library_s_is_never_overwritten(cli, tmp_path, text):
    store = make_store(tmp_path / "convs")
    (store / INDEX).write_text(text)
    assert len(listed(cli, store)) == 2  # the files are still read
    cli("session", "list", "--store", store)
    line = refused(cli, tmp_path, "session", "delete", "chat-1", "--yes", "--force", "--store", store, code=4)
    assert f"{store / INDEX}:" in line
    found = json.loads(cli("check", store, "--json").stdout)["findings"]
    assert [f["code"] for f in found] == ["conversation.index"]
    assert "the library cannot open this store" in found[0]["message"]


def test_a_lying_index_is_reported_and_repaired_by_the_next_write(cli, tmp_path):
    store = make_store(tmp_path / "convs")
    index = json.loads((store / INDEX).read_text())
    index["sessions"]["ghost"] = dict(index["sessions"]["chat-2"])  # names a file that is not there
    del index["sessions"]["chat-2"]  # misses a file that is
    (store / INDEX).write_text(lib_dumps(index))
    checked = cli("check", store, "--json")
    assert checked.exit_code == 0  # warnings
    messages = [f["message"] for f in json.loads(checked.stdout)["findings"] if f["code"] == "conversation.index"]
    assert messages == [
        "names 1 session with no file (ghost); the library skips them; praisonmem's next write to the store "
        "repairs the index",
        "misses 1 session file (chat-2); the library's list_sessions does not show them; praisonmem's next "
        "write to the store repairs the index"]
    assert sorted(r["session_id"] for r in listed(cli, store)) == ["chat-1", "chat-2"]  # the files are the truth
    result = cli("session", "rename", "chat-1", "--title", "Fixed", "--store", store)
    assert result.exit_code == 0
    assert result.stdout == ("set the title of 'chat-1' to 'Fixed' [repaired _sessions_index.json: added 1 session "
                             "file it missed (chat-2); dropped 1 entry with no file (ghost)]\n")
    index = json.loads((store / INDEX).read_text())["sessions"]
    assert list(index) == ["chat-1", "chat-2"]
    assert index["chat-2"] == {k: session("chat-2", user="bob", t=1796183300.0)[k]
                               for k in ("user_id", "agent_id", "name", "created_at", "updated_at")}
    assert [f for f in json.loads(cli("check", store, "--json").stdout)["findings"]] == []


def test_a_missing_index_is_made_by_the_next_write(cli, tmp_path):
    store = make_store(tmp_path / "convs", index=False)
    assert cli("session", "delete", "chat-2", "--yes", "--force", "--store", store).exit_code == 0
    assert list(json.loads((store / INDEX).read_text())["sessions"]) == ["chat-1"]


# ---------------------------------------------------------------- a kill at any write call


def crash_home(home: Path, work: Path) -> None:
    make_store(home / "praisonai_conversations")
    src = home / "src"
    src.mkdir()
    (src / "my_chat.json").write_text(json.dumps({"session_id": "my_chat", "messages": [
        {"role": "user", "content": "zebracornish plans", "timestamp": 1796183400.5, "metadata": {}}],
        "created_at": "2026-12-02T03:50:00+00:00", "updated_at": "2026-12-02T03:50:01+00:00",
        "agent_name": "helper", "user_id": "carol", "metadata": {}}, indent=2, ensure_ascii=False))


def store_state(home: Path) -> dict[str, object]:
    """Every file of the store, parsed (one that does not parse fails here), the index coherent with them."""
    store = home / "praisonai_conversations"
    state = {p.name: json.loads(p.read_text()) for p in sorted(store.glob("*.json"))}
    stems = sorted(n[:-5] for n in state if n != INDEX)
    assert sorted(state[INDEX]["sessions"]) == stems
    return state


def untimed(state: dict) -> dict:
    """The state without the times a retitle or redaction stamps (the rerun's are later)."""
    out = json.loads(json.dumps(state))
    for name, data in out.items():
        if name == INDEX:
            for entry in data["sessions"].values():
                entry["updated_at"] = None
        else:
            data["session"]["updated_at"] = None
    return out


@pytest.mark.parametrize("args, done, removed, normalise", [
    (["session", "rename", "chat-1", "chat:one", "--force"], (3,), (), None),
    (["session", "rename", "chat-1", "--title", "Kill test"], (), (), untimed),
    (["session", "delete", "chat-1", "--yes", "--force"], (3,), (SECRET.encode(),), None),
    (["session", "redact", "chat-1", "--yes"], (), (SECRET.encode(),), untimed),
    (["session", "migrate", "--from", "src", "--to", "praisonai_conversations", "--all"], (), (), None),
], ids=["rename", "retitle", "delete", "redact", "migrate-in"])
def test_a_write_killed_at_any_call_is_finished_by_the_rerun(tmp_path, cli, monkeypatch, args, done, removed,
                                                            normalise):
    from tests.cli.commands.test_session_crash import Crash

    crash = Crash(tmp_path, cli, monkeypatch, crash_home, [*args, "--store", "praisonai_conversations"]
                  if args[1] != "migrate" else args, in_home=True)
    count = crash.run(store_state, done=done, removed=removed, normalise=normalise or (lambda s: s))
    assert count >= 10


def test_a_secret_in_a_title_leaves_no_copy_in_the_index_once_redacted(cli, tmp_path):
    store = make_store(tmp_path / "convs")
    assert cli("session", "rename", "chat-2", "--title", f"token {SECRET}", "--store", store).exit_code == 0
    assert SECRET in json.loads((store / INDEX).read_text())["sessions"]["chat-2"]["name"]
    result = cli("session", "redact", "chat-2", "--yes", "--store", store)
    assert result.exit_code == 0, result.stderr
    assert json.loads((store / INDEX).read_text())["sessions"]["chat-2"]["name"] == "token [REDACTED:openai_api_key]"
    assert [p.name for p in store.iterdir() if SECRET.encode() in p.read_bytes()] == ["chat-1.json"]
