"""What makes a PraisonAI document valid: one function per kind of file.

Each rule reads an already-parsed document and appends findings; severity
follows what the library would do with the file: ``error`` when it would
crash, lose data or never find it, ``warning`` when it works but something is
off, ``info`` for facts worth knowing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import datetime
from typing import Any, Literal

from praisonmem.core import learn, memory
from praisonmem.core.io.jsonfile import json_kind
from praisonmem.core.io.timeutil import epoch_of
from praisonmem.core.layout import ENTITIES
from praisonmem.core.sessions import ENCRYPTED_PREFIX, ROLES, is_encrypted, session_key_rules, tool_calls_of
from praisonmem.core.io.safetext import plural

Severity = Literal["error", "warning", "info"]
Report = Callable[[Severity, str, str], None]  # (severity, code, message)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


# ---------------------------------------------------------------- sessions


def session(doc: dict[str, Any], stem: str, report: Report) -> None:
    session_key_rules(doc, stem, report)  # whether it is a session at all: the sessions package's, which its store asks
    for key in ("created_at", "updated_at"):
        if isinstance(doc.get(key), str) and epoch_of(doc[key]) is None:
            report("warning", "session.timestamp", f"'{key}' is not an ISO-8601 time: {doc[key]!r}")
    active = doc.get("messages") if isinstance(doc.get("messages"), list) else []
    archived = doc.get("archived_messages") if isinstance(doc.get("archived_messages"), list) else []
    everything = archived + active
    plain = plain_turns(everything)  # most sessions: nothing to say of any turn, told without a step per turn
    if plain is not None:
        (sealed, tool_turns), calls_sealed = plain, 0  # no plain turn has tool calls
    else:
        for key, messages in (("archived_messages", archived), ("messages", active)):
            for index, message in enumerate(messages):
                if not plain_message(message):
                    _message(message, f"{key}[{index}]", report)
        everything = [m for m in everything if isinstance(m, dict)]
        sealed, calls_sealed = _sealed(everything, "content"), _sealed(everything, "tool_calls")
        tool_turns = not calls_sealed and _has_tool_turns(everything)
    if sealed:
        report("info", "session.encrypted", f"{sealed} of {plural(len(everything), 'message')} encrypted "
                                            "(EncryptedSessionStore): readable only with the session key")
    if not calls_sealed and tool_turns:  # encrypted calls: their ids are unseen
        _tool_pairing(everything, report)
    _compaction(doc.get("last_compaction"), len(active), "last_compaction" in doc, report)


def run_metadata(meta: Any, report: Report) -> None:
    """A ``SessionManager`` run's ``metadata.json``: ``from_dict`` needs five keys and ISO times."""
    if not isinstance(meta, dict):
        report("error", "run.metadata", f"top-level JSON value is {json_kind(meta)}, not an object")
        return
    missing = [k for k in ("session_id", "run_id", "trace_id", "created_at", "updated_at") if k not in meta]
    if missing:
        report("error", "run.metadata", f"no {', '.join(map(repr, missing))}: praisonai's SessionManager skips "
                                        "this run")
    for key in ("created_at", "updated_at"):
        if key in meta and (not isinstance(meta[key], str) or epoch_of(meta[key]) is None):
            report("error", "run.metadata", f"'{key}' is not an ISO-8601 time: praisonai's SessionManager skips "
                                            "this run")


def run_events(lines: list[bytes], report: Report) -> None:
    import json

    bad = 0
    for line in lines:
        if line.strip():
            try:
                json.loads(line)
            except ValueError:
                bad += 1
    if bad:
        report("warning", "run.events", f"{plural(bad, 'line')} are not JSON: praisonai's SessionManager skips them")


PLAIN_KEYS = frozenset(("role", "content", "timestamp", "metadata"))
NUMBERS = (int, float)


def plain_message(message: Any) -> bool:
    """A turn :func:`_message` finds nothing in, told cheaply: only role, content, timestamp and metadata,
    a known role, text content, a numeric timestamp, metadata an object that is not a partial turn."""
    if type(message) is not dict or not message.keys() <= PLAIN_KEYS:
        return False
    if type(message.get("content")) is not str or type(message.get("timestamp")) not in NUMBERS:
        return False
    if message.get("role") not in ROLES:
        return False
    meta = message.get("metadata", message)  # absent: nothing to say
    return meta is message or (type(meta) is dict and meta.get("partial") is not True)


