"""Backups: one ``praisonmem-backup-<UTC>.tar.gz`` of sessions, spill, learn stores and FileMemory.

Layout inside the archive (so that ``restore --to DIR`` yields a usable
``DIR/home`` and ``DIR/memory``)::

    manifest.json                      first, so listing reads only the head
    home/sessions/…                    each session read while holding its lock; sessions.db and
                                       sessions_index.db as snapshots (:mod:`.sqlite`); projects/<id>/…
                                       (the praisonai CLI's project stores) and run_*/… (its old runs)
    home/state/session_spill/…
    home/learn/<scope>/<user>/…        read under the learn-store lock; learn.db (the library's sqlite
                                       backend, when the home holds it) as a snapshot
    memory/<user>/…
    project/chroma_db[_<user>]/…       praisonaiagents' Chroma directories in the project dir (the memory
    project/knowledge/chroma/…         dir's parent), each whole, only while no process has it open, and
                                       verified by opening the copy with chromadb (:mod:`.chroma`)

The manifest records the praisonmem version, the source roots, and each file's
path, size, mode, mtime and sha256. The archive is written to a temp name in
the target directory, fsynced and renamed, so a crashed backup never looks
complete. Reading and verifying archives is :mod:`praisonmem.core.backup.archive`,
restoring them :mod:`praisonmem.core.backup.restore`.

Each FileMemory file is read under ``flock(LOCK_SH)`` on the file, as the
library's readers do, so an older release rewriting it in place is never caught
half-written; one that still does not parse after re-reading is archived as it
is but marked ``"damaged"`` in the manifest: ``create`` exits 1 naming it and
skips rotation, ``verify`` fails on it, ``restore`` does not restore it.

A file name that is not valid UTF-8 (made by hand, or under another locale) is
archived byte for byte: tar stores the bytes, and the manifest, UTF-8 JSON, writes
each byte that does not decode as a ``\\udcXX`` escape (Python's surrogateescape),
which ``restore`` turns back into the same byte.

Rotation (``--keep N``) counts only archives praisonmem named
(``praisonmem-backup-<UTC stamp>[-N].tar.gz``), newest by the ``created_at`` in
their manifests, and never deletes the one just written.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import stat
import tarfile
import tempfile
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, BinaryIO

from praisonmem import __version__
from praisonmem.core import learn, memory
from praisonmem.core.backup import chroma, sqlite
from praisonmem.core.backup.archive import FORMAT, MANIFEST, read_manifest
from praisonmem.core.errors import IOFailure, NotFound, PraisonMemError, TargetExists, UsageError, io_failure, os_reason
from praisonmem.core.io import fastjson, jsonfile, outfile
from praisonmem.core.io.safetext import json_safe
from praisonmem.core.layout import (CHROMA, JSON, LEARN, LEARN_DB, MEMORY, ROOT_NAMES, SESSIONS, SKIPPED_SUFFIXES, STORE_DATABASES, Kind,
                                    Root, archive_kind, dir_ok, file_reason, is_db_sidecar)
from praisonmem.core.paths import Paths
from praisonmem.core.result import Progress

PREFIX = "praisonmem-backup-"
SUFFIX = ".tar.gz"
NAMED = re.compile(r"praisonmem-backup-(\d{8}T\d{6}Z)(?:-([1-9]\d{0,8}))?\.tar\.gz")
INCLUDES = (SESSIONS, MEMORY, LEARN, CHROMA)
LEVEL = 6  # gzip's own default: level 9 costs about twice the time for a few per cent on JSON
COPY_CHUNK = 1 << 20


@dataclass
class Entry:
    kind: Kind | None  # how it is read: under its store's read lock, a database as a snapshot, else as it is
    source: Path
    name: str  # path inside the archive


def default_dir() -> Path:
    from praisonmem.core.paths import default_backup_dir

    return default_backup_dir()


def backup_dir(chosen: str | os.PathLike[str] | None) -> Path:
    """Where backups go and are listed: ``-o``/``DIR`` or the config's ``backup.dir``, else :func:`default_dir`."""
    from praisonmem.core.paths import expand_user

    return expand_user(chosen, "backup directory") if chosen else default_dir()


