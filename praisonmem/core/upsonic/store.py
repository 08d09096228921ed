"""Upsonic 0.77.3 SqliteStorage over plain ``sqlite3`` (spec: upsonic-storage.md).

Never the Upsonic library, never unpickling: ``__pickled__`` values stay opaque
data. The schema is recognised by its columns (there is no version table), so a
file that is not an Upsonic store, or a table whose columns differ, is refused
before anything is read or written.

Readers open the file ``mode=ro`` (no table creation, no journal-mode change),
fetch everything in one short transaction and close it before anything is
rendered: an open read transaction would make the agent's own upsert fail with
"database is locked" and silently drop its update. Writers use ``BEGIN
IMMEDIATE`` with a busy timeout, build the new JSON before taking the lock, then
re-read and compare inside it.

Encoding, as the library writes it: the session fields ``session_data``,
``agent_data``, ``team_data``, ``workflow_data``, ``metadata``, ``runs`` and
``messages`` are JSON *strings containing JSON* (double-encoded); ``usage`` and
``user_memory`` are encoded once; Python ``None`` is the text ``null``.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from praisonmem.core.errors import CorruptFile, NotFound, Refused, UsageError
from praisonmem.core.io import jsonfile
from praisonmem.core.io.sqlite import connect_ro, connect_rw, translate
from praisonmem.core.result import Action, Change, Outcome

SESSION_TABLE = "upsonic_sessions"
USER_MEMORY_TABLE = "upsonic_user_memories"
SESSION_COLUMNS = ("session_id", "session_type", "agent_id", "team_id", "workflow_id", "user_id", "session_data",
                   "agent_data", "team_data", "workflow_data", "metadata", "runs", "messages", "usage", "summary",
                   "created_at", "updated_at")
USER_COLUMNS = ("user_id", "user_memory", "agent_id", "team_id", "created_at", "updated_at")
DOUBLE_ENCODED = ("session_data", "agent_data", "team_data", "workflow_data", "metadata", "runs", "messages")
EXPORT_FORMAT = "praisonmem-upsonic"
UPSONIC_VERSION = "0.77.3"  # the release whose schema and encoding this module writes


class SessionType(StrEnum):
    """An Upsonic session's ``session_type``."""

    agent = "agent"
    team = "team"
    workflow = "workflow"


SESSION_TYPES = tuple(SessionType)


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
    """The statements SQLAlchemy emits for the library's tables (text as SQLite stores it, spec §2)."""
    create = f"CREATE TABLE {table} (\n\t" + ", \n\t".join(columns) + "\n)"
    return [create, *(f"CREATE INDEX idx_{table}_{c} ON {table} ({c})" for c in indexes)]


def session_ddl(table: str) -> list[str]:
    return _ddl(table, SESSION_DDL_COLUMNS, SESSION_INDEXES)


def user_memory_ddl(table: str) -> list[str]:
    return _ddl(table, USER_DDL_COLUMNS, USER_INDEXES)


def decode(value: Any) -> Any:
    """Decode once, and again when that gives a string: the library accepts both forms."""
    if value is None or not isinstance(value, str):
        return value
    try:
        out = json.loads(value)
        if isinstance(out, str):
            try:
                out = json.loads(out)
            except ValueError:
                pass
        return out
    except ValueError:
        return value


def encode_double(value: Any) -> str:
    return json.dumps(json.dumps(value))


def encode_once(value: Any) -> str:
    return json.dumps(value)


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


