"""The browser's write actions: ``r`` rename/retitle, ``d`` delete, ``x`` redact, ``e`` export.

Each goes through the same core call as its command (``session rename``, ``session rename --title``,
``session delete``, ``session redact``, ``session export``; ``memory delete`` for a memory item), with the
arguments the command would pass (the selection's store, lock timeout, cache and session key), in four steps:

1. a form for what the command takes as arguments (:mod:`.forms`), when it takes any;
2. the plan: what the command's ``--dry-run`` prints, worded by ``cli/output.py``'s ``change_line`` as the
   command words it, with the command's question, in the confirmation modal (:mod:`.confirm`);
3. on yes, the write, in a thread worker (a lock an agent holds is waited for up to the lock timeout, as the
   command waits, without freezing the screen); on no, nothing;
4. the outcome: the lines the command prints (its changes, notes, and any ``praisonmem: error: ...`` line) in a
   notification, then ``app.refresh_selection``.

Planning reads only. A refusal, a lock held past the timeout or any other failure is the one line the command
prints on stderr, never a traceback, and changes nothing the command would not have changed.
"""

from __future__ import annotations

import os
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from praisonmem.core.errors import PraisonMemError, Refused, UsageError

if TYPE_CHECKING:
    from textual.app import App

    from praisonmem.core.result import Outcome
    from praisonmem.tui.model import Selection

NAMES = {"r": "rename", "d": "delete", "x": "redact", "e": "export"}
_busy: weakref.WeakSet[Any] = weakref.WeakSet()  # apps with an action under way: one at a time per app


@dataclass
class Report:
    """What the command would print: ``out`` its stdout lines, ``err`` its stderr lines (notes, errors)."""

    out: list[str] = field(default_factory=list)
    err: list[str] = field(default_factory=list)
    failed: bool = False

    @property
    def lines(self) -> list[str]:
        return [*self.out, *self.err]


@dataclass
class Proposal:
    """A planned write: the modal's title, the plan's lines and question, and the write itself."""

    title: str
    plan: Report
    question: str
    write: Callable[[], Report]
    about: str | None = None
    new_item: str | None = None  # what stays selected after the write (a rename's new id)


# ---------------------------------------------------------------- how the command prints


def note_line(message: str) -> str:
    """A note as the command prints it on stderr (a database password masked, controls escaped)."""
    from praisonmem.core.io.pgurl import mask
    from praisonmem.core.io.safetext import printable

    return f"praisonmem: {printable(mask(message))}"


def error_line(message: str) -> str:
    """The one error line the command prints on stderr."""
    from praisonmem.core.io.pgurl import mask
    from praisonmem.core.io.safetext import printable

    return f"praisonmem: error: {printable(mask(message))}"


def failure_line(exc: Exception) -> str:
    """An exception as the command reports it: its message; an OS error's file and reason; a bug's type."""
    if isinstance(exc, PraisonMemError):
        return error_line(exc.message)
    if isinstance(exc, OSError):
        where = f"{exc.filename}: " if exc.filename else ""
        return error_line(f"{where}{exc.strerror or exc}")
    return error_line(f"internal error: {type(exc).__name__}: {exc} (set PRAISONMEM_DEBUG=1 for a traceback)")


def outcome_report(outcome: Outcome, notes: list[str] | None = None) -> Report:
    """``render_outcome``'s lines: a line per change on stdout; the notes, then each failure, on stderr."""
    from praisonmem.cli.output import change_line
    from praisonmem.core.io.safetext import printable

    report = Report(err=[note_line(n) for n in [*(notes or []), *outcome.notes]])
    for change in outcome.changes:
        if change.failed:
            report.err.append(error_line(change_line(change)))
        else:
            report.out.append(printable(change_line(change)))
    report.failed = outcome.exit_code != 0
    return report


# ---------------------------------------------------------------- the hook


