"""``forget``'s session stores: every store the session commands know, found in the home and wherever
``locate`` found one, each planned and erased through :mod:`praisonmem.core.sessions`.

A session belongs to a user by its ``user_id`` (the document's, its ``metadata``'s, or a gateway
snapshot's), to an agent by its ``agent_name`` or ``agent_id``, and is a ``--session`` by its id (or the
gateway's ``gateway_session_id``). praisonaiagents records no user per message (a turn has a role, its
content, a timestamp and metadata, never whose it is), so a session is forgotten whole or kept whole:
a session whose ``user_id`` is someone else's is kept even when the subject spoke in it, and the plan
says nothing of it (nothing in it names the subject).

Erasing is :func:`praisonmem.core.sessions.ops.delete`, the one delete the session commands use: the
session's lock (the library's flock, ``sessions.db``'s ``BEGIN IMMEDIATE``), its spill files first, the
directory's ``sessions_index.db`` rows and FTS5 text ahead of the file, and for ``sessions.db`` the
zeroed free pages, ``VACUUM`` and emptied ``-wal``. A rerun after a kill finds the sessions gone and
finishes what the killed run left marked (:func:`finish_scrubs`).

``--before`` compares the session's ``updated_at`` (its last write; ``created_at`` when it has none): a
session without either is kept, and the plan says so, since nothing tells whether it is older.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from praisonmem.core.errors import EXIT_REFUSED, NotFound, PraisonMemError, Refused
from praisonmem.core.forget.model import MIN_NEEDLE, Erasure, StorePlan, Subject, SubjectKind, Where
from praisonmem.core.io.timeutil import epoch_of
from praisonmem.core.io.safetext import plural

SIDECARS = ("-wal", "-shm", "-journal")
INDEX_DB = "sessions_index.db"
INDEX_PREFIX = "index:"  # the key of a session's index rows left without its file
# locate's kinds that are session stores on disk, and where the home is from each one's path
HOME_KINDS = {"session-dir": 1, "gateway-transcripts": 2, "project-sessions": 3}
LOCATION_KINDS = ("conversation-sqlite", "conversation-json")


def forget_stores(where: Where) -> list[SessionForget]:
    """One :class:`SessionForget` per session store of the home and of every home or store ``locate`` found."""
    from praisonmem.core.sessions import member_stores, open_location

    out: list[SessionForget] = []
    seen: set[tuple[str, str]] = set()

    def add(store: Any) -> None:
        mark = (store.label, os.path.realpath(_location(store)))
        if mark not in seen:
            seen.add(mark)
            out.append(SessionForget(store, where.key))

    for paths in _homes(where):
        for store in member_stores(paths):
            add(store)
    for found in where.located:
        if found.kind in LOCATION_KINDS or (found.kind == "session-dir" and Path(found.path).name != "sessions"):
            for store in open_location(found.path).stores.values():  # type: ignore[attr-defined]
                add(store)
    return out


def _homes(where: Where) -> Iterator[Any]:
    """The home, and the home of every session store ``locate`` found in a home's layout
    (``<home>/sessions``, ``<home>/sessions/sessions.db``, ``<home>/sessions/projects/<id>``)."""
    from praisonmem.core.paths import resolve

    yield where.paths
    done = {os.path.realpath(where.paths.data.path)}
    for found in where.located:
        up = HOME_KINDS.get(found.kind)
        path = Path(found.path)
        if up is None or (found.kind == "session-dir" and path.name != "sessions"):
            continue
        home = path.parents[up - 1]
        if os.path.realpath(home) not in done:
            done.add(os.path.realpath(home))
            yield resolve(home, where.paths.memory.path, env={})


def _location(store: Any) -> str:
    for name in ("directory", "db", "path"):
        if getattr(store, name, None) is not None:
            return str(getattr(store, name))
    backend = getattr(store, "backend", None)
    return str(getattr(backend, "path", None) or getattr(backend, "display", None) or store.label)


KINDS = {"json": "session-dir", "sessions.db": "gateway-transcripts", "unified": "unified-sessions",
         "legacy-run": "legacy-run"}


def kind_of(store: Any) -> str:
    """The store's kind as ``locate`` names it."""
    from praisonmem.core.sessions import project_label

    if store.label.startswith(project_label):
        return "project-sessions"
    if type(store).__name__ == "ConversationJsonStore":
        return "conversation-json"
    if type(store).__name__ == "ConversationStore":
        return "conversation-sqlite"
    return KINDS.get(store.label, store.label)


