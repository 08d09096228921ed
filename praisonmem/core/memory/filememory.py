"""A FileMemory-compatible store (praisonaiagents ``memory/file_memory.py``).

Layout: ``<memory dir>/<user_id>/`` with ``config.json``, ``short_term.json``,
``long_term.json``, ``entities.json``, ``summaries.json`` and
``episodic/YYYY-MM-DD.json`` (local dates). Items keep the library's exact keys
and float epochs; ids are ``sha256(content + str(time.time()) + user_id)[:16]``.

The library has no cross-process lock. praisonmem writers serialise among
themselves with a flock on ``<user dir>/.praisonmem.lock``, re-read every file
right before writing it, and replace files atomically (temp file ``.<name>.*.tmp``
in the same directory, fsync, 0600). A file that does not parse is never
overwritten (the library would treat it as empty and overwrite it). Every file
is read under ``flock(LOCK_SH)`` on the file itself, as the library's readers do,
so an older release rewriting it in place is never seen half-written
(:mod:`praisonmem.core.memory.filememory_io`). Reading creates nothing; a new user's
directory and ``config.json`` (the library's defaults) are created on the first
write, as the library does.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from datetime import datetime, timedelta
from itertools import repeat
from pathlib import Path
from typing import TYPE_CHECKING, Any

from praisonmem.core.errors import CorruptFile, NotFound, UsageError, io_failure
from praisonmem.core.io import jsonfile, timeutil
from praisonmem.core.layout import (ENTITIES, EPISODIC, LONG_TERM, MEMORY_CONFIG, MEMORY_FILES, MEMORY_LOCK,
                                    MEMORY_SUBDIRS, NESTING, SAVED_SESSIONS, SHORT_TERM, SUMMARIES)
from praisonmem.core.memory import filememory_config, filememory_io

if TYPE_CHECKING:
    from praisonmem.core.io.cache import Cache

DEFAULT_CONFIG: dict[str, Any] = {
    "short_term_limit": 100,
    "long_term_limit": 1000,
    "episodic_retention_days": 30,
    "enable_summarization": False,
    "summarization_threshold": 50,
    "importance_threshold": 0.7,
    "auto_promote": True,
}
ITEM_DEFAULTS: dict[str, Any] = {"metadata": {}, "access_count": 0, "importance": 0.5}
ITEM_KEYS = ("id", "content", "metadata", "created_at", "updated_at", "access_count", "importance")  # MemoryItem's
ENTITY_KEYS = ("id", "name", "entity_type", "attributes", "relationships", "created_at", "updated_at")  # EntityItem's
TIER_FILES = {"short_term": SHORT_TERM, "long_term": LONG_TERM}
SUBDIRS = MEMORY_SUBDIRS
TYPES = ("short_term", "long_term", "entity", "episodic")
SEARCH_DAYS = 7  # get_episodic(days_back=7), also used by search
DELETE_DAYS = 30  # delete_episodic without a date
SAVED_LISTS = ("short_term", "long_term_snapshot")  # save_session's copies of the tiers' items
SEARCH_INDEX_KIND = "memory-search"  # the cache entries of :mod:`.search`'s index (its KIND), which a write drops


def sanitise_user_id(user_id: str | None) -> str:
    """The library's rule: blank → ``default``; separators and ``..`` refused; else stripped."""
    if not user_id or not isinstance(user_id, str):
        return "default"
    if ".." in user_id or "/" in user_id or "\\" in user_id:
        raise UsageError(f"user_id must not contain path separators or parent references, got '{user_id}'")
    return user_id.strip() or "default"


def normalise_date(date: Any) -> str:
    """``strptime('%Y-%m-%d')`` then ``strftime``: ``2026-3-5`` → ``2026-03-05``; else exit 2."""
    try:
        return datetime.strptime(date, "%Y-%m-%d").strftime("%Y-%m-%d")
    except (TypeError, ValueError):
        raise UsageError(f"date must be YYYY-MM-DD, got {date!r}") from None


def today() -> str:
    return timeutil.local_now().strftime("%Y-%m-%d")


