"""The one place that reads and writes PraisonAI's JSON files.

Reading takes no lock and never writes: thanks to the library's atomic
replace, an unlocked reader sees either the whole old document or the whole
new one. Only regular files are read, opened without blocking (a named pipe
or a link to a device in a sessions directory is refused, not waited on).

Writing follows the library's protocol so praisonmem and a live agent can share
a directory:

1. ``mkdir -p`` the directory;
2. take BSD ``flock(LOCK_EX)`` on the sidecar ``X.json.lock`` (filelock's
   ``UnixFileLock``; POSIX ``lockf`` locks would not conflict with the
   library's), giving up after ``timeout`` seconds (5 s by default) with
   :class:`LockTimeout`; a sidecar that is a symlink or not a regular file is
   refused (:class:`IOFailure`, exit 5) before anything opens it for writing;
3. re-read ``X.json`` under the lock; a file that does not parse is never
   overwritten (:class:`CorruptFile`);
4. remove the temp files a killed write of ``X.json`` left (:func:`sweep_leftovers`),
   then write a temp file in the same directory whose name does not end in
   ``.json`` (mode 0600), fsync it, ``os.replace`` it over ``X.json``, fsync the
   directory;
5. unlock and leave the ``.lock`` file in place: deleting it would let two
   processes lock different inodes.

Serialisation is byte-identical to ``json.dump(indent=2, ensure_ascii=False)``
with no trailing newline; documents carrying ``snapshot_storage`` are written
compact, as ``HierarchicalSessionStore`` does. Key order and unknown keys are
kept because documents are plain dicts loaded in file order.

orjson does the work where it provably gives the standard
library's result (:mod:`praisonmem.core.io.fastjson`); everything else, every
error message included, is the standard library's.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, BinaryIO

from praisonmem.core import layout
from praisonmem.core.errors import CorruptFile, IOFailure, LockTimeout, NotFound, Refused, io_failure
from praisonmem.core.io import fastjson, inputfile

LOCK_TIMEOUT = 5.0
LOCK_POLL = 0.05  # the library retries every 50 ms


def dumps(doc: Any, *, compact: bool = False) -> str:
    """The library's serialisation: two-space indent, raw UTF-8, no trailing newline."""
    if compact:
        return json.dumps(doc, ensure_ascii=False, separators=(",", ":"))
    return json.dumps(doc, indent=2, ensure_ascii=False)


def is_compact_document(doc: Any) -> bool:
    """``HierarchicalSessionStore`` writes documents holding ``snapshot_storage`` compact."""
    return isinstance(doc, dict) and "snapshot_storage" in doc


def serialise(doc: Any, *, known: frozenset[int] = frozenset()) -> bytes:
    """The bytes the library would write for ``doc``. ``known``: ids of containers in ``doc`` that
    :func:`parse_proven` vouched for and the caller has not changed since (not checked again)."""
    compact = is_compact_document(doc)
    if not compact:
        fast = fastjson.dumps_indented(doc, known)
        if fast is not None:
            return fast
    try:
        return dumps(doc, compact=compact).encode("utf-8")
    except UnicodeEncodeError as exc:
        raise Refused(f"document holds text that is not valid Unicode ({exc.reason}); not written") from exc


def parse_proven(raw: bytes, path: str | os.PathLike[str]) -> tuple[Any, frozenset[int]]:
    """:func:`parse`, and the ids of the document's members (a list's items, an object's values) that
    :func:`serialise` may encode without checking them again: all of them when ``raw`` is exactly what both
    encoders write for the document, else none. Valid while the caller keeps them unchanged and alive."""
    fast = fastjson.loads_proven(raw)
    if fast is not fastjson.REFUSED:
        return fast
    return parse(raw, path), frozenset()


def parse(raw: bytes, path: str | os.PathLike[str]) -> Any:
    """Decode strict UTF-8 JSON, saying what is wrong and where when it is not."""
    fast = fastjson.loads(raw)
    if fast is not fastjson.REFUSED:
        return fast
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CorruptFile(str(path), f"not valid UTF-8 (byte {exc.start}: {exc.reason})") from exc
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise CorruptFile(str(path), decode_problem(exc)) from exc
    except RecursionError as exc:
        raise CorruptFile(str(path), "JSON nested too deeply to read") from exc
    except ValueError as exc:  # an integer of more than sys.get_int_max_str_digits() digits
        raise CorruptFile(str(path), f"a number too long to read ({exc_text(exc)})") from exc


def decode_problem(exc: json.JSONDecodeError) -> str:
    """What is wrong with the JSON and where, in one lower-case clause: the parser's message ends in "at" when its
    position is meant to follow it ("Unterminated string starting at")."""
    msg = exc.msg[:1].lower() + exc.msg[1:]
    if msg.endswith(" at"):
        return f"invalid JSON: {msg} line {exc.lineno} column {exc.colno}"
    return f"invalid JSON at line {exc.lineno} column {exc.colno}: {msg}"


