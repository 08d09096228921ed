"""The praisonai CLI's own session stores (praisonai 4.7.19, praisonai-code 0.1.16; spec-11 §5).

* **Per-project stores**, ``sessions/projects/<id>/``: ``ProjectSessionStore`` is a
  ``DefaultSessionStore`` on that directory (same files, locks and atomic writes as
  ``sessions/``), so each is a :class:`~.jsondir.JsonDirStore` labelled ``project:<id>``, with its
  own ``sessions_index.db``. :func:`project_identity` says which one belongs to the current
  directory, computed as praisonai-code does but read-only: its own resolver writes pin and id
  files into ``.git``, so it is never called.
* **REPL/TUI ("unified") sessions**, ``sessions/<id>.json`` beside the JSON store's files,
  recognised by their keys (:func:`~praisonmem.core.sessions.documents.is_unified`). Their writer
  locks the data file itself (``flock``) and rewrites it in place (``json.dumps(indent=2)``, ASCII
  escapes): :class:`UnifiedStore` does the same, so a TUI waiting on the lock never writes into an
  unlinked inode; an atomic rename would lose its update. Its loader rejects unknown keys, so a
  write keeps exactly the unified keys. A retitle and a delete are done in that protocol; a
  rename is refused (the TUI names a session by its file, keeps the same id in its project store
  and in its forks' ``parent_id``/``children_ids``, and has no rename of its own). ``.last_session``
  (the id ``/continue`` resumes) is read, never changed.
* **The older run layout**, ``sessions/run_<ts>_<hex>/metadata.json`` + ``events.jsonl``
  (``SessionManager``): listed and shown as sessions whose messages are the events; its name is
  set as ``SessionManager.rename`` does (atomically: it has no lock to share) and a run is deleted
  as ``SessionManager.delete`` does, but only when the directory holds nothing else.
"""

from __future__ import annotations

import io
import json
import os
import re
import stat
import subprocess
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from praisonmem.core.errors import (AmbiguousName, CorruptFile, NotFound, NotRegularFile, PraisonMemError, Refused,
                                    io_failure)
from praisonmem.core.io import jsonfile
from praisonmem.core.io.digest import sha256_hex
from praisonmem.core.io.inputfile import file_kind
from praisonmem.core.sessions.documents import UNIFIED_KEYS, is_unified, session_id_of, validate
from praisonmem.core.sessions.stores import PlainStore, Scanned

if TYPE_CHECKING:
    from praisonmem.core.paths import Paths
    from praisonmem.core.sessions.stores import SessionStore
    from praisonmem.core.sessions.stores.index import IndexWriter

R = TypeVar("R")
UNIFIED = "unified"
RUN = "legacy-run"
PROJECT = "project:"  # + the project id: a per-project store's label
LAST_SESSION = ".last_session"
RUN_KEYS = ("session_id", "run_id", "trace_id", "created_at", "updated_at")  # SessionMetadata.from_dict needs them
GIT_TIMEOUT = 5  # praisonai-code's


def cli_stores(paths: Paths) -> list[SessionStore]:
    """The praisonai CLI's stores in a home: every project directory, the unified files, the run directories
    (members of the home, :func:`~.home.member_stores`). A project store shares the home's spill dir, as the
    library's spill dir is one per home whatever the store."""
    from praisonmem.core.sessions.stores.jsondir import JsonDirStore

    stores: list[SessionStore] = [JsonDirStore(d, paths.spill_dir, paths, label=f"{PROJECT}{d.name}")
                                  for d in project_dirs(paths.sessions_dir)]
    stores += [UnifiedStore(paths.sessions_dir), RunStore(paths.sessions_dir)]
    return stores


