"""What Upsonic's document stores share: JSONStorage's files and RedisStorage's keys hold each session and user
memory as one JSON object with the fields as plain JSON (nothing double-encoded), in the order the library builds
the record. This module builds those records from a decoded row, checks the ones it reads, and answers the
backend's summaries, orders and filters over them in Python, as both libraries do.
"""

from __future__ import annotations

import json
from typing import Any

from praisonmem.core.errors import CorruptFile
from praisonmem.core.upsonic.schema import SESSION_COLUMNS, USER_COLUMNS, stamp

# The key order of each library's session record: the agent upsert's, then the other types' (the libraries differ:
# JSONStorage puts summary before messages and keeps no usage; RedisStorage keeps usage for agent sessions).
JSON_AGENT_KEYS = ("session_id", "session_type", "agent_id", "team_id", "workflow_id", "user_id", "session_data",
                   "agent_data", "metadata", "runs", "summary", "messages", "created_at", "updated_at")
JSON_OTHER_KEYS = ("session_id", "session_type", "agent_id", "team_id", "workflow_id", "user_id", "session_data",
                   "agent_data", "team_data", "workflow_data", "metadata", "runs", "summary", "messages", "created_at",
                   "updated_at")
REDIS_AGENT_KEYS = ("session_id", "session_type", "agent_id", "team_id", "workflow_id", "user_id", "session_data",
                    "agent_data", "metadata", "runs", "messages", "summary", "usage", "created_at", "updated_at")
REDIS_OTHER_KEYS = ("session_id", "session_type", "agent_id", "team_id", "workflow_id", "user_id", "session_data",
                    "agent_data", "team_data", "workflow_data", "metadata", "runs", "messages", "summary", "created_at",
                    "updated_at")
USER_KEYS = USER_COLUMNS  # both libraries: user_id, user_memory, agent_id, team_id, created_at, updated_at


def session_record(row: dict[str, Any], keys_agent: tuple[str, ...], keys_other: tuple[str, ...],
                   created_at: Any, updated_at: Any) -> dict[str, Any]:
    """A decoded row as the library's record: its keys in the library's order, and a field the library's record has
    no key for (``usage`` in JSONStorage, ``team_data`` of an agent session) kept, before the times, only when it
    holds a value, so nothing a row holds is lost and a record the library wrote comes back as it was."""
    keys = keys_agent if row.get("session_type") == "agent" else keys_other
    record = {k: row.get(k) for k in keys if k not in ("created_at", "updated_at")}
    for column in SESSION_COLUMNS:
        if column not in record and column not in ("created_at", "updated_at") and row.get(column) is not None:
            record[column] = row[column]
    record["created_at"] = created_at
    record["updated_at"] = updated_at
    return record


def user_record(row: dict[str, Any], created_at: Any, updated_at: Any) -> dict[str, Any]:
    return {"user_id": row["user_id"], "user_memory": row.get("user_memory"), "agent_id": row.get("agent_id"),
            "team_id": row.get("team_id"), "created_at": created_at, "updated_at": updated_at}


def session_type_of(record: dict[str, Any]) -> Any:
    """The bare type: ``AgentSession.to_dict()`` gives ``{"session_type": "agent"}``, which the libraries accept."""
    value = record.get("session_type")
    return value.get("session_type") if isinstance(value, dict) else value


def as_row(kind: str, record: dict[str, Any]) -> dict[str, Any]:
    """A record as a row with every column (a field the record has no key for is ``None``)."""
    columns = SESSION_COLUMNS if kind == "sessions" else USER_COLUMNS
    row = {c: record.get(c) for c in columns}
    if kind == "sessions":
        row["session_type"] = session_type_of(record)
    return row


def check_record(kind: str, record: Any, where: str, key: str | None = None) -> dict[str, Any]:
    """A record read from the store, or :class:`CorruptFile` saying why it is not one of the library's (so nothing
    is written over a value praisonmem does not understand)."""
    id_field = "session_id" if kind == "sessions" else "user_id"
    if not isinstance(record, dict):
        raise CorruptFile(where, f"holds {_kind(record)} where an Upsonic {_noun(kind)} record (a JSON object) belongs")
    if not isinstance(record.get(id_field), str):
        raise CorruptFile(where, f"an Upsonic {_noun(kind)} record has no string {id_field}")
    if key is not None and record[id_field] != key:
        raise CorruptFile(where, f"the record's {id_field} is {record[id_field]!r}, not the key's {key!r}")
    return record


def _noun(kind: str) -> str:
    return "session" if kind == "sessions" else "user-memory"


def _kind(value: Any) -> str:
    from praisonmem.core.io.jsonfile import json_kind

    return json_kind(value)


def text_of(value: Any) -> str:
    """The text a trait edit compares: the stored value as the library would dump it (order kept)."""
    return json.dumps(value)


# ---------------------------------------------------------------- reads over records, as SQL would answer them


def _newest(value: Any) -> tuple[bool, Any]:
    # NULL sorts as the smallest value (as in SQLite); a value of another type sorts by its text
    return (value is not None, value if isinstance(value, int) and not isinstance(value, bool) else -1)


def sessions_newest_first(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``ORDER BY created_at DESC, session_id DESC``."""
    return sorted(rows, key=lambda r: (_newest(r.get("created_at")), r["session_id"]), reverse=True)


def users_newest_first(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``ORDER BY updated_at DESC, user_id DESC``."""
    return sorted(rows, key=lambda r: (_newest(r.get("updated_at")), r["user_id"]), reverse=True)


def listing_row(row: dict[str, Any]) -> dict[str, Any]:
    """What a listing keeps of a decoded session row: its own fields, its messages and runs counted (a listing of
    many records keeps these, not the records: the decoded messages and runs are most of a record's memory)."""
    from praisonmem.core.upsonic.schema import decode

    messages, runs = decode(row.get("messages")), decode(row.get("runs"))
    return {"session_id": row["session_id"], "session_type": row.get("session_type"), "agent_id": row.get("agent_id"),
            "user_id": row.get("user_id"), "message_count": len(messages) if isinstance(messages, list) else None,
            "run_count": len(runs) if isinstance(runs, dict) else None, "has_summary": row.get("summary") is not None,
            "created_at": row.get("created_at"), "updated_at": row.get("updated_at")}


def listed(briefs: list[dict[str, Any]], filters: list[tuple[str, str]], limit: int) -> list[dict[str, Any]]:
    """What :meth:`~.store.Backend.summaries` returns, from :func:`listing_row`'s rows."""
    picked = [r for r in briefs if all(r.get(c) is not None and str(r.get(c)) == v for c, v in filters)]
    ordered = sessions_newest_first(picked)
    return [{**r, "total": len(picked)} for r in (ordered[:limit] if limit else ordered)]


def summaries(rows: list[dict[str, Any]], filters: list[tuple[str, str]], limit: int) -> list[dict[str, Any]]:
    """What :meth:`~.store.Backend.summaries` returns, from decoded session rows."""
    return listed([listing_row(r) for r in rows], filters, limit)
