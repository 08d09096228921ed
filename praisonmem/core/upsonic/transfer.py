"""Upsonic export and import, conversion to and from PraisonAI sessions, and writing session rows as the
library writes them (on either backend: the values are encoded by the store's backend).

Export: one JSON document with epoch-integer timestamps and decoded JSON fields
(``{"format": "praisonmem-upsonic", "users": [...], "sessions": [...]}``), read in
one short transaction. Import: every row validated first, then one write
transaction of upserts: user memory ``ON CONFLICT(user_id)`` keeps ``created_at``;
sessions ``ON CONFLICT(session_id)`` update every column but ``session_id`` and
``created_at``, the values encoded as the backend's library stores them
(SqliteStorage: JSON fields double-encoded, ``None`` as the text ``null``;
PostgresStorage: JSONB encoded once).
"""

from __future__ import annotations

import json
import time
from typing import Any, BinaryIO

from praisonmem import __version__
from praisonmem.core import sessions as praisonai
from praisonmem.core.errors import CorruptFile, TargetExists, UsageError
from praisonmem.core.io import jsonfile, outfile
from praisonmem.core.io.safetext import json_safe, plural
from praisonmem.core.paths import Paths
from praisonmem.core.result import Action, Change, Outcome, Plan
from praisonmem.core.upsonic.convert import from_praisonai, to_praisonai
from praisonmem.core.upsonic.schema import (EXPORT_FORMAT, SESSION_COLUMNS, SESSION_TYPES, UPSONIC_VERSION, USER_COLUMNS,
                                            Upsert)
from praisonmem.core.upsonic.store import Store, Transaction


def export(store: Store, *, users: bool = True, sessions: bool = True) -> dict[str, Any]:
    payload: dict[str, Any] = {"format": EXPORT_FORMAT, "version": 1, "upsonic_version": UPSONIC_VERSION,
                               "praisonmem_version": __version__, "exported_at": int(time.time()),
                               "source": store.label, "session_table": store.session_table,
                               "user_memory_table": store.user_memory_table}
    if users:
        payload["users"] = [{k: row[k] for k in USER_COLUMNS} for row in store.users()]
    if sessions:
        payload["sessions"] = [{k: row.get(k) for k in SESSION_COLUMNS} for row in store.all_sessions()]
    return payload


def export_to(store: Store, output: str, *, users: bool = False, sessions: bool = False,
              stdout: BinaryIO | None = None) -> dict[str, Any]:
    """``upsonic export``: user memory and sessions (both unless one is asked for) as one JSON document written
    to ``output`` (core/io/outfile.py's rule: ``-`` is ``stdout``); what was written."""
    both = not users and not sessions
    payload = export(store, users=users or both, sessions=sessions or both)
    outfile.write(output, (json_safe(json.dumps(payload, ensure_ascii=False, indent=2)) + "\n").encode("utf-8"),
                  stdout=stdout)
    return {"output": output, "users": len(payload.get("users", [])), "sessions": len(payload.get("sessions", []))}


def _int_or_none(value: Any) -> bool:
    return value is None or (isinstance(value, int) and not isinstance(value, bool))


