"""Which store an SQLite file is, by its tables (never by its name), with cheap counts of what it holds.

Opened with :func:`praisonmem.core.io.sqlite.connect_ro`, which changes nothing on disk (no ``-wal``, ``-shm`` or
journal appears, nothing is checkpointed). Only real tables are counted: a view by a store table's name would run
its own query, so such a table is treated as absent, as is a table without the store's columns.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from praisonmem.core.locate.model import command, session_dir_command

if TYPE_CHECKING:
    import sqlite3

MAGIC = b"SQLite format 3\x00"
SUFFIXES = (".db", ".sqlite", ".sqlite3", ".db3")  # files opened to look at their tables
SIDECARS = ("-wal", "-shm", "-journal")

TRANSCRIPT = ("session_id", "data")
INDEX_META = ("session_id", "updated_at")
CONV_SESSIONS = ("session_id", "user_id", "agent_id", "name", "state", "metadata", "created_at", "updated_at")
CONV_MESSAGES = ("id", "session_id", "role", "content", "created_at")
MEMORY_TABLES = {"short_term_memory": "short_term", "long_term_memory": "long_term"}
MEMORY_COLUMNS = ("id", "content", "metadata")
LEARN = ("key", "data", "created_at", "updated_at")
STORAGE = LEARN  # praisonai's SQLiteBackend writes the same columns, in the table praison_storage
UPSONIC_TABLES = {"upsonic_sessions": "sessions", "upsonic_user_memories": "users",
                  "upsonic_cultural_knowledge": "cultural_knowledge", "upsonic_knowledge": "knowledge",
                  "upsonic_usage_entries": "usage_entries"}
UPSONIC_SESSION = ("session_id", "session_type")
UPSONIC_USER = ("user_id", "user_memory")
MEM0_HISTORY = ("id", "memory_id", "old_memory", "new_memory", "event", "created_at", "is_deleted")
KNOWLEDGE = ("id", "content", "metadata", "user_id", "agent_id", "run_id", "created_at")
CHROMA = ("collections", "segments", "embeddings")
# memory_store[_<user>]: the rag Memory's default; memory_<user>: the one an Agent with a memory backend names
CHROMA_MEMORY = re.compile(r"memory(?:_store)?(?:_(?P<user>.+))?\Z")
CHROMA_KNOWLEDGE = "praisonai_knowledge"
CHROMA_MEMORY_DIR = re.compile(r"chroma_db(?:_.+)?\Z")  # the rag Memory's directory, per user or shared


@dataclass
class Found:
    """One store an SQLite file holds: kind, library, counts, and the words of the command that reaches it (none:
    ``None``); ``whole_dir``: the store is the file's directory (Chroma)."""

    kind: str
    library: str
    holds: dict[str, Any] = field(default_factory=dict)
    command: str | None = None
    whole_dir: bool = False


def is_sqlite(path: str) -> bool:
    from praisonmem.core.locate.sniff import read_head

    return (read_head(path, len(MAGIC)) or b"") == MAGIC


