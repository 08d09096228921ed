"""``session adopt``: make an agent's legacy name-only history its workspace history (spec §3).

Before workspace scoping an Agent with history kept ``history_<md5(name)[:8]>``
(praisonaiagents ≤ 1.5.122) or ``history_<sha256(name)[:8]>`` (1.5.123–1.6.157);
since 1.6.158 it uses ``history_<sha256("<workspace id>:<name>")[:8]>`` and loads a
name-only file only in global scope. Adopting moves (or copies) the legacy file
to the workspace id:

* **Both name-only files** (a home that met both eras): both are adopted,
  merged oldest first (:mod:`session_merge`); never one silently. A move first
  folds the older file into the newer one, so that every interruption leaves
  files a rerun recognises.
* **Global scope** (``PRAISONAI_GLOBAL_SESSIONS``) without an explicit
  workspace: nothing changes. When the library already loads the legacy file
  the change is ``skipped`` (exit 0); when the agent uses its global-scope file
  instead, adopting into a workspace would not reach it: :class:`Refused`.
* **An interrupted adopt**: when the target already holds exactly what adopting
  writes (for ``--merge``: when merging the legacy history in again would
  change nothing), the rerun finishes it, removing the legacy files, and says
  so; a target holding anything else is refused as before.
* Spilled turns of the legacy ids move to the target id with them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from praisonmem.core.io import jsonfile
from praisonmem.core.sessions import listing as sessions
from praisonmem.core.errors import NotFound, PraisonMemError, Refused, TargetExists, UsageError
from praisonmem.core.paths import Paths
from praisonmem.core.sessions.merge import merge_documents
from praisonmem.core.sessions.ops import (Change, vanished, with_session_id, carry_spill, refuse_spill_clash,
                                         spill_note)
from praisonmem.core.io.timeutil import epoch_of, now_iso
from praisonmem.core.sessions.workspace import agent_name_or_default, choose_history_id, history_id, legacy_ids, workspace_id

VERBS = {"move": "moved", "copy": "copied", "merge": "merged", "replace": "replaced"}


@dataclass
class AdoptPlan:
    agent: str
    sources: list[Path]  # the agent's name-only files, oldest first
    spill_dir: Path
    target: Path
    target_id: str
    workspace_id: str
    action: str  # "move" | "copy" | "merge" | "replace" (what is asked), or "skip" (global scope)
    keep_source: bool
    target_exists: bool
    target_empty: bool = False  # what an Agent writes when it first opens its store
    finishing: bool = False  # the target already holds what this adopt writes
    merge: bool = False
    replace: bool = False
    reason: str | None = None  # why a "skip" changes nothing

    @property
    def source(self) -> Path:
        return self.sources[-1]


def is_empty_session(doc: dict[str, Any]) -> bool:
    """No messages, no archived messages, no checkpoint: nothing a user could lose."""
    return not (sessions.messages_of(doc) or sessions.messages_of(doc, "archived_messages")
                or doc.get("last_compaction"))


def legacy_files(sessions_dir: Path, agent: str | None) -> list[Path]:
    """The agent's name-only files that exist (md5 era, then sha256 era)."""
    ids = legacy_ids(agent)
    return [sessions_dir / f"{ids[a]}.json" for a in ("md5", "sha256") if (sessions_dir / f"{ids[a]}.json").is_file()]


def oldest_first(name: str, files: list[tuple[Path, dict[str, Any]]]) -> list[tuple[Path, dict[str, Any]]]:
    """By ``created_at``, else the first turn's timestamp; undated ones md5 era first."""
    md5_stem = legacy_ids(name)["md5"]

    def started(item: tuple[Path, dict[str, Any]]) -> tuple[float, int]:
        path, doc = item
        stamp = epoch_of(doc.get("created_at"))
        if stamp is None:
            turns = sessions.messages_of(doc, "archived_messages") + sessions.messages_of(doc)
            stamp = next((epoch_of(m.get("timestamp")) for m in turns if isinstance(m, dict)
                          and epoch_of(m.get("timestamp")) is not None), None)
        return (float("inf") if stamp is None else stamp, 0 if path.stem == md5_stem else 1)

    return sorted(files, key=started)


def combine(docs: list[dict[str, Any]], target_id: str, where: Path) -> dict[str, Any]:
    """One document from the legacy files (oldest first): merged, the newer one's fields winning."""
    combined = docs[0]
    for newer in docs[1:]:
        combined = merge_documents(newer, combined, where)
    return with_session_id(combined, target_id)


