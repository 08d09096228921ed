"""The ``session`` Typer group and the SESSION argument shared by its commands."""

from __future__ import annotations

from typing import Annotated

import typer

app = typer.Typer(help="Inspect, search and manage PraisonAI sessions.", no_args_is_help=True)

def _complete_sessions(ctx: typer.Context, incomplete: str) -> list[str]:
    from praisonmem.cli.completion import sessions

    return sessions(ctx, incomplete)


SessionArg = Annotated[str, typer.Argument(metavar="SESSION", help="Session id, file stem, or path to a .json file.",
                                           autocompletion=_complete_sessions)]
