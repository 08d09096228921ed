"""Upsonic 0.77.3's SqliteStorage file over plain ``sqlite3``.

Readers open the file ``mode=ro`` (no table creation, no journal-mode change), fetch everything
in one short transaction and close it: an open read transaction would make the agent's own
upsert fail with "database is locked" and silently drop its update. Writers use ``BEGIN
IMMEDIATE`` with a busy timeout; the values are encoded before it.

Encoding, as the library writes it: the session fields ``session_data``, ``agent_data``,
``team_data``, ``workflow_data``, ``metadata``, ``runs`` and ``messages`` are JSON *strings
containing JSON* (double-encoded); ``usage`` and ``user_memory`` are encoded once; Python
``None`` is the text ``null``.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from praisonmem.core.errors import NotFound, Refused
from praisonmem.core.io.sqlite import (connect_existing, connect_ro, connect_rw, delete_in, require_store_tables,
                                       roll_back_journal, translate, vacuum_clean)
from praisonmem.core.result import Action
from praisonmem.core.upsonic.schema import (JSON_SESSION_COLUMNS, SESSION_COLUMNS, UPSONIC_VERSION, USAGE_ENTRY_COLUMNS,
                                           USAGE_ENTRY_TABLE, USER_COLUMNS, Upsert, absent_table, stamp)

SESSION_DDL_COLUMNS = (
    "session_id VARCHAR NOT NULL", "session_type VARCHAR NOT NULL", "agent_id VARCHAR", "team_id VARCHAR",
    "workflow_id VARCHAR", "user_id VARCHAR", "session_data JSON", "agent_data JSON", "team_data JSON",
    "workflow_data JSON", "metadata JSON", "runs JSON", "messages JSON", "usage JSON", "summary VARCHAR",
    "created_at BIGINT NOT NULL", "updated_at BIGINT", "PRIMARY KEY (session_id)")
USER_DDL_COLUMNS = ("user_id VARCHAR NOT NULL", "user_memory JSON NOT NULL", "agent_id VARCHAR", "team_id VARCHAR",
                    "created_at BIGINT NOT NULL", "updated_at BIGINT", "PRIMARY KEY (user_id)")
# The order SQLAlchemy created the indexes in the real fixture.
SESSION_INDEXES = ("agent_id", "session_type", "workflow_id", "user_id", "updated_at", "team_id", "created_at")
USER_INDEXES = ("agent_id", "created_at", "updated_at", "team_id")


def _ddl(table: str, columns: tuple[str, ...], indexes: tuple[str, ...]) -> list[str]:
    """The statements SQLAlchemy emits for the library's tables (text as SQLite stores it)."""
    create = f"CREATE TABLE {table} (\n\t" + ", \n\t".join(columns) + "\n)"
    return [create, *(f"CREATE INDEX idx_{table}_{c} ON {table} ({c})" for c in indexes)]


def session_ddl(table: str) -> list[str]:
    return _ddl(table, SESSION_DDL_COLUMNS, SESSION_INDEXES)


def user_memory_ddl(table: str) -> list[str]:
    return _ddl(table, USER_DDL_COLUMNS, USER_INDEXES)


def encode_double(value: Any) -> str:
    return json.dumps(json.dumps(value))


def encode_once(value: Any) -> str:
    return json.dumps(value)


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