def plain_turns(messages: list[Any]) -> tuple[int, bool] | None:
    """When every turn is a :func:`plain_message`, told by C-level passes over the list: how many are
    :func:`is_encrypted` and whether one is a tool result; else ``None``, which may be wrong (a ``partial``
    of 1, an unhashable role) and only costs the turn-by-turn check."""
    from itertools import repeat
    from operator import itemgetter

    if not messages:
        return 0, False
    if set(map(type, messages)) != {dict} or not all(map(PLAIN_KEYS.issuperset, messages)):
        return None
    try:
        roles, contents, stamps = zip(*map(itemgetter("role", "content", "timestamp"), messages))
        if not set(roles) <= ROLE_SET:
            return None
    except (KeyError, TypeError):  # a turn without one of them, an unhashable role
        return None
    if set(map(type, contents)) != {str} or not set(map(type, stamps)) <= NUMBER_TYPES:
        return None
    metas = list(map(dict.get, messages, repeat("metadata"), repeat(EMPTY)))  # absent: nothing to say
    if set(map(type, metas)) != {dict} or True in map(dict.get, metas, repeat("partial")):
        return None
    return sum(map(str.startswith, contents, repeat(ENCRYPTED_PREFIX))), "tool" in roles  # is_encrypted of str


EMPTY: dict[str, Any] = {}
NUMBER_TYPES = frozenset(NUMBERS)
ROLE_SET = frozenset(ROLES)


def _sealed(messages: list[dict[str, Any]], key: str) -> int:
    """How many messages' ``key`` :func:`is_encrypted` (no Python step per message but the test itself)."""
    from itertools import repeat

    return sum(map(is_encrypted, map(dict.get, messages, repeat(key))))


def _has_tool_turns(messages: list[dict[str, Any]]) -> bool:
    """A message with tool calls or a tool result: without one :func:`_tool_pairing` has nothing to say."""
    from itertools import repeat

    return any(map(dict.get, messages, repeat("tool_calls"))) or "tool" in map(dict.get, messages, repeat("role"))


def _message(message: Any, where: str, report: Report) -> None:
    if not isinstance(message, dict):
        report("error", "message.type", f"{where} is {json_kind(message)}, not an object: "
                                        "the library drops it on its next write")
        return
    role = message.get("role")
    if "role" not in message:
        report("error", "message.role", f"{where} has no 'role'")
    elif role not in ROLES:
        report("warning", "message.role", f"{where} has role {role!r}, not one of {', '.join(ROLES)}")
    content = message.get("content")
    if "content" not in message:
        report("warning", "message.content", f"{where} has no 'content'")
    elif not isinstance(content, str):
        report("warning", "message.content", f"{where} content is {json_kind(content)}, not a string")
    if "timestamp" not in message:
        report("warning", "message.timestamp", f"{where} has no 'timestamp' (the library stamps it with the "
                                              "current time on its next write)")
    elif not _is_number(message["timestamp"]):
        report("warning", "message.timestamp", f"{where} timestamp is {json_kind(message['timestamp'])}, "
                                              "not epoch seconds")
    meta = message.get("metadata")
    if "metadata" in message and not isinstance(meta, dict):
        report("warning", "message.metadata", f"{where} metadata is {json_kind(meta)}, not an object")
    calls = message.get("tool_calls")
    if calls is not None and not is_encrypted(calls):  # the wrapper stores encrypted calls as one token string
        if not isinstance(calls, list):
            report("error", "message.tool_calls", f"{where} tool_calls is {json_kind(calls)}, not a list")
        else:
            for n, call in enumerate(calls):
                fn = call.get("function") if isinstance(call, dict) else None
                if not (isinstance(call, dict) and isinstance(call.get("id"), str) and isinstance(fn, dict)
                        and isinstance(fn.get("name"), str) and isinstance(fn.get("arguments"), str)):
                    report("error", "message.tool_calls",
                           f"{where} tool_calls[{n}] is not {{id, type, function: {{name, arguments}}}}")
    if "tool_call_id" in message and not isinstance(message["tool_call_id"], (str, type(None))):
        report("error", "message.tool_call_id", f"{where} tool_call_id is {json_kind(message['tool_call_id'])}")
    if isinstance(meta, dict) and meta.get("partial") is True:
        report("info", "message.partial", f"{where} is a partial assistant turn (interrupted or still streaming)")


