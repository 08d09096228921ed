"""migrate against the real library: on copies of the era fixtures, after
``migrate --yes`` a real praisonaiagents 1.7.17 Agent in that workspace resumes the old history, FileMemory
finds the old episodic entries and memories, and the SQLite memory of a named user finds its old rows; before
it, the same calls find nothing."""

from __future__ import annotations

import json
import shutil

import pytest

from tests.compat.conftest import last_json, run_library
from tests.eras import era_full_home, era_workspace

READ = """
    import json
    from praisonaiagents import Agent
    from praisonaiagents.config import MemoryConfig
    from praisonaiagents.memory.file_memory import FileMemory
    from praisonaiagents.memory.memory import Memory
    out = {"history": {}}
    for name in ("Legacy Bot", "Café ✓ 日本", None):
        agent = Agent(name=name, instructions="x", llm="gpt-4o-mini",
                      memory=MemoryConfig(history=True, user_id="erin"))
        agent._init_session_store()
        out["history"][name or "<unnamed>"] = {"session_id": agent._session_id,
                                               "turns": [m["content"] for m in agent.chat_history]}
    fm = FileMemory(user_id="alice")
    out["episodic"] = [i.content for i in fm.get_episodic(date="2026-03-05")]
    out["search"] = [h["item"].get("content") for h in fm.search("dark mode", limit=5)]
    mem = Memory({"provider": "sqlite", "user_id": "alice"})
    out["sqlite"] = [r["text"] for r in mem.search_short_term("green tea", limit=5)]
    out["sqlite"] += [r["text"] for r in mem.search_long_term("Acme", limit=5)]
    print(json.dumps(out, ensure_ascii=False))
"""


@pytest.mark.parametrize("era", ["1.5.122", "1.6.157"])
def test_after_migrate_the_library_finds_the_old_history_episodes_and_memories(cli, tmp_path, monkeypatch, era):
    home = era_full_home(tmp_path, "1.5.122", "1.6.157")
    repo = era_workspace(tmp_path, era)
    # what the old files hold, read before anything runs (the library's own reads may write)
    episode = json.loads((repo / ".praisonai/memory/alice/episodic/2026-3-5.json").read_text("utf-8"))[0]["content"]

    check = tmp_path / "before"  # the same files, for the library to show what it finds before the migration
    shutil.copytree(home, check / "home")
    shutil.copytree(repo, check / "repo", symlinks=True)
    stranded = last_json(run_library(READ, home=check / "home", cwd=check / "repo"))
    assert {n: h["turns"] for n, h in stranded["history"].items()} == {"Legacy Bot": [], "Café ✓ 日本": [],
                                                                        "<unnamed>": []}
    assert stranded["episodic"] == [] and stranded["sqlite"] == []

    monkeypatch.chdir(repo)
    result = cli("--home", home, "migrate", "--yes", "--json")
    assert result.exit_code == 0, result.stderr
    adopted = {c["changes"][0]["new_session_id"]: c for c in result.json() if c["kind"] == "history.name_only"}
    assert len(adopted) == 3

    after = last_json(run_library(READ, home=home, cwd=repo))
    for name, seen in after["history"].items():
        assert seen["session_id"] in adopted, name
        stored = json.loads((home / "sessions" / f"{seen['session_id']}.json").read_text("utf-8"))
        assert seen["turns"] == [m["content"] for m in stored["messages"]] and seen["turns"], name
    legacy_turns = [m["content"] for era_ in ("1.5.122", "1.6.157") for m in json.loads(
        (tmp_path / "before" / "home" / "sessions" / {"1.5.122": "history_e60a461d.json",
                                                      "1.6.157": "history_8fe938c0.json"}[era_]).read_text("utf-8")
    )["messages"]]
    resumed = after["history"]["Legacy Bot"]["turns"]
    stored = json.loads((home / "sessions" / f"{after['history']['Legacy Bot']['session_id']}.json").read_text("utf-8"))
    assert sorted(resumed + [m["content"] for m in stored.get("archived_messages", [])]) == sorted(legacy_turns)
    assert after["episodic"] == [episode]
    assert "User prefers dark mode" in after["search"]
    assert after["sqlite"] == ["User likes green tea", "User works at Acme"]
