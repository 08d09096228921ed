"""The praisonai CLI's REPL/TUI ("unified") sessions (praisonai 4.7.19): ``sessions/<id>.json`` beside the JSON
store's files, recognised by their keys (:func:`~praisonmem.core.sessions.documents.is_unified`).

Their writer locks the data file itself (``flock``) and rewrites it in place (``json.dumps(indent=2)``, ASCII
escapes): :class:`UnifiedStore` does the same, so a TUI waiting on the lock never writes into an unlinked inode;
an atomic rename would lose its update. Its loader rejects unknown keys, so a write keeps exactly the unified
keys. A retitle and a delete are done in that protocol; a rename is refused (the TUI names a session by its file,
keeps the same id in its project store and in its forks' ``parent_id``/``children_ids``, and has no rename of
its own). ``.last_session`` (the id ``/continue`` resumes) is read, never changed. The JSON store's scan of
``sessions/`` hands these files over (:meth:`~.home.Home.scan`), so the directory is read once.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from praisonmem.core.errors import (AmbiguousName, CorruptFile, NotFound, NotRegularFile, PraisonMemError, Refused,
                                    io_failure)
from praisonmem.core.io import jsonfile
from praisonmem.core.io.inputfile import file_kind
from praisonmem.core.layout import JSON, LAST_SESSION
from praisonmem.core.sessions.documents import UNIFIED_KEYS, is_unified, session_id_of, validate
from praisonmem.core.sessions.stores import Fold, PlainStore, Scanned
from praisonmem.core.sessions.stores.names import UNIFIED
from praisonmem.core.sessions.stores.projects import read_text

if TYPE_CHECKING:
    from praisonmem.core.sessions.stores.index import IndexWriter

A = TypeVar("A")


def unified_bytes(doc: dict[str, Any]) -> bytes:
    """``UnifiedSessionStore._write_json_locked``'s serialisation: two-space indent, ASCII escapes, no newline."""
    return json.dumps(doc, indent=2).encode("utf-8")


def _looks_unified(raw: bytes) -> bool:
    """Cheap necessary condition before parsing: both keys a unified document must have appear, or a ``\\u``
    escape may spell them (the JSON store's scan hands over such a document by its parsed keys, so this store
    must find it too)."""
    return (b'"current_model"' in raw and b'"workspace"' in raw) or b"\\u" in raw


def read_unified(path: Path | str) -> dict[str, Any] | None:
    """The unified document in ``path``, ``None`` when the file holds something else, is gone or cannot be read
    (the JSON store reports those)."""
    try:
        raw = jsonfile.read_bytes(path)
    except PraisonMemError:
        return None
    if not _looks_unified(raw):
        return None
    try:
        doc = jsonfile.parse(raw, path)
    except CorruptFile:
        return None
    return doc if is_unified(doc) else None


def naive_local_seconds(value: Any) -> float | None:
    """A unified timestamp (``datetime.now().isoformat()``: local time, no zone) in epoch seconds."""
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    return moment.timestamp()  # a naive datetime is local time to .timestamp(), as it was written


def last_session(directory: Path) -> str | None:
    """The id in ``.last_session`` (what the TUI's ``/continue`` resumes)."""
    try:
        return read_text(directory / LAST_SESSION).strip() or None
    except (OSError, UnicodeDecodeError):
        return None


