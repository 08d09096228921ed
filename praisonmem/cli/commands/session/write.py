"""``praisonmem session rename|adopt|delete|prune|export|import``: commands that change sessions.

Each prints what it changed, or with ``--dry-run`` what it would change, as
lines on stdout or (``--json``) an array of change records. Destructive ones
ask on a terminal and need ``--yes`` otherwise.
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from praisonmem.cli.options import DryRunFlag, JsonFlag, YesFlag
from praisonmem.cli.output import Output, note, write_target
from praisonmem.cli.progress import file_progress
from praisonmem.cli.prompts import confirm
from praisonmem.cli.commands.session._app import SessionArg, _complete_sessions, app
from praisonmem.cli.commands.session.read import Scope
from praisonmem.cli.state import state_of

ForceFlag = Annotated[bool, typer.Option("--force", help="Act even if the session was written in the last minute.")]


class ExportFormat(str, Enum):
    json = "json"
    jsonl = "jsonl"
    markdown = "markdown"


class OnConflict(str, Enum):
    fail = "fail"
    skip = "skip"
    replace = "replace"


def _describe(change) -> str:
    prefix = "would " if change.dry_run else ""
    verb = change.action
    if verb.startswith("adopt-"):
        done = verb[len("adopt-"):]
        base = {"moved": "move", "copied": "copy", "merged": "merge", "replaced": "replace"}[done]
        text = (f"{prefix}{base if change.dry_run else done} {Path(change.file).name} → {Path(change.target).name}")
    elif verb == "renamed":
        text = (f"{prefix}{'rename' if change.dry_run else 'renamed'} '{change.session_id}' → "
                f"'{change.new_session_id}' ({Path(change.file).name} → {Path(change.target).name})")
    elif verb in ("retitled", "untitled"):
        what = f"set the title of '{change.session_id}' to '{change.detail}'" if verb == "retitled" \
            else f"clear the title of '{change.session_id}'"
        text = prefix + what
    else:
        base = {"deleted": "delete", "imported": "import", "replaced": "replace", "skipped": "skip",
                "failed": "fail"}.get(verb, verb)
        text = f"{prefix}{base if change.dry_run else verb} {change.session_id or Path(change.file).name}"
        if verb in ("imported", "replaced", "deleted"):
            text += f" ({Path(change.file).name})"
    if change.detail and verb not in ("retitled",):
        text += f": {change.detail}" if verb in ("failed", "skipped") else f" [{change.detail}]"
    return text


def _emit(ctx: typer.Context, changes: list, as_json: bool) -> None:
    """Changes on stdout, failures on stderr; a run where everything failed for one reason exits with
    that reason's code (a lock timeout: 4), one where only some failed with 1."""
    out = Output(no_color=state_of(ctx).no_color)
    if as_json:
        out.json([c.to_json() for c in changes])
    for change in changes:
        if change.action == "failed":
            note(f"error: {_describe(change)}")
        elif not as_json:
            out.raw(_describe(change))
    failed = [c for c in changes if c.action == "failed"]
    if failed:
        codes = {c.exit_code or 1 for c in failed}
        raise typer.Exit(codes.pop() if len(failed) == len(changes) and len(codes) == 1 else 1)


@app.command("rename")
def rename_command(
    ctx: typer.Context,
    session: SessionArg,
    new_id: Annotated[str | None, typer.Argument(metavar="NEW_ID", help="The new session id.")] = None,
    title: Annotated[str | None, typer.Option("--title", metavar="TEXT", help="Set metadata.title instead "
                                                                               "(empty clears it).")] = None,
    force: ForceFlag = False,
    dry_run: DryRunFlag = False,
    as_json: JsonFlag = False,
) -> None:
    """Rename a session to NEW_ID, or set its title with --title.

    Renaming moves the file to the one the library uses for NEW_ID and sets
    session_id inside; every other key and byte stays. Turns waiting in the
    spill dir for the old id move with it, re-addressed to NEW_ID. It refuses
    when that file exists, and when the session was written in the last minute
    (a live agent would carry on in a fresh file under the old id) unless
    --force. A rerun finishes an interrupted rename: when the target already
    holds exactly what the rename writes, the old file is removed (a target
    holding anything else is refused, exit 4). --title sets metadata.title in
    place, as the library's rename_session does.

    Example:

        praisonmem session rename history_8fe938c0 legacy-bot-archive
        praisonmem session rename compacted-demo --title "Lisbon trip"
    """
    from praisonmem.core.sessions import ops as session_ops
    from praisonmem.core.errors import UsageError

    if (new_id is None) == (title is None):
        raise UsageError("give NEW_ID to rename the session, or --title TEXT to set its title (not both)")
    state = state_of(ctx)
    if title is not None:
        change = session_ops.retitle(state.paths, session, title, dry_run=dry_run, timeout=state.lock_timeout)
    else:
        change = session_ops.rename(state.paths, session, new_id, force=force, dry_run=dry_run,
                                    timeout=state.lock_timeout)
    _emit(ctx, [change], as_json)


