"""``praisonmem session``: read sessions (list, show, search) and change them (rename, adopt, delete,
prune, export, import).

Read commands change nothing on disk. Commands that change something print what they changed, or with
``--dry-run`` what they would change, as lines on stdout or (``--json``) an array of change records;
destructive ones ask on a terminal and need ``--yes`` otherwise.
"""

from __future__ import annotations

import sys
from typing import Annotated, Any

import typer

from praisonmem.cli.options import (DryRunFlag, JsonFlag, LimitOption, NdjsonFlag, SchemaOption, StoreChoice,
                                    TablePrefixOption, YesFlag, paged, store_options, table_options)
from praisonmem.cli.output import binary_stdout, note, plural, render_outcome, report_written, showing, warn
from praisonmem.cli.progress import file_progress
from praisonmem.cli.prompts import confirm_and_run
from praisonmem.cli.state import state_of
from praisonmem.core import sessions
from praisonmem.core.errors import EXIT_INTERRUPTED, UsageError

app = typer.Typer(help="Inspect, search and manage PraisonAI sessions.\n\nExample:\n\n"
                       "    praisonmem session show history_fea3173a --tail 10", no_args_is_help=True)


def _complete_sessions(ctx: typer.Context, incomplete: str) -> list[str]:
    from praisonmem.cli.completion import sessions as complete

    return complete(ctx, incomplete)


SessionArg = Annotated[str, typer.Argument(metavar="SESSION", help="Session id, file stem, or path to a session file "
                                                                   "in a sessions directory of the home.",
                                           autocompletion=_complete_sessions)]
ForceFlag = Annotated[bool, typer.Option("--force", help="Act even if the session was written in the last minute.")]
DeleteForceFlag = Annotated[bool, typer.Option("--force", help="Delete even a session written in the last minute, "
                                                               "or a file praisonmem cannot read (permissions, an "
                                                               "I/O error, a link loop, a pipe or device).")]
KeyFileOption = Annotated[str | None, typer.Option(
    "--key-file", metavar="PATH", help="The key of encrypted sessions (a private file holding the Fernet key; "
                                       "default: PRAISONAI_SESSION_KEY).")]
# Plain strings (checked by the core): an enum here would load the secret rules for every session command.
RedactOption = Annotated[str | None, typer.Option(
    "--redact", metavar="[standard|strict]",
    help="Replace every secret these rules find by [REDACTED:<kind>] (see 'session scan'); --redact alone is "
         "--redact standard.")]
LevelOption = Annotated[str, typer.Option(
    "--level", metavar="standard|strict",
    help="The rule set: strict adds national phone numbers and any high-entropy token.")]
ScopeOption = Annotated[sessions.Scope | None, typer.Option("--scope", help="Only sessions of this scope.")]
SinceOption = Annotated[str | None, typer.Option(
    "--since", metavar="WHEN", help="Only sessions last updated at or after WHEN: a duration back from now (7d, "
                                    "12h, 2w, 30m), a day (YYYY-MM-DD, UTC) or an ISO date-time.")]
UntilOption = Annotated[str | None, typer.Option(
    "--until", metavar="WHEN", help="Only sessions last updated before WHEN (the same forms; a day is included).")]


def _window(since: str | None, until: str | None) -> Any:
    """``--since``/``--until`` read before anything else is: a bad value is one usage error, nothing scanned."""
    return None if since is None and until is None else sessions.time_window(since, until)


# ---------------------------------------------------------------- reading