def perform(app: App, key: str, selection: Selection) -> None:
    """Start the action of ``key`` on ``selection`` (see :mod:`praisonmem.tui.model`); returns at once."""
    start = _ACTIONS.get((selection.kind, key))
    if start is None:
        app.notify(f"{NAMES.get(key, key)} is not available for {selection.kind} items", severity="warning",
                   markup=False)
        return
    if app in _busy:
        app.notify("another action is under way; wait for it to finish", severity="warning", markup=False)
        return
    start(app, selection)


def _asked(app: App, selection: Selection, form: Any, then: Callable[[Any], Callable[[], Proposal]]) -> None:
    """Show ``form``; what it is dismissed with is planned by ``then(answer)`` (Esc: nothing happens)."""
    def answered(answer: Any) -> None:
        if answer is not None:
            _propose(app, selection, then(answer))

    app.push_screen(form, answered)


def _propose(app: App, selection: Selection, plan: Callable[[], Proposal]) -> None:
    """Plan in a worker (it reads the store), then ask; the write follows a yes."""
    _busy.add(app)

    def planning() -> None:
        try:
            proposal = plan()
        except NothingToRedact as done:
            _finish(app, done.report, refresh=True, item=None)
            return
        except Exception as exc:  # noqa: BLE001 - every failure is the command's one line, never a traceback
            _finish(app, Report(err=[failure_line(exc)], failed=True), refresh=False, item=None)
            return
        try:
            app.call_from_thread(_ask, app, selection, proposal)
        except RuntimeError:  # the app closed while planning: nothing was written, nothing to ask
            _busy.discard(app)

    app.run_worker(planning, thread=True, group="praisonmem-actions", exit_on_error=False)


def _ask(app: App, selection: Selection, proposal: Proposal) -> None:
    from praisonmem.tui.confirm import ConfirmScreen

    def answered(agreed: bool | None) -> None:
        if not agreed:
            _busy.discard(app)
            app.notify("cancelled; nothing changed", markup=False)
            return
        app.run_worker(lambda: _write(app, selection, proposal), thread=True, group="praisonmem-actions",
                       exit_on_error=False)

    app.push_screen(ConfirmScreen(proposal.title, proposal.plan.lines, proposal.question, about=proposal.about),
                    answered)


def _write(app: App, selection: Selection, proposal: Proposal) -> None:
    try:
        report = proposal.write()
    except Exception as exc:  # noqa: BLE001 - as above
        report = Report(err=[failure_line(exc)], failed=True)
    _finish(app, report, refresh=True, item=proposal.new_item if not report.failed else None)


def _finish(app: App, report: Report, *, refresh: bool, item: str | None) -> None:
    """Show ``report`` and refresh the pane, on the event loop (this runs in a worker)."""
    def show() -> None:
        _busy.discard(app)
        app.notify("\n".join(report.lines) or "done", severity="error" if report.failed else "information",
                   markup=False, timeout=10 if report.failed else 6)
        if refresh:
            app.refresh_selection(item)

    try:
        app.call_from_thread(show)
    except RuntimeError:  # the app has closed meanwhile (q during the write): the write itself is complete
        _busy.discard(app)


# ---------------------------------------------------------------- sessions


def _session_about(selection: Selection) -> str:
    title = f", titled '{selection.title}'" if selection.title else ""
    where = f" in {selection.store}" if selection.store is not None else ""
    return f"session '{selection.item}'{where}{title}"


def _forget_listing(selection: Selection) -> None:
    """After a change to sessions, drop session list's cache entry, as the commands do."""
    if selection.cache is not None:
        from praisonmem.core import sessions

        sessions.forget_listing(selection.paths, selection.cache)


def _after(selection: Selection, write: Callable[[], Report]) -> Callable[[], Report]:
    def run() -> Report:
        try:
            return write()
        finally:
            _forget_listing(selection)
    return run


