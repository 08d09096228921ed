"""praisonmem's own cache: data derived from users' files, never authoritative.

A command may keep what it derived from a source file (e.g. ``memory search``'s lower-cased item texts)
so the next call can skip reading and parsing it. Nothing here is ever the only copy of anything: an
entry that is missing, truncated, corrupt, written by another version, or not ours is ignored (the
caller re-reads the source and writes a new entry), and a cache that cannot be written is skipped
silently. A cache never makes a command fail.

Where: ``$PRAISONMEM_CACHE_DIR`` (or config ``cache_dir``), else the platformdirs user cache dir
(``$XDG_CACHE_HOME/praisonmem``, ``~/.cache/praisonmem`` on Linux), directories 0700, files 0600:
entries hold users' data (e.g. item texts). ``--no-cache`` or config ``cache = false`` bypasses it.
A cache dir that is not the user's, or that others may write to (group or other write permission), is not
used at all (said once on stderr): whoever can write there could plant entries or links. Inside it nothing
is followed: each kind's directory and each entry is opened relative to the one above with ``O_NOFOLLOW``,
and new entries are created and renamed through those descriptors.

One entry per (kind, source file): ``<dir>/<kind>/<name>.bin``, the name derived from the source's
absolute path (two sources that share a name evict each other; the header names its source, so one
is never taken for the other). An entry is ``MAGIC``, one line of JSON (format, praisonmem version,
kind and its version, source, the source's :class:`FileKey` and snapshot time, payload length and
CRC-32), then the payload, which is the caller's business.

Whether an entry still describes its source is git's racy-entry rule: the entry records the source's
:class:`FileKey` (device, inode, size, mtime and ctime in ns) and the time the source was read
(``snapshot_ns``, taken *before* reading). It is used only when the source's key now is the same
and the recorded mtime and ctime are older than the snapshot by more than :data:`GRANULARITY_NS`: a
file changed in the same timestamp tick as it was read could look unchanged, so such an entry is
never trusted (it is rebuilt, and trusted once the file has been quiet for longer than that).
"""

from __future__ import annotations

import json
import os
import stat
import time
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NamedTuple

from praisonmem import __version__
from praisonmem.core.errors import IOFailure
from praisonmem.core.io import jsonfile

MAGIC = b"praisonmem-cache\n"
FORMAT = 1
# Larger than any file system's timestamp step (FAT's 2 s; ext4 and others stamp with a coarse clock
# that lags the precise one by up to a tick) and than small clock skew of network file systems.
GRANULARITY_NS = 2_000_000_000
MAX_HEADER = 64 * 1024


