"""What praisonai's state store keeps in Redis: the key names its writers use, and its values as it reads them.

``RedisStateStore`` (praisonai's ``persistence/state/redis.py``) prefixes every key (``praison:``) and writes:

* ``set(key, dict)``: a string holding ``json.dumps(dict, default=str, ensure_ascii=False)``; ``set(key, other)``
  wraps it first, ``{"value": other, "__wrapped__": true}``, and ``get`` unwraps it; ``set(…, ttl=N)`` is a
  ``SETEX``, its only expiry.
* ``hset(key, field, value)``: a hash whose fields hold ``json.dumps(value)``, or a string value raw;
  ``hgetall`` decodes each field as JSON, else returns its text.
* ``incr(key)``: an integer string (``get`` returns it as a number, being JSON).

Its writers (``PraisonAIDB``'s lifecycle hooks, with ``state_url=``): ``run:<session>:<run>`` (a run's input,
output, status, ``started_at``/``ended_at``), ``trace:<id>`` and ``span:<id>`` (tracing; a trace names its
session, a span its trace), ``agent:<session>`` (an agent's start/end). Anything else is ``other``; praisonai's
learn backend keeps ``learn:<store>`` under the same ``praison:`` (``praisonmem learn`` manages those).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

DEFAULT_PREFIX = "praison:"


class Kind(StrEnum):
    run = "run"
    trace = "trace"
    span = "span"
    agent = "agent"
    learn = "learn"
    other = "other"


class KindFilter(StrEnum):
    """``--kind``: one kind, or all of them."""

    run = "run"
    trace = "trace"
    span = "span"
    agent = "agent"
    learn = "learn"
    other = "other"
    all = "all"


def kind_of(name: str) -> Kind:
    head, sep, _ = name.partition(":")
    return Kind(head) if sep and head in Kind.__members__ else Kind.other


class Unreadable(ValueError):
    """A value the library's ``get``/``hgetall`` cannot decode (it raises on it)."""


def decode_string(raw: bytes) -> Any:
    """A string key's value as ``RedisStateStore.get`` returns it (an empty value reads as missing: ``None``)."""
    if not raw:
        return None
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise Unreadable(f"not UTF-8 ({exc.reason} at byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise Unreadable(f"not the JSON the state store writes ({exc})") from None
    if isinstance(data, dict) and "__wrapped__" in data and "value" in data:
        return data["value"]
    return data


def decode_hash(raw: dict[bytes, bytes]) -> dict[str, Any]:
    """A hash as ``RedisStateStore.hgetall`` returns it: each field JSON-decoded, else its text."""
    out: dict[str, Any] = {}
    for name, value in raw.items():
        try:
            text = value.decode("utf-8")
            key = name.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise Unreadable(f"a field is not UTF-8 ({exc.reason} at byte {exc.start})") from None
        try:
            out[key] = json.loads(text)
        except json.JSONDecodeError:
            out[key] = text
    return out


@dataclass
class StateKey:
    """One key under the prefix: what it is, as listed."""

    key: str  # the Redis key, prefix included
    name: str  # the library's key (prefix removed)
    type: str  # Redis type: string, hash, list, set, zset, stream
    ttl: int | None  # seconds left, None when the key never expires
    size: int  # bytes of its value (a hash: its fields' names and values)
    value: Any = None  # as the library reads it (strings and hashes only)
    problem: str | None = None  # why the library could not read it
    kind: Kind = Kind.other
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def session_id(self) -> str | None:
        value = self.value if isinstance(self.value, dict) else {}
        if self.kind is Kind.run:
            found = value.get("session_id")
            return found if isinstance(found, str) else self.name[4:].rpartition(":")[0] or None
        if self.kind is Kind.agent:
            return self.name[6:]
        found = value.get("session_id")
        return found if isinstance(found, str) else None

    @property
    def run_id(self) -> str | None:
        value = self.value if isinstance(self.value, dict) else {}
        found = value.get("run_id")
        if isinstance(found, str):
            return found
        return self.name.rpartition(":")[2] if self.kind is Kind.run else None

    @property
    def trace_id(self) -> str | None:
        value = self.value if isinstance(self.value, dict) else {}
        if self.kind is Kind.trace:
            return self.name[6:]
        found = value.get("trace_id")
        return found if isinstance(found, str) else None

    @property
    def updated_at(self) -> float | None:
        """When a writer last stamped it: ``ended_at``, else ``started_at`` (epoch seconds)."""
        value = self.value if isinstance(self.value, dict) else {}
        for name in ("ended_at", "updated_at", "started_at", "created_at"):
            stamp = value.get(name)
            if isinstance(stamp, (int, float)) and not isinstance(stamp, bool):
                return float(stamp)
        return None

    @property
    def status(self) -> str | None:
        value = self.value if isinstance(self.value, dict) else {}
        found = value.get("status")
        return found if isinstance(found, str) else None

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, "name": self.name, "kind": self.kind.value, "type": self.type,
                "session_id": self.session_id, "run_id": self.run_id, "trace_id": self.trace_id,
                "status": self.status, "ttl": self.ttl, "size": self.size, "updated_at": self.updated_at,
                "problem": self.problem}

    def shown(self) -> dict[str, Any]:
        """``state show``: the listing's fields and the value as the library reads it."""
        return {**self.to_json(), "value": self.value}
