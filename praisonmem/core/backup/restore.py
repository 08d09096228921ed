"""Restoring a backup, with or without ``--to DIR``.

Nothing is written until the whole archive has passed: the manifest and every member must be in
the layout ``backup create`` writes (:mod:`praisonmem.core.layout`; anything else exits 4),
every database must be its store (exit 4), every member must match its manifest size and sha256
(else exit 1), and no directory below where a file goes may be a symbolic link (exit 4;
:mod:`.nofollow`). Then each file is streamed into a temp file beside its target (:func:`temp_name`,
0600), created and renamed through a descriptor of its directory opened without following links,
checked against the manifest again while it streams (the archive may have changed since), and moved
into place under the lock its store uses. Restored files are 0600 and directories created for them
0700, whatever modes the manifest or the tar headers claim; a session that does not parse is never
replaced; a file the backup recorded as damaged is not restored.

A restore killed mid-file leaves its temp file (:data:`~praisonmem.core.layout.RESTORE_TEMP`); the next restore
writing into that directory removes the ones older than :data:`STALE_TEMP` seconds whose process is gone, and
nothing else.
"""

from __future__ import annotations

import os
import re
import secrets
import stat
import time
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal

from praisonmem.core.backup import sqlite
from praisonmem.core.backup.archive import (
    DAMAGE,
    EXTRA_MEMBERS,
    BadEntry,
    check_archive,
    checked_files,
    copy_member,
    open_archive,
    quoted_entry,
    read_manifest,
)
from praisonmem.core.backup.nofollow import LinkInTheWay, Place, link_in, open_dir
from praisonmem.core.errors import PraisonMemError, ProblemsFound, Refused, UsageError, io_failure
from praisonmem.core.io import jsonfile
from praisonmem.core.layout import RESTORE_TEMP, STORE_DATABASES, Kind, Lock, archive_kind, is_db_sidecar, lock_of, split
from praisonmem.core.paths import Paths
from praisonmem.core.result import Action, Change, Outcome, Plan, Progress


class RestoreConflict(StrEnum):
    """``backup restore --on-conflict``: what to do with a file that already exists."""

    skip = "skip"
    replace = "replace"


STALE_TEMP = 60  # seconds: an older temp file of a restore whose process is gone is a leftover
NAME_MAX = 255
ItemAction = Literal["restore", "replace", "skip", "fail"]
WRITES = ("restore", "replace")
ACTIONS = {"restore": Action.restored, "replace": Action.replaced, "skip": Action.skipped, "fail": Action.failed}


def temp_name(name: str) -> str:
    """A new temp name for restoring ``name``: :data:`~praisonmem.core.layout.RESTORE_TEMP`, shortened to fit a file
    name."""
    tail = f".restore-{os.getpid()}-{secrets.token_hex(4)}.tmp"
    while len(os.fsencode(f".{name}{tail}")) > NAME_MAX:
        name = name[:-1]
    return f".{name}{tail}"


def destination(name: str, paths: Paths, to: Path | None) -> Place:
    """Where an archive path (already checked against the layout) is restored: under ``--to``, or the home, the
    state dir and the FileMemory dir (a relative one is walked from the cwd, so no link in it is followed)."""
    *parts, file = name.split("/")
    if to is not None:
        return Place(to, tuple(parts), file)
    root, rest = split(name)
    if root.anchor != "memory":
        return Place(getattr(paths, root.anchor).path, root.below + rest[:-1], file)
    if paths.memory_dir.is_absolute():
        return Place(paths.memory_dir, rest[:-1], file)
    return Place(Path("."), paths.memory_dir.parts + rest[:-1], file)


@dataclass
class RestoreItem:
    name: str
    place: Place
    action: ItemAction
    size: int
    sha256: str
    mtime: float
    detail: str | None = None
    database: bool = False  # an SQLite file: put back only while nobody has it open (:func:`sqlite.exclusive`)

    @property
    def target(self) -> Path:
        return self.place.target

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
    if to is not None and os.path.islink(to):
        raise Refused(f"--to {to}: is a symbolic link; restore writes nothing through a link (give the directory "
                      "itself); nothing written")
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
        return restore(archive, items, paths, to=to, timeout=timeout, progress=progress)

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
        raise Refused(f"refusing archive entry {quoted_entry(unsafe.path)}: "
                      f"{unsafe.problem.removeprefix('unsafe entry: ')}; nothing written")
    failed = [p for p in problems if p.kind != "damaged"]
    if failed:
        named = ", ".join(f"{quoted_entry(p.path)} ({p.problem})" for p in failed[:5])
        raise ProblemsFound(f"{archive} failed verification: {named}; nothing written")
    damaged = {p.path: p.problem for p in problems if p.kind == "damaged"}
    items = []
    seen: dict[Path, int | None] = {}
    for entry in files:
        place = destination(entry["path"], paths, to)
        link = link_in(place, seen)
        if link is not None:
            raise LinkInTheWay(link, "nothing written")
        target = place.target
        item = RestoreItem(entry["path"], place, "restore", entry["size"], entry["sha256"], entry["mtime"],
                           database=entry.get("sqlite") is True or target.name in STORE_DATABASES)
        if entry["path"] in damaged:
            item.action, item.detail = "fail", f"{damaged[entry['path']]}; not restored (tar -xzf the archive to see it)"
        elif is_db_sidecar(target.name):
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
            timeout: float = jsonfile.LOCK_TIMEOUT, progress: Progress = None) -> Outcome:
    wanted = {i.name: i for i in items if i.writes}
    results = [i.change(detail=i.detail or "already exists") for i in items if i.action == "skip"]
    results += [i.change() for i in items if i.action == "fail"]
    sweep = Sweep()
    try:
        results += _restore_members(archive, wanted, len(items) + 1 + EXTRA_MEMBERS, timeout, progress, sweep)
    except DAMAGE as exc:  # it verified a moment ago, so the archive changed during the restore
        raise ProblemsFound(f"{archive}: archive damaged while restoring ({exc}); some files may already be "
                            "restored") from exc
    return Outcome(results, sweep.notes())