def start_rename(app: App, selection: Selection) -> None:
    from praisonmem.tui.forms import RenameForm

    _asked(app, selection, RenameForm(selection.item, selection.title),
           lambda answer: lambda: plan_rename(selection, answer.new_id, answer.title))


def plan_rename(selection: Selection, new_id: str | None, title: str | None) -> Proposal:
    """``session rename SESSION NEW_ID`` or ``session rename SESSION --title TEXT``: its dry run, then the write."""
    from praisonmem.core import sessions

    if (new_id is None) == (title is None):
        raise UsageError("give NEW_ID to rename the session, or --title TEXT to set its title (not both)")
    args: dict[str, Any] = dict(timeout=selection.lock_timeout, store=selection.store)
    if title is not None:
        def call(dry_run: bool) -> Outcome:
            return sessions.retitle(selection.paths, selection.item, title, dry_run=dry_run, **args)
        question = (f"Set the title of session '{selection.item}' to '{title.strip()}'?" if title.strip()
                    else f"Clear the title of session '{selection.item}'?")
        heading, new_item = f"Retitle session '{selection.item}'", None
    else:
        def call(dry_run: bool) -> Outcome:
            return sessions.rename(selection.paths, selection.item, new_id, dry_run=dry_run, **args)
        question = f"Rename session '{selection.item}' to '{new_id}'?"
        heading, new_item = f"Rename session '{selection.item}'", new_id
    return Proposal(heading, outcome_report(call(True)), question, _after(selection, lambda: outcome_report(call(False))),
                    about=_session_about(selection), new_item=new_item)


def start_delete(app: App, selection: Selection) -> None:
    _propose(app, selection, lambda: plan_delete(selection))


def plan_delete(selection: Selection) -> Proposal:
    """``session delete SESSION``: its plan (notes, dry run, question), then the write."""
    from praisonmem.core import sessions

    plan = sessions.plan_delete(selection.paths, [selection.item], timeout=selection.lock_timeout,
                                store=selection.store)
    dry = outcome_report(plan.run(dry_run=True), plan.notes)
    return Proposal(f"Delete session '{selection.item}'", dry, plan.question or f"Delete {selection.describe()}?",
                    _after(selection, lambda: outcome_report(plan.run(dry_run=False))),
                    about=_session_about(selection))


def start_redact(app: App, selection: Selection) -> None:
    from praisonmem.tui.forms import RedactForm

    def chosen(level: str) -> Callable[[], Proposal]:
        return lambda: plan_redact(selection, level)

    _asked(app, selection, RedactForm(selection.item), chosen)


class NothingToRedact(Exception):
    """The session holds no secret by these rules: the command's outcome is said, nothing is asked."""

    def __init__(self, report: Report) -> None:
        super().__init__("nothing to redact")
        self.report = report


def plan_redact(selection: Selection, level: str) -> Proposal:
    """``session redact SESSION --level LEVEL``: its plan (notes, dry run, question), then the write. With nothing
    to redact the command asks nothing and says it skipped the session: so does the browser."""
    from praisonmem.core import sessions

    plan = sessions.plan_redact(selection.paths, [selection.item], level=level, store=selection.store,
                                timeout=selection.lock_timeout)
    dry = outcome_report(plan.run(dry_run=True), plan.notes)
    if plan.question is None:
        raise NothingToRedact(outcome_report(plan.run(dry_run=False), plan.notes))
    return Proposal(f"Redact session '{selection.item}' ({level})", dry, plan.question,
                    lambda: outcome_report(plan.run(dry_run=False)), about=_session_about(selection))


def start_export(app: App, selection: Selection) -> None:
    from praisonmem.core import sessions
    from praisonmem.tui.forms import ExportForm

    def chosen(answer: Any) -> Callable[[], Proposal]:
        return lambda: plan_export(selection, answer.output, answer.format)

    _asked(app, selection, ExportForm(selection.item, sessions.safe_file_stem(selection.item) or "session"), chosen)


