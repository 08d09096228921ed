"""Session changes: rename, retitle, delete and prune (spec §2.4–§2.8); adopt is in :mod:`session_adopt`.

Every change is planned first (resolving names, reading and validating the
documents, checking targets), so a bad input fails before anything is
written, and ``dry_run`` returns the same plan without touching a file. The
writes themselves go through :mod:`praisonmem.core.io.jsonfile`: the sidecar
locks (several taken in sorted order), a re-read under the lock, and an
atomic replace. A target is always written before its source is removed, so
an interruption leaves a duplicate, never a loss, and the rerun finishes the
move when the target holds exactly what the move writes. A session's spilled
turns move with it. ``.lock`` files are left in place.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

from praisonmem.core.io import jsonfile
from praisonmem.core.sessions import listing as sessions
from praisonmem.core.errors import NotFound, PraisonMemError, Refused, TargetExists, UsageError
from praisonmem.core.paths import Paths
from praisonmem.core.io.timeutil import epoch_of, now_iso, seconds_since_activity
from praisonmem.core.sessions.workspace import safe_file_stem, session_file_name, workspace_id

RECENT_SECONDS = 60


@dataclass
class Change:
    """One thing a mutating command did, or would do with ``--dry-run``."""

    action: str
    session_id: str | None
    file: str
    dry_run: bool = False
    new_session_id: str | None = None
    target: str | None = None
    detail: str | None = None
    exit_code: int | None = field(default=None, repr=False)  # of a failure; not part of the JSON record

    def to_json(self) -> dict[str, Any]:
        record = asdict(self)
        del record["exit_code"]
        return record

    def failed(self, exc: PraisonMemError) -> None:
        self.action, self.detail, self.exit_code = "failed", exc.message, exc.exit_code


def _refuse_if_live(path: Path, doc: dict[str, Any], what: str, force: bool) -> None:
    age = seconds_since_activity(path, doc, time.time())
    if not force and age is not None and age < RECENT_SECONDS:
        raise Refused(
            f"{path.name} was updated {max(0, int(age))} s ago: an agent may still be writing it "
            f"(it would carry on in a fresh file under the old id); {what} anyway with --force"
        )


def with_session_id(doc: dict[str, Any], session_id: str) -> dict[str, Any]:
    """A copy of ``doc`` naming ``session_id`` (in place of the old value, else first)."""
    if "session_id" in doc:
        return {**doc, "session_id": session_id}
    return {"session_id": session_id, **doc}


def holds_exactly(path: Path, doc: dict[str, Any]) -> bool:
    """``path`` has exactly the bytes writing ``doc`` would give: an interrupted move got that far."""
    try:
        return jsonfile.read_bytes(path) == jsonfile.serialise(doc)
    except NotFound:
        return False


def carry_spill(spill_dir: Path, old_id: str, new_id: str, *, keep: bool = False) -> None:
    """Re-address ``old_id``'s spilled turns to ``new_id``, so the library merges them there (spec §2.5).

    The caller holds both sessions' locks: the library re-ingests a session's
    spill files only under that session's lock. Each file is rewritten under
    the new id's name with its ``session_id`` changed (the library's one-line
    format), then the old one is removed (kept with ``keep``). A rerun after an
    interruption finds the new file already written and only removes the old.
    """
    for path, moved, data in _spill_moves(spill_dir, old_id, new_id):
        if moved == path:
            jsonfile.replace_atomically(path, data, mode=0o600)
            continue
        if not moved.exists():
            jsonfile.replace_atomically(moved, data, mode=0o600)
        if not keep:
            jsonfile.delete_locked(path)


def refuse_spill_clash(spill_dir: Path, old_id: str, *new_ids: str) -> None:
    """Refuse, before anything is written, when carrying ``old_id``'s spill files would meet another file."""
    for new_id in new_ids:
        for path, moved, data in _spill_moves(spill_dir, old_id, new_id):
            if moved != path and moved.exists() and jsonfile.read_bytes(moved) != data:
                raise Refused(f"{moved}: another spill file already has this name, so the spilled turns in "
                              f"{path.name} cannot move with the session; nothing changed")


