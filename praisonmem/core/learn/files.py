"""Learn stores kept in files (praisonaiagents' default ``file`` backend, ``storage/base.py``).

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
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from praisonmem.core.errors import AmbiguousName, CorruptFile, LockTimeout, NotFound, io_failure
from praisonmem.core.io import jsonfile
from praisonmem.core.learn.model import (STORES, Edit, Entry, add_to, check_names, ClearEdit, empty_text, pop_entry,
                                         sorted_entries)

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
                found += sorted_entries([Entry(scope_dir.name, user_dir.name, name, path, e)
                                         for e in data.values() if isinstance(e, dict)])
    return found, unreadable


def has_stores(learn_dir: Path) -> bool:
    """Whether any store file is there (the library makes the directories even when it keeps the stores
    elsewhere, so only a file counts)."""
    return any(p.name[: -len(".json")] in STORES for p in learn_dir.glob("*/*/*.json"))


def find(learn_dir: Path, entry_id: str, **filters: str | None) -> Entry:
    matches = [e for e in entries(learn_dir, **filters)[0] if e.entry.get("id") == entry_id]
    if not matches:
        raise NotFound(f"no learn entry '{entry_id}' in {learn_dir}")
    if len(matches) > 1:
        raise AmbiguousName(f"learn entry '{entry_id}' is in several stores: "
                            + ", ".join(str(m.path) for m in matches) + " (narrow with --scope/--user-id)")
    return matches[0]


def edit(path: Path, change: Edit, timeout: float = jsonfile.LOCK_TIMEOUT) -> None:
    """``change`` the store's object re-read under the library's lock; written back (temp file, rename) if it
    says so. A store that does not parse is refused, never overwritten."""
    with locked(path, timeout):
        data = read_store(path)
        if change(data):
            jsonfile.replace_atomically(path, jsonfile.serialise(data))


def add(path: Path, store: str, content: str, metadata: dict[str, Any] | None = None,
        timeout: float = jsonfile.LOCK_TIMEOUT) -> tuple[dict[str, Any], bool]:
    """The library's ``add`` (see :func:`~praisonmem.core.learn.model.add_to`): the entry and whether it is new."""
    empty_text(content)
    result: list[tuple[dict[str, Any], bool]] = []

    def change(data: dict[str, Any]) -> bool:
        entry, new, changed = add_to(data, store, content, metadata)
        result.append((entry, new))
        return changed

    edit(path, change, timeout)
    return result[0]


def delete(path: Path, entry_id: str, timeout: float = jsonfile.LOCK_TIMEOUT) -> dict[str, Any]:
    removed: list[dict[str, Any]] = []
    edit(path, lambda data: bool(removed.append(pop_entry(data, entry_id, str(path))) or True), timeout)
    return removed[0]


def clear(path: Path, dry_run: bool = False, timeout: float = jsonfile.LOCK_TIMEOUT) -> int:
    """Empty a store (``{}``), as the library's ``clear``; refuses a file that does not parse."""
    if dry_run or not path.exists():
        return len(read_store(path))
    counted = ClearEdit()
    edit(path, counted, timeout)
    return counted.removed


def archive_path(path: Path) -> Path:
    """The library's ``<store>.archive.json`` beside ``<store>.json``: the entries its retention evicted, kept
    recoverable (a JSON array of entries)."""
    return path.with_suffix(".archive.json")


def read_archive(path: Path) -> list[Any]:
    """The archive sidecar of the store ``path`` as stored; absent: ``[]``; one that is not an array is refused."""
    archive = archive_path(path)
    try:
        data = jsonfile.read(archive)
    except NotFound:
        return []
    if not isinstance(data, list):
        raise CorruptFile(str(archive), f"holds {jsonfile.json_kind(data)}, not the array of entries the library "
                                        "archives")
    return data


def erase(path: Path, ids: frozenset[str], *, whole: bool = False, timeout: float = jsonfile.LOCK_TIMEOUT) -> int:
    """Forget's delete, under the library's lock of the store: the entries with these ids removed from the store
    and from its archive sidecar (each rewritten as the library serialises it, the other entries in their order),
    or with ``whole`` both files removed. Idempotent; how many entries (or, ``whole``, files) went."""
    archive = archive_path(path)
    if not path.exists() and not archive.exists():
        return 0
    removed = 0
    with locked(path, timeout):
        if whole:
            for target in (path, archive):
                try:
                    jsonfile.delete_locked(target)
                    removed += 1
                except NotFound:
                    pass
            return removed
        data = read_store(path) if path.exists() else {}
        gone = [key for key, entry in data.items() if key in ids or (isinstance(entry, dict) and entry.get("id") in ids)]
        for key in gone:
            del data[key]
        if gone:
            jsonfile.replace_atomically(path, jsonfile.serialise(data))
        archived = read_archive(path)
        kept_archive = [e for e in archived if not (isinstance(e, dict) and e.get("id") in ids)]
        if len(kept_archive) != len(archived):
            jsonfile.replace_atomically(archive, jsonfile.serialise(kept_archive))
        removed = len(gone) + len(archived) - len(kept_archive)
    return removed


class FileBackend:
    """The learn files of one home (``<home>/learn``)."""

    kind = "file"

    def __init__(self, learn_dir: Path) -> None:
        self.learn_dir = learn_dir

    def __str__(self) -> str:
        return str(self.learn_dir)

    def entries(self, store: str | None = None, scope: str | None = None,
                user_id: str | None = None) -> tuple[list[Entry], list[str]]:
        return entries(self.learn_dir, store=store, scope=scope, user_id=user_id)

    def where(self, store: str, scope: str, user_id: str) -> str:
        return str(store_path(self.learn_dir, scope, user_id, store))

    def count(self, store: str, scope: str, user_id: str) -> int:
        return len(read_store(store_path(self.learn_dir, scope, user_id, store)))

    def edit(self, store: str, scope: str, user_id: str, change: Edit, timeout: float, *,
             create: bool = True) -> list[str]:
        path = store_path(self.learn_dir, scope, user_id, store)
        if create or path.exists():  # else nothing to change: no file, directory or lock is made
            edit(path, change, timeout)
        return []