def exc_text(exc: ValueError) -> str:
    """Python's int-limit message without its advice to call ``sys.set_int_max_str_digits``."""
    return str(exc).split(";")[0]


def read_bytes(path: str | os.PathLike[str]) -> bytes:
    """The bytes of a regular file (or a link to one), read without blocking on anything else: a named pipe,
    socket or device is :class:`~praisonmem.core.errors.NotRegularFile` (:func:`~.inputfile.open_data`)."""
    return inputfile.read_data(path)


STDIN = inputfile.STDIN
read_source = inputfile.read_source  # the bounded reader of a command-line input file ("-": stdin)


def read(path: str | os.PathLike[str]) -> Any:
    """Read and parse a JSON file without locking and without changing anything."""
    return parse(read_bytes(path), path)


def read_object(path: str | os.PathLike[str]) -> dict[str, Any]:
    return parse_object(read_bytes(path), path)


def parse_object(raw: bytes, path: str | os.PathLike[str]) -> dict[str, Any]:
    doc = parse(raw, path)
    if not isinstance(doc, dict):
        raise CorruptFile(str(path), f"top-level JSON value is {json_kind(doc)}, not an object")
    return doc


def json_kind(value: Any) -> str:
    """A JSON value's kind, with its article, for error messages."""
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if value is None:
        return "null"
    return "an object"


@contextmanager
def locked(path: str | os.PathLike[str], timeout: float = LOCK_TIMEOUT) -> Iterator[None]:
    """Hold the library's sidecar lock ``<path>.lock`` (BSD flock); the file is never deleted."""
    from filelock import Timeout, UnixFileLock  # writers only: keeps read commands fast

    lock_path = f"{os.fspath(path)}.lock"
    makedirs(os.path.dirname(lock_path) or ".")
    check_lock_file(lock_path)
    lock = UnixFileLock(
        lock_path,
        timeout=timeout,
        poll_interval=LOCK_POLL,
        # A soft fallback would write a marker the library cannot see: fail instead.
        fallback_to_soft=False,
        preserve_lock_file=True,
    )
    try:
        lock.acquire()
    except Timeout as exc:
        raise LockTimeout(
            f"{path}: could not lock {lock_path} within {timeout:g}s "
            "(an agent may be writing it); nothing changed"
        ) from exc
    except OSError as exc:
        raise io_failure(lock_path, exc, "cannot lock") from exc
    try:
        yield
    finally:
        lock.release()