class SessionForget:
    """One session store's part of a forget (:class:`~praisonmem.core.forget.model.ForgetStore`)."""

    def __init__(self, sessions: Any, key: bytes | None = None) -> None:
        self.sessions = sessions
        self.key = key
        self.store = kind_of(sessions)
        self.location = _location(sessions)

    # ---------------------------------------------------------------- plan

    def plan(self, subject: Subject) -> StorePlan:
        plan = StorePlan(self.store, self.location)
        absent = self.sessions.absent()
        if absent is not None:
            return plan
        try:
            refs = self.sessions.refs()
        except PraisonMemError as exc:
            plan.unreachable = exc.message
            return plan
        cipher = self._cipher()
        others: set[str] = set()
        mine: list[tuple[Any, dict[str, Any], str]] = []
        encrypted = 0
        for ref in refs:
            try:
                doc = self.sessions.read(ref)
            except PraisonMemError as exc:
                plan.notes.append(f"{ref}: not read ({exc.message.removeprefix(f'{ref}: ')}); "
                                  "its bytes are searched by the proof")
                continue
            sid = self.sessions.session_id(ref, doc)
            if not matches(subject, doc, sid):
                others.update(strings(doc))
                continue
            if subject.before is not None:
                stamp = when(doc)
                if stamp is None:
                    plan.notes.append(f"kept session {sid}: it has no updated_at or created_at to compare "
                                      "with --before")
                    continue
                if stamp >= subject.before.timestamp():
                    others.update(strings(doc))
                    continue
            mine.append((ref, doc, sid))
        for ref, doc, sid in mine:
            texts = set(strings(doc))
            if _encrypted(doc):
                encrypted += 1
                if cipher is not None:
                    texts.update(strings(_opened(doc, cipher, str(ref))))
            texts -= others  # a text another record holds too (a shared prompt) proves nothing and stays
            plan.erasures.append(Erasure(self.sessions.name(ref), describe(self.sessions, ref, doc, sid),
                                         texts=tuple(sorted(texts))))
        orphan = self._orphan_rows(subject, plan)
        if orphan is not None:
            plan.erasures.append(orphan)
        if encrypted and cipher is None:
            plan.unverifiable = (f"{plural(encrypted, 'encrypted session')}: their text cannot be checked without the "
                                 "key (PRAISONAI_SESSION_KEY or --key-file)")
        plan.files = store_files(self.sessions, refs)
        return plan

    def _orphan_rows(self, subject: Subject, plan: StorePlan) -> Erasure | None:
        """``--session``: the session's rows in the directory's ``sessions_index.db`` when no file of it is there
        (a library delete that left its index rows): their text is a copy of the session too."""
        from praisonmem.core.sessions import read_index, read_index_texts, session_file_name

        directory = getattr(self.sessions, "directory", None)
        if subject.kind is not SubjectKind.session or self.store not in ("session-dir", "project-sessions") \
                or directory is None or plan.erasures or not (Path(directory) / INDEX_DB).is_file():
            return None
        sid = subject.value
        if (Path(directory) / session_file_name(sid)).exists() or sid not in read_index(Path(directory) / INDEX_DB).ids:
            return None
        texts = read_index_texts(Path(directory) / INDEX_DB, {sid}).get(sid, [])
        return Erasure(f"{INDEX_PREFIX}{sid}", f"rows of session {sid} in {INDEX_DB} (no file of it is left)",
                       texts=tuple(t for t in texts if len(t) >= MIN_NEEDLE))

    def _cipher(self) -> Any:
        if self.key is None:
            return None
        from praisonmem.core.sessions import Key

        return Key(self.key.decode(), "the session key").cipher()

    # ---------------------------------------------------------------- erase

    def erase(self, plan: StorePlan) -> int:
        from praisonmem.core.sessions import delete_sessions as delete

        targets = []
        for erasure in plan.erasures:
            if erasure.key.startswith(INDEX_PREFIX):
                from praisonmem.core.sessions import forget_index_rows

                forget_index_rows(Path(self.sessions.directory), erasure.key.removeprefix(INDEX_PREFIX))
                continue
            try:
                targets.append(self.sessions.find(erasure.key))
            except NotFound:
                continue  # gone already: a rerun after a kill
        done = len(plan.erasures) - len(targets)
        if targets:
            outcome = delete(self.sessions, targets)
            for change in outcome.changes:
                if change.failed:  # a running agent holds the lock, a file cannot be written: the store's message
                    error = Refused if change.exit_code == EXIT_REFUSED else PraisonMemError
                    raise error(f"{change.where or change.target}: {change.detail}")
                done += 1
        finish_scrubs(self.sessions)
        return done

    def residue(self, needles: Sequence[str]) -> list[str] | None:
        return []  # a store of files says nothing beyond them: the proof scans their bytes (none: nothing to hold)


