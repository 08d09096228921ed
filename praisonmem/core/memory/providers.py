"""Memory providers: ``file`` (FileMemory JSON), ``sqlite`` (the SQLite adapter's files)
and third-party classes registered under the entry-point group ``praisonmem.providers``.

A third-party provider is PraisonAI's memory-adapter protocol: a class (or
factory) with ``store_short_term``, ``search_short_term``, ``store_long_term``,
``search_long_term`` and ``get_all_memories``, and optionally ``reset_short_term``,
``reset_long_term`` and ``delete_memory(memory_id, tier=None)``. It is
constructed with the keyword arguments its signature accepts among
``user_id`` and ``memory_dir``.

Every provider is used through :class:`Provider`, which says what it supports:
an unsupported operation raises :class:`Unsupported` (exit 4) instead of the
library's logged warning; a store that raises or returns no id raises
:class:`ProviderFailed` naming the provider; and search results carrying
another user's ``metadata.user_id`` are dropped even when the provider ignored
the ``user_id`` it was given.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from praisonmem.core.errors import IOFailure, PraisonMemError, Refused, UsageError
from praisonmem.core.memory.filememory import TYPES, FileMemoryStore
from praisonmem.core.memory.sqlitememory import SqliteMemoryStore

ENTRY_POINT_GROUP = "praisonmem.providers"
REQUIRED = ("store_short_term", "search_short_term", "store_long_term", "search_long_term", "get_all_memories")
OPTIONAL = ("reset_short_term", "reset_long_term", "delete_memory")
RESET_TIERS = {"short": ("short_term",), "long": ("long_term",), "all": ("short_term", "long_term")}


class Unsupported(Refused):
    code = "unsupported"


class ProviderFailed(IOFailure):
    code = "provider_failed"


@dataclass
class ProviderInfo:
    name: str
    source: str  # "builtin" or "entry point <module:attr> (<distribution>)"
    supports: list[str] = field(default_factory=list)
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "source": self.source, "supports": self.supports, "error": self.error}


FILE_SUPPORTS = ["store_short_term", "store_long_term", "search", "list", "entities", "episodic", "delete",
                 "reset_short_term", "reset_long_term", "reset_all", "users"]
SQLITE_SUPPORTS = ["store_short_term", "store_long_term", "search", "list", "delete", "reset_short_term",
                   "reset_long_term", "users"]


class Provider:
    """One provider bound to a user, with praisonmem's uniform operations."""

    name = ""
    supports: list[str] = []

    def require(self, operation: str, what: str) -> None:
        if operation not in self.supports:
            raise Unsupported(f"provider '{self.name}' does not support {what}; nothing changed")

    def require_reset(self, what: str) -> tuple[str, ...]:
        """The tiers ``reset(what)`` clears, each one supported (else :class:`Unsupported`)."""
        tiers = RESET_TIERS[what]
        for tier in tiers:
            self.require(f"reset_{tier}", f"resetting {tier.replace('_', '-')} memory (it has no reset_{tier})")
        return tiers

    def store(self, text: str, *, long: bool, importance: float | None, metadata: dict[str, Any]) -> dict[str, Any]:
        raise NotImplementedError

    def search(self, query: str, types: list[str], limit: int) -> list[dict[str, Any]]:
        raise NotImplementedError

    def list(self, types: list[str]) -> list[dict[str, Any]]:
        raise NotImplementedError

    def locate(self, memory_id: str, tier: str | None) -> dict[str, Any] | None:
        """Where ``delete`` would remove the id, without changing anything."""
        raise NotImplementedError

    def delete(self, memory_id: str, tier: str | None) -> dict[str, Any] | None:
        raise NotImplementedError

    def reset(self, what: str, dry_run: bool) -> dict[str, int | None]:
        raise NotImplementedError


class FileProvider(Provider):
    name = "file"
    supports = FILE_SUPPORTS

    def __init__(self, memory_dir: Path, user_id: str, timeout: float) -> None:
        self.store_ = FileMemoryStore(memory_dir, user_id, timeout=timeout)

    def store(self, text, *, long, importance, metadata):
        if long:
            return self.store_.add_long_term(text, metadata, 0.8 if importance is None else importance)
        return self.store_.add_short_term(text, metadata, 0.5 if importance is None else importance)

    def search(self, query, types, limit):
        return self.store_.search(query, types, limit)

    def list(self, types):
        from praisonmem.core.memory.filememory import normalised_entity, normalised_item

        out: list[dict[str, Any]] = []
        for tier in ("short_term", "long_term"):
            if tier in types:
                out += [{"type": tier, "item": normalised_item(i)} for i in self.store_.items(tier)]
        if "entity" in types:
            out += [{"type": "entity", "item": normalised_entity(e)} for e in self.store_.entities().values()]
        if "episodic" in types:
            for date in self.store_.episodic_dates():
                out += [{"type": "episodic", "date": date, "item": normalised_item(i)}
                        for i in self.store_.episodes(date)]
        return out

    def locate(self, memory_id, tier):
        return self.store_.locate(memory_id, tier)

    def delete(self, memory_id, tier):
        return self.store_.delete(memory_id, tier)

    def reset(self, what, dry_run):
        return self.store_.reset_plan(what) if dry_run else self.store_.reset(what)


