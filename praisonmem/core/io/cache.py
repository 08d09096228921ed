"""praisonmem's own cache: data derived from users' files, never authoritative.

A command may keep what it derived from a source file (e.g. ``memory search``'s lower-cased item texts)
so the next call can skip reading and parsing it. Nothing here is ever the only copy of anything: an
entry that is missing, truncated, corrupt, written by another version, or not ours is ignored (the
caller re-reads the source and writes a new entry), and a cache that cannot be written is skipped
silently. A cache never makes a command fail.

Where: ``$PRAISONMEM_CACHE_DIR`` (or config ``cache_dir``), else the platformdirs user cache dir
(``$XDG_CACHE_HOME/praisonmem``, ``~/.cache/praisonmem`` on Linux), directories 0700, files 0600:
entries hold users' data (e.g. item texts). ``--no-cache`` or config ``cache = false`` bypasses it.

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
from pathlib import Path
from typing import NamedTuple

from praisonmem import __version__

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
        return None  # below: FileKey.of without two Python calls (a listing takes 100,000 keys)
    return tuple.__new__(FileKey, (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns))


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
    what it removed). ``directory=None``: no cache at all."""

    def __init__(self, directory: str | os.PathLike[str] | None, *, enabled: bool = True) -> None:
        self.directory = Path(directory) if directory is not None else None
        self.enabled = enabled and self.directory is not None

    @classmethod
    def default(cls, *, enabled: bool = True) -> Cache:
        from praisonmem.core.paths import user_dir

        return cls(user_dir("cache"), enabled=enabled)

    def entry_path(self, kind: str, source: str | os.PathLike[str]) -> Path | None:
        if self.directory is None:
            return None
        raw = os.fsencode(os.path.abspath(source))
        return self.directory / kind / f"{zlib.crc32(raw):08x}{zlib.adler32(raw):08x}.bin"

    def load(self, kind: str, version: int, source: str | os.PathLike[str],
             current: FileKey | None = None) -> Entry | None:
        """The entry for ``source``; ``None`` when there is none usable. With ``current`` (the source's
        key now), also ``None`` unless the entry is :func:`fresh` for it."""
        path = self.entry_path(kind, source) if self.enabled else None
        if path is None:
            return None
        data = _read_private(path)
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
        path = self.entry_path(kind, source) if self.enabled else None
        if path is None or (key is not None and not settled(key, snapshot_ns)):
            return False
        header = {"format": FORMAT, "praisonmem": __version__, "kind": kind, "version": version,
                  "source": os.path.abspath(source), "key": list(key) if key is not None else None,
                  "snapshot_ns": snapshot_ns, "length": len(payload), "crc32": zlib.crc32(payload)}
        data = MAGIC + json.dumps(header, ensure_ascii=True).encode("ascii") + b"\n" + payload
        try:
            _private_dirs(path.parent, self.directory)
            _replace(path, data)
        except OSError:
            return False
        return True

    def drop(self, kind: str, source: str | os.PathLike[str]) -> None:
        """Forget the entry for ``source`` (nothing happens when there is none or it cannot be removed)."""
        path = self.entry_path(kind, source)
        if path is not None:
            try:
                os.unlink(path)
            except OSError:
                pass


def _read_private(path: Path) -> bytes | None:
    """The entry's bytes when it is a regular file of ours that nobody else can write or read."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
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


def _private_dirs(directory: Path, root: Path | None) -> None:
    """Create ``directory`` and its missing parents 0700; the cache root, if it exists, is made 0700 when
    it is ours (it holds users' data)."""
    missing = []
    path = directory
    while not path.is_dir():
        missing.append(path)
        if path.parent == path:
            break
        path = path.parent
    for path in reversed(missing):
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            pass
    if root is not None:
        st = os.stat(root)
        if st.st_uid == os.geteuid() and stat.S_IMODE(st.st_mode) & 0o077:
            os.chmod(root, stat.S_IMODE(st.st_mode) & 0o700)


def _replace(path: Path, data: bytes) -> None:
    """A new file beside ``path`` (0600, never following a link), renamed over it. No fsync: a torn
    entry after a crash fails its length or CRC check and is rebuilt."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
