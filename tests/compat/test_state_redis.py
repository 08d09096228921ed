"""``state`` on praisonai's Redis state store: praisonai 4.7.19's ``RedisStateStore`` (and ``PraisonAIDB``'s run
and trace hooks writing through it), run in the oracle venv, writes the keys on a throwaway redis-server;
praisonmem lists and shows exactly what the library's ``get``/``hgetall`` return, and after a delete the library
sees exactly those keys gone."""

from __future__ import annotations

import json

import pytest

from tests.redisserver import require_redis_py

WRITE = """
import json, sys
from praisonai.persistence.state.redis import RedisStateStore
store = RedisStateStore(url=sys.argv[1], prefix=sys.argv[2])
for op, key, *args in json.loads(sys.argv[3]):
    getattr(store, op)(key, *args)
store.close()
"""

HOOKS = """
import json, sys
from praisonai.db.adapter import PraisonAIDB
db = PraisonAIDB(state_url=sys.argv[1])
for session, run in (("s1", "r1"), ("s1", "r2"), ("s2", "r1")):
    db.on_run_start(session, run, input_content=f"hi from {session}/{run}", metadata={"n": 1})
db.on_run_end("s1", "r1", output_content="bye ☕", metrics={"tokens": 3})
db.on_trace_start("t1", session_id="s1", run_id="r1", agent_name="helper", user_id="alice")
db.on_span_start("sp1", "t1", "llm")
db.on_span_end("sp1", attributes={"model": "x"})
db.on_trace_end("t1")
db.on_trace_start("t2", session_id="s2", run_id="r1")
db.flush_pending_writes()
print(json.dumps({"s1": db.get_runs("s1"), "s2": db.get_runs("s2"), "traces": db.get_traces()}))
db.close()
"""

READ = """
import json, sys
from praisonai.persistence.state.redis import RedisStateStore
store = RedisStateStore(url=sys.argv[1], prefix=sys.argv[2])
out = {}
for key in sorted(store.keys()):
    kind = store._client.type(store._key(key)).decode()
    out[key] = {"type": kind, "ttl": store.ttl(key),
                "value": store.get(key) if kind == "string" else store.hgetall(key) if kind == "hash" else None}
print(json.dumps(out))
store.close()
"""

OPS = [["set", "config:agent", {"model": "gpt", "temperature": 0.2, "note": "café ☕"}],
       ["set", "greeting", "hello"],
       ["set", "numbers", [1, 2, 3]],
       ["set", "session:tmp", {"user": "bob"}, 600],
       ["hset", "profile:alice", "name", "Alice"],
       ["hset", "profile:alice", "prefs", {"tea": True}],
       ["hset", "profile:alice", "age", 41],
       ["incr", "counter:visits", 5]]


@pytest.fixture
def lib(oracle, redis_db):
    oracle.require("praisonai", "redis")

    class Library:
        def write(self, ops, prefix: str = "praison:", url: str | None = None) -> None:
            oracle.run(WRITE, url or redis_db.url(), prefix, json.dumps(ops))

        def hooks(self) -> dict:
            return oracle.json(HOOKS, redis_db.url())

        def read(self, prefix: str = "praison:") -> dict:
            return oracle.json(READ, redis_db.url(), prefix)

    return Library()


@pytest.fixture
def written(lib):
    lib.write(OPS)
    return lib.read()


def snap(db) -> dict:
    """``db.dump()`` with each TTL as whether the key expires (a TTL counts down while a test runs)."""
    return {k: {**v, "ttl": v["ttl"] != -1} for k, v in db.dump().items()}


def values(read: dict) -> dict:
    """What the library read, TTLs left out."""
    return {k: (v["type"], v["value"]) for k, v in read.items()}


def state(cli, db, *args, url=None):
    return cli("state", *args, "--store", url or db.url())


def _one_line(result, code: int) -> str:
    assert (result.exit_code, result.stdout, result.stderr.count("\n")) == (code, "", 1), result.stderr
    return result.stderr


