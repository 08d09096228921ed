"""praisonaiagents' Chroma directories in a backup (``project/chroma_db[_<user>]/``, ``project/knowledge/chroma/``):
taken, verified and put back as whole directories.

* **Taken** only while no other process has the store's ``chroma.sqlite3`` open (:func:`~praisonmem.core.io.chroma.holders`:
  chromadb takes no lock, and its segment files are only consistent with the database while nobody writes):
  ``chroma.sqlite3`` through SQLite's backup API from a read-only connection, the segment dirs' files as bytes,
  all into a private copy; then a second copy of those very bytes is opened with chromadb and each
  collection's ``count()`` must equal the source's (read from yet another private copy: opening a store
  rewrites its files). A store open elsewhere, or one whose copy does not open to the same counts, is left
  out of the backup, named. The counts go into the manifest's ``"chroma"`` list.
* **Taken without chromadb** (the ``[chroma]`` extra not installed: praisonmem in a venv of its own beside the
  agent's): the copy needs none of it, so the store is still taken, and checked as far as SQLite can: the
  copy's ``chroma.sqlite3`` passes ``quick_check`` and holds, per collection, the items the source's does
  (counted as chromadb counts them: the rows of the collection's metadata segment), and no source file changed
  and no process opened the store while it was copied. :attr:`Taken.opened` is then ``False`` (said, and kept
  in the manifest as ``"opened": false``); ``backup verify`` opens it once chromadb is there.
* **Verified** by extracting each store's files into a private temp dir and opening them with chromadb (imported
  only then), counts checked against the manifest.
* **Put back** whole: the files are written into a new temp directory beside the target, which is then renamed
  into place (over an existing one only with ``--on-conflict replace``, swapped atomically with
  ``renameat2(RENAME_EXCHANGE)`` and the old one removed); never merged file by file into a live store.
"""

from __future__ import annotations

import ctypes
import errno
import os
import shutil
import sqlite3
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from praisonmem.core.errors import CorruptFile, IOFailure, Refused
from praisonmem.core.layout import (CHROMA, CHROMA_DIRS, CHROMA_SQLITE, DB_SIDECARS, ROOT_NAMES, chroma_file_ok,
                                    chroma_store)

PREFIX = ROOT_NAMES[CHROMA].prefix
KNOWLEDGE = ("knowledge", "chroma")


@dataclass
class Taken:
    """One Chroma directory as the backup holds it."""

    name: str  # its path in the archive, ending in /
    members: list[tuple[str, bytes, int, float]]  # archive name, data, mode, mtime
    collections: dict[str, int]
    left_out: list[tuple[str, Path, str]] = field(default_factory=list)  # archive name, file, why
    opened: bool = True  # its copy was opened with chromadb (False: checked through SQLite only)


LINKED = "a symbolic link; a Chroma directory is backed up only as the directory itself"


def stores(project_dir: Path, linked: list[tuple[str, Path]] | None = None) -> list[tuple[str, Path]]:
    """``(archive name, directory)`` of each Chroma directory in the project dir; one reached through a symbolic
    link is not followed, but added to ``linked`` (to be named as left out)."""
    import re

    from praisonmem.core.io.chroma import looks_like_chroma

    found, links = [], [] if linked is None else linked
    candidates = []
    if project_dir.is_dir():
        candidates = [(f"{PREFIX}{p.name}/", p, (p,)) for p in sorted(project_dir.iterdir())
                      if re.fullmatch(CHROMA_DIRS[0], p.name)]
    knowledge = project_dir.joinpath(*KNOWLEDGE)
    candidates.append((f"{PREFIX}{'/'.join(KNOWLEDGE)}/", knowledge, (knowledge.parent, knowledge)))
    for name, path, way in candidates:
        if looks_like_chroma(path):
            (links if any(p.is_symlink() for p in way) else found).append((name, path))
    return found


