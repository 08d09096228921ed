"""``session adopt``: make an agent's legacy name-only history its workspace history.

Before workspace scoping an Agent with history kept ``history_<md5(name)[:8]>``
(praisonaiagents ≤ 1.5.122) or ``history_<sha256(name)[:8]>`` (1.5.123–1.6.157);
since 1.6.158 it uses ``history_<sha256("<workspace id>:<name>")[:8]>`` and loads a
name-only file only in global scope. Adopting moves (or copies) the legacy file
to the workspace id:

* **Both name-only files** (a home that met both eras): both are adopted,
  merged oldest first (:mod:`.merge`); never one silently. A move first
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

``from_workspace`` adopts another workspace's history instead (a project that moved: a plain
directory's id is its path, so the agent's history stays under the old path's id): the agent's
history id there becomes its history id here, by the same rules.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from praisonmem.core.errors import NotFound, PraisonMemError, Refused, TargetExists, UsageError
from praisonmem.core.io import jsonfile
from praisonmem.core.io.timeutil import epoch_of, now_iso
from praisonmem.core.paths import Paths
from praisonmem.core.result import Action, Change, Outcome, Plan, Progress
from praisonmem.core.sessions.documents import is_empty, messages_of, with_session_id
from praisonmem.core.sessions.histories import JSON, legacy_sessions, workspace_sessions
from praisonmem.core.sessions.merge import merge_documents
from praisonmem.core.sessions.ops import file_name, session_change, vanished
from praisonmem.core.sessions.stores import SessionStore
from praisonmem.core.sessions.stores.locate import open_store
from praisonmem.core.sessions.workspace import (agent_name_or_default, choose_history_id, global_from_env,
                                                history_id, legacy_ids, named_workspace, workspace_id)
from praisonmem.core.io.safetext import plural

AdoptAction = Literal["move", "copy", "merge", "replace", "skip"]  # what is asked; "skip": global scope
ACTIONS = {"move": Action.adopt_moved, "copy": Action.adopt_copied, "merge": Action.adopt_merged,
           "replace": Action.adopt_replaced}


@dataclass
class AdoptPlan:
    """What adopting an agent's name-only history would do: its sources, the target and how."""

    agent: str
    sources: list[Any]  # the agent's name-only sessions, oldest first
    target: Any
    target_id: str
    workspace_id: str
    action: AdoptAction
    keep_source: bool
    target_empty: bool = False  # what an Agent writes when it first opens its store
    finishing: bool = False  # the target already holds what this adopt writes
    merge: bool = False
    replace: bool = False
    reason: str | None = None  # why a "skip" changes nothing
    from_workspace: str | None = None  # the workspace whose history this is (None: the name-only files)
    key: Any = None  # the session key (crypto.Key): what a merge brings into an encrypted session is encrypted

    @property
    def source(self) -> Any:
        return self.sources[-1]


def legacy_files(store: SessionStore, agent: str | None) -> list[Any]:
    """The agent's name-only sessions that exist (md5 era, then sha256 era)."""
    ids = legacy_ids(agent)
    return [store.ref(ids[a]) for a in ("md5", "sha256") if store.exists(store.ref(ids[a]))]


def oldest_first(store: SessionStore, name: str, files: list[tuple[Any, dict[str, Any]]]
                 ) -> list[tuple[Any, dict[str, Any]]]:
    """By ``created_at``, else the first turn's timestamp; undated ones md5 era first."""
    md5_stem = legacy_ids(name)["md5"]

    def started(item: tuple[Any, dict[str, Any]]) -> tuple[float, int]:
        ref, doc = item
        stamp = epoch_of(doc.get("created_at"))
        if stamp is None:
            turns = messages_of(doc, "archived_messages") + messages_of(doc)
            stamp = next((epoch_of(m.get("timestamp")) for m in turns if isinstance(m, dict)
                          and epoch_of(m.get("timestamp")) is not None), None)
        return (float("inf") if stamp is None else stamp, 0 if store.name(ref) == md5_stem else 1)

    return sorted(files, key=started)


def combine(docs: list[dict[str, Any]], target_id: str, where: Any, cipher: Any = None) -> dict[str, Any]:
    """One document from the legacy files (oldest first): merged, the newer one's fields winning (encrypted turns
    compared decrypted with ``cipher``)."""
    from praisonmem.core.sessions.crypto import merge_opened

    combined = docs[0]
    for newer in docs[1:]:
        combined = merge_opened(merge_documents, newer, combined, where, cipher)
    return with_session_id(combined, target_id)


def _one_of_merge_and_replace(merge: bool, replace: bool) -> None:
    if merge and replace:
        raise UsageError("--merge and --replace are alternatives; give one")


