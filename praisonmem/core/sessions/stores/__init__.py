"""Where sessions are kept: the one interface the session commands use, and its implementations.

Today there is one store, :class:`~praisonmem.core.sessions.stores.jsondir.JsonDirStore`
(praisonaiagents' ``DefaultSessionStore``: one JSON file per session, plus a spill dir).
``ops``, ``adopt``, ``transfer``, ``search``, ``listing`` and ``view`` never touch a path
or :mod:`~praisonmem.core.io.jsonfile` themselves: they go through :class:`SessionStore`.
It holds only what they need today; a store added later implements the same methods.

A *ref* names one session in its store (for the JSON directory, the file's path); refs are
what :meth:`SessionStore.find` and :meth:`SessionStore.refs` return and what the other
methods take. Reading takes no lock and writes nothing. Every write happens inside
:meth:`SessionStore.transaction`, which holds the locks of all the sessions it names;
its :class:`Transaction` re-reads under them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    from praisonmem.core.errors import PraisonMemError
    from praisonmem.core.paths import Paths

Ref = Any  # opaque to callers: a Path for the JSON directory
R = TypeVar("R")


@dataclass(frozen=True)
class Scanned:
    """One session as :meth:`SessionStore.scan` hands it over: its document, or why it could not be read."""

    where: str  # what names it in messages and records (the JSON directory: the file)
    session_id: str | None  # None when it could not be read
    doc: dict[str, Any] | None
    error: PraisonMemError | None
    store: str = "json"  # the label of the store that holds it (``session list``'s STORE column)


class Transaction(Protocol):
    """Changes to sessions whose locks are held."""

    def exists(self, ref: Ref) -> bool: ...

    def read(self, ref: Ref) -> dict[str, Any] | None:
        """The document now (``None``: gone); one that does not parse raises, so it is never overwritten."""

    def write(self, ref: Ref, doc: dict[str, Any]) -> None: ...

    def delete(self, ref: Ref) -> None: ...

    def carry_spill(self, old_id: str, new_id: str, *, keep: bool = False) -> None:
        """Re-address ``old_id``'s spilled turns to ``new_id`` (a store without a spill dir does nothing)."""


class SessionStore(Protocol):
    # naming
    def ref(self, session_id: str, *, beside: Ref | None = None) -> Ref:
        """Where a session with this id is (or would be); ``beside`` another session: in its place."""

    def name(self, ref: Ref) -> str:
        """The short name :meth:`find` resolves (completion and messages use it)."""

    def session_id(self, ref: Ref, doc: dict[str, Any]) -> str:
        """The session's id: its ``session_id``, else the name its store gives it."""

    # reading
    def refs(self) -> list[Ref]:
        """Every session, in a stable order."""

    def exists(self, ref: Ref) -> bool: ...

    def absent(self) -> str | None:
        """Why the store itself does not exist (so it holds nothing), or ``None``."""

    def find(self, name: str, *, allow_prefix: bool = False) -> Ref:
        """A session by id, name or (unique) prefix; NotFound or AmbiguousName otherwise."""

    def read(self, ref: Ref) -> dict[str, Any]:
        """The validated document; CorruptFile when it cannot be used."""

    def read_bytes(self, ref: Ref) -> bytes:
        """The document as stored (``session show --json`` prints it)."""

    def parse(self, ref: Ref, raw: bytes) -> dict[str, Any]:
        """The validated document in bytes :meth:`read_bytes` returned."""

    def scan(self, fn: Callable[[Scanned], list[R]], *,
             progress: Callable[[int, int], None] | None = None) -> list[R]:
        """``fn`` over every session, concatenated in :meth:`refs` order (maybe in worker processes, so
        ``fn`` must be picklable: a module-level function or a ``partial`` of one)."""

    def holds(self, ref: Ref, doc: dict[str, Any]) -> bool:
        """The session is stored exactly as writing ``doc`` would store it."""

    def seconds_since_write(self, ref: Ref, doc: dict[str, Any], now: float) -> float | None: ...

    # spilled turns (turns the library saved aside after a failed write; other stores have none)
    def spilled(self, session_id: str, present: Iterable[Any] = ()) -> list[dict[str, Any]]: ...

    def spill_counts(self) -> dict[str, int]: ...

    def spill_note(self, old_id: str, new_id: str, verb: str = "move") -> str | None: ...

    def refuse_spill_clash(self, old_id: str, *new_ids: str) -> None: ...

    # writing
    def transaction(self, refs: Sequence[Ref], timeout: float = ...) -> AbstractContextManager[Transaction]: ...


def open_store(paths: Paths) -> SessionStore:
    """The session store of a resolved PraisonAI home: its JSON directory and the praisonai CLI's stores."""
    from praisonmem.core.sessions.documents import is_unified
    from praisonmem.core.sessions.stores.combined import CombinedStore
    from praisonmem.core.sessions.stores.jsondir import JsonDirStore
    from praisonmem.core.sessions.stores.praisonai_cli import cli_stores

    home = JsonDirStore(paths.sessions_dir, paths.spill_dir, paths, foreign=is_unified)  # unified files: not its
    return CombinedStore([home, *cli_stores(paths)])
