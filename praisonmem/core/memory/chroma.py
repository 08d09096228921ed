"""The ``chroma`` memory provider (alias ``rag``): praisonaiagents' ``Memory()`` over Chroma, the default
whenever chromadb is installed.

Where the library keeps it: ``<cwd>/.praisonai/chroma_db[_<user>]``, collection ``memory_store[_<user>]``,
``_<user>`` made from the user id by the library's own rule (:func:`suffix`); ``--chroma-path DIR`` names the
directory (the collection keeps the user's name, as the library's ``rag_db_path`` does). Short- and long-term
memories land in the one collection, ids from ``time.time_ns()``, the caller's metadata as given, so every
item is listed as the library's ``get_all_memories`` labels it: ``long_term``.

praisonmem has no embedding model, so it cannot store (the library embeds each text); search matches words
of the documents and metadata. Reads, deletes, export and import go through :mod:`praisonmem.core.io.chroma`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from praisonmem.core.errors import NotFound, Refused, UsageError
from praisonmem.core.io import chroma as chroma_io
from praisonmem.core.io.safetext import plural

KIND = "long_term"  # what the library's get_all_memories calls every item of the collection
EXPORT_FORMAT = "praisonmem.chroma.v1"


def suffix(user_id: str | None) -> str:
    """``_<user>`` as praisonaiagents 1.7.17 derives it for its default paths (``""`` for no user); an id with a
    path separator, ``..`` or NUL is refused, as the library refuses it."""
    if not user_id:
        return ""
    text = str(user_id)
    if ".." in text or "/" in text or "\\" in text or "\x00" in text:
        raise UsageError(f"user id {text!r} must not contain path separators or '..' (the library refuses it too)")
    safe = "".join(c if (c.isalnum() or c in "-_.") else "_" for c in text.strip())
    return f"_{safe}" if safe else ""


def words_score(query: str, text: str) -> float | None:
    """1.0 when ``text`` holds the whole query (case-insensitive), else 0.8 x the share of its words found;
    ``None``: no word found. An empty query matches everything."""
    q, t = query.strip().lower(), text.lower()
    if not q or q in t:
        return 1.0
    words = q.split()
    found = sum(1 for w in words if w in t)
    return 0.8 * found / len(words) if found else None


def searchable(record: dict[str, Any]) -> str:
    """A record's document and metadata values, as one text to match words in."""
    values = [str(v) for v in (record.get("metadata") or {}).values()]
    return "\n".join([record.get("document") or "", *values])


def word_hits(records: list[dict[str, Any]], query: str) -> list[tuple[float, dict[str, Any]]]:
    """``(score, record)`` of every record matching ``query``, best first (ties keep the collection's order)."""
    scored = [(s, r) for r in records if (s := words_score(query, searchable(r))) is not None]
    return sorted(scored, key=lambda pair: -pair[0])