def parse_include(text: str | None) -> tuple[str, ...]:
    if text is None:
        return INCLUDES
    parts = tuple(p.strip() for p in text.split(",") if p.strip())
    bad = [p for p in parts if p not in INCLUDES]
    if bad or not parts:
        raise UsageError(f"--include takes a comma list of {', '.join(INCLUDES)}, got '{text}'")
    return parts


@dataclass(frozen=True)
class LeftOut:
    """A file or directory below a root that the backup does not hold, and why (said with ``-v`` and kept in
    the manifest: nothing is left out silently)."""

    name: str  # where it would be in the archive (a directory's ends in /)
    source: Path
    reason: str

    def to_json(self) -> dict[str, str]:
        return {"path": self.name, "file": str(self.source), "reason": self.reason}


def _within(real: str, inside: tuple[str, ...]) -> bool:
    return any(real == root or real.startswith(root.rstrip(os.sep) + os.sep) for root in inside)


def _tree(root: str, prefix: str, top: Path, inside: tuple[str, ...]) -> tuple[list[tuple[Path, tuple[str, ...]]],
                                                                                list[LeftOut]]:
    """The files below ``top`` in the layout (:mod:`praisonmem.core.layout`), each with its path below ``top``, and what is left
    out. A symbolic link is followed when what it points to lies ``inside`` one of those (real) directories:
    its file, or the files of its directory, are archived under the link's own name; a link elsewhere, a
    dangling one, a loop, a name or directory no store keeps and a directory that cannot be read are left
    out, each named. Locks, temp files and a database's sidecars are never part of a backup."""
    found: list[tuple[Path, tuple[str, ...]]] = []
    left: list[LeftOut] = []

    def visit(directory: Path, parts: tuple[str, ...], chain: frozenset[tuple[int, int]]) -> None:
        try:
            with os.scandir(directory) as scan:
                items = sorted(scan, key=lambda item: item.name)
        except OSError as exc:
            left.append(LeftOut(prefix + "".join(f"{p}/" for p in parts), directory,
                                f"cannot be read: {os_reason(exc)}"))
            return
        for item in items:
            at = (*parts, item.name)
            name, path = prefix + "/".join(at), Path(item.path)
            try:
                link = item.is_symlink()
                st = os.stat(path) if link else item.stat(follow_symlinks=False)
            except OSError:
                left.append(LeftOut(name, path, f"a symbolic link to {os.path.realpath(path)}, which does not "
                                                "exist"))
                continue
            real = os.path.realpath(path) if link else ""
            if link and not _within(real, inside):
                left.append(LeftOut(name, path, f"a symbolic link to {real}, outside {inside[0]}"))
            elif stat.S_ISDIR(st.st_mode):
                if (st.st_dev, st.st_ino) in chain:
                    left.append(LeftOut(name + "/", path, f"a symbolic link to {real}, a directory it is inside"))
                elif not dir_ok(root, at):
                    left.append(LeftOut(name + "/", path, "a directory no store keeps"))
                else:
                    visit(path, at, chain | {(st.st_dev, st.st_ino)})
            elif not stat.S_ISREG(st.st_mode):
                left.append(LeftOut(name, path, "not a regular file" if not link else
                                    f"a symbolic link to {real}, which is not a regular file"))
            elif item.name.endswith(SKIPPED_SUFFIXES) or (root in (SESSIONS, LEARN) and is_db_sidecar(item.name)):
                continue
            elif (reason := file_reason(root, at)) is not None:
                left.append(LeftOut(name, path, reason))
            else:
                found.append((Path(real) if link and item.name in STORE_DATABASES else path, at))

    try:
        top_stat = os.stat(top)
    except OSError:
        return found, left
    if stat.S_ISDIR(top_stat.st_mode):
        visit(top, (), frozenset({(top_stat.st_dev, top_stat.st_ino)}))
    return found, left


def _inside(*directories: Path) -> tuple[str, ...]:
    """Where a followed link may point: the real paths of the home (or memory dir) and of the root itself."""
    return tuple(dict.fromkeys(os.path.realpath(d) for d in directories))