@app.command("adopt")
def adopt_command(
    ctx: typer.Context,
    agent: Annotated[str | None, typer.Argument(metavar="AGENT_NAME", help="The agent's name.")] = None,
    copy: Annotated[bool, typer.Option("--copy", help="Keep the legacy file for other projects.")] = False,
    merge: Annotated[bool, typer.Option("--merge", help="Combine with an existing workspace history.")] = False,
    replace: Annotated[bool, typer.Option("--replace", help="Overwrite an existing workspace history.")] = False,
    workspace: Annotated[str | None, typer.Option("--workspace", metavar="DIR",
                                                  help="Adopt for this directory's workspace.")] = None,
    all_: Annotated[bool, typer.Option("--all", help="Adopt every legacy file whose agent_name matches its id "
                                                     "(the unnamed agent's too).")] = False,
    dry_run: DryRunFlag = False,
    yes: YesFlag = False,
    as_json: JsonFlag = False,
) -> None:
    """Adopt an agent's legacy name-only history into this workspace.

    Since workspace scoping, an Agent with history=True no longer loads its
    pre-upgrade history_<sha256(name)[:8]> (or md5) file. This makes that file
    the current workspace's history session for the agent: it is moved (or
    with --copy, copied) to history_<sha256("<workspace id>:<name>")[:8]>.json;
    turns waiting in the spill dir for it move (or are copied) with it,
    re-addressed to the new id. When both name-only files exist (md5 and
    sha256: a home that met both eras), both are adopted, merged oldest first,
    never one alone. When the target already holds messages, --merge unites
    the histories (each turn once, in time order, the library's compaction
    structure kept: archived turns, one summary heading the active window, the
    checkpoint re-anchored) and --replace overwrites it; an empty one (what an
    Agent writes when it first starts) is simply replaced. A target that
    already holds what adopting writes (an interrupted run) is finished: the
    legacy files are removed.

    With PRAISONAI_GLOBAL_SESSIONS set and no --workspace, nothing changes:
    the library already loads the legacy file (exit 0), or the agent uses its
    global-scope file, which adopting cannot reach (exit 4).

    Example:

        praisonmem session adopt "Legacy Bot" --dry-run
        praisonmem session adopt --all --copy
    """
    from praisonmem.core.sessions import adopt as session_adopt
    from praisonmem.core.errors import PraisonMemError, UsageError
    from praisonmem.core.sessions.ops import Change
    from praisonmem.core.sessions.workspace import global_from_env

    if merge and replace:
        raise UsageError("--merge and --replace are alternatives; give one")
    if all_ == (agent is not None):
        raise UsageError("give AGENT_NAME, or --all to adopt every legacy file")
    state = state_of(ctx)
    options = dict(workspace_dir=workspace, copy=copy, merge=merge, replace=replace, global_scope=global_from_env())
    if not all_:
        plan = session_adopt.plan_adopt(state.paths, agent, **options)
        if plan.action == "replace" and not plan.finishing:
            confirm(f"Replace {plan.target.name} with the legacy history of '{agent}'?", yes=yes, dry_run=dry_run)
        _emit(ctx, session_adopt.adopt(plan, dry_run=dry_run, timeout=state.lock_timeout), as_json)
        return
    legacy = session_adopt.legacy_sessions(state.paths)
    if not legacy:
        note(f"no legacy name-only sessions in {state.paths.sessions_dir}")
    if replace and legacy:
        confirm(f"Adopt the legacy sessions of {len(legacy)} agent(s), replacing existing workspace histories?",
                yes=yes, dry_run=dry_run)
    changes = []
    with file_progress("Adopting", minimum=1) as progress:
        for done, (name, files) in enumerate(legacy, 1):
            try:
                plan = session_adopt.plan_adopt(state.paths, name, sources=files, **options)
                changes += session_adopt.adopt(plan, dry_run=dry_run, timeout=state.lock_timeout)
            except PraisonMemError as exc:
                for path in files:
                    change = Change("failed", path.stem, str(path), dry_run)
                    change.failed(exc)
                    changes.append(change)
            if progress:
                progress(done, len(legacy))
    _emit(ctx, changes, as_json)


