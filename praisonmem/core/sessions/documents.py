"""Pure functions over one PraisonAI session document: no files, no locks.

A document is the dict the library stores: ``session_id``, ``messages`` (the active
window), ``archived_messages``, ``metadata``, ``last_compaction`` and whatever else
its writer added (kept as it is). Every reader here tolerates malformed parts: a
message that is not an object, tool calls of the wrong shape.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from praisonmem.core.errors import CorruptFile, PraisonMemError
from praisonmem.core.io import jsonfile
from praisonmem.core.sessions.stores.names import safe_file_stem

ENCRYPTED_PREFIX = "praisonai:enc:v1:"
ROLES = ("user", "assistant", "system", "tool")  # the roles the library writes and loads

LIST_FIELDS = (
    "session_id", "file", "agent_name", "user_id", "title", "message_count", "archived_count", "created_at",
    "updated_at", "model", "total_tokens", "cost", "scope", "agent_id", "source", "parent_id", "spilled_count",
    "unreadable", "error", "store", "paired_with", "pair", "stale", "input_tokens", "output_tokens", "children_ids",
    "current_project", "last_session",
)
MIRRORED = ("model", "llm", "total_tokens", "token_count", "cost", "source", "reasoning_effort")  # store.py:286

# The praisonai CLI's REPL/TUI sessions (praisonai-code's UnifiedSession): exactly these fields,
# in this order; its loader rejects any other key.
UNIFIED_KEYS = ("session_id", "workspace", "created_at", "updated_at", "messages", "metadata", "parent_id",
                "children_ids", "total_input_tokens", "total_output_tokens", "total_cost", "request_count",
                "current_model")


def is_unified(doc: Any) -> bool:
    """A REPL/TUI ("unified") session: no key but the unified ones, and its ``workspace`` and ``current_model``
    (a ``DefaultSessionStore`` document has ``agent_name``, a hierarchical one ``is_shared``)."""
    return (isinstance(doc, dict) and "workspace" in doc and "current_model" in doc
            and all(key in UNIFIED_KEYS for key in doc))


def validate(doc: dict[str, Any], where: object) -> dict[str, Any]:
    """Refuse a document whose shape no PraisonAI reader could use (:class:`CorruptFile` naming ``where``)."""
    for key in ("messages", "archived_messages"):
        value = doc.get(key)
        if key in doc and value is not None and not isinstance(value, list):
            raise CorruptFile(str(where), f"'{key}' is {jsonfile.json_kind(value)}, not a list")
    if "metadata" in doc and doc["metadata"] is not None and not isinstance(doc["metadata"], dict):
        raise CorruptFile(str(where), f"'metadata' is {jsonfile.json_kind(doc['metadata'])}, not an object")
    return doc


def session_id_of(doc: dict[str, Any], default: str) -> str:
    """``session_id`` as stored, else ``default`` (the name its store gives it, as the library lists it)."""
    sid = doc.get("session_id")
    return sid if isinstance(sid, str) else default


def with_session_id(doc: dict[str, Any], session_id: str) -> dict[str, Any]:
    """A copy of ``doc`` naming ``session_id`` (in place of the old value, else first)."""
    if "session_id" in doc:
        return {**doc, "session_id": session_id}
    return {"session_id": session_id, **doc}


def messages_of(doc: dict[str, Any], key: str = "messages") -> list[Any]:
    value = doc.get(key)
    return value if isinstance(value, list) else []


def metadata_of(doc: dict[str, Any]) -> dict[str, Any]:
    meta = doc.get("metadata")
    return meta if isinstance(meta, dict) else {}


def is_empty(doc: dict[str, Any]) -> bool:
    """No messages, no archived messages, no checkpoint: nothing a user could lose."""
    return not (messages_of(doc) or messages_of(doc, "archived_messages") or doc.get("last_compaction"))


def is_encrypted(value: Any) -> bool:
    return isinstance(value, str) and value.startswith(ENCRYPTED_PREFIX)


def tool_calls_of(message: Any) -> list[tuple[str, str, str]]:
    """A message's tool calls as ``(id, name, arguments)``; malformed entries are skipped, never fatal."""
    calls = message.get("tool_calls") if isinstance(message, dict) else None
    out = []
    for call in calls if isinstance(calls, list) else []:
        if isinstance(call, dict):
            fn = call.get("function") if isinstance(call.get("function"), dict) else {}
            arguments = fn.get("arguments")
            out.append((str(call.get("id") or ""), str(fn.get("name") or "?"),
                        arguments if isinstance(arguments, str) else jsonfile.dumps(arguments, compact=True)))
    return out


