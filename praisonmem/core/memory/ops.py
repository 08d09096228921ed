"""The ``memory`` commands, one function each, over the provider a user chose (:mod:`.providers`)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from praisonmem.core.errors import NotFound, UsageError
from praisonmem.core.io import jsonfile
from praisonmem.core.memory.filememory import FileMemoryStore
from praisonmem.core.memory.providers import Provider, ResetTier, Unsupported, parse_types
from praisonmem.core.paths import Paths
from praisonmem.core.result import Action, Change, Outcome, Plan
from praisonmem.core.io.safetext import plural

if TYPE_CHECKING:
    from praisonmem.core.io.cache import Cache


def check_importance(value: float | None) -> float | None:
    if value is not None and not 0.0 <= value <= 1.0:
        raise UsageError(f"--importance must be between 0 and 1, got {value:g}")
    return value


def item_text(item: dict[str, Any]) -> str:
    """What an item says, whichever provider stored it (FileMemory ``content``, SQLite ``text``, entity ``name``,
    a summary's ``summary``)."""
    for key in ("content", "text", "memory", "summary", "name"):
        if isinstance(item.get(key), str):
            return item[key]
    return ""


def store_memory(provider: Provider, text: str, *, long: bool = False, importance: float | None = None,
                 metadata: dict[str, Any] | None = None) -> Outcome:
    """``memory store``: one item, short-term unless ``long``; its record is the stored item."""
    if not text.strip():
        raise UsageError("the memory text must not be empty")
    check_importance(importance)
    item = provider.store(text, long=long, importance=importance, metadata=metadata or {})
    return Outcome([Change(Action.stored, str(item["id"]), fields=item)])


def search_memory(provider: Provider, query: str, *, types: list[str] | None = None, limit: int = 10,
                  filters: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """``memory search``: ``[{type, score, item}]`` as the provider ranks them, then ``filters`` on the item's
    metadata (an entity's attributes), at most ``limit`` (0 = all)."""
    kinds = provider.types(types)
    if filters:
        provider.check_filters(filters)
    hits = provider.search(query, kinds, limit if limit and not filters else 10**9)
    if filters:
        hits = [h for h in hits if _matches(provider.fields(h["item"]), filters)]
    return hits[:limit] if limit else hits


def _matches(meta: Any, filters: dict[str, str]) -> bool:
    if not isinstance(meta, dict):
        return False
    for key, wanted in filters.items():
        if key not in meta:
            return False
        value = meta[key]
        if not (str(value) == wanted or (not isinstance(value, str) and json.dumps(value) == wanted)):
            return False
    return True


def similar_memory(provider: Provider, memory_id: str, *, limit: int = 10) -> list[dict[str, Any]]:
    """``memory search --like ID``: the items nearest to a stored item's own vector (no model needed)."""
    like = getattr(provider, "like", None)
    if like is None:
        raise Unsupported(f"provider '{provider.name}' keeps no vectors: --like needs --provider chroma")
    return like(memory_id, limit or 10**9)


def export_memory(provider: Provider, *, output: str = "-", stdout: Any = None) -> dict[str, Any]:
    """``memory export``: the user's items as JSONL (a header line, then id, document, metadata and the exact
    embedding of each), to ``output`` (``-``: stdout; a regular file is replaced atomically)."""
    from praisonmem.core.io import outfile

    lines = provider.export()
    outfile.write(output, ("\n".join(lines) + "\n").encode(), stdout=stdout)
    return {"provider": provider.name, "user_id": provider.user_id, "exported": len(lines) - 1, "output": output}


def import_memory(provider: Provider, source: str, *, on_conflict: str = "fail", dry_run: bool = False) -> Outcome:
    """``memory import FILE``: a ``memory export`` file into the user's collection; ids it holds already fail
    the import (``on_conflict="skip"``: are left as they are). The whole file is checked before anything is
    written."""
    from praisonmem.core.memory.chroma import read_export

    if on_conflict not in ("fail", "skip"):
        raise UsageError(f"--on-conflict must be fail or skip, got '{on_conflict}'")
    provider.require("import", "import")
    header, records = read_export(source)
    result = provider.import_records(header, records, on_conflict, dry_run)
    return Outcome([Change(Action.imported, f"{plural(result['added'], 'memory item')} into {result['collection']}",
                           f"{result['skipped']} already there, skipped" if result["skipped"] else None,
                           dry_run=dry_run, where=result["path"], fields=result)])


def list_memory(provider: Provider, *, types: list[str] | None = None, filters: dict[str, str] | None = None
                ) -> list[dict[str, Any]]:
    """``memory list``: every item of the chosen types, in file order; ``filters`` as :func:`search_memory`'s."""
    kinds = provider.types(types)
    if filters:
        provider.check_filters(filters)
    rows = provider.list(kinds)
    return [r for r in rows if _matches(provider.fields(r["item"]), filters)] if filters else rows


def plan_delete_memory(provider: Provider, memory_id: str, *, type_: str | None = None) -> Plan:
    """``memory delete``: found first (short-term, then long-term, entities, episodic; ``type_`` narrows it)."""
    tier = parse_types([type_])[0] if type_ is not None else None
    where = provider.locate(memory_id, tier)
    if where is None:
        raise NotFound(f"no memory '{memory_id}' {provider.scope()} ({provider.name} provider)")

    def run(dry_run: bool, progress: Any) -> Outcome:
        result = where if dry_run else provider.delete(memory_id, where["type"] if where["type"] != "memory" else None)
        if result is None:
            raise NotFound(f"memory '{memory_id}' disappeared before it could be deleted")
        return Outcome([Change(Action.deleted, f"{result['type']} memory {memory_id}", dry_run=dry_run,
                               fields=result)], [] if dry_run else list(provider.notes))

    return Plan(f"Delete {provider.describe(where)}?", run)


def plan_reset_memory(provider: Provider, tier: ResetTier | str = ResetTier.short) -> Plan:
    """``memory reset``: clear a tier of the user's memory (``all``: everything but config.json, sessions/
    and checkpoints/); the counts are read first."""
    tier = ResetTier(tier)
    counts = provider.reset(tier, dry_run=True)
    described = ", ".join(f"{n} {k.replace('_', ' ')}" if n is not None else k.replace("_", " ")
                          for k, n in counts.items())

    def run(dry_run: bool, progress: Any) -> Outcome:
        removed = counts if dry_run else provider.reset(tier, dry_run=False)
        return Outcome([Change(Action.removed, described, dry_run=dry_run, fields={
            "reset": tier.value, "user_id": provider.user_id, "provider": provider.name, "removed": removed})])

    return Plan(f"Reset {tier.value} memory of user '{provider.user_id}' ({described})?", run)


def extract_memories(paths: Paths, user_id: str | None, text: str, *, assistant: str | None = None,
                     store: bool = False, timeout: float = jsonfile.LOCK_TIMEOUT, cache: Cache | None = None) -> Outcome:
    """``memory extract``: AutoMemory's patterns over ``text``; with ``store``, what the library would write
    (skipping what the user's memory already holds), else a preview (a dry run)."""
    from praisonmem.core.memory import automemory

    target = FileMemoryStore(paths.memory_dir, user_id, timeout=timeout, cache=cache)
    writes = automemory.planned_writes(target, automemory.extract(text, assistant))
    if store:
        automemory.store_writes(target, writes)
    changes = []
    for w in writes:
        status = "already stored" if w.skipped else "stored" if store else "preview"
        changes.append(Change(Action.skipped if w.skipped else Action.stored, f"{w.kind}: {w.content}",
                              "already stored" if w.skipped else None, dry_run=not store,
                              where=f"{w.memory['type']}, importance {w.importance:g}",
                              fields={**w.memory, "store_as": w.kind, "stored_text": w.content, "status": status}))
    return Outcome(changes, [] if writes else ["nothing memorable found"])
