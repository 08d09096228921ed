"""Upsonic messages: a plain view of pydantic-ai parts, and conversion to and from PraisonAI sessions.

Upsonic stores ``ModelRequest`` / ``ModelResponse`` lists (``kind`` and
``part_kind`` discriminators, as upsonic 0.77.3 serialises them). :func:`parts` flattens them into plain
dicts for rendering; :func:`to_praisonai` and :func:`from_praisonai` map
conversations between the frameworks:

* system / user prompt parts ↔ ``system`` / ``user`` messages;
* a response's text and tool-call parts ↔ one ``assistant`` message with
  ``tool_calls`` (``args`` kept as given: a JSON string stays a string);
* tool-return (and retry) parts ↔ ``tool`` messages with ``tool_call_id``;
* ISO part timestamps ↔ float epochs; Upsonic's summary, usage and session
  data are kept under ``metadata["upsonic"]``.

Nothing here unpickles: ``{"__pickled__": …}`` values are only ever shown as opaque.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any

from praisonmem.core.sessions import tool_calls_of
from praisonmem.core.io.timeutil import epoch_of

PICKLED = "__pickled__"
MIRRORED = ("model", "llm", "total_tokens", "token_count", "cost", "source", "reasoning_effort")


def opaque(value: Any) -> Any:
    """``value`` with every ``{"__pickled__": …}`` blob replaced by a marker (display only)."""
    if isinstance(value, dict):
        if PICKLED in value and len(value) == 1:
            return "‹pickled value, not loaded›"
        return {k: opaque(v) for k, v in value.items()}
    if isinstance(value, list):
        return [opaque(v) for v in value]
    return value


def _iso(epoch: float | int | None) -> str | None:
    if epoch is None:
        return None
    return datetime.fromtimestamp(epoch, timezone.utc).isoformat().replace("+00:00", "Z")


def _text(content: Any) -> str:
    """A user-prompt's content as text: strings kept, media items named."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        out = []
        for item in content:
            if isinstance(item, str):
                out.append(item)
            elif isinstance(item, dict):
                kind = item.get("kind", "item")
                where = item.get("url") or item.get("identifier") or item.get("media_type") or ""
                out.append(f"[{kind}{': ' + where if where else ''}]")
        return "\n".join(out)
    return json.dumps(content, ensure_ascii=False)


def parts(messages: Any) -> list[dict[str, Any]]:
    """Every part of every message, flattened: ``kind`` (request/response), ``part_kind`` and its fields."""
    out: list[dict[str, Any]] = []
    for index, message in enumerate(messages if isinstance(messages, list) else []):
        if not isinstance(message, dict):
            out.append({"message": index, "kind": "?", "part_kind": "unreadable", "text": repr(message)})
            continue
        for part in message.get("parts") or []:
            if not isinstance(part, dict):
                continue
            entry = {"message": index, "kind": message.get("kind"), "part_kind": part.get("part_kind"),
                     "timestamp": part.get("timestamp") or message.get("timestamp"),
                     "model_name": message.get("model_name"), "run_id": message.get("run_id")}
            kind = part.get("part_kind")
            if kind in ("system-prompt", "text", "thinking"):
                entry["text"] = part.get("content") if isinstance(part.get("content"), str) else _text(part.get("content"))
            elif kind == "user-prompt":
                entry["text"] = _text(part.get("content"))
            elif kind in ("tool-call", "builtin-tool-call"):
                entry.update(tool_name=part.get("tool_name"), args=part.get("args"),
                             tool_call_id=part.get("tool_call_id"))
            elif kind in ("tool-return", "builtin-tool-return"):
                entry.update(tool_name=part.get("tool_name"), content=part.get("content"),
                             tool_call_id=part.get("tool_call_id"))
            elif kind == "retry-prompt":
                entry.update(content=part.get("content"), tool_name=part.get("tool_name"),
                             tool_call_id=part.get("tool_call_id"))
            else:
                entry["raw"] = part
            out.append(entry)
    return out


# ---------------------------------------------------------------- Upsonic -> PraisonAI