def _entries(root: Root, top: Path, inside: tuple[str, ...]) -> tuple[list[Entry], list[LeftOut]]:
    """The files of one root (:func:`_tree`), each with its kind; what is left out."""
    files, left = _tree(root.name, root.prefix, top, inside)
    return [Entry(archive_kind(name := root.prefix + "/".join(parts)), path, name) for path, parts in files], left


def collect(paths: Paths, include: tuple[str, ...]) -> tuple[list[Entry], dict[str, str], list[LeftOut]]:
    """What a backup holds, the roots it came from, and what below them it leaves out. Of ``sessions/``: the
    JSON and unified files and ``.last_session``, ``sessions.db`` and ``sessions_index.db`` (snapshots: their
    ``-wal``/``-shm`` are never copied on their own), each praisonai CLI project store ``projects/<id>/``, and the
    old ``run_*/`` directories."""
    entries: list[Entry] = []
    roots: dict[str, str] = {}
    left: list[LeftOut] = []
    trees = {SESSIONS: [(SESSIONS, paths.sessions_dir, (paths.data.path,)), ("spill", paths.spill_dir,
                                                                              (paths.state.path,))],
             LEARN: [(LEARN, paths.learn_dir, (paths.data.path,))], MEMORY: [(MEMORY, paths.memory_dir, ())]}
    for part, tree in trees.items():  # in this order: the archive's and the manifest's
        if part not in include:
            continue
        for name, top, around in tree:
            roots[name] = os.path.abspath(top)
            found, skipped = _entries(ROOT_NAMES[name], top, _inside(*around, top))
            entries += [e for e in found if not _foreign_learn_db(e)]
            left += skipped + [LeftOut(e.name, e.source, f"a {LEARN_DB} without the learn_store table the library "
                                                         "writes (another program's)") for e in found
                               if _foreign_learn_db(e)]
    return entries, roots, left


def _foreign_learn_db(entry: Entry) -> bool:
    """A ``learn/learn.db`` of another program, as ``learn`` itself leaves it alone (read-only; one SQLite cannot
    read at all is kept, to be archived marked damaged)."""
    if entry.name != ROOT_NAMES[LEARN].prefix + LEARN_DB:
        return False
    try:
        return not learn.holds_store(entry.source)
    except PraisonMemError:
        return False


def _read(entry: Entry, timeout: float) -> tuple[bytes, str | None] | None:
    """The file's bytes, read under its library lock where it has one, and for a FileMemory JSON file
    why it does not parse when it still does not after re-reading; ``None`` if it vanished."""
    try:
        if entry.kind is Kind.memory_file and entry.name.endswith(JSON):
            raw, _, error = memory.read_last(entry.source, timeout)
            return raw, None if error is None else error.reason
        if entry.kind is Kind.session:
            # the JSON store's lock, and a shared lock on the file itself, which the unified (REPL/TUI) store
            # holds exclusively while it rewrites a file in place
            with jsonfile.locked_quick(entry.source, timeout):
                return memory.read_shared(entry.source, timeout), None
        if entry.kind is Kind.database:
            return sqlite.snapshot(entry.source, timeout)
        if entry.kind is Kind.learn_store:
            with learn.locked(entry.source, timeout):
                return entry.source.read_bytes(), None
        return entry.source.read_bytes(), None
    except (FileNotFoundError, NotFound):
        return None
    except OSError as exc:
        raise io_failure(entry.source, exc, then="backup not written") from exc


def _stat(path: Path) -> os.stat_result | None:
    try:
        return path.stat()
    except FileNotFoundError:  # removed since it was read: as if it had gone before
        return None


def _archive_name(directory: Path) -> Path:
    """A new name that sorts after every backup already there (same second: a higher counter)."""
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    same_second = [counter for name_stamp, counter in map(_name_parts, _named(directory)) if name_stamp == stamp]
    if not same_second:
        return directory / f"{PREFIX}{stamp}{SUFFIX}"
    return directory / f"{PREFIX}{stamp}-{max(same_second) + 1}{SUFFIX}"


