"""Upsonic 0.77.3's storage, backend-neutral: SqliteStorage's file or PostgresStorage's tables.

Never the Upsonic library, never unpickling: ``__pickled__`` values stay opaque data.
:class:`Store` holds the rules every backend shares: which rows are listed and how, what a
trait edit compares before it writes, what is refused. A backend reads and writes the tables the
way its library does:

* :mod:`.sqlite_backend`: SqliteStorage over plain ``sqlite3`` (``mode=ro`` readers, ``BEGIN
  IMMEDIATE`` writers, the session JSON columns double-encoded);
* :mod:`.postgres_backend`: PostgresStorage over psycopg 3 (``READ ONLY`` reader transactions,
  ``SELECT … FOR UPDATE`` in writers, JSONB encoded once);
* :mod:`.json_backend`: JSONStorage's directory of ``<table>.json`` arrays (no lock of the library's;
  praisonmem's writers re-read and replace a file atomically);
* :mod:`.redis_backend`: RedisStorage's keys over redis-py (``SCAN`` readers, ``WATCH``/``MULTI`` writers).

The tables and columns are :mod:`.schema`'s. The schema is recognised by its columns (there is no version
table), so a database whose
tables are not Upsonic's is refused before anything is read or written (a JSON or Redis record by its
fields, :mod:`.records`). Readers fetch
everything in one short transaction and close it before anything is rendered. Writers build
the new values before the transaction and re-check what they depend on inside it.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any, Protocol

from praisonmem.core.errors import CorruptFile, NotFound, Refused, UsageError
from praisonmem.core.io import jsonfile, pgurl
from praisonmem.core.result import Action, Change, Outcome
from praisonmem.core.upsonic.json_backend import is_json_storage
from praisonmem.core.upsonic.schema import (DEFAULT_SCHEMA, JSON_SESSION_COLUMNS, SESSION_TABLE, USER_MEMORY_TABLE,
                                            SessionType, Upsert, decode)


def decode_session_row(row: dict[str, Any]) -> dict[str, Any]:
    out = dict(row)
    for key in JSON_SESSION_COLUMNS + ("usage",):
        out[key] = decode(out.get(key))
    return out


def decode_user_row(row: dict[str, Any]) -> dict[str, Any]:
    return {**row, "user_memory": decode(row.get("user_memory"))}


def parse_value(text: str) -> Any:
    """A trait value: JSON when it parses (``3``, ``true``, ``["a"]``, ``null``), else the text itself."""
    try:
        return json.loads(text)
    except ValueError:
        return text


# ---------------------------------------------------------------- what a backend provides


class Transaction(Protocol):
    """What a writer does inside a backend's write transaction."""

    def user_memory_text(self, user_id: str) -> str | None:
        """The stored ``user_memory`` text, the row locked against other writers (None: no row)."""

    def insert_user_memory(self, user_id: str, value: Any, now: int) -> bool:
        """A new row (``agent_id``/``team_id`` NULL); False when one appeared meanwhile (nothing written)."""

    def update_user_memory(self, user_id: str, value: Any, now: int) -> None:
        """``user_memory`` and ``updated_at`` of the row; every other column kept."""

    def exists(self, kind: str, key: str) -> bool:
        ...

    def upsert(self, upsert: Upsert) -> Action:
        """Run a prepared upsert: :attr:`Action.inserted` or :attr:`Action.updated`."""


class Backend(Protocol):
    label: str  # how messages name the database: its path, or its URL with the password masked
    session_table: str
    user_memory_table: str

    def summaries(self, filters: list[tuple[str, str]], limit: int) -> list[dict[str, Any]]:
        """Session summaries, newest first: the ids, ``message_count``, ``run_count``, ``has_summary``, times, and
        ``total``, how many rows match before the limit."""

    def session_rows(self, session_id: str | None) -> list[dict[str, Any]]:
        """Rows with every column of :data:`SESSION_COLUMNS` (JSON columns as stored or as the driver
        decodes them); one session, or all newest first."""

    def user_rows(self, user_id: str | None) -> list[dict[str, Any]]:
        """Rows with every column of :data:`USER_COLUMNS`; one user, or all by ``updated_at`` newest first."""

    def ids(self, kind: str) -> set[str]:
        """Keys present; empty when the database or the table does not exist yet."""

    def usage_entries(self) -> list[dict[str, Any]]:
        """The :data:`USAGE_ENTRY_COLUMNS` of every row of the usage ledger; none when it does not exist."""

    def user_memory_text(self, user_id: str) -> str | None:
        """The stored ``user_memory`` text as :meth:`Transaction.user_memory_text` compares it."""

    def encode_user_memory(self, memory: dict[str, Any]) -> Any:
        ...

    def prepare(self, kind: str, row: dict[str, Any], now: int) -> Upsert:
        """The library's upsert of a decoded export row, its values encoded as that library stores them."""

    def transaction(self, need: tuple[str, ...], *, create: bool) -> AbstractContextManager[Transaction]:
        """One write transaction, the tables in ``need`` checked first (created when the store has the other
        one, or with ``create`` when the database has neither)."""


