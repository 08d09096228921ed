"""Where a restore writes, walked without following a symbolic link.

Each restored file has a :class:`Place`: an ``anchor``, the directory the user named (``--to DIR``, the home,
the state dir, an absolute FileMemory dir, or the cwd for a relative one such as the default
``./.praisonai/memory``), and the directories below it down to the file. The anchor is opened as named; every
directory below it is opened with ``O_NOFOLLOW | O_DIRECTORY`` relative to the one above (``dir_fd``), and the
file is created and renamed through the last one, so a link anywhere below the anchor (a cloned repository's
``.praisonai/memory/alice -> ~/.ssh``) is never followed: :func:`link_in` finds it before anything is written
(the restore is refused), and :func:`open_dir` refuses one that appears later.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from praisonmem.core.errors import Refused, io_failure
from praisonmem.core.io import jsonfile

DIR_MODE = 0o700
DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC


@dataclass(frozen=True)
class Place:
    """A restored file: ``anchor`` / ``parts`` … / ``name``."""

    anchor: Path
    parts: tuple[str, ...]
    name: str

    @property
    def target(self) -> Path:
        return self.anchor.joinpath(*self.parts, self.name)

    @property
    def directory(self) -> Path:
        return self.anchor.joinpath(*self.parts)


class LinkInTheWay(Refused):
    """A symbolic link where a restore would write below it."""

    code = "symlink"

    def __init__(self, link: Path, then: str) -> None:
        try:
            pointed = f" (to {os.readlink(link)})"
        except OSError:
            pointed = ""
        super().__init__(f"{link}: is a symbolic link{pointed}; restore never writes through a link, so an archive "
                         f"cannot reach where it points (restore with --to DIR, or replace the link with the "
                         f"directory it points to); {then}")
        self.link = link


def link_in(place: Place, seen: dict[Path, int | None] | None = None) -> Path | None:
    """The first directory below ``place.anchor`` on the way to the file that is a symbolic link (``None``: none;
    the look stops at the first one missing, which restore creates). ``seen`` keeps the modes looked up."""
    seen = {} if seen is None else seen
    path = place.anchor
    for part in place.parts:
        path = path / part
        if path not in seen:
            try:
                seen[path] = os.lstat(path).st_mode
            except FileNotFoundError:
                seen[path] = None
            except OSError as exc:
                raise io_failure(path, exc, then="nothing written") from exc
        mode = seen[path]
        if mode is not None and stat.S_ISLNK(mode):
            return path
        if mode is None or not stat.S_ISDIR(mode):
            return None  # missing (created on the way), or a file in the way (that file's restore fails)
    return None


def open_dir(place: Place) -> int:
    """A descriptor of ``place``'s directory, each missing directory created 0700 on the way; :class:`LinkInTheWay`
    when one below the anchor is a link. The caller closes it."""
    jsonfile.makedirs(place.anchor)  # the anchor and its missing parents 0700: they are the user's, used as named
    try:
        fd = os.open(place.anchor, DIR_FLAGS)
    except OSError as exc:
        raise io_failure(place.anchor, exc) from exc
    path = place.anchor
    for part in place.parts:
        path = path / part
        fd = _down(fd, part, path)  # closes the descriptor above, also when it fails
    return fd


def _down(fd: int, part: str, path: Path) -> int:
    """The directory ``part`` of the one open at ``fd`` (which is closed), created when missing."""
    try:
        try:
            child = os.open(part, DIR_FLAGS | os.O_NOFOLLOW, dir_fd=fd)
        except FileNotFoundError:
            try:
                os.mkdir(part, DIR_MODE, dir_fd=fd)
            except FileExistsError:
                pass
            child = os.open(part, DIR_FLAGS | os.O_NOFOLLOW, dir_fd=fd)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR) and _is_link(fd, part):
            raise LinkInTheWay(path, "not restored") from None
        raise io_failure(path, exc) from exc
    finally:
        os.close(fd)
    return child


def _is_link(fd: int, part: str) -> bool:
    try:
        return stat.S_ISLNK(os.lstat(part, dir_fd=fd).st_mode)
    except OSError:
        return False
