"""``forget`` on Upsonic 0.77.3's PostgresStorage and RedisStorage, written and read back by the library itself
(the fixture generator's sessions and user memories, and usage-ledger entries): user_123's sessions, user memory
and usage entries go, user_456's read back unchanged, no index set keeps an erased id, and ``residue`` finds a
planted leftover until the erase."""

from __future__ import annotations

import json

import pytest

from praisonmem.core.forget.model import Subject, SubjectKind
from praisonmem.core.forget.servers import UpsonicServer
from tests.compat.conftest import last_json, run_library
from tests.conftest import FIXTURES
from tests.pgcluster import require_psycopg
from tests.redisserver import require_redis_py

pytest.importorskip("upsonic")

ENV = {"UPSONIC_TELEMETRY": "false"}
GENERATOR = FIXTURES / "tools" / "gen_upsonic_fixtures.py"

STORAGE = """
import sys
def storage():
    if sys.argv[1].startswith("redis"):
        from upsonic.storage.redis import RedisStorage
        return RedisStorage(db_url=sys.argv[1])
    from upsonic.storage.postgres import PostgresStorage
    return PostgresStorage(db_url=sys.argv[1])
"""

WRITE = STORAGE + f"""
import asyncio, importlib.util
from pathlib import Path
spec = importlib.util.spec_from_file_location("ugen", {str(GENERATOR)!r})
ugen = importlib.util.module_from_spec(spec); spec.loader.exec_module(ugen)
ugen.SqliteStorage = lambda db_file: storage()
asyncio.run(ugen.main(Path("/nonexistent/unused.db")))
st = storage()
zero = dict(input_tokens=1, output_tokens=2, cache_read_tokens=0, cache_write_tokens=0, reasoning_tokens=0,
            input_audio_tokens=0, output_audio_tokens=0, cache_audio_read_tokens=0, requests=1, tool_calls=0,
            duration=0.1, model_execution_time=0.1, tool_execution_time=0.0)
for eid, user, run in (("entry-alice-0001", "user_123", None), ("entry-alice-0002", None, "run_0001"),
                       ("entry-bob-00001", "user_456", "run_0004")):
    st.upsert_usage_entry(dict(entry_id=eid, timestamp=1796050000.0, kind="llm", model="m", user_id=user,
                               run_id=run, **zero))
print("{{}}")
"""

READ = STORAGE + """
import json
st = storage()
rows, _ = st.get_sessions(deserialize=False)
users, _ = st.get_user_memories(deserialize=False)
usage = sorted(e["entry_id"] for e in st.query_usage_entries())
print(json.dumps({"sessions": {r["session_id"]: r for r in rows}, "users": {u["user_id"]: u for u in users},
                  "usage": usage, "mine": [s.session_id for s in st.get_sessions(user_id="user_123")]}, default=str))
"""


def _library(kind: str, request, tmp_path):
    if kind == "postgresql":
        require_psycopg()
        db = request.getfixturevalue("pg")
        url = db.rw_url
    else:
        require_redis_py()
        db = request.getfixturevalue("redis_db")
        url = db.url()
    run_library(WRITE, url, home=tmp_path, **ENV)

    class Lib:

        def __init__(self) -> None:
            self.kind, self.url, self.db = kind, url, db

        def read(self) -> dict:
            return last_json(run_library(READ, url, home=tmp_path, **ENV))

    return Lib()


@pytest.fixture(params=["postgresql", "redis"])
def upsonic(request, tmp_path):
    return _library(request.param, request, tmp_path)


@pytest.fixture
def upsonic_redis(request, tmp_path):
    return _library("redis", request, tmp_path)


def test_forget_user_removes_sessions_user_memory_and_usage_and_the_library_reads_the_rest_unchanged(upsonic):
    before = upsonic.read()
    assert sorted(before["mine"]) == ["session_001", "session_002"]
    store = UpsonicServer(upsonic.url)
    plan = store.plan(Subject(SubjectKind.user, "user_123"))
    assert upsonic.read() == before  # a plan reads only
    assert plan.unreachable is None, plan.unreachable
    assert sorted(e.key for e in plan.erasures) == [
        "session:session_001", "session:session_002", "usage:entry-alice-0001", "usage:entry-alice-0002",
        "user:user_123"]
    texts = [t for e in plan.erasures for t in e.texts]
    assert "What is the EUR to USD exchange rate today?" in texts or any("EUR" in t for t in texts)
    assert not any("Hallo" in t for t in texts)
    assert store.residue(texts)  # there before the erase
    assert store.erase(plan) == 5
    after = upsonic.read()
    assert sorted(after["sessions"]) == ["session_003", "session_004"]
    assert {k: after["sessions"][k] for k in after["sessions"]} == \
        {k: before["sessions"][k] for k in ("session_003", "session_004")}
    assert after["users"] == {"user_456": before["users"]["user_456"]}
    assert after["usage"] == ["entry-bob-00001"]
    assert after["mine"] == []
    assert store.plan(Subject(SubjectKind.user, "user_123")).erasures == []
    assert store.residue(texts) == []
    assert store.erase(plan) == 5  # a rerun after a kill: nothing left to do, nothing else touched
    assert upsonic.read() == after


def test_redis_index_sets_keep_no_erased_id(upsonic_redis):
    upsonic = upsonic_redis
    store = UpsonicServer(upsonic.url)
    store.erase(store.plan(Subject(SubjectKind.user, "user_123")))
    dump = upsonic.db.dump()
    for key, item in dump.items():
        assert "user_123" not in key, key
        members = item.get("value") if isinstance(item.get("value"), list) else []
        assert not {"session_001", "session_002", "entry-alice-0001", "entry-alice-0002"} & set(map(str, members)), key
    assert store.residue(["session_001", "session_002"]) == []


def test_residue_names_a_planted_leftover_by_place(upsonic):
    store = UpsonicServer(upsonic.url)
    secret = "planted text of user_123 nobody removes"
    if upsonic.kind == "redis":
        upsonic.db.command("SET", "upsonic:sessions:planted", json.dumps({"note": secret}))
        assert store.residue([secret]) == ["key upsonic:sessions:planted"]
    else:
        upsonic.db.psql(f"UPDATE upsonic_sessions SET summary = '{secret}' WHERE session_id = 'session_003'")
        assert store.residue([secret]) == ["public.upsonic_sessions.summary"]
        assert store.residue(["planted text of user_123%nobody"]) == []  # text, not a LIKE pattern


def test_forget_session_takes_its_usage_entries_and_agent_its_sessions(upsonic):
    store = UpsonicServer(upsonic.url)
    plan = store.plan(Subject(SubjectKind.session, "session_001"))  # its runs hold run_0001
    assert sorted(e.key for e in plan.erasures) == ["session:session_001", "usage:entry-alice-0002"]
    plan = store.plan(Subject(SubjectKind.agent, "agent_support"))
    assert [e.key for e in plan.erasures] == ["session:session_003"]