def test_list_and_show_give_exactly_what_the_library_reads_and_change_nothing(cli, redis_db, written):
    before = snap(redis_db)
    raw = redis_db.dump()
    listed = state(cli, redis_db, "list", "--json")
    assert listed.exit_code == 0, listed.stderr
    rows = listed.json()
    assert [r["name"] for r in rows] == sorted(written)
    for row in rows:
        assert (row["key"], row["type"]) == ("praison:" + row["name"], written[row["name"]]["type"])
        theirs = written[row["name"]]["ttl"]  # read a moment earlier
        assert row["ttl"] is None if theirs is None else theirs - 3 <= row["ttl"] <= theirs
        shown = state(cli, redis_db, "show", row["name"], "--json")
        assert shown.exit_code == 0, shown.stderr
        assert shown.json()["value"] == written[row["name"]]["value"]
        assert row["size"] == len(raw[row["key"]]["value"]) if row["type"] == "string" else True
    by_name = {r["name"]: r for r in rows}
    assert by_name["greeting"]["kind"] == "other" and 595 <= by_name["session:tmp"]["ttl"] <= 600
    assert state(cli, redis_db, "show", "greeting", "--json").json()["value"] == "hello"  # unwrapped
    assert state(cli, redis_db, "show", "counter:visits", "--json").json()["value"] == 5
    assert state(cli, redis_db, "show", "profile:alice", "--json").json()["value"] == {
        "name": "Alice", "prefs": {"tea": True}, "age": 41}
    # the Redis key, prefix included, names the same key
    assert state(cli, redis_db, "show", "praison:greeting", "--json").json()["key"] == "praison:greeting"
    human = state(cli, redis_db, "show", "config:agent")
    assert human.stdout.splitlines()[:3] == ["Key   praison:config:agent", "Kind  other", "Type  string"]
    assert json.loads(human.stdout.split("\n\n", 1)[1]) == written["config:agent"]["value"]
    table = state(cli, redis_db, "list").stdout.splitlines()
    assert table[0].split("\t") == ["KEY", "KIND", "SESSION", "RUN", "STATUS", "TYPE", "TTL", "SIZE", "UPDATED"]
    assert snap(redis_db) == before
    assert redis_db.server.dbsize(0) == 0


def test_the_run_and_trace_writers_keys_are_grouped_by_session(cli, lib, redis_db):
    seen = lib.hooks()
    rows = state(cli, redis_db, "list", "--json").json()
    assert [(r["name"], r["kind"], r["session_id"], r["run_id"], r["trace_id"], r["status"]) for r in rows] == [
        ("run:s1:r1", "run", "s1", "r1", None, "completed"),
        ("run:s1:r2", "run", "s1", "r2", None, "running"),
        ("run:s2:r1", "run", "s2", "r1", None, "running"),
        ("trace:t1", "trace", "s1", "r1", "t1", "ok"),
        ("trace:t2", "trace", "s2", "r1", "t2", "running"),
        ("span:sp1", "span", None, None, "t1", "ok")]
    runs = {r["run_id"]: r for r in seen["s1"]}
    assert rows[0]["updated_at"] == runs["r1"]["ended_at"] and rows[1]["updated_at"] == runs["r2"]["started_at"]
    assert state(cli, redis_db, "show", "run:s1:r1", "--json").json()["value"] == runs["r1"]
    s1 = state(cli, redis_db, "list", "--session", "s1", "--json").json()
    assert [r["name"] for r in s1] == ["run:s1:r1", "run:s1:r2", "trace:t1", "span:sp1"]
    assert [r["name"] for r in state(cli, redis_db, "list", "--kind", "trace", "--json").json()] == [
        "trace:t1", "trace:t2"]
    assert [r["name"] for r in state(cli, redis_db, "list", "--kind", "run", "--session", "s2", "--json").json()] == [
        "run:s2:r1"]


def test_delete_a_session_removes_exactly_its_keys_and_the_library_sees_the_rest_unchanged(cli, lib, redis_db):
    lib.hooks()
    lib.write(OPS)
    before, library_before = snap(redis_db), lib.read()
    asked = state(cli, redis_db, "delete", "--session", "s1")
    assert asked.exit_code == 4 and "error: delete 4 keys of session 's1' from" in asked.stderr
    dry = state(cli, redis_db, "delete", "--session", "s1", "--dry-run")
    assert dry.stdout.splitlines()[0] == f"would delete key 'praison:run:s1:r1' ({redis_db.url()})"
    assert snap(redis_db) == before
    done = state(cli, redis_db, "delete", "--session", "s1", "--yes", "--json")
    assert done.exit_code == 0, done.stderr
    gone = ["run:s1:r1", "run:s1:r2", "span:sp1", "trace:t1"]
    assert [c["name"] for c in done.json()] == gone
    after = snap(redis_db)
    assert after == {k: v for k, v in before.items() if k[len("praison:"):] not in gone}
    assert values(lib.read()) == {k: v for k, v in values(library_before).items() if k not in gone}


