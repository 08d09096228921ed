"""``praisonmem workspace``: the workspace identity and every resolved path."""

from __future__ import annotations

from typing import Annotated

import typer

from praisonmem.cli.options import JsonFlag
from praisonmem.cli.output import Output
from praisonmem.cli.state import state_of

app = typer.Typer(help="Workspace identity and the paths praisonmem resolves.", no_args_is_help=True)


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
    from praisonmem.core.sessions import workspace as ws

    state = state_of(ctx)
    is_global = global_ or ws.global_from_env()
    wid = "global" if is_global else ws.workspace_id()
    result: dict[str, object] = {"workspace_id": wid, "global": is_global}
    if agent is not None:
        sessions_dir = state.paths.sessions_dir
        choice = ws.choose_history_id(agent, sessions_dir, workspace=wid, global_scope=is_global)
        path = sessions_dir / ws.session_file_name(choice.session_id)
        result.update(
            agent=choice.agent,
            history_id=choice.session_id,
            path=str(path),
            exists=path.is_file(),
            legacy_ids=choice.legacy,
            kind=choice.kind,
        )
    out = Output(no_color=state.no_color)
    if as_json:
        out.json(result)
    elif agent is None:
        out.raw(wid)
    else:
        rows = [
            ("workspace_id", wid),
            ("global", "yes" if is_global else "no"),
            ("agent", str(result["agent"])),
            ("history_id", f"{result['history_id']} ({result['kind']})"),
            ("path", str(result["path"])),
            ("exists", "yes" if result["exists"] else "no"),
            ("legacy_sha256", choice.legacy["sha256"]),
            ("legacy_md5", choice.legacy["md5"]),
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

    Example:

        praisonmem workspace paths --json
    """
    state = state_of(ctx)
    rows = state.paths.rows()
    config = state.settings
    rows.append({"name": "config_file", "path": str(config.path), "source": config.path_source,
                 "exists": config.path.exists()})
    out = Output(no_color=state.no_color)
    if as_json:
        out.json(rows)
        return
    out.table(
        ["NAME", "PATH", "EXISTS", "CHOSEN BY"],
        [[str(r["name"]), str(r["path"]), "yes" if r["exists"] else "no", str(r["source"])] for r in rows],
    )