def _content_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def to_praisonai(row: dict[str, Any], session_id: str | None = None) -> dict[str, Any]:
    """A PraisonAI session document from a decoded Upsonic session row."""
    messages: list[dict[str, Any]] = []
    model = None
    for message in row.get("messages") or []:
        if not isinstance(message, dict):
            continue
        stamp = epoch_of(message.get("timestamp"))
        if message.get("kind") == "response":
            model = message.get("model_name") or model
            texts, calls, thinking = [], [], []
            for part in message.get("parts") or []:
                kind = part.get("part_kind") if isinstance(part, dict) else None
                if kind == "text":
                    texts.append(part.get("content") or "")
                elif kind == "thinking":
                    thinking.append(part.get("content") or "")
                elif kind in ("tool-call", "builtin-tool-call"):
                    args = part.get("args")
                    calls.append({"id": part.get("tool_call_id") or "", "type": "function",
                                  "function": {"name": part.get("tool_name") or "",
                                               "arguments": args if isinstance(args, str) else json.dumps(args)}})
            meta: dict[str, Any] = {}
            if message.get("model_name"):
                meta["model"] = message["model_name"]
            if thinking:
                meta["thinking"] = "\n\n".join(thinking)
            turn = {"role": "assistant", "content": "\n\n".join(texts), "timestamp": stamp, "metadata": meta}
            if calls:
                turn["tool_calls"] = calls
            messages.append(turn)
            continue
        for part in message.get("parts") or []:
            kind = part.get("part_kind") if isinstance(part, dict) else None
            part_stamp = epoch_of(part.get("timestamp")) if isinstance(part, dict) else None
            when = part_stamp if part_stamp is not None else stamp
            if kind == "system-prompt":
                messages.append({"role": "system", "content": part.get("content") or "", "timestamp": when,
                                 "metadata": {}})
            elif kind == "user-prompt":
                messages.append({"role": "user", "content": _text(part.get("content")), "timestamp": when,
                                 "metadata": {}})
            elif kind in ("tool-return", "retry-prompt", "builtin-tool-return"):
                turn = {"role": "tool", "content": _content_text(part.get("content")), "timestamp": when,
                        "metadata": {} if kind == "tool-return" else {"upsonic_part_kind": kind}}
                if part.get("tool_call_id") is not None:
                    turn["tool_call_id"] = part["tool_call_id"]
                elif kind == "retry-prompt":
                    turn["role"] = "user"
                messages.append(turn)
    agent_data = row.get("agent_data") if isinstance(row.get("agent_data"), dict) else {}
    usage = row.get("usage") if isinstance(row.get("usage"), dict) else None
    metadata = dict(row.get("metadata")) if isinstance(row.get("metadata"), dict) else {}
    if model or agent_data.get("model_name"):
        metadata.setdefault("model", model or agent_data.get("model_name"))
    if usage and (usage.get("input_tokens") or usage.get("output_tokens")):
        metadata.setdefault("total_tokens", int(usage.get("input_tokens", 0)) + int(usage.get("output_tokens", 0)))
    if usage and usage.get("cost") is not None:
        metadata.setdefault("cost", usage["cost"])
    metadata["source"] = "upsonic"
    metadata["upsonic"] = {"session_id": row.get("session_id"), "session_type": row.get("session_type"),
                           "agent_id": row.get("agent_id"), "summary": row.get("summary"), "usage": usage,
                           "session_data": row.get("session_data"), "agent_data": row.get("agent_data")}
    doc: dict[str, Any] = {
        "session_id": session_id or row["session_id"], "messages": messages,
        "created_at": _iso_utc(row.get("created_at")), "updated_at": _iso_utc(row.get("updated_at")),
        "agent_name": agent_data.get("agent_name"), "user_id": row.get("user_id"), "metadata": metadata,
        "gateway_session_id": None, "agent_id": row.get("agent_id"), "runtime_state": {}, "archived_messages": [],
    }
    for key in MIRRORED:
        if key in metadata:
            doc[key] = metadata[key]
    return doc


