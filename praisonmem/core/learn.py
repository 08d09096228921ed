"""Learn stores (praisonaiagents ``memory/learn/stores.py`` and ``storage/base.py``).

``<home>/learn/<scope>/<user_id>/<store>.json``: an object keyed by entry id.
Their lock differs from the sessions' flock: ``<store>.json.lock`` is created
with ``O_CREAT|O_EXCL``, polled every 10 ms, deleted on release, and treated
as stale (unlinked and taken over) once its mtime is older than 10 s (a live holder
refreshes it every 3.3 s). A lock whose holder stopped refreshing it is waited for past
``--lock-timeout`` until it is stale by that rule, then taken over. praisonmem
takes it across its whole read-modify-write (well under 10 s), writes a temp
file beside the store and replaces it, then deletes the lock. Reading takes no
lock and, unlike the library's ``search``/``list_all``, never bumps
``use_count``.

The commands, one function each: ``list_entries``, ``show_entry``, ``add_entry``,
``plan_delete_entry``, ``plan_clear``; writes default to the private scope and the
``default`` user, as the library's ``LearnManager`` does.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from enum import StrEnum
from pathlib import Path
from typing import Any

from praisonmem.core.errors import AmbiguousName, CorruptFile, LockTimeout, NotFound, UsageError, io_failure
from praisonmem.core.io import jsonfile
from praisonmem.core.io.timeutil import epoch_of, now_iso
from praisonmem.core.layout import LEARN_SCOPES, LEARN_STORES
from praisonmem.core.paths import Paths
from praisonmem.core.result import Action, Change, Outcome, Plan


# ``learn --scope``: a user's private stores, or those shared between agents (the directories the layout names).
LearnScope = StrEnum("LearnScope", [(scope, scope) for scope in LEARN_SCOPES])
STORES = LEARN_STORES
SCOPES = tuple(LearnScope)
ENTRY_KEYS = ("id", "content", "metadata", "created_at", "updated_at", "use_count", "last_used")  # as the library writes
DEFAULT_USER = "default"
STALE_AFTER = 10.0  # BaseJSONStore's lock_timeout: an older lock file is a crashed holder's
# A live library holder touches its lock every STALE_AFTER / 3 s (FileLock's heartbeat); one not touched for
# longer (plus slack for a busy machine) has no holder left, and will be stale by the library's rule soon.
ABANDONED_AFTER = STALE_AFTER / 3 + 1.5
POLL = 0.01


@contextmanager
def locked(store_path: Path, timeout: float = jsonfile.LOCK_TIMEOUT) -> Iterator[None]:
    """The library's learn-store lock: an exclusive lock file, removed on release.

    Every pass that does not get the lock sleeps and checks the deadline: a lock
    that vanishes between the failed create and the look at it, or one that cannot
    be reclaimed, would otherwise spin at full CPU and never time out.
    """
    lock = Path(f"{store_path}.lock")
    jsonfile.makedirs(lock.parent)
    deadline = time.monotonic() + timeout
    while True:
        try:
            fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_NOFOLLOW, 0o644)
            break
        except FileExistsError:
            pass
        except OSError as exc:
            raise io_failure(lock, exc, "cannot lock") from exc
        seen = _lstat(lock)
        if seen is not None:
            problem = jsonfile.lock_file_problem(lock, seen.st_mode)
            if problem is not None:
                raise problem
            # A crashed holder (the library reclaims it too), unless its holder heartbeat since.
            if time.time() - seen.st_mtime > STALE_AFTER and _unlink_if_same(lock, seen, same_mtime=True):
                continue
        now = time.monotonic()
        if now >= deadline and (not _abandoned(seen) or now >= deadline + STALE_AFTER):
            raise LockTimeout(f"{store_path}: learn store locked by another writer ({lock}) for over "
                              f"{timeout:g}s; nothing changed")
        time.sleep(POLL)
    try:
        yield
    finally:
        mine = os.fstat(fd)
        os.close(fd)
        _unlink_if_same(lock, mine)  # a peer that judged it stale may have replaced it meanwhile


def _abandoned(seen: os.stat_result | None) -> bool:
    """Whether a lock's holder is gone (no heartbeat for :data:`ABANDONED_AFTER`): then the wait goes on past
    the lock timeout until the lock is stale by the library's own rule (at most :data:`STALE_AFTER` after its
    last touch) and is taken over, as the library's writers would, rather than failing in the meantime."""
    return seen is not None and time.time() - seen.st_mtime > ABANDONED_AFTER


