"""``praisonmem check``: validate PraisonAI trees for CI; never modifies anything."""

from __future__ import annotations

from typing import Annotated

import typer

from praisonmem.cli.options import JsonFlag, paged
from praisonmem.cli.progress import file_progress
from praisonmem.cli.state import State, state_of
from praisonmem.core import check
from praisonmem.core.errors import EXIT_OK, EXIT_PROBLEMS, UsageError


def check_command(
    ctx: typer.Context,
    paths: Annotated[list[str] | None, typer.Argument(metavar="[PATH]...", help="Homes, session dirs, memory "
                                                                             "dirs, project dirs (their "
                                                                             ".praisonai/memory) or files (default: "
                                                                             "the resolved home and memory dir).")
                                  ] = None,
    strict: Annotated[bool, typer.Option("--strict", help="Warnings fail the check too.")] = False,
    secrets: Annotated[bool, typer.Option("--secrets", help="Scan for secrets (API keys, tokens, passwords, "
                                                            "private keys, e-mail addresses, phone numbers) "
                                                            "instead.")] = False,
    level: Annotated[check.SecretLevel, typer.Option("--level", help="With --secrets: the rule set (strict adds "
                                                                     "national phone numbers and any "
                                                                     "high-entropy token).")
                     ] = check.SecretLevel.standard,
    upsonic_db: Annotated[str | None, typer.Option("--upsonic-db", metavar="PATH|URL",
                                                   help="With --secrets: also scan this Upsonic database's user "
                                                        "traits and sessions (config: upsonic.db).")] = None,
    as_json: JsonFlag = False,
) -> int:
    """Check session files, FileMemory trees, learn stores and leftovers.

    Sessions: required keys and types, message shapes, tool calls paired with
    their results, the compaction index in range; the praisonai CLI's project
    stores, REPL/TUI files and run directories as their own readers need
    them; each search index (sessions_index.db) against the sessions beside
    it (rows of sessions that are gone, sessions it lacks or holds older
    than they are). Encrypted sessions are noted, not faulted. FileMemory: exact item keys
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

    --secrets scans instead for secrets in session messages, titles, metadata
    and spilled turns (every store), FileMemory items and SQLite memory
    rows, learn entries and, with
    --upsonic-db (or the config's upsonic.db), Upsonic user traits and
    sessions. Each PATH is then a PraisonAI home. A finding names the store,
    the session (or memory user, learn entry, Upsonic user), the message
    index and field, the kind, and an excerpt with the secret masked: no
    output, JSON included, holds the secret itself. A file that does not
    parse (a torn session, a quarantined *.corrupt-* copy) is searched as raw
    bytes. Exits 1 when any is found, or when a file could not be read at
    all (named as not scanned): a CI gate for memory fixtures, which does not
    pass without looking. See 'praisonmem session scan' for the rules.

    Example:

        praisonmem check ./fixtures/home --strict --json > check-report.json
        praisonmem check --secrets ./fixtures/home
    """
    state = state_of(ctx)
    if secrets:
        return _secrets(state, paths or [], level, upsonic_db, as_json)
    if level is not check.SecretLevel.standard or upsonic_db is not None:
        raise UsageError("--level and --upsonic-db go with --secrets")
    with file_progress("Checking") as progress:
        report = check.run(state.paths, paths, progress=(lambda n: progress(n, None)) if progress else None,
                           timeout=state.lock_timeout)
    out = state.output(as_json)
    if not out.document(report.to_json(strict)):
        from praisonmem.cli.render.check import render_findings

        render_findings(out, report)
    return EXIT_PROBLEMS if report.failed(strict) else EXIT_OK


def _secrets(state: State, homes: list[str], level: str, upsonic_db: str | None, as_json: bool) -> int:
    from praisonmem.cli.render.secrets import render_findings, summary, warn_unscanned

    report = check.scan_secrets(state.paths, homes, level=level, upsonic_db=upsonic_db or state.setting("upsonic.db"),
                                timeout=state.lock_timeout, configured=upsonic_db is None)
    out = state.output(as_json)
    if not out.document(report.to_json()):
        render_findings(out, report.findings, report.unreadable, report.raw)
        out.line(summary(report), style="bold")
    else:
        warn_unscanned(report.unreadable, report.raw)
    return EXIT_PROBLEMS if report.failed else EXIT_OK


# A one-command app, so that the root can load `check` as it loads the groups.
app = typer.Typer(add_completion=False)
app.command("check")(paged(check_command))