def plan_adopt(paths: Paths, agent: str | None = None, *, every: bool = False,
               workspace_dir: str | os.PathLike[str] | None = None, copy: bool = False, merge: bool = False,
               replace: bool = False, global_scope: bool | None = None, from_workspace: str | None = None,
               timeout: float = jsonfile.LOCK_TIMEOUT, key: Any = None) -> Plan:
    """``session adopt``: one agent's legacy history, or with ``every`` each agent's, into the workspace;
    with ``from_workspace`` (a directory or a workspace id) the history the agent had in that workspace.

    Replacing a workspace history with content is asked first. With ``every`` an agent that cannot be
    adopted is recorded as failed and the others are adopted.
    """
    _one_of_merge_and_replace(merge, replace)  # before the agents: it is the command's, not one agent's, error
    if every == (agent is not None):
        raise UsageError("give AGENT_NAME, or --all to adopt every legacy file")
    scope = global_from_env() if global_scope is None else global_scope
    source_wid = None if from_workspace is None else _source_workspace(from_workspace, workspace_dir, scope)
    options = dict(workspace_dir=workspace_dir, copy=copy, merge=merge, replace=replace, global_scope=scope,
                   from_workspace=source_wid)
    store = open_store(paths, JSON)
    if not every:
        plan = plan_agent(paths, agent, **options)
        plan.key = key
        question = None
        if plan.action == "replace" and not plan.finishing:
            whose = "legacy history" if source_wid is None else f"history from {source_wid}"
            question = f"Replace {file_name(plan.target)} with the {whose} of '{agent}'?"
        return Plan(question, lambda dry_run, progress: Outcome(adopt_agent(store, plan, dry_run=dry_run,
                                                                            timeout=timeout)))
    if source_wid is None:
        legacy = legacy_sessions(paths)
        notes = [] if legacy else [f"no legacy name-only sessions in {paths.sessions_dir}"]
    else:
        legacy = workspace_sessions(paths, source_wid)
        notes = [] if legacy else [f"no history of workspace {source_wid} in {paths.sessions_dir}"]
    question = (f"Adopt the legacy sessions of {plural(len(legacy), 'agent')}, replacing existing workspace histories?"
                if replace and legacy else None)

    def run(dry_run: bool, progress: Progress) -> Outcome:
        changes: list[Change] = []
        for done, (name, files) in enumerate(legacy, 1):
            try:
                plan = plan_agent(paths, name, sources=files, **options)
                plan.key = key
                changes += adopt_agent(store, plan, dry_run=dry_run, timeout=timeout)
            except PraisonMemError as exc:
                changes += [session_change(Action.failed, store.name(ref), ref, dry_run=dry_run).fail(exc)
                            for ref in files]
            if progress:
                progress(done, len(legacy))
        return Outcome(changes)

    return Plan(question, run, notes)


def _source_workspace(value: str, workspace_dir: str | os.PathLike[str] | None, global_scope: bool) -> str:
    """The workspace ``--from-workspace`` names; refused when it is the target itself, or when agents use
    global-scope history (which adopting into a workspace would not reach)."""
    source = named_workspace(value)
    if global_scope and workspace_dir is None:
        raise Refused("PRAISONAI_GLOBAL_SESSIONS is set: agents use global-scope history, not a workspace's, so "
                      "adopting into this workspace would not reach them; nothing changed (give --workspace DIR to "
                      "adopt into that directory's workspace anyway)")
    here = workspace_id(workspace_dir)
    if source == here:
        raise UsageError(f"--from-workspace {value} is this workspace ({here}): its history is already the one "
                         "the agent loads here")
    return source


def _sources(store: SessionStore, paths: Paths, name: str, from_workspace: str | None) -> list[Any]:
    """The sessions to adopt for agent ``name``: its name-only files, or its history in ``from_workspace``."""
    if from_workspace is None:
        found = legacy_files(store, name)
        if not found:
            ids = legacy_ids(name)
            raise NotFound(f"no legacy session for agent '{name}' in {paths.sessions_dir} "
                           f"(looked for {ids['sha256']}.json and {ids['md5']}.json)")
        return found
    ref = store.ref(history_id(from_workspace, name))
    if not store.exists(ref):
        raise NotFound(f"no history for agent '{name}' from workspace {from_workspace} in {paths.sessions_dir} "
                       f"(looked for {file_name(ref)})")
    return [ref]


def _refuse_if_adopted(store: SessionStore, paths: Paths, name: str,
                       workspace_dir: str | os.PathLike[str] | None) -> None:
    """No legacy file left, but the workspace history exists: a second adopt, said as such."""
    wid = workspace_id(workspace_dir)
    target = store.ref(history_id(wid, name))
    if store.exists(target):
        raise NotFound(f"agent '{name}' is already adopted: its history here is {file_name(target)} in "
                       f"{paths.sessions_dir} (workspace {wid}); no legacy session is left to adopt")