class SqliteBackend:
    def __init__(self, path: Path, session_table: str, user_memory_table: str, *, timeout: float = 5.0) -> None:
        self.path = path
        self.label = str(path)
        self.session_table = session_table
        self.user_memory_table = user_memory_table
        self.timeout = timeout

    def _table(self, kind: str) -> tuple[str, str]:
        return (self.session_table, "session_id") if kind == "sessions" else (self.user_memory_table, "user_id")

    # -------------------------------------------------------- schema

    def _tables(self, conn: sqlite3.Connection) -> dict[str, list[str]]:
        # views and triggers are refused before any table is looked into (a view answers PRAGMA table_info too)
        require_store_tables(conn, self.path, dict.fromkeys((self.session_table, self.user_memory_table,
                                                             USAGE_ENTRY_TABLE)), then="refusing to touch it")
        names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return {n: [r[1] for r in conn.execute(f"PRAGMA table_info({_quote(n)})")] for n in names}

    def _check(self, conn: sqlite3.Connection, need: tuple[str, ...], *, allow_empty: bool = False) -> list[str]:
        """The tables in ``need`` ("sessions"/"users") that are missing but may be: the file is an
        Upsonic store (its other table is there, as the library creates tables lazily), or, with
        ``allow_empty``, a new empty database. Anything else is refused before it is read or written."""
        try:
            tables = self._tables(conn)
        except sqlite3.DatabaseError as exc:
            if "not a database" in str(exc) or "malformed" in str(exc):
                raise Refused(f"{self.path}: not an SQLite database") from exc
            raise translate(exc, self.path, self.timeout) from exc
        wanted = {"sessions": (self.session_table, SESSION_COLUMNS, "--session-table"),
                  "users": (self.user_memory_table, USER_COLUMNS, "--user-memory-table")}
        for table, columns, _ in wanted.values():
            if table in tables and sorted(tables[table]) != sorted(columns):
                extra = sorted(set(tables[table]) - set(columns))
                lacking = sorted(set(columns) - set(tables[table]))
                raise Refused(f"{self.path}: table '{table}' does not have Upsonic {UPSONIC_VERSION}'s columns "
                              f"(missing: {', '.join(lacking) or '-'}; unexpected: {', '.join(extra) or '-'}); "
                              "refusing to touch it")
        is_store = any(table in tables for table, _, _ in wanted.values())
        missing = []
        for kind in need:
            table, _, option = wanted[kind]
            if table in tables:
                continue
            if not is_store and not (allow_empty and not tables):
                raise Refused(f"{self.path}: no table '{table}': not an Upsonic store, or the table has another "
                              f"name ({option})")
            problem = None if allow_empty else absent_table(str(self.path), kind, table)
            if problem is not None:
                raise problem
            missing.append(kind)
        return missing

    def _read(self, need: tuple[str, ...], sql: str, params: tuple = (), *,
              allow_empty: bool = False) -> list[dict[str, Any]]:
        """One short read: check the schema, fetch everything, close."""
        conn = connect_ro(self.path, self.timeout)
        conn.row_factory = sqlite3.Row
        try:
            if self._check(conn, need, allow_empty=allow_empty):  # the table is not created yet
                return []
            return [dict(r) for r in conn.execute(sql, params).fetchall()]
        except sqlite3.Error as exc:
            raise translate(exc, self.path, self.timeout) from exc
        finally:
            conn.close()

    # -------------------------------------------------------- reads

    def summaries(self, filters: list[tuple[str, str]], limit: int) -> list[dict[str, Any]]:
        # Counted in SQL so the read transaction never carries the (large) messages and runs;
        # the double-encoded text is unwrapped by json_extract(x, '$'), guarded by json_valid.
        inner = {c: f"CASE WHEN json_valid({c}) THEN json_extract({c}, '$') END" for c in ("messages", "runs")}
        count = {c: f"CASE WHEN json_valid({inner[c]}) AND json_type({inner[c]}) = '{kind}' THEN "
                    f"(SELECT count(*) FROM json_each({inner[c]})) END"
                 for c, kind in (("messages", "array"), ("runs", "object"))}
        where = [f"{column} = ?" for column, _ in filters]
        sql = (f"SELECT session_id, session_type, agent_id, user_id, {count['messages']} AS message_count, "
               f"{count['runs']} AS run_count, summary IS NOT NULL AS has_summary, created_at, updated_at, "
               "count(*) OVER () AS total "
               f"FROM {_quote(self.session_table)}"
               + (f" WHERE {' AND '.join(where)}" if where else "") + " ORDER BY created_at DESC, session_id DESC"
               + (" LIMIT ?" if limit else ""))
        return self._read(("sessions",), sql, tuple(v for _, v in filters) + ((limit,) if limit else ()))

    def session_rows(self, session_id: str | None) -> list[dict[str, Any]]:
        if session_id is None:
            return self._read(("sessions",), f"SELECT * FROM {_quote(self.session_table)} "
                                             "ORDER BY created_at DESC, session_id DESC")
        return self._read(("sessions",), f"SELECT * FROM {_quote(self.session_table)} WHERE session_id = ?",
                          (session_id,))

    def user_rows(self, user_id: str | None) -> list[dict[str, Any]]:
        if user_id is None:
            return self._read(("users",), f"SELECT * FROM {_quote(self.user_memory_table)} "
                                          "ORDER BY updated_at DESC, user_id DESC")
        return self._read(("users",), f"SELECT * FROM {_quote(self.user_memory_table)} WHERE user_id = ?",
                          (user_id,))

    def ids(self, kind: str) -> set[str]:
        if not self.path.exists():
            return set()
        table, column = self._table(kind)
        return {r[column] for r in self._read((kind,), f"SELECT {column} FROM {_quote(table)}", allow_empty=True)}

    def usage_entries(self) -> list[dict[str, Any]]:
        if not self.path.exists():
            return []
        conn = connect_ro(self.path, self.timeout)
        conn.row_factory = sqlite3.Row
        try:
            self._tables(conn)
            present = {r[1] for r in conn.execute(f"PRAGMA table_info({_quote(USAGE_ENTRY_TABLE)})")}
            wanted = [c for c in USAGE_ENTRY_COLUMNS if c in present]
            if "run_id" not in present:  # no ledger, or not the library's
                return []
            return [dict(r) for r in conn.execute(f"SELECT {', '.join(wanted)} FROM {_quote(USAGE_ENTRY_TABLE)} "
                                                  'ORDER BY "timestamp", entry_id')]
        except sqlite3.Error as exc:
            raise translate(exc, self.path, self.timeout) from exc
        finally:
            conn.close()

    def user_memory_text(self, user_id: str) -> str | None:
        rows = self._read(("users",), f"SELECT user_memory FROM {_quote(self.user_memory_table)} WHERE user_id = ?",
                          (user_id,))
        return rows[0]["user_memory"] if rows else None

    # -------------------------------------------------------- writes

    def encode_user_memory(self, memory: dict[str, Any]) -> str:
        return encode_once(memory)

    def prepare(self, kind: str, row: dict[str, Any], now: int) -> Upsert:
        if kind == "users":
            sql = (f"INSERT INTO {_quote(self.user_memory_table)} (user_id, user_memory, agent_id, team_id, "
                   "created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(user_id) DO UPDATE SET "
                   "user_memory = excluded.user_memory, agent_id = excluded.agent_id, team_id = excluded.team_id, "
                   "updated_at = excluded.updated_at")
            return Upsert(kind, row["user_id"], sql, (
                row["user_id"], encode_once(row["user_memory"]), row.get("agent_id"), row.get("team_id"),
                stamp(row.get("created_at"), now), stamp(row.get("updated_at"), now)))
        values = _session_values(row, now)
        columns = list(values)
        updates = ", ".join(f"{c} = excluded.{c}" for c in columns if c not in ("session_id", "created_at"))
        sql = (f"INSERT INTO {_quote(self.session_table)} ({', '.join(columns)}) VALUES "
               f"({', '.join('?' * len(columns))}) ON CONFLICT(session_id) DO UPDATE SET {updates}")
        return Upsert(kind, row["session_id"], sql, tuple(values[c] for c in columns))

    @contextmanager
    def transaction(self, need: tuple[str, ...], *, create: bool) -> Iterator["SqliteTransaction"]:
        if not self.path.exists() and not create:
            raise NotFound(f"{self.path}: no such database")
        conn = connect_rw(self.path, self.timeout)
        conn.isolation_level = None
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                for kind in self._check(conn, need, allow_empty=create):
                    ddl = session_ddl(self.session_table) if kind == "sessions" \
                        else user_memory_ddl(self.user_memory_table)
                    for statement in ddl:
                        conn.execute(statement)
                yield SqliteTransaction(self, conn)
            except BaseException:
                if conn.in_transaction:  # SQLite rolls back itself on a full disk: the error is that, not this
                    conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            raise translate(exc, self.path, self.timeout) from exc
        finally:
            conn.close()


    def erase(self, sessions: list[str], users: list[str], usage: list[str]) -> tuple[int, list[str]]:
        """:meth:`Store.erase <praisonmem.core.upsonic.store.Store.erase>` on the file: one ``BEGIN IMMEDIATE``
        (which waits for SqliteStorage's writer as its transactions wait for ours) with ``secure_delete`` on,
        then the WAL emptied and the file vacuumed (:func:`~praisonmem.core.io.sqlite.vacuum_clean`)."""
        if not self.path.is_file():
            return 0, []
        roll_back_journal(self.path, self.timeout)  # a delete killed mid-way: SQLite puts its pages back first
        conn = connect_existing(self.path, self.timeout)
        try:
            tables = self._tables(conn)
            conn.execute("PRAGMA secure_delete=ON")
            conn.execute("BEGIN IMMEDIATE")
            try:
                removed = 0
                for table, column, ids in ((self.session_table, "session_id", sessions),
                                           (self.user_memory_table, "user_id", users),
                                           (USAGE_ENTRY_TABLE, "entry_id", usage)):
                    if not ids or column not in tables.get(table, ()):
                        continue
                    removed += delete_in(conn, _quote(table), column, ids)
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            return removed, vacuum_clean(conn, self.path)
        except sqlite3.Error as exc:
            raise translate(exc, self.path, self.timeout) from exc
        finally:
            conn.close()