def title_of(doc: dict[str, Any]) -> str | None:
    """``metadata.title`` (what ``rename_session`` sets), else a hierarchical store's ``title``."""
    for value in (metadata_of(doc).get("title"), doc.get("title")):
        if isinstance(value, str) and value:
            return value
    return None


def message_key(message: dict[str, Any]) -> tuple[str, str, str]:
    """What makes two messages the same turn for the library's spill re-ingest: role, content, timestamp."""
    return (repr(message.get("role")), repr(message.get("content")), repr(message.get("timestamp")))


def summarise(doc: dict[str, Any], *, session_id: str, file: str) -> dict[str, Any]:
    """One ``session list`` row: the library's ``list_sessions`` fields plus counts.

    A gateway document's ``message_count`` counts the chat its snapshots hold (:func:`gateway_chat`),
    not the snapshots, and its ``agent_id`` falls back to the snapshots' agent. ``scope`` and
    ``spilled_count`` are filled in by the listing, which adds the store fields.
    """
    meta = metadata_of(doc)
    if is_unified(doc):
        return _unified_summary(doc, session_id=session_id, file=file)
    chat = gateway_chat(doc)
    snapshot = gateway_snapshots(doc)[-1] if chat is not None else {}
    return {
        "session_id": session_id,
        "file": file,
        "agent_name": doc.get("agent_name"),
        "user_id": doc.get("user_id"),
        "title": title_of(doc),
        "message_count": len(messages_of(doc)) if chat is None else len(chat),
        "archived_count": len(messages_of(doc, "archived_messages")),
        "created_at": doc.get("created_at"),
        "updated_at": doc.get("updated_at"),
        "model": doc.get("model") or doc.get("llm") or meta.get("model"),
        "total_tokens": doc.get("total_tokens") or doc.get("token_count") or meta.get("total_tokens"),
        "cost": doc.get("cost") or meta.get("cost"),
        "scope": None,
        "agent_id": doc.get("agent_id") or meta.get("agent_id") or snapshot.get("agent_id"),
        "source": doc.get("source") or meta.get("source"),
        "parent_id": doc.get("parent_id") or meta.get("parent_id"),
        "spilled_count": 0,
        "unreadable": False,
        "error": None,
        "store": None,
        "input_tokens": None,
        "output_tokens": None,
        "children_ids": None,
        "current_project": False,
        "last_session": False,
    }


def _unified_summary(doc: dict[str, Any], *, session_id: str, file: str) -> dict[str, Any]:
    """A REPL/TUI session's row: its model, token counts (input and output, and their sum), cost and lineage."""
    tokens = [doc.get(k) for k in ("total_input_tokens", "total_output_tokens")]
    counted = [t for t in tokens if isinstance(t, int) and not isinstance(t, bool)]
    return {**dict.fromkeys(LIST_FIELDS), "session_id": session_id, "file": file, "title": title_of(doc),
            "message_count": len(messages_of(doc)), "archived_count": 0, "created_at": doc.get("created_at"),
            "updated_at": doc.get("updated_at"), "model": doc.get("current_model"),
            "total_tokens": sum(counted) if counted else None, "cost": doc.get("total_cost"),
            "parent_id": doc.get("parent_id"), "input_tokens": tokens[0], "output_tokens": tokens[1],
            "children_ids": doc.get("children_ids"), "spilled_count": 0, "unreadable": False,
            "current_project": False, "last_session": False}


def unreadable_row(file: str, error: PraisonMemError, session_id: str | None = None) -> dict[str, Any]:
    """A ``session list`` row for a session that could not be read: its file (and id, when its store knows
    it without the document) and why."""
    row: dict[str, Any] = dict.fromkeys(LIST_FIELDS)
    reason = error.reason if isinstance(error, CorruptFile) else error.message
    row.update(session_id=session_id, file=file, spilled_count=0, unreadable=True, error=reason,
               current_project=False, last_session=False)
    return row


# ---------------------------------------------------------------- gateway documents