class Tables:
    """A database's real tables (lower-cased names) and, on demand, their columns and row counts."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.names = {row[0].lower(): row[0] for row in
                      conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        self.virtual = {row[0].lower() for row in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND upper(sql) LIKE 'CREATE VIRTUAL TABLE%'")}

    def has(self, table: str, columns: tuple[str, ...] = ()) -> bool:
        name = self.names.get(table.lower())
        if name is None:
            return False
        if not columns:
            return True
        have = {row[1] for row in self.conn.execute(f'PRAGMA table_info("{name}")')}
        return all(c in have for c in columns)

    def count(self, table: str, where: str = "", args: tuple[Any, ...] = ()) -> int:
        name = self.names[table.lower()]
        return int(self.conn.execute(f'SELECT count(*) FROM "{name}" {where}', args).fetchone()[0])


def classify(path: Path, *, timeout: float = 5.0) -> list[Found]:
    """The stores ``path`` holds (empty: another application's database, or not one); an error the caller
    reports as a skipped path (:class:`~praisonmem.core.errors.PraisonMemError`, a hot journal among them)."""
    import sqlite3  # here, not at import: a walk that meets no database never loads it

    from praisonmem.core.errors import IOFailure
    from praisonmem.core.io.sqlite import connect_ro

    conn = connect_ro(path, timeout)
    try:
        tables = Tables(conn)
        found: list[Found] = []
        for rule in RULES:
            found.extend(rule(tables, path))
        return found
    except sqlite3.DatabaseError as exc:
        if "not a database" in str(exc) or "malformed" in str(exc):
            return []
        raise IOFailure(f"{path}: {exc}") from exc
    finally:
        conn.close()


def _transcripts(t: Tables, path: Path) -> list[Found]:
    if not t.has("sessions", TRANSCRIPT):
        return []
    return [Found("gateway-transcripts", "praisonaiagents", {"sessions": t.count("sessions")},
                  command("session", "list", "--store", str(path)))]


def _index(t: Tables, path: Path) -> list[Found]:
    if not (t.has("session_meta", INDEX_META) and "session_fts" in t.names):
        return []
    # not a store of its own: the sessions are the JSON files beside it, which praisonmem's writes keep it in step with
    return [Found("session-index", "praisonaiagents", {"sessions": t.count("session_meta")},
                  session_dir_command(str(path.parent)))]


def _conversations(t: Tables, path: Path) -> list[Found]:
    found = []
    for lower in sorted(t.names):
        if not lower.endswith("sessions") or lower in t.virtual:
            continue
        prefix = t.names[lower][: -len("sessions")]
        if not (t.has(lower, CONV_SESSIONS) and t.has(prefix + "messages", CONV_MESSAGES)):
            continue
        words = ["session", "list", "--store", str(path)]
        if prefix != "praison_":
            words += ["--table-prefix", prefix]
        found.append(Found("conversation-sqlite", "praisonai",
                           {"sessions": t.count(lower), "messages": t.count(prefix + "messages")}, command(*words)))
    return found


def _memory(t: Tables, path: Path) -> list[Found]:
    tiers = [(table, tier) for table, tier in MEMORY_TABLES.items() if t.has(table, MEMORY_COLUMNS)]
    if not tiers:
        return []
    table, tier = tiers[0]
    stem = path.name[: -len(path.suffix)] if path.suffix else path.name
    user = stem[len(tier) + 1:] if stem.startswith(tier + "_") else ""
    words = ["--memory-dir", str(path.parent / "memory"), "memory", "list", "--provider", "sqlite"]
    if user:
        words += ["--user-id", user]
    named = stem in (tier, f"{tier}_{user}")  # the adapter finds its files by these names only
    holds = {"items": sum(t.count(table) for table, _ in tiers)}
    if user:
        holds["user"] = user
    return [Found("sqlite-memory", "praisonaiagents", holds, command(*words) if named else None)]


def _learn(t: Tables, path: Path) -> list[Found]:
    if not t.has("learn_store", LEARN):
        return []
    return [Found("learn-sqlite", "praisonaiagents", {"rows": t.count("learn_store")},
                  command("learn", "list", "--db", str(path)))]


def _storage(t: Tables, path: Path) -> list[Found]:
    if not t.has("praison_storage", STORAGE):
        return []
    return [Found("praisonai-storage", "praisonai", {"rows": t.count("praison_storage")}, None)]


def _upsonic(t: Tables, path: Path) -> list[Found]:
    have = {}
    if t.has("upsonic_sessions", UPSONIC_SESSION):
        have["sessions"] = t.count("upsonic_sessions")
    if t.has("upsonic_user_memories", UPSONIC_USER):
        have["users"] = t.count("upsonic_user_memories")
    if not have:
        return []
    for table, what in UPSONIC_TABLES.items():
        if what not in have and t.has(table):
            have[what] = t.count(table)
    return [Found("upsonic-sqlite", "upsonic", have, command("upsonic", "sessions", "--db", str(path)))]


def _mem0(t: Tables, path: Path) -> list[Found]:
    if not t.has("history", MEM0_HISTORY):
        return []
    holds = {"rows": t.count("history"),
             "memories": int(t.conn.execute(f'SELECT count(DISTINCT memory_id) FROM "{t.names["history"]}"')
                             .fetchone()[0])}
    if t.has("messages", ("session_scope", "role", "content")):
        holds["messages"] = t.count("messages")
    return [Found("mem0-history", "mem0", holds,
                  command("memory", "list", "--provider", "mem0-history", "--db", str(path)))]


def _knowledge(t: Tables, path: Path) -> list[Found]:
    if not t.has("knowledge", KNOWLEDGE):
        return []
    return [Found("knowledge-sqlite", "praisonaiagents", {"items": t.count("knowledge")},
                  command("knowledge", "list", "--path", str(path)))]


def _chroma(t: Tables, path: Path) -> list[Found]:
    if not all(t.has(name) for name in CHROMA) or not t.has("collections", ("id", "name")):
        return []
    directory = str(path.parent)
    rows = t.conn.execute(f'SELECT id, name FROM "{t.names["collections"]}" ORDER BY name').fetchall()
    if not rows and CHROMA_MEMORY_DIR.match(path.parent.name):
        # the library's memory directory with no collection left (what a forget of its user stops short of
        # removing when killed): listed, so the rerun finds it; nothing to reach in it
        return [Found("chroma-memory", "praisonaiagents", {"collections": 0}, None, whole_dir=True)]
    found = []
    for cid, name in rows:
        items = int(t.conn.execute(
            f'SELECT count(*) FROM "{t.names["embeddings"]}" e JOIN "{t.names["segments"]}" s ON e.segment_id = s.id '
            "WHERE s.collection = ? AND s.scope = 'METADATA'", (cid,)).fetchone()[0])
        memory = CHROMA_MEMORY.match(str(name))
        if memory:
            words = ["memory", "list", "--provider", "chroma", "--chroma-path", directory]
            user = memory.group("user")
            if user:
                words += ["--user-id", user]
            found.append(Found("chroma-memory", "praisonaiagents", {"collection": name, "items": items},
                               command(*words), whole_dir=True))
        elif name == CHROMA_KNOWLEDGE:
            found.append(Found("chroma-knowledge", "praisonaiagents", {"collection": name, "items": items},
                               command("knowledge", "list", "--path", directory), whole_dir=True))
    return found


RULES: tuple[Callable[[Tables, Path], list[Found]], ...] = (
    _transcripts, _index, _conversations, _memory, _learn, _storage, _upsonic, _mem0, _knowledge, _chroma)


def sidecars(path: str, names: Collection[str]) -> list[str]:
    """The sidecar files of a database among a directory's file ``names``."""
    base = os.path.basename(path)
    return [base + s for s in SIDECARS if base + s in names]
