"""A PraisonAI home: every session store in it, as one :class:`~praisonmem.core.sessions.stores.SessionStore`.

The home's refs are :class:`Located` (a store's label and that store's own ref), so each call goes to
the store that holds the session. Reading walks every store; a name found in more than one store is
ambiguous, and the error names each copy and the ``--store`` that picks it. A new session (an import,
an adopted history) goes to the first store, the JSON directory, unless the home was narrowed to
another (``open_store(paths, store=LABEL)``); a renamed one stays in its store.

Adding a store is one class implementing the interface and one line in :func:`member_stores`. The
praisonai CLI's stores (:func:`cli_stores`) are members like any other: ``project:<id>`` for each
``sessions/projects/<id>/`` (:mod:`.projects`), ``unified`` (:mod:`.unified`) and ``legacy-run`` (:mod:`.runs`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from praisonmem.core.errors import AmbiguousName, NotFound, PraisonMemError, UsageError
from praisonmem.core.io import jsonfile
from praisonmem.core.layout import TRANSCRIPT_DB
from praisonmem.core.sessions.stores import Fold, OutsideStore, Scanned, SessionStore, Transaction
from praisonmem.core.sessions.stores import jsondir
from praisonmem.core.sessions.stores.jsondir import JsonDirStore
from praisonmem.core.sessions.stores.names import PROJECT

if TYPE_CHECKING:
    from praisonmem.core.paths import Paths
    from praisonmem.core.sessions.listcache import Memo

A = TypeVar("A")


def member_stores(paths: Paths) -> list[SessionStore]:
    """Every session store of the home, the one new sessions go to first (a store's module, and sqlite3,
    are imported only when the home has that store)."""
    from praisonmem.core.sessions.documents import is_unified

    # the REPL/TUI's files share sessions/ with the JSON store, which leaves them to the unified store
    stores: list[SessionStore] = [JsonDirStore.of(paths, foreign=is_unified)]
    if os.path.lexists(paths.sessions_dir / TRANSCRIPT_DB):
        from praisonmem.core.sessions.stores.sqlite_transcript import TranscriptDbStore

        stores.append(TranscriptDbStore(paths.sessions_dir / TRANSCRIPT_DB))
    stores += cli_stores(paths)  # project:<id>, unified, legacy-run
    return stores


def cli_stores(paths: Paths) -> list[SessionStore]:
    """The praisonai CLI's stores in a home: every project directory, the unified files, the run directories
    (members of the home, :func:`member_stores`). A project store shares the home's spill dir, as the
    library's spill dir is one per home whatever the store."""
    from praisonmem.core.sessions.stores.projects import project_dirs
    from praisonmem.core.sessions.stores.runs import RunStore
    from praisonmem.core.sessions.stores.unified import UnifiedStore

    stores: list[SessionStore] = [JsonDirStore(d, paths.spill_dir, paths, label=f"{PROJECT}{d.name}")
                                  for d in project_dirs(paths.sessions_dir)]
    stores += [UnifiedStore(paths.sessions_dir), RunStore(paths.sessions_dir)]
    return stores


class Located:
    """A session in a home: the label of the store that holds it and that store's ref.

    A small value class rather than a dataclass: a listing sends one per session back from its
    worker processes, and this pickles at half the cost.
    """

    __slots__ = ("store", "ref")

    def __init__(self, store: str, ref: Any) -> None:
        self.store, self.ref = store, ref

    def __reduce__(self) -> tuple[type, tuple[str, Any]]:
        return Located, (self.store, self.ref)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Located) and (self.store, self.ref) == (other.store, other.ref)

    def __hash__(self) -> int:
        return hash((self.store, self.ref))

    def __repr__(self) -> str:
        return f"Located({self.store!r}, {self.ref!r})"

    def __str__(self) -> str:
        return str(self.ref)


