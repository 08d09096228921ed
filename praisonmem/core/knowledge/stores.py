"""praisonaiagents' ``Knowledge`` stores: its Chroma collection and the ``knowledge.db`` fallback.

``Knowledge()`` keeps its items in Chroma at ``<cwd>/.praisonai/knowledge/chroma``, collection
``praisonai_knowledge`` (ids from ``time.time_ns()``, the scope ``user_id``/``agent_id``/``run_id`` in each
item's metadata); without chromadb it falls back to its SQLite adapter, ``knowledge.db`` in the working
directory: one table ``knowledge(id TEXT PRIMARY KEY, content TEXT NOT NULL, metadata TEXT (JSON),
user_id, agent_id, run_id TEXT, created_at REAL)`` in SQLite's default rollback-journal mode.

Both give records ``{"id", "document", "metadata"}`` (``knowledge.db`` adds its scope columns and
``created_at``). The Chroma store is read and written through :mod:`praisonmem.core.io.chroma`; the SQLite
one read-only through :func:`praisonmem.core.io.sqlite.connect_ro` and written in one transaction, then
vacuumed so a deleted text leaves no free page behind.
"""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from typing import Any

from praisonmem.core.errors import CorruptFile, IOFailure, NotFound, Refused, UsageError
from praisonmem.core.io import chroma as chroma_io
from praisonmem.core.io import sqlite as sqlite_io

COLLECTION = "praisonai_knowledge"
DB_NAME = "knowledge.db"
TABLE = "knowledge"
COLUMNS = ("id", "content", "metadata", "user_id", "agent_id", "run_id", "created_at")
SCOPE = ("user_id", "agent_id", "run_id")
EXPORT_FORMAT = "praisonmem.knowledge.v1"
# the library's table (its columns, types and key), for an import that makes a new knowledge.db
CREATE = ("CREATE TABLE IF NOT EXISTS knowledge (id TEXT PRIMARY KEY, content TEXT NOT NULL, metadata TEXT, "
          "user_id TEXT, agent_id TEXT, run_id TEXT, created_at REAL)")


def default_chroma(cwd: Path) -> Path:
    return cwd / ".praisonai" / "knowledge" / "chroma"


class ChromaKnowledge:
    kind = "chroma"
    vectors = True

    def __init__(self, path: Path, collection: str = COLLECTION) -> None:
        self.path = path
        self.collection = collection

    @property
    def label(self) -> str:
        return f"{self.path} (collection {self.collection})"

    def records(self, *, embeddings: bool = False, ids: list[str] | None = None) -> list[dict[str, Any]]:
        with chroma_io.snapshot(self.path) as client:
            col = chroma_io.collection(client, self.collection, self.path)
            return chroma_io.rows(col, ids=ids, embeddings=embeddings)

    def header(self) -> dict[str, Any]:
        with chroma_io.snapshot(self.path) as client:
            col = chroma_io.collection(client, self.collection, self.path)
            return {"store": "chroma", "collection": col.name, "metadata": col.metadata or {}}

    def like(self, item_id: str, limit: int, where: dict[str, Any] | None) -> list[dict[str, Any]]:
        with chroma_io.snapshot(self.path) as client:
            col = chroma_io.collection(client, self.collection, self.path)
            return chroma_io.neighbours(col, item_id, limit, _chroma_where(where))

    def delete(self, ids: list[str]) -> list[dict[str, Any]]:
        return chroma_io.delete_ids(self.path, self.collection, ids)

    def existing(self, ids: list[str]) -> set[str]:
        if not chroma_io.looks_like_chroma(self.path):
            return set()
        with chroma_io.snapshot(self.path) as client:
            if self.collection not in chroma_io.names(client):
                return set()
            col = client.get_collection(self.collection, embedding_function=None)
            return set(col.get(ids=ids, include=[])["ids"]) if ids else set()

    def add(self, header: dict[str, Any], records: list[dict[str, Any]]) -> None:
        if any(r.get("embedding") is None for r in records):
            raise Refused("a Chroma store needs each record's embedding (export it from a Chroma store); "
                          "nothing imported")
        create = not chroma_io.looks_like_chroma(self.path)
        if create and self.path.exists() and any(self.path.iterdir()):
            raise Refused(f"{self.path}: not empty and holds no {chroma_io.SQLITE}; nothing imported")
        chroma_io.add_rows(self.path, self.collection, records, metadata=header.get("metadata"), create=create)


def _chroma_where(where: dict[str, Any] | None) -> dict[str, Any] | None:
    if not where:
        return None
    if len(where) == 1:
        return dict(where)
    return {"$and": [{k: v} for k, v in where.items()]}


