"""``praisonmem check``: validate PraisonAI trees for CI; never modifies anything."""

from __future__ import annotations

from typing import Annotated

import typer

from praisonmem.cli.options import JsonFlag
from praisonmem.cli.output import Output
from praisonmem.cli.progress import file_progress
from praisonmem.cli.state import state_of

STYLES = {"error": "bold red", "warning": "yellow", "info": "dim"}


def check_command(
    ctx: typer.Context,
    paths: Annotated[list[str] | None, typer.Argument(metavar="[PATH]...", help="Homes, session dirs, memory "
                                                                             "dirs or files (default: the resolved "
                                                                             "home and memory dir).")] = None,
    strict: Annotated[bool, typer.Option("--strict", help="Warnings fail the check too.")] = False,
    as_json: JsonFlag = False,
) -> None:
    """Check session files, FileMemory trees, learn stores and leftovers.

    Sessions: required keys and types, message shapes, tool calls paired with
    their results, the compaction index in range. FileMemory: exact item keys
    (the library crashes on extra keys), types, episodic file names that are
    real dates, config.json values the library would raise on or delete items
    for. Learn stores, spill files, quarantined and temp files. Exits 1 when an
    error is found (with --strict, a warning too), else 0. Nothing is written:
    FileMemory files are read under a shared flock on each file, as the
    library's readers do (a writer holding it past --lock-timeout is an error
    finding), and re-read when they do not parse.

    Example:

        praisonmem check ./fixtures/home --strict --json > check-report.json
    """
    from pathlib import Path

    from praisonmem.core.check import walk as check
    from praisonmem.core.errors import NotFound, UsageError

    if paths and any(not p.strip() for p in paths):
        raise UsageError("a PATH must not be empty")
    state = state_of(ctx)
    roots = [Path(p) for p in paths] if paths else check.default_roots(state.paths)
    if not roots:
        raise NotFound(f"nothing to check: no PraisonAI home at {state.paths.data.path} and no FileMemory at "
                       f"{state.paths.memory_dir} (give a PATH)")
    with file_progress("Checking") as progress:
        report = check.check(roots, progress=(lambda n: progress(n, None)) if progress else None,
                             paths=state.paths, timeout=state.lock_timeout)
    out = Output(no_color=state.no_color)
    if as_json:
        out.json(report.to_json(strict))
    else:
        for finding in report.findings:
            out.line(f"{finding.severity:<8}{finding.file}: {finding.message}", style=STYLES[finding.severity])
        out.line(f"checked {report.files_checked} file(s) in {len(report.roots)} location(s): "
                 f"{report.count('error')} error(s), {report.count('warning')} warning(s), "
                 f"{report.count('info')} note(s)", style="bold")
    if report.failed(strict):
        raise typer.Exit(1)


# A one-command app, so that the root can load `check` as it loads the groups.
app = typer.Typer(add_completion=False)
app.command("check")(check_command)