def local_dates(days: int, start: datetime | None = None) -> list[str]:
    """Today and the previous ``days - 1`` local dates, newest first (the library's window)."""
    now = timeutil.local_now() if start is None else start
    return [(now - timedelta(days=i)).strftime("%Y-%m-%d") for i in range(days)]


def normalised_item(item: dict[str, Any]) -> dict[str, Any]:
    """``MemoryItem(**d).to_dict()``: every field, in the library's order (stored items already are)."""
    now = time.time()
    out = {k: item[k] for k in ITEM_KEYS[:2] if k in item}
    for key in ITEM_KEYS[2:]:
        out[key] = item[key] if key in item else (now if key in ("created_at", "updated_at") else ITEM_DEFAULTS[key])
    return out


def normalised_entity(entity: dict[str, Any]) -> dict[str, Any]:
    now = time.time()
    out = {k: entity[k] for k in ("id", "name", "entity_type") if k in entity}
    out["attributes"] = entity.get("attributes", {})
    out["relationships"] = entity.get("relationships", [])
    out["created_at"] = entity.get("created_at", now)
    out["updated_at"] = entity.get("updated_at", now)
    return out


def check_items(path: Path, items: list[Any]) -> list[dict[str, Any]]:
    """``items`` when every one is a MemoryItem FileMemory() can load and search; else :class:`CorruptFile`."""
    if _plainly_items(items):
        return items
    for index, item in enumerate(items):
        if not (isinstance(item, dict) and isinstance(item.get("content"), str) and "id" in item):
            raise CorruptFile(str(path), f"item {index} is not a memory item with an id and text content "
                                         "(FileMemory() would crash on it)")
        importance = item.get("importance", 0.5)
        if isinstance(importance, bool) or not isinstance(importance, (int, float)):
            raise CorruptFile(str(path), f"item {index} has a non-numeric importance "
                                         "(FileMemory.search would crash on it)")
    return items


def _plainly_items(items: list[Any]) -> bool:
    """The common case of :func:`check_items`, decided by C-level passes (a 60,000-item store in ms)."""
    if not items:
        return True
    if set(map(type, items)) != {dict} or not all(map(dict.__contains__, items, repeat("id"))):
        return False
    if set(map(type, map(dict.get, items, repeat("content")))) != {str}:
        return False
    return set(map(type, map(dict.get, items, repeat("importance"), repeat(0.5)))) <= {int, float}


def check_entities(path: Path, entities: dict[str, Any]) -> dict[str, Any]:
    for key, entity in entities.items():
        if not (isinstance(entity, dict) and isinstance(entity.get("name"), str)
                and isinstance(entity.get("attributes", {}), dict)
                and isinstance(entity.get("relationships", []), list)):
            raise CorruptFile(str(path), f"entity '{key}' is not an entity with a name, attributes and relationships")
    return entities


def user_lock(user_dir: Path, timeout: float = jsonfile.LOCK_TIMEOUT) -> AbstractContextManager[None]:
    """praisonmem's writer lock for one FileMemory user, ``<user dir>/.praisonmem.lock`` (the library has none):
    BSD ``flock`` on that sidecar, without filelock (15 ms of imports) when the directory is there, as every
    writer's is (:meth:`FileMemoryStore.writing` creates it first); filelock creates a missing one."""
    if user_dir.is_dir():
        return jsonfile.locked_quick(user_dir / MEMORY_LOCK, timeout)
    return jsonfile.locked(user_dir / MEMORY_LOCK, timeout)


def file_lock(path: Path, timeout: float = jsonfile.LOCK_TIMEOUT) -> AbstractContextManager[None]:
    """:func:`user_lock` of the user a FileMemory file belongs to (its directory, or the one above its
    ``episodic/``, ``sessions/`` or ``checkpoints/``): what replacing such a file from outside takes (a restore)."""
    return user_lock(path.parent if path.name in MEMORY_FILES else path.parent.parent, timeout)


