"""``praisonmem config``: praisonmem's own settings file (TOML)."""

from __future__ import annotations

from typing import Annotated

import typer

from praisonmem.cli.options import JsonFlag, NdjsonFlag
from praisonmem.cli.output import Output, note
from praisonmem.cli.state import state_of

app = typer.Typer(help="Show and edit praisonmem's settings (config.toml).", no_args_is_help=True)

KeyArg = Annotated[str, typer.Argument(metavar="KEY", help="home, memory_dir, user_id, provider, output, "
                                                           "lock_timeout, upsonic.db, backup.dir or backup.keep.")]


@app.command("path")
def path_command(ctx: typer.Context, as_json: JsonFlag = False) -> None:
    """Print where the config file is (PRAISONMEM_CONFIG overrides it).

    Example:

        praisonmem config path
    """
    settings = state_of(ctx).settings
    out = Output(no_color=state_of(ctx).no_color)
    if as_json:
        out.json({"path": str(settings.path), "source": settings.path_source, "exists": settings.path.exists()})
    else:
        out.raw(str(settings.path))


@app.command("show")
def show_command(ctx: typer.Context, as_json: JsonFlag = False, as_ndjson: NdjsonFlag = False) -> None:
    """Show every setting, its value and where it came from (environment,
    config or default; flags apply per command).

    Example:

        praisonmem config show --json
    """
    from praisonmem.core.config import KEYS

    settings = state_of(ctx).settings
    rows = []
    for key, spec in KEYS.items():
        setting = settings.get(key)
        rows.append({"key": key, "value": setting.value, "source": setting.source, "env": spec.env,
                     "help": spec.help})
    out = Output(no_color=state_of(ctx).no_color)
    if not out.records(rows, as_json, as_ndjson):
        out.table(["KEY", "VALUE", "SOURCE", "ENV", "MEANING"],
                  [[r["key"], "" if r["value"] is None else str(r["value"]), r["source"], r["env"], r["help"]]
                   for r in rows], wrap=["MEANING"], optional=["MEANING", "ENV"])


@app.command("get")
def get_command(ctx: typer.Context, key: KeyArg, as_json: JsonFlag = False) -> None:
    """Print one setting's effective value (exit 3 when it is not set anywhere).

    Example:

        praisonmem config get backup.keep
    """
    from praisonmem.core.config import key_spec
    from praisonmem.core.errors import NotFound

    key_spec(key)
    setting = state_of(ctx).settings.get(key)
    if setting.value is None:  # the same exit code with or without --json
        raise NotFound(f"config key '{key}' is not set")
    out = Output(no_color=state_of(ctx).no_color)
    if as_json:
        out.json({"key": key, "value": setting.value, "source": setting.source})
    else:
        out.raw(str(setting.value))


@app.command("set")
def set_command(ctx: typer.Context, key: KeyArg, value: Annotated[str, typer.Argument(metavar="VALUE")],
                as_json: JsonFlag = False) -> None:
    """Set a key in the config file (validated, written atomically).

    The read-modify-write holds a lock on config.toml.lock (at most
    --lock-timeout, then exit 4), so concurrent sets never undo each other.

    Example:

        praisonmem config set upsonic.db ~/agents/data.db
    """
    from praisonmem.core.config import set_value

    settings = state_of(ctx).settings
    stored = set_value(settings.path, key, value, timeout=state_of(ctx).lock_timeout)
    out = Output(no_color=state_of(ctx).no_color)
    if as_json:
        out.json({"key": key, "value": stored, "path": str(settings.path)})
    else:
        note(f"set {key} = {stored!r} in {settings.path}")


@app.command("unset")
def unset_command(ctx: typer.Context, key: KeyArg, as_json: JsonFlag = False) -> None:
    """Remove a key from the config file (under the same lock as config set).

    Example:

        praisonmem config unset provider
    """
    from praisonmem.core.config import unset_value

    settings = state_of(ctx).settings
    removed = unset_value(settings.path, key, timeout=state_of(ctx).lock_timeout)
    out = Output(no_color=state_of(ctx).no_color)
    if as_json:
        out.json({"key": key, "removed": removed, "path": str(settings.path)})
    else:
        note(f"{'removed' if removed else 'was not set:'} {key}")