def test_delete_keys_by_name_keeps_the_others_and_their_ttls(cli, lib, redis_db, written):
    before = snap(redis_db)
    done = state(cli, redis_db, "delete", "greeting", "praison:profile:alice", "--yes")
    assert done.stdout == (f"deleted key 'praison:greeting' ({redis_db.url()})\n"
                           f"deleted key 'praison:profile:alice' ({redis_db.url()})\n")
    after = snap(redis_db)
    assert sorted(before) == sorted([*after, "praison:greeting", "praison:profile:alice"])
    for key in after:
        assert after[key]["value"] == before[key]["value"] and after[key]["type"] == before[key]["type"]
    assert 0 < redis_db.command("TTL", "praison:session:tmp") <= 600
    missing = _one_line(state(cli, redis_db, "delete", "greeting", "numbers", "--yes"), 3)
    assert missing == f"praisonmem: error: {redis_db.url()}: no key 'praison:greeting'; nothing deleted\n"
    assert "praison:numbers" in snap(redis_db)


def test_a_concurrent_writer_makes_delete_refuse_with_nothing_changed(cli, redis_db, written, monkeypatch):
    redis = require_redis_py()
    original = redis.client.Pipeline.multi

    def another_writer_first(self):
        redis_db.command("SET", "praison:numbers", b'{"value": [4], "__wrapped__": true}')  # after the WATCH
        return original(self)

    monkeypatch.setattr(redis.client.Pipeline, "multi", another_writer_first)
    before = snap(redis_db)
    result = state(cli, redis_db, "delete", "numbers", "greeting", "--yes")
    assert (result.exit_code, result.stdout) == (4, "")
    assert result.stderr == (f"praisonmem: error: {redis_db.url()}: another writer changed the state store "
                             "meanwhile; nothing changed\n")
    assert snap(redis_db) == {**before, "praison:numbers": {**before["praison:numbers"],
                                                             "value": b'{"value": [4], "__wrapped__": true}'}}


def test_a_change_between_the_question_and_the_delete_makes_it_refuse(cli, redis_db, written, monkeypatch):
    from praisonmem.core.state import ops

    planned = ops.plan_delete(redis_db.url(), ["greeting", "numbers"])
    redis_db.command("SET", "praison:greeting", b'{"value": "changed", "__wrapped__": true}')
    before = snap(redis_db)
    from praisonmem.core.errors import Refused

    with pytest.raises(Refused) as caught:
        planned.run()
    assert str(caught.value) == (f"{redis_db.url()}: another writer changed the state store meanwhile (key "
                                 "'praison:greeting'); nothing changed")
    assert snap(redis_db) == before