def shared_scans(stores: list[SessionStore]) -> list[SessionStore]:
    """The stores a home's scan reads: the REPL/TUI's files are handed over by the JSON store's scan of their
    directory (which reads and parses every file there anyway) instead of each being read a second time (measured:
    the unified store's own pass was 19 % of ``session list`` on 10,000 JSON sessions)."""
    from dataclasses import replace

    from praisonmem.core.sessions.stores.jsondir import JsonDirStore

    unified = {s.directory: s for s in stores if isinstance(s, UnifiedStore)}
    out: list[SessionStore] = []
    for store in stores:
        if isinstance(store, JsonDirStore) and store.foreign is not None and store.directory in unified:
            out.append(replace(store, foreign_label=unified.pop(store.directory).label))
        elif not (isinstance(store, UnifiedStore) and any(isinstance(s, JsonDirStore) and s.foreign is not None
                                                          and s.directory == store.directory for s in stores)):
            out.append(store)
    return out


def project_dirs(sessions_dir: Path) -> list[Path]:
    try:
        with os.scandir(sessions_dir / "projects") as entries:
            return sorted(Path(e.path) for e in entries if e.is_dir(follow_symlinks=False))
    except (FileNotFoundError, NotADirectoryError):
        return []
    except OSError as exc:
        raise io_failure(sessions_dir / "projects", exc) from exc


# ---------------------------------------------------------------- the current project's id, read-only


@dataclass(frozen=True)
class ProjectIdentity:
    """``praisonai_code.cli.utils.project.resolve_project_identity`` for a directory."""

    project_id: str  # the 8 hex digits naming sessions/projects/<id>/
    source: str  # git-remote | root-commit | cached-id | path
    detail: str | None  # the remote, the commit or the path it hashes


def short_hash(value: str) -> str:
    return sha256_hex(value.encode())[:8]


def project_identity(cwd: str | os.PathLike[str] | None = None) -> ProjectIdentity | None:
    """The project id praisonai-code gives ``cwd``: the normalised git remote, else the oldest root commit (its
    pin in ``.git`` wins while it is still a root), else the id cached in ``.git``, else the resolved path.
    ``None`` for a git repository with neither a remote, a commit nor a cached id: praisonai-code would create a
    random one there, so no project store can belong to it yet. Nothing is written."""
    here = Path(os.getcwd() if cwd is None else cwd)
    root = _git_root(here)
    base = root or here
    remote = _remote_identity(base)
    if remote:
        return ProjectIdentity(short_hash(f"git-remote:{remote}"), "git-remote", remote)
    commit = _root_commit(base, root)
    if commit:
        return ProjectIdentity(short_hash(f"root-commit:{commit}"), "root-commit", commit)
    if root is not None:
        cached_path = _git_meta_path(root, "praisonai-project")
        if cached_path is not None:
            try:
                cached = _read_text(cached_path).strip()
            except FileNotFoundError:
                return None
            except OSError:
                cached = ""  # the resolver cannot read it either: it falls through to the path
            if cached:
                return ProjectIdentity(short_hash(f"cached-id:{cached}"), "cached-id", None)
    path = str((root or here).resolve())
    return ProjectIdentity(short_hash(path), "path", path)


def _read_text(path: Path) -> str:
    """A small text file (``Path.read_text``'s errors: FileNotFoundError, OSError, UnicodeDecodeError), read only
    when it is a regular file and without blocking (a named pipe there would hang ``session list``)."""
    try:
        return jsonfile.read_bytes(path).decode("utf-8")
    except NotFound as exc:
        raise FileNotFoundError(exc.message) from exc
    except PraisonMemError as exc:
        raise OSError(exc.message) from exc


def _git(args: list[str], cwd: Path) -> str | None:
    try:
        done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True,
                              timeout=GIT_TIMEOUT)
    except (OSError, subprocess.SubprocessError):
        return None
    out = done.stdout.strip()
    return out or None


def _git_root(path: Path) -> Path | None:
    out = _git(["rev-parse", "--show-toplevel"], path)
    return Path(out) if out else None


