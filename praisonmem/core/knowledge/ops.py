"""The ``knowledge`` commands, one function each, over the store :func:`.stores.open_store` finds."""

from __future__ import annotations

import json
from typing import Any

from praisonmem.core.errors import NotFound, Refused, UsageError
from praisonmem.core.knowledge.stores import EXPORT_FORMAT, SCOPE, ChromaKnowledge, SqliteKnowledge
from praisonmem.core.result import Action, Change, Outcome, Plan
from praisonmem.core.io.safetext import plural

Store = ChromaKnowledge | SqliteKnowledge


def _value_matches(value: Any, wanted: str) -> bool:
    return str(value) == wanted or (not isinstance(value, str) and json.dumps(value) == wanted)


def matches(record: dict[str, Any], where: dict[str, str]) -> bool:
    """Every ``key=value`` holds in the record's metadata (or, in ``knowledge.db``, its scope columns)."""
    meta = record.get("metadata") or {}
    for key, wanted in where.items():
        if key in meta:
            value = meta[key]
        elif key in SCOPE and record.get(key) is not None:
            value = record[key]
        else:
            return False
        if not _value_matches(value, wanted):
            return False
    return True


def list_items(store: Store, *, where: dict[str, str] | None = None, limit: int = 0) -> list[dict[str, Any]]:
    """``knowledge list``: every item in stored order (``where``: only those matching; ``limit`` 0 = all)."""
    rows = [r for r in store.records() if matches(r, where or {})]
    return rows[:limit] if limit else rows


def show_item(store: Store, item_id: str) -> dict[str, Any]:
    found = store.records(ids=[item_id])
    if not found:
        raise NotFound(f"no knowledge item '{item_id}' in {store.label}")
    return found[0]


def search_items(store: Store, query: str | None, *, like: str | None = None, where: dict[str, str] | None = None,
                 limit: int = 10) -> list[dict[str, Any]]:
    """``knowledge search``: ``[{"score", "item"}]``, best first. Words: 1.0 for the whole query in the document
    or a metadata value, else 0.8 x the share of its words found. ``like``: the nearest items to that item's
    stored vector (score 1 - cosine distance, as the library's own search)."""
    from praisonmem.core.memory import word_hits

    if (query is None) == (like is None):
        raise UsageError("give QUERY or --like ID (one of them)")
    where = where or {}
    if like is not None:
        hits = [{"score": 1.0 - h.pop("distance"), "item": h}
                for h in store.like(like, 10**9, None) if matches(h, where)]
    else:
        hits = [{"score": s, "item": r} for s, r in word_hits(list_items(store, where=where), query)]
    return hits[:limit] if limit else hits


def plan_delete(store: Store, ids: list[str]) -> Plan:
    """``knowledge delete ID...``: every id must exist (else nothing is deleted); the deleted texts are then
    scrubbed from the store's files."""
    found = {r["id"] for r in store.records(ids=ids)}
    missing = [i for i in ids if i not in found]
    if missing:
        raise NotFound(f"no knowledge item '{missing[0]}' in {store.label}; nothing deleted")

    def run(dry_run: bool, progress: Any) -> Outcome:
        gone = [{"id": i} for i in ids] if dry_run else store.delete(ids)
        return Outcome([Change(Action.deleted, f"knowledge item {r['id']}", dry_run=dry_run,
                               fields={"id": r["id"], "store": store.kind, "path": str(store.path)}) for r in gone])

    return Plan(f"Delete {plural(len(ids), 'knowledge item')} from {store.label}?", run)


def export_items(store: Store, *, output: str = "-", stdout: Any = None) -> dict[str, Any]:
    """``knowledge export``: JSONL, a header line then each record (a Chroma store's with its exact embedding)."""
    from praisonmem.core.io import outfile

    records = store.records(embeddings=store.vectors)
    header = {"format": EXPORT_FORMAT, **store.header(), "count": len(records)}
    lines = [json.dumps(header, ensure_ascii=False)] + [json.dumps(r, ensure_ascii=False) for r in records]
    outfile.write(output, ("\n".join(lines) + "\n").encode(), stdout=stdout)
    return {"store": store.kind, "path": str(store.path), "exported": len(records), "output": output}


def _record_problem(value: dict[str, Any]) -> str | None:
    if not isinstance(value.get("id"), str) or not value["id"]:
        return "no string 'id'"
    if value.get("document") is not None and not isinstance(value["document"], str):
        return "'document' is not a string"
    if value.get("metadata") is not None and not isinstance(value["metadata"], dict):
        return "'metadata' is not an object"
    vector = value.get("embedding")
    if vector is not None and (not isinstance(vector, list) or not vector or
                               any(isinstance(x, bool) or not isinstance(x, (int, float)) for x in vector)):
        return "'embedding' must be a non-empty list of numbers"
    return None


def import_items(store: Store, source: str, *, on_conflict: str = "fail", dry_run: bool = False) -> Outcome:
    """``knowledge import FILE``: a ``knowledge export`` file into the store (made as the library makes it when
    absent); the whole file is checked first, ids already there fail the import or (``skip``) are kept."""
    from praisonmem.core.io import chroma as chroma_io

    if on_conflict not in ("fail", "skip"):
        raise UsageError(f"--on-conflict must be fail or skip, got '{on_conflict}'")
    header, records = chroma_io.read_export(source, export_format=EXPORT_FORMAT, what="knowledge",
                                            problem=_record_problem)
    existing = store.existing([r["id"] for r in records])
    clashes = [r["id"] for r in records if r["id"] in existing]
    if clashes and on_conflict == "fail":
        raise Refused(f"{plural(len(clashes), 'id')} already in {store.label} (first: {clashes[0]}); use --on-conflict "
                      "skip to add only the others; nothing imported")
    todo = [{"id": r["id"], "document": r.get("document"), "metadata": r.get("metadata") or {},
             "embedding": r.get("embedding"), **{k: r.get(k) for k in (*SCOPE, "created_at")}}
            for r in records if r["id"] not in existing]
    if todo and not dry_run:
        store.add(header, todo)
    result = {"added": len(todo), "skipped": len(clashes), "store": store.kind, "path": str(store.path)}
    return Outcome([Change(Action.imported, f"{plural(len(todo), 'knowledge item')} into {store.label}",
                           f"{len(clashes)} already there, skipped" if clashes else None, dry_run=dry_run,
                           fields=result)])