def take(name: str, source: Path) -> Taken:
    """The files of the Chroma directory ``source`` (see the module docstring). :class:`Refused` when another
    process has it open; :class:`CorruptFile` or :class:`IOFailure` when its copy cannot be verified."""
    from praisonmem.core.io import chroma as chroma_io

    busy = chroma_io.busy_reason(source)
    if busy:
        raise Refused(busy)
    opened = _chromadb_installed()
    at_rest = None if opened else _signature(source)
    with tempfile.TemporaryDirectory(prefix="praisonmem-chroma-") as scratch:
        staged = Path(scratch) / "store"
        staged.mkdir(0o700)
        try:
            chroma_io.copy_files(source, staged)
        except (OSError, sqlite3.Error) as exc:
            raise IOFailure(f"{source}: cannot read: {exc}") from None
        taken = Taken(name, [], {}, opened=opened)
        for path in sorted(p for p in staged.rglob("*") if p.is_file()):
            rest = path.relative_to(staged).parts
            if not chroma_file_ok(rest):
                taken.left_out.append((name + "/".join(rest), source.joinpath(*rest),
                                       "not a file chromadb writes in a Chroma directory"))
                continue
            st = source.joinpath(*rest).stat() if rest != (CHROMA_SQLITE,) else (source / CHROMA_SQLITE).stat()
            taken.members.append((name + "/".join(rest), path.read_bytes(), st.st_mode & 0o7777, st.st_mtime))
        for entry in os.scandir(source):  # what the copy did not take: said, never left out silently
            if entry.is_file(follow_symlinks=False) and entry.name != CHROMA_SQLITE \
                    and entry.name not in (CHROMA_SQLITE + s for s in DB_SIDECARS):
                taken.left_out.append((name + entry.name, Path(entry.path), "not a file chromadb writes in a Chroma "
                                                                            "directory"))
        check = Path(scratch) / "check"  # the archived bytes, opened: chromadb rewrites what it opens
        check.mkdir(0o700)
        for member, data, _, _ in taken.members:
            file = check.joinpath(*member[len(name):].split("/"))
            file.parent.mkdir(0o700, exist_ok=True)
            file.write_bytes(data)
        taken.collections = (chroma_io.opened_counts(check) if opened
                              else sql_counts(check / CHROMA_SQLITE, source / CHROMA_SQLITE))
    if opened:
        with chroma_io.snapshot(source) as client:
            expected = chroma_io.counts(client)
    else:
        expected = sql_counts(source / CHROMA_SQLITE)
        busy = chroma_io.busy_reason(source)
        if busy:
            raise Refused(f"{busy} (opened while it was copied)")
        if _signature(source) != at_rest:
            raise IOFailure(f"{source}: changed while it was copied (a writer without a process holding it open?)")
    if taken.collections != expected:
        raise CorruptFile(str(source), f"its copy opens with {taken.collections} items per collection, the store "
                                       f"with {expected}")
    return taken


def _chromadb_installed() -> bool:
    from praisonmem.core.io import chroma as chroma_io

    try:
        chroma_io.driver()
    except IOFailure:
        return False
    return True


# Each collection of the default database (the one chromadb's client opens) with the rows of its metadata
# segment: what chromadb's count() returns (measured with chromadb 1.5.9, its write-ahead queue not yet synced
# to the vector segment included).
SQL_COUNTS = ("SELECT c.name, count(e.id) FROM collections c JOIN databases d ON d.id = c.database_id "
              "LEFT JOIN segments s ON s.collection = c.id AND s.scope = 'METADATA' "
              "LEFT JOIN embeddings e ON e.segment_id = s.id "
              "WHERE d.name = 'default_database' AND d.tenant_id = 'default_tenant' GROUP BY c.id ORDER BY c.name")


def sql_counts(db: Path, shown: Path | None = None) -> dict[str, int]:
    """Each collection's item count read from ``chroma.sqlite3`` itself (read-only, nothing changes on disk), after
    SQLite's ``quick_check``; :class:`CorruptFile`, naming ``shown`` (default ``db``), when it is not a readable
    Chroma database."""
    from praisonmem.core.io import sqlite as sqlite_io

    name = str(shown or db)
    try:
        conn = sqlite_io.connect_ro(db)
    except sqlite3.Error as exc:
        raise CorruptFile(name, f"not a readable Chroma database ({exc})") from None
    try:
        verdict = str(conn.execute("PRAGMA quick_check").fetchone()[0])
        if verdict != "ok":  # "*** in database main ***" then one line per fault: the first fault says enough
            faults = [line for line in verdict.splitlines() if line.strip() and not line.startswith("***")]
            raise CorruptFile(name, f"SQLite finds it damaged ({(faults or [verdict])[0].strip()})")
        return {str(collection): int(items) for collection, items in conn.execute(SQL_COUNTS)}
    except sqlite3.Error as exc:
        raise CorruptFile(name, f"not a readable Chroma database ({exc})") from None
    finally:
        conn.close()


