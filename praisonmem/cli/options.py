"""Options shared by many commands, defined once."""

from __future__ import annotations

from typing import Annotated

import typer

JsonFlag = Annotated[bool, typer.Option("--json", help="Print one JSON document on stdout.")]
NdjsonFlag = Annotated[bool, typer.Option("--ndjson", help="Print one JSON object a line (streamed).")]
LimitOption = Annotated[int, typer.Option("--limit", min=0, metavar="N", help="Show at most N (0 = all).")]
DryRunFlag = Annotated[bool, typer.Option("--dry-run", help="Print what would change; change nothing.")]
YesFlag = Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")]


def _complete_users(ctx: typer.Context, incomplete: str) -> list[str]:
    from praisonmem.cli.completion import users

    return users(ctx, incomplete)


UserIdOption = Annotated[str | None, typer.Option("--user-id", metavar="U", autocompletion=_complete_users,
                                                  help="Memory user (default: 'default', as the praisonai CLI).")]
def _complete_providers(ctx: typer.Context, incomplete: str) -> list[str]:
    from praisonmem.cli.completion import providers

    return providers(ctx, incomplete)


def complete_memory_types(ctx: typer.Context, incomplete: str) -> list[str]:
    from praisonmem.cli.completion import memory_types

    return memory_types(ctx, incomplete)


ProviderOption = Annotated[str | None, typer.Option("--provider", metavar="P", autocompletion=_complete_providers,
                                                    help="file (default), sqlite, or a plug-in "
                                                         "(see 'memory providers').")]
MetaOption = Annotated[list[str] | None, typer.Option("--meta", metavar="KEY=VALUE",
                                                      help="Metadata to store (repeatable; values are strings).")]


def parse_pairs(values: list[str] | None, option: str) -> dict[str, str]:
    """``KEY=VALUE`` options into a dict; anything else is a usage error naming the option."""
    from praisonmem.core.errors import UsageError

    pairs: dict[str, str] = {}
    for value in values or []:
        key, sep, rest = value.partition("=")
        if not sep or not key:
            raise UsageError(f"{option} must be KEY=VALUE, got '{value}'")
        pairs[key] = rest
    return pairs
