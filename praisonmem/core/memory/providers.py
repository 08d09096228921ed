"""Memory providers: ``file`` (FileMemory JSON), ``sqlite`` (the SQLite adapter's files), ``chroma`` (alias
``rag``: praisonaiagents' ``Memory`` over Chroma) and third-party classes registered under the entry-point
group ``praisonmem.providers``.

A third-party provider is PraisonAI's memory-adapter protocol: a class (or
factory) with ``store_short_term``, ``search_short_term``, ``store_long_term``,
``search_long_term`` and ``get_all_memories``, and optionally ``reset_short_term``,
``reset_long_term`` and ``delete_memory(memory_id, tier=None)``. It is
constructed with the keyword arguments its signature accepts among
``user_id`` and ``memory_dir``.

Every provider is used through :class:`Provider`, which enforces what it
supports: an unsupported operation raises :class:`Unsupported` (exit 4) instead
of the library's logged warning; a store that raises or returns no id raises
:class:`ProviderFailed` naming the provider; and search results carrying
another user's ``metadata.user_id`` are dropped even when the provider ignored
the ``user_id`` it was given. Listing the providers never loads a plug-in unless
asked what it supports (:func:`provider_names` reads only the entry points' names).
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from praisonmem.core.errors import IOFailure, PraisonMemError, Refused, UsageError
from praisonmem.core.memory.filememory import (TYPES, FileMemoryStore, legacy_user_reason, normalised_entity,
                                               normalised_item, sanitise_user_id)
from praisonmem.core.memory.filememory import users as file_users

if TYPE_CHECKING:
    from praisonmem.core.io.cache import Cache
    from praisonmem.core.paths import Paths

ENTRY_POINT_GROUP = "praisonmem.providers"
BUILTIN = ("file", "sqlite", "chroma", "mem0-history")
ALIASES = {"rag": "chroma"}  # praisonaiagents' own name for its Chroma provider
# Built-in providers in modules of their own, imported only when used: name -> (module, class).
LAZY_BUILTINS = {
    "mem0-history": ("praisonmem.core.memory.mem0history", "Mem0HistoryProvider"),
}
# Built-ins opened by their class's ``open(paths, user_id, timeout, **options)``, given the options of
# open_provider the command passed.
OPENED = ("chroma", "mem0-history")
REQUIRED = ("store_short_term", "search_short_term", "store_long_term", "search_long_term", "get_all_memories")
OPTIONAL = ("reset_short_term", "reset_long_term", "delete_memory")
TIERS = ("short_term", "long_term")


class ResetTier(StrEnum):
    """What ``memory reset`` clears: short-term (the default), long-term, or everything."""

    short = "short"
    long = "long"
    all = "all"


RESET_TIERS = {ResetTier.short: ("short_term",), ResetTier.long: ("long_term",), ResetTier.all: TIERS}
TYPE_NAMES = {"short": "short_term", "short_term": "short_term", "long": "long_term", "long_term": "long_term",
              "entity": "entity", "entities": "entity", "episodic": "episodic", "summary": "summary",
              "summaries": "summary"}
SUMMARY = "summary"  # FileMemory's summaries.json: named by --type only (FileMemory.search does not look there)


class Unsupported(Refused):
    code = "unsupported"


class ProviderFailed(IOFailure):
    code = "provider_failed"


@dataclass
class ProviderInfo:
    """One provider as ``memory providers`` lists it: where it comes from, what it supports, why it fails."""

    name: str
    source: str  # "builtin" or "entry point <module:attr> (<distribution>)"
    supports: list[str] = field(default_factory=list)
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "source": self.source, "supports": self.supports, "error": self.error}


@dataclass
class UsersReport:
    """``memory users``: a row per user, the count keys to show, and what was noticed on the way."""

    rows: list[dict[str, Any]]
    counts: tuple[str, ...]  # the count keys every row has, in the order to show them
    notes: list[str] = field(default_factory=list)  # warnings about what was found


def parse_types(values: list[str] | None) -> list[str]:
    """``--type short|long|entity|episodic|summary`` (repeatable) → the library's type names (default: the
    four ``FileMemory.search`` covers)."""
    if not values:
        return list(TYPES)
    out = []
    for value in values:
        if value not in TYPE_NAMES:
            raise UsageError(f"--type must be short, long, entity, episodic or summary, got '{value}'")
        if TYPE_NAMES[value] not in out:
            out.append(TYPE_NAMES[value])
    return out


class Provider:
    """One provider bound to a user, with praisonmem's uniform operations; each checks it is supported."""

    name = ""
    supports: list[str] = []
    kinds: ClassVar[tuple[str, ...]] = TIERS  # the memory types it holds
    user_id = ""
    notes: tuple[str, ...] = ()  # what to say on stderr about where it read (one line each)

    def require(self, operation: str, what: str) -> None:
        if operation not in self.supports:
            raise Unsupported(f"provider '{self.name}' does not support {what}; nothing changed")

    def types(self, values: list[str] | None) -> list[str]:
        """The memory types ``--type`` names (default: all it holds); naming one it lacks is :class:`Unsupported`."""
        types = parse_types(values)
        lacking = [t for t in types if t not in self.kinds]
        if lacking and values:
            raise Unsupported(f"provider '{self.name}' has no {' or '.join(lacking)} memory; nothing searched")
        return [t for t in types if t in self.kinds]

    def store(self, text: str, *, long: bool, importance: float | None, metadata: dict[str, Any]) -> dict[str, Any]:
        self.require("store_long_term" if long else "store_short_term", f"{'long' if long else 'short'}-term storage")
        return self._store(text, long=long, importance=importance, metadata=metadata)

    def search(self, query: str, types: list[str], limit: int) -> list[dict[str, Any]]:
        self.require("search", "search")
        return self._search(query, types, limit)

    def list(self, types: list[str]) -> list[dict[str, Any]]:
        self.require("list", "listing")
        return self._list(types)

    def locate(self, memory_id: str, tier: str | None) -> dict[str, Any] | None:
        """Where ``delete`` would remove the id, without changing anything."""
        self.require("delete", "delete")
        return self._locate(memory_id, tier)

    def delete(self, memory_id: str, tier: str | None) -> dict[str, Any] | None:
        self.require("delete", "delete")
        return self._delete(memory_id, tier)

    def scope(self) -> str:
        """Whose memory it is, for a message: ``for user 'alice'``."""
        return f"for user '{self.user_id}'"

    def describe(self, where: dict[str, Any]) -> str:
        """What ``delete`` would remove, in the confirmation's words."""
        return f"{where['type']} memory '{where['id']}'"

    def fields(self, item: dict[str, Any]) -> Any:
        """What ``--filter KEY=VALUE`` compares with: an item's metadata (an entity's attributes)."""
        return item.get("metadata") if isinstance(item.get("metadata"), dict) else item.get("attributes")

    def check_filters(self, filters: dict[str, str]) -> None:
        """A ``--filter`` key the provider can never match is a usage error (none here: metadata is free-form)."""
    def export(self) -> list[str]:
        """The provider's items as JSONL lines (a header line first)."""
        self.require("export", "export")
        return self._export()

    def import_records(self, header: dict[str, Any], records: list[dict[str, Any]], on_conflict: str,
                       dry_run: bool) -> dict[str, Any]:
        self.require("import", "import")
        return self._import(header, records, on_conflict, dry_run)

    def reset_tiers(self, tier: ResetTier) -> tuple[str, ...]:
        """The tiers ``reset(tier)`` clears, each one supported (else :class:`Unsupported`)."""
        tiers = RESET_TIERS[tier]
        for name in tiers:
            self.require(f"reset_{name}", f"resetting {name.replace('_', '-')} memory (it has no reset_{name})")
        return tiers

    def reset(self, tier: ResetTier, dry_run: bool) -> dict[str, int | None]:
        """How many items each part holds (``None``: the provider cannot say); cleared unless ``dry_run``."""
        self.reset_tiers(tier)
        return self._reset(tier, dry_run)

    @classmethod
    def users(cls, paths: Paths, timeout: float) -> UsersReport:
        raise Unsupported(f"provider '{cls.name}' cannot list its users")

    def _store(self, text: str, *, long: bool, importance: float | None, metadata: dict[str, Any]) -> dict[str, Any]:
        raise NotImplementedError

    def _search(self, query: str, types: list[str], limit: int) -> list[dict[str, Any]]:
        raise NotImplementedError

    def _list(self, types: list[str]) -> list[dict[str, Any]]:
        raise NotImplementedError

    def _locate(self, memory_id: str, tier: str | None) -> dict[str, Any] | None:
        raise NotImplementedError

    def _delete(self, memory_id: str, tier: str | None) -> dict[str, Any] | None:
        raise NotImplementedError

    def _reset(self, tier: ResetTier, dry_run: bool) -> dict[str, int | None]:
        raise NotImplementedError

    def _export(self) -> list[str]:
        raise NotImplementedError

    def _import(self, header: dict[str, Any], records: list[dict[str, Any]], on_conflict: str,
                dry_run: bool) -> dict[str, Any]:
        raise NotImplementedError