def _lstat(path: Path) -> os.stat_result | None:
    try:
        return path.lstat()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise io_failure(path, exc, "cannot lock") from exc


def _unlink_if_same(lock: Path, expected: os.stat_result, *, same_mtime: bool = False) -> bool:
    """Remove ``lock`` only if it is still the file ``expected`` describes (and, for a stale lock,
    untouched since it was judged stale); whether the lock is gone."""
    try:
        current = lock.lstat()
    except FileNotFoundError:
        return True
    if (current.st_dev, current.st_ino) != (expected.st_dev, expected.st_ino):
        return False
    if same_mtime and current.st_mtime_ns != expected.st_mtime_ns:
        return False
    try:
        lock.unlink()
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise io_failure(lock, exc, "cannot remove a stale lock") from exc
    return True


def check_names(store: str | None = None, scope: str | None = None, user_id: str | None = None) -> None:
    if store is not None and store not in STORES:
        raise UsageError(f"unknown learn store '{store}' (one of: {', '.join(STORES)})")
    if scope is not None and scope not in SCOPES:
        raise UsageError(f"--scope must be private or shared, got '{scope}'")
    if user_id is not None and (not user_id or "/" in user_id or "\\" in user_id or user_id in (".", "..")):
        raise UsageError(f"invalid learn user id '{user_id}'")


def store_path(learn_dir: Path, scope: str, user_id: str, store: str) -> Path:
    check_names(store, scope, user_id)
    return learn_dir / scope / user_id / f"{store}.json"


def read_store(path: Path) -> dict[str, Any]:
    try:
        data = jsonfile.read(path)
    except NotFound:
        return {}
    if not isinstance(data, dict):
        raise CorruptFile(str(path), f"holds {jsonfile.json_kind(data)}, not an object keyed by entry id")
    return data


@dataclass
class Entry:
    """One learn-store entry and where it is."""

    scope: str
    user_id: str
    store: str
    path: Path
    entry: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {"scope": self.scope, "user_id": self.user_id, "store": self.store, "file": str(self.path),
                **self.entry}


def entries(learn_dir: Path, *, store: str | None = None, scope: str | None = None,
            user_id: str | None = None) -> tuple[list[Entry], list[str]]:
    """Every entry matching the filters (newest update first per store) and the unreadable files."""
    check_names(store, scope, user_id)
    found: list[Entry] = []
    unreadable: list[str] = []
    for scope_dir in sorted(p for p in learn_dir.glob("*") if p.is_dir()):
        if scope is not None and scope_dir.name != scope:
            continue
        for user_dir in sorted(p for p in scope_dir.glob("*") if p.is_dir()):
            if user_id is not None and user_dir.name != user_id:
                continue
            for path in sorted(user_dir.glob("*.json")):
                name = path.name[: -len(".json")]
                if name not in STORES or (store is not None and name != store):
                    continue
                try:
                    data = read_store(path)
                except CorruptFile as exc:
                    unreadable.append(exc.message)
                    continue
                rows = [Entry(scope_dir.name, user_dir.name, name, path, e) for e in data.values()
                        if isinstance(e, dict)]
                rows.sort(key=_updated, reverse=True)
                found += rows
    return found, unreadable


def _updated(row: Entry) -> float:
    """When an entry was last updated, for sorting: releases before 1.7.17 wrote naive UTC (``utcnow()``), so
    a time without a zone is UTC, as the library reads it; an unreadable one sorts last."""
    stamp = epoch_of(row.entry.get("updated_at"))
    return float("-inf") if stamp is None else stamp


def find(learn_dir: Path, entry_id: str, **filters: str | None) -> Entry:
    matches = [e for e in entries(learn_dir, **filters)[0] if e.entry.get("id") == entry_id]
    if not matches:
        raise NotFound(f"no learn entry '{entry_id}' in {learn_dir}")
    if len(matches) > 1:
        raise AmbiguousName(f"learn entry '{entry_id}' is in several stores: "
                            + ", ".join(str(m.path) for m in matches) + " (narrow with --scope/--user-id)")
    return matches[0]


