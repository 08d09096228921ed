"""Human rendering of an Upsonic session (``upsonic show``) and of a user's traits."""

from __future__ import annotations

import json
from typing import Any

from praisonmem.cli.output import Output, fmt_time, fmt_value
from praisonmem.core import upsonic


def date(epoch: Any, out: Output) -> str:
    return fmt_time(epoch) if isinstance(epoch, int) else fmt_value(epoch)


def render_session(out: Output, row: dict[str, Any], with_runs: bool) -> None:
    header = [("Session", row["session_id"]), ("Type", fmt_value(row.get("session_type"))),
              ("Agent", fmt_value(row.get("agent_id")) or "-"), ("User", fmt_value(row.get("user_id")) or "-"),
              ("Created", date(row.get("created_at"), out)), ("Updated", date(row.get("updated_at"), out)),
              ("Summary", row.get("summary") or "-"),
              ("Metadata", json.dumps(row.get("metadata"), ensure_ascii=False)),
              ("Usage", json.dumps(row.get("usage"), ensure_ascii=False))]
    width = max(len(k) for k, _ in header)
    for key, value in header:
        out.raw(f"{key:<{width}}  {value}")
    last = None
    for part in upsonic.parts(row.get("messages")):
        if part["message"] != last:
            last = part["message"]
            model = f" · {part['model_name']}" if part.get("model_name") else ""
            who = "request" if part["kind"] == "request" else f"response{model}"
            out.raw("")
            heading = f"#{part['message']} {who}" + (f" · {part['timestamp']}" if part.get("timestamp") else "")
            out.line(f"── {heading}" if out.tty else heading, style="dim")
        out.body(part_line(part))
    if with_runs:
        out.raw("")
        out.raw("Runs")
        for run_id, run in (row.get("runs") or {}).items():
            output = run.get("output") if isinstance(run, dict) else None
            output = output if isinstance(output, dict) else {}
            prompt = (output.get("input") or {}).get("user_prompt") if isinstance(output.get("input"), dict) else None
            result = upsonic.opaque(output.get("output"))
            out.raw(f"  {run_id}  {output.get('status', '?')}  prompt: {prompt!r}  output: "
                    f"{result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)}")


def part_line(part: dict[str, Any]) -> str:
    kind = part["part_kind"]
    if kind == "system-prompt":
        return f"[system] {part['text']}"
    if kind == "user-prompt":
        return f"[user] {part['text']}"
    if kind == "text":
        return f"[assistant] {part['text']}"
    if kind == "thinking":
        return f"[thinking] {part['text']}"
    if kind in ("tool-call", "builtin-tool-call"):
        args = part["args"] if isinstance(part["args"], str) else json.dumps(part["args"], ensure_ascii=False)
        return f"→ tool call {part['tool_name']}({args}) [{part['tool_call_id']}]"
    if kind in ("tool-return", "builtin-tool-return"):
        content = upsonic.opaque(part["content"])
        text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
        return f"← tool result of {part['tool_name']} [{part['tool_call_id']}]: {text}"
    if kind == "retry-prompt":
        return f"↻ retry{' of ' + part['tool_name'] if part.get('tool_name') else ''}: " \
               f"{json.dumps(part['content'], ensure_ascii=False)}"
    return f"[{kind}] {json.dumps(upsonic.opaque(part.get('raw')), ensure_ascii=False)}"


def render_traits(out: Output, traits: dict[str, Any]) -> None:
    for key, value in traits.items():
        out.raw(f"{key}: {json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else value}")