class FileProvider(Provider):
    name = "file"
    supports = ["store_short_term", "store_long_term", "search", "list", "entities", "episodic", "delete",
                "reset_short_term", "reset_long_term", "reset_all", "users"]
    kinds = (*TYPES, SUMMARY)
    counts = ("short_term", "long_term", "entities", "episodic", "summaries")

    def __init__(self, memory_dir: Path, user_id: str | None, timeout: float, cache: Cache | None = None) -> None:
        self.store_ = FileMemoryStore(memory_dir, user_id, timeout=timeout, cache=cache)
        self.user_id = self.store_.user_id

    def _store(self, text, *, long, importance, metadata):
        if long:
            return self.store_.add_long_term(text, metadata, 0.8 if importance is None else importance)
        return self.store_.add_short_term(text, metadata, 0.5 if importance is None else importance)

    def _search(self, query, types, limit):
        from praisonmem.core.memory.search import search, search_summaries

        hits = search(self.store_, query, [t for t in types if t != SUMMARY], limit) if set(types) - {SUMMARY} \
            else []
        if SUMMARY in types:  # after the library's own hits, which keep its order
            hits = sorted(hits + search_summaries(self.store_, query), key=lambda h: h["score"], reverse=True)
        return hits[:limit]

    def _list(self, types):
        out: list[dict[str, Any]] = []
        for tier in TIERS:
            if tier in types:
                out += [{"type": tier, "item": normalised_item(i)} for i in self.store_.items(tier)]
        if "entity" in types:
            out += [{"type": "entity", "item": normalised_entity(e)} for e in self.store_.entities().values()]
        if "episodic" in types:
            for date in self.store_.episodic_dates():
                out += [{"type": "episodic", "date": date, "item": normalised_item(i)}
                        for i in self.store_.episodes(date)]
        if SUMMARY in types:
            out += [{"type": SUMMARY, "item": s} for s in self.store_.summaries()]
        return out

    def _locate(self, memory_id, tier):
        if tier == SUMMARY:
            return self.store_.locate_summary(memory_id) if self.store_.exists() else None
        return self.store_.locate(memory_id, tier)

    def _delete(self, memory_id, tier):
        if tier == SUMMARY:
            return self.store_.delete_summary(memory_id)
        return self.store_.delete(memory_id, tier)

    def _reset(self, tier, dry_run):
        return self.store_.reset_plan(tier) if dry_run else self.store_.reset(tier)

    @classmethod
    def users(cls, paths: Paths, timeout: float) -> UsersReport:
        """Every user directory by its real name, a raw pre-1.6.58 one too (``legacy``: why 1.7.17 does not
        read it)."""
        rows, notes = [], []
        for user in file_users(paths.memory_dir):
            store = FileMemoryStore.at(paths.memory_dir, user, timeout=timeout)
            legacy = legacy_user_reason(user)
            rows.append({"user_id": user, "path": str(store.user_dir), **store.counts(), "legacy": legacy})
            if legacy:
                notes.append(legacy)
        return UsersReport(rows, cls.counts, notes)