def _tool_pairing(messages: list[dict[str, Any]], report: Report) -> None:
    asked: dict[str, int] = {}
    answered: set[str] = set()
    for position, message in enumerate(messages):
        if message.get("tool_calls"):  # tool_calls_of finds none in a falsy value
            for call_id, _, _ in tool_calls_of(message):
                if call_id:
                    asked[call_id] = position
        if message.get("role") == "tool":
            call_id = message.get("tool_call_id")
            if not isinstance(call_id, str):
                report("warning", "tool.unlinked", "a tool result has no tool_call_id")
            elif call_id not in asked:
                report("warning", "tool.orphan", f"tool result for '{call_id}' answers no earlier tool call "
                                                 "(providers reject such a history)")
            else:
                answered.add(call_id)
    for call_id in asked:
        if call_id not in answered:
            report("warning", "tool.unanswered", f"tool call '{call_id}' has no tool result")


def _compaction(checkpoint: Any, active: int, present: bool, report: Report) -> None:
    if not present or checkpoint is None:
        return
    if not isinstance(checkpoint, dict):
        report("error", "compaction.type", f"'last_compaction' is {json_kind(checkpoint)}, not an object")
        return
    index = checkpoint.get("message_index")
    if not isinstance(index, int) or isinstance(index, bool):
        report("error", "compaction.index", f"last_compaction.message_index is {json_kind(index)}, not an integer")
    elif not 0 <= index <= active:
        report("error", "compaction.index",
               f"last_compaction.message_index {index} is outside the {active} active messages")
    if not isinstance(checkpoint.get("summary"), str):
        report("warning", "compaction.summary", "last_compaction has no summary text")


# ---------------------------------------------------------------- FileMemory


def memory_items(doc: Any, name: str, report: Report) -> list[str]:
    """A short_term/long_term/episodic list; returns the ids seen."""
    if not isinstance(doc, list):
        report("error", "memory.type", f"{name} holds {json_kind(doc)}, not a list: FileMemory() crashes on it")
        return []
    ids = []
    for index, item in enumerate(doc):
        where = f"item {index}"
        if not isinstance(item, dict):
            report("error", "memory.item", f"{where} is {json_kind(item)}, not an object: FileMemory() crashes on it")
            continue
        extra = [k for k in item if k not in memory.ITEM_KEYS]
        if extra:
            report("error", "memory.extra_key", f"{where} has unknown {'key' if len(extra) == 1 else 'keys'} {', '.join(map(repr, extra))}: "
                                                "MemoryItem() raises TypeError and FileMemory() crashes")
        for key in ("id", "content"):
            if key not in item:
                report("error", "memory.missing_key", f"{where} has no '{key}': FileMemory() crashes")
        if "content" in item and not isinstance(item["content"], str):
            report("error", "memory.type", f"{where} content is {json_kind(item['content'])}: search crashes")
        if "id" in item:
            if isinstance(item["id"], str):
                ids.append(item["id"])
            else:
                report("warning", "memory.type", f"{where} id is {json_kind(item['id'])}, not a string")
        if "metadata" in item and not isinstance(item["metadata"], dict):
            report("error", "memory.type", f"{where} metadata is {json_kind(item['metadata'])}, not an object")
        if "importance" in item:
            value = item["importance"]
            if not _is_number(value):
                report("error", "memory.type", f"{where} importance is {json_kind(value)}: search crashes")
            elif not 0.0 <= value <= 1.0:
                report("warning", "memory.importance", f"{where} importance {value} is outside 0..1")
        for key in ("created_at", "updated_at"):
            if key in item and not _is_number(item[key]):
                report("warning", "memory.type", f"{where} {key} is {json_kind(item[key])}, not epoch seconds")
        if "access_count" in item and not (isinstance(item["access_count"], int)
                                           and not isinstance(item["access_count"], bool)):
            report("warning", "memory.type", f"{where} access_count is {json_kind(item['access_count'])}")
    return ids


