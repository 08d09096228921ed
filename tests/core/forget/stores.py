"""Small stores for the proof's and the backups' tests: a JSON document of records and an SQLite table of them,
each planning and erasing one user's records as the real adapters do (plan reads, erase writes)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from pathlib import Path

from praisonmem.core.forget.model import Action, Erasure, StorePlan, Subject


class JsonStore:
    """``{"records": [{"id", "user", "text"}, ...]}`` in one file, written as ``json.dumps`` writes it."""

    store = "json-notes"

    def __init__(self, path: Path, *, ensure_ascii: bool = True, answer: list[str] | None = None) -> None:
        self.path = path
        self.location = str(path)
        self.ensure_ascii = ensure_ascii
        self.answer = answer

    def records(self) -> list[dict]:
        return json.loads(self.path.read_text("utf-8"))["records"] if self.path.exists() else []

    def write(self, records: list[dict]) -> None:
        self.path.write_text(json.dumps({"records": records}, ensure_ascii=self.ensure_ascii), "utf-8")

    def plan(self, subject: Subject) -> StorePlan:
        erasures = [Erasure(r["id"], f"note {r['id']}", texts=(r["text"],)) for r in self.records()
                    if r["user"] == subject.value]
        return StorePlan(self.store, self.location, erasures, [self.path])

    def erase(self, plan: StorePlan) -> int:
        gone = {e.key for e in plan.erasures}
        kept = [r for r in self.records() if r["id"] not in gone]
        self.write(kept)
        return len(gone)

    def residue(self, needles: Sequence[str]) -> list[str] | None:
        return self.answer


class SqliteStore:
    """A table ``notes(id, user, text)``; ``secure`` erases with ``secure_delete`` (else the text stays in the
    free pages, as a plain ``DELETE`` leaves it)."""

    store = "sqlite-notes"

    def __init__(self, path: Path, *, secure: bool = True, encoding: str = "UTF-8", wal: bool = False) -> None:
        self.path = path
        self.location = str(path)
        self.secure = secure
        self.keep: sqlite3.Connection | None = None  # held open: the WAL is not checkpointed away
        db = sqlite3.connect(path)
        db.execute(f"PRAGMA encoding = '{encoding}'")
        if wal:
            db.execute("PRAGMA journal_mode = wal")
            db.execute("PRAGMA wal_autocheckpoint = 0")
        db.execute("CREATE TABLE IF NOT EXISTS notes (id TEXT PRIMARY KEY, user TEXT, text TEXT)")
        db.commit()
        if wal:
            self.keep = db
        else:
            db.close()

    def connect(self) -> sqlite3.Connection:
        return self.keep if self.keep is not None else sqlite3.connect(self.path)

    def add(self, rows: list[tuple[str, str, str]]) -> None:
        db = self.connect()
        db.executemany("INSERT INTO notes VALUES (?, ?, ?)", rows)
        db.commit()
        if db is not self.keep:
            db.close()

    def plan(self, subject: Subject) -> StorePlan:
        db = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True)
        rows = db.execute("SELECT id, text FROM notes WHERE user = ? ORDER BY id", (subject.value,)).fetchall()
        db.close()
        files = [self.path, *(self.path.with_name(self.path.name + s) for s in ("-wal", "-shm", "-journal"))]
        return StorePlan(self.store, self.location, [Erasure(i, f"note {i}", texts=(t,)) for i, t in rows], files)

    def erase(self, plan: StorePlan) -> int:
        db = self.connect()
        db.execute(f"PRAGMA secure_delete = {'ON' if self.secure else 'OFF'}")
        db.executemany("DELETE FROM notes WHERE id = ?", [(e.key,) for e in plan.erasures])
        db.commit()
        if db is not self.keep:
            db.close()
        return len(plan.erasures)

    def residue(self, needles: Sequence[str]) -> list[str] | None:
        return None

    def close(self) -> None:
        if self.keep is not None:
            self.keep.close()
            self.keep = None


class ServerStore:
    """A store with no files: what ``residue`` answers is the proof."""

    store = "server-notes"
    location = "redis://localhost:1/0"

    def __init__(self, answer: list[str] | None, records: list[Erasure] = ()) -> None:
        self.answer = answer
        self.left = list(records)
        self.asked: list[Sequence[str]] = []

    def plan(self, subject: Subject) -> StorePlan:
        return StorePlan(self.store, self.location, list(self.left))

    def erase(self, plan: StorePlan) -> int:
        return len(plan.erasures)

    def residue(self, needles: Sequence[str]) -> list[str] | None:
        self.asked.append(list(needles))
        return self.answer


class SessionFiles:
    """praisonaiagents-shaped session files ``<id>.json`` (``session_id``, ``user_id``, ``messages``): a session
    of the user is removed, another user's session loses the user's turns (``metadata.user_id``), rewritten in
    the file's own format (indent 2, non-ASCII kept)."""

    store = "session-dir"

    def __init__(self, directory: Path) -> None:
        self.dir = directory
        self.location = str(directory)

    def _docs(self) -> list[tuple[Path, dict]]:
        return [(p, json.loads(p.read_text("utf-8"))) for p in sorted(self.dir.glob("*.json"))]

    @staticmethod
    def _theirs(message: dict, user: str) -> bool:
        return (message.get("metadata") or {}).get("user_id") == user

    def plan(self, subject: Subject) -> StorePlan:
        erasures = []
        for path, doc in self._docs():
            texts = tuple(m["content"] for m in doc["messages"])
            if doc.get("user_id") == subject.value:
                erasures.append(Erasure(doc["session_id"], f"session {doc['session_id']}", texts=texts))
            elif any(self._theirs(m, subject.value) for m in doc["messages"]):
                mine = tuple(m["content"] for m in doc["messages"] if self._theirs(m, subject.value))
                erasures.append(Erasure(doc["session_id"], f"turns of session {doc['session_id']}",
                                        Action.rewrite, mine))
        return StorePlan(self.store, self.location, erasures, [p for p, _ in self._docs()])

    def erase(self, plan: StorePlan) -> int:
        keys = {e.key: e for e in plan.erasures}
        for path, doc in self._docs():
            erasure = keys.get(doc["session_id"])
            if erasure is None:
                continue
            if erasure.action is Action.remove:
                path.unlink()
            else:
                user = doc.get("user_id")
                subject = next(iter({(m.get("metadata") or {}).get("user_id") for m in doc["messages"]
                                     if m.get("content") in erasure.texts}))
                doc["messages"] = [m for m in doc["messages"] if not self._theirs(m, subject)]
                assert doc.get("user_id") == user
                path.write_text(json.dumps(doc, indent=2, ensure_ascii=False), "utf-8")
        return len(plan.erasures)

    def residue(self, needles: Sequence[str]) -> list[str] | None:
        return None