@dataclass(frozen=True)
class UnifiedStore(PlainStore):
    """The REPL/TUI sessions in ``sessions/``. A ref is the file's path (``<session_id>.json``, not sanitised), a
    ``str`` as the JSON store's (whose scan of the same directory hands these files over, see :meth:`~.home.Home.scan`)."""

    directory: Path
    label: str = UNIFIED

    # naming
    def ref(self, session_id: str, *, beside: str | None = None) -> str:
        if beside is not None:
            raise Refused(f"{self.name(beside)} is a REPL/TUI session: the TUI names it by its file and keeps the same id "
                          "in its project store and in its forks' parent_id/children_ids, so praisonmem does not "
                          "rename it (set its title with --title); nothing changed")
        return os.path.join(self.directory, f"{session_id}{JSON}")

    def name(self, ref: str) -> str:
        return os.path.basename(ref)[: -len(JSON)]

    def session_id(self, ref: str, doc: dict[str, Any]) -> str:
        return session_id_of(doc, self.name(ref))

    # reading
    def refs(self) -> list[str]:
        return [p for p in self._files() if read_unified(p) is not None]

    def _files(self) -> list[str]:
        from praisonmem.core.sessions.stores.jsondir import session_paths

        return session_paths(self.directory)

    def exists(self, ref: str) -> bool:
        return self._contains(ref) and read_unified(ref) is not None

    def _contains(self, ref: str) -> bool:
        """``ref`` is a file directly in the sessions dir: the TUI names a file by the raw id, so an id holding a
        ``/`` or ``..`` (a session of another store, an import) would name a file elsewhere, which is no REPL/TUI
        session of this home."""
        from praisonmem.core.sessions.stores.jsondir import directly_in

        return directly_in(ref, self.directory) == os.fspath(ref)

    def absent(self) -> str | None:
        return None if self.directory.is_dir() else f"no sessions directory at {self.directory}"

    def find(self, name: str, *, allow_prefix: bool = False) -> str:
        """A REPL/TUI session by its file's name (its id), a unique prefix of it, or a path to the file, which must
        be directly in the sessions dir (:func:`~.jsondir.claimed_path`) and a session document."""
        from praisonmem.core.sessions.stores.jsondir import claimed_path, refuse_non_session

        if not name:
            raise NotFound("no session named ''")
        claimed = claimed_path(name, self.directory)
        if claimed is not None:
            if read_unified(claimed) is None:  # the JSON store's file (or nobody's: that store refuses it)
                raise NotFound(f"{claimed}: not a REPL/TUI session")
            refuse_non_session(claimed)
            return claimed
        if "/" not in name and read_unified(self.ref(name)) is not None:
            return self.ref(name)
        if allow_prefix and "/" not in name:
            matches = [p for p in self.refs() if os.path.basename(p).startswith(name)]
            if len(matches) == 1:
                return matches[0]
            if matches:
                raise AmbiguousName(f"'{name}' matches several REPL/TUI sessions: "
                                    + ", ".join(os.path.basename(p) for p in matches[:10]))
        raise NotFound(f"no REPL/TUI session '{name}' in {self.directory}")

    def read(self, ref: str) -> dict[str, Any]:
        return self.parse(ref, self.read_bytes(ref))

    def read_bytes(self, ref: str) -> bytes:
        return jsonfile.read_bytes(ref)

    def parse(self, ref: str, raw: bytes) -> dict[str, Any]:
        doc = jsonfile.parse_object(raw, ref)
        if not is_unified(doc):
            raise CorruptFile(str(ref), "no longer a REPL/TUI session")
        return validate(doc, ref)

    def scan(self, fold: Fold[A], *, progress: Callable[[int, int], None] | None = None, memo: Any = None) -> A:
        """``fold`` over every session (few files: never remembered, so ``memo`` is not used). In a home, the JSON
        store's scan of the directory hands these files to ``fold`` instead (:meth:`~.home.Home.scan`)."""
        acc = fold.empty()
        for path in self._files():
            doc = read_unified(path)
            if doc is not None:
                try:
                    acc = fold.add(acc, Scanned(path, self.session_id(path, doc), validate(doc, path), None, ref=path,
                                                store=self.label))
                except PraisonMemError as exc:
                    acc = fold.add(acc, Scanned(path, None, None, exc, ref=path, store=self.label))
        return acc

    def holds(self, ref: str, doc: dict[str, Any]) -> bool:
        try:
            return jsonfile.read_bytes(ref) == unified_bytes(doc)
        except NotFound:
            return False

    def seconds_since_write(self, ref: str, doc: dict[str, Any], now: float) -> float | None:
        stamp = naive_local_seconds(doc.get("updated_at"))
        return None if stamp is None else now - stamp

    # writing
    @contextmanager
    def transaction(self, refs: Sequence[str], timeout: float = jsonfile.LOCK_TIMEOUT
                    ) -> Iterator[UnifiedTransaction]:
        """``flock(LOCK_EX)`` on each data file itself, in sorted order, as ``UnifiedSessionStore.save`` locks; a
        ref that is not a file directly in the sessions dir (:meth:`_contains`) is refused before anything opens."""
        for ref in refs:
            if not self._contains(ref):
                raise Refused(f"{ref}: not a file directly in {self.directory}, so no REPL/TUI session of this home; "
                              "nothing changed")
        with ExitStack() as stack:
            handles = {ref: stack.enter_context(_flocked(ref, timeout)) for ref in sorted(set(refs))}
            tx = UnifiedTransaction(self, handles)
            try:
                yield tx
            except BaseException:
                tx._finish(failed=True)
                raise
            tx._finish()


