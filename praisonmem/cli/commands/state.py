"""``praisonmem state``: praisonai's Redis state store (runs, traces, spans, agent records under ``praison:``)."""

from __future__ import annotations

from typing import Annotated

import typer

from praisonmem.cli.options import DryRunFlag, JsonFlag, NdjsonFlag, YesFlag, table_options
from praisonmem.cli.output import binary_stdout, plural, report_written, warn
from praisonmem.cli.prompts import confirm_and_run
from praisonmem.cli.state import state_of
from praisonmem.core import state as store_state

app = typer.Typer(help="List, show, delete, export and import the keys of praisonai's Redis state store "
                       "(RedisStateStore: runs, traces, spans, agent records).\n\nExample:\n\n"
                       "    praisonmem state list --store redis://localhost:6379/0", no_args_is_help=True)

StoreOption = Annotated[str, typer.Option("--store", metavar="URL",
                                          help="redis://, rediss:// or unix:// URL of the database.")]
PrefixOption = Annotated[str | None, typer.Option("--prefix", metavar="P",
                                                  help="Key prefix (default praison:, the library's).")]
SessionOption = Annotated[str | None, typer.Option("--session", metavar="S",
                                                   help="Only session S: its runs, agent record, traces and "
                                                        "their spans.")]


@app.command("list")
@table_options
def list_command(
    ctx: typer.Context,
    store: StoreOption,
    prefix: PrefixOption = None,
    kind: Annotated[store_state.KindFilter, typer.Option("--kind", help="Only keys of this kind.")] = (
        store_state.KindFilter.all),
    session: SessionOption = None,
    as_json: JsonFlag = False,
    as_ndjson: NdjsonFlag = False,
) -> None:
    """List the keys (SCAN, never KEYS; read-only): kind, session and run, type, TTL, size, last update.

    Example:

        praisonmem state list --store redis://localhost:6379/0 --kind run --session s1
    """
    state = state_of(ctx)
    found = store_state.list_keys(store, prefix=prefix, kind=kind, session=session)
    for item in found:
        if item.problem:
            warn(f"key '{item.key}' cannot be read by the state store: {item.problem}")
    out = state.output(as_json, as_ndjson)
    rows = [item.to_json() for item in found]
    if not out.records(rows):
        from praisonmem.cli.render.state import render_keys

        render_keys(out, rows)


@app.command("show")
def show_command(
    ctx: typer.Context,
    key: Annotated[str, typer.Argument(metavar="KEY", help="The library's key (run:S:R, trace:T, …) or the "
                                                           "Redis key, prefix included.")],
    store: StoreOption,
    prefix: PrefixOption = None,
    as_json: JsonFlag = False,
) -> None:
    """Show one key: its value as the library's get() (a string) or hgetall()
    (a hash) returns it.

    Example:

        praisonmem state show run:s1:r1 --store redis://localhost:6379/0
    """
    state = state_of(ctx)
    row = store_state.show_key(store, key, prefix=prefix).shown()
    if row["problem"]:
        warn(f"key '{row['key']}' cannot be read by the state store: {row['problem']}")
    out = state.output(as_json)
    if out.document(row):
        return
    from praisonmem.cli.render.state import render_key

    render_key(out, row)


@app.command("delete")
def delete_command(
    ctx: typer.Context,
    store: StoreOption,
    keys: Annotated[list[str] | None, typer.Argument(metavar="[KEY]...", help="Keys to delete.")] = None,
    prefix: PrefixOption = None,
    session: SessionOption = None,
    yes: YesFlag = False,
    dry_run: DryRunFlag = False,
    as_json: JsonFlag = False,
) -> int:
    """Delete keys, or a session's keys, at once and only as they were shown: a
    writer that changed one meanwhile makes it refuse (exit 4) with nothing
    deleted. Asks first (--yes in scripts).

    Example:

        praisonmem state delete --session s1 --store redis://localhost:6379/0 --dry-run
    """
    state = state_of(ctx)
    plan = store_state.plan_delete(store, list(keys or []), prefix=prefix, session=session)
    return confirm_and_run(state.output(as_json), plan, yes=yes, dry_run=dry_run)


@app.command("export")
def export_command(
    ctx: typer.Context,
    store: StoreOption,
    prefix: PrefixOption = None,
    output: Annotated[str | None, typer.Option("--output", "-o", metavar="FILE",
                                               help="Write here instead of stdout: '-' is stdout, a pipe or "
                                                    "device is written to, a regular file is replaced "
                                                    "atomically.")] = None,
    as_json: JsonFlag = False,
) -> None:
    """Export every key under the prefix as JSON lines: type, TTL, the instant
    it expires, and its value byte for byte ('state import' restores them).

    With -o FILE, --json prints a summary of what was written.

    Example:

        praisonmem state export --store redis://localhost:6379/0 -o state.jsonl
    """
    state = state_of(ctx)
    summary = store_state.export_to(store, "-" if output is None else output, prefix=prefix, stdout=binary_stdout())
    for key in summary["left_out"]:
        warn(f"not exported: key {key}, a type the state store never writes and an export cannot hold")
    report_written(state.output(as_json), summary, output,
                   f"exported {plural(summary['keys'], 'key')} ({summary['with_ttl']} with a TTL) to {output}")


@app.command("import")
def import_command(
    ctx: typer.Context,
    file: Annotated[str, typer.Argument(metavar="FILE", help="A 'praisonmem state export' file ('-': stdin).")],
    store: StoreOption,
    dry_run: DryRunFlag = False,
    as_json: JsonFlag = False,
) -> int:
    """Import an export: every key written in one transaction, each expiring
    when it would have (one already expired is skipped); refused, with nothing
    written, if any key is there already.

    Example:

        praisonmem state import state.jsonl --store redis://localhost:6379/1
    """
    state = state_of(ctx)
    plan = store_state.plan_import(store, file)
    return confirm_and_run(state.output(as_json), plan, yes=True, dry_run=dry_run)
