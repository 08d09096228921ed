"""`session export --format openai-jsonl|sharegpt` and `session import` of OpenAI-chat JSONL."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import snapshot

# ---------------------------------------------------------------- OpenAI's chat fine-tuning format, as documented
# (platform.openai.com/docs/guides/fine-tuning, "Example format" and "Fine-tuning with tool calling"): one JSON
# object a line with "messages" (and optionally "tools", "parallel_tool_calls", "functions"); a message has a role
# of system, user, assistant or tool; system and user have content (user: text or content parts) and an optional
# name; an assistant has content (text, or null when it calls tools), optional tool_calls, name, weight (0 or 1);
# a tool call is {"id", "type": "function", "function": {"name", "arguments": "<JSON text>"}}; a tool message has
# content and the tool_call_id of a call an earlier assistant message made; every example has an assistant message.

LINE_KEYS = {"messages", "tools", "parallel_tool_calls", "functions"}
MESSAGE_KEYS = {"system": {"role", "content", "name"}, "user": {"role", "content", "name"},
                "assistant": {"role", "content", "name", "tool_calls", "weight", "refusal"},
                "tool": {"role", "content", "tool_call_id"}}


def validate_openai_chat_line(line: str) -> None:
    example = json.loads(line)
    assert isinstance(example, dict) and set(example) <= LINE_KEYS and "messages" in example, example
    messages = example["messages"]
    assert isinstance(messages, list) and messages
    called: set[str] = set()
    for message in messages:
        assert isinstance(message, dict) and message.get("role") in MESSAGE_KEYS, message
        role = message["role"]
        assert set(message) <= MESSAGE_KEYS[role], message
        assert "content" in message or "tool_calls" in message, message
        if "name" in message:
            assert isinstance(message["name"], str)
        content = message.get("content")
        if role == "system":
            assert isinstance(content, str)
        elif role == "user":
            assert isinstance(content, str) or (isinstance(content, list) and all(
                isinstance(p, dict) and p.get("type") in ("text", "image_url") for p in content))
        elif role == "assistant":
            assert content is None or isinstance(content, str)
            assert message.get("weight", 1) in (0, 1)
            if not message.get("tool_calls"):
                assert isinstance(content, str) and content
            for call in message.get("tool_calls") or []:
                assert set(call) == {"id", "type", "function"} and call["type"] == "function", call
                assert isinstance(call["id"], str) and call["id"]
                assert set(call["function"]) == {"name", "arguments"} and isinstance(call["function"]["name"], str)
                json.loads(call["function"]["arguments"])  # the arguments are JSON text
                called.add(call["id"])
        else:
            assert isinstance(content, str) and isinstance(message["tool_call_id"], str)
            assert message["tool_call_id"] in called, "a tool result answers an earlier call"
    assert any(m["role"] == "assistant" for m in messages)


PARALLEL = {
    "session_id": "parallel-tools", "created_at": "2026-11-30T10:00:00+00:00", "updated_at": "2026-11-30T10:00:05+00:00",
    "agent_name": "Trip Bot", "user_id": "t", "metadata": {}, "archived_messages": [
        {"role": "user", "content": "earlier question", "timestamp": 1.0, "metadata": {}},
        {"role": "assistant", "content": "earlier answer", "timestamp": 2.0, "metadata": {}}],
    "messages": [
        {"role": "system", "content": "[Session Summary] earlier", "timestamp": 3.0, "metadata": {}},
        {"role": "user", "content": "Weather in Lisbon and Porto? \u2603 \"quoted\"", "timestamp": 4.0, "metadata": {}},
        {"role": "assistant", "content": "", "timestamp": 5.0, "metadata": {}, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "weather", "arguments": "{\"city\": \"Lisbon\"}"}},
            {"id": "call_2", "type": "function", "function": {"name": "weather", "arguments": "{\"city\": \"Porto\"}"}}]},
        {"role": "tool", "content": "Lisbon: 24C", "timestamp": 6.0, "metadata": {}, "tool_call_id": "call_1"},
        {"role": "tool", "content": "Porto: 19C", "timestamp": 7.0, "metadata": {}, "tool_call_id": "call_2"},
        {"role": "assistant", "content": "Lisbon 24C, Porto 19C.", "timestamp": 8.0, "metadata": {}}]}


@pytest.fixture
def home(fixture_home):
    (fixture_home / "sessions" / "parallel-tools.json").write_text(json.dumps(PARALLEL), encoding="utf-8")
    return fixture_home


def openai_view(message: dict) -> dict:
    """What the round trip keeps of a stored message: role, content, tool calls, tool_call_id."""
    return {k: message[k] for k in ("role", "content", "tool_calls", "tool_call_id") if k in message}


def test_a_session_with_tool_calls_exports_valid_openai_chat_lines(cli, home, gateway_home):
    result = cli("--home", home, "session", "export", "history_ec9d38c8", "parallel-tools", "--format", "openai-jsonl")
    assert result.exit_code == 0 and result.stderr == ""
    lines = result.stdout.splitlines()
    assert len(lines) == 2
    for line in lines:
        validate_openai_chat_line(line)
    assert json.loads(lines[0]) == {"messages": [
        {"role": "user", "content": "What is the weather in Paris?"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "call_abc123", "type": "function", "function": {
            "name": "weather", "arguments": "{\"city\": \"Paris\"}"}}]},
        {"role": "tool", "content": "Sunny in Paris, 21C", "tool_call_id": "call_abc123"},
        {"role": "assistant", "content": "The tool said: Sunny in Paris, 21C"}]}
    assert json.loads(lines[1])["messages"] == [openai_view(m) for m in PARALLEL["messages"]]
    # the gateway's sessions.db (a tool call written by SqliteTranscriptStore) validates too
    db = cli("--home", gateway_home.home, "session", "export", "agent-chat-1", "--store", "sessions.db",
             "--format", "openai-jsonl")
    assert db.exit_code == 0
    validate_openai_chat_line(db.stdout)


def test_every_fixture_session_exports_as_a_valid_line(cli, home):
    result = cli("--home", home, "session", "export", "--all", "--format", "openai-jsonl", "--no-system")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert len(lines) == 12  # 13 sessions, one of them a user message only
    assert result.stderr == "praisonmem: skipped session 7ca18a8d-7365-46f5-9df9-26d536f25633: no assistant message\n"
    for line in lines:
        validate_openai_chat_line(line)


def test_options_choose_the_system_prompt_and_archived_turns(cli, home):
    def messages(*flags):
        result = cli("--home", home, "session", "export", "parallel-tools", "--format", "openai-jsonl", *flags)
        assert result.exit_code == 0, result.stderr
        return json.loads(result.stdout)["messages"]

    stored = [openai_view(m) for m in PARALLEL["messages"]]
    archived = [openai_view(m) for m in PARALLEL["archived_messages"]]
    assert messages("--archived") == archived + stored
    assert messages("--no-system") == stored[1:]
    assert messages("--system-prompt", "Be brief.") == [{"role": "system", "content": "Be brief."}] + stored
    assert messages("--system-prompt", "Be brief.", "--no-system", "--archived") == \
        [{"role": "system", "content": "Be brief."}] + archived + stored[1:]
    wrong = cli("--home", home, "session", "export", "parallel-tools", "--archived")
    assert wrong.exit_code == 2 and wrong.stdout == ""
    assert wrong.stderr == ("praisonmem: error: --archived, --system-prompt and --no-system apply to --format "
                            "openai-jsonl and sharegpt (json keeps everything)\n")


def test_sharegpt_export(cli, home):
    result = cli("--home", home, "session", "export", "parallel-tools", "--format", "sharegpt", "--no-system")
    assert result.exit_code == 0
    assert json.loads(result.stdout) == [{"id": "parallel-tools", "conversations": [
        {"from": "human", "value": "Weather in Lisbon and Porto? \u2603 \"quoted\""},
        {"from": "function_call", "value": json.dumps([{"name": "weather", "arguments": {"city": "Lisbon"}},
                                                       {"name": "weather", "arguments": {"city": "Porto"}}])},
        {"from": "observation", "value": "Lisbon: 24C"},
        {"from": "observation", "value": "Porto: 19C"},
        {"from": "gpt", "value": "Lisbon 24C, Porto 19C."}]}]


def test_encrypted_and_empty_sessions_are_skipped_with_a_note(cli, gateway_home, tmp_path):
    out = tmp_path / "train.jsonl"
    result = cli("--home", gateway_home.home, "session", "export", "enc-1", "bot_telegram_42",
                 "--store", "json", "--format", "openai-jsonl", "-o", out, "--json")
    assert result.exit_code == 0
    assert result.stderr == "praisonmem: skipped session enc-1: encrypted messages\n"
    summary = result.json()
    assert summary["skipped"] == [{"session_id": "enc-1", "reason": "encrypted messages"}]
    assert summary["count"] == 1 and summary["sessions"] == ["bot_telegram_42"]
    assert len(out.read_text().splitlines()) == 1
    tui = cli("--home", gateway_home.home, "session", "export", "db5b5fab", "--store", "unified",  # a REPL/TUI file
              "--format", "openai-jsonl", "-o", tmp_path / "tui.jsonl", "--json")
    assert tui.exit_code == 0
    assert tui.stderr == "praisonmem: skipped session db5b5fab: no assistant message\n"
    assert tui.json()["skipped"] == [{"session_id": "db5b5fab", "reason": "no assistant message"}]
    assert tui.json()["count"] == 0 and (tmp_path / "tui.jsonl").read_text() == ""
    keyed = cli("--home", gateway_home.home, "session", "export", "enc-1", "--store", "json", "--key-file",
                gateway_home.key_file, "--format", "openai-jsonl", "-o", tmp_path / "enc.jsonl", "--json")
    assert keyed.exit_code == 0, keyed.stderr  # with the key it is exported, decrypted, if it has an assistant turn
    assert keyed.json()["count"] + len(keyed.json()["skipped"]) == 1
    assert "praisonai:enc:v1:" not in (tmp_path / "enc.jsonl").read_text()


def test_json_to_openai_jsonl_to_json_keeps_every_message(cli, home, tmp_path):
    """The round trip: each session's messages, role, content, tool calls and order, through openai-jsonl."""
    train = tmp_path / "train.jsonl"
    summary = cli("--home", home, "session", "export", "--all", "--format", "openai-jsonl", "-o", train, "--json")
    assert summary.exit_code == 0
    exported = summary.json()["sessions"]
    assert len(exported) == 12 and "parallel-tools" in exported and "history_ec9d38c8" in exported
    everything = {d["session_id"]: d for d in cli("--home", home, "session", "export", "--all", "--json").json()[
        "sessions"]}
    source = [everything[sid] for sid in exported]
    target = tmp_path / "target"
    (target / "sessions").mkdir(parents=True)
    imported = cli("--home", target, "session", "import", train, "--json")
    assert imported.exit_code == 0, imported.stderr
    assert [c["session_id"] for c in imported.json()] == [f"train-{n}" for n in range(1, len(source) + 1)]
    back = {d["session_id"]: d for d in cli("--home", target, "session", "export", "--all", "--json").json()["sessions"]}
    for n, doc in enumerate(source, 1):
        assert [openai_view(m) for m in back[f"train-{n}"]["messages"]] == [openai_view(m) for m in doc["messages"]], \
            doc["session_id"]
    # and again: the imported sessions export to the same lines
    again = cli("--home", target, "session", "export", "--all", "--format", "openai-jsonl").stdout
    by_id = dict(zip([f"train-{n}" for n in range(1, len(source) + 1)], train.read_text().splitlines()))
    assert sorted(again.splitlines()) == sorted(by_id.values())


