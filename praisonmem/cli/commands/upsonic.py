"""``praisonmem upsonic``: Upsonic's storage (sessions and user memory): an SQLite file, PostgreSQL, a JSONStorage
directory or RedisStorage."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from praisonmem.cli.options import DryRunFlag, JsonFlag, LimitOption, NdjsonFlag, YesFlag, parse_pairs, table_options
from praisonmem.cli.output import binary_stdout, fmt_value, plural, render_outcome, report_written, showing
from praisonmem.cli.prompts import confirm_and_run
from praisonmem.cli.render.upsonic import date, render_session, render_traits
from praisonmem.cli.state import State, state_of
from praisonmem.core import upsonic
from praisonmem.core.errors import UsageError

app = typer.Typer(help="Upsonic SqliteStorage, PostgresStorage, JSONStorage or RedisStorage: sessions, user memory, "
                       "export/import, migration between them, conversion to PraisonAI.\n\nExample:\n\n"
                       "    praisonmem upsonic sessions --db data.db\n\n"
                       "    praisonmem upsonic sessions --db postgresql://me@db.example/agents\n\n"
                       "    praisonmem upsonic sessions --db ./upsonic_json_db\n\n"
                       "    praisonmem upsonic sessions --db redis://localhost:6379/0", no_args_is_help=True)

DbOption = Annotated[str | None, typer.Option("--db", metavar="PATH|DIR|URL", help="The Upsonic SQLite file, "
                                              "sqlite:///PATH, postgresql://USER@HOST/DB, a JSONStorage directory "
                                              "(DIR/ creates one) or redis://HOST:PORT/N, rediss://… or "
                                              "unix://PATH?db=N (config: upsonic.db). Give a PostgreSQL password "
                                              "with PGPASSWORD, ~/.pgpass or a service file: one in the URL is "
                                              "visible to other users in ps.")]
PrefixOption = Annotated[str | None, typer.Option("--prefix", metavar="PREFIX", help="RedisStorage's key prefix "
                                                  "(its db_prefix; default: upsonic).")]
SchemaOption = Annotated[str | None, typer.Option("--schema", metavar="NAME", help="PostgreSQL schema of the "
                                                  "tables (PostgresStorage's db_schema; default: public).")]
SessionTableOption = Annotated[str, typer.Option("--session-table", metavar="NAME", help="Sessions table.")]
UserTableOption = Annotated[str, typer.Option("--user-memory-table", metavar="NAME", help="User-memory table.")]


def _store(state: State, db: str | None, session_table: str, user_table: str, schema: str | None = None,
           prefix: str | None = None) -> Any:
    return upsonic.open_store(db or state.setting("upsonic.db"), session_table=session_table,
                              user_memory_table=user_table, timeout=state.lock_timeout, schema=schema, prefix=prefix)


@app.command("sessions")
@table_options
def sessions_command(
    ctx: typer.Context,
    db: DbOption = None,
    user: Annotated[str | None, typer.Option("--user", metavar="U", help="Only this user_id.")] = None,
    agent: Annotated[str | None, typer.Option("--agent", metavar="A", help="Only this agent_id.")] = None,
    type_: Annotated[upsonic.SessionType | None, typer.Option("--type", help="Only this type.")] = None,
    limit: LimitOption = 50,
    session_table: SessionTableOption = "upsonic_sessions",
    user_memory_table: UserTableOption = "upsonic_user_memories",
    schema: SchemaOption = None,
    prefix: PrefixOption = None,
    as_json: JsonFlag = False,
    as_ndjson: NdjsonFlag = False,
) -> None:
    """List sessions, newest first (sessions without a user included).

    Example:

        praisonmem upsonic sessions --db data.db --user user_123
    """
    state = state_of(ctx)
    store = _store(state, db, session_table, user_memory_table, schema, prefix)
    rows, total = store.sessions_page(user=user, agent=agent, session_type=type_, limit=limit)
    out = state.output(as_json, as_ndjson)
    if not out.records(rows):
        out.table(["ID", "TYPE", "AGENT", "USER", "MSGS", "RUNS", "SUMMARY", "CREATED", "UPDATED"],
                  [[r["session_id"], r["session_type"], fmt_value(r["agent_id"]), fmt_value(r["user_id"]),
                    fmt_value(r["message_count"]), fmt_value(r["run_count"]), "yes" if r["has_summary"] else "no",
                    date(r["created_at"], out), date(r["updated_at"], out)] for r in rows],
                  optional=["TYPE", "RUNS", "CREATED", "SUMMARY", "MSGS"])
    showing(len(rows), total, "sessions")


@app.command("show")
def show_command(
    ctx: typer.Context,
    session_id: Annotated[str, typer.Argument(metavar="SESSION_ID")],
    db: DbOption = None,
    runs: Annotated[bool, typer.Option("--runs", help="Also summarise the runs (id, status, prompt, output).")] = False,
    session_table: SessionTableOption = "upsonic_sessions",
    user_memory_table: UserTableOption = "upsonic_user_memories",
    schema: SchemaOption = None,
    prefix: PrefixOption = None,
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
    state = state_of(ctx)
    row = _store(state, db, session_table, user_memory_table, schema, prefix).session(session_id)
    out = state.output(as_json)
    if not out.document(row):
        render_session(out, row, runs)


class _ShowByDefault(TyperGroup):
    """``user-memory USER_ID`` means ``user-memory show USER_ID``."""

    def resolve_command(self, ctx, args):  # type: ignore[no-untyped-def]
        if args and args[0] not in self.commands and not args[0].startswith("-"):
            args = ["show", *args]
        return super().resolve_command(ctx, args)


user_memory = typer.Typer(cls=_ShowByDefault, no_args_is_help=True,
                          help="Show or edit a user's memory (traits): USER_ID, or set/unset/replace.\n\n"
                               "Example:\n\n    praisonmem upsonic user-memory user_123 --db data.db")
app.add_typer(user_memory, name="user-memory")


@user_memory.command("show")
def user_memory_show(
    ctx: typer.Context,
    user_id: Annotated[str, typer.Argument(metavar="USER_ID")],
    db: DbOption = None,
    session_table: SessionTableOption = "upsonic_sessions",
    user_memory_table: UserTableOption = "upsonic_user_memories",
    schema: SchemaOption = None,
    prefix: PrefixOption = None,
    as_json: JsonFlag = False,
) -> None:
    """Show a user's traits (the one memory row per user).

    Example:

        praisonmem upsonic user-memory user_123 --db data.db
    """
    state = state_of(ctx)
    store = _store(state, db, session_table, user_memory_table, schema, prefix)
    row = store.user(user_id)
    out = state.output(as_json)
    if out.document(row):
        return
    render_traits(out, store.traits_of(row))


def _edit(ctx: typer.Context, db: str | None, session_table: str, user_memory_table: str, schema: str | None,
          prefix: str | None, user_id: str, dry_run: bool, as_json: bool, **edit: Any) -> int:
    state = state_of(ctx)
    outcome = upsonic.edit_user_memory(_store(state, db, session_table, user_memory_table, schema, prefix), user_id,
                                       dry_run=dry_run, **edit)
    out = state.output(as_json)
    code = render_outcome(out, outcome)
    if not out.machine:
        render_traits(out, outcome.changes[0].fields["after"])
    return code


@user_memory.command("set")
def user_memory_set(
    ctx: typer.Context,
    user_id: Annotated[str, typer.Argument(metavar="USER_ID")],
    pairs: Annotated[list[str], typer.Argument(metavar="KEY=VALUE...", help="VALUE is JSON when it parses "
                                                                             "(3, true, [\"a\"]), else text.")],
    db: DbOption = None,
    session_table: SessionTableOption = "upsonic_sessions",
    user_memory_table: UserTableOption = "upsonic_user_memories",
    schema: SchemaOption = None,
    prefix: PrefixOption = None,
    dry_run: DryRunFlag = False,
    as_json: JsonFlag = False,
) -> int:
    """Set traits, keeping every other trait, created_at, agent_id and team_id.

    The row is re-read inside a write transaction; if an agent changed it since
    it was read, nothing is written (exit 4).

    Example:

        praisonmem upsonic user-memory set user_123 detected_tone=formal key_entities='{"bank": "ING"}' --db data.db
    """
    return _edit(ctx, db, session_table, user_memory_table, schema, prefix, user_id, dry_run, as_json,
                 set_traits=parse_pairs(pairs, "trait"))


@user_memory.command("unset")
def user_memory_unset(
    ctx: typer.Context,
    user_id: Annotated[str, typer.Argument(metavar="USER_ID")],
    keys: Annotated[list[str], typer.Argument(metavar="KEY...")],
    db: DbOption = None,
    session_table: SessionTableOption = "upsonic_sessions",
    user_memory_table: UserTableOption = "upsonic_user_memories",
    schema: SchemaOption = None,
    prefix: PrefixOption = None,
    dry_run: DryRunFlag = False,
    as_json: JsonFlag = False,
) -> int:
    """Remove traits from a user's memory.

    Example:

        praisonmem upsonic user-memory unset user_123 current_goal --db data.db
    """
    return _edit(ctx, db, session_table, user_memory_table, schema, prefix, user_id, dry_run, as_json, unset=keys)


@user_memory.command("replace")
def user_memory_replace(
    ctx: typer.Context,
    user_id: Annotated[str, typer.Argument(metavar="USER_ID")],
    source: Annotated[str, typer.Option("--from", metavar="FILE", help="A JSON object ('-' reads stdin).")],
    db: DbOption = None,
    session_table: SessionTableOption = "upsonic_sessions",
    user_memory_table: UserTableOption = "upsonic_user_memories",
    schema: SchemaOption = None,
    prefix: PrefixOption = None,
    dry_run: DryRunFlag = False,
    yes: YesFlag = False,
    as_json: JsonFlag = False,
) -> int:
    """Replace a user's whole memory with a JSON object from a file.

    Every trait the file does not hold is lost, so it asks first on a
    terminal and needs --yes otherwise (the file is read and checked before
    the question).

    Example:

        praisonmem upsonic user-memory replace user_456 --from traits.json --db data.db --yes
    """
    from praisonmem.cli.prompts import confirm

    question = f"Replace the whole memory of user '{user_id}' with the object in {source}?"
    return _edit(ctx, db, session_table, user_memory_table, schema, prefix, user_id, dry_run, as_json,
                 replace_from=source,
                 confirm=lambda: confirm(question, yes=yes, dry_run=dry_run))


@app.command("export")
def export_command(
    ctx: typer.Context,
    output: Annotated[str | None, typer.Option("--output", "-o", metavar="FILE",
                                               help="Write here instead of stdout: '-' is stdout, a pipe or "
                                                    "device is written to, a regular file is replaced "
                                                    "atomically.")] = None,
    db: DbOption = None,
    users: Annotated[bool, typer.Option("--users", help="Export user memory (default: both).")] = False,
    sessions: Annotated[bool, typer.Option("--sessions", help="Export sessions (default: both).")] = False,
    session_table: SessionTableOption = "upsonic_sessions",
    user_memory_table: UserTableOption = "upsonic_user_memories",
    schema: SchemaOption = None,
    prefix: PrefixOption = None,
    as_json: JsonFlag = False,
) -> None:
    """Export user memory and sessions as one JSON document (epoch-integer
    timestamps, JSON fields decoded).

    The document goes to stdout unless -o names a file, as with 'session
    export'; with -o FILE, --json prints a summary of what was written.

    Example:

        praisonmem upsonic export --db data.db --users -o users.json
    """
    state = state_of(ctx)
    summary = upsonic.export_to(_store(state, db, session_table, user_memory_table, schema, prefix),
                                "-" if output is None else output,
                                users=users,
                                sessions=sessions, stdout=binary_stdout())
    report_written(state.output(as_json), summary, output,
                   f"exported {plural(summary['users'], 'user')} and {plural(summary['sessions'], 'session')} to {output}")


@app.command("import")
def import_command(
    ctx: typer.Context,
    file: Annotated[str, typer.Argument(metavar="FILE", help="A 'praisonmem upsonic export' file.")],
    db: DbOption = None,
    session_table: SessionTableOption = "upsonic_sessions",
    user_memory_table: UserTableOption = "upsonic_user_memories",
    schema: SchemaOption = None,
    prefix: PrefixOption = None,
    dry_run: DryRunFlag = False,
    yes: YesFlag = False,
    as_json: JsonFlag = False,
) -> int:
    """Import an export: every row is validated, then all are upserted in one
    transaction, as the library writes them (a new file gets the library's tables).
    Overwriting existing rows asks first (--yes in scripts).

    Example:

        praisonmem upsonic import users.json --db data.db --dry-run
    """
    state = state_of(ctx)
    store = _store(state, db, session_table, user_memory_table, schema, prefix)
    if not dry_run:
        store.recover()
    plan = upsonic.plan_import(store, file)
    return confirm_and_run(state.output(as_json), plan, yes=yes, dry_run=dry_run)


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
    schema: SchemaOption = None,
    prefix: PrefixOption = None,
    dry_run: DryRunFlag = False,
    yes: YesFlag = False,
    as_json: JsonFlag = False,
) -> int:
    """Carry conversations between Upsonic and PraisonAI.

    Turns map both ways: system and user prompts, assistant text with tool
    calls, and tool results linked by tool_call_id; timestamps are converted;
    Upsonic's summary and usage are kept in the PraisonAI session's metadata.
    PraisonAI files are written with the library's lock and atomic write; Upsonic
    rows as SqliteStorage or PostgresStorage writes them.

    Example:

        praisonmem upsonic convert session_001 --to-praisonai --db data.db
        praisonmem upsonic convert history_fea3173a --from-praisonai --db data.db
    """
    if to_praisonai == from_praisonai:
        raise UsageError("give exactly one of --to-praisonai and --from-praisonai")
    state = state_of(ctx)
    store = _store(state, db, session_table, user_memory_table, schema, prefix)
    if not dry_run and not to_praisonai:
        store.recover()
    plan = upsonic.plan_convert(store, state.with_home(home).paths, sessions, into_praisonai=to_praisonai,
                                replace=replace, timeout=state.lock_timeout)
    return confirm_and_run(state.output(as_json), plan, yes=yes, dry_run=dry_run)


@app.command("migrate")
def migrate_command(
    ctx: typer.Context,
    source: Annotated[str, typer.Option("--from", metavar="PATH|DIR|URL", help="The store to copy from (any --db "
                                                                               "form).")],
    target: Annotated[str, typer.Option("--to", metavar="PATH|DIR|URL", help="The store to copy into (created "
                                                                             "when new: a file, DIR/, or tables).")],
    verify: Annotated[bool, typer.Option("--verify", help="Read both stores back afterwards and list every row "
                                                         "that differs (exit 1).")] = False,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace target rows that have the same id but "
                                                               "other values (asks first; --yes in scripts).")
                         ] = False,
    from_prefix: Annotated[str | None, typer.Option("--from-prefix", metavar="PREFIX", help="RedisStorage key "
                                                    "prefix of --from (default: upsonic).")] = None,
    to_prefix: Annotated[str | None, typer.Option("--to-prefix", metavar="PREFIX", help="RedisStorage key prefix "
                                                  "of --to (default: upsonic).")] = None,
    from_schema: Annotated[str | None, typer.Option("--from-schema", metavar="NAME", help="PostgreSQL schema of "
                                                    "--from (default: public).")] = None,
    to_schema: Annotated[str | None, typer.Option("--to-schema", metavar="NAME", help="PostgreSQL schema of --to "
                                                  "(default: public).")] = None,
    expire: Annotated[int | None, typer.Option("--expire", metavar="SECONDS", min=1, help="TTL of the records a "
                                               "RedisStorage --to gets (its expire; default: none).")] = None,
    dry_run: DryRunFlag = False,
    yes: YesFlag = False,
    as_json: JsonFlag = False,
) -> int:
    """Copy every session and user memory from one Upsonic store to another.

    SQLite, PostgreSQL, JSONStorage and RedisStorage in any direction; every
    field's value is kept and written as the target's library writes it. Rows
    the target already holds with the same values are skipped, so a rerun
    (after an interruption, say) finishes the job; a row with the same id and
    other values is refused (exit 4, nothing written) unless --overwrite.
    All rows are written in one transaction of the target.

    Example:

        praisonmem upsonic migrate --from data.db --to redis://localhost:6379/0 --verify
    """
    state = state_of(ctx)
    timeout = state.lock_timeout
    source_store = upsonic.open_store(source, timeout=timeout, schema=from_schema, prefix=from_prefix)
    target_store = upsonic.open_store(target, timeout=timeout, schema=to_schema, prefix=to_prefix, expire=expire)
    plan = upsonic.plan_migrate(source_store, target_store, overwrite=overwrite, verify=verify, dry_run=dry_run)
    return confirm_and_run(state.output(as_json), plan, yes=yes, dry_run=dry_run)
