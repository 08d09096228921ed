"""``praisonmem config``: praisonmem's own settings file (TOML)."""

from __future__ import annotations

from typing import Annotated

import typer

from praisonmem.cli.options import JsonFlag, NdjsonFlag, table_options
from praisonmem.cli.output import render_outcome
from praisonmem.cli.state import state_of
from praisonmem.core import config

app = typer.Typer(help="Show and edit praisonmem's settings (config.toml).\n\nExample:\n\n"
                       "    praisonmem config set backup.keep 14", no_args_is_help=True)

KeyArg = Annotated[str, typer.Argument(metavar="KEY", help="home, memory_dir, user_id, provider, output, "
                                                           "lock_timeout, upsonic.db, backup.dir or backup.keep.")]


@app.command("path")
def path_command(ctx: typer.Context, as_json: JsonFlag = False) -> None:
    """Print where the config file is (PRAISONMEM_CONFIG overrides it).

    Example:

        praisonmem config path
    """
    state = state_of(ctx)
    settings = state.settings
    out = state.output(as_json)
    if not out.document({"path": str(settings.path), "source": settings.path_source,
                         "exists": settings.path.exists()}):
        out.raw(str(settings.path))


@app.command("show")
@table_options
def show_command(ctx: typer.Context, as_json: JsonFlag = False, as_ndjson: NdjsonFlag = False) -> None:
    """Show every setting, its value and where it came from (environment,
    config or default; flags apply per command).

    Example:

        praisonmem config show --json
    """
    state = state_of(ctx)
    rows = state.settings.rows()
    out = state.output(as_json, as_ndjson)
    if not out.records(rows):
        out.table(["KEY", "VALUE", "SOURCE", "ENV", "MEANING"],
                  [[r["key"], _shown(r["key"], r["value"]), r["source"], r["env"], r["help"]]
                   for r in rows], truncate=["MEANING"], optional=["MEANING", "ENV"])


def _shown(key: str, value: object) -> str:
    """A setting as the config file spells it (``true``, not Python's ``True``); a directory left unset as the
    one it resolves to."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return config.default_of(key) or ""
    return str(value)


@app.command("get")
def get_command(ctx: typer.Context, key: KeyArg, as_json: JsonFlag = False) -> None:
    """Print one setting's effective value (exit 3 when it is not set anywhere).

    Example:

        praisonmem config get backup.keep
    """
    state = state_of(ctx)
    found = state.settings.lookup(key)
    out = state.output(as_json)
    if not out.document(found):
        out.raw(_shown(key, found["value"]))


@app.command("set", context_settings={"ignore_unknown_options": True})  # a VALUE such as -3 is not an option
def set_command(ctx: typer.Context, key: KeyArg, value: Annotated[str, typer.Argument(metavar="VALUE")],
                as_json: JsonFlag = False) -> int:
    """Set a key in the config file (validated, written atomically).

    A VALUE that starts with - is taken as the value (config set
    lock_timeout -3 is checked, and refused, as a number).

    The read-modify-write holds a lock on config.toml.lock (at most
    --lock-timeout, then exit 4), so concurrent sets never undo each other.

    Example:

        praisonmem config set upsonic.db ~/agents/data.db
    """
    state = state_of(ctx)
    return render_outcome(state.output(as_json), config.set_value(state.settings.path, key, value,
                                                                  timeout=state.lock_timeout))


@app.command("unset")
def unset_command(ctx: typer.Context, key: KeyArg, as_json: JsonFlag = False) -> int:
    """Remove a key from the config file (under the same lock as config set).

    Example:

        praisonmem config unset provider
    """
    state = state_of(ctx)
    return render_outcome(state.output(as_json), config.unset_value(state.settings.path, key,
                                                                    timeout=state.lock_timeout))
