"""`praisonmem usage` over a home the real praisonaiagents 1.7.17 and praisonai 4.7.19 wrote with known token
counts: the loopback LLM (tests/compat/fakellm.py) answers every request with 11 prompt and 7 completion tokens,
so the test knows each session's usage without reading what praisonmem reads."""

from __future__ import annotations

import pytest

from tests.helpers import snapshot

WRITE = """
    import json, os, sys
    from pathlib import Path
    from tests.compat import fakellm
    fakellm.start()
    from praisonaiagents import Agent
    from praisonaiagents.config import MemoryConfig
    from praisonaiagents.session.store import DefaultSessionStore
    from praisonaiagents.session.sqlite_transcript_store import SqliteTranscriptStore
    from praisonai_code.cli.session.unified import UnifiedSession, UnifiedSessionStore

    sessions = Path(os.environ["PRAISONAI_HOME"]) / "sessions"
    plan = json.loads(sys.argv[1])
    out = {}
    for sid, name, user, questions in plan["agents"]:  # the non-streaming chat path counts tokens
        agent = Agent(name=name, instructions="Be brief.", llm="gpt-4o-mini",
                      memory=MemoryConfig(history=True, session_id=sid, user_id=user))
        for q in questions:
            agent.chat(q)
        out[sid] = agent.cost_summary
    streamer = Agent(name="Streamer", instructions="Be brief.", llm="gpt-4o-mini",
                     memory=MemoryConfig(history=True, session_id="streamed", user_id="u3"))
    for _ in streamer.start("stream please", stream=True):  # the streaming path records total_tokens 0
        pass
    out["streamed"] = streamer.cost_summary
    plain = DefaultSessionStore(session_dir=str(sessions))  # a store user: no usage at all
    plain.add_message("plain", "user", "hello")
    plain.add_message("plain", "assistant", "hi there")
    unified = UnifiedSession(session_id="tui-counted", current_model="gpt-4o")
    unified.add_user_message("q1")
    unified.add_assistant_message("a1")
    unified.update_stats(*plan["unified"])
    UnifiedSessionStore(session_dir=sessions).save(unified)
    db = SqliteTranscriptStore(session_dir=str(sessions))  # imports every JSON session first (copies)
    db.add_message("gw-counted", "user", "from the gateway")
    db.add_message("gw-counted", "assistant", "ok")
    db.update_session_metadata("gw-counted", model="gpt-4o-mini", total_tokens=plan["db"][0], cost=plan["db"][1])
    print(json.dumps(out))
"""

PLAN = {"agents": [["counted-a", "Counter", "u1", ["one", "two", "three"]], ["counted-b", "Other", "u2", ["hi"]]],
        "unified": [1200, 3400, 0.0131], "db": [250, 0.0005]}
PER_CALL = 11 + 7  # fakellm's usage per request


@pytest.fixture
def written_home(oracle, tmp_path):
    import json

    home = tmp_path / "home"
    proc = oracle.run(WRITE, json.dumps(PLAN), home=home, cwd=tmp_path)
    return home, json.loads(proc.stdout.strip().splitlines()[-1])


def test_usage_totals_equal_the_sums_of_what_the_library_was_given(cli, written_home):
    home, agents = written_home
    before = snapshot(home)
    result = cli("--home", home, "usage", "--by", "session", "--json")
    assert result.exit_code == 0, result.stderr
    report = result.json()
    rows = {(r["session"], r["store"]): r for r in report["rows"]}
    calls = {sid: len(questions) for sid, _, _, questions in PLAN["agents"]}
    # the library's own accounting agrees with the loopback LLM's
    assert {sid: agents[sid]["tokens_in"] + agents[sid]["tokens_out"] for sid in calls} == \
        {sid: n * PER_CALL for sid, n in calls.items()}
    for sid, n in calls.items():
        assert rows[(sid, "json")]["total_tokens"] == n * PER_CALL
        assert rows[(sid, "json")]["cost"] == pytest.approx(agents[sid]["cost"])
        assert rows[(sid, "json")]["turns"] == n
        assert rows[(sid, "json")]["prompt_tokens"] is None  # the Agent records no split
    prompt, completion, cost = PLAN["unified"]
    assert rows[("tui-counted", "unified")] == {
        "session": "tui-counted", "store": "unified", "sessions": 1, "sessions_without_usage": 0, "turns": 1,
        "prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion, "cost": cost}
    assert rows[("gw-counted", "sessions.db")]["total_tokens"] == PLAN["db"][0]
    for sid in ("streamed", "plain"):  # recorded nothing (or the streaming path's zeros)
        assert rows[(sid, "json")]["sessions_without_usage"] == 1
        assert rows[(sid, "json")]["total_tokens"] is None and rows[(sid, "json")]["cost"] is None
    expected_total = sum(n * PER_CALL for n in calls.values()) + prompt + completion + PLAN["db"][0]
    expected_cost = sum(agents[sid]["cost"] for sid in calls) + cost + PLAN["db"][1]
    assert report["totals"]["total_tokens"] == expected_total
    assert report["totals"]["cost"] == pytest.approx(expected_cost)
    assert report["totals"]["prompt_tokens"] == prompt and report["totals"]["completion_tokens"] == completion
    assert report["sessions"] == 6 and report["sessions_without_usage"] == 2
    # sessions.db's one-time import copied the five JSON sessions: each counted once
    assert report["copies_counted_once"] == 5 and len(report["rows"]) == 6
    assert snapshot(home) == before  # a read command changes nothing

    by_day = cli("--home", home, "usage", "--json").json()
    assert 1 <= len(by_day["rows"]) <= 2  # all written just now (two days only across midnight UTC)
    assert sum(r["total_tokens"] or 0 for r in by_day["rows"]) == expected_total
    assert by_day["totals"] == report["totals"]