@dataclass
class Store:
    path: Path
    session_table: str = SESSION_TABLE
    user_memory_table: str = USER_MEMORY_TABLE
    timeout: float = 5.0

    # -------------------------------------------------------- schema

    def _tables(self, conn: sqlite3.Connection) -> dict[str, list[str]]:
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
            missing.append(kind)
        return missing

    def _read(self, need: tuple[str, ...], sql: str, params: tuple = (), *,
              allow_empty: bool = False) -> list[sqlite3.Row]:
        """One short read: check the schema, fetch everything, close."""
        conn = connect_ro(self.path, self.timeout)
        conn.row_factory = sqlite3.Row
        try:
            if self._check(conn, need, allow_empty=allow_empty):  # the table is not created yet
                return []
            return conn.execute(sql, params).fetchall()
        except sqlite3.Error as exc:
            raise translate(exc, self.path, self.timeout) from exc
        finally:
            conn.close()

    def known_ids(self, kind: str) -> set[str]:
        """Ids present in the sessions or users table; empty for a missing or empty database."""
        if not self.path.exists():
            return set()
        table, column = ((self.session_table, "session_id") if kind == "sessions"
                         else (self.user_memory_table, "user_id"))
        return {r[0] for r in self._read((kind,), f"SELECT {column} FROM {_quote(table)}", allow_empty=True)}

    # -------------------------------------------------------- sessions

    def sessions(self, *, user: str | None = None, agent: str | None = None,
                 session_type: SessionType | str | None = None, limit: int = 0) -> list[dict[str, Any]]:
        """Rows newest first (``created_at DESC``, the library's default order), summarised."""
        where, params = [], []
        for column, value in (("user_id", user), ("agent_id", agent), ("session_type", session_type)):
            if value is not None:
                where.append(f"{column} = ?")
                params.append(str(value))
        # Counted in SQL so the read transaction never carries the (large) messages and runs;
        # the double-encoded text is unwrapped by json_extract(x, '$'), guarded by json_valid.
        inner = {c: f"CASE WHEN json_valid({c}) THEN json_extract({c}, '$') END" for c in ("messages", "runs")}
        count = {c: f"CASE WHEN json_valid({inner[c]}) AND json_type({inner[c]}) = '{kind}' THEN "
                    f"(SELECT count(*) FROM json_each({inner[c]})) END"
                 for c, kind in (("messages", "array"), ("runs", "object"))}
        sql = (f"SELECT session_id, session_type, agent_id, user_id, {count['messages']} AS message_count, "
               f"{count['runs']} AS run_count, summary IS NOT NULL AS has_summary, created_at, updated_at "
               f"FROM {_quote(self.session_table)}"
               + (f" WHERE {' AND '.join(where)}" if where else "") + " ORDER BY created_at DESC"
               + (" LIMIT ?" if limit else ""))
        rows = self._read(("sessions",), sql, tuple(params) + ((limit,) if limit else ()))
        out = []
        for row in rows:
            out.append({
                "session_id": row["session_id"], "session_type": row["session_type"], "agent_id": row["agent_id"],
                "user_id": row["user_id"], "message_count": row["message_count"], "run_count": row["run_count"],
                "has_summary": bool(row["has_summary"]),
                "created_at": row["created_at"], "updated_at": row["updated_at"],
            })
        return out

    def session(self, session_id: str) -> dict[str, Any]:
        """The decoded row (JSON columns decoded once or twice as stored)."""
        rows = self._read(("sessions",), f"SELECT * FROM {_quote(self.session_table)} WHERE session_id = ?",
                          (session_id,))
        if not rows:
            raise NotFound(f"no Upsonic session '{session_id}' in {self.path}")
        return decode_session_row(dict(rows[0]))

    def all_sessions(self) -> list[dict[str, Any]]:
        rows = self._read(("sessions",), f"SELECT * FROM {_quote(self.session_table)} ORDER BY created_at DESC")
        return [decode_session_row(dict(r)) for r in rows]

    # -------------------------------------------------------- user memory

    def user(self, user_id: str) -> dict[str, Any]:
        rows = self._read(("users",), f"SELECT * FROM {_quote(self.user_memory_table)} WHERE user_id = ?",
                          (user_id,))
        if not rows:
            raise NotFound(f"no Upsonic user memory for '{user_id}' in {self.path}")
        return decode_user_row(dict(rows[0]))

    def users(self) -> list[dict[str, Any]]:
        rows = self._read(("users",), f"SELECT * FROM {_quote(self.user_memory_table)} ORDER BY updated_at DESC")
        return [decode_user_row(dict(r)) for r in rows]

    def update_user_memory(self, user_id: str, change: Callable[[dict[str, Any]], Any], *,
                           dry_run: bool = False) -> dict[str, Any]:
        """Read-modify-write of one user's traits (``change(old dict) -> new dict``).

        The new JSON is built outside the lock from a first read; inside ``BEGIN
        IMMEDIATE`` the row is read again and its whole ``user_memory`` text must be
        unchanged, else nothing is written (an agent changed it meanwhile).
        """
        before = self._read(("users",), f"SELECT user_memory FROM {_quote(self.user_memory_table)} "
                                        "WHERE user_id = ?", (user_id,))
        old_text = before[0]["user_memory"] if before else None
        old = decode(old_text) if old_text is not None else {}
        if not isinstance(old, dict):
            raise CorruptFile(str(self.path), f"user memory of '{user_id}' is {type(old).__name__}, not a JSON "
                                              "object; refusing to edit it")
        new = change(dict(old))
        if not isinstance(new, dict):
            raise UsageError("user memory must be a JSON object")
        new_text = encode_once(new)
        result = {"user_id": user_id, "created": not before, "before": old, "after": new, "dry_run": dry_run}
        if dry_run:
            return result
        now = int(time.time())

        def write(conn: sqlite3.Connection) -> None:
            row = conn.execute(f"SELECT user_memory FROM {_quote(self.user_memory_table)} WHERE user_id = ?",
                               (user_id,)).fetchone()
            current = row[0] if row else None
            if current != old_text:
                raise Refused(f"user memory of '{user_id}' changed while praisonmem was editing it (an agent is "
                              "writing it?); nothing written, try again")
            if row is None:
                conn.execute(f"INSERT INTO {_quote(self.user_memory_table)} (user_id, user_memory, agent_id, "
                             "team_id, created_at, updated_at) VALUES (?, ?, NULL, NULL, ?, ?)",
                             (user_id, new_text, now, now))
            else:
                conn.execute(f"UPDATE {_quote(self.user_memory_table)} SET user_memory = ?, updated_at = ? "
                             "WHERE user_id = ?", (new_text, now, user_id))

        self.write(("users",), write)
        return result

    # -------------------------------------------------------- writing

    def write(self, need: tuple[str, ...], body: Callable[[sqlite3.Connection], None], *,
              create: bool = False) -> None:
        """Run ``body(conn)`` inside ``BEGIN IMMEDIATE`` after checking (or creating) the tables."""
        if not self.path.exists() and not create:
            raise NotFound(f"{self.path}: no such database")
        conn = connect_rw(self.path, self.timeout)
        conn.isolation_level = None
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                missing = self._check(conn, need, allow_empty=create)
                for kind in missing:
                    ddl = session_ddl(self.session_table) if kind == "sessions" \
                        else user_memory_ddl(self.user_memory_table)
                    for statement in ddl:
                        conn.execute(statement)
                body(conn)
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            raise translate(exc, self.path, self.timeout) from exc
        finally:
            conn.close()


