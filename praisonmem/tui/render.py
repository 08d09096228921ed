"""The commands' own renderings, printed into the browser's panes instead of stdout.

``session show`` draws through :class:`praisonmem.cli.output.Output` (every string from a store escaped by
``core/io/safetext.py`` on the way); :class:`Captured` is that same ``Output`` on a terminal, whose console keeps
the lines it is given as Rich ``Text`` (never parsed as markup) for a pane to show. So the pane is the command's
rendering, line for line, and its escaping.
"""

from __future__ import annotations

from typing import Any

from rich.console import Group
from rich.text import Text

from praisonmem.cli.output import Output
from praisonmem.core.io.safetext import printable


class _Lines:
    """The part of a Rich ``Console`` that ``Output`` uses: ``width`` and ``print``, keeping what is printed."""

    def __init__(self, width: int) -> None:
        self.width = width
        self.lines: list[Any] = []

    def print(self, obj: Any = "", style: str | None = None) -> None:
        # a str is plain text (Output never prints markup); a Text or table keeps its own styles
        self.lines.append(Text(obj, style=style or "") if isinstance(obj, str) else obj)


class Captured(Output):
    """An ``Output`` on a terminal ``width`` columns wide whose lines are kept (:attr:`lines`), not printed."""

    def __init__(self, width: int = 100) -> None:
        super().__init__()
        self.tty = True
        self._lines = _Lines(width)
        self._console = self._lines  # type: ignore[assignment]

    @property
    def lines(self) -> list[Any]:
        return self._lines.lines

    def raw(self, text: str) -> None:  # a plain line, as Output.raw writes it to stdout, escaped
        self._lines.print(printable(text.removesuffix("\n")))

    def renderable(self) -> Group:
        return Group(*self.lines)

    def plain(self) -> str:
        """The text of the lines (tests and screenshots compare it with the command's output)."""
        return "\n".join(line.plain if isinstance(line, Text) else str(line) for line in self.lines)


def session(view: Any, width: int = 100) -> Captured:
    """``session show``'s rendering of ``view`` (a :class:`praisonmem.core.sessions.SessionView`)."""
    from praisonmem.cli.render.transcript import render_session

    out = Captured(width)
    render_session(out, view)
    return out


def upsonic_session(row: dict[str, Any], width: int = 100) -> Captured:
    """``upsonic show``'s rendering of a session row."""
    from praisonmem.cli.render.upsonic import render_session

    out = Captured(width)
    render_session(out, row, False)
    return out


def pairs(rows: list[tuple[str, str]], width: int = 100) -> Captured:
    """``KEY  value`` lines (a memory item, a learn entry, as ``learn show`` prints them), escaped."""
    out = Captured(width)
    key_width = max((len(k) for k, _ in rows), default=0)
    for key, value in rows:
        out.styled((f"{key:<{key_width}}", "bold"), "  ", value)
    return out


def safe(text: Any, style: str = "") -> Text:
    """A value from a store as one line of plain ``Text``: escaped, never read as markup."""
    return Text(printable("" if text is None else str(text)), style=style)