class ChromaMemoryStore:
    """One user's memory collection; ``providers.ChromaProvider`` wraps it in the uniform operations."""

    def __init__(self, project_dir: Path, user_id: str | None, chroma_path: Path | None = None) -> None:
        self.user_id = user_id or ""
        tail = suffix(user_id)
        self.path = chroma_path if chroma_path is not None else project_dir / f"chroma_db{tail}"
        self.collection_name = f"memory_store{tail}"
        self.notes: tuple[str, ...] = ()

    def _records(self, embeddings: bool = False) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        with chroma_io.snapshot(self.path) as client:
            col = chroma_io.collection(client, self.collection_name, self.path)
            return chroma_io.rows(col, embeddings=embeddings), {"name": col.name, "metadata": col.metadata or {}}

    @staticmethod
    def item(record: dict[str, Any]) -> dict[str, Any]:
        """A record as the library's adapter returns it: id, text, metadata."""
        return {"id": record["id"], "text": record["document"], "metadata": record["metadata"]}

    def list_items(self) -> list[dict[str, Any]]:
        return [{"type": KIND, "item": self.item(r)} for r in self._records()[0]]

    def search_items(self, query: str, limit: int) -> list[dict[str, Any]]:
        hits = word_hits(self._records()[0], query)
        return [{"type": KIND, "score": s, "item": self.item(r)} for s, r in hits[:limit or None]]

    def like(self, item_id: str, limit: int) -> list[dict[str, Any]]:
        """Nearest neighbours of a stored item's own vector (score: 1 - cosine distance, as the library's)."""
        with chroma_io.snapshot(self.path) as client:
            col = chroma_io.collection(client, self.collection_name, self.path)
            hits = chroma_io.neighbours(col, item_id, limit)
        return [{"type": KIND, "score": 1.0 - h["distance"], "item": self.item(h)} for h in hits]

    def locate(self, memory_id: str) -> dict[str, Any] | None:
        with chroma_io.snapshot(self.path) as client:
            col = chroma_io.collection(client, self.collection_name, self.path)
            found = chroma_io.rows(col, ids=[memory_id])
        return {"type": KIND, "id": memory_id, "text": found[0]["document"]} if found else None

    def delete(self, memory_id: str) -> dict[str, Any] | None:
        gone = chroma_io.delete_ids(self.path, self.collection_name, [memory_id])
        return {"type": KIND, "id": memory_id, "scrubbed": True} if gone else None

    def export_lines(self) -> list[str]:
        """JSONL: a header naming the collection, then one record a line with its exact embedding."""
        records, col = self._records(embeddings=True)
        header = {"format": EXPORT_FORMAT, "collection": col["name"], "metadata": col["metadata"],
                  "count": len(records)}
        return [json.dumps(header, ensure_ascii=False)] + [json.dumps(r, ensure_ascii=False) for r in records]

    def import_records(self, header: dict[str, Any], records: list[dict[str, Any]], on_conflict: str,
                       dry_run: bool) -> dict[str, Any]:
        """Add ``records`` to this user's collection (made as the library makes it when absent); ids it holds
        already are refused (``fail``) or left as they are (``skip``)."""
        existing: set[str] = set()
        exists = chroma_io.looks_like_chroma(self.path)
        if exists:
            with chroma_io.snapshot(self.path) as client:
                if self.collection_name in chroma_io.names(client):
                    col = client.get_collection(self.collection_name, embedding_function=None)
                    existing = set(col.get(ids=[r["id"] for r in records], include=[])["ids"]) if records else set()
        elif self.path.exists() and any(self.path.iterdir()):
            raise Refused(f"{self.path}: not empty and holds no {chroma_io.SQLITE}; nothing imported")
        clashes = [r["id"] for r in records if r["id"] in existing]
        if clashes and on_conflict == "fail":
            raise Refused(f"{plural(len(clashes), 'id')} already in {self.collection_name} (first: {clashes[0]}); "
                          "use --on-conflict skip to add only the others; nothing imported")
        todo = [r for r in records if r["id"] not in existing]
        if todo and not dry_run:
            chroma_io.add_rows(self.path, self.collection_name, todo, metadata=header.get("metadata"),
                               create=not exists)
        return {"added": len(todo), "skipped": len(clashes), "collection": self.collection_name,
                "path": str(self.path)}


def read_export(source: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A ``memory export`` file of a Chroma collection as ``(header, records)``; nothing of a damaged file."""
    header, records = chroma_io.read_export(source, export_format=EXPORT_FORMAT, what="Chroma",
                                            problem=_record_problem)
    return header, [{"id": r["id"], "document": r.get("document"), "metadata": r.get("metadata") or {},
                     "embedding": r["embedding"]} for r in records]


def _record_problem(value: dict[str, Any]) -> str | None:
    if not isinstance(value.get("id"), str) or not value["id"]:
        return "no string 'id'"
    if value.get("document") is not None and not isinstance(value["document"], str):
        return "'document' is not a string"
    meta = value.get("metadata")
    if meta is not None and (not isinstance(meta, dict) or
                             any(not isinstance(v, (str, int, float, bool)) for v in meta.values())):
        return "'metadata' must be an object of strings, numbers and booleans"
    vector = value.get("embedding")
    if not isinstance(vector, list) or not vector or any(isinstance(x, bool) or not isinstance(x, (int, float))
                                                          for x in vector):
        return "'embedding' must be a non-empty list of numbers"
    return None


def users(project_dir: Path) -> list[dict[str, Any]]:
    """Every ``chroma_db[_<user>]`` dir under ``project_dir`` with its collection's item count."""
    rows = []
    for path in sorted(project_dir.glob("chroma_db*")) if project_dir.is_dir() else []:
        if not chroma_io.looks_like_chroma(path):
            continue
        tail = path.name[len("chroma_db"):]
        if tail and not tail.startswith("_"):
            continue
        try:
            with chroma_io.snapshot(path) as client:
                name = f"memory_store{tail}"
                count = client.get_collection(name, embedding_function=None).count() \
                    if name in chroma_io.names(client) else 0
        except NotFound:
            continue
        rows.append({"user_id": tail[1:], "path": str(path), "long_term": count})
    return rows
