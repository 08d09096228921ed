"""adopt and rename against the real library: global scope and spilled turns."""

from __future__ import annotations

import json

from tests.helpers import SHA_LEGACY_BOT, era_home, spill
from tests.compat.conftest import last_json, run_library

RESUME = """
    import json
    from praisonaiagents import Agent
    from praisonaiagents.config import MemoryConfig
    agent = Agent(name="Legacy Bot", instructions="x", llm="gpt-4o-mini",
                  memory=MemoryConfig(history=True, user_id="erin"))
    agent._init_session_store()
    print(json.dumps({"session_id": agent._session_id, "history": [m["content"] for m in agent.chat_history]}))
"""


def test_a_global_scope_agent_keeps_its_legacy_history_when_adopt_is_run(cli, tmp_path, monkeypatch):
    home = era_home(tmp_path, "1.6.157")
    project = tmp_path / "project"
    project.mkdir()
    legacy = json.loads((home / "sessions" / f"{SHA_LEGACY_BOT}.json").read_text(encoding="utf-8"))
    before = last_json(run_library(RESUME, home=home, cwd=project, PRAISONAI_GLOBAL_SESSIONS="1"))
    assert before == {"session_id": SHA_LEGACY_BOT, "history": [m["content"] for m in legacy["messages"]]}

    monkeypatch.setenv("PRAISONAI_GLOBAL_SESSIONS", "1")
    monkeypatch.chdir(project)
    result = cli("--home", home, "session", "adopt", "Legacy Bot", "--json")
    assert result.exit_code == 0 and [c["action"] for c in result.json()] == ["skipped"]
    after = last_json(run_library(RESUME, home=home, cwd=project, PRAISONAI_GLOBAL_SESSIONS="1"))
    assert after == before


LOAD = """
    import json, os, sys
    from praisonaiagents.session.store import DefaultSessionStore
    from praisonaiagents.paths import get_sessions_dir, get_session_spill_dir
    store = DefaultSessionStore(session_dir=str(get_sessions_dir()))
    history = [m["content"] for m in store.get_chat_history(sys.argv[1])]
    print(json.dumps({"history": history, "spill": sorted(os.listdir(get_session_spill_dir()))}))
"""


def test_the_library_merges_spilled_turns_into_the_renamed_session(cli, fixture_home):
    spill(fixture_home, "my_chat", "my_chat", "a turn spilled while the disk was full")
    original = json.loads((fixture_home / "sessions" / "my_chat.json").read_text(encoding="utf-8"))
    assert cli("--home", fixture_home, "session", "rename", "my_chat", "kept", "--force").exit_code == 0
    state = last_json(run_library(LOAD, "kept", home=fixture_home))
    assert state["history"] == [m["content"] for m in original["messages"]] + ["a turn spilled while the disk was full"]
    assert not any(name.startswith(("my_chat.", "kept.")) for name in state["spill"])  # consumed by the library
