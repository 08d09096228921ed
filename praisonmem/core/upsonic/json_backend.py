"""Upsonic 0.77.3's JSONStorage directory (``./upsonic_json_db`` by default): one file per table,
``<table>.json``, each a JSON array of records written whole with ``json.dump(data, indent=2, default=str)``
(ASCII only: ``\\uXXXX`` escapes) and no trailing newline; the fields are plain JSON (nothing double-encoded).

The directory is recognised by its content: ``upsonic_sessions.json`` or ``upsonic_user_memories.json`` (or the
``--session-table``/``--user-memory-table`` names), each an array of objects; anything else there is refused
before anything is written, and a file that does not parse (the library truncates and rewrites in place, so a
reader can catch one half written) is reported and never overwritten.

The library takes no lock of any kind (its writes are ``open(path, "w")`` then ``json.dump``). praisonmem's
writers serialise among themselves with ``flock`` on the directory itself (no lock file is added beside the
library's), re-read the file just before replacing it and write nothing when its bytes changed since it was
read (an agent wrote it), and replace it atomically: a temp file beside it, fsynced, renamed over it, the
directory fsynced. A record praisonmem does not change is serialised again exactly as the library wrote it.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from praisonmem.core.errors import CorruptFile, NotFound, Refused
from praisonmem.core.io import jsonfile
from praisonmem.core.result import Action
from praisonmem.core.upsonic import records
from praisonmem.core.upsonic.schema import SESSION_TABLE, USAGE_ENTRY_COLUMNS, USAGE_ENTRY_TABLE, USER_MEMORY_TABLE, \
    Upsert, absent_table
from praisonmem.core.io.safetext import plural

# Other tables of the library that may sit in the directory (knowledge, cultural knowledge, usage, models).
LIBRARY_FILE_PREFIX = "upsonic_"


def dumps(data: list[dict[str, Any]]) -> bytes:
    """The bytes JSONStorage writes for a table."""
    return json.dumps(data, indent=2, default=str).encode("utf-8")


DEFAULT_DIRECTORY = "upsonic_json_db"  # JSONStorage's db_path when none is given


def is_json_storage(where: str | os.PathLike[str]) -> bool:
    """A directory (or a path ending in ``/``, or named as the library names its default directory, to be
    created): where a JSONStorage keeps its tables."""
    text = os.fspath(where)
    path = os.path.expanduser(text)
    return text.endswith(os.sep) or os.path.isdir(path) or (
        os.path.basename(path) == DEFAULT_DIRECTORY and not os.path.lexists(path))


class JsonBackend:
    def __init__(self, directory: Path, session_table: str = SESSION_TABLE,
                 user_memory_table: str = USER_MEMORY_TABLE, *, timeout: float = 5.0) -> None:
        self.directory = directory
        self.label = str(directory)
        self.session_table = session_table
        self.user_memory_table = user_memory_table
        self.timeout = timeout

    def __repr__(self) -> str:
        return f"JsonBackend({self.label!r})"

    def file(self, kind: str) -> Path:
        return self.directory / f"{self.session_table if kind == 'sessions' else self.user_memory_table}.json"

    # -------------------------------------------------------- reading

    def _load(self, kind: str) -> tuple[bytes | None, list[dict[str, Any]]]:
        """A table's bytes and records (``None``, no records: the file is not there)."""
        path = self.file(kind)
        try:
            raw = jsonfile.read_bytes(path)
        except NotFound:
            return None, []
        data = jsonfile.parse(raw, path)  # half written by the library, or not JSON: CorruptFile, never overwritten
        if not isinstance(data, list):
            raise CorruptFile(str(path), f"top-level JSON value is {jsonfile.json_kind(data)}, not the array of "
                                         "records JSONStorage writes")
        for index, record in enumerate(data):
            records.check_record(kind, record, f"{path} (record {index})")
        return raw, data

    def _recognise(self, *, allow_missing: bool = False) -> bool:
        """Whether the directory holds a table of this store; :class:`NotFound` when it does not and
        ``allow_missing`` is not given."""
        if not self.directory.is_dir():
            if allow_missing and not self.directory.exists():
                return False
            what = "no such directory" if not self.directory.exists() else "not a directory"
            raise NotFound(f"{self.label}: {what} (a JSONStorage directory holds {self.session_table}.json and "
                           f"{self.user_memory_table}.json)")
        if any(self.file(k).exists() for k in ("sessions", "users")):
            return True
        if allow_missing:
            return False
        raise NotFound(f"{self.label}: no Upsonic JSONStorage tables ({self.session_table}.json, "
                       f"{self.user_memory_table}.json): not created yet, or another --session-table or "
                       "--user-memory-table")

    def _rows(self, kind: str) -> list[dict[str, Any]]:
        self._recognise()
        raw, found = self._load(kind)
        if raw is None:
            other = "users" if kind == "sessions" else "sessions"
            problem = absent_table(self.label, kind, self.file(kind).stem)
            if problem is not None and self.file(other).exists():
                raise problem
        return [records.as_row(kind, r) for r in found]

    def summaries(self, filters: list[tuple[str, str]], limit: int) -> list[dict[str, Any]]:
        return records.summaries(self._rows("sessions"), filters, limit)

    def session_rows(self, session_id: str | None) -> list[dict[str, Any]]:
        rows = self._rows("sessions")
        if session_id is None:
            return records.sessions_newest_first(rows)
        return [r for r in rows if r["session_id"] == session_id][:1]  # the library reads the first of the id

    def user_rows(self, user_id: str | None) -> list[dict[str, Any]]:
        rows = self._rows("users")
        if user_id is None:
            return records.users_newest_first(rows)
        return [r for r in rows if r["user_id"] == user_id][:1]

    def ids(self, kind: str) -> set[str]:
        if not self._recognise(allow_missing=True):
            return set()
        key = "session_id" if kind == "sessions" else "user_id"
        return {r[key] for r in self._load(kind)[1]}

    def usage_entries(self) -> list[dict[str, Any]]:
        path = self.directory / f"{USAGE_ENTRY_TABLE}.json"
        try:
            data = jsonfile.parse(jsonfile.read_bytes(path), path)
        except NotFound:
            return []
        if not isinstance(data, list):
            raise CorruptFile(str(path), f"top-level JSON value is {jsonfile.json_kind(data)}, not an array")
        rows = [{c: e.get(c) for c in USAGE_ENTRY_COLUMNS} for e in data if isinstance(e, dict) and "run_id" in e]
        return sorted(rows, key=lambda r: (str(r.get("timestamp") or ""), str(r.get("entry_id") or "")))

    def user_memory_text(self, user_id: str) -> str | None:
        rows = self.user_rows(user_id)
        return records.text_of(rows[0]["user_memory"]) if rows else None

    # -------------------------------------------------------- writing

    def encode_user_memory(self, memory: dict[str, Any]) -> dict[str, Any]:
        return memory

    def prepare(self, kind: str, row: dict[str, Any], now: int) -> Upsert:
        return Upsert(kind, row["session_id" if kind == "sessions" else "user_id"], "record", (row, now))

    def _check_new_directory(self) -> None:
        """A directory without either table may become a JSONStorage only when it holds nothing but the library's
        other tables: writing into any other directory would put Upsonic's files among someone else's."""
        foreign = sorted(e.name for e in os.scandir(self.directory)
                         if not (e.name.startswith(LIBRARY_FILE_PREFIX) and e.name.endswith(".json")))
        if foreign:
            raise Refused(f"{self.label}: not a JSONStorage directory (it holds {foreign[0]!r}"
                          + (f" and {plural(len(foreign) - 1, 'other')}" if len(foreign) > 1 else "")
                          + "); give a new or empty directory; nothing written")

    @contextmanager
    def transaction(self, need: tuple[str, ...], *, create: bool) -> Iterator["JsonTransaction"]:
        if not self._recognise(allow_missing=create):
            if not self.directory.exists():
                jsonfile.makedirs(self.directory)
            self._check_new_directory()
        fd = os.open(self.directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | os.O_CLOEXEC)
        try:
            jsonfile.flock_polled(fd, self.directory, self.timeout,
                                  f"{self.label}: another praisonmem is writing this JSONStorage directory (waited "
                                  f"{self.timeout:g}s); nothing changed")
            tx = JsonTransaction(self)
            for kind in need:
                tx.table(kind)  # a table that does not parse is refused before anything is changed
            yield tx
            tx.commit()
        finally:
            os.close(fd)  # releases the flock


    def erase(self, sessions: list[str], users: list[str], usage: list[str]) -> tuple[int, list[str]]:
        """:meth:`Store.erase <praisonmem.core.upsonic.store.Store.erase>` on the directory: under its lock the
        records are dropped from each table (every other record serialised as JSONStorage writes it, in its
        order) and each changed file replaced atomically, as praisonmem's other writes do."""
        if not self._recognise(allow_missing=True):
            return 0, []
        removed = 0
        with self.transaction((), create=False) as tx:
            for kind, field, ids in (("sessions", "session_id", set(sessions)), ("users", "user_id", set(users))):
                if not ids or not self.file(kind).exists():
                    continue
                table = tx.table(kind)
                kept = [r for r in table if r.get(field) not in ids]
                if len(kept) != len(table):
                    removed += len(table) - len(kept)
                    table[:] = kept
                    tx.dirty.add(kind)
            if usage:
                removed += self._erase_usage(set(usage))
        return removed, []

    def _erase_usage(self, ids: set[str]) -> int:
        """The usage ledger's entries with these ids dropped (the caller holds the directory's lock)."""
        path = self.directory / f"{USAGE_ENTRY_TABLE}.json"
        try:
            raw = jsonfile.read_bytes(path)
        except NotFound:
            return 0
        data = jsonfile.parse(raw, path)
        if not isinstance(data, list):
            raise CorruptFile(str(path), f"top-level JSON value is {jsonfile.json_kind(data)}, not an array")
        kept = [e for e in data if not (isinstance(e, dict) and e.get("entry_id") in ids)]
        if len(kept) == len(data):
            return 0
        with jsonfile.replacing(path, mode=stat.S_IMODE(os.stat(path).st_mode), sweep=True) as handle:
            handle.write(dumps(kept))
        return len(data) - len(kept)


