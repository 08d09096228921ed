"""What every learn backend shares: the store names, an entry and where it lives, and the library's edits.

A learn store is one JSON object keyed by entry id, whatever keeps it: a file per scope and user
(:mod:`.files`), a row of ``learn_store`` in ``learn.db`` (:mod:`.sqlite`) or a Redis string
(:mod:`.redis`), each keyed by the store's name. The edits here work on that object alone, so each
backend only reads it and writes it back under its own protocol (:class:`LearnBackend`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from enum import StrEnum
from pathlib import Path
from typing import Any, Protocol

from praisonmem.core.errors import NotFound, UsageError
from praisonmem.core.io.timeutil import epoch_of, now_iso
from praisonmem.core.layout import LEARN_SCOPES, LEARN_STORES

# ``learn --scope``: a user's private stores, or those shared between agents (the directories the layout names).
LearnScope = StrEnum("LearnScope", [(scope, scope) for scope in LEARN_SCOPES])
STORES = LEARN_STORES
SCOPES = tuple(LearnScope)
ENTRY_KEYS = ("id", "content", "metadata", "created_at", "updated_at", "use_count", "last_used")  # as the library writes
DEFAULT_USER = "default"

# An edit gets the store's object as just re-read under the backend's write protocol, changes it in place and says
# whether there is anything to write back.
Edit = Callable[[dict[str, Any]], bool]


def check_names(store: str | None = None, scope: str | None = None, user_id: str | None = None) -> None:
    if store is not None and store not in STORES:
        raise UsageError(f"unknown learn store '{store}' (one of: {', '.join(STORES)})")
    if scope is not None and scope not in SCOPES:
        raise UsageError(f"--scope must be private or shared, got '{scope}'")
    if user_id is not None and (not user_id or "/" in user_id or "\\" in user_id or user_id in (".", "..")):
        raise UsageError(f"invalid learn user id '{user_id}'")


@dataclass
class Entry:
    """One learn-store entry and where it is: a file (``scope``/``user_id`` from its directories), or a database
    row or Redis key (``key``), which the library keys by the store's name alone: no scope, no user."""

    scope: str | None
    user_id: str | None
    store: str
    path: Path | str
    entry: dict[str, Any]
    backend: str = "file"
    key: str | None = None

    def to_json(self) -> dict[str, Any]:
        if self.backend == "file":
            return {"scope": self.scope, "user_id": self.user_id, "store": self.store, "file": str(self.path),
                    **self.entry}
        where = "url" if self.backend == "redis" else "file"
        return {"backend": self.backend, "scope": None, "user_id": None, "store": self.store, where: str(self.path),
                "key": self.key, **self.entry}


class LearnBackend(Protocol):
    """One place learn stores are kept. ``scope`` and ``user_id`` only mean something to the file backend."""

    kind: str

    def entries(self, store: str | None = None, scope: str | None = None,
                user_id: str | None = None) -> tuple[list[Entry], list[str]]:
        """Every entry (newest update first per store) and what could not be read; changes nothing."""

    def where(self, store: str, scope: str, user_id: str) -> str:
        """How messages name one store."""

    def count(self, store: str, scope: str, user_id: str) -> int:
        """How many entries a store holds now (read-only)."""

    def edit(self, store: str, scope: str, user_id: str, change: Edit, timeout: float, *,
             create: bool = True) -> list[str]:
        """Re-read the store under the backend's write protocol, apply ``change``, write it back if it says so;
        without ``create``, a store that is not there is left so (``change`` is not called). Notes of what was
        done but not wholly (old text a reader keeps in a database's WAL)."""


def sorted_entries(rows: list[Entry]) -> list[Entry]:
    return sorted(rows, key=_updated, reverse=True)


def _updated(row: Entry) -> float:
    """When an entry was last updated, for sorting: releases before 1.7.17 wrote naive UTC (``utcnow()``), so
    a time without a zone is UTC, as the library reads it; an unreadable one sorts last."""
    stamp = epoch_of(row.entry.get("updated_at"))
    return float("-inf") if stamp is None else stamp


def store_object(raw: bytes | str, where: str) -> dict[str, Any]:
    """A stored value (a row's ``data``, a Redis string) as the store's object; ``ValueError`` saying why not."""
    try:
        text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
        data = json.loads(text)
    except (UnicodeDecodeError, ValueError) as exc:
        raise ValueError(f"{where}: not the JSON the library writes ({exc})") from None
    if not isinstance(data, dict):
        raise ValueError(f"{where}: holds {type(data).__name__}, not an object keyed by entry id")
    return data


def serialise(data: dict[str, Any]) -> bytes:
    """The library's database and Redis value: ``json.dumps(data, default=str, ensure_ascii=False)``."""
    return json.dumps(data, default=str, ensure_ascii=False).encode("utf-8")


def add_to(data: dict[str, Any], store: str, content: str,
           metadata: dict[str, Any] | None) -> tuple[dict[str, Any], bool, bool]:
    """The library's ``add`` on a store's object: a duplicate (same content, stripped, any case) is not added, but
    takes the new metadata. The entry, whether it is new, and whether the object changed."""
    wanted = content.strip().lower()
    for existing in data.values():
        if isinstance(existing, dict) and str(existing.get("content", "")).strip().lower() == wanted:
            if not metadata:
                return existing, False, False
            existing.setdefault("metadata", {}).update(metadata)
            existing["updated_at"] = now_iso()
            return existing, False, True
    entry_id = f"{store}_{len(data)}_{datetime.now(timezone.utc).timestamp()}"
    created = now_iso()
    entry = dict(zip(ENTRY_KEYS, (entry_id, content, metadata or {}, created, now_iso(), 0, None)))
    data[entry_id] = entry
    return entry, True, True


def pop_entry(data: dict[str, Any], entry_id: str, where: str) -> dict[str, Any]:
    if entry_id not in data:
        raise NotFound(f"no learn entry '{entry_id}' in {where}")
    return data.pop(entry_id)


class ClearEdit:
    """The library's ``clear``: the object emptied (``{}``), written back even when it was empty, as the library
    does; ``removed`` says how many entries went."""

    def __init__(self) -> None:
        self.removed = 0

    def __call__(self, data: dict[str, Any]) -> bool:
        self.removed = len(data)
        data.clear()
        return True


def empty_text(content: str) -> None:
    if not content.strip():
        raise UsageError("learn entry text must not be empty")
