"""The JSON-directory session store: praisonaiagents' ``DefaultSessionStore`` layout.

Everything that knows sessions are files lives here: naming (``<safe id>.json``), finding
a session by id, stem, prefix or path, loading and validating, listing, the spill dir of
turns salvaged after failed writes, and locked writes, deletes and moves.

* Only regular files whose name ends in ``.json`` are sessions: ``.json.lock`` sidecars,
  ``*.tmp`` files and quarantined ``*.json.corrupt-*`` files are not.
* Reading takes no lock and changes nothing (the library replaces files atomically, so a
  reader sees a whole document).
* Writing happens in a :meth:`JsonDirStore.transaction`: the sidecar flocks of every file
  involved, taken in sorted order, a re-read under them, atomic replaces
  (:mod:`praisonmem.core.io.jsonfile`); ``.lock`` files are never deleted. The directory's
  ``sessions_index.db`` (``SqliteSessionStore``'s search index) follows every write and
  delete in the same step (:mod:`.index`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from praisonmem.core.errors import IOFailure, NotFound, PraisonMemError, Refused, io_failure
from praisonmem.core.io import fastjson, jsonfile, parallel
from praisonmem.core.layout import HUGE_SESSION
from praisonmem.core.sessions.documents import library_message, messages_of, not_a_session, session_id_of, validate
from praisonmem.core.sessions.stores import Fold, OutsideStore, Scanned, ambiguous, merged
from praisonmem.core.sessions.stores.names import JSON, safe_file_stem, session_file_name
from praisonmem.core.io.safetext import plural

if TYPE_CHECKING:
    from praisonmem.core.paths import Paths
    from praisonmem.core.sessions.stores.index import IndexWriter
    from praisonmem.core.sessions.listcache import Memo

A = TypeVar("A")
B = TypeVar("B")


def session_paths(directory: Path | str) -> list[str]:
    """Session files in name order, as path strings: entries whose name ends in ``.json`` that are not
    directories. A named pipe, socket or device (or a link to one, or a link loop) is listed too, so that
    reading it reports it unreadable rather than skipping it; nothing here opens an entry."""
    try:
        with os.scandir(directory) as entries:
            named = [e for e in entries if e.name.endswith(".json")]
        # is_file() answers from the listing for all but links; the few others are looked at one by one
        found = [e.path for e in named if _is_regular(e) or _is_odd_file(e)]
    except FileNotFoundError:
        return []
    except NotADirectoryError as exc:
        raise IOFailure(f"{directory}: not a directory") from exc
    except OSError as exc:
        raise io_failure(directory, exc) from exc
    found.sort()
    return found


def _is_regular(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_file()
    except OSError:  # ELOOP: is_file() only swallows "no such file"; _is_odd_file lists it
        return False


def _is_odd_file(entry: os.DirEntry[str]) -> bool:
    """An entry that is no regular file and no directory but is there: a named pipe, socket or device, a link to
    one, or a link that cannot be followed (a loop). A dangling link is not listed (nothing is there)."""
    try:
        return not entry.is_dir() and (not entry.is_symlink() or os.path.exists(entry.path))
    except OSError:  # a loop
        return True


def entry_exists(path: Path | str) -> bool:
    """Something a session name can resolve to is at ``path``: anything but a directory and a dangling link (a
    link loop counts: it is reported unreadable when read). A name the system cannot take (a lone surrogate, a
    NUL) names nothing."""
    import stat

    try:
        return not stat.S_ISDIR(os.stat(path).st_mode)
    except FileNotFoundError:
        return False
    except OSError:
        return os.path.islink(path)
    except ValueError:
        return False


def huge_file(store: Any, ref: Any, threshold: int | None, *, writing: bool = False
              ) -> tuple[JsonDirStore, str] | None:
    """``(the JSON-directory store, its file)`` of the session ``ref`` of ``store`` (this store, or a home of
    stores) when that file is a regular file of at least ``threshold`` bytes (``None``: never) and, ``writing``, its
    directory has no ``sessions_index.db`` (whose rows a write keeps in step from the whole document); else
    ``None``. Such a file is read a message at a time (:mod:`praisonmem.core.sessions.streamed`)."""
    import stat

    if threshold is None:
        return None
    members = getattr(store, "stores", None)  # a home: the store holding the ref
    inner, path = (members.get(ref.store), ref.ref) if isinstance(members, dict) else (store, ref)
    if not isinstance(inner, JsonDirStore) or not isinstance(path, str):
        return None
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    if not stat.S_ISREG(st.st_mode) or st.st_size < threshold:
        return None
    from praisonmem.core.layout import INDEX_DB

    indexed = writing and os.path.isfile(os.path.join(os.path.dirname(path), INDEX_DB))
    return None if indexed else (inner, path)


def load(path: Path | str) -> dict[str, Any]:
    """Read and validate one session file (no lock, no write); only a regular file is read
    (:func:`~praisonmem.core.io.jsonfile.read_bytes`)."""
    return validate(jsonfile.parse_object(jsonfile.read_bytes(path), path), path)


def load_sieved(path: str, rules_out: Callable[[bytes], bool] | None) -> tuple[dict[str, Any], bool]:
    """One session file read as a search's scan reads it: the document and ``False``, or, when ``rules_out`` rules
    its bytes out, ``True`` and a document holding only what validating it looks at; PraisonMemError when it is
    not a valid session (it is reported all the same)."""
    raw = jsonfile.read_bytes(path)
    skip = rules_out is not None and rules_out(raw)
    doc = fastjson.loads_shape(raw) if skip else fastjson.REFUSED
    if type(doc) is not dict:
        doc = jsonfile.parse_object(raw, path)
    return validate(doc, path), skip


def looks_like_path(name: str) -> bool:
    """A SESSION that may be a path: it holds a ``/`` or ends in ``.json`` (an id or a stem can too: it is a path
    only when something is there)."""
    return os.sep in name or name.endswith(".json")


def directly_in(path: Path | str, directory: Path | str) -> str | None:
    """``path`` as ``directory``'s own name for it (``<directory>/<name>``) when it is an entry directly in that
    directory, else ``None``. The directories are compared once every link and ``..`` in them is resolved, as the
    system resolves them (``sessions/link/../x.json`` is not in ``sessions/`` when ``link`` leads elsewhere); the
    entry itself may be a link, as a session named by its stem may be."""
    text = os.fspath(path)
    base = os.path.basename(text)
    if base in ("", ".", ".."):
        return None
    try:
        if os.path.realpath(os.path.dirname(text) or ".") != os.path.realpath(directory):
            return None
    except (OSError, ValueError):
        return None
    return os.path.join(os.fspath(directory), base)


def claimed_path(name: str, *directories: Path) -> str | None:
    """``name`` as a ref of the first of ``directories`` it is directly in, when it is a path to something that
    exists (:func:`looks_like_path`); ``None`` when nothing is there (then it is an id or a stem);
    :class:`~praisonmem.core.sessions.stores.OutsideStore` when it exists anywhere else."""
    if not looks_like_path(name):
        return None
    from praisonmem.core.paths import expand_user

    path = expand_user(name, "SESSION")
    if not os.path.lexists(path):
        return None
    for directory in directories:
        ref = directly_in(path, directory)
        if ref is not None:
            return ref
    raise OutsideStore(name, [str(d) for d in directories])


def refuse_non_session(ref: str) -> None:
    """Refuse (:class:`Refused`, exit 4) a file named by its path that ``praisonmem check`` does not take for a
    session: not a ``.json`` file, or a JSON document whose ``session_id`` or ``messages`` is missing or of the
    wrong type (an error of :data:`~praisonmem.core.sessions.documents.NOT_A_SESSION` by the session rules, which
    ``check`` applies too). A file that cannot be read or parsed is a session
    file the library fails on, as check reports it: it is taken, and reported as unreadable as when it is named
    by its stem. Nothing is written."""
    hint = "a SESSION given as a path must name a session document"
    if not ref.endswith(".json"):
        raise Refused(f"{ref}: not a session file (sessions are <id>.json files); {hint}")
    try:
        doc = load(ref)
    except PraisonMemError:
        return
    problem = not_a_session(doc, name_of(ref))
    if problem is not None:
        raise Refused(f"{ref}: not a session document ({problem}); {hint}")


def name_of(path: Path | str) -> str:
    """The file's stem: the id the library lists a session by when it has no ``session_id``."""
    return os.path.basename(path)[: -len(".json")]


