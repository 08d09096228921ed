"""The ``learn`` commands, one function each, over whichever backends the options name (:class:`Source`).

Without ``--backend`` the commands look where the library keeps learn stores for this home and cwd: the files
under ``<home>/learn`` and a ``learn.db`` holding the library's ``learn_store`` table, either at
``<home>/learn/learn.db`` (``store_path`` set to the home's learn dir) or at ``<cwd>/learn/learn.db`` (the
library's own default). Reads and ``delete`` cover all of them; ``add`` and ``clear`` write to the one there is
(the files when ``--scope``/``--user-id`` is given, which only files have), and refuse to guess between files
and a database that both hold stores. ``--backend sqlite [--db PATH]`` and ``--backend redis [--url URL]
[--prefix P]`` name one store exactly. Writes default to the private scope and the ``default`` user, as the
library's ``LearnManager`` does.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from praisonmem.core.errors import AmbiguousName, NotFound, UsageError
from praisonmem.core.io import jsonfile
from praisonmem.core.learn import files
from praisonmem.core.learn.model import (DEFAULT_USER, ClearEdit, Entry, LearnBackend, LearnScope, add_to,
                                         check_names, empty_text, pop_entry)
from praisonmem.core.paths import Paths
from praisonmem.core.result import Action, Change, Outcome, Plan

BACKENDS = ("file", "sqlite", "redis")
BackendKind = StrEnum("BackendKind", [(kind, kind) for kind in BACKENDS])  # ``learn --backend``


@dataclass(frozen=True)
class Source:
    """What ``--backend``, ``--db``, ``--url`` and ``--prefix`` say (all unset: look where the library keeps them)."""

    backend: str | None = None
    db: str | None = None
    url: str | None = None
    prefix: str | None = None

    def kind(self) -> str | None:
        if self.backend is not None and self.backend not in BACKENDS:
            raise UsageError(f"--backend must be one of {', '.join(BACKENDS)}, got '{self.backend}'")
        implied = {name for name, given in (("sqlite", self.db), ("redis", self.url or self.prefix)) if given is not None}
        if len(implied) > 1:
            raise UsageError("--db is for --backend sqlite, --url and --prefix for --backend redis: give one of them")
        if implied and self.backend is not None and self.backend not in implied:
            option = "--db" if "sqlite" in implied else ("--url" if self.url is not None else "--prefix")
            raise UsageError(f"{option} does not apply to --backend {self.backend}")
        return None if self.backend is None and not implied else str(self.backend or next(iter(implied)))


def learn_dir(paths: Paths) -> Path:
    paths.require_home()
    return paths.learn_dir


def detected_dbs(paths: Paths) -> list[Path]:
    """The ``learn.db`` files of the library's sqlite backend for this home and cwd (see the module docstring):
    those holding something by the name ``learn_store``; a file that is not a database is no learn store."""
    from praisonmem.core.errors import CorruptFile
    from praisonmem.core.learn.sqlite import FILE_NAME, holds_store

    found: list[Path] = []
    for path in (paths.learn_dir / FILE_NAME, Path(os.path.abspath("learn")) / FILE_NAME):
        if not path.is_file() or any(os.path.samefile(path, seen) for seen in found):
            continue
        try:
            if holds_store(path):
                found.append(path)
        except CorruptFile:
            continue
    return found


def database_entries(paths: Paths, seen: set[Path] | None = None
                     ) -> tuple[list[Entry], list[tuple[Path, str, bytes]], list[str]]:
    """Every entry of each detected ``learn.db`` not in ``seen`` (which then holds them too), for ``check
    --secrets``: the entries, the rows that do not parse (database, key, their bytes, to be searched as they are)
    and why a database could not be read at all."""
    from praisonmem.core.errors import PraisonMemError
    from praisonmem.core.learn.sqlite import SqliteBackend

    seen = set() if seen is None else seen
    found: list[Entry] = []
    raw: list[tuple[Path, str, bytes]] = []
    problems: list[str] = []
    for db in detected_dbs(paths):
        if db.resolve() in seen:
            continue
        seen.add(db.resolve())
        backend = SqliteBackend(db)
        try:
            rows = backend.rows()
        except PraisonMemError as exc:
            problems.append(exc.message)
            continue
        for key, data in rows.items():
            try:
                found += backend.entries_of(key, data)
            except ValueError:
                raw.append((db, key, data))
    return found, raw, problems


def backends(paths: Paths, source: Source = Source()) -> list[LearnBackend]:
    """Every backend a read looks at (the first one is the files, unless an option names another)."""
    kind = source.kind()
    if kind == "redis":
        from praisonmem.core.learn.redis import DEFAULT_PREFIX, DEFAULT_URL, RedisBackend

        return [RedisBackend(source.url or DEFAULT_URL, DEFAULT_PREFIX if source.prefix is None else source.prefix)]
    if kind == "sqlite":
        from praisonmem.core.learn.sqlite import SqliteBackend, db_path

        if source.db is not None:
            return [SqliteBackend(Path(os.path.abspath(db_path(source.db))))]
        found = detected_dbs(paths)
        if not found:
            raise NotFound(f"no learn.db of the library's sqlite backend at {paths.learn_dir / 'learn.db'} or "
                           f"{os.path.abspath('learn/learn.db')}; give its path with --db")
        return [SqliteBackend(db) for db in found]
    found_files: list[LearnBackend] = [files.FileBackend(learn_dir(paths))]
    if kind == "file":
        return found_files
    from praisonmem.core.learn.sqlite import SqliteBackend

    return found_files + [SqliteBackend(db) for db in detected_dbs(paths)]


def _filtered(found: list[LearnBackend], scope: str | None, user_id: str | None, explicit: bool) -> list[LearnBackend]:
    """A scope or user only files have: an error for a database named outright, and databases skipped otherwise."""
    if scope is None and user_id is None:
        return found
    if explicit and found[0].kind != "file":
        option = "--scope" if scope is not None else "--user-id"
        raise UsageError(f"{option} does not apply to --backend {found[0].kind}: the library keys those stores by "
                         "name alone, one per store for every user and scope")
    return [b for b in found if b.kind == "file"]


def _readers(paths: Paths, source: Source, scope: str | None, user_id: str | None) -> list[LearnBackend]:
    check_names(None, scope, user_id)
    return _filtered(backends(paths, source), scope, user_id, source.kind() is not None)


def _writer(paths: Paths, source: Source, scope: str | None, user_id: str | None) -> LearnBackend:
    """Where ``add`` and ``clear`` write (see the module docstring)."""
    found = _readers(paths, source, scope, user_id)
    if len(found) == 1:
        return found[0]
    if source.kind() == "sqlite":
        raise AmbiguousName("several learn.db files hold learn stores: " + ", ".join(map(str, found))
                            + "; say which with --db")
    first = found[0]
    if isinstance(first, files.FileBackend) and not files.has_stores(first.learn_dir):
        if len(found) == 2:
            return found[1]
        raise AmbiguousName("several learn.db files hold learn stores: " + ", ".join(map(str, found[1:]))
                            + "; say which with --backend sqlite --db PATH")
    raise AmbiguousName(f"both the learn files under {first} and {', '.join(map(str, found[1:]))} hold learn "
                        "stores; say which with --backend file or --backend sqlite")


def _location(backend: LearnBackend, store: str, scope: str, user_id: str) -> dict[str, Any]:
    """Where a store is, for JSON output: a file's path, or a database's and the store's key."""
    if backend.kind == "file":
        return {"file": backend.where(store, scope, user_id)}
    if backend.kind == "redis":
        return {"backend": "redis", "url": str(backend), "key": backend.key(store)}  # type: ignore[attr-defined]
    return {"backend": backend.kind, "file": str(backend), "key": store}