# ---------------------------------------------------------------- the store


class Store:
    """An Upsonic database: a file path, ``sqlite:///PATH``, ``postgresql://…`` (``schema``: PostgreSQL's), a
    JSONStorage directory (or ``DIR/``, to be created) or ``redis://…`` (``prefix``, and ``expire``: the TTL a new
    record gets)."""

    def __init__(self, where: str | os.PathLike[str] | pgurl.DatabaseURL, session_table: str = SESSION_TABLE,
                 user_memory_table: str = USER_MEMORY_TABLE, *, timeout: float = 5.0,
                 schema: str | None = None, prefix: str | None = None, expire: int | None = None) -> None:
        from praisonmem.core.upsonic.redis_backend import is_redis_url

        no_schemas = UsageError("--schema is a PostgreSQL option; an SQLite file has no schemas")
        if is_redis_url(where):
            if schema is not None:
                raise UsageError("--schema is a PostgreSQL option; RedisStorage has no schemas (use --prefix)")
            from praisonmem.core.upsonic.redis_backend import RedisBackend

            self.backend: Backend = RedisBackend(str(where), session_table, user_memory_table, prefix=prefix,
                                                 timeout=timeout, expire=expire)
            return
        if prefix is not None or expire is not None:
            raise UsageError(f"{'--prefix' if prefix is not None else '--expire'} is a RedisStorage option "
                             "(--db redis://…)")
        if isinstance(where, str) and pgurl.is_url(where) and where.split(":", 1)[0].lower().split("+")[0] not in (
                "postgres", "postgresql", "sqlite"):
            scheme = where.split(":", 1)[0].lower()
            raise UsageError(f"unsupported database URL {pgurl.redact(where)}: {scheme}:// is not supported "
                             "(praisonmem opens Upsonic's SQLite file, JSONStorage directory, postgresql:// and "
                             "redis:// stores)")
        url = where if isinstance(where, pgurl.DatabaseURL) else (
            pgurl.parse(where) if pgurl.is_url(where) else None)
        if url is not None and url.is_postgres:
            from praisonmem.core.upsonic.postgres_backend import PostgresBackend

            self.backend = PostgresBackend(url, session_table, user_memory_table, timeout=timeout,
                                           schema=schema or DEFAULT_SCHEMA)
            return
        from praisonmem.core.paths import expand_user

        path = url.path if url is not None else expand_user(where, "--db")
        if url is None and is_json_storage(where):
            if schema is not None:
                raise UsageError("--schema is a PostgreSQL option; a JSONStorage directory has no schemas")
            from praisonmem.core.upsonic.json_backend import JsonBackend

            self.backend = JsonBackend(path, session_table, user_memory_table, timeout=timeout)
            return
        if schema is not None:
            raise no_schemas
        from praisonmem.core.upsonic.sqlite_backend import SqliteBackend

        self.backend = SqliteBackend(path, session_table, user_memory_table, timeout=timeout)

    def __repr__(self) -> str:
        return f"Store({self.label!r})"

    @property
    def label(self) -> str:
        return self.backend.label

    @property
    def session_table(self) -> str:
        return self.backend.session_table

    @property
    def user_memory_table(self) -> str:
        return self.backend.user_memory_table

    # -------------------------------------------------------- sessions

    def sessions(self, *, user: str | None = None, agent: str | None = None,
                 session_type: SessionType | str | None = None, limit: int = 0) -> list[dict[str, Any]]:
        """Rows newest first (``created_at DESC``, the library's default order; ties by id, descending), summarised."""
        return self.sessions_page(user=user, agent=agent, session_type=session_type, limit=limit)[0]

    def sessions_page(self, *, user: str | None = None, agent: str | None = None,
                      session_type: SessionType | str | None = None, limit: int = 0
                      ) -> tuple[list[dict[str, Any]], int]:
        """:meth:`sessions`, and how many sessions match (more than the rows when ``limit`` cut them)."""
        filters = [(column, str(value)) for column, value in
                   (("user_id", user), ("agent_id", agent), ("session_type", session_type)) if value is not None]
        found = self.backend.summaries(filters, limit)
        rows = [{"session_id": r["session_id"], "session_type": r["session_type"], "agent_id": r["agent_id"],
                 "user_id": r["user_id"], "message_count": r["message_count"], "run_count": r["run_count"],
                 "has_summary": bool(r["has_summary"]), "created_at": r["created_at"], "updated_at": r["updated_at"]}
                for r in found]
        return rows, int(found[0]["total"]) if found else 0

    def session(self, session_id: str) -> dict[str, Any]:
        """The decoded row (JSON columns decoded once or twice as stored)."""
        rows = self.backend.session_rows(session_id)
        if not rows:
            raise NotFound(f"no Upsonic session '{session_id}' in {self.label}")
        return decode_session_row(rows[0])

    def all_sessions(self) -> list[dict[str, Any]]:
        return [decode_session_row(r) for r in self.backend.session_rows(None)]

    def usage_entries(self) -> list[dict[str, Any]]:
        """The usage registry's ledger rows (:data:`USAGE_ENTRY_COLUMNS`); none when no registry wrote one."""
        return self.backend.usage_entries()

    def known_ids(self, kind: str) -> set[str]:
        """Ids present in the sessions or users table; empty for a missing or empty database."""
        return self.backend.ids(kind)

    # -------------------------------------------------------- user memory

    def user(self, user_id: str) -> dict[str, Any]:
        rows = self.backend.user_rows(user_id)
        if not rows:
            raise NotFound(f"no Upsonic user memory for '{user_id}' in {self.label}")
        return decode_user_row(rows[0])

    def traits_of(self, row: dict[str, Any]) -> dict[str, Any]:
        """A user row's traits to show; :class:`CorruptFile` when ``user_memory`` is not a JSON object (the
        library's own reader fails on it too; ``--json`` shows the row as stored)."""
        traits = row.get("user_memory") or {}
        if not isinstance(traits, dict):
            from praisonmem.core.io.jsonfile import json_kind

            raise CorruptFile(self.label, f"user memory of '{row.get('user_id')}' is {json_kind(traits)}, not a "
                                          "JSON object of traits (--json shows it as stored)")
        return traits

    def users(self) -> list[dict[str, Any]]:
        return [decode_user_row(r) for r in self.backend.user_rows(None)]

    def update_user_memory(self, user_id: str, change: Callable[[dict[str, Any]], Any], *,
                           dry_run: bool = False) -> dict[str, Any]:
        """Read-modify-write of one user's traits (``change(old dict) -> new dict``).

        The new value is built outside the write transaction from a first read; inside it the row
        is read again (and locked) and its whole stored ``user_memory`` must be unchanged, else
        nothing is written (an agent changed it meanwhile).
        """
        if not dry_run:
            self.recover()
        old_text = self.backend.user_memory_text(user_id)
        old = decode(old_text) if old_text is not None else {}
        if not isinstance(old, dict):
            raise CorruptFile(self.label, f"user memory of '{user_id}' is {type(old).__name__}, not a JSON "
                                          "object; refusing to edit it")
        new = change(dict(old))
        if not isinstance(new, dict):
            raise UsageError("user memory must be a JSON object")
        value = self.backend.encode_user_memory(new)
        result = {"user_id": user_id, "created": old_text is None, "before": old, "after": new, "dry_run": dry_run}
        if dry_run:
            return result
        now = int(time.time())
        changed = Refused(f"user memory of '{user_id}' changed while praisonmem was editing it (an agent is "
                          "writing it?); nothing written, try again")

        def write(tx: Transaction) -> None:
            if tx.user_memory_text(user_id) != old_text:
                raise changed
            if old_text is None:
                if not tx.insert_user_memory(user_id, value, now):
                    raise changed
            else:
                tx.update_user_memory(user_id, value, now)

        self.write(("users",), write)
        return result

    # -------------------------------------------------------- writing

    def recover(self) -> None:
        """Before a write command reads: an SQLite file's hot journal (a writer killed mid-write) rolled
        back by SQLite itself, which reads refuse to do (:func:`~praisonmem.core.io.sqlite.hot_journal`)."""
        path = getattr(self.backend, "path", None)
        if path is not None:
            from praisonmem.core.io.sqlite import roll_back_journal

            roll_back_journal(path, self.backend.timeout)

    def write(self, need: tuple[str, ...], body: Callable[[Transaction], None], *, create: bool = False) -> None:
        """Run ``body(tx)`` in one write transaction, after checking (or creating) the tables."""
        with self.backend.transaction(need, create=create) as tx:
            body(tx)

    def prepare(self, kind: str, row: dict[str, Any], now: int) -> Upsert:
        return self.backend.prepare(kind, row, now)

    def erase(self, sessions: list[str], users: list[str], usage: list[str]) -> tuple[int, list[str]]:
        """Forget's delete: these sessions, user memories and usage-ledger entries removed by id in one write of
        the backend's own protocol (an SQLite file's text zeroed and vacuumed away); ids gone already count for
        nothing, so a rerun finishes the job. The records removed, and what could not be scrubbed (notes).
        SQLite files and JSONStorage directories only: the servers' stores are forgotten elsewhere."""
        erase = getattr(self.backend, "erase", None)
        if erase is None:
            raise Refused(f"{self.label}: praisonmem forgets Upsonic's SQLite files and JSONStorage directories "
                          "here only")
        return erase(sessions, users, usage)