@dataclass(frozen=True)
class JsonDirStore:
    """Sessions as ``<directory>/<safe id>.json``, spilled turns in ``spill_dir``. A ref is the file's path, a
    ``str`` (cheaper than a ``Path`` for the thousands a listing sends back from its worker processes).

    ``label`` names the store in listings (``json``; the praisonai CLI's per-project stores are
    ``project:<id>``). ``foreign`` recognises documents in the directory that another store owns
    (the REPL/TUI's unified files share ``sessions/``): this store neither lists, finds nor writes them;
    :func:`scan_shared` hands them to that store's fold (the home's scan, so that the owner need not read
    the directory again).
    """

    directory: Path
    spill_dir: Path
    paths: Paths | None = None  # where the directory came from, to refuse a home that is not a directory
    label: str = JSON
    foreign: Callable[[Any], bool] | None = None  # a module-level function (scans pickle it)
    # The temp names its writes have listed, per directory: each listed once for all of them (this store's life is
    # one command's), not once per session file written.
    listed: jsonfile.Listed = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def of(cls, paths: Paths, foreign: Callable[[Any], bool] | None = None) -> JsonDirStore:
        return cls(paths.sessions_dir, paths.spill_dir, paths, foreign=foreign)

    def _check_home(self) -> None:
        if self.paths is not None:
            self.paths.require_home()

    # -------------------------------------------------------- naming

    def ref(self, session_id: str, *, beside: str | None = None) -> str:
        """The file a session with this id has, in this directory or in ``beside``'s (a session named by
        its path lives in its own directory)."""
        return os.path.join(self.directory if beside is None else os.path.dirname(beside),
                            session_file_name(session_id))

    def name(self, ref: str) -> str:
        return name_of(ref)

    def session_id(self, ref: str, doc: dict[str, Any]) -> str:
        return session_id_of(doc, name_of(ref))

    def store_of(self, ref: str) -> str:
        return self.label

    # -------------------------------------------------------- reading

    def refs(self) -> list[str]:
        """Every session file, in name order."""
        self._check_home()
        return [p for p in session_paths(self.directory) if not self._foreign(p)]

    def _foreign(self, path: str) -> bool:
        return self.foreign is not None and is_foreign(path, self.foreign)

    def exists(self, ref: str) -> bool:
        return entry_exists(ref) and not self._foreign(ref)

    def absent(self) -> str | None:
        if self.directory.is_dir():
            return None
        return f"no sessions directory at {self.directory}" + (f" ({self.paths.data.source})" if self.paths else "")

    def read(self, ref: str) -> dict[str, Any]:
        return load(ref)

    def read_bytes(self, ref: str) -> bytes:
        return jsonfile.read_bytes(ref)

    def parse(self, ref: str, raw: bytes) -> dict[str, Any]:
        """The validated document in bytes read from ``ref``."""
        return validate(jsonfile.parse_object(raw, ref), ref)

    def scan(self, fold: Fold[A], *, progress: Callable[[int, int], None] | None = None,
             memo: Memo | None = None) -> A:
        """``fold`` over every session file in name order (see :func:`scan_shared`); the documents ``foreign``
        recognises are left out."""
        return self._scan_shared(fold, None, progress=progress, memo=memo)[0]

    def _scan_shared(self, fold: Fold[A], partner: tuple[str, Fold[B]] | None, *,
                    progress: Callable[[int, int], None] | None = None,
                    memo: Memo | None = None) -> tuple[A, B | None]:
        """``fold`` over every session file in name order and, with ``partner`` (a label and a fold), that fold
        over the documents ``foreign`` recognises, as the store of that label would give them: the directory is
        read once for both (its other store, the REPL/TUI's, would read every file again only to find its
        few). Forked workers fold large directories in chunks (:class:`~praisonmem.core.sessions.stores.Fold`);
        with ``memo``, files unchanged since a call that kept their parts are not read (:meth:`_recalled`)."""
        self._check_home()
        files = session_paths(self.directory)
        waiting = self._spill_counts() if files else {}
        if memo is not None:
            return self._recalled(fold, partner, files, waiting, memo, progress)
        parts = parallel.map_chunks(partial(_fold_chunk, fold=fold, partner=partner, waiting=waiting,
                                            label=self.label, foreign=self.foreign), files, progress=progress)
        mine = merged(fold, (part for part, _ in parts))
        return mine, None if partner is None else merged(partner[1], (part for _, part in parts))

    def _recalled(self, fold: Any, partner: tuple[str, Any] | None, files: list[str], waiting: dict[str, int],
                  memo: Memo, progress: Callable[[int, int], None] | None) -> tuple[Any, Any]:
        """:func:`scan_shared` through ``memo``, for folds that split ``add`` into ``part`` and ``put``
        (:class:`~praisonmem.core.sessions.stores.Each`): a file whose key (stat, taken before it is read) is the
        one kept, and whose session has no spilled turns waiting, gets its kept part; the others are read (in
        the pool) and their parts kept when the file had settled before this call began (the racy-entry
        rule, :func:`~praisonmem.core.io.cache.settled`). The entry is rewritten only when it changed. The
        workers send back what the memo keeps of a part rather than the part when it has that (less to send),
        and the part is decoded from it here, as for a kept file. A file the memo vouches for is this store's;
        only the files read can be the partner's, whose parts are never kept."""
        from praisonmem.core.io.cache import key_of, now_ns, settled
        from praisonmem.core.sessions.listcache import key_text

        snapshot = now_ns()  # before any stat or read
        directory = str(self.directory)
        known = memo.recall(directory) if files else {}
        kept: dict[str, Any] = {}
        out: list[Any] = [None] * len(files)
        theirs: list[Any] = []
        misses: list[tuple[int, str]] = []
        cut = len(directory) + 1
        for i, path in enumerate(files):
            name = path[cut:] if path.startswith(directory) else os.path.basename(path)
            if not known:  # nothing kept (a cold listing): each file is stat'ed where it is read, in the pool
                misses.append((i, name))
                continue
            key = key_of(path)
            record = known.get(name)  # used when well formed and its key is the file's now (Memo.recall)
            if key is not None and type(record) is list and len(record) == 3 and type(record[1]) is str \
                    and record[0] == key_text(key) and not waiting.get(record[1]):
                part = memo.decode(record[2], path, record[1], path, self.label)
                if part is not None:
                    out[i] = part
                    kept[name] = record
                    continue
            misses.append((i, name))
        read = parallel.map_chunks(partial(_part_each, fold=fold, partner=partner, waiting=waiting, label=self.label,
                                           foreign=self.foreign, encode=memo.encode),
                                   [files[i] for i, _ in misses], progress=progress)
        for (i, name), (sid, part, value, key, their) in zip(misses, read):
            path = files[i]
            if value is not None:
                part = memo.decode(value, path, sid, path, self.label)
                if part is None:  # not what the memo keeps after all: read it again, here
                    [(sid, part, value, key, their)] = _part_each([path], fold=fold, partner=partner,
                                                                  waiting=waiting, label=self.label,
                                                                  foreign=self.foreign)
            out[i] = part
            if their is not None:
                theirs.append(their)
            elif sid is not None and value is not None and key is not None and settled(key, snapshot):
                kept[name] = [key_text(key), sid, value]
        if kept.keys() != known.keys() or any(kept[name] is not known[name] for name in kept):
            memo.keep(directory, kept, snapshot)
        # an Each fold's parts are lists, whose concatenation is one part (one call for 100,000 files)
        mine = fold.put(fold.empty(), [result for part in out if part is not None for result in part])
        if partner is None:
            return mine, None
        return mine, partner[1].put(partner[1].empty(), [result for part in theirs for result in part])

    def find(self, name: str, *, allow_prefix: bool = False) -> str:
        """Resolve SESSION: a path to a ``.json`` file, a raw session id, or a file stem.

        Raw ids go through the library's sanitising, so ``support/ticket #1234`` finds
        ``support_ticket__1234.json``. With ``allow_prefix``, a unique stem prefix
        also resolves. Two different files for one name is :class:`AmbiguousName`. A name that is a
        path to something that exists (:func:`claimed_path`) is taken only in this directory and only
        when the file is a session document; elsewhere it is :class:`OutsideStore`.
        """
        if not name:
            raise NotFound("no session named '' (give a session id, file stem or path)")
        claimed = claimed_path(name, self.directory)
        if claimed is not None:
            if self._foreign(claimed):
                raise NotFound(f"{claimed}: a REPL/TUI session, not one of the {self.label} store's")
            refuse_non_session(claimed)
            return claimed
        self._check_home()
        candidates = [self.directory / session_file_name(name)]
        if "/" not in name and "\\" not in name:  # a stem names a file in the sessions dir, never elsewhere
            candidates.append(self.directory / f"{name}.json")
        exact = [str(p) for p in dict.fromkeys(candidates)  # a symlink loop, a pipe: found, then listed as unreadable
                 if entry_exists(p) and not self._foreign(str(p))]
        if len(exact) == 1:
            return exact[0]
        if len(exact) > 1:
            holding = [p for p in exact if _holds_id(p, name)]
            if len(holding) == 1:
                return holding[0]
            raise ambiguous(name, [os.path.basename(p) for p in exact])
        if allow_prefix and "/" not in name:
            matches = [p for p in self.refs() if os.path.basename(p).startswith(name)]
            if len(matches) == 1:
                return matches[0]
            if matches:
                raise ambiguous(name, [os.path.basename(p) for p in matches])
        where = self.directory if self.directory.is_dir() else f"{self.directory} (no such directory)"
        raise NotFound(f"no session '{name}' in {where}")

    def copies(self, ref: str, session_id: str) -> list[str]:
        return []

    def holds(self, ref: str, doc: dict[str, Any]) -> bool:
        """``ref`` has exactly the bytes writing ``doc`` would give: an interrupted move got that far."""
        try:
            return jsonfile.read_bytes(ref) == jsonfile.serialise(doc)
        except NotFound:
            return False

    def seconds_since_write(self, ref: str, doc: dict[str, Any], now: float) -> float | None:
        """How long ago an agent last wrote the session.

        The library refreshes ``updated_at`` on every write, so that is the signal; the
        file's mtime (which a copy or restore also refreshes) is only the fallback
        when ``updated_at`` is missing or unparsable.
        """
        from praisonmem.core.io.timeutil import epoch_of

        stamp = epoch_of(doc.get("updated_at"))
        if stamp is None:
            try:
                stamp = os.stat(ref).st_mtime
            except OSError:
                return None
        return now - stamp

    # -------------------------------------------------------- spilled turns

    def _spill_records(self, session_id: str) -> list[tuple[Path, dict[str, Any]]]:
        """The spill files the library would merge into ``session_id``, with their records.

        Files named ``<safe id>.*.json`` whose ``session_id`` is the raw id, as the
        library's re-ingest picks them; unreadable ones are skipped here (``check``
        reports them).
        """
        prefix = f"{safe_file_stem(session_id)}."
        found = []
        for path in _spill_files(self.spill_dir):
            if not path.name.startswith(prefix):
                continue
            try:
                record = jsonfile.read_object(path)
            except PraisonMemError:
                continue
            if record.get("session_id") == session_id:
                found.append((path, record))
        return found

    def _spill_records_of(self, ref: str) -> list[tuple[Path, dict[str, Any]]]:
        """Every spill record the library would ever merge into the file ``ref``, whatever raw id it loads it by:
        named ``<stem>.*.json``, with a ``session_id`` that sanitises to the file's stem (unreadable ones are
        never merged, and are left to ``check``)."""
        stem = name_of(ref)
        found = []
        for path in _spill_files(self.spill_dir):
            if not path.name.startswith(f"{stem}."):
                continue
            try:
                record = jsonfile.read_object(path)
            except PraisonMemError:
                continue
            sid = record.get("session_id")
            if isinstance(sid, str) and safe_file_stem(sid) == stem:
                found.append((path, record))
        return found

    def spilled(self, ref: str, session_id: str, present: Iterable[Any] = ()) -> list[dict[str, Any]]:
        """The turns the library's next load of ``session_id`` adds from the spill dir, in its order and in the
        form it adds them (``SessionMessage.from_dict(m).to_dict()``): spill files in name order, in each its
        messages that are neither in ``present`` (the session's active messages) nor earlier in the spill,
        compared by role, content and timestamp as the library compares them (:func:`spill_key`)."""
        import time

        now = time.time()
        seen = {spill_key(m) for m in present if isinstance(m, dict)}
        found: list[dict[str, Any]] = []
        for _, record in self._spill_records(session_id):
            for message in messages_of(record):
                if isinstance(message, dict) and (key := spill_key(message)) not in seen:
                    seen.add(key)
                    found.append(library_message(message, now))
        return found

    def _spill_counts(self) -> dict[str, int]:
        """Waiting spilled turns per raw session id."""
        counts: dict[str, int] = {}
        for path in _spill_files(self.spill_dir):
            try:
                record = jsonfile.read_object(path)
            except PraisonMemError:
                continue
            sid = record.get("session_id")
            if isinstance(sid, str) and path.name.startswith(f"{safe_file_stem(sid)}."):
                counts[sid] = counts.get(sid, 0) + len(messages_of(record))
        return counts

    def spill_note(self, ref: str, old_id: str, new_id: str | None, verb: str = "move") -> str | None:
        """What carrying ``old_id``'s spill files will do, for the change record; ``new_id`` ``None``: what
        deleting the session does to its spill files (:meth:`Transaction.drop_spill`)."""
        if old_id == new_id:
            return None
        return spill_words(self._spill_records_of(ref) if new_id is None else self._spill_records(old_id), verb)

    def refuse_spill_clash(self, ref: str, old_id: str, *new_ids: str) -> None:
        """Refuse, before anything is written, when carrying ``old_id``'s spill files would meet another file."""
        for new_id in new_ids:
            for path, moved, data in self._spill_moves(old_id, new_id):
                if moved != path and moved.exists() and jsonfile.read_bytes(moved) != data:
                    raise Refused(f"{moved}: another spill file already has this name, so the spilled turns in "
                                  f"{path.name} cannot move with the session; nothing changed")

    def _spill_moves(self, old_id: str, new_id: str) -> list[tuple[Path, Path, bytes]]:
        import json

        if old_id == new_id:
            return []
        old_stem, new_stem = safe_file_stem(old_id), safe_file_stem(new_id)
        return [(path, path.with_name(new_stem + path.name[len(old_stem):]),
                 json.dumps({**record, "session_id": new_id}, ensure_ascii=False).encode("utf-8"))
                for path, record in self._spill_records(old_id)]

    # -------------------------------------------------------- writing

    def refuse(self, *, deleting: Sequence[str] = (), creating: Sequence[str] = ()) -> None:
        """Nothing to refuse: any file can be deleted or created."""

    @contextmanager
    def transaction(self, refs: Sequence[str], timeout: float = jsonfile.LOCK_TIMEOUT) -> Iterator[Transaction]:
        """Hold the sidecar locks of ``refs`` (in sorted order, so two praisonmem processes never wait on each
        other in a cycle) and change them through the :class:`Transaction`; the directory's search index
        changes ahead of each file (:mod:`.index`). Temp files an interrupted write of one of ``refs`` left
        are removed once its lock is held (:func:`~praisonmem.core.io.jsonfile.sweep_leftovers`)."""
        with jsonfile.locked_many(list(refs), timeout):
            for ref in refs:
                jsonfile.sweep_leftovers(ref, listed=self.listed)
            tx = Transaction(self)
            try:
                yield tx
            except BaseException:
                tx._finish(failed=True)
                raise
            tx._finish()


