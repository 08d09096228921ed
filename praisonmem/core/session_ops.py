"""Session changes: rename, retitle, adopt, delete and prune (spec §2.4–§2.8, §3).

Every change is planned first (resolving names, reading and validating the
documents, checking targets), so a bad input fails before anything is
written, and ``dry_run`` returns the same plan without touching a file. The
writes themselves go through :mod:`praisonmem.core.jsonfile`: the sidecar
locks (several taken in sorted order), a re-read under the lock, and an
atomic replace. A target is always written before its source is removed, so
an interruption leaves a duplicate, never a loss. ``.lock`` files are left in
place.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

from praisonmem.core import jsonfile, sessions
from praisonmem.core.errors import CorruptFile, NotFound, PraisonMemError, Refused, TargetExists, UsageError
from praisonmem.core.paths import Paths
from praisonmem.core.timeutil import epoch_of, now_iso, seconds_since_activity
from praisonmem.core.workspace import history_id, legacy_ids, session_file_name, workspace_id

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


def _with_session_id(doc: dict[str, Any], session_id: str) -> dict[str, Any]:
    if "session_id" in doc:
        doc["session_id"] = session_id
        return doc
    return {"session_id": session_id, **doc}


def _vanished(path: Path) -> NotFound:
    return NotFound(f"{path}: the session disappeared while praisonmem was waiting for its lock")


# ---------------------------------------------------------------- rename / retitle


def rename(paths: Paths, name: str, new_id: str, *, force: bool = False, dry_run: bool = False,
           timeout: float = jsonfile.LOCK_TIMEOUT) -> Change:
    """Move a session to the file for ``new_id`` and set its ``session_id``; nothing else changes."""
    if not new_id.strip():
        raise UsageError("the new session id must not be blank")
    src = sessions.find(paths, name)
    doc = sessions.load(src)
    old_id = sessions.raw_session_id(doc, src)
    dst = src.with_name(session_file_name(new_id))
    same_file = dst == src
    if not same_file and dst.exists():
        raise TargetExists(f"cannot rename to '{new_id}': {dst} already exists")
    if not same_file:
        _refuse_if_live(src, doc, "rename it", force)
    change = Change("renamed", old_id, str(src), dry_run, new_session_id=new_id, target=str(dst))
    waiting = sessions.spilled_messages(paths.spill_dir, old_id, present=sessions.messages_of(doc))
    if waiting:
        change.detail = (f"{len(waiting)} spilled turn(s) for '{old_id}' stay in the spill dir; "
                         f"the library will not merge them into '{new_id}'")
    if dry_run:
        return change
    with jsonfile.locked_many([src, dst], timeout):
        current = jsonfile.read_current(src)
        if current is None:
            raise _vanished(src)
        sessions.validate(current, src)
        if not same_file and jsonfile.exists(dst):
            raise TargetExists(f"cannot rename to '{new_id}': {dst} already exists")
        jsonfile.write_locked(dst, _with_session_id(current, new_id))
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
            raise _vanished(src)
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


# ---------------------------------------------------------------- adopt


@dataclass
class AdoptPlan:
    agent: str
    source: Path
    target: Path
    target_id: str
    workspace_id: str
    action: str  # "move" | "copy" | "merge" | "replace"
    keep_source: bool
    target_exists: bool
    target_empty: bool = False  # what an Agent writes when it first opens its store


def is_empty_session(doc: dict[str, Any]) -> bool:
    """No messages, no archived messages, no checkpoint: nothing a user could lose."""
    return not (sessions.messages_of(doc) or sessions.messages_of(doc, "archived_messages")
                or doc.get("last_compaction"))


def plan_adopt(paths: Paths, agent: str, *, workspace_dir: str | os.PathLike[str] | None = None,
               copy: bool = False, merge: bool = False, replace: bool = False,
               source: Path | None = None) -> AdoptPlan:
    """Which legacy file becomes which workspace history file (spec §3)."""
    if merge and replace:
        raise UsageError("--merge and --replace are alternatives; give one")
    paths.require_home()
    sdir = paths.sessions_dir
    if source is None:
        legacy = legacy_ids(agent)
        found = [sdir / f"{legacy[a]}.json" for a in ("sha256", "md5") if (sdir / f"{legacy[a]}.json").is_file()]
        if not found:
            raise NotFound(f"no legacy session for agent '{agent}' in {sdir} "
                           f"(looked for {legacy['sha256']}.json and {legacy['md5']}.json)")
        source = found[0]
    if workspace_dir is not None and not Path(workspace_dir).is_dir():
        raise UsageError(f"--workspace {workspace_dir} is not a directory")
    wid = workspace_id(workspace_dir)
    target_id = history_id(wid, agent)
    target = sdir / f"{target_id}.json"
    exists = target.is_file()
    empty = exists and is_empty_session(sessions.load(target))
    if exists and not empty and not (merge or replace):
        raise TargetExists(f"{target.name} (agent '{agent}' in {wid}) already exists: "
                           "pass --merge to combine the histories or --replace to overwrite it")
    if exists and not empty:
        action = "merge" if merge else "replace"
    else:
        action = "copy" if copy else "move"
    return AdoptPlan(agent, source, target, target_id, wid, action, copy, exists, empty)


def adopt(plan: AdoptPlan, *, dry_run: bool = False, timeout: float = jsonfile.LOCK_TIMEOUT) -> Change:
    legacy_doc = sessions.load(plan.source)  # the target was read (so refused if it does not parse) by plan_adopt
    verb = {"move": "moved", "copy": "copied", "merge": "merged", "replace": "replaced"}[plan.action]
    detail = f"agent '{plan.agent}', workspace {plan.workspace_id}"
    if plan.action in ("merge", "replace") and not plan.keep_source:
        detail += "; legacy file removed"
    if plan.target_empty:
        detail += "; replaces an empty workspace session (no messages)"
    change = Change(f"adopt-{verb}", sessions.raw_session_id(legacy_doc, plan.source), str(plan.source), dry_run,
                    new_session_id=plan.target_id, target=str(plan.target), detail=detail)
    if dry_run:
        return change
    with jsonfile.locked_many([plan.source, plan.target], timeout):
        legacy = jsonfile.read_current(plan.source)
        if legacy is None:
            raise _vanished(plan.source)
        sessions.validate(legacy, plan.source)
        current = jsonfile.read_current(plan.target)
        if current is not None:
            sessions.validate(current, plan.target)
            if plan.action not in ("merge", "replace") and not is_empty_session(current):
                raise TargetExists(f"{plan.target.name} gained messages while adopting; pass --merge or --replace")
        if current is not None and plan.action == "merge":
            new = merge_documents(current, legacy, plan.target)
            new["updated_at"] = now_iso()
        else:
            new = _with_session_id(legacy, plan.target_id)
        jsonfile.write_locked(plan.target, new)
        if not plan.keep_source:
            jsonfile.delete_locked(plan.source)
    return change


def legacy_sessions(paths: Paths) -> list[tuple[Path, str]]:
    """Every legacy name-only file whose ``agent_name`` hashes to its id (sha256 first, then md5)."""
    found = []
    for path in sessions.session_files(paths.sessions_dir):
        if not path.stem.startswith("history_"):
            continue
        try:
            doc = sessions.load(path)
        except PraisonMemError:
            continue
        agent = doc.get("agent_name")
        if isinstance(agent, str) and agent and path.stem in legacy_ids(agent).values():
            found.append((path, agent))
    order = {"sha256": 0, "md5": 1}
    found.sort(key=lambda item: (item[1], order["sha256" if item[0].stem == legacy_ids(item[1])["sha256"] else "md5"]))
    return found


def merge_documents(workspace_doc: dict[str, Any], legacy_doc: dict[str, Any], where: Path) -> dict[str, Any]:
    """Union of both histories, ordered by timestamp; exact duplicates once; the workspace file's fields win."""
    merged = dict(workspace_doc)
    for key, value in legacy_doc.items():
        if key not in merged:
            merged[key] = value
    ws_meta, legacy_meta = sessions.metadata_of(workspace_doc), sessions.metadata_of(legacy_doc)
    merged["metadata"] = {**ws_meta, **{k: v for k, v in legacy_meta.items() if k not in ws_meta}}
    for key in ("messages", "archived_messages"):
        merged[key] = _union(sessions.messages_of(workspace_doc, key), sessions.messages_of(legacy_doc, key), where)
    checkpoint = workspace_doc.get("last_compaction")
    if isinstance(checkpoint, dict) and isinstance(checkpoint.get("message_index"), int):
        old = sessions.messages_of(workspace_doc)
        index = checkpoint["message_index"]
        anchor = old[index] if 0 <= index < len(old) else None
        new_index = next((i for i, m in enumerate(merged["messages"]) if m is anchor), len(merged["messages"]))
        merged["last_compaction"] = {**checkpoint, "message_index": new_index}
    return merged


def _union(first: list[Any], second: list[Any], where: Path) -> list[Any]:
    for i, message in enumerate(first + second):
        if not isinstance(message, dict):
            raise CorruptFile(str(where), f"message {i} is not an object; cannot merge")
    keyed: list[tuple[float, int, dict[str, Any]]] = []
    seen: set[str] = set()
    order = 0
    for messages in (first, second):
        last = float("-inf")
        for message in messages:
            stamp = epoch_of(message.get("timestamp"))
            last = stamp if stamp is not None else last
            identity = json.dumps([message.get("role"), message.get("content"), message.get("timestamp")],
                                  sort_keys=True, ensure_ascii=False, default=str)
            if identity in seen:
                continue
            seen.add(identity)
            keyed.append((last, order, message))
            order += 1
    keyed.sort(key=lambda item: (item[0], item[1]))
    return [message for _, _, message in keyed]


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
                        raise _vanished(path)
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
