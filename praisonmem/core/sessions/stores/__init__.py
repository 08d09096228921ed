"""Where sessions are kept: the one interface the session commands use, and its implementations.

A PraisonAI home holds several session stores, each one class implementing :class:`SessionStore`:

* ``json``: :class:`~.jsondir.JsonDirStore`, praisonaiagents' ``DefaultSessionStore`` (one JSON file
  per session, plus a spill dir): what an Agent with the default store, the bots and the praisonai CLI
  load;
* ``sessions.db``: :class:`~.sqlite_transcript.TranscriptDbStore`, ``SqliteTranscriptStore`` (one row
  per session in ``sessions/sessions.db``): what the WebSocket gateway loads;
* the praisonai CLI's: ``project:<id>``, a :class:`~.jsondir.JsonDirStore` on ``sessions/projects/<id>/``
  (praisonai-code's per-project store, :mod:`~.projects`); ``unified``, the REPL/TUI's files in ``sessions/``
  (which the ``json`` store leaves to it, :mod:`~.unified`); and ``legacy-run``, the older ``SessionManager``'s
  ``sessions/run_*/`` directories (:mod:`~.runs`);
* a ``--store`` location (:mod:`~.locate`): a directory, or PraisonAI's SQL conversation store
  (:mod:`~.conversation_sql`) in an SQLite file or PostgreSQL.

Their labels and file names are :mod:`~.names`'.

:class:`~.home.Home` holds them all and is itself a :class:`SessionStore`: :func:`~.locate.open_store` gives
the home (or, with ``store=LABEL``, the home narrowed to one store), so ``ops``, ``adopt``, ``transfer``,
``search``, ``listing`` and ``view`` work on every store without knowing which ones exist; they never
touch a path, a database or :mod:`~praisonmem.core.io.jsonfile` themselves. A store is added by writing
its class and naming it in :func:`~.home.member_stores`.

A *ref* names one session in its store (the JSON directory: the file's path; ``sessions.db``: a
:class:`~.sqlite_transcript.Row`; the home: a :class:`~.home.Located`, the store's label and its ref);
``str(ref)`` is the file that holds it. Refs are what :meth:`SessionStore.find`, :meth:`SessionStore.refs`
and :attr:`Scanned.ref` give and what the other methods take. Reading takes no lock and writes
nothing. Every write happens inside :meth:`SessionStore.transaction`, which holds the store's own lock
(the JSON files' flocks; the database's ``BEGIN IMMEDIATE``) over every session it names; its
:class:`Transaction` re-reads under it. Spilled turns (saved aside by the library after a failed write)
exist only in the JSON directory; the other stores have none. A new store subclasses :class:`PlainStore`
(the methods such a store does not need) and writes the naming, reading and writing methods.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from praisonmem.core.errors import UsageError

if TYPE_CHECKING:
    from praisonmem.core.errors import PraisonMemError
    from praisonmem.core.sessions.listcache import Memo

Ref = Any  # opaque to callers; str(ref) is the file that holds the session
R = TypeVar("R")
A = TypeVar("A")


@dataclass(frozen=True)
class Scanned:
    """One session as :meth:`SessionStore.scan` hands it over: its document, or why it could not be read."""

    where: str  # the file that holds it (the JSON file; sessions.db)
    session_id: str | None  # None when its store cannot tell without the document
    doc: dict[str, Any] | None
    error: PraisonMemError | None
    ref: Ref = None  # to act on it later; None when the whole store could not be read
    store: str = ""  # the label of the store holding it
    spilled: int = 0  # turns waiting for it in the spill dir


class Fold(Protocol[A]):
    """What a scan computes over a store's sessions (:meth:`SessionStore.scan`): ``add`` folds one session into a
    partial result, ``merge`` joins the partial results of two runs of sessions, the first run's before the
    second's. ``merge`` is associative and ``empty()`` its identity, and ``add(acc, item)`` is
    ``merge(acc, add(empty(), item))``, so a store may fold its sessions in any chunks (in worker processes: a
    fold is pickled, so it is a module-level class) and merge the chunks' results in order: the result is that
    of one fold over every session in scan order. ``add`` and ``merge`` may change their first argument and
    return it; a caller uses only what they return.

    Two optional members let a store save work without changing the result: ``last_first`` (a fold that
    profits from seeing the last sessions of a chunk first, as a search, whose newest sessions raise early the
    bar a hit must pass) has the JSON directory call ``add_first(item, acc)``, ``merge(add(empty(), item),
    acc)``, over a chunk's files from the last; ``rules_out(raw)`` true for a session file's bytes says that
    adding its document, whatever it holds, changes nothing when it is a valid session, so the file is only
    checked to be one."""

    def empty(self) -> A: ...

    def add(self, acc: A, item: Scanned) -> A: ...

    def merge(self, a: A, b: A) -> A: ...


@dataclass(frozen=True)
class Each(Generic[R]):
    """The fold of ``fn``'s results over every session, concatenated in scan order (``fn`` module-level, or a
    ``partial`` of such a function). ``part`` and ``put`` split ``add`` in two for a store that keeps a session's
    part between scans (``session list``'s memo)."""

    fn: Callable[[Scanned], list[R]]

    def empty(self) -> list[R]:
        return []

    def add(self, acc: list[R], item: Scanned) -> list[R]:
        acc.extend(self.fn(item))
        return acc

    def merge(self, a: list[R], b: list[R]) -> list[R]:
        a.extend(b)
        return a

    def part(self, item: Scanned) -> list[R]:
        return self.fn(item)

    def put(self, acc: list[R], part: list[R]) -> list[R]:
        acc.extend(part)
        return acc


def fold_in(fold: Fold[A], acc: A, items: Iterable[Scanned]) -> A:
    """``items`` folded into ``acc`` in order."""
    add = fold.add
    for item in items:
        acc = add(acc, item)
    return acc


def merged(fold: Fold[A], parts: Iterable[A]) -> A:
    """The partial results ``parts`` (in scan order) merged into one."""
    out = fold.empty()
    for part in parts:
        out = fold.merge(out, part)
    return out


class Transaction(Protocol):
    """Changes to sessions whose store lock is held."""

    notes: list[str]  # what the store could not finish after committing (said with the change)

    def exists(self, ref: Ref) -> bool: ...

    def read(self, ref: Ref) -> dict[str, Any] | None:
        """The document now (``None``: gone); one that does not parse raises, so it is never overwritten."""

    def write(self, ref: Ref, doc: dict[str, Any]) -> None: ...

    def read_bytes(self, ref: Ref) -> bytes | None:
        """The session as stored now (``None``: gone), once :meth:`read` vouched that it parses."""

    def write_raw(self, ref: Ref, raw: bytes) -> None:
        """The session document in these bytes, kept byte for byte where the store keeps bytes (JSON files;
        the conversation tables' layout envelope); a store that serialises itself parses and writes it."""

    def delete(self, ref: Ref) -> None: ...

    def carry_spill(self, old_id: str, new_id: str, *, keep: bool = False) -> None:
        """Re-address ``old_id``'s spilled turns to ``new_id`` (a store without a spill dir does nothing)."""

    def rewrite_spill(self, session_id: str, change: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
        """Replace each of ``session_id``'s spill records by ``change(record)`` where that differs (a store
        without a spill dir does nothing)."""

    def drop_spill(self, ref: Ref) -> str | None:
        """Remove the spill records the library would merge into ``ref`` (a delete, before the session goes, so
        the library never makes it anew from them); what was removed, for the change record (a store without a
        spill dir does nothing: ``None``)."""

    def forget_replaced(self) -> None:
        """After committing, leave no copy of the text this transaction's writes replaced in the store's files
        (``sessions.db``: zeroed free pages, ``VACUUM``, an emptied ``-wal``; JSON files: an atomic replace
        already leaves none)."""


class SessionStore(Protocol):
    label: str  # ``session list``'s store column and ``--store``'s value: json, sessions.db

    # naming
    def ref(self, session_id: str, *, beside: Ref | None = None) -> Ref:
        """Where a session with this id is (or would be); ``beside`` another session: in its place."""

    def name(self, ref: Ref) -> str:
        """The short name :meth:`find` resolves (completion and messages use it)."""

    def session_id(self, ref: Ref, doc: dict[str, Any]) -> str:
        """The session's id: its ``session_id``, else the name its store gives it."""

    def store_of(self, ref: Ref) -> str:
        """The label of the store holding it (a store: its own :attr:`label`)."""

    # reading
    def refs(self) -> list[Ref]:
        """Every session, in a stable order."""

    def exists(self, ref: Ref) -> bool: ...

    def absent(self) -> str | None:
        """Why the store itself does not exist (so it holds nothing), or ``None``."""

    def find(self, name: str, *, allow_prefix: bool = False) -> Ref:
        """A session by id, name or (unique) prefix; NotFound or AmbiguousName otherwise."""

    def copies(self, ref: Ref, session_id: str) -> list[Ref]:
        """The sessions with the same id in the other stores (a single store: none)."""

    def read(self, ref: Ref) -> dict[str, Any]:
        """The validated document; CorruptFile when it cannot be used."""

    def read_bytes(self, ref: Ref) -> bytes:
        """The document as stored (``session show --json`` prints it)."""

    def parse(self, ref: Ref, raw: bytes) -> dict[str, Any]:
        """The validated document in bytes :meth:`read_bytes` returned."""

    def scan(self, fold: Fold[A], *, progress: Callable[[int, int], None] | None = None,
             memo: Memo | None = None) -> A:
        """``fold`` over every session in :meth:`refs` order (maybe in chunks, in worker processes: :class:`Fold`).
        With ``memo`` (:class:`~..listcache.Memo`, for an :class:`Each` fold), a store may keep each session's
        part in praisonmem's cache and give it again while the session is unchanged (the JSON directory does;
        a database needs none), so a part must depend only on the session's document, place and id."""

    def holds(self, ref: Ref, doc: dict[str, Any]) -> bool:
        """The session is stored exactly as writing ``doc`` would store it."""

    def seconds_since_write(self, ref: Ref, doc: dict[str, Any], now: float) -> float | None: ...

    # spilled turns (turns the library saved aside after a failed write; other stores have none)
    def spilled(self, ref: Ref, session_id: str, present: Iterable[Any] = ()) -> list[dict[str, Any]]: ...

    def spill_note(self, ref: Ref, old_id: str, new_id: str | None, verb: str = "move") -> str | None:
        """What carrying ``old_id``'s spilled turns to ``new_id`` does (``new_id`` ``None``: deleting them with
        the session), for a change record; ``None`` when it does nothing."""

    def refuse_spill_clash(self, ref: Ref, old_id: str, *new_ids: str) -> None: ...

    # writing
    def refuse(self, *, deleting: Sequence[Ref] = (), creating: Sequence[Ref] = ()) -> None:
        """Refuse, before anything is written, deleting these sessions or creating these when the store cannot
        take it (``sessions.db``: emptying its table, or a first row, while JSON files lie beside it). Its
        transaction refuses the same under the lock."""

    def transaction(self, refs: Sequence[Ref], timeout: float = ...) -> AbstractContextManager[Transaction]: ...


class PlainStore:
    """What a store that is not a home and has no spill dir does: a subclass writes the rest of the interface."""

    label: str

    def store_of(self, ref: Ref) -> str:
        return self.label

    def copies(self, ref: Ref, session_id: str) -> list[Ref]:
        return []

    def spilled(self, ref: Ref, session_id: str, present: Iterable[Any] = ()) -> list[dict[str, Any]]:
        return []

    def spill_note(self, ref: Ref, old_id: str, new_id: str | None, verb: str = "move") -> str | None:
        return None

    def refuse_spill_clash(self, ref: Ref, old_id: str, *new_ids: str) -> None:
        return None

    def refuse(self, *, deleting: Sequence[Ref] = (), creating: Sequence[Ref] = ()) -> None:
        return None


class Location(str):
    """A ``--store`` value naming a store by where it is (a directory, a database file or URL), with the
    conversation tables' ``--table-prefix`` and ``--schema`` (:mod:`.locate`)."""

    table_prefix: str | None = None
    schema: str | None = None

    def __new__(cls, text: str, *, table_prefix: str | None = None, schema: str | None = None) -> Location:
        self = super().__new__(cls, text)
        self.table_prefix, self.schema = table_prefix, schema
        return self


class OutsideStore(UsageError):
    """A SESSION that is a path to something outside every session directory of the store (exit 2): praisonmem
    reads or changes a file named by its path only when it is directly in one of them (``directories``)."""

    def __init__(self, name: str, directories: Sequence[str]) -> None:
        self.name, self.directories = name, list(dict.fromkeys(directories))
        shown = ", ".join(self.directories[:3])
        if len(self.directories) > 3:
            shown += f" and {len(self.directories) - 3} more"
        super().__init__(f"{name}: not in a sessions directory ({shown}); a SESSION given as a path must name a "
                         "session file directly in one of them")


def ambiguous(name: str, matches: Sequence[str], where: object = None) -> Exception:
    """The one wording of a SESSION that names several sessions (the first ten shown), for every store's ``find``."""
    from praisonmem.core.errors import AmbiguousName

    shown = ", ".join(matches[:10]) + (f" and {len(matches) - 10} more" if len(matches) > 10 else "")
    return AmbiguousName(f"'{name}' matches several sessions{f' in {where}' if where is not None else ''}: {shown}")