def decode_session_row(row: dict[str, Any]) -> dict[str, Any]:
    out = dict(row)
    for key in DOUBLE_ENCODED + ("usage",):
        out[key] = decode(out.get(key))
    return out


def decode_user_row(row: dict[str, Any]) -> dict[str, Any]:
    return {**row, "user_memory": decode(row.get("user_memory"))}


def parse_value(text: str) -> Any:
    """A trait value: JSON when it parses (``3``, ``true``, ``["a"]``, ``null``), else the text itself."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def open_store(db: str | os.PathLike[str] | None, *, session_table: str = SESSION_TABLE,
               user_memory_table: str = USER_MEMORY_TABLE, timeout: float = 5.0) -> Store:
    """The Upsonic SQLite file ``db`` (``--db``, else the config's ``upsonic.db``)."""
    if not db:
        raise UsageError("--db PATH is required (or set upsonic.db in the config file)")
    return Store(Path(db).expanduser(), session_table, user_memory_table, timeout=timeout)


def edit_user_memory(store: Store, user_id: str, *, set_traits: dict[str, str] | None = None,
                     unset: list[str] | None = None, replace_from: str | None = None,
                     dry_run: bool = False) -> Outcome:
    """``user-memory set|unset|replace``: one user's traits changed, every other trait, ``created_at``,
    ``agent_id`` and ``team_id`` kept. ``set_traits`` values are JSON when they parse (:func:`parse_value`);
    ``replace_from`` names a file holding a JSON object (``-``: standard input)."""
    if replace_from is not None:
        raw = jsonfile.read_source(replace_from)
        try:
            new = jsonfile.parse(raw, replace_from)
        except CorruptFile as exc:
            raise UsageError(f"{replace_from}: not JSON ({exc.reason})") from exc
        if not isinstance(new, dict):
            raise UsageError(f"{replace_from}: user memory must be a JSON object, got {jsonfile.json_kind(new)}")

        def change(old: dict[str, Any]) -> dict[str, Any]:
            return new
    elif unset is not None:
        current = store.user(user_id)["user_memory"] or {}
        missing = [k for k in unset if k not in current]
        if missing:
            raise NotFound(f"user '{user_id}' has no trait(s) {', '.join(missing)}")

        def change(old: dict[str, Any]) -> dict[str, Any]:
            return {k: v for k, v in old.items() if k not in unset}
    else:
        updates = {k: parse_value(v) for k, v in (set_traits or {}).items()}

        def change(old: dict[str, Any]) -> dict[str, Any]:
            return {**old, **updates}
    result = store.update_user_memory(user_id, change, dry_run=dry_run)
    fields = {k: result[k] for k in ("user_id", "created", "before", "after")}
    return Outcome([Change(Action.wrote, f"user memory of '{user_id}'", "new row" if result["created"] else None,
                           dry_run=dry_run, fields=fields)])
