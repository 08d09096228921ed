"""OpenAI-chat JSONL imported by praisonmem is what the real praisonaiagents 1.7.17 loads: its chat history
holds every message's role, content, tool calls and tool_call_id, in order."""

from __future__ import annotations

import json

from tests.cli.commands.test_session_interchange import PARALLEL, openai_view, validate_openai_chat_line
from tests.compat.conftest import last_json, run_library

LOAD = """
    import json, sys
    from praisonaiagents.session.store import DefaultSessionStore
    store = DefaultSessionStore(session_dir=sys.argv[1])
    print(json.dumps({sid: store.get_chat_history(sid) for sid in sys.argv[2:]}))
"""

WRITE = """
    import sys
    from praisonaiagents.session.store import DefaultSessionStore
    store = DefaultSessionStore(session_dir=sys.argv[1])
    store.add_message("lib-tools", "user", "Book two rooms")
    store.add_message("lib-tools", "assistant", "", tool_calls=[
        {"id": "c1", "type": "function", "function": {"name": "book", "arguments": "{\\"room\\": 1}"}},
        {"id": "c2", "type": "function", "function": {"name": "book", "arguments": "{\\"room\\": 2}"}}])
    store.add_message("lib-tools", "tool", "booked 1", tool_call_id="c1")
    store.add_message("lib-tools", "tool", "booked 2", tool_call_id="c2")
    store.add_message("lib-tools", "assistant", "Both rooms are booked.")
"""


def test_the_library_loads_imported_lines_as_they_were(cli, fixture_home, tmp_path):
    sessions = fixture_home / "sessions"
    (sessions / "parallel-tools.json").write_text(json.dumps(PARALLEL), encoding="utf-8")
    run_library(WRITE, str(sessions), home=fixture_home)
    train = tmp_path / "train.jsonl"
    result = cli("--home", fixture_home, "session", "export", "lib-tools", "history_ec9d38c8", "parallel-tools",
                 "--format", "openai-jsonl", "-o", train)
    assert result.exit_code == 0, result.stderr
    lines = train.read_text().splitlines()
    for line in lines:
        validate_openai_chat_line(line)  # what the library wrote exports in the fine-tuning format
    target = tmp_path / "target"
    (target / "sessions").mkdir(parents=True)
    assert cli("--home", target, "session", "import", train).exit_code == 0
    loaded = last_json(run_library(LOAD, str(target / "sessions"), "train-1", "train-2", "train-3", home=target))
    for n, line in enumerate(lines, 1):
        assert [openai_view(m) for m in loaded[f"train-{n}"]] == json.loads(line)["messages"], n
