"""FileMemory's saved sessions: ``<user dir>/sessions/<name>.json``, one per ``FileMemory.save_session(name)``.

The library writes each as one JSON object (``json.dump(indent=2, ensure_ascii=False)`` into a temp file
``.<name>.json.<random>.tmp`` beside it, fsync, ``os.replace``): ``name``, ``user_id``, ``saved_at`` (epoch float),
``saved_at_iso`` (local time, no zone), ``short_term`` (every short-term item), ``long_term_snapshot`` (the last 50
long-term items), ``entity_ids``, ``conversation_history`` (the messages the caller passed), ``metadata`` and
``config``. ``resume_session`` and ``list_sessions`` read them under ``flock(LOCK_SH)`` on the file, as
:mod:`.filememory_io` does; ``list_sessions`` orders them by ``saved_at_iso``, newest first, and so does
:func:`saved_sessions`. A name is checked as the library's ``safe_child`` checks it (not blank, ``.`` or ``..``, no
``/``, ``\\`` or NUL).

Reading changes nothing. A file that does not parse is listed as unreadable and refused by ``show`` and
``delete`` (exit 4), never removed unseen. ``delete`` removes the one file under praisonmem's per-user writer lock,
after re-reading it there, and with it any temp file a killed ``save_session`` of that very name left (they hold
the same text); nothing else in the user's directory is touched.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from praisonmem.core.errors import CorruptFile, NotFound, PraisonMemError, Refused, UsageError, io_failure
from praisonmem.core.io import jsonfile
from praisonmem.core.layout import JSON, SAVED_SESSIONS
from praisonmem.core.memory import filememory_io
from praisonmem.core.memory.filememory import FileMemoryStore, user_lock
from praisonmem.core.paths import Paths
from praisonmem.core.result import Action, Change, Outcome, Plan
from praisonmem.core.io.safetext import plural


@dataclass
class SavedSession:
    """One saved session as read: its file, the bytes as stored and the document they hold."""

    name: str
    path: Path
    raw: bytes
    doc: dict[str, Any]
    user_id: str

    def row(self) -> dict[str, Any]:
        return summary(self.name, self.path, self.raw, self.doc, self.user_id)


def check_name(name: str) -> str:
    """The library's ``safe_child`` rule for a session name (exit 2 where it raises ``ValueError``)."""
    if not name.strip() or name in (".", "..") or any(sep in name for sep in ("/", "\\", "\0")):
        raise UsageError(f"invalid saved session name: {name!r}")
    return name


def sessions_dir(store: FileMemoryStore) -> Path:
    return store.user_dir / SAVED_SESSIONS


def _count(doc: dict[str, Any], key: str) -> int | None:
    value = doc.get(key)
    return len(value) if isinstance(value, list) else None


def summary(name: str, path: Path, raw: bytes, doc: dict[str, Any], user_id: str) -> dict[str, Any]:
    """``memory sessions``' row of one saved session (what ``list_sessions`` reports, and the counts)."""
    stored_name = doc.get("name")
    return {"name": stored_name if isinstance(stored_name, str) else name, "file": path.name, "path": str(path),
            "user_id": user_id, "saved_at": doc.get("saved_at"), "saved_at_iso": doc.get("saved_at_iso"),
            "messages": _count(doc, "conversation_history"), "short_term": _count(doc, "short_term"),
            "long_term_snapshot": _count(doc, "long_term_snapshot"), "entity_ids": _count(doc, "entity_ids"),
            "size": len(raw), "unreadable": None}


def _parse(raw: bytes, path: Path) -> dict[str, Any]:
    doc = jsonfile.parse(raw, path)
    if not isinstance(doc, dict):
        raise CorruptFile(str(path), f"holds {jsonfile.json_kind(doc)}, not a saved session object "
                                     "(FileMemory.resume_session would crash on it)")
    return doc


