"""Confirmation for destructive commands: ask on a terminal, demand --yes otherwise."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from praisonmem.core.errors import ConfirmationRequired, Refused

if TYPE_CHECKING:
    from praisonmem.cli.output import Output
    from praisonmem.core.result import Plan


def _interactive() -> bool:
    try:
        return sys.stdin.isatty() and sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def interactive() -> bool:
    """A question can be asked: stdin and stderr are a terminal."""
    return _interactive()


def confirm(question: str | None, *, yes: bool, dry_run: bool = False) -> None:
    """Return when the user agreed (or ``--yes``/``--dry-run``, or there is nothing to ask); otherwise
    refuse with exit 4."""
    if question is None or yes or dry_run:
        return
    if not _interactive():
        asked = question.rstrip("?")
        raise ConfirmationRequired(  # the question starts a prompt's line, not an error's
            f"{asked[:1].lower() + asked[1:]}: not confirmed, nothing changed (pass --yes in a non-interactive run, "
            "or --dry-run to see what would change)"
        )
    import typer

    from praisonmem.core.io.safetext import printable

    from praisonmem.cli import interrupts

    with interrupts.waiting():
        agreed = typer.confirm(printable(question), default=False, err=True)
    if not agreed:
        raise Refused("not confirmed; nothing changed")


def confirm_and_run(out: Output, plan: Plan, *, yes: bool, dry_run: bool, progress: str | None = None,
                    minimum: int | None = None) -> int:
    """Say the plan's notes, ask its question, run it (with a progress bar named ``progress``), print what
    changed; the exit code."""
    from praisonmem.cli.output import note, render_outcome, warn
    from praisonmem.cli.progress import file_progress

    for message in plan.notes:
        note(message)
    for message in plan.warnings:
        warn(message)
    confirm(plan.question, yes=yes, dry_run=dry_run)
    if progress is None:
        return render_outcome(out, plan.run(dry_run=dry_run))
    with file_progress(progress, **({} if minimum is None else {"minimum": minimum})) as bar:
        outcome = plan.run(dry_run=dry_run, progress=bar)
    return render_outcome(out, outcome)
