"""Options shared by many commands, defined once."""

from __future__ import annotations

from typing import Annotated

import typer

JsonFlag = Annotated[bool, typer.Option("--json", help="Print one JSON document on stdout.")]
NdjsonFlag = Annotated[bool, typer.Option("--ndjson", help="Print one JSON object a line (streamed).")]
LimitOption = Annotated[int, typer.Option("--limit", min=0, metavar="N", help="Show at most N (0 = all).")]
DryRunFlag = Annotated[bool, typer.Option("--dry-run", help="Print what would change; change nothing.")]
YesFlag = Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")]