def _regular(path: Path) -> None:
    """A link (the library's ``safe_child`` refuses one that leads out of ``sessions/``) or anything but a regular
    file is refused, never followed."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    except OSError as exc:
        raise io_failure(path, exc) from exc
    if stat.S_ISLNK(mode):
        raise Refused(f"{path}: a symbolic link, not a saved session file; not followed")
    if not stat.S_ISREG(mode):
        raise Refused(f"{path}: not a regular file")


def read_saved(store: FileMemoryStore, name: str) -> SavedSession:
    """The saved session ``name`` of the store's user, read under its shared lock; :class:`NotFound` when there is
    none, :class:`CorruptFile` when it does not parse (after the re-reads :mod:`.filememory_io` makes)."""
    path = sessions_dir(store) / f"{check_name(name)}{JSON}"
    _regular(path)
    try:
        raw, doc = filememory_io.read_settled(path, store.timeout, _parse)
    except NotFound:
        raise NotFound(f"no saved session '{name}' for user '{store.user_id}' ({path})") from None
    except CorruptFile as exc:
        raise CorruptFile(str(path), f"{exc.reason.removeprefix(str(path) + ': ')}; not changed") from exc
    return SavedSession(name, path, raw, doc, store.user_id)


def saved_sessions(store: FileMemoryStore) -> list[dict[str, Any]]:
    """Every ``sessions/*.json`` of the user, newest ``saved_at_iso`` first (ties by name), as ``list_sessions``
    orders them; a file that does not parse is a row with ``unreadable`` saying why (the library skips it)."""
    directory = sessions_dir(store)
    try:
        names = sorted(e.name for e in os.scandir(directory) if e.name.endswith(JSON))
    except (FileNotFoundError, NotADirectoryError):
        return []
    except OSError as exc:
        raise io_failure(directory, exc) from exc
    rows = []
    for file_name in names:
        path = directory / file_name
        stem = file_name[: -len(JSON)]
        try:
            _regular(path)
            raw, doc, error = filememory_io.read_last(path, store.timeout, _parse)
        except NotFound:  # removed meanwhile
            continue
        except PraisonMemError as exc:
            raw, doc, error = b"", None, exc
        if error is not None:  # its message names the file
            rows.append({**summary(stem, path, raw, {}, store.user_id), "unreadable": error.message})
        else:
            rows.append(summary(stem, path, raw, doc, store.user_id))
    rows.sort(key=lambda r: r["saved_at_iso"] if isinstance(r["saved_at_iso"], str) else "", reverse=True)
    return rows


def _store(paths: Paths, user_id: str | None, timeout: float) -> FileMemoryStore:
    return FileMemoryStore(paths.memory_dir, user_id, timeout=timeout)


def list_saved_sessions(paths: Paths, user_id: str | None, *, timeout: float = jsonfile.LOCK_TIMEOUT
                        ) -> list[dict[str, Any]]:
    """``memory sessions``: the user's saved sessions (:func:`saved_sessions`)."""
    return saved_sessions(_store(paths, user_id, timeout))


def show_saved_session(paths: Paths, user_id: str | None, name: str, *, timeout: float = jsonfile.LOCK_TIMEOUT
                       ) -> SavedSession:
    """``memory sessions show``: one saved session as stored."""
    return read_saved(_store(paths, user_id, timeout), name)


def plan_delete_saved_session(paths: Paths, user_id: str | None, name: str, *,
                              timeout: float = jsonfile.LOCK_TIMEOUT) -> Plan:
    """``memory sessions delete``: read first (a missing or unreadable file stops here, before any question),
    then, under the writer lock, read again and remove the file (``FileMemory.delete_session``'s unlink)."""
    store = _store(paths, user_id, timeout)
    found = read_saved(store, name)
    row = found.row()
    messages = "?" if row["messages"] is None else row["messages"]

    def run(dry_run: bool, progress: Any) -> Outcome:
        fields = {**row, "removed_temps": []}
        if not dry_run:
            with user_lock(store.user_dir, timeout):
                read_saved(store, name)  # still there and still a session: nothing unreadable is removed
                jsonfile.delete_locked(found.path)
                fields["removed_temps"] = jsonfile.sweep_leftovers(found.path)
                jsonfile.fsync_dir(found.path.parent)
        return Outcome([Change(Action.deleted, f"saved session '{name}' of user '{store.user_id}'", dry_run=dry_run,
                               where=str(found.path), fields=fields)])

    return Plan(f"Delete saved session '{name}' of user '{store.user_id}' ({plural(messages, 'message')}, "
                f"{row['size']} bytes)?", run)
