"""Learn stores in Redis (``LearnConfig(backend="redis")``: praisonai's ``RedisStorageAdapter``).

The library keeps each store as one string key, ``<prefix><store>`` (prefix ``praison:learn:``, so
``praison:learn:persona``), holding the store's object as ``json.dumps(data, default=str, ensure_ascii=False)``
in UTF-8, set with ``SET`` and no expiry. Neither the user id nor the scope is in the key: every user and scope
of one database shares each store.

praisonmem reads the store keys by name (one pipelined ``TYPE``/``GET`` per store: no listing of the database,
never ``KEYS``). A write is compare-and-write: ``WATCH`` the key, re-read it, then ``MULTI``/``SET … KEEPTTL``/
``EXEC``, so a writer that changed the key in between makes ``EXEC`` fail and nothing is written (exit 4); an
expiry a user set stays as it was. A key of another type, or a value that is not the library's JSON object, is
reported by a read and refused by a write. redis-py (the ``redis`` extra) is imported only here, when a Redis
store is opened. A URL's password never reaches a message: every one names the URL masked (:mod:`praisonmem.core.io.redisurl`
connects and maps redis-py's errors).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from praisonmem.core.errors import CorruptFile
from praisonmem.core.io import redisurl
from praisonmem.core.learn.model import STORES, Edit, Entry, check_names, serialise, sorted_entries, store_object

DEFAULT_URL = "redis://localhost:6379"  # LearnManager's, when db_url is not set
DEFAULT_PREFIX = "praison:learn:"
SCHEMES = redisurl.SCHEMES
INSTALL_HINT = redisurl.INSTALL_HINT


def check_url(url: str) -> str:
    redisurl.parse(url)
    return url


class RedisBackend:
    """The learn stores under one prefix of one Redis database."""

    kind = "redis"

    def __init__(self, url: str, prefix: str = DEFAULT_PREFIX) -> None:
        self.url = check_url(url)
        self.prefix = prefix
        self.label = redisurl.parse(url)
        self._client: Any = None

    def __str__(self) -> str:
        return self.label

    def key(self, store: str) -> str:
        return f"{self.prefix}{store}"

    @contextmanager
    def _errors(self, then: str) -> Iterator[Any]:
        """The client, with redis-py's failures as one-line errors naming the URL masked."""
        with redisurl.errors(self.label, then, conflict="another writer changed the learn store meanwhile"):
            if self._client is None:
                self._client = redisurl.connect(self.url)
            yield self._client

    def _read(self, stores: tuple[str, ...]) -> dict[str, tuple[bytes, bytes | None]]:
        """Each store's key type and value, in one round trip; a key that is not there is left out."""
        with self._errors("nothing read") as client:
            pipe = client.pipeline(transaction=False)
            for store in stores:
                pipe.type(self.key(store))
                pipe.get(self.key(store))
            replies = pipe.execute(raise_on_error=False)
        found = {}
        for store, kind, value in zip(stores, replies[::2], replies[1::2]):
            if isinstance(kind, Exception):
                with self._errors("nothing read"):
                    raise kind
            if kind != b"none":
                found[store] = (kind, None if isinstance(value, Exception) else value)
        return found

    def _object(self, store: str, kind: bytes, value: bytes | None) -> dict[str, Any]:
        """A key's value as the store's object; ``ValueError`` saying why not."""
        key = self.key(store)
        if kind != b"string":
            raise ValueError(f"{self.label}: key '{key}' is a {kind.decode(errors='replace')}, not the JSON string "
                             "the library writes")
        return store_object(value or b"", f"{self.label}: key '{key}'")

    def entries(self, store: str | None = None, scope: str | None = None,
                user_id: str | None = None) -> tuple[list[Entry], list[str]]:
        check_names(store)
        found: list[Entry] = []
        unreadable: list[str] = []
        for name, (kind, value) in sorted(self._read(STORES if store is None else (store,)).items()):
            try:
                data = self._object(name, kind, value)
            except ValueError as exc:
                unreadable.append(str(exc))
                continue
            found += sorted_entries([Entry(None, None, name, self.label, e, self.kind, self.key(name))
                                     for e in data.values() if isinstance(e, dict)])
        return found, unreadable

    def where(self, store: str, scope: str, user_id: str) -> str:
        return f"{self.label} (key '{self.key(store)}')"

    def count(self, store: str, scope: str, user_id: str) -> int:
        check_names(store)
        found = self._read((store,)).get(store)
        return 0 if found is None else len(self._refuse_bad(store, *found))

    def _refuse_bad(self, store: str, kind: bytes, value: bytes | None) -> dict[str, Any]:
        try:
            return self._object(store, kind, value)
        except ValueError as exc:
            raise CorruptFile(self.label, f"{str(exc).split(': ', 1)[1]}; not overwritten") from None

    def edit(self, store: str, scope: str, user_id: str, change: Edit, timeout: float, *,
             create: bool = True) -> list[str]:
        check_names(store)
        key = self.key(store)
        with self._errors("nothing changed") as client, client.pipeline(transaction=True) as pipe:
            pipe.watch(key)  # from here on, EXEC fails if anyone else writes the key (or it expires)
            kind = pipe.type(key)
            if kind == b"none" and not create:
                return []
            value = pipe.get(key) if kind == b"string" else None  # GET of another type is an error of its own
            data = {} if kind == b"none" else self._refuse_bad(store, kind, value)
            if not change(data):
                return []
            pipe.multi()
            pipe.set(key, serialise(data), keepttl=True)  # a TTL someone gave the key stays
            pipe.execute()
        return []

