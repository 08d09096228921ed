"""``upsonic migrate`` among SqliteStorage, PostgresStorage, RedisStorage and JSONStorage, each store read back by
the real Upsonic 0.77.3 library: every session and user memory, every field, the same values after any chain of
hops; a rerun changes nothing; a SIGKILL mid-migrate then a rerun gives the uninterrupted result."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import textwrap

import pytest

from tests.compat.conftest import last_json, library_env, run_library
from tests.pgcluster import require_psycopg
from tests.redisserver import require_redis_py

pytest.importorskip("upsonic")

UPSONIC_ENV = {"UPSONIC_TELEMETRY": "false"}
COLUMNS = ("session_id", "session_type", "agent_id", "team_id", "workflow_id", "user_id", "session_data",
           "agent_data", "metadata", "runs", "messages", "usage", "summary", "created_at", "updated_at")
USER_COLUMNS = ("user_id", "user_memory", "agent_id", "team_id", "created_at", "updated_at")

READ = f"""
import json, sys
kind, where = sys.argv[1], sys.argv[2]
if kind == "sqlite":
    from upsonic.storage.sqlite import SqliteStorage
    storage = SqliteStorage(db_file=where)
elif kind == "json":
    from upsonic.storage.json import JSONStorage
    storage = JSONStorage(db_path=where)
elif kind == "redis":
    from upsonic.storage.redis import RedisStorage
    storage = RedisStorage(db_url=where)
else:
    from upsonic.storage.postgres import PostgresStorage
    storage = PostgresStorage(db_url=where.replace("postgresql://", "postgresql+psycopg://", 1))
rows = storage.get_sessions(deserialize=False)
rows = rows[0] if isinstance(rows, tuple) else rows
users = storage.get_user_memories(deserialize=False)
users = users[0] if isinstance(users, tuple) else users
typed = {{s.session_id: [m.kind for m in s.messages or []] for s in storage.get_sessions()}}
print(json.dumps({{"sessions": {{r["session_id"]: {{k: r.get(k) for k in {COLUMNS!r}}} for r in rows}},
                  "users": {{u["user_id"]: {{k: u.get(k) for k in {USER_COLUMNS!r}}} for u in users}},
                  "typed": typed}}))
