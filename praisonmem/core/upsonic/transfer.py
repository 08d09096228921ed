"""Upsonic export and import, and writing session rows as the library writes them.

Export: one JSON document with epoch-integer timestamps and decoded JSON fields
(``{"format": "praisonmem-upsonic", "users": [...], "sessions": [...]}``), read in
one short transaction. Import: every row validated first, then one ``BEGIN
IMMEDIATE`` transaction of upserts: user memory ``ON CONFLICT(user_id)`` keeps
``created_at``; sessions ``ON CONFLICT(session_id)`` update every column but
``session_id`` and ``created_at``, with the session JSON fields double-encoded and
``None`` written as the JSON text ``null``, as SqliteStorage does.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Any

from praisonmem import __version__
from praisonmem.core.io import jsonfile
from praisonmem.core.errors import CorruptFile, TargetExists, UsageError
from praisonmem.core.paths import Paths
from praisonmem.core.upsonic.store import (
    DOUBLE_ENCODED,
    EXPORT_FORMAT,
    SESSION_COLUMNS,
    SESSION_TYPES,
    UPSONIC_VERSION,
    Store,
    _quote,
    encode_double,
    encode_once,
)

USER_FIELDS = ("user_id", "user_memory", "agent_id", "team_id", "created_at", "updated_at")


def export(store: Store, *, users: bool = True, sessions: bool = True) -> dict[str, Any]:
    payload: dict[str, Any] = {"format": EXPORT_FORMAT, "version": 1, "upsonic_version": UPSONIC_VERSION,
                               "praisonmem_version": __version__, "exported_at": int(time.time()),
                               "source": str(store.path), "session_table": store.session_table,
                               "user_memory_table": store.user_memory_table}
    if users:
        payload["users"] = [{k: row[k] for k in USER_FIELDS} for row in store.users()]
    if sessions:
        payload["sessions"] = [{k: row.get(k) for k in SESSION_COLUMNS} for row in store.all_sessions()]
    return payload


def _int_or_none(value: Any) -> bool:
    return value is None or (isinstance(value, int) and not isinstance(value, bool))


def read_export(file: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    try:
        data = jsonfile.read(file)
    except CorruptFile as exc:
        raise UsageError(f"{file}: not a praisonmem Upsonic export ({exc.reason})") from exc
    if not isinstance(data, dict) or data.get("format") != EXPORT_FORMAT:
        raise UsageError(f"{file}: not a praisonmem Upsonic export (expected \"format\": \"{EXPORT_FORMAT}\"; "
                         "create one with 'praisonmem upsonic export')")
    users, sessions = data.get("users", []), data.get("sessions", [])
    if not isinstance(users, list) or not isinstance(sessions, list):
        raise UsageError(f"{file}: 'users' and 'sessions' must be lists")
    for index, row in enumerate(users):
        _validate_user(row, index)
    seen: set[str] = set()
    for index, row in enumerate(sessions):
        _validate_session(row, index)
        if row["session_id"] in seen:
            raise UsageError(f"session {index}: session_id '{row['session_id']}' appears twice")
        seen.add(row["session_id"])
    return users, sessions


def _validate_user(row: Any, index: int) -> None:
    where = f"user {index}"
    if not isinstance(row, dict):
        raise UsageError(f"{where}: not a JSON object")
    if not isinstance(row.get("user_id"), str) or not row["user_id"]:
        raise UsageError(f"{where}: missing user_id")
    if not isinstance(row.get("user_memory"), dict):
        raise UsageError(f"{where} ('{row['user_id']}'): user_memory must be a JSON object")
    for key in ("agent_id", "team_id"):
        if row.get(key) is not None and not isinstance(row[key], str):
            raise UsageError(f"{where} ('{row['user_id']}'): {key} must be a string or null")
    for key in ("created_at", "updated_at"):
        if not _int_or_none(row.get(key)):
            raise UsageError(f"{where} ('{row['user_id']}'): {key} must be epoch seconds (an integer)")


def _validate_session(row: Any, index: int) -> None:
    where = f"session {index}"
    if not isinstance(row, dict):
        raise UsageError(f"{where}: not a JSON object")
    if not isinstance(row.get("session_id"), str) or not row["session_id"]:
        raise UsageError(f"{where}: missing session_id")
    where = f"{where} ('{row['session_id']}')"
    if row.get("session_type") not in SESSION_TYPES:
        raise UsageError(f"{where}: session_type must be one of {', '.join(SESSION_TYPES)}")
    for key in ("agent_id", "team_id", "workflow_id", "user_id", "summary"):
        if row.get(key) is not None and not isinstance(row[key], str):
            raise UsageError(f"{where}: {key} must be a string or null")
    if row.get("messages") is not None and not isinstance(row["messages"], list):
        raise UsageError(f"{where}: messages must be a list")
    if row.get("usage") is not None and not isinstance(row["usage"], dict):
        raise UsageError(f"{where}: usage must be an object or null")
    for key in ("created_at", "updated_at"):
        if not _int_or_none(row.get(key)):
            raise UsageError(f"{where}: {key} must be epoch seconds (an integer)")


def _session_values(row: dict[str, Any], now: int) -> dict[str, Any]:
    """Column values as SqliteStorage binds them for this row."""
    values: dict[str, Any] = {k: row.get(k) for k in ("session_id", "session_type", "agent_id", "team_id",
                                                      "workflow_id", "user_id", "summary")}
    for key in DOUBLE_ENCODED:
        value = row.get(key)
        if key in ("team_data", "workflow_data") and row.get("session_type") == "agent" and value is None:
            values[key] = None  # the agent upsert never binds them: SQL NULL
        else:
            values[key] = "null" if value is None else encode_double(value)
    values["usage"] = "null" if row.get("usage") is None else encode_once(row["usage"])
    values["created_at"] = row.get("created_at") or now
    values["updated_at"] = row.get("updated_at") or now
    return values


def session_statement(table: str, row: dict[str, Any], now: int) -> tuple[str, list[Any]]:
    """``INSERT … ON CONFLICT(session_id) DO UPDATE`` every column but the id and ``created_at``,
    with the values encoded (before any lock is taken)."""
    values = _session_values(row, now)
    columns = list(values)
    updates = ", ".join(f"{c} = excluded.{c}" for c in columns if c not in ("session_id", "created_at"))
    sql = (f"INSERT INTO {_quote(table)} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))}) "
           f"ON CONFLICT(session_id) DO UPDATE SET {updates}")
    return sql, [values[c] for c in columns]


def user_statement(table: str, row: dict[str, Any], now: int) -> tuple[str, list[Any]]:
    """The upsert SqliteStorage runs for user memory: ``created_at`` is kept on conflict."""
    sql = (f"INSERT INTO {_quote(table)} (user_id, user_memory, agent_id, team_id, created_at, updated_at) "
           "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(user_id) DO UPDATE SET user_memory = excluded.user_memory, "
           "agent_id = excluded.agent_id, team_id = excluded.team_id, updated_at = excluded.updated_at")
    return sql, [row["user_id"], encode_once(row["user_memory"]), row.get("agent_id"), row.get("team_id"),
                 row.get("created_at") or now, row.get("updated_at") or now]


def run_statements(conn: sqlite3.Connection, table: str, key: str,
                   statements: list[tuple[str, str, list[Any]]]) -> list[str]:
    """Execute prepared upserts (id, sql, params), saying which ones updated an existing row."""
    outcomes = []
    for row_id, sql, params in statements:
        exists = conn.execute(f"SELECT 1 FROM {_quote(table)} WHERE {key} = ?", (row_id,)).fetchone()
        conn.execute(sql, params)
        outcomes.append("updated" if exists else "inserted")
    return outcomes


def existing(store: Store, users: list[dict[str, Any]], sessions: list[dict[str, Any]]) -> tuple[set, set]:
    """Which ids already exist (for --dry-run and conflict checks); nothing when the file is new."""
    return (store.known_ids("users") if users else set(), store.known_ids("sessions") if sessions else set())


def run_import(store: Store, users: list[dict[str, Any]], sessions: list[dict[str, Any]], *,
               dry_run: bool = False) -> list[dict[str, Any]]:
    need = tuple(k for k, rows in (("users", users), ("sessions", sessions)) if rows)
    if dry_run:
        have_users, have_sessions = existing(store, users, sessions)
        return ([{"kind": "user", "id": r["user_id"], "action": "update" if r["user_id"] in have_users
                  else "insert", "dry_run": True} for r in users]
                + [{"kind": "session", "id": r["session_id"], "action": "update" if r["session_id"] in have_sessions
                    else "insert", "dry_run": True} for r in sessions])
    now = int(time.time())
    report: list[dict[str, Any]] = []
    user_sql = [(r["user_id"], *user_statement(store.user_memory_table, r, now)) for r in users]
    session_sql = [(r["session_id"], *session_statement(store.session_table, r, now)) for r in sessions]

    def body(conn: sqlite3.Connection) -> None:
        for row, outcome in zip(users, run_statements(conn, store.user_memory_table, "user_id", user_sql)):
            report.append({"kind": "user", "id": row["user_id"], "action": outcome, "dry_run": False})
        for row, outcome in zip(sessions, run_statements(conn, store.session_table, "session_id", session_sql)):
            report.append({"kind": "session", "id": row["session_id"], "action": outcome, "dry_run": False})

    if need:
        store.write(need, body, create=True)
    return report


def write_converted(store: Store, rows: list[dict[str, Any]], *, replace: bool = False,
                    dry_run: bool = False) -> list[dict[str, Any]]:
    """Insert PraisonAI conversations as Upsonic rows; an existing session needs ``replace``."""
    _, have = existing(store, [], rows)
    clash = [r["session_id"] for r in rows if r["session_id"] in have]
    if clash and not replace:
        raise TargetExists(f"Upsonic session(s) already exist: {', '.join(clash)}; pass --replace to overwrite")
    if dry_run:
        return [{"session_id": r["session_id"], "action": "update" if r["session_id"] in have else "insert",
                 "dry_run": True} for r in rows]
    report: list[dict[str, Any]] = []
    statements = [(r["session_id"], *session_statement(store.session_table, r, int(time.time()))) for r in rows]

    def body(conn: sqlite3.Connection) -> None:
        if not replace:  # re-check inside the write lock
            for row in rows:
                if conn.execute(f"SELECT 1 FROM {_quote(store.session_table)} WHERE session_id = ?",
                                (row["session_id"],)).fetchone():
                    raise TargetExists(f"Upsonic session '{row['session_id']}' appeared meanwhile; nothing written")
        for row, outcome in zip(rows, run_statements(conn, store.session_table, "session_id", statements)):
            report.append({"session_id": row["session_id"], "action": outcome, "dry_run": False})

    store.write(("sessions",), body, create=True)
    return report


def write_praisonai(store: Store, paths: Paths, ids: list[str], *, replace: bool = False, dry_run: bool = False,
                    timeout: float = jsonfile.LOCK_TIMEOUT) -> list[dict[str, Any]]:
    """Upsonic sessions as PraisonAI session files, each written with the library's lock and atomic
    replace; every id is found, and every target checked, before the first write."""
    from praisonmem.core.upsonic.convert import to_praisonai
    from praisonmem.core.sessions.workspace import session_file_name

    paths.require_home()
    docs = [to_praisonai(store.session(i)) for i in ids]
    targets = [paths.sessions_dir / session_file_name(d["session_id"]) for d in docs]
    shared = sorted({t.name for t in targets if targets.count(t) > 1})
    if shared:
        raise UsageError(f"several sessions map to the same PraisonAI file ({', '.join(shared)}); convert them "
                         "one at a time")
    clash = [t.name for t in targets if t.exists()]
    if clash and not replace:
        raise TargetExists(f"PraisonAI session file(s) already exist: {', '.join(clash)}; pass --replace")
    report = []
    for doc, target in zip(docs, targets):
        action = "replace" if target.exists() else "write"
        if not dry_run:
            def put(current: dict[str, Any] | None, doc: dict[str, Any] = doc, target: Path = target) -> dict[str, Any]:
                if current is not None and not replace:
                    raise TargetExists(f"{target} appeared meanwhile; nothing written")
                return doc  # a current file that does not parse was refused by jsonfile.update

            jsonfile.update(target, put, timeout=timeout)
            action = "replaced" if action == "replace" else "wrote"
        report.append({"session_id": doc["session_id"], "action": action, "file": str(target), "dry_run": dry_run})
    return report