def create(paths: Paths, *, output: Path, include: tuple[str, ...] = INCLUDES, keep: int = 0,
           timeout: float = jsonfile.LOCK_TIMEOUT, progress: Progress = None,
           stdout: BinaryIO | None = None) -> dict[str, Any]:
    """Write a backup; ``output`` is a directory (a timestamped name is chosen), a ``.tar.gz`` file
    name, which must not exist yet, or (core/io/outfile.py's rule) ``-`` for ``stdout``, a FIFO or a
    character device, written through; ``keep`` rotates a directory only."""
    directory, target = _destination(output)
    streamed = directory is None
    if streamed and keep:
        raise UsageError("--keep rotates the backups in a directory; it does not apply to -, a pipe or a device")
    entries, roots, left_out = collect(paths, include)
    linked: list[tuple[str, Path]] = []
    stores = chroma.stores(paths.project_dir, linked) if CHROMA in include else []
    if CHROMA in include:
        roots[CHROMA] = os.path.abspath(paths.project_dir)
        left_out += [LeftOut(name, path, chroma.LINKED) for name, path in linked]
    if not entries and not stores:
        raise NotFound("nothing to back up: no " + ", ".join(include) + " under " + ", ".join(roots.values())
                       + " (wrong --home or --memory-dir?)")
    for entry in entries:  # a database that is not its store's refuses the backup before anything is written
        if entry.kind is Kind.database:
            sqlite.check_source(entry.source, timeout)
    if directory is not None:
        try:
            jsonfile.makedirs(directory)
        except IOFailure as exc:
            raise IOFailure(f"cannot create the backup directory: {exc.message}") from exc
    final = target or (None if directory is None else _archive_name(directory))
    sink = outfile.opened(output, stdout=stdout, binary=True) if final is None else jsonfile.replacing(final)
    with sink as raw:
        written = _Counting(raw)
        manifest_files = []
        damaged: list[dict[str, str]] = []
        refused: list[dict[str, str]] = []  # Chroma directories left out: open elsewhere, or a copy that fails
        chroma_counts: list[dict[str, Any]] = []
        unopened: list[dict[str, str]] = []
        # The members go, compressed, into a private temp file as they are read; the manifest (which needs
        # every file's digest) is then written first, as a gzip member of its own, the members' gzip member
        # copied after it, and the end of the archive last: gzip readers (tarfile, gzip -d, tar xz) read
        # the members as one stream, the very tar stream tarfile writes for the manifest and the files.
        with tempfile.TemporaryFile(dir=directory) as spool:
            with _TarBody(spool) as members:
                for done, entry in enumerate(entries, 1):
                    read = _read(entry, timeout)
                    st = _stat(entry.source) if read is not None else None
                    if read is not None and st is not None:
                        data, reason = read
                        members.add(_info(entry.name, len(data), st.st_mode & 0o7777, st.st_mtime), data)
                        manifest_files.append({"path": entry.name, "size": len(data),
                                               "mode": f"{st.st_mode & 0o7777:04o}", "mtime": st.st_mtime,
                                               "sha256": hashlib.sha256(data).hexdigest()})
                        if entry.kind is Kind.database:
                            manifest_files[-1]["sqlite"] = True  # a snapshot: verify runs quick_check on it
                        if reason is not None:  # kept, as it is on disk, but never passed off as good
                            manifest_files[-1]["damaged"] = reason
                            damaged.append({"path": entry.name, "file": str(entry.source), "problem": reason})
                    if progress:
                        progress(done, len(entries) + len(stores))
                for done, (name, source) in enumerate(stores, len(entries) + 1):
                    try:
                        taken = chroma.take(name, source)
                    except PraisonMemError as exc:
                        refused.append({"path": name, "file": str(source), "problem": exc.message})
                        left_out.append(LeftOut(name, source, exc.message))
                        continue
                    for member, data, mode, mtime in taken.members:
                        members.add(_info(member, len(data), mode, mtime), data)
                        manifest_files.append({"path": member, "size": len(data), "mode": f"{mode:04o}",
                                               "mtime": mtime, "sha256": hashlib.sha256(data).hexdigest()})
                    chroma_counts.append({"path": name, "collections": taken.collections,
                                          **({} if taken.opened else {"opened": False})})
                    if not taken.opened:  # chromadb not installed: checked through SQLite only
                        unopened.append({"path": name, "file": str(source)})
                    left_out += [LeftOut(*item) for item in taken.left_out]
                    if progress:
                        progress(done, len(entries) + len(stores))
            manifest = {"format": FORMAT, "version": 1, "praisonmem_version": __version__,
                        "created_at": datetime.now(timezone.utc).isoformat(), "include": list(include),
                        "roots": roots, "files": manifest_files}
            if chroma_counts:
                manifest["chroma"] = chroma_counts
            if left_out:
                manifest["left_out"] = [{"path": o.name, "reason": o.reason} for o in left_out]
            # A name that is not UTF-8 holds lone surrogates (surrogateescape): escaped, the manifest is
            # still UTF-8 JSON, and it decodes to the very names tar stored as bytes.
            encoded = fastjson.dumps_indented(manifest)
            text = encoded.decode("utf-8") if encoded is not None else json.dumps(manifest, indent=2,
                                                                                  ensure_ascii=False)
            head = _TarBody.block(_info(MANIFEST, len(body := json_safe(text).encode("utf-8")), 0o644, time.time()),
                                  body)
            written.write(_gzip(head))
            spool.seek(0)
            shutil.copyfileobj(spool, written, COPY_CHUNK)
            written.write(_gzip(_TarBody.end(len(head) + members.offset)))
    # A damaged file or a Chroma directory left out skips rotation, so the older, whole backups survive.
    removed = prune(directory, keep, final) if keep and final is not None and not damaged and not refused else []
    return {"path": str(final if final is not None else output), "files": len(manifest_files),
            "size": written.size, "removed": [str(p) for p in removed], "damaged": damaged,
            "not_backed_up": refused, "chroma_not_opened": unopened, "left_out": [o.to_json() for o in left_out]}


