"""Upsonic 0.77.3's RedisStorage over redis-py (the ``redis`` extra, imported only for a ``redis://``,
``rediss://`` or ``unix://`` URL).

The library's layout under its prefix (``db_prefix``, default ``upsonic``): each record is one string key,
``<prefix>:sessions:<session_id>`` or ``<prefix>:user_memories:<user_id>``, holding
``json.dumps(record, ensure_ascii=False)`` in UTF-8 (the fields plain JSON); beside them index sets of ids,
``<prefix>:sessions:index:<field>:<value>`` for ``user_id``, ``agent_id``, ``team_id``, ``workflow_id`` and
``session_type``, and ``<prefix>:user_memories:index:<field>:<value>`` for ``user_id``, ``agent_id`` and
``team_id``, one per non-null value. With ``expire=N`` the library gives every record and index set a TTL of N
seconds on each write. The table names are fixed in the keys (``session_table`` does not change them).

Reads list the records with ``SCAN`` (a match on the prefix, in batches; never ``KEYS``), read them with ``MGET`` in
batches and refuse, before anything is shown or written, a key under the prefix that is not one of
the library's records (another application's keys under the same prefix). A write is compare-and-write:
every key it reads or changes (the record and the index sets it touches) is ``WATCH``ed and read, the new
values are queued in ``MULTI`` and ``EXEC`` applies them all or, when any watched key changed meanwhile,
none (exit 4). A record keeps its TTL (``SET … KEEPTTL``); a new record gets none unless an expiry is given;
an index set a write creates or extends gets the record's TTL, so an index never outlives nor, by the write,
expires before its record. Index sets are kept as the library keeps them (the id added to each set of the
record's values), and an id is also taken out of the set of a value the record no longer has, as the library's
delete does. The URL's password is never shown: every message names the URL masked.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from praisonmem.core.errors import CorruptFile, UsageError
from praisonmem.core.io import pgurl
from praisonmem.core.result import Action
from praisonmem.core.upsonic import records
from praisonmem.core.upsonic.schema import SESSION_TABLE, USAGE_ENTRY_COLUMNS, USER_MEMORY_TABLE, Upsert

SCHEMES = ("redis", "rediss", "unix")
DEFAULT_PREFIX = "upsonic"
TIMEOUT = 10.0  # seconds to connect and for each reply
SCAN_COUNT = 1000  # keys asked of each SCAN step
BATCH = 500  # keys read per MGET
TABLES = {"sessions": "sessions", "users": "user_memories"}
USAGE_TABLE = "usage_entries"
INDEX_FIELDS = {"sessions": ("user_id", "agent_id", "team_id", "workflow_id", "session_type"),
                "users": ("user_id", "agent_id", "team_id")}
# The usage ledger's index sets: the library names them by its usage table's name, not the records' key word
# (``<prefix>:upsonic_usage_entries:idx:<field>:<value>`` beside ``<prefix>:usage_entries:<entry_id>``)
USAGE_INDEX_TABLE = "upsonic_usage_entries"
USAGE_INDEX_FIELDS = ("chat_usage_id", "agent_usage_id", "task_usage_id", "team_usage_id", "workflow_usage_id",
                      "system_usage_id", "run_id", "user_id", "kind")
# Called with the backend after a write has read (and watched) everything and before it queues its writes: tests
# put a concurrent writer there.
before_commit: Callable[["RedisBackend"], None] | None = None


def is_redis_url(where: Any) -> bool:
    return isinstance(where, str) and where.split("://", 1)[0].lower() in SCHEMES and "://" in where


def _glob(text: str) -> str:
    """``text`` matched literally by ``SCAN MATCH``."""
    return "".join("\\" + c if c in "*?[]\\" else c for c in text)


class RedisBackend:
    def __init__(self, url: str, session_table: str = SESSION_TABLE, user_memory_table: str = USER_MEMORY_TABLE, *,
                 prefix: str | None = None, timeout: float = 5.0, expire: int | None = None) -> None:
        pgurl.remember(url)
        self.url = url
        self.label = pgurl.redact(url)
        for option, given, default in (("--session-table", session_table, SESSION_TABLE),
                                       ("--user-memory-table", user_memory_table, USER_MEMORY_TABLE)):
            if given != default:
                raise UsageError(f"{option}: RedisStorage's keys do not carry a table name (they are "
                                 f"<prefix>:sessions:<id> and <prefix>:user_memories:<id>); use --prefix")
        self.prefix = DEFAULT_PREFIX if prefix is None else prefix
        if not self.prefix:
            raise UsageError("--prefix must not be empty")
        self.session_table = "sessions"
        self.user_memory_table = "user_memories"
        self.timeout = timeout
        self.expire = expire
        self._client: Any = None

    def __repr__(self) -> str:
        return f"RedisBackend({self.label!r})"

    def key(self, kind: str, key: str) -> str:
        return f"{self.prefix}:{TABLES.get(kind, kind)}:{key}"

    def index_key(self, kind: str, field: str, value: Any) -> str:
        return f"{self.prefix}:{TABLES[kind]}:index:{field}:{value}"

    @contextmanager
    def _errors(self, then: str) -> Iterator[Any]:
        """The client, with redis-py's failures as one-line errors naming the URL masked."""
        from praisonmem.core.io import redisurl

        with redisurl.errors(self.label, then, conflict="another writer changed the Upsonic records meanwhile"):
            if self._client is None:
                self._client = redisurl.connect(self.url, timeout=TIMEOUT)
            yield self._client

    # -------------------------------------------------------- reading

    def _scan(self, client: Any, table: str) -> list[bytes]:
        """Every record key of a table (the library's rule: a key with ``:index:`` in it is an index), by SCAN."""
        found = set()
        for key in client.scan_iter(match=_glob(f"{self.prefix}:{table}:") + "*", count=SCAN_COUNT):
            if b":index:" not in key and (table != USAGE_TABLE or b":idx:" not in key):
                found.add(key)
        return sorted(found)

    def _decode(self, kind: str, key: bytes, type_: bytes, value: Any) -> dict[str, Any]:
        """A key's value as a record; :class:`CorruptFile` when it is not one of the library's."""
        name = key.decode("utf-8", "backslashreplace")
        where = f"{self.label}: key '{name}'"
        if type_ != b"string":
            raise CorruptFile(where, f"is a {type_.decode(errors='replace')}, not the JSON string RedisStorage writes "
                                     f"(another application's keys under --prefix '{self.prefix}'?); not touched")
        try:
            record = json.loads(value.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            raise CorruptFile(where, "is not JSON text (another application's keys under --prefix "
                                     f"'{self.prefix}'?); not touched") from None
        suffix = name[len(self.key(kind, "")):]
        return records.check_record(kind, record, where, suffix)

    def _records(self, kind: str, then: str = "nothing read",
                 keep: Callable[[dict[str, Any]], Any] | None = None) -> list[Any]:
        """Every record of a table, checked, in key order; ``keep`` maps each as it is read (so a listing holds
        what it shows, not every decoded record at once)."""
        with self._errors(then) as client:
            keys = self._scan(client, TABLES[kind])
            out = []
            for start in range(0, len(keys), BATCH):
                batch = keys[start:start + BATCH]
                for key, value in zip(batch, client.mget(batch)):
                    if value is None:  # MGET answers nil for a key gone since the SCAN and for one of another type
                        type_ = client.type(key)
                        if type_ == b"none":
                            continue
                    else:
                        type_ = b"string"
                    record = self._decode(kind, key, type_, value)
                    out.append(record if keep is None else keep(record))
        return out

    def _rows(self, kind: str) -> list[dict[str, Any]]:
        return [records.as_row(kind, r) for r in self._records(kind)]

    def _one(self, kind: str, key: str) -> list[dict[str, Any]]:
        with self._errors("nothing read") as client:
            name = self.key(kind, key).encode("utf-8")
            pipe = client.pipeline(transaction=False)
            pipe.type(name)
            pipe.get(name)
            type_, value = pipe.execute(raise_on_error=False)
            if isinstance(type_, Exception):
                raise type_
        return [] if type_ == b"none" else [records.as_row(kind, self._decode(kind, name, type_, value))]

    def summaries(self, filters: list[tuple[str, str]], limit: int) -> list[dict[str, Any]]:
        briefs = self._records("sessions", keep=lambda r: records.listing_row(records.as_row("sessions", r)))
        return records.listed(briefs, filters, limit)

    def session_rows(self, session_id: str | None) -> list[dict[str, Any]]:
        if session_id is None:
            return records.sessions_newest_first(self._rows("sessions"))
        return self._one("sessions", session_id)

    def user_rows(self, user_id: str | None) -> list[dict[str, Any]]:
        if user_id is None:
            return records.users_newest_first(self._rows("users"))
        return self._one("users", user_id)

    def ids(self, kind: str) -> set[str]:
        key = "session_id" if kind == "sessions" else "user_id"
        return set(self._records(kind, keep=lambda r: r[key]))

    def usage_entries(self) -> list[dict[str, Any]]:
        with self._errors("nothing read") as client:
            keys = self._scan(client, USAGE_TABLE)
            values = client.mget(keys) if keys else []
        rows = []
        for value in values:
            try:
                entry = json.loads(value.decode("utf-8")) if value is not None else None
            except (UnicodeDecodeError, ValueError):
                entry = None
            if isinstance(entry, dict) and "run_id" in entry:
                rows.append({c: entry.get(c) for c in USAGE_ENTRY_COLUMNS})
        return sorted(rows, key=lambda r: (str(r.get("timestamp") or ""), str(r.get("entry_id") or "")))

    def user_memory_text(self, user_id: str) -> str | None:
        rows = self._one("users", user_id)
        return records.text_of(rows[0]["user_memory"]) if rows else None

    # -------------------------------------------------------- writing

    def encode_user_memory(self, memory: dict[str, Any]) -> dict[str, Any]:
        return memory

    def prepare(self, kind: str, row: dict[str, Any], now: int) -> Upsert:
        return Upsert(kind, row["session_id" if kind == "sessions" else "user_id"], "record", (row, now))

    @contextmanager
    def transaction(self, need: tuple[str, ...], *, create: bool) -> Iterator["RedisTransaction"]:
        with self._errors("nothing changed") as client, client.pipeline(transaction=True) as pipe:
            tx = RedisTransaction(self, pipe)
            yield tx
            if before_commit is not None:
                before_commit(self)
            tx.commit()


def serialise(record: dict[str, Any]) -> bytes:
    """The bytes RedisStorage writes for a record."""
    return json.dumps(record, ensure_ascii=False).encode("utf-8")


class RedisTransaction:
    """Reads run at once, each key ``WATCH``ed before it is read; writes are queued and run in one
    ``MULTI``/``EXEC`` at the end, which fails as a whole if any watched key changed."""

    def __init__(self, backend: RedisBackend, pipe: Any) -> None:
        self.backend = backend
        self.pipe = pipe
        self.watched: set[bytes] = set()
        self.seen: dict[bytes, tuple[bytes, Any, int]] = {}  # key: type, value, PTTL (as read, then as queued)
        self.queue: list[Callable[[Any], None]] = []

    def _read(self, key: str) -> tuple[bytes, Any, int]:
        name = key.encode("utf-8")
        if name not in self.seen:
            self.pipe.watch(name)  # from here on EXEC fails if anyone else writes the key (or it expires)
            type_ = self.pipe.type(name)
            value = self.pipe.get(name) if type_ == b"string" else None
            self.seen[name] = (type_, value, self.pipe.pttl(name))
        return self.seen[name]

    def _record(self, kind: str, key: str) -> dict[str, Any] | None:
        name = self.backend.key(kind, key)
        type_, value, _ = self._read(name)
        if type_ == b"none":
            return None
        if value is not None and not isinstance(value, bytes):  # queued by this transaction
            return value
        return self.backend._decode(kind, name.encode("utf-8"), type_, value)

    def user_memory_text(self, user_id: str) -> str | None:
        record = self._record("users", user_id)
        return None if record is None else records.text_of(record.get("user_memory"))

    def insert_user_memory(self, user_id: str, value: Any, now: int) -> bool:
        if self._record("users", user_id) is not None:
            return False
        self._write("users", user_id, None, records.user_record({"user_id": user_id, "user_memory": value}, now, now))
        return True

    def update_user_memory(self, user_id: str, value: Any, now: int) -> None:
        old = self._record("users", user_id)
        assert old is not None
        record = dict(old)
        record["user_memory"] = value
        record["updated_at"] = now
        self._write("users", user_id, old, record)

    def exists(self, kind: str, key: str) -> bool:
        return self._record(kind, key) is not None

    def upsert(self, upsert: Upsert) -> Action:
        row, now = upsert.params
        old = self._record(upsert.kind, upsert.key)
        created = records.stamp(row.get("created_at"), now) if old is None else old.get("created_at")
        updated = records.stamp(row.get("updated_at"), now)
        if upsert.kind == "sessions":
            record = records.session_record(row, records.REDIS_AGENT_KEYS, records.REDIS_OTHER_KEYS, created, updated)
        else:
            record = records.user_record(row, created, updated)
        self._write(upsert.kind, upsert.key, old, record)
        return Action.inserted if old is None else Action.updated

    def _write(self, kind: str, key: str, old: dict[str, Any] | None, record: dict[str, Any]) -> None:
        """Queue the record's SET and its index sets' changes; every key involved is read (and watched) now, so a
        key of another type is refused before anything is queued."""
        name = self.backend.key(kind, key)
        type_, _, ttl = self._read(name)
        if type_ not in (b"string", b"none"):
            raise CorruptFile(f"{self.backend.label}: key '{name}'", f"is a {type_.decode(errors='replace')}, not "
                              "the JSON string RedisStorage writes; not overwritten")
        if type_ == b"none":
            ttl = -1 if self.backend.expire is None else self.backend.expire * 1000
        data = serialise(record)
        keep = type_ == b"string"

        def set_record(pipe: Any) -> None:
            if keep:
                pipe.set(name, data, keepttl=True)  # a TTL the record has stays as it is
            elif ttl > 0:
                pipe.set(name, data, px=ttl)
            else:
                pipe.set(name, data)
        self.queue.append(set_record)
        for field in INDEX_FIELDS[kind]:
            new = records.session_type_of(record) if field == "session_type" else record.get(field)
            was = None if old is None else (records.session_type_of(old) if field == "session_type" else old.get(field))
            if was is not None and was != new:
                self._index_remove(kind, field, was, key)
            if new is not None:
                self._index_add(kind, field, new, key, ttl)
        self.seen[name.encode("utf-8")] = (b"string", record, ttl)

    def delete(self, kind: str, key: str) -> bool:
        """Queue the record's ``DEL`` and its id's removal from each index set of its values, as the library's
        ``delete_session``/``delete_user_memory`` do; False when the record is not there (a rerun)."""
        old = self._record(kind, key)
        if old is None:
            return False
        name = self.backend.key(kind, key)
        self.queue.append(lambda pipe: pipe.delete(name))
        for field in INDEX_FIELDS[kind]:
            value = records.session_type_of(old) if field == "session_type" else old.get(field)
            if value is not None:
                self._index_remove(kind, field, value, key)
        self.seen[name.encode("utf-8")] = (b"none", None, -2)
        return True

    def delete_usage_entry(self, entry_id: str) -> bool:
        """Queue a usage-ledger entry's ``DEL`` and its id's removal from the ledger's index sets, as the library's
        ``delete_usage_entries`` does; False when the entry is not there."""
        name = f"{self.backend.prefix}:{USAGE_TABLE}:{entry_id}"
        type_, value, _ = self._read(name)
        if type_ == b"none":
            return False
        try:
            entry = json.loads(value.decode("utf-8")) if isinstance(value, bytes) else None
        except (UnicodeDecodeError, ValueError):
            entry = None
        if not isinstance(entry, dict):
            raise CorruptFile(f"{self.backend.label}: key '{name}'", "is not the JSON object RedisStorage writes for "
                              "a usage entry; not touched")
        self.queue.append(lambda pipe: pipe.delete(name))
        for field in USAGE_INDEX_FIELDS:
            if entry.get(field) is not None:
                index = f"{self.backend.prefix}:{USAGE_INDEX_TABLE}:idx:{field}:{entry[field]}"
                self._read(index)
                self.queue.append(lambda pipe, index=index: pipe.srem(index, entry_id))
        self.seen[name.encode("utf-8")] = (b"none", None, -2)
        return True

    def _index(self, kind: str, field: str, value: Any) -> tuple[str, int]:
        index = self.backend.index_key(kind, field, value)
        type_, _, ttl = self._read(index)
        if type_ not in (b"set", b"none"):
            raise CorruptFile(f"{self.backend.label}: key '{index}'", f"is a {type_.decode(errors='replace')}, not "
                              "the set of ids RedisStorage keeps as an index; nothing changed")
        return index, (-2 if type_ == b"none" else ttl)

    def _index_remove(self, kind: str, field: str, value: Any, key: str) -> None:
        index, _ = self._index(kind, field, value)
        self.queue.append(lambda pipe: pipe.srem(index, key))

    def _index_add(self, kind: str, field: str, value: Any, key: str, record_ttl: int) -> None:
        index, ttl = self._index(kind, field, value)
        self.queue.append(lambda pipe: pipe.sadd(index, key))
        # a new set, or one that would expire before the record, gets the record's TTL; any other keeps its own
        if record_ttl > 0 and (ttl == -2 or 0 < ttl < record_ttl):
            self.queue.append(lambda pipe: pipe.pexpire(index, record_ttl))
            self.seen[index.encode("utf-8")] = (b"set", None, record_ttl)
        elif ttl == -2:
            self.seen[index.encode("utf-8")] = (b"set", None, -1)

    def commit(self) -> None:
        if not self.queue:
            self.pipe.reset()
            return
        self.pipe.multi()
        for op in self.queue:
            op(self.pipe)
        self.pipe.execute()

