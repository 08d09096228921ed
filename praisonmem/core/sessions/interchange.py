"""Fine-tuning and interchange formats: ``session export --format openai-jsonl|sharegpt`` and ``session import``
of OpenAI-chat JSONL.

* ``openai-jsonl``: one ``{"messages": [...]}`` line per session, OpenAI's chat fine-tuning format. A message
  keeps only the keys that format defines: ``role`` and ``content``, an assistant's ``tool_calls``
  (``[{"id", "type": "function", "function": {"name", "arguments": "<JSON text>"}}]``), a tool result's
  ``tool_call_id``, and ``name``/``weight`` when the session kept them (in the message's ``metadata``, where
  an import puts them). PraisonAI stores messages in this shape already (its roles are OpenAI's), so a
  message's role, content and tool calls are written as stored, in order.
* ``sharegpt``: a JSON array of ``{"id", "conversations": [{"from", "value"}]}``, the roles ``system``,
  ``human``, ``gpt``, ``function_call`` (the value: the calls' ``{"name", "arguments"}`` as JSON) and
  ``observation`` (a tool's result). Export only.

What goes in: the active window (``messages``) and, for a gateway session, the chat its snapshots hold;
``archived`` puts the archived turns first; ``system_prompt`` adds a system message first; ``no_system``
leaves the session's own system messages out (compaction summaries among them). A session with nothing
left to write, without an assistant message (nothing to learn from), or with an encrypted message (its
text is not there to train on), is skipped and named in the summary.

Import reads OpenAI-chat JSONL (a blank line is skipped) into new sessions named ``<prefix>-<line>``,
each message as the library stores it; everything is validated before the first write and written
through the store's own protocol, as any import (:mod:`.transfer`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from praisonmem.core.errors import PraisonMemError, UsageError
from praisonmem.core.io import jsonfile
from praisonmem.core.io.safetext import json_safe
from praisonmem.core.io.timeutil import now_iso
from praisonmem.core.sessions.documents import ROLES, gateway_chat, is_encrypted, messages_of

Documents = list[tuple[str, str, dict[str, Any]]]  # (file, session id, document), as transfer.py reads them
KEPT_IN_METADATA = ("name", "weight")  # OpenAI message keys a PraisonAI message has no field for
SHAREGPT_ROLES = {"system": "system", "user": "human", "assistant": "gpt", "tool": "observation"}


# ---------------------------------------------------------------- export


def conversation(doc: dict[str, Any], *, archived: bool = False, system_prompt: str | None = None,
                 no_system: bool = False) -> list[dict[str, Any]]:
    """The messages one session's line holds, each as stored (see the module docstring for what is in)."""
    stored = (messages_of(doc, "archived_messages") if archived else []) + messages_of(doc)
    stored = [m for m in stored if isinstance(m, dict)]
    chat = gateway_chat(doc)
    if chat is not None:  # the gateway's snapshots are system messages; its chat is inside them
        stored = [m for m in stored if m.get("role") != "system"] + chat
    if no_system:
        stored = [m for m in stored if m.get("role") != "system"]
    head = [{"role": "system", "content": system_prompt}] if system_prompt is not None else []
    return head + stored


def openai_message(message: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"role": message.get("role"), "content": _content(message.get("content"))}
    calls = message.get("tool_calls")
    if isinstance(calls, list) and calls:
        out["tool_calls"] = [_tool_call(call) for call in calls]
    if message.get("tool_call_id") is not None:
        out["tool_call_id"] = message["tool_call_id"]
    meta = message.get("metadata") if isinstance(message.get("metadata"), dict) else {}
    for key in KEPT_IN_METADATA:
        if key in meta:
            out[key] = meta[key]
    return out


def _content(value: Any) -> Any:
    """Text as stored; OpenAI content parts (a list) as they are; anything else as its JSON text."""
    if value is None or isinstance(value, (str, list)):
        return value
    return jsonfile.dumps(value, compact=True)