def is_upsonic_document_store(where: str) -> bool:
    """A RedisStorage URL, or a directory holding JSONStorage's tables under the library's default names."""
    from praisonmem.core.upsonic.redis_backend import is_redis_url

    if is_redis_url(where):
        return True
    directory = os.path.expanduser(where)
    return os.path.isdir(directory) and any(os.path.isfile(os.path.join(directory, f"{t}.json"))
                                            for t in (SESSION_TABLE, USER_MEMORY_TABLE))


def open_store(db: str | os.PathLike[str] | None, *, session_table: str = SESSION_TABLE,
               user_memory_table: str = USER_MEMORY_TABLE, timeout: float = 5.0,
               schema: str | None = None, prefix: str | None = None, expire: int | None = None) -> Store:
    """The Upsonic database ``db`` (``--db``, else the config's ``upsonic.db``): an SQLite file, a JSONStorage
    directory, or a ``sqlite:///`` / ``postgresql://`` / ``redis://`` URL."""
    if not db:
        raise UsageError("--db PATH is required (an SQLite file, a JSONStorage directory, a postgresql:// or "
                         "redis:// URL; or set upsonic.db in the config file)")
    return Store(db, session_table, user_memory_table, timeout=timeout, schema=schema, prefix=prefix, expire=expire)