class Transaction:
    """Changes to sessions whose locks are held: every read is a re-read under the lock.

    The directory's ``sessions_index.db``, when there is one, is locked before the first file
    changes (so an index that cannot follow refuses the change while nothing is touched yet). Each
    write and delete changes the index first: the rows the file will have are committed, and the text
    they no longer hold cleared from the database's files, before the file changes (:meth:`IndexWriter.settle`).
    So a kill at any point leaves no text in the index that its session file no longer holds; a file change
    that fails puts the rows back as the file is.
    """

    def __init__(self, store: JsonDirStore) -> None:
        self.store = store
        self.indexes: dict[str, IndexWriter | None] = {}  # per directory (a session named by its path has its own)
        self.notes: list[str] = []  # what could not be done completely, though nothing failed

    def exists(self, ref: str) -> bool:
        """Something is at ``ref`` (a pipe or a device too: reading it refuses, so nothing is written over it)."""
        return entry_exists(ref)

    def read(self, ref: str) -> dict[str, Any] | None:
        """The document as it is now (``None`` when the file is gone); one that does not parse is
        :class:`CorruptFile`, so it is never overwritten."""
        doc = jsonfile.read_current(ref)
        return None if doc is None else validate(doc, ref)

    def _index(self, ref: str) -> IndexWriter | None:
        """The index of ``ref``'s directory, write-locked; ``None`` when it has none."""
        from praisonmem.core.sessions.stores.index import IndexWriter  # writers only: sqlite3 stays out of reads

        directory = os.path.dirname(ref)
        if directory not in self.indexes:
            self.indexes[directory] = IndexWriter.of(Path(directory))
        index = self.indexes[directory]
        if index is not None:
            index.begin()
        return index

    def write(self, ref: str, doc: dict[str, Any]) -> None:
        self._write(ref, doc, lambda: jsonfile.write_locked(ref, doc, listed=self.store.listed))

    def _write(self, ref: str, doc: dict[str, Any], put: Callable[[], None]) -> None:
        """``put`` the new version of ``ref`` (``doc``), after the checks every JSON write passes, the index
        changed ahead of it."""
        from praisonmem.core.sessions.crypto import unsealed

        current = _current_or_none(ref)
        self._refuse_foreign(ref, current)
        problem = unsealed(current, doc)
        if problem:  # the one place every JSON write passes: no plaintext into an encrypted session
            raise Refused(f"{ref}: {problem}; nothing changed")
        index = self._index(ref)
        new_id = self.store.session_id(ref, doc)
        old_id = self.store.session_id(ref, current) if current is not None else new_id
        if index is not None:
            if old_id != new_id:  # a rename that rewrites the same file: the old id's rows go
                index.forget(old_id)
            index.put(new_id, doc)
            index.settle()
        self._changing(index, ref, put, old_id, new_id)

    def _changing(self, index: IndexWriter | None, ref: str, change: Callable[[], None], *ids: str) -> None:
        """Change the file once the index has; if that fails, the rows of ``ids`` are put back as the file is."""
        try:
            change()
        except BaseException:
            if index is not None:
                self._resync(index, ref, ids)
            raise

    def _resync(self, index: IndexWriter, ref: str, ids: Iterable[str]) -> None:
        """After a file change that failed: the rows of ``ids`` as ``ref`` is now; what cannot be done is a note."""
        try:
            self._rows_as_on_disk(index, ref, ids)
        except PraisonMemError as exc:
            self.notes.append(f"the search index could not be put back in step with {os.path.basename(ref)} "
                              f"({exc.message}); 'praisonmem check' reports its rows")

    def _rows_as_on_disk(self, index: IndexWriter, ref: str, ids: Iterable[str]) -> None:
        now = _current_or_none(ref)
        for sid in dict.fromkeys(ids):
            index.forget(sid)
        if now is not None:
            index.put(self.store.session_id(ref, now), now)
        index.settle()

    def read_bytes(self, ref: str) -> bytes | None:
        """The file's bytes now (``None``: gone), once :meth:`read` has vouched that it parses."""
        return None if self.read(ref) is None else jsonfile.read_bytes(ref)

    def write_raw(self, ref: str, raw: bytes) -> None:
        """These exact bytes (a session document in another store's layout, copied as is), through the same
        checks and index upkeep as :meth:`write`."""
        self._write(ref, self.store.parse(ref, raw),
                    lambda: jsonfile.replace_atomically(ref, raw, listed=self.store.listed))

    def delete(self, ref: str) -> None:
        current = _current_top(ref)
        self._refuse_foreign(ref, current)
        index = self._index(ref)
        sid = self.store.session_id(ref, current) if current is not None else name_of(ref)
        if index is not None:
            index.forget(sid)
            index.settle()
        self._changing(index, ref, partial(jsonfile.delete_locked, ref), sid)

    def _reindex(self, ref: str, ids: Iterable[str] = ()) -> None:
        """Bring the index rows of ``ref``'s session (and of ``ids``, rows no file holds any more) in step with
        the file as it is; the text they no longer hold is cleared from the index's files (for :mod:`.repair`)."""
        index = self._index(ref)
        if index is not None:
            self._rows_as_on_disk(index, ref, ids)

    def _refuse_foreign(self, ref: str, current: dict[str, Any] | None) -> None:
        if self.store.foreign is not None and current is not None and self.store.foreign(current):
            raise Refused(f"{ref}: this file is another store's session (a REPL/TUI session), which a JSON-store "
                          "write would make unloadable for its owner; nothing changed")

    def _finish(self, *, failed: bool = False) -> None:
        """End the index transactions: every file change was settled in its index first, so what is left is
        closed (committed when the transaction succeeded, dropped when it failed: those rows' file never
        changed); a commit that fails is raised unless another error is on its way."""
        error = None
        for index in filter(None, self.indexes.values()):
            if failed:
                index.rollback()
                continue
            try:
                self.notes += index.commit()
            except PraisonMemError as exc:
                error = error or exc
        if error is not None and not failed:
            raise error

    def carry_spill(self, old_id: str, new_id: str, *, keep: bool = False) -> None:
        """Re-address ``old_id``'s spilled turns to ``new_id``, so the library merges them there.

        The library re-ingests a session's spill files only under that session's lock, which this
        transaction holds for both. Each file is rewritten under the new id's name with its
        ``session_id`` changed (the library's one-line format), then the old one is removed (kept with
        ``keep``). A rerun after an interruption finds the new file already written and only removes
        the old.
        """
        for path, moved, data in self.store._spill_moves(old_id, new_id):
            if moved == path:
                jsonfile.replace_atomically(path, data, mode=0o600, listed=self.store.listed)
                continue
            if not moved.exists():
                jsonfile.replace_atomically(moved, data, mode=0o600, listed=self.store.listed)
            if not keep:
                jsonfile.delete_locked(path)

    def drop_spill(self, ref: str) -> str | None:
        """Remove every spill record the library would merge into ``ref`` (:meth:`JsonDirStore._spill_records_of`),
        under ``ref``'s lock, the one the library's re-ingest takes; what was removed, for the change record.

        A delete does this before it removes the file: the library's load of an id whose file is gone makes
        a new session of the turns spilled for it, so a spill file left behind would bring the deleted session
        back, while a delete interrupted between the two leaves the session, which a rerun deletes. What would
        refuse the delete (a search index that cannot follow, another store's file) refuses here first, while
        nothing has changed.
        """
        self._refuse_foreign(ref, _current_or_none(ref))
        self._index(ref)
        records = self.store._spill_records_of(ref)
        for path, _ in records:
            try:
                jsonfile.delete_locked(path)
            except NotFound:
                continue
        if records:
            jsonfile.fsync_dir(self.store.spill_dir)
        return spill_words(records, "deleted")

    def rewrite_spill(self, session_id: str, change: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
        """Replace ``session_id``'s spill records by ``change(record)`` where it differs, in the library's
        one-line format, under the session's lock (the only one the library's re-ingest takes)."""
        import json

        for path, record in self.store._spill_records(session_id):
            new = change(record)
            if new != record:
                jsonfile.replace_atomically(path, json.dumps(new, ensure_ascii=False).encode("utf-8"), mode=0o600,
                                            listed=self.store.listed)

    def forget_replaced(self) -> None:
        """Nothing: an atomic replace leaves no copy of the old file in the directory."""


TRIES = 64  # a chunk whose first files all pass ``rules_out`` stops asking (the test costs a few percent of a file)


def _fold_chunk(paths: list[str], *, fold: Fold[A], partner: tuple[str, Fold[B]] | None, waiting: dict[str, int],
                label: str = JSON, foreign: Callable[[Any], bool] | None = None) -> list[tuple[A, B | None]]:
    """``fold`` over a chunk of session files (runs in a worker process for large directories) and ``partner``'s
    fold over the documents ``foreign`` recognises (another store's: without ``partner``, left out): the two
    partial results, in a list of one (:func:`~praisonmem.core.io.parallel.map_chunks` concatenates lists).
    A file whose bytes the folds rule out (``rules_out``) is parsed only as far as telling whether it is a valid
    session (an invalid one is reported all the same); with ``last_first`` the files are folded last first."""
    theirs_label, theirs_fold = partner if partner is not None else (label, None)
    folds = [fold] if theirs_fold is None else [fold, theirs_fold]
    rules_out = _rules_out(folds)
    mine = fold.empty()
    theirs = None if theirs_fold is None else theirs_fold.empty()
    backwards = all(getattr(f, "last_first", False) for f in folds)
    add_mine = _adder(fold, backwards)
    add_theirs = None if theirs_fold is None else _adder(theirs_fold, backwards)
    tried = 0
    for seen, path in enumerate(reversed(paths) if backwards else paths, 1):
        try:
            raw = jsonfile.read_bytes(path)
            skip = rules_out is not None and rules_out(raw)
            # a file folded needs its exact values; one that is not, only what the checks below look at
            doc = fastjson.loads_shape(raw) if skip else fastjson.REFUSED
            if type(doc) is not dict:
                doc = jsonfile.parse_object(raw, path)
            validate(doc, path)
        except PraisonMemError as exc:
            mine = add_mine(mine, Scanned(path, None, None, exc, ref=path, store=label))
            continue
        if skip:
            continue
        if rules_out is not None:
            tried += 1
            if tried == TRIES and tried == seen:  # nothing ruled out so far: most files pass
                rules_out = None
        if foreign is not None and foreign(doc):
            if add_theirs is not None:
                theirs = add_theirs(theirs, Scanned(path, session_id_of(doc, name_of(path)), doc, None, ref=path,
                                                    store=theirs_label))
            continue
        sid = session_id_of(doc, name_of(path))
        mine = add_mine(mine, Scanned(path, sid, doc, None, ref=path, store=label, spilled=waiting.get(sid, 0)))
    return [(mine, theirs)]


def _rules_out(folds: list[Any]) -> Callable[[bytes], bool] | None:
    """What rules a file out for every one of ``folds`` (``None``: nothing does)."""
    tests = [getattr(f, "rules_out", None) for f in folds]
    if any(t is None for t in tests):
        return None
    if all(t == tests[0] for t in tests):
        return tests[0]
    return lambda raw: all(t(raw) for t in tests)


def _adder(fold: Any, backwards: bool) -> Callable[[Any, Scanned], Any]:
    """``fold.add``, or (``backwards``: the items come last first) its ``add_first`` with ``add``'s arguments."""
    if not backwards:
        return fold.add
    first = fold.add_first
    return lambda acc, item: first(item, acc)


def _part_each(paths: list[str], *, fold: Any, partner: tuple[str, Any] | None, waiting: dict[str, int],
               label: str = JSON, foreign: Callable[[Any], bool] | None = None,
               encode: Callable[[Any], Any] | None = None) -> list[tuple[str | None, Any, Any, Any, Any]]:
    """Per file of a chunk: its session id (``None``: unreadable, or another store's file), its part of ``fold``
    (``fold.part``; ``None`` for another store's file), ``encode(part)`` (what a memo keeps of it; when there is
    that, for a readable session with no spilled turns waiting, it is sent instead of the part), the file's
    :class:`~praisonmem.core.io.cache.FileKey`, taken before it is read, and, for a document ``foreign``
    recognises, ``partner``'s part of it (else ``None``; without ``partner`` such a file has no part at all)
    (may run in a worker)."""
    from praisonmem.core.io import cache

    theirs_label, theirs_fold = partner if partner is not None else (label, None)
    out: list[tuple[str | None, Any, Any, Any, Any]] = []
    for path in paths:
        key = cache.key_of(path)
        try:
            doc = load(path)
        except PraisonMemError as exc:
            out.append((None, fold.part(Scanned(path, None, None, exc, ref=path, store=label)), None, key, None))
        else:
            if foreign is not None and foreign(doc):
                their = None if theirs_fold is None else theirs_fold.part(
                    Scanned(path, session_id_of(doc, name_of(path)), doc, None, ref=path, store=theirs_label))
                out.append((None, None, None, key, their))
                continue
            sid = session_id_of(doc, name_of(path))
            spilled = waiting.get(sid, 0)
            part = fold.part(Scanned(path, sid, doc, None, ref=path, store=label, spilled=spilled))
            value = encode(part) if encode is not None and not spilled else None
            out.append((sid, None, value, key, None) if value is not None else (sid, part, None, key, None))
    return out


def scan_shared(store: JsonDirStore, fold: Fold[A], partner: tuple[str, Fold[B]] | None, *,
                progress: Callable[[int, int], None] | None = None, memo: Memo | None = None) -> tuple[A, B | None]:
    """``store``'s scan with ``fold`` and, with ``partner`` (a label and a fold), that fold over the documents its
    ``foreign`` recognises: see :meth:`JsonDirStore._scan_shared` (a function, not a method: no other store has it)."""
    return store._scan_shared(fold, partner, progress=progress, memo=memo)


def refs_named(store: JsonDirStore, prefix: str) -> list[str]:
    """``store.refs()`` whose name starts with ``prefix``, reading only those (to leave out another store's)."""
    store._check_home()
    return [p for p in session_paths(store.directory) if name_of(p).startswith(prefix) and not store._foreign(p)]


def waiting_for(store: JsonDirStore, session_id: str) -> Callable[[Any], bool] | None:
    """Whether a message is one of the turns waiting for ``session_id`` in ``store``'s spill dir (``None``: none
    wait); a reader that streams a huge session looks among its messages for these only (:meth:`JsonDirStore.spilled`
    needs no others of them as ``present``)."""
    keys = {spill_key(m) for _, record in store._spill_records(session_id) for m in messages_of(record)
            if isinstance(m, dict)}
    return (lambda message: isinstance(message, dict) and spill_key(message) in keys) if keys else None


def _json_tx(tx: Any, ref: Any) -> tuple[Transaction, str]:
    """The JSON-directory transaction holding ``ref``, and its file (a home's transaction holds one per store)."""
    inner = tx.txs[ref.store] if isinstance(getattr(tx, "txs", None), dict) else tx
    if not isinstance(inner, Transaction):
        raise PraisonMemError(f"{ref}: not a JSON-directory session")
    return inner, str(getattr(ref, "ref", ref))


def read_top(tx: Any, ref: Any) -> dict[str, Any] | None:
    """``tx.read(ref)`` of a huge file, as its skeleton (:func:`~praisonmem.core.sessions.streamed.read_top`: read
    a message at a time; ``None``: gone; ``Unstreamable`` when only ``tx.read`` reads it)."""
    from praisonmem.core.sessions.streamed import read_top as skeleton_of

    _, path = _json_tx(tx, ref)
    try:
        return skeleton_of(path)
    except NotFound:
        return None


def write_streamed(tx: Any, ref: Any, source: Any, doc: dict[str, Any], current: dict[str, Any] | None) -> None:
    """``tx.write`` of ``doc``, the skeleton of the huge file ``source`` with top-level members edited, over ``ref``
    (whose skeleton is ``current``), a message at a time: the file written is read back in full
    (:func:`~praisonmem.core.sessions.streamed.prove`) before it replaces ``ref`` as every write does. Its messages
    are ``source``'s, copied unchanged, so no plaintext comes into an encrypted session. A directory with a search
    index takes ``tx.write`` (its rows follow the whole document): ``Unstreamable`` before anything is written."""
    from praisonmem.core.sessions.streamed import Unstreamable, chunks_of, opened, prove

    inner, path = _json_tx(tx, ref)
    _, source_path = _json_tx(tx, source)
    inner._refuse_foreign(path, current)
    if jsonfile.is_compact_document(doc):
        raise Unstreamable("a compact document")
    if inner._index(path) is not None:
        raise Unstreamable("the directory has a search index")
    # written to a temp file, read back in full, and only then renamed over the file (the usual replace); a file
    # that does not prove is removed with nothing changed, and a source that does not stream raises Unstreamable
    # with nothing written
    with opened(source_path) as fd, jsonfile.replacing(path, sweep=True, listed=inner.store.listed) as handle:
        for piece in chunks_of(fd, doc):
            handle.write(piece)
        handle.flush()
        problem = prove(handle.fileno(), fd, doc)
        if problem is not None:
            raise IOFailure(f"{path}: the file written did not read back as the session ({problem}); nothing "
                            "changed")


def is_foreign(path: str, foreign: Callable[[Any], bool]) -> bool:
    """The file holds a document ``foreign`` recognises (a file that does not parse is nobody else's). ``foreign``
    looks at the top-level members only, so a huge file is asked about as its skeleton, read a message at a time
    (:func:`top_of_huge`)."""
    try:
        doc = top_of_huge(path)
        return foreign(jsonfile.read(path) if doc is None else doc)
    except PraisonMemError:
        return False


def is_huge(path: str) -> bool:
    """A regular file of :data:`~praisonmem.core.layout.HUGE_SESSION` bytes or more (one ``stat``)."""
    import stat

    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return False
    return stat.S_ISREG(st.st_mode) and st.st_size >= HUGE_SESSION


def top_of_huge(path: str) -> dict[str, Any] | None:
    """The skeleton of a huge session file (:func:`~praisonmem.core.sessions.streamed.top_level`, read a message at a
    time); ``None`` for a smaller one (read it whole) or one that does not stream."""
    if not is_huge(path):
        return None
    from praisonmem.core.sessions.streamed import top_level  # only then: the stream reader stays out of start-up

    return top_level(path)


def _current_top(ref: str) -> dict[str, Any] | None:
    """:func:`_current_or_none` for what needs the top-level members only (a huge file is read a message at a
    time, :func:`top_of_huge`)."""
    top = top_of_huge(ref)
    return _current_or_none(ref) if top is None else top


def _current_or_none(ref: str) -> dict[str, Any] | None:
    """The document a write or delete replaces, for its index rows (``None``: absent or unreadable)."""
    try:
        return jsonfile.read_current(ref)
    except PraisonMemError:
        return None


def spill_files(store: JsonDirStore, ref: str) -> list[Path]:
    """The spill files whose turns the library would merge into the file ``ref`` (``session path`` names them); a
    function, not a method: no other store has a spill dir."""
    return [path for path, _ in store._spill_records_of(ref)]


def _spill_files(spill_dir: Path) -> list[Path]:
    """The spill dir's ``*.json`` regular files (or links to one), in name order, as the library's re-ingest
    takes them."""
    try:
        with os.scandir(spill_dir) as entries:
            return sorted(Path(e.path) for e in entries if e.name.endswith(".json") and _is_regular(e))
    except (FileNotFoundError, NotADirectoryError):
        return []
    except OSError as exc:
        raise io_failure(spill_dir, exc) from exc


def spill_words(records: Sequence[tuple[Path, dict[str, Any]]], verb: str) -> str | None:
    """``N spilled turns in M spill files <verb> with it``, for a change record (``None``: no spill file)."""
    if not records:
        return None
    turns = sum(len(messages_of(record)) for _, record in records)
    return f"{plural(turns, 'spilled turn')} in {plural(len(records), 'spill file')} {verb} with it"


def spill_key(message: dict[str, Any]) -> tuple[Any, ...]:
    """What makes two messages one turn for the library's spill re-ingest (``_reingest_spill``'s ``_key``): the
    role, content and timestamp ``SessionMessage.from_dict`` gives them (``"user"`` and ``""`` when missing),
    each frozen as the library freezes it, so ``1``, ``1.0`` and ``True`` differ while object keys may come in
    any order. A message without a timestamp gets the clock's time there, so it matches no other: here it gets
    a value of its own."""
    stamp = message["timestamp"] if "timestamp" in message else object()
    return (_frozen(message.get("role", "user")), _frozen(message.get("content", "")), _frozen(stamp))


def _frozen(value: Any) -> tuple[Any, ...]:
    """The library's ``_freeze``: a flat tuple of (type, value) tokens, object keys sorted, built without
    recursion (a JSON value holds no cycle, so its cycle check has nothing to find)."""
    tokens: list[Any] = []
    stack: list[tuple[bool, Any]] = [(False, value)]  # (is an object key, item)
    while stack:
        is_key, item = stack.pop()
        if is_key:
            tokens.append(("key", type(item), item))
        elif isinstance(item, (list, dict)):
            tokens.append((type(item), len(item)))
            if isinstance(item, list):
                stack.extend((False, child) for child in reversed(item))
            else:
                for key in sorted(item, reverse=True):
                    stack.append((False, item[key]))
                    stack.append((True, key))
        else:
            tokens.append((type(item), item))
    return tuple(tokens)


def _holds_id(path: str, session_id: str) -> bool:
    try:
        return jsonfile.read_object(path).get("session_id") == session_id
    except PraisonMemError:
        return False
