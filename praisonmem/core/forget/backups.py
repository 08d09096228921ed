"""The subject in praisonmem's backups: which archives still hold them, and rewriting those without them.

::

    holding(subject, plans, backup_dirs, *, roots=(), key=None) -> list[Held]
    rewrite(held, subject, plans, *, stores_for, key=None) -> Rewritten

:func:`holding` looks at every praisonmem backup: the archives ``backup list`` lists in each of
``backup_dirs`` (the configured one first), and every ``*.tar.gz`` under ``roots`` whose manifest says it
is a praisonmem backup. An archive holds the subject when a member is one of the subject's files (the
file it was backed up from is one of the plans' files and is gone now: the forget removed it whole) or
a member's bytes contain one of the needles :mod:`.proof` looks for in the stores' files (the erased
records' texts and the subject's identifier, in every form; encrypted values decrypted with ``key``). Members are decompressed and streamed, with the checks ``backup verify`` makes of an
untrusted archive (:mod:`praisonmem.core.backup.archive`: regular files in the layout only, sizes and
the total bounded by the manifest, bounded headers), so a crafted archive neither escapes nor fills
memory. A :class:`Held` names the archive and each member with the key of the record that matched (never
the text); an archive of a backup directory that cannot be read is a ``Held`` with ``problem`` set (it
could not be checked); a ``.tar.gz`` under a root that is not a praisonmem backup is none of this
module's business.

:func:`rewrite` (``forget --include-backups``) writes a new archive without the subject: the archive is
checked whole and extracted into a private temporary directory laid out as ``backup restore --to DIR``
lays it out (``DIR/home/sessions/…``, ``DIR/home/state/session_spill/…``, ``DIR/home/learn/…``,
``DIR/memory/<user>/…``, ``DIR/project/chroma_db…/``); ``stores_for(DIR)`` returns the
:class:`~.model.ForgetStore` objects of that tree (the caller builds them with the same adapter modules
the forget used, over a ``Where`` of ``DIR``: a home ``DIR/home`` whose state dir is ``DIR/home/state``,
the FileMemory dir ``DIR/memory``, the project dir ``DIR/project``); a store not under ``DIR`` is left
alone. Each plans and erases there through its own protocol, then must find nothing again. Then
the new archive is written member by member in the old order: a member the erase removed is dropped, a
member it changed gets its new bytes (same name, mode and mtime), every other member is copied byte for
byte with its header; the manifest keeps every field and gets the new sizes and digests. The new archive
is verified with ``backup verify``'s code and found free of the needles, then renamed over the old one
(same mode), and the old archive's bytes are overwritten with zeros through a descriptor held open
across the rename (no other name can reach them then, and a crash before the rename leaves the old
archive whole), so no copy is left behind in the backup directory; a second hard link to the old
archive would keep its bytes, and is said. The private directory's files are overwritten before they
are removed. An archive that fails any step, or changed while it was rewritten, is left as it was.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import secrets
import shutil
import stat
import tarfile
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, Any

from praisonmem.core.backup import (DAMAGE, EXTRA_MEMBERS, LEVEL, MANIFEST, BadEntry, Budget, check_archive,
                                    checked_files, member_reason, open_archive, quoted_entry, read_manifest, roots_of,
                                    verify)
from praisonmem.core.errors import PraisonMemError, Refused
from praisonmem.core.forget import proof
from praisonmem.core.forget.model import ForgetStore, StorePlan, Subject
from praisonmem.core.layout import ROOTS
from praisonmem.core.io.safetext import plural

CHUNK = 1 << 20
NAMED_PREFIX = "praisonmem-backup-"
SUFFIX = ".tar.gz"


@dataclass(frozen=True)
class HeldMember:
    """One member of an archive that holds the subject: ``why`` names the record key or the path rule."""

    name: str
    why: str


@dataclass
class Held:
    """One archive that holds the subject (``members``), or that could not be checked (``problem``);
    ``unchecked`` names members whose encrypted values could not be checked (no session key)."""

    archive: Path
    members: list[HeldMember] = field(default_factory=list)
    problem: str | None = None
    unchecked: list[str] = field(default_factory=list)


@dataclass
class Rewritten:
    """One archive rewritten: the members dropped and rewritten; ``problem`` when it was left as it was;
    ``notes`` what the caller should know (another link to the old archive)."""

    archive: Path
    dropped: list[str] = field(default_factory=list)
    rewritten: list[str] = field(default_factory=list)
    problem: str | None = None
    notes: list[str] = field(default_factory=list)


# ---------------------------------------------------------------- which archives hold the subject


def holding(subject: Subject, plans: Sequence[StorePlan], backup_dirs: Sequence[Path], *,
            roots: Sequence[Path] = (), key: Any = None) -> list[Held]:
    """Every praisonmem backup that still holds the subject, or could not be checked."""
    texts = proof.texts_of(subject, plans)
    cipher = proof.cipher_of(key)
    gone = _gone_files(plans)
    out: list[Held] = []
    for path, listed in _archives(backup_dirs, roots):
        held = scan_archive(path, texts, gone, cipher, listed=listed)
        if held is not None and (held.members or held.problem or held.unchecked):
            out.append(held)
    return out


def _gone_files(plans: Sequence[StorePlan]) -> frozenset[str]:
    """The plans' files that no longer exist: the forget removed them whole, so they were the subject's alone."""
    return frozenset(os.path.abspath(p) for plan in plans for p in plan.files
                     if not os.path.lexists(p) and not plan.unreachable)


def _archives(backup_dirs: Sequence[Path], roots: Sequence[Path]) -> list[tuple[Path, bool]]:
    """``(archive, listed)``: the backups ``backup list`` lists in each backup dir (listed), then every other
    ``.tar.gz`` under the roots (no link followed, what locate skips skipped); each file once."""
    seen: set[tuple[int, int]] = set()
    out: list[tuple[Path, bool]] = []

    def add(path: str, listed: bool) -> None:
        try:
            st = os.stat(path, follow_symlinks=False)
        except OSError:
            return
        if stat.S_ISREG(st.st_mode) and (st.st_dev, st.st_ino) not in seen:
            seen.add((st.st_dev, st.st_ino))
            out.append((Path(path), listed))

    for directory in backup_dirs:
        try:
            names = sorted(os.listdir(directory))
        except OSError:
            continue
        for name in names:
            if name.startswith(NAMED_PREFIX) and name.endswith(SUFFIX):
                add(os.path.join(directory, name), True)
    swept = proof.Swept()
    for path in proof.walk(proof.tops(roots), set(), set(), swept):
        if path.endswith(SUFFIX):
            add(path, False)
    return out


def _source_of(name: str, manifest: dict[str, Any]) -> str | None:
    """The file a member was backed up from (the manifest's root joined with its path below the root)."""
    roots = manifest.get("roots") if isinstance(manifest.get("roots"), dict) else {}
    for root in ROOTS:
        if name.startswith(root.prefix) and isinstance(roots.get(root.name), str):
            return os.path.abspath(os.path.join(roots[root.name], *name[len(root.prefix):].split("/")))
    return None


def member_blocks(source: IO[bytes], size: int) -> Iterator[bytes]:
    """At most ``size`` bytes of a member, block by block (a longer member was refused before: its tar header
    says its size, and tarfile never yields more than that)."""
    left = size
    while left > 0:
        block = source.read(min(CHUNK, left))
        if not block:
            return
        left -= len(block)
        yield block


def scan_archive(path: Path, texts: proof.Texts, gone: frozenset[str], cipher: Any, *,
                 listed: bool = True) -> Held | None:
    """What of the subject one archive holds; ``None`` when it is not a praisonmem backup and was not listed
    as one. Read as ``backup verify`` reads an untrusted archive: the manifest first, then regular members in
    the layout only, each within its manifest size and all within the manifest's total."""
    held = Held(path)
    try:
        manifest = read_manifest(path)
        files = checked_files(manifest)
    except BadEntry as exc:
        held.problem = exc.message
        return held
    except PraisonMemError as exc:
        if not listed:
            return None
        held.problem = exc.message
        return held
    expected = {f["path"]: f for f in files}
    roots = roots_of(manifest)
    budget = Budget(sum(f["size"] for f in files))
    seen: set[str] = set()
    current = MANIFEST
    try:
        with open_archive(path) as tar:
            for count, member in enumerate(tar):
                current = member.name
                if count == 0 and member.name == MANIFEST:
                    continue
                problem = _unsafe(member, roots, expected, seen, budget, count)
                if problem:
                    held.problem = f"{path}: {problem}; not read further"
                    return held
                seen.add(member.name)
                _scan_member(tar, member, expected[member.name], manifest, texts, gone, cipher, held)
    except DAMAGE as exc:
        held.problem = f"{path}: damaged at {quoted_entry(current)} ({exc})"
    return held


def _unsafe(member: tarfile.TarInfo, roots: set[str], expected: dict[str, Any], seen: set[str], budget: Budget,
            count: int) -> str | None:
    if count > len(expected) + EXTRA_MEMBERS:
        return "more entries than the manifest lists"
    reason = member_reason(member, roots)
    if reason:
        return f"unsafe entry {quoted_entry(member.name)}: {reason}"
    if member.name in seen:
        return f"unsafe entry {quoted_entry(member.name)}: in the archive twice"
    want = expected.get(member.name)
    if want is None:
        return f"{quoted_entry(member.name)} is not in the manifest"
    if member.size > want["size"] or not budget.take(want["size"]):
        return f"{quoted_entry(member.name)} is larger than the manifest says"
    return None


def _scan_member(tar: tarfile.TarFile, member: tarfile.TarInfo, want: dict[str, Any], manifest: dict[str, Any],
                 texts: proof.Texts, gone: frozenset[str], cipher: Any, held: Held) -> None:
    source = _source_of(member.name, manifest)
    if source is not None and source in gone:
        held.members.append(HeldMember(member.name, "the subject's file (the forget removed it whole)"))
        return
    handle = tar.extractfile(member)
    scan = proof.scan_stream(member_blocks(handle, min(member.size, want["size"])), texts, utf16=None,
                             short_ids=True, cipher=cipher, where=f"{held.archive}: {member.name}")
    if scan.hits:
        held.members.append(HeldMember(member.name, proof.describe(member.name, scan.hits)))
    elif scan.sealed:
        held.unchecked.append(f"{member.name}: {scan.sealed}")


# ---------------------------------------------------------------- rewriting one


class Failed(Exception):
    """Why an archive is left as it was."""


def rewrite(held: Held, subject: Subject, plans: Sequence[StorePlan], *,
            stores_for: Callable[[Path], Sequence[ForgetStore]], key: Any = None) -> Rewritten:
    """``held``'s archive rewritten without the subject, verified, then put in the old one's place."""
    result = Rewritten(held.archive)
    if held.problem:
        result.problem = f"not rewritten: {held.problem}"
        return result
    try:
        _rewrite(held.archive, subject, plans, stores_for, proof.cipher_of(key), result)
    except Failed as exc:
        result.dropped, result.rewritten = [], []
        result.problem = f"{held.archive}: left as it was: {exc}"
    return result


def _rewrite(path: Path, subject: Subject, plans: Sequence[StorePlan],
             stores_for: Callable[[Path], Sequence[ForgetStore]], cipher: Any, result: Rewritten) -> None:
    before = _identity(path)
    try:
        manifest = read_manifest(path)
        files = checked_files(manifest)
    except PraisonMemError as exc:
        raise Failed(exc.message) from None
    problems = check_archive(path, manifest, files)
    if problems:
        raise Failed(f"it fails its check ({quoted_entry(problems[0].path)}: {problems[0].problem})")
    with private_dir() as tree:
        _extract(path, files, tree)
        erased = _erase_in(tree, subject, stores_for)
        texts = proof.texts_of(subject, [*plans, *erased])
        entries, dropped, changed = _changes(tree, files)
        if not dropped and not changed:
            raise Failed("the stores found nothing of the subject to erase in it (what holds the subject is out of "
                         "their reach)")
        new_manifest = dict(manifest, files=entries, rewritten_at=datetime.now(timezone.utc).isoformat())
        if "chroma" in manifest and any(_chroma_of(n) for n in (*dropped, *changed)):
            new_manifest["chroma"] = _chroma_counts(tree, manifest["chroma"])
        temp = path.with_name(f".{path.name}.forget-{os.getpid()}-{secrets.token_hex(4)}.tmp")
        try:
            _write(path, temp, tree, new_manifest, dropped, changed)
            _check_new(temp, texts, _gone_files(plans), cipher)
            if _identity(path) != before:
                raise Failed("it changed while it was rewritten")
            result.notes += _replace(path, temp, before)
        finally:
            if os.path.lexists(temp):
                _scrub(temp)
    result.dropped, result.rewritten = dropped, changed


def _identity(path: Path) -> tuple[int, int, int, int, int]:
    try:
        st = os.stat(path, follow_symlinks=False)
    except OSError as exc:
        raise Failed((exc.strerror or type(exc).__name__).lower()) from None
    if not stat.S_ISREG(st.st_mode):
        raise Failed("not a regular file")
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_mode


@contextmanager
def private_dir() -> Iterator[Path]:
    """A new directory only this user can enter; every file in it overwritten with zeros before it goes."""
    tree = Path(tempfile.mkdtemp(prefix="praisonmem-forget-"))
    try:
        yield tree
    finally:
        for here, _, names in os.walk(tree):
            for name in names:
                _scrub(Path(here) / name)
        shutil.rmtree(tree, ignore_errors=True)


def _scrub(path: Path) -> None:
    """Overwrite a regular file with zeros, then remove it (a link or FIFO is only removed)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        fd = None
    if fd is not None:
        try:
            _zero(fd)
        except OSError:
            pass
        finally:
            os.close(fd)
    try:
        os.unlink(path)
    except OSError:
        pass


def _zero(fd: int) -> None:
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        return
    zeros = bytes(CHUNK)
    done = 0
    while done < st.st_size:
        done += os.pwrite(fd, zeros[:min(CHUNK, st.st_size - done)], done)
    os.fsync(fd)


def _extract(path: Path, files: list[dict[str, Any]], tree: Path) -> None:
    """Every member into ``tree`` at its archive path (checked against the layout: no '..', no absolute path),
    each file new (``O_EXCL|O_NOFOLLOW``), within its manifest size, with the manifest's mtime."""
    expected = {f["path"]: f for f in files}
    try:
        with open_archive(path) as tar:
            for count, member in enumerate(tar):
                if count == 0 and member.name == MANIFEST:
                    continue
                want = expected[member.name]  # check_archive passed: every member is one of these
                target = tree.joinpath(*member.name.split("/"))
                target.parent.mkdir(0o700, parents=True, exist_ok=True)
                fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
                with os.fdopen(fd, "wb") as out:
                    for block in member_blocks(tar.extractfile(member), want["size"]):
                        out.write(block)
                os.utime(target, (want["mtime"], want["mtime"]))
    except (*DAMAGE, KeyError) as exc:
        raise Failed(f"cannot read it ({exc})") from None


def _erase_in(tree: Path, subject: Subject, stores_for: Callable[[Path], Sequence[ForgetStore]]) -> list[StorePlan]:
    """Each store of the private tree plans and erases the subject, then must find nothing again."""
    real = os.path.realpath(tree)
    plans: list[StorePlan] = []
    try:
        stores = [s for s in stores_for(tree) if _inside(s.location, real)]
        for store in stores:
            plan = store.plan(subject)
            if plan.unreachable:
                raise Failed(f"{_shown(store.location, tree)} in it could not be read ({plan.unreachable})")
            plans.append(plan)
            if plan.erasures:
                store.erase(plan)
        for store in stores:
            again = store.plan(subject)
            if again.erasures or again.unreachable:
                raise Failed(f"{_shown(store.location, tree)} in it still holds the subject after its erase")
    except PraisonMemError as exc:
        raise Failed(exc.message.replace(str(tree) + os.sep, "")) from None
    _settle(tree)
    return plans


def _inside(location: str, real_tree: str) -> bool:
    real = os.path.realpath(location)
    return real == real_tree or real.startswith(real_tree.rstrip(os.sep) + os.sep)


def _shown(location: str, tree: Path) -> str:
    """A store of the private tree named by its path in the archive."""
    rel = os.path.relpath(location, tree)
    return quoted_entry(rel.replace(os.sep, "/"))


def _settle(tree: Path) -> None:
    """Each database of the tree whole in its own file: frames a store's erase left in a ``-wal`` checkpointed
    into it (the archive holds the database alone, as ``backup create`` takes it)."""
    import sqlite3

    for here, _, names in os.walk(tree):
        for name in names:
            wal = Path(here) / name
            if not name.endswith("-wal") or (Path(here) / name[:-4]).name not in names or wal.stat().st_size == 0:
                continue
            db = sqlite3.connect(Path(here) / name[:-4])
            try:
                db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            finally:
                db.close()


def _changes(tree: Path, files: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[str], list[str]]:
    """The new manifest's file list (old order; a member the erase removed left out, a changed one with its new
    size and digest), the members dropped and the members changed."""
    entries: list[dict[str, Any]] = []
    dropped: list[str] = []
    changed: list[str] = []
    for entry in files:
        target = tree.joinpath(*entry["path"].split("/"))
        try:
            st = os.stat(target, follow_symlinks=False)
        except FileNotFoundError:
            dropped.append(entry["path"])
            continue
        if not stat.S_ISREG(st.st_mode):
            raise Failed(f"a store's erase left {quoted_entry(entry['path'])} as something else than a file")
        size, digest = _digest(target)
        if size == entry["size"] and digest == entry["sha256"]:
            entries.append(entry)
            continue
        changed.append(entry["path"])
        entries.append(dict(entry, size=size, sha256=digest))
    return entries, dropped, changed


def _digest(path: Path) -> tuple[int, str]:
    digest = hashlib.sha256()
    size = 0
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(CHUNK), b""):
            digest.update(block)
            size += len(block)
    return size, digest.hexdigest()


