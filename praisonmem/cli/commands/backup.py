"""``praisonmem backup``: create, verify, list and restore backups (cron-friendly)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from praisonmem.cli.options import DryRunFlag, JsonFlag, NdjsonFlag, YesFlag
from praisonmem.cli.output import Output, fmt_time, note, stdout_is_tty
from praisonmem.cli.progress import file_progress
from praisonmem.cli.prompts import confirm
from praisonmem.cli.state import state_of

app = typer.Typer(help="Back up sessions, spill files, learn stores and FileMemory; verify and restore.",
                  no_args_is_help=True)


def _backup_dir(ctx: typer.Context, given: str | None) -> Path:
    from praisonmem.core.backup.create import default_dir

    configured = state_of(ctx).setting("backup.dir", given)
    return Path(configured).expanduser() if configured else default_dir()


@app.command("create")
def create_command(
    ctx: typer.Context,
    output: Annotated[str | None, typer.Option("--output", "-o", metavar="DIR|FILE",
                                               help="Directory (a timestamped name is chosen), file, or '-' "
                                                    "for stdout (config backup.dir).")] = None,
    keep: Annotated[int | None, typer.Option("--keep", min=0, metavar="N",
                                             help="Then keep the N newest backups there: only those "
                                                  "praisonmem named count, newest by manifest time, and the "
                                                  "new one is never deleted (config backup.keep; 0 = keep "
                                                  "all; not with -, a pipe or a device).")] = None,
    include: Annotated[str | None, typer.Option("--include", metavar="LIST",
                                                help="Comma list of sessions,memory,learn (default: all).")] = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Say what was written (also on a terminal).")
                       ] = False,
    as_json: JsonFlag = False,
) -> None:
    """Write one praisonmem-backup-<UTC timestamp>.tar.gz: sessions (each read
    while holding its lock), spill files, learn stores and the FileMemory tree
    (each file read under a shared flock), with a manifest of sizes, modes and
    sha256 checksums.

    -o - streams the archive to stdout (never to a terminal) and a pipe or
    device is written to; --keep needs a directory. A FileMemory file that
    still does not parse after re-reading is archived as it is, marked
    damaged: the run exits 1 and deletes no old backup.

    Silent on success unless -v or on a terminal, so cron mails only failures.

    Example:

        praisonmem backup create -o ~/backups --keep 7
    """
    from praisonmem.cli.output import warn
    from praisonmem.core.backup import create as backup
    from praisonmem.core.io import outfile
    from praisonmem.core.errors import UsageError

    state = state_of(ctx)
    state.paths.require_home()
    target = _backup_dir(ctx, output)
    to_stdout = outfile.is_stdout(target)
    if to_stdout and as_json:
        from typer._click.core import ParameterSource

        if ctx.get_parameter_source("as_json") is ParameterSource.COMMANDLINE:
            raise UsageError("-o - writes the archive to stdout; --json cannot share it")
        as_json = False  # the configured JSON default does not apply to the archive itself
    # backup.keep from the config rotates a backup directory; a stream is not one.
    keep_n = keep if keep is not None else 0 if _writes_through(target) else state.setting("backup.keep")
    parts = backup.parse_include(include)
    for source in backup.missing_sources(state.paths, parts):
        warn(f"not backed up, no such directory: {source}")
    with file_progress("Backing up") as progress:
        result = backup.create(state.paths, output=target, include=parts, keep=keep_n,
                               timeout=state.lock_timeout, progress=progress, stdout=sys.stdout.buffer)
    out = Output(no_color=state.no_color)
    if as_json:
        out.json(result)
    elif to_stdout:
        if verbose:
            note(f"wrote a backup to stdout ({result['files']} files, {result['size']} bytes)")
    elif verbose or stdout_is_tty():
        out.raw(f"{result['path']}  ({result['files']} files, {result['size']} bytes)")
        for path in result["removed"]:
            out.raw(f"removed old backup {path}")
    for damage in result["damaged"]:
        warn(f"{damage['file']} did not parse even after re-reading it ({damage['problem']}): archived as it is "
             "and marked damaged")
    if result["damaged"]:
        warn("backup written but incomplete" + (", so no old backup was deleted" if keep_n else ""))
        raise typer.Exit(1)


def _writes_through(target: Path) -> bool:
    """``-``, a FIFO or a device: the archive streams there (and nothing rotates)."""
    from praisonmem.core.io import outfile
    from praisonmem.core.errors import PraisonMemError

    try:
        return outfile.kind(target) != "file"
    except PraisonMemError:
        return False  # create() says what is wrong with it


@app.command("verify")
def verify_command(
    ctx: typer.Context,
    file: Annotated[str, typer.Argument(metavar="FILE", help="A backup archive.")],
    as_json: JsonFlag = False,
) -> None:
    """Check an archive and every file's checksum; exit 1 naming each mismatch.

    Also fails on an entry outside the layout backup create writes and on a
    file marked damaged when it was backed up. Members are streamed, never
    read past their manifest size.

    Example:

        praisonmem backup verify ~/backups/praisonmem-backup-20261130T020000Z.tar.gz
    """
    from praisonmem.core.backup import archive as backup_archive

    with file_progress("Verifying") as progress:
        report = backup_archive.verify(Path(file), progress)
    out = Output(no_color=state_of(ctx).no_color)
    if as_json:
        out.json(report)
    else:
        for problem in report["problems"]:
            out.raw(f"{problem['path']}: {problem['problem']}")
        out.raw(f"{file}: {'OK' if report['ok'] else 'FAILED'} ({report['files']} files)")
    if not report["ok"]:
        raise typer.Exit(1)


@app.command("list")
def list_command(
    ctx: typer.Context,
    directory: Annotated[str | None, typer.Argument(metavar="[DIR]", help="Where to look (config backup.dir).")
                         ] = None,
    as_json: JsonFlag = False,
    as_ndjson: NdjsonFlag = False,
) -> None:
    """List backups, oldest first, with their date, size and file count.

    Example:

        praisonmem backup list ~/backups
    """
    from praisonmem.core.backup import create as backup

    rows = backup.list_backups(_backup_dir(ctx, directory))
    out = Output(no_color=state_of(ctx).no_color)
    if not out.records(rows, as_json, as_ndjson):
        out.table(["FILE", "CREATED", "SIZE", "FILES", "PROBLEM"],
                  [[r["file"], fmt_time(r["created_at"]) if r["created_at"] else "", str(r["size"]),
                    "" if r["files"] is None else str(r["files"]), r["error"] or ""] for r in rows],
                  optional=["PROBLEM"])


@app.command("restore")
def restore_command(
    ctx: typer.Context,
    file: Annotated[str, typer.Argument(metavar="FILE", help="A backup archive.")],
    to: Annotated[str | None, typer.Option("--to", metavar="DIR",
                                           help="Restore under DIR (DIR/home, DIR/memory) instead of the "
                                                "resolved home and memory dir.")] = None,
    on_conflict: Annotated[str, typer.Option("--on-conflict", metavar="skip|replace",
                                             help="When a file exists: skip it (default) or replace it.")] = "skip",
    dry_run: DryRunFlag = False,
    yes: YesFlag = False,
    as_json: JsonFlag = False,
) -> None:
    """Verify an archive, then restore its files with locked atomic writes.

    The whole archive is checked before anything is written. Only
    praisonmem's own layout is accepted, with or without --to: regular files
    under the roots the manifest lists (a file directly in home/sessions/ or
    home/state/session_spill/, any file below home/learn/ or memory/);
    anything else (absolute paths, '..', other top-level names, links,
    devices, lock and temp files, duplicates) is refused with exit 4, and a
    failed checksum exits 1, both with nothing written. Restored files are
    0600 and the directories restore creates 0700, whatever modes the archive
    claims. A session that does not parse is never replaced.

    Example:

        praisonmem backup restore praisonmem-backup-20261130T020000Z.tar.gz --to /tmp/restored --yes
    """
    from praisonmem.core.backup import restore as backup_restore

    state = state_of(ctx)
    target = Path(to) if to is not None else None
    with file_progress("Verifying") as progress:
        items = backup_restore.plan_restore(Path(file), state.paths, to=target, on_conflict=on_conflict,
                                            progress=progress)
    writing = [i for i in items if i.writes]
    if writing:
        replacing = sum(1 for i in writing if i.action == "replace")
        confirm(f"Restore {len(writing)} file(s)" + (f", replacing {replacing}" if replacing else "") + "?",
                yes=yes, dry_run=dry_run)
    if dry_run:
        results = [i.row() for i in items]
    else:
        with file_progress("Restoring") as progress:
            results = backup_restore.restore(Path(file), items, state.paths, to=target,
                                             timeout=state.lock_timeout, progress=progress)
    out = Output(no_color=state.no_color)
    if as_json:
        out.json(results)
    else:
        for row in results:
            prefix = "would " if dry_run else ""
            out.raw(f"{prefix}{row['action']} {row['target']}" + (f": {row['detail']}" if row["detail"] else ""))
    if any(r["action"] in ("failed", "fail") for r in results):
        raise typer.Exit(1)