@contextmanager
def locked_quick(path: str | os.PathLike[str], timeout: float = LOCK_TIMEOUT) -> Iterator[None]:
    """:func:`locked` without filelock, for a reader that takes one lock per file thousands of times
    (``backup create``): the same sidecar ``<path>.lock``, checked as :func:`check_lock_file` does (never
    through a link, created 0644 when missing), the same BSD ``flock(LOCK_EX)`` polled every
    :data:`LOCK_POLL`, the same timeout message; a sidecar deleted while this waited is opened again and waited
    on, as filelock does. The sidecar's directory is not created: a file whose directory has gone is
    :class:`NotFound`."""
    import fcntl
    import time

    lock_path = f"{os.fspath(path)}.lock"
    message = f"{path}: could not lock {lock_path} within {timeout:g}s (an agent may be writing it); nothing changed"
    deadline = time.monotonic() + timeout
    while True:
        try:
            fd = _open_sidecar(lock_path)
        except FileNotFoundError as exc:
            raise NotFound(f"{path}: no such file") from exc
        try:
            flock_polled(fd, lock_path, timeout if timeout < 0 else max(0.0, deadline - time.monotonic()), message)
            if os.fstat(fd).st_nlink:
                break
        except BaseException:
            os.close(fd)
            raise
        # The sidecar was deleted while this waited: whoever opens the path now locks another file, so this lock
        # excludes nobody. Open the path again and wait on that (filelock does the same).
        os.close(fd)
    try:
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def flock_polled(fd: int, where: str | os.PathLike[str], timeout: float, message: str, *, shared: bool = False,
                 poll: float = LOCK_POLL) -> None:
    """``flock(fd)`` (exclusive, or ``shared``), retried every ``poll`` seconds as the libraries retry;
    :class:`LockTimeout` with ``message`` once ``timeout`` has passed (a negative one waits for ever)."""
    import fcntl
    import time

    deadline = time.monotonic() + timeout
    while True:
        try:
            fcntl.flock(fd, (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            left = deadline - time.monotonic()
            if timeout >= 0 and left <= 0:
                raise LockTimeout(message) from None
            time.sleep(poll if timeout < 0 else min(poll, left))
        except OSError as exc:
            raise io_failure(where, exc, "cannot lock") from exc


def _open_sidecar(lock_path: str) -> int:
    """An fd on the sidecar ``lock_path`` (created 0644 when missing), refusing one that is a symlink or not
    a regular file; FileNotFoundError when its directory is gone."""
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(lock_path, flags, 0o644)  # 0644, as filelock and the library create it: it is always empty
    except FileNotFoundError:
        raise  # the directory is gone: each caller says what that means
    except OSError as exc:
        try:  # ELOOP for a link on Linux, EMLINK/EFTYPE on the BSDs, EISDIR for a directory
            problem = lock_file_problem(lock_path, os.lstat(lock_path).st_mode)
        except OSError:
            problem = None
        raise (problem or io_failure(lock_path, exc, "cannot lock")) from exc
    try:
        problem = lock_file_problem(lock_path, os.fstat(fd).st_mode)
    except BaseException:
        os.close(fd)
        raise
    if problem is not None:
        os.close(fd)
        raise problem
    return fd


def check_lock_file(lock_path: str) -> None:
    """Create the sidecar if missing, refusing one that is a symlink or not a regular file.

    filelock before 3.20.1 opened the sidecar with ``O_TRUNC``, following a symlink,
    so ``X.json.lock -> /etc/x`` emptied ``/etc/x`` (CVE-2025-68146); 3.12-3.14 could
    not even be configured. The dependency floor excludes them, and this check keeps
    a planted link from being followed whatever filelock is installed: ``O_NOFOLLOW``
    and no ``O_TRUNC``, so nothing is ever written through the name.
    """
    try:
        os.close(_open_sidecar(lock_path))
    except FileNotFoundError as exc:
        raise io_failure(lock_path, exc, "cannot lock") from exc


def lock_file_problem(lock_path: str | os.PathLike[str], mode: int) -> IOFailure | None:
    """Why a lock path with this (``lstat``) mode is refused; ``None`` for a regular file, the only
    thing the libraries ever create there."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISLNK(mode):
        return IOFailure(f"{lock_path}: is a symbolic link; praisonmem does not lock through a link "
                         "(remove it and retry); nothing changed")
    if stat.S_ISDIR(mode):
        return IOFailure(f"{lock_path}: is a directory, not a lock file; nothing changed")
    return IOFailure(f"{lock_path}: is not a regular file, not a lock file; nothing changed")


@contextmanager
def locked_many(paths: list[str | os.PathLike[str]], timeout: float = LOCK_TIMEOUT) -> Iterator[None]:
    """Hold several sidecar locks, always taken in sorted path order so two
    praisonmem processes can never wait on each other in a cycle."""
    from contextlib import ExitStack

    with ExitStack() as stack:
        for path in sorted({os.fspath(p) for p in paths}):
            stack.enter_context(locked(path, timeout))
        yield


def makedirs(directory: str | os.PathLike[str]) -> None:
    """``mkdir -p`` with every directory it creates private (0700); existing ones keep their mode.

    ``os.makedirs(mode=)`` applies the mode to the last directory only.
    """
    missing = []
    path = os.path.abspath(directory)
    while not os.path.isdir(path):
        missing.append(path)
        parent = os.path.dirname(path)
        if parent == path:
            break
        path = parent
    for path in reversed(missing):
        try:
            os.mkdir(path, 0o700)
        except FileExistsError as exc:
            if not os.path.isdir(path):
                raise IOFailure(f"{path}: exists and is not a directory") from exc
        except OSError as exc:
            raise io_failure(path, exc) from exc


def read_current(path: str | os.PathLike[str]) -> dict[str, Any] | None:
    """Re-read under a held lock: ``None`` when absent, :class:`CorruptFile` when unusable."""
    try:
        return read_object(path)
    except NotFound:
        return None


def replace_atomically(path: str | os.PathLike[str], data: bytes, *, mode: int | None = None,
                       listed: Listed | None = None) -> None:
    """Write ``data`` to a temp file beside ``path`` (0600, or ``mode``), fsync it and rename it over ``path``.

    The caller holds the lock. The temp name is ``.<name>.<random>.tmp``: it never
    ends in ``.json``, so listings and globs never mistake it for a session. Temp files of
    ``path`` an interrupted write left are removed first (:func:`sweep_leftovers`, with ``listed``).
    """
    with replacing(path, mode=mode, sweep=True, listed=listed) as handle:
        handle.write(data)


@contextmanager
def replacing(path: str | os.PathLike[str], *, mode: int | None = None, sweep: bool = False,
              listed: Listed | None = None) -> Iterator[BinaryIO]:
    """A handle on a temp file beside ``path`` (0600, or ``mode``) that replaces ``path`` when the
    block ends: fsynced, renamed over it, the directory fsynced. On an error the temp file is removed
    and ``path`` is untouched. With ``sweep`` (the caller holds ``path``'s lock, so no other write of it
    is under way), the temp files an interrupted write of ``path`` left are removed first."""
    path = os.fspath(path)
    directory = os.path.dirname(path) or "."
    makedirs(directory)
    if sweep:
        sweep_leftovers(path, listed=listed)
    made: list[str] = []  # the temp file's path, from before it exists: whatever interrupts, it is removed
    try:
        fd = _create_temp(directory, os.path.basename(path), made)
        if mode is not None:
            os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(made[0], path)
    except OSError as exc:
        for tmp in made:
            discard(tmp)
        raise io_failure(path, exc, "write failed") from exc
    except BaseException:
        for tmp in made:
            discard(tmp)
        raise
    fsync_dir(directory)


LEFTOVER_AGE = 60.0  # seconds: a temp file untouched this long belongs to no live write (a replace takes ms)
Listed = dict[str, set[str]]  # per directory: its ``.tmp`` names, as a sweep listed them (and removed some since)


def sweep_leftovers(path: str | os.PathLike[str], *, age: float | None = None, listed: Listed | None = None
                    ) -> list[str]:
    """Remove the temp files a killed write of ``path`` left beside it: regular files named as :func:`replacing`
    names that file's (:func:`~praisonmem.core.layout.temp_pattern`; no other writer's pattern) and unchanged for
    ``age`` seconds (their inode's change time, which no copy or ``utime`` can set back). The caller holds
    ``path``'s lock, so none belongs to a write of it under way. Best effort: what cannot be removed stays
    (``check`` reports it). The directory is listed now, or once for all the writes that share ``listed`` (a
    store's: an import of thousands of sessions lists its directory once, not once per session); the names
    removed are returned."""
    import re
    import time

    age = LEFTOVER_AGE if age is None else age
    directory, name = os.path.split(os.fspath(path))
    directory = directory or "."
    names = None if listed is None else listed.get(directory)
    if names is None:
        try:
            with os.scandir(directory) as entries:
                names = {e.name for e in entries if e.name.endswith(layout.TEMP)}
        except OSError:
            return []
        if listed is not None:
            listed[directory] = names
    if not names:
        return []
    pattern = re.compile(layout.temp_pattern(name))
    removed = []
    now = time.time()
    for temp in sorted(n for n in names if pattern.fullmatch(n)):
        full = os.path.join(directory, temp)
        try:
            st = os.lstat(full)
            if stat.S_ISREG(st.st_mode) and now - st.st_ctime > age:
                os.unlink(full)
                removed.append(full)
        except FileNotFoundError:
            pass
        except OSError:
            continue
        names.discard(temp)
    return removed


def _create_temp(directory: str, name: str, made: list[str]) -> int:
    """A new temp file beside ``name`` (``.<name>.<random>.tmp``, the names :func:`tempfile.mkstemp` gives; 0600),
    its descriptor. Its path goes into ``made`` before the file exists, so a Ctrl-C that lands just after the
    open, before the caller holds the descriptor, still finds it to remove (``O_EXCL`` made it ours)."""
    import random

    flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    for _ in range(100):
        tmp = os.path.join(directory, f".{name}.{''.join(random.choices(layout.TEMP_ALPHABET, k=8))}{layout.TEMP}")
        made.append(tmp)
        try:
            return os.open(tmp, flags, 0o600)
        except FileExistsError:  # another write's: never ours to remove
            made.remove(tmp)
        except OSError as exc:
            made.remove(tmp)
            raise io_failure(directory, exc, "cannot create a temp file") from exc
    raise io_failure(directory, FileExistsError(f"no free temp name beside {name}"), "cannot create a temp file")


def discard(tmp: str) -> None:
    """Remove a temp file if it is there."""
    try:
        os.unlink(tmp)
    except OSError:
        pass


def fsync_dir(directory: str | os.PathLike[str]) -> None:
    """Make a rename in ``directory`` durable (best effort: some file systems cannot)."""
    try:
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_locked(path: str | os.PathLike[str], doc: dict[str, Any], *, listed: Listed | None = None) -> None:
    """Serialise ``doc`` like the library and replace ``path``; the caller holds the lock."""
    replace_atomically(path, serialise(doc), listed=listed)


def delete_locked(path: str | os.PathLike[str]) -> None:
    """Remove ``path``; the caller holds its lock. The ``.lock`` sidecar stays."""
    try:
        os.unlink(path)
    except FileNotFoundError as exc:
        raise NotFound(f"{path}: no such file") from exc
    except OSError as exc:
        raise io_failure(path, exc, "cannot delete") from exc
