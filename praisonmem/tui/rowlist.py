"""The middle pane: a list of rows drawn a line at a time (Textual's line API), so only the rows on screen are
ever formatted. A 100,000-session home is a list of 100,000 dicts the listing already built; opening it costs
setting a virtual height, and each frame formats the 20-odd rows it shows."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from praisonmem.core.io.safetext import printable

GAP = 2


def fit(columns: Sequence[tuple[str, int]], width: int, flex: int,
        drop: Sequence[int] = ()) -> list[tuple[int, int]]:
    """(column index, width) of the columns shown in ``width`` cells: while they do not fit, those in ``drop`` go
    first, in its order, then the rightmost (the first and the ``flex`` column always stay); the ``flex`` column
    takes what is left."""
    shown = list(range(len(columns)))
    def need(indexes: list[int]) -> int:
        return sum(columns[i][1] for i in indexes) + GAP * (len(indexes) - 1)
    while need(shown) > width and len(shown) > 2:
        gone = next((i for i in drop if i in shown), None)
        if gone is None:
            gone = next(i for i in reversed(shown) if i not in (0, flex))
        shown.remove(gone)
    widths = [(i, columns[i][1]) for i in shown]
    spare = width - need(shown)
    return [(i, max(4, w + spare) if i == flex else w) for i, w in widths]


def _narrow_first(columns: Sequence[tuple[str, int]], rows: Sequence[Any], cells: Callable[[Any], list[str]],
                  sample: int = 2000) -> list[tuple[str, int]]:
    """The first column (the ids) as wide as the widest of the first ``sample`` rows needs, at most its width."""
    if not columns or not rows:
        return list(columns)
    name, most = columns[0]
    need = max(len(name), *(len(printable(cells(row)[0])) for row in rows[:sample]))
    return [(name, min(most, need)), *columns[1:]]


class RowList(ScrollView, can_focus=True):
    """Rows of cells (``cells(row)``: the strings of one row, escaped here), a cursor, a header line."""

    BINDINGS = [
        Binding("up,k", "cursor(-1)", "Up", show=False),
        Binding("down,j", "cursor(1)", "Down", show=False),
        Binding("pageup", "page(-1)", show=False),
        Binding("pagedown", "page(1)", show=False),
        Binding("home,g", "jump(0)", show=False),
        Binding("end,G", "jump(-1)", show=False),
        Binding("enter", "open", "Open"),
    ]
    DEFAULT_CSS = """
    RowList { height: 1fr; }
    RowList > .rowlist--cursor { background: $accent; color: $text; text-style: bold; }
    RowList > .rowlist--header { text-style: bold; }
    """
    COMPONENT_CLASSES = {"rowlist--cursor", "rowlist--header"}

    class Highlighted(Message):
        """The cursor moved to row ``index``."""

        def __init__(self, rowlist: RowList, index: int) -> None:
            super().__init__()
            self.rowlist, self.index = rowlist, index

        @property
        def control(self) -> RowList:
            return self.rowlist

    class Opened(Highlighted):
        """Row ``index`` was opened (Enter, a double click)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.rows: Sequence[Any] = []
        self.columns: Sequence[tuple[str, int]] = ()
        self.flex = 0
        self.drop: Sequence[int] = ()
        self.cells: Callable[[Any], list[str]] = lambda row: []
        self.styles_of: Callable[[Any], str] = lambda row: ""
        self.cursor = 0
        self.empty = ""

    # -- content -----------------------------------------------------------------------------------------

    def show(self, rows: Sequence[Any], columns: Sequence[tuple[str, int]], cells: Callable[[Any], list[str]], *,
             flex: int = 0, drop: Sequence[int] = (), cursor: int = 0, empty: str = "nothing here",
             style: Callable[[Any], str] | None = None) -> None:
        self.rows, self.cells, self.flex, self.drop, self.empty = rows, cells, flex, drop, empty
        self.columns = _narrow_first(columns, rows, cells)
        self.styles_of = style or (lambda row: "")
        self.cursor = max(0, min(cursor, len(rows) - 1))
        self.virtual_size = Size(self.size.width, len(rows) + 1)  # + the header line
        self.scroll_to(y=0, animate=False)
        self._keep_cursor_visible()
        self.refresh()
        if rows:
            self.post_message(self.Highlighted(self, self.cursor))

    @property
    def current(self) -> Any:
        return self.rows[self.cursor] if self.rows else None

    # -- drawing -----------------------------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        if y == 0:
            header = self.get_component_rich_style("rowlist--header")
            return self._strip([name for name, _ in self.columns], width, header)
        index = y - 1 + round(self.scroll_offset.y)
        if not self.rows:
            return self._strip([self.empty] if y == 1 else [], width, Style(dim=True), whole=True)
        if index >= len(self.rows):
            return Strip.blank(width, self.rich_style)
        row = self.rows[index]
        style = self.get_component_rich_style("rowlist--cursor") if index == self.cursor else \
            Style.parse(self.styles_of(row) or "none")
        return self._strip(self.cells(row), width, style)

    def _strip(self, cells: Sequence[str], width: int, style: Style, whole: bool = False) -> Strip:
        text = Text(no_wrap=True, overflow="ellipsis", end="")
        if whole:
            text.append(printable(cells[0]) if cells else "")
        else:
            for n, (i, w) in enumerate(fit(self.columns, width, self.flex, self.drop)):
                value = printable(cells[i]) if i < len(cells) else ""
                cell = Text(value, no_wrap=True, overflow="ellipsis")
                cell.truncate(w, overflow="ellipsis", pad=True)
                if n:
                    text.append(" " * GAP)
                text.append_text(cell)
        text.truncate(width, pad=True)
        segments = [Segment(s.text, style + s.style if s.style else style) for s in
                    text.render(self.app.console) if s.text != "\n"]
        return Strip(segments, width).crop(0, width)

    # -- moving ------------------------------------------------------------------------------------------

    def move_to(self, index: int) -> None:
        if not self.rows:
            return
        index = max(0, min(index, len(self.rows) - 1))
        if index != self.cursor:
            self.cursor = index
            self._keep_cursor_visible()
            self.refresh()
            self.post_message(self.Highlighted(self, index))

    def _keep_cursor_visible(self) -> None:
        body = max(1, self.size.height - 1)
        top = round(self.scroll_offset.y)
        if self.cursor < top:
            self.scroll_to(y=self.cursor, animate=False)
        elif self.cursor >= top + body:
            self.scroll_to(y=self.cursor - body + 1, animate=False)

    def action_cursor(self, step: int) -> None:
        self.move_to(self.cursor + step)

    def action_page(self, step: int) -> None:
        self.move_to(self.cursor + step * max(1, self.size.height - 2))

    def action_jump(self, where: int) -> None:
        self.move_to(where if where >= 0 else len(self.rows) - 1)

    def action_open(self) -> None:
        if self.rows:
            self.post_message(self.Opened(self, self.cursor))

    def on_click(self, event: events.Click) -> None:
        index = event.y - 1 + round(self.scroll_offset.y)
        if event.y >= 1 and 0 <= index < len(self.rows):
            self.move_to(index)
            if event.chain >= 2:
                self.post_message(self.Opened(self, index))

    def on_resize(self, event: events.Resize) -> None:
        self.virtual_size = Size(event.size.width, len(self.rows) + 1)
        self._keep_cursor_visible()
