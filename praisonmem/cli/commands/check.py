"""``praisonmem check``: validate PraisonAI trees for CI; never modifies anything."""

from __future__ import annotations

from typing import Annotated

import typer

from praisonmem.cli.options import JsonFlag
from praisonmem.cli.progress import file_progress
from praisonmem.cli.state import state_of
from praisonmem.core import check
from praisonmem.core.errors import EXIT_OK, EXIT_PROBLEMS

STYLES = {"error": "bold red", "warning": "yellow", "info": "dim"}


def check_command(
    ctx: typer.Context,
    paths: Annotated[list[str] | None, typer.Argument(metavar="[PATH]...", help="Homes, session dirs, memory "
                                                                             "dirs, project dirs (their "
                                                                             ".praisonai/memory) or files (default: "
                                                                             "the resolved home and memory dir).")
                                  ] = None,
    strict: Annotated[bool, typer.Option("--strict", help="Warnings fail the check too.")] = False,
    as_json: JsonFlag = False,
) -> int:
    """Check session files, FileMemory trees, learn stores and leftovers.

    Sessions: required keys and types, message shapes, tool calls paired with
    their results, the compaction index in range. FileMemory: exact item keys
    (the library crashes on extra keys), types, episodic file names that are
    real dates, config.json values the library would raise on or delete items
    for. Learn stores, spill files, quarantined and temp files. What an upgrade
    left where praisonaiagents 1.7.17 does not look (name-only history, raw-date
    episodic files, shared SQLite memory, user directories named by raw ids) is
    a warning, with the command that fixes it when there is one (see
    'praisonmem migrate'). Exits 1 when an
    error is found (with --strict, a warning too), else 0. Nothing is written:
    FileMemory files are read under a shared flock on each file, as the
    library's readers do (a writer holding it past --lock-timeout is an error
    finding), and re-read when they do not parse.

    Example:

        praisonmem check ./fixtures/home --strict --json > check-report.json
    """
    state = state_of(ctx)
    with file_progress("Checking") as progress:
        report = check.run(state.paths, paths, progress=(lambda n: progress(n, None)) if progress else None,
                           timeout=state.lock_timeout)
    out = state.output(as_json)
    if not out.document(report.to_json(strict)):
        for finding in report.findings:
            fix = f" (fix: {finding.fix})" if finding.fix else ""
            out.line(f"{finding.severity:<8}{finding.file}: {finding.message}{fix}", style=STYLES[finding.severity])
        out.line(f"checked {report.files_checked} file(s) in {len(report.roots)} location(s): "
                 f"{report.count('error')} error(s), {report.count('warning')} warning(s), "
                 f"{report.count('info')} note(s)", style="bold")
    return EXIT_PROBLEMS if report.failed(strict) else EXIT_OK


# A one-command app, so that the root can load `check` as it loads the groups.
app = typer.Typer(add_completion=False)
app.command("check")(check_command)
