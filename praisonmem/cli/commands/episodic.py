"""``praisonmem episodic``: dated episodes, one FileMemory file per local day."""

from __future__ import annotations

from typing import Annotated

import typer

from praisonmem.cli.options import (
    DryRunFlag,
    JsonFlag,
    MetaOption,
    NdjsonFlag,
    UserIdOption,
    YesFlag,
    parse_pairs,
    table_options,
)
from praisonmem.cli.output import fmt_time, render_outcome, warn
from praisonmem.cli.prompts import confirm_and_run
from praisonmem.cli.state import state_of
from praisonmem.core import memory

app = typer.Typer(help="Add, read and delete episodic memories (one file per local day).\n\nExample:\n\n"
                       "    praisonmem episodic get --days-back 30", no_args_is_help=True)

DateOption = Annotated[str | None, typer.Option("--date", metavar="YYYY-MM-DD",
                                                help="A local date; 2026-3-5 means 2026-03-05.")]


@app.command("add")
def add_command(
    ctx: typer.Context,
    text: Annotated[str, typer.Argument(metavar="TEXT", help="What happened.")],
    date: DateOption = None,
    importance: Annotated[float | None, typer.Option("--importance", metavar="F", help="0..1 (default 0.5).")] = None,
    meta: MetaOption = None,
    user_id: UserIdOption = None,
    as_json: JsonFlag = False,
) -> int:
    """Add an episode for a day (default: today, local time) and print its id.

    Example:

        praisonmem episodic add "Shipped the dashboard" --date 2026-3-5
    """
    metadata = parse_pairs(meta, "--meta")
    state = state_of(ctx)
    outcome = memory.add_episode(state.paths, state.setting("user_id", user_id), text, date=date,
                                 importance=importance, metadata=metadata, timeout=state.lock_timeout,
                                 cache=state.cache)
    return render_outcome(state.output(as_json), outcome, ids=True)


@app.command("get")
@table_options
def get_command(
    ctx: typer.Context,
    date: DateOption = None,
    days_back: Annotated[int | None, typer.Option("--days-back", min=1, max=36500, metavar="N",
                                                  help="Today and the N-1 days before (default 7).")] = None,
    user_id: UserIdOption = None,
    as_json: JsonFlag = False,
    as_ndjson: NdjsonFlag = False,
) -> None:
    """Show the episodes of one day, or of the last N local days (default 7), as get_episodic does.

    Example:

        praisonmem episodic get --days-back 30 --json
    """
    state = state_of(ctx)
    rows = memory.episodes(state.paths, state.setting("user_id", user_id), date=date, days_back=days_back,
                           timeout=state.lock_timeout)
    missing = state.paths.absent_memory()
    if missing:
        warn(missing)
    out = state.output(as_json, as_ndjson)
    if not out.records(rows):
        out.table(["DATE", "ID", "TIME", "TEXT"],
                  [[r["date"], r["item"]["id"], fmt_time(r["item"]["created_at"]),
                    r["item"]["content"]] for r in rows], truncate=["TEXT"])


@app.command("delete")
def delete_command(
    ctx: typer.Context,
    memory_id: Annotated[str, typer.Argument(metavar="ID", help="The episode's id.")],
    date: DateOption = None,
    user_id: UserIdOption = None,
    yes: YesFlag = False,
    dry_run: DryRunFlag = False,
    as_json: JsonFlag = False,
) -> int:
    """Delete an episode; without --date, today and the 29 days before are
    scanned, as delete_episodic does.

    Example:

        praisonmem episodic delete 5f0c1e2d3a4b5c6d --date 2026-03-05 --yes
    """
    state = state_of(ctx)
    plan = memory.plan_delete_episode(state.paths, state.setting("user_id", user_id), memory_id, date=date,
                                      timeout=state.lock_timeout, cache=state.cache)
    return confirm_and_run(state.output(as_json), plan, yes=yes, dry_run=dry_run)
