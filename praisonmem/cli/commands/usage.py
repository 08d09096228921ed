"""``praisonmem usage``: tokens, cost and turns the sessions recorded, grouped and totalled (read-only)."""

from __future__ import annotations

from typing import Annotated

import typer

from praisonmem.cli.options import JsonFlag, NdjsonFlag, table_options
from praisonmem.cli.output import note, warn
from praisonmem.cli.progress import file_progress
from praisonmem.cli.state import state_of
from praisonmem.core import usage
from praisonmem.core.errors import EXIT_OK, EXIT_PROBLEMS


def usage_command(
    ctx: typer.Context,
    by: Annotated[usage.GroupBy, typer.Option("--by", help="Group by the UTC day, ISO week or month of each "
                                                           "session's last write, or by model, agent, user or "
                                                           "session.")] = usage.GroupBy.day,
    since: Annotated[str | None, typer.Option("--since", metavar="WHEN", help="Only sessions last written at or "
                                                                              "after WHEN: a duration back from "
                                                                              "now (7d, 12h, 2w, 30m), a day "
                                                                              "(YYYY-MM-DD, UTC) or an ISO "
                                                                              "date-time.")] = None,
    until: Annotated[str | None, typer.Option("--until", metavar="WHEN", help="Only sessions last written before "
                                                                              "WHEN (the same forms; a day is "
                                                                              "included).")] = None,
    store: Annotated[list[str] | None, typer.Option(
        "--store", metavar="STORE|DB", help="Only this store (repeatable): a store of the home (json, sessions.db, "
                                            "project:<id>, unified, legacy-run), a directory of JSON sessions, "
                                            "PraisonAI's SQL conversation store or an Upsonic database (a path, "
                                            "sqlite:///PATH or postgresql://…, told apart by their tables). "
                                            "Default: every store of the home, and the configured upsonic.db.")
    ] = None,
    as_csv: Annotated[bool, typer.Option("--csv", help="Print the rows as CSV (a header line, no totals row); "
                                                       "short for --format csv.")] = False,
    as_json: JsonFlag = False,
    as_ndjson: NdjsonFlag = False,
) -> int:
    """Report the tokens, cost and turns the sessions recorded, with totals.

    The figures are what each session's writer recorded, never estimated:
    praisonaiagents' metadata.total_tokens and cost (the Agent's running
    totals, no prompt/completion split), a metadata.usage object, the unified
    CLI session's total_input_tokens, total_output_tokens and total_cost,
    per-message usage when a session records no total, and Upsonic's usage
    column (for a session without one, its runs' rows in the usage
    registry's ledger, upsonic_usage_entries; a ledger row of no session's
    run is said, not counted). A session that recorded nothing (or only zeros, which is what the
    library writes when it did not count) is counted under "without usage",
    never as zero. A sum adds only the sessions that recorded that figure; a
    blank cell means none did. Turns are user messages, archived ones too.
    Periods are UTC, of each session's last write. A session the JSON files
    and sessions.db both hold counts once (the copy written last among
    those that recorded usage). Unreadable
    sessions are reported on stderr and left out; so is the configured
    upsonic.db when its server cannot be reached (exit 1). On a terminal, a bar chart
    of the tokens per period follows the table.

    Example:

        praisonmem usage --by month --since 2026-01-01
        praisonmem usage --since 7d
        praisonmem usage --by model --store upsonic.db --json
    """
    state = state_of(ctx)
    out = state.output(as_json, as_ndjson, as_csv=as_csv)
    upsonic_db = None if store else state.setting("upsonic.db")
    with file_progress("Reading sessions") as progress:
        report = usage.usage_report(state.paths, by=by, since=since, until=until, stores=store,
                                    upsonic_db=upsonic_db, timeout=state.lock_timeout, progress=progress)
    for bad in report.unreadable:
        warn(f"skipped unreadable session {bad['file']} ({bad['store']}): {bad['error']}")
    for down in report.unreachable:
        said = down["error"] if down["store"] in down["error"] else f"{down['store']}: {down['error']}"
        warn(f"the configured upsonic.db is left out: {said}; the rest is reported", always=True)
    code = EXIT_PROBLEMS if report.unreachable else EXIT_OK
    if out.format == "csv":
        from praisonmem.cli.render.usage import render_csv

        render_csv(report, out.columns)
        return code
    if out.records(report.to_json()["rows"]) if out.as_ndjson else out.document(report.to_json()):
        return code
    from praisonmem.cli.render.usage import render_report

    if report.missing:
        note(report.missing)
    render_report(out, report)
    return code


# A one-command app, so that the root can load `usage` as it loads the groups.
app = typer.Typer(add_completion=False)
app.command("usage")(table_options(usage_command))
