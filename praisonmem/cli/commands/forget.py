"""``praisonmem forget``: erase a person, a session or an agent from every store, and prove nothing is left."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from praisonmem.cli.options import DryRunFlag, JsonFlag, YesFlag
from praisonmem.cli.state import state_of
from praisonmem.core.errors import EXIT_OK, EXIT_PROBLEMS, EXIT_REFUSED


def forget_command(
    ctx: typer.Context,
    user: Annotated[str | None, typer.Option("--user", metavar="ID", help="Every record whose owner is this "
                                                                          "user_id.")] = None,
    session: Annotated[str | None, typer.Option("--session", metavar="ID", help="This session everywhere it is "
                                                                                "kept, every copy.")] = None,
    agent: Annotated[str | None, typer.Option("--agent", metavar="NAME", help="Every record of this agent "
                                                                              "(name or id).")] = None,
    before: Annotated[str | None, typer.Option("--before", metavar="DATE", help="Only records older than DATE "
                                                                                "(YYYY-MM-DD[THH:MM[:SS]], UTC "
                                                                                "unless it has a zone).")] = None,
    dirs: Annotated[list[str] | None, typer.Option("--in", metavar="DIR", help="Look in DIR too (repeatable; the "
                                                                               "home and the current directory "
                                                                               "always).")] = None,
    stores: Annotated[list[str] | None, typer.Option("--store", metavar="URL", help="A conversation or state "
                                                                                   "store server too "
                                                                                   "(repeatable).")] = None,
    dbs: Annotated[list[str] | None, typer.Option("--db", metavar="URL", help="An Upsonic or learn database too "
                                                                             "(repeatable).")] = None,
    include_backups: Annotated[bool, typer.Option("--include-backups", help="Rewrite every praisonmem backup that "
                                                                            "holds the subject without it.")] = False,
    allow_unverified: Annotated[bool, typer.Option("--allow-unverified", help="Exit 0 although some store could not "
                                                                              "be verified (said in the "
                                                                              "report).")] = False,
    key_file: Annotated[str | None, typer.Option("--key-file", metavar="PATH", help="The key of encrypted sessions "
                                                                                    "(default: "
                                                                                    "PRAISONAI_SESSION_KEY).")] = None,
    dry_run: DryRunFlag = False,
    yes: YesFlag = False,
    as_json: JsonFlag = False,
) -> int:
    """Erase a user, a session or an agent from every store, and prove nothing is left.

    Looks in every store 'praisonmem locate' finds for the home, the current
    directory and each --in DIR, and in the configured and --store/--db
    servers: session stores (with their spill files and search index),
    FileMemory, SQLite memory, learn stores, Chroma memory, mem0 history,
    Upsonic storage and praisonmem's cache. Plans first (--dry-run prints
    every item store by store and changes nothing), asks (give --yes in
    scripts), journals the plan (a rerun after a kill finishes the job),
    erases through each store's own locks and transactions (SQLite text
    removed for good), then proves it: every store is read again and the raw
    bytes of its files are searched for the erased texts. Exits 0 only when
    every store is verified absent; 1 when residue remains or a store could not
    be verified (--allow-unverified accepts the latter); 4 when a running
    agent holds a lock. Backups that hold the subject are listed; with
    --include-backups each is rewritten without it.

    Example:

        praisonmem forget --user alice --dry-run
        praisonmem forget --user alice --include-backups --yes
        praisonmem forget --session support-1234 --before 2026-01-01 --yes --json
    """
    from praisonmem.cli.prompts import confirm, interactive
    from praisonmem.cli.render.forget import render_plan, render_result
    from praisonmem.core import forget

    state = state_of(ctx)
    subject = forget.subject_from(user, session, agent, before)
    planned = forget.plan_forget(state.paths, state.settings, subject, dirs=dirs or [],
                                 urls=[*(stores or []), *(dbs or [])], key_file=key_file, dry_run=dry_run,
                                 cache=state.cache)
    out = state.output(as_json)
    if dry_run:
        result = forget.execute(planned, dry_run=True)
        if not out.document(result.to_json()):
            render_plan(out, result)
        return EXIT_OK
    if not (yes or interactive()):
        confirm(planned.question(), yes=yes)  # refuses off a terminal, before anything is printed
    if not as_json:
        render_plan(out, forget.Result(planned))
    confirm(planned.question(), yes=yes)
    result = forget.execute(planned, include_backups=include_backups, allow_unverified=allow_unverified)
    if not out.document(result.to_json()):
        render_result(out, result)
    return exit_code(result)


def exit_code(result: Any) -> int:
    """0 verified, 1 not (a store that could not be written leaves residue the proof names), 4 when a store
    refused (a running agent holds its lock: the store's own message); each failure said on stderr."""
    from praisonmem.cli.output import error

    for failure in result.failures:
        error(f"{failure['store']} {failure['path']}: {failure['error']}")
    if any(f["exit_code"] == EXIT_REFUSED for f in result.failures):
        return EXIT_REFUSED
    return EXIT_OK if result.ok else EXIT_PROBLEMS


# A one-command app, so that the root can load `forget` as it loads the groups.
app = typer.Typer(add_completion=False)
app.command("forget")(forget_command)