# ---------------------------------------------------------------- the commands


def list_entries(paths: Paths, *, store: str | None = None, scope: LearnScope | str | None = None,
                 user_id: str | None = None, source: Source = Source()) -> tuple[list[Entry], list[str]]:
    """``learn list``: the matching entries (read-only) and the stores that could not be read."""
    check_names(store, scope, user_id)
    found: list[Entry] = []
    unreadable: list[str] = []
    for backend in _readers(paths, source, scope, user_id):
        rows, problems = backend.entries(store, scope, user_id)
        found += rows
        unreadable += problems
    return found, unreadable


def _find(paths: Paths, entry_id: str, scope: str | None, user_id: str | None,
          source: Source) -> tuple[Entry, LearnBackend]:
    readers = _readers(paths, source, scope, user_id)
    matches = [(e, b) for b in readers for e in b.entries(None, scope, user_id)[0] if e.entry.get("id") == entry_id]
    if not matches:
        raise NotFound(f"no learn entry '{entry_id}' in {', '.join(map(str, readers))}")
    if len(matches) > 1:
        narrow = "--scope/--user-id" + ("" if source.kind() else " or --backend")
        raise AmbiguousName(f"learn entry '{entry_id}' is in several stores: "
                            + ", ".join(str(e.path) if b.kind == "file" else b.where(e.store, "", "")
                                        for e, b in matches) + f" (narrow with {narrow})")
    return matches[0]


