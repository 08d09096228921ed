"""Upsonic on PostgreSQL in tests: the real PostgresStorage fixture loaded into a test database,
and the evidence that a command changed nothing (a snapshot of every row, and the server's own
log of the statements a role sent).

``tests/fixtures/upsonic-0.77.3-postgres/fixture.json`` is what upsonic 0.77.3's PostgresStorage
executed and stored (``tests/fixtures/tools/gen_upsonic_pg_fixture.py``): its CREATE statements as
the server logged them, the catalog they made, and every row (JSONB as its canonical text).
"""

from __future__ import annotations

import json
import re
from typing import Any

from tests.conftest import FIXTURES
from tests.pgcluster import PgDatabase, require_psycopg

PG_FIXTURE = FIXTURES / "upsonic-0.77.3-postgres" / "fixture.json"
FIXTURE = json.loads(PG_FIXTURE.read_text(encoding="utf-8"))
TABLES = {"upsonic_sessions": "session_id", "upsonic_user_memories": "user_id"}


def load(db: PgDatabase, *, schema: str = "public") -> None:
    """The library's tables and rows, created in ``schema`` as the library created them (as the owner pm_rw)."""
    psycopg = require_psycopg()
    with psycopg.connect(db.rw_url) as conn:
        if schema != "public":
            conn.execute(f'CREATE SCHEMA "{schema}"')
        for statement in FIXTURE["ddl"]:
            conn.execute(statement.replace("public.", f'"{schema}".'))
        for table, rows in FIXTURE["rows"].items():
            kinds = {name: kind for name, kind, _ in FIXTURE["catalog"][table]["columns"]}
            for row in rows:
                names = list(row)
                marks = ", ".join("%s::jsonb" if kinds[n] == "jsonb" else "%s" for n in names)
                conn.execute(f'INSERT INTO "{schema}".{table} ({", ".join(names)}) VALUES ({marks})',
                             [row[n] for n in names])


def snapshot(db: PgDatabase) -> dict[str, Any]:
    """Every schema, relation, column, index and row outside the system schemas, each row with its
    ``ctid`` and ``xmin``: equal snapshots mean nothing was written, not even the same value again."""
    psycopg = require_psycopg()
    with psycopg.connect(db.admin_url) as conn:
        user = "n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_toast%%'"
        state: dict[str, Any] = {
            "schemas": conn.execute(f"SELECT nspname, nspowner::regrole::text FROM pg_namespace n WHERE {user} "
                                    "ORDER BY 1").fetchall(),
            "relations": conn.execute(f"SELECT n.nspname, c.relname, c.relkind FROM pg_class c JOIN pg_namespace n "
                                      f"ON n.oid = c.relnamespace WHERE {user} ORDER BY 1, 2").fetchall(),
            "columns": conn.execute("SELECT table_schema, table_name, column_name, data_type, is_nullable "
                                    "FROM information_schema.columns WHERE table_schema NOT IN "
                                    "('pg_catalog', 'information_schema') ORDER BY 1, 2, ordinal_position").fetchall(),
            "indexes": conn.execute("SELECT schemaname, indexname, indexdef FROM pg_indexes WHERE schemaname NOT IN "
                                    "('pg_catalog', 'information_schema') ORDER BY 1, 2").fetchall(),
            "rows": {},
        }
        for schema, name, kind in state["relations"]:
            if kind == "r":
                state["rows"][f"{schema}.{name}"] = conn.execute(
                    f'SELECT ctid::text, xmin::text, t::text FROM "{schema}"."{name}" t ORDER BY 1').fetchall()
    return state


def log_statements(db: PgDatabase, *roles: str) -> int:
    """From now on the server logs every statement the roles send in this database; the log's
    current size (pass it to :func:`logged`)."""
    for role in roles or ("pm_rw", "pm_ro"):
        db.psql(f"ALTER ROLE {role} IN DATABASE \"{db.name}\" SET log_statement = 'all';")
    return db.cluster.log.stat().st_size


_ENTRY = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+ \w+ \[\d+\] ")


def logged(db: PgDatabase, since: int) -> list[str]:
    """The statements logged since ``since`` (continuation lines joined, whitespace collapsed)."""
    text = db.cluster.log.read_bytes()[since:].decode("utf-8", "replace")
    entries: list[str] = []
    for line in text.splitlines():
        if _ENTRY.match(line):
            entries.append(_ENTRY.sub("", line))
        elif entries:
            entries[-1] += " " + line
    out = []
    for entry in entries:
        match = re.match(r"LOG:  (?:statement|execute [^:]*): (.*)", entry, re.S)
        if match:
            out.append(" ".join(match.group(1).split()))
    return out
