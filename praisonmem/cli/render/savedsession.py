"""Human rendering of a FileMemory saved session (``memory sessions show``): a header, then its conversation as
``session show`` prints turns, or, when it saved none, its short-term items."""

from __future__ import annotations

import json
from typing import Any

from praisonmem.cli.output import Output, fmt_time, fmt_value
from praisonmem.cli.render.transcript import render_turn
from praisonmem.core.memory import SavedSession
from praisonmem.core.sessions import Turn


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def turn(index: int, message: Any) -> Turn:
    """One ``conversation_history`` entry as a transcript turn (the caller's messages: role and content)."""
    if not isinstance(message, dict):
        return Turn("active", index, "?", _text(message), None, malformed=True)
    return Turn("active", index, str(message.get("role") or "?"), _text(message.get("content")),
                message.get("timestamp"))


def render_saved_session(out: Output, saved: SavedSession) -> None:
    row = saved.row()
    doc = saved.doc
    header = [
        ("Saved session", row["name"]),
        ("File", row["path"]),
        ("User", fmt_value(doc.get("user_id")) or "-"),
        ("Saved", fmt_time(row["saved_at"]) or fmt_value(row["saved_at_iso"]) or "-"),
        ("Messages", fmt_value(row["messages"]) or "0"),
        ("Short-term", fmt_value(row["short_term"]) or "0"),
        ("Long-term", f"{fmt_value(row['long_term_snapshot']) or '0'} (snapshot)"),
        ("Entities", fmt_value(row["entity_ids"]) or "0"),
    ]
    metadata = doc.get("metadata")
    if isinstance(metadata, dict) and metadata:
        header.append(("Metadata", ", ".join(f"{k}={_text(v)}" for k, v in metadata.items())))
    width = max(len(k) for k, _ in header)
    for key, value in header:
        out.styled((f"{key:<{width}}  ", "bold"), value)
    history = doc.get("conversation_history")
    if isinstance(history, list) and history:
        for index, message in enumerate(history):
            out.line()
            render_turn(out, turn(index, message))
        return
    items = doc.get("short_term")
    if isinstance(items, list) and items:
        out.line()
        out.line("No conversation saved; short-term items:", style="dim")
        for item in items:
            text = item.get("content") if isinstance(item, dict) else item
            out.body(f"• {_text(text)}")
