"""Session changes: rename, retitle, delete and prune; adopt is in :mod:`.adopt`.

Every change is planned first (resolving names, reading and validating the
documents, checking targets), so a bad input fails before anything is
written, and ``dry_run`` returns the same changes without touching a file. The
writes happen in a store transaction (the sessions' locks, a re-read under
them). A target is always written before its source is removed, so an
interruption leaves a duplicate, never a loss, and the rerun finishes the
move when the target holds exactly what the move writes. A session's spilled
turns move with it.

Every command works on each store of the home (``store``: the label of one, as
``session list`` shows it); a name held by several stores is ambiguous until
``store`` picks one. A rename stays in its store: in ``sessions.db`` the new row
and the old row's removal are one transaction. What a store could not finish after
committing (``sessions.db``: old copies left in ``-wal`` because a reader held it)
is added to the change's detail.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

from praisonmem.core.errors import (CorruptFile, NotFound, NotRegularFile, PraisonMemError, Refused, TargetExists,
                                    UsageError)
from praisonmem.core.io import jsonfile
from praisonmem.core.io.timeutil import epoch_of, now_iso
from praisonmem.core.layout import HUGE_SESSION
from praisonmem.core.paths import Paths
from praisonmem.core.result import Action, Change, Outcome, Plan, Progress
from praisonmem.core.sessions import streamed
from praisonmem.core.sessions.documents import with_session_id
from praisonmem.core.sessions.listing import list_sessions
from praisonmem.core.sessions.stores import SessionStore
from praisonmem.core.sessions.stores.locate import open_store
from praisonmem.core.sessions.workspace import Scope, workspace_id
from praisonmem.core.io.safetext import plural

RECENT_SECONDS = 60


def file_name(ref: Any) -> str:
    """The last part of a ref, as change lines and messages show it (``my_chat.json``, ``sessions.db``)."""
    return Path(str(ref)).name


def question_name(store: SessionStore, ref: Any) -> str:
    """How a question names a session: its file, or for a session sharing its file, ``<file>:<name>``."""
    name = file_name(ref)
    return name if name.endswith(".json") else f"{name}:{store.name(ref)}"


def with_notes(change: Change, notes: list[str]) -> Change:
    """``change`` with what the store said after committing added to its detail."""
    if notes:
        change.detail = "; ".join([change.detail, *notes] if change.detail else notes)
        if "detail" in change.fields:
            change.fields["detail"] = change.detail
    return change


def session_change(action: Action, session_id: str | None, ref: Any, *, dry_run: bool = False,
                   new_session_id: str | None = None, target: Any = None, detail: str | None = None,
                   target_name: str | None = None, where: str | None = None, **fields: Any) -> Change:
    """A change record of the session commands: ``action``, ``session_id``, ``file``, ``dry_run``,
    ``new_session_id``, ``target`` (the file a move writes) and ``detail``."""
    record = {"session_id": session_id, "file": str(ref), "new_session_id": new_session_id,
              "target": None if target is None else str(target), **fields}
    return Change(action, target_name or session_id or file_name(ref), detail, dry_run, where, record)


FUTURE_SLACK = 1.0  # seconds: a stamp this little ahead is the clocks' jitter, not the future


def written_when(age: float, done: str = "was updated") -> str:
    """``was updated N s ago``, or that the stamp is in the future (a clock set wrong), never ``0 s ago`` for
    it."""
    if age < -FUTURE_SLACK:
        return f"has an updated_at {_span(-age)} in the future (a clock set wrong?)"
    return f"{done} {max(0, int(age))} s ago"


def _span(seconds: float) -> str:
    for unit, size in (("day", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            count = int(seconds // size)
            return plural(count, "day") if unit == "day" else f"{count} {unit}"
    return f"{int(seconds)} s"


def refuse_if_live(store: SessionStore, ref: Any, doc: dict[str, Any], what: str, force: bool) -> None:
    age = store.seconds_since_write(ref, doc, time.time())
    if not force and age is not None and age < RECENT_SECONDS:
        raise Refused(
            f"{file_name(ref)} {written_when(age)}: an agent may still be writing it "
            f"(it would carry on in a fresh file under the old id); {what} anyway with --force"
        )


def vanished(ref: Any) -> NotFound:
    return NotFound(f"{ref}: the session disappeared while praisonmem was waiting for its lock")


# ---------------------------------------------------------------- rename / retitle


def rename(paths: Paths, name: str, new_id: str, *, force: bool = False, dry_run: bool = False,
           timeout: float = jsonfile.LOCK_TIMEOUT, store: str | None = None, threshold: int | None = HUGE_SESSION
           ) -> Outcome:
    """Move a session to the place for ``new_id`` in its store and set its ``session_id``; nothing else changes.

    Its spilled turns move with it. When the target already holds exactly what
    the rename writes (an earlier run was interrupted after writing it), the
    rename is finished: the old file is removed, and the change says so. A JSON
    session file of ``threshold`` bytes or more is rewritten a message at a time
    (:func:`_rename_huge`: the same bytes).
    """
    if not new_id.strip():
        raise UsageError("the new session id must not be blank")
    home = open_store(paths, store)
    return _rename(home, name, new_id, force=force, dry_run=dry_run, timeout=timeout, threshold=threshold)


def _rename(store: SessionStore, name: str, new_id: str, *, force: bool, dry_run: bool,
            timeout: float, threshold: int | None = None) -> Outcome:
    from praisonmem.core.sessions.stores.jsondir import huge_file

    src = store.find(name)
    if huge_file(store, src, threshold, writing=True) is not None:
        try:
            return _rename_huge(store, src, new_id, force=force, dry_run=dry_run, timeout=timeout)
        except streamed.Unstreamable:
            pass  # a file only the whole-document reader reads (it says what is wrong): nothing was written
    doc = store.read(src)
    dst = store.ref(new_id, beside=src)
    finishing = dst != src and store.exists(dst) and store.holds(dst, with_session_id(doc, new_id))
    change = _rename_change(store, src, dst, doc, new_id, finishing=finishing, force=force, dry_run=dry_run)
    same = dst == src
    if dry_run:
        return Outcome([change])
    with store.transaction([src, dst], timeout) as tx:
        current = tx.read(src)
        if current is None:
            raise vanished(src)
        current_id = store.session_id(src, current)
        expected = with_session_id(current, new_id)
        store.refuse_spill_clash(src, current_id, new_id)
        if same or not tx.exists(dst):
            tx.write(dst, expected)
        elif not store.holds(dst, expected):
            raise TargetExists(f"cannot rename to '{new_id}': {_existing(store, dst)} already exists")
        tx.carry_spill(current_id, new_id)
        if not same:
            tx.delete(src)
    return Outcome([with_notes(change, tx.notes)])


def _rename_change(store: SessionStore, src: Any, dst: Any, doc: dict[str, Any], new_id: str, *, finishing: bool,
                   force: bool, dry_run: bool) -> Any:
    """The change a rename of ``src`` (read as ``doc``) to ``dst`` makes, after the refusals both ways of writing
    it share: a target that holds another session, a session an agent may still be writing, a spill clash."""
    old_id = store.session_id(src, doc)
    same = dst == src
    if not same and store.exists(dst) and not finishing:
        raise TargetExists(f"cannot rename to '{new_id}': {_existing(store, dst)} already exists")
    if not same:
        refuse_if_live(store, src, doc, "rename it", force)
    store.refuse_spill_clash(src, old_id, new_id)
    notes = [store.spill_note(src, old_id, new_id)]
    if finishing:
        notes.insert(0, f"finishes an interrupted rename: {file_name(dst)} already holds exactly this session")
    return session_change(Action.renamed, old_id, src, dry_run=dry_run, new_session_id=new_id, target=dst,
                          detail="; ".join(n for n in notes if n) or None, target_name=f"'{old_id}' → '{new_id}'",
                          where=file_name(src) if str(src) == str(dst) else f"{file_name(src)} → {file_name(dst)}")


def _rename_huge(store: SessionStore, src: Any, new_id: str, *, force: bool, dry_run: bool, timeout: float) -> Outcome:
    """:func:`_rename` of a huge JSON session file, step for step, holding its skeleton (:mod:`.streamed`) rather
    than its document: the new file is written a message at a time and read back in full before it replaces
    anything (:func:`~.stores.jsondir.write_streamed`); :class:`~.streamed.Unstreamable` when the file is not one
    for this, with nothing written."""
    from praisonmem.core.sessions.stores import jsondir

    doc = streamed.read_top(str(_path_of(src)))
    dst = store.ref(new_id, beside=src)
    finishing = dst != src and store.exists(dst) and streamed.holds(_path_of(dst), _path_of(src),
                                                                    with_session_id(doc, new_id))
    change = _rename_change(store, src, dst, doc, new_id, finishing=finishing, force=force, dry_run=dry_run)
    same = dst == src
    if dry_run:
        return Outcome([change])
    with store.transaction([src, dst], timeout) as tx:
        current = jsondir.read_top(tx, src)
        if current is None:
            raise vanished(src)
        current_id = store.session_id(src, current)
        expected = with_session_id(current, new_id)
        store.refuse_spill_clash(src, current_id, new_id)
        if same or not tx.exists(dst):
            jsondir.write_streamed(tx, dst, src, expected, current if same else None)
        elif not streamed.holds(_path_of(dst), _path_of(src), expected):
            raise TargetExists(f"cannot rename to '{new_id}': {_existing(store, dst)} already exists")
        tx.carry_spill(current_id, new_id)
        if not same:
            tx.delete(src)
    return Outcome([with_notes(change, tx.notes)])


def _path_of(ref: Any) -> str:
    """The file of a JSON-directory session (a home's ref names its store and that store's ref)."""
    return str(getattr(ref, "ref", ref))


def _existing(store: SessionStore, ref: Any) -> str:
    """What a refusal names as already there: the file, or the session in a shared file."""
    name = file_name(ref)
    return str(ref) if name.endswith(".json") else f"session '{store.name(ref)}' in {ref}"


def retitle(paths: Paths, name: str, title: str, *, dry_run: bool = False,
            timeout: float = jsonfile.LOCK_TIMEOUT, store: str | None = None, threshold: int | None = HUGE_SESSION
            ) -> Outcome:
    """Set ``metadata.title`` in place, as the library's ``rename_session`` does (blank clears it). A JSON session
    file of ``threshold`` bytes or more is rewritten a message at a time (the same bytes)."""
    home = open_store(paths, store)
    return _retitle(home, name, title, dry_run=dry_run, timeout=timeout, threshold=threshold)


def _retitle(store: SessionStore, name: str, title: str, *, dry_run: bool, timeout: float,
             threshold: int | None = None) -> Outcome:
    from praisonmem.core.sessions.stores.jsondir import huge_file

    src = store.find(name)
    huge = huge_file(store, src, threshold, writing=True) is not None
    if huge:
        try:
            top = streamed.read_top(_path_of(src))
        except streamed.Unstreamable:
            huge, top = False, store.read(src)
    sid = store.session_id(src, top if huge else store.read(src))
    title = title.strip()
    action, target = (Action.retitled, f"'{sid}' to '{title}'") if title else (Action.untitled, f"'{sid}'")
    change = session_change(action, sid, src, dry_run=dry_run, target_name=target)
    change.fields["detail"] = title or None  # the record's detail; the line says it already
    if dry_run:
        return Outcome([change])
    if huge:
        try:
            return _retitle_huge(store, src, title, change, timeout)
        except streamed.Unstreamable:
            pass  # a file only the whole-document reader reads (it says what is wrong): nothing was written
    with store.transaction([src], timeout) as tx:
        current = tx.read(src)
        if current is None:
            raise vanished(src)
        tx.write(src, _titled(current, title))
    return Outcome([with_notes(change, tx.notes)])


def _titled(doc: dict[str, Any], title: str) -> dict[str, Any]:
    """``doc`` with ``metadata.title`` set (blank: removed) and ``updated_at`` now, changed in place."""
    meta = doc.get("metadata")
    if not isinstance(meta, dict):
        meta = doc["metadata"] = {}
    if title:
        meta["title"] = title
    else:
        meta.pop("title", None)
    doc["updated_at"] = now_iso()
    return doc


def _retitle_huge(store: SessionStore, src: Any, title: str, change: Change, timeout: float) -> Outcome:
    """:func:`_retitle`'s write for a huge JSON session file: its skeleton retitled, written a message at a time."""
    from praisonmem.core.sessions.stores import jsondir

    with store.transaction([src], timeout) as tx:
        current = jsondir.read_top(tx, src)
        if current is None:
            raise vanished(src)
        meta = current.get("metadata")
        edited = {**current, "metadata": dict(meta)} if isinstance(meta, dict) else dict(current)
        jsondir.write_streamed(tx, src, src, _titled(edited, title), current)
    return Outcome([with_notes(change, tx.notes)])


