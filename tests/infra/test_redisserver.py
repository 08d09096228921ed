"""The throwaway Redis server (tests/redisserver.py): ACL users, logical databases, teardown, and
the key layouts the real writers leave in it: praisonai's RedisStateStore and the learn Redis
backend (oracle venv), Upsonic's RedisStorage (test venv)."""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests import redisserver
from tests.localserver import alive, missing
from tests.redisserver import RedisReplyError, RedisServer, require_binary, require_redis_py, resp

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.redis


def wait_gone(pid: int, root: Path, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while (alive(pid) or root.exists()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(pid), f"redis-server {pid} still running"
    assert not root.exists(), f"{root} left behind"


def test_the_url_reaches_this_database_only(redis_db, redis_server):
    redis = require_redis_py()
    client = redis.Redis.from_url(redis_db.url(), socket_timeout=5)
    client.set("k", "café")
    assert redis_db.command("GET", "k") == "café".encode()
    assert redis_server.dbsize(0) == 0 and redis_db.url() == f"redis://127.0.0.1:{redis_server.port}/{redis_db.number}"
    unix = redis.Redis.from_url(redis_db.url(socket=True), socket_timeout=5)
    assert unix.get("k") == "café".encode()


def test_acl_users_need_their_password_and_ro_cannot_write(redis_db):
    redis = require_redis_py()
    redis_db.command("SET", "k", "v")
    redis_db.command("HSET", "h", "f", "1")
    rw = redis_db.client("rw")
    rw.set("k2", "v2")
    assert rw.acl_whoami() in ("pm_rw", b"pm_rw")
    ro = redis_db.client("ro")
    assert (ro.get("k"), ro.hgetall("h"), ro.ttl("k"), ro.type("h")) == (b"v", {b"f": b"1"}, -1, b"hash")
    assert sorted(ro.scan_iter()) == [b"h", b"k", b"k2"]
    for write in (lambda: ro.set("x", "1"), lambda: ro.delete("k"), lambda: ro.hset("h", "g", "2"),
                  lambda: ro.flushdb(), lambda: ro.expire("k", 5)):
        with pytest.raises(redis.exceptions.NoPermissionError):
            write()
    with pytest.raises(redis.exceptions.AuthenticationError):
        redis.Redis.from_url(redis_db.url("rw", password="wrong"), socket_timeout=5).ping()
    with pytest.raises(RedisReplyError, match="WRONGPASS"):
        resp(redis_db.socket_path, ("AUTH", "pm_ro", "wrong"))
    assert redis_db.command("DBSIZE") == 3


def test_unreachable_url_is_refused_at_once(redis_db):
    redis = require_redis_py()
    start = time.monotonic()
    with pytest.raises(redis.exceptions.ConnectionError, match="Connection refused"):
        redis.Redis.from_url(redis_db.unreachable_url, socket_connect_timeout=5, retry_on_timeout=False).ping()
    assert time.monotonic() - start < 3


def test_databases_are_handed_out_empty_and_flushed_after(redis_server):
    one, two = redis_server.take_database(), redis_server.take_database()
    assert 0 not in (one.number, two.number) and one.number != two.number
    one.command("SET", "only-here", "1")
    assert two.command("DBSIZE") == 0
    redis_server.give_back(one)
    again = redis_server.take_database()
    assert again.number == one.number and again.command("DBSIZE") == 0
    redis_server.give_back(again)
    redis_server.give_back(two)


def test_nothing_is_written_to_disk(redis_db, redis_server):
    redis_db.command("SET", "k", "v")
    assert redis_server.command("CONFIG", "GET", "save") == [b"save", b""]
    assert redis_server.command("CONFIG", "GET", "appendonly") == [b"appendonly", b"no"]


def test_the_outside_redis_environment_does_not_reach_tests(monkeypatch):
    outside = {"REDIS_URL": "redis://prod:6379/0", "REDIS_PASSWORD": "x", "REDISCLI_AUTH": "x",
               "VALKEY_HOST": "prod", "PRAISONMEM_KEEP": "1"}
    for name, value in outside.items():
        monkeypatch.setenv(name, value)
    redisserver.scrub_redis_env(monkeypatch)
    assert {n: os.environ.get(n) for n in outside} == {n: None for n in outside} | {"PRAISONMEM_KEEP": "1"}


def test_stop_ends_the_server_and_removes_its_dir():
    server = RedisServer(require_binary()).start()
    pid, root = server.server_pid, server.root
    assert pid is not None and alive(pid) and server.sock.is_socket()
    if os.geteuid() == 0:
        assert Path(f"/proc/{pid}").stat().st_uid != 0
    assert server.passwords["pm_rw"] not in Path(f"/proc/{pid}/cmdline").read_text()
    server.stop()
    wait_gone(pid, root, timeout=5)


STARTER = textwrap.dedent("""
    import time
    from tests.redisserver import RedisServer, find_binary
    s = RedisServer(find_binary()).start()
    print(s.server_pid, s.root, flush=True)
    time.sleep(600)
""")


def test_a_killed_test_run_leaves_no_server():
    require_binary()
    proc = subprocess.Popen([sys.executable, "-c", STARTER], cwd=REPO, stdout=subprocess.PIPE, text=True,
                            env=dict(os.environ, PYTHONPATH=str(REPO)))
    pid, root = proc.stdout.readline().split()
    assert alive(int(pid))
    proc.kill()
    proc.wait()
    wait_gone(int(pid), Path(root))


CTRL_C_TEST = textwrap.dedent("""
    import time

    def test_waits(redis_db):
        print("READY", redis_db.server.server_pid, redis_db.server.root, flush=True)
        time.sleep(600)
""")


def test_ctrl_c_in_a_test_run_leaves_no_server(tmp_path):
    require_binary()
    (tmp_path / "test_ctrl_c.py").write_text(CTRL_C_TEST)
    proc = subprocess.Popen(
        [sys.executable, "-m", "pytest", "-s", "-q", "-p", "no:cacheprovider", "-p", "tests.redisserver",
         "--rootdir", str(tmp_path), str(tmp_path / "test_ctrl_c.py")],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
        env=dict(os.environ, PYTHONPATH=str(REPO)),
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    for line in proc.stdout:
        if line.startswith("READY"):
            _, pid, root = line.split()
            break
    else:
        pytest.fail("the inner test run never got its database")
    os.killpg(proc.pid, signal.SIGINT)
    try:
        rest, _ = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        pytest.fail("the inner test run did not stop on Ctrl-C")
    assert proc.returncode == 2, rest
    wait_gone(int(pid), Path(root))


def test_missing_server_skips_or_fails_when_required(monkeypatch, tmp_path):
    monkeypatch.setenv("PRAISONMEM_REDIS_SERVER", str(tmp_path / "nothing"))
    monkeypatch.delenv("PRAISONMEM_REQUIRE_REDIS", raising=False)
    with pytest.raises(pytest.skip.Exception, match="redis-server not found"):
        require_binary()
    monkeypatch.setenv("PRAISONMEM_REQUIRE_REDIS", "1")
    with pytest.raises(pytest.fail.Exception, match="PRAISONMEM_REQUIRE_REDIS=1 but redis-server not found"):
        require_binary()


def test_redis_module_is_one_database_for_the_module(redis_module, redis_db):
    assert redis_module.number != redis_db.number


# -- the real writers and the keys they leave ------------------------------------------------------

def decoded(db) -> dict:
    """db.dump() with values decoded: strings holding JSON parsed, the rest as text."""
    def text(b):
        s = b.decode()
        try:
            return json.loads(s)
        except ValueError:
            return s

    out = {}
    for key, item in db.dump().items():
        value = item["value"]
        if item["type"] == "string":
            value = text(value)
        elif item["type"] == "hash":
            value = {k.decode(): text(v) for k, v in value.items()}
        elif item["type"] == "set":
            value = [v.decode() for v in value]
        out[key] = (item["type"], item["ttl"] if item["ttl"] < 0 else "ttl", value)
    return out


STATE_STORE = """
    import json, sys
    from praisonai.persistence.state.redis import RedisStateStore
    st = RedisStateStore(url=sys.argv[1])
    st.set("plain", "text"); st.set("num", 5); st.set("obj", {"a": [1, "é"]}); st.set("ttl", {"b": 1}, ttl=300)
    st.hset("h", "f", {"x": 1}); st.hset("h", "g", "str"); st.incr("counter", 3)
    print(json.dumps({"get": [st.get(k) for k in ("plain", "num", "obj", "ttl")], "hgetall": st.hgetall("h"),
                      "keys": sorted(st.keys()), "ttl": st.ttl("ttl")}))
"""


def test_praisonai_redis_state_store_key_layout(oracle, redis_db, redis_server):
    oracle.require("redis")
    got = oracle.json(STATE_STORE, redis_db.url())
    assert got == {"get": ["text", 5, {"a": [1, "é"]}, {"b": 1}], "hgetall": {"f": {"x": 1}, "g": "str"},
                   "keys": ["counter", "h", "num", "obj", "plain", "ttl"], "ttl": 300}
    # every key is "praison:" + the caller's key; values are JSON text (non-dicts wrapped), TTL only when asked
    assert decoded(redis_db) == {
        "praison:counter": ("string", -1, 3),
        "praison:h": ("hash", -1, {"f": {"x": 1}, "g": "str"}),
        "praison:num": ("string", -1, {"value": 5, "__wrapped__": True}),
        "praison:obj": ("string", -1, {"a": [1, "é"]}),
        "praison:plain": ("string", -1, {"value": "text", "__wrapped__": True}),
        "praison:ttl": ("string", "ttl", {"b": 1}),
    }
    assert redis_db.command("GET", "praison:obj") == '{"a": [1, "é"]}'.encode()  # ensure_ascii=False
    assert redis_server.dbsize(0) == 0  # the URL's database number is honoured


LEARN = """
    import json, sys
    from praisonaiagents.config.feature_configs import LearnConfig
    from praisonaiagents.memory.learn.manager import LearnManager
    alice = LearnManager(config=LearnConfig(backend="redis", db_url=sys.argv[1], patterns=True), user_id="alice")
    assert type(alice._backend).__name__ == "RedisStorageAdapter", alice._backend
    alice.capture_persona("Prefers short answers", category="style")
    alice.capture_insight("Works in finance")
    alice.capture_pattern("Always greet")
    bob = LearnManager(config=LearnConfig(backend="redis", db_url=sys.argv[1]), user_id="bob")
    bob.capture_persona("Likes long answers")
    print(json.dumps({"bob": {k: [e["content"] for e in v] for k, v in bob.get_learning_context().items()}}))
"""


def test_praisonai_learn_redis_backend_key_layout(oracle, redis_db):
    oracle.require("redis")
    got = oracle.json(LEARN, redis_db.url())
    # one key per store, NOT per user: bob's manager sees alice's persona and insight
    assert {k: sorted(v) for k, v in got["bob"].items()} == {
        "persona": ["Likes long answers", "Prefers short answers"], "insights": ["Works in finance"], "threads": []}
    layout = decoded(redis_db)
    assert sorted(layout) == ["praison:learn:insights", "praison:learn:patterns", "praison:learn:persona"]
    kind, ttl, persona = layout["praison:learn:persona"]
    assert (kind, ttl) == ("string", -1)
    assert [(e["content"], e["metadata"]) for e in persona.values()] == [
        ("Prefers short answers", {"category": "style", "type": "preference"}),
        ("Likes long answers", {"category": "general", "type": "preference"})]
    assert all(k == e["id"] and k.startswith("persona_") for k, e in persona.items())
    assert sorted(next(iter(persona.values()))) == ["content", "created_at", "id", "last_used", "metadata",
                                                    "updated_at", "use_count"]


UPSONIC = """
    import asyncio, importlib.util, json, sys
    from pathlib import Path
    from upsonic.storage.redis import RedisStorage
    spec = importlib.util.spec_from_file_location("ugen", "tests/fixtures/tools/gen_upsonic_fixtures.py")
    ugen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ugen)
    # the fixture generator's sessions and user memories, through RedisStorage instead of SqliteStorage
    ugen.SqliteStorage = lambda db_file: RedisStorage(db_url=sys.argv[1], expire=int(sys.argv[2]) or None)
    asyncio.run(ugen.main(Path(sys.argv[3]) / "unused.db"))
    st = RedisStorage(db_url=sys.argv[1])
    from upsonic.session.base import SessionType
    s = st.get_session(session_id="session_001", session_type=SessionType.AGENT)
    print(json.dumps({"session_001_messages": len(s.messages), "summary": s.summary,
                      "memory": st.get_user_memory(user_id="user_456").user_memory}))
"""


def _run_upsonic(url: str, expire: int, tmp_path: Path) -> dict:
    if importlib.util.find_spec("upsonic") is None or importlib.util.find_spec("redis") is None:
        missing("PRAISONMEM_REQUIRE_COMPAT", "upsonic[redis-storage]==0.77.3 is not installed (pip install -e '.[test,compat]')")
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(UPSONIC), url, str(expire), str(tmp_path)],
                          cwd=REPO, capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, PYTHONPATH=str(REPO), UPSONIC_TELEMETRY="false", DO_NOT_TRACK="1"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


SESSION_FIELDS = ["agent_data", "agent_id", "created_at", "messages", "metadata", "runs", "session_data",
                  "session_id", "session_type", "summary", "team_id", "updated_at", "usage", "user_id", "workflow_id"]


def test_upsonic_redis_storage_key_layout(redis_db, redis_server, tmp_path):
    got = _run_upsonic(redis_db.url(), 0, tmp_path)
    assert got["summary"].startswith("User asked about savings rate") and got["session_001_messages"] > 0
    assert got["memory"]["unicode_check"] == "Grüße — 東京 🚀"
    layout = decoded(redis_db)
    # records: "upsonic:<table>:<id>" JSON strings; indexes: "upsonic:<table>:index:<field>:<value>" sets of ids
    assert {k: (t, ttl) for k, (t, ttl, _) in layout.items()} == {
        "upsonic:sessions:index:agent_id:agent_fin": ("set", -1),
        "upsonic:sessions:index:agent_id:agent_support": ("set", -1),
        "upsonic:sessions:index:session_type:agent": ("set", -1),
        "upsonic:sessions:index:user_id:user_123": ("set", -1),
        "upsonic:sessions:index:user_id:user_456": ("set", -1),
        "upsonic:sessions:session_001": ("string", -1),
        "upsonic:sessions:session_002": ("string", -1),
        "upsonic:sessions:session_003": ("string", -1),
        "upsonic:sessions:session_004": ("string", -1),
        "upsonic:user_memories:index:agent_id:agent_fin": ("set", -1),
        "upsonic:user_memories:index:user_id:user_123": ("set", -1),
        "upsonic:user_memories:index:user_id:user_456": ("set", -1),
        "upsonic:user_memories:user_123": ("string", -1),
        "upsonic:user_memories:user_456": ("string", -1),
    }
    assert layout["upsonic:sessions:index:agent_id:agent_fin"][2] == ["session_001", "session_002", "session_004"]
    assert layout["upsonic:sessions:index:session_type:agent"][2] == ["session_001", "session_002", "session_003",
                                                                      "session_004"]
    assert sorted(layout["upsonic:sessions:session_003"][2]) == SESSION_FIELDS
    assert sorted(layout["upsonic:user_memories:user_456"][2]) == ["agent_id", "created_at", "team_id",
                                                                  "updated_at", "user_id", "user_memory"]
    assert redis_server.dbsize(0) == 0


def test_upsonic_redis_storage_with_expire_sets_a_ttl_on_every_key(redis_db, tmp_path):
    _run_upsonic(redis_db.url(), 3600, tmp_path)
    ttls = {k: redis_db.command("TTL", k) for k in redis_db.dump()}
    assert len(ttls) == 14 and all(0 < t <= 3600 for t in ttls.values()), ttls
