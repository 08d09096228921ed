"""Human rendering of praisonai's Redis state store: the key table (``state list``) and one key (``state show``)."""

from __future__ import annotations

import json
from typing import Any

from praisonmem.cli.output import Output, fmt_size, fmt_time

HEADERS = ["KEY", "KIND", "SESSION", "RUN", "STATUS", "TYPE", "TTL", "SIZE", "UPDATED"]


def _ttl(seconds: int | None) -> str:
    return "-" if seconds is None else f"{seconds}s"


def render_keys(out: Output, rows: list[dict[str, Any]]) -> None:
    out.table(HEADERS, [[r["name"], r["kind"], r["session_id"] or "-", r["run_id"] or "-", r["status"] or "-",
                         r["type"], _ttl(r["ttl"]), fmt_size(r["size"], out.tty),
                         fmt_time(r["updated_at"]) if r["updated_at"] is not None else "-"]
                        for r in rows],
              truncate=["KEY", "SESSION", "RUN"], optional=["UPDATED", "SIZE", "RUN", "STATUS", "SESSION"])


def render_key(out: Output, row: dict[str, Any]) -> None:
    header = [("Key", row["key"]), ("Kind", row["kind"]), ("Type", row["type"]), ("TTL", _ttl(row["ttl"])),
              ("Size", fmt_size(row["size"]))]
    header += [(label, str(row[name])) for label, name in (("Session", "session_id"), ("Run", "run_id"),
                                                          ("Trace", "trace_id"), ("Status", "status"))
               if row[name] is not None]
    if row["updated_at"] is not None:
        header.append(("Updated", fmt_time(row["updated_at"])))
    if row["problem"]:
        header.append(("Problem", row["problem"]))
    width = max(len(k) for k, _ in header)
    for key, value in header:
        out.raw(f"{key:<{width}}  {value}")
    if not row["problem"]:
        out.raw("")
        out.body(json.dumps(row["value"], ensure_ascii=False, indent=2, default=str))