# ---------------------------------------------------------------- delete / prune


def resolve_all(store: SessionStore, names: list[str]) -> list[Any]:
    """Resolve every name before anything is deleted; the first unknown one stops the command."""
    resolved: list[Any] = []
    for name in names:
        ref = store.find(name)
        if ref not in resolved:
            resolved.append(ref)
    return resolved


def _describe(store: SessionStore, ref: Any) -> tuple[str | None, dict[str, Any] | None]:
    """The session id (``None`` when it does not parse) and the document."""
    try:
        doc = store.read(ref)
    except PraisonMemError:
        return None, None
    return store.session_id(ref, doc), doc


Recheck = Callable[[SessionStore, Any, "dict[str, Any] | None"], "str | None"]


def not_live(store: SessionStore, ref: Any, doc: dict[str, Any] | None) -> str | None:
    """A reason to keep the session now: an agent wrote it in the last minute."""
    age = store.seconds_since_write(ref, doc, time.time()) if doc is not None else None
    if age is not None and age < RECENT_SECONDS:
        return f"{written_when(age, 'written')}, after it was chosen; kept (use --force to delete anyway)"
    return None


def still_older_than(cutoff: float) -> Recheck:
    def recheck(store: SessionStore, ref: Any, doc: dict[str, Any] | None) -> str | None:
        stamp = epoch_of(doc.get("updated_at")) if doc is not None else None
        if stamp is None or stamp >= cutoff:
            return "updated after it was chosen for pruning; kept"
        return None
    return recheck