def test_export_and_import_restore_every_key_its_value_and_its_ttl(cli, lib, redis_db, written, tmp_path):
    redis_db.command("RPUSH", "praison:queue", b"a", b"\xff\x00")  # not UTF-8: base64 in the export
    redis_db.command("ZADD", "praison:ranks", 1.5, b"x")
    redis_db.command("PEXPIRE", "praison:profile:alice", 900_000)
    before = redis_db.dump()
    out = tmp_path / "state.jsonl"
    done = state(cli, redis_db, "export", "-o", out)
    assert done.exit_code == 0, done.stderr
    assert done.stderr == f"praisonmem: exported 8 keys (2 with a TTL) to {out}\n"
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert lines[0]["format"] == "praisonmem-redis-state" and lines[0]["keys"] == 8
    records = {r["key"] if r["encoding"] == "utf-8" else "queue": r for r in lines[1:]}
    assert records["queue"]["encoding"] == "base64" and records["queue"]["type"] == "list"
    assert 590 <= records["praison:session:tmp"]["ttl"] <= 600
    streamed = [json.loads(line) for line in state(cli, redis_db, "export").stdout.splitlines()]
    assert [(r.get("key"), r.get("value")) for r in streamed] == [(r.get("key"), r.get("value")) for r in lines]
    # into an empty database: the same keys, values and (about) the same TTLs; the library reads them alike
    redis_db.command("FLUSHDB")
    imported = state(cli, redis_db, "import", out, "--json")
    assert imported.exit_code == 0, imported.stderr
    assert len(imported.json()) == 8
    after = redis_db.dump()
    assert {k: (v["type"], v["value"]) for k, v in after.items()} == {
        k: (v["type"], v["value"]) for k, v in before.items()}
    for key in ("praison:session:tmp", "praison:profile:alice"):
        assert before[key]["ttl"] - 2 <= after[key]["ttl"] <= before[key]["ttl"]
    assert after["praison:greeting"]["ttl"] == -1
    assert {k: v for k, v in values(lib.read()).items() if k in written} == values(written)
    # a second import finds the keys there: refused, nothing written
    redis_db.command("SET", "praison:greeting", b'{"value": "mine", "__wrapped__": true}')
    again = snap(redis_db)
    refused = _one_line(state(cli, redis_db, "import", out), 4)
    assert refused.startswith(f"praisonmem: error: {redis_db.url()}: key 'praison:") and "nothing imported" in refused
    assert snap(redis_db) == again


def test_a_key_of_a_type_an_export_cannot_hold_is_left_out_and_said(cli, redis_db, written, tmp_path):
    redis_db.command("XADD", "praison:events", "*", "a", "b")
    done = state(cli, redis_db, "export", "-o", tmp_path / "x.jsonl", "--json")
    assert done.exit_code == 0, done.stderr
    assert done.json()["left_out"] == ["praison:events (a stream)"] and done.json()["keys"] == len(written)
    assert done.stderr == ("praisonmem: warning: not exported: key praison:events (a stream), a type the state store "
                           "never writes and an export cannot hold\n")


def test_a_session_id_with_glob_characters_is_matched_literally(cli, lib, redis_db):
    lib.write([["set", "run:s1:r1", {"session_id": "s1", "run_id": "r1"}],
               ["set", "run:s*:r1", {"session_id": "s*", "run_id": "r1"}], ["set", "agent:s?", {"status": "x"}]])
    assert [r["name"] for r in state(cli, redis_db, "list", "--session", "s*", "--json").json()] == ["run:s*:r1"]
    done = state(cli, redis_db, "delete", "--session", "s*", "--yes", "--json")
    assert [c["name"] for c in done.json()] == ["run:s*:r1"]
    assert sorted(redis_db.dump()) == ["praison:agent:s?", "praison:run:s1:r1"]
    nothing = _one_line(state(cli, redis_db, "delete", "--session", "s", "--yes"), 3)
    assert nothing == (f"praisonmem: error: {redis_db.url()}: no key of session 's' under prefix 'praison:'; "
                       "nothing deleted\n")


def test_crafted_key_names_reach_the_terminal_escaped_and_a_unix_socket_works(cli, lib, redis_db):
    lib.write([["set", "run:\x1b[31mred:\x07", {"status": "\x1b]0;title\x07"}]])
    url = redis_db.url(socket=True)
    for args in (("list",), ("show", "run:\x1b[31mred:\x07"), ("list", "--json")):
        result = state(cli, redis_db, *args, url=url)
        assert result.exit_code == 0, result.stderr
        assert "\x1b" not in result.stdout and "\x07" not in result.stdout, result.stdout
    assert state(cli, redis_db, "list", "--json", url=url).json()[0]["status"] == "\x1b]0;title\x07"


def test_an_expired_key_is_not_imported(cli, redis_db, written, tmp_path):
    out = tmp_path / "state.jsonl"
    assert state(cli, redis_db, "export", "-o", out).exit_code == 0
    lines = out.read_text().splitlines()
    edited = [json.loads(line) for line in lines]
    for record in edited[1:]:
        if record["key"] == "praison:session:tmp":
            record["expires_at"] = 1000
    out.write_text("".join(json.dumps(r) + "\n" for r in edited))
    redis_db.command("FLUSHDB")
    result = state(cli, redis_db, "import", out)
    assert result.exit_code == 0, result.stderr
    assert "skipped key 'praison:session:tmp': expired since the export" in result.stdout
    assert "praison:session:tmp" not in snap(redis_db) and len(snap(redis_db)) == len(written) - 1