def _objects(doc: Any, report: Report, codes: tuple[str, str], *, file: str, member: str,
             file_then: str = "", member_then: str = "") -> Iterator[tuple[str, str, dict[str, Any]]]:
    """``(where, key, value)`` of each object in a file of objects keyed by id; a file or a member that is not
    an object is an error (``*_then``: what the library does with it) and is passed over."""
    if not isinstance(doc, dict):
        report("error", codes[0], f"{file} holds {json_kind(doc)}, not an object{file_then}")
        return
    for key, value in doc.items():
        where = f"{member} '{key}'"
        if isinstance(value, dict):
            yield where, key, value
        else:
            report("error", codes[1], f"{where} is {json_kind(value)}, not an object{member_then}")


def entities(doc: Any, report: Report) -> None:
    crash = ": FileMemory() crashes"
    for where, key, entity in _objects(doc, report, ("memory.type", "memory.item"), file=ENTITIES,
                                       member="entity", file_then=crash, member_then=crash):
        extra = [k for k in entity if k not in memory.ENTITY_KEYS]
        if extra:
            report("error", "memory.extra_key", f"{where} has unknown {'key' if len(extra) == 1 else 'keys'} {', '.join(map(repr, extra))}: "
                                                "EntityItem() raises TypeError and FileMemory() crashes")
        for required in ("id", "name", "entity_type"):
            if required not in entity:
                report("error", "memory.missing_key", f"{where} has no '{required}': FileMemory() crashes")
        if "attributes" in entity and not isinstance(entity["attributes"], dict):
            report("error", "memory.type", f"{where} attributes is {json_kind(entity['attributes'])}")
        if "relationships" in entity and not isinstance(entity["relationships"], list):
            report("error", "memory.type", f"{where} relationships is {json_kind(entity['relationships'])}")
        if entity.get("id") is not None and entity.get("id") != key:
            report("warning", "memory.entity_id", f"{where} is stored under a key that is not its id")


def summaries(doc: Any, report: Report) -> None:
    if not isinstance(doc, list):
        report("error", "memory.type", f"summaries.json holds {json_kind(doc)}, not a list")
        return
    for index, item in enumerate(doc):
        if not isinstance(item, dict) or not isinstance(item.get("summary"), str):
            report("warning", "memory.item", f"summary {index} is not an object with a 'summary' text")


def config(doc: Any, report: Report) -> None:
    if not isinstance(doc, dict):
        report("error", "memory.type", f"config.json holds {json_kind(doc)}, not an object")
        return
    for key, value in doc.items():
        found = memory.config_problem(key, value)
        if found:
            report(found[0], "memory.config", f"'{key}' {found[1]}")


def episodic_date(stem: str, report: Report) -> None:
    """A name that is no date at all; a raw date (``2026-3-5``) is ``migrate``'s (``episodic.raw_date``)."""
    try:
        datetime.strptime(stem, "%Y-%m-%d")
    except ValueError:
        report("error", "episodic.date", f"'{stem}' is not a valid YYYY-MM-DD date: the library never reads it")


# ---------------------------------------------------------------- learn stores


def learn_store(doc: Any, report: Report) -> None:
    for where, key, entry in _objects(doc, report, ("learn.type", "learn.entry"), file="store", member="entry",
                                      file_then=" keyed by entry id"):
        for required in ("id", "content"):
            if required not in entry:
                report("error", "learn.missing_key", f"{where} has no '{required}': the store fails to load")
        if "id" in entry and entry["id"] != key:
            report("warning", "learn.id", f"{where} is stored under a key that is not its id ({entry['id']!r})")
        extra = [k for k in entry if k not in learn.ENTRY_KEYS]
        if extra:
            report("info", "learn.extra_key", f"{where} has {'a key' if len(extra) == 1 else 'keys'} the library drops: {', '.join(extra)}")
        if "use_count" in entry and not (isinstance(entry["use_count"], int)
                                         and not isinstance(entry["use_count"], bool)):
            report("warning", "learn.type", f"{where} use_count is {json_kind(entry['use_count'])}")