def normalize_remote(url: str) -> str | None:
    """praisonai-code's ``normalize_git_remote``: ``host/path`` without scheme, credentials, port or ``.git``."""
    url = url.strip()
    if not url:
        return None
    scp = re.match(r"^[^@/]+@([^:/]+):(.+)$", url)
    if scp:
        host, path = scp.group(1), scp.group(2)
    else:
        m = re.match(r"^[a-zA-Z][a-zA-Z0-9+.\-]*://(?:[^@/]+@)?([^/:]*)(?::\d+)?/(.+)$", url)
        if not m:
            return None
        host, path = m.group(1), m.group(2)
    host, path = host.lower().strip("/"), path.strip("/")
    if path.endswith(".git"):
        path = path[:-4]
    if not path:
        return None
    return f"{host}/{path}" if host else path


def _remote_identity(base: Path) -> str | None:
    url = _git(["remote", "get-url", "origin"], base)
    if not url:
        remotes = _git(["remote"], base)
        first = remotes.splitlines()[0].strip() if remotes else ""
        url = _git(["remote", "get-url", first], base) if first else None
    return normalize_remote(url) if url else None


def _root_commit(base: Path, root: Path | None) -> str | None:
    out = _git(["log", "--max-parents=0", "--all", "--format=%ct %H"], base) or \
        _git(["log", "--max-parents=0", "HEAD", "--format=%ct %H"], base)
    if not out:
        return None
    roots = []
    for line in out.splitlines():
        parts = line.strip().split(None, 1)
        if len(parts) == 2:
            try:
                roots.append((int(parts[0]), parts[1]))
            except ValueError:
                roots.append((1 << 62, parts[1]))
    if not roots:
        return None
    chosen = min(roots)[1]
    pin = _git_meta_path(root, "praisonai-root-commit") if root is not None else None
    if pin is not None:
        try:
            pinned = _read_text(pin).strip()
        except OSError:
            pinned = None
        if pinned in {sha for _, sha in roots}:
            return pinned
    return chosen  # what the resolver would pin


def _git_meta_path(root: Path, name: str) -> Path | None:
    out = _git(["rev-parse", "--git-common-dir"], root) or _git(["rev-parse", "--git-dir"], root)
    if not out:
        return None
    git_dir = Path(out)
    return (git_dir if git_dir.is_absolute() else (root / git_dir).resolve()) / name


# ---------------------------------------------------------------- unified (REPL/TUI) sessions


def unified_bytes(doc: dict[str, Any]) -> bytes:
    """``UnifiedSessionStore._write_json_locked``'s serialisation: two-space indent, ASCII escapes, no newline."""
    return json.dumps(doc, indent=2).encode("utf-8")


def _looks_unified(raw: bytes) -> bool:
    """Cheap necessary condition before parsing: both keys a unified document must have appear."""
    return b'"current_model"' in raw and b'"workspace"' in raw


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
        return _read_text(directory / LAST_SESSION).strip() or None
    except (OSError, UnicodeDecodeError):
        return None


