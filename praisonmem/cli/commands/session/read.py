"""``praisonmem session list|show|search``: read-only; nothing on disk changes."""

from __future__ import annotations

from enum import Enum
from typing import Annotated

import typer

from praisonmem.cli.options import JsonFlag, LimitOption, NdjsonFlag
from praisonmem.cli.output import Output, fmt_time, fmt_value, note, warn
from praisonmem.cli.progress import file_progress
from praisonmem.cli.commands.session._app import SessionArg, app
from praisonmem.cli.state import state_of


class Scope(str, Enum):
    workspace = "workspace"
    global_ = "global"
    legacy = "legacy"
    other = "other"
    explicit = "explicit"


class SortKey(str, Enum):
    updated = "updated"
    created = "created"
    messages = "messages"
    id = "id"


@app.command("list")
def list_command(
    ctx: typer.Context,
    agent: Annotated[str | None, typer.Option("--agent", metavar="NAME", help="Only this agent_name.")] = None,
    user: Annotated[str | None, typer.Option("--user", metavar="ID", help="Only this user_id.")] = None,
    scope: Annotated[Scope | None, typer.Option("--scope", help="Only sessions of this scope.")] = None,
    sort: Annotated[SortKey, typer.Option("--sort", help="Sort key (updated/created/messages: newest or most first).")] = SortKey.updated,
    limit: LimitOption = 50,
    as_json: JsonFlag = False,
    as_ndjson: NdjsonFlag = False,
) -> None:
    """List sessions in the PraisonAI home, newest first.

    SCOPE tells where a session belongs relative to the current workspace:
    workspace (this workspace's history id for its agent), global (the
    PRAISONAI_GLOBAL_SESSIONS id), legacy (a name-only id from before
    workspace scoping; adopt it with 'session adopt'), other (another
    workspace's history id) or explicit (a session id chosen by the caller).
    Files that do not parse are listed as unreadable, with the reason.

    Example:

        praisonmem session list --scope legacy --json
    """
    from praisonmem.core.sessions import listing as sessions
    from praisonmem.core.sessions.workspace import workspace_id

    state = state_of(ctx)
    with file_progress("Reading sessions") as progress:
        result = sessions.list_sessions(
            state.paths,
            workspace=workspace_id,
            agent=agent,
            user=user,
            scope=scope.value if scope else None,
            sort=sort.value,
            limit=limit,
            progress=progress,
        )
    out = Output(no_color=state.no_color)
    if not out.records(result.rows, as_json, as_ndjson):
        _table(out, result.rows)
    if result.hidden_unreadable:
        warn(f"{result.hidden_unreadable} unreadable session file(s) not shown with these filters; "
             "run 'praisonmem session list' without filters to see them")
    elif result.unreadable and (as_json or as_ndjson):
        warn(f"{result.unreadable} unreadable session file(s) listed with \"unreadable\": true")
    if not state.paths.sessions_dir.is_dir():
        warn(f"no sessions directory at {state.paths.sessions_dir} ({state.paths.data.source})")
    readable_shown = sum(1 for r in result.rows if not r["unreadable"])
    if readable_shown < result.total and not (as_json or as_ndjson):
        note(f"showing {readable_shown} of {result.total} sessions; --limit 0 shows all")


