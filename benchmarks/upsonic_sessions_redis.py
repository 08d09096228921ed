#!/usr/bin/env python3
"""praisonmem upsonic sessions --db redis://… vs Upsonic 0.77.3's RedisStorage.get_sessions.

100,000 sessions (--quick: 10,000) in RedisStorage's layout on a throwaway redis-server (tests/redisserver.py's:
Debian's redis-server run unprivileged on 127.0.0.1, a random port, nothing saved to disk, removed at the end).
The records are copies of one agent session the library itself wrote (the fixture generator's session_001,
written through RedisStorage: messages, runs, usage), each with its own session_id, user_id (5 users), created_at
(one minute apart) and updated_at, serialised as the library serialises a record, with the library's index sets,
loaded by a pipeline (loading through either tool is not what is measured). Interleaved rounds, process against
process, each including its start-up and imports: the newest 50 (``upsonic sessions``'s default) and all
(``--limit 0``), ``upsonic sessions --db URL --json`` against
``RedisStorage(db_url=URL).get_sessions(sort_by="created_at", sort_order="desc", limit=…, deserialize=False)``
(the library's listing; without ``sort_by`` it returns SCAN order, so the benchmark asks it for praisonmem's
order, newest created first; every created_at differs, so the order is total). Checked: the same session ids
in the same order as the library's, and every message and run count that of the template.
"""

from __future__ import annotations

import atexit
import json
import sys

import _bench
import _pg
from _bench import Context, Row, Sample

sys.path.insert(0, str(_pg.REPO))

ROUNDS = 5
SIZE, QUICK_SIZE = 100_000, 10_000
LIMITS = (50, 0)
PREFIX = "upsonic"
LOAD_BATCH = 2_000  # records per pipelined round trip while loading
START = 1_767_225_600  # 2026-01-01 UTC

LIBRARY = r"""
import json, sys
from upsonic.storage.redis import RedisStorage
storage = RedisStorage(db_url=sys.argv[1])
limit = int(sys.argv[2]) or None
rows, total = storage.get_sessions(sort_by="created_at", sort_order="desc", limit=limit, deserialize=False)
print(json.dumps([r["session_id"] for r in rows]) if sys.argv[3] == "ids" else len(rows))
"""

# The fixture generator's sessions, written by RedisStorage itself under another prefix: the template's source.
TEMPLATE = r"""
import asyncio, importlib.util, sys
from pathlib import Path
spec = importlib.util.spec_from_file_location("ugen", sys.argv[2])
ugen = importlib.util.module_from_spec(spec); spec.loader.exec_module(ugen)
from upsonic.storage.redis import RedisStorage
ugen.SqliteStorage = lambda db_file: RedisStorage(db_url=sys.argv[1], db_prefix="template")
asyncio.run(ugen.main(Path("/nonexistent/unused.db")))
"""
GENERATOR = _pg.REPO / "tests" / "fixtures" / "tools" / "gen_upsonic_fixtures.py"
INDEX_FIELDS = ("user_id", "agent_id", "team_id", "workflow_id", "session_type")


def server():
    from tests.redisserver import RedisServer, find_binary

    binary = find_binary()
    if binary is None:
        raise SystemExit("no redis-server (apt-get install redis-server)")
    srv = RedisServer(binary).start()
    atexit.register(srv.stop)
    return srv


def template(ctx: Context, url: str, client) -> dict:
    """session_001 as RedisStorage wrote it (its template prefix deleted afterwards)."""
    _bench.run([_bench.PYTHON, "-c", TEMPLATE, url, str(GENERATOR)], env={**ctx.env, "UPSONIC_TELEMETRY": "false"},
               cwd=ctx.cwd)
    record = json.loads(client.get("template:sessions:session_001"))
    for key in list(client.scan_iter(match="template:*")):
        client.delete(key)
    assert record["session_type"] == "agent" and record["messages"] and record["runs"], record.keys()
    return record


def load(client, record: dict, size: int) -> None:
    """``size`` copies of ``record`` as RedisStorage stores a session: the JSON string and its index sets."""
    for lo in range(0, size, LOAD_BATCH):
        pipe = client.pipeline(transaction=False)
        index: dict[str, list[str]] = {}
        for seq in range(lo, min(size, lo + LOAD_BATCH)):
            sid = f"bench-{seq:06d}"
            copy = {**record, "session_id": sid, "user_id": f"user{seq % 5}", "created_at": START + seq * 60,
                    "updated_at": START + seq * 60 + 40}
            pipe.set(f"{PREFIX}:sessions:{sid}", json.dumps(copy, ensure_ascii=False))  # serialize_data's form
            for field in INDEX_FIELDS:
                if copy.get(field) is not None:
                    index.setdefault(f"{PREFIX}:sessions:index:{field}:{copy[field]}", []).append(sid)
        for key, ids in index.items():
            pipe.sadd(key, *ids)
        pipe.execute()


def body(ctx: Context) -> list[Row]:
    import redis

    size = QUICK_SIZE if ctx.quick else SIZE
    db = server().take_database()
    url = db.url()
    client = redis.Redis.from_url(url)
    record = template(ctx, url, client)
    load(client, record, size)
    messages, runs = len(record["messages"]), len(record["runs"])
    print(f"upsonic sessions --db redis://, {size} sessions ({len(json.dumps(record))} bytes each), "
          f"{_bench.load_line()}", file=sys.stderr)
    env = {**ctx.env, "UPSONIC_TELEMETRY": "false"}
    rows = []
    for limit in LIMITS:
        theirs = json.loads(_bench.run([_bench.PYTHON, "-c", LIBRARY, url, str(limit), "ids"], env=env,
                                       cwd=ctx.cwd).stdout)
        argv = ("upsonic", "sessions", "--db", url, "--json", "--limit", str(limit))
        ours = json.loads(ctx.pm_run(*argv).stdout)
        assert len(theirs) == (limit or size)
        assert [r["session_id"] for r in ours] == theirs, "order differs from get_sessions"
        assert {(r["message_count"], r["run_count"]) for r in ours} == {(messages, runs)}

        def praisonmem(argv=argv) -> dict[str, Sample]:
            return {"praisonmem": ctx.pm_run(*argv).sample}

        def library(limit=limit, n=len(theirs)) -> dict[str, Sample]:
            run = _bench.run([_bench.PYTHON, "-c", LIBRARY, url, str(limit), "count"], env=env, cwd=ctx.cwd)
            assert int(run.stdout) == n
            return {"get_sessions": run.sample}

        load_before = _bench.load_line()
        samples = _bench.interleave([praisonmem, library], ctx.rounds)
        label = f"newest {limit}" if limit else "all (--limit 0)"
        rows.append(_bench.ratio_row(f"upsonic sessions --db redis://, {label} of {size:,}", samples, "praisonmem",
                                     "get_sessions", 1.0, checked="same ids, same order as get_sessions; counts",
                                     details=_bench.details(samples, load_before, sessions=size, limit=limit)))
    client.close()
    return rows


if __name__ == "__main__":
    _bench.main(__doc__, ROUNDS, body)