class SqliteProvider(Provider):
    """The SQLite adapter's files. A named user without files of its own is read from the shared unsuffixed
    files of praisonaiagents ≤ 1.7.0 (its rows only, and it says so); writes always go to the per-user files
    1.7.17 uses, and deleting or resetting there is refused until ``praisonmem migrate`` has copied them."""

    name = "sqlite"
    supports = ["store_short_term", "store_long_term", "search", "list", "delete", "reset_short_term",
                "reset_long_term", "users"]
    counts = TIERS

    def __init__(self, project_dir: Path, user_id: str | None, timeout: float) -> None:
        from praisonmem.core.memory.sqlitememory import SqliteMemoryStore  # sqlite3 only for this provider

        self.store_ = SqliteMemoryStore(project_dir, user_id, timeout=timeout)
        self.user_id = self.store_.user_id  # the library's own rule: a blank id is the unsuffixed files
        self.shared = SqliteMemoryStore.shared(project_dir, self.user_id, timeout=timeout)
        self.reader = self.shared or self.store_
        self.notes = (self._shared_note(),) if self.shared else ()

    def _shared_note(self) -> str:
        own = " or ".join(p.name for p in self.store_.files.values())
        shared = " and ".join(p.name for p in self.shared.files.values() if p.is_file())
        return (f"user '{self.user_id}' has no {own}: reading this user's rows in the shared {shared} "
                "(the layout of praisonaiagents 1.7.0 and before), which 1.7.17 does not read for a named user; "
                "'praisonmem migrate' copies them into the per-user files")

    def _refuse_shared(self, what: str) -> None:
        if self.shared:
            raise Refused(f"user '{self.user_id}' has rows only in the shared "
                          f"{' and '.join(p.name for p in self.shared.files.values() if p.is_file())} "
                          f"(praisonaiagents 1.7.0 and before), where other users' rows live too; run "
                          f"'praisonmem migrate' to copy them into the per-user files first; nothing {what}")

    def _store(self, text, *, long, importance, metadata):
        meta = dict(metadata)
        if importance is not None:
            meta.setdefault("importance", importance)
        tier = "long_term" if long else "short_term"
        row = self.store_.store(tier, text, meta)
        if self.shared:
            self.notes = (f"stored in {self.store_.files[tier].name}, the file praisonaiagents 1.7.17 reads; this "
                          "user's rows in the shared files are no longer read for this user (by praisonmem or "
                          "1.7.17) until 'praisonmem migrate' copies them there",)
        return row

    def _search(self, query, types, limit):
        hits = []
        for tier in TIERS:
            if tier in types:
                hits += [{"type": tier, "score": None, "item": row} for row in self.reader.search(tier, query, limit)]
        return hits[:limit]

    def _list(self, types):
        return [{"type": tier, "item": row} for tier in TIERS if tier in types for row in self.reader.all(tier)]

    def _locate(self, memory_id, tier):
        """The tier holding the id; the tiers number separately, so an id in both needs ``tier``."""
        self._refuse_shared("deleted")
        found = [t for t in TIERS if tier in (None, t) and any(row["id"] == memory_id for row in self.store_.all(t))]
        if len(found) > 1:
            raise UsageError(f"id {memory_id} is in both short- and long-term memory (the tiers number "
                             "separately): give --type short or --type long")
        return {"type": found[0], "id": memory_id} if found else None

    def _delete(self, memory_id, tier):
        where = self._locate(memory_id, tier)
        if where is None:
            return None
        hit = self.store_.delete(memory_id, where["type"])
        return {"type": where["type"], "id": memory_id} if hit else None

    def _reset(self, tier, dry_run):
        self._refuse_shared("reset")
        tiers = RESET_TIERS[tier]
        plan = {name: len(self.store_.all(name)) for name in tiers}
        if not dry_run:
            for name in tiers:
                self.store_.reset(name)
        return plan

    @classmethod
    def users(cls, paths: Paths, timeout: float) -> UsersReport:
        from praisonmem.core.memory.sqlitememory import SqliteMemoryStore
        from praisonmem.core.memory.sqlitememory import users as sqlite_users

        rows = []
        for user in sqlite_users(paths.project_dir):
            store = SqliteMemoryStore(paths.project_dir, user, timeout=timeout)
            rows.append({"user_id": user, "path": str(store.files["short_term"].parent),
                         "short_term": len(store.all("short_term")), "long_term": len(store.all("long_term"))})
        return UsersReport(rows, cls.counts)


