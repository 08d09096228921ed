"""praisonai's Redis state store, read and changed as its own client would, and never behind a writer's back.

* Keys are found with ``SCAN … MATCH <prefix>* COUNT 500`` (the prefix's glob characters escaped), never
  ``KEYS``: a big keyspace is walked in bounded steps, the single-threaded server never stalls.
* A read is pipelined (no ``MULTI``: a read-only ACL user may not run it): ``GET`` and ``PTTL`` of each key of a
  batch; a key that is not a string is read by its ``TYPE`` (``TYPE``, ``PTTL``, its value, ``TYPE`` again: one
  whose type changed in between is read again).
* A delete is compare-and-delete: ``WATCH`` the keys, read each again and compare with what was planned (and
  shown, and confirmed), then ``MULTI``/``DEL``/``EXEC``; a writer that changed any of them, before or after
  the ``WATCH``, makes it refuse (exit 4) with nothing deleted.
* An import writes every key of the file in one ``MULTI`` after a ``WATCH``/``EXISTS`` of them all: a key that is
  there already (or appears meanwhile) refuses the whole import; each TTL is restored as the instant it
  expires (``PEXPIREAT``), so a key lives no longer than it would have; one that expired since the export is not
  written.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from praisonmem.core.errors import Refused
from praisonmem.core.io import redisurl
from praisonmem.core.state.model import StateKey, Unreadable, decode_hash, decode_string, kind_of

SCAN_COUNT = 500
BATCH = 500  # keys per pipelined read
CONFLICT = "another writer changed the state store meanwhile"
_GLOB = re.compile(r"([*?\[\]\\])")
READERS = {"string": ("GET",), "hash": ("HGETALL",), "list": ("LRANGE", 0, -1), "set": ("SMEMBERS",),
           "zset": ("ZRANGE", 0, -1, "WITHSCORES")}


def glob_escape(text: str) -> str:
    return _GLOB.sub(r"\\\1", text)


@dataclass
class Raw:
    """One key as the server holds it: bytes, exactly."""

    key: bytes
    type: str
    pttl: int  # milliseconds left; -1: no expiry; -2: gone
    value: Any  # bytes (string), dict (hash), list (list, set), list of (member, score) (zset); None otherwise

    @property
    def gone(self) -> bool:
        return self.type == "none"


class RedisState:
    """The state store's keys under one prefix of one Redis database."""

    def __init__(self, url: str, prefix: str) -> None:
        self.url = url
        self.label = redisurl.parse(url, "--store")
        self.prefix = prefix
        self._client: Any = None

    def __str__(self) -> str:
        return self.label

    @contextmanager
    def client(self, then: str) -> Iterator[Any]:
        with redisurl.errors(self.label, then, conflict=CONFLICT):
            if self._client is None:
                self._client = redisurl.connect(self.url)
            yield self._client

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    # ------------------------------------------------------------------ reading

    def full(self, name: str) -> bytes:
        return (self.prefix + name).encode("utf-8")

    def scan(self, pattern: str = "*") -> list[bytes]:
        """Every key under the prefix matching ``pattern`` (a glob on the library's key), sorted."""
        with self.client("nothing read") as client:
            match = glob_escape(self.prefix).encode("utf-8") + pattern.encode("utf-8")
            return sorted(set(client.scan_iter(match=match, count=SCAN_COUNT)))

    def others(self) -> int:
        """How many keys the database holds in all (to tell an empty store from another key space)."""
        with self.client("nothing read") as client:
            return int(client.dbsize())

    def read(self, keys: list[bytes]) -> list[Raw]:
        """Each key's type, TTL and value; a key gone meanwhile is left out."""
        found: list[Raw] = []
        for start in range(0, len(keys), BATCH):
            found += [r for r in self._read_batch(keys[start:start + BATCH]) if not r.gone]
        return found

    def _read_batch(self, keys: list[bytes]) -> list[Raw]:
        """Optimistically ``GET`` and ``PTTL`` each key (the store's keys are strings, nearly all); a key that is
        not a string (``WRONGTYPE``) is read by its type on its own."""
        with self.client("nothing read") as client:
            pipe = client.pipeline(transaction=False)
            for key in keys:
                pipe.get(key)
                pipe.pttl(key)
            replies = pipe.execute(raise_on_error=False)
            out: list[Raw] = []
            for key, value, pttl in zip(keys, replies[::2], replies[1::2]):
                if isinstance(value, Exception) or isinstance(pttl, Exception):
                    out.append(self._read_one(client, key))
                elif value is None or pttl == -2:  # gone meanwhile
                    out.append(Raw(key, "none", -2, None))
                else:
                    out.append(Raw(key, "string", int(pttl), value))
            return out

    @staticmethod
    def _queue(pipe: Any, key: bytes, kind: str) -> None:
        pipe.pttl(key)
        reader = READERS.get(kind)
        if reader is not None:
            pipe.execute_command(reader[0], key, *reader[1:])
        pipe.type(key)  # again: the value read is of the type asked for

    @staticmethod
    def _settled(key: bytes, kind: str, replies: list[Any]) -> Raw | None:
        """The key from its replies, or ``None`` when it changed type meanwhile (or a reply failed)."""
        if any(isinstance(r, Exception) for r in replies) or _type(replies[-1]) != kind:
            return None
        if kind == "none":
            return Raw(key, "none", -2, None)
        return Raw(key, kind, int(replies[0]), _shape(kind, replies[1]) if kind in READERS else None)

    def _read_one(self, client: Any, key: bytes, tries: int = 3) -> Raw:
        """A key that changed type while it was read, read on its own until it holds still."""
        for _ in range(tries):
            kind = _type(client.type(key))
            pipe = client.pipeline(transaction=False)
            self._queue(pipe, key, kind)
            raw = self._settled(key, kind, pipe.execute(raise_on_error=False))
            if raw is not None:
                return raw
        raise Refused(f"{self.label}: key '{_text(key)}' keeps changing type; nothing read")

    def describe(self, raw: Raw) -> StateKey:
        text = _text(raw.key)
        name = text[len(self.prefix):] if text.startswith(self.prefix) else text
        item = StateKey(key=text, name=name, type=raw.type, ttl=_seconds(raw.pttl), size=_size(raw.value),
                        kind=kind_of(name))
        try:
            if raw.type == "string":
                item.value = decode_string(raw.value)
            elif raw.type == "hash":
                item.value = decode_hash(raw.value)
            else:
                item.problem = f"a {raw.type}: the state store writes strings and hashes only"
        except Unreadable as exc:
            item.problem = str(exc)
        return item

    # ------------------------------------------------------------------ writing

    def delete(self, planned: list[Raw]) -> None:
        """Delete exactly ``planned``, or nothing if any of them changed since it was read."""
        keys = [r.key for r in planned]
        with self.client("nothing changed") as client, client.pipeline(transaction=True) as pipe:
            pipe.watch(*keys)  # from here on, EXEC fails if anyone else writes one of them
            for was in planned:
                kind = _type(pipe.type(was.key))
                reader = READERS.get(kind)
                value = _shape(kind, pipe.execute_command(reader[0], was.key, *reader[1:])) if reader else None
                if (kind, value) != (was.type, was.value):
                    raise Refused(f"{self.label}: {CONFLICT} (key '{_text(was.key)}'); nothing changed")
            pipe.multi()
            pipe.delete(*keys)
            pipe.execute()

    def now_ms(self) -> int:
        with self.client("nothing read") as client:
            seconds, micros = client.time()
            return int(seconds) * 1000 + int(micros) // 1000

    def restore(self, records: list[dict[str, Any]]) -> list[str]:
        """Write every record in one transaction (none of their keys may exist); the keys written."""
        keys = [r["raw_key"] for r in records]
        with self.client("nothing changed") as client, client.pipeline(transaction=True) as pipe:
            pipe.watch(*keys)
            there = [_text(k) for k in keys if pipe.exists(k)]
            if there:
                more = f" and {len(there) - 1} more" if len(there) > 1 else ""
                raise Refused(f"{self.label}: key '{there[0]}'{more} already there; not overwritten, nothing "
                              "imported")
            pipe.multi()
            for record in records:
                _write(pipe, record)
            pipe.execute()
        return [_text(k) for k in keys]


