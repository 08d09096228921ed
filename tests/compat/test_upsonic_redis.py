"""Upsonic 0.77.3's RedisStorage and praisonmem on the same throwaway redis-server: the library writes (the fixture
generator's sessions and user memories, with ``expire``), praisonmem reads exactly; after each praisonmem write the
library reads back exactly the change, every other key (value and TTL) is as it was, and the index sets are the
library's."""

from __future__ import annotations

import json

import pytest

from tests.compat.conftest import last_json, run_library
from tests.conftest import FIXTURES
from tests.redisserver import require_redis_py

pytest.importorskip("upsonic")

UPSONIC_ENV = {"UPSONIC_TELEMETRY": "false"}
GENERATOR = FIXTURES / "tools" / "gen_upsonic_fixtures.py"
EXPIRE = 5000

WRITE = f"""
import asyncio, importlib.util, sys
from pathlib import Path
spec = importlib.util.spec_from_file_location("ugen", {str(GENERATOR)!r})
ugen = importlib.util.module_from_spec(spec); spec.loader.exec_module(ugen)
from upsonic.storage.redis import RedisStorage
expire = int(sys.argv[3]) if sys.argv[3] != "none" else None
ugen.SqliteStorage = lambda db_file: RedisStorage(db_url=sys.argv[1], db_prefix=sys.argv[2], expire=expire)
asyncio.run(ugen.main(Path("/nonexistent/unused.db")))
print("{{}}")
"""

READ = """
import json, sys
from upsonic.storage.redis import RedisStorage
storage = RedisStorage(db_url=sys.argv[1], db_prefix=sys.argv[2])
rows, _ = storage.get_sessions(deserialize=False)
users, _ = storage.get_user_memories(deserialize=False)
typed = {s.session_id: len(s.messages or []) for s in storage.get_sessions()}
print(json.dumps({"sessions": {r["session_id"]: r for r in rows}, "users": {u["user_id"]: u for u in users},
                  "typed": typed}))
"""


@pytest.fixture
def lib(redis_db, tmp_path):
    require_redis_py()

    class Library:
        def write(self, prefix: str = "upsonic", expire: int | None = EXPIRE) -> None:
            run_library(WRITE, redis_db.url(), prefix, str(expire or "none"), home=tmp_path, **UPSONIC_ENV)

        def read(self, prefix: str = "upsonic") -> dict:
            return last_json(run_library(READ, redis_db.url(), prefix, home=tmp_path, **UPSONIC_ENV))

        def run(self, code: str, *args: str) -> None:
            run_library(code, redis_db.url(), *args, home=tmp_path, **UPSONIC_ENV)

    return Library()


def without_ttl(dump: dict) -> dict:
    return {k: {**v, "ttl": None} for k, v in dump.items()}


def test_praisonmem_reads_exactly_what_redis_storage_wrote(cli, lib, redis_db):
    lib.write()
    seen = lib.read()
    url = redis_db.url()
    listed = cli("upsonic", "sessions", "--db", url, "--json").json()
    assert sorted(r["session_id"] for r in listed) == sorted(seen["sessions"])
    assert {r["session_id"]: r["message_count"] for r in listed} == seen["typed"]
    for session_id, theirs in seen["sessions"].items():
        mine = cli("upsonic", "show", session_id, "--db", url, "--json").json()
        assert {k: mine[k] for k in theirs} == theirs, session_id
    for user_id, theirs in seen["users"].items():
        assert cli("upsonic", "user-memory", user_id, "--db", url, "--json").json() == theirs
    by_socket = cli("upsonic", "sessions", "--db", redis_db.url(socket=True), "--json").json()
    assert by_socket == listed


def test_reads_change_nothing_and_never_use_keys(cli, lib, redis_db):
    lib.write(expire=None)  # TTLs would tick between the dumps
    before = redis_db.dump()
    redis_db.command("CONFIG", "RESETSTAT")
    for args in (("sessions",), ("show", "session_001"), ("user-memory", "user_123"), ("export",)):
        assert cli("upsonic", *args, "--db", redis_db.url()).exit_code == 0, args
    assert cli("upsonic", "user-memory", "set", "user_123", "a=1", "--db", redis_db.url()).exit_code == 0
    stats = redis_db.command("INFO", "commandstats").decode()
    assert "cmdstat_scan:" in stats and "cmdstat_keys:" not in stats
    redis_db.command("SET", "upsonic:user_memories:user_123", before["upsonic:user_memories:user_123"]["value"])
    assert redis_db.dump() == before