def plan_agent(paths: Paths, agent: str | None, *, workspace_dir: str | os.PathLike[str] | None = None,
               copy: bool = False, merge: bool = False, replace: bool = False,
               sources: list[Any] | None = None, global_scope: bool = False,
               from_workspace: str | None = None) -> AdoptPlan:
    """Which legacy sessions (or, ``from_workspace``, which history of another workspace) become which
    workspace history session; raises when it cannot be done."""
    _one_of_merge_and_replace(merge, replace)
    store = open_store(paths, JSON)
    paths.require_home()
    name = agent_name_or_default(agent)
    if workspace_dir is not None and not Path(workspace_dir).is_dir():
        raise UsageError(f"--workspace {workspace_dir} is not a directory")
    try:
        found = _sources(store, paths, name, from_workspace) if sources is None else sources
    except NotFound:
        if from_workspace is None and not (global_scope and workspace_dir is None):
            _refuse_if_adopted(store, paths, name, workspace_dir)
        raise
    ordered = oldest_first(store, name, [(ref, store.read(ref)) for ref in found])
    files = [ref for ref, _ in ordered]
    if global_scope and workspace_dir is None:
        if from_workspace is not None:
            _source_workspace(from_workspace, workspace_dir, global_scope)  # refuses
        return _global_plan(store, name, files, copy)
    wid = workspace_id(workspace_dir)
    target_id = history_id(wid, name)
    target = store.ref(target_id)
    plan = AdoptPlan(name, files, target, target_id, wid, "copy" if copy else "move", copy, merge=merge,
                     replace=replace, from_workspace=from_workspace)
    newest_id = store.session_id(files[-1], ordered[-1][1])
    for ref, doc in ordered:
        store.refuse_spill_clash(ref, store.session_id(ref, doc), newest_id, target_id)
    if not store.exists(target):
        return plan
    current = store.read(target)
    plan.target_empty = is_empty(current)
    if not plan.target_empty:
        plan.finishing = already_holds(current, combine([d for _, d in ordered], target_id, target), target,
                                       exact=not merge)
        if not (plan.finishing or merge or replace):
            raise TargetExists(f"{file_name(target)} (agent '{name}' in {wid}) already exists: "
                               "pass --merge to combine the histories or --replace to overwrite it")
        if merge or replace:
            plan.action = "merge" if merge else "replace"
    return plan


def _global_plan(store: SessionStore, name: str, files: list[Any], copy: bool) -> AdoptPlan:
    choice = choose_history_id(name, lambda sid: store.exists(store.ref(sid)), workspace="global",
                               global_scope=True)
    hint = "give --workspace DIR to adopt into that directory's workspace anyway"
    if not choice.kind.startswith("legacy_"):
        raise Refused(f"PRAISONAI_GLOBAL_SESSIONS is set: agents named '{name}' use {choice.session_id}.json "
                      f"(global scope), not a workspace history, so adopting would not reach them; nothing "
                      f"changed ({hint})")
    loaded = store.ref(choice.session_id)
    reason = (f"PRAISONAI_GLOBAL_SESSIONS is set, so the library already loads {file_name(loaded)} for agent "
              f"'{name}'")
    others = [file_name(ref) for ref in files if ref != loaded]
    if others:
        reason += f" (not {', '.join(others)}, the other name-only file)"
    reason += f"; nothing adopted ({hint})"
    return AdoptPlan(name, files, loaded, choice.session_id, "global", "skip", copy, reason=reason)


def _details(store: SessionStore, plan: AdoptPlan, source: Any, raw_id: str) -> str:
    unnamed = plan.agent == "agent" and _unnamed(store, source)
    notes = [f"agent '{plan.agent}'{' (unnamed)' if unnamed else ''}, workspace {plan.workspace_id}"
             + (f", from workspace {plan.from_workspace}" if plan.from_workspace else "")]
    if plan.finishing:
        notes.append(f"finishes an interrupted adopt: {file_name(plan.target)} already holds this history")
    if len(plan.sources) > 1:
        notes.append("merged with " + ", ".join(file_name(ref) for ref in plan.sources if ref != source)
                     + " (both name-only files of this agent, oldest first)")
    if (plan.finishing or plan.action in ("merge", "replace")) and not plan.keep_source:
        notes.append("legacy file removed")
    if plan.target_empty:
        notes.append("replaces an empty workspace session (no messages)")
    spilled = store.spill_note(source, raw_id, plan.target_id, "copied" if plan.keep_source else "move")
    return "; ".join(notes + ([spilled] if spilled else []))


def _unnamed(store: SessionStore, ref: Any) -> bool:
    try:
        return not store.read(ref).get("agent_name")
    except PraisonMemError:
        return False