def show_entry(paths: Paths, entry_id: str, *, scope: LearnScope | str | None = None,
               user_id: str | None = None, source: Source = Source()) -> Entry:
    return _find(paths, entry_id, scope, user_id, source)[0]


def add_entry(paths: Paths, store: str, text: str, metadata: dict[str, Any] | None = None, *,
              scope: LearnScope | str | None = None, user_id: str | None = None,
              timeout: float = jsonfile.LOCK_TIMEOUT, source: Source = Source()) -> Outcome:
    """``learn add`` (private scope and the default user unless given): with the library's dedup, the same text
    (trimmed, any case) is kept once and takes the new metadata."""
    check_names(store, scope, user_id)
    empty_text(text)
    backend = _writer(paths, source, scope, user_id)
    scope, user_id = scope or LearnScope.private, user_id or DEFAULT_USER
    result: list[tuple[dict[str, Any], bool]] = []

    def change(data: dict[str, Any]) -> bool:
        entry, new, changed = add_to(data, store, text, metadata)
        result[:] = [(entry, new)]
        return changed

    notes = backend.edit(store, scope, user_id, change, timeout)
    entry, new = result[0]
    return Outcome([Change(Action.added if new else Action.kept, entry["id"],
                           None if new else "already there; not added again",
                           fields={**entry, "added": new, **_location(backend, store, scope, user_id)})], notes)


def plan_delete_entry(paths: Paths, entry_id: str, *, scope: LearnScope | str | None = None,
                      user_id: str | None = None, timeout: float = jsonfile.LOCK_TIMEOUT,
                      source: Source = Source()) -> Plan:
    """``learn delete``: one entry, found in whichever store holds it."""
    found, backend = _find(paths, entry_id, scope, user_id, source)
    where = backend.where(found.store, found.scope or "", found.user_id or "")

    def run(dry_run: bool, progress: Any) -> Outcome:
        notes: list[str] = []
        if not dry_run:
            notes = backend.edit(found.store, found.scope or "", found.user_id or "",
                                 lambda data: pop_entry(data, entry_id, where) is not None, timeout, create=False)
        return Outcome([Change(Action.deleted, f"{entry_id} from {where}", dry_run=dry_run,
                               fields=found.to_json())], notes)

    return Plan(f"Delete learn entry '{entry_id}' from {found.store}?", run)


def plan_clear(paths: Paths, store: str, *, scope: LearnScope | str | None = None, user_id: str | None = None,
               timeout: float = jsonfile.LOCK_TIMEOUT, source: Source = Source()) -> Plan:
    """``learn clear``: empty one store (private scope and the default user unless given)."""
    check_names(store, scope, user_id)
    backend = _writer(paths, source, scope, user_id)
    scope, user_id = scope or LearnScope.private, user_id or DEFAULT_USER
    where = backend.where(store, scope, user_id)
    count = backend.count(store, scope, user_id)

    def run(dry_run: bool, progress: Any) -> Outcome:
        cleared, notes = ClearEdit(), []
        if dry_run:
            cleared.removed = count
        else:
            notes = backend.edit(store, scope, user_id, cleared, timeout, create=False)
        return Outcome([Change(Action.removed, f"{cleared.removed} entries from {where}", dry_run=dry_run,
                               fields={"store": store, **_location(backend, store, scope, user_id),
                                       "removed": cleared.removed})], notes)

    return Plan(f"Remove all {count} entries of {where}?", run)
