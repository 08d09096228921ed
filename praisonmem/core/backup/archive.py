"""Reading a backup archive safely: the manifest, the layout praisonmem writes, and a streaming verify.

An archive is untrusted input. Only what ``backup create`` itself writes is accepted:

* ``manifest.json`` first (at most :data:`MANIFEST_MAX` bytes), then regular files only (no
  links, devices, directories or sparse files);
* each file under one of the manifest's roots, and one of the names the stores write there
  (:mod:`praisonmem.core.layout`, the rule ``backup create`` archives by); no path twice, no path that is also
  another's directory;
* a database (``"sqlite": true``: a snapshot ``backup create`` took) passes ``PRAGMA quick_check``;
* a Chroma directory (``project/…``) opens with chromadb (imported only then) to the collection counts the
  manifest's ``"chroma"`` list recorded (:mod:`praisonmem.core.backup.chroma`);
* each file's size and sha256 as the manifest says. Members are streamed in chunks while hashing,
  a member larger than its manifest size is refused before a byte of it is read, and the bytes
  read in all never exceed the manifest's total, so a tiny archive claiming gigabytes cannot
  drive memory up. The manifest's ``mode`` is not trusted (restore writes 0600).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import tarfile
import tempfile
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Literal

from praisonmem.core.backup import chroma, sqlite
from praisonmem.core.errors import Refused
from praisonmem.core.layout import DATABASES, LEARN, LEARN_DB, ROOT_NAMES, SESSIONS, layout_reason
from praisonmem.core.result import Progress

MANIFEST = "manifest.json"
FORMAT = "praisonmem-backup"
MANIFEST_MAX = 64 << 20  # about 250 000 files
HEADER_MAX = 1 << 20  # a long name or pax header: tarfile reads it whole into memory
CHUNK = 1 << 20
EXTRA_MEMBERS = 100  # members beyond the manifest's before reading stops
DAMAGE = (tarfile.TarError, EOFError, OSError, zlib.error)  # what a damaged archive raises
SHA256 = re.compile(r"[0-9a-f]{64}")

class _BoundedTarInfo(tarfile.TarInfo):
    """tarfile reads a long-name or pax header, and a sparse map, wholly into memory: bound them."""

    def _proc_member(self, tarfile_: tarfile.TarFile) -> tarfile.TarInfo:
        if self.type in (tarfile.GNUTYPE_LONGNAME, tarfile.GNUTYPE_LONGLINK, tarfile.XHDTYPE, tarfile.XGLTYPE,
                         tarfile.SOLARIS_XHDTYPE) and self.size > HEADER_MAX:
            raise tarfile.ReadError(f"a {self.size}-byte extended header (backups have none over {HEADER_MAX})")
        if self.type == tarfile.GNUTYPE_SPARSE and self._sparse_structs[1]:
            raise tarfile.ReadError("a sparse file with an extended map (backups hold no sparse files)")
        return super()._proc_member(tarfile_)

    def _proc_gnusparse_10(self, next: tarfile.TarInfo, pax_headers: Any, tarfile_: tarfile.TarFile) -> None:
        raise tarfile.ReadError("a pax sparse file (backups hold no sparse files)")


@contextmanager
def open_archive(archive: Path) -> Iterator[tarfile.TarFile]:
    """The archive, which must be a regular file (a pipe or device is refused, never waited on)."""
    from praisonmem.core.io.inputfile import open_regular

    fd = open_regular(archive, "backup archive")  # NotFound when missing
    with os.fdopen(fd, "rb") as raw, tarfile.open(fileobj=raw, mode="r:gz", tarinfo=_BoundedTarInfo) as tar:
        yield tar


def quoted_entry(name: str) -> str:
    """An archive path quoted for a message: control characters escaped, never sent raw."""
    return repr(name)


# ---------------------------------------------------------------- the manifest


def read_manifest(archive: Path) -> dict[str, Any]:
    """The manifest, read from the head of the archive only."""
    try:
        with open_archive(archive) as tar:
            first = tar.next()
            if first is None or first.name != MANIFEST or not first.isreg() or first.issparse():
                raise Refused(f"{archive}: not a praisonmem backup (no {MANIFEST} first)")
            if first.size > MANIFEST_MAX:
                raise Refused(f"{archive}: not a praisonmem backup ({MANIFEST} of {first.size} bytes)")
            data = json.loads(tar.extractfile(first).read(first.size))  # read(n) allocates n bytes up front
    except (*DAMAGE, ValueError, RecursionError) as exc:
        raise Refused(f"{archive}: cannot read the archive ({exc})") from exc
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise Refused(f"{archive}: not a praisonmem backup manifest")
    problem = manifest_problem(data)
    if problem:
        raise Refused(f"{archive}: not a praisonmem backup manifest ({problem})")
    return data


def manifest_problem(data: dict[str, Any]) -> str | None:
    """What is wrong with the manifest's own fields (its file entries: :func:`checked_files`)."""
    if "created_at" in data and not isinstance(data["created_at"], (str, type(None))):
        return "'created_at' is not text"
    if "roots" in data and not isinstance(data["roots"], dict):
        return "'roots' is not an object"
    if "files" in data and not isinstance(data["files"], list):
        return "'files' is not a list"
    if "chroma" in data:
        return chroma.manifest_problem(data["chroma"])
    return None


