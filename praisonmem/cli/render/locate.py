"""Human rendering of ``praisonmem locate``: a table of the stores (the table module fits it to the terminal: on a
narrow one each store becomes a block of ``HEADER  value`` lines, no path or command cut), one of the configured
servers, and a summary line."""

from __future__ import annotations

from typing import Any

from praisonmem.cli.output import Output, fmt_size, fmt_time, note, plural
from praisonmem.core import locate

STORE_HEADERS = ("PATH", "KIND", "LIBRARY", "HOLDS", "SIZE", "MODIFIED", "FLAGS", "COMMAND")
STORE_OPTIONAL = ("LIBRARY", "MODIFIED")  # dropped, first listed first, while the rest does not fit (never a command)
SERVER_HEADERS = ("URL", "KIND", "SOURCE", "REACHABLE", "COMMAND")


def holds(counts: dict[str, Any]) -> str:
    return " ".join(f"{key}={value}" for key, value in counts.items())


def store_row(store: locate.Store, human: bool) -> list[str]:
    absent = locate.FLAGS[2] in store.flags
    return [store.path, store.kind, store.library, holds(store.holds), "" if absent else fmt_size(store.size, human),
            fmt_time(store.modified), ",".join(store.flags), store.command or ""]


def reachable(server: locate.Server) -> str:
    if server.reachable is None:
        return server.reason or "not checked"
    return "yes" if server.reachable else f"no: {server.reason}"


def render_report(out: Output, report: locate.Report) -> None:
    """The stores' table, the servers' (not with ``--columns``, which names the stores' columns), and a summary
    line: on stdout under a terminal's table, on stderr otherwise (a TSV or CSV stream is its rows alone)."""
    if report.stores or out.columns is not None:
        hidden = () if any(s.flags for s in report.stores) else ("FLAGS",)
        out.table(STORE_HEADERS, [store_row(s, out.tty) for s in report.stores], optional=STORE_OPTIONAL,
                  hidden=hidden)
    if report.servers and out.columns is not None:
        note(f"{plural(len(report.servers), 'configured server')} not shown with --columns (--json lists them)")
    elif report.servers:
        if report.stores:
            out.line("")
        out.table(SERVER_HEADERS, [[s.url, s.kind, s.source, reachable(s), s.command or ""] for s in report.servers],
                  optional=("SOURCE",))
    flagged = sum(1 for s in report.stores if s.flags)
    parts = [f"{plural(len(report.stores), 'store')}", f"{flagged} flagged", f"{plural(len(report.servers), 'server')}"]
    if report.skipped:
        parts.append(f"{plural(len(report.skipped), 'path')} not read")
    if out.tty and out.table_format == "table":
        out.line(", ".join(parts), style="dim")
    else:
        note(", ".join(parts))
