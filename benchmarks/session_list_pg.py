#!/usr/bin/env python3
"""praisonmem session list --store postgresql://… vs the real praisonai 4.7.19 store's list_sessions.

100,000 sessions x 20 messages (--quick: 10,000 x 20) in PraisonAI's conversation tables on a
throwaway PostgreSQL cluster: the tables made by the real PostgresConversationStore (its own DDL and
indexes), the rows in the shape an Agent with ``db=`` writes them (``msg-…`` ids, ``agent_id`` the
Agent's name, ``name`` "Session <id>", role/goal metadata), filled by one INSERT … SELECT over
generate_series (filling through either tool is not what is measured). Interleaved rounds, process
against process, each including its start-up and imports:

* the newest 50 (``session list``'s default): ``session list --store URL --json`` against
  ``list_sessions(limit=50)``;
* every session: ``session list --store URL --json --limit 0`` against ``list_sessions(limit=N)``;

and the query alone, the connection made and the imports done (praisonmem's in this process, the
library's timed inside its process; praisonmem's on a kept psycopg connection, although the CLI reads a page
through core/io/pglite.py, connecting as it does). praisonmem also counts each listed session's messages (by the messages' session_id index) and, when
the page is full, the matching sessions (its "showing 50 of N" note), which list_sessions does not. Checked: the same session ids in the same
order as list_sessions.
"""

from __future__ import annotations

import json
import sys

import _bench
import _pg
from _bench import Context, Row, Sample

sys.path.insert(0, str(_pg.REPO))
from praisonmem.core.io import pgurl  # noqa: E402
from praisonmem.core.sessions.stores.conversation_sql import ConversationStore, ConversationPg  # noqa: E402

ROUNDS = 5
SIZE, QUICK_SIZE, MESSAGES = 100_000, 10_000, 20

# The query alone (connection made, imports done): one warm-up call, then one timed call.
LIBRARY_CALL = r"""
import sys, time
from praisonai.persistence.conversation.postgres import PostgresConversationStore
st = PostgresConversationStore(url=sys.argv[1], auto_create_tables=False)
st.list_sessions(limit=int(sys.argv[2]))
t = time.perf_counter(); rows = st.list_sessions(limit=int(sys.argv[2])); wall = time.perf_counter() - t
print(len(rows), wall)
st.close()
"""

LIBRARY = r"""
import json, sys
from praisonai.persistence.conversation.postgres import PostgresConversationStore
st = PostgresConversationStore(url=sys.argv[1], auto_create_tables=sys.argv[3] == "create")
rows = st.list_sessions(limit=int(sys.argv[2]))
print(json.dumps([s.session_id for s in rows]) if sys.argv[3] == "ids" else len(rows))
st.close()
"""

FILL = """
INSERT INTO public.praison_sessions (session_id, user_id, agent_id, name, state, metadata, created_at, updated_at)
SELECT 'bench-' || lpad(i::text, 6, '0'), 'user' || (i % 5), 'Agent ' || (i % 17),
       'Session bench-' || lpad(i::text, 6, '0'), NULL, '{{"goal": "Be brief.", "role": "Assistant"}}'::jsonb,
       1767225600 + i * 60.0, 1767225600 + i * 60.0 + 40.0
FROM generate_series({lo}, {hi} - 1) AS i;
INSERT INTO public.praison_messages (id, session_id, role, content, tool_calls, tool_call_id, metadata, created_at)
SELECT 'msg-' || md5(i::text || ':' || j::text), 'bench-' || lpad(i::text, 6, '0'),
       CASE WHEN j % 2 = 0 THEN 'user' ELSE 'assistant' END,
       'weather hotel lisbon paris agent memory session ' || i || ' ' || j, NULL, NULL, '{{}}'::jsonb,
       1767225600 + i * 60.0 + j * 1.5
FROM generate_series({lo}, {hi} - 1) AS i, generate_series(0, {m} - 1) AS j;
"""
FILL_STEP = 10_000  # sessions per psql call (each call has a 60 s limit)


def body(ctx: Context) -> list[Row]:
    size = QUICK_SIZE if ctx.quick else SIZE
    oracle = _pg.oracle_python(ctx.args)
    db = _pg.database("bench_list")
    url = db.rw_url
    _bench.run([oracle, "-c", LIBRARY, url, "1", "create"], env=ctx.env, cwd=ctx.cwd)  # the real store's DDL
    for lo in range(0, size, FILL_STEP):
        db.psql(FILL.format(lo=lo, hi=min(size, lo + FILL_STEP), m=MESSAGES))
    db.psql("ANALYZE public.praison_sessions; ANALYZE public.praison_messages;")
    print(f"session list --store postgresql://, {size} sessions x {MESSAGES} messages, {_bench.load_line()}",
          file=sys.stderr)
    rows: list[Row] = []
    for limit, label in ((50, "newest 50"), (size, f"all {size:,}")):
        theirs = json.loads(_bench.run([oracle, "-c", LIBRARY, url, str(limit), "ids"], env=ctx.env,
                                       cwd=ctx.cwd).stdout)
        argv = ("session", "list", "--store", url, "--json", "--limit", str(0 if limit == size else limit))
        ours = json.loads(ctx.pm_run(*argv).stdout)
        assert [r["session_id"] for r in ours] == theirs, f"order differs from list_sessions ({label})"
        assert {r["message_count"] for r in ours} == {MESSAGES}

        def praisonmem() -> dict[str, Sample]:
            return {"praisonmem": ctx.pm_run(*argv).sample}

        def library() -> dict[str, Sample]:
            run = _bench.run([oracle, "-c", LIBRARY, url, str(limit), "count"], env=ctx.env, cwd=ctx.cwd)
            assert int(run.stdout) == len(theirs)
            return {"list_sessions": run.sample}

        store = ConversationStore(ConversationPg(pgurl.parse(url)))
        # the query on a kept psycopg connection, as the library's call keeps its own: the CLI reads a page
        # through pglite, which connects for each call (that is in the whole-process row)
        store.backend.lite_reading = None
        store.summaries(limit=0 if limit == size else limit)  # connect, warm up

        def praisonmem_call() -> dict[str, Sample]:
            sample, (listed, _) = _bench.in_process(lambda: store.summaries(limit=0 if limit == size else limit))
            assert len(listed) == len(theirs)
            return {"praisonmem query": sample}

        def library_call() -> dict[str, Sample]:
            run = _bench.run([oracle, "-c", LIBRARY_CALL, url, str(limit)], env=ctx.env, cwd=ctx.cwd)
            n, wall = run.stdout.split()
            assert int(n) == len(theirs)
            return {"list_sessions query": Sample(float(wall))}

        load_before = _bench.load_line()
        samples = _bench.interleave([praisonmem, library, praisonmem_call, library_call], ctx.rounds)
        store.close()
        rows.append(_bench.ratio_row(f"session list --store postgresql://, {label} of {size:,}", samples,
                                     "praisonmem", "list_sessions", 1.0,
                                     checked="same ids, same order as list_sessions; message counts",
                                     details=_bench.details(samples, load_before, sessions=size, limit=limit)))
        rows.append(_bench.ratio_row(f"  the query alone (connected, imported), {label}", samples,
                                     "praisonmem query", "list_sessions query", 1.0,
                                     checked="same ids, same order", details={"limit": limit}))
    return rows


if __name__ == "__main__":
    _bench.main(__doc__, ROUNDS, body, _pg.extra_args)
