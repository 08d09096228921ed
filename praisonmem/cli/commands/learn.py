"""``praisonmem learn``: the learn stores (persona, insights, threads, …) under the PraisonAI home."""

from __future__ import annotations

from enum import Enum
from typing import Annotated

import typer

from praisonmem.cli.options import DryRunFlag, JsonFlag, MetaOption, NdjsonFlag, YesFlag, parse_pairs
from praisonmem.cli.output import Output, fmt_time, warn
from praisonmem.cli.prompts import confirm
from praisonmem.cli.state import state_of

app = typer.Typer(help="List, add and remove learn-store entries (never bumping use_count).", no_args_is_help=True)


class LearnScope(str, Enum):
    private = "private"
    shared = "shared"


StoreArg = Annotated[str, typer.Argument(metavar="STORE",
                                         help="persona, insights, threads, patterns, decisions, feedback or "
                                              "improvements.")]
ScopeOption = Annotated[LearnScope | None, typer.Option("--scope", help="private (default for writes) or shared.")]
LearnUserOption = Annotated[str | None, typer.Option("--user-id", metavar="U",
                                                     help="Learn user (default for writes: 'default').")]


def _learn_dir(ctx: typer.Context):
    state = state_of(ctx)
    state.paths.require_home()
    return state.paths.learn_dir


def _store_path(ctx: typer.Context, store: str, scope: LearnScope | None, user_id: str | None):
    """The store a write goes to: private scope and the 'default' user unless given."""
    from praisonmem.core import learn

    return learn.store_path(_learn_dir(ctx), scope.value if scope else "private", user_id or "default", store)


@app.command("list")
def list_command(
    ctx: typer.Context,
    store: Annotated[str | None, typer.Option("--store", metavar="STORE", help="Only this store.")] = None,
    scope: ScopeOption = None,
    user_id: LearnUserOption = None,
    as_json: JsonFlag = False,
    as_ndjson: NdjsonFlag = False,
) -> None:
    """List learn entries (read-only: unlike the library's list_all, use_count is not bumped).

    Example:

        praisonmem learn list --store persona --user-id alice
    """
    from praisonmem.core import learn

    found, unreadable = learn.entries(_learn_dir(ctx), store=store, scope=scope.value if scope else None,
                                      user_id=user_id)
    for problem in unreadable:
        warn(f"skipped unreadable learn store {problem}")
    out = Output(no_color=state_of(ctx).no_color)
    rows = [e.to_json() for e in found]
    if not out.records(rows, as_json, as_ndjson):
        out.table(["STORE", "SCOPE", "USER", "ID", "UPDATED", "USES", "CONTENT"],
                  [[r["store"], r["scope"], r["user_id"], str(r.get("id")), fmt_time(r.get("updated_at"), short=True),
                    str(r.get("use_count", "")), str(r.get("content", ""))] for r in rows], wrap=["CONTENT"],
                  optional=["USES", "SCOPE", "UPDATED"])


@app.command("show")
def show_command(
    ctx: typer.Context,
    entry_id: Annotated[str, typer.Argument(metavar="ID", help="The entry's id.")],
    scope: ScopeOption = None,
    user_id: LearnUserOption = None,
    as_json: JsonFlag = False,
) -> None:
    """Show one learn entry.

    Example:

        praisonmem learn show persona_0_1796050189.525609
    """
    from praisonmem.core import learn

    entry = learn.find(_learn_dir(ctx), entry_id, scope=scope.value if scope else None, user_id=user_id)
    out = Output(no_color=state_of(ctx).no_color)
    if as_json:
        out.json(entry.to_json())
        return
    import json

    for key, value in entry.to_json().items():
        out.raw(f"{key:<11} {value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)}")


@app.command("add")
def add_command(
    ctx: typer.Context,
    store: StoreArg,
    text: Annotated[str, typer.Argument(metavar="TEXT", help="The learning.")],
    meta: MetaOption = None,
    scope: ScopeOption = None,
    user_id: LearnUserOption = None,
    as_json: JsonFlag = False,
) -> None:
    """Add an entry, with the library's dedup: the same text (trimmed, any case) is
    not added twice; its metadata is merged instead.

    Example:

        praisonmem learn add persona "Prefers concise answers" --meta category=style
    """
    from praisonmem.core import learn

    state = state_of(ctx)
    path = _store_path(ctx, store, scope, user_id)
    entry, new = learn.add(path, store, text, parse_pairs(meta, "--meta"), timeout=state.lock_timeout)
    out = Output(no_color=state.no_color)
    if as_json:
        out.json({**entry, "added": new, "file": str(path)})
    else:
        out.raw(entry["id"] if new else f"{entry['id']} (already there; not added again)")


@app.command("delete")
def delete_command(
    ctx: typer.Context,
    entry_id: Annotated[str, typer.Argument(metavar="ID", help="The entry's id.")],
    scope: ScopeOption = None,
    user_id: LearnUserOption = None,
    yes: YesFlag = False,
    dry_run: DryRunFlag = False,
    as_json: JsonFlag = False,
) -> None:
    """Delete one learn entry.

    Example:

        praisonmem learn delete insights_0_1796050189.530151 --yes
    """
    from praisonmem.core import learn

    state = state_of(ctx)
    entry = learn.find(_learn_dir(ctx), entry_id, scope=scope.value if scope else None, user_id=user_id)
    confirm(f"Delete learn entry '{entry_id}' from {entry.store}?", yes=yes, dry_run=dry_run)
    if not dry_run:
        learn.delete(entry.path, entry_id, timeout=state.lock_timeout)
    out = Output(no_color=state.no_color)
    if as_json:
        out.json({**entry.to_json(), "dry_run": dry_run})
    else:
        out.raw(f"{'would delete' if dry_run else 'deleted'} {entry_id} from {entry.path}")


@app.command("clear")
def clear_command(
    ctx: typer.Context,
    store: StoreArg,
    scope: ScopeOption = None,
    user_id: LearnUserOption = None,
    yes: YesFlag = False,
    dry_run: DryRunFlag = False,
    as_json: JsonFlag = False,
) -> None:
    """Empty a learn store (asks first; --yes in scripts).

    Example:

        praisonmem learn clear threads --user-id alice --dry-run
    """
    from praisonmem.core import learn

    state = state_of(ctx)
    path = _store_path(ctx, store, scope, user_id)
    count = learn.clear(path, dry_run=True)
    confirm(f"Remove all {count} entries of {path}?", yes=yes, dry_run=dry_run)
    if not dry_run:
        count = learn.clear(path, timeout=state.lock_timeout)
    out = Output(no_color=state.no_color)
    if as_json:
        out.json({"store": store, "file": str(path), "removed": count, "dry_run": dry_run})
    else:
        out.raw(f"{'would remove' if dry_run else 'removed'} {count} entries from {path}")
