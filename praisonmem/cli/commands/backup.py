"""``praisonmem backup``: create, verify, list and restore backups (cron-friendly)."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from praisonmem.cli.options import DryRunFlag, JsonFlag, NdjsonFlag, YesFlag, table_options
from praisonmem.cli.output import (binary_stdout, fmt_size, note, plural, quiet, record_made, stdout_is_tty,
                                   warn)
from praisonmem.cli.progress import file_progress
from praisonmem.cli.prompts import confirm_and_run
from praisonmem.cli.state import state_of
from praisonmem.core import backup
from praisonmem.core.errors import EXIT_OK, EXIT_PROBLEMS, UsageError

app = typer.Typer(help="Back up sessions, spill files, learn stores and FileMemory; verify and restore.\n\n"
                       "Example:\n\n    praisonmem backup create -o ~/backups --keep 7", no_args_is_help=True)


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
                                                help="Comma list of sessions,memory,learn,chroma (default: all).")] = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Say what was written (also on a terminal).")
                       ] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="List what would be archived, with its size; write "
                                                            "nothing.")] = False,
    as_json: JsonFlag = False,
) -> int:
    """Write one praisonmem-backup-<UTC timestamp>.tar.gz: sessions (each read
    while holding its lock), spill files, learn stores and the FileMemory tree
    (each file read under a shared flock), with a manifest of sizes, modes and
    sha256 checksums.

    -o - streams the archive to stdout (never to a terminal) and a pipe or
    device is written to; --keep needs a directory. A FileMemory file that
    still does not parse after re-reading is archived as it is, marked
    damaged: the run exits 1 and deletes no old backup. praisonaiagents'
    Chroma directories (.praisonai/chroma_db*, .praisonai/knowledge/chroma)
    are archived whole, and only while no process has one open: one that is
    open is left out with a warning naming it and the process, and the run
    exits 1 (the rest is written); each archived one is checked by opening
    its copy with chromadb (without chromadb installed: through SQLite, its
    integrity and item counts; -v says so).

    Silent on success unless -v or on a terminal (and with -q even there), so
    cron mails only failures. A source that does not exist (most homes have no
    learn store) is left out quietly; -v says so, and a source named in
    --include that does not exist is a warning. A symbolic link is followed
    when it points inside the home (or the memory dir); one pointing elsewhere
    and a file no store writes are left out: -v names each, and the manifest
    lists them.

    --dry-run lists what would be archived instead: each file's name in the
    archive, its size now and where it comes from (a table; --json: the
    same records under "contents"), then on stderr where the archive would
    go and the bytes before compression. Nothing is written, created,
    locked or rotated.

    Example:

        praisonmem backup create -o ~/backups --keep 7
        praisonmem backup create --include sessions --dry-run
    """
    state = state_of(ctx)
    plan = backup.plan_create(state.paths, output=state.setting("backup.dir", output), include=include, keep=keep,
                              configured_keep=state.setting("backup.keep"))
    if dry_run:
        return _preview(state, plan, as_json, include is not None)
    if plan.to_stdout and as_json:
        raise UsageError("-o - writes the archive to stdout; --json cannot share it")
    out = state.output(as_json)
    for message in plan.warnings:  # a source most users do not have (a learn store) is not news, unless asked for
        if include is not None:
            warn(message)
        elif verbose:
            note(message)
    with file_progress("Backing up") as progress:
        result = plan.run(timeout=state.lock_timeout, progress=progress, stdout=binary_stdout())
    if verbose:  # a link out of the home, a file no store writes: in the manifest too, never left out silently
        for left in result["left_out"]:
            note(f"not backed up: {left['file']}: {left['reason']}")
    if not plan.to_stdout:  # said in the error line should the report below fail to print (stdout closed)
        record_made([f"wrote backup {result['path']}"])
    if plan.to_stdout:  # the configured JSON default does not apply to the archive itself
        if verbose:
            note(f"wrote a backup to stdout ({plural(result['files'], 'file')}, {fmt_size(result['size'])})")
    elif out.document(result):
        pass
    elif verbose or (stdout_is_tty() and not quiet()):
        out.raw(f"{result['path']}  ({plural(result['files'], 'file')}, {fmt_size(result['size'])})")
        for path in result["removed"]:
            out.raw(f"removed old backup {path}")
    if result["chroma_not_opened"] and (verbose or (stdout_is_tty() and not quiet())):
        stores = ", ".join(item["file"] for item in result["chroma_not_opened"])
        note(f"archived without chromadb (not installed), checked through SQLite only: {stores}; 'backup verify' "
             "opens them once it is installed: pip install 'praisonmem[chroma]'")
    for damage in result["damaged"]:
        warn(f"{damage['file']} did not parse even after re-reading it ({damage['problem']}): archived as it is "
             "and marked damaged")
    for refused in result["not_backed_up"]:  # one line each: what, why, and that the rest is there
        problem = refused["problem"]
        named = problem if problem.startswith(refused["file"]) else f"{refused['file']}: {problem}"
        warn(f"not backed up: {named}; the rest of the backup is written", always=True)
    if result["not_backed_up"] and not result["damaged"]:
        return EXIT_PROBLEMS
    if result["damaged"]:
        kept = ", so no old backup was deleted" if plan.keep else ""
        if quiet():  # the one line -q leaves: which files, and why, whole
            files = "; ".join(f"{d['file']} ({d['problem']})" for d in result["damaged"])
            many = len(result["damaged"]) > 1
            warn(f"backup written but incomplete{kept}: {'these files do' if many else 'this file does'} not parse, "
                 f"archived as {'they are' if many else 'it is'} and marked damaged: {files}", always=True)
        else:
            warn("backup written but incomplete" + kept, always=True)
        return EXIT_PROBLEMS
    return EXIT_OK


def _preview(state: Any, plan: Any, as_json: bool, warned: bool) -> int:
    """``backup create --dry-run``: the files the archive would hold, and where it would go."""
    preview = plan.preview()
    out = state.output(as_json)
    if warned:
        for message in plan.warnings:
            warn(message)
    if not out.document(preview):
        out.table(["PATH", "SIZE", "FILE"], [[f["path"], fmt_size(f["size"], out.tty), f["file"]]
                                             for f in preview["contents"]], optional=["FILE"])
    where = "stdout" if preview["path"] == "-" else preview["path"]
    note(f"would write {where}: {plural(preview['files'], 'file')}, {fmt_size(preview['size'])} before "
         "compression; nothing written")
    return EXIT_OK


@app.command("verify")
def verify_command(
    ctx: typer.Context,
    file: Annotated[str, typer.Argument(metavar="FILE", help="A backup archive.")],
    as_json: JsonFlag = False,
) -> int:
    """Check an archive and every file's checksum; exit 1 naming each mismatch.

    Also fails on an entry outside the layout backup create writes and on a
    file marked damaged when it was backed up. Members are streamed, never
    read past their manifest size.

    Example:

        praisonmem backup verify ~/backups/praisonmem-backup-20261130T020000Z.tar.gz
    """
    with file_progress("Verifying") as progress:
        report = backup.verify(file, progress)
    out = state_of(ctx).output(as_json)
    if not out.document(report):
        for problem in report["problems"]:
            out.raw(f"{problem['path']}: {problem['problem']}")
        out.raw(f"{file}: {'OK' if report['ok'] else 'FAILED'} ({report['files']} files)")
    return EXIT_OK if report["ok"] else EXIT_PROBLEMS


@app.command("list")
@table_options
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
    state = state_of(ctx)
    # the default or configured directory holds none before the first backup; one named here must exist
    rows = backup.list_backups(state.setting("backup.dir", directory), missing_ok=directory is None)
    out = state.output(as_json, as_ndjson)
    if out.records(rows):
        return
    if not rows and out.table_format == "table":  # a terminal: a sentence, not an empty table
        note(f"no backups in {backup.backup_dir(state.setting('backup.dir', directory))} yet; "
             "'praisonmem backup create' makes one")
        return
    from praisonmem.cli.render.backup import render_list

    render_list(out, rows)


@app.command("restore")
def restore_command(
    ctx: typer.Context,
    file: Annotated[str, typer.Argument(metavar="FILE", help="A backup archive.")],
    to: Annotated[str | None, typer.Option("--to", metavar="DIR",
                                           help="Restore under DIR (DIR/home, DIR/memory) instead of the "
                                                "resolved home and memory dir.")] = None,
    on_conflict: Annotated[backup.RestoreConflict, typer.Option(
        "--on-conflict", help="When a file exists: skip it (default) or replace it.")] = backup.RestoreConflict.skip,
    dry_run: DryRunFlag = False,
    yes: YesFlag = False,
    as_json: JsonFlag = False,
) -> int:
    """Verify an archive, then restore its files with locked atomic writes.

    The whole archive is checked before anything is written. Only
    praisonmem's own layout is accepted, with or without --to: regular files
    under the roots the manifest lists, by the names the stores write (a file
    directly in home/sessions/ or home/state/session_spill/, the learn stores
    below home/learn/, FileMemory's files below memory/); anything else
    (absolute paths, '..', other names, links, devices, lock and temp files,
    duplicates), a database that is not its store (a view or trigger in it)
    and a symbolic link in any directory below the one restored into are
    refused with exit 4, and a failed checksum exits 1, all with nothing
    written. Restored files are 0600 and the directories restore creates
    0700, whatever modes the archive claims. A session that does not parse is
    never replaced.

    Example:

        praisonmem backup restore praisonmem-backup-20261130T020000Z.tar.gz --to /tmp/restored --yes
    """
    state = state_of(ctx).creating_home()  # restoring into a fresh home creates it
    with file_progress("Verifying") as progress:
        plan = backup.plan_restore(file, state.paths, to=to, on_conflict=on_conflict, timeout=state.lock_timeout,
                                   progress=progress)
    return confirm_and_run(state.output(as_json), plan, yes=yes, dry_run=dry_run, progress="Restoring")