class ChromaProvider(Provider):
    """praisonaiagents' ``Memory()`` over Chroma (provider ``rag``): one collection per user, read from a
    private copy, written through chromadb (:mod:`.chroma`). Nothing is stored: that needs the embedding
    model the library used."""

    name = "chroma"
    supports = ["search", "list", "delete", "export", "import", "users"]
    kinds = ("long_term",)
    counts = ("long_term",)

    @classmethod
    def open(cls, paths: Paths, user_id: str | None, timeout: float,
             chroma_path: Path | None = None) -> ChromaProvider:
        return cls(paths.project_dir, user_id or "", chroma_path)

    def __init__(self, project_dir: Path, user_id: str | None, chroma_path: Path | None = None) -> None:
        from praisonmem.core.memory.chroma import ChromaMemoryStore

        self.store_ = ChromaMemoryStore(project_dir, user_id, chroma_path)
        self.user_id = self.store_.user_id

    def store(self, text, *, long, importance, metadata):
        raise Unsupported("provider 'chroma' cannot store: the library embeds each text with its own model, which "
                          "praisonmem does not have (use 'memory import' with an export's embeddings); nothing changed")

    def _search(self, query, types, limit):
        return self.store_.search_items(query, limit)

    def like(self, memory_id: str, limit: int) -> list[dict[str, Any]]:
        self.require("search", "search")
        return self.store_.like(memory_id, limit)

    def _list(self, types):
        return self.store_.list_items()

    def _locate(self, memory_id, tier):
        return self.store_.locate(memory_id)

    def _delete(self, memory_id, tier):
        return self.store_.delete(memory_id)

    def _export(self):
        return self.store_.export_lines()

    def _import(self, header, records, on_conflict, dry_run):
        return self.store_.import_records(header, records, on_conflict, dry_run)

    @classmethod
    def users(cls, paths: Paths, timeout: float) -> UsersReport:
        from praisonmem.core.memory.chroma import users

        return UsersReport(users(paths.project_dir), cls.counts)


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

    def _store(self, text, *, long, importance, metadata):
        meta = {"user_id": self.user_id, **metadata}
        if importance is not None:
            meta.setdefault("importance", importance)
        method = "store_long_term" if long else "store_short_term"
        memory_id = self._call(method, text, meta, user_id=self.user_id)
        if memory_id in (None, "", False):
            raise ProviderFailed(f"provider '{self.name}' returned no id from {method}; the memory may not be "
                                 "stored")
        return {"id": str(memory_id), "text": text, "metadata": meta}

    def _search(self, query, types, limit):
        hits = []
        for tier in TIERS:
            if tier in types:
                rows = self._call(f"search_{tier}", query, limit=limit, user_id=self.user_id) or []
                hits += [{"type": tier, "score": r.get("score") if isinstance(r, dict) else None, "item": r}
                         for r in self._own(rows)]
        return hits[:limit]

    def _list(self, types):
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

    def _locate(self, memory_id, tier):
        if "list" not in self.supports:  # cannot look first: the provider says whether it deleted
            return {"type": tier or "memory", "id": memory_id}
        rows = self._list(list(TIERS))
        hit = next((r for r in rows if str(r["item"].get("id")) == memory_id and tier in (None, r["type"])), None)
        return {"type": hit["type"], "id": memory_id} if hit else None

    def _delete(self, memory_id, tier):
        short = {"short_term": "short", "long_term": "long"}.get(tier or "")
        deleted = self._call("delete_memory", memory_id, tier=short)
        return {"type": tier or "memory", "id": memory_id} if deleted else None

    def _reset(self, tier, dry_run):
        tiers = RESET_TIERS[tier]
        if not dry_run:
            for name in tiers:
                self._call(f"reset_{name}")
        return dict.fromkeys(tiers)