def _new_file_mode() -> int:
    """The mode ``open(path, "w")`` gives a new file: 0666 less the umask."""
    mask = os.umask(0o22)
    os.umask(mask)
    return 0o666 & ~mask


class JsonTransaction:
    """The tables as read under the directory lock; written back at the end, each atomically, only when
    their bytes are still the ones read."""

    def __init__(self, backend: JsonBackend) -> None:
        self.backend = backend
        self.loaded: dict[str, tuple[bytes | None, list[dict[str, Any]]]] = {}
        self.dirty: set[str] = set()

    def table(self, kind: str) -> list[dict[str, Any]]:
        if kind not in self.loaded:
            self.loaded[kind] = self.backend._load(kind)
        return self.loaded[kind][1]

    def _find(self, kind: str, key: str) -> int | None:
        field = "session_id" if kind == "sessions" else "user_id"
        return next((i for i, r in enumerate(self.table(kind)) if r.get(field) == key), None)

    def user_memory_text(self, user_id: str) -> str | None:
        index = self._find("users", user_id)
        return None if index is None else records.text_of(self.table("users")[index].get("user_memory"))

    def insert_user_memory(self, user_id: str, value: Any, now: int) -> bool:
        self.table("users").append(records.user_record({"user_id": user_id, "user_memory": value}, now, now))
        self.dirty.add("users")
        return True

    def update_user_memory(self, user_id: str, value: Any, now: int) -> None:
        index = self._find("users", user_id)
        assert index is not None
        record = self.table("users")[index]
        record["user_memory"] = value  # in place: the record keeps its key order, every other key as it was
        record["updated_at"] = now
        self.dirty.add("users")

    def exists(self, kind: str, key: str) -> bool:
        return self._find(kind, key) is not None

    def upsert(self, upsert: Upsert) -> Action:
        row, now = upsert.params
        index = self._find(upsert.kind, upsert.key)
        table = self.table(upsert.kind)
        # as the library's upsert: an existing record keeps its created_at
        created = records.stamp(row.get("created_at"), now) if index is None else table[index].get("created_at")
        updated = records.stamp(row.get("updated_at"), now)
        if upsert.kind == "sessions":
            record = records.session_record(row, records.JSON_AGENT_KEYS, records.JSON_OTHER_KEYS, created, updated)
        else:
            record = records.user_record(row, created, updated)
        self.dirty.add(upsert.kind)
        if index is None:
            table.append(record)
            return Action.inserted
        table[index] = record
        return Action.updated

    def commit(self) -> None:
        """Every changed table checked unchanged on disk first, then each replaced atomically."""
        for kind in sorted(self.dirty):
            path = self.backend.file(kind)
            if os.path.islink(path):  # replacing it would cut the link and leave its target as it was
                raise Refused(f"{path}: is a symbolic link; praisonmem replaces table files atomically and would "
                              "cut it; nothing written")
            try:
                now = jsonfile.read_bytes(path)
            except NotFound:
                now = None
            if now != self.loaded[kind][0]:
                raise Refused(f"{path}: changed while praisonmem was writing it (an agent is writing it?); nothing "
                              "written, try again")
        for kind in sorted(self.dirty):
            path = self.backend.file(kind)
            try:
                mode = stat.S_IMODE(os.stat(path).st_mode)
            except FileNotFoundError:
                mode = _new_file_mode()
            with jsonfile.replacing(path, mode=mode, sweep=True) as handle:
                handle.write(dumps(self.table(kind)))