@dataclass(frozen=True)
class UnifiedStore(PlainStore):
    """The REPL/TUI sessions in ``sessions/``. A ref is the file's path (``<session_id>.json``, not sanitised), a
    ``str`` as the JSON store's (whose scan of the same directory hands these files over, see :func:`shared_scans`)."""

    directory: Path
    label: str = UNIFIED

    # naming
    def ref(self, session_id: str, *, beside: str | None = None) -> str:
        if beside is not None:
            raise Refused(f"{self.name(beside)} is a REPL/TUI session: the TUI names it by its file and keeps the same id "
                          "in its project store and in its forks' parent_id/children_ids, so praisonmem does not "
                          "rename it (set its title with --title); nothing changed")
        return os.path.join(self.directory, f"{session_id}.json")

    def name(self, ref: str) -> str:
        return os.path.basename(ref)[: -len(".json")]

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

    def scan(self, fn: Callable[[Scanned], list[R]], *,
             progress: Callable[[int, int], None] | None = None,
             reduce: Callable[[list[R]], list[R]] | None = None,
             memo: Any = None) -> list[R]:
        """``fn`` over every session (few files: never remembered; ``reduce`` at the end). With ``memo``, the files
        the JSON store's scan of this directory has just established as its own are not read again."""
        out: list[R] = []
        for path in self._unclassified(memo):
            doc = read_unified(path)
            if doc is not None:
                try:
                    out += fn(Scanned(path, self.session_id(path, doc), validate(doc, path), None, ref=path,
                                      store=self.label))
                except PraisonMemError as exc:
                    out += fn(Scanned(path, None, None, exc, ref=path, store=self.label))
        return out if reduce is None else reduce(out)

    def _unclassified(self, memo: Any) -> list[str]:
        """The files that may be REPL/TUI sessions: all of them, or (``memo``'s record of the JSON store's scan in
        the same listing, :class:`~praisonmem.core.sessions.listcache.Memo`) those it did not take as its own."""
        classified = getattr(memo, "classified", None)
        found = classified.get((str(self.directory), is_unified)) if classified else None
        if found is None:
            return self._files()
        files, own = found
        return [path for path in files if path not in own]

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


# ---------------------------------------------------------------- the older run layout


def read_run(directory: Path) -> tuple[dict[str, Any], list[Any]]:
    """``metadata.json`` and the events of a run directory, as ``SessionManager`` reads them (lines that do not
    parse are skipped, as its ``get_events`` does)."""
    meta_path = directory / "metadata.json"
    meta = jsonfile.read_object(meta_path)
    missing = [k for k in RUN_KEYS if k not in meta]
    if missing:
        raise CorruptFile(str(meta_path), f"no {', '.join(map(repr, missing))}: praisonai's SessionManager skips it")
    events: list[Any] = []
    try:
        raw = jsonfile.read_bytes(directory / "events.jsonl")  # a regular file only: a pipe there never blocks
        with io.TextIOWrapper(io.BytesIO(raw), encoding="utf-8") as handle:  # the lines open() would give
            for line in handle:
                if line.strip():
                    try:
                        events.append(json.loads(line))
                    except ValueError:
                        continue
    except NotFound:
        pass
    except PraisonMemError as exc:
        raise CorruptFile(str(directory / "events.jsonl"), f"cannot read it: {exc.message}") from exc
    except UnicodeDecodeError as exc:
        raise CorruptFile(str(directory / "events.jsonl"), f"cannot read it: {exc}") from exc
    return meta, events


def run_document(meta: dict[str, Any], events: list[Any]) -> dict[str, Any]:
    """A run as a session document: its events are the messages (``event`` is the role, ``message`` the content,
    ``data`` kept in the message's metadata); ``name`` is the title, ``config_summary.model`` the model."""
    summary = meta.get("config_summary") if isinstance(meta.get("config_summary"), dict) else {}
    messages = [{"role": str(e.get("event", "unknown")), "content": e.get("message", ""),
                 "timestamp": e.get("timestamp"), "metadata": {"data": e["data"]} if e.get("data") else {}}
                for e in events if isinstance(e, dict)]
    metadata = {k: v for k, v in (("title", meta.get("name")), ("model", summary.get("model"))) if v}
    return {"session_id": meta.get("session_id"), "messages": messages, "created_at": meta.get("created_at"),
            "updated_at": meta.get("updated_at"), "metadata": metadata, "workspace": meta.get("workspace"),
            "status": meta.get("status"), "run_id": meta.get("run_id"), "trace_id": meta.get("trace_id")}


