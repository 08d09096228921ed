"""``praisonmem migrate``: what an upgrade to praisonaiagents 1.7.17 left behind in the home and the current
project, each with its fix.

migrate is a list of *finders* (:data:`FINDERS`). Each looks for one kind of file an older release wrote that
1.7.17 will not load, and returns a :class:`Proposal` per fix: its ``kind``, ``subject`` (the file), ``detail``
(what 1.7.17 does with it and what the fix does), ``fix_command`` (the command that fixes just this one) and
``plan``, the fix itself as a :class:`~praisonmem.core.result.Plan` of the store that owns the files, so each
fix takes that store's lock or transaction on its own. ``migrate --dry-run`` runs every plan dry and lists
them; ``migrate`` runs them one after the other and reports one change per fix, a fix that fails leaving the
others to run. ``check`` reports every proposal as a finding with its ``fix_command``.

A finder is ``(kind, where, find)``: ``where`` says what it looks at (``home``: the PraisonAI data dir;
``project``: the FileMemory base and the SQLite memory beside it), so ``check PATH`` runs the finders that
apply to that PATH; ``find(paths, timeout)`` reads only (no lock, no file created) and returns the proposals.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from praisonmem.core import memory, sessions
from praisonmem.core.errors import PraisonMemError, TargetExists
from praisonmem.core.io import jsonfile
from praisonmem.core.layout import TRANSCRIPT_DB
from praisonmem.core.paths import Paths
from praisonmem.core.result import Action, Change, Outcome, Plan, Progress
from praisonmem.core.io.safetext import plural

Where = Literal["home", "project"]


@dataclass(frozen=True)
class Proposal:
    """One fix: what it is about and the plan that carries it out."""

    kind: str
    subject: str
    detail: str
    fix_command: str
    plan: Plan
    shown: str = ""  # what its change line names, when more than the subject: "moved X → Y"
    warning: str = ""  # what the fix may take from somebody else, and how not to


@dataclass(frozen=True)
class Finder:
    """A kind of leftover, the tree it is looked for in, and the function that finds it. ``walked``: ``check``
    reports what it finds from its own reading of the same files (with this command as the fix), so it does
    not run the finder."""

    kind: str
    where: Where
    find: Callable[[Paths, float], list[Proposal]]
    walked: bool = False


def command(paths: Paths, *words: str) -> str:
    """A praisonmem command line for these paths: the root options that chose them, then ``words``."""
    parts = ["praisonmem"]
    if paths.data.source == "--home":
        parts += ["--home", str(paths.data.path)]
    if paths.memory.source == "--memory-dir":
        parts += ["--memory-dir", str(paths.memory.path)]
    return shlex.join([*parts, *words])


# ---------------------------------------------------------------- the finders


def name_only_history(paths: Paths, timeout: float) -> list[Proposal]:
    """History files named by the agent's name alone (1.6.157 and before), which 1.7.17 loads only in global
    scope: adopt each agent's into this workspace (both of them, merged, when md5- and sha256-era files exist;
    merged with the history the agent already has here, if any)."""
    if sessions.global_from_env():
        return []  # the library loads them itself
    legacy = sessions.legacy_sessions(paths)
    here = sessions.workspace_id() if legacy else None  # no git asked when there is nothing to adopt
    elsewhere = sessions.other_workspace_sessions(paths, here) if legacy else {}
    found = []
    for name, refs in legacy:
        words = ["session", "adopt", name]
        try:
            try:
                plan = sessions.plan_adopt(paths, name, timeout=timeout, global_scope=False)
            except TargetExists:
                words.append("--merge")
                plan = sessions.plan_adopt(paths, name, merge=True, timeout=timeout, global_scope=False)
        except PraisonMemError:
            continue  # a file that does not parse: check reports it, and adopt would refuse it
        target = sessions.history_id(here, name)
        detail = (f"agent '{name}': history named by the agent's name alone (praisonaiagents 1.6.157 and before), "
                  f"which 1.7.17 loads only with PRAISONAI_GLOBAL_SESSIONS set; adopting makes it {target}.json, "
                  f"its history in this workspace, {here}")
        if len(refs) > 1:
            detail += " (" + " and ".join(_name(r) for r in refs) + ": the md5- and sha256-era files of one agent, " \
                                                                    "merged oldest first)"
        if "--merge" in words:
            detail += f", merged with the history the agent already has in {target}.json"
        warning = ""
        if elsewhere.get(name):
            others = ", ".join(f"{_name(r)}" for r in elsewhere[name])
            warning = (f"agent '{name}' also ran in another workspace of this home ({others}), which may use its "
                       f"name-only history {_name(refs[0])} too: moving it here takes it from there; to copy it "
                       f"instead: {command(paths, 'session', 'adopt', name, '--copy')}")
        shown = f"{' and '.join(str(r) for r in refs)} → {paths.sessions_dir / (target + '.json')}"
        found.append(Proposal("history.name_only", str(refs[0]), detail, command(paths, *words), plan, shown=shown,
                              warning=warning))
    return found


def raw_date_episodic(paths: Paths, timeout: float) -> list[Proposal]:
    """Episodic files named by a raw date (before 1.7.15), invisible to 1.7.17 and deleted by its cleanup:
    merged into the normalised file."""
    found = []
    for merge in memory.raw_date_merges(paths.memory_dir, timeout):
        if merge.problem is not None:
            what = f"it cannot be merged until it parses ({merge.problem})"
        else:
            entries = f"{merge.entries} entr{'y' if merge.entries == 1 else 'ies'}"
            what = f"merging moves its {entries} into {merge.target.name}" + (
                f" ({merge.already} already there)" if merge.already else "")
        detail = (f"episodic memory of user '{merge.user_id}' under a raw date (praisonaiagents 1.7.14 and before): "
                  f"1.7.17 reads {merge.target.name} only, never this file, and its cleanup_episodic deletes it once "
                  f"it is older than episodic_retention_days; {what}")
        for source in merge.sources[1:]:
            detail += f"; {source.name} belongs to the same day"
        found.append(Proposal("episodic.raw_date", str(merge.sources[0]), detail, command(paths, "migrate"),
                              merge.plan))
    return found


def shared_sqlite_memory(paths: Paths, timeout: float) -> list[Proposal]:
    """SQLite memory shared by every user (1.7.0 and before), which 1.7.17 does not read for a named user: each
    user's rows copied into the user's own file (split); the shared file stays as it is."""
    found = []
    for split in memory.shared_splits(paths.project_dir, timeout):
        if split.problem is not None:
            detail = (f"shared SQLite memory (praisonaiagents 1.7.0 and before) that cannot be read, so its users' "
                      f"rows cannot be copied into their own files: {split.problem}")
            found.append(Proposal("sqlite_memory.shared", str(split.source), detail, "", split.plan))
            continue
        rows = f"{split.rows} row{'' if split.rows == 1 else 's'}"
        detail = (f"{rows} of user '{split.user_id}' in the shared {split.source.name} (praisonaiagents 1.7.0 and "
                  f"before), which 1.7.17 does not read for a named user: copied into {split.target.name}, the "
                  f"user's own file (the shared file is kept as it is)")
        if split.interrupted:
            detail += (f"; an earlier copy was killed mid-write and left {split.target.name}-journal: SQLite rolls "
                       "that write back first")
        found.append(Proposal("sqlite_memory.shared", str(split.source), detail, command(paths, "migrate"),
                              split.plan))
    return found


def missing_from_sessions_db(paths: Paths, timeout: float) -> list[Proposal]:
    """JSON sessions a populated ``sessions.db`` lacks: the library's one-time import ran when the table was
    empty and never runs again, so the gateway never sees them; imported as that import would, in one
    transaction of the database."""
    found = sessions.db_import_candidates(paths)
    if found is None or not found[0]:
        return []
    candidates = found[0]
    plan = sessions.plan_db_import(paths, timeout=timeout)
    if plan is None:  # imported meanwhile
        return []
    ids = ", ".join(c.session_id for c in candidates[:5]) + (" …" if len(candidates) > 5 else "")
    detail = (f"{plural(len(candidates), 'JSON session')} the gateway does not see ({ids}): sessions.db holds sessions, so "
              "the library's one-time import of the JSON files beside it will not run again; importing copies each "
              "into sessions.db as that import would (the JSON files stay)")
    return [Proposal("sessions_db.missing_json", str(paths.sessions_dir / TRANSCRIPT_DB), detail,
                     command(paths, "migrate"), plan)]


def out_of_step_index(paths: Paths, timeout: float) -> list[Proposal]:
    """Search indexes holding text their sessions no longer have, rows of sessions that are gone, or a scrub a
    killed write left: each row brought in step with its file."""
    return [Proposal("index.out_of_step", str(repair.index), sessions.describe_repair(repair),
                     command(paths, "migrate"), repair.plan) for repair in sessions.index_repairs(paths, timeout)]


def sessions_db_residue(paths: Paths, timeout: float) -> list[Proposal]:
    """A ``sessions.db`` whose free pages or ``-wal`` still hold old text: scrubbed as a delete ends."""
    return [Proposal("sessions_db.residue", str(found.db), sessions.describe_repair(found), command(paths, "migrate"),
                     found.plan) for found in sessions.transcript_residue(paths, timeout)]


FINDERS: tuple[Finder, ...] = (
    Finder("history.name_only", "home", name_only_history),
    Finder("sessions_db.missing_json", "home", missing_from_sessions_db),
    Finder("index.out_of_step", "home", out_of_step_index, walked=True),
    Finder("sessions_db.residue", "home", sessions_db_residue, walked=True),
    Finder("episodic.raw_date", "project", raw_date_episodic),
    Finder("sqlite_memory.shared", "project", shared_sqlite_memory),
)


def find(paths: Paths, *, where: Where | None = None, timeout: float = jsonfile.LOCK_TIMEOUT,
         walked: bool = True) -> list[Proposal]:
    """Every proposal of the finders that look at ``where`` (all when ``None``), in :data:`FINDERS` order
    (without ``walked``, not those whose findings ``check`` makes itself). A finder that cannot look (a
    database that does not open, a lock held too long) gives one proposal that fails with its reason, so
    neither migrate nor check passes over it in silence."""
    found = []
    for finder in FINDERS:
        if where not in (None, finder.where) or (finder.walked and not walked):
            continue
        try:
            found += finder.find(paths, timeout)
        except PraisonMemError as exc:
            found.append(_cannot_look(finder, paths, exc))
    return found


def _cannot_look(finder: Finder, paths: Paths, exc: PraisonMemError) -> Proposal:
    def run(dry_run: bool, progress: Progress) -> Outcome:
        raise exc

    subject = str(paths.data.path if finder.where == "home" else paths.project_dir)
    return Proposal(finder.kind, subject, f"could not look for it: {exc.message}", "", Plan(None, run))


# ---------------------------------------------------------------- the command


def plan_migrate(paths: Paths, *, timeout: float = jsonfile.LOCK_TIMEOUT) -> Plan:
    """``migrate``: every proposal; applying them is asked first (each fix changes the user's files)."""
    paths.require_home()
    proposals = find(paths, timeout=timeout)
    notes = [] if proposals else [f"nothing to migrate in {paths.data.path} or {paths.project_dir}: praisonaiagents "
                                  "1.7.17 loads everything there"]
    question = f"Apply {plural(len(proposals), 'migration fix', 'migration fixes')} (--dry-run lists them)?" if proposals else None
    warnings = [p.warning for p in proposals if p.warning]

    def run(dry_run: bool, progress: Progress) -> Outcome:
        changes = []
        for done, proposal in enumerate(proposals, 1):
            changes.append(apply(proposal, dry_run=dry_run))
            if progress:
                progress(done, len(proposals))
        return Outcome(changes)

    return Plan(question, run, notes, warnings)


def apply(proposal: Proposal, *, dry_run: bool = False) -> Change:
    """Run one proposal's plan; its change records become one change of the fix (failed if any failed)."""
    record: dict[str, Any] = {"kind": proposal.kind, "subject": proposal.subject, "detail": proposal.detail,
                              "fix_command": proposal.fix_command, "error": None, "changes": []}
    change = Change(Action.failed, proposal.shown or proposal.subject, proposal.detail, dry_run, fields=record)
    try:
        outcome = proposal.plan.run(dry_run=dry_run)
    except PraisonMemError as exc:
        record["error"] = exc.message
        return change.fail(exc)
    record["changes"] = outcome.to_json()
    failed = [c for c in outcome.changes if c.failed]
    if failed:
        change.detail, change.exit_code = failed[0].detail, outcome.exit_code
        record["error"] = failed[0].detail
        return change
    done = [c for c in outcome.changes if c.action is not Action.skipped] or outcome.changes
    change.action = done[0].action if done else Action.skipped
    return change


def _name(ref: Any) -> str:
    return str(ref).rsplit("/", 1)[-1]