@contextmanager
def _flocked(path: Path, timeout: float) -> Iterator[int | None]:
    """An fd on ``path`` holding ``flock(LOCK_EX)`` (``None``: the file is gone); never creates the file."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except (FileNotFoundError, ValueError):  # ValueError: a name no file can have (a lone surrogate, a NUL)
        yield None
        return
    except OSError as exc:
        raise io_failure(path, exc, "cannot lock") from exc
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):  # O_NONBLOCK above: a pipe put there is opened, never waited on
            raise NotRegularFile(str(path), f"is {file_kind(mode)}, not a regular file")
        jsonfile.flock_polled(fd, path, timeout, f"{path}: could not lock it within {timeout:g}s (the TUI may be "
                                                 "writing it); nothing changed")
        yield fd
    finally:
        os.close(fd)  # releases the lock


@contextmanager
def file_lock(path: Path, timeout: float = jsonfile.LOCK_TIMEOUT) -> Iterator[None]:
    """Every writer of a session file locked out: the JSON store's sidecar lock and ``LOCK_EX`` on the file itself,
    which the REPL/TUI writer takes to rewrite a file in place (so none is half-way through it); what replacing a
    session file from outside takes (a restore)."""
    with jsonfile.locked(path, timeout):
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except FileNotFoundError:
            yield
            return
        except OSError as exc:
            raise io_failure(path, exc, "cannot lock") from exc
        try:
            jsonfile.flock_polled(fd, path, timeout, f"{path}: a writer has held it locked for over {timeout:g}s; "
                                                     "not restored")
            yield
        finally:
            os.close(fd)


class UnifiedTransaction:
    """Changes to unified files whose locks are held: read, rewrite in place, delete; the index follows."""

    def __init__(self, store: UnifiedStore, handles: dict[str, int | None]) -> None:
        self.store = store
        self.handles = handles
        self.index: IndexWriter | None = None
        self.notes: list[str] = []

    def _fd(self, ref: str) -> int | None:
        if ref not in self.handles:
            raise Refused(f"{ref}: not locked by this transaction")
        return self.handles[ref]

    def exists(self, ref: str) -> bool:
        return self._fd(ref) is not None and os.path.isfile(ref)

    def read(self, ref: str) -> dict[str, Any] | None:
        fd = self._fd(ref)
        if fd is None or not os.path.isfile(ref):
            return None
        os.lseek(fd, 0, os.SEEK_SET)
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return self.store.parse(ref, b"".join(chunks))

    def _begin_index(self) -> IndexWriter | None:
        from praisonmem.core.sessions.stores.index import IndexWriter

        if self.index is None:
            self.index = IndexWriter.of(self.store.directory)
        if self.index is not None:
            self.index.begin()
        return self.index

    def write(self, ref: str, doc: dict[str, Any]) -> None:
        """Rewrite in place, as ``UnifiedSessionStore.save`` does (``updated_at`` = local now); only a unified
        document with exactly its keys, since its loader fails on any other."""
        fd = self._fd(ref)
        if fd is None:
            raise NotFound(f"{ref}: the session disappeared while praisonmem was waiting for its lock")
        if not is_unified(doc):
            raise Refused(f"{ref}: a REPL/TUI session can only hold its own keys ({', '.join(UNIFIED_KEYS)}); "
                          "writing another kind of session over it would make it unloadable for the TUI; "
                          "nothing changed")
        current = self.read(ref)
        from praisonmem.core.sessions.crypto import unsealed

        problem = unsealed(current, doc)
        if problem:
            raise Refused(f"{ref}: {problem}; nothing changed")
        doc = {**doc, "updated_at": datetime.now().isoformat()}
        index = self._begin_index()
        data = unified_bytes(doc)
        new_id = self.store.session_id(ref, doc)
        old_id = self.store.session_id(ref, current) if current is not None else new_id
        if index is not None:  # the index first, as for a JSON session file (jsondir.Transaction)
            if old_id != new_id:
                index.forget(old_id)
            index.put(new_id, doc)
            index.settle()
        try:
            os.lseek(fd, 0, os.SEEK_SET)
            os.ftruncate(fd, 0)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        except BaseException as exc:
            self._resync(ref, old_id, new_id)
            if isinstance(exc, OSError):
                raise io_failure(ref, exc, "write failed") from exc
            raise

    def delete(self, ref: str) -> None:
        """Remove the file, as ``UnifiedSessionStore.delete`` does (under its lock, which that one does not take)."""
        current = self.read(ref)
        if current is None:
            raise NotFound(f"{ref}: no such file")
        index = self._begin_index()
        sid = self.store.session_id(ref, current)
        if index is not None:
            index.forget(sid)
            index.settle()
        try:
            jsonfile.delete_locked(ref)
        except BaseException:
            self._resync(ref, sid)
            raise

    def _resync(self, ref: str, *ids: str) -> None:
        """After a file change that failed: the rows of ``ids`` as the file is now (best effort, else a note)."""
        if self.index is None:
            return
        try:
            now = self.read(ref) if os.path.isfile(ref) else None
            for sid in dict.fromkeys(ids):
                self.index.forget(sid)
            if now is not None:
                self.index.put(self.store.session_id(ref, now), now)
            self.index.settle()
        except PraisonMemError as exc:
            self.notes.append(f"the search index could not be put back in step with {os.path.basename(ref)} "
                              f"({exc.message}); 'praisonmem check' reports its rows")

    def carry_spill(self, old_id: str, new_id: str, *, keep: bool = False) -> None:
        return None

    def read_bytes(self, ref: str) -> bytes | None:
        """The file's bytes now (``None``: gone), read through the held lock's descriptor."""
        fd = self._fd(ref)
        if fd is None or not os.path.isfile(ref) or self.read(ref) is None:
            return None
        os.lseek(fd, 0, os.SEEK_SET)
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)

    def write_raw(self, ref: str, raw: bytes) -> None:
        """The document in ``raw``, written as the TUI serialises it (the store's own layout: a unified file copied
        from another is byte-identical)."""
        self.write(ref, self.store.parse(ref, raw))

    def rewrite_spill(self, session_id: str, change: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
        """Nothing: the praisonai CLI's stores have no spill dir."""

    def drop_spill(self, ref: Any) -> str | None:
        """Nothing: the praisonai CLI's stores have no spill dir."""
        return None

    def forget_replaced(self) -> None:
        """Nothing: a rewritten file holds only its new bytes (no free page or journal keeps the old ones)."""

    def _finish(self, *, failed: bool = False) -> None:
        if self.index is None:
            return
        if failed:  # rows of a step whose file never changed; settled steps stand, as their files do
            self.index.rollback()
            return
        self.notes += self.index.commit()
