"""``forget`` on praisonai's Redis state store and the learn stores beside it, written by the real libraries
(praisonai 4.7.19's ``PraisonAIDB`` hooks over ``RedisStateStore``, praisonaiagents' ``LearnManager`` over
``RedisStorageAdapter``, oracle venv) on a throwaway redis-server: alice's traces, their spans and her sessions'
runs and lifecycle records go, bob's keys stay byte for byte (values and TTLs), and the library reads nothing of
alice's afterwards."""

from __future__ import annotations

import json

import pytest

from praisonmem.core.forget.model import Subject, SubjectKind, Where
from praisonmem.core.forget.servers import LearnRedis, StateRedis, forget_stores
from tests.redisserver import require_redis_py

HOOKS = """
import asyncio, json, sys
from praisonai.db.adapter import PraisonAIDB
db = PraisonAIDB(state_url=sys.argv[1])
for session, run, user, agent, text in (
        ("alice-session-01", "r1", "alice", "helper", "Alice asked about her overdue rent in Porto"),
        ("alice-session-01", "r2", "alice", "helper", "Alice asked for a reminder about the dentist"),
        ("bob-session-0001", "r1", "bob", "helper", "Bob asked about the football results tonight")):
    db.on_run_start(session, run, input_content=text, metadata={"n": 1})
    db.on_run_end(session, run, output_content="answered: " + text)
    db.on_trace_start(f"trace-{session}-{run}", session_id=session, run_id=run, agent_name=agent, user_id=user)
    db.on_span_start(f"span-{session}-{run}", f"trace-{session}-{run}", "llm")
    db.on_span_end(f"span-{session}-{run}", attributes={"model": "x"})
    db.on_trace_end(f"trace-{session}-{run}")
db.flush_pending_writes()
db.close()
print("{}")
"""

LEARN = """
import json, sys
from praisonaiagents.config.feature_configs import LearnConfig
from praisonaiagents.memory.learn.manager import LearnManager
config = LearnConfig(backend="redis", db_url=sys.argv[1], persona=True, insights=True)
manager = LearnManager(config, user_id="alice")
manager._stores["persona"].add("Alice prefers oolong tea in the afternoon", {"user_id": "alice"})
manager._stores["persona"].add("Bob prefers espresso before every meeting", {"user_id": "bob"})
manager._stores["insights"].add("Everyone likes short answers in chat", None)
print(json.dumps({n: sorted(e.content for e in s._entries.values()) for n, s in manager._stores.items()}))
"""

READ_LEARN = """
import json, sys
from praisonaiagents.config.feature_configs import LearnConfig
from praisonaiagents.memory.learn.manager import LearnManager
manager = LearnManager(LearnConfig(backend="redis", db_url=sys.argv[1], persona=True, insights=True), user_id="bob")
print(json.dumps({n: sorted(e.content for e in s._entries.values()) for n, s in manager._stores.items()}))
"""

READ_STATE = """
import json, sys
from praisonai.db.adapter import PraisonAIDB
db = PraisonAIDB(state_url=sys.argv[1])
out = {s: db.get_runs(s) for s in ("alice-session-01", "bob-session-0001")}
out["traces"] = sorted(t["trace_id"] for t in db.get_traces())
print(json.dumps(out, default=str))
db.close()
"""


@pytest.fixture
def server(oracle, redis_db):
    require_redis_py()
    oracle.require("praisonai", "redis")
    oracle.json(HOOKS, redis_db.url())
    return redis_db


def bobs(dump: dict) -> dict:
    return {k: v for k, v in dump.items() if "alice" not in k}