def edit_user_memory(store: Store, user_id: str, *, set_traits: dict[str, str] | None = None,
                     unset: list[str] | None = None, replace_from: str | None = None,
                     dry_run: bool = False, confirm: Callable[[], None] | None = None) -> Outcome:
    """``user-memory set|unset|replace``: one user's traits changed, every other trait, ``created_at``,
    ``agent_id`` and ``team_id`` kept. ``set_traits`` values are JSON when they parse (:func:`parse_value`);
    ``replace_from`` names a file holding a JSON object (``-``: standard input). ``confirm`` is called once the
    edit is known to be valid, before anything is written (it raises to stop)."""
    if replace_from is not None:
        raw = jsonfile.read_source(replace_from)
        try:
            new = jsonfile.parse(raw, replace_from)
        except CorruptFile as exc:
            raise UsageError(f"{replace_from}: not JSON ({exc.reason})") from exc
        if not isinstance(new, dict):
            raise UsageError(f"{replace_from}: user memory must be a JSON object, got {jsonfile.json_kind(new)}")

        def change(old: dict[str, Any]) -> dict[str, Any]:
            return new
    elif unset is not None:
        current = store.user(user_id)["user_memory"] or {}
        missing = [k for k in unset if k not in current]
        if missing:
            raise NotFound(f"user '{user_id}' has no {'trait' if len(missing) == 1 else 'traits'} {', '.join(missing)}")

        def change(old: dict[str, Any]) -> dict[str, Any]:
            return {k: v for k, v in old.items() if k not in unset}
    else:
        updates = {k: parse_value(v) for k, v in (set_traits or {}).items()}

        def change(old: dict[str, Any]) -> dict[str, Any]:
            return {**old, **updates}
    if confirm is not None:
        confirm()
    result = store.update_user_memory(user_id, change, dry_run=dry_run)
    fields = {k: result[k] for k in ("user_id", "created", "before", "after")}
    return Outcome([Change(Action.wrote, f"user memory of '{user_id}'", "new row" if result["created"] else None,
                           dry_run=dry_run, fields=fields)])

