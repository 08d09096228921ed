"""``session show``: one session as a transcript of turns (read-only).

The transcript holds the archived turns (on request), the active window (or, for
``working``, the history an agent resumes with: the compaction checkpoint's summary
and the messages after it, spec §2.7) and the turns still waiting in the spill dir.
Each turn carries what the renderer marks: tool calls and the calls results answer,
compaction summaries, partial turns, encrypted values.

A gateway document stores no chat turns, only system snapshots of the gateway's session
(spec-11 §2.7): after its stored messages come the chat turns the snapshots hold
(section ``gateway``, each message once, ``user`` for what a client sent and
``assistant`` for the agent, ``sender`` its ``sender_id``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from praisonmem.core.errors import PraisonMemError, UsageError
from praisonmem.core.io import jsonfile
from praisonmem.core.paths import Paths
from praisonmem.core.sessions.documents import gateway_chat, is_encrypted, messages_of, tool_calls_of
from praisonmem.core.sessions.stores import SessionStore, open_store

Section = Literal["archived", "active", "spilled", "checkpoint", "gateway"]


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
    sender: str | None = None  # a gateway message's sender_id

    def to_json(self) -> dict[str, Any]:
        return {"section": self.section, "index": self.index, "role": self.role, "content": self.content,
                "timestamp": self.timestamp, "tool_calls": self.tool_calls, "tool_call_id": self.tool_call_id,
                "partial": self.partial, "encrypted": self.encrypted, "sender": self.sender}


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
    store: str = ""  # the label of the store holding it
    copies: dict[str, Any] = field(default_factory=dict)  # paired_with, pair, stale: as `session list` marks it


def show(paths: Paths, name: str, *, archived: bool = False, working: bool = False,
         tail: int | None = None, store: str | None = None) -> SessionView:
    """The session ``name`` (an id, stem, unique prefix or path; in ``store`` only, when given), read once,
    as ``session show`` renders it."""
    if archived and working:
        raise UsageError("--archived and --working show different views; give one")
    home = open_store(paths, store)
    ref = home.find(name, allow_prefix=True)
    raw = home.read_bytes(ref)
    shown = view(home, ref, home.parse(ref, raw), archived=archived, working=working, tail=tail)
    shown.raw, shown.selected = raw, tail is not None or archived or working
    shown.store = home.store_of(ref)
    shown.copies = _copies(open_store(paths) if store and not _is_location(store) else home, ref, shown)
    return shown


def _is_location(store: str) -> bool:
    from praisonmem.core.sessions.stores.locate import is_location

    return is_location(store)


def _copies(home: SessionStore, ref: Any, shown: SessionView) -> dict[str, Any]:
    """How this copy compares with the same session in the home's other stores (empty: there is none)."""
    from praisonmem.core.sessions.listing import compare_copies

    others = home.copies(ref, shown.session_id)
    if not others:
        return {}
    items = [(shown.store, shown.doc.get("updated_at"), ref)]
    for other in others:
        try:
            updated = home.read(other).get("updated_at")
        except PraisonMemError:
            updated = None
        items.append((home.store_of(other), updated, other))
    return compare_copies(home, items)[0]


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
    turns += _gateway_turns(doc)
    spilled = store.spilled(ref, sid, present=active)
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


def _gateway_turns(doc: dict[str, Any]) -> list[Turn]:
    chat = gateway_chat(doc) or []
    return [Turn("gateway", i, m["role"], _text(m.get("content")), m.get("timestamp"),
                 encrypted=is_encrypted(m.get("content")),
                 sender=m.get("sender_id") if isinstance(m.get("sender_id"), str) else None)
            for i, m in enumerate(chat)]


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
