"""What an interrupted write left in the SQLite files beside the sessions, and the fix for each (``praisonmem
migrate`` runs them; ``check`` reports what they find with that command, from its own reading of the files):

* a ``sessions_index.db`` out of step with its directory: rows holding text their session file no longer has
  (an older praisonmem killed between a file change and its index commit, or a tool that rewrote the file
  without the index), rows of sessions that are gone, or the scrub marker of a praisonmem write killed before
  it cleared the text it removed (:data:`~.index.SCRUB_KEY`). Each row is brought in step with its file
  under the file's sidecar lock, then the index's write lock (the library's order), and the text no row holds
  any more is cleared from the database's files;
* a ``sessions.db`` whose free pages or ``-wal`` still hold old text (:func:`~praisonmem.core.io.sqlite.residue`):
  scrubbed as a delete ends.

A row merely behind its file (the session's text so far, which later turns extend) is left to the library:
it holds nothing the session does not.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from praisonmem.core.errors import PraisonMemError
from praisonmem.core.io import jsonfile
from praisonmem.core.layout import PROJECTS, TRANSCRIPT_DB
from praisonmem.core.result import Action, Change, Outcome, Plan
from praisonmem.core.io.safetext import plural

if TYPE_CHECKING:
    from praisonmem.core.paths import Paths


@dataclass(frozen=True)
class IndexRepair:
    """One index's rows out of step with the session files beside it, and the plan that fixes them."""

    index: Path
    stale: list[str]  # ids whose rows hold text their file no longer has
    orphans: list[str]  # ids no session file here holds
    scrub_pending: bool
    plan: Plan


@dataclass(frozen=True)
class TranscriptResidue:
    """A ``sessions.db`` whose files still hold old text, what is left, and the plan that scrubs it."""

    db: Path
    what: str
    plan: Plan


def index_dirs(paths: Paths) -> list[Path]:
    """The JSON directories of the home that have a search index: ``sessions/`` and each project store."""
    from praisonmem.core.sessions.stores.index import index_path

    candidates = [paths.sessions_dir]
    projects = paths.sessions_dir / PROJECTS
    if projects.is_dir():
        candidates += sorted(p for p in projects.iterdir() if p.is_dir())
    return [d for d in candidates if index_path(d).is_file()]


def index_repairs(paths: Paths, timeout: float = jsonfile.LOCK_TIMEOUT) -> list[IndexRepair]:
    """Every index of the home that is out of step with its directory (read only: nothing is locked)."""
    found = []
    for directory in index_dirs(paths):
        repair = _out_of_step(paths, directory, timeout)
        if repair is not None:
            found.append(repair)
    return found


def _out_of_step(paths: Paths, directory: Path, timeout: float) -> IndexRepair | None:
    from praisonmem.core.sessions.documents import session_id_of
    from praisonmem.core.sessions.stores.index import index_path, read_rows, read_texts
    from praisonmem.core.sessions.stores.indextext import behind, flatten, text_digest
    from praisonmem.core.sessions.stores.jsondir import load, name_of, session_file_name, session_paths

    index = index_path(directory)
    try:
        rows = read_rows(index)
    except PraisonMemError:  # damaged: check reports it, and PraisonAI's guard rebuilds it; nothing to bring in step
        return None
    if rows.kind is None:
        return None
    held: dict[str, tuple[str, str]] = {}  # id -> (file, its text)
    unreadable = set()
    for path in session_paths(directory):
        try:
            doc = load(path)
        except PraisonMemError:
            unreadable.add(name_of(path))  # check reports it; the rows of the id it may hold are left alone
            continue
        held[session_id_of(doc, name_of(path))] = (path, flatten(doc))
    orphans = sorted(sid for sid in rows.ids - set(held) if session_file_name(sid)[: -len(".json")] not in unreadable)
    differing = {sid for sid, (_, text) in held.items()
                 if sid in rows.digests and rows.digests[sid] != [text_digest(text)]}
    texts = read_texts(index, differing)
    stale = sorted(sid for sid in differing if any(not behind(row, held[sid][1]) for row in texts.get(sid, [])))
    if not (stale or orphans or rows.scrub_pending):
        return None
    refs = {sid: held[sid][0] for sid in stale} | {sid: str(directory / session_file_name(sid)) for sid in orphans}
    return IndexRepair(index, stale, orphans, rows.scrub_pending,
                       Plan(None, lambda dry_run, progress: _repair(paths, directory, refs, rows.scrub_pending,
                                                                    dry_run, timeout)))