@dataclass
class CreatePlan:
    """``backup create`` decided: where the archive goes, what it holds, how many to keep there."""

    paths: Paths
    output: Path
    include: tuple[str, ...]
    keep: int
    warnings: list[str] = field(default_factory=list)  # sources that do not exist

    @property
    def to_stdout(self) -> bool:
        return outfile.is_stdout(self.output)

    def run(self, *, timeout: float = jsonfile.LOCK_TIMEOUT, progress: Progress = None,
            stdout: BinaryIO | None = None) -> dict[str, Any]:
        return create(self.paths, output=self.output, include=self.include, keep=self.keep, timeout=timeout,
                      progress=progress, stdout=stdout)

    def preview(self) -> dict[str, Any]:
        """``backup create --dry-run``: where the archive would go and what it would hold (each file's name in
        it, its source and size now; each Chroma directory's size), the bytes before compression, and what
        would be left out. Nothing is written, created or locked; a database is not snapshotted, so its size
        is its file's."""
        directory, target = _destination(self.output)
        if directory is None and self.keep:
            raise UsageError("--keep rotates the backups in a directory; it does not apply to -, a pipe or a device")
        entries, _, left_out = collect(self.paths, self.include)
        linked: list[tuple[str, Path]] = []
        stores = chroma.stores(self.paths.project_dir, linked) if CHROMA in self.include else []
        left_out += [LeftOut(name, path, chroma.LINKED) for name, path in linked]
        if not entries and not stores:
            raise NotFound("nothing to back up: no " + ", ".join(self.include) + " (wrong --home or --memory-dir?)")
        files = []
        for entry in entries:
            found = _stat(entry.source)
            if found is not None:
                files.append({"path": entry.name, "file": str(entry.source), "size": found.st_size})
        for name, path in stores:
            size = sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())
            files.append({"path": name, "file": str(path), "size": size})
        where = "-" if directory is None else str(target or directory / f"{PREFIX}<UTC timestamp>{SUFFIX}")
        return {"path": where, "dry_run": True, "files": len(files), "size": sum(f["size"] for f in files),
                "contents": files, "keep": self.keep, "left_out": [o.to_json() for o in left_out]}