@app.command("list")
@table_options
@store_options
def list_command(
    ctx: typer.Context,
    agent: Annotated[str | None, typer.Option("--agent", metavar="NAME", help="Only this agent_name.")] = None,
    user: Annotated[str | None, typer.Option("--user", metavar="ID", help="Only this user_id.")] = None,
    scope: ScopeOption = None,
    sort: Annotated[sessions.SortKey, typer.Option("--sort", help="Sort key (updated/created/messages: newest or "
                                                                  "most first).")] = "updated",
    since: SinceOption = None,
    until: UntilOption = None,
    limit: LimitOption = 50,
    store: StoreChoice = StoreChoice(),
    as_json: JsonFlag = False,
    as_ndjson: NdjsonFlag = False,
) -> None:
    """List sessions in the PraisonAI home, newest first, once per store that holds them.

    STORE tells where a session is kept: json (a JSON file in the sessions
    directory, what an Agent with the default store and the bots load),
    sessions.db (a row of the gateway's database), project:<id> (the
    praisonai CLI's store of one project, sessions/projects/<id>/; the
    current directory's is named on stderr, and in JSON "current_project" is
    true), unified (the praisonai REPL/TUI's sessions; in JSON,
    "last_session" marks the one its /continue resumes) or legacy-run (the
    praisonai CLI's older sessions/<run id>/ directories). When two stores
    hold a session id (the gateway copies the JSON files into its database
    once, then each side is written on its own), PAIR says whether the
    copies are the same or have diverged, and marks the copy the other has
    overtaken as stale.

    On a terminal the table fits its width: ID, TITLE and UPDATED always
    stay; when the rest does not fit, columns are left out in this order
    (and a note on stderr names them): CREATED, COST, TOKENS, MODEL,
    ARCHIVED, USER, PAIR, STORE, SCOPE, AGENT, MSGS. --wide shows them all,
    --columns picks them; when piped, every column is printed (tsv).

    SCOPE tells where a session belongs relative to the current workspace:
    workspace (this workspace's history id for its agent), global (the
    PRAISONAI_GLOBAL_SESSIONS id), legacy (a name-only id from before
    workspace scoping; adopt it with 'session adopt'), other (another
    workspace's history id) or explicit (a session id chosen by the caller).
    Files that do not parse are listed as unreadable, with the reason.

    --since and --until keep the sessions last updated in that window
    (7d: the last seven days; 2026-11-30: from that UTC day on); a session
    without a parseable updated_at is then left out.

    Example:

        praisonmem session list --scope legacy --json
        praisonmem session list --since 7d
    """
    state = state_of(ctx)
    span = _window(since, until)
    with file_progress("Reading sessions") as progress:
        result = sessions.list_sessions(state.paths, workspace=sessions.workspace_id, agent=agent, user=user,
                                        scope=scope, sort=sort, limit=limit, progress=progress,
                                        store=store.where(ctx), cache=state.cache, window=span)
    out = state.output(as_json, as_ndjson)
    if not out.records(result.rows):
        from praisonmem.cli.render.sessions import render_list

        render_list(out, result.rows)
    if result.hidden_unreadable:
        warn(f"{plural(result.hidden_unreadable, 'unreadable session file')} not shown with these filters; "
             "run 'praisonmem session list' without filters to see them")
    elif result.unreadable and out.machine:
        warn(f"{plural(result.unreadable, 'unreadable session file')} listed with \"unreadable\": true")
    if result.missing:
        warn(result.missing)
    showing(sum(1 for row in result.rows if not row["unreadable"]), result.total, "sessions")
    if result.project is not None and not out.machine:
        project = result.project
        note(f"project:{project.project_id} is this directory's praisonai project store ({project.source}"
             + (f" {project.detail}" if project.detail else "") + ")")


_KEY_HINT = "set PRAISONAI_SESSION_KEY or give --key-file to decrypt them"


@app.command("show")
@paged
@store_options
def show_command(
    ctx: typer.Context,
    session: Annotated[str | None, typer.Argument(
        metavar="[SESSION]", help="Session id, file stem, or path to a session file in a sessions directory of the "
                                  "home (or --latest).", autocompletion=_complete_sessions)] = None,
    latest: Annotated[bool, typer.Option("--latest", help="The session praisonai's /continue resumes (named in "
                                                          ".last_session), else the most recently updated one.")
                      ] = False,
    tail: Annotated[int | None, typer.Option("--tail", "-n", min=0, metavar="N",
                                             help="Only the last N turns: the end of the session.")] = None,
    archived: Annotated[bool, typer.Option("--archived", help="Include archived (compacted-away) messages.")] = False,
    working: Annotated[
        bool, typer.Option("--working", help="The working history the agent would resume with.")
    ] = False,
    store: StoreChoice = StoreChoice(),
    key_file: KeyFileOption = None,
    as_json: JsonFlag = False,
) -> None:
    """Show a session as a readable transcript (its end with --tail N).

    Tool calls are shown with their arguments and tool results with the call
    they answer; the compaction summary, partial (interrupted) turns and turns
    still waiting in the spill dir are marked. Encrypted values (praisonai's
    EncryptedSessionStore) are decrypted with the session key
    (PRAISONAI_SESSION_KEY or --key-file) and stay opaque without it.
    A gateway session's chat, which the gateway keeps only inside its
    "Session ..." snapshots, follows the snapshots (#g0, #g1, ...). A session
    that several stores hold (the JSON files and sessions.db, say) is
    ambiguous: pick the copy with --store; the header says how it compares
    with the other copies. --json prints the stored document as it is on disk
    (encrypted values as stored), except that DEL, C1 and bidi controls and
    U+2028/U+2029 are written as \\uXXXX escapes (the same JSON data); with
    --tail, --archived or --working it prints the turns, decrypted. To
    follow a session as an agent writes it, use 'session watch'. --latest
    shows the session the praisonai CLI's /continue resumes (the id its
    .last_session file names), else the most recently updated session
    (of --store's, when given); stderr names the one chosen.

    Example:

        praisonmem session show history_fea3173a --tail 10
        praisonmem session show gw-legacy --store sessions.db
        praisonmem session show --latest --tail 5
    """
    state = state_of(ctx)
    where = store.where(ctx)
    if latest == (session is not None):
        raise UsageError("give SESSION or --latest (not both)")
    if latest:
        session, label, why = sessions.latest(state.paths, store=where)
        note(f"showing {session}: {why} ({label})")
        where = where or label
    view = sessions.show(state.paths, session, archived=archived, working=working, tail=tail,
                         store=where, key=sessions.session_key(key_file))
    out = state.output(as_json)
    if view.copies.get("stale"):
        warn(f"this copy ({view.store}) is stale: {', '.join(view.copies['paired_with'])} holds a newer, "
             "different copy of the session")
    if out.machine and not view.selected:
        out.json_text(view.raw.decode("utf-8"))
        if view.stored_encrypted:
            note(f"--json prints the session as stored, its {plural(view.stored_encrypted, 'encrypted value')} encrypted; "
                 "the transcript and --tail N --json decrypt them with the key")
        return
    if out.machine:
        out.json([t.to_json() for t in view.turns])
    else:
        from praisonmem.cli.render.transcript import render_session

        render_session(out, view)
    if view.opaque:
        note(f"{plural(view.opaque, 'encrypted value')} not shown: {_KEY_HINT}")