class SqliteKnowledge:
    kind = "sqlite"
    vectors = False

    def __init__(self, path: Path, timeout: float = 5.0) -> None:
        self.path = path
        self.timeout = timeout

    @property
    def label(self) -> str:
        return str(self.path)

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite_io.connect_ro(self.path, self.timeout)
        try:
            sqlite_io.require_store_tables(conn, self.path, {TABLE: COLUMNS}, required=(TABLE,))
        except sqlite3.Error as exc:
            conn.close()
            raise CorruptFile(str(self.path), f"not a readable SQLite database ({exc})") from None
        except BaseException:
            conn.close()
            raise
        return conn

    def records(self, *, embeddings: bool = False, ids: list[str] | None = None) -> list[dict[str, Any]]:
        conn = self._connect()
        try:
            sql = f"SELECT {', '.join(COLUMNS)} FROM {TABLE}"
            params: list[str] = []
            if ids is not None:
                sql += f" WHERE id IN ({', '.join('?' * len(ids))})"
                params = list(ids)
            rows = conn.execute(sql + " ORDER BY rowid", params).fetchall()
        except sqlite3.Error as exc:
            raise sqlite_io.translate(exc, self.path, self.timeout) from None
        finally:
            conn.close()
        return [self._record(row) for row in rows]

    def _record(self, row: tuple) -> dict[str, Any]:
        item_id, content, meta, user_id, agent_id, run_id, created_at = row
        try:
            metadata = json.loads(meta or "{}")
        except ValueError:
            metadata = {"_unparsed": meta}  # shown as stored, never rewritten
        return {"id": item_id, "document": content, "metadata": metadata, "user_id": user_id,
                "agent_id": agent_id, "run_id": run_id, "created_at": created_at}

    def header(self) -> dict[str, Any]:
        self._connect().close()
        return {"store": "sqlite", "table": TABLE}

    def like(self, item_id: str, limit: int, where: dict[str, Any] | None) -> list[dict[str, Any]]:
        raise Refused(f"{self.path} keeps no vectors (the library's SQLite fallback): --like needs a Chroma store")

    def delete(self, ids: list[str]) -> list[dict[str, Any]]:
        gone = self.records(ids=ids)
        if not gone:
            return []
        conn = sqlite_io.connect_existing(self.path, self.timeout)
        try:
            conn.execute("PRAGMA secure_delete=ON")  # the freed cells are zeroed, whatever SQLite was built with
            conn.execute("BEGIN IMMEDIATE")
            conn.executemany(f"DELETE FROM {TABLE} WHERE id = ?", [(r["id"],) for r in gone])
            conn.execute("COMMIT")
            conn.execute("VACUUM")  # and no free page keeps them either
        except sqlite3.Error as exc:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise sqlite_io.translate(exc, self.path, self.timeout) from None
        finally:
            conn.close()
        if _file_holds(self.path, [r["document"] for r in gone if r["document"]]):
            raise IOFailure(f"deleted, but {self.path} still holds deleted text")
        return gone

    def existing(self, ids: list[str]) -> set[str]:
        if not self.path.exists():
            return set()
        return {r["id"] for r in self.records(ids=ids)} if ids else set()

    def add(self, header: dict[str, Any], records: list[dict[str, Any]]) -> None:
        if self.path.exists():
            self._connect().close()
        conn = sqlite_io.connect_rw(self.path, self.timeout)
        try:
            conn.execute(CREATE)
            with conn:
                conn.executemany(
                    f"INSERT INTO {TABLE} ({', '.join(COLUMNS)}) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    [(r["id"], r["document"] or "", json.dumps(r["metadata"] or {}),
                      *(r.get(k) if r.get(k) is not None else (r["metadata"] or {}).get(k) for k in SCOPE),
                      r.get("created_at") if r.get("created_at") is not None else time.time()) for r in records])
        except sqlite3.Error as exc:
            raise sqlite_io.translate(exc, self.path, self.timeout) from None
        finally:
            conn.close()


def _file_holds(path: Path, texts: list[str]) -> bool:
    data = b""
    for suffix in ("", "-journal", "-wal"):
        try:
            data += Path(f"{path}{suffix}").read_bytes()
        except FileNotFoundError:
            continue
    return any(t.encode() in data for t in texts if t)


def open_store(chosen: Path | None, cwd: Path, *, collection: str = COLLECTION, timeout: float = 5.0,
               must_exist: bool = True) -> ChromaKnowledge | SqliteKnowledge:
    """The store ``--path`` names (a Chroma directory or a ``knowledge.db`` file), or the library's default:
    ``.praisonai/knowledge/chroma`` when it holds a Chroma store, else ``./knowledge.db``."""
    if chosen is None:
        chroma = default_chroma(cwd)
        if chroma_io.looks_like_chroma(chroma):
            return ChromaKnowledge(chroma, collection)
        db = cwd / DB_NAME
        if db.is_file() or not must_exist:
            return SqliteKnowledge(db, timeout)
        raise NotFound(f"no knowledge store here: neither {chroma} nor {db} exists (give --path DIR|FILE)")
    if chosen.is_dir():
        return ChromaKnowledge(chosen, collection)
    if chosen.is_file():
        return SqliteKnowledge(chosen, timeout)
    if chosen.exists():
        raise UsageError(f"{chosen}: neither a directory (a Chroma store) nor a file (knowledge.db)")
    if must_exist:
        raise NotFound(f"{chosen}: no such directory or file")
    return SqliteKnowledge(chosen, timeout) if chosen.suffix == ".db" else ChromaKnowledge(chosen, collection)