@app.command("delete")
def delete_command(
    ctx: typer.Context,
    session: Annotated[list[str], typer.Argument(metavar="SESSION...", help="Sessions to delete.",
                                                 autocompletion=_complete_sessions)],
    force: ForceFlag = False,
    yes: YesFlag = False,
    dry_run: DryRunFlag = False,
    as_json: JsonFlag = False,
) -> None:
    """Delete sessions, each under its lock; the .lock files stay.

    Every name is resolved first (exact ids, stems or paths; no prefixes), so a
    typo deletes nothing. Asks for confirmation on a terminal; give --yes in
    scripts.

    Example:

        praisonmem session delete my_chat "support/ticket #1234" --yes
    """
    from praisonmem.core.sessions import ops as session_ops

    state = state_of(ctx)
    targets = session_ops.resolve_all(state.paths, session)
    session_ops.check_not_live(targets, force)
    names = ", ".join(p.name for p in targets[:5]) + (" …" if len(targets) > 5 else "")
    confirm(f"Delete {len(targets)} session file(s) ({names})?", yes=yes, dry_run=dry_run)
    _emit(ctx, session_ops.delete(targets, dry_run=dry_run, timeout=state.lock_timeout,
                                  recheck=None if force else session_ops.not_live), as_json)


@app.command("prune")
def prune_command(
    ctx: typer.Context,
    older_than: Annotated[str, typer.Option("--older-than", metavar="DURATION",
                                            help="Delete sessions not updated for this long: 30d, 12h, 2w, 90m.")],
    keep: Annotated[int, typer.Option("--keep", min=0, metavar="N",
                                      help="Always keep the N most recently updated matching sessions.")] = 0,
    agent: Annotated[str | None, typer.Option("--agent", metavar="NAME", help="Only this agent_name.")] = None,
    scope: Annotated[Scope | None, typer.Option("--scope", help="Only sessions of this scope.")] = None,
    yes: YesFlag = False,
    dry_run: DryRunFlag = False,
    as_json: JsonFlag = False,
) -> None:
    """Delete sessions whose updated_at is older than a duration.

    Unreadable files and sessions without a parseable updated_at are never
    pruned (they are reported). Asks for confirmation on a terminal; give
    --yes in scripts and cron.

    Example:

        praisonmem session prune --older-than 90d --keep 20 --dry-run
    """
    from praisonmem.core.sessions import ops as session_ops
    from praisonmem.core.io.timeutil import parse_duration

    age = parse_duration(older_than)
    state = state_of(ctx)
    with file_progress("Reading sessions") as progress:
        plan = session_ops.plan_prune(state.paths, age, keep=keep, agent=agent,
                                      scope=scope.value if scope else None, progress=progress)
    for row in plan.undated:
        note(f"kept {row['session_id']}: no parseable updated_at")
    if plan.unreadable:
        note(f"{plan.unreadable} unreadable session file(s) not considered (see 'praisonmem check')")
    targets = [Path(row["file"]) for row in plan.delete]
    if not targets:
        if not as_json:
            note(f"nothing older than {older_than} to prune")
        _emit(ctx, [], as_json)
        return
    confirm(f"Delete {len(targets)} session(s) not updated in {older_than}?", yes=yes, dry_run=dry_run)
    with file_progress("Pruning") as progress:
        changes = session_ops.delete(targets, dry_run=dry_run, timeout=state.lock_timeout,
                                     recheck=session_ops.still_older_than(plan.cutoff), progress=progress)
    _emit(ctx, changes, as_json)