def _tool_call(call: Any) -> Any:
    """A tool call as stored, its ``arguments`` made the JSON text OpenAI's format wants when a writer kept
    an object."""
    if not isinstance(call, dict) or not isinstance(call.get("function"), dict):
        return call
    arguments = call["function"].get("arguments")
    if arguments is None or isinstance(arguments, str):
        return call
    return {**call, "function": {**call["function"], "arguments": jsonfile.dumps(arguments, compact=True)}}


def _exportable(doc: dict[str, Any], messages: list[dict[str, Any]]) -> str | None:
    """Why a session is left out of a fine-tuning export, or ``None``."""
    if not messages:
        return "no messages"
    if not any(m.get("role") == "assistant" for m in messages):
        return "no assistant message"  # nothing for a model to learn from
    if any(is_encrypted(m.get("content")) for m in messages):
        return "encrypted messages"
    return None


def _conversations(docs: Documents, skipped: list[dict[str, str]], **shape: Any) -> Iterator[tuple[str, list[Any]]]:
    """Each exportable session's id and conversation (``shape``: :func:`conversation`'s options); the others are
    noted in ``skipped`` with why."""
    for _, sid, doc in docs:
        messages = conversation(doc, **shape)
        why = _exportable(doc, messages)
        if why:
            skipped.append({"session_id": sid, "reason": why})
        else:
            yield sid, messages


def export_openai_jsonl(docs: Documents, *, archived: bool = False, system_prompt: str | None = None,
                        no_system: bool = False) -> tuple[str, list[dict[str, str]]]:
    """The JSONL text, and the sessions skipped with why."""
    lines: list[str] = []
    skipped: list[dict[str, str]] = []
    for sid, messages in _conversations(docs, skipped, archived=archived, system_prompt=system_prompt,
                                        no_system=no_system):
        line = {"messages": [openai_message(m) for m in messages]}
        lines.append(json_safe(json.dumps(line, ensure_ascii=False)))
    return "".join(line + "\n" for line in lines), skipped


def sharegpt_turns(message: dict[str, Any]) -> list[dict[str, str]]:
    role = message.get("role")
    content = _content(message.get("content"))
    text = content if isinstance(content, str) else ("" if content is None else jsonfile.dumps(content, compact=True))
    calls = message.get("tool_calls") if isinstance(message.get("tool_calls"), list) else []
    turns = []
    if text or not calls:
        turns.append({"from": SHAREGPT_ROLES.get(str(role), str(role)), "value": text})
    if calls:
        found = []
        for call in calls:
            fn = call.get("function") if isinstance(call, dict) and isinstance(call.get("function"), dict) else {}
            arguments = fn.get("arguments")
            if isinstance(arguments, str):
                try:
                    arguments = json.loads(arguments)
                except ValueError:
                    pass
            found.append({"name": fn.get("name"), "arguments": arguments})
        turns.append({"from": "function_call", "value": json.dumps(found[0] if len(found) == 1 else found,
                                                                    ensure_ascii=False)})
    return turns


def export_sharegpt(docs: Documents, *, archived: bool = False, system_prompt: str | None = None,
                    no_system: bool = False) -> tuple[str, list[dict[str, str]]]:
    records: list[dict[str, Any]] = []
    skipped: list[dict[str, str]] = []
    for sid, messages in _conversations(docs, skipped, archived=archived, system_prompt=system_prompt,
                                        no_system=no_system):
        records.append({"id": sid, "conversations": [t for m in messages for t in sharegpt_turns(m)]})
    return json_safe(json.dumps(records, ensure_ascii=False, indent=2)) + "\n", skipped


# ---------------------------------------------------------------- import


def is_openai_chat(value: Any) -> bool:
    """A parsed line or document that is an OpenAI chat example (``messages`` and no session fields)."""
    return isinstance(value, dict) and isinstance(value.get("messages"), list) and "session_id" not in value \
        and "sessions" not in value


