"""Restoring a backup, with or without ``--to DIR``.

Nothing is written until the whole archive has passed: the manifest and every member must be in
the layout ``backup create`` writes (:mod:`praisonmem.core.backup.archive`; anything else exits 4),
and every member must match its manifest size and sha256 (else exit 1). Then each file is streamed
into a temp file beside its target (``.<name>.<random>.tmp``, 0600), checked against the manifest
again while it streams (the archive may have changed since), and moved into place under the lock
its store uses. Restored files are 0600 and directories created for them 0700, whatever modes the
manifest or the tar headers claim; a session that does not parse is never replaced; a file the
backup recorded as damaged is not restored.
"""

from __future__ import annotations

import fcntl
import os
import tempfile
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path, PurePosixPath
from typing import Any, Literal

from praisonmem.core import learn, memory
from praisonmem.core.backup import sqlite
from praisonmem.core.backup.archive import (
    DAMAGE,
    EXTRA_MEMBERS,
    LAYOUT,
    BadEntry,
    check_archive,
    checked_files,
    copy_member,
    open_archive,
    read_manifest,
    shown,
)
from praisonmem.core.errors import LockTimeout, PraisonMemError, ProblemsFound, Refused, UsageError, io_failure
from praisonmem.core.io import jsonfile
from praisonmem.core.paths import Paths
from praisonmem.core.result import Action, Change, Outcome, Plan, Progress


class RestoreConflict(StrEnum):
    """``backup restore --on-conflict``: what to do with a file that already exists."""

    skip = "skip"
    replace = "replace"


DIR_MODE = 0o700
DESTINATIONS = {"sessions": "sessions_dir", "spill": "spill_dir", "learn": "learn_dir", "memory": "memory_dir"}
ItemAction = Literal["restore", "replace", "skip", "fail"]
WRITES = ("restore", "replace")
ACTIONS = {"restore": Action.restored, "replace": Action.replaced, "skip": Action.skipped, "fail": Action.failed}


def destination(name: str, paths: Paths, to: Path | None) -> Path:
    """Where an archive path (already checked against the layout) is restored."""
    if to is not None:
        return to / name
    for prefix, root, _ in LAYOUT:
        if name.startswith(prefix):
            return getattr(paths, DESTINATIONS[root]) / name[len(prefix):]
    raise BadEntry(name, "outside the backup layout")


@dataclass
class RestoreItem:
    name: str
    target: Path
    action: ItemAction
    size: int
    sha256: str
    mtime: float
    detail: str | None = None
    database: bool = False  # an SQLite file: put back only while nobody has it open (:func:`sqlite.exclusive`)

    @property
    def writes(self) -> bool:
        return self.action in WRITES

    def change(self, action: Action | None = None, detail: str | None = None, *, dry_run: bool = False) -> Change:
        """The change record of this file: ``path`` in the archive, ``target`` on disk."""
        change = Change(action or ACTIONS[self.action], str(self.target), detail or self.detail, dry_run,
                        fields={"path": self.name, "target": str(self.target)})
        if change.failed:
            change.exit_code = ProblemsFound.exit_code
        return change


def plan_restore(archive: str | os.PathLike[str], paths: Paths, *, to: str | os.PathLike[str] | None = None,
                 on_conflict: RestoreConflict | str = RestoreConflict.skip, timeout: float = jsonfile.LOCK_TIMEOUT,
                 progress: Progress = None) -> Plan:
    """``backup restore``: the whole archive checked (nothing written if any of it fails), then each file
    restored under its store's lock; restoring files is asked first."""
    archive, to = Path(archive), None if to is None else Path(to)
    if to is not None and os.path.lexists(to) and not to.is_dir():
        raise UsageError(f"--to {to}: exists and is not a directory; restore into a new or existing directory")
    items = plan_items(archive, paths, to=to, on_conflict=on_conflict, progress=progress)
    writing = [i for i in items if i.writes]
    replacing = sum(1 for i in writing if i.action == "replace")
    question = (f"Restore {len(writing)} file(s)" + (f", replacing {replacing}" if replacing else "") + "?"
                if writing else None)

    def run(dry_run: bool, progress: Progress) -> Outcome:
        if dry_run:
            return Outcome([i.change(detail=i.detail or ("already exists" if i.action == "skip" else None),
                                     dry_run=True) for i in items])
        return Outcome(restore(archive, items, paths, to=to, timeout=timeout, progress=progress))

    return Plan(question, run)


