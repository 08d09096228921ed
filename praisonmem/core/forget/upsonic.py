"""``forget`` in Upsonic's local stores: SqliteStorage's file and JSONStorage's directory (the servers' stores are
forgotten with the other servers).

Upsonic records the user on each session (``user_id``), on its user-memory row (the row is the user's) and on each
usage-ledger entry; the agent on sessions and user-memory rows (``agent_id``); a session is its row, and the usage
entries of its runs (``run_id``). Plans read through :class:`praisonmem.core.upsonic.Store` (read-only, no byte
changed); erasing is :meth:`~praisonmem.core.upsonic.Store.erase`, the store's own write protocol (``BEGIN
IMMEDIATE`` with ``secure_delete`` and a ``VACUUM`` for SQLite; the directory's lock and atomic replacement for
JSONStorage), every other record as it was.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from praisonmem.core.errors import PraisonMemError
from praisonmem.core.forget.match import SCRUB, needles, older, scrubs, sqlite_files, strings
from praisonmem.core.forget.model import Action, Erasure, ForgetStore, StorePlan, Subject, SubjectKind, Where

KINDS = {"upsonic-sqlite": "sqlite", "upsonic-json": "json", "upsonic": "sqlite"}
USAGE_FILE = "upsonic_usage_entries.json"


class UpsonicForget:
    """One Upsonic SQLite file or JSONStorage directory."""

    def __init__(self, where: Path, kind: str, timeout: float = 5.0) -> None:
        self.where = where
        self.kind = kind
        self.store = f"upsonic-{kind}"
        self.location = str(where)
        self.timeout = timeout

    def _open(self) -> Any:
        from praisonmem.core.upsonic import Store

        return Store(str(self.where) + (os.sep if self.kind == "json" else ""), timeout=self.timeout)

    @contextmanager
    def _committed(self, interrupted: bool) -> Iterator[Any]:
        """The store to read; after a killed write (``interrupted``), a private copy of the file and its journal
        that SQLite has rolled back: what the erase will find once it has done the same (nothing here changes)."""
        if not interrupted:
            yield self._open()
            return
        import shutil
        import sqlite3
        import tempfile

        from praisonmem.core.upsonic import Store

        with tempfile.TemporaryDirectory(prefix="praisonmem-forget-") as scratch:
            copy = Path(scratch) / self.where.name
            for tail in ("", "-journal", "-wal"):
                if os.path.exists(f"{self.where}{tail}"):
                    shutil.copyfile(f"{self.where}{tail}", f"{copy}{tail}")
            conn = sqlite3.connect(copy)
            try:
                conn.execute("SELECT count(*) FROM sqlite_master").fetchone()  # SQLite rolls the copy back
            finally:
                conn.close()
            yield Store(str(copy), timeout=self.timeout)

    def _files(self) -> list[Path]:
        if self.kind == "sqlite":
            return sqlite_files(self.where)
        return sorted(p for p in self.where.glob("*.json") if p.is_file() and not p.is_symlink())

    def residue(self, needles: Sequence[str]) -> list[str] | None:
        return []  # a store of files says nothing beyond them: the proof scans their bytes (none: nothing to hold)

    def plan(self, subject: Subject) -> StorePlan:
        plan = StorePlan(self.store, self.location, files=self._files())
        if self.kind == "sqlite":
            plan.erasures += scrubs(self.where)
        try:
            with self._committed(bool(plan.erasures)) as store:
                sessions = store.all_sessions() if store.known_ids("sessions") else []
                users = store.users() if store.known_ids("users") else []
                usage = store.usage_entries()
        except PraisonMemError as exc:
            return StorePlan(self.store, self.location, unreachable=exc.message)
        runs: set[str] = set()
        for row in sessions:
            if _session_matches(subject, row) and older(subject, row.get("created_at")):
                runs |= _run_ids(row.get("runs"))
                plan.erasures.append(Erasure(f"session#{row['session_id']}", f"Upsonic session {row['session_id']}",
                                             Action.remove, needles(said(row), row["session_id"])))
        for row in users:
            hit = (subject.kind == SubjectKind.user and row.get("user_id") == subject.value) or (
                subject.kind == SubjectKind.agent and row.get("agent_id") == subject.value)
            if hit and older(subject, row.get("created_at")):
                plan.erasures.append(Erasure(f"user#{row['user_id']}", f"Upsonic user memory of {row['user_id']}",
                                             Action.remove, needles(strings(row.get("user_memory")), row["user_id"])))
        for entry in usage:
            hit = (subject.kind == SubjectKind.user and entry.get("user_id") == subject.value) or (
                entry.get("run_id") in runs)
            if hit and older(subject, entry.get("timestamp")):
                plan.erasures.append(Erasure(f"usage#{entry['entry_id']}", f"Upsonic usage entry {entry['entry_id']}",
                                             Action.remove, needles([], entry["entry_id"])))
        return plan

    def erase(self, plan: StorePlan) -> int:
        keys: dict[str, list[str]] = {"session": [], "user": [], "usage": []}
        for e in plan.erasures:
            kind, _, key = e.key.partition("#")
            if kind != SCRUB:
                keys[kind].append(key)
        if not self.where.exists() or not plan.erasures:
            return 0
        return self._open().erase(keys["session"], keys["user"], keys["usage"])[0]


def said(row: dict[str, Any]) -> list[str]:
    """A session's own texts: its summary and every ``content`` in its messages and runs (not the model names,
    part kinds and settings every session shares, which would be found in the others' rows)."""
    found = [row["summary"]] if isinstance(row.get("summary"), str) else []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                if key == "content" and isinstance(item, str):
                    found.append(item)
                else:
                    walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk([row.get("messages"), row.get("runs"), row.get("session_data")])
    return found


def _session_matches(subject: Subject, row: dict[str, Any]) -> bool:
    column = {SubjectKind.user: "user_id", SubjectKind.session: "session_id", SubjectKind.agent: "agent_id"}
    return row.get(column[subject.kind]) == subject.value


def _run_ids(runs: Any) -> set[str]:
    """The run ids a session's ``runs`` holds (a list or an object of runs, each with a ``run_id`` of its own or in
    its ``output``)."""
    items = runs.values() if isinstance(runs, dict) else runs if isinstance(runs, list) else ()
    found = set()
    for run in items:
        for holder in (run, run.get("output") if isinstance(run, dict) else None):
            if isinstance(holder, dict) and isinstance(holder.get("run_id"), str):
                found.add(holder["run_id"])
    return found


def forget_stores(where: Where) -> list[ForgetStore]:
    """The Upsonic SQLite files and JSONStorage directories ``locate`` found (the configured ``upsonic.db`` too)."""
    seen: set[str] = set()
    stores: list[ForgetStore] = []
    for found in where.located:
        kind = KINDS.get(found.kind)
        path = Path(found.path)
        if kind is None or "absent" in getattr(found, "flags", ()):
            continue
        if found.kind == "upsonic":  # a configured upsonic.db: a directory is a JSONStorage
            kind = "json" if path.is_dir() else "sqlite"
        if not (path.is_dir() if kind == "json" else path.is_file()) or os.path.realpath(path) in seen:
            continue
        seen.add(os.path.realpath(path))
        stores.append(UpsonicForget(path, kind))
    return stores
