"""``session list``'s table, from the rows the core's listing returned, and ``session path``'s blocks."""

from __future__ import annotations

from typing import Any

from praisonmem.cli.output import Output, fmt_cost, fmt_time, fmt_value

HEADERS = ["ID", "AGENT", "USER", "TITLE", "MSGS", "ARCHIVED", "CREATED", "UPDATED", "SCOPE", "MODEL", "TOKENS",
           "COST", "SPILLED", "STORE", "PAIR"]
# Dropped in this order when the table does not fit the terminal even with AGENT and TITLE cut short (ID and
# UPDATED always stay, and are never cut). TITLE goes before SCOPE, AGENT and MSGS: beside 36-cell UUID ids an
# 80-column terminal has room for those four or for a cut title, and they are what tells sessions apart.
OPTIONAL = ["CREATED", "COST", "TOKENS", "MODEL", "ARCHIVED", "USER", "PAIR", "STORE", "TITLE", "SCOPE", "AGENT",
            "MSGS"]
# ... and these only while TITLE keeps room to be read: AGENT, MSGS, SCOPE and STORE narrow it first.
COMFORT = OPTIONAL[:7]


def render_list(out: Output, rows: list[dict[str, Any]]) -> None:
    """All columns when piped. On a terminal, SPILLED only when something waits and STORE and PAIR only with
    two stores; then the :data:`OPTIONAL` columns go, in that order, while the rest does not fit."""
    table_rows = []
    styles = []
    for r in rows:
        if r["unreadable"]:
            table_rows.append(_unreadable_cells(r, tty=out.tty))
            styles.append("red")
            continue
        table_rows.append([
            r["session_id"], fmt_value(r["agent_name"]), fmt_value(r["user_id"]), fmt_value(r["title"]),
            str(r["message_count"]), str(r["archived_count"]), fmt_time(r["created_at"]),
            fmt_time(r["updated_at"]), r["scope"], fmt_value(r["model"]),
            fmt_value(r["total_tokens"]), fmt_cost(r["cost"], dollars=out.tty),
            str(r["spilled_count"]) if r["spilled_count"] else "",
            fmt_value(r["store"]), pair_text(r),
        ])
        styles.append("yellow" if r["stale"] else None)
    hidden = [] if any(r["spilled_count"] for r in rows) else ["SPILLED"]
    if len({r["store"] for r in rows}) < 2:
        hidden += ["PAIR", "STORE"]
    out.table(HEADERS, table_rows, row_styles=styles, truncate=["AGENT", "TITLE"], hidden=hidden, optional=OPTIONAL,
              comfort=COMFORT)


def _unreadable_cells(row: dict[str, Any], *, tty: bool) -> list[str]:
    name = row["session_id"] if row["session_id"] is not None else _stem(row["file"])
    if tty:  # UNREADABLE where no cut reaches it (UPDATED is never cut); the reason is text
        return [name, "", "", row["error"], "?", "", "", "UNREADABLE"] + [""] * 5 + [fmt_value(row["store"]), ""]
    return [name, "", "", f"UNREADABLE: {row['error']}"] + [""] * 9 + [fmt_value(row["store"]), ""]


def pair_text(row: dict[str, Any]) -> str:
    """The PAIR cell: how this copy compares with the same session in the other stores."""
    others = ", ".join(row.get("paired_with") or [])
    if not others:
        return ""
    if row["pair"] == "equal":
        return f"same as {others}"
    return f"STALE: {others} newer" if row["stale"] else f"differs from {others}"


def _stem(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    return name[: -len(".json")] if name.endswith(".json") else name


def render_locations(out: Output, records: list[dict[str, Any]]) -> None:
    """``session path``: per store, the file or database whole on its first line (alone when piped, so that
    ``head -1`` gives a script the path), then the store, a row's table and key, and the other files of it."""
    for n, record in enumerate(records):
        if n:
            out.line()
        out.line(record["path"], style="bold")
        out.line(f"  store  {record['store']}")
        if record["kind"] == "row":
            out.line(f"  row    {record['table']} where session_id = {record['key']}")
        for file in record["files"][1:]:
            out.line(f"  file   {file}")
