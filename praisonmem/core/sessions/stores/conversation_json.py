"""PraisonAI's JSON conversation store (praisonai 4.7.19 ``JSONConversationStore``, default dir
``./praisonai_conversations``), as a :class:`~praisonmem.core.sessions.stores.SessionStore`.

One file per session, ``<id>.json`` = ``{"session": {...}, "messages": [...]}`` (the SQL store's session row and
message rows as JSON objects), and ``_sessions_index.json`` = ``{"sessions": {<id>: {user_id, agent_id, name,
created_at, updated_at}}}``, which the library's ``list_sessions`` walks (it then loads each file; an entry whose
file is gone is skipped, a file the index does not name is not listed though ``get_session`` loads it).
praisonmem sees each session as the PraisonAI JSON document :mod:`.conversation_map` maps the rows to and from,
so every session command works here as on the SQL store.

* **Reading** takes no lock and writes nothing; the session files are the truth (a file the index misses is
  listed too: it is the user's data, and ``get_session`` loads it). ``check`` reports an index that lies.
* **Writing**: the library's cross-process protection is none (a ``threading.Lock`` inside one process), so
  praisonmem holds its own flock on ``_sessions_index.json.lock`` over every change and re-reads under it. Each
  change writes the index first (naming the session as it will be), then the session file, each as the library
  writes it (``json.dump(indent=2, default=str)``, or without indent where the store is compact; a temp file in
  the same dir, fsync, ``os.replace``). A kill between the two leaves an index ahead of the files: the library
  then skips an entry without a file and does not list a file without an entry; the same command run again
  finishes the file, and any praisonmem write first repairs the index from the files (:func:`repair_index`), as
  finishing the library's own interrupted ``create_session``/``delete_session`` would; ``check`` reports it. An
  index that does not parse or is not the library's shape is never overwritten (exit 4). A running app keeps
  its index in memory and rewrites it whole on its next change: stop it while praisonmem writes.
* **Fields**: a written session keeps every value the change did not touch as the file held it (a message's
  ``metadata: null``, an int time, an unknown key), so the library reads back exactly the change; a library
  session edited stays a plain library file, its title its ``name``. A session praisonmem brings in from another
  store keeps the map's side rows (what the columns cannot hold) as ``[[message_id, archived, json], ...]`` under
  the file's top-level ``_praisonmem``, after ``session`` and ``messages``: the library's loader ignores it and
  its ``update_session``/``add_message`` keep it, so the session goes back to a JSON directory byte for byte,
  and nothing of praisonmem's is in a field the library shows.
* **Ids** are the library's: ``[A-Za-z0-9_-:.]{1,128}``, no ``..``, not ``_sessions_index``; a session with
  another id cannot be kept here (exit 2, nothing written).
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from praisonmem.core.errors import CorruptFile, NotFound, PraisonMemError, Refused, UsageError
from praisonmem.core.io import jsonfile
from praisonmem.core.sessions.documents import title_of, validate
from praisonmem.core.sessions.stores import Fold, PlainStore, Scanned, ambiguous
from praisonmem.core.sessions.stores.conversation_map import NS, RESERVED, doc_to_rows, iso_epoch, rows_to_doc
from praisonmem.core.sessions.stores.conversation_sql import MESSAGE_COLUMNS, SESSION_COLUMNS, ConvRef
from praisonmem.core.sessions.stores.names import CONVERSATION_INDEX, CONVERSATION_JSON, is_conversation_file, valid_id
from praisonmem.core.io.safetext import plural

A = TypeVar("A")
ROW_COLUMNS = [c for c in SESSION_COLUMNS if c != "session_id"]


def dumps(data: Any, pretty: bool) -> bytes:
    """The library's serialisation (``_atomic_write_json``): ASCII, ``default=str``, no trailing newline."""
    text = json.dumps(data, indent=2, default=str) if pretty else json.dumps(data, default=str)
    return text.encode("ascii")


# ---------------------------------------------------------------- file <-> document