@app.command("export")
def export_command(
    ctx: typer.Context,
    session: Annotated[list[str] | None, typer.Argument(metavar="[SESSION]...", help="Sessions to export.",
                                                        autocompletion=_complete_sessions)] = None,
    all_: Annotated[bool, typer.Option("--all", help="Export every session.")] = False,
    format_: Annotated[ExportFormat, typer.Option("--format", help="json: lossless and importable; jsonl: one "
                                                                   "message a line; markdown: a transcript.")
                       ] = ExportFormat.json,
    output: Annotated[str | None, typer.Option("--output", "-o", metavar="FILE",
                                               help="Write here instead of stdout: '-' is stdout, a pipe or device is "
                                                    "written to, a regular file is replaced atomically.")] = None,
    as_json: JsonFlag = False,
) -> None:
    """Export sessions as JSON (lossless, importable), JSON lines or Markdown.

    The json format is praisonaiagents' portable payload ({"version": 1,
    "sessions": [...]}), so the library's import_sessions reads it too. With
    --output, --json prints a summary of what was written; without it, the
    export itself goes to stdout and --json selects the json format.

    Example:

        praisonmem session export --all -o sessions-backup.json
        praisonmem session export history_fea3173a --format markdown
    """
    from praisonmem.core.sessions import transfer as session_io
    from praisonmem.core.errors import UsageError

    if all_ == bool(session):
        raise UsageError("give one or more SESSION names, or --all")
    from typer._click.core import ParameterSource

    if as_json and ctx.get_parameter_source("as_json") is ParameterSource.DEFAULT_MAP \
            and ctx.get_parameter_source("format_") is ParameterSource.COMMANDLINE:
        as_json = False  # the configured JSON default does not override an explicit --format
    state = state_of(ctx)
    docs = session_io.load_for_export(state.paths, session or [], everything=all_)
    render = {"json": session_io.export_json, "jsonl": session_io.export_jsonl,
              "markdown": session_io.export_markdown}[format_.value]
    text = render(docs)
    out = Output(no_color=state.no_color)
    if output is None or output == "-":
        if as_json and format_ is not ExportFormat.json:
            raise UsageError(f"--json writes the json format; it cannot be combined with --format {format_.value}")
        write_target("-", text.encode("utf-8"))
        return
    write_target(output, text.encode("utf-8"))
    summary = {"output": str(output), "format": format_.value, "count": len(docs),
               "sessions": [d.get("session_id") for _, d in docs]}
    if as_json:
        out.json(summary)
    else:
        note(f"exported {len(docs)} session(s) as {format_.value} to {output}")


@app.command("import")
def import_command(
    ctx: typer.Context,
    file: Annotated[str, typer.Argument(metavar="FILE", help="An export file ('-' reads stdin).")],
    on_conflict: Annotated[OnConflict, typer.Option("--on-conflict", help="When a session already exists.")
                           ] = OnConflict.fail,
    dry_run: DryRunFlag = False,
    yes: YesFlag = False,
    as_json: JsonFlag = False,
) -> None:
    """Import sessions from a praisonmem or PraisonAI export, or a session file.

    Every session is validated, and every conflict decided, before the first
    write: with --on-conflict fail (the default) one existing session stops
    the whole import. Each session is then written under its lock, verbatim.
    Replacing existing sessions asks for confirmation (or --yes).

    Example:

        praisonmem session import sessions-backup.json --on-conflict skip --dry-run
    """
    from praisonmem.core.sessions import transfer as session_io

    state = state_of(ctx)
    docs = session_io.read_payload(file)
    plan = session_io.plan_import(state.paths, docs, on_conflict.value)
    replacing = sum(1 for _, _, action in plan.items if action == "replace")
    if replacing:
        confirm(f"Replace {replacing} existing session(s)?", yes=yes, dry_run=dry_run)
    _emit(ctx, session_io.run_import(plan, on_conflict=on_conflict.value, dry_run=dry_run,
                                     timeout=state.lock_timeout), as_json)
