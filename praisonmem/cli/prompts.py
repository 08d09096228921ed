"""Confirmation for destructive commands: ask on a terminal, demand --yes otherwise."""

from __future__ import annotations

import sys

from praisonmem.core.errors import ConfirmationRequired, Refused


def _interactive() -> bool:
    try:
        return sys.stdin.isatty() and sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def confirm(question: str, *, yes: bool, dry_run: bool = False) -> None:
    """Return when the user agreed (or ``--yes``/``--dry-run``); otherwise refuse with exit 4."""
    if yes or dry_run:
        return
    if not _interactive():
        raise ConfirmationRequired(
            f"{question.rstrip('?')}: not confirmed, nothing changed (pass --yes in a non-interactive run, "
            "or --dry-run to see what would change)"
        )
    import typer

    from praisonmem.core.io.safetext import printable

    if not typer.confirm(printable(question), default=False, err=True):
        raise Refused("not confirmed; nothing changed")
