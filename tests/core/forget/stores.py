"""Small stores for the proof's and the backups' tests: a JSON document of records and an SQLite table of them,
each planning and erasing one user's records as the real adapters do (plan reads, erase writes)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from pathlib import Path

from praisonmem.core.forget.model import Erasure, StorePlan, Subject


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