def plan_items(archive: Path, paths: Paths, *, to: Path | None, on_conflict: RestoreConflict | str,
               progress: Progress = None) -> list[RestoreItem]:
    """Check the whole archive, then say what restoring it would do; nothing is written."""
    on_conflict = RestoreConflict(on_conflict)
    manifest = read_manifest(archive)
    try:
        files = checked_files(manifest)
    except BadEntry as exc:
        raise Refused(f"{exc.message}; nothing written") from exc
    problems = check_archive(archive, manifest, files, progress)
    unsafe = next((p for p in problems if p.kind == "unsafe"), None)
    if unsafe:
        raise Refused(f"refusing archive entry {shown(unsafe.path)}: {unsafe.problem.removeprefix('unsafe entry: ')}"
                      "; nothing written")
    failed = [p for p in problems if p.kind != "damaged"]
    if failed:
        named = ", ".join(f"{shown(p.path)} ({p.problem})" for p in failed[:5])
        raise ProblemsFound(f"{archive} failed verification: {named}; nothing written")
    damaged = {p.path: p.problem for p in problems if p.kind == "damaged"}
    items = []
    for entry in files:
        target = destination(entry["path"], paths, to)
        item = RestoreItem(entry["path"], target, "restore", entry["size"], entry["sha256"], entry["mtime"],
                           database=entry.get("sqlite") is True or target.name in sqlite.STORES)
        if entry["path"] in damaged:
            item.action, item.detail = "fail", f"{damaged[entry['path']]}; not restored (tar -xzf the archive to see it)"
        elif sqlite.is_sidecar(target.name):
            item.action, item.detail = "skip", ("a SQLite sidecar an older praisonmem copied as it was; not restored "
                                                "(beside another copy of its database it could corrupt it)")
        elif os.path.lexists(target):
            item.action = "replace" if on_conflict is RestoreConflict.replace else "skip"
        if item.writes and item.database:
            item.action, item.detail = _database_in_use(target) or (item.action, item.detail)
        items.append(item)
    return items


def _database_in_use(target: Path) -> tuple[ItemAction, str] | None:
    """Why a database cannot be put back now (seen before anything is written; checked again under its lock)."""
    holder = sqlite.open_by(target)
    if holder is not None:
        return "fail", f"the database is open in another process (pid {holder}); stop it, then restore"
    waiting = sqlite.pending_changes(target)
    if waiting is not None:
        return "fail", f"{waiting} beside it holds changes a writer did not finish; not restored"
    return None


def restore(archive: Path, items: list[RestoreItem], paths: Paths, *, to: Path | None,
            timeout: float = jsonfile.LOCK_TIMEOUT, progress: Progress = None) -> list[Change]:
    wanted = {i.name: i for i in items if i.writes}
    results = [i.change(detail=i.detail or "already exists") for i in items if i.action == "skip"]
    results += [i.change() for i in items if i.action == "fail"]
    try:
        results += _restore_members(archive, wanted, len(items) + 1 + EXTRA_MEMBERS, timeout, progress)
    except DAMAGE as exc:  # it verified a moment ago, so the archive changed during the restore
        raise ProblemsFound(f"{archive}: archive damaged while restoring ({exc}); some files may already be "
                            "restored") from exc
    return results


