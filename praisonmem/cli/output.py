"""Output: JSON / NDJSON emitters, tables, messages. Rich is imported only when a
human-readable rendering goes to a terminal.

* ``--json`` (``--format json``): one JSON document on stdout (indented on a TTY, one line otherwise).
* ``--ndjson`` (``--format ndjson``): one JSON object a line, flushed as it goes.
* Tables: fitted to the terminal on a TTY (``--format table`` when piped: fitted to ``COLUMNS``, else 80);
  tab-separated with a header line when piped (``--format tsv``), so nothing decorative reaches a script, or
  CSV (``--format csv``). ``--columns`` picks and orders the columns of all three, ``--wide`` keeps every
  column of a table whole.
* Messages, warnings and progress go to stderr.

Every human string passes through here, and here control characters from users'
files are escaped (core/io/safetext.py): a line or a cell shows ``\\x1b``, ``\\n`` and
the like; only :meth:`Output.body` keeps a message's newlines and tabs. JSON keeps
the exact data, with the characters JSON leaves raw written as ``\\u`` escapes.

:func:`render_outcome` is the one place that words what a command changed
("renamed …", and for ``--dry-run`` "would rename …").
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from praisonmem.core.io.safetext import json_safe, plural, printable  # plural: for the commands, from here

if TYPE_CHECKING:
    from rich.console import Console

    from praisonmem.core.result import Change, Outcome


def stdout_is_tty() -> bool:
    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):
        return False


def stderr_is_tty() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


FORMATS = ("table", "tsv", "csv", "json", "ndjson")


class Output:
    """Where one command's output goes. ``fmt``: one of :data:`FORMATS` (``--format``, ``--json``, ``--ndjson``
    or the configured ``output = "json"``), None for a table on a terminal and TSV when piped; ``columns``:
    ``--columns``, ``wide``: ``--wide``."""

    def __init__(self, *, no_color: bool = False, json: bool = False, ndjson: bool = False,
                 fmt: str | None = None, columns: str | None = None, wide: bool = False) -> None:
        self.tty = stdout_is_tty()
        self.no_color = no_color
        self.format = "ndjson" if ndjson else "json" if json else fmt
        self.as_json = self.format == "json"
        self.as_ndjson = self.format == "ndjson"
        self.columns = columns
        self.wide = wide
        self._console: Console | None = None

    @property
    def machine(self) -> bool:
        """JSON or NDJSON was asked for: nothing human goes to stdout."""
        return self.as_json or self.as_ndjson

    # -- machine-readable ------------------------------------------------------

    def json(self, obj: Any) -> None:
        import json  # not at start-up: the commands printing text need none of it

        if self.tty:
            text = json.dumps(obj, ensure_ascii=False, indent=2)
        else:
            text = json.dumps(obj, ensure_ascii=False)
        self.json_text(text)

    def json_text(self, text: str) -> None:
        """A JSON document (e.g. a file's own bytes, decoded): the same data, nothing raw a terminal acts on."""
        sys.stdout.write(json_safe(text.rstrip("\n")) + "\n")

    def ndjson(self, rows: Iterable[Any]) -> None:
        import json

        for row in rows:
            sys.stdout.write(json_safe(json.dumps(row, ensure_ascii=False)) + "\n")
            sys.stdout.flush()

    def records(self, rows: list[Any]) -> bool:
        """Print ``rows`` as NDJSON or a JSON array when asked; ``False`` when human output is wanted."""
        if self.as_ndjson:
            self.ndjson(rows)
        elif self.as_json:
            self.json(rows)
        else:
            return False
        return True

    def document(self, obj: Any) -> bool:
        """Print ``obj`` as one JSON document when asked; ``False`` when human output is wanted."""
        if self.machine:
            self.json(obj)
            return True
        return False

    def raw(self, text: str) -> None:
        """One line of plain text (escaped: a value cannot break it or reach the terminal)."""
        sys.stdout.write(printable(text.removesuffix("\n")) + "\n")

    # -- human-readable --------------------------------------------------------

    @property
    def console(self) -> Console:
        if self._console is None:
            from rich.console import Console

            self._console = Console(
                file=sys.stdout,
                no_color=self.no_color,
                highlight=False,
                soft_wrap=True,
                emoji=False,
                markup=False,
            )
        return self._console

    @property
    def table_format(self) -> str:
        """How :meth:`table` prints: ``table`` (fitted to the terminal), ``tsv`` or ``csv``."""
        return self.format if self.format in ("table", "tsv", "csv") else "table" if self.tty else "tsv"

    def table(
        self,
        headers: Sequence[str],
        rows: Sequence[Sequence[str]],
        *,
        row_styles: Sequence[str | None] | None = None,
        truncate: Sequence[str] = (),
        optional: Sequence[str] = (),
        hidden: Sequence[str] = (),
        comfort: Sequence[str] = (),
    ) -> None:
        """A table that fits the terminal; header + tab-separated rows (every column, nothing cut) when piped.

        On a terminal (:mod:`praisonmem.cli.render.table`): ``truncate`` columns are text, cut with ``…`` to
        fit; the others are never cut; when they do not all fit, the columns named in ``optional`` are dropped,
        first listed first, until the rest fits (and a note on stderr names them; those in ``comfort`` are shown only
while the text keeps room to be read); failing that, each row is
        shown as ``HEADER  value`` lines. ``hidden`` columns (nothing to say in them) are left out on a
        terminal. ``--columns`` shows the columns it names, in its order, none dropped or hidden.
        """
        styles = list(row_styles) if row_styles else [None] * len(rows)
        if self.columns is not None:
            picked = pick_columns(headers, self.columns)
            headers, rows = [headers[i] for i in picked], [[row[i] for i in picked] for row in rows]
            optional, hidden, comfort = (), (), ()
        fmt = self.table_format
        if fmt == "tsv":
            sys.stdout.write("\t".join(headers) + "\n")
            for row in rows:
                sys.stdout.write("\t".join(_tsv_cell(c) for c in row) + "\n")
            return
        if fmt == "csv":
            import csv

            writer = csv.writer(sys.stdout, lineterminator="\n")
            writer.writerow(headers)
            writer.writerows([_tsv_cell(c) for c in row] for row in rows)
            return
        from rich.text import Text

        from praisonmem.cli.render import table as fit

        if hidden:
            visible = [i for i, h in enumerate(headers) if h not in hidden]
            headers, rows = [headers[i] for i in visible], [[row[i] for i in visible] for row in rows]
        cells = [[printable(str(cell)) for cell in row] for row in rows]
        width = self.console.width
        layout = fit.lay_out(headers, cells, truncate=truncate, optional=optional, width=width, wide=self.wide,
                             comfort=comfort)
        if layout.records:
            for n, row in enumerate(cells):
                if n:
                    self.console.print()
                for text in fit.record_lines(headers, row, truncate, width):
                    self.console.print(Text(text, style=styles[n] or ""))
            return
        head, rule, *lines = fit.table_lines(headers, cells, layout, () if self.wide else truncate)
        self.console.print(Text(head, style="bold"))
        self.console.print(Text(rule))
        for n, text in enumerate(lines):
            self.console.print(Text(text, style=styles[n] or ""))
        if layout.dropped:
            note(f"not shown in {width} columns: {', '.join(layout.dropped)}; --wide shows every column, "
                 "--columns picks them", width=width if stderr_is_tty() else None)

    def pairs(self, rows: Sequence[tuple[str, str, str]]) -> None:
        """Key/value lines on a terminal: ``KEY  VALUE`` (the value never cut: on the next line when it does not
        fit after the key), then the ``note`` under the value, wrapped at spaces. ``rows``: ``(key, value, note)``."""
        from rich.text import Text

        from praisonmem.cli.render import table as fit

        width = self.console.width
        key_width = max((len(key) for key, _, _ in rows), default=0)
        indent = " " * (key_width + fit.GAP)
        room = max(1, width - len(indent))
        for key, value, extra in rows:
            value, extra = printable(value), printable(extra)
            first, *more = fit.key_value(key, value, key_width, width)
            self.console.print(Text.assemble((first[:key_width], "bold"), first[key_width:]))
            for piece in more:
                self.console.print(Text(piece))
            if extra:
                for piece in fit.wrap_words(extra, room):
                    self.console.print(Text(indent + piece, style="dim"))

    def line(self, text: str = "", style: str | None = None) -> None:
        """One line, styled on a terminal."""
        self._print(printable(text), style)

    def body(self, text: str, style: str | None = None) -> None:
        """A message body: its newlines and tabs kept, every other control character escaped; on a terminal each
        line wrapped at spaces to its width (:func:`wrap`: a path or URL stays whole)."""
        text = printable(text, multiline=True)
        if not self.tty:
            self._print(text, style)
            return
        width = self.console.width
        for line in text.expandtabs(8).split("\n"):
            for piece in wrap(line, width):
                self.console.print(piece, style=style)

    def wrapped(self, text: str, *, indent: int = 0, first: int | None = None,
                lead: Sequence[tuple[str, str]] = (), style: str = "") -> None:
        """One line of text after the styled ``lead`` pieces (a key, a label); on a terminal wrapped at spaces to its
        width, ``first`` cells on the first line, the next lines indented ``indent``; whole when piped."""
        text = printable(text)
        lead_text = "".join(piece for piece, _ in lead)
        if not self.tty:
            sys.stdout.write(printable(lead_text) + text + "\n")
            return
        from rich.cells import cell_len
        from rich.text import Text

        width = self.console.width
        pieces = wrap(text, width, indent, width - cell_len(lead_text) if first is None else first)
        self.console.print(Text.assemble(*((printable(p), s) for p, s in lead), (pieces[0], style)))
        for piece in pieces[1:]:
            self.console.print(Text(" " * indent + piece, style=style))

    def _print(self, text: str, style: str | None) -> None:
        if self.tty:
            self.console.print(text, style=style)
        else:
            sys.stdout.write(text + "\n")

    def styled(self, *parts: str | tuple[str, str]) -> None:
        """One line assembled from pieces, each ``text`` or ``(text, style)``; plain when piped."""
        pieces = [(p, "") if isinstance(p, str) else p for p in parts]
        if not self.tty:
            sys.stdout.write("".join(printable(text) for text, _ in pieces) + "\n")
            return
        from rich.text import Text

        self.console.print(Text.assemble(*((printable(text), style) for text, style in pieces)))

    def marked(self, text: str, spans: Sequence[Sequence[int]], *, style: str, indent: str = "") -> None:
        """``text`` with the ``[start, end)`` spans styled (search highlights), escaped piece by piece
        so the spans still cover the same characters; wrapped at spaces to the terminal, each line ``indent``ed."""
        from rich.text import Text

        shown, marks, at = "", [], 0
        for start, end in sorted(spans):
            if start < at:
                continue
            shown += printable(text[at:start])
            piece = printable(text[start:end])
            marks.append((len(shown), len(shown) + len(piece)))
            shown += piece
            at = end
        shown += printable(text[at:])
        for a, b in wrap_spans(shown, self.console.width, len(indent), self.console.width - len(indent)):
            line = Text(indent + shown[a:b])
            for start, end in marks:
                if start < b and end > a:
                    line.stylize(style, len(indent) + max(start, a) - a, len(indent) + min(end, b) - a)
            self.console.print(line)


def report_written(out: Output, summary: dict[str, Any], output: str | None, message: str) -> None:
    """After an export to ``-o FILE``: its summary as JSON when asked, else ``message`` on stderr; nothing when the
    export itself went to stdout."""
    if output in (None, "-"):
        return
    record_made([message])
    if out.document(summary):
        return
    note(message)


def binary_stdout() -> Any:
    """stdout for bytes (an export or archive written to ``-``), after the text already written."""
    sys.stdout.flush()
    return sys.stdout.buffer


# What each action says for ``--dry-run``, and when done (the JSON ``action`` is the same either way).
# Keyed by Action's values (a StrEnum): read commands need not import core.result to print.
WOULD: dict[str, tuple[str, str]] = {
    "renamed": ("rename", "renamed"),
    "retitled": ("set the title of", "set the title of"),
    "untitled": ("clear the title of", "cleared the title of"),
    "adopt-moved": ("move", "moved"),
    "adopt-copied": ("copy", "copied"),
    "adopt-merged": ("merge", "merged"),
    "adopt-replaced": ("replace", "replaced"),
    "added": ("add", "added"),
    "copied": ("copy", "copied"),
    "deleted": ("delete", "deleted"),
    "imported": ("import", "imported"),
    "inserted": ("insert", "inserted"),
    "kept": ("keep", "kept"),
    "merged": ("merge", "merged"),
    "removed": ("remove", "removed"),
    "redacted": ("redact secrets in", "redacted secrets in"),
    "replaced": ("replace", "replaced"),
    "restored": ("restore", "restored"),
    "set": ("set", "set"),
    "stored": ("store", "stored"),
    "unset": ("unset", "unset"),
    "updated": ("update", "updated"),
    "wrote": ("write", "wrote"),
    "skipped": ("skip", "skipped"),
    "failed": ("fail", "failed"),
}
UNFINISHED = ("failed", "skipped")  # their detail is why; they name no files


def change_line(change: Change) -> str:
    """``[would ]<verb> <target>[ (<files>)]``, then ``: <why>`` for a failure or skip, else `` [<detail>]``."""
    would, done = WOULD[change.action]
    text = f"{'would ' + would if change.dry_run else done} {change.target}"
    if change.where and change.action not in UNFINISHED:
        text += f" ({change.where})"
    if change.detail:
        text += f": {change.detail}" if change.action in UNFINISHED else f" [{change.detail}]"
    return text


def render_outcome(out: Output, outcome: Outcome, *, ids: bool = False) -> int:
    """Print what a command changed and return its exit code.

    Notes and failures go to stderr; the changes go to stdout as one line each (``ids``: only the
    target, a new id a script can capture, with its detail in parentheses), or with ``--json`` as
    an array of change records.
    """
    record_made([change_line(change) for change in outcome.changes
                 if not (change.dry_run or change.failed or change.action in UNFINISHED)])
    for message in outcome.notes:
        note(message)
    if out.machine:
        out.json(outcome.to_json())
    for change in outcome.changes:
        if change.failed:
            error(change_line(change))
        elif out.machine:
            continue
        elif ids:
            out.raw(change.target + (f" ({change.detail})" if change.detail else ""))
        else:
            out.raw(change_line(change))
    return outcome.exit_code


_quiet = False  # -q/--quiet for this invocation: notes, warnings and progress bars are not shown
# What this invocation changed, worded as its output says it: when that output cannot be written (stdout
# closed), the error line still says what was done.
_made: list[str] = []


def set_quiet(value: bool) -> None:
    global _quiet
    _quiet = value


def record_made(lines: Sequence[str]) -> None:
    """Note changes already made (on disk, in a database) before printing them."""
    _made.extend(lines)


def made() -> list[str]:
    return list(_made)


def begin() -> None:
    """A new invocation: no -q, nothing made yet, stderr not held (the tests run many in one process)."""
    set_quiet(False)
    _made.clear()
    hold_stderr(None)


def quiet() -> bool:
    return _quiet


def showing(printed: int, total: int, what: str) -> None:
    """When ``--limit`` cut the rows: ``showing N of M WHAT`` on stderr, for a table and for --json/--ndjson alike
    (a script must not take a page for the whole)."""
    if printed < total:
        note(f"showing {printed} of {total} {what}; --limit 0 shows all")


# While the pager keeps stdout (cli/pager.py), what praisonmem says on stderr is kept with it, in order.
_held: Callable[[str], None] | None = None


def hold_stderr(keep: Callable[[str], None] | None) -> None:
    global _held
    _held = keep


def _stderr(text: str) -> None:
    if _held is not None:
        _held(text)
    else:
        sys.stderr.write(text)


def warn(message: str, *, always: bool = False) -> None:
    """A warning on stderr; not with -q, unless ``always`` (it is why the command fails)."""
    if always or not _quiet:
        _stderr(_fitted(f"praisonmem: warning: {printable(_masked(message))}", None) + "\n")


def note(message: str, *, width: int | None = None) -> None:
    """A note on stderr (where it looked, what it left out); not with -q. ``width``: a terminal's, the note
    broken at spaces to fit it, the lines after the first indented."""
    if _quiet:
        return
    _stderr(_fitted(f"praisonmem: {printable(_masked(message))}", width) + "\n")


MIN_WRAP = 20  # a terminal narrower than this (or one that reports 0 columns) gets its lines whole


def _stderr_width() -> int | None:
    """stderr's terminal width, as Rich finds stdout's: ``$COLUMNS`` when set, else the terminal's own."""
    import os

    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit():
        return int(columns)
    try:
        return os.get_terminal_size(sys.stderr.fileno()).columns or None
    except (OSError, ValueError):
        return None


def _fitted(text: str, width: int | None) -> str:
    """A note or warning wrapped at spaces to ``width`` (default: stderr's terminal, none when it is not one), the
    lines after the first indented 2; a path or command in it stays whole."""
    if width is None and stderr_is_tty():
        width = _stderr_width()
    if width is None or width < MIN_WRAP or len(text) <= width:
        return text
    return "\n".join(("  " if n else "") + line for n, line in enumerate(wrap(text, width, 2, width)))


def error(message: str) -> None:
    """A failure on stderr, shown even with -q."""
    _stderr(f"praisonmem: error: {printable(_masked(message))}\n")


def _masked(message: str) -> str:
    """``message`` with any database password masked (a URL, ``password=``, or one praisonmem has seen)."""
    pgurl = sys.modules.get("praisonmem.core.io.pgurl")  # not imported: no password seen to scrub
    if pgurl is None and "://" not in message and "password" not in message.lower():
        return message
    from praisonmem.core.io import pgurl

    return pgurl.mask(message)


def column_name(header: str) -> str:
    """How ``--columns`` names a header: lower case, a space as ``-`` (``NO USAGE``: ``no-usage``)."""
    return header.lower().replace(" ", "-").replace("_", "-")


def pick_columns(headers: Sequence[str], spec: str) -> list[int]:
    """The indexes of the headers ``--columns`` names, in its order; a name no header has is a usage error that
    lists the valid ones."""
    from praisonmem.core.errors import UsageError

    names = [column_name(h) for h in headers]
    picked = []
    for given in (part.strip() for part in spec.split(",")):
        if column_name(given) not in names:
            shown = f"unknown column '{given}'" if given else "an empty column name"
            raise UsageError(f"--columns: {shown} (valid: {','.join(names)})")
        picked.append(names.index(column_name(given)))
    return picked


def _tsv_cell(value: str) -> str:
    # Backslashes doubled first, so a cell's escapes are unambiguous to a script reading the TSV.
    return printable(str(value).replace("\\", "\\\\"))


def fmt_time(value: Any, short: bool | None = None, *, naive_utc: bool = False) -> str:
    """An ISO string or epoch float as local time: ``YYYY-MM-DD HH:MM`` on a terminal, every screen alike, and
    ``YYYY-MM-DD HH:MM:SS`` when piped (``short`` overrides). A string without a zone is local time unless
    ``naive_utc`` (learn stores before 1.7.17 and SQLite's ``CURRENT_TIMESTAMP`` write UTC without saying so)."""
    if short is None:
        short = stdout_is_tty()
    if isinstance(value, bool) or value is None:
        return "" if value is None else str(value)
    try:
        if isinstance(value, (int, float)):
            moment = datetime.fromtimestamp(value)
        elif isinstance(value, str):
            moment = datetime.fromisoformat(value)
            if moment.tzinfo is None and naive_utc:
                moment = moment.replace(tzinfo=timezone.utc)
            if moment.tzinfo is not None:
                moment = moment.astimezone()
        else:
            return str(value)
    except (ValueError, OverflowError, OSError):
        return str(value)
    return moment.strftime("%Y-%m-%d %H:%M" if short else "%Y-%m-%d %H:%M:%S")


def fmt_cost(value: Any, *, dollars: bool = True) -> str:
    """A cost as people read it, never in exponent form: ``$0.000012`` (``dollars``), ``0.000012`` for a
    script's TSV or CSV; blank when not recorded."""
    if value is None or isinstance(value, bool) or not isinstance(value, (int, float)):
        return fmt_value(value)
    text = f"{value:.10f}".rstrip("0").rstrip(".") if value else "0"
    return f"${text}" if dollars else text


def fmt_value(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


# -- wrapping and human numbers --------------------------------------------------------------------------------
# Text wraps at spaces to a terminal's width; what people copy is never broken: a word (a path, an id, a URL) and
# a quoted span ('praisonmem migrate') stay whole, on a line of their own when they do not fit beside others.

SIZE_UNITS = ("B", "KiB", "MiB", "GiB", "TiB")


def fmt_size(value: Any, human: bool = True) -> str:
    """A size in bytes as people read it (``5.1 KiB``, binary units), or as a script reads it (``human`` false:
    the bytes); blank when not known."""
    if value is None or isinstance(value, bool) or not isinstance(value, int):
        return fmt_value(value)
    if not human:
        return str(value)
    number = float(value)
    for unit in SIZE_UNITS:
        if abs(number) < 1024 or unit == SIZE_UNITS[-1]:
            return f"{int(number)} {unit}" if unit == "B" else f"{number:.1f} {unit}"
        number /= 1024
    return str(value)  # not reached


def _words(text: str) -> list[tuple[int, int]]:
    """``[start, end)`` of each unbreakable piece of one line: the runs between spaces, a run that opens a quote
    joined to the runs up to the one that closes it."""
    spans = [(m.start(), m.end()) for m in _RUN.finditer(text)]
    pieces: list[tuple[int, int]] = []
    n = 0
    while n < len(spans):
        start, end = spans[n]
        quote = text[start]
        if quote in "'\"`" and not _closes(text[start + 1:end], quote):
            close = next((k for k in range(n + 1, min(len(spans), n + 12)) if _closes(text[slice(*spans[k])],
                                                                                     quote)), None)
            if close is not None:
                end = spans[close][1]
                n = close
        pieces.append((start, end))
        n += 1
    return pieces


def _closes(run: str, quote: str) -> bool:
    """``run`` ends a quoted span: the quote, then at most closing punctuation."""
    return quote in run and run.rstrip(".,:;!?)]}").endswith(quote)


def wrap_spans(text: str, width: int, indent: int = 0, first: int | None = None) -> list[tuple[int, int]]:
    """One line of ``text`` as the ``[start, end)`` slices of the lines it wraps into: ``first`` cells for the
    first line (default ``width - indent``), ``width - indent`` for the others; a piece wider than that is one
    line, whole. Leading spaces stay on the first line."""
    from rich.cells import cell_len

    room = max(1, width - indent)
    limit = max(1, first) if first is not None else room
    lines: list[tuple[int, int]] = []
    start = end = None
    for a, b in _words(text):
        if start is None:
            start, end = (0 if not lines else a), b
            if cell_len(text[start:end]) > limit and start < a:  # indentation and a piece that cannot share
                start = a
        elif cell_len(text[start:b]) <= limit:
            end = b
        else:
            lines.append((start, end))
            limit = room
            start, end = a, b
    if start is None:
        return [(0, len(text))]
    lines.append((start, end))
    return lines


def wrap(text: str, width: int, indent: int = 0, first: int | None = None) -> list[str]:
    """``text`` (one line) wrapped as :func:`wrap_spans` says, the lines without their indentation."""
    return [text[a:b] for a, b in wrap_spans(text, width, indent, first)]


def shell_lines(command: str, width: int, indent: int = 0, first: int | None = None) -> list[str]:
    """A shell command in lines that fit ``width`` (less ``indent``), broken only between its arguments, each
    line but the last ending in `` \\`` so the lines pasted into a shell are the one command; an argument is
    never broken. Not a command shlex reads: wrapped as text."""
    import shlex

    try:
        words = shlex.split(command)
    except ValueError:
        return wrap(command, width, indent, first)
    if shlex.join(words) != command:  # not shlex's own spelling: keep the text as it is
        return wrap(command, width, indent, first)
    from rich.cells import cell_len

    room = max(1, width - indent)
    limit = max(1, first) if first is not None else room
    lines: list[str] = []
    line = ""
    for word in (shlex.quote(w) for w in words):
        candidate = f"{line} {word}" if line else word
        if not line or cell_len(candidate) + 2 <= limit:
            line = candidate
            continue
        lines.append(line + " \\")
        limit = room - 2  # the continuation lines are indented 2 more
        line = word
    lines.append(line)
    return [lines[0], *("  " + rest for rest in lines[1:])]


import re as _re  # noqa: E402  (kept with the block that uses it)

_RUN = _re.compile(r"[^ ]+")