@app.command("path")
@store_options
def path_command(
    ctx: typer.Context,
    session: SessionArg,
    store: StoreChoice = StoreChoice(),
    as_json: JsonFlag = False,
) -> None:
    """Print where a session is kept: its file, or its database and row, in every store that holds it.

    One block per store that holds the session (or only --store's): the
    store, the file (or the database, its table and key), then every file
    of it there is now: the lock file beside a JSON session, turns waiting
    for it in the spill dir, a database's -wal and -shm. The name is exact
    (an id, a file stem or a path; no prefixes). Piped, the first line of
    each block is the file or database alone, for scripts; --json prints
    one record per store (store, session_id, kind: file, row or directory,
    path, table, key, files). Nothing is read but the names.

    Example:

        praisonmem session path my_chat
        praisonmem session path gw-legacy --json | jq -r '.[].path'
    """
    state = state_of(ctx)
    records = sessions.locations(state.paths, session, store=store.where(ctx))
    out = state.output(as_json)
    if out.document(records):
        return
    from praisonmem.cli.render.sessions import render_locations

    render_locations(out, records)


@app.command("search")
@paged
@store_options
def search_command(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(metavar="QUERY", help="Text to find (case-insensitive).")],
    since: SinceOption = None,
    until: UntilOption = None,
    limit: LimitOption = 20,
    store: StoreChoice = StoreChoice(),
    key_file: KeyFileOption = None,
    as_json: JsonFlag = False,
    as_ndjson: NdjsonFlag = False,
) -> None:
    """Search the messages of every session in every store, active and archived.

    Ranking: each matching message scores 2 when it contains the whole query
    and 1 more for each query word it contains (case-insensitive). Hits are
    ordered by score, then newest session first, then position in the session.
    Archived messages are marked with an 'a' (#a3), a gateway session's chat
    (kept inside its snapshots) with a 'g' (#g1). Each hit names its store.
    Encrypted messages are searched decrypted with the session key
    (PRAISONAI_SESSION_KEY or --key-file); without it they are skipped, and
    counted on stderr. --since and --until search only the sessions last
    updated in that window. An index of the JSON session files, kept in
    praisonmem's cache, spares parsing the files that cannot hold a hit
    shown; the output is the same without it (--no-cache).

    Example:

        praisonmem session search "hotel alfama" --limit 5
        praisonmem session search invoice --since 2w
    """
    state = state_of(ctx)
    span = _window(since, until)
    key = sessions.session_key(key_file)
    with file_progress("Searching sessions") as progress:
        result = sessions.search_sessions(state.paths, query, limit=limit, progress=progress,
                                          store=store.where(ctx), key=key, window=span, cache=state.cache)
    if result.missing:
        warn(result.missing)
    for path, reason in result.unreadable:
        warn(f"skipped unreadable session file {path}: {reason.removeprefix(f'{path}: ')}")
    if result.opaque:
        note(f"{plural(result.opaque, 'encrypted message')} in {plural(result.opaque_sessions, 'session')} not searched: "
             "set PRAISONAI_SESSION_KEY or give --key-file to decrypt and search them")
    out = state.output(as_json, as_ndjson)
    if not out.records(result.hits):
        from praisonmem.cli.render.transcript import render_hits

        render_hits(out, result.hits)
    showing(len(result.hits), result.total, "hits")


# ---------------------------------------------------------------- changing


@app.command("rename")
@store_options
def rename_command(
    ctx: typer.Context,
    session: SessionArg,
    new_id: Annotated[str | None, typer.Argument(metavar="NEW_ID", help="The new session id.")] = None,
    title: Annotated[str | None, typer.Option("--title", metavar="TEXT", help="Set metadata.title instead "
                                                                               "(empty clears it).")] = None,
    force: ForceFlag = False,
    store: StoreChoice = StoreChoice(),
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
                                       store=store.where(ctx))
        else:
            outcome = sessions.rename(state.paths, session, new_id, force=force, dry_run=dry_run,
                                      timeout=state.lock_timeout, store=store.where(ctx))
    finally:
        _forget_listing(state)
    return render_outcome(state.output(as_json), outcome)