def read_jsonl(raw: bytes, file: str, prefix: str) -> list[dict[str, Any]] | None:
    """The sessions of an OpenAI-chat JSONL text (``None``: its first line is not an OpenAI chat example, so
    the text is not in this format); UsageError naming the first line that is not one."""
    lines = [(number, line) for number, line in enumerate(raw.split(b"\n"), 1) if line.strip()]
    parsed = []
    for number, line in lines:
        try:
            value = jsonfile.parse(line, file)
        except PraisonMemError as exc:
            if not parsed:
                return None
            raise UsageError(f"{file}: line {number}: not JSON ({getattr(exc, 'reason', exc.message)})") from exc
        if not parsed and not is_openai_chat(value):
            return None
        parsed.append((number, value))
    return sessions_from_jsonl(parsed, file, prefix) if parsed else None


def session_from_chat(example: Any, where: str, session_id: str) -> dict[str, Any]:
    """A new session document holding one OpenAI chat example's messages, as the library stores them;
    UsageError naming ``where`` when the example does not have the format's shapes."""
    if not is_openai_chat(example):
        raise UsageError(f"{where}: not an OpenAI chat example (expected {{\"messages\": [...]}})")
    if not example["messages"]:
        raise UsageError(f"{where}: 'messages' is empty")
    now = now_iso()
    from datetime import datetime

    stamp = datetime.fromisoformat(now).timestamp()
    messages = [_stored_message(m, f"{where}: messages[{i}]", stamp) for i, m in enumerate(example["messages"])]
    return {"session_id": session_id, "messages": messages, "created_at": now, "updated_at": now,
            "agent_name": None, "user_id": None, "metadata": {"imported_from": "openai-jsonl"},
            "gateway_session_id": None, "agent_id": None, "runtime_state": {}, "archived_messages": []}


def _stored_message(message: Any, where: str, stamp: float) -> dict[str, Any]:
    if not isinstance(message, dict):
        raise UsageError(f"{where} is {jsonfile.json_kind(message)}, not an object")
    role = message.get("role")
    if role not in ROLES:
        raise UsageError(f"{where} has role {role!r}, not one of {', '.join(ROLES)}")
    content = message.get("content")
    if content is not None and not isinstance(content, (str, list)):
        raise UsageError(f"{where}: content is {jsonfile.json_kind(content)}, not a string, a list of parts or null")
    meta = {key: message[key] for key in KEPT_IN_METADATA if key in message}
    out: dict[str, Any] = {"role": role, "content": content, "timestamp": stamp, "metadata": meta}
    if "tool_calls" in message and message["tool_calls"] is not None:
        out["tool_calls"] = _checked_calls(message["tool_calls"], where, role)
    if "tool_call_id" in message and message["tool_call_id"] is not None:
        if not isinstance(message["tool_call_id"], str):
            raise UsageError(f"{where}: tool_call_id is {jsonfile.json_kind(message['tool_call_id'])}, not a string")
        out["tool_call_id"] = message["tool_call_id"]
    elif role == "tool":
        raise UsageError(f"{where}: a tool message needs the tool_call_id of the call it answers")
    return out


def _checked_calls(calls: Any, where: str, role: str) -> list[dict[str, Any]]:
    if role != "assistant":
        raise UsageError(f"{where}: only an assistant message has tool_calls")
    if not isinstance(calls, list):
        raise UsageError(f"{where}: tool_calls is {jsonfile.json_kind(calls)}, not a list")
    for j, call in enumerate(calls):
        fn = call.get("function") if isinstance(call, dict) else None
        if not (isinstance(call, dict) and isinstance(call.get("id"), str) and isinstance(fn, dict)
                and isinstance(fn.get("name"), str) and isinstance(fn.get("arguments"), str)):
            raise UsageError(f"{where}: tool_calls[{j}] is not {{\"id\", \"type\": \"function\", \"function\": "
                             "{\"name\", \"arguments\": \"<JSON text>\"}}")
    return calls


def sessions_from_jsonl(lines: list[tuple[int, Any]], file: str, prefix: str) -> list[dict[str, Any]]:
    """Every line's session (``<prefix>-<line number>``), all validated before any is written."""
    if not lines:
        raise UsageError(f"{file}: no conversations in the file")
    return [session_from_chat(value, f"{file}: line {number}", f"{prefix}-{number}") for number, value in lines]