"""


@pytest.fixture
def read(tmp_path):
    def reader(kind: str, where) -> dict:
        return last_json(run_library(READ, kind, str(where), home=tmp_path, **UPSONIC_ENV))
    return reader


def sqlite_rows(path) -> dict:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return {t: conn.execute(f"SELECT * FROM {t} ORDER BY 1").fetchall()
                for t in ("upsonic_sessions", "upsonic_user_memories")}
    finally:
        conn.close()


def migrate(cli, source, target, *extra):
    result = cli("upsonic", "migrate", "--from", source, "--to", target, "--verify", *extra)
    assert result.exit_code == 0, result.stderr
    return result


def test_sqlite_redis_postgres_json_sqlite_gives_back_every_row(cli, db, redis_db, pg, tmp_path, read):
    require_psycopg()
    require_redis_py()
    original = read("sqlite", db)
    assert original["sessions"]["session_001"]["usage"] and len(original["users"]) == 2
    hops = [("redis", redis_db.url()), ("pg", pg.rw_url), ("json", f"{tmp_path / 'jdb'}/"),
            ("sqlite", tmp_path / "back.db")]
    source = db
    for kind, target in hops:
        migrate(cli, source, target)
        seen = read(kind, target)
        assert seen["sessions"] == original["sessions"], kind
        assert seen["users"] == original["users"], kind
        assert seen["typed"] == original["typed"], kind
        source = target


def test_without_postgres_the_sqlite_rows_come_back_byte_for_byte(cli, db, redis_db, tmp_path):
    require_redis_py()
    migrate(cli, db, f"{tmp_path / 'jdb'}/")
    migrate(cli, tmp_path / "jdb", redis_db.url())
    migrate(cli, redis_db.url(), tmp_path / "back.db")
    assert sqlite_rows(tmp_path / "back.db") == sqlite_rows(db)


def test_a_rerun_changes_nothing(cli, db, redis_db, tmp_path):
    require_redis_py()
    jdb = tmp_path / "jdb"
    migrate(cli, db, f"{jdb}/")
    migrate(cli, db, redis_db.url())
    files = {n: (jdb / n).read_bytes() for n in os.listdir(jdb)}
    dump = redis_db.dump()
    for target in (jdb, redis_db.url()):
        again = cli("upsonic", "migrate", "--from", db, "--to", target, "--verify", "--json")
        assert again.exit_code == 0 and {c["action"] for c in again.json()} == {"skipped"}
        assert len(again.json()) == 6
    assert {n: (jdb / n).read_bytes() for n in os.listdir(jdb)} == files
    assert redis_db.dump() == dump


def test_dry_run_writes_nothing(cli, db, redis_db, tmp_path):
    require_redis_py()
    result = cli("upsonic", "migrate", "--from", db, "--to", redis_db.url(), "--dry-run", "--json")
    assert result.exit_code == 0 and {(c["action"], c["dry_run"]) for c in result.json()} == {("inserted", True)}
    assert redis_db.dump() == {}
    assert cli("upsonic", "migrate", "--from", db, "--to", tmp_path / "new.db", "--dry-run").exit_code == 0
    assert not (tmp_path / "new.db").exists()


def test_a_different_record_with_the_same_id_is_refused_unless_overwrite(cli, db, tmp_path, read):
    target = tmp_path / "other.db"
    migrate(cli, db, target)
    assert cli("upsonic", "user-memory", "set", "user_123", "detected_tone=formal", "--db", target).exit_code == 0
    before = target.read_bytes()
    refused = cli("upsonic", "migrate", "--from", db, "--to", target)
    assert (refused.exit_code, refused.stdout) == (4, "")
    assert refused.stderr == (f"praisonmem: error: {target} already holds 1 other record with the same id (user "
                              "user_123); nothing written (--overwrite replaces them)\n")
    assert target.read_bytes() == before
    replaced = cli("upsonic", "migrate", "--from", db, "--to", target, "--overwrite", "--yes", "--verify")
    assert replaced.exit_code == 0, replaced.stderr
    assert read("sqlite", target)["users"]["user_123"] == read("sqlite", db)["users"]["user_123"]


def test_verify_lists_a_row_that_differs(cli, db, redis_db, monkeypatch):
    require_redis_py()
    from praisonmem.core.upsonic import records

    made = records.session_record

    def tampered(row, *args):
        record = made(row, *args)
        if record["session_id"] == "session_003":
            record["summary"] = "not what the source holds"
        return record

    monkeypatch.setattr(records, "session_record", tampered)
    result = cli("upsonic", "migrate", "--from", db, "--to", redis_db.url(), "--verify", "--json")
    assert result.exit_code == 1
    failed = [c for c in result.json() if c["action"] == "failed"]
    assert failed == [{"action": "failed", "kind": "session", "id": "session_003", "dry_run": False,
                       "detail": "verify: differs in summary"}]


KILL = """
import os, signal, sys
sys.argv[0] = "praisonmem"
where = sys.argv.pop(1)
count = {"n": 0}
def die_at(n):
    count["n"] += 1
    if count["n"] == n:
        os.kill(os.getpid(), signal.SIGKILL)
if where == "json":
    from contextlib import contextmanager
    from praisonmem.core.io import jsonfile
    replacing = jsonfile.replacing
    @contextmanager
    def killing(*a, **k):
        die_at(2)  # the second table file: the first one is already replaced
        with replacing(*a, **k) as handle:
            yield handle
    jsonfile.replacing = killing