def _chroma_of(name: str) -> str | None:
    from praisonmem.core.backup import chroma_store_of

    return chroma_store_of(name)


def _chroma_counts(tree: Path, listed: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The ``"chroma"`` list with each directory's counts taken again (from a copy: opening rewrites files)."""
    from praisonmem.core.io import chroma as chroma_io

    out = []
    for entry in listed:
        source = tree.joinpath(*entry["path"].rstrip("/").split("/"))
        if not source.is_dir():
            continue
        with private_dir() as scratch:
            shutil.copytree(source, scratch / "c")
            try:
                out.append(dict(entry, collections=chroma_io.opened_counts(scratch / "c")))
            except PraisonMemError as exc:
                raise Failed(f"{quoted_entry(entry['path'])} does not open after the erase ({exc.message})") from None
    return out


def _write(path: Path, temp: Path, tree: Path, manifest: dict[str, Any], dropped: list[str],
           changed: list[str]) -> None:
    """The new archive at ``temp``, as ``backup create`` writes one: the manifest first (a gzip member of its
    own), then the members in the old order (an unchanged one with its very header and bytes), then the end."""
    import gzip

    from praisonmem.core.io.safetext import json_safe

    gone, new = set(dropped), set(changed)
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    with os.fdopen(fd, "wb") as raw:
        with open_archive(path) as tar:
            members = iter(tar)
            head = next(members)
            body = json_safe(json.dumps(manifest, indent=2, ensure_ascii=False)).encode("utf-8")
            info = copy.copy(head)
            info.size = len(body)
            block = _header(info) + body + tarfile.NUL * (-len(body) % tarfile.BLOCKSIZE)
            raw.write(gzip.compress(block, compresslevel=LEVEL, mtime=int(time.time())))
            offset = len(block)
            stream = gzip.GzipFile(filename="", mode="wb", compresslevel=LEVEL, fileobj=raw)
            for member in members:
                if member.name in gone:
                    continue
                if member.name in new:
                    info = copy.copy(member)
                    target = tree.joinpath(*member.name.split("/"))
                    info.size = os.stat(target).st_size
                    with open(target, "rb") as source:
                        offset += _add(stream, info, source)
                else:
                    offset += _add(stream, member, tar.extractfile(member))
            stream.close()
        raw.write(gzip.compress(_end(offset), compresslevel=LEVEL, mtime=int(time.time())))
        raw.flush()
        os.fchmod(raw.fileno(), os.stat(path).st_mode & 0o7777)
        os.fsync(raw.fileno())


def _header(info: tarfile.TarInfo) -> bytes:
    """A member's header as ``backup create`` (and ``TarFile.addfile``) writes it."""
    return info.tobuf(tarfile.DEFAULT_FORMAT, tarfile.ENCODING, "surrogateescape")


def _end(offset: int) -> bytes:
    """The end of a tar stream of ``offset`` bytes: two zero blocks, then zeros up to a whole record."""
    offset += 2 * tarfile.BLOCKSIZE
    return tarfile.NUL * (2 * tarfile.BLOCKSIZE + -offset % tarfile.RECORDSIZE)


def _add(stream: IO[bytes], info: tarfile.TarInfo, source: IO[bytes]) -> int:
    """One member: its header as tarfile writes it, its bytes streamed, NUL padding to a block."""
    header = _header(info)
    stream.write(header)
    done = 0
    for block in member_blocks(source, info.size):
        stream.write(block)
        done += len(block)
    if done != info.size:
        raise Failed(f"{quoted_entry(info.name)} ended early")
    pad = -info.size % tarfile.BLOCKSIZE
    stream.write(tarfile.NUL * pad)
    return len(header) + info.size + pad


def _check_new(temp: Path, texts: proof.Texts, gone: frozenset[str], cipher: Any) -> None:
    """The new archive passes ``backup verify`` and holds nothing of the subject."""
    report = verify(temp)
    if not report["ok"]:
        first = report["problems"][0]
        raise Failed(f"the rewritten archive fails its check ({quoted_entry(first['path'])}: {first['problem']})")
    held = scan_archive(temp, texts, gone, cipher)
    if held is None or held.problem:
        raise Failed(f"the rewritten archive cannot be read ({held.problem if held else 'no manifest'})")
    if held.members:
        first = held.members[0]
        raise Failed(f"the rewritten archive still holds the subject ({quoted_entry(first.name)}: "
                     f"{first.why.removeprefix(first.name + ': ')})")


def _replace(path: Path, temp: Path, before: tuple[int, int, int, int, int]) -> list[str]:
    """``temp`` renamed over ``path``; the old archive's bytes then overwritten through a descriptor opened before
    the rename (a crash before the rename leaves the old archive; after it, no name reaches the old bytes)."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        raise Failed(f"cannot open it to replace it ({(exc.strerror or type(exc).__name__).lower()})") from None
    notes: list[str] = []
    try:
        st = os.fstat(fd)
        if (st.st_dev, st.st_ino) != before[:2]:
            raise Failed("it changed while it was rewritten")
        try:
            os.replace(temp, path)
            directory = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
            try:
                os.fsync(directory)
            finally:
                os.close(directory)
        except OSError as exc:
            raise Failed(f"cannot put the new archive in place ({(exc.strerror or type(exc).__name__).lower()})") \
                from None
        links = os.fstat(fd).st_nlink
        if links:
            notes.append(f"{path}: {plural(links, 'other hard link')} to the old archive still hold its bytes")
        else:
            _zero(fd)
    finally:
        os.close(fd)
    return notes
