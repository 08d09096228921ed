"""Tables that fit the terminal: a long listing stays readable in an 80-column window, and no id is cut.

A table's columns are of two kinds. *Whole* columns hold what people copy (ids, file names, paths, dates,
counts) and are never cut. *Text* columns (a title, an agent's name, a memory's text) are cut to fit, at a word
boundary where one is near, and end with ``…``. Every column is shown while the whole columns and the text
columns at :data:`MIN_TEXT` cells fit; only when they do not are *optional* columns dropped: the others are
kept, then the optional ones are taken back, the last listed (the most wanted) first, each one that still fits
(each command documents its order; its *comfort* columns last, and only while the text columns keep
:data:`COMFORT` cells), and the caller says which went (:attr:`Layout.dropped`). Then the text columns share
what is left. When even the columns no command may drop do not fit, each row is shown as a
block of ``HEADER  value`` lines, so no line is wider than the terminal and no copyable value is cut (a value
wider than the whole terminal is folded onto the next lines, every character kept). ``wide`` keeps every
column at its whole width, however wide the lines. :func:`lay_out` decides this (a :class:`Layout`);
:func:`table_lines` and :func:`record_lines` draw it.

Everything here works on display cells (East Asian wide characters count 2), on cells already escaped by
:func:`praisonmem.core.io.safetext.printable`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.cells import cell_len

GAP = 2  # spaces between columns
MIN_TEXT = 8  # a text column is squeezed to this (or its header, or its whole text) before a column is dropped
COMFORT = 24  # ... but not for a *comfort* column, shown only while the text columns keep this (or their whole text)
ELLIPSIS = "…"


@dataclass(frozen=True)
class Layout:
    """Which columns to show and how wide; ``records`` when rows must be shown as key/value blocks."""

    keep: list[int]
    widths: list[int]
    records: bool = False
    dropped: tuple[str, ...] = ()  # the optional columns left out to fit, in the table's order


def lay_out(headers: Sequence[str], rows: Sequence[Sequence[str]], *, truncate: Sequence[str],
            optional: Sequence[str], width: int, wide: bool = False, comfort: Sequence[str] = ()) -> Layout:
    natural = [max([cell_len(h)] + [cell_len(row[i]) for row in rows]) for i, h in enumerate(headers)]
    if wide:
        return Layout(list(range(len(headers))), natural)

    def floor(i: int, least: int = MIN_TEXT) -> int:
        if headers[i] not in truncate:
            return natural[i]
        return min(natural[i], max(least, cell_len(headers[i])))

    def need(cols: list[int], least: int = MIN_TEXT) -> int:
        return sum(floor(i, least) for i in cols) + GAP * (len(cols) - 1)

    # The columns no command may drop, then the optional ones from the last listed (the most wanted) to the first,
    # each while it still fits: a narrow column may stay where a wider, more wanted one could not.
    rank = {name: n for n, name in enumerate(optional)}
    keep = [i for i, h in enumerate(headers) if h not in rank]
    if need(keep) > width:
        return Layout(list(range(len(headers))), natural, records=True)
    wanted = sorted((i for i, h in enumerate(headers) if h in rank), key=lambda i: -rank[headers[i]])
    for i in [i for i in wanted if headers[i] not in comfort] + [i for i in wanted if headers[i] in comfort]:
        if headers[i] in comfort and any(h in truncate and j not in keep for j, h in enumerate(headers)):
            continue  # a text column is gone already: there is no room to be comfortable in
        if need(sorted(keep + [i]), COMFORT if headers[i] in comfort else MIN_TEXT) <= width:
            keep = sorted(keep + [i])
    widths = {i: floor(i) for i in keep}
    spare = width - need(keep)
    # Share what is left among the text columns, the narrowest first, until each has its natural width.
    while spare > 0:
        short = [i for i in keep if widths[i] < natural[i]]
        if not short:
            break
        narrowest = min(short, key=lambda i: (widths[i], i))
        widths[narrowest] += 1
        spare -= 1
    dropped = tuple(h for i, h in enumerate(headers) if i not in keep)
    return Layout(keep, [widths[i] for i in keep], dropped=dropped)


def shorten(text: str, width: int) -> str:
    """``text`` in at most ``width`` cells: cut at the last space when that keeps at least half, then ``…``."""
    if cell_len(text) <= width:
        return text
    if width <= 1:
        return ELLIPSIS if width == 1 else ""
    cut = _take(text, width - 1)
    if text[len(cut)] != " ":
        space = cut.rfind(" ")
        if space >= len(cut) // 2:
            cut = cut[:space]
    return cut.rstrip() + ELLIPSIS


def fold(text: str, width: int) -> list[str]:
    """``text`` in pieces of at most ``width`` cells, every character kept (a value too wide for the terminal)."""
    pieces = []
    while cell_len(text) > width:
        piece = _take(text, width) or text[0]  # a wide character in a 1-cell width: shown anyway
        pieces.append(piece)
        text = text[len(piece):]
    pieces.append(text)
    return pieces


def wrap_words(text: str, width: int) -> list[str]:
    """``text`` as lines of at most ``width`` cells, broken at spaces; a word wider than that is folded."""
    lines: list[str] = []
    line = ""
    for word in text.split(" "):
        candidate = f"{line} {word}" if line else word
        if cell_len(candidate) <= width:
            line = candidate
            continue
        if line:
            lines.append(line)
        *whole, line = fold(word, width)
        lines.extend(whole)
    lines.append(line)
    return lines


def pad(text: str, width: int) -> str:
    return text + " " * max(0, width - cell_len(text))


def table_lines(headers: Sequence[str], rows: Sequence[Sequence[str]], layout: Layout,
                truncate: Sequence[str]) -> list[str]:
    """The header, its rule and one line a row (no trailing spaces)."""

    def line(cells: Sequence[str]) -> str:
        padded = []
        for i, w in zip(layout.keep, layout.widths):
            cell = shorten(cells[i], w) if headers[i] in truncate else cells[i]
            padded.append(pad(cell, w))
        return (" " * GAP).join(padded).rstrip()

    head = line(headers)
    total = sum(layout.widths) + GAP * (len(layout.widths) - 1)
    return [head, "─" * total, *(line(row) for row in rows)]


def record_lines(headers: Sequence[str], row: Sequence[str], truncate: Sequence[str], width: int) -> list[str]:
    """One row as ``HEADER  value`` lines (empty values left out); text cut to fit, whole values kept."""
    key_width = max(cell_len(h) for h in headers)
    lines = []
    for header, value in zip(headers, row):
        if value:
            if header in truncate:
                value = shorten(value, max(1, width - key_width - GAP))
            lines.extend(key_value(header, value, key_width, width))
    return lines


def key_value(key: str, value: str, key_width: int, width: int) -> list[str]:
    """``KEY  value`` in ``width`` cells, the value never cut: when it does not fit after the key it goes on the
    next line (indented 2 when that fits), and only a value wider than the terminal is folded."""
    room = width - key_width - GAP
    if cell_len(value) <= room:
        return [pad(key, key_width) + " " * GAP + value]
    indent = "  " if cell_len(value) <= width - 2 else ""
    return [key, *(indent + piece for piece in fold(value, max(1, width - len(indent))))]


def _take(text: str, width: int) -> str:
    """The longest prefix of ``text`` that fits ``width`` cells."""
    used = 0
    for n, char in enumerate(text):
        used += cell_len(char)
        if used > width:
            return text[:n]
    return text