def _write(pipe: Any, record: dict[str, Any]) -> None:
    key, kind, value = record["raw_key"], record["type"], record["raw_value"]
    if kind == "string":
        pipe.set(key, value)
    elif kind == "hash":
        pipe.hset(key, mapping=value)
    elif kind == "list":
        pipe.rpush(key, *value)
    elif kind == "set":
        pipe.sadd(key, *value)
    else:
        pipe.zadd(key, {member: score for member, score in value})
    if record.get("expires_at") is not None:
        pipe.pexpireat(key, record["expires_at"])


def _shape(kind: str, reply: Any) -> Any:
    """A value reply in one form whatever redis-py's version returns: hashes as dicts, sets sorted."""
    if kind == "hash" and isinstance(reply, list):
        return dict(zip(reply[::2], reply[1::2]))
    if kind == "set":
        return sorted(reply)
    if kind == "zset":
        if reply and not isinstance(reply[0], (tuple, list)):
            reply = list(zip(reply[::2], reply[1::2]))
        return [(m, float(s)) for m, s in reply]
    return reply


def _type(reply: Any) -> str:
    return reply.decode() if isinstance(reply, bytes) else str(reply)


def _seconds(pttl: int) -> int | None:
    return None if pttl < 0 else (pttl + 500) // 1000  # as Redis's TTL rounds


