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
    check_importance,
    parse_pairs,
)
from praisonmem.cli.output import Output, fmt_time
from praisonmem.cli.prompts import confirm
from praisonmem.cli.state import state_of

app = typer.Typer(help="Add, read and delete episodic memories (one file per local day).", no_args_is_help=True)

DateOption = Annotated[str | None, typer.Option("--date", metavar="YYYY-MM-DD",
                                                help="A local date; 2026-3-5 means 2026-03-05.")]


def _store(ctx: typer.Context, user_id: str | None):
    from praisonmem.core.memory.filememory import FileMemoryStore

    state = state_of(ctx)
    return FileMemoryStore(state.paths.memory_dir, state.user_id(user_id), timeout=state.lock_timeout)


@app.command("add")
def add_command(
    ctx: typer.Context,
    text: Annotated[str, typer.Argument(metavar="TEXT", help="What happened.")],
    date: DateOption = None,
    importance: Annotated[float | None, typer.Option("--importance", metavar="F", help="0..1 (default 0.5).")] = None,
    meta: MetaOption = None,
    user_id: UserIdOption = None,
    as_json: JsonFlag = False,
) -> None:
    """Add an episode for a day (default: today, local time) and print its id.

    Example:

        praisonmem episodic add "Shipped the dashboard" --date 2026-3-5
    """
    from praisonmem.core.errors import UsageError

    if not text.strip():
        raise UsageError("the episode text must not be empty")
    check_importance(importance)
    metadata = parse_pairs(meta, "--meta")
    day, item = _store(ctx, user_id).add_episodic(text, date, metadata, 0.5 if importance is None else importance)
    out = Output(no_color=state_of(ctx).no_color)
    out.json({"date": day, "item": item}) if as_json else out.raw(item["id"])


@app.command("get")
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
    from praisonmem.core.errors import UsageError
    from praisonmem.core.memory.filememory import local_dates, normalise_date, normalised_item

    if date is not None and days_back is not None:
        raise UsageError("give --date or --days-back, not both")
    store = _store(ctx, user_id)
    days = [normalise_date(date)] if date is not None else local_dates(days_back or 7)
    rows = [{"date": day, "item": normalised_item(item)} for day in days
            for item in store.episodes(day)]
    out = Output(no_color=state_of(ctx).no_color)
    if not out.records(rows, as_json, as_ndjson):
        out.table(["DATE", "ID", "TIME", "TEXT"],
                  [[r["date"], r["item"]["id"], fmt_time(r["item"]["created_at"], short=out.tty),
                    r["item"]["content"]] for r in rows], wrap=["TEXT"])


@app.command("delete")
def delete_command(
    ctx: typer.Context,
    memory_id: Annotated[str, typer.Argument(metavar="ID", help="The episode's id.")],
    date: DateOption = None,
    user_id: UserIdOption = None,
    yes: YesFlag = False,
    dry_run: DryRunFlag = False,
    as_json: JsonFlag = False,
) -> None:
    """Delete an episode; without --date, today and the 29 days before are
    scanned, as delete_episodic does.

    Example:

        praisonmem episodic delete 5f0c1e2d3a4b5c6d --date 2026-03-05 --yes
    """
    from praisonmem.core.errors import NotFound
    from praisonmem.core.memory.filememory import DELETE_DAYS, local_dates, normalise_date

    store = _store(ctx, user_id)
    days = [normalise_date(date)] if date is not None else local_dates(DELETE_DAYS)
    day = next((d for d in days if any(isinstance(i, dict) and i.get("id") == memory_id
                                       for i in store.episodes(d))), None)
    if day is None:
        scope = f"on {days[0]}" if date is not None else f"in the last {DELETE_DAYS} days"
        raise NotFound(f"no episode '{memory_id}' {scope} for user '{store.user_id}'")
    confirm(f"Delete episode '{memory_id}' of {day}?", yes=yes, dry_run=dry_run)
    if not dry_run and store.delete_episodic(memory_id, day) is None:
        raise NotFound(f"episode '{memory_id}' disappeared before it could be deleted")
    out = Output(no_color=state_of(ctx).no_color)
    if as_json:
        out.json({"type": "episodic", "id": memory_id, "date": day, "dry_run": dry_run})
    else:
        out.raw(f"{'would delete' if dry_run else 'deleted'} episode {memory_id} of {day}")
