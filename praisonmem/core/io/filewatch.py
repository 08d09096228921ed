"""Waiting for files in one directory to change: inotify (through ctypes, Linux) where it is available,
polling ``stat`` otherwise.

Only reads: an inotify watch on the directory (not on a file, so a file replaced by an atomic rename,
as every PraisonAI store writes, is still followed) and ``stat`` calls; nothing is opened for writing,
no lock is taken. :meth:`Watcher.wait` returns when one of the watched names may have changed or when
``timeout`` passes; the caller compares :meth:`Watcher.signature` to tell, so a missed or coalesced
event costs at most one timeout.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import select
import struct
import sys
from collections.abc import Iterable

# <sys/inotify.h>
IN_MODIFY, IN_CLOSE_WRITE, IN_MOVED_FROM, IN_MOVED_TO = 0x2, 0x8, 0x40, 0x80
IN_CREATE, IN_DELETE, IN_DELETE_SELF, IN_MOVE_SELF = 0x100, 0x200, 0x400, 0x800
IN_NONBLOCK, IN_CLOEXEC = os.O_NONBLOCK, getattr(os, "O_CLOEXEC", 0o2000000)
MASK = IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF
_EVENT = struct.Struct("iIII")  # wd, mask, cookie, len; then len bytes of NUL-padded name

Signature = tuple[tuple[int, int, int, int] | None, ...]


def _inotify(directory: str) -> int | None:
    """An inotify descriptor watching ``directory``, or ``None`` where there is no inotify."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
        init, add = libc.inotify_init1, libc.inotify_add_watch
    except (OSError, AttributeError):
        return None
    add.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
    fd = init(IN_NONBLOCK | IN_CLOEXEC)
    if fd < 0:
        return None  # out of instances (fs.inotify.max_user_instances): polling still works
    if add(fd, os.fsencode(directory), MASK) < 0:
        os.close(fd)
        return None
    return fd


class Watcher:
    """Changes to ``names`` in ``directory`` (see the module docstring); a context manager."""

    def __init__(self, directory: str, names: Iterable[str], *, use_inotify: bool = True) -> None:
        self.directory = directory
        self.names = tuple(names)
        self.fd = _inotify(directory) if use_inotify else None

    @property
    def mode(self) -> str:
        return "inotify" if self.fd is not None else "polling"

    def signature(self) -> Signature:
        """What the watched files are now: inode, size, mtime and ctime of each (``None``: absent)."""
        out = []
        for name in self.names:
            try:
                st = os.stat(os.path.join(self.directory, name))
            except OSError:
                out.append(None)
            else:
                out.append((st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns))
        return tuple(out)

    def wait(self, timeout: float) -> None:
        """Return once a watched name had an event, or after ``timeout`` seconds."""
        if self.fd is None:
            select.select([], [], [], timeout)
            return
        ready, _, _ = select.select([self.fd], [], [], timeout)
        if ready:
            self._drain()

    def _drain(self) -> list[str]:
        names = []
        while True:
            try:
                data = os.read(self.fd, 65536)
            except BlockingIOError:
                return names
            offset = 0
            while offset + _EVENT.size <= len(data):
                _, _, _, length = _EVENT.unpack_from(data, offset)
                offset += _EVENT.size
                names.append(data[offset:offset + length].rstrip(b"\0").decode("utf-8", "surrogateescape"))
                offset += length

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def __enter__(self) -> Watcher:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
