"""``session show``: one session as a transcript of turns (read-only).

The transcript holds the archived turns (on request), the active window (or, for
``working``, the history an agent resumes with: the compaction checkpoint's summary
and the messages after it, spec §2.7) and the turns still waiting in the spill dir.
Each turn carries what the renderer marks: tool calls and the calls results answer,
compaction summaries, partial turns, encrypted values.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from praisonmem.core.errors import UsageError
from praisonmem.core.io import jsonfile
from praisonmem.core.paths import Paths
from praisonmem.core.sessions.documents import is_encrypted, messages_of, tool_calls_of
from praisonmem.core.sessions.stores import SessionStore, open_store

Section = Literal["archived", "active", "spilled", "checkpoint"]


@dataclass
class Turn:
    """One message as ``session show`` presents it."""

    section: Section
    index: int | None
    role: str
    content: str
    timestamp: Any
    encrypted: bool = False
    encrypted_metadata: bool = False
    partial: bool = False
    compaction: int | None = None  # compacted_count of a [Session Summary] message
    tool_calls: list[dict[str, str]] = field(default_factory=list)
    tool_call_id: str | None = None
    tool_name: str | None = None  # the call this tool result answers
    malformed: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"section": self.section, "index": self.index, "role": self.role, "content": self.content,
                "timestamp": self.timestamp, "tool_calls": self.tool_calls, "tool_call_id": self.tool_call_id,
                "partial": self.partial, "encrypted": self.encrypted}


@dataclass
class SessionView:
    file: str
    doc: dict[str, Any]
    session_id: str
    turns: list[Turn]
    hidden_before: int = 0  # turns cut by --tail
    spilled: int = 0
    raw: bytes = b""  # the document as stored
    selected: bool = False  # turns were chosen (--tail, --archived, --working), not the whole document


def show(paths: Paths, name: str, *, archived: bool = False, working: bool = False,
         tail: int | None = None) -> SessionView:
    """The session ``name`` (an id, stem, unique prefix or path), read once, as ``session show`` renders it."""
    if archived and working:
        raise UsageError("--archived and --working show different views; give one")
    store = open_store(paths)
    ref = store.find(name, allow_prefix=True)
    raw = store.read_bytes(ref)
    shown = view(store, ref, store.parse(ref, raw), archived=archived, working=working, tail=tail)
    shown.raw, shown.selected = raw, tail is not None or archived or working
    return shown


def view(store: SessionStore, ref: Any, doc: dict[str, Any], *, archived: bool = False, working: bool = False,
         tail: int | None = None) -> SessionView:
    """The transcript of ``doc``: archived (opt-in), active (or the working history) and spilled turns."""
    sid = store.session_id(ref, doc)
    active = messages_of(doc)
    turns: list[Turn] = []
    if working:
        checkpoint = doc.get("last_compaction")
        start = 0
        if isinstance(checkpoint, dict) and checkpoint:
            index = checkpoint.get("message_index")
            start = max(0, min(index if isinstance(index, int) else 0, len(active)))
            turns.append(Turn("checkpoint", None, str(checkpoint.get("role") or "system"),
                              _text(checkpoint.get("summary")), checkpoint.get("timestamp")))
        turns += _turns("active", active, offset=start)
    else:
        if archived:
            turns += _turns("archived", messages_of(doc, "archived_messages"))
        turns += _turns("active", active)
    spilled = store.spilled(sid, present=active)
    turns += _turns("spilled", spilled)
    _link_tool_results(turns)
    hidden = 0
    if tail is not None and tail < len(turns):
        hidden = len(turns) - tail
        turns = turns[hidden:] if tail else []
    return SessionView(str(ref), doc, sid, turns, hidden, len(spilled))


def _turns(section: Section, messages: list[Any], offset: int = 0) -> list[Turn]:
    return [_turn(section, i, m) for i, m in enumerate(messages[offset:], offset)]


def _turn(section: Section, index: int, message: Any) -> Turn:
    if not isinstance(message, dict):
        return Turn(section, index, "?", jsonfile.dumps(message, compact=True), None, malformed=True)
    meta = message.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    content = message.get("content")
    calls = [{"id": i, "name": n, "arguments": a} for i, n, a in tool_calls_of(message)]
    compacted = meta.get("compacted_count") if meta.get("compaction") else None
    return Turn(
        section=section,
        index=index,
        role=str(message.get("role") or "?"),
        content=_text(content),
        timestamp=message.get("timestamp"),
        encrypted=is_encrypted(content),
        encrypted_metadata=set(meta) == {"__enc__"},
        partial=meta.get("partial") is True,
        compaction=compacted if isinstance(compacted, int) else (0 if meta.get("compaction") else None),
        tool_calls=calls,
        tool_call_id=message.get("tool_call_id") if isinstance(message.get("tool_call_id"), str) else None,
    )


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else jsonfile.dumps(value, compact=True)


def _link_tool_results(turns: list[Turn]) -> None:
    names: dict[str, str] = {}
    for turn in turns:
        for call in turn.tool_calls:
            names[call["id"]] = call["name"]
        if turn.tool_call_id is not None:
            turn.tool_name = names.get(turn.tool_call_id)
