"""``praisonmem migrate``: fix what an upgrade to praisonaiagents 1.7.17 left where the library no longer looks."""

from __future__ import annotations

import typer

from praisonmem.cli.options import DryRunFlag, JsonFlag, YesFlag
from praisonmem.cli.prompts import confirm_and_run
from praisonmem.cli.state import state_of
from praisonmem.core import migrate


def migrate_command(ctx: typer.Context, dry_run: DryRunFlag = False, yes: YesFlag = False,
                    as_json: JsonFlag = False) -> int:
    """Find everything in the home and this project that praisonaiagents 1.7.17
    will not load, and fix it.

    History named by the agent's name alone (1.6.157 and before) is adopted
    into this workspace, as 'session adopt' does (both files when the md5-
    and sha256-era ones exist; merged with the agent's history here, if
    any). Episodic files named by a raw date (2026-3-5.json, before 1.7.15),
    which 1.7.17 never reads and its cleanup deletes, are merged into the
    normalised file, each entry once. SQLite memory shared by every user
    (short_term.db, long_term.db; 1.7.0 and before) is split: each user's
    rows are copied into that user's own file; the shared files are kept.
    --dry-run lists every fix; without it the fixes are asked for first
    (--yes in scripts), each then made in its own lock or transaction, one
    change per fix. 'praisonmem check' reports the same findings.

    Example:

        praisonmem migrate --dry-run
    """
    state = state_of(ctx)
    plan = migrate.plan_migrate(state.paths, timeout=state.lock_timeout)
    return confirm_and_run(state.output(as_json), plan, yes=yes, dry_run=dry_run, progress="Migrating")


# A one-command app, so that the root can load `migrate` as it loads the groups.
app = typer.Typer(add_completion=False)
app.command("migrate")(migrate_command)
