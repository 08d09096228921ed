"""``praisonmem learn``: the learn stores (persona, insights, threads, …): the home's files, a ``learn.db`` or Redis."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from praisonmem.cli.options import DryRunFlag, JsonFlag, MetaOption, NdjsonFlag, YesFlag, parse_pairs, table_options
from praisonmem.cli.output import fmt_time, render_outcome, warn
from praisonmem.cli.prompts import confirm_and_run
from praisonmem.cli.state import state_of
from praisonmem.core import learn

app = typer.Typer(help="List, add and remove learn-store entries (never bumping use_count), in the home's files, "
                       "a learn.db (--backend sqlite) or Redis (--backend redis).\n\nExample:\n\n"
                       "    praisonmem learn list --store persona", no_args_is_help=True)

StoreArg = Annotated[str, typer.Argument(metavar="STORE",
                                         help="persona, insights, threads, patterns, decisions, feedback or "
                                              "improvements.")]
ScopeOption = Annotated[learn.LearnScope | None, typer.Option("--scope",
                                                              help="private (default for writes) or shared.")]
LearnUserOption = Annotated[str | None, typer.Option("--user-id", metavar="U",
                                                     help="Learn user (default for writes: 'default').")]
BackendOption = Annotated[learn.BackendKind | None, typer.Option(
    "--backend",
    help="Where the stores are (default: the home's files and a learn.db of the library's sqlite backend).")]
DbOption = Annotated[str | None, typer.Option(
    "--db", metavar="PATH", help="The learn.db (a path or sqlite:///PATH); implies --backend sqlite.")]
UrlOption = Annotated[str | None, typer.Option(
    "--url", metavar="URL", help="redis://, rediss:// or unix:// URL (default redis://localhost:6379); "
                                 "implies --backend redis.")]
PrefixOption = Annotated[str | None, typer.Option(
    "--prefix", metavar="P", help="Redis key prefix (default praison:learn:).")]


def source_of(backend: learn.BackendKind | None, db: str | None, url: str | None, prefix: str | None) -> learn.Source:
    return learn.Source(backend, db, url, prefix)


@app.command("list")
@table_options
def list_command(
    ctx: typer.Context,
    store: Annotated[str | None, typer.Option("--store", metavar="STORE", help="Only this store.")] = None,
    scope: ScopeOption = None,
    user_id: LearnUserOption = None,
    backend: BackendOption = None,
    db: DbOption = None,
    url: UrlOption = None,
    prefix: PrefixOption = None,
    as_json: JsonFlag = False,
    as_ndjson: NdjsonFlag = False,
) -> None:
    """List learn entries (read-only: unlike the library's list_all, use_count is not bumped).

    Example:

        praisonmem learn list --store persona --user-id alice

        praisonmem learn list --backend redis --url redis://localhost:6379/0
    """
    state = state_of(ctx)
    found, unreadable = learn.list_entries(state.paths, store=store, scope=scope, user_id=user_id,
                                           source=source_of(backend, db, url, prefix))
    for problem in unreadable:
        warn(f"skipped unreadable learn store {problem}")
    out = state.output(as_json, as_ndjson)
    rows = [e.to_json() for e in found]
    if not out.records(rows):
        out.table(["STORE", "SCOPE", "USER", "ID", "UPDATED", "USES", "CONTENT"],
                  [[r["store"], r["scope"] or "-", r["user_id"] or "-", str(r.get("id")), fmt_time(r.get("updated_at"), naive_utc=True),
                    str(r.get("use_count", "")), str(r.get("content", ""))] for r in rows], truncate=["CONTENT"],
                  optional=["USES", "SCOPE", "UPDATED"])


@app.command("show")
def show_command(
    ctx: typer.Context,
    entry_id: Annotated[str, typer.Argument(metavar="ID", help="The entry's id.")],
    scope: ScopeOption = None,
    user_id: LearnUserOption = None,
    backend: BackendOption = None,
    db: DbOption = None,
    url: UrlOption = None,
    prefix: PrefixOption = None,
    as_json: JsonFlag = False,
) -> None:
    """Show one learn entry.

    Example:

        praisonmem learn show persona_0_1796050189.525609
    """
    state = state_of(ctx)
    entry = learn.show_entry(state.paths, entry_id, scope=scope, user_id=user_id,
                             source=source_of(backend, db, url, prefix)).to_json()
    out = state.output(as_json)
    if out.document(entry):
        return
    for key, value in entry.items():
        if key.endswith("_at") and value is not None:  # local time, as every screen shows it
            value = fmt_time(value, naive_utc=True)
        out.raw(f"{key:<11} {value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)}")


@app.command("add")
def add_command(
    ctx: typer.Context,
    store: StoreArg,
    text: Annotated[str, typer.Argument(metavar="TEXT", help="The learning.")],
    meta: MetaOption = None,
    scope: ScopeOption = None,
    user_id: LearnUserOption = None,
    backend: BackendOption = None,
    db: DbOption = None,
    url: UrlOption = None,
    prefix: PrefixOption = None,
    as_json: JsonFlag = False,
) -> int:
    """Add an entry, with the library's dedup: the same text (trimmed, any case) is
    not added twice; its metadata is merged instead.

    Example:

        praisonmem learn add persona "Prefers concise answers" --meta category=style

        praisonmem learn add insights "Asks about travel" --db learn/learn.db
    """
    state = state_of(ctx)
    outcome = learn.add_entry(state.paths, store, text, parse_pairs(meta, "--meta"), scope=scope, user_id=user_id,
                              timeout=state.lock_timeout, source=source_of(backend, db, url, prefix))
    return render_outcome(state.output(as_json), outcome, ids=True)


@app.command("delete")
def delete_command(
    ctx: typer.Context,
    entry_id: Annotated[str, typer.Argument(metavar="ID", help="The entry's id.")],
    scope: ScopeOption = None,
    user_id: LearnUserOption = None,
    backend: BackendOption = None,
    db: DbOption = None,
    url: UrlOption = None,
    prefix: PrefixOption = None,
    yes: YesFlag = False,
    dry_run: DryRunFlag = False,
    as_json: JsonFlag = False,
) -> int:
    """Delete one learn entry.

    Example:

        praisonmem learn delete insights_0_1796050189.530151 --yes
    """
    state = state_of(ctx)
    plan = learn.plan_delete_entry(state.paths, entry_id, scope=scope, user_id=user_id, timeout=state.lock_timeout,
                                   source=source_of(backend, db, url, prefix))
    return confirm_and_run(state.output(as_json), plan, yes=yes, dry_run=dry_run)


@app.command("clear")
def clear_command(
    ctx: typer.Context,
    store: StoreArg,
    scope: ScopeOption = None,
    user_id: LearnUserOption = None,
    backend: BackendOption = None,
    db: DbOption = None,
    url: UrlOption = None,
    prefix: PrefixOption = None,
    yes: YesFlag = False,
    dry_run: DryRunFlag = False,
    as_json: JsonFlag = False,
) -> int:
    """Empty a learn store (asks first; --yes in scripts).

    Example:

        praisonmem learn clear threads --user-id alice --dry-run
    """
    state = state_of(ctx)
    plan = learn.plan_clear(state.paths, store, scope=scope, user_id=user_id, timeout=state.lock_timeout,
                            source=source_of(backend, db, url, prefix))
    return confirm_and_run(state.output(as_json), plan, yes=yes, dry_run=dry_run)