def test_import_names_lines_by_prefix_and_writes_private_library_shaped_files(cli, home, tmp_path):
    line = {"messages": [{"role": "user", "content": "hi", "name": "alice"},
                         {"role": "assistant", "content": "hello", "weight": 0}]}
    source = tmp_path / "chats.jsonl"
    source.write_text(json.dumps(line) + "\n\n" + json.dumps(line) + "\n")
    result = cli("--home", home, "session", "import", source, "--id-prefix", "ft")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines() == ["imported ft-1 (ft-1.json)", "imported ft-3 (ft-3.json)"]
    doc = json.loads((home / "sessions" / "ft-1.json").read_text())
    assert [{k: m[k] for k in ("role", "content", "metadata")} for m in doc["messages"]] == [
        {"role": "user", "content": "hi", "metadata": {"name": "alice"}},
        {"role": "assistant", "content": "hello", "metadata": {"weight": 0}}]
    assert list(doc["messages"][0]) == ["role", "content", "timestamp", "metadata"]
    assert (home / "sessions" / "ft-1.json").stat().st_mode & 0o777 == 0o600
    exported = cli("--home", home, "session", "export", "ft-1", "--format", "openai-jsonl").stdout
    assert json.loads(exported) == line  # name and weight come back
    one = tmp_path / "one.jsonl"
    one.write_text(json.dumps(line))  # a one-line file, no newline: the default prefix is the file's stem
    assert cli("--home", home, "session", "import", one).stdout == "imported one-1 (one-1.json)\n"
    again = cli("--home", home, "session", "import", one)
    assert again.exit_code == 4 and "already exist" in again.stderr


