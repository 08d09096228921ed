"""Pure functions over one PraisonAI session document (spec §2.2): no files, no locks.

A document is the dict the library stores: ``session_id``, ``messages`` (the active
window), ``archived_messages``, ``metadata``, ``last_compaction`` and whatever else
its writer added (kept as it is). Every reader here tolerates malformed parts: a
message that is not an object, tool calls of the wrong shape.
"""

from __future__ import annotations

from typing import Any

from praisonmem.core.errors import CorruptFile, PraisonMemError
from praisonmem.core.io import jsonfile

ENCRYPTED_PREFIX = "praisonai:enc:v1:"
ROLES = ("user", "assistant", "system", "tool")  # the roles the library writes and loads

LIST_FIELDS = (
    "session_id", "file", "agent_name", "user_id", "title", "message_count", "archived_count", "created_at",
    "updated_at", "model", "total_tokens", "cost", "scope", "agent_id", "source", "parent_id", "spilled_count",
    "unreadable", "error", "store", "input_tokens", "output_tokens", "children_ids", "current_project",
    "last_session",
)

# The praisonai CLI's REPL/TUI sessions (praisonai-code's UnifiedSession, spec-11 §5.2): exactly these fields,
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

    ``scope`` and ``spilled_count`` are filled in by the listing.
    """
    meta = metadata_of(doc)
    if is_unified(doc):
        return _unified_summary(doc, session_id=session_id, file=file)
    return {
        "session_id": session_id,
        "file": file,
        "agent_name": doc.get("agent_name"),
        "user_id": doc.get("user_id"),
        "title": title_of(doc),
        "message_count": len(messages_of(doc)),
        "archived_count": len(messages_of(doc, "archived_messages")),
        "created_at": doc.get("created_at"),
        "updated_at": doc.get("updated_at"),
        "model": doc.get("model") or doc.get("llm") or meta.get("model"),
        "total_tokens": doc.get("total_tokens") or doc.get("token_count") or meta.get("total_tokens"),
        "cost": doc.get("cost") or meta.get("cost"),
        "scope": None,
        "agent_id": doc.get("agent_id") or meta.get("agent_id"),
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


def unreadable_row(file: str, error: PraisonMemError) -> dict[str, Any]:
    """A ``session list`` row for a session that could not be read: its file and why."""
    row: dict[str, Any] = dict.fromkeys(LIST_FIELDS)
    reason = error.reason if isinstance(error, CorruptFile) else error.message
    row.update(file=file, spilled_count=0, unreadable=True, error=reason, current_project=False, last_session=False)
    return row