def plan_delete(paths: Paths, names: list[str], *, force: bool = False,
                timeout: float = jsonfile.LOCK_TIMEOUT, store: str | None = None) -> Plan:
    """Delete the named sessions (every name resolved first, so a typo deletes nothing); a session written in
    the last minute, and a file praisonmem cannot read (:func:`refuse_if_unreadable`), are refused unless
    ``force``; the first is checked again under its lock."""
    store = open_store(paths, store)
    try:
        targets = resolve_all(store, names)
    except NotFound as exc:  # a rerun after a kill: the session is gone, but not perhaps all of its text
        return _gone(store, exc, timeout)
    for ref in targets:
        doc = refuse_if_unreadable(store, ref, force)
        if doc is not None:
            refuse_if_live(store, ref, doc, "delete it", force)
    store.refuse(deleting=targets)
    names_shown = ", ".join(question_name(store, r) for r in targets[:5]) + (" …" if len(targets) > 5 else "")
    return Plan(f"Delete {plural(len(targets), 'session file')} ({names_shown})?",
                lambda dry_run, progress: delete(store, targets, dry_run=dry_run, timeout=timeout,
                                                 recheck=None if force else not_live, progress=progress))


def refuse_if_unreadable(store: SessionStore, ref: Any, force: bool) -> dict[str, Any] | None:
    """The session's document (``None`` when it is gone or does not parse: a file that does not parse is the
    library's to quarantine, and may be deleted); a file praisonmem cannot read at all (permissions, an I/O
    error, a link loop, a pipe or device) is refused unless ``force``, since nothing can tell what it holds."""
    try:
        return store.read(ref)
    except NotFound:
        return None
    except CorruptFile as exc:
        if not isinstance(exc, NotRegularFile):
            return None
        problem = exc.reason
    except PraisonMemError as exc:
        problem = exc.message.removeprefix(f"{ref}: ")
    if not force:
        raise Refused(f"{file_name(ref)}: praisonmem cannot read it ({problem}), so it cannot tell what deleting it "
                      "loses; delete it anyway with --force")
    return None