def roots_of(manifest: dict[str, Any]) -> set[str]:
    roots = manifest.get("roots")
    return {k for k, v in roots.items() if isinstance(v, str)} if isinstance(roots, dict) else set()


def member_reason(member: tarfile.TarInfo, roots: set[str]) -> str | None:
    """Why an archive member is not one ``backup create`` writes; ``None`` when it is."""
    if member.issym() or member.islnk():
        return "a link"
    if member.isdev() or member.isfifo():
        return "a device or pipe"
    if member.isdir():
        return "a directory entry, which backups never hold"
    if member.issparse():
        return "a sparse file, which backups never hold"
    if not member.isreg():
        return "not a regular file"
    return layout_reason(member.name, roots)


class BadEntry(Refused):
    """An archive entry (in the manifest or the tar) that ``backup create`` never writes."""

    code = "unsafe_entry"

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"refusing archive entry {quoted_entry(path)}: {reason}")
        self.path = path
        self.reason = reason


def checked_files(manifest: dict[str, Any]) -> list[dict[str, Any]]:
    """The manifest's file list, each entry checked; :class:`BadEntry` naming the first bad one."""
    files = manifest.get("files")
    if not isinstance(files, list):
        raise BadEntry(MANIFEST, "no file list")
    roots = roots_of(manifest)
    paths: set[str] = set()
    for index, entry in enumerate(files):
        reason = _entry_reason(entry, roots)
        if reason is None and entry["path"] in paths:
            reason = "listed twice in the manifest"
        if reason:
            named = isinstance(entry, dict) and isinstance(entry.get("path"), str)
            raise BadEntry(entry["path"] if named else f"{MANIFEST} files[{index}]", reason)
        paths.add(entry["path"])
    for path in sorted(paths):
        parent = path.rpartition("/")[0]
        while parent:
            if parent in paths:
                raise BadEntry(path, f"its directory {quoted_entry(parent)} is a file in the same archive")
            parent = parent.rpartition("/")[0]
    return files


def _entry_reason(entry: Any, roots: set[str]) -> str | None:
    if not isinstance(entry, dict) or not isinstance(entry.get("path"), str):
        return "a manifest entry without a path"
    size, digest, mtime = entry.get("size"), entry.get("sha256"), entry.get("mtime")
    if not isinstance(size, int) or isinstance(size, bool) or size < 0:
        return "a manifest entry whose size is not a whole number of bytes"
    if not isinstance(digest, str) or not SHA256.fullmatch(digest):
        return "a manifest entry without a sha256"
    if not isinstance(mtime, (int, float)) or isinstance(mtime, bool) or not math.isfinite(mtime) \
            or abs(mtime) > 1e11:
        return "a manifest entry whose mtime is not a time"
    if "damaged" in entry and not isinstance(entry["damaged"], str):
        return "a manifest entry whose 'damaged' note is not text"
    if "sqlite" in entry and entry["sqlite"] is not True:
        return "a manifest entry whose 'sqlite' mark is not true"
    return layout_reason(entry["path"], roots)


# ---------------------------------------------------------------- streaming members


class Budget:
    """The bytes an archive may still yield: the manifest's total."""

    def __init__(self, total: int) -> None:
        self.left = total

    def take(self, size: int) -> bool:
        if size > self.left:
            return False
        self.left -= size
        return True


def copy_member(source: IO[bytes], size: int, sink: Callable[[bytes], Any] | None = None) -> tuple[int, str]:
    """Stream at most ``size`` bytes (and one more, to notice a longer member) through sha256 into ``sink``."""
    digest = hashlib.sha256()
    done = 0
    while done <= size:
        chunk = source.read(min(CHUNK, size + 1 - done))
        if not chunk:
            break
        done += len(chunk)
        if done > size:
            break
        digest.update(chunk)
        if sink is not None:
            sink(chunk)
    return done, digest.hexdigest()


# ---------------------------------------------------------------- verify


@dataclass
class Problem:
    path: str
    problem: str
    kind: Literal["unsafe", "mismatch", "damaged", "missing", "broken", "store"]  # store: a Chroma dir that fails

    def to_json(self) -> dict[str, str]:
        return {"path": self.path, "problem": self.problem}


