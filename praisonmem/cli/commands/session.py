"""``praisonmem session``: read sessions (list, show, search) and change them (rename, adopt, delete,
prune, export, import).

Read commands change nothing on disk. Commands that change something print what they changed, or with
``--dry-run`` what they would change, as lines on stdout or (``--json``) an array of change records;
destructive ones ask on a terminal and need ``--yes`` otherwise.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from praisonmem.cli.options import DryRunFlag, JsonFlag, LimitOption, NdjsonFlag, YesFlag
from praisonmem.cli.output import binary_stdout, fmt_time, fmt_value, note, render_outcome, report_written, warn
from praisonmem.cli.progress import file_progress
from praisonmem.cli.prompts import confirm_and_run
from praisonmem.cli.state import state_of
from praisonmem.core import sessions
from praisonmem.core.errors import UsageError

app = typer.Typer(help="Inspect, search and manage PraisonAI sessions.\n\nExample:\n\n"
                       "    praisonmem session show history_fea3173a --tail 10", no_args_is_help=True)


def _complete_sessions(ctx: typer.Context, incomplete: str) -> list[str]:
    from praisonmem.cli.completion import sessions as complete

    return complete(ctx, incomplete)


SessionArg = Annotated[str, typer.Argument(metavar="SESSION", help="Session id, file stem, or path to a .json file.",
                                           autocompletion=_complete_sessions)]
ForceFlag = Annotated[bool, typer.Option("--force", help="Act even if the session was written in the last minute.")]
StoreOption = Annotated[str | None, typer.Option("--store", metavar="STORE",
                                                 help="Only this store of the home: json (the JSON files) or "
                                                      "sessions.db (the gateway's database), as 'session list' "
                                                      "shows it.")]
ScopeOption = Annotated[sessions.Scope | None, typer.Option("--scope", help="Only sessions of this scope.")]


# ---------------------------------------------------------------- reading


@app.command("list")
def list_command(
    ctx: typer.Context,
    agent: Annotated[str | None, typer.Option("--agent", metavar="NAME", help="Only this agent_name.")] = None,
    user: Annotated[str | None, typer.Option("--user", metavar="ID", help="Only this user_id.")] = None,
    scope: ScopeOption = None,
    sort: Annotated[sessions.SortKey, typer.Option("--sort", help="Sort key (updated/created/messages: newest or "
                                                                  "most first).")] = sessions.SortKey.updated,
    limit: LimitOption = 50,
    store: StoreOption = None,
    as_json: JsonFlag = False,
    as_ndjson: NdjsonFlag = False,
) -> None:
    """List sessions in the PraisonAI home, newest first, once per store that holds them.

    STORE is json (a JSON file in the sessions dir: what an Agent with the
    default store, the bots and the praisonai CLI load) or sessions.db (a row
    of the gateway's database). When both hold a session id (the gateway
    copies the JSON files into its database once, then each side is written
    on its own), PAIR says whether the copies are the same or have diverged,
    and marks the copy the other has overtaken as stale.

    SCOPE tells where a session belongs relative to the current workspace:
    workspace (this workspace's history id for its agent), global (the
    PRAISONAI_GLOBAL_SESSIONS id), legacy (a name-only id from before
    workspace scoping; adopt it with 'session adopt'), other (another
    workspace's history id) or explicit (a session id chosen by the caller).
    Files that do not parse are listed as unreadable, with the reason.

    Example:

        praisonmem session list --scope legacy --json
    """
    state = state_of(ctx)
    with file_progress("Reading sessions") as progress:
        result = sessions.list_sessions(state.paths, workspace=sessions.workspace_id, agent=agent, user=user,
                                        scope=scope, sort=sort, limit=limit, store=store, progress=progress,
                                        cache=state.cache)
    out = state.output(as_json, as_ndjson)
    if not out.records(result.rows):
        _table(out, result.rows)
    if result.hidden_unreadable:
        warn(f"{result.hidden_unreadable} unreadable session file(s) not shown with these filters; "
             "run 'praisonmem session list' without filters to see them")
    elif result.unreadable and out.machine:
        warn(f"{result.unreadable} unreadable session file(s) listed with \"unreadable\": true")
    if result.missing:
        warn(result.missing)
    readable_shown = sum(1 for r in result.rows if not r["unreadable"])
    if readable_shown < result.total and not out.machine:
        note(f"showing {readable_shown} of {result.total} sessions; --limit 0 shows all")


def _table(out: Any, rows: list[dict[str, Any]]) -> None:
    """All columns when piped; on a terminal, no CREATED and SPILLED only when something waits."""
    headers = ["ID", "AGENT", "USER", "TITLE", "MSGS", "ARCHIVED", "CREATED", "UPDATED", "SCOPE", "MODEL",
               "TOKENS", "COST", "SPILLED", "STORE", "PAIR"]
    table_rows = []
    styles = []
    for r in rows:
        if r["unreadable"]:
            name = r["session_id"] if r["session_id"] is not None else _stem(r["file"])
            table_rows.append([name, "", "", f"UNREADABLE: {r['error']}"] + [""] * 9 + [r["store"], ""])
            styles.append("red")
            continue
        table_rows.append([
            r["session_id"], fmt_value(r["agent_name"]), fmt_value(r["user_id"]), fmt_value(r["title"]),
            str(r["message_count"]), str(r["archived_count"]), fmt_time(r["created_at"], short=out.tty),
            fmt_time(r["updated_at"], short=out.tty), r["scope"], fmt_value(r["model"]),
            fmt_value(r["total_tokens"]), fmt_value(r["cost"]), str(r["spilled_count"]) if r["spilled_count"] else "",
            r["store"], pair_text(r),
        ])
        styles.append("yellow" if r["stale"] else None)
    optional = ["CREATED", "COST", "TOKENS", "MODEL", "ARCHIVED", "USER", "SCOPE"]
    if not any(r["spilled_count"] for r in rows):
        optional.insert(0, "SPILLED")
    if len({r["store"] for r in rows}) < 2:
        optional[:0] = ["PAIR", "STORE"]
    out.table(headers, table_rows, row_styles=styles, wrap=["AGENT", "TITLE"], optional=optional)


def pair_text(row: dict[str, Any]) -> str:
    """The PAIR cell: how this copy compares with the same session in the other stores."""
    others = ", ".join(row.get("paired_with") or [])
    if not others:
        return ""
    if row["pair"] == "equal":
        return f"same as {others}"
    return f"STALE: {others} newer" if row["stale"] else f"differs from {others}"


def _stem(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    return name[: -len(".json")] if name.endswith(".json") else name


@app.command("show")
def show_command(
    ctx: typer.Context,
    session: SessionArg,
    tail: Annotated[int | None, typer.Option("--tail", min=0, metavar="N", help="Only the last N turns.")] = None,
    archived: Annotated[bool, typer.Option("--archived", help="Include archived (compacted-away) messages.")] = False,
    working: Annotated[
        bool, typer.Option("--working", help="The working history the agent would resume with.")
    ] = False,
    store: StoreOption = None,
    as_json: JsonFlag = False,
) -> None:
    """Show a session as a readable transcript.

    Tool calls are shown with their arguments and tool results with the call
    they answer; the compaction summary, partial (interrupted) turns and turns
    still waiting in the spill dir are marked; encrypted values stay opaque.
    A gateway session's chat, which the gateway keeps only inside its
    "Session ..." snapshots, follows the snapshots (#g0, #g1, ...). A session
    that both the JSON files and sessions.db hold is ambiguous: pick the copy
    with --store; the header says how it compares with the other copy.
    --json prints the stored document as it is on disk, except that DEL, C1
    and bidi controls and U+2028/U+2029 are written as \\uXXXX escapes (the
    same JSON data).

    Example:

        praisonmem session show history_fea3173a --tail 10
        praisonmem session show gw-legacy --store sessions.db
    """
    state = state_of(ctx)
    view = sessions.show(state.paths, session, archived=archived, working=working, tail=tail, store=store)
    out = state.output(as_json)
    if view.copies.get("stale"):
        warn(f"this copy ({view.store}) is stale: {', '.join(view.copies['paired_with'])} holds a newer, "
             "different copy of the session")
    if out.machine:
        if view.selected:
            out.json([t.to_json() for t in view.turns])
        else:
            out.json_text(view.raw.decode("utf-8"))
        return
    from praisonmem.cli.render.transcript import render_session

    render_session(out, view)


@app.command("search")
def search_command(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(metavar="QUERY", help="Text to find (case-insensitive).")],
    limit: LimitOption = 20,
    store: StoreOption = None,
    as_json: JsonFlag = False,
    as_ndjson: NdjsonFlag = False,
) -> None:
    """Search the messages of every session in every store, active and archived.

    Ranking: each matching message scores 2 when it contains the whole query
    and 1 more for each query word it contains (case-insensitive). Hits are
    ordered by score, then newest session first, then position in the session.
    Archived messages are marked with an 'a' (#a3), a gateway session's chat
    (kept inside its snapshots) with a 'g' (#g1). Each hit names its store.
    Encrypted messages are not searched.

    Example:

        praisonmem session search "hotel alfama" --limit 5
    """
    state = state_of(ctx)
    with file_progress("Searching sessions") as progress:
        result = sessions.search_sessions(state.paths, query, limit=limit, store=store, progress=progress)
    for path, reason in result.unreadable:
        warn(f"skipped unreadable session file {path}: {reason}")
    out = state.output(as_json, as_ndjson)
    if not out.records(result.hits):
        from praisonmem.cli.render.transcript import render_hits

        render_hits(out, result.hits)
        if len(result.hits) < result.total:
            note(f"showing {len(result.hits)} of {result.total} hits; --limit 0 shows all")


# ---------------------------------------------------------------- changing


@app.command("rename")
def rename_command(
    ctx: typer.Context,
    session: SessionArg,
    new_id: Annotated[str | None, typer.Argument(metavar="NEW_ID", help="The new session id.")] = None,
    title: Annotated[str | None, typer.Option("--title", metavar="TEXT", help="Set metadata.title instead "
                                                                               "(empty clears it).")] = None,
    force: ForceFlag = False,
    store: StoreOption = None,
    dry_run: DryRunFlag = False,
    as_json: JsonFlag = False,
) -> int:
    """Rename a session to NEW_ID, or set its title with --title.

    Renaming moves the file to the one the library uses for NEW_ID and sets
    session_id inside; every other key and byte stays. Turns waiting in the
    spill dir for the old id move with it, re-addressed to NEW_ID. It refuses
    when that file exists, and when the session was written in the last minute
    (a live agent would carry on in a fresh file under the old id) unless
    --force. A rerun finishes an interrupted rename: when the target already
    holds exactly what the rename writes, the old file is removed (a target
    holding anything else is refused, exit 4). --title sets metadata.title in
    place, as the library's rename_session does. A session in sessions.db is
    renamed in one transaction of the database (refused when NEW_ID exists
    there); a session both stores hold needs --store.

    Example:

        praisonmem session rename history_8fe938c0 legacy-bot-archive
        praisonmem session rename compacted-demo --title "Lisbon trip"
    """
    if (new_id is None) == (title is None):
        raise UsageError("give NEW_ID to rename the session, or --title TEXT to set its title (not both)")
    state = state_of(ctx)
    try:
        if title is not None:
            outcome = sessions.retitle(state.paths, session, title, dry_run=dry_run, timeout=state.lock_timeout,
                                       store=store)
        else:
            outcome = sessions.rename(state.paths, session, new_id, force=force, dry_run=dry_run,
                                      timeout=state.lock_timeout, store=store)
    finally:
        _forget_listing(state)
    return render_outcome(state.output(as_json), outcome)


def _forget_listing(state: Any) -> None:
    """After a change to sessions, drop session list's cache entry: no deleted row lingers there."""
    sessions.forget_listing(state.paths, state.cache)


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
    from_workspace: Annotated[str | None, typer.Option(
        "--from-workspace", metavar="DIR|ID",
        help="Adopt the history the agent had in another workspace (a project that moved): its old directory, "
             "which need not exist any more, or its id (git:<sha>, dir:/path).")] = None,
    dry_run: DryRunFlag = False,
    yes: YesFlag = False,
    as_json: JsonFlag = False,
) -> int:
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

    --from-workspace takes the history the agent had in another workspace
    instead, by the same rules: a plain directory's workspace id is its real
    path, so moving or re-cloning a project strands its history (scope
    "other"). Give the old directory (it need not exist any more: its id is
    dir:<its real path>; one that still exists gives its own id, git:<root
    commit> for a repository) or the id itself (git:<sha>, dir:/path,
    global). With --all, every agent's history in that workspace.

    Example:

        praisonmem session adopt "Legacy Bot" --dry-run
        praisonmem session adopt --all --copy
        praisonmem session adopt "Weather Bot" --from-workspace ~/old/place/project
    """
    state = state_of(ctx)
    plan = sessions.plan_adopt(state.paths, agent, every=all_, workspace_dir=workspace, copy=copy, merge=merge,
                               replace=replace, from_workspace=from_workspace, timeout=state.lock_timeout)
    return confirm_and_run(state.output(as_json), plan, yes=yes, dry_run=dry_run,
                           progress="Adopting" if all_ else None, minimum=1)


@app.command("delete")
def delete_command(
    ctx: typer.Context,
    session: Annotated[list[str], typer.Argument(metavar="SESSION...", help="Sessions to delete.",
                                                 autocompletion=_complete_sessions)],
    force: ForceFlag = False,
    store: StoreOption = None,
    yes: YesFlag = False,
    dry_run: DryRunFlag = False,
    as_json: JsonFlag = False,
) -> int:
    """Delete sessions, each under its lock; the .lock files stay.

    Every name is resolved first (exact ids, stems or paths; no prefixes), so a
    typo deletes nothing; a session both stores hold needs --store. Deleting
    from sessions.db leaves none of its text in the database files (it zeroes
    and vacuums them, and empties sessions.db-wal; when another process is
    reading, the change says what is left until the next checkpoint). The last
    session in sessions.db is not deleted while JSON session files lie beside
    it: the gateway would import them all again. Asks for confirmation on a
    terminal; give --yes in scripts.

    Example:

        praisonmem session delete my_chat "support/ticket #1234" --yes
        praisonmem session delete gw-legacy --store sessions.db --yes
    """
    state = state_of(ctx)
    plan = sessions.plan_delete(state.paths, session, force=force, timeout=state.lock_timeout, store=store)
    try:
        return confirm_and_run(state.output(as_json), plan, yes=yes, dry_run=dry_run)
    finally:
        _forget_listing(state)


@app.command("prune")
def prune_command(
    ctx: typer.Context,
    older_than: Annotated[str, typer.Option("--older-than", metavar="DURATION",
                                            help="Delete sessions not updated for this long: 30d, 12h, 2w, 90m.")],
    keep: Annotated[int, typer.Option("--keep", min=0, metavar="N",
                                      help="Always keep the N most recently updated matching sessions.")] = 0,
    agent: Annotated[str | None, typer.Option("--agent", metavar="NAME", help="Only this agent_name.")] = None,
    scope: ScopeOption = None,
    store: StoreOption = None,
    yes: YesFlag = False,
    dry_run: DryRunFlag = False,
    as_json: JsonFlag = False,
) -> int:
    """Delete sessions whose updated_at is older than a duration.

    Every store is pruned (or only --store's); --keep keeps N in each store.
    Unreadable files and sessions without a parseable updated_at are never
    pruned (they are reported). Asks for confirmation on a terminal; give
    --yes in scripts and cron.

    Example:

        praisonmem session prune --older-than 90d --keep 20 --dry-run
    """
    state = state_of(ctx)
    with file_progress("Reading sessions") as progress:
        plan = sessions.plan_prune(state.paths, older_than, keep=keep, agent=agent, scope=scope,
                                   timeout=state.lock_timeout, progress=progress, store=store)
    try:
        return confirm_and_run(state.output(as_json), plan, yes=yes, dry_run=dry_run, progress="Pruning")
    finally:
        _forget_listing(state)


@app.command("export")
def export_command(
    ctx: typer.Context,
    session: Annotated[list[str] | None, typer.Argument(metavar="[SESSION]...", help="Sessions to export.",
                                                        autocompletion=_complete_sessions)] = None,
    all_: Annotated[bool, typer.Option("--all", help="Export every session.")] = False,
    format_: Annotated[sessions.ExportFormat | None, typer.Option(
        "--format", help="json: lossless and importable; jsonl: one message a line; markdown: a transcript. "
                         "(default: json)")] = None,
    output: Annotated[str | None, typer.Option("--output", "-o", metavar="FILE",
                                               help="Write here instead of stdout: '-' is stdout, a pipe or device is "
                                                    "written to, a regular file is replaced atomically.")] = None,
    store: StoreOption = None,
    as_json: JsonFlag = False,
) -> None:
    """Export sessions as JSON (lossless, importable), JSON lines or Markdown.

    The json format is praisonaiagents' portable payload ({"version": 1,
    "sessions": [...]}), so the library's import_sessions reads it too.
    --all exports every store's sessions (a session two stores hold, twice);
    --store exports one store's. With
    --output, --json prints a summary of what was written; without it, the
    export itself goes to stdout and --json selects the json format.

    Example:

        praisonmem session export --all -o sessions-backup.json
        praisonmem session export history_fea3173a --format markdown
    """
    state = state_of(ctx)
    to_stdout = output in (None, "-")
    if to_stdout and as_json and format_ not in (None, sessions.ExportFormat.json):
        raise UsageError(f"--json writes the json format; it cannot be combined with --format {format_.value}")
    # A configured JSON default asks for the summary, but never overrides an explicit --format.
    out = state.output(as_json or (state.json_default and format_ is None))
    summary = sessions.export(state.paths, session or [], every=all_, format=format_ or sessions.ExportFormat.json,
                              output="-" if output is None else output, stdout=binary_stdout(), store=store)
    report_written(out, summary, output, f"exported {summary['count']} session(s) as {summary['format']} to {output}")


@app.command("import")
def import_command(
    ctx: typer.Context,
    file: Annotated[str, typer.Argument(metavar="FILE", help="An export file ('-' reads stdin).")],
    on_conflict: Annotated[sessions.OnConflict, typer.Option("--on-conflict",
                                                             help="When a session already exists.")
                           ] = sessions.OnConflict.fail,
    store: Annotated[str | None, typer.Option("--store", metavar="STORE",
                                              help="Import into this store: json (default) or sessions.db.")] = None,
    dry_run: DryRunFlag = False,
    yes: YesFlag = False,
    as_json: JsonFlag = False,
) -> int:
    """Import sessions from a praisonmem or PraisonAI export, or a session file.

    Every session is validated, and every conflict decided, before the first
    write: with --on-conflict fail (the default) one existing session stops
    the whole import. Each session is then written under its lock, verbatim,
    into the JSON files or, with --store sessions.db, into the gateway's
    database (which must exist). Replacing existing sessions asks for
    confirmation (or --yes).

    Example:

        praisonmem session import sessions-backup.json --on-conflict skip --dry-run
    """
    state = state_of(ctx)
    plan = sessions.plan_import(state.paths, file, on_conflict=on_conflict, timeout=state.lock_timeout, store=store)
    return confirm_and_run(state.output(as_json), plan, yes=yes, dry_run=dry_run)
