"""adopt --merge of histories the library compacted itself, checked by the library.

Each side is written by praisonaiagents 1.7.17's default store with
PRAISONAI_SESSION_ACTIVE_WINDOW=4 (so it compacts: a [Session Summary] heads
the window, the rest is archived); praisonmem merges them; the library then
says what an agent resumes with, and takes the next turn.
"""

from __future__ import annotations

import json

from praisonmem.core.sessions import history_id, legacy_ids, workspace_id
from tests.compat.conftest import last_json, run_library

WINDOW = {"PRAISONAI_SESSION_ACTIVE_WINDOW": "4"}

WRITE_TURNS = """
    import json, sys, time
    from praisonaiagents.session import get_default_session_store
    store = get_default_session_store()
    sid, tag, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    store.set_agent_info(sid, agent_name="Bot", user_id="erin")
    for i in range(count):
        store.add_message(sid, "user" if i % 2 == 0 else "assistant", f"{tag} turn {i}")
        time.sleep(0.002)
        if sys.argv[4:] and i == int(sys.argv[4]):
            store.append_compaction_checkpoint(sid, f"{tag} checkpoint after turn {i}", tokens_before=900)
    print(json.dumps(store.get_working_history(sid)))
"""

RESUME_AND_TURN = """
    import json, sys
    from praisonaiagents.session import get_default_session_store
    store = get_default_session_store()
    sid = sys.argv[1]
    working = store.get_working_history(sid)
    store.add_message(sid, "user", "the next turn")
    session = store.get_session(sid)
    print(json.dumps({
        "working": working,
        "after": store.get_working_history(sid),
        "active": [m.content for m in session.messages],
        "archived": [m.content for m in session.archived_messages],
        "head_meta": session.messages[0].metadata,
    }))
"""


def _sides(tmp_path, legacy_turns=9, ws_turns=7, checkpoint_at=None):
    home, workdir = tmp_path / "home", tmp_path / "project"
    workdir.mkdir()
    legacy_id = legacy_ids("Bot")["sha256"]
    ws_id = history_id(workspace_id(workdir), "Bot")
    run_library(WRITE_TURNS, legacy_id, "legacy", str(legacy_turns), home=home, **WINDOW)
    extra = [] if checkpoint_at is None else [str(checkpoint_at)]
    run_library(WRITE_TURNS, ws_id, "ws", str(ws_turns), *extra, home=home, cwd=workdir, **WINDOW)
    sessions = home / "sessions"
    legacy = json.loads((sessions / f"{legacy_id}.json").read_text(encoding="utf-8"))
    ws = json.loads((sessions / f"{ws_id}.json").read_text(encoding="utf-8"))
    return home, workdir, ws_id, legacy, ws


def _summary_text(doc):
    head = doc["messages"][0]
    assert head["metadata"]["compaction"] is True  # the library compacted this side
    return head["content"].removeprefix("[Session Summary]\n"), head["metadata"]["compacted_count"]


def test_merging_two_compacted_histories_resumes_with_one_summary_and_the_newest_turns(cli, tmp_path):
    home, workdir, ws_id, legacy, ws = _sides(tmp_path)
    legacy_text, legacy_count = _summary_text(legacy)
    ws_text, ws_count = _summary_text(ws)
    assert (len(legacy["archived_messages"]), len(ws["archived_messages"])) == (5, 3)

    result = cli("--home", home, "session", "adopt", "Bot", "--merge", "--workspace", workdir, "--json")
    assert result.exit_code == 0, result.stderr
    assert [c["action"] for c in result.json()] == ["adopt-merged"]

    state = last_json(run_library(RESUME_AND_TURN, ws_id, home=home, cwd=workdir, **WINDOW))
    block = "Previous conversation: 4 messages\nMessage breakdown: {'user': 2, 'assistant': 2, 'tool': 0, 'system': 0}"
    summary = "[Session Summary]\n" + "\n---\n".join([legacy_text, block, ws_text])
    assert state["working"] == [{"role": "system", "content": summary}] + [
        {"role": "assistant" if i % 2 else "user", "content": f"ws turn {i}"} for i in range(3, 7)]

    # The next library turn carries the summary forward and archives an ordinary turn, never the summary.
    every_turn = [f"legacy turn {i}" for i in range(9)] + [f"ws turn {i}" for i in range(7)] + ["the next turn"]
    assert state["archived"] + state["active"][1:] == every_turn
    assert state["active"][0].startswith(summary + "\n---\n")
    assert state["head_meta"] == {"compaction": True, "compacted_count": legacy_count + 4 + ws_count + 1}
    assert state["after"][0]["content"] == state["active"][0]
    assert [m["content"] for m in state["after"][1:]] == ["ws turn 4", "ws turn 5", "ws turn 6", "the next turn"]


def test_merging_keeps_the_workspace_checkpoint_and_shows_the_adopted_turns(cli, tmp_path):
    home, workdir, ws_id, legacy, ws = _sides(tmp_path, ws_turns=6, checkpoint_at=4)
    assert ws["last_compaction"]["summary"] == "ws checkpoint after turn 4"
    result = cli("--home", home, "session", "adopt", "Bot", "--merge", "--workspace", workdir)
    assert result.exit_code == 0, result.stderr

    merged = json.loads((home / "sessions" / f"{ws_id}.json").read_text(encoding="utf-8"))
    state = last_json(run_library(RESUME_AND_TURN, ws_id, home=home, cwd=workdir, **WINDOW))
    # The checkpoint never saw the legacy turns, so the tail starts at the summary that covers them.
    assert merged["last_compaction"]["message_index"] == 0
    assert state["working"][0] == {"role": "system", "content": "ws checkpoint after turn 4"}
    assert state["working"][1]["content"] == merged["messages"][0]["content"]
    assert "Previous conversation: 4 messages" in state["working"][1]["content"]
    assert [m["content"] for m in state["working"][2:]] == [f"ws turn {i}" for i in range(2, 6)]
    every_turn = [f"legacy turn {i}" for i in range(9)] + [f"ws turn {i}" for i in range(6)] + ["the next turn"]
    assert state["archived"] + state["active"][1:] == every_turn
    assert state["after"][0] == {"role": "system", "content": "ws checkpoint after turn 4"}
    assert state["after"][-1] == {"role": "user", "content": "the next turn"}


def test_an_agent_resumes_a_merged_compacted_history(cli, tmp_path):
    home, workdir, ws_id, _, _ = _sides(tmp_path)
    assert cli("--home", home, "session", "adopt", "Bot", "--merge", "--workspace", workdir).exit_code == 0
    resumed = last_json(run_library("""
        import json
        from praisonaiagents import Agent
        from praisonaiagents.config import MemoryConfig
        agent = Agent(name="Bot", instructions="x", llm="gpt-4o-mini", memory=MemoryConfig(history=True, user_id="erin"))
        agent._init_session_store()
        print(json.dumps({"session_id": agent._session_id, "history": agent.chat_history}))
    """, home=home, cwd=workdir, **WINDOW))
    assert resumed["session_id"] == ws_id
    contents = [m["content"] for m in resumed["history"]]
    assert contents[0].startswith("[Session Summary]\n") and contents[1:] == [f"ws turn {i}" for i in range(3, 7)]