class MemoryUsers:
    """FileMemory user directories ``<base>/<user>/long_term.json``: the user's directory goes whole."""

    store = "filememory"

    def __init__(self, base: Path) -> None:
        self.base = base
        self.location = str(base)

    def plan(self, subject: Subject) -> StorePlan:
        user = self.base / subject.value
        if not user.is_dir():
            return StorePlan(self.store, self.location, [], [])
        items = json.loads((user / "long_term.json").read_text("utf-8"))
        return StorePlan(self.store, self.location,
                         [Erasure(f"{subject.value}/{i['id']}", "memory", texts=(i["content"],)) for i in items],
                         sorted(p for p in user.rglob("*") if p.is_file()))

    def erase(self, plan: StorePlan) -> int:
        import shutil

        for erasure in plan.erasures:
            shutil.rmtree(self.base / erasure.key.split("/")[0], ignore_errors=True)
        return len(plan.erasures)

    def residue(self, needles: Sequence[str]) -> list[str] | None:
        return None


class TranscriptDb:
    """praisonaiagents' ``sessions.db`` (``SqliteTranscriptStore``): a session of the user is deleted with
    ``secure_delete``, then the database is vacuumed and its WAL truncated."""

    store = "gateway-transcripts"

    def __init__(self, path: Path) -> None:
        self.path = path
        self.location = str(path)

    def plan(self, subject: Subject) -> StorePlan:
        files = [self.path, *(self.path.with_name(self.path.name + s) for s in ("-wal", "-shm", "-journal"))]
        if not self.path.exists():
            return StorePlan(self.store, self.location, [], files)
        db = sqlite3.connect(self.path)
        try:
            rows = db.execute("SELECT session_id, data FROM sessions WHERE json_extract(data, '$.user_id') = ? "
                              "ORDER BY session_id", (subject.value,)).fetchall()
        finally:
            db.close()
        return StorePlan(self.store, self.location,
                         [Erasure(sid, f"session {sid}", texts=tuple(m["content"] for m in json.loads(data)["messages"]))
                          for sid, data in rows], files)

    def erase(self, plan: StorePlan) -> int:
        db = sqlite3.connect(self.path)
        try:
            db.execute("PRAGMA secure_delete = ON")
            db.executemany("DELETE FROM sessions WHERE session_id = ?", [(e.key,) for e in plan.erasures])
            db.commit()
            db.execute("VACUUM")
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        finally:
            db.close()
        return len(plan.erasures)

    def residue(self, needles: Sequence[str]) -> list[str] | None:
        return None