def _signature(directory: Path) -> list[tuple[str, int, int]]:
    """Every regular file of a Chroma directory (its segment dirs' too) with its size and mtime, to tell whether a
    writer changed any while it was copied."""
    found = []
    for here, _, names in os.walk(directory):
        for file_name in names:
            path = os.path.join(here, file_name)
            try:
                st = os.lstat(path)
            except FileNotFoundError:
                continue
            found.append((path, st.st_size, st.st_mtime_ns))
    return sorted(found)


# ---------------------------------------------------------------- verify


def store_of(name: str) -> str | None:
    """The Chroma directory (archive name ending in /) that the archive path ``name`` is in, or ``None``."""
    if not name.startswith(PREFIX):
        return None
    parts = name[len(PREFIX):].split("/")
    size = chroma_store(parts)
    return PREFIX + "".join(f"{p}/" for p in parts[:size]) if size else None


def manifest_problem(value: Any) -> str | None:
    """What is wrong with a manifest's ``"chroma"`` list."""
    if not isinstance(value, list) or not all(
            isinstance(e, dict) and isinstance(e.get("path"), str) and isinstance(e.get("collections"), dict)
            and all(isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool)
                    for k, v in e["collections"].items()) for e in value):
        return "'chroma' is not a list of {path, collections}"
    return None


class Check:
    """The Chroma directories of an archive being verified: each one's members copied into a private temp dir as
    they stream past, then opened with chromadb (:meth:`problems`)."""

    def __init__(self, manifest: dict[str, Any]) -> None:
        listed = manifest.get("chroma")
        self.expected = {e["path"]: e["collections"] for e in listed} if isinstance(listed, list) else {}
        self.scratch: tempfile.TemporaryDirectory[str] | None = None
        self.dirs: dict[str, Path] = {}
        self.bad: set[str] = set()

    def sink(self, name: str) -> IO[bytes]:
        """A new file of the private copy for the archive path ``name`` (already checked against the layout)."""
        store = store_of(name)
        assert store is not None
        if self.scratch is None:
            self.scratch = tempfile.TemporaryDirectory(prefix="praisonmem-verify-")
        if store not in self.dirs:
            self.dirs[store] = Path(self.scratch.name) / str(len(self.dirs))
            self.dirs[store].mkdir(0o700)
        file = self.dirs[store].joinpath(*name[len(store):].split("/"))
        file.parent.mkdir(0o700, exist_ok=True)
        return open(file, "xb")

    def failed(self, name: str) -> None:
        store = store_of(name)
        if store is not None:
            self.bad.add(store)

    def problems(self, missing: set[str]) -> list[tuple[str, str]]:
        """``(store, problem)`` of each store whose members all arrived whole and that chromadb cannot open, or
        whose counts are not the manifest's; then the temp dir is removed."""
        out: list[tuple[str, str]] = []
        if not self.dirs:
            return out
        from praisonmem.core.io import chroma as chroma_io

        try:
            for store, directory in self.dirs.items():
                if store in self.bad or any(store_of(m) == store for m in missing):
                    continue  # its files are already named
                try:
                    got = chroma_io.opened_counts(directory)
                except CorruptFile as exc:
                    out.append((store, f"chromadb cannot open this Chroma directory ({exc.reason})"))
                    continue
                except IOFailure as exc:  # chromadb is not installed
                    out.append((store, f"cannot open this Chroma directory to check it: {exc.message}"))
                    continue
                want = self.expected.get(store)
                if want is not None and got != want:
                    out.append((store, f"opens with {got} items per collection; the backup recorded {want}"))
        finally:
            if self.scratch is not None:
                self.scratch.cleanup()
        return out


# ---------------------------------------------------------------- restore

RENAME_EXCHANGE = 2


def exchange(dfd: int, a: str, b: str) -> bool:
    """Swap the names ``a`` and ``b`` in the directory open at ``dfd`` in one step; ``False`` when the system
    cannot (no ``renameat2``, or a file system without it)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    if renameat2(dfd, os.fsencode(a), dfd, os.fsencode(b), RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL):
        return False
    raise OSError(err, os.strerror(err), b)


def remove_tree(dfd: int, name: str) -> None:
    """Remove the directory ``name`` below ``dfd`` (no link followed)."""
    shutil.rmtree(name, dir_fd=dfd)


def refuse_busy(target: Path) -> None:
    """A restore does not touch a Chroma directory another process has open."""
    from praisonmem.core.io import chroma as chroma_io

    busy = chroma_io.busy_reason(target)
    if busy:
        raise Refused(f"{busy}; stop it, then restore (a Chroma directory is only put back while nobody has it "
                      "open); nothing written")

