"""Output: JSON / NDJSON emitters, tables, messages. Rich is imported only when a
human-readable rendering goes to a terminal.

* ``--json``: one JSON document on stdout (indented on a TTY, one line otherwise).
* ``--ndjson``: one JSON object a line, flushed as it goes.
* Tables: Rich on a TTY; tab-separated with a header line when piped, so
  nothing decorative reaches a script.
* Messages, warnings and progress go to stderr.

Every human string passes through here, and here control characters from users'
files are escaped (core/safetext.py): a line or a cell shows ``\\x1b``, ``\\n`` and
the like; only :meth:`Output.body` keeps a message's newlines and tabs. JSON keeps
the exact data, with the characters JSON leaves raw written as ``\\u`` escapes.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from praisonmem.core.io.safetext import json_safe, printable

if TYPE_CHECKING:
    from rich.console import Console


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


class Output:
    def __init__(self, *, no_color: bool = False) -> None:
        self.tty = stdout_is_tty()
        self.no_color = no_color
        self._console: Console | None = None

    # -- machine-readable ------------------------------------------------------

    def json(self, obj: Any) -> None:
        if self.tty:
            text = json.dumps(obj, ensure_ascii=False, indent=2)
        else:
            text = json.dumps(obj, ensure_ascii=False)
        self.json_text(text)

    def json_text(self, text: str) -> None:
        """A JSON document (e.g. a file's own bytes, decoded): the same data, nothing raw a terminal acts on."""
        sys.stdout.write(json_safe(text.rstrip("\n")) + "\n")

    def ndjson(self, rows: Iterable[Any]) -> None:
        for row in rows:
            sys.stdout.write(json_safe(json.dumps(row, ensure_ascii=False)) + "\n")
            sys.stdout.flush()

    def records(self, rows: list[Any], as_json: bool, as_ndjson: bool) -> bool:
        """Print ``rows`` as NDJSON or a JSON array when asked; ``False`` when human output is wanted."""
        if as_ndjson:
            self.ndjson(rows)
        elif as_json:
            self.json(rows)
        else:
            return False
        return True

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

    def table(
        self,
        headers: Sequence[str],
        rows: Sequence[Sequence[str]],
        *,
        row_styles: Sequence[str | None] | None = None,
        wrap: Sequence[str] = (),
        optional: Sequence[str] = (),
    ) -> None:
        """Rich table on a terminal; header + tab-separated rows when piped.

        On a terminal, columns named in ``optional`` are dropped (first listed
        first) until the unwrapped columns fit the width; ``wrap`` columns fold.
        """
        if not self.tty:
            sys.stdout.write("\t".join(headers) + "\n")
            for row in rows:
                sys.stdout.write("\t".join(_tsv_cell(c) for c in row) + "\n")
            return
        from rich import box
        from rich.table import Table

        rows = [[printable(str(cell)) for cell in row] for row in rows]
        keep = _fit_columns(headers, rows, wrap, optional, self.console.width)
        table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, header_style="bold")
        for i in keep:
            if headers[i] in wrap:
                table.add_column(headers[i], overflow="fold", min_width=min(12, len(headers[i]) + 4))
            else:
                table.add_column(headers[i], no_wrap=True)
        for n, row in enumerate(rows):
            table.add_row(*(row[i] for i in keep), style=row_styles[n] if row_styles else None)
        self.console.print(table)

    def line(self, text: str = "", style: str | None = None) -> None:
        """One line, styled on a terminal."""
        self._print(printable(text), style)

    def body(self, text: str, style: str | None = None) -> None:
        """A message body: its newlines and tabs kept, every other control character escaped."""
        self._print(printable(text, multiline=True), style)

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
        so the spans still cover the same characters."""
        from rich.text import Text

        line = Text(indent)
        at = 0
        for start, end in sorted(spans):
            if start < at:
                continue
            line.append(printable(text[at:start]))
            line.append(printable(text[start:end]), style=style)
            at = end
        line.append(printable(text[at:]))
        self.console.print(line)


def _fit_columns(
    headers: Sequence[str], rows: Sequence[Sequence[str]], wrap: Sequence[str], optional: Sequence[str], width: int
) -> list[int]:
    from rich.cells import cell_len

    def needed(i: int) -> int:
        if headers[i] in wrap:
            return min(12, len(headers[i]) + 4)
        return max([cell_len(headers[i])] + [cell_len(str(row[i])) for row in rows])

    keep = list(range(len(headers)))
    for name in optional:
        if sum(needed(i) + 3 for i in keep) <= width:
            break
        keep = [i for i in keep if headers[i] != name]
    return keep


def write_target(target: str, data: bytes, *, binary: bool = False) -> None:
    """Write ``data`` to an ``-o`` target by the one rule in core/outfile.py (``-`` is stdout)."""
    from praisonmem.core.io import outfile

    sys.stdout.flush()  # text already written must come first
    with outfile.opened(target, stdout=sys.stdout.buffer, binary=binary) as handle:
        handle.write(data)


def warn(message: str) -> None:
    sys.stderr.write(f"praisonmem: warning: {printable(message)}\n")


def note(message: str) -> None:
    sys.stderr.write(f"praisonmem: {printable(message)}\n")


def _tsv_cell(value: str) -> str:
    # Backslashes doubled first, so a cell's escapes are unambiguous to a script reading the TSV.
    return printable(str(value).replace("\\", "\\\\"))


def fmt_time(value: Any, short: bool = False) -> str:
    """An ISO string or epoch float as local ``YYYY-MM-DD HH:MM:SS`` (``short``: no seconds)."""
    if isinstance(value, bool) or value is None:
        return "" if value is None else str(value)
    try:
        if isinstance(value, (int, float)):
            moment = datetime.fromtimestamp(value)
        elif isinstance(value, str):
            moment = datetime.fromisoformat(value)
            if moment.tzinfo is not None:
                moment = moment.astimezone()
        else:
            return str(value)
    except (ValueError, OverflowError, OSError):
        return str(value)
    return moment.strftime("%Y-%m-%d %H:%M" if short else "%Y-%m-%d %H:%M:%S")


def fmt_value(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)