def read_export(file: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    try:
        data = jsonfile.parse(jsonfile.read_source(file), file)
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


def run_upserts(tx: Transaction, upserts: list[Upsert]) -> list[Action]:
    """Execute prepared upserts, saying which ones updated an existing row."""
    return [tx.upsert(upsert) for upsert in upserts]


def existing(store: Store, users: list[dict[str, Any]], sessions: list[dict[str, Any]]) -> tuple[set, set]:
    """Which ids already exist (for --dry-run and conflict checks); nothing when the file is new."""
    return (store.known_ids("users") if users else set(), store.known_ids("sessions") if sessions else set())


def row_change(kind: str, row_id: str, action: Action, dry_run: bool) -> Change:
    return Change(action, f"{kind} {row_id}", dry_run=dry_run, fields={"kind": kind, "id": row_id})


def plan_import(store: Store, file: str) -> Plan:
    """``upsonic import``: every row of an export validated, then all upserted in one transaction; overwriting
    existing rows is asked first."""
    users, sessions = read_export(file)
    preview = run_import(store, users, sessions, dry_run=True)
    updating = sum(1 for c in preview.changes if c.action is Action.updated)
    return Plan(f"Overwrite {plural(updating, 'existing Upsonic row')} in {store.label}?" if updating else None,
                lambda dry_run, progress: preview if dry_run else run_import(store, users, sessions))


def run_import(store: Store, users: list[dict[str, Any]], sessions: list[dict[str, Any]], *,
               dry_run: bool = False) -> Outcome:
    need = tuple(k for k, rows in (("users", users), ("sessions", sessions)) if rows)
    if dry_run:
        have_users, have_sessions = existing(store, users, sessions)
        return Outcome([row_change("user", r["user_id"], Action.updated if r["user_id"] in have_users
                                   else Action.inserted, True) for r in users]
                       + [row_change("session", r["session_id"], Action.updated if r["session_id"] in have_sessions
                                     else Action.inserted, True) for r in sessions])
    now = int(time.time())
    changes: list[Change] = []
    user_sql = [store.prepare("users", r, now) for r in users]
    session_sql = [store.prepare("sessions", r, now) for r in sessions]

    def body(tx: Transaction) -> None:
        for row, outcome in zip(users, run_upserts(tx, user_sql)):
            changes.append(row_change("user", row["user_id"], outcome, False))
        for row, outcome in zip(sessions, run_upserts(tx, session_sql)):
            changes.append(row_change("session", row["session_id"], outcome, False))

    if need:
        store.write(need, body, create=True)
    return Outcome(changes)


def plan_convert(store: Store, paths: Paths, names: list[str], *, into_praisonai: bool,
                 replace: bool = False, timeout: float = jsonfile.LOCK_TIMEOUT) -> Plan:
    """``upsonic convert``: Upsonic sessions to PraisonAI sessions (``into_praisonai``), or PraisonAI sessions
    to Upsonic rows; every session is read and every target checked first, and overwriting (``replace``)
    is asked first."""
    if into_praisonai:
        def convert(dry_run: bool) -> Outcome:
            return write_praisonai(store, paths, names, replace=replace, dry_run=dry_run, timeout=timeout)
    else:
        found = praisonai.open_store(paths)
        now = int(time.time())
        rows = [from_praisonai(found.read(ref), now=now) for ref in (found.find(name) for name in names)]

        def convert(dry_run: bool) -> Outcome:
            return write_converted(store, rows, replace=replace, dry_run=dry_run)
    preview = convert(True)
    replacing = sum(1 for c in preview.changes if c.action in (Action.replaced, Action.updated))
    return Plan(f"Overwrite {plural(replacing, 'existing session')}?" if replacing else None,
                lambda dry_run, progress: preview if dry_run else convert(False))


def write_converted(store: Store, rows: list[dict[str, Any]], *, replace: bool = False,
                    dry_run: bool = False) -> Outcome:
    """Insert PraisonAI conversations as Upsonic rows; an existing session needs ``replace``."""
    _, have = existing(store, [], rows)
    clash = [r["session_id"] for r in rows if r["session_id"] in have]
    if clash and not replace:
        raise TargetExists(f"{'an Upsonic session already exists' if len(clash) == 1 else 'Upsonic sessions already exist'}"
                           f": {', '.join(clash)}; pass --replace to overwrite")
    if dry_run:
        return Outcome([_converted(r["session_id"], Action.updated if r["session_id"] in have else Action.inserted,
                                   True) for r in rows])
    changes: list[Change] = []
    now = int(time.time())
    statements = [store.prepare("sessions", r, now) for r in rows]

    def body(tx: Transaction) -> None:
        if not replace:  # re-check inside the write transaction
            for row in rows:
                if tx.exists("sessions", row["session_id"]):
                    raise TargetExists(f"Upsonic session '{row['session_id']}' appeared meanwhile; nothing written")
        for row, outcome in zip(rows, run_upserts(tx, statements)):
            changes.append(_converted(row["session_id"], outcome, False))

    store.write(("sessions",), body, create=True)
    return Outcome(changes)


def _converted(session_id: str, action: Action, dry_run: bool, file: str | None = None) -> Change:
    fields: dict[str, Any] = {"session_id": session_id}
    if file is not None:
        fields["file"] = file
    return Change(action, session_id + (f" → {file}" if file else ""), dry_run=dry_run, fields=fields)


def write_praisonai(store: Store, paths: Paths, ids: list[str], *, replace: bool = False, dry_run: bool = False,
                    timeout: float = jsonfile.LOCK_TIMEOUT) -> Outcome:
    """Upsonic sessions as PraisonAI sessions, each written with the library's lock and atomic replace; every
    id is found, and every target checked, before the first write."""
    target_store = praisonai.open_store(paths)
    paths.require_home()
    docs = [to_praisonai(store.session(i)) for i in ids]
    targets = [target_store.ref(d["session_id"]) for d in docs]
    names = [praisonai.session_file_name(d["session_id"]) for d in docs]
    shared = sorted({n for n in names if names.count(n) > 1})
    if shared:
        raise UsageError(f"several sessions map to the same PraisonAI file ({', '.join(shared)}); convert them "
                         "one at a time")
    clash = [n for n, t in zip(names, targets) if target_store.exists(t)]
    if clash and not replace:
        raise TargetExists(f"{'a PraisonAI session file already exists' if len(clash) == 1 else 'PraisonAI session files already exist'}"
                           f": {', '.join(clash)}; pass --replace")
    changes = []
    for doc, target in zip(docs, targets):
        action = Action.replaced if target_store.exists(target) else Action.wrote
        if not dry_run:
            with target_store.transaction([target], timeout) as tx:
                current = tx.read(target)  # one that does not parse is refused: never overwritten
                if current is not None and not replace:
                    raise TargetExists(f"{target} appeared meanwhile; nothing written")
                tx.write(target, doc)
            action = Action.replaced if current is not None else Action.wrote
        changes.append(_converted(doc["session_id"], action, dry_run, str(target)))
    return Outcome(changes)