class FileMemoryStore:
    """One FileMemory user. ``cache``: praisonmem's cache, which a search uses when it is enabled
    (:mod:`.search`) and every write clears for the file it replaces."""

    def __init__(self, base: Path, user_id: str | None = "default", *,
                 timeout: float = jsonfile.LOCK_TIMEOUT, cache: Cache | None = None) -> None:
        self.user_id = sanitise_user_id(user_id)
        self.base = Path(base)
        self.user_dir = self.base / self.user_id
        self.episodic_dir = self.user_dir / EPISODIC
        self.timeout = timeout
        self.cache = cache
        # While writing: for each list file read, the document and the ids of its items that
        # jsonfile.serialise need not check again (the document is kept so no id is reused).
        self._proofs: dict[Path, tuple[Any, frozenset[int]]] | None = None

    @classmethod
    def at(cls, base: Path, name: str, *, timeout: float = jsonfile.LOCK_TIMEOUT) -> FileMemoryStore:
        """The store in directory ``name`` under ``base`` exactly as :func:`users` names it, a raw id from
        before 1.6.58 included (``" alice "``, ``team/alice``): for reading what is there."""
        store = cls(base, "default", timeout=timeout)
        store.user_id = name
        store.user_dir = store.base / name
        store.episodic_dir = store.user_dir / EPISODIC
        return store

    # -------------------------------------------------------- reading

    def path(self, name: str) -> Path:
        return self.user_dir / name

    def exists(self) -> bool:
        return self.user_dir.is_dir()

    def read(self, path: Path, default: Any) -> Any:
        """A JSON file's value; ``default`` when absent; :class:`CorruptFile` when unusable."""
        writing = self._proofs is not None and type(default) is list  # no writer changes a list file's items
        try:
            data = filememory_io.read_settled(path, self.timeout, jsonfile.parse_proven if writing
                                              else jsonfile.parse)[1]
        except NotFound:
            return default
        except CorruptFile as exc:
            raise CorruptFile(str(path), f"{exc.reason} (FileMemory would read it as empty and overwrite it; "
                                         "praisonmem leaves it alone: fix or move it)") from exc
        if writing:
            data, proven = data
            self._proofs[path] = (data, proven)
        if type(data) is not type(default):
            raise CorruptFile(str(path), f"holds {jsonfile.json_kind(data)}, not {jsonfile.json_kind(default)}")
        return data

    def items(self, tier: str) -> list[dict[str, Any]]:
        return self.read_items(self.path(TIER_FILES[tier]))

    def read_items(self, path: Path) -> list[dict[str, Any]]:
        """A list of MemoryItems; one FileMemory() could not load is refused, naming it."""
        return check_items(path, self.read(path, []))

    def entities(self) -> dict[str, Any]:
        return check_entities(self.path(ENTITIES), self.read(self.path(ENTITIES), {}))

    def summaries(self) -> list[Any]:
        """``summaries.json`` as stored (``add_summary``'s objects, oldest first); absent: ``[]``."""
        return self.read(self.path(SUMMARIES), [])

    def episodes(self, day: str) -> list[dict[str, Any]]:
        """The items of one episodic file, by its (normalised or legacy raw) date."""
        return self.read_items(self.episodic_dir / f"{day}.json")

    def episodic_dates(self) -> list[str]:
        """Dates with an episodic file, as stored (older releases wrote raw dates such as 2026-3-5)."""
        if not self.episodic_dir.is_dir():
            return []
        return sorted(p.stem for p in self.episodic_dir.glob("*.json") if p.is_file())

    def config(self, *used: str) -> dict[str, Any]:
        """``DEFAULT_CONFIG`` updated with the saved values, as FileMemory loads it (never rewritten);
        a ``used`` key whose value would make FileMemory raise or delete items is refused, naming it."""
        config = {**DEFAULT_CONFIG, **self.read(self.path(MEMORY_CONFIG), {})}
        for key in used:
            found = filememory_config.problem(key, config[key])
            if found and found[0] == filememory_config.ERROR:
                raise CorruptFile(str(self.path(MEMORY_CONFIG)), f"'{key}' {found[1]}; nothing stored")
        return config

    def recent_episodes(self, days: int = SEARCH_DAYS) -> list[tuple[str, dict[str, Any]]]:
        found = []
        for date in local_dates(days):
            path = self.episodic_dir / f"{date}.json"
            if path.exists():
                found += [(date, item) for item in self.read_items(path)]
        return found

    def counts(self) -> dict[str, Any]:
        """Items per tier; a file that does not parse counts as ``None`` and is named."""
        out: dict[str, Any] = {"unreadable": []}
        readers = {"short_term": lambda: self.items("short_term"), "long_term": lambda: self.items("long_term"),
                   "entities": self.entities, "summaries": self.summaries}
        for key, reader in readers.items():
            try:
                out[key] = len(reader())
            except CorruptFile as exc:
                out[key] = None
                out["unreadable"].append(exc.message)
        episodes = 0
        for date in self.episodic_dates():
            try:
                episodes += len(self.read(self.episodic_dir / f"{date}.json", []))
            except CorruptFile as exc:
                out["unreadable"].append(exc.message)
        out["episodic"] = episodes
        out["episodic_days"] = len(self.episodic_dates())
        return out

    # -------------------------------------------------------- writing

    @contextmanager
    def writing(self) -> Iterator[None]:
        """Create a new user like FileMemory does, and hold praisonmem's per-user lock."""
        from praisonmem.core.io.gcpolicy import no_gc

        jsonfile.makedirs(self.episodic_dir)
        # No cyclic collection while the files are decoded, changed and written: they hold no cycles, and a
        # pass over a 60,000-item store's young objects costs 10 ms or more.
        with user_lock(self.user_dir, self.timeout), no_gc():
            config = self.path(MEMORY_CONFIG)
            if not config.exists():
                jsonfile.replace_atomically(config, jsonfile.serialise(dict(DEFAULT_CONFIG)))
            self._proofs = {}
            try:
                yield
            finally:
                self._proofs = None

    def _write(self, path: Path, data: Any) -> None:
        proof = self._proofs.pop(path, None) if self._proofs is not None else None
        jsonfile.replace_atomically(path, jsonfile.serialise(data, known=proof[1] if proof else frozenset()))
        self.forget(path)

    def forget(self, path: Path) -> None:
        """Drop the cached index of a file praisonmem just replaced or removed (it would hold the old texts)."""
        if self.cache is not None:
            self.cache.drop(SEARCH_INDEX_KIND, path)  # a write needs the index's name, not the index module

    def new_id(self, content: str) -> str:
        from praisonmem.core.io.digest import sha256_hex  # the library's hashlib.sha256, without loading OpenSSL

        return sha256_hex(f"{content}{time.time()}{self.user_id}".encode())[:16]

    def new_item(self, content: str, metadata: dict[str, Any] | None, importance: float) -> dict[str, Any]:
        item_id = self.new_id(content)
        created = time.time()
        return {"id": item_id, "content": content, "metadata": metadata or {}, "created_at": created,
                "updated_at": time.time(), "access_count": 0, "importance": importance}

    def add_short_term(self, content: str, metadata: dict[str, Any] | None = None,
                       importance: float = 0.5) -> dict[str, Any]:
        """Append, then promote and trim past ``short_term_limit``."""
        with self.writing():
            config = self.config("short_term_limit", "importance_threshold")
            items = self.items("short_term")
            item = self.new_item(content, metadata, importance)
            items.append(item)
            limit = config["short_term_limit"]
            if len(items) > limit:
                if config["auto_promote"]:
                    self._promote(items, config["importance_threshold"])
                items = items[-limit:]
            self._write(self.path(TIER_FILES["short_term"]), items)
            return item

    def _promote(self, short_items: list[dict[str, Any]], threshold: float) -> None:
        long_items = self.items("long_term")
        known = {i.get("id") for i in long_items}
        promoted = False
        for item in short_items:
            if normalised_item(item)["importance"] >= threshold and item.get("id") not in known:
                long_items.append(normalised_item(item))
                known.add(item.get("id"))
                promoted = True
        if promoted:
            self._write(self.path(TIER_FILES["long_term"]), long_items)

    def add_long_term(self, content: str, metadata: dict[str, Any] | None = None,
                      importance: float = 0.8) -> dict[str, Any]:
        """Append; past ``long_term_limit`` keep the most important (ties: newest), as the library."""
        with self.writing():
            config = self.config("long_term_limit")
            items = self.items("long_term")
            item = self.new_item(content, metadata, importance)
            items.append(item)
            limit = config["long_term_limit"]
            if len(items) > limit:
                items = ranked(items)[:limit]
            self._write(self.path(TIER_FILES["long_term"]), items)
            return item

    def add_entity(self, name: str, entity_type: str, attributes: dict[str, Any] | None = None,
                   relationships: list[dict[str, str]] | None = None) -> dict[str, Any]:
        """Merge into an entity with the same name (any case) and type, else create one."""
        with self.writing():
            entities = self.entities()
            existing = find_entity(entities, name, entity_type)
            if existing is not None:
                existing.setdefault("attributes", {}).update(attributes or {})
                if relationships:
                    existing.setdefault("relationships", []).extend(relationships)
                existing["updated_at"] = time.time()
                entity = existing
            else:
                entity_id = self.new_id(f"{name}:{entity_type}")
                created = time.time()
                entity = {"id": entity_id, "name": name, "entity_type": entity_type,
                          "attributes": attributes or {}, "relationships": relationships or [],
                          "created_at": created, "updated_at": time.time()}
                entities[entity_id] = entity
            self._write(self.path(ENTITIES), entities)
            return entity

    def add_episodic(self, content: str, date: str | None = None, metadata: dict[str, Any] | None = None,
                     importance: float = 0.5) -> tuple[str, dict[str, Any]]:
        day = normalise_date(date) if date is not None else today()
        item = self.new_item(content, metadata, importance)
        with self.writing():
            path = self.episodic_dir / f"{day}.json"
            episodes = self.read_items(path)
            episodes.append(item)
            self._write(path, episodes)
        return day, item

    def replace_episodes(self, day: str, episodes: list[dict[str, Any]] | None, merged: list[Path]) -> None:
        """Write ``day``'s episodic file (``None``: it holds them already), then remove the raw-date files
        ``merged`` into it (written before removed: an interruption leaves entries twice, never lost). The
        caller holds :func:`user_lock`."""
        if episodes is not None:
            self._write(self.episodic_dir / f"{day}.json", episodes)
        for path in merged:
            try:
                jsonfile.delete_locked(path)
            except NotFound:  # FileMemory itself takes no lock: its cleanup may have removed it
                pass

    # -------------------------------------------------------- deleting

    def locate(self, memory_id: str, tier: str | None = None) -> dict[str, Any] | None:
        """Where ``delete`` would find the id (the first of short, long, entity, episodic), reading only."""
        if not self.exists():
            return None
        for kind in ("short_term", "long_term"):
            if tier in (None, kind) and any(i.get("id") == memory_id for i in self.items(kind)):
                return {"type": kind, "id": memory_id}
        if tier in (None, "entity"):
            entities = self.entities()
            if find_entity(entities, memory_id, None) is not None or memory_id in entities:
                return {"type": "entity", "id": memory_id}
        if tier in (None, "episodic"):
            for day in local_dates(DELETE_DAYS):
                path = self.episodic_dir / f"{day}.json"
                if path.exists() and any(i.get("id") == memory_id for i in self.episodes(day)):
                    return {"type": "episodic", "id": memory_id, "date": day}
        return None

    def delete(self, memory_id: str, tier: str | None = None) -> dict[str, Any] | None:
        """``delete_memory``: short-term, then long-term, then entities (name, then id), then episodic;
        ``tier`` narrows it to one, like the library's ``memory_type`` hint."""
        if not self.exists():
            return None
        with self.writing():
            for kind in ("short_term", "long_term"):
                if tier not in (None, kind):
                    continue
                items = self.items(kind)
                for index, item in enumerate(items):
                    if item.get("id") == memory_id:
                        del items[index]
                        self._write(self.path(TIER_FILES[kind]), items)
                        return {"type": kind, "id": memory_id, "item": item}
            if tier not in (None, "entity", "episodic"):
                return None
            if tier == "episodic":
                return self._delete_episodic_locked(memory_id, local_dates(DELETE_DAYS))
            entities = self.entities()
            entity = find_entity(entities, memory_id, None)
            key = next((k for k, v in entities.items() if v is entity), None) if entity is not None else None
            if key is None and memory_id in entities:
                key = memory_id
            if key is not None:
                removed = entities.pop(key)
                self._write(self.path(ENTITIES), entities)
                return {"type": "entity", "id": removed.get("id", key), "item": removed}
            if tier == "entity":
                return None
            return self._delete_episodic_locked(memory_id, local_dates(DELETE_DAYS))

    def locate_summary(self, summary_id: str) -> dict[str, Any] | None:
        """Where ``delete_summary`` would find the id, reading only."""
        if any(isinstance(s, dict) and s.get("id") == summary_id for s in self.summaries()):
            return {"type": "summary", "id": summary_id}
        return None

    def delete_summary(self, summary_id: str) -> dict[str, Any] | None:
        """Remove the first summary with this id from ``summaries.json`` (re-read under the lock; the others kept
        byte for byte as the library's serialisation writes them); ``None`` when there is none."""
        if not self.path(SUMMARIES).is_file():
            return None
        with self.writing():
            found = self.summaries()
            for index, summary in enumerate(found):
                if isinstance(summary, dict) and summary.get("id") == summary_id:
                    del found[index]
                    self._write(self.path(SUMMARIES), found)
                    return {"type": "summary", "id": summary_id, "item": summary}
        return None

    def find_episode(self, memory_id: str, date: str | None = None) -> str:
        """The day holding episode ``memory_id``: ``date``, or without it today and the 29 days before (as
        ``delete_episodic`` scans); :class:`NotFound` otherwise."""
        days = [normalise_date(date)] if date is not None else local_dates(DELETE_DAYS)
        for day in days:
            if any(isinstance(i, dict) and i.get("id") == memory_id for i in self.episodes(day)):
                return day
        scope = f"on {days[0]}" if date is not None else f"in the last {DELETE_DAYS} days"
        raise NotFound(f"no episode '{memory_id}' {scope} for user '{self.user_id}'")

    def delete_episodic(self, memory_id: str, date: str | None = None) -> dict[str, Any] | None:
        dates = [normalise_date(date)] if date is not None else local_dates(DELETE_DAYS)
        if not self.episodic_dir.is_dir():
            return None
        with self.writing():
            return self._delete_episodic_locked(memory_id, dates)

    def _delete_episodic_locked(self, memory_id: str, dates: list[str]) -> dict[str, Any] | None:
        for day in dates:
            path = self.episodic_dir / f"{day}.json"
            if not path.exists():
                continue
            episodes = self.read(path, [])
            for index, item in enumerate(episodes):
                if isinstance(item, dict) and item.get("id") == memory_id:
                    del episodes[index]
                    self._write(path, episodes)  # even when that leaves [] (as the library)
                    return {"type": "episodic", "id": memory_id, "date": day, "item": item}
        return None

    def reset_plan(self, what: str) -> dict[str, int]:
        """How many items ``reset`` would remove; a file that does not parse refuses the reset."""
        if not self.exists():
            raise NotFound(f"no memory for user '{self.user_id}' in {self.base}")
        plan: dict[str, int] = {}
        if what in ("short", "all"):
            plan["short_term"] = len(self.items("short_term"))
        if what in ("long", "all"):
            plan["long_term"] = len(self.items("long_term"))
        if what == "all":
            plan["entities"] = len(self.entities())
            plan["summaries"] = len(self.read(self.path(SUMMARIES), []))
            dates = self.episodic_dates()
            plan["episodic"] = sum(len(self.read(self.episodic_dir / f"{d}.json", [])) for d in dates)
            plan["episodic_files"] = len(dates)
        return plan

    def reset(self, what: str) -> dict[str, int]:
        """``short``: clear_short_term; ``long``: long-term only; ``all``: clear_all (keeps config,
        sessions/ and checkpoints/)."""
        plan = self.reset_plan(what)
        with self.writing():
            self.reset_plan(what)  # re-read under the lock: refuse files that stopped parsing
            if "short_term" in plan:
                self._write(self.path(TIER_FILES["short_term"]), [])
            if "long_term" in plan:
                self._write(self.path(TIER_FILES["long_term"]), [])
            if what == "all":
                self._write(self.path(ENTITIES), {})
                self._write(self.path(SUMMARIES), [])
                for path in self.episodic_dir.glob("*.json"):
                    try:
                        jsonfile.delete_locked(path)
                    except NotFound:  # FileMemory itself takes no lock: it may have removed it
                        pass
                    self.forget(path)
        return plan


    # -------------------------------------------------------- forgetting

    def erase_items(self, name: str, ids: frozenset[str]) -> int:
        """Remove the records whose ids are in ``ids`` from the user's file ``name`` (relative to the user
        directory: a tier, ``summaries.json``, ``episodic/<day>.json``; in a saved session its copies of the tiers;
        in ``entities.json`` the entities by key), re-read under the user's lock; every other record is written
        back as the library serialises it. How many went: 0 when the file or the user is gone already."""
        from praisonmem.core.io.gcpolicy import no_gc

        path = self.user_dir / name
        if not path.is_file():
            return 0
        saved = name.startswith(f"{SAVED_SESSIONS}/")
        with user_lock(self.user_dir, self.timeout), no_gc():
            self._proofs = {}
            try:
                data = self.read(path, {} if name == ENTITIES or saved else [])
                if saved:  # a saved session's copies of the tiers (save_session's snapshot)
                    removed = 0
                    for key in SAVED_LISTS:
                        if isinstance(data.get(key), list):
                            kept = [i for i in data[key] if not (isinstance(i, dict) and i.get("id") in ids)]
                            removed += len(data[key]) - len(kept)
                            data[key] = kept
                elif type(data) is dict:
                    gone = [key for key in data if key in ids]
                    for key in gone:
                        del data[key]
                    removed = len(gone)
                else:
                    kept = [i for i in data if not (isinstance(i, dict) and i.get("id") in ids)]
                    removed, data = len(data) - len(kept), kept
                if removed:
                    self._write(path, data)
            finally:
                self._proofs = None
        return removed

    def library_files(self) -> list[Path]:
        """Every file the library keeps for this user: its JSON files, then each file of ``episodic/``,
        ``sessions/`` and ``checkpoints/`` (sorted; no link followed)."""
        found = [self.user_dir / n for n in MEMORY_FILES if (self.user_dir / n).is_file()]
        for sub in MEMORY_SUBDIRS:
            directory = self.user_dir / sub
            if directory.is_dir() and not directory.is_symlink():
                found += sorted(p for p in directory.iterdir() if p.is_file() and not p.is_symlink())
        return found

    def erase_files(self, names: list[str], *, whole_user: bool = False) -> int:
        """Forget's delete of whole files: ``names`` (relative to the user directory, as :meth:`library_files`
        lists them) removed under the user's lock. With ``whole_user``, when nothing else is left, the emptied
        subdirectories, then the lock file (unlinked while held: a praisonmem writer waiting on it opens the path
        again and finds the directory gone, so nothing is written after) and the directory, which would keep the
        user's id on disk; FileMemory itself keeps no lock file there (it flocks each file it reads or writes).
        Idempotent: files gone already count for nothing. How many went."""
        if not self.user_dir.is_dir():
            return 0
        removed = 0
        try:
            with user_lock(self.user_dir, self.timeout):
                for name in names:
                    try:
                        jsonfile.delete_locked(self.user_dir / name)
                        removed += 1
                    except NotFound:
                        pass
                    self.forget(self.user_dir / name)
                if whole_user:
                    for sub in MEMORY_SUBDIRS:
                        _rmdir_empty(self.user_dir / sub)
                    lock = self.user_dir / f"{MEMORY_LOCK}.lock"
                    if {p.name for p in self.user_dir.iterdir()} <= {lock.name}:
                        _unlink(lock)
                        _rmdir_empty(self.user_dir)
        except NotFound:  # the directory went while this waited for the lock: another forget finished it
            pass
        return removed