def _gone(store: SessionStore, exc: NotFound, timeout: float) -> Plan:
    """A delete naming a session that is not there: :class:`NotFound` as ever, but first (not on a dry run) the
    scrub a killed delete left unfinished in ``sessions.db`` is finished, so that rerunning it clears the text."""
    from praisonmem.core.sessions.stores.sqlite_transcript import finish_interrupted, interrupted_scrubs

    if not interrupted_scrubs(store):
        raise exc

    def run(dry_run: bool, progress: Progress) -> Outcome:
        if not dry_run:
            finish_interrupted(store, timeout)
        raise exc

    return Plan(None, run)


def delete(store: SessionStore, targets: list[Any], *, dry_run: bool = False, timeout: float = jsonfile.LOCK_TIMEOUT,
           recheck: Recheck | None = None, progress: Progress = None) -> Outcome:
    """Delete each session under its lock, and first the spill records the library would merge into it, in the
    same transaction (else its next load of the id would make the session anew from them). A failure is
    recorded, not raised.

    ``recheck`` is applied again to the document read under the lock (the choice
    may be minutes old, made before a confirmation prompt): a reason it returns
    keeps the session, recorded as ``skipped``.
    """
    changes = []
    for ref in targets:
        sid, _ = _describe(store, ref)
        change = session_change(Action.deleted, sid, ref, dry_run=dry_run, where=file_name(ref),
                                detail=store.spill_note(ref, sid or "", None, "deleted") if dry_run else None)
        if not dry_run:
            try:
                with store.transaction([ref], timeout) as tx:
                    if not tx.exists(ref):
                        raise vanished(ref)
                    reason = recheck(store, ref, _current_or_none(tx, ref)) if recheck else None
                    if reason:
                        change.action, change.detail = Action.skipped, reason
                    else:
                        spill = tx.drop_spill(ref)  # first: a file left alone with its spill files comes back
                        tx.delete(ref)
                        if spill:
                            with_notes(change, [spill])
                with_notes(change, tx.notes)
            except PraisonMemError as exc:
                change.fail(exc)
        changes.append(change)
        if progress:
            progress(len(changes), len(targets))
    return Outcome(changes)


