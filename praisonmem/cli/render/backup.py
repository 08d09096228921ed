"""``backup list``'s table: on a terminal the directory once, then each archive by its name, so no path is
wrapped or cut (tsv and csv keep each archive's whole path, for scripts)."""

from __future__ import annotations

import os
from typing import Any

from praisonmem.cli.output import Output, fmt_size, fmt_time

HEADERS = ["FILE", "CREATED", "SIZE", "FILES", "PROBLEM"]


def render_list(out: Output, rows: list[dict[str, Any]]) -> None:
    named = out.table_format == "table"
    if named:
        directories = {os.path.dirname(r["file"]) for r in rows}
        if len(directories) == 1:
            out.line(os.path.join(directories.pop(), ""), style="bold")  # whole, however wide: it is copied
        else:  # not one directory (never from list_backups today): whole paths, then
            named = False
    out.table(HEADERS, [[os.path.basename(r["file"]) if named else r["file"],
                         fmt_time(r["created_at"]) if r["created_at"] else "", fmt_size(r["size"], out.tty),
                         "" if r["files"] is None else str(r["files"]), r["error"] or ""] for r in rows],
              truncate=["PROBLEM"], optional=["FILES", "SIZE"],
              hidden=[] if any(r["error"] for r in rows) else ["PROBLEM"])