def test_library_reads_exactly_the_trait_edit_and_ttls_stay(cli, lib, redis_db):
    lib.write()
    before, dump = lib.read(), redis_db.dump()
    result = cli("upsonic", "user-memory", "set", "user_123", "detected_tone=formal", "--db", redis_db.url())
    assert result.exit_code == 0, result.stderr
    after, now = lib.read(), redis_db.dump()
    old, new = before["users"]["user_123"], after["users"]["user_123"]
    assert new["user_memory"] == {**old["user_memory"], "detected_tone": "formal"}
    assert {k: new[k] for k in ("agent_id", "team_id", "created_at")} == {
        k: old[k] for k in ("agent_id", "team_id", "created_at")}
    assert after["sessions"] == before["sessions"] and after["users"]["user_456"] == before["users"]["user_456"]
    key = "upsonic:user_memories:user_123"
    assert without_ttl({k: v for k, v in now.items() if k != key}) == without_ttl(
        {k: v for k, v in dump.items() if k != key})  # the indexes and every other record as they were
    assert all(0 < v["ttl"] <= EXPIRE for v in now.values())  # each key kept its TTL (none was cleared)
    assert EXPIRE - 60 < now[key]["ttl"] <= dump[key]["ttl"]
    # the value is the library's serialisation of the changed record
    record = json.loads(dump[key]["value"])
    record["user_memory"]["detected_tone"] = "formal"
    record["updated_at"] = new["updated_at"]
    assert now[key]["value"] == json.dumps(record, ensure_ascii=False).encode()


def test_import_into_an_empty_database_gives_the_library_s_keys_and_indexes(cli, lib, redis_db, tmp_path, db):
    lib.write(expire=None)
    theirs = redis_db.dump()
    seen = lib.read()
    export = tmp_path / "export.json"
    assert cli("upsonic", "export", "--db", redis_db.url(), "-o", export).exit_code == 0
    redis_db.command("FLUSHDB")
    result = cli("upsonic", "import", export, "--db", redis_db.url())
    assert result.exit_code == 0, result.stderr
    mine = redis_db.dump()
    assert sorted(mine) == sorted(theirs)
    assert {k: v for k, v in mine.items() if ":index:" in k} == {k: v for k, v in theirs.items() if ":index:" in k}
    assert lib.read() == seen


def test_a_prefix_other_than_upsonic(cli, lib, redis_db):
    lib.write(prefix="team_a", expire=None)
    assert cli("upsonic", "sessions", "--db", redis_db.url(), "--json").json() == []
    listed = cli("upsonic", "sessions", "--db", redis_db.url(), "--prefix", "team_a", "--json").json()
    assert len(listed) == 4


def test_a_new_user_gets_the_library_s_record_and_indexes(cli, lib, redis_db):
    assert cli("upsonic", "user-memory", "set", "fresh", "tone=dry", "--db", redis_db.url()).exit_code == 0
    assert sorted(redis_db.dump()) == ["upsonic:user_memories:fresh", "upsonic:user_memories:index:user_id:fresh"]
    assert lib.read()["users"]["fresh"]["user_memory"] == {"tone": "dry"}


def test_a_concurrent_write_between_read_and_write_is_never_overwritten(cli, lib, redis_db, monkeypatch):
    lib.write(expire=None)
    from praisonmem.core.upsonic import redis_backend

    def agent_writes(backend):
        lib.run("""
            import sys
            from upsonic.storage.redis import RedisStorage
            from upsonic.storage.schemas import UserMemory
            RedisStorage(db_url=sys.argv[1]).upsert_user_memory(UserMemory(user_id="user_123", agent_id="agent_fin",
                                                                           user_memory={"by": "agent"}))
        """)

    monkeypatch.setattr(redis_backend, "before_commit", agent_writes)
    before = redis_db.dump()
    result = cli("upsonic", "user-memory", "set", "user_123", "by=praisonmem", "--db", redis_db.url())
    assert (result.exit_code, result.stdout) == (4, "")
    assert result.stderr == (f"praisonmem: error: {redis_db.url()}: another writer changed the Upsonic records "
                             "meanwhile; nothing changed\n")
    assert lib.read()["users"]["user_123"]["user_memory"] == {"by": "agent"}
    after = redis_db.dump()
    assert {k: v for k, v in after.items() if k != "upsonic:user_memories:user_123"} == {
        k: v for k, v in before.items() if k != "upsonic:user_memories:user_123"}


def _one_line(result, code: int) -> str:
    assert (result.exit_code, result.stdout) == (code, ""), result.stderr
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    return result.stderr


def test_bad_inputs_are_one_line_write_nothing_and_never_show_a_password(cli, lib, redis_db, db):
    lib.write(expire=None)
    before = redis_db.dump()
    down = _one_line(cli("upsonic", "sessions", "--db", redis_db.unreachable_url), 5)
    assert down.startswith(f"praisonmem: error: {redis_db.unreachable_url}: cannot reach Redis (")
    wrong = "s3cret-Wrong-pw"
    for args in (("sessions",), ("user-memory", "set", "user_123", "a=1")):
        message = _one_line(cli("upsonic", *args, "--db", redis_db.url("rw", password=wrong)), 5)
        assert wrong not in message and "***" in message and "refused the credentials" in message
    ro = redis_db.ro_url
    assert len(cli("upsonic", "sessions", "--db", ro, "--json").json()) == 4  # a read-only user reads
    refused = _one_line(cli("upsonic", "user-memory", "set", "user_123", "a=1", "--db", ro), 4)
    assert "Redis refused the command" in refused and redis_db.ro_password not in refused
    moved = _one_line(cli("upsonic", "migrate", "--from", db, "--to", redis_db.url("ro", socket=True),
                          "--to-prefix", "fresh"), 4)
    assert "Redis refused the command" in moved and redis_db.ro_password not in moved
    mongo = _one_line(cli("upsonic", "sessions", "--db", "mongodb://me:hunter22@db/x"), 2)
    assert mongo == ("praisonmem: error: unsupported database URL mongodb://me:***@db/x: mongodb:// is not supported "
                     "(praisonmem opens Upsonic's SQLite file, JSONStorage directory, postgresql:// and redis:// "
                     "stores)\n")
    assert redis_db.dump() == before