def _current_or_none(tx: Any, ref: Any) -> dict[str, Any] | None:
    try:
        return tx.read(ref)
    except PraisonMemError:
        return None


def plan_prune(paths: Paths, older_than: str | timedelta | None, *, keep: int = 0, agent: str | None = None,
               scope: Scope | str | None = None, timeout: float = jsonfile.LOCK_TIMEOUT, now: float | None = None,
               progress: Progress = None, store: str | None = None, since: str | None = None,
               until: str | None = None) -> Plan:
    """Delete sessions whose ``updated_at`` is older than ``older_than`` (a duration such as ``30d``), or lies
    between ``since`` and ``until`` (:func:`praisonmem.core.io.timeutil.window`: ``--until 30d`` is
    ``--older-than 30d``), sparing the ``keep`` newest matching ones (per store: each copy of a session counts
    where it is); each is checked again under its lock."""
    from praisonmem.core.io.timeutil import parse_duration, window

    if older_than is not None and until is not None:
        raise UsageError("give --older-than or --until, not both (--until 30d is --older-than 30d)")
    if older_than is None and since is None and until is None:
        raise UsageError("give --older-than DURATION, or --since/--until, to say which sessions to prune")
    now = time.time() if now is None else now
    if older_than is not None:
        age = parse_duration(older_than) if isinstance(older_than, str) else older_than
        until_moment = now - age.total_seconds()
        span = window(since, None, now=now)
        if span is not None and span.since is not None and span.since >= until_moment:
            raise UsageError(f"--since {since} is not before --older-than {older_than}")
        since_moment = None if span is None else span.since
        said = f"older than {older_than}"
    else:
        span = window(since, until, now=now)
        assert span is not None
        since_moment = span.since
        until_moment = now if span.until is None else span.until  # --since alone: what was there when asked
        said = " and ".join(part for part in (since and f"since {since}", until and f"before {until}") if part)
    listing = list_sessions(paths, workspace=workspace_id, agent=agent, scope=scope, sort="updated", limit=0,
                            store=store, progress=progress)
    rows = [(r, ref) for r, ref in zip(listing.rows, listing.refs or []) if not r["unreadable"]]
    undated = [r for r, _ in rows if epoch_of(r["updated_at"]) is None]
    dated = [(r, ref) for r, ref in rows if epoch_of(r["updated_at"]) is not None]
    dated.sort(key=lambda item: epoch_of(item[0]["updated_at"]), reverse=True)
    cutoff = until_moment
    old = []
    for label in dict.fromkeys(r["store"] for r, _ in dated):
        in_store = [(r, ref) for r, ref in dated if r["store"] == label]
        old += [(r, ref) for r, ref in in_store[keep:] if epoch_of(r["updated_at"]) < cutoff
                and (since_moment is None or epoch_of(r["updated_at"]) >= since_moment)]
    notes = [f"kept {r['session_id']}: no parseable updated_at" for r in undated]
    if listing.unreadable:
        notes.append(f"{plural(listing.unreadable, 'unreadable session file')} not considered (see 'praisonmem check')")
    if not old:
        notes.append(f"nothing {said} to prune")
    home = open_store(paths, store)
    targets = [ref for _, ref in old]
    try:
        home.refuse(deleting=targets)
    except Refused as exc:
        raise Refused(f"{exc.message} (--keep 1 keeps the newest)") from exc
    question = (f"Delete {plural(len(targets), 'session')} not updated in {older_than}?" if older_than is not None
                else f"Delete {plural(len(targets), 'session')} last updated {said}?")
    return Plan(question if targets else None,
                lambda dry_run, progress: delete(home, targets, dry_run=dry_run, timeout=timeout,
                                                 recheck=still_older_than(cutoff), progress=progress),
                notes)