BUILTINS: dict[str, type[Provider]] = {"file": FileProvider, "sqlite": SqliteProvider, "chroma": ChromaProvider}


def builtin(name: str) -> type[Provider] | None:
    """The built-in provider class ``name`` (a lazy one imported now), or ``None``."""
    if name in LAZY_BUILTINS:
        import importlib

        module, attr = LAZY_BUILTINS[name]
        found: type[Provider] = getattr(importlib.import_module(module), attr)
        return found
    return BUILTINS.get(name)


def plugin_supports(adapter: Any) -> list[str]:
    have = [m for m in REQUIRED + OPTIONAL if callable(getattr(adapter, m, None))]
    supports = [m for m in ("store_short_term", "store_long_term") if m in have]
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


def provider_names() -> list[str]:
    """Every provider's name, built-in first, without loading any plug-in."""
    return [*BUILTIN, *(ep.name for ep in _entry_points() if ep.name not in BUILTIN)]


def available() -> list[ProviderInfo]:
    """Every provider with what it supports; a plug-in that fails to load says why."""
    infos = [ProviderInfo(name, "builtin", list(builtin(name).supports)) for name in BUILTIN]
    for ep in _entry_points():
        if ep.name in BUILTIN:
            continue
        dist = getattr(getattr(ep, "dist", None), "name", None)
        info = ProviderInfo(ep.name, f"entry point {ep.value}" + (f" ({dist})" if dist else ""))
        try:
            factory = ep.load()
            info.supports = plugin_supports(factory)
            missing = [m for m in REQUIRED if not callable(getattr(factory, m, None))]
            if missing:
                info.error = f"missing required {'method' if len(missing) == 1 else 'methods'}: {', '.join(missing)}"
        except Exception as exc:  # a broken plug-in must not hide the others
            info.error = f"cannot load: {type(exc).__name__}: {exc}"
        infos.append(info)
    return infos


