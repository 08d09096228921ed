"""Upsonic 0.77.3's schema as both backends write it: the table and column names, the version whose encoding this
package writes, the session types, and what every backend shares (a JSON column's decoding, a prepared upsert, the
refusal of a mistyped table). The backends and the backend-neutral store import it; it imports neither.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from praisonmem.core.errors import Refused

SESSION_TABLE = "upsonic_sessions"
USER_MEMORY_TABLE = "upsonic_user_memories"
DEFAULT_SCHEMA = "public"  # PostgresStorage's db_schema default
SESSION_COLUMNS = ("session_id", "session_type", "agent_id", "team_id", "workflow_id", "user_id", "session_data",
                   "agent_data", "team_data", "workflow_data", "metadata", "runs", "messages", "usage", "summary",
                   "created_at", "updated_at")
USER_COLUMNS = ("user_id", "user_memory", "agent_id", "team_id", "created_at", "updated_at")
JSON_SESSION_COLUMNS = ("session_data", "agent_data", "team_data", "workflow_data", "metadata", "runs", "messages")
EXPORT_FORMAT = "praisonmem-upsonic"
UPSONIC_VERSION = "0.77.3"  # the release whose schema and encoding this package writes
# The usage registry's ledger (one row per LLM call, tool run, ...), written only when a registry is attached to
# the storage; read by ``praisonmem usage`` only, never written.
USAGE_ENTRY_TABLE = "upsonic_usage_entries"
USAGE_ENTRY_COLUMNS = ("entry_id", "timestamp", "kind", "model", "run_id", "user_id", "input_tokens",
                       "output_tokens", "cost_usd")


def absent_table(label: str, kind: str, name: str) -> Refused | None:
    """Why a table missing from an Upsonic store is an error for a read or an edit: the library creates its
    tables lazily under their own names only, so an absent table of another name is a mistyped option
    (``None`` for the library's own name: not created yet, nothing to read)."""
    default, option = (SESSION_TABLE, "--session-table") if kind == "sessions" else \
        (USER_MEMORY_TABLE, "--user-memory-table")
    if name == default:
        return None
    return Refused(f"{label}: no table '{name}' ({option}); the store has no table of that name "
                   f"(its default is '{default}'); nothing read or written")


class SessionType(StrEnum):
    """An Upsonic session's ``session_type``."""

    agent = "agent"
    team = "team"
    workflow = "workflow"


SESSION_TYPES = tuple(SessionType)


def decode(value: Any) -> Any:
    """Decode a JSON text once, and again when that gives a string: the library accepts both forms
    (and a value a driver already decoded, such as JSONB, passes through, unless it is such a text)."""
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


def stamp(value: Any, now: int | None) -> Any:
    """A time from a row, or ``now`` when the row has none (0 is a time: only a missing one is replaced)."""
    return now if value is None else value


# ---------------------------------------------------------------- what a backend provides


@dataclass(frozen=True)
class Upsert:
    """One prepared ``INSERT … ON CONFLICT DO UPDATE``: values encoded before any transaction."""

    kind: str  # "sessions" or "users"
    key: str  # the row's session_id or user_id
    statement: Any
    params: tuple[Any, ...]
