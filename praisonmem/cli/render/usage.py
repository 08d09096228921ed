"""Human and CSV rendering of ``praisonmem usage``: the table with its totals row, a summary line and,
on a terminal, a bar chart of the tokens per period."""

from __future__ import annotations

import csv
import sys
from typing import Any

from praisonmem.cli.output import Output, fmt_cost, note, plural
from praisonmem.core import usage
from praisonmem.core.io.safetext import printable

COLUMNS = ("sessions", "sessions_without_usage", "turns", "prompt_tokens", "completion_tokens", "total_tokens",
           "cost")
HEADERS = ("SESSIONS", "NO USAGE", "TURNS", "PROMPT", "COMPLETION", "TOTAL", "COST")
EMPTY = {usage.GroupBy.model: "(no model)", usage.GroupBy.agent: "(no agent)", usage.GroupBy.user: "(no user)"}


def cell(column: str, value: Any, tty: bool) -> str:
    return fmt_cost(value, dollars=tty) if column == "cost" else number(value, tty)


def number(value: Any, grouped: bool = False) -> str:
    """A figure for the table: blank when not recorded; thousands grouped on a terminal only (a script reads
    the piped TSV)."""
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.6f}".rstrip("0").rstrip(".") if value else "0"
    return f"{value:,}" if grouped else str(value)


def _key(row: dict[str, Any], by: usage.GroupBy) -> str:
    value = row[by.value]
    return EMPTY.get(by, "(no date)") if value is None else str(value)


def render_report(out: Output, report: usage.UsageReport) -> None:
    data = report.to_json()
    by = report.by
    session = by is usage.GroupBy.session
    headers = [by.value.upper()] + (["STORE"] if session else []) + list(HEADERS)
    rows = [[_key(r, by)] + ([r["store"]] if session else []) + [cell(c, r[c], out.tty) for c in COLUMNS]
            for r in data["rows"]]
    rows.append(["TOTAL"] + ([""] if session else []) + [cell(c, data["totals"][c], out.tty) for c in COLUMNS])
    styles = [None] * (len(rows) - 1) + ["bold"]
    out.table(headers, rows, row_styles=styles, optional=["STORE", "TURNS", "PROMPT", "COMPLETION"])
    extra = []
    if data["copies_counted_once"]:
        extra.append(f"{plural(data['copies_counted_once'], 'copy', 'copies')} in a second store counted once")
    if data["undated_left_out"]:
        extra.append(f"{plural(data['undated_left_out'], 'session')} without a date left out")
    if data["unattached_usage_entries"]:
        extra.append(f"{plural(data['unattached_usage_entries'], 'Upsonic usage entry', 'Upsonic usage entries')} "
                     "of no session's run not counted")
    if data["unreadable"]:
        extra.append(f"{len(data['unreadable'])} unreadable")
    summary = (f"{plural(data['sessions'], 'session')}, {data['sessions_without_usage']} without usage (nothing "
               "recorded)" + "".join(f"; {e}" for e in extra))
    if out.tty:
        out.line(summary, style="dim")
    else:  # piped: stdout is the table alone, for a script to read
        note(summary)
    if out.tty and by.value in ("day", "week", "month"):
        _chart(out, data["rows"], by)


def _chart(out: Output, rows: list[dict[str, Any]], by: usage.GroupBy) -> None:
    """Tokens per period as bars (cost when no period recorded tokens)."""
    figure = "total_tokens" if any(r["total_tokens"] for r in rows) else "cost"
    values = [(_key(r, by), r[figure] or 0) for r in rows]
    top = max((v for _, v in values), default=0)
    if not top:
        return
    from rich.bar import Bar
    from rich.table import Table

    label_width = max(len(k) for k, _ in values)
    width = max(10, out.console.width - label_width - 20)
    table = Table.grid(padding=(0, 1))
    table.add_column(no_wrap=True)
    table.add_column(width=width)
    table.add_column(justify="right", no_wrap=True)
    for key, value in values:
        table.add_row(printable(key), Bar(top, 0, value, width=width, color="cyan"), cell(figure, value, True))
    out.line("")
    out.line("tokens per " + by.value if figure == "total_tokens" else "cost per " + by.value, style="bold")
    out.console.print(table)


def render_csv(report: usage.UsageReport, columns: str | None = None) -> None:
    """The rows as CSV, headed by their JSON names (``columns``: ``--columns``, by those names)."""
    from praisonmem.cli.output import pick_columns

    data = report.to_json()
    by = report.by
    names = [by.value] + (["store"] if by is usage.GroupBy.session else []) + list(COLUMNS)
    if columns is not None:
        names = [names[i] for i in pick_columns(names, columns)]
    writer = csv.writer(sys.stdout, lineterminator="\n")
    writer.writerow(names)
    for row in data["rows"]:
        writer.writerow([printable("" if row[n] is None else str(row[n])) for n in names])