def _spill_moves(spill_dir: Path, old_id: str, new_id: str) -> list[tuple[Path, Path, bytes]]:
    if old_id == new_id:
        return []
    old_stem, new_stem = safe_file_stem(old_id), safe_file_stem(new_id)
    return [(path, path.with_name(new_stem + path.name[len(old_stem):]),
             json.dumps({**record, "session_id": new_id}, ensure_ascii=False).encode("utf-8"))
            for path, record in sessions.spill_records(spill_dir, old_id)]


def spill_note(spill_dir: Path, old_id: str, new_id: str, verb: str = "move") -> str | None:
    """What carrying ``old_id``'s spill files will do, for the change record."""
    if old_id == new_id:
        return None
    records = sessions.spill_records(spill_dir, old_id)
    turns = sum(len(sessions.messages_of(record)) for _, record in records)
    return f"{turns} spilled turn(s) in {len(records)} spill file(s) {verb} with it" if records else None


def vanished(path: Path) -> NotFound:
    return NotFound(f"{path}: the session disappeared while praisonmem was waiting for its lock")


# ---------------------------------------------------------------- rename / retitle


def rename(paths: Paths, name: str, new_id: str, *, force: bool = False, dry_run: bool = False,
           timeout: float = jsonfile.LOCK_TIMEOUT) -> Change:
    """Move a session to the file for ``new_id`` and set its ``session_id``; nothing else changes.

    Its spilled turns move with it. When the target already holds exactly what
    the rename writes (an earlier run was interrupted after writing it), the
    rename is finished: the old file is removed, and the change says so.
    """
    if not new_id.strip():
        raise UsageError("the new session id must not be blank")
    src = sessions.find(paths, name)
    doc = sessions.load(src)
    old_id = sessions.raw_session_id(doc, src)
    dst = src.with_name(session_file_name(new_id))
    same_file = dst == src
    finishing = not same_file and dst.exists() and holds_exactly(dst, with_session_id(doc, new_id))
    if not same_file and dst.exists() and not finishing:
        raise TargetExists(f"cannot rename to '{new_id}': {dst} already exists")
    if not same_file:
        _refuse_if_live(src, doc, "rename it", force)
    refuse_spill_clash(paths.spill_dir, old_id, new_id)
    notes = [spill_note(paths.spill_dir, old_id, new_id)]
    if finishing:
        notes.insert(0, f"finishes an interrupted rename: {dst.name} already holds exactly this session")
    change = Change("renamed", old_id, str(src), dry_run, new_session_id=new_id, target=str(dst),
                    detail="; ".join(n for n in notes if n) or None)
    if dry_run:
        return change
    with jsonfile.locked_many([src, dst], timeout):
        current = jsonfile.read_current(src)
        if current is None:
            raise vanished(src)
        sessions.validate(current, src)
        expected = with_session_id(current, new_id)
        refuse_spill_clash(paths.spill_dir, sessions.raw_session_id(current, src), new_id)
        if same_file or not jsonfile.exists(dst):
            jsonfile.write_locked(dst, expected)
        elif not holds_exactly(dst, expected):
            raise TargetExists(f"cannot rename to '{new_id}': {dst} already exists")
        carry_spill(paths.spill_dir, sessions.raw_session_id(current, src), new_id)
        if not same_file:
            jsonfile.delete_locked(src)
    return change


def retitle(paths: Paths, name: str, title: str, *, dry_run: bool = False,
            timeout: float = jsonfile.LOCK_TIMEOUT) -> Change:
    """Set ``metadata.title`` in place, as the library's ``rename_session`` does (blank clears it)."""
    src = sessions.find(paths, name)
    doc = sessions.load(src)
    title = title.strip()
    change = Change("retitled" if title else "untitled", sessions.raw_session_id(doc, src), str(src), dry_run,
                    detail=title or None)
    if dry_run:
        return change

    def apply(current: dict[str, Any] | None) -> dict[str, Any]:
        if current is None:
            raise vanished(src)
        sessions.validate(current, src)
        meta = current.get("metadata")
        if not isinstance(meta, dict):
            meta = current["metadata"] = {}
        if title:
            meta["title"] = title
        else:
            meta.pop("title", None)
        current["updated_at"] = now_iso()
        return current

    jsonfile.update(src, apply, timeout=timeout)
    return change


# ---------------------------------------------------------------- delete / prune