elif where == "sqlite":
    from praisonmem.core.upsonic import sqlite_backend
    upsert = sqlite_backend.SqliteTransaction.upsert
    def killing(self, u):
        die_at(4)
        return upsert(self, u)
    sqlite_backend.SqliteTransaction.upsert = killing
else:
    from praisonmem.core.upsonic import redis_backend
    redis_backend.before_commit = lambda backend: die_at(1)
from praisonmem.cli.app import run
sys.exit(run(sys.argv[1:]))
"""


@pytest.mark.parametrize("kind", ["json", "sqlite", "redis"])
def test_sigkill_mid_migrate_then_a_rerun_is_the_uninterrupted_result(cli, db, redis_db, tmp_path, kind, read):
    if kind == "redis":
        require_redis_py()
    target = {"json": f"{tmp_path / 'jdb'}/", "sqlite": tmp_path / "t.db", "redis": redis_db.url()}[kind]
    killed = subprocess.run([sys.executable, "-c", textwrap.dedent(KILL), kind, "upsonic", "migrate", "--from",
                             str(db), "--to", str(target)], env=library_env(tmp_path), capture_output=True,
                            timeout=120)
    assert killed.returncode == -9, killed.stderr
    if kind == "json":
        assert sorted(os.listdir(tmp_path / "jdb")) == ["upsonic_sessions.json"]  # half done
    rerun = cli("upsonic", "migrate", "--from", db, "--to", target, "--verify")
    assert rerun.exit_code == 0, rerun.stderr
    done = read(kind, target)
    # the same migrate, never interrupted, into a fresh store
    if kind == "redis":
        dump = redis_db.dump()
        redis_db.command("FLUSHDB")
        fresh = target
    else:
        fresh = {"json": f"{tmp_path / 'fresh'}/", "sqlite": tmp_path / "fresh.db"}[kind]
    migrate(cli, db, fresh)
    assert done == read(kind, fresh)
    if kind == "json":
        for name in ("upsonic_sessions.json", "upsonic_user_memories.json"):
            assert (tmp_path / "jdb" / name).read_bytes() == (tmp_path / "fresh" / name).read_bytes()
    elif kind == "sqlite":
        assert sqlite_rows(target) == sqlite_rows(fresh)
    else:
        assert redis_db.dump() == dump


def test_same_store_and_unsupported_urls(cli, db, tmp_path):
    same = cli("upsonic", "migrate", "--from", db, "--to", db)
    assert (same.exit_code, same.stderr) == (2, f"praisonmem: error: --from and --to are the same store ({db})\n")
    mongo = cli("upsonic", "migrate", "--from", db, "--to", "mongodb://u:pw123456@h/db")
    assert mongo.exit_code == 2 and "not supported" in mongo.stderr and "pw123456" not in mongo.stderr
    assert mongo.stderr.count("\n") == 1


def test_a_record_an_agent_writes_during_a_migrate_into_redis_is_never_overwritten(cli, db, redis_db, tmp_path,
                                                                                    monkeypatch, read):
    require_redis_py()
    from praisonmem.core.upsonic import redis_backend

    def agent_writes(backend):
        run_library("""
            import sys
            from upsonic.storage.redis import RedisStorage
            from upsonic.storage.schemas import UserMemory
            RedisStorage(db_url=sys.argv[1]).upsert_user_memory(UserMemory(user_id="user_456",
                                                                           user_memory={"by": "agent"}))
        """, redis_db.url(), home=tmp_path, **UPSONIC_ENV)

    monkeypatch.setattr(redis_backend, "before_commit", agent_writes)
    result = cli("upsonic", "migrate", "--from", db, "--to", redis_db.url())
    assert (result.exit_code, result.stdout) == (4, "")
    assert "another writer changed the Upsonic records meanwhile; nothing changed" in result.stderr
    seen = read("redis", redis_db.url())
    assert list(seen["users"]) == ["user_456"] and seen["sessions"] == {}  # only the agent's record
    assert seen["users"]["user_456"]["user_memory"] == {"by": "agent"}