def test_another_application_s_keys_under_the_prefix_are_refused(cli, lib, redis_db):
    lib.write(expire=None)
    redis_db.command("HSET", "upsonic:sessions:cache", "hits", "3")
    redis_db.command("SET", "upsonic:user_memories:token", "not json")
    before = redis_db.dump()
    listed = _one_line(cli("upsonic", "sessions", "--db", redis_db.url()), 4)
    assert listed == ("praisonmem: error: redis://127.0.0.1:{}/{}: key 'upsonic:sessions:cache': is a hash, not the "
                      "JSON string RedisStorage writes (another application's keys under --prefix 'upsonic'?); not "
                      "touched\n").format(redis_db.port, redis_db.number)
    _one_line(cli("upsonic", "export", "--db", redis_db.url()), 4)
    assert cli("upsonic", "user-memory", "user_123", "--db", redis_db.url()).exit_code == 0  # one key: readable
    _one_line(cli("upsonic", "user-memory", "set", "token", "a=1", "--db", redis_db.url()), 4)
    redis_db.command("SET", "upsonic:user_memories:index:user_id:user_999", "x")  # an index key of another type
    before = redis_db.dump()
    index = _one_line(cli("upsonic", "user-memory", "set", "user_999", "a=1", "--db", redis_db.url()), 4)
    assert "'upsonic:user_memories:index:user_id:user_999': is a string, not the set of ids" in index
    assert redis_db.dump() == before


def test_usage_and_secrets_read_redis_storage(cli, lib, redis_db):
    lib.write(expire=None)
    usage = cli("usage", "--store", redis_db.url(), "--by", "session", "--json")
    assert usage.exit_code == 0, usage.stderr
    assert cli("upsonic", "user-memory", "set", "user_456", "api_key=sk-proj-abcdefghijklmnopqrstuvwxyz0123456789AB",
               "--db", redis_db.url()).exit_code == 0
    found = cli("check", "--secrets", "--upsonic-db", redis_db.url(), "--json")
    assert found.json()["count"] >= 1 and found.json()["scanned"]["upsonic_users"] == 2


def test_migrate_with_expire_gives_every_new_record_and_index_set_that_ttl(cli, redis_db, db):
    result = cli("upsonic", "migrate", "--from", db, "--to", redis_db.url(), "--expire", "600", "--verify")
    assert result.exit_code == 0, result.stderr
    dump = redis_db.dump()
    assert len(dump) == 14 and all(540 < v["ttl"] <= 600 for v in dump.values())


def test_an_import_that_changes_an_indexed_field_moves_the_id_between_index_sets(cli, lib, redis_db, tmp_path):
    lib.write(expire=None)
    export = tmp_path / "export.json"
    assert cli("upsonic", "export", "--db", redis_db.url(), "--sessions", "-o", export).exit_code == 0
    doc = json.loads(export.read_text())
    doc["sessions"] = [dict(s, agent_id="agent_new") for s in doc["sessions"] if s["session_id"] == "session_003"]
    export.write_text(json.dumps(doc))
    assert cli("upsonic", "import", export, "--db", redis_db.url(), "--yes").exit_code == 0
    dump = redis_db.dump()
    assert "upsonic:sessions:index:agent_id:agent_support" not in dump  # its only id left: the set is gone
    assert dump["upsonic:sessions:index:agent_id:agent_new"]["value"] == [b"session_003"]
    seen = last_json(run_library("""
        import json, sys
        from upsonic.storage.redis import RedisStorage
        rows, total = RedisStorage(db_url=sys.argv[1]).get_sessions(agent_id="agent_new", deserialize=False)
        print(json.dumps([r["session_id"] for r in rows]))
    """, redis_db.url(), home=tmp_path, **UPSONIC_ENV))
    assert seen == ["session_003"]


def test_the_configured_upsonic_db_may_be_redis_storage_and_its_password_is_never_shown(cli, lib, redis_db,
                                                                                         monkeypatch):
    lib.write(expire=None)
    monkeypatch.setenv("PRAISONMEM_UPSONIC_DB", redis_db.rw_url)
    assert len(cli("upsonic", "sessions", "--json").json()) == 4
    shown = cli("config", "show")
    assert shown.exit_code == 0 and redis_db.rw_password not in shown.stdout + shown.stderr
    assert redis_db.rw_url.replace(redis_db.rw_password, "***") in shown.stdout
    paths = cli("workspace", "paths")
    assert paths.exit_code == 0 and redis_db.rw_password not in paths.stdout + paths.stderr