def _restore_members(archive: Path, wanted: dict[str, RestoreItem], most: int, timeout: float,
                     progress: Progress, sweep: Sweep) -> list[Change]:
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
                if not _restore_one(tar.extractfile(member), item, timeout, sweep):
                    outcome.action, outcome.detail = Action.skipped, "appeared while restoring; left as it is"
            except PraisonMemError as exc:
                outcome.fail(exc)
            results.append(outcome)
            if progress:
                progress(len(results), total)
    results += [i.change(Action.failed, "gone from the archive since it was verified; not restored")
                for i in wanted.values()]
    return results


def _restore_one(source: Any, item: RestoreItem, timeout: float, sweep: Sweep) -> bool:
    """Stream one member into place; ``False`` when a file appeared that must be kept. The temp file is created,
    and renamed over the target, through a descriptor of the directory (:func:`open_dir`: no link followed)."""
    place = item.place
    directory = place.directory
    dfd = open_dir(place)
    tmp: str | None = None
    try:
        sweep(dfd, directory)
        tmp = temp_name(place.name)
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=dfd)
        except OSError as exc:
            tmp = None
            raise io_failure(directory, exc) from exc
        with os.fdopen(fd, "wb") as handle:
            size, digest = copy_member(source, item.size, handle.write)
            if (size, digest) != (item.size, item.sha256):
                raise Refused("does not match its manifest checksum (the archive changed since it was verified); "
                              "not restored")
            handle.flush()
            os.utime(handle.fileno(), (item.mtime, item.mtime))
            os.fsync(handle.fileno())
        with _store_lock(item, timeout):
            if _lexists(place.name, dfd):
                if item.action != "replace":  # planned as new: it appeared since, so it is not ours to replace
                    return False
                if archive_kind(item.name) is Kind.session:
                    jsonfile.read_current(item.target)  # a session that does not parse is never overwritten
            os.replace(tmp, place.name, src_dir_fd=dfd, dst_dir_fd=dfd)
            tmp = None
        os.fsync(dfd)
    except OSError as exc:
        raise io_failure(item.target, exc) from exc
    finally:
        if tmp is not None:
            _unlink(tmp, dfd)
        os.close(dfd)
    return True


def _lexists(name: str, dfd: int) -> bool:
    try:
        os.lstat(name, dir_fd=dfd)
    except FileNotFoundError:
        return False
    return True


def _unlink(name: str, dfd: int) -> None:
    try:
        os.unlink(name, dir_fd=dfd)
    except OSError:
        pass


@dataclass
class Sweep:
    """The leftover temp files earlier restores left when they were killed, removed once per directory this
    restore writes into: names of :data:`RESTORE_TEMP` only, regular files of this user, untouched for
    :data:`STALE_TEMP` seconds, whose process is gone."""

    done: set[tuple[int, int]] = field(default_factory=set)
    removed: list[str] = field(default_factory=list)

    def __call__(self, dfd: int, directory: Path) -> None:
        st = os.fstat(dfd)
        if (st.st_dev, st.st_ino) in self.done:
            return
        self.done.add((st.st_dev, st.st_ino))
        now = time.time()
        try:
            names = os.listdir(dfd)
        except OSError:
            return
        for name in names:
            match = re.fullmatch(RESTORE_TEMP, name)
            try:
                found = os.lstat(name, dir_fd=dfd) if match else None
            except OSError:
                continue
            if found is None or not stat.S_ISREG(found.st_mode) or found.st_uid != os.geteuid() \
                    or now - found.st_mtime <= STALE_TEMP or _alive(int(match["pid"])):
                continue
            try:
                os.unlink(name, dir_fd=dfd)
            except OSError:
                continue
            self.removed.append(str(directory / name))

    def notes(self) -> list[str]:
        if not self.removed:
            return []
        return [f"removed {len(self.removed)} temp file(s) an interrupted restore left: "
                + ", ".join(self.removed[:3]) + (", …" if len(self.removed) > 3 else "")]


def _alive(pid: int) -> bool:
    """Whether a process with this id runs (another restore may still be waiting for a lock)."""
    if pid == os.getpid():
        return False  # an earlier run of this very id, long gone: this process made no temp file that old
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    return True


def _store_lock(item: RestoreItem, timeout: float) -> AbstractContextManager[None]:
    """The lock the file's store takes to write it (a database: SQLite's, whatever its name)."""
    return lock_of(Lock.sqlite if item.database else archive_kind(item.name))(item.target, timeout)