def finish_scrubs(sessions: Any) -> None:
    """Finish the scrub a killed write left marked (``sessions.db``'s old pages, the index's removed text)."""
    from praisonmem.core.io import jsonfile
    from praisonmem.core.sessions import finish_transcript_scrub as finish_interrupted

    finish_interrupted(sessions, jsonfile.LOCK_TIMEOUT)
    directory = getattr(sessions, "directory", None)
    if directory is not None and (Path(directory) / INDEX_DB).is_file():
        from praisonmem.core.sessions import finish_index_scrub as finish_scrub

        finish_scrub(Path(directory))


# ---------------------------------------------------------------- matching


def user_ids(doc: dict[str, Any]) -> set[str]:
    """Every user a session names: its ``user_id``, its metadata's, each gateway snapshot's."""
    from praisonmem.core.sessions import gateway_snapshots, metadata_of

    found = {doc.get("user_id"), metadata_of(doc).get("user_id")}
    for data in gateway_snapshots(doc):
        found.add(data.get("user_id"))
    return {u for u in found if isinstance(u, str)}


def agent_ids(doc: dict[str, Any]) -> set[str]:
    from praisonmem.core.sessions import gateway_snapshots, metadata_of

    meta = metadata_of(doc)
    found = {doc.get("agent_name"), doc.get("agent_id"), meta.get("agent_name"), meta.get("agent_id")}
    for data in gateway_snapshots(doc):
        found.update((data.get("agent_id"), data.get("agent_name")))
    return {a for a in found if isinstance(a, str)}


def matches(subject: Subject, doc: dict[str, Any], session_id: str) -> bool:
    if subject.kind is SubjectKind.user:
        return subject.value in user_ids(doc)
    if subject.kind is SubjectKind.agent:
        return subject.value in agent_ids(doc)
    return subject.value in {session_id, doc.get("session_id"), doc.get("gateway_session_id")}


def when(doc: dict[str, Any]) -> float | None:
    stamp = epoch_of(doc.get("updated_at"))
    return stamp if stamp is not None else epoch_of(doc.get("created_at"))


def strings(value: Any) -> Iterator[str]:
    """Every string of ``MIN_NEEDLE`` characters or more in a document (messages, titles, snapshots)."""
    if isinstance(value, str):
        if len(value) >= MIN_NEEDLE:
            yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


def _encrypted(doc: dict[str, Any]) -> bool:
    from praisonmem.core.sessions import is_encrypted_session

    return is_encrypted_session(doc)


def _opened(doc: dict[str, Any], cipher: Any, where: str) -> dict[str, Any]:
    from praisonmem.core.sessions import opened_session

    return opened_session(doc, cipher, where)


def describe(sessions: Any, ref: Any, doc: dict[str, Any], session_id: str) -> str:
    from praisonmem.core.sessions import messages_of

    count = len(messages_of(doc)) + len(messages_of(doc, "archived_messages"))
    return f"session {session_id} ({plural(count, 'message')}) in {Path(str(ref)).name}"


def store_files(sessions: Any, refs: Sequence[Any]) -> list[Path]:
    """Every file of the store whose bytes may hold one of its sessions: a database with its sidecars; else
    each session's file (a run directory: every file in it) and lock, the directory's ``sessions_index.db`` with
    its sidecars, and for a session directory every other file directly in it (temp files a killed write left)
    but another store's database, and the spill dir's files. Another store's files are left to that store, so
    its encrypted sessions do not make this one unverifiable."""
    db = getattr(sessions, "db", None) or getattr(getattr(sessions, "backend", None), "path", None)
    if db is not None:
        return _regular({Path(f"{db}{s}") for s in ("", *SIDECARS)})
    files: set[Path] = set()
    for ref in refs:
        path = Path(str(ref))
        if path.is_dir():
            files.update(p for p in path.rglob("*"))
        else:
            files.update((path, Path(f"{path}.lock")))
    directory, kind = getattr(sessions, "directory", None), kind_of(sessions)
    if directory is not None and kind in INDEXED:  # the stores whose writes the directory's index follows
        files.update(Path(directory, f"{INDEX_DB}{s}") for s in ("", *SIDECARS))
    if directory is not None and kind in ("session-dir", "project-sessions", "conversation-json"):
        files.update(_entries(Path(directory), skip=TRANSCRIPT_PREFIX))
    spill = getattr(sessions, "spill_dir", None)
    if spill is not None:
        files.update(_entries(Path(spill)))
    return _regular(files)


INDEXED = ("session-dir", "project-sessions", "unified-sessions")
TRANSCRIPT_PREFIX = "sessions.db"  # the gateway's database beside the JSON files: its own store's


def _entries(directory: Path, skip: str | None = None) -> list[Path]:
    try:
        with os.scandir(directory) as entries:
            return [Path(e.path) for e in entries if not (skip and e.name.startswith(skip))]
    except OSError:
        return []


def _regular(files: set[Path]) -> list[Path]:
    return sorted(f for f in files if f.is_file() and not f.is_symlink())
