#!/usr/bin/env python3
"""praisonmem session list --store mysql://… vs the real praisonai 4.7.19 MySQLConversationStore's list_sessions.

100,000 sessions x 20 messages (--quick: 10,000 x 20) in PraisonAI's conversation tables on a throwaway
MariaDB server (tests/mariadbserver.py's: Debian's mariadbd run unprivileged, removed at the end): the tables
made by the real store (its own DDL and indexes, through mysql-connector-python in the oracle venv), the rows
in the shape an Agent with ``db=`` writes them, filled by INSERT … SELECT over MariaDB's sequence tables
(filling through either tool is not what is measured). Interleaved rounds, process against process, each
including its start-up and imports: the newest 50 (``session list``'s default), ``session list --store URL
--json`` against ``list_sessions(limit=50)``; and the query alone, the connection made and the imports done.
praisonmem also counts each listed session's messages (by the messages' session_id index) and, when
the page is full, the matching sessions (its "showing 50 of N" note), which list_sessions does not. Checked: the same session ids in the same order as list_sessions.
"""

from __future__ import annotations

import atexit
import json
import sys

import _bench
import _pg
from _bench import Context, Row, Sample

sys.path.insert(0, str(_pg.REPO))
from praisonmem.core.io import mysqlurl  # noqa: E402
from praisonmem.core.sessions.stores.conversation_sql import ConversationMy, ConversationStore  # noqa: E402

ROUNDS = 5
SIZE, QUICK_SIZE, MESSAGES = 100_000, 10_000, 20
LIMIT = 50

LIBRARY_CALL = r"""
import sys, time
from praisonai.persistence.conversation.mysql import MySQLConversationStore
st = MySQLConversationStore(url=sys.argv[1], auto_create_tables=False)
st.list_sessions(limit=int(sys.argv[2]))
t = time.perf_counter(); rows = st.list_sessions(limit=int(sys.argv[2])); wall = time.perf_counter() - t
print(len(rows), wall)
"""

LIBRARY = r"""
import json, sys
from praisonai.persistence.conversation.mysql import MySQLConversationStore
st = MySQLConversationStore(url=sys.argv[1], auto_create_tables=sys.argv[3] == "create")
rows = st.list_sessions(limit=int(sys.argv[2]))
print(json.dumps([s.session_id for s in rows]) if sys.argv[3] == "ids" else len(rows))
"""

FILL = """
INSERT INTO praison_sessions (session_id, user_id, agent_id, name, state, metadata, created_at, updated_at)
SELECT CONCAT('bench-', LPAD(seq, 6, '0')), CONCAT('user', seq % 5), CONCAT('Agent ', seq % 17),
       CONCAT('Session bench-', LPAD(seq, 6, '0')), NULL, '{{"goal": "Be brief.", "role": "Assistant"}}',
       1767225600 + seq * 60.0, 1767225600 + seq * 60.0 + 40.0
FROM seq_{lo}_to_{hi};
INSERT INTO praison_messages (id, session_id, role, content, tool_calls, tool_call_id, metadata, created_at)
SELECT CONCAT('msg-', MD5(CONCAT(s.seq, ':', j.seq))), CONCAT('bench-', LPAD(s.seq, 6, '0')),
       IF(j.seq % 2 = 0, 'user', 'assistant'),
       CONCAT('weather hotel lisbon paris agent memory session ', s.seq, ' ', j.seq), NULL, NULL, NULL,
       1767225600 + s.seq * 60.0 + j.seq * 1.5
FROM seq_{lo}_to_{hi} s, seq_0_to_{m} j;
"""
FILL_STEP = 2_500  # sessions per mariadb call (each call has a 60 s limit)


def server():
    from tests.mariadbserver import Server, find_binaries

    binaries = find_binaries()
    if binaries is None:
        raise SystemExit("no MariaDB server binaries (apt-get install mariadb-server)")
    class BenchServer(Server):
        def _server_argv(self) -> list[str]:  # the tests' 32M buffer pool would measure the disk, not the query
            return [a.replace("--innodb-buffer-pool-size=32M", "--innodb-buffer-pool-size=512M")
                    for a in super()._server_argv()]

    srv = BenchServer(binaries).start()
    atexit.register(srv.stop)
    return srv


def body(ctx: Context) -> list[Row]:
    size = QUICK_SIZE if ctx.quick else SIZE
    oracle = _pg.oracle_python(ctx.args)
    db = server().create_database("bench_list")
    url = db.rw_url
    _bench.run([oracle, "-c", LIBRARY, url, "1", "create"], env=ctx.env, cwd=ctx.cwd)  # the real store's DDL
    for lo in range(0, size, FILL_STEP):
        db.sql(FILL.format(lo=lo, hi=min(size, lo + FILL_STEP) - 1, m=MESSAGES - 1))
    db.sql("ANALYZE TABLE praison_sessions, praison_messages;")
    print(f"session list --store mysql://, {size} sessions x {MESSAGES} messages, {_bench.load_line()}",
          file=sys.stderr)
    theirs = json.loads(_bench.run([oracle, "-c", LIBRARY, url, str(LIMIT), "ids"], env=ctx.env,
                                   cwd=ctx.cwd).stdout)
    argv = ("session", "list", "--store", url, "--json", "--limit", str(LIMIT))
    ours = json.loads(ctx.pm_run(*argv).stdout)
    assert [r["session_id"] for r in ours] == theirs, "order differs from list_sessions"
    assert {r["message_count"] for r in ours} == {MESSAGES}

    def praisonmem() -> dict[str, Sample]:
        return {"praisonmem": ctx.pm_run(*argv).sample}

    def library() -> dict[str, Sample]:
        run = _bench.run([oracle, "-c", LIBRARY, url, str(LIMIT), "count"], env=ctx.env, cwd=ctx.cwd)
        assert int(run.stdout) == len(theirs)
        return {"list_sessions": run.sample}

    store = ConversationStore(ConversationMy(mysqlurl.parse(url)))
    store.summaries(limit=LIMIT)  # connect, warm up

    def praisonmem_call() -> dict[str, Sample]:
        sample, (listed, _) = _bench.in_process(lambda: store.summaries(limit=LIMIT))
        assert len(listed) == len(theirs)
        return {"praisonmem query": sample}

    def library_call() -> dict[str, Sample]:
        run = _bench.run([oracle, "-c", LIBRARY_CALL, url, str(LIMIT)], env=ctx.env, cwd=ctx.cwd)
        n, wall = run.stdout.split()
        assert int(n) == len(theirs)
        return {"list_sessions query": Sample(float(wall))}

    load_before = _bench.load_line()
    samples = _bench.interleave([praisonmem, library, praisonmem_call, library_call], ctx.rounds)
    store.close()
    label = f"newest {LIMIT}"
    return [_bench.ratio_row(f"session list --store mysql://, {label} of {size:,}", samples, "praisonmem",
                             "list_sessions", 1.0, checked="same ids, same order as list_sessions; message counts",
                             details=_bench.details(samples, load_before, sessions=size, limit=LIMIT)),
            _bench.ratio_row(f"  the query alone (connected, imported), {label}", samples, "praisonmem query",
                             "list_sessions query", 1.0, checked="same ids, same order", details={"limit": LIMIT})]


if __name__ == "__main__":
    _bench.main(__doc__, ROUNDS, body, _pg.extra_args)