BAD = [
    (b'{"messages": [{"role": "user", "content": "a"}]}\n{"messages": [\n', "line 2: not JSON"),
    (b'{"messages": [{"role": "user", "content": "a"}]}\n[1, 2]\n', "line 2: not an OpenAI chat example"),
    (b'{"messages": [{"role": "bot", "content": "a"}]}\n', "line 1: messages[0] has role 'bot', not one of"),
    (b'{"messages": [{"role": "user", "content": {"x": 1}}]}\n', "line 1: messages[0]: content is an object"),
    (b'{"messages": [{"role": "tool", "content": "r"}]}\n', "line 1: messages[0]: a tool message needs the "
                                                            "tool_call_id"),
    (b'{"messages": [{"role": "assistant", "content": null, "tool_calls": [{"id": "c"}]}]}\n',
     "line 1: messages[0]: tool_calls[0] is not"),
    (b'{"messages": [{"role": "user", "content": "a", "tool_calls": []}]}\n', "only an assistant message has"),
    (b'{"messages": []}\n', "line 1: 'messages' is empty"),
    (b'{"messages": [{"role": "user", "content": "a"}]}\n{"messages": [1]}\n', "line 2: messages[0] is a number"),
]


@pytest.mark.parametrize("raw, message", BAD, ids=[m for _, m in BAD])
def test_a_bad_line_is_one_error_line_exit_2_and_nothing_written(cli, home, tmp_path, raw, message):
    source = tmp_path / "bad.jsonl"
    source.write_bytes(raw)
    before = snapshot(home)
    result = cli("--home", home, "session", "import", source)
    assert result.exit_code == 2 and result.stdout == ""
    assert len(result.stderr.splitlines()) == 1, result.stderr
    assert result.stderr.startswith(f"praisonmem: error: {source}: ") and message in result.stderr, result.stderr
    assert snapshot(home) == before


def test_an_empty_jsonl_from_stdin_is_refused(cli, home, monkeypatch):
    import io
    import sys

    monkeypatch.setattr(sys, "stdin", type("In", (), {"buffer": io.BytesIO(b"\n\n")})())
    before = snapshot(home)
    result = cli("--home", home, "session", "import", "-")
    assert result.exit_code == 2 and len(result.stderr.splitlines()) == 1
    assert result.stderr.startswith("praisonmem: error: -: not a praisonmem or PraisonAI session export")
    assert snapshot(home) == before


def test_stdin_lines_are_named_stdin(cli, home, monkeypatch):
    import io
    import sys

    line = json.dumps({"messages": [{"role": "user", "content": "x"}, {"role": "assistant", "content": "y"}]})
    monkeypatch.setattr(sys, "stdin", type("In", (), {"buffer": io.BytesIO(f"{line}\n{line}\n".encode())})())
    result = cli("--home", home, "session", "import", "-", "--dry-run")
    assert result.exit_code == 0
    assert result.stdout.splitlines() == ["would import stdin-1 (stdin-1.json)", "would import stdin-2 (stdin-2.json)"]
    assert not (home / "sessions" / "stdin-1.json").exists()