def plan_adopt(paths: Paths, agent: str | None, *, workspace_dir: str | os.PathLike[str] | None = None,
               copy: bool = False, merge: bool = False, replace: bool = False,
               sources: list[Path] | None = None, global_scope: bool = False) -> AdoptPlan:
    """Which legacy files become which workspace history file; raises when it cannot be done."""
    if merge and replace:
        raise UsageError("--merge and --replace are alternatives; give one")
    paths.require_home()
    name = agent_name_or_default(agent)
    sdir = paths.sessions_dir
    found = legacy_files(sdir, name) if sources is None else sources
    if not found:
        ids = legacy_ids(name)
        raise NotFound(f"no legacy session for agent '{name}' in {sdir} "
                       f"(looked for {ids['sha256']}.json and {ids['md5']}.json)")
    if workspace_dir is not None and not Path(workspace_dir).is_dir():
        raise UsageError(f"--workspace {workspace_dir} is not a directory")
    ordered = oldest_first(name, [(p, sessions.load(p)) for p in found])
    files = [p for p, _ in ordered]
    if global_scope and workspace_dir is None:
        return _global_plan(paths, name, files, copy)
    wid = workspace_id(workspace_dir)
    target_id = history_id(wid, name)
    target = sdir / f"{target_id}.json"
    plan = AdoptPlan(name, files, paths.spill_dir, target, target_id, wid, "copy" if copy else "move", copy,
                     target.is_file(), merge=merge, replace=replace)
    newest_id = sessions.raw_session_id(ordered[-1][1], files[-1])
    for path, doc in ordered:
        refuse_spill_clash(paths.spill_dir, sessions.raw_session_id(doc, path), newest_id, target_id)
    if not plan.target_exists:
        return plan
    current = sessions.load(target)
    plan.target_empty = is_empty_session(current)
    if not plan.target_empty:
        plan.finishing = already_holds(current, combine([d for _, d in ordered], target_id, target), target,
                                       exact=not merge)
        if not (plan.finishing or merge or replace):
            raise TargetExists(f"{target.name} (agent '{name}' in {wid}) already exists: "
                               "pass --merge to combine the histories or --replace to overwrite it")
        if merge or replace:
            plan.action = "merge" if merge else "replace"
    return plan


def _global_plan(paths: Paths, name: str, files: list[Path], copy: bool) -> AdoptPlan:
    sdir = paths.sessions_dir
    choice = choose_history_id(name, sdir, workspace="global", global_scope=True)
    hint = "give --workspace DIR to adopt into that directory's workspace anyway"
    if not choice.kind.startswith("legacy_"):
        raise Refused(f"PRAISONAI_GLOBAL_SESSIONS is set: agents named '{name}' use {choice.session_id}.json "
                      f"(global scope), not a workspace history, so adopting would not reach them; nothing "
                      f"changed ({hint})")
    loaded = sdir / f"{choice.session_id}.json"
    reason = f"PRAISONAI_GLOBAL_SESSIONS is set, so the library already loads {loaded.name} for agent '{name}'"
    others = [p.name for p in files if p != loaded]
    if others:
        reason += f" (not {', '.join(others)}, the other name-only file)"
    reason += f"; nothing adopted ({hint})"
    return AdoptPlan(name, files, paths.spill_dir, loaded, choice.session_id, "global", "skip", copy, True,
                     reason=reason)


def _details(plan: AdoptPlan, source: Path, raw_id: str) -> str:
    unnamed = plan.agent == "agent" and _unnamed(source)
    notes = [f"agent '{plan.agent}'{' (unnamed)' if unnamed else ''}, workspace {plan.workspace_id}"]
    if plan.finishing:
        notes.append(f"finishes an interrupted adopt: {plan.target.name} already holds this history")
    if len(plan.sources) > 1:
        notes.append("merged with " + ", ".join(p.name for p in plan.sources if p != source)
                     + " (both name-only files of this agent, oldest first)")
    if plan.target_exists and not plan.target_empty and not plan.keep_source:
        notes.append("legacy file removed")
    if plan.target_empty:
        notes.append("replaces an empty workspace session (no messages)")
    spilled = spill_note(plan.spill_dir, raw_id, plan.target_id, "copied" if plan.keep_source else "move")
    return "; ".join(notes + ([spilled] if spilled else []))


def _unnamed(path: Path) -> bool:
    try:
        return not sessions.load(path).get("agent_name")
    except PraisonMemError:
        return False


