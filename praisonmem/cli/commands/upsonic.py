"""``praisonmem upsonic``: Upsonic's SQLite memory (sessions and user memory) over plain sqlite3."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from praisonmem.cli.options import DryRunFlag, JsonFlag, LimitOption, NdjsonFlag, YesFlag, parse_pairs
from praisonmem.cli.output import Output, fmt_time, fmt_value, note, write_target
from praisonmem.cli.prompts import confirm
from praisonmem.cli.state import state_of

app = typer.Typer(help="Upsonic SqliteStorage: sessions, user memory, export/import, conversion to PraisonAI.",
                  no_args_is_help=True)

DbOption = Annotated[str | None, typer.Option("--db", metavar="PATH", help="The Upsonic SQLite file "
                                                                            "(config: upsonic.db).")]
SessionTableOption = Annotated[str, typer.Option("--session-table", metavar="NAME", help="Sessions table.")]
UserTableOption = Annotated[str, typer.Option("--user-memory-table", metavar="NAME", help="User-memory table.")]


def _store(ctx: typer.Context, db: str | None, session_table: str, user_table: str):
    from pathlib import Path

    from praisonmem.core.errors import UsageError
    from praisonmem.core.upsonic.store import Store

    state = state_of(ctx)
    path = db or state.upsonic_db()
    if not path:
        raise UsageError("--db PATH is required (or set upsonic.db in the config file)")
    return Store(Path(path).expanduser(), session_table, user_table, timeout=state.lock_timeout)


def _date(epoch: Any, out: Output) -> str:
    return fmt_time(epoch, short=out.tty) if isinstance(epoch, int) else fmt_value(epoch)


@app.command("sessions")
def sessions_command(
    ctx: typer.Context,
    db: DbOption = None,
    user: Annotated[str | None, typer.Option("--user", metavar="U", help="Only this user_id.")] = None,
    agent: Annotated[str | None, typer.Option("--agent", metavar="A", help="Only this agent_id.")] = None,
    type_: Annotated[str | None, typer.Option("--type", metavar="agent|team|workflow", help="Only this type.")] = None,
    limit: LimitOption = 50,
    session_table: SessionTableOption = "upsonic_sessions",
    user_memory_table: UserTableOption = "upsonic_user_memories",
    as_json: JsonFlag = False,
    as_ndjson: NdjsonFlag = False,
) -> None:
    """List sessions, newest first (sessions without a user included).

    Example:

        praisonmem upsonic sessions --db data.db --user user_123
    """
    from praisonmem.core.errors import UsageError
    from praisonmem.core.upsonic.store import SESSION_TYPES

    if type_ is not None and type_ not in SESSION_TYPES:
        raise UsageError(f"--type must be agent, team or workflow, got '{type_}'")
    store = _store(ctx, db, session_table, user_memory_table)
    rows = store.sessions(user=user, agent=agent, session_type=type_, limit=limit)
    out = Output(no_color=state_of(ctx).no_color)
    if not out.records(rows, as_json, as_ndjson):
        out.table(["ID", "TYPE", "AGENT", "USER", "MSGS", "RUNS", "SUMMARY", "CREATED", "UPDATED"],
                  [[r["session_id"], r["session_type"], fmt_value(r["agent_id"]), fmt_value(r["user_id"]),
                    fmt_value(r["message_count"]), fmt_value(r["run_count"]), "yes" if r["has_summary"] else "no",
                    _date(r["created_at"], out), _date(r["updated_at"], out)] for r in rows],
                  optional=["TYPE", "RUNS", "CREATED"])


@app.command("show")
def show_command(
    ctx: typer.Context,
    session_id: Annotated[str, typer.Argument(metavar="SESSION_ID")],
    db: DbOption = None,
    runs: Annotated[bool, typer.Option("--runs", help="Also summarise the runs (id, status, prompt, output).")] = False,
    session_table: SessionTableOption = "upsonic_sessions",
    user_memory_table: UserTableOption = "upsonic_user_memories",
    as_json: JsonFlag = False,
) -> None:
    """Show a session: the conversation, summary, metadata and usage.

    Messages are rendered from their pydantic-ai parts: system and user
    prompts, text, thinking, tool calls with their arguments, tool returns and
    retries. Pickled values are shown as opaque and never loaded. --json gives
    the decoded row.

    Example:

        praisonmem upsonic show session_001 --db data.db --runs
    """
    store = _store(ctx, db, session_table, user_memory_table)
    row = store.session(session_id)
    out = Output(no_color=state_of(ctx).no_color)
    if as_json:
        out.json(row)
        return
    _render_session(out, row, runs)


def _render_session(out: Output, row: dict[str, Any], with_runs: bool) -> None:
    from praisonmem.core.upsonic.convert import opaque, parts

    header = [("Session", row["session_id"]), ("Type", fmt_value(row.get("session_type"))),
              ("Agent", fmt_value(row.get("agent_id")) or "-"), ("User", fmt_value(row.get("user_id")) or "-"),
              ("Created", _date(row.get("created_at"), out)), ("Updated", _date(row.get("updated_at"), out)),
              ("Summary", row.get("summary") or "-"),
              ("Metadata", json.dumps(row.get("metadata"), ensure_ascii=False)),
              ("Usage", json.dumps(row.get("usage"), ensure_ascii=False))]
    width = max(len(k) for k, _ in header)
    for key, value in header:
        out.raw(f"{key:<{width}}  {value}")
    last = None
    for part in parts(row.get("messages")):
        if part["message"] != last:
            last = part["message"]
            who = "request" if part["kind"] == "request" else f"response{' · ' + part['model_name'] if part.get('model_name') else ''}"
            out.raw("")
            heading = f"#{part['message']} {who}" + (f" · {part['timestamp']}" if part.get("timestamp") else "")
            out.line(f"── {heading}" if out.tty else heading, style="dim")
        out.body(_part_line(part))
    if with_runs:
        out.raw("")
        out.raw("Runs")
        for run_id, run in (row.get("runs") or {}).items():
            output = run.get("output") if isinstance(run, dict) else None
            output = output if isinstance(output, dict) else {}
            prompt = (output.get("input") or {}).get("user_prompt") if isinstance(output.get("input"), dict) else None
            result = opaque(output.get("output"))
            out.raw(f"  {run_id}  {output.get('status', '?')}  prompt: {prompt!r}  output: "
                    f"{result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)}")


def _part_line(part: dict[str, Any]) -> str:
    from praisonmem.core.upsonic.convert import opaque

    kind = part["part_kind"]
    if kind == "system-prompt":
        return f"[system] {part['text']}"
    if kind == "user-prompt":
        return f"[user] {part['text']}"
    if kind == "text":
        return f"[assistant] {part['text']}"
    if kind == "thinking":
        return f"[thinking] {part['text']}"
    if kind in ("tool-call", "builtin-tool-call"):
        args = part["args"] if isinstance(part["args"], str) else json.dumps(part["args"], ensure_ascii=False)
        return f"→ tool call {part['tool_name']}({args}) [{part['tool_call_id']}]"
    if kind in ("tool-return", "builtin-tool-return"):
        content = opaque(part["content"])
        shown = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
        return f"← tool result of {part['tool_name']} [{part['tool_call_id']}]: {shown}"
    if kind == "retry-prompt":
        return f"↻ retry{' of ' + part['tool_name'] if part.get('tool_name') else ''}: " \
               f"{json.dumps(part['content'], ensure_ascii=False)}"
    return f"[{kind}] {json.dumps(opaque(part.get('raw')), ensure_ascii=False)}"


class _ShowByDefault(TyperGroup):
    """``user-memory USER_ID`` means ``user-memory show USER_ID``."""

    def resolve_command(self, ctx, args):  # type: ignore[no-untyped-def]
        if args and args[0] not in self.commands and not args[0].startswith("-"):
            args = ["show", *args]
        return super().resolve_command(ctx, args)


user_memory = typer.Typer(cls=_ShowByDefault, no_args_is_help=True,
                          help="Show or edit a user's memory (traits): USER_ID, or set/unset/replace.")
app.add_typer(user_memory, name="user-memory")


def _print_traits(ctx: typer.Context, result: dict[str, Any], as_json: bool) -> None:
    out = Output(no_color=state_of(ctx).no_color)
    if as_json:
        out.json(result)
        return
    for key, value in (result.get("user_memory") or result.get("after") or {}).items():
        out.raw(f"{key}: {json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else value}")


@user_memory.command("show")
def user_memory_show(
    ctx: typer.Context,
    user_id: Annotated[str, typer.Argument(metavar="USER_ID")],
    db: DbOption = None,
    session_table: SessionTableOption = "upsonic_sessions",
    user_memory_table: UserTableOption = "upsonic_user_memories",
    as_json: JsonFlag = False,
) -> None:
    """Show a user's traits (the one memory row per user).

    Example:

        praisonmem upsonic user-memory user_123 --db data.db
    """
    row = _store(ctx, db, session_table, user_memory_table).user(user_id)
    _print_traits(ctx, row, as_json)


def _edit(ctx: typer.Context, db, session_table, user_memory_table, user_id, change, dry_run, as_json) -> None:
    store = _store(ctx, db, session_table, user_memory_table)
    result = store.update_user_memory(user_id, change, dry_run=dry_run)
    if as_json:
        _print_traits(ctx, result, True)
        return
    verb = "would write" if dry_run else "wrote"
    note(f"{verb} user memory of '{user_id}'" + (" (new row)" if result["created"] else ""))
    _print_traits(ctx, result, False)


@user_memory.command("set")
def user_memory_set(
    ctx: typer.Context,
    user_id: Annotated[str, typer.Argument(metavar="USER_ID")],
    pairs: Annotated[list[str], typer.Argument(metavar="KEY=VALUE...", help="VALUE is JSON when it parses "
                                                                             "(3, true, [\"a\"]), else text.")],
    db: DbOption = None,
    session_table: SessionTableOption = "upsonic_sessions",
    user_memory_table: UserTableOption = "upsonic_user_memories",
    dry_run: DryRunFlag = False,
    as_json: JsonFlag = False,
) -> None:
    """Set traits, keeping every other trait, created_at, agent_id and team_id.

    The row is re-read inside a write transaction; if an agent changed it since
    it was read, nothing is written (exit 4).

    Example:

        praisonmem upsonic user-memory set user_123 detected_tone=formal key_entities='{"bank": "ING"}' --db data.db
    """
    from praisonmem.core.upsonic.store import parse_value

    updates = {k: parse_value(v) for k, v in parse_pairs(pairs, "trait").items()}
    _edit(ctx, db, session_table, user_memory_table, user_id, lambda old: {**old, **updates}, dry_run, as_json)


@user_memory.command("unset")
def user_memory_unset(
    ctx: typer.Context,
    user_id: Annotated[str, typer.Argument(metavar="USER_ID")],
    keys: Annotated[list[str], typer.Argument(metavar="KEY...")],
    db: DbOption = None,
    session_table: SessionTableOption = "upsonic_sessions",
    user_memory_table: UserTableOption = "upsonic_user_memories",
    dry_run: DryRunFlag = False,
    as_json: JsonFlag = False,
) -> None:
    """Remove traits from a user's memory.

    Example:

        praisonmem upsonic user-memory unset user_123 current_goal --db data.db
    """
    from praisonmem.core.errors import NotFound

    store = _store(ctx, db, session_table, user_memory_table)
    current = store.user(user_id)["user_memory"] or {}
    missing = [k for k in keys if k not in current]
    if missing:
        raise NotFound(f"user '{user_id}' has no trait(s) {', '.join(missing)}")
    _edit(ctx, db, session_table, user_memory_table, user_id,
          lambda old: {k: v for k, v in old.items() if k not in keys}, dry_run, as_json)


@user_memory.command("replace")
def user_memory_replace(
    ctx: typer.Context,
    user_id: Annotated[str, typer.Argument(metavar="USER_ID")],
    source: Annotated[str, typer.Option("--from", metavar="FILE", help="A JSON object ('-' reads stdin).")],
    db: DbOption = None,
    session_table: SessionTableOption = "upsonic_sessions",
    user_memory_table: UserTableOption = "upsonic_user_memories",
    dry_run: DryRunFlag = False,
    as_json: JsonFlag = False,
) -> None:
    """Replace a user's whole memory with a JSON object from a file.

    Example:

        praisonmem upsonic user-memory replace user_456 --from traits.json --db data.db
    """
    import sys

    from praisonmem.core.io import jsonfile
    from praisonmem.core.errors import CorruptFile, UsageError

    raw = sys.stdin.buffer.read() if source == "-" else jsonfile.read_bytes(source)
    try:
        new = jsonfile.parse(raw, source)
    except CorruptFile as exc:
        raise UsageError(f"{source}: not JSON ({exc.reason})") from exc
    if not isinstance(new, dict):
        raise UsageError(f"{source}: user memory must be a JSON object, got {jsonfile.json_kind(new)}")
    _edit(ctx, db, session_table, user_memory_table, user_id, lambda old: new, dry_run, as_json)


@app.command("export")
def export_command(
    ctx: typer.Context,
    output: Annotated[str, typer.Option("--output", "-o", metavar="FILE",
                                        help="Where to write: '-' is stdout, a pipe or device is written to, "
                                             "a regular file is replaced atomically.")],
    db: DbOption = None,
    users: Annotated[bool, typer.Option("--users", help="Export user memory (default: both).")] = False,
    sessions: Annotated[bool, typer.Option("--sessions", help="Export sessions (default: both).")] = False,
    session_table: SessionTableOption = "upsonic_sessions",
    user_memory_table: UserTableOption = "upsonic_user_memories",
    as_json: JsonFlag = False,
) -> None:
    """Export user memory and sessions as one JSON document (epoch-integer
    timestamps, JSON fields decoded).

    Example:

        praisonmem upsonic export --db data.db --users -o users.json
    """
    from praisonmem.core.upsonic import transfer as upsonic_io
    from praisonmem.core.io.safetext import json_safe

    both = not users and not sessions
    payload = upsonic_io.export(_store(ctx, db, session_table, user_memory_table), users=users or both,
                                sessions=sessions or both)
    text = json_safe(json.dumps(payload, ensure_ascii=False, indent=2)) + "\n"
    out = Output(no_color=state_of(ctx).no_color)
    write_target(output, text.encode("utf-8"))
    if output == "-":
        return
    summary = {"output": output, "users": len(payload.get("users", [])), "sessions": len(payload.get("sessions", []))}
    out.json(summary) if as_json else note(f"exported {summary['users']} user(s) and {summary['sessions']} "
                                           f"session(s) to {output}")


@app.command("import")
def import_command(
    ctx: typer.Context,
    file: Annotated[str, typer.Argument(metavar="FILE", help="A 'praisonmem upsonic export' file.")],
    db: DbOption = None,
    session_table: SessionTableOption = "upsonic_sessions",
    user_memory_table: UserTableOption = "upsonic_user_memories",
    dry_run: DryRunFlag = False,
    yes: YesFlag = False,
    as_json: JsonFlag = False,
) -> None:
    """Import an export: every row is validated, then all are upserted in one
    transaction, as the library writes them (a new file gets the library's tables).
    Overwriting existing rows asks first (--yes in scripts).

    Example:

        praisonmem upsonic import users.json --db data.db --dry-run
    """
    from praisonmem.core.upsonic import transfer as upsonic_io

    users, sessions = upsonic_io.read_export(file)
    store = _store(ctx, db, session_table, user_memory_table)
    plan = upsonic_io.run_import(store, users, sessions, dry_run=True)
    updating = sum(1 for row in plan if row["action"] == "update")
    if updating:
        confirm(f"Overwrite {updating} existing Upsonic row(s) in {store.path}?", yes=yes, dry_run=dry_run)
    report = plan if dry_run else upsonic_io.run_import(store, users, sessions)
    out = Output(no_color=state_of(ctx).no_color)
    if as_json:
        out.json(report)
    else:
        for row in report:
            action = f"would {row['action']}" if dry_run else row["action"]
            out.raw(f"{action} {row['kind']} {row['id']}")


@app.command("convert")
def convert_command(
    ctx: typer.Context,
    sessions: Annotated[list[str], typer.Argument(metavar="SESSION...", help="Upsonic session ids (--to-praisonai) "
                                                                             "or PraisonAI sessions (--from-praisonai).")],
    to_praisonai: Annotated[bool, typer.Option("--to-praisonai", help="Upsonic → PraisonAI session files.")] = False,
    from_praisonai: Annotated[bool, typer.Option("--from-praisonai", help="PraisonAI sessions → Upsonic rows.")] = False,
    db: DbOption = None,
    home: Annotated[str | None, typer.Option("--home", metavar="DIR", help="The PraisonAI home to write to or "
                                                                            "read from (default: resolved home).")] = None,
    replace: Annotated[bool, typer.Option("--replace", help="Overwrite sessions that already exist (asks first).")
                       ] = False,
    session_table: SessionTableOption = "upsonic_sessions",
    user_memory_table: UserTableOption = "upsonic_user_memories",
    dry_run: DryRunFlag = False,
    yes: YesFlag = False,
    as_json: JsonFlag = False,
) -> None:
    """Carry conversations between Upsonic and PraisonAI.

    Turns map both ways: system and user prompts, assistant text with tool
    calls, and tool results linked by tool_call_id; timestamps are converted;
    Upsonic's summary and usage are kept in the PraisonAI session's metadata.
    PraisonAI files are written with the library's lock and atomic write; Upsonic
    rows as SqliteStorage writes them.

    Example:

        praisonmem upsonic convert session_001 --to-praisonai --db data.db
        praisonmem upsonic convert history_fea3173a --from-praisonai --db data.db
    """
    from praisonmem.core.errors import UsageError

    if to_praisonai == from_praisonai:
        raise UsageError("give exactly one of --to-praisonai and --from-praisonai")
    state = state_of(ctx)
    if home is not None:
        import dataclasses

        state = dataclasses.replace(state, home=home, _paths=None)
    store = _store(ctx, db, session_table, user_memory_table)
    convert = _to_praisonai if to_praisonai else _from_praisonai
    report = convert(state, store, sessions, replace, True)
    replacing = sum(1 for row in report if row["action"] in ("replace", "update"))
    if replacing:
        confirm(f"Overwrite {replacing} existing session(s)?", yes=yes, dry_run=dry_run)
    if not dry_run:
        report = convert(state, store, sessions, replace, False)
    out = Output(no_color=state.no_color)
    if as_json:
        out.json(report)
    else:
        for row in report:
            out.raw(f"{'would ' + row['action'] if dry_run else row['action']} {row['session_id']}"
                    + (f" → {row['file']}" if row.get("file") else ""))


def _to_praisonai(state, store, ids: list[str], replace: bool, dry_run: bool) -> list[dict[str, Any]]:
    from praisonmem.core.upsonic import transfer as upsonic_io

    return upsonic_io.write_praisonai(store, state.paths, ids, replace=replace, dry_run=dry_run,
                                      timeout=state.lock_timeout)


def _from_praisonai(state, store, names: list[str], replace: bool, dry_run: bool) -> list[dict[str, Any]]:
    import time

    from praisonmem.core.sessions import listing as sessions
    from praisonmem.core.upsonic import transfer as upsonic_io
    from praisonmem.core.upsonic.convert import from_praisonai

    now = int(time.time())
    rows = [from_praisonai(sessions.load(p), now=now) for p in (sessions.find(state.paths, n) for n in names)]
    return upsonic_io.write_converted(store, rows, replace=replace, dry_run=dry_run)
