"""Upsonic 0.77.3's PostgresStorage tables over psycopg 3, connected by core/io/pgurl.py.

The tables are SqliteStorage's, with PostgreSQL types and another column order (``summary``
before ``usage``): every statement names its columns. The JSON columns are **JSONB encoded
once** (SQLite's are double-encoded text); a JSON text found in one (data moved from SQLite as
is) is still decoded. As the library does, NUL is stripped from the strings in JSON values and
from ``summary`` (PostgreSQL refuses it); Python ``None`` in a JSON column is the JSON ``null``,
except ``team_data``/``workflow_data`` of an agent session, which the agent upsert never binds.

Recognised by columns and types in ``<schema>.<table>`` (exactly Upsonic's names; strings
``character varying``/``text``, JSON ``jsonb``, times ``bigint``/``integer``); anything else is
refused (exit 4). Neither table there: nothing to read (exit 3), created by import and convert.

Readers run in one ``READ ONLY`` transaction (the server refuses any write). Writers run in one
transaction, bounded by ``lock_timeout``: a trait edit locks the row (``SELECT … FOR UPDATE``)
and compares its canonical ``jsonb::text`` with the text read before, byte for byte (so ``1`` and
``1.0`` differ, as they do in the stored JSON); a missing row is inserted ``ON CONFLICT DO
NOTHING`` and a conflict means an agent created it meanwhile. Tables and a missing schema are
created inside the write transaction (PostgreSQL DDL is transactional), never by a reader.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from praisonmem.core.errors import NotFound, Refused, UsageError
from praisonmem.core.io import pgurl
from praisonmem.core.result import Action
from praisonmem.core.upsonic.schema import (JSON_SESSION_COLUMNS, SESSION_COLUMNS, UPSONIC_VERSION, USAGE_ENTRY_COLUMNS,
                                            USAGE_ENTRY_TABLE, USER_COLUMNS, Upsert, absent_table, decode, stamp)

# PostgresStorage's tables in its column order (upsonic/storage/postgres/schemas.py), as SQLAlchemy
# creates them; the indexes in that file's order.
PG_SESSION_DDL = (("session_id", "VARCHAR NOT NULL"), ("session_type", "VARCHAR NOT NULL"), ("agent_id", "VARCHAR"),
                  ("team_id", "VARCHAR"), ("workflow_id", "VARCHAR"), ("user_id", "VARCHAR"),
                  ("session_data", "JSONB"), ("agent_data", "JSONB"), ("team_data", "JSONB"),
                  ("workflow_data", "JSONB"), ("metadata", "JSONB"), ("runs", "JSONB"), ("messages", "JSONB"),
                  ("summary", "VARCHAR"), ("usage", "JSONB"), ("created_at", "BIGINT NOT NULL"),
                  ("updated_at", "BIGINT"))
PG_USER_DDL = (("user_id", "VARCHAR NOT NULL"), ("user_memory", "JSONB NOT NULL"), ("agent_id", "VARCHAR"),
               ("team_id", "VARCHAR"), ("created_at", "BIGINT NOT NULL"), ("updated_at", "BIGINT"))
PG_SESSION_INDEXES = ("session_type", "agent_id", "team_id", "workflow_id", "user_id", "created_at", "updated_at")
PG_USER_INDEXES = ("agent_id", "team_id", "created_at", "updated_at")
STRING_TYPES = ("character varying", "text")
TIME_TYPES = ("bigint", "integer")


def quote(name: str) -> str:
    """An identifier, quoted: PostgresStorage (SQLAlchemy) keeps the case of the names it is given."""
    return '"' + name.replace('"', '""') + '"'


def _ddl(schema: str, table: str, columns: tuple[tuple[str, str], ...], indexes: tuple[str, ...],
         key: str) -> list[str]:
    where = f"{quote(schema)}.{quote(table)}"
    body = ", \n\t\t".join(f"{name} {kind}" for name, kind in columns)
    return [f"CREATE TABLE {where} (\n\t\t{body}, \n\t\tPRIMARY KEY ({key})\n\t)",
            *(f"CREATE INDEX {quote(f'idx_{table}_{c}')} ON {where} ({c})" for c in indexes)]


def pg_session_ddl(table: str, schema: str = "public") -> list[str]:
    """The statements PostgresStorage runs to create its sessions table."""
    return _ddl(schema, table, PG_SESSION_DDL, PG_SESSION_INDEXES, "session_id")


def pg_user_memory_ddl(table: str, schema: str = "public") -> list[str]:
    """The statements PostgresStorage runs to create its user-memory table."""
    return _ddl(schema, table, PG_USER_DDL, PG_USER_INDEXES, "user_id")


def _expected(columns: tuple[tuple[str, str], ...]) -> dict[str, tuple[str, ...]]:
    kinds = {"VARCHAR": STRING_TYPES, "JSONB": ("jsonb",), "BIGINT": TIME_TYPES}
    return {name: kinds[kind.split()[0]] for name, kind in columns}


EXPECTED = {"sessions": _expected(PG_SESSION_DDL), "users": _expected(PG_USER_DDL)}


def strip_nul(value: Any) -> Any:
    """NUL removed from every string value (not key), as PostgresStorage's ``sanitize_postgres_*`` do."""
    if isinstance(value, str):
        return value.replace("\x00", "")
    if isinstance(value, dict):
        return {k: strip_nul(v) for k, v in value.items()}
    if isinstance(value, list):
        return [strip_nul(v) for v in value]
    return value