def _restore_members(archive: Path, wanted: dict[str, RestoreItem], most: int, timeout: float,
                     progress: Progress) -> list[Change]:
    results: list[Change] = []
    total = len(wanted)
    with open_archive(archive) as tar:
        for count, member in enumerate(tar):
            if not wanted or count >= most:  # all found, or the archive grew since it was verified
                break
            item = wanted.pop(member.name, None)  # a second member of the same name is never used
            if item is None:
                continue
            outcome = item.change()
            try:
                if not member.isreg() or member.issparse() or member.size != item.size:
                    raise Refused("the archive changed since it was verified; not restored")
                if not _restore_one(tar.extractfile(member), item, timeout):
                    outcome.action, outcome.detail = Action.skipped, "appeared while restoring; left as it is"
            except PraisonMemError as exc:
                outcome.fail(exc)
            results.append(outcome)
            if progress:
                progress(len(results), total)
    results += [i.change(Action.failed, "gone from the archive since it was verified; not restored")
                for i in wanted.values()]
    return results


def _restore_one(source: Any, item: RestoreItem, timeout: float) -> bool:
    """Stream one member into place; ``False`` when a file appeared that must be kept."""
    directory = item.target.parent
    try:
        private_dirs(directory)
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{item.target.name}.", suffix=".tmp")
    except OSError as exc:
        raise io_failure(directory, exc) from exc
    try:
        with os.fdopen(fd, "wb") as handle:
            size, digest = copy_member(source, item.size, handle.write)
            if (size, digest) != (item.size, item.sha256):
                raise Refused("does not match its manifest checksum (the archive changed since it was verified); "
                              "not restored")
            handle.flush()
            os.fsync(handle.fileno())
        os.utime(tmp, (item.mtime, item.mtime))
        with _store_lock(item, timeout):
            if os.path.lexists(item.target):
                if item.action != "replace":  # planned as new: it appeared since, so it is not ours to replace
                    return False
                if _is_session(item.name):
                    jsonfile.read_current(item.target)  # a session that does not parse is never overwritten
            os.replace(tmp, item.target)
    except OSError as exc:
        raise io_failure(item.target, exc) from exc
    finally:
        jsonfile.discard(tmp)
    jsonfile.fsync_dir(directory)
    return True


def private_dirs(directory: Path) -> None:
    """Create ``directory`` and any missing parents 0700 (``os.makedirs`` gives parents the umask's mode)."""
    missing = []
    current = directory
    while not current.is_dir():
        missing.append(current)
        if current.parent == current:
            break
        current = current.parent
    for path in reversed(missing):
        try:
            os.mkdir(path, DIR_MODE)
        except FileExistsError:
            if not path.is_dir():
                raise


def _is_session(name: str) -> bool:
    """A JSON-store or unified session (``sessions/`` or a project store), not a ``run_*/`` file."""
    if not (name.startswith("home/sessions/") and name.endswith(".json")):
        return False
    rest = name[len("home/sessions/"):].split("/")
    return len(rest) == 1 or rest[0] == "projects"


@contextmanager
def _session_locks(target: Path, timeout: float) -> Iterator[None]:
    """The JSON store's sidecar lock, and ``LOCK_EX`` on the file itself, which the unified (REPL/TUI) store
    takes to rewrite a file in place: no such writer is half-way through it when it is replaced."""
    with jsonfile.locked(target, timeout):
        try:
            fd = os.open(target, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except FileNotFoundError:
            yield
            return
        except OSError as exc:
            raise io_failure(target, exc, "cannot lock") from exc
        try:
            _flock_exclusive(fd, target, timeout)
            yield
        finally:
            os.close(fd)


def _flock_exclusive(fd: int, target: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise LockTimeout(f"{target}: a writer has held it locked for over {timeout:g}s; not restored") \
                    from None
            time.sleep(0.02)


def _store_lock(item: RestoreItem, timeout: float) -> AbstractContextManager[None]:
    name, target = item.name, item.target
    if item.database:
        return sqlite.exclusive(target, timeout)
    if _is_session(name):
        return _session_locks(target, timeout)
    if name.startswith("home/learn/") and name.endswith(".json") and not name.endswith(".archive.json"):
        return learn.locked(target, timeout)
    if name.startswith("memory/"):  # memory/<user>/… (or a store in the base itself: memory/<file>)
        depth = len(PurePosixPath(name).parts)
        return memory.user_lock(target.parents[max(depth - 3, 0)], timeout)
    return nullcontext()