def _repair(paths: Paths, directory: Path, refs: dict[str, str], pending: bool, dry_run: bool,
            timeout: float) -> Outcome:
    from praisonmem.core.sessions.stores.index import finish_scrub, index_path
    from praisonmem.core.sessions.stores.jsondir import JsonDirStore

    index = index_path(directory)
    parts = [f"the rows of {plural(len(refs), 'session')} brought in step with their files"] if refs else []
    if pending:
        parts.append("the text an interrupted write removed cleared from its files")
    change = Change(Action.updated, str(index), "; ".join(parts), dry_run,
                    fields={"file": str(index), "sessions": sorted(refs)})
    if dry_run:
        return Outcome([change])
    notes: list[str] = []
    try:
        if refs:
            store = JsonDirStore(directory, paths.spill_dir)
            with store.transaction(sorted(set(refs.values())), timeout) as tx:
                for sid, ref in sorted(refs.items()):
                    tx._reindex(ref, [sid])  # re-read under the file's lock: a live agent's write is kept
            notes += tx.notes
        else:
            notes += finish_scrub(directory)
    except PraisonMemError as exc:
        return Outcome([change.fail(exc)])
    return Outcome([change], notes)


def transcript_residue(paths: Paths, timeout: float = jsonfile.LOCK_TIMEOUT) -> list[TranscriptResidue]:
    """The home's ``sessions.db`` when its files still hold old text (read only)."""
    from praisonmem.core.io.sqlite import residue

    db = paths.sessions_dir / TRANSCRIPT_DB
    what = residue(db) if db.is_file() else None
    if what is None:
        return []
    return [TranscriptResidue(db, what, Plan(None, lambda dry_run, progress: _scrub(db, dry_run, timeout)))]


def _scrub(db: Path, dry_run: bool, timeout: float) -> Outcome:
    from praisonmem.core.sessions.stores.sqlite_transcript import finish_scrub

    change = Change(Action.updated, str(db), "free pages and -wal cleared of old text", dry_run,
                    fields={"file": str(db)})
    if dry_run:
        return Outcome([change])
    try:
        notes = finish_scrub(db, timeout)
    except PraisonMemError as exc:
        return Outcome([change.fail(exc)])
    return Outcome([change], notes)


def describe(found: Any) -> str:
    """The detail of a repair, for ``migrate`` and ``check``."""
    if isinstance(found, TranscriptResidue):
        return (f"{found.what}: scrubbed as a delete is (VACUUM, and -wal checkpointed and emptied), so that none of "
                "it stays on disk")
    parts = []
    if found.stale:
        parts.append(f"{plural(len(found.stale), 'row')} hold text their session file no longer has "
                     f"({', '.join(found.stale[:5])}{' …' if len(found.stale) > 5 else ''})")
    if found.orphans:
        parts.append(f"{plural(len(found.orphans), 'row')} belong to sessions that are gone "
                     f"({', '.join(found.orphans[:5])}{' …' if len(found.orphans) > 5 else ''})")
    if found.scrub_pending:
        parts.append("a praisonmem write was interrupted before it cleared the text it removed from the file's "
                     "old page versions")
    return ("; ".join(parts) + ": PraisonAI's search still finds the sessions by that text, and it stays on disk; "
            "each row is brought in step with its file, under the file's lock, and the removed text cleared")