def gateway_snapshots(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """The ``session_data`` of each system snapshot the WebSocket gateway stored, archived ones first.

    The gateway never stores chat turns as messages: it adds a system message ("Session initialized",
    "Session closed", ...) whose ``metadata.session_data`` is its whole session, chat included.
    """
    found = []
    for key in ("archived_messages", "messages"):  # a tight loop: session list runs it over every session
        for message in messages_of(doc, key):
            if type(message) is dict and message.get("role") == "system":
                meta = message.get("metadata")
                data = meta.get("session_data") if type(meta) is dict else None
                if type(data) is dict and type(data.get("messages")) is list:
                    found.append(data)
    return found


def gateway_chat(doc: dict[str, Any]) -> list[dict[str, Any]] | None:
    """The chat the gateway's snapshots hold, each message once, in order (``None``: not a gateway document).

    Each snapshot holds the whole conversation up to then, so later ones repeat earlier ones; a message is
    the same one when its ``message_id`` is (else its sender, content and time are).
    """
    snapshots = gateway_snapshots(doc)
    if not snapshots:
        return None
    seen: set[Any] = set()
    chat = []
    for data in snapshots:
        for message in data["messages"]:
            if not isinstance(message, dict):
                continue
            key = message.get("message_id") if isinstance(message.get("message_id"), str) else (
                repr(message.get("sender_id")), repr(message.get("content")), repr(message.get("timestamp")))
            if key not in seen:
                seen.add(key)
                chat.append({**message, "role": gateway_role(message, data)})
    return chat


def gateway_role(message: dict[str, Any], session_data: dict[str, Any]) -> str:
    """``assistant`` for what the gateway's agent sent, ``user`` for everything a client sent."""
    sender = message.get("sender_id")
    return "assistant" if sender is not None and sender == session_data.get("agent_id") else "user"


# ---------------------------------------------------------------- the library's normalisation


def library_form(doc: dict[str, Any], *, now: float | None = None) -> dict[str, Any]:
    """``SessionData.from_dict(doc).to_dict()`` of praisonaiagents 1.7.17 (store.py:157-363), without it.

    What the library keeps of a document when it loads and saves it, and what its one-time import
    writes into ``sessions.db``: unknown keys dropped, non-object messages dropped (a checkpoint
    anchored after them moves down), defaults filled in, mirrored metadata keys folded into
    ``metadata`` and written again at the top. Missing times get ``now`` (the library: the clock).
    A document the library cannot load raises :class:`ValueError`.
    """
    import time
    from datetime import datetime, timezone

    stamp = time.time() if now is None else now
    iso = datetime.fromtimestamp(stamp, timezone.utc).isoformat()
    try:
        raw = doc.get("messages", [])
        messages = [library_message(m, stamp) for m in raw if isinstance(m, dict)]
        archived = [library_message(m, stamp) for m in (doc.get("archived_messages") or []) if isinstance(m, dict)]
        checkpoint = doc.get("last_compaction")
        compaction = _checkpoint_form(checkpoint, stamp) if checkpoint else None
        if compaction is not None:
            anchor = compaction["message_index"]
            dropped = sum(1 for m in raw[:anchor] if not isinstance(m, dict))
            if dropped:
                compaction["message_index"] = max(0, anchor - dropped)
        metadata = dict(doc.get("metadata") or {})
    except (AttributeError, TypeError, ValueError) as exc:
        raise ValueError(f"the library cannot load it ({exc})") from exc
    for key in MIRRORED:
        if key not in metadata and doc.get(key) is not None:
            metadata[key] = doc[key]
    out = {
        "session_id": doc.get("session_id", ""),
        "messages": messages,
        "created_at": doc.get("created_at", iso),
        "updated_at": doc.get("updated_at", iso),
        "agent_name": doc.get("agent_name"),
        "user_id": doc.get("user_id"),
        "metadata": metadata,
        "gateway_session_id": doc.get("gateway_session_id"),
        "agent_id": doc.get("agent_id"),
        "runtime_state": doc.get("runtime_state") or {},
        "archived_messages": archived,
    }
    if compaction is not None:
        out["last_compaction"] = compaction
    for key in MIRRORED:
        if key in metadata:
            out[key] = metadata[key]
    return out


def library_message(message: dict[str, Any], now: float) -> dict[str, Any]:
    """``SessionMessage.from_dict(message).to_dict()``: a message as the library keeps it (a missing time: ``now``)."""
    out = {"role": message.get("role", "user"), "content": message.get("content", ""),
           "timestamp": message.get("timestamp", now), "metadata": message.get("metadata", {})}
    if message.get("tool_calls"):
        out["tool_calls"] = message["tool_calls"]
    if message.get("tool_call_id") is not None:
        out["tool_call_id"] = message["tool_call_id"]
    return out


def _checkpoint_form(checkpoint: dict[str, Any], now: float) -> dict[str, Any]:
    return {"summary": checkpoint.get("summary", ""), "message_index": checkpoint.get("message_index", 0),
            "role": checkpoint.get("role", "system"), "tokens_before": checkpoint.get("tokens_before", 0),
            "tokens_after": checkpoint.get("tokens_after", 0), "timestamp": checkpoint.get("timestamp", now),
            "metadata": checkpoint.get("metadata", {})}


# ---------------------------------------------------------------- what makes a document a session

Report = Callable[[str, str, str], None]  # (severity, code, message), as ``check``'s rules report
# The error codes of a document that is no session at all (rather than a session with a bad part): a file the
# stores do not take for one when it is named by its path, and that ``check`` reports as such.
NOT_A_SESSION = frozenset(("session.missing_key", "session.type", "unified.type"))


def session_key_rules(doc: dict[str, Any], stem: str, report: Report) -> None:
    """A JSON-store session's keys, as the library loads them from ``<stem>.json``: ``session_id`` and
    ``messages`` there and of their types, the file named for the id, the other keys' types."""
    sid = doc.get("session_id")
    if "session_id" not in doc:
        report("error", "session.missing_key", "required key 'session_id' is missing")
    elif not isinstance(sid, str):
        report("error", "session.type", f"'session_id' is {jsonfile.json_kind(sid)}, not a string")
    elif not (sid == stem and _safe_stem(sid)) and safe_file_stem(sid) != stem:
        report("warning", "session.file_name",
               f"session_id '{sid}' belongs in {safe_file_stem(sid)}.json, not {stem}.json: "
               "the library will not find it by its id")
    if "messages" not in doc:
        report("error", "session.missing_key", "required key 'messages' is missing")
    for key, kinds, severity in (
        ("messages", (list,), "error"), ("archived_messages", (list, type(None)), "error"),
        ("metadata", (dict, type(None)), "error"), ("runtime_state", (dict, type(None)), "warning"),
        ("agent_name", (str, type(None)), "warning"), ("user_id", (str, type(None)), "warning"),
        ("created_at", (str,), "warning"), ("updated_at", (str,), "warning"),
    ):
        if key in doc and not isinstance(doc[key], kinds):
            report(severity, "session.type", f"'{key}' is {jsonfile.json_kind(doc[key])}, not {_kind_names(kinds)}")


def unified_rules(doc: dict[str, Any], stem: str, report: Report) -> None:
    """A praisonai REPL/TUI session: what its loader (``UnifiedSession(**data)``) and the TUI need."""
    if doc.get("session_id") != stem:
        report("warning", "unified.file_name", f"session_id {doc.get('session_id')!r} is not the file's name "
                                               f"'{stem}': the TUI finds a session by its file name")
    messages = doc.get("messages")
    if not isinstance(messages, list):
        report("error", "unified.type", f"'messages' is {jsonfile.json_kind(messages)}, not a list: the TUI cannot "
                                        "use it")
        return
    for index, message in enumerate(messages):
        if not isinstance(message, dict) or not {"role", "content"} <= set(message):
            report("error", "unified.message", f"messages[{index}] is not a {{role, content, timestamp}} object: "
                                               "the TUI's chat history fails on it")
    for key in ("metadata",):
        if not isinstance(doc.get(key, {}), dict):
            report("error", "unified.type", f"'{key}' is {jsonfile.json_kind(doc[key])}, not an object")


def not_a_session(doc: dict[str, Any], stem: str) -> str | None:
    """Why a document in ``<stem>.json`` is no session at all (the first :data:`NOT_A_SESSION` error of its rules),
    or ``None``."""
    found: list[tuple[str, str, str]] = []
    (unified_rules if is_unified(doc) else session_key_rules)(doc, stem, lambda *f: found.append(f))
    return next((message for severity, code, message in found if severity == "error" and code in NOT_A_SESSION),
                None)


def _kind_names(kinds: tuple[type, ...]) -> str:
    names = {list: "a list", dict: "an object", str: "a string", type(None): "null"}
    return " or ".join(names.get(k, k.__name__) for k in kinds)


def _safe_stem(session_id: str) -> bool:
    """``safe_file_stem(session_id) == session_id`` for an id with an alphanumeric character, told without a
    step per character (``False`` for the rest, which the caller then asks ``safe_file_stem`` about)."""
    return session_id.replace("-", "").replace("_", "").isalnum()