def _session_values(row: dict[str, Any], now: int) -> dict[str, Any]:
    """Column values as SqliteStorage binds them for this row."""
    values: dict[str, Any] = {k: row.get(k) for k in ("session_id", "session_type", "agent_id", "team_id",
                                                      "workflow_id", "user_id", "summary")}
    for key in JSON_SESSION_COLUMNS:
        value = row.get(key)
        if key in ("team_data", "workflow_data") and row.get("session_type") == "agent" and value is None:
            values[key] = None  # the agent upsert never binds them: SQL NULL
        else:
            values[key] = "null" if value is None else encode_double(value)
    values["usage"] = "null" if row.get("usage") is None else encode_once(row["usage"])
    values["created_at"] = stamp(row.get("created_at"), now)
    values["updated_at"] = stamp(row.get("updated_at"), now)
    return values


class SqliteTransaction:
    """Inside ``BEGIN IMMEDIATE``: the whole file is locked against other writers already."""

    def __init__(self, backend: SqliteBackend, conn: sqlite3.Connection) -> None:
        self.backend = backend
        self.conn = conn

    def user_memory_text(self, user_id: str) -> str | None:
        row = self.conn.execute(f"SELECT user_memory FROM {_quote(self.backend.user_memory_table)} "
                                "WHERE user_id = ?", (user_id,)).fetchone()
        return row[0] if row else None

    def insert_user_memory(self, user_id: str, value: Any, now: int) -> bool:
        self.conn.execute(f"INSERT INTO {_quote(self.backend.user_memory_table)} (user_id, user_memory, agent_id, "
                          "team_id, created_at, updated_at) VALUES (?, ?, NULL, NULL, ?, ?)",
                          (user_id, value, now, now))
        return True

    def update_user_memory(self, user_id: str, value: Any, now: int) -> None:
        self.conn.execute(f"UPDATE {_quote(self.backend.user_memory_table)} SET user_memory = ?, updated_at = ? "
                          "WHERE user_id = ?", (value, now, user_id))

    def exists(self, kind: str, key: str) -> bool:
        table, column = self.backend._table(kind)
        return self.conn.execute(f"SELECT 1 FROM {_quote(table)} WHERE {column} = ?", (key,)).fetchone() is not None

    def upsert(self, upsert: Upsert) -> Action:
        existed = self.exists(upsert.kind, upsert.key)
        self.conn.execute(upsert.statement, upsert.params)
        return Action.updated if existed else Action.inserted
