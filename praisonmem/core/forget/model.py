"""The shapes the parts of ``forget`` share: who is forgotten, what each store holds of them, the proof.

A forget runs in three steps over many stores: every :class:`ForgetStore` *plans* (reads, finds the
subject's records, changes nothing), the plan is journalled and confirmed, each store *erases*
through its own write protocol, and the proof re-plans every store (nothing may be found) and looks
for the erased records' text in the stores' raw bytes (files) or by query (servers).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from pathlib import Path
from typing import Any, Protocol

#: The shortest text of an erased record that the proof searches the raw bytes for: shorter strings
#: ("ok", "thanks") occur in everybody's records, so finding them proves nothing.
MIN_NEEDLE = 12


class SubjectKind(StrEnum):
    user = "user"
    session = "session"
    agent = "agent"


@dataclass(frozen=True)
class Subject:
    """Who or what is forgotten; ``before`` (timezone-aware) narrows it to records older than that."""

    kind: SubjectKind
    value: str
    before: datetime | None = None


class Action(StrEnum):
    """What erasing a record does to its store: the record goes, or the file/row holding it is rewritten
    without it (a FileMemory tier keeps the other items, a session keeps the other users' turns)."""

    remove = "remove"
    rewrite = "rewrite"


@dataclass(frozen=True)
class Erasure:
    """One record of the subject in one store.

    ``key`` is the store's own name for it (session id, item id, row id), stable across runs so a
    rerun after a kill finds the same plan; ``what`` is the human line ("session abc, 12 messages");
    ``texts`` are the record's strings the proof looks for afterwards (each message or memory text,
    and identifiers that belong to the subject alone), never written to the journal.
    """

    key: str
    what: str
    action: Action = Action.remove
    texts: tuple[str, ...] = ()


@dataclass
class StorePlan:
    """What one store holds of the subject.

    ``store`` is the kind as ``locate`` names it, ``location`` its path or its URL without password.
    ``files`` are every file of the store whose raw bytes the proof scans (the database and its
    ``-wal``, ``-shm`` and journal, spill files, sidecars, praisonmem's cache entries of it); a server
    store has none and answers :meth:`ForgetStore.residue` instead. ``unreachable`` says why the store
    could not be read (then ``erasures`` is empty and the report says "could not verify").
    ``notes`` are what the plan left alone and why (a record without a time under ``--before``, another
    user's session), said in the report; ``unverifiable`` says why the proof cannot vouch for this store
    even when no needle is found (an encrypted session's text without its key): the verdict is then
    "unverified" with that reason.
    """

    store: str
    location: str
    erasures: list[Erasure] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)
    unreachable: str | None = None
    notes: list[str] = field(default_factory=list)
    unverifiable: str | None = None


@dataclass(frozen=True)
class Where:
    """Where a forget looks: ``paths`` is the home (``core.paths.Paths``), ``located`` the stores
    ``locate`` found for the home, the current directory and every ``--in DIR`` (``core.locate.Store``
    records), ``urls`` the configured and ``--store``/``--db`` server stores (as given: only ever handed
    to a driver), ``key`` the session key (``PRAISONAI_SESSION_KEY``/``--key-file``) when one was given,
    ``cache`` praisonmem's cache (``core.io.cache.Cache``, as the command resolved it; ``None``: the default dir).
    Every adapter module has ``forget_stores(where) -> list[ForgetStore]``: the stores of its kinds."""

    paths: Any
    located: tuple[Any, ...] = ()
    urls: tuple[str, ...] = ()
    key: bytes | None = None
    cache: Any = None


class ForgetStore(Protocol):
    """One store's part of a forget. ``plan`` reads only; ``erase`` writes through the store's own
    protocol (its lock, transaction, serialisation), removes SQLite text for good (``secure_delete``,
    VACUUM, WAL truncated), is idempotent (an erasure already gone counts as done, so a rerun after a
    kill finishes the job) and returns how many erasures it carried out; ``residue`` is for stores
    the raw-byte scan cannot see (servers): where any of ``needles`` is still found, ``None`` when the
    store cannot tell; a store of files answers ``[]`` (its ``files`` are the proof's to scan, and a store
    with no file holds nothing)."""

    store: str
    location: str

    def plan(self, subject: Subject) -> StorePlan: ...

    def erase(self, plan: StorePlan) -> int: ...

    def residue(self, needles: Sequence[str]) -> list[str] | None: ...


class Verified(StrEnum):
    absent = "absent"
    residue = "residue"
    unverified = "unverified"


@dataclass
class Verdict:
    """The proof for one store (one entry of ``forget --json``'s ``stores``): ``detail`` names where
    residue was found or why the store could not be verified."""

    store: str
    path: str
    removed: int
    verified: Verified
    detail: str | None = None