def _rmdir_empty(directory: Path) -> None:
    try:
        directory.rmdir()
    except FileNotFoundError:
        pass
    except OSError as exc:
        import errno

        if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST, errno.ENOTDIR):
            raise io_failure(directory, exc, "cannot remove") from exc


def _unlink(path: Path) -> None:
    try:
        path.unlink()
    except FileNotFoundError:
        pass


def ranked(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The library's ``sort(key=lambda x: (x.importance, x.created_at), reverse=True)`` of
    ``MemoryItem(**item)``s (defaults 0.5 and now): stable, most important first, then newest."""
    importance = [i["importance"] if "importance" in i else ITEM_DEFAULTS["importance"] for i in items]
    created = [i["created_at"] if "created_at" in i else time.time() for i in items]
    try:
        total = sum(importance) + sum(created)
    except TypeError:
        total = math.nan
    if total == total:  # numbers, no NaN: two stable sorts on plain numbers equal one on the pairs
        order = sorted(range(len(items)), key=created.__getitem__, reverse=True)
        order.sort(key=importance.__getitem__, reverse=True)
    else:  # NaN (or worse): exactly the library's comparison of the pairs
        keys = list(zip(importance, created))
        order = sorted(range(len(items)), key=keys.__getitem__, reverse=True)
    return [items[k] for k in order]


def find_entity(entities: dict[str, Any], name: str, entity_type: str | None) -> dict[str, Any] | None:
    """``_find_entity_by_name``: the first entity whose name matches case-insensitively (and type, if given)."""
    wanted = name.lower()
    for entity in entities.values():
        if isinstance(entity, dict) and str(entity.get("name", "")).lower() == wanted:
            if entity_type is None or entity.get("entity_type") == entity_type:
                return entity
    return None


def users(base: Path, *, legacy: bool = True) -> list[str]:
    """User directories under a FileMemory base, by their path below it (``.`` when the base itself holds a
    store). Releases before 1.6.58 used the raw user id as the path, so ``" alice "`` and nested
    ``team/alice`` appear as they are (:func:`legacy_user_reason`); ``legacy=False`` leaves them out."""
    if not base.is_dir():
        return []
    found = ["."] if looks_like_user(base) else []
    found += _user_dirs(base, "", NESTING)
    return found if legacy else [name for name in found if legacy_user_reason(name) is None]


def _user_dirs(directory: Path, prefix: str, depth: int) -> list[str]:
    found = []
    for child in sorted(p for p in directory.iterdir() if p.is_dir() and not p.name.startswith(".")):
        if looks_like_user(child):
            found.append(prefix + child.name)
        elif depth > 1:
            found += _user_dirs(child, f"{prefix}{child.name}/", depth - 1)
    return found


def legacy_user_reason(name: str) -> str | None:
    """Why praisonaiagents 1.7.17 does not read the user directory ``name`` (a raw id from before 1.6.58)."""
    if name == ".":
        return None
    if "/" in name or "\\" in name or ".." in name:
        return (f"user directory '{name}' is a raw user id from before praisonaiagents 1.6.58; 1.7.17 refuses "
                "ids with '/', '\\' or '..', so no FileMemory reads this directory")
    if name != name.strip():
        return (f"user directory '{name}' is a raw user id from before praisonaiagents 1.6.58; 1.7.17 strips "
                f"ids, so FileMemory(user_id='{name}') reads '{sanitise_user_id(name)}', not this directory")
    return None


def looks_like_user(path: Path) -> bool:
    """A FileMemory user directory: it holds one of the library's files, or an episodic dir (``memory users``
    and ``check`` both ask this)."""
    return any((path / name).is_file() for name in MEMORY_FILES) or (path / EPISODIC).is_dir()