def _table(out: Output, rows: list[dict]) -> None:
    """All columns when piped; on a terminal, no CREATED and SPILLED only when something waits."""
    headers = ["ID", "AGENT", "USER", "TITLE", "MSGS", "ARCHIVED", "CREATED", "UPDATED", "SCOPE", "MODEL",
               "TOKENS", "COST", "SPILLED"]
    table_rows = []
    styles = []
    for r in rows:
        if r["unreadable"]:
            table_rows.append([_stem(r["file"]), "", "", f"UNREADABLE: {r['error']}"] + [""] * 9)
            styles.append("red")
            continue
        table_rows.append([
            r["session_id"], fmt_value(r["agent_name"]), fmt_value(r["user_id"]), fmt_value(r["title"]),
            str(r["message_count"]), str(r["archived_count"]), fmt_time(r["created_at"], short=out.tty),
            fmt_time(r["updated_at"], short=out.tty), r["scope"], fmt_value(r["model"]),
            fmt_value(r["total_tokens"]), fmt_value(r["cost"]), str(r["spilled_count"]) if r["spilled_count"] else "",
        ])
        styles.append(None)
    optional = ["CREATED", "COST", "TOKENS", "MODEL", "ARCHIVED", "USER", "SCOPE"]
    if not any(r["spilled_count"] for r in rows):
        optional.insert(0, "SPILLED")
    out.table(headers, table_rows, row_styles=styles, wrap=["AGENT", "TITLE"], optional=optional)


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
    as_json: JsonFlag = False,
) -> None:
    """Show a session as a readable transcript.

    Tool calls are shown with their arguments and tool results with the call
    they answer; the compaction summary, partial (interrupted) turns and turns
    still waiting in the spill dir are marked; encrypted values stay opaque.
    --json prints the stored document as it is on disk, except that DEL, C1
    and bidi controls and U+2028/U+2029 are written as \\uXXXX escapes (the
    same JSON data).

    Example:

        praisonmem session show history_fea3173a --tail 10
    """
    from praisonmem.core.io import jsonfile
    from praisonmem.core.sessions import listing as sessions
    from praisonmem.core.errors import UsageError

    if archived and working:
        raise UsageError("--archived and --working show different views; give one")
    state = state_of(ctx)
    path = sessions.find(state.paths, session, allow_prefix=True)
    raw = jsonfile.read_bytes(path)
    doc = sessions.validate(jsonfile.parse_object(raw, path), path)
    out = Output(no_color=state.no_color)
    if as_json:
        if tail is not None or archived or working:
            view = sessions.view(state.paths, path, doc, archived=archived, working=working, tail=tail)
            out.json([_turn_json(t) for t in view.turns])
        else:
            out.json_text(raw.decode("utf-8"))
        return
    view = sessions.view(state.paths, path, doc, archived=archived, working=working, tail=tail)
    from praisonmem.cli.render.transcript import render_session

    render_session(out, view)


def _turn_json(turn) -> dict:
    return {
        "section": turn.section,
        "index": turn.index,
        "role": turn.role,
        "content": turn.content,
        "timestamp": turn.timestamp,
        "tool_calls": turn.tool_calls,
        "tool_call_id": turn.tool_call_id,
        "partial": turn.partial,
        "encrypted": turn.encrypted,
    }


@app.command("search")
def search_command(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(metavar="QUERY", help="Text to find (case-insensitive).")],
    limit: LimitOption = 20,
    as_json: JsonFlag = False,
    as_ndjson: NdjsonFlag = False,
) -> None:
    """Search the messages of every session, active and archived.

    Ranking: each matching message scores 2 when it contains the whole query
    and 1 more for each query word it contains (case-insensitive). Hits are
    ordered by score, then newest session first, then position in the session.
    Archived messages are marked with an 'a' (#a3). Encrypted messages are not
    searched.

    Example:

        praisonmem session search "hotel alfama" --limit 5
    """
    from praisonmem.core.sessions import search as session_search

    state = state_of(ctx)
    with file_progress("Searching sessions") as progress:
        result = session_search.search(state.paths, query, limit=limit, progress=progress)
    for path, reason in result.unreadable:
        warn(f"skipped unreadable session file {path}: {reason}")
    out = Output(no_color=state.no_color)
    if not out.records(result.hits, as_json, as_ndjson):
        from praisonmem.cli.render.transcript import render_hits

        render_hits(out, result.hits)
        if len(result.hits) < result.total:
            note(f"showing {len(result.hits)} of {result.total} hits; --limit 0 shows all")
