"""``praisonmem locate``: every store on this machine that PraisonAI, praisonai, Upsonic or mem0 wrote (read-only)."""

from __future__ import annotations

from typing import Annotated

import typer

from praisonmem.cli.options import JsonFlag, NdjsonFlag, table_options
from praisonmem.cli.output import warn
from praisonmem.cli.state import state_of
from praisonmem.core import locate
from praisonmem.core.errors import EXIT_OK, EXIT_PROBLEMS


def locate_command(
    ctx: typer.Context,
    dirs: Annotated[list[str] | None, typer.Argument(metavar="[DIR]...", help="Directories to walk as well "
                                                                             "(default: the current directory).",
                                                     show_default=False)] = None,
    depth: Annotated[int, typer.Option("--depth", metavar="N", help="Walk at most N directory levels below each DIR "
                                                                    "and home (0: the directory itself).")
                     ] = locate.DEFAULT_DEPTH,
    connect: Annotated[bool, typer.Option("--connect", help="Check that each configured server answers (a few "
                                                            "seconds each) and say why not.")] = False,
    as_json: JsonFlag = False,
    as_ndjson: NdjsonFlag = False,
) -> int:
    """List every PraisonAI, praisonai, Upsonic and mem0 store on this machine.

    Looks in every home the library could resolve (PRAISONAI_HOME,
    ~/.praisonai, the legacy ~/.praison, $XDG_DATA_HOME/praisonai), in
    mem0's directory ($MEM0_DIR, else ~/.mem0), in the stores the config
    and PraisonAI's environment name, and in each DIR. Stores are told by
    their content: an SQLite file by its tables, a JSON directory by its
    documents' first bytes. For each: its path, kind, library, size, last
    write, what it holds, the praisonmem command that reaches it, and flags:
    orphan (a per-run FileMemory user of Agent(memory=True) without a
    user_id; a legacy home the library no longer reads), unreachable (a
    home the library does not resolve now), absent (configured, not there).
    Configured servers are listed with their passwords masked; --connect
    checks them. No symbolic link is followed; .git, node_modules,
    __pycache__ and virtualenvs are skipped. Changes nothing on disk.
    Exits 1 when a directory could not be read (each named on stderr).
    --columns picks among the stores' columns (the servers are then left
    out: --json lists them); --ndjson prints one object a line, each store's
    and each server's with "record": "store" or "server".

    Example:

        praisonmem locate ~/projects --depth 4
        praisonmem locate --connect --json
    """
    state = state_of(ctx)
    report = locate.locate(state.paths, state.settings, dirs or [], depth=depth, connect=connect,
                           timeout=state.lock_timeout)
    out = state.output(as_json, as_ndjson)
    if out.as_ndjson:  # one stream of both kinds, each record saying which it is
        out.ndjson([{"record": "store", **s.to_json()} for s in report.stores] +
                   [{"record": "server", **s.to_json()} for s in report.servers])
    if not out.machine or out.as_ndjson:  # the JSON document lists them; a stream of records does not
        for skipped in report.skipped:
            warn(f"cannot read {skipped.path}: {skipped.reason}", always=True)
    if not out.machine:
        from praisonmem.cli.render.locate import render_report

        render_report(out, report)
    elif not out.as_ndjson:
        out.json(report.to_json())
    return EXIT_PROBLEMS if report.failed else EXIT_OK


# A one-command app, so that the root can load `locate` as it loads the groups.
app = typer.Typer(add_completion=False)
app.command("locate")(table_options(locate_command))