def plan_create(paths: Paths, *, output: str | None = None, include: str | None = None, keep: int | None = None,
                configured_keep: int = 0) -> CreatePlan:
    """``backup create``: ``output`` is ``-o`` or the config's ``backup.dir`` (else :func:`default_dir`);
    ``keep`` (else ``configured_keep``) rotates a directory, never a stream."""
    paths.require_home()
    target = backup_dir(output)
    if keep is None:
        keep = 0 if _writes_through(target) else configured_keep
    parts = parse_include(include)
    warnings = [f"not backed up, no such directory: {source}" for source in missing_sources(paths, parts)]
    return CreatePlan(paths, target, parts, keep, warnings)


def _writes_through(target: Path) -> bool:
    """``-``, a FIFO or a device: the archive streams there (and nothing rotates)."""
    try:
        return outfile.kind(target) != "file"
    except PraisonMemError:
        return False  # create() says what is wrong with it


def _destination(output: Path) -> tuple[Path | None, Path | None]:
    """(directory, file name or None for a timestamped one); (None, None) when written through."""
    if outfile.directory(output):  # a link to a directory is refused
        return output, None
    if outfile.kind(output) != "file":  # refuses links to files, sockets, block devices
        return None, None
    if output.suffix in (".zip", ".tar", ".tgz", ".gz", ".bz2", ".xz") and not output.name.endswith(SUFFIX):
        raise UsageError(f"{output}: a backup file name must end in {SUFFIX} (or give a directory)")
    if not output.name.endswith(SUFFIX):
        return output, None
    if os.path.lexists(output):
        raise TargetExists(f"{output} already exists; choose another name or a directory")
    return output.parent, output


class _Counting:
    """The bytes written through it (a stream has no size to stat afterwards)."""

    def __init__(self, raw: BinaryIO) -> None:
        self.raw = raw
        self.size = 0

    def write(self, data: bytes) -> int:
        self.raw.write(data)
        self.size += len(data)
        return len(data)

    def flush(self) -> None:
        self.raw.flush()


class _TarBody:
    """Tar members written straight into a gzip stream: what ``TarFile.addfile`` writes for each (its
    header in tarfile's default format, the data, NUL padding to a block), without its per-member copies;
    the end of the archive is written by the caller (:meth:`end`)."""

    def __init__(self, fileobj: BinaryIO) -> None:
        import gzip

        self.stream = gzip.GzipFile(filename="", mode="wb", compresslevel=LEVEL, fileobj=fileobj)
        self.pending: list[bytes] = []
        self.size = 0
        self.offset = 0

    @staticmethod
    def block(info: tarfile.TarInfo, data: bytes) -> bytes:
        header = info.tobuf(tarfile.DEFAULT_FORMAT, tarfile.ENCODING, "surrogateescape")
        return header + data + tarfile.NUL * (-len(data) % tarfile.BLOCKSIZE)

    @staticmethod
    def end(offset: int) -> bytes:
        """Two zero blocks, then zeros up to a whole record, as ``TarFile.close`` writes them."""
        offset += 2 * tarfile.BLOCKSIZE
        return tarfile.NUL * (2 * tarfile.BLOCKSIZE + -offset % tarfile.RECORDSIZE)

    def add(self, info: tarfile.TarInfo, data: bytes) -> None:
        block = self.block(info, data)
        self.pending.append(block)
        self.size += len(block)
        self.offset += len(block)
        if self.size >= COPY_CHUNK:
            self.flush()

    def flush(self) -> None:
        self.stream.write(b"".join(self.pending))
        self.pending, self.size = [], 0

    def __enter__(self) -> _TarBody:
        return self

    def __exit__(self, *exc: object) -> None:
        self.flush()
        self.stream.close()


def _gzip(data: bytes) -> bytes:
    import gzip

    return gzip.compress(data, compresslevel=LEVEL, mtime=int(time.time()))


def _info(name: str, size: int, mode: int, mtime: float) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.size, info.mode, info.mtime = size, mode, int(mtime)
    info.uname = info.gname = ""
    return info