def open_provider(name: str, *, user_id: str | None, paths: Paths, timeout: float,
                  cache: Cache | None = None, **options: Any) -> Provider:
    """The provider ``name`` for ``user_id``. SQLite keeps the library's own user rule (a blank id means the
    unsuffixed files); the others FileMemory's (blank means ``default``; separators and ``..`` refused).
    ``cache``: praisonmem's cache, which the file provider's search uses (and its writes clear); ``options``: those
    of a built-in with options of its own (``db`` for ``mem0-history``, ``chroma_path`` for ``chroma``: the
    Chroma directory, default the library's for the current dir and the user), ``None`` meaning not given."""
    name = ALIASES.get(name, name)
    given = {k: v for k, v in options.items() if v is not None}
    if "chroma_path" in given and name != "chroma":
        raise UsageError(f"--chroma-path is for --provider chroma, not '{name}'")
    if name in OPENED:
        return builtin(name).open(paths, user_id, timeout, **given)
    if name == "file":
        return FileProvider(paths.memory_dir, user_id, timeout, cache)
    if name == "sqlite":
        return SqliteProvider(paths.project_dir, user_id or "", timeout)
    for ep in _entry_points():
        if ep.name == name:
            user = sanitise_user_id(user_id)
            try:
                factory = ep.load()
                adapter = factory(**_accepted_kwargs(factory, user_id=user, memory_dir=str(paths.memory_dir)))
            except Exception as exc:
                raise ProviderFailed(f"provider '{name}' failed to load: {type(exc).__name__}: {exc}") from exc
            missing = [m for m in REQUIRED if not callable(getattr(adapter, m, None))]
            if missing:
                raise ProviderFailed(f"provider '{name}' lacks required {'method' if len(missing) == 1 else 'methods'}: "
                                     f"{', '.join(missing)}")
            return PluginProvider(name, adapter, user)
    raise UsageError(f"unknown provider '{name}' (available: {', '.join(provider_names())})")


def provider_users(name: str, paths: Paths, timeout: float) -> UsersReport:
    """``memory users``: the users a provider holds, with item counts."""
    cls = builtin(ALIASES.get(name, name))
    if cls is None:
        raise Unsupported(f"provider '{name}' cannot list its users")
    return cls.users(paths, timeout)


def _accepted_kwargs(factory: Any, **offered: Any) -> dict[str, Any]:
    try:
        params = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):
        return {}
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        return offered
    names = {p.name for p in params}
    return {k: v for k, v in offered.items() if k in names}