def adopt_agent(store: SessionStore, plan: AdoptPlan, *, dry_run: bool = False,
                timeout: float = jsonfile.LOCK_TIMEOUT) -> list[Change]:
    """Carry out ``plan`` under the locks of every legacy session and the target; one change per legacy session.

    Every step leaves files a rerun recognises: with two legacy files (and no
    ``--copy``) the older is first merged into the newer and removed (with its
    spilled turns), then the newer is moved like a single file: the target is
    written, the spill files carried, the legacy file removed.
    """
    raw_ids = [store.session_id(ref, store.read(ref)) for ref in plan.sources]
    if plan.action == "skip":
        return [session_change(Action.skipped, sid, ref, dry_run=dry_run, target=plan.target, detail=plan.reason)
                for ref, sid in zip(plan.sources, raw_ids)]
    changes = [session_change(ACTIONS[plan.action], sid, ref, dry_run=dry_run, new_session_id=plan.target_id,
                              target=plan.target, detail=_details(store, plan, ref, sid),
                              target_name=f"{file_name(ref)} → {file_name(plan.target)}")
               for ref, sid in zip(plan.sources, raw_ids)]
    if dry_run:
        return changes
    with store.transaction([*plan.sources, plan.target], timeout) as tx:
        docs = []
        for ref in plan.sources:
            doc = tx.read(ref)
            if doc is None:
                raise vanished(ref)
            docs.append(doc)
        current = tx.read(plan.target)
        # Every refusal comes before the first write.
        new = _target_document(plan, current, combine(docs, plan.target_id, plan.target, _cipher(plan)))
        if new is not None:
            new = _sealed(plan, new, [current, *reversed(docs)])
        newest_id = store.session_id(plan.sources[-1], docs[-1])
        for doc, ref in zip(docs, plan.sources):
            store.refuse_spill_clash(ref, store.session_id(ref, doc), newest_id, plan.target_id)
        sources = plan.sources
        if len(sources) > 1 and not plan.keep_source:
            sources, docs = _fold_into_newest(store, tx, plan, sources, docs)
        if new is not None:
            tx.write(plan.target, new)
        for doc, ref in zip(docs, sources):
            tx.carry_spill(store.session_id(ref, doc), plan.target_id, keep=plan.keep_source)
        if not plan.keep_source:
            tx.delete(sources[0])
    return changes


def _target_document(plan: AdoptPlan, current: dict[str, Any] | None, legacy: dict[str, Any]
                     ) -> dict[str, Any] | None:
    """What to write to the target, ``None`` when it already holds it (an interrupted run got that far)."""
    if current is None or is_empty(current):
        return legacy
    if already_holds(current, legacy, plan.target, exact=not plan.merge):
        return None
    if not (plan.merge or plan.replace):
        raise TargetExists(f"{file_name(plan.target)} gained messages while adopting; pass --merge or --replace")
    if plan.replace:
        return legacy
    from praisonmem.core.sessions.crypto import merge_opened

    merged = merge_opened(merge_documents, current, legacy, plan.target, _cipher(plan))
    merged["updated_at"] = now_iso()
    return merged


def _fold_into_newest(store: SessionStore, tx: Any, plan: AdoptPlan, sources: list[Any],
                      docs: list[dict[str, Any]]) -> tuple[list[Any], list[dict[str, Any]]]:
    """Merge the older legacy sessions (and their spilled turns) into the newest one and remove them."""
    newest, newest_id = sources[-1], store.session_id(sources[-1], docs[-1])
    folded = _sealed(plan, combine(docs, newest_id, newest, _cipher(plan)), list(reversed(docs)))
    if folded != docs[-1]:
        tx.write(newest, folded)
    for doc, ref in zip(docs[:-1], sources[:-1]):
        tx.carry_spill(store.session_id(ref, doc), newest_id)
        tx.delete(ref)
    return [newest], [folded]


def _sealed(plan: AdoptPlan, new: dict[str, Any], involved: list[dict[str, Any] | None]) -> dict[str, Any]:
    """``new`` with the turns it brings into an encrypted session encrypted with the session key (the first
    encrypted one of ``involved`` is the session: the target, else the newest legacy file)."""
    from praisonmem.core.sessions.crypto import is_encrypted_doc, seal

    reference = next((d for d in involved if is_encrypted_doc(d)), None)
    if reference is None:
        return new
    return seal(reference, new, _cipher(plan), f"session '{plan.target_id}'")


def _cipher(plan: AdoptPlan) -> Any:
    return plan.key.cipher() if plan.key else None


def already_holds(target_doc: dict[str, Any], legacy_doc: dict[str, Any], where: Any, *,
                  exact: bool = True) -> bool:
    """The target holds exactly what adopting writes; for a merge (``exact=False``), merging the
    legacy history in would change nothing (every turn, summary and key is there already)."""
    if jsonfile.serialise(target_doc) == jsonfile.serialise(legacy_doc):
        return True
    return not exact and merge_documents(target_doc, legacy_doc, where) == target_doc