def _size(value: Any) -> int:
    if isinstance(value, bytes):
        return len(value)
    if isinstance(value, dict):
        return sum(len(k) + len(v) for k, v in value.items())
    if isinstance(value, list):
        return sum(len(v[0]) if isinstance(v, tuple) else len(v) for v in value)
    return 0


def _text(key: bytes) -> str:
    return key.decode("utf-8", "replace")


# ---------------------------------------------------------------- export records


def encode_record(raw: Raw, now_ms: int) -> dict[str, Any]:
    """One export line: the key, its type, its expiry and its value, byte for byte (base64 where not UTF-8)."""
    try:
        for part in _parts(raw):
            part.decode("utf-8")
        encoding = "utf-8"
    except UnicodeDecodeError:
        encoding = "base64"

    def decode(data: bytes) -> str:
        return data.decode("utf-8") if encoding == "utf-8" else base64.b64encode(data).decode("ascii")

    value: Any
    if raw.type == "string":
        value = decode(raw.value)
    elif raw.type == "hash":
        value = {decode(k): decode(v) for k, v in raw.value.items()}
    elif raw.type in ("list", "set"):
        value = [decode(v) for v in raw.value]
    else:
        value = [[decode(m), s] for m, s in raw.value]
    return {"key": decode(raw.key), "encoding": encoding, "type": raw.type, "ttl": _seconds(raw.pttl),
            "expires_at": None if raw.pttl < 0 else now_ms + raw.pttl, "value": value}


def _parts(raw: Raw) -> list[bytes]:
    if isinstance(raw.value, bytes):
        return [raw.key, raw.value]
    if isinstance(raw.value, dict):
        return [raw.key, *raw.value.keys(), *raw.value.values()]
    return [raw.key, *(v[0] if isinstance(v, tuple) else v for v in raw.value or [])]


def decode_record(record: dict[str, Any]) -> dict[str, Any]:
    """An export line back to bytes (``raw_key``, ``raw_value``); ``ValueError`` saying what is wrong."""
    encoding, kind, value = record.get("encoding"), record.get("type"), record.get("value")
    if encoding not in ("utf-8", "base64"):
        raise ValueError("'encoding' must be \"utf-8\" or \"base64\"")

    def raw(text: Any) -> bytes:
        if not isinstance(text, str):
            raise ValueError("keys, fields and members must be strings")
        return text.encode("utf-8") if encoding == "utf-8" else base64.b64decode(text, validate=True)

    if kind == "string":
        out: Any = raw(value)
    elif kind == "hash" and isinstance(value, dict) and value:
        out = {raw(k): raw(v) for k, v in value.items()}
    elif kind in ("list", "set") and isinstance(value, list) and value:
        out = [raw(v) for v in value]
    elif kind == "zset" and isinstance(value, list) and value:
        if not all(isinstance(p, list) and len(p) == 2 and isinstance(p[1], (int, float)) for p in value):
            raise ValueError("a zset's value must be [member, score] pairs")
        out = [(raw(m), float(s)) for m, s in value]
    else:
        raise ValueError(f"a {kind!r} key with this value cannot be written (types: string, hash, list, set, zset; "
                         "none empty)")
    expires = record.get("expires_at")
    if expires is not None and (not isinstance(expires, int) or isinstance(expires, bool) or expires <= 0):
        raise ValueError("'expires_at' must be a positive integer (milliseconds since the epoch) or null")
    return {"raw_key": raw(record.get("key")), "type": kind, "raw_value": out, "expires_at": expires}

