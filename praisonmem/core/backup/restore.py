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

from praisonmem.core.backup import chroma, sqlite
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
from praisonmem.core.backup.nofollow import DIR_FLAGS, DIR_MODE, LinkInTheWay, Place, link_in, open_dir
from praisonmem.core.errors import PraisonMemError, ProblemsFound, Refused, UsageError, io_failure
from praisonmem.core.io import jsonfile
from praisonmem.core.layout import RESTORE_TEMP, STORE_DATABASES, Kind, Lock, archive_kind, is_db_sidecar, lock_of, split
from praisonmem.core.paths import Paths
from praisonmem.core.result import Action, Change, Outcome, Plan, Progress
from praisonmem.core.io.safetext import plural


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
    if root.anchor not in ("memory", "project"):
        return Place(getattr(paths, root.anchor).path, root.below + rest[:-1], file)
    base = paths.memory_dir if root.anchor == "memory" else paths.project_dir
    if base.is_absolute():
        return Place(base, rest[:-1], file)
    return Place(Path("."), base.parts + rest[:-1], file)


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
    store: StoreRestore | None = None  # a file of a Chroma directory, which is restored whole

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
    question = (f"Restore {plural(len(writing), 'file')}" + (f", replacing {replacing}" if replacing else "") + "?"
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
    store = next((p for p in problems if p.kind == "store"), None)
    if store:
        raise Refused(f"{quoted_entry(store.path)}: {store.problem}; nothing written")
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
    groups: dict[str, StoreRestore] = {}
    for entry in files:
        place = destination(entry["path"], paths, to)
        link = link_in(place, seen)
        if link is not None:
            raise LinkInTheWay(link, "nothing written")
        target = place.target
        item = RestoreItem(entry["path"], place, "restore", entry["size"], entry["sha256"], entry["mtime"],
                           database=entry.get("sqlite") is True or target.name in STORE_DATABASES)
        if (store_name := chroma.store_of(entry["path"])) is not None:
            item.store = groups.get(store_name) or groups.setdefault(store_name, _store_plan(store_name, paths, to,
                                                                                           on_conflict, seen))
            item.action, item.detail = item.store.action, item.store.detail
            item.store.items.append(item)
        elif entry["path"] in damaged:
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


@dataclass(eq=False)  # one per directory, kept in a set by identity
class StoreRestore:
    """A Chroma directory being put back: its files go into a new temp directory beside it, renamed into place
    once all are written (:mod:`praisonmem.core.backup.chroma`)."""

    name: str  # its path in the archive, ending in /
    place: Place  # the directory itself
    action: ItemAction
    detail: str | None = None
    items: list[RestoreItem] = field(default_factory=list)
    dfd: int | None = None  # the directory it is in
    temp: str | None = None
    tfd: int | None = None  # the temp directory
    failure: PraisonMemError | None = None

    def write(self, source: Any, item: RestoreItem, sweep: Sweep) -> None:
        """One file of the store into the temp directory (created with the first), checked against the manifest."""
        if self.tfd is None:
            self.dfd = open_dir(self.place)
            sweep(self.dfd, self.place.directory)
            self.temp = temp_name(self.place.name)
            try:
                os.mkdir(self.temp, DIR_MODE, dir_fd=self.dfd)
                self.tfd = os.open(self.temp, DIR_FLAGS | os.O_NOFOLLOW, dir_fd=self.dfd)
            except OSError as exc:
                raise io_failure(self.place.target, exc) from exc
        *subdirs, file = item.name[len(self.name):].split("/")
        fd = os.dup(self.tfd)
        try:
            for sub in subdirs:  # a segment dir, its name checked against the layout
                try:
                    os.mkdir(sub, DIR_MODE, dir_fd=fd)
                except FileExistsError:
                    pass
                inner = os.open(sub, DIR_FLAGS | os.O_NOFOLLOW, dir_fd=fd)
                os.close(fd)
                fd = inner
            out = os.open(file, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=fd)
            with os.fdopen(out, "wb") as handle:
                size, digest = copy_member(source, item.size, handle.write)
                if (size, digest) != (item.size, item.sha256):
                    raise Refused("does not match its manifest checksum (the archive changed since it was "
                                  "verified); not restored")
                handle.flush()
                os.utime(handle.fileno(), (item.mtime, item.mtime))
                os.fsync(handle.fileno())
            os.fsync(fd)
        except OSError as exc:
            raise io_failure(item.target, exc) from exc
        finally:
            os.close(fd)

    def finish(self, timeout: float) -> list[Change]:
        """Rename the written directory into place (swapped with the old one for a replace), or drop it."""
        changes = [i.change() for i in self.items]
        try:
            if self.failure is not None:
                raise self.failure
            if self.tfd is None:
                raise Refused("gone from the archive since it was verified; not restored")
            assert self.dfd is not None and self.temp is not None
            with lock_of(Lock.chroma)(self.place.target, timeout):
                if _lexists(self.place.name, self.dfd):
                    if self.action != "replace":  # appeared since it was planned: not ours to replace
                        for change in changes:
                            change.action, change.detail = Action.skipped, "appeared while restoring; left as it is"
                        return changes
                    if not chroma.exchange(self.dfd, self.temp, self.place.name):  # then two renames
                        old = temp_name(self.place.name)
                        os.rename(self.place.name, old, src_dir_fd=self.dfd, dst_dir_fd=self.dfd)
                        os.rename(self.temp, self.place.name, src_dir_fd=self.dfd, dst_dir_fd=self.dfd)
                        self.temp = old
                else:
                    os.rename(self.temp, self.place.name, src_dir_fd=self.dfd, dst_dir_fd=self.dfd)
                    self.temp = None
            os.fsync(self.dfd)
        except OSError as exc:
            for change in changes:
                change.fail(io_failure(self.place.target, exc))
        except PraisonMemError as exc:
            for change in changes:
                change.fail(exc)
        finally:
            self.close()
        return changes

    def close(self) -> None:
        if self.tfd is not None:
            os.close(self.tfd)
            self.tfd = None
        if self.dfd is not None:
            if self.temp is not None:  # the new files not put in place, or the old directory swapped out
                chroma.remove_tree(self.dfd, self.temp)
            os.close(self.dfd)
            self.dfd = None


def _store_plan(name: str, paths: Paths, to: Path | None, on_conflict: RestoreConflict,
                seen: dict[Path, int | None]) -> StoreRestore:
    """What restoring the Chroma directory ``name`` does: the whole directory, or nothing of it."""
    place = destination(name.rstrip("/"), paths, to)
    link = link_in(place, seen)
    if link is not None or os.path.islink(place.target):
        raise LinkInTheWay(link or place.target, "nothing written")
    if not os.path.lexists(place.target):
        return StoreRestore(name, place, "restore")
    chroma.refuse_busy(place.target)
    if not os.path.isdir(place.target):
        return StoreRestore(name, place, "fail", "exists and is not a directory; not restored")
    if on_conflict is RestoreConflict.replace:
        return StoreRestore(name, place, "replace", "the whole Chroma directory replaced")
    return StoreRestore(name, place, "skip", "the Chroma directory already exists; left whole (--on-conflict "
                                             "replace puts the backup's in its place; files are never merged)")


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
    stores = list(dict.fromkeys(i.store for i in wanted.values() if i.store is not None))
    try:
        results += _members_into_place(archive, wanted, most, timeout, progress, sweep, total)
        for store in stores:
            results += store.finish(timeout)
    finally:
        for store in stores:
            store.close()
    return results


def _members_into_place(archive: Path, wanted: dict[str, RestoreItem], most: int, timeout: float,
                        progress: Progress, sweep: Sweep, total: int) -> list[Change]:
    results: list[Change] = []
    with open_archive(archive) as tar:
        for count, member in enumerate(tar):
            if not wanted or count >= most:  # all found, or the archive grew since it was verified
                break
            item = wanted.pop(member.name, None)  # a second member of the same name is never used
            if item is None:
                continue
            if item.store is not None:  # into its store's temp directory; its changes come with the store's rename
                try:
                    if not member.isreg() or member.issparse() or member.size != item.size:
                        raise Refused("the archive changed since it was verified; not restored")
                    if item.store.failure is None:
                        item.store.write(tar.extractfile(member), item, sweep)
                except PraisonMemError as exc:
                    item.store.failure = item.store.failure or exc
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
    for item in wanted.values():
        if item.store is not None:
            item.store.failure = item.store.failure or Refused("gone from the archive since it was verified; not "
                                                               "restored")
        else:
            results.append(item.change(Action.failed, "gone from the archive since it was verified; not restored"))
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
    restore writes into: names of :data:`RESTORE_TEMP` only, regular files (or a Chroma directory's temp
    directory, removed whole without following a link) of this user, untouched for :data:`STALE_TEMP` seconds,
    whose process is gone."""

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
            if found is None or not (stat.S_ISREG(found.st_mode) or stat.S_ISDIR(found.st_mode)) \
                    or found.st_uid != os.geteuid() or now - found.st_mtime <= STALE_TEMP or _alive(int(match["pid"])):
                continue
            try:
                if stat.S_ISDIR(found.st_mode):
                    chroma.remove_tree(dfd, name)
                else:
                    os.unlink(name, dir_fd=dfd)
            except OSError:
                continue
            self.removed.append(str(directory / name))

    def notes(self) -> list[str]:
        if not self.removed:
            return []
        return [f"removed {plural(len(self.removed), 'temp file')} an interrupted restore left: "
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