def plan_export(selection: Selection, output: str, fmt: str) -> Proposal:
    """``session export SESSION --format FMT -o FILE``. The command has no dry run: the plan says what it will write
    and whether that replaces a file. ``-o``'s rule is the command's (core/io/outfile.py): a regular file is
    replaced atomically, a pipe or device written through, anything else refused; stdout and a terminal are the
    browser's own screen, so they are refused here."""
    from praisonmem.core import sessions
    from praisonmem.core.io import outfile

    output = os.path.expanduser(output)
    if outfile.is_stdout(output):
        raise UsageError("'-' (stdout) is the browser's screen here: give a file name")
    fmt = sessions.ExportFormat(fmt).value
    how = outfile.kind(output)  # a directory, a socket, a symbolic link to a file: refused, as the command does
    if how == "stream" and _is_terminal(output):
        raise Refused(f"{output}: is a terminal, the browser's screen; nothing written")
    replacing = how == "file" and os.path.lexists(output)
    plan = Report(out=[f"would export session '{selection.item}' as {fmt} to {output}"])
    if replacing:
        plan.err.append(note_line(f"{output} exists: the export replaces it (atomically: a temp file renamed over it)"))
    question = (f"Replace {output} with the export of session '{selection.item}'?" if replacing
                else f"Export session '{selection.item}' to {output}?")

    def write() -> Report:
        summary = sessions.export(selection.paths, [selection.item], format=fmt, output=output, stdout=None,
                                  store=selection.store, key=selection.key)
        return export_report(summary, output)

    return Proposal(f"Export session '{selection.item}'", plan, question, write, about=_session_about(selection))


def _is_terminal(path: str) -> bool:
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NOCTTY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return False  # the export's own open says why it cannot write there
    try:
        return os.isatty(fd)
    finally:
        os.close(fd)


KEY_HINT = "set PRAISONAI_SESSION_KEY or give --key-file to decrypt them"


def export_report(summary: dict[str, Any], output: str) -> Report:
    """What ``session export -o FILE`` says on stderr after writing (its words)."""
    from praisonmem.core.io.safetext import plural

    report = Report(err=[note_line(f"skipped session {s['session_id']}: {s['reason']}")
                         for s in summary.get("skipped", [])])
    report.err.append(note_line(f"exported {plural(summary['count'], 'session')} as {summary['format']} to {output}"))
    kept = summary["encrypted_kept"]
    if kept and summary["format"] == "json":
        report.err.append(note_line(
            f"{plural(kept, 'encrypted value')} exported as stored (json is the lossless copy: importing it restores them "
            "encrypted); jsonl and markdown decrypt them with the key"))
    elif kept:
        report.err.append(note_line(f"{plural(kept, 'encrypted value')} left encrypted: {KEY_HINT}"))
    return report


# ---------------------------------------------------------------- memory items


def start_memory_delete(app: App, selection: Selection) -> None:
    _propose(app, selection, lambda: plan_memory_delete(selection))


def plan_memory_delete(selection: Selection) -> Proposal:
    """``memory delete ID --provider P --user-id U --type T``: its plan, then the write."""
    from praisonmem.core import memory

    context = selection.context
    provider = memory.open_provider(context.get("provider", "file"), user_id=context.get("user_id"),
                                    paths=selection.paths, timeout=selection.lock_timeout, cache=selection.cache)
    plan = memory.plan_delete_memory(provider, selection.item, type_=context.get("tier"))
    dry = outcome_report(plan.run(dry_run=True), plan.notes)
    return Proposal(f"Delete memory '{selection.item}'", dry, plan.question or f"Delete {selection.describe()}?",
                    lambda: outcome_report(plan.run(dry_run=False)))


_ACTIONS: dict[tuple[str, str], Callable[[App, Selection], None]] = {
    ("session", "r"): start_rename, ("session", "d"): start_delete, ("session", "x"): start_redact,
    ("session", "e"): start_export, ("memory", "d"): start_memory_delete,
}
