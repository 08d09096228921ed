"""session adopt --from-workspace against the real library: a project that moved keeps its agent's history."""

from __future__ import annotations

import json

from tests.compat.conftest import last_json, run_library

CHAT = """
    import json, sys
    from tests.compat import fakellm
    fakellm.start()
    from praisonaiagents import Agent
    from praisonaiagents.config import MemoryConfig
    agent = Agent(name="Weather Bot", instructions="Be brief.", llm="gpt-4o-mini",
                  memory=MemoryConfig(history=True, user_id="t"))
    for text in sys.argv[1:]:
        agent.chat(text)
    print(json.dumps({"session_id": agent._session_id, "history": [m["content"] for m in agent.chat_history]}))
"""


def test_a_moved_project_resumes_its_history_after_adopt_from_workspace(cli, tmp_path, monkeypatch):
    home = tmp_path / "home"
    old = tmp_path / "old" / "proj"
    old.mkdir(parents=True)
    before = last_json(run_library(CHAT, "forecast for Lisbon?", home=home, cwd=old))
    assert len(before["history"]) == 2
    new = tmp_path / "new" / "proj"
    new.parent.mkdir()
    old.rename(new)

    stranded = last_json(run_library(CHAT, home=home, cwd=new))
    assert stranded["history"] == [] and stranded["session_id"] != before["session_id"]
    monkeypatch.chdir(new)
    result = cli("--home", home, "session", "adopt", "Weather Bot", "--from-workspace", old, "--merge", "--json")
    assert result.exit_code == 0, result.stderr
    assert [(c["action"], c["session_id"], c["new_session_id"]) for c in result.json()] == [
        ("adopt-moved", before["session_id"], stranded["session_id"])]  # the empty session the agent left is replaced

    resumed = last_json(run_library(CHAT, "and tomorrow?", home=home, cwd=new))
    assert resumed["session_id"] == stranded["session_id"]
    assert resumed["history"][:2] == before["history"] and len(resumed["history"]) == 4
    assert not (home / "sessions" / f"{before['session_id']}.json").exists()
    stored = json.loads((home / "sessions" / f"{resumed['session_id']}.json").read_text(encoding="utf-8"))
    assert stored["session_id"] == resumed["session_id"]