def _forget_listing(state: Any) -> None:
    """After a change to sessions, drop session list's cache entry: no deleted row lingers there."""
    sessions.forget_listing(state.paths, state.cache)
    sessions.forget_search_index(state.paths, state.cache)


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
    key_file: KeyFileOption = None,
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
    legacy files are removed. Encrypted turns are copied as stored; turns a
    merge brings into an encrypted session are encrypted with its key
    (PRAISONAI_SESSION_KEY or --key-file), and refused without it.

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
                               replace=replace, from_workspace=from_workspace, timeout=state.lock_timeout,
                               key=sessions.session_key(key_file))
    return confirm_and_run(state.output(as_json), plan, yes=yes, dry_run=dry_run,
                           progress="Adopting" if all_ else None, minimum=1)


@app.command("delete")
@store_options
def delete_command(
    ctx: typer.Context,
    session: Annotated[list[str], typer.Argument(metavar="SESSION...", help="Sessions to delete.",
                                                 autocompletion=_complete_sessions)],
    force: DeleteForceFlag = False,
    store: StoreChoice = StoreChoice(),
    yes: YesFlag = False,
    dry_run: DryRunFlag = False,
    as_json: JsonFlag = False,
) -> int:
    """Delete sessions, each under its lock; the .lock files stay.

    Every name is resolved first (exact ids, stems or paths; no prefixes), so a
    typo deletes nothing; a session both stores hold needs --store. Turns the
    library saved for a session in the spill dir are deleted with it (else its
    next load would make the session anew from them). A file praisonmem
    cannot read (permissions, a pipe or device) is refused unless --force;
    one that reads but does not parse is deleted as any other. Deleting
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
    plan = sessions.plan_delete(state.paths, session, force=force, timeout=state.lock_timeout,
                                store=store.where(ctx))
    try:
        return confirm_and_run(state.output(as_json), plan, yes=yes, dry_run=dry_run)
    finally:
        _forget_listing(state)


@app.command("prune")
@store_options
def prune_command(
    ctx: typer.Context,
    older_than: Annotated[str | None, typer.Option("--older-than", metavar="DURATION",
                                                   help="Delete sessions not updated for this long: 30d, 12h, 2w, "
                                                        "90m.")] = None,
    since: Annotated[str | None, typer.Option(
        "--since", metavar="WHEN", help="Only sessions last updated at or after WHEN: a duration back from now (7d, "
                                        "12h, 2w, 30m), a day (YYYY-MM-DD, UTC) or an ISO date-time.")] = None,
    until: Annotated[str | None, typer.Option(
        "--until", metavar="WHEN", help="Delete sessions last updated before WHEN (the same forms; a day is "
                                        "included): --until 30d is --older-than 30d.")] = None,
    keep: Annotated[int, typer.Option("--keep", min=0, metavar="N",
                                      help="Always keep the N most recently updated matching sessions.")] = 0,
    agent: Annotated[str | None, typer.Option("--agent", metavar="NAME", help="Only this agent_name.")] = None,
    scope: ScopeOption = None,
    store: StoreChoice = StoreChoice(),
    yes: YesFlag = False,
    dry_run: DryRunFlag = False,
    as_json: JsonFlag = False,
) -> int:
    """Delete sessions whose updated_at is older than a duration (or in a window).

    --older-than 90d deletes what was last updated more than 90 days ago;
    --since and --until delete what was last updated in that window
    (--since 60d --until 30d: between 60 and 30 days ago; --since alone: up
    to now). Give --older-than or --until, not both.
    Every store is pruned (or only --store's); --keep keeps N in each store.
    Unreadable files and sessions without a parseable updated_at are never
    pruned (they are reported). Asks for confirmation on a terminal; give
    --yes in scripts and cron.

    Example:

        praisonmem session prune --older-than 90d --keep 20 --dry-run
        praisonmem session prune --since 2026-01-01 --until 2026-02-01 --dry-run
    """
    state = state_of(ctx)
    with file_progress("Reading sessions") as progress:
        plan = sessions.plan_prune(state.paths, older_than, keep=keep, agent=agent, scope=scope,
                                   timeout=state.lock_timeout, progress=progress,
                                   store=store.where(ctx), since=since, until=until)
    try:
        return confirm_and_run(state.output(as_json), plan, yes=yes, dry_run=dry_run, progress="Pruning")
    finally:
        _forget_listing(state)


@app.command("export")
@store_options
def export_command(
    ctx: typer.Context,
    session: Annotated[list[str] | None, typer.Argument(metavar="[SESSION]...", help="Sessions to export.",
                                                        autocompletion=_complete_sessions)] = None,
    all_: Annotated[bool, typer.Option("--all", help="Export every session.")] = False,
    since: SinceOption = None,
    until: UntilOption = None,
    format_: Annotated[sessions.ExportFormat | None, typer.Option(
        "--format", help="json: lossless and importable; jsonl: one message a line; markdown: a transcript; "
                         "openai-jsonl: OpenAI chat fine-tuning lines (importable); sharegpt: ShareGPT "
                         "conversations. (default: json)")] = None,
    archived: Annotated[bool, typer.Option("--archived", help="openai-jsonl, sharegpt: put the archived turns "
                                                              "first (default: the active window only).")] = False,
    system_prompt: Annotated[str | None, typer.Option("--system-prompt", metavar="TEXT",
                                                      help="openai-jsonl, sharegpt: start each conversation with "
                                                           "this system message.")] = None,
    no_system: Annotated[bool, typer.Option("--no-system", help="openai-jsonl, sharegpt: leave the sessions' own "
                                                                "system messages out (compaction summaries "
                                                                "too).")] = False,
    output: Annotated[str | None, typer.Option("--output", "-o", metavar="FILE",
                                               help="Write here instead of stdout: '-' is stdout, a pipe or device is "
                                                    "written to, a regular file is replaced atomically.")] = None,
    store: StoreChoice = StoreChoice(),
    redact: RedactOption = None,
    key_file: KeyFileOption = None,
    as_json: JsonFlag = False,
) -> None:
    """Export sessions as JSON (lossless, importable), JSON lines, Markdown, or for fine-tuning.

    The json format is praisonaiagents' portable payload ({"version": 1,
    "sessions": [...]}), so the library's import_sessions reads it too.
    openai-jsonl writes one {"messages": [...]} line per session in OpenAI's
    chat fine-tuning format (role, content, an assistant's tool_calls, a tool
    result's tool_call_id), each message's role, content and tool calls as
    stored, in order; 'session import' reads it back. sharegpt writes a JSON
    array of {"id", "conversations": [{"from", "value"}]} (system, human, gpt,
    function_call, observation). Both take the active window (and a gateway
    session's chat); a session with no messages or with encrypted ones is
    skipped, with a note.
    --all exports every store's sessions (a session two stores hold, twice);
    --store exports one store's. --since and --until export only the
    sessions last updated in that window (of those named, else of every
    session: no --all needed). With
    --output, --json prints a summary of what was written; without it, the
    export itself goes to stdout and --json selects the json format.
    --redact standard|strict writes every secret those rules find (see
    'session scan') as [REDACTED:<kind>]; the stored sessions are not
    changed (that is 'session redact').
    Encrypted values stay as stored in json (the lossless copy: importing it
    restores them encrypted); jsonl and markdown decrypt them with the
    session key (PRAISONAI_SESSION_KEY or --key-file). Turns waiting for a
    session in the spill dir are exported merged into it, as the library's
    next load would merge them.

    Example:

        praisonmem session export --all -o sessions-backup.json
        praisonmem session export support_ticket__1234 --redact standard -o share.json
        praisonmem session export history_fea3173a --format markdown
        praisonmem session export --all --format openai-jsonl --system-prompt "Be brief." -o train.jsonl
    """
    state = state_of(ctx)
    span = _window(since, until)
    to_stdout = output in (None, "-")
    if to_stdout and as_json and format_ not in (None, sessions.ExportFormat.json):
        raise UsageError(f"--json writes the json format; it cannot be combined with --format {format_.value}")
    # A configured JSON default asks for the summary, but never overrides an explicit --format.
    out = state.output(as_json or (state.json_default and format_ is None))
    key = sessions.session_key(key_file)
    summary = sessions.export(state.paths, session or [], every=all_, format=format_ or sessions.ExportFormat.json,
                              output="-" if output is None else output, stdout=binary_stdout(),
                              store=store.where(ctx),
                              archived=archived, system_prompt=system_prompt, no_system=no_system,
                              redact=redact, key=key, window=span)
    for skipped in summary.get("skipped", []):
        note(f"skipped session {skipped['session_id']}: {skipped['reason']}")
    report_written(out, summary, output, f"exported {plural(summary['count'], 'session')} as {summary['format']} to {output}")
    kept = summary["encrypted_kept"]
    if kept and summary["format"] == sessions.ExportFormat.json.value:
        note(f"{plural(kept, 'encrypted value')} exported as stored (json is the lossless copy: importing it restores them "
             "encrypted); jsonl and markdown decrypt them with the key")
    elif kept:
        note(f"{plural(kept, 'encrypted value')} left encrypted: {_KEY_HINT}")


@app.command("import")
@store_options
def import_command(
    ctx: typer.Context,
    file: Annotated[str, typer.Argument(metavar="FILE", help="An export file ('-' reads stdin).")],
    on_conflict: Annotated[sessions.OnConflict, typer.Option("--on-conflict",
                                                             help="When a session already exists.")
                           ] = "fail",
    store: StoreChoice = StoreChoice(),
    key_file: KeyFileOption = None,
    id_prefix: Annotated[str | None, typer.Option("--id-prefix", metavar="PREFIX",
                                                  help="OpenAI-chat JSONL: name the sessions PREFIX-<line number> "
                                                       "(default: the file's name without its extension; stdin: "
                                                       "'stdin').")] = None,
    dry_run: DryRunFlag = False,
    yes: YesFlag = False,
    as_json: JsonFlag = False,
) -> int:
    """Import sessions from a praisonmem or PraisonAI export, a session file, or OpenAI-chat JSONL.

    Every session is validated, and every conflict decided, before the first
    write: with --on-conflict fail (the default) one existing session stops
    the whole import. Each session is then written under its lock, verbatim,
    into the JSON files or, with --store, into another store (sessions.db,
    the gateway's database, which must exist; a project:<id> store).
    Replacing existing sessions asks for confirmation (or --yes). Replacing
    an encrypted session encrypts the messages the import brings in with its
    key (PRAISONAI_SESSION_KEY or --key-file), and is refused without it.
    OpenAI-chat JSONL (one {"messages": [...]} line per conversation, as
    'export --format openai-jsonl' writes) becomes one new session per line,
    named PREFIX-<line number>; each message keeps its role, content, tool
    calls and tool_call_id, in order. A line that is not JSON or not in that
    format stops the import before anything is written.

    Example:

        praisonmem session import sessions-backup.json --on-conflict skip --dry-run
        praisonmem session import train.jsonl --id-prefix train
    """
    state = state_of(ctx).creating_home()  # importing into a fresh home creates it, as the library does
    plan = sessions.plan_import(state.paths, file, on_conflict=on_conflict, timeout=state.lock_timeout,
                                store=store.where(ctx), id_prefix=id_prefix,
                                key=sessions.session_key(key_file))
    return confirm_and_run(state.output(as_json), plan, yes=yes, dry_run=dry_run)


# ---------------------------------------------------------------- secrets


@app.command("scan")
@store_options
def scan_command(
    ctx: typer.Context,
    session: Annotated[list[str] | None, typer.Argument(metavar="[SESSION]...", help="Sessions to scan (default: "
                                                        "all).", autocompletion=_complete_sessions)] = None,
    level: LevelOption = "standard",
    store: StoreChoice = StoreChoice(),
    as_json: JsonFlag = False,
    as_ndjson: NdjsonFlag = False,
) -> int:
    """Find secrets in sessions: API keys, tokens, passwords, private keys,
    e-mail addresses and phone numbers.

    Every string of a session is searched (messages and archived messages,
    tool calls and results, the title, metadata, gateway snapshots) and the
    turns waiting for it in the spill dir, in every store; encrypted values
    are opaque and not searched. Each finding names the store, the session,
    the message index (#3, archived #a3) and field, the kind, and an excerpt
    with every secret in it masked (its first characters and length): no
    output, JSON included, holds a secret itself. Exits 1 when any is found.
    'praisonmem check --secrets' scans memories, learn entries and Upsonic
    traits too.

    Rules (standard): OpenAI, Anthropic, Google, AWS access key ids, GitHub,
    GitLab, Hugging Face, npm, Slack tokens and webhooks, Stripe secret keys,
    SendGrid, Twilio and Azure storage keys (the shapes gitleaks and
    trufflehog use), JWTs, PEM private-key blocks, passwords in URLs,
    passwords assigned (DB_PASSWORD=...) or said in prose ("my password is
    ..."), payment card numbers (Luhn) and IBANs (mod 97), e-mail addresses,
    international phone numbers (+ and a country code), and values assigned
    to secret names (api_key=, AWS_SECRET_ACCESS_KEY=, "token": ...) that
    look random (entropy >= 3 bits a character). strict adds national phone
    numbers and any 32+ character token of 4.5 bits a character or more
    (detect-secrets' base64 limit). JSON in a string (tool call arguments)
    is read as JSON; a session that does not parse, and the library's
    quarantined *.corrupt-* copies, are searched as raw bytes. Exits 1 too
    when a session file could not be read at all (named as not scanned).

    Example:

        praisonmem session scan
        praisonmem session scan support_ticket__1234 --level strict --json
    """
    state = state_of(ctx)
    report = sessions.scan_secrets(state.paths, session or [], level=level, store=store.where(ctx))
    out = state.output(as_json, as_ndjson)
    from praisonmem.cli.render.secrets import render_findings, summary, warn_unscanned

    if not out.records(report.findings):
        render_findings(out, report.findings, report.unreadable, report.raw)
        note(summary(report))
    else:
        warn_unscanned(report.unreadable, report.raw)
    return 1 if report.failed else 0


@app.command("redact")
@store_options
def redact_command(
    ctx: typer.Context,
    session: Annotated[list[str], typer.Argument(metavar="SESSION...", help="Sessions to rewrite.",
                                                 autocompletion=_complete_sessions)],
    level: LevelOption = "standard",
    store: StoreChoice = StoreChoice(),
    yes: YesFlag = False,
    dry_run: DryRunFlag = False,
    as_json: JsonFlag = False,
) -> int:
    """Rewrite sessions in place with every secret replaced by [REDACTED:<kind>].

    Take a backup first ('praisonmem backup create'): a redaction cannot be
    undone. The rules are 'session scan''s. Each session is rewritten through
    its store's own write protocol (the JSON file's lock and atomic replace;
    one transaction of sessions.db, whose free pages and -wal are then
    scrubbed of the old text), re-read under the lock so a turn an agent
    added meanwhile is redacted too, never lost. Turns waiting for it in the
    spill dir are redacted with it. Every other byte stays: key order,
    unknown keys, updated_at, and encrypted values (opaque here, left as
    they are). An agent that has the session in memory may write the secret
    again: stop it first. Asks for confirmation on a terminal; give --yes in
    scripts.

    Example:

        praisonmem session redact support_ticket__1234 --dry-run
        praisonmem session redact my_chat --level strict --yes
    """
    state = state_of(ctx)
    plan = sessions.plan_redact(state.paths, session, level=level, store=store.where(ctx),
                                timeout=state.lock_timeout)
    try:
        return confirm_and_run(state.output(as_json), plan, yes=yes, dry_run=dry_run)
    finally:  # the redacted secrets' words must not linger in search's index
        sessions.forget_search_index(state.paths, state.cache)


# ---------------------------------------------------------------- following


TailOption = Annotated[int, typer.Option("--tail", "-n", min=0, metavar="N",
                                         help="First print the last N turns already there.")]


@app.command("watch")
@store_options
def watch_command(
    ctx: typer.Context,
    session: SessionArg,
    tail: TailOption = 10,
    wait: Annotated[bool, typer.Option("--wait", help="A session no store holds yet: wait for it to appear (by its "
                                                      "exact name), then follow it from its first turn.")] = False,
    store: StoreChoice = StoreChoice(),
    as_json: JsonFlag = False,
) -> int:
    """Follow a session: its last turns, then each turn an agent adds, until Ctrl-C.

    'session show --tail N' prints the end of a session and exits; watch
    follows it: the last --tail turns first (default 10), then every turn
    the agent adds, in order, each once. 'session tail -f' is this command.
    The session file (or sessions.db and its -wal) is watched with inotify
    where there is one, polled every second otherwise; a file replaced by
    an atomic rename, as the library writes, is followed. It only reads: no
    lock is taken, so the agent is never held up. It follows the home's own
    stores. --json prints one message object a line (session export
    --format jsonl's records), flushed as it comes. Ctrl-C ends it (exit
    130, with no error line: it is how a watch ends). With --wait, a
    session that does not exist yet (an agent about to start) is waited
    for, checked every second by its exact name (a note on stderr says
    where), then followed from its first turn; without it, such a name
    is an error (exit 3).

    Example:

        praisonmem session watch my_chat
        praisonmem session watch my_chat --tail 0 --json | jq -r .content
        praisonmem session watch support_ticket__1234 --wait
    """
    return _follow(ctx, session, tail, store, as_json, wait=wait)


@app.command("tail")
@store_options
def tail_command(
    ctx: typer.Context,
    session: SessionArg,
    follow: Annotated[bool, typer.Option("--follow", "-f", help="Keep printing new turns: 'session watch'.")
                      ] = False,
    lines: TailOption = 10,
    store: StoreChoice = StoreChoice(),
    as_json: JsonFlag = False,
) -> int:
    """Print a session's last turns; with -f, follow it ('session watch' spelled as tail(1)).

    'session tail -f' is 'session watch'. Without -f it prints what watch
    prints first, the last --tail turns in watch's format (one message
    object a line with --json), and exits. The end of a session as a
    transcript, with its header, is 'session show --tail N'.

    Example:

        praisonmem session tail -f my_chat -n 5
    """
    return _follow(ctx, session, lines, store, as_json, forever=follow)


def _follow(ctx: typer.Context, session: str, tail: int, store: StoreChoice, as_json: bool,
            forever: bool = True, wait: bool = False) -> int:
    """``session watch`` and ``session tail``: the last ``tail`` turns, then (``forever``) each new one."""
    state = state_of(ctx)
    out = state.output(as_json)
    watched: list[sessions.Watched] = []
    from praisonmem.cli.output import stderr_is_tty
    from praisonmem.cli.render.transcript import render_turn

    def started(what: sessions.Watched) -> None:
        watched.append(what)
        if forever and stderr_is_tty():
            note(f"watching {what.session_id} in {what.store} ({what.mode}); Ctrl-C to stop")

    try:
        def waiting(where: str) -> None:
            note(f"waiting for session {session} to appear in {where}; Ctrl-C to stop")

        for batch in sessions.watch_session(state.paths, session, store=store.where(ctx), tail=tail,
                                            started=started, wait=wait, waiting=waiting):
            for new in batch:
                if out.machine:
                    out.ndjson([new.to_json(watched[0].session_id)])
                else:
                    render_turn(out, new.turn())
                    sys.stdout.flush()
            if not forever:
                return 0
    except KeyboardInterrupt:  # how a watch ends: exit 130, and nothing said about it
        if not forever:  # a tail stopped half-way was interrupted
            raise
        from praisonmem.cli import interrupts

        interrupts.stopped()
        sys.stdout.flush()
        return EXIT_INTERRUPTED
    return 0


@app.command("migrate")
def migrate_command(
    ctx: typer.Context,
    session: Annotated[list[str] | None, typer.Argument(metavar="[SESSION]...", help="Session ids to migrate.")
                       ] = None,
    source: Annotated[str, typer.Option("--from", metavar="STORE",
                                        help="Copy from this store (as --store names one: json, sessions.db, a "
                                             "directory, sqlite:///PATH, postgresql://..., mysql://...).")] = "",
    target: Annotated[str, typer.Option("--to", metavar="STORE", help="Copy into this store (the same forms).")
                      ] = "",
    all_: Annotated[bool, typer.Option("--all", help="Every session of --from.")] = False,
    move: Annotated[bool, typer.Option("--move", help="Delete each session from --from once its copy is in --to "
                                                      "and compares equal.")] = False,
    verify: Annotated[bool, typer.Option("--verify", help="Read every migrated session back from --to and "
                                                          "compare message count and content hash (exit 1 "
                                                          "naming any mismatch).")] = False,
    on_conflict: Annotated[str, typer.Option("--on-conflict", metavar="skip|replace",
                                             help="A session --to holds, different and not older: skip it "
                                                  "(default) or replace it.")] = "skip",
    table_prefix: TablePrefixOption = None,
    schema: SchemaOption = None,
    dry_run: DryRunFlag = False,
    yes: YesFlag = False,
    as_json: JsonFlag = False,
) -> int:
    """Copy sessions between any two stores, losslessly.

    Every message field, tool calls, archived messages, compaction state,
    metadata and unknown keys go across: a PraisonAI conversation store
    (SQLite or PostgreSQL) keeps what it has no column for under the
    reserved key _praisonmem (in sessions.state and messages.metadata), so
    JSON -> PostgreSQL -> JSON gives the same bytes. Each session is one
    transaction of --to: a killed migrate continues where it stopped when
    rerun, and a rerun copies nothing new. A session --to already holds with
    other content is overwritten only when the copy there is older, unless
    --on-conflict replace. --table-prefix and --schema apply to each side
    that is a conversation store. Shows a progress bar on a terminal, one
    line per session copied ("would copy" with --dry-run) on stdout, and a
    summary line (sessions, messages, seconds; that --verify passed) on
    stderr; --json prints the summary with one record per session. --move and --on-conflict replace
    ask for confirmation (or --yes). Turns waiting for a session in the
    spill dir go across merged into it, as the library's next load would
    merge them; --move deletes them with the source session.

    Example:

        praisonmem session migrate --from ~/.praisonai/sessions --to postgresql://app@db/chat --all --verify
    """
    state = state_of(ctx)
    if not source or not target:
        raise UsageError("give both --from STORE and --to STORE")
    if not dry_run and (move or on_conflict == "replace"):
        from praisonmem.cli.prompts import confirm

        what = "delete each migrated session from --from" if move else "overwrite sessions --to already holds"
        confirm(f"{what}?", yes=yes, dry_run=dry_run)
    stores = [sessions.store_location(value, {}, table_prefix=table_prefix, schema=schema, strict=False)
              for value in (source, target)]
    with file_progress("Migrating sessions", minimum=1) as progress:
        report = sessions.migrate_between(state.paths, stores[0], stores[1], list(session or []), every=all_,
                                          move=move, dry_run=dry_run, verify=verify, on_conflict=on_conflict,
                                          timeout=state.lock_timeout, progress=progress)
    out = state.output(as_json)
    for record in report.failed:
        warn(f"{record['session_id']}: {record['reason']}")
    for record in report.records:
        if record["action"] == "skipped":
            note(f"skipped {record['session_id']}: {record['reason']}")
    if out.machine:
        out.json({**report.summary(), "records": report.records})
    else:
        for line in _migrated_lines(report.records):
            out.line(line)
    note(report.line())
    verified = sum(1 for record in report.records if record.get("verified"))
    if verified:
        note(f"verified: {plural(verified, 'session')} read back from --to with the same message count and content "
             "hash")
    return report.exit_code


_MIGRATED = {"copied": "copied", "replaced": "replaced", "would-copy": "would copy", "would-replace": "would replace"}


def _migrated_lines(records: list[dict[str, Any]]) -> list[str]:
    """One line per session migrate wrote (or, on a dry run, would write) into --to."""
    lines = []
    for record in records:
        said = _MIGRATED.get(record["action"])
        if said is not None:
            moved = ", deleted from --from" if record.get("moved") else ""
            lines.append(f"{said} {record['session_id']} ({plural(record['messages'], 'message')}{moved})")
    return lines