class Home:
    """The stores of one home behind the one interface (see the module docstring)."""

    label = "home"

    def __init__(self, stores: list[SessionStore], where: str) -> None:
        self.stores = {s.label: s for s in stores}
        self.default = stores[0]
        self.where = where  # the sessions dir, for messages

    @classmethod
    def of(cls, paths: Paths, store: str | None = None) -> Home:
        members = member_stores(paths)
        if store is None:
            return cls(members, str(paths.sessions_dir))
        chosen = [s for s in members if s.label == store]
        if chosen:
            return cls(chosen, str(paths.sessions_dir))
        if store == TRANSCRIPT_DB:
            raise NotFound(f"no {TRANSCRIPT_DB} in {paths.sessions_dir} (the gateway creates it when it first stores a "
                           "session)")
        raise UsageError(f"unknown store '{store}'; this home has: {', '.join(s.label for s in members)}")

    def _store(self, ref: Located) -> SessionStore:
        return self.stores[ref.store]

    def _located(self, store: SessionStore, ref: Any) -> Located:
        return Located(store.label, ref)

    # -------------------------------------------------------- naming

    def ref(self, session_id: str, *, beside: Located | None = None) -> Located:
        if beside is None:
            return self._located(self.default, self.default.ref(session_id))
        store = self._store(beside)
        return self._located(store, store.ref(session_id, beside=beside.ref))

    def name(self, ref: Located) -> str:
        return self._store(ref).name(ref.ref)

    def session_id(self, ref: Located, doc: dict[str, Any]) -> str:
        return self._store(ref).session_id(ref.ref, doc)

    def store_of(self, ref: Located) -> str:
        return ref.store

    # -------------------------------------------------------- reading

    def refs(self) -> list[Located]:
        return [self._located(s, ref) for s in self.stores.values() for ref in s.refs()]

    def exists(self, ref: Located) -> bool:
        return self._store(ref).exists(ref.ref)

    def absent(self) -> str | None:
        reasons = [s.absent() for s in self.stores.values()]
        return reasons[0] if all(reasons) else None

    def find(self, name: str, *, allow_prefix: bool = False) -> Located:
        """``name`` in exactly one store (exact names first, then unique prefixes); in several: ambiguous."""
        found, errors = self._find_all(name, prefix=False)
        if not found and allow_prefix:
            found, errors = self._find_all(name, prefix=True)
        if len(found) == 1:
            return found[0]
        if found:
            copies = ", ".join(f"{ref.store} ({self._copy_name(ref)})" for ref in found)
            picks = " or ".join(f"--store {ref.store}" for ref in found)
            raise AmbiguousName(f"'{name}' is in several stores: {copies}; give {picks}")
        for error in errors:
            if not isinstance(error, (NotFound, OutsideStore)):
                raise error
        outside = [e for e in errors if isinstance(e, OutsideStore)]
        if outside:  # a path to a file no store of the home holds: one error naming all their directories
            raise OutsideStore(name, [d for e in outside for d in e.directories])
        missing = errors[0] if len(errors) == 1 else \
            NotFound(f"no session '{name}' in any store of {self.where} ({', '.join(self.stores)})")
        guess = None if allow_prefix else self._unique_prefix(name)
        if guess is not None:  # a command that needs the exact name (rename, delete) says which one was meant
            raise NotFound(f"{missing.message}; did you mean '{guess}'?")
        raise missing

    def _unique_prefix(self, name: str) -> str | None:
        """The one session whose name starts with ``name``, if exactly one does."""
        if not name:
            return None
        found, _ = self._find_all(name, prefix=True)
        return self.name(found[0]) if len(found) == 1 else None

    def copies(self, ref: Located, session_id: str) -> list[Located]:
        """The sessions with this id in the home's other stores (each at the place its store gives the id)."""
        found = []
        for store in self.stores.values():
            if store.label != ref.store:
                other = store.ref(session_id)
                if store.exists(other):
                    found.append(self._located(store, other))
        return found

    def _find_all(self, name: str, *, prefix: bool) -> tuple[list[Located], list[PraisonMemError]]:
        found, errors = [], []
        for store in self.stores.values():
            try:
                found.append(self._located(store, store.find(name, allow_prefix=prefix)))
            except PraisonMemError as exc:
                errors.append(exc)
        return found, errors

    def _copy_name(self, ref: Located) -> str:
        """A JSON file by its name in the sessions dir (a project store's, from there); anything else in full."""
        text = str(ref.ref)
        if text.endswith(".json") and text.startswith(self.where + os.sep):
            return text[len(self.where) + 1:]
        return text.rsplit("/", 1)[-1] if text.endswith(".json") else text

    def read(self, ref: Located) -> dict[str, Any]:
        return self._store(ref).read(ref.ref)

    def read_bytes(self, ref: Located) -> bytes:
        return self._store(ref).read_bytes(ref.ref)

    def parse(self, ref: Located, raw: bytes) -> dict[str, Any]:
        return self._store(ref).parse(ref.ref, raw)

    def scan(self, fold: Fold[A], *, progress: Callable[[int, int], None] | None = None,
             memo: Memo | None = None) -> A:
        """``fold`` store by store, each store's result merged after those of the stores before it, every item
        with the home's ref. The JSON directory that shares ``sessions/`` with the REPL/TUI store reads it once
        for both: it hands that store's documents to that store's fold (:func:`~.jsondir.scan_shared`),
        whose result is merged in that store's place."""
        stores = list(self.stores.values())
        partners = _partners(stores)
        found: dict[str, A] = {}
        for store in stores:
            if store.label in found:
                continue
            mine = InStore(fold, store.label)
            adapted = None if memo is None else memo.adapted(partial(Located, store.label))
            partner = partners.get(store.label)
            if partner is not None:
                assert isinstance(store, JsonDirStore)
                found[store.label], theirs = jsondir.scan_shared(store, mine, (partner, InStore(fold, partner)),
                                                                 progress=progress, memo=adapted)
                assert theirs is not None
                found[partner] = theirs
            else:
                found[store.label] = store.scan(mine, progress=progress, memo=adapted)
        out = fold.empty()
        for store in stores:
            out = fold.merge(out, found[store.label])
        return out

    def holds(self, ref: Located, doc: dict[str, Any]) -> bool:
        return self._store(ref).holds(ref.ref, doc)

    def seconds_since_write(self, ref: Located, doc: dict[str, Any], now: float) -> float | None:
        return self._store(ref).seconds_since_write(ref.ref, doc, now)

    # -------------------------------------------------------- spilled turns

    def spilled(self, ref: Located, session_id: str, present: Iterable[Any] = ()) -> list[dict[str, Any]]:
        return self._store(ref).spilled(ref.ref, session_id, present)

    def spill_note(self, ref: Located, old_id: str, new_id: str | None, verb: str = "move") -> str | None:
        return self._store(ref).spill_note(ref.ref, old_id, new_id, verb)

    def refuse_spill_clash(self, ref: Located, old_id: str, *new_ids: str) -> None:
        self._store(ref).refuse_spill_clash(ref.ref, old_id, *new_ids)

    # -------------------------------------------------------- writing

    def refuse(self, *, deleting: Sequence[Located] = (), creating: Sequence[Located] = ()) -> None:
        for label, store in self.stores.items():
            store.refuse(deleting=[r.ref for r in deleting if r.store == label],
                         creating=[r.ref for r in creating if r.store == label])

    @contextmanager
    def transaction(self, refs: Sequence[Located], timeout: float = jsonfile.LOCK_TIMEOUT
                    ) -> Iterator[HomeTransaction]:
        """Each involved store's own transaction (in label order), over the refs it holds."""
        labels = sorted({ref.store for ref in refs}) or [self.default.label]
        with ExitStack() as stack:
            txs = {label: stack.enter_context(self.stores[label].transaction([r.ref for r in refs if r.store == label],
                                                                             timeout))
                   for label in labels}
            yield HomeTransaction(txs)