class SqliteProvider(Provider):
    name = "sqlite"
    supports = SQLITE_SUPPORTS

    def __init__(self, project_dir: Path, user_id: str, timeout: float) -> None:
        self.store_ = SqliteMemoryStore(project_dir, user_id, timeout=timeout)

    def store(self, text, *, long, importance, metadata):
        meta = dict(metadata)
        if importance is not None:
            meta.setdefault("importance", importance)
        return self.store_.store("long_term" if long else "short_term", text, meta)

    def search(self, query, types, limit):
        hits = []
        for tier in ("short_term", "long_term"):
            if tier in types:
                hits += [{"type": tier, "score": None, "item": row} for row in self.store_.search(tier, query, limit)]
        return hits[:limit]

    def list(self, types):
        return [{"type": tier, "item": row} for tier in ("short_term", "long_term") if tier in types
                for row in self.store_.all(tier)]

    def locate(self, memory_id, tier):
        """The tier holding the id; the tiers number separately, so an id in both needs ``tier``."""
        found = [t for t in ("short_term", "long_term") if tier in (None, t)
                 and any(row["id"] == memory_id for row in self.store_.all(t))]
        if len(found) > 1:
            raise UsageError(f"id {memory_id} is in both short- and long-term memory (the tiers number "
                             "separately): give --type short or --type long")
        return {"type": found[0], "id": memory_id} if found else None

    def delete(self, memory_id, tier):
        where = self.locate(memory_id, tier)
        if where is None:
            return None
        hit = self.store_.delete(memory_id, where["type"])
        return {"type": where["type"], "id": memory_id} if hit else None

    def reset(self, what, dry_run):
        tiers = RESET_TIERS[what]
        plan = {tier: len(self.store_.all(tier)) for tier in tiers}
        if not dry_run:
            for tier in tiers:
                self.store_.reset(tier)
        return plan


class PluginProvider(Provider):
    """A third-party adapter, called exactly through PraisonAI's memory-adapter protocol."""

    def __init__(self, name: str, adapter: Any, user_id: str) -> None:
        self.name = name
        self.adapter = adapter
        self.user_id = user_id
        self.supports = plugin_supports(adapter)

    def _call(self, method: str, *args: Any, **optional: Any) -> Any:
        """Call ``method`` with ``args``, and with the ``optional`` keywords its signature accepts."""
        bound = getattr(self.adapter, method)
        try:
            return bound(*args, **_accepted_kwargs(bound, **optional))
        except PraisonMemError:
            raise
        except Exception as exc:
            raise ProviderFailed(f"provider '{self.name}' failed in {method}: {type(exc).__name__}: {exc}") from exc

    def store(self, text, *, long, importance, metadata):
        meta = {"user_id": self.user_id, **metadata}
        if importance is not None:
            meta.setdefault("importance", importance)
        method = "store_long_term" if long else "store_short_term"
        memory_id = self._call(method, text, meta, user_id=self.user_id)
        if memory_id in (None, "", False):
            raise ProviderFailed(f"provider '{self.name}' returned no id from {method}; the memory may not be "
                                 "stored")
        return {"id": str(memory_id), "text": text, "metadata": meta}

    def search(self, query, types, limit):
        hits = []
        for tier in ("short_term", "long_term"):
            if tier in types:
                rows = self._call(f"search_{tier}", query, limit=limit, user_id=self.user_id) or []
                hits += [{"type": tier, "score": r.get("score") if isinstance(r, dict) else None, "item": r}
                         for r in self._own(rows)]
        return hits[:limit]

    def list(self, types):
        rows = self._own(self._call("get_all_memories", user_id=self.user_id) or [])
        return [{"type": r.get("memory_type") or r.get("type") or "memory", "item": r} for r in rows]

    def _own(self, rows: Any) -> list[dict[str, Any]]:
        """Defense in depth: never show a row tagged with another user's id."""
        kept = []
        for row in rows if isinstance(rows, list) else []:
            meta = row.get("metadata") if isinstance(row, dict) else None
            owner = meta.get("user_id") if isinstance(meta, dict) else None
            if isinstance(row, dict) and (owner is None or str(owner) == self.user_id):
                kept.append(row)
        return kept

    def locate(self, memory_id, tier):
        if "list" not in self.supports:  # cannot look first: the provider says whether it deleted
            return {"type": tier or "memory", "id": memory_id}
        rows = self.list(["short_term", "long_term"])
        hit = next((r for r in rows if str(r["item"].get("id")) == memory_id and tier in (None, r["type"])), None)
        return {"type": hit["type"], "id": memory_id} if hit else None

    def delete(self, memory_id, tier):
        self.require("delete", "delete (it has no delete_memory)")
        short = {"short_term": "short", "long_term": "long"}.get(tier or "")
        deleted = self._call("delete_memory", memory_id, tier=short)
        return {"type": tier or "memory", "id": memory_id} if deleted else None

    def reset(self, what, dry_run):
        tiers = self.require_reset(what)
        if not dry_run:
            for tier in tiers:
                self._call(f"reset_{tier}")
        return dict.fromkeys(tiers)