def resolve_all(paths: Paths, names: list[str]) -> list[Path]:
    """Resolve every name before anything is deleted; the first unknown one stops the command."""
    resolved: list[Path] = []
    for name in names:
        path = sessions.find(paths, name)
        if path not in resolved:
            resolved.append(path)
    return resolved


def describe(path: Path) -> tuple[str | None, dict[str, Any] | None]:
    """The raw session id (or ``None`` when the file does not parse) and the document."""
    try:
        doc = sessions.load(path)
    except PraisonMemError:
        return None, None
    return sessions.raw_session_id(doc, path), doc


def check_not_live(targets: list[Path], force: bool) -> None:
    for path in targets:
        _, doc = describe(path)
        if doc is not None:
            _refuse_if_live(path, doc, "delete it", force)


Recheck = Callable[[Path, dict[str, Any] | None], str | None]


def not_live(path: Path, doc: dict[str, Any] | None) -> str | None:
    """A reason to keep the session now: an agent wrote it in the last minute."""
    age = seconds_since_activity(path, doc, time.time()) if doc is not None else None
    if age is not None and age < RECENT_SECONDS:
        return f"written {max(0, int(age))} s ago, after it was chosen; kept (use --force to delete anyway)"
    return None


def still_older_than(cutoff: float) -> Recheck:
    def recheck(path: Path, doc: dict[str, Any] | None) -> str | None:
        stamp = epoch_of(doc.get("updated_at")) if doc is not None else None
        if stamp is None or stamp >= cutoff:
            return "updated after it was chosen for pruning; kept"
        return None
    return recheck


def delete(targets: list[Path], *, dry_run: bool = False, timeout: float = jsonfile.LOCK_TIMEOUT,
           recheck: Recheck | None = None, progress: Callable[[int, int], None] | None = None) -> list[Change]:
    """Delete each file under its lock; its ``.lock`` sidecar stays. A failure is recorded, not raised.

    ``recheck`` is applied again to the document read under the lock (the choice
    may be minutes old, made before a confirmation prompt): a reason it returns
    keeps the file, recorded as ``skipped``.
    """
    changes = []
    for path in targets:
        sid, _ = describe(path)
        change = Change("deleted", sid, str(path), dry_run)
        if not dry_run:
            try:
                with jsonfile.locked(path, timeout):
                    if not path.is_file():
                        raise vanished(path)
                    reason = recheck(path, _current_or_none(path)) if recheck else None
                    if reason:
                        change.action, change.detail = "skipped", reason
                    else:
                        jsonfile.delete_locked(path)
            except PraisonMemError as exc:
                change.failed(exc)
        changes.append(change)
        if progress:
            progress(len(changes), len(targets))
    return changes


def _current_or_none(path: Path) -> dict[str, Any] | None:
    try:
        return jsonfile.read_current(path)
    except PraisonMemError:
        return None


@dataclass
class PrunePlan:
    delete: list[dict[str, Any]]  # session list rows
    cutoff: float
    kept_by_keep: int
    undated: list[dict[str, Any]]
    unreadable: int


def plan_prune(paths: Paths, older_than: timedelta, *, keep: int = 0, agent: str | None = None,
               scope: str | None = None, now: float | None = None,
               progress: Callable[[int, int], None] | None = None) -> PrunePlan:
    """Sessions whose ``updated_at`` is older than ``older_than``, sparing the ``keep`` newest matching ones."""
    listing = sessions.list_sessions(paths, workspace=workspace_id, agent=agent, scope=scope, sort="updated",
                                     limit=0, progress=progress)
    now = time.time() if now is None else now
    rows = [r for r in listing.rows if not r["unreadable"]]
    undated = [r for r in rows if epoch_of(r["updated_at"]) is None]
    dated = [r for r in rows if epoch_of(r["updated_at"]) is not None]
    dated.sort(key=lambda r: epoch_of(r["updated_at"]), reverse=True)
    spared = dated[:keep]
    cutoff = now - older_than.total_seconds()
    old = [r for r in dated[keep:] if epoch_of(r["updated_at"]) < cutoff]
    kept_by_keep = sum(1 for r in spared if epoch_of(r["updated_at"]) < cutoff)
    return PrunePlan(old, cutoff, kept_by_keep, undated, listing.unreadable)