@dataclass(frozen=True)
class RunStore(PlainStore):
    """``sessions/<run id>/`` directories of the praisonai CLI's ``SessionManager``. A ref is the directory."""

    directory: Path
    label: str = RUN

    def ref(self, session_id: str, *, beside: Path | None = None) -> Path:
        if beside is not None:
            raise Refused(f"{Path(beside).name} is a praisonai CLI run: its id is its run id and its directory's "
                          "name, which praisonai never changes (set its name with --title); nothing changed")
        return self.directory / session_id

    def name(self, ref: Path) -> str:
        return Path(ref).name

    def session_id(self, ref: Path, doc: dict[str, Any]) -> str:
        return session_id_of(doc, self.name(ref))

    def refs(self) -> list[Path]:
        try:
            with os.scandir(self.directory) as entries:
                dirs = [Path(e.path) for e in entries if e.is_dir(follow_symlinks=False) and e.name != "projects"]
        except (FileNotFoundError, NotADirectoryError):
            return []
        except OSError as exc:
            raise io_failure(self.directory, exc) from exc
        return sorted(d for d in dirs if (d / "metadata.json").is_file())

    def exists(self, ref: Path) -> bool:
        return (Path(ref) / "metadata.json").is_file()

    def absent(self) -> str | None:
        return None if self.directory.is_dir() else f"no sessions directory at {self.directory}"

    def find(self, name: str, *, allow_prefix: bool = False) -> Path:
        """A run by its directory's name (its id), a unique prefix of it, or a path to the directory or its
        ``metadata.json``; a path must be a run directly in the sessions dir (links and ``..`` resolved)."""
        from praisonmem.core.paths import expand_user
        from praisonmem.core.sessions.stores import OutsideStore
        from praisonmem.core.sessions.stores.jsondir import directly_in

        as_path = expand_user(name, "SESSION") if name else Path(name)
        if os.sep in name and os.path.lexists(as_path):
            run = as_path.parent if as_path.name == "metadata.json" and not as_path.is_dir() else as_path
            ref = directly_in(run, self.directory)
            if ref is None:
                raise OutsideStore(name, [str(self.directory)])
            if Path(ref).name == "projects" or not self.exists(Path(ref)):
                raise NotFound(f"{ref}: not a praisonai CLI run")
            read_run(Path(ref))  # the rule `check` applies to a run: metadata.json with the keys SessionManager needs
            return Path(ref)
        if name and "/" not in name and name not in (".", "..", "projects") and self.exists(self.directory / name):
            return self.directory / name
        if allow_prefix and name and "/" not in name:
            matches = [p for p in self.refs() if p.name.startswith(name)]
            if len(matches) == 1:
                return matches[0]
            if matches:
                raise AmbiguousName(f"'{name}' matches several runs: " + ", ".join(p.name for p in matches[:10]))
        raise NotFound(f"no run '{name}' in {self.directory}")

    def read(self, ref: Path) -> dict[str, Any]:
        return run_document(*read_run(Path(ref)))

    def read_bytes(self, ref: Path) -> bytes:
        """What ``SessionManager.export(format="json")`` gives: ``{"metadata": …, "events": […]}``."""
        meta, events = read_run(Path(ref))
        return json.dumps({"metadata": meta, "events": events}, indent=2, ensure_ascii=False).encode("utf-8")

    def parse(self, ref: Path, raw: bytes) -> dict[str, Any]:
        both = jsonfile.parse_object(raw, ref)
        return run_document(both.get("metadata") or {}, both.get("events") or [])

    def scan(self, fn: Callable[[Scanned], list[R]], *,
             progress: Callable[[int, int], None] | None = None,
             reduce: Callable[[list[R]], list[R]] | None = None,
             memo: Any = None) -> list[R]:
        """``fn`` over every session (few files: never remembered, so ``memo`` is not used; ``reduce`` at the
        end)."""
        out: list[R] = []
        for ref in self.refs():
            try:
                doc = self.read(ref)
            except PraisonMemError as exc:
                out += fn(Scanned(str(ref), None, None, exc, ref=ref, store=self.label))
            else:
                out += fn(Scanned(str(ref), self.session_id(ref, doc), doc, None, ref=ref, store=self.label))
        return out if reduce is None else reduce(out)

    def holds(self, ref: Path, doc: dict[str, Any]) -> bool:
        return False

    def seconds_since_write(self, ref: Path, doc: dict[str, Any], now: float) -> float | None:
        from praisonmem.core.io.timeutil import epoch_of

        stamp = epoch_of(doc.get("updated_at"))
        return None if stamp is None else now - stamp

    @contextmanager
    def transaction(self, refs: Sequence[Path], timeout: float = jsonfile.LOCK_TIMEOUT) -> Iterator[RunTransaction]:
        """``SessionManager`` takes no lock: each change re-reads the run right before it."""
        yield RunTransaction(self)