def adopt(plan: AdoptPlan, *, dry_run: bool = False,
          timeout: float = jsonfile.LOCK_TIMEOUT) -> list[Change]:
    """Carry out ``plan`` under the locks of every legacy file and the target; one change per legacy file.

    Every step leaves files a rerun recognises: with two legacy files (and no
    ``--copy``) the older is first merged into the newer and removed (with its
    spilled turns), then the newer is moved like a single file: the target is
    written, the spill files carried, the legacy file removed.
    """
    raw_ids = [sessions.raw_session_id(sessions.load(p), p) for p in plan.sources]
    if plan.action == "skip":
        return [Change("skipped", sid, str(p), dry_run, target=str(plan.target), detail=plan.reason)
                for p, sid in zip(plan.sources, raw_ids)]
    changes = [Change(f"adopt-{VERBS[plan.action]}", sid, str(path), dry_run, new_session_id=plan.target_id,
                      target=str(plan.target), detail=_details(plan, path, sid))
               for path, sid in zip(plan.sources, raw_ids)]
    if dry_run:
        return changes
    with jsonfile.locked_many([*plan.sources, plan.target], timeout):
        docs = []
        for path in plan.sources:
            doc = jsonfile.read_current(path)
            if doc is None:
                raise vanished(path)
            docs.append(sessions.validate(doc, path))
        current = jsonfile.read_current(plan.target)
        if current is not None:
            sessions.validate(current, plan.target)
        # Every refusal comes before the first write.
        new = _target_document(plan, current, combine(docs, plan.target_id, plan.target))
        newest_id = sessions.raw_session_id(docs[-1], plan.sources[-1])
        for doc, path in zip(docs, plan.sources):
            refuse_spill_clash(plan.spill_dir, sessions.raw_session_id(doc, path), newest_id, plan.target_id)
        sources = plan.sources
        if len(sources) > 1 and not plan.keep_source:
            sources, docs = _fold_into_newest(plan, sources, docs)
        if new is not None:
            jsonfile.write_locked(plan.target, new)
        for doc, path in zip(docs, sources):
            carry_spill(plan.spill_dir, sessions.raw_session_id(doc, path), plan.target_id, keep=plan.keep_source)
        if not plan.keep_source:
            jsonfile.delete_locked(sources[0])
    return changes


def _target_document(plan: AdoptPlan, current: dict[str, Any] | None, legacy: dict[str, Any]
                     ) -> dict[str, Any] | None:
    """What to write to the target, ``None`` when it already holds it (an interrupted run got that far)."""
    if current is None or is_empty_session(current):
        return legacy
    if already_holds(current, legacy, plan.target, exact=not plan.merge):
        return None
    if not (plan.merge or plan.replace):
        raise TargetExists(f"{plan.target.name} gained messages while adopting; pass --merge or --replace")
    if plan.replace:
        return legacy
    merged = merge_documents(current, legacy, plan.target)
    merged["updated_at"] = now_iso()
    return merged


def _fold_into_newest(plan: AdoptPlan, sources: list[Path], docs: list[dict[str, Any]]
                      ) -> tuple[list[Path], list[dict[str, Any]]]:
    """Merge the older legacy files (and their spilled turns) into the newest one and remove them."""
    newest, newest_id = sources[-1], sessions.raw_session_id(docs[-1], sources[-1])
    folded = combine(docs, newest_id, newest)
    if folded != docs[-1]:
        jsonfile.write_locked(newest, folded)
    for doc, path in zip(docs[:-1], sources[:-1]):
        carry_spill(plan.spill_dir, sessions.raw_session_id(doc, path), newest_id)
        jsonfile.delete_locked(path)
    return [newest], [folded]


def already_holds(target_doc: dict[str, Any], legacy_doc: dict[str, Any], where: Path, *,
                  exact: bool = True) -> bool:
    """The target holds exactly what adopting writes; for a merge (``exact=False``), merging the
    legacy history in would change nothing (every turn, summary and key is there already)."""
    if jsonfile.serialise(target_doc) == jsonfile.serialise(legacy_doc):
        return True
    return not exact and merge_documents(target_doc, legacy_doc, where) == target_doc


def legacy_sessions(paths: Paths) -> list[tuple[str, list[Path]]]:
    """Every agent with legacy name-only files, each with its files: a file counts when its
    ``agent_name`` (``agent`` for an unnamed agent, as the library names it) hashes to its id."""
    groups: dict[str, list[Path]] = {}
    for path in sessions.session_files(paths.sessions_dir):
        if not path.stem.startswith("history_"):
            continue
        try:
            doc = sessions.load(path)
        except PraisonMemError:
            continue
        agent = doc.get("agent_name")
        if agent is not None and not isinstance(agent, str):
            continue
        name = agent_name_or_default(agent)
        if path.stem in legacy_ids(name).values():
            groups.setdefault(name, []).append(path)
    return sorted(groups.items())