class FileKey(NamedTuple):
    """What identifies one version of a file without reading it."""

    dev: int
    ino: int
    size: int
    mtime_ns: int
    ctime_ns: int

    @classmethod
    def of(cls, st: os.stat_result) -> FileKey:
        return cls(st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def key_of(path: str | os.PathLike[str]) -> FileKey | None:
    """The key of a regular file; ``None`` when it is missing or not a regular file."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    return FileKey(st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def now_ns() -> int:
    """A snapshot time: call it before reading the source an entry is derived from."""
    return time.time_ns()


def settled(key: FileKey, snapshot_ns: int) -> bool:
    """The racy-entry rule: the file had not changed for longer than the granularity when it was read."""
    return max(key.mtime_ns, key.ctime_ns) + GRANULARITY_NS < snapshot_ns


def fresh(recorded: FileKey | None, current: FileKey | None, snapshot_ns: int) -> bool:
    """An entry recorded from a file with key ``recorded``, read at ``snapshot_ns``, still describes
    the file whose key is now ``current``."""
    return recorded is not None and recorded == current and settled(recorded, snapshot_ns)


class Entry(NamedTuple):
    payload: bytes
    key: FileKey | None
    snapshot_ns: int


class Cache:
    """One cache directory. Not ``enabled`` (``--no-cache``): every load misses and every save is skipped,
    but :meth:`drop` still forgets entries (a write that changes a source never leaves a stale copy of
    what it removed). ``directory=None``: no cache at all. ``note`` says why a cache dir is not used (once
    per cache)."""

    def __init__(self, directory: str | os.PathLike[str] | None, *, enabled: bool = True,
                 note: Callable[[str], None] | None = None) -> None:
        self.directory = Path(directory) if directory is not None else None
        self.enabled = enabled and self.directory is not None
        self.note = note
        self._noted = False
        self._swept: set[str] = set()  # kinds whose dead writers' temp files this cache has removed

    @classmethod
    def default(cls, *, enabled: bool = True, note: Callable[[str], None] | None = None) -> Cache:
        from praisonmem.core.paths import user_dir

        return cls(user_dir("cache"), enabled=enabled, note=note)

    def entry_path(self, kind: str, source: str | os.PathLike[str]) -> Path | None:
        if self.directory is None:
            return None
        return self.directory / kind / _entry_name(source)

    def load(self, kind: str, version: int, source: str | os.PathLike[str],
             current: FileKey | None = None) -> Entry | None:
        """The entry for ``source``; ``None`` when there is none usable. With ``current`` (the source's
        key now), also ``None`` unless the entry is :func:`fresh` for it."""
        if not self.enabled:
            return None
        with self._kind_dir(kind, create=False) as fd:
            data = None if fd is None else _read_private(fd, _entry_name(source))
        if data is None:
            return None
        entry = _decode(data, kind, version, os.path.abspath(source))
        if entry is None or (current is not None and not fresh(entry.key, current, entry.snapshot_ns)):
            return None
        return entry

    def save(self, kind: str, version: int, source: str | os.PathLike[str], payload: bytes, *,
             key: FileKey | None, snapshot_ns: int) -> bool:
        """Write the entry for ``source`` (atomically, 0600); ``False`` when it could not be written.
        An entry that could never be :func:`fresh` (a racy key) is not written."""
        if not self.enabled or (key is not None and not settled(key, snapshot_ns)):
            return False
        header = {"format": FORMAT, "praisonmem": __version__, "kind": kind, "version": version,
                  "source": os.path.abspath(source), "key": list(key) if key is not None else None,
                  "snapshot_ns": snapshot_ns, "length": len(payload), "crc32": zlib.crc32(payload)}
        data = MAGIC + json.dumps(header, ensure_ascii=True).encode("ascii") + b"\n" + payload
        try:
            with self._kind_dir(kind, create=True) as fd:
                if fd is None:
                    return False
                if kind not in self._swept:
                    self._swept.add(kind)
                    _sweep_dead_writers(fd)
                _replace(fd, _entry_name(source), data)
        except OSError:
            return False
        return True

    def drop(self, kind: str, source: str | os.PathLike[str]) -> None:
        """Forget the entry for ``source`` (nothing happens when there is none or it cannot be removed)."""
        with self._kind_dir(kind, create=False) as fd:
            if fd is not None:
                try:
                    os.unlink(_entry_name(source), dir_fd=fd)
                except OSError:
                    pass

    def listing(self) -> list[tuple[str, str, str | None, bytes]]:
        """Every entry of every kind, for ``forget``: ``(kind, file name, the source its header names or None,
        its bytes)``, in name order; reading only, nothing followed through a link, nothing created."""
        root = self._root(False)
        if root is None:
            return []
        try:
            kinds = sorted(os.listdir(root))
        except OSError:
            kinds = []
        found = []
        try:
            for kind in kinds:
                fd = _subdir(root, kind, False)
                if fd is None:
                    continue
                try:
                    for name in sorted(n for n in os.listdir(fd) if n.endswith(".bin")):
                        data = _read_private(fd, name)
                        if data is not None:
                            found.append((kind, name, _source_of(data), data))
                finally:
                    os.close(fd)
        finally:
            os.close(root)
        return found

    def remove(self, kind: str, name: str) -> bool:
        """Remove one entry by its file name (``forget``); whether it was there."""
        with self._kind_dir(kind, create=False) as fd:
            if fd is None:
                return False
            try:
                os.unlink(name, dir_fd=fd)
            except FileNotFoundError:
                return False
        return True

    @contextmanager
    def _kind_dir(self, kind: str, *, create: bool) -> Iterator[int | None]:
        """A descriptor of ``<dir>/<kind>`` (``None``: not there, or not to be used), never through a link."""
        root = self._root(create)
        if root is None:
            yield None
            return
        try:
            fd = _subdir(root, kind, create)
        finally:
            os.close(root)
        try:
            yield fd
        finally:
            if fd is not None:
                os.close(fd)

    def _root(self, create: bool) -> int | None:
        """A descriptor of the cache dir when it may be used (see the module docstring); a missing one is
        created 0700 with its missing parents when ``create``."""
        if self.directory is None:
            return None
        try:
            if create:
                jsonfile.makedirs(self.directory)  # 0700, with its missing parents: the path is the user's
            fd = os.open(self.directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except (OSError, IOFailure):
            return None
        try:
            st = os.fstat(fd)
            problem = ("is not yours" if st.st_uid != os.geteuid() else
                       "can be written by others (group or other write permission)" if st.st_mode & 0o022 else None)
            if problem is None:
                if create and stat.S_IMODE(st.st_mode) & 0o077:  # ours, readable by others: it holds users' data
                    os.fchmod(fd, stat.S_IMODE(st.st_mode) & 0o700)
                return fd
        except OSError:
            problem = None
        os.close(fd)
        if problem is not None:
            self._refuse(problem)
        return None

    def _refuse(self, problem: str) -> None:
        if self.note is not None and not self._noted:
            self._noted = True
            shown = os.path.abspath(self.directory or "")
            self.note(f"not using the cache dir {shown}: it {problem}, so its entries cannot be trusted")


def _entry_name(source: str | os.PathLike[str]) -> str:
    raw = os.fsencode(os.path.abspath(source))
    return f"{zlib.crc32(raw):08x}{zlib.adler32(raw):08x}.bin"


def _subdir(root: int, kind: str, create: bool) -> int | None:
    """``kind`` in the directory open at ``root``: a directory of ours, not writable by others, never a link."""
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(kind, flags, dir_fd=root)
    except FileNotFoundError:
        if not create:
            return None
        try:
            os.mkdir(kind, 0o700, dir_fd=root)
        except FileExistsError:
            pass
        except OSError:
            return None
        try:
            fd = os.open(kind, flags, dir_fd=root)
        except OSError:
            return None
    except OSError:  # a link (ELOOP) or a file (ENOTDIR) in its place: no cache for this kind
        return None
    st = os.fstat(fd)
    if st.st_uid != os.geteuid() or st.st_mode & 0o022:
        os.close(fd)
        return None
    return fd


def _read_private(directory: int, name: str) -> bytes | None:
    """The entry's bytes when it is a regular file of ours that nobody else can write or read."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=directory)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o077:
            return None
        with os.fdopen(fd, "rb", closefd=False) as handle:
            return handle.read()
    except OSError:
        return None
    finally:
        os.close(fd)


def _decode(data: bytes, kind: str, version: int, source: str) -> Entry | None:
    if not data.startswith(MAGIC):
        return None
    end = data.find(b"\n", len(MAGIC), len(MAGIC) + MAX_HEADER)
    if end < 0:
        return None
    try:
        header = json.loads(data[len(MAGIC):end])
        payload = data[end + 1:]
        if not (isinstance(header, dict) and header.get("format") == FORMAT
                and header.get("praisonmem") == __version__ and header.get("kind") == kind
                and header.get("version") == version and header.get("source") == source
                and header.get("length") == len(payload) and header.get("crc32") == zlib.crc32(payload)):
            return None
        raw_key, snapshot = header.get("key"), header.get("snapshot_ns")
        key = FileKey(*raw_key) if raw_key is not None else None
        if type(snapshot) is not int or (key is not None and not all(type(v) is int for v in key)):
            return None
    except (ValueError, TypeError):
        return None
    return Entry(payload, key, snapshot)


def _source_of(data: bytes) -> str | None:
    """The source an entry's header names (any version's), or ``None``."""
    end = data.find(b"\n", len(MAGIC), len(MAGIC) + MAX_HEADER)
    if not data.startswith(MAGIC) or end < 0:
        return None
    try:
        header = json.loads(data[len(MAGIC):end])
    except ValueError:
        return None
    source = header.get("source") if isinstance(header, dict) else None
    return source if isinstance(source, str) else None


def _temp_name(name: str) -> str:
    return f".{name}.{os.getpid()}.{os.urandom(4).hex()}.tmp"


def _sweep_dead_writers(directory: int) -> None:
    """Remove the temp files of writers that were killed before their rename (``_temp_name``'s pattern, whose
    process no longer runs). Entries have no lock, so a live process's temp file is left alone."""
    try:
        names = os.listdir(directory)
    except OSError:
        return
    for name in names:
        parts = name.split(".")
        # "", entry stem, "bin", pid, hex, "tmp"
        if len(parts) != 6 or parts[0] or parts[2] != "bin" or parts[5] != "tmp" or not parts[3].isdigit():
            continue
        pid = int(parts[3])
        if pid == os.getpid() or _alive(pid):
            continue
        try:
            os.unlink(name, dir_fd=directory)
        except OSError:
            pass


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True  # someone else's process (or a pid no process can have): not ours to judge
    return True


def _replace(directory: int, name: str, data: bytes) -> None:
    """A new file beside ``name`` in the directory open at ``directory`` (0600, never following a link), renamed
    over it. No fsync: a torn entry after a crash fails its length or CRC check and is rebuilt."""
    tmp = _temp_name(name)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=directory)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, name, src_dir_fd=directory, dst_dir_fd=directory)
    except BaseException:
        try:
            os.unlink(tmp, dir_fd=directory)
        except OSError:
            pass
        raise