class RunTransaction:
    def __init__(self, store: RunStore) -> None:
        self.store = store
        self.notes: list[str] = []

    def exists(self, ref: Path) -> bool:
        return self.store.exists(ref)

    def read(self, ref: Path) -> dict[str, Any] | None:
        return self.store.read(ref) if self.store.exists(ref) else None

    def write(self, ref: Path, doc: dict[str, Any]) -> None:
        """Set the run's name, the one change ``SessionManager`` makes to a run (``rename``: ``name`` = the title,
        or none; ``updated_at`` = now)."""
        current = self.read(ref)
        if current is None:
            raise NotFound(f"{ref}: the run disappeared")
        title = (doc.get("metadata") or {}).get("title")

        def untitled(d: dict[str, Any]) -> dict[str, Any]:
            return {**d, "updated_at": None, "metadata": {k: v for k, v in (d.get("metadata") or {}).items()
                                                          if k != "title"}}

        if untitled(current) != untitled(doc):
            raise Refused(f"{ref}: praisonmem changes only the name of a praisonai CLI run; nothing changed")
        path = Path(ref) / "metadata.json"
        meta = jsonfile.read_object(path)
        meta["name"] = title.strip() if isinstance(title, str) and title.strip() else None
        meta["updated_at"] = datetime.now(timezone.utc).isoformat()
        mode = path.stat().st_mode & 0o777
        jsonfile.replace_atomically(path, json.dumps(meta, indent=2).encode("utf-8"), mode=mode)

    def delete(self, ref: Path) -> None:
        """Remove the run directory, as ``SessionManager.delete`` does, when it holds only what praisonai wrote."""
        directory = Path(ref)
        try:
            names = sorted(os.listdir(directory))
        except FileNotFoundError:
            raise NotFound(f"{directory}: no such run") from None
        other = [n for n in names if n not in ("metadata.json", "events.jsonl")]
        if other:
            raise Refused(f"{directory}: holds files praisonai's SessionManager did not write "
                          f"({', '.join(other[:5])}); not deleted")
        for name in names:
            entry = directory / name
            if entry.is_symlink() or not entry.is_file():
                raise Refused(f"{entry}: not a regular file; the run was not deleted")
        try:
            for name in sorted(names, key=lambda n: n == "metadata.json"):  # metadata.json last: a half-deleted
                # run is still listed, and a rerun finishes it
                os.unlink(directory / name)
            os.rmdir(directory)
        except OSError as exc:
            raise io_failure(directory, exc, "cannot delete") from exc
        jsonfile.fsync_dir(directory.parent)

    def carry_spill(self, old_id: str, new_id: str, *, keep: bool = False) -> None:
        return None

    def read_bytes(self, ref: Path) -> bytes | None:
        return self.store.read_bytes(ref) if self.store.exists(ref) else None

    def write_raw(self, ref: Path, raw: bytes) -> None:
        """Only the name may change, as in :meth:`write`."""
        self.write(ref, self.store.parse(ref, raw))

    def rewrite_spill(self, session_id: str, change: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
        """Nothing: the praisonai CLI's stores have no spill dir."""

    def drop_spill(self, ref: Any) -> str | None:
        """Nothing: the praisonai CLI's stores have no spill dir."""
        return None

    def forget_replaced(self) -> None:
        """Nothing: a rewritten file holds only its new bytes (no free page or journal keeps the old ones)."""