class PostgresBackend:
    def __init__(self, url: pgurl.DatabaseURL, session_table: str, user_memory_table: str, *,
                 timeout: float = 5.0, schema: str = "public") -> None:
        for what, name in (("--schema", schema), ("--session-table", session_table),
                           ("--user-memory-table", user_memory_table)):
            if not name or "%" in name or "\x00" in name:
                raise UsageError(f"{what} {name!r}: not a name praisonmem can use on PostgreSQL")
        self.url = url
        self.label = url.display
        self.schema = schema
        self.session_table = session_table
        self.user_memory_table = user_memory_table
        self.timeout = timeout

    def __repr__(self) -> str:
        return f"PostgresBackend({self.label!r})"

    def _table_name(self, kind: str) -> str:
        return self.session_table if kind == "sessions" else self.user_memory_table

    def table(self, kind: str) -> str:
        """``"schema"."table"`` of the sessions or users table, for SQL."""
        return f"{quote(self.schema)}.{quote(self._table_name(kind))}"

    def _name(self, kind: str) -> str:
        """``schema.table``, for messages."""
        return f"{self.schema}.{self._table_name(kind)}"

    # -------------------------------------------------------- schema

    def _check(self, conn: Any, need: tuple[str, ...], *, create: bool = False,
               allow_empty: bool = False) -> list[str]:
        """The tables in ``need`` that are missing but may be (see :class:`~.store.Backend`); anything
        that is not Upsonic's is refused, and a database without either table is :class:`NotFound`
        unless ``create`` (or ``allow_empty``: nothing to read)."""
        self._plain(conn)
        found = {kind: pgurl.columns(conn, self.schema, self._table_name(kind)) for kind in EXPECTED}
        for kind, columns in found.items():
            if columns is not None:
                self._verify(kind, columns)
        missing = [kind for kind in need if found[kind] is None]
        if missing and all(columns is None for columns in found.values()) and not (create or allow_empty):
            raise NotFound(f"{self.label}: no Upsonic tables ({self._name('sessions')}, {self._name('users')}) in "
                           f"database '{conn.info.dbname}': not created yet, or another database, --schema, "
                           "--session-table or --user-memory-table")
        for kind in missing if not (create or allow_empty) else ():
            problem = absent_table(self.label, kind, self._table_name(kind))
            if problem is not None:
                raise problem
        return missing

    def _plain(self, conn: Any) -> None:
        """Refuse views, triggers and rules by or on the store's tables before any of them is read."""
        pgurl.require_plain_tables(conn, self.schema, [self._table_name(kind) for kind in EXPECTED]
                                   + [USAGE_ENTRY_TABLE], self.label, then="refusing to touch it")

    def _verify(self, kind: str, columns: dict[str, str]) -> None:
        expected = EXPECTED[kind]
        lacking = sorted(set(expected) - set(columns))
        extra = sorted(set(columns) - set(expected))
        typed = sorted(f"{c} {t}" for c, t in columns.items()
                       if c in expected and t.split("(")[0] not in expected[c])
        if lacking or extra or typed:
            detail = f"missing: {', '.join(lacking) or '-'}; unexpected: {', '.join(extra) or '-'}"
            if typed:
                detail += f"; other types: {', '.join(typed)}"
            raise Refused(f"{self.label}: table '{self._name(kind)}' does not have Upsonic {UPSONIC_VERSION}'s "
                          f"columns ({detail}); refusing to touch it")

    def _read(self, need: tuple[str, ...], sql: str, params: tuple = (), *,
              allow_empty: bool = False) -> list[dict[str, Any]]:
        """One ``READ ONLY`` transaction: check the schema, fetch everything, close."""
        with pgurl.transaction(self.url, read_only=True, lock_timeout=self.timeout) as conn:
            if self._check(conn, need, allow_empty=allow_empty):
                return []
            return conn.cursor(row_factory=pgurl.driver().rows.dict_row).execute(sql, params).fetchall()

    # -------------------------------------------------------- reads

    def summaries(self, filters: list[tuple[str, str]], limit: int) -> list[dict[str, Any]]:
        where = [f"{column} = %s" for column, _ in filters]
        # Counted by the server; a JSON text inside the JSONB (moved from SQLite as is) is decoded here.
        sql = ("SELECT session_id, session_type, agent_id, user_id, "
               "CASE jsonb_typeof(messages) WHEN 'array' THEN jsonb_array_length(messages) END AS message_count, "
               "CASE jsonb_typeof(runs) WHEN 'object' THEN (SELECT count(*) FROM jsonb_object_keys(runs)) END "
               "AS run_count, summary IS NOT NULL AS has_summary, created_at, updated_at, "
               "CASE jsonb_typeof(messages) WHEN 'string' THEN messages #>> '{}' END AS messages_text, "
               "CASE jsonb_typeof(runs) WHEN 'string' THEN runs #>> '{}' END AS runs_text, "
               "count(*) OVER () AS total "
               f"FROM {self.table('sessions')}" + (f" WHERE {' AND '.join(where)}" if where else "")
               + " ORDER BY created_at DESC, session_id DESC" + (" LIMIT %s" if limit else ""))
        rows = self._read(("sessions",), sql, tuple(v for _, v in filters) + ((limit,) if limit else ()))
        for row in rows:
            for text, column, kind in (("messages_text", "message_count", list), ("runs_text", "run_count", dict)):
                value = decode(row.pop(text))
                if isinstance(value, kind):
                    row[column] = len(value)
        return rows

    def _select(self, kind: str) -> str:
        names = SESSION_COLUMNS if kind == "sessions" else USER_COLUMNS
        return f"SELECT {', '.join(names)} FROM {self.table(kind)}"

    def session_rows(self, session_id: str | None) -> list[dict[str, Any]]:
        if session_id is None:
            return self._read(("sessions",), self._select("sessions") + " ORDER BY created_at DESC, session_id DESC")
        return self._read(("sessions",), self._select("sessions") + " WHERE session_id = %s", (session_id,))

    def user_rows(self, user_id: str | None) -> list[dict[str, Any]]:
        if user_id is None:  # NULLS LAST: SQLite's order, where NULL is the smallest value
            return self._read(("users",), self._select("users") + " ORDER BY updated_at DESC NULLS LAST, user_id DESC")
        return self._read(("users",), self._select("users") + " WHERE user_id = %s", (user_id,))

    def ids(self, kind: str) -> set[str]:
        column = "session_id" if kind == "sessions" else "user_id"
        rows = self._read((kind,), f"SELECT {column} FROM {self.table(kind)}", allow_empty=True)
        return {r[column] for r in rows}

    def usage_entries(self) -> list[dict[str, Any]]:
        with pgurl.transaction(self.url, read_only=True, lock_timeout=self.timeout) as conn:
            self._plain(conn)
            present = pgurl.columns(conn, self.schema, USAGE_ENTRY_TABLE) or {}
            wanted = [c for c in USAGE_ENTRY_COLUMNS if c in present]
            if "run_id" not in present:
                return []
            return conn.cursor(row_factory=pgurl.driver().rows.dict_row).execute(
                f"SELECT {', '.join(quote(c) for c in wanted)} FROM {quote(self.schema)}.{quote(USAGE_ENTRY_TABLE)} "
                'ORDER BY "timestamp", entry_id').fetchall()

    def holding(self, needles: list[str]) -> list[str]:
        """``schema.table.column`` of every text or JSON column of the store's tables (the usage ledger too) in
        which a row holds one of ``needles``: matched by ``position``, as text, never as a pattern; one read-only
        transaction, one scan per table. The places only: never the text found."""
        found: list[str] = []
        needles = [n for n in needles if "\x00" not in n]  # PostgresStorage strips NUL: no text holds one
        if not needles:
            return found
        with pgurl.transaction(self.url, read_only=True, lock_timeout=self.timeout) as conn:
            self._plain(conn)
            for name in (self.session_table, self.user_memory_table, USAGE_ENTRY_TABLE):
                columns = [c for c, t in (pgurl.columns(conn, self.schema, name) or {}).items()
                           if t in STRING_TYPES or t in ("jsonb", "json")]
                if not columns:
                    continue
                tests = [" OR ".join([f"position(%s in {quote(c)}::text) > 0"] * len(needles)) for c in columns]
                sql = "SELECT " + ", ".join(f"bool_or({t})" for t in tests) + f" FROM {quote(self.schema)}.{quote(name)}"
                row = conn.execute(sql, tuple(needles) * len(columns)).fetchone()
                found += [f"{self.schema}.{name}.{c}" for c, hit in zip(columns, row or ()) if hit]
        return found

    def user_memory_text(self, user_id: str) -> str | None:
        rows = self._read(("users",), f"SELECT user_memory::text AS t FROM {self.table('users')} WHERE user_id = %s",
                          (user_id,))
        return rows[0]["t"] if rows else None

    # -------------------------------------------------------- writes

    def encode_user_memory(self, memory: dict[str, Any]) -> str:
        return _json(strip_nul(memory))

    def prepare(self, kind: str, row: dict[str, Any], now: int) -> Upsert:
        if kind == "users":
            sql = (f"INSERT INTO {self.table('users')} (user_id, user_memory, agent_id, team_id, created_at, "
                   "updated_at) VALUES (%s, %s::jsonb, %s, %s, %s, %s) ON CONFLICT (user_id) DO UPDATE SET "
                   "user_memory = excluded.user_memory, agent_id = excluded.agent_id, team_id = excluded.team_id, "
                   "updated_at = excluded.updated_at")
            return Upsert(kind, row["user_id"], sql, (
                row["user_id"], _json(strip_nul(row["user_memory"])), row.get("agent_id"), row.get("team_id"),
                stamp(row.get("created_at"), now), stamp(row.get("updated_at"), now)))
        values: dict[str, Any] = {k: row.get(k) for k in ("session_id", "session_type", "agent_id", "team_id",
                                                          "workflow_id", "user_id")}
        values["summary"] = strip_nul(row.get("summary"))
        for key in JSON_SESSION_COLUMNS + ("usage",):
            value = row.get(key)
            agent_unbound = key in ("team_data", "workflow_data") and row.get("session_type") == "agent"
            values[key] = None if value is None and agent_unbound else _json(strip_nul(value))
        values["created_at"] = stamp(row.get("created_at"), now)
        values["updated_at"] = stamp(row.get("updated_at"), now)
        columns = list(values)
        marks = ", ".join("%s::jsonb" if c in JSON_SESSION_COLUMNS + ("usage",) else "%s" for c in columns)
        updates = ", ".join(f"{c} = excluded.{c}" for c in columns if c not in ("session_id", "created_at"))
        sql = (f"INSERT INTO {self.table('sessions')} ({', '.join(columns)}) VALUES ({marks}) "
               f"ON CONFLICT (session_id) DO UPDATE SET {updates}")
        return Upsert(kind, row["session_id"], sql, tuple(values[c] for c in columns))

    @contextmanager
    def transaction(self, need: tuple[str, ...], *, create: bool) -> Iterator["PostgresTransaction"]:
        with pgurl.transaction(self.url, read_only=False, lock_timeout=self.timeout) as conn:
            missing = self._check(conn, need, create=create)
            if missing and not pgurl.schema_exists(conn, self.schema):
                conn.execute(f"CREATE SCHEMA {quote(self.schema)}")
            for kind in missing:
                ddl = pg_session_ddl(self.session_table, self.schema) if kind == "sessions" \
                    else pg_user_memory_ddl(self.user_memory_table, self.schema)
                for statement in ddl:
                    conn.execute(statement)
            yield PostgresTransaction(self, conn)


