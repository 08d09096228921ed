"""``praisonmem workspace``: the workspace identity and every resolved path."""

from __future__ import annotations

from typing import Annotated

import typer

from praisonmem.cli.options import JsonFlag
from praisonmem.cli.state import state_of
from praisonmem.core import sessions

app = typer.Typer(help="Workspace identity and the paths praisonmem resolves.\n\nExample:\n\n"
                       "    praisonmem workspace id --agent \"Weather Bot\"", no_args_is_help=True)


@app.command("id")
def workspace_id_command(
    ctx: typer.Context,
    agent: Annotated[
        str | None, typer.Option("--agent", metavar="NAME", help="Also show this agent's history session.")
    ] = None,
    global_: Annotated[
        bool, typer.Option("--global", help="Global scope, as with PRAISONAI_GLOBAL_SESSIONS=true.")
    ] = False,
    as_json: JsonFlag = False,
) -> None:
    """Print the workspace id PraisonAI derives for the current directory.

    It is git:<root commit> inside a git repository, else dir:<real path>. In
    global scope (--global, or PRAISONAI_GLOBAL_SESSIONS=1|true|yes) it is
    "global". With --agent, also the history session an Agent with that name
    and history=True would use here, its file, whether it exists, and the
    legacy name-only ids that older releases used.

    Example:

        praisonmem workspace id --agent "Weather Bot" --json
    """
    state = state_of(ctx)
    result = sessions.describe_workspace(state.paths, agent, global_scope=global_)
    out = state.output(as_json)
    if out.document(result):
        return
    if agent is None:
        out.raw(result["workspace_id"])
        return
    rows = [
        ("workspace_id", result["workspace_id"]),
        ("global", "yes" if result["global"] else "no"),
        ("agent", str(result["agent"])),
        ("history_id", f"{result['history_id']} ({result['kind']})"),
        ("path", str(result["path"])),
        ("exists", "yes" if result["exists"] else "no"),
        ("legacy_sha256", result["legacy_ids"]["sha256"]),
        ("legacy_md5", result["legacy_ids"]["md5"]),
    ]
    width = max(len(k) for k, _ in rows)
    for key, value in rows:
        out.raw(f"{key:<{width}}  {value}")


@app.command("paths")
def paths_command(ctx: typer.Context, as_json: JsonFlag = False) -> None:
    """Print every path praisonmem resolved, the rule that chose it, and whether it exists.

    Sessions live under the PraisonAI data dir (--home, PRAISONAI_HOME,
    ~/.praisonai, ~/.praison, XDG_DATA_HOME). FileMemory does not: the library
    writes it under the project, ./.praisonai/memory (--memory-dir overrides).
    A database the config names (upsonic.db) is listed too, a URL's password
    masked. On a terminal each path is shown whole, with where it came from
    under it; piped, a tab-separated table (NAME, PATH, EXISTS, CHOSEN BY).

    Example:

        praisonmem workspace paths --json
    """
    state = state_of(ctx)
    rows = state.paths.rows()
    config = state.settings
    rows.append({"name": "config_file", "path": str(config.path), "source": config.path_source,
                 "exists": config.path.exists()})
    rows += config.database_rows()
    out = state.output(as_json)
    if out.document(rows):
        return
    exists = {True: "yes", False: "no", None: "-"}
    if not out.tty:
        out.table(["NAME", "PATH", "EXISTS", "CHOSEN BY"],
                  [[str(r["name"]), str(r["path"]), exists[r["exists"]], str(r["source"])] for r in rows])
        return
    # On a terminal, key/value: a path is never cut, whatever the width.
    existence = {True: "exists", False: "does not exist", None: "existence not checked"}
    out.pairs([(str(r["name"]), str(r["path"]), f"{existence[r['exists']]}; chosen by {r['source']}")
               for r in rows])