def test_forget_user_in_the_state_store(oracle, server):
    before = server.dump()
    store = StateRedis(server.url())
    plan = store.plan(Subject(SubjectKind.user, "alice"))
    assert server.dump() == before  # a plan reads only: no key, value or TTL changed
    assert plan.unreachable is None
    assert sorted(e.key for e in plan.erasures) == [
        "key:run:alice-session-01:r1", "key:run:alice-session-01:r2",
        "key:span:span-alice-session-01-r1", "key:span:span-alice-session-01-r2",
        "key:trace:trace-alice-session-01-r1", "key:trace:trace-alice-session-01-r2"]
    texts = [t for e in plan.erasures for t in e.texts]
    assert "Alice asked about her overdue rent in Porto" in texts
    assert not any("Bob" in t for t in texts)
    assert store.residue(["Alice asked about her overdue rent in Porto"]) == ["key praison:run:alice-session-01:r1"]
    assert store.erase(plan) == len(plan.erasures)
    after = server.dump()
    assert after == bobs(before)  # bob's keys: values and TTLs as they were
    got = oracle.json(READ_STATE, server.url())
    assert got["alice-session-01"] == [] and len(got["bob-session-0001"]) == 1
    assert got["traces"] == ["trace-bob-session-0001-r1"]
    assert store.plan(Subject(SubjectKind.user, "alice")).erasures == []
    assert store.residue(texts) == []
    assert store.erase(plan) == len(plan.erasures) and server.dump() == after  # a rerun changes nothing


def test_a_rerun_after_a_partial_erase_finishes_it(server):
    """A kill between two of the learn or state writes: the rerun deletes what is left and counts the rest done."""
    from dataclasses import replace

    before = server.dump()
    store = StateRedis(server.url())
    plan = store.plan(Subject(SubjectKind.user, "alice"))
    assert store.erase(replace(plan, erasures=plan.erasures[:3])) == 3
    assert len(store.plan(Subject(SubjectKind.user, "alice")).erasures) == len(plan.erasures) - 3
    assert store.erase(plan) == len(plan.erasures)
    assert server.dump() == bobs(before)


def test_forget_session_and_agent_in_the_state_store(server):
    store = StateRedis(server.url())
    keys = {e.key for e in store.plan(Subject(SubjectKind.session, "bob-session-0001")).erasures}
    assert {"key:run:bob-session-0001:r1", "key:trace:trace-bob-session-0001-r1",
            "key:span:span-bob-session-0001-r1"} <= keys
    assert not any("alice" in k for k in keys)
    agent = {e.key for e in store.plan(Subject(SubjectKind.agent, "helper")).erasures}
    assert {k for k in agent if k.startswith("key:trace:")} == {
        "key:trace:trace-alice-session-01-r1", "key:trace:trace-alice-session-01-r2",
        "key:trace:trace-bob-session-0001-r1"}


def test_forget_user_in_the_learn_store_takes_her_entries_only(oracle, server):
    wrote = oracle.json(LEARN, server.url())
    assert wrote["persona"] == ["Alice prefers oolong tea in the afternoon",
                                "Bob prefers espresso before every meeting"]
    state_before = {k: v for k, v in server.dump().items() if not k.startswith("praison:learn:")}
    store = LearnRedis(server.url())
    plan = store.plan(Subject(SubjectKind.user, "alice"))
    assert [e.texts for e in plan.erasures] == [("Alice prefers oolong tea in the afternoon",)]
    assert plan.notes and "no user id" in plan.notes[0]
    assert store.residue(["Alice prefers oolong tea in the afternoon"]) == ["key praison:learn:persona"]
    assert store.erase(plan) == 1
    got = oracle.json(READ_LEARN, server.url())
    assert got == {"persona": ["Bob prefers espresso before every meeting"],
                   "insights": ["Everyone likes short answers in chat"], "threads": []}
    assert store.residue(["Alice prefers oolong tea in the afternoon"]) == []
    assert store.erase(plan) == 1 and oracle.json(READ_LEARN, server.url()) == got
    # the state store's keys under the same prefix are not the learn store's
    assert {k: v for k, v in server.dump().items() if not k.startswith("praison:learn:")} == state_before


def test_a_redis_url_is_three_stores_and_a_dead_one_is_unreachable_without_its_password(server):
    stores = forget_stores(Where(paths=None, urls=(server.url(),)))
    assert [s.store for s in stores] == ["upsonic-redis", "learn-redis", "state-redis"]
    dead = server.unreachable_url
    for store in forget_stores(Where(paths=None, urls=(dead,))):
        plan = store.plan(Subject(SubjectKind.user, "alice"))
        assert plan.unreachable and plan.erasures == [], store.store
        assert server.rw_password not in plan.unreachable + plan.location
        assert store.residue(["Alice asked about her overdue rent in Porto"]) is None