class HomeTransaction:
    """The transactions of the stores involved, each call going to the one holding the ref."""

    def __init__(self, txs: dict[str, Transaction]) -> None:
        self.txs = txs

    @property
    def notes(self) -> list[str]:
        return [note for tx in self.txs.values() for note in tx.notes]

    def _tx(self, ref: Located) -> Transaction:
        try:
            return self.txs[ref.store]
        except KeyError:
            raise PraisonMemError(f"{ref}: not part of this transaction") from None

    def exists(self, ref: Located) -> bool:
        return self._tx(ref).exists(ref.ref)

    def read(self, ref: Located) -> dict[str, Any] | None:
        return self._tx(ref).read(ref.ref)

    def write(self, ref: Located, doc: dict[str, Any]) -> None:
        self._tx(ref).write(ref.ref, doc)

    def read_bytes(self, ref: Located) -> bytes | None:
        return self._tx(ref).read_bytes(ref.ref)

    def write_raw(self, ref: Located, raw: bytes) -> None:
        self._tx(ref).write_raw(ref.ref, raw)

    def delete(self, ref: Located) -> None:
        self._tx(ref).delete(ref.ref)

    def carry_spill(self, old_id: str, new_id: str, *, keep: bool = False) -> None:
        for tx in self.txs.values():
            tx.carry_spill(old_id, new_id, keep=keep)

    def rewrite_spill(self, session_id: str, change: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
        for tx in self.txs.values():
            tx.rewrite_spill(session_id, change)

    def drop_spill(self, ref: Located) -> str | None:
        return self._tx(ref).drop_spill(ref.ref)

    def forget_replaced(self) -> None:
        for tx in self.txs.values():
            tx.forget_replaced()


def _partners(stores: list[SessionStore]) -> dict[str, str]:
    """The JSON directory stores that leave another store's documents to it, each with the label of the store
    in the same directory that takes them (the REPL/TUI's files in ``sessions/``)."""
    from praisonmem.core.sessions.stores.unified import UnifiedStore

    unified = {s.directory: s.label for s in stores if isinstance(s, UnifiedStore)}
    return {s.label: unified[s.directory] for s in stores
            if isinstance(s, JsonDirStore) and s.foreign is not None and s.directory in unified}


@dataclass(frozen=True)
class InStore(Generic[A]):
    """``fold`` over a member store's sessions, each item with the home's ref (a :class:`Located`) and that
    store's label; every optional member of a fold passed on (module level: scans pickle it)."""

    fold: Fold[A]
    store: str

    def empty(self) -> A:
        return self.fold.empty()

    def add(self, acc: A, item: Scanned) -> A:
        return self.fold.add(acc, _located_item(item, store=self.store))

    def merge(self, a: A, b: A) -> A:
        return self.fold.merge(a, b)

    def add_first(self, item: Scanned, acc: A) -> A:
        item = _located_item(item, store=self.store)
        first = getattr(self.fold, "add_first", None)
        if first is not None:
            return first(item, acc)
        return self.fold.merge(self.fold.add(self.fold.empty(), item), acc)

    @property
    def last_first(self) -> bool:
        return getattr(self.fold, "last_first", False)

    @property
    def rules_out(self) -> Callable[[bytes], bool] | None:
        return getattr(self.fold, "rules_out", None)

    def part(self, item: Scanned) -> Any:
        return self.fold.part(_located_item(item, store=self.store))  # type: ignore[attr-defined]

    def put(self, acc: A, part: Any) -> A:
        return self.fold.put(acc, part)  # type: ignore[attr-defined]


def refs_named(store: SessionStore, prefix: str) -> list[Any]:
    """``store.refs()`` whose name starts with ``prefix`` (the same list, in the same order), without reading
    the others where the store can (a JSON directory reads each file to leave out another store's)."""
    if isinstance(store, Home):
        return [store._located(s, ref) for s in store.stores.values() for ref in refs_named(s, prefix)]
    if isinstance(store, JsonDirStore):
        return jsondir.refs_named(store, prefix)
    return [ref for ref in store.refs() if store.name(ref).startswith(prefix)]


def _located_item(item: Scanned, *, store: str) -> Scanned:
    """A store's item as the home gives it: with the home's ref."""
    return Scanned(item.where, item.session_id, item.doc, item.error,
                   None if item.ref is None else Located(store, item.ref), store, item.spilled)