def _iso_utc(epoch: Any) -> str:
    stamp = epoch if isinstance(epoch, (int, float)) and not isinstance(epoch, bool) else None
    moment = datetime.fromtimestamp(stamp, timezone.utc) if stamp is not None else datetime.now(timezone.utc)
    return moment.isoformat()


# ---------------------------------------------------------------- PraisonAI -> Upsonic

_USAGE = {"input_tokens": 0, "cache_write_tokens": 0, "cache_read_tokens": 0, "output_tokens": 0,
          "input_audio_tokens": 0, "cache_audio_read_tokens": 0, "output_audio_tokens": 0, "details": {}}


def _request(parts_: list[dict[str, Any]], stamp: str | None) -> dict[str, Any]:
    return {"parts": parts_, "timestamp": stamp, "instructions": None, "kind": "request", "run_id": None,
            "metadata": None}


def from_praisonai(doc: dict[str, Any], *, now: int) -> dict[str, Any]:
    """A decoded Upsonic session row (as ``get_session(deserialize=False)`` returns) from a PraisonAI document."""
    history = [m for m in (doc.get("archived_messages") or []) + (doc.get("messages") or []) if isinstance(m, dict)]
    names: dict[str, str] = {}
    out: list[dict[str, Any]] = []
    prompts: list[str] = []
    meta = doc.get("metadata") if isinstance(doc.get("metadata"), dict) else {}
    for message in history:
        stamp = _iso(epoch_of(message.get("timestamp")))
        role, content = message.get("role"), message.get("content")
        text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
        if role == "assistant":
            parts_: list[dict[str, Any]] = []
            if text:
                parts_.append({"content": text, "id": None, "provider_name": None, "provider_details": None,
                               "part_kind": "text"})
            for call_id, name, arguments in tool_calls_of(message):
                names[call_id] = name
                parts_.append({"tool_name": name, "args": arguments, "tool_call_id": call_id, "id": None,
                               "provider_name": None, "provider_details": None, "part_kind": "tool-call"})
            msg_meta = message.get("metadata") if isinstance(message.get("metadata"), dict) else {}
            out.append({"parts": parts_, "usage": dict(_USAGE), "model_name": msg_meta.get("model") or meta.get("model"),
                        "timestamp": stamp, "kind": "response", "provider_name": None, "provider_url": None,
                        "provider_details": None, "provider_response_id": None,
                        "finish_reason": "tool_call" if message.get("tool_calls") else "stop", "run_id": None,
                        "metadata": None})
        elif role == "tool":
            call_id = message.get("tool_call_id")
            out.append(_request([{"tool_name": names.get(str(call_id), ""), "content": text,
                                  "tool_call_id": call_id, "metadata": None, "timestamp": stamp,
                                  "part_kind": "tool-return"}], stamp))
        elif role == "system":
            out.append(_request([{"content": text, "timestamp": stamp, "dynamic_ref": None,
                                  "part_kind": "system-prompt"}], stamp))
        else:
            prompts.append(text)
            out.append(_request([{"content": text, "timestamp": stamp, "part_kind": "user-prompt"}], stamp))
    checkpoint = doc.get("last_compaction")
    created = epoch_of(doc.get("created_at"))
    agent_data = {"agent_name": doc.get("agent_name")}
    if meta.get("model"):
        agent_data["model_name"] = meta["model"]
    return {
        "session_id": doc["session_id"], "session_type": "agent",
        "agent_id": doc.get("agent_id") or meta.get("agent_id"), "team_id": None, "workflow_id": None,
        "user_id": doc.get("user_id"),
        "session_data": {"user_prompts": prompts, "image_identifiers": [], "document_identifiers": []},
        "agent_data": agent_data, "team_data": None, "workflow_data": None,
        "metadata": {**meta, "converted_from": "praisonai"}, "runs": {}, "messages": out, "usage": None,
        "summary": checkpoint.get("summary") if isinstance(checkpoint, dict) else None,
        "created_at": int(created) if created is not None else now, "updated_at": now,
    }
