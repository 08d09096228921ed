#!/usr/bin/env python3
"""session migrate throughput: a JSON home into PostgreSQL, in messages per second.

A home of N sessions x 20 messages (the benchmark generator; default 10,000, --quick 1,000) is
copied into a fresh schema of a throwaway PostgreSQL cluster each round, interleaved with the
reference: the same sessions written through the real praisonai 4.7.19 PostgresConversationStore's
API (create_session, then add_message per message: what a user would write without praisonmem;
its own one-transaction-per-call discipline), in the oracle venv. Checked, untimed: a rerun with
--verify finds every session unchanged, and migrating back to JSON gives the home's files byte for
byte.
"""

from __future__ import annotations

import json
import sys

import _bench
import _data
import _pg
from _bench import Context, Row, Sample

ROUNDS = 3
MESSAGES = 20

REFERENCE = r"""
import glob, json, sys, time
from datetime import datetime
from praisonai.persistence.conversation.base import ConversationMessage, ConversationSession
from praisonai.persistence.conversation.postgres import PostgresConversationStore
url, schema, directory = sys.argv[1:4]
st = PostgresConversationStore(url=url, schema=schema)
n = 0
for path in sorted(glob.glob(directory + "/*.json")):
    doc = json.load(open(path, encoding="utf-8"))
    st.create_session(ConversationSession(session_id=doc["session_id"], user_id=doc.get("user_id"),
                      agent_id=doc.get("agent_name"), metadata=doc.get("metadata"),
                      created_at=datetime.fromisoformat(doc["created_at"]).timestamp(),
                      updated_at=datetime.fromisoformat(doc["updated_at"]).timestamp()))
    for m in doc["messages"]:
        st.add_message(doc["session_id"], ConversationMessage(role=m["role"], content=m["content"],
                       metadata=m["metadata"], created_at=m["timestamp"]))
        n += 1
st.close()
print(n)
"""


def body(ctx: Context) -> list[Row]:
    size = ctx.sessions
    home = _data.session_home(ctx.data_dir, size, MESSAGES)
    _data.tidy_home(home)
    sessions = home / "sessions"
    db = _pg.database("bench_migrate")
    url = db.rw_url
    oracle = _pg.oracle_python(ctx.args)
    counter = iter(range(10**6))
    print(f"session migrate JSON -> PostgreSQL, {size} sessions x {MESSAGES} messages, {_bench.load_line()}",
          file=sys.stderr)

    def praisonmem() -> dict[str, Sample]:
        schema = f"pm{next(counter)}"
        run = ctx.pm_run("session", "migrate", "--from", str(sessions), "--to", url, "--schema", schema, "--all",
                         "--json")
        summary = json.loads(run.stdout)
        assert (summary["copied"], summary["messages"]) == (size, size * MESSAGES), summary
        return {"praisonmem migrate": run.sample}

    def library() -> dict[str, Sample]:
        schema = f"lib{next(counter)}"
        run = _bench.run([oracle, "-c", REFERENCE, url, schema, str(sessions)], env=ctx.env, cwd=ctx.cwd)
        assert int(run.stdout) == size * MESSAGES
        return {"library API": run.sample}

    load_before = _bench.load_line()
    samples = _bench.interleave([praisonmem, library], ctx.rounds, warmup=0)
    # checked once, untimed: a rerun copies nothing, and the way back gives the same bytes
    again = json.loads(ctx.pm_run("session", "migrate", "--from", str(sessions), "--to", url, "--schema", "pm0",
                                  "--all", "--verify", "--json").stdout)
    assert again.get("unchanged") == size, again
    back = _data.scratch(ctx.data_dir, "migrate-back")
    ctx.pm_run("session", "migrate", "--from", url, "--schema", "pm0", "--to", str(back / "sessions"), "--all")
    for path in _data.session_files(home):
        assert (back / "sessions" / path.name).read_bytes() == path.read_bytes(), path.name
    messages = size * MESSAGES
    rates = {label: messages / _bench.median(values) for label, values in samples.items()}
    print(f"  throughput: praisonmem {rates['praisonmem migrate']:,.0f} messages/s, "
          f"library API {rates['library API']:,.0f} messages/s", file=sys.stderr)
    details = _bench.details(samples, load_before, sessions=size, messages=messages,
                             messages_per_second={k: round(v) for k, v in rates.items()})
    return [_bench.ratio_row(f"session migrate JSON->PostgreSQL, {size:,}x{MESSAGES} "
                             f"({rates['praisonmem migrate']:,.0f} msg/s)", samples, "praisonmem migrate",
                             "library API", 1.0, checked="rerun unchanged; JSON->PG->JSON byte-identical",
                             details=details)]


if __name__ == "__main__":
    _bench.main(__doc__, ROUNDS, body, _pg.extra_args)
