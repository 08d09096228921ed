"""JSON sessions missing from a populated ``sessions.db``, imported as the library's own import would.

``SqliteTranscriptStore`` copies the ``*.json`` files beside its database into it only while its
table is empty; once the gateway has stored one session, JSON sessions written later
(a bot's, an Agent's with the default store) are never imported, so the gateway never sees them.
:func:`plan_db_import` imports them the way that one-time import does: each document as
``SessionData.from_dict(file).to_dict()`` (:func:`~.documents.library_form`), ``updated_at`` kept, the
five columns from it, every row in one ``BEGIN IMMEDIATE``, a row that appeared meanwhile left alone.
It takes what the library would take: every ``*.json`` file in the sessions dir (not ``projects/`` or
``run_*/``) whose document it can load, unified-shape files of the praisonai CLI included; when two
files hold one id, the last in name order (the library's import replaces as it goes).

While the table is empty there is nothing to do: the gateway imports every file on its next start,
and a row written first would stop that (:meth:`~.stores.SessionStore.refuse`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from praisonmem.core.errors import NotFound, PraisonMemError
from praisonmem.core.io import jsonfile
from praisonmem.core.paths import Paths
from praisonmem.core.result import Action, Outcome, Plan
from praisonmem.core.sessions.documents import library_form
from praisonmem.core.sessions.stores import Each, Scanned, SessionStore
from praisonmem.core.sessions.stores.locate import open_store
from praisonmem.core.sessions.stores.names import TRANSCRIPT

DB_STORE = TRANSCRIPT


@dataclass(frozen=True)
class Candidate:
    """A session of ``sessions.db`` that has no JSON file."""

    file: str  # the JSON file
    session_id: str
    doc: dict[str, Any]  # as the library's import writes it


def _loaded(item: Scanned) -> list[tuple[str, str | None, dict[str, Any] | None]]:
    return [(item.where, item.session_id, item.doc)]


def db_import_candidates(paths: Paths) -> tuple[list[Candidate], list[str]] | None:
    """The JSON sessions a populated ``sessions.db`` lacks, and notes on files the library would skip too;
    ``None`` when there is no ``sessions.db`` or its table is empty (the library imports them itself)."""
    try:
        db = open_store(paths, DB_STORE)
        present = {db.name(ref) for ref in db.refs()}
    except NotFound:
        return None
    if not present:
        return None
    chosen: dict[str, Candidate] = {}
    notes = []
    for file, _, doc in open_store(paths, "json").scan(Each(_loaded)):
        if doc is None:
            notes.append(f"{file}: not imported: it does not load")
            continue
        sid = doc.get("session_id", "")
        if not isinstance(sid, str) or not sid:
            notes.append(f"{file}: not imported: it names no session id")
            continue
        try:
            form = library_form(doc)
        except ValueError as exc:
            notes.append(f"{file}: not imported: {exc}")
            continue
        chosen[sid] = Candidate(file, sid, form)  # files come in name order: the last one wins, as in the library
    return [c for sid, c in sorted(chosen.items()) if sid not in present], notes


def plan_db_import(paths: Paths, *, timeout: float = jsonfile.LOCK_TIMEOUT) -> Plan | None:
    """Import the JSON sessions a populated ``sessions.db`` lacks (``praisonmem migrate``'s finder); ``None``
    when there are none. Nothing is replaced, so there is nothing to ask."""
    found = db_import_candidates(paths)
    if found is None or not found[0]:
        return None
    candidates, notes = found
    db = open_store(paths, DB_STORE)
    return Plan(None, lambda dry_run, progress: run_db_import(db, candidates, dry_run=dry_run, timeout=timeout),
                notes)


def run_db_import(db: SessionStore, candidates: list[Candidate], *, dry_run: bool = False,
                  timeout: float = jsonfile.LOCK_TIMEOUT) -> Outcome:
    """Every candidate in one transaction of the database (all or nothing); a row that appeared since
    the plan is skipped."""
    from praisonmem.core.sessions.ops import file_name, session_change  # the writer's: looking (check) needs neither

    targets = [db.ref(c.session_id) for c in candidates]
    changes = [session_change(Action.imported, c.session_id, target, dry_run=dry_run,
                              where=f"{file_name(c.file)} → {db.store_of(target)}",
                              detail="a JSON session the gateway had not imported")
               for c, target in zip(candidates, targets)]
    if dry_run:
        return Outcome(changes)
    try:
        with db.transaction(targets, timeout) as tx:
            for change, candidate, target in zip(changes, candidates, targets):
                if tx.exists(target):
                    change.action, change.detail = Action.skipped, "appeared in sessions.db meanwhile"
                else:
                    tx.write(target, candidate.doc)
    except PraisonMemError as exc:
        return Outcome([change.fail(exc) for change in changes])
    return Outcome(changes)