def backups(directory: Path) -> list[Path]:
    """Files that look like backups (``praisonmem-backup-*.tar.gz``, hand-named ones too), by name."""
    if not directory.is_dir():
        return []
    return sorted(p for p in directory.iterdir() if p.name.startswith(PREFIX) and p.name.endswith(SUFFIX)
                  and p.is_file())


def _named(directory: Path) -> list[Path]:
    """The backups praisonmem itself named (``praisonmem-backup-<UTC stamp>[-N].tar.gz``)."""
    return [p for p in backups(directory) if NAMED.fullmatch(p.name)]


def _name_parts(path: Path) -> tuple[str, int]:
    match = NAMED.fullmatch(path.name)
    assert match is not None
    return match[1], int(match[2] or 0)


def _utc_time(stamp: Any) -> datetime | None:
    """A manifest's ``created_at`` as an aware time; ``None`` when missing or not an ISO time with an offset."""
    try:
        when = datetime.fromisoformat(stamp) if isinstance(stamp, str) else None
    except ValueError:
        return None
    return when if when is not None and when.tzinfo is not None else None


def created_at(archive: Path) -> datetime | None:
    """When the manifest says the backup was made; ``None`` when it cannot be read."""
    try:
        return _utc_time(read_manifest(archive).get("created_at"))
    except PraisonMemError:
        return None


def prune(directory: Path, keep: int, written: Path) -> list[Path]:
    """Rotation: besides ``written`` (never deleted), keep the ``keep - 1`` newest archives praisonmem
    named, newest by the creation time in their manifests (names can lie: clock skew, copies from another
    machine). Hand-named files and archives whose manifest cannot be read are neither counted nor deleted."""
    dated = sorted((when, p) for p in _named(directory) if p.name != written.name
                   and (when := created_at(p)) is not None)
    old = [p for _, p in dated[: max(len(dated) - (keep - 1), 0)]]
    removed = []
    for path in old:
        try:
            path.unlink()
        except FileNotFoundError:  # another rotation got there first
            continue
        except OSError as exc:
            raise io_failure(path, exc, "cannot delete this old backup",
                             then=f"the new backup {written} is complete") from exc
        removed.append(path)
    return removed


def missing_sources(paths: Paths, include: tuple[str, ...]) -> list[str]:
    """The included sources that do not exist (worth a warning: a cron job may be looking elsewhere)."""
    sources = {SESSIONS: paths.sessions_dir, LEARN: paths.learn_dir, MEMORY: paths.memory_dir}
    missing = [f"{kind} ({sources[kind]})" for kind in include if kind in sources and not sources[kind].is_dir()]
    if CHROMA in include and not chroma.stores(paths.project_dir):
        missing.append(f"{CHROMA} ({paths.project_dir / 'chroma_db*'}, {paths.project_dir / 'knowledge' / 'chroma'})")
    return missing


def list_backups(chosen: str | os.PathLike[str] | None = None, *, missing_ok: bool = False) -> list[dict[str, Any]]:
    """``backup list``: the backups in a directory (:func:`backup_dir`), oldest first. A directory that does not
    exist holds none when ``missing_ok`` (the default or configured one, before the first backup), else it is
    NotFound (a directory named on the command line: a typo is said)."""
    directory = backup_dir(chosen)
    if not directory.exists():
        if missing_ok:
            return []
        raise NotFound(f"{directory}: no such backup directory")
    if not directory.is_dir():
        raise UsageError(f"{directory} is not a directory")
    rows = []
    for path in backups(directory):
        row: dict[str, Any] = {"file": str(path), "size": path.stat().st_size, "created_at": None, "files": None,
                               "error": None}
        try:
            manifest = read_manifest(path)
            row.update(created_at=manifest.get("created_at"), files=len(manifest.get("files", [])))
        except PraisonMemError as exc:
            row["error"] = exc.message
        rows.append(row)
    return sorted(rows, key=_oldest_first)


def _oldest_first(row: dict[str, Any]) -> tuple[bool, datetime, str]:
    """By the manifest's creation time (as rotation), then by name; unreadable ones last."""
    when = _utc_time(row["created_at"])
    return when is None, when or datetime.min.replace(tzinfo=timezone.utc), row["file"]