def add(path: Path, store: str, content: str, metadata: dict[str, Any] | None = None,
        timeout: float = jsonfile.LOCK_TIMEOUT) -> tuple[dict[str, Any], bool]:
    """The library's ``add``: a duplicate (same content, stripped, any case) is not added, but takes
    the new metadata. Returns the entry and whether it is new."""
    if not content.strip():
        raise UsageError("learn entry text must not be empty")
    with locked(path, timeout):
        data = read_store(path)
        wanted = content.strip().lower()
        for existing in data.values():
            if isinstance(existing, dict) and str(existing.get("content", "")).strip().lower() == wanted:
                if metadata:
                    existing.setdefault("metadata", {}).update(metadata)
                    existing["updated_at"] = now_iso()
                    jsonfile.replace_atomically(path, jsonfile.serialise(data))
                return existing, False
        entry_id = f"{store}_{len(data)}_{datetime.now(timezone.utc).timestamp()}"
        created = now_iso()
        entry = dict(zip(ENTRY_KEYS, (entry_id, content, metadata or {}, created, now_iso(), 0, None)))
        data[entry_id] = entry
        jsonfile.replace_atomically(path, jsonfile.serialise(data))
        return entry, True


def delete(path: Path, entry_id: str, timeout: float = jsonfile.LOCK_TIMEOUT) -> dict[str, Any]:
    with locked(path, timeout):
        data = read_store(path)
        if entry_id not in data:
            raise NotFound(f"no learn entry '{entry_id}' in {path}")
        removed = data.pop(entry_id)
        jsonfile.replace_atomically(path, jsonfile.serialise(data))
        return removed


def clear(path: Path, dry_run: bool = False, timeout: float = jsonfile.LOCK_TIMEOUT) -> int:
    """Empty a store (``{}``), as the library's ``clear``; refuses a file that does not parse."""
    if dry_run or not path.exists():
        return len(read_store(path))
    with locked(path, timeout):
        count = len(read_store(path))
        jsonfile.replace_atomically(path, jsonfile.serialise({}))
        return count


# ---------------------------------------------------------------- the commands


def learn_dir(paths: Paths) -> Path:
    paths.require_home()
    return paths.learn_dir


def list_entries(paths: Paths, *, store: str | None = None, scope: LearnScope | str | None = None,
                 user_id: str | None = None) -> tuple[list[Entry], list[str]]:
    """``learn list``: the matching entries (read-only) and the stores that could not be read."""
    return entries(learn_dir(paths), store=store, scope=scope, user_id=user_id)


def show_entry(paths: Paths, entry_id: str, *, scope: LearnScope | str | None = None,
               user_id: str | None = None) -> Entry:
    return find(learn_dir(paths), entry_id, scope=scope, user_id=user_id)


def add_entry(paths: Paths, store: str, text: str, metadata: dict[str, Any] | None = None, *,
              scope: LearnScope | str | None = None, user_id: str | None = None,
              timeout: float = jsonfile.LOCK_TIMEOUT) -> Outcome:
    """``learn add`` (private scope and the default user unless given): with the library's dedup, the same text
    (trimmed, any case) is kept once and takes the new metadata."""
    path = store_path(learn_dir(paths), scope or LearnScope.private, user_id or DEFAULT_USER, store)
    entry, new = add(path, store, text, metadata, timeout=timeout)
    return Outcome([Change(Action.added if new else Action.kept, entry["id"],
                           None if new else "already there; not added again",
                           fields={**entry, "added": new, "file": str(path)})])


def plan_delete_entry(paths: Paths, entry_id: str, *, scope: LearnScope | str | None = None,
                      user_id: str | None = None, timeout: float = jsonfile.LOCK_TIMEOUT) -> Plan:
    """``learn delete``: one entry, found in whichever store holds it."""
    found = show_entry(paths, entry_id, scope=scope, user_id=user_id)

    def run(dry_run: bool, progress: Any) -> Outcome:
        if not dry_run:
            delete(found.path, entry_id, timeout=timeout)
        return Outcome([Change(Action.deleted, f"{entry_id} from {found.path}", dry_run=dry_run,
                               fields=found.to_json())])

    return Plan(f"Delete learn entry '{entry_id}' from {found.store}?", run)


def plan_clear(paths: Paths, store: str, *, scope: LearnScope | str | None = None, user_id: str | None = None,
               timeout: float = jsonfile.LOCK_TIMEOUT) -> Plan:
    """``learn clear``: empty one store (private scope and the default user unless given)."""
    path = store_path(learn_dir(paths), scope or LearnScope.private, user_id or DEFAULT_USER, store)
    count = clear(path, dry_run=True)

    def run(dry_run: bool, progress: Any) -> Outcome:
        removed = count if dry_run else clear(path, timeout=timeout)
        return Outcome([Change(Action.removed, f"{removed} entries from {path}", dry_run=dry_run,
                               fields={"store": store, "file": str(path), "removed": removed})])

    return Plan(f"Remove all {count} entries of {path}?", run)