def plugin_supports(adapter: Any) -> list[str]:
    have = [m for m in REQUIRED + OPTIONAL if callable(getattr(adapter, m, None))]
    supports = []
    for method in ("store_short_term", "store_long_term"):
        if method in have:
            supports.append(method)
    if "search_short_term" in have or "search_long_term" in have:
        supports.append("search")
    if "get_all_memories" in have:
        supports.append("list")
    if "delete_memory" in have:
        supports.append("delete")
    supports += [m for m in ("reset_short_term", "reset_long_term") if m in have]
    return supports


def _entry_points() -> list[Any]:
    from importlib.metadata import entry_points

    return list(entry_points(group=ENTRY_POINT_GROUP))


def available() -> list[ProviderInfo]:
    """Every provider with what it supports; a plug-in that fails to load says why."""
    infos = [ProviderInfo("file", "builtin", list(FILE_SUPPORTS)), ProviderInfo("sqlite", "builtin",
                                                                                 list(SQLITE_SUPPORTS))]
    for ep in _entry_points():
        if ep.name in ("file", "sqlite"):
            continue
        dist = getattr(getattr(ep, "dist", None), "name", None)
        info = ProviderInfo(ep.name, f"entry point {ep.value}" + (f" ({dist})" if dist else ""))
        try:
            factory = ep.load()
            info.supports = plugin_supports(factory)
            missing = [m for m in REQUIRED if not callable(getattr(factory, m, None))]
            if missing:
                info.error = f"missing required method(s): {', '.join(missing)}"
        except Exception as exc:  # a broken plug-in must not hide the others
            info.error = f"cannot load: {type(exc).__name__}: {exc}"
        infos.append(info)
    return infos


def open_provider(name: str, *, user_id: str, memory_dir: Path, project_dir: Path, timeout: float) -> Provider:
    if name == "file":
        return FileProvider(memory_dir, user_id, timeout)
    if name == "sqlite":
        return SqliteProvider(project_dir, user_id, timeout)
    for ep in _entry_points():
        if ep.name == name:
            try:
                factory = ep.load()
                adapter = factory(**_accepted_kwargs(factory, user_id=user_id, memory_dir=str(memory_dir)))
            except Exception as exc:
                raise ProviderFailed(f"provider '{name}' failed to load: {type(exc).__name__}: {exc}") from exc
            missing = [m for m in REQUIRED if not callable(getattr(adapter, m, None))]
            if missing:
                raise ProviderFailed(f"provider '{name}' lacks required method(s): {', '.join(missing)}")
            return PluginProvider(name, adapter, user_id)
    known = ", ".join(info.name for info in available())
    raise UsageError(f"unknown provider '{name}' (available: {known})")


def _accepted_kwargs(factory: Any, **offered: Any) -> dict[str, Any]:
    try:
        params = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):
        return {}
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        return offered
    names = {p.name for p in params}
    return {k: v for k, v in offered.items() if k in names}


def parse_types(values: list[str] | None) -> list[str]:
    """``--type short|long|entity|episodic`` (repeatable) → the library's type names."""
    if not values:
        return list(TYPES)
    names = {"short": "short_term", "short_term": "short_term", "long": "long_term", "long_term": "long_term",
             "entity": "entity", "entities": "entity", "episodic": "episodic"}
    out = []
    for value in values:
        if value not in names:
            raise UsageError(f"--type must be short, long, entity or episodic, got '{value}'")
        if names[value] not in out:
            out.append(names[value])
    return out