def _json(value: Any) -> str:
    """The JSON text bound to a ``%s::jsonb`` parameter (PostgreSQL canonicalises it)."""
    return json.dumps(value)


class PostgresTransaction:
    def __init__(self, backend: PostgresBackend, conn: Any) -> None:
        self.backend = backend
        self.conn = conn

    def user_memory_text(self, user_id: str) -> str | None:
        row = self.conn.execute(f"SELECT user_memory::text FROM {self.backend.table('users')} WHERE user_id = %s "
                                "FOR UPDATE", (user_id,)).fetchone()
        return row[0] if row else None

    def insert_user_memory(self, user_id: str, value: Any, now: int) -> bool:
        row = self.conn.execute(f"INSERT INTO {self.backend.table('users')} (user_id, user_memory, agent_id, team_id, "
                                "created_at, updated_at) VALUES (%s, %s::jsonb, NULL, NULL, %s, %s) "
                                "ON CONFLICT (user_id) DO NOTHING RETURNING 1", (user_id, value, now, now)).fetchone()
        return row is not None

    def update_user_memory(self, user_id: str, value: Any, now: int) -> None:
        self.conn.execute(f"UPDATE {self.backend.table('users')} SET user_memory = %s::jsonb, updated_at = %s "
                          "WHERE user_id = %s", (value, now, user_id))

    def exists(self, kind: str, key: str) -> bool:
        column = "session_id" if kind == "sessions" else "user_id"
        return self.conn.execute(f"SELECT 1 FROM {self.backend.table(kind)} WHERE {column} = %s",
                                 (key,)).fetchone() is not None

    def upsert(self, upsert: Upsert) -> Action:
        existed = self.exists(upsert.kind, upsert.key)
        self.conn.execute(upsert.statement, upsert.params)
        return Action.updated if existed else Action.inserted

    def delete(self, kind: str, key: str) -> bool:
        """The row of a session or a user, as the library's ``delete_session``/``delete_user_memory`` remove it;
        False when it is not there (a rerun)."""
        column = "session_id" if kind == "sessions" else "user_id"
        return self.conn.execute(f"DELETE FROM {self.backend.table(kind)} WHERE {column} = %s",
                                 (key,)).rowcount > 0

    def delete_usage_entries(self, entry_ids: list[str]) -> int:
        """Rows of the usage ledger by ``entry_id`` (none when the ledger does not exist)."""
        if not entry_ids or pgurl.columns(self.conn, self.backend.schema, USAGE_ENTRY_TABLE) is None:
            return 0
        table = f"{quote(self.backend.schema)}.{quote(USAGE_ENTRY_TABLE)}"
        return self.conn.execute(f"DELETE FROM {table} WHERE entry_id = ANY(%s)", (list(entry_ids),)).rowcount
