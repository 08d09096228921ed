"""Several stores as one :class:`~praisonmem.core.sessions.stores.SessionStore`: the home's JSON directory and the
praisonai CLI's stores (:func:`~.praisonai_cli.cli_stores`).

A stand-in, small on purpose, for the home composite of issue 11 item 1 (which also holds
``sessions.db``): refs stay what each store makes (paths), and every call about one ref goes
to the store that owns it, told by where the path is and, in ``sessions/``, by the file's shape
(a REPL/TUI file is the unified store's, any other the JSON store's). A name several stores
resolve is ambiguous: the user gives the path.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from praisonmem.core.errors import AmbiguousName, NotFound
from praisonmem.core.io import jsonfile
from praisonmem.core.sessions.stores import Scanned

if TYPE_CHECKING:
    from praisonmem.core.sessions.stores.praisonai_cli import ProjectIdentity

R = TypeVar("R")


@dataclass
class CombinedStore:
    stores: list[Any]  # the home's JSON directory first: new sessions go there
    cwd: str | None = None  # where the current project is resolved from (None: the process's cwd)
    _project: list[ProjectIdentity | None] = field(default_factory=list, repr=False)

    @property
    def primary(self) -> Any:
        return self.stores[0]

    def current_project(self) -> ProjectIdentity | None:
        """The praisonai CLI's project id of the current directory (computed once, read-only)."""
        if not self._project:
            from praisonmem.core.sessions.stores.praisonai_cli import project_identity

            self._project.append(project_identity(self.cwd))
        return self._project[0]

    def label_of(self, store: Any) -> str:
        return getattr(store, "label", "json")

    def owner(self, ref: Any) -> Any:
        """The store a ref belongs to: a run directory, a unified file, a file in a project directory; else the
        home's JSON directory (which also takes a session named by its path anywhere else)."""
        from praisonmem.core.sessions.stores.jsondir import JsonDirStore
        from praisonmem.core.sessions.stores.praisonai_cli import RunStore, UnifiedStore, read_unified

        path = Path(ref)
        for store in self.stores[1:]:
            if path.parent != store.directory:
                continue
            if isinstance(store, RunStore) and path.is_dir():
                return store
            if isinstance(store, UnifiedStore) and read_unified(path) is not None:
                return store
            if isinstance(store, JsonDirStore):
                return store
        return self.primary

    # -------------------------------------------------------- naming

    def ref(self, session_id: str, *, beside: Any = None) -> Any:
        if beside is None:
            return self.primary.ref(session_id)
        return self.owner(beside).ref(session_id, beside=beside)

    def name(self, ref: Any) -> str:
        return self.owner(ref).name(ref)

    def session_id(self, ref: Any, doc: dict[str, Any]) -> str:
        return self.owner(ref).session_id(ref, doc)

    # -------------------------------------------------------- reading

    def refs(self) -> list[Any]:
        return [ref for store in self.stores for ref in store.refs()]

    def exists(self, ref: Any) -> bool:
        return self.owner(ref).exists(ref)

    def absent(self) -> str | None:
        return self.primary.absent()

    def find(self, name: str, *, allow_prefix: bool = False) -> Any:
        """The one session ``name`` names in any store; several: :class:`AmbiguousName`, listing them."""
        found = self._found(name, allow_prefix=False)
        if not found and allow_prefix:
            found = self._found(name, allow_prefix=True)
        if len(found) == 1:
            return next(iter(found.values()))[0]
        if found:
            shown = ", ".join(f"{label} {ref}" for ref, label in list(found.values())[:10])
            raise AmbiguousName(f"'{name}' names sessions in several stores ({shown}); give the path of the one "
                                "you mean")
        return self.primary.find(name, allow_prefix=allow_prefix)  # its NotFound says where it looked

    def _found(self, name: str, *, allow_prefix: bool) -> dict[Path, tuple[Any, str]]:
        """What each store resolves ``name`` to (one entry per file), with the label of the store owning it."""
        found: dict[Path, tuple[Any, str]] = {}
        for store in self.stores:
            try:
                ref = store.find(name, allow_prefix=allow_prefix)
            except NotFound:
                continue
            found.setdefault(Path(ref).absolute(), (ref, self.label_of(self.owner(ref))))
        return found

    def read(self, ref: Any) -> dict[str, Any]:
        return self.owner(ref).read(ref)

    def read_bytes(self, ref: Any) -> bytes:
        return self.owner(ref).read_bytes(ref)

    def parse(self, ref: Any, raw: bytes) -> dict[str, Any]:
        return self.owner(ref).parse(ref, raw)

    def scan(self, fn: Callable[[Scanned], list[R]], *,
             progress: Callable[[int, int], None] | None = None) -> list[R]:
        return [r for i, store in enumerate(self.stores) for r in store.scan(fn, progress=progress if i == 0 else None)]

    def holds(self, ref: Any, doc: dict[str, Any]) -> bool:
        return self.owner(ref).holds(ref, doc)

    def seconds_since_write(self, ref: Any, doc: dict[str, Any], now: float) -> float | None:
        return self.owner(ref).seconds_since_write(ref, doc, now)

    # -------------------------------------------------------- spilled turns (the JSON stores share one spill dir)

    def spilled(self, session_id: str, present: Iterable[Any] = ()) -> list[dict[str, Any]]:
        return self.primary.spilled(session_id, present)

    def spill_counts(self) -> dict[str, int]:
        return self.primary.spill_counts()

    def spill_note(self, old_id: str, new_id: str, verb: str = "move") -> str | None:
        return self.primary.spill_note(old_id, new_id, verb)

    def refuse_spill_clash(self, old_id: str, *new_ids: str) -> None:
        self.primary.refuse_spill_clash(old_id, *new_ids)

    # -------------------------------------------------------- writing

    @contextmanager
    def transaction(self, refs: Sequence[Any], timeout: float = jsonfile.LOCK_TIMEOUT) -> Iterator[Any]:
        """Each owner's transaction over its refs, entered in store order (the same order in every process)."""
        grouped: dict[int, list[Any]] = {}
        for ref in refs:
            grouped.setdefault(self.stores.index(self.owner(ref)), []).append(ref)
        with ExitStack() as stack:
            parts = {i: stack.enter_context(self.stores[i].transaction(group, timeout))
                     for i, group in sorted(grouped.items())}
            yield CombinedTransaction(self, parts)


class CombinedTransaction:
    def __init__(self, combined: CombinedStore, parts: dict[int, Any]) -> None:
        self.combined = combined
        self.parts = parts

    def _tx(self, ref: Any) -> Any:
        index = self.combined.stores.index(self.combined.owner(ref))
        if index not in self.parts:  # a ref the transaction was not opened on (its owner changed meanwhile)
            raise NotFound(f"{ref}: not part of this change (it changed while praisonmem was waiting)")
        return self.parts[index]

    def exists(self, ref: Any) -> bool:
        return self._tx(ref).exists(ref)

    def read(self, ref: Any) -> dict[str, Any] | None:
        return self._tx(ref).read(ref)

    def write(self, ref: Any, doc: dict[str, Any]) -> None:
        self._tx(ref).write(ref, doc)

    def delete(self, ref: Any) -> None:
        self._tx(ref).delete(ref)

    def carry_spill(self, old_id: str, new_id: str, *, keep: bool = False) -> None:
        self.parts.get(0, next(iter(self.parts.values()))).carry_spill(old_id, new_id, keep=keep)

    @property
    def notes(self) -> list[str]:
        return [note for part in self.parts.values() for note in getattr(part, "notes", [])]