def check_archive(archive: Path, manifest: dict[str, Any], files: list[dict[str, Any]],
                  progress: Progress = None) -> list[Problem]:
    """Every member against the manifest, streamed: present, regular, in the layout, same size, same sha256."""
    expected = {f["path"]: f for f in files}
    roots = roots_of(manifest)
    budget = Budget(sum(f["size"] for f in files))
    problems: list[Problem] = []
    seen: set[str] = set()
    current = MANIFEST
    stores = chroma.Check(manifest)
    try:
        with open_archive(archive) as tar:
            for count, member in enumerate(tar):
                current = member.name
                if count == 0 and member.name == MANIFEST:  # read and checked already
                    continue
                if count > len(expected) + EXTRA_MEMBERS:
                    problems.append(Problem(member.name, "more entries than the manifest lists; stopped reading",
                                            "unsafe"))
                    break
                problem = _member_problem(tar, member, roots, expected, seen, budget, stores)
                if problem:
                    problems.append(problem)
                    stores.failed(member.name)
                if progress:
                    progress(len(seen), len(expected))
    except DAMAGE as exc:
        problems.append(Problem(current, f"archive damaged while reading this entry ({exc})", "broken"))
    for path, entry in expected.items():
        if path not in seen and not any(p.path == path for p in problems):
            problems.append(Problem(path, "missing from the archive", "missing"))
        elif isinstance(entry.get("damaged"), str):
            problems.append(Problem(path, f"did not parse when it was backed up: {entry['damaged']}", "damaged"))
    missing = {p.path for p in problems}
    problems += [Problem(store, problem, "store") for store, problem in stores.problems(missing)]
    return problems


def _member_problem(tar: tarfile.TarFile, member: tarfile.TarInfo, roots: set[str], expected: dict[str, Any],
                    seen: set[str], budget: Budget, stores: chroma.Check) -> Problem | None:
    reason = member_reason(member, roots)
    if reason:
        return Problem(member.name, f"unsafe entry: {reason}", "unsafe")
    if member.name in seen:
        return Problem(member.name, "unsafe entry: in the archive twice", "unsafe")
    want = expected.get(member.name)
    if want is None:
        return Problem(member.name, "not in the manifest", "mismatch")
    seen.add(member.name)
    if member.size > want["size"]:
        return Problem(member.name, f"larger than its manifest size ({member.size} > {want['size']} bytes); "
                                    "not read", "mismatch")
    if not budget.take(want["size"]):
        return Problem(member.name, "more data than the manifest's total; not read", "mismatch")
    if (want.get("sqlite") or is_database(member.name)) and "damaged" not in want:
        return _database_problem(tar.extractfile(member), member.name, want)
    if chroma.store_of(member.name) is not None:  # copied aside, to be opened once all of its store is there
        with stores.sink(member.name) as handle:
            size, digest = copy_member(tar.extractfile(member), want["size"], handle.write)
    else:
        size, digest = copy_member(tar.extractfile(member), want["size"])
    if size != want["size"] or digest != want["sha256"]:
        return Problem(member.name, "checksum mismatch", "mismatch")
    return None


def is_database(name: str) -> bool:
    """A store's database (``sessions.db``, ``sessions_index.db``, ``learn/learn.db``) by its path in the archive,
    marked as a snapshot or not: restore puts it where the stores open it, so it is checked as one either way."""
    return (name.startswith(ROOT_NAMES[SESSIONS].prefix) and name.rpartition("/")[2] in DATABASES
            or name == ROOT_NAMES[LEARN].prefix + LEARN_DB)


def _database_problem(source: IO[bytes], name: str, want: dict[str, Any]) -> Problem | None:
    """A database: its checksum, then ``quick_check`` and the store's schema (:func:`sqlite.schema_problem`)
    on a private copy opened read-only. Damage is a damaged file; a schema that is not the store's (a view or
    trigger, other tables) is an unsafe entry, which restore refuses the whole archive for."""
    with tempfile.TemporaryDirectory(prefix="praisonmem-") as private:
        copy = Path(private) / "check.db"
        with open(copy, "wb") as handle:
            size, digest = copy_member(source, want["size"], handle.write)
        if size != want["size"] or digest != want["sha256"]:
            return Problem(name, "checksum mismatch", "mismatch")
        damage = sqlite.quick_check(copy)
        if damage is not None:
            return Problem(name, f"the database fails its check ({damage})", "damaged")
        problem = sqlite.schema_problem(copy, name.rpartition("/")[2])
    return None if problem is None else Problem(name, f"unsafe entry: {problem}; not a store as its library "
                                                      "writes it", "unsafe")


def verify(archive: str | os.PathLike[str], progress: Progress = None) -> dict[str, Any]:
    """Check an archive without writing anything; damage, unsafe entries and mismatches are named."""
    archive = Path(archive)
    try:
        manifest = read_manifest(archive)
        files = checked_files(manifest)
    except BadEntry as exc:
        return {"file": str(archive), "ok": False, "files": 0, "created_at": None,
                "problems": [{"path": exc.path, "problem": f"unsafe entry: {exc.reason}"}]}
    except Refused as exc:  # unreadable or not a backup: a failed check, like any other damage
        return {"file": str(archive), "ok": False, "files": 0, "created_at": None,
                "problems": [{"path": str(archive), "problem": exc.message.split(": ", 1)[-1]}]}
    problems = check_archive(archive, manifest, files, progress)
    return {"file": str(archive), "ok": not problems, "files": len(files),
            "problems": [p.to_json() for p in problems], "created_at": manifest.get("created_at")}