# ---------------------------------------------------------------- bad input


def test_unreachable_wrong_password_and_read_only_user_are_one_line_and_change_nothing(cli, redis_db, written):
    before = snap(redis_db)
    down = _one_line(state(cli, redis_db, "list", url=redis_db.unreachable_url), 5)
    assert down.startswith(f"praisonmem: error: {redis_db.unreachable_url}: cannot reach Redis (")
    wrong = "s3cret-Wrong-pw"
    url = redis_db.url("rw", password=wrong)
    for command in (("list",), ("show", "greeting"), ("delete", "greeting", "--yes"), ("export",)):
        message = _one_line(state(cli, redis_db, *command, url=url), 5)
        assert wrong not in message and "***" in message and "refused the credentials" in message
    ro = redis_db.url("ro")
    listed = state(cli, redis_db, "list", "--json", url=ro)
    assert listed.exit_code == 0 and redis_db.ro_password not in listed.stdout + listed.stderr
    refused = _one_line(state(cli, redis_db, "delete", "greeting", "--yes", url=ro), 4)
    assert "Redis refused the command" in refused and redis_db.ro_password not in refused
    assert snap(redis_db) == before


def test_another_key_space_is_not_taken_for_an_empty_store(cli, redis_db):
    redis_db.command("SET", "upsonic:sessions:a", b"{}")
    message = _one_line(state(cli, redis_db, "list"), 3)
    assert message == (f"praisonmem: error: {redis_db.url()}: no key under prefix 'praison:' (the database holds 1 "
                       "other keys: another store's? pass its --prefix)\n")
    assert _one_line(state(cli, redis_db, "export"), 3) == message
    redis_db.command("DEL", "upsonic:sessions:a")
    empty = state(cli, redis_db, "list", "--json")
    assert (empty.exit_code, empty.json()) == (0, [])


def test_a_value_the_library_cannot_read_is_reported(cli, redis_db):
    redis_db.command("SET", "praison:broken", b"{nope")
    redis_db.command("RPUSH", "praison:queue", b"a")
    listed = state(cli, redis_db, "list", "--json")
    assert [(r["name"], r["problem"]) for r in listed.json()] == [
        ("broken", "not the JSON the state store writes (Expecting property name enclosed in double quotes: line 1 "
                   "column 2 (char 1))"),
        ("queue", "a list: the state store writes strings and hashes only")]
    assert listed.stderr.count("\n") == 2


def test_bad_arguments_are_usage_errors(cli, redis_db, written, tmp_path):
    before = snap(redis_db)
    (tmp_path / "x.jsonl").write_text('{"format": "something-else"}\n')
    (tmp_path / "bad.jsonl").write_text('{"format": "praisonmem-redis-state", "version": 1}\n{"key": 1}\n')
    for args, why in [(("list", "--store", "http://h/"), "--store must be a redis://, rediss:// or unix:// URL"),
                      (("list", "--store", redis_db.url(), "--prefix", ""), "--prefix must not be empty"),
                      (("delete", "--store", redis_db.url(), "--yes"), "give the KEYs to delete or --session S"),
                      (("delete", "greeting", "--session", "s", "--store", redis_db.url()), "not both"),
                      (("import", tmp_path / "x.jsonl", "--store", redis_db.url()), "not a praisonmem Redis state"),
                      (("import", tmp_path / "bad.jsonl", "--store", redis_db.url()), "line 2: 'encoding' must be")]:
        result = cli("state", *args)
        assert (result.exit_code, result.stdout) == (2, "") and why in result.stderr, result.stderr
        assert result.stderr.count("\n") == 1
    assert _one_line(state(cli, redis_db, "show", "nothing-here"), 3) == (
        f"praisonmem: error: {redis_db.url()}: no key 'praison:nothing-here'; nothing shown\n")
    assert snap(redis_db) == before


def test_without_redis_py_the_error_says_how_to_install_it(cli, redis_db, monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "redis", None)
    result = state(cli, redis_db, "list")
    assert (result.exit_code, result.stdout, result.stderr) == (
        5, "", "praisonmem: error: Redis support needs redis-py: pip install 'praisonmem[redis]'\n")