def _rows(sid: str, data: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The session row and message rows a file holds, messages in the library's ``get_messages`` order."""
    s = data["session"]
    srow = {"session_id": sid, **{c: s.get(c) for c in ROW_COLUMNS}}
    mrows = []
    for n, m in enumerate(data["messages"]):
        if not isinstance(m, dict):
            raise CorruptFile(sid, f"messages[{n}] is {jsonfile.json_kind(m)}, not an object")
        row = {c: m.get(c) for c in MESSAGE_COLUMNS}
        if not isinstance(row["id"], str):
            row["id"] = str(uuid.uuid5(NS, f"{sid}\x1f{n}"))  # the library makes one anew on each read
        row["role"] = row["role"] if row["role"] is not None else ""
        mrows.append(row)
    try:
        mrows.sort(key=lambda r: r["created_at"])  # stable, as the library's sort
    except TypeError:
        pass  # a missing or non-numeric time: the library cannot sort them either; file order
    return srow, mrows


def _side(data: dict[str, Any]) -> dict[str, tuple[int, str]]:
    """The map's side rows a file keeps under its top-level ``_praisonmem`` (``[[message_id, archived, json],
    ...]``, ``""`` for the session), by message id; ``{}`` for a file the library wrote."""
    rows = data.get(RESERVED)
    out: dict[str, tuple[int, str]] = {}
    for r in rows if isinstance(rows, list) else []:
        if isinstance(r, list) and len(r) == 3 and isinstance(r[0], str) and type(r[1]) is int \
                and isinstance(r[2], str):
            out[r[0]] = (r[1], r[2])
    return out


def _foreign(data: dict[str, Any]) -> bool:
    """A session the library wrote (no side rows beside its fields)."""
    return not _side(data)


def _titled_by_name(data: dict[str, Any]) -> bool:
    """A library session whose title is its ``name`` (its metadata has no ``title``): a retitle sets the name."""
    md = data["session"].get("metadata")
    return _foreign(data) and not (isinstance(md, dict) and "title" in md)


def file_to_text(sid: str, data: dict[str, Any]) -> str:
    """The session document for a store file (its text, in the library's layout or as praisonmem kept it)."""
    srow, mrows = _rows(sid, data)
    text, _ = rows_to_doc(sid, srow, mrows, _side(data))
    return text


def _loads(raw: bytes) -> Any:
    return json.loads(raw.decode("utf-8", "surrogatepass"))  # as the map reads a document's bytes


def _title_as_name(raw: bytes) -> bytes:
    """The document with its title (``metadata.title``, else the top-level one) as the top-level ``title``, the
    field the map takes a library session's name from, and none in its metadata."""
    doc = _loads(raw)
    title, md = title_of(doc), doc.get("metadata")
    if isinstance(md, dict):
        doc["metadata"] = {k: v for k, v in md.items() if k != "title"}
    doc["title"] = title
    return json.dumps(doc, ensure_ascii=True, allow_nan=True).encode("ascii")


Rows = tuple[dict[str, Any], list[dict[str, Any]], list[tuple[str, int, str]]]


def _columns(raw: bytes, foreign: bool = False, titled: bool = False) -> tuple[str, dict[str, Any],
                                                                          list[dict[str, Any]],
                                                                          list[tuple[str, int, str]]]:
    """The map's rows and side rows for a document; for a library session edited in place (``foreign``), its times
    as the document says them (the copy of its row the document carries has them as they were read) and, where
    its title is its name (``titled``), the title as the name rather than a metadata key."""
    sid, srow, mrows, side = doc_to_rows(_title_as_name(raw) if titled else raw, postgres=False)
    if foreign:
        doc = _loads(raw)
        for key in ("created_at", "updated_at"):
            stamp = iso_epoch(doc.get(key))
            srow[key] = stamp if stamp is not None else srow[key]
    return sid, srow, mrows, side


def _session_obj(sid: str, srow: dict[str, Any]) -> dict[str, Any]:
    return {"session_id": sid, **{c: srow[c] for c in ROW_COLUMNS}}


def _message_obj(sid: str, row: dict[str, Any]) -> dict[str, Any]:
    return {"id": row["id"], "session_id": sid, **{c: row[c] for c in MESSAGE_COLUMNS[2:]}}


def _merged(sid: str, new: Rows, base: dict[str, Any] | None,
            old: tuple[dict[str, Any], list[dict[str, Any]]] | None) -> dict[str, Any]:
    """The file for rows and side rows ``new``: every value equal to what the ``base`` file's rows (``old``)
    project to is kept as ``base`` holds it; the side rows (none: none kept) under the top-level ``_praisonmem``."""
    srow, mrows, side = new
    if base is None or old is None:
        out = {"session": _session_obj(sid, srow), "messages": [_message_obj(sid, r) for r in mrows]}
    else:
        osrow, omrows = old
        s_base = base["session"]
        session = dict(s_base)
        session["session_id"] = sid
        for c in ROW_COLUMNS:
            if srow[c] != osrow[c] or c not in s_base:
                session[c] = srow[c]
        by_id = {r["id"]: r for r in omrows}
        raw_by_id = {m.get("id"): m for m in base["messages"] if isinstance(m, dict)}
        messages = []
        for r in mrows:
            o, m_base = by_id.get(r["id"]), raw_by_id.get(r["id"])
            if o is None or m_base is None:
                messages.append(_message_obj(sid, r))
                continue
            m = dict(m_base)
            if "session_id" in m:
                m["session_id"] = sid
            for c in MESSAGE_COLUMNS[2:]:
                if r[c] != o[c] or c not in m_base:
                    m[c] = r[c]
            messages.append(m)
        out = {"session": session, "messages": messages}
    if side:
        out[RESERVED] = [list(row) for row in side]
    return out


def doc_to_file(raw: bytes, base: dict[str, Any] | None, base_id: str | None) -> tuple[str, dict[str, Any]]:
    """``(session_id, file object)`` for a document's bytes, over the file ``base`` (the session as stored now,
    or the file it is renamed from) so values the change did not touch stay as stored. A library session
    edited stays a plain library file when its fields rebuild the document; otherwise the map's side rows ride
    along under the file's top-level ``_praisonmem``, which the library's loader ignores."""
    sid, srow, mrows, side = _columns(raw)
    if side and base is not None and _foreign(base):
        titled = _titled_by_name(base)
        _, psrow, pmrows, _ = _columns(raw, True, titled)
        plain = _merged(sid, (psrow, pmrows, []), base, _old(base, base_id, True, titled))
        try:
            again = file_to_text(sid, plain)
            if _canonical(json.loads(again), titled) == _canonical(_loads(raw), titled):
                return sid, plain
        except (PraisonMemError, ValueError, TypeError, KeyError, AttributeError):
            pass
        base = None  # the library's fields cannot hold it: written whole, with the side rows
    return sid, _merged(sid, (srow, mrows, side), base, _old(base, base_id))


def _old(base: dict[str, Any] | None, base_id: str | None, foreign: bool = False, titled: bool = False
         ) -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
    """The rows the ``base`` file's document maps to (what an unchanged value of the new rows equals)."""
    if base is None or base_id is None:
        return None
    try:
        text = file_to_text(base_id, base)
        _, osrow, omrows, _ = _columns(text.encode("utf-8", "surrogatepass"), foreign, titled)
    except (PraisonMemError, ValueError, TypeError, KeyError, AttributeError):
        return None
    return osrow, omrows


def _canonical(doc: Any, titled: bool) -> str:
    """The document compared without the copy of the session's columns it carries (its top-level
    ``_praisonmem``: derived from the columns, so stale in an edited document) and, where the title is the
    name, with the title in one place."""
    if isinstance(doc, dict):
        doc = {k: v for k, v in doc.items() if k != RESERVED}
        if titled:
            doc = json.loads(_title_as_name(json.dumps(doc, ensure_ascii=True, allow_nan=True).encode("ascii")))
    return json.dumps(doc, sort_keys=True, ensure_ascii=True, allow_nan=True, separators=(",", ":"))


def index_entry(session: dict[str, Any]) -> dict[str, Any]:
    """What the library's ``create_session`` indexes of a session."""
    return {k: session.get(k) for k in ("user_id", "agent_id", "name", "created_at", "updated_at")}


# ---------------------------------------------------------------- the store


class ConversationJsonStore(PlainStore):
    """The sessions of one JSON conversation-store directory; see the module docstring."""

    label = CONVERSATION_JSON

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.where = str(directory)
        self.index_path = directory / CONVERSATION_INDEX
        self.listed: jsonfile.Listed = {}

    # -------------------------------------------------------- naming

    def _file(self, session_id: str) -> Path:
        return self.directory / f"{session_id}.json"

    def ref(self, session_id: str, *, beside: ConvRef | None = None) -> ConvRef:
        shown = session_id if valid_id(session_id) else "(invalid id)"
        return ConvRef(str(self._file(shown)), session_id)

    def name(self, ref: ConvRef) -> str:
        return ref.session_id

    def session_id(self, ref: ConvRef, doc: dict[str, Any]) -> str:
        return ref.session_id

    # -------------------------------------------------------- reading

    def ids(self) -> list[str]:
        """The ids of the session files, sorted (the index and files the library cannot address left out)."""
        try:
            with os.scandir(self.directory) as entries:
                names = [e.name for e in entries if e.name.endswith(".json") and e.is_file()]
        except FileNotFoundError:
            return []
        except NotADirectoryError:
            return []
        except OSError as exc:
            from praisonmem.core.errors import io_failure

            raise io_failure(self.directory, exc, "cannot list") from exc
        return sorted(n[:-5] for n in names if valid_id(n[:-5]))

    def refs(self) -> list[ConvRef]:
        return [ConvRef(str(self._file(i)), i) for i in self.ids()]

    def exists(self, ref: ConvRef) -> bool:
        return valid_id(ref.session_id) and self._file(ref.session_id).is_file()

    def absent(self) -> str | None:
        if not self.directory.exists():
            return f"{self.directory}: no such directory"
        return None

    def find(self, name: str, *, allow_prefix: bool = False) -> ConvRef:
        if self.absent() is None and not self.directory.is_dir():
            raise UsageError(f"{self.directory}: not a directory")
        if valid_id(name) and self._file(name).is_file():
            return ConvRef(str(self._file(name)), name)
        if name.endswith(".json") and os.sep in name:  # a path to a session file of this store
            path = Path(name).expanduser()
            if path.parent.resolve() == self.directory.resolve() and valid_id(path.name[:-5]) and path.is_file():
                return ConvRef(str(self._file(path.name[:-5])), path.name[:-5])
            from praisonmem.core.sessions.stores import OutsideStore

            raise OutsideStore(name, [self.where])
        if allow_prefix and name:
            matches = [i for i in self.ids() if i.startswith(name)]
            if len(matches) == 1:
                return ConvRef(str(self._file(matches[0])), matches[0])
            if matches:
                raise ambiguous(name, matches, self.where)
        raise NotFound(f"no session '{name}' in {self.where}")

    def load(self, ref: ConvRef) -> dict[str, Any]:
        """The store file, parsed and checked to have the store's shape (:class:`CorruptFile` otherwise)."""
        path = self._file(ref.session_id)
        return self.checked(path, jsonfile.parse(jsonfile.read_bytes(path), path))

    @staticmethod
    def checked(path: Path, data: Any) -> dict[str, Any]:
        if not is_conversation_file(data):
            raise CorruptFile(str(path), 'not a conversation-store session ({"session": {...}, "messages": [...]})')
        return data

    def _text(self, ref: ConvRef, data: dict[str, Any]) -> bytes:
        try:
            text = file_to_text(ref.session_id, data)
        except CorruptFile as exc:
            raise CorruptFile(str(ref), exc.message.split(": ", 1)[-1]) from exc
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            raise CorruptFile(str(ref), f"a session praisonmem cannot read ({exc})") from exc
        try:
            return text.encode("utf-8")
        except UnicodeEncodeError:
            return text.encode("utf-8", "replace")

    def read_bytes(self, ref: ConvRef) -> bytes:
        """The session document's bytes; a file that is not JSON as it is (so :meth:`parse` says why, and a secret
        scan searches its bytes)."""
        if not self.exists(ref):
            raise NotFound(f"no session '{ref.session_id}' in {self.where}")
        path = self._file(ref.session_id)
        raw = jsonfile.read_bytes(path)
        try:
            data = jsonfile.parse(raw, path)
        except CorruptFile:
            return raw
        return self._text(ref, self.checked(path, data))

    def parse(self, ref: ConvRef, raw: bytes) -> dict[str, Any]:
        return validate(jsonfile.parse_object(raw, str(ref)), str(ref))

    def read(self, ref: ConvRef) -> dict[str, Any]:
        return self.parse(ref, self.read_bytes(ref))

    def scan(self, fold: Fold[A], *, progress: Callable[[int, int], None] | None = None, memo: Any = None) -> A:
        acc = fold.empty()
        refs = self.refs()
        for n, ref in enumerate(refs, 1):
            try:
                doc = self.read(ref)
            except NotFound:
                continue  # deleted while listed
            except PraisonMemError as exc:
                acc = fold.add(acc, Scanned(str(ref), ref.session_id, None, exc, ref=ref, store=self.label))
            else:
                acc = fold.add(acc, Scanned(str(ref), ref.session_id, doc, None, ref=ref, store=self.label))
            if progress:
                progress(n, len(refs))
        return acc

    def holds(self, ref: ConvRef, doc: dict[str, Any]) -> bool:
        try:
            return self.read_bytes(ref) == jsonfile.serialise(doc)
        except PraisonMemError:
            return False

    def seconds_since_write(self, ref: ConvRef, doc: dict[str, Any], now: float) -> float | None:
        from praisonmem.core.io.timeutil import epoch_of

        stamp = epoch_of(doc.get("updated_at"))
        return None if stamp is None else now - stamp

    # -------------------------------------------------------- the index

    def read_index(self) -> tuple[dict[str, Any] | None, bool]:
        """The index (``None``: there is none) and whether it is indented; :class:`CorruptFile` when it does not
        parse or is not ``{"sessions": {...}}``, so it is never overwritten."""
        try:
            raw = jsonfile.read_bytes(self.index_path)
        except NotFound:
            return None, True
        index = jsonfile.parse(raw, self.index_path)
        if not (isinstance(index, dict) and isinstance(index.get("sessions"), dict)
                and all(isinstance(v, dict) for v in index["sessions"].values())):
            raise CorruptFile(str(self.index_path), 'not the store\'s index ({"sessions": {<id>: {...}}})')
        return index, raw.startswith(b"{\n")

    def index_problems(self) -> list[str]:
        """How the index differs from the session files (what ``check`` reports; empty: coherent)."""
        try:
            index, _ = self.read_index()
        except PraisonMemError as exc:
            return [f"{exc.message} (the library cannot open this store)"]
        ids = set(self.ids())
        if index is None:
            return [f"{self.index_path}: missing, so the library lists none of the {plural(len(ids), 'session')}"] \
                if ids else []
        listed = index["sessions"]
        out = []
        gone = [i for i in listed if i not in ids]
        missed = sorted(i for i in ids if i not in listed and self._loads(i))
        if gone:
            out.append(f"{self.index_path}: names {plural(len(gone), 'session')} with no file ({', '.join(gone[:5])}); "
                       "the library skips them")
        if missed:
            out.append(f"{self.index_path}: misses {plural(len(missed), 'session file')} ({', '.join(missed[:5])}); the "
                       "library's list_sessions does not show them")
        return out + [f"{self.where}: {n}: not a session file the library can address" for n in self._strays()]

    def _loads(self, session_id: str) -> bool:
        try:
            self.load(ConvRef("", session_id))
        except PraisonMemError:
            return False
        return True

    def _strays(self) -> list[str]:
        try:
            names = os.listdir(self.directory)
        except OSError:
            return []
        return sorted(n for n in names if n.endswith(".json") and n != CONVERSATION_INDEX and not valid_id(n[:-5]))

    # -------------------------------------------------------- writing

    @contextmanager
    def transaction(self, refs: Sequence[ConvRef], timeout: float = jsonfile.LOCK_TIMEOUT
                    ) -> Iterator[ConvJsonTransaction]:
        """Hold praisonmem's lock on the store (``_sessions_index.json.lock``), check the index parses, sweep
        the temp files killed writes left, then change files through the :class:`ConvJsonTransaction`."""
        if self.directory.exists() and not self.directory.is_dir():
            raise UsageError(f"{self.directory}: not a directory")
        self.read_index()  # an index that will be refused: refused before even the lock file is made
        with jsonfile.locked(self.index_path, timeout):
            index, pretty = self.read_index()
            jsonfile.sweep_leftovers(self.index_path, listed=self.listed)
            for ref in refs:
                if valid_id(ref.session_id):
                    jsonfile.sweep_leftovers(self._file(ref.session_id), listed=self.listed)
            tx = ConvJsonTransaction(self, index, pretty)
            try:
                yield tx
            except BaseException:
                tx.finish(failed=True)
                raise
            tx.finish()

    def prepare_write(self, timeout: float = jsonfile.LOCK_TIMEOUT) -> None:
        """Fail now, with nothing written, when the store cannot be written (a path that is a file, an index
        that does not parse)."""
        if self.directory.exists() and not self.directory.is_dir():
            raise UsageError(f"{self.directory}: not a directory")
        if self.index_path.exists():
            self.read_index()


class ConvJsonTransaction:
    """Changes under the store's lock: every read a re-read. Each change writes the index first (repaired, then
    naming the session as it will be), then the session file, so a kill between the two leaves an index ahead of
    the files, which the same command run again finishes (its file written or removed) and any write repairs."""

    def __init__(self, store: ConversationJsonStore, index: dict[str, Any] | None, pretty: bool) -> None:
        self.store = store
        self.index = index  # as read under the lock
        self.pretty = pretty
        self.notes: list[str] = []
        self.ahead: dict[str, Any] | None = None  # the index as this transaction last wrote it
        self.read_files: dict[str, dict[str, Any]] = {}  # what this transaction read, for renames' values
        self.changed = False

    def exists(self, ref: ConvRef) -> bool:
        return self.store.exists(ref)

    def _load(self, ref: ConvRef) -> dict[str, Any] | None:
        if not self.store.exists(ref):
            return None
        data = self.store.load(ref)
        self.read_files[ref.session_id] = data
        return data

    def read_bytes(self, ref: ConvRef) -> bytes | None:
        data = self._load(ref)
        return None if data is None else self.store._text(ref, data)

    def read(self, ref: ConvRef) -> dict[str, Any] | None:
        raw = self.read_bytes(ref)
        return None if raw is None else self.store.parse(ref, raw)

    def write(self, ref: ConvRef, doc: dict[str, Any]) -> None:
        self.write_raw(ref, jsonfile.serialise(doc))

    def write_raw(self, ref: ConvRef, raw: bytes) -> None:
        """The session as these document bytes map to the store's file, the values the change did not touch
        kept as stored. Plaintext never goes into an encrypted session (as in every store's transaction)."""
        from praisonmem.core.sessions.crypto import unsealed

        sid = ref.session_id
        if not valid_id(sid):
            raise UsageError(f"session id {sid[:80]!r} cannot be a JSON conversation-store file name (the "
                             "library's ids: letters, digits, '_-:.', at most 128, no '..'); nothing written (give "
                             "it such an id with 'session rename' first)")
        current = self.read(ref)
        problem = unsealed(current, self.store.parse(ref, raw))
        if problem:
            raise Refused(f"{ref}: {problem}; nothing changed")
        base, base_id = self.read_files.get(sid), sid
        if current is None:  # a rename's target: the source's stored values, when this transaction read it
            base, base_id = self._rename_source(raw)
        doc_sid, data = doc_to_file(raw, base, base_id)
        if doc_sid != sid:
            raise UsageError(f"{ref}: the document's session_id is {doc_sid!r}")
        path = self.store._file(sid)
        pretty = self.pretty if current is None else self._pretty_of(path)
        body = dumps(data, pretty)
        self._index_to(sid, index_entry(data["session"]), after=base_id if current is None else None)
        jsonfile.replace_atomically(path, body, listed=self.store.listed)
        self.read_files[sid] = data

    def delete(self, ref: ConvRef) -> None:
        if not self.store.exists(ref):
            raise NotFound(f"{ref}: no such session")
        self._index_to(ref.session_id, None)
        jsonfile.delete_locked(self.store._file(ref.session_id))
        jsonfile.fsync_dir(self.store.directory)

    def _index_to(self, sid: str, entry: dict[str, Any] | None, *, after: str | None = None) -> None:
        """Write the index naming ``sid`` with ``entry`` (``None``: not at all; a new one ``after`` the session it
        is renamed from, so it takes that one's place), repaired first, before the file changes."""
        self.changed = True
        if self.ahead is None:
            self.ahead = self._repaired()
        sessions = self.ahead["sessions"]
        if entry is None:
            sessions.pop(sid, None)
        elif sid in sessions:
            sessions[sid] = {**sessions[sid], **entry}  # the library's own keys kept, in their order
        else:
            items = list(sessions.items())
            at = next((i + 1 for i, (k, _) in enumerate(items) if k == after), len(items))
            items.insert(at, (sid, entry))
            self.ahead["sessions"] = dict(items)
        self._put(self.ahead)

    def _repaired(self) -> dict[str, Any]:
        new, said = repair_index(self.store, self.index)
        if said:
            self.notes.append(f"repaired {CONVERSATION_INDEX}: {said}")
        return new

    def _put(self, index: dict[str, Any]) -> None:
        self.store.directory.mkdir(parents=True, exist_ok=True)
        jsonfile.replace_atomically(self.store.index_path, dumps(index, self.pretty), listed=self.store.listed)

    def _pretty_of(self, path: Path) -> bool:
        try:
            with open(path, "rb") as f:
                return f.read(2) == b"{\n"
        except OSError:
            return self.pretty

    def _rename_source(self, raw: bytes) -> tuple[dict[str, Any] | None, str | None]:
        try:
            doc = _loads(raw)
            first = [m for m in doc.get("messages") or [] if isinstance(m, dict)]
        except (ValueError, AttributeError):
            return None, None
        for sid, data in self.read_files.items():
            try:
                if json.loads(self.store._text(ConvRef("", sid), data)).get("messages") == first:
                    return data, sid
            except (PraisonMemError, ValueError, AttributeError):
                continue
        return None, None

    def carry_spill(self, old_id: str, new_id: str, *, keep: bool = False) -> None:
        """Nothing: a conversation store has no spill dir."""

    def rewrite_spill(self, session_id: str, change: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
        """Nothing: a conversation store has no spill dir."""

    def drop_spill(self, ref: Any) -> str | None:
        """Nothing: a conversation store has no spill dir."""
        return None

    def forget_replaced(self) -> None:
        """Nothing more: each file is replaced atomically, and the index holds no message text."""

    def finish(self, *, failed: bool = False) -> None:
        """After a transaction that changed nothing and did not fail, the repair of an index that lies (a refusal
        writes nothing)."""
        if self.changed or failed or (self.index is None and not self.store.ids()):
            return
        new = self._repaired()
        if new != self.index or self.index is None:
            self._put(new)


def repair_index(store: ConversationJsonStore, index: dict[str, Any] | None) -> tuple[dict[str, Any], str | None]:
    """The index naming exactly the session files there are (an entry without a file dropped, a file without one
    added from its session, as finishing the library's interrupted create/delete would; a file that does not parse
    stays out, as the library cannot list it), and what that changed (``None``: nothing)."""
    sessions = dict(index["sessions"]) if index is not None else {}
    files = set(store.ids())
    dropped = [i for i in sessions if i not in files]
    for sid in dropped:
        del sessions[sid]
    found = []
    for sid in sorted(files - set(sessions)):
        try:
            data = store.load(ConvRef("", sid))
        except PraisonMemError:
            continue
        sessions[sid] = index_entry(data["session"])
        found.append(sid)
    out = dict(index) if index is not None else {}
    out["sessions"] = sessions
    said = "; ".join(p for p in (f"added {plural(len(found), 'session file')} it missed ({', '.join(found[:5])})" if found
                                 else "",
                                 f"dropped {plural(len(dropped), 'entry', 'entries')} with no file ({', '.join(dropped[:5])})"
                                 if dropped else "") if p)
    return out, said or None
