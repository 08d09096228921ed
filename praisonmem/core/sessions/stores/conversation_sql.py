"""PraisonAI's SQL conversation stores (praisonai 4.7.19 ``praisonai.persistence.conversation``: ``sqlite``,
the ``postgres`` family and ``mysql``), as a :class:`~praisonmem.core.sessions.stores.SessionStore`.

Two tables, ``<prefix>sessions`` and ``<prefix>messages`` (prefix ``praison_``; on PostgreSQL in
``<schema>``, ``public``), one row per session and one per message. praisonmem sees each session as the
PraisonAI JSON document :mod:`.conversation_map` maps it to and from, so every session command works
here as on the JSON files; ``session list`` filters, sorts, counts and limits in SQL
(:meth:`ConversationStore.summaries`: the sessions table and the messages' ``session_id`` index, never
every message).

* **Recognised by its tables**: both present with exactly the library's columns; neither there is
  :class:`NotFound` (exit 3) for a reader, and a writer creates them with the library's own DDL (and a
  missing PostgreSQL schema); anything else (one table, other columns: a database of another app) is
  :class:`Refused` (exit 4), nothing read or written.
* **SQLite**: readers open the file read-only (:func:`praisonmem.core.io.sqlite.connect_ro`: nothing
  created, checkpointed or recovered) and read in one transaction; writers use the library's discipline,
  ``PRAGMA foreign_keys=ON`` and one ``BEGIN IMMEDIATE`` with a bounded busy timeout per change; a file
  praisonmem creates is 0600. JSON columns are written as the library writes them (``json.dumps`` with
  default arguments, ``None`` as NULL).
* **PostgreSQL** (:mod:`praisonmem.core.io.pgurl`, psycopg 3): readers in ``READ ONLY`` ``REPEATABLE READ``
  transactions (the server refuses any write); each change one transaction that locks the session row
  (``SELECT … FOR UPDATE``) and updates it in place, never DELETE + INSERT, so an Agent's concurrent
  ``add_message`` waits and then lands (a real-store insert would fail its foreign key otherwise).
* **MySQL/MariaDB** (:mod:`praisonmem.core.io.mysqlurl`, PyMySQL): the same as PostgreSQL, with InnoDB's row
  locks; the tables are recognised (and a writer's created) outside the change's transaction, since MySQL's
  DDL commits the transaction it runs in.
* **What the columns cannot hold** lives in praisonmem's side table ``<prefix>praisonmem_extra`` (see
  :mod:`.conversation_map`), read with the session's rows, written in the same transaction.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from praisonmem.core.errors import (CorruptFile, IOFailure, NotFound, PraisonMemError, Refused,
                                    UsageError)
from praisonmem.core.io import jsonfile, mysqlurl, pgurl
from praisonmem.core.sessions.documents import validate
from praisonmem.core.sessions.stores import Fold, PlainStore, Scanned, ambiguous
from praisonmem.core.sessions.stores.conversation_map import MYSQL_TEXT, doc_to_rows, epoch_iso, rows_to_doc
from praisonmem.core.sessions.stores.names import CONVERSATIONS, DEFAULT_PREFIX, DEFAULT_SCHEMA

if TYPE_CHECKING:
    import sqlite3  # imported where a SQLite store is opened: a server's listing needs none of it

A = TypeVar("A")
SESSION_COLUMNS = ("session_id", "user_id", "agent_id", "name", "state", "metadata", "created_at", "updated_at")
MESSAGE_COLUMNS = ("id", "session_id", "role", "content", "tool_calls", "tool_call_id", "metadata", "created_at")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")  # fullmatch: the library's table-prefix rule
BATCH = 500  # sessions read per round trip by scan


def check_name(value: str, what: str, *, empty: bool = False) -> str:
    """A ``--table-prefix``/``--schema`` as the library folds it (unquoted SQL: lower case)."""
    if (value == "" and empty) or _IDENT.fullmatch(value):  # not match with "$", which passes a final newline
        return value.lower()
    raise UsageError(f"{what} {value!r}: letters, digits and '_' only, not starting with a digit")


@dataclass(frozen=True, order=True)
class ConvRef:
    """One session of a conversation store: the store (as shown, password masked) and the session id."""

    where: str
    session_id: str

    def __str__(self) -> str:
        return self.where


def where(ref: ConvRef) -> str:
    return f"{ref.where}:{ref.session_id}"


def _loads(value: Any) -> Any:
    """A JSON column as the library decodes it: text is parsed, anything else (psycopg's jsonb) is as is."""
    return json.loads(value) if isinstance(value, (str, bytes)) else value


# ---------------------------------------------------------------- the two databases


EXTRA_COLUMNS = ("session_id", "message_id", "archived", "json")


class ConversationTables:
    """The conversation tables in one database: what differs between SQLite (:class:`ConversationSqlite`),
    PostgreSQL (:class:`ConversationPg`) and MySQL/MariaDB (:class:`ConversationMy`): connections, names,
    parameters, JSON binding, and praisonmem's side table ``<prefix>praisonmem_extra`` (what the library's
    columns cannot hold: see :mod:`.conversation_map`), made only when a session needs it."""

    postgres = False
    dialect = "sqlite"
    long_ids = False  # ids and names are VARCHAR(255) (PostgreSQL, MySQL)
    text_limit: int | None = None  # bytes the content column holds
    # Messages at the same instant in the order the library's ``ORDER BY created_at`` returns them: SQLite's
    # rowid (insertion) order, PostgreSQL's heap order, InnoDB's (session_id, created_at) index, which ends in
    # the primary key, the id.
    tie_order = "rowid"
    display: str
    sessions: str
    messages: str
    extra: str
    has_extra = False  # the side table is there (seen when the tables were recognised)

    def q(self, sql: str) -> str:
        return sql

    def jw(self, value: Any) -> Any:  # a JSON column's parameter
        return None if value is None else json.dumps(value)

    legacy_archived = "0"  # a message row ``m`` an earlier praisonmem tagged archived inside its metadata

    def archived(self, x: str) -> str:
        """The SQL predicate on a message row ``m`` that is archived (``x``: the side table, quoted)."""
        side = (f"EXISTS (SELECT 1 FROM {x} x WHERE x.session_id = m.session_id AND x.message_id = m.id "
                "AND x.archived = 1)") if self.has_extra else "0 = 1"
        return f"({side} OR {self.legacy_archived})" if self.legacy_archived != "0" else side

    def extra_ddl(self, x: str, s: str) -> str:
        return (f"CREATE TABLE IF NOT EXISTS {x} (\n    session_id TEXT NOT NULL,\n    message_id TEXT NOT NULL,\n"
                "    archived INTEGER NOT NULL DEFAULT 0,\n    json TEXT NOT NULL,\n"
                "    PRIMARY KEY (session_id, message_id),\n"
                f"    FOREIGN KEY (session_id) REFERENCES {s}(session_id) ON DELETE CASCADE\n)")

    def ensure_extra(self, conn: Any, x: str, s: str) -> None:
        """Create the side table (in the write transaction: SQLite and PostgreSQL DDL is transactional)."""
        conn.execute(self.extra_ddl(x, s))
        self.has_extra = True

    @contextmanager
    def reading(self) -> Iterator[Any]:
        raise NotImplementedError

    @contextmanager
    def writing(self, timeout: float) -> Iterator[Any]:
        raise NotImplementedError

    def table_columns(self, conn: Any, table: str) -> dict[str, str] | None:
        raise NotImplementedError

    def create_tables(self, conn: Any) -> None:
        raise NotImplementedError

    def ids_in(self, n: int) -> str:
        return "IN (" + ", ".join("?" * n) + ")"

    def ids_param(self, ids: list[str]) -> list[Any]:
        return list(ids)

    def lock_row(self) -> str:
        return ""

    # -- recognition

    def recognise(self, conn: Any, *, create: bool = False) -> None:
        """Both tables with exactly the library's columns; :class:`NotFound` when neither is there (a writer
        with ``create`` makes them), :class:`Refused` otherwise."""
        found = {name: self.table_columns(conn, name) for name in (self.sessions, self.messages)}
        extra = self.table_columns(conn, self.extra)
        if extra is not None and set(extra) != set(EXTRA_COLUMNS):
            raise Refused(f"{self.display}: table {self.table_label(self.extra)} is not praisonmem's (its columns are "
                          f"{', '.join(extra)}); nothing read or written")
        self.has_extra = extra is not None
        if not any(found.values()):
            if create:
                self.create_tables(conn)
                return
            raise NotFound(f"{self.display}: no PraisonAI conversation tables ({self.table_label(self.sessions)}, "
                           f"{self.table_label(self.messages)}); give --table-prefix/--schema if they are named "
                           "otherwise")
        for name, want in ((self.sessions, SESSION_COLUMNS), (self.messages, MESSAGE_COLUMNS)):
            have = found[name]
            if not have:
                other = self.sessions if name == self.messages else self.messages
                raise Refused(f"{self.display}: {self.table_label(name)} is missing beside {self.table_label(other)}, "
                              "so this is not a PraisonAI conversation store; nothing read or written")
            if set(have) != set(want):
                extra = sorted(set(have) - set(want))
                lack = sorted(set(want) - set(have))
                diff = "; ".join(p for p in (f"lacks {', '.join(lack)}" if lack else "",
                                             f"has {', '.join(extra)}" if extra else "") if p)
                raise Refused(f"{self.display}: table {self.table_label(name)} is not PraisonAI's ({diff}): a database "
                              "of another app? nothing read or written")

    def table_label(self, table: str) -> str:
        return table


class ConversationSqlite(ConversationTables):
    def __init__(self, path: Path, prefix: str = DEFAULT_PREFIX) -> None:
        self.path = path
        self.display = str(path)
        self.sessions, self.messages = f"{prefix}sessions", f"{prefix}messages"
        self.extra = f"{prefix}praisonmem_extra"

    legacy_archived = "json_valid(m.metadata) AND json_extract(m.metadata, '$._praisonmem.archived') = 1"

    @contextmanager
    def reading(self) -> Iterator[sqlite3.Connection]:
        import sqlite3

        from praisonmem.core.io.sqlite import connect_ro, translate

        conn = connect_ro(self.path)
        conn.isolation_level = None
        try:
            conn.execute("BEGIN")
            self.recognise(conn)
            yield conn
        except sqlite3.Error as exc:
            raise translate(exc, self.path, 5.0) from exc
        finally:
            conn.close()

    @contextmanager
    def writing(self, timeout: float) -> Iterator[sqlite3.Connection]:
        import sqlite3

        from praisonmem.core.io.sqlite import connect_rw, translate

        conn = connect_rw(self.path, timeout)
        conn.isolation_level = None
        try:
            conn.execute(f"PRAGMA busy_timeout={int(timeout * 1000)}")
            conn.execute("PRAGMA foreign_keys = ON")
            conn.execute("BEGIN IMMEDIATE")
            try:
                self.recognise(conn, create=True)
                yield conn
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
        except sqlite3.Error as exc:
            raise translate(exc, self.path, timeout) from exc
        finally:
            conn.close()

    def recognise(self, conn: Any, *, create: bool = False) -> None:
        from praisonmem.core.io.sqlite import require_store_tables

        # before PRAGMA table_info, which a view answers as a table would
        require_store_tables(conn, self.path, {self.sessions: None, self.messages: None, self.extra: None})
        super().recognise(conn, create=create)

    def table_columns(self, conn: Any, table: str) -> dict[str, str] | None:
        rows = conn.execute(f'PRAGMA table_info("{table}")').fetchall()
        return {r[1]: r[2] for r in rows} or None

    def create_tables(self, conn: Any) -> None:
        s, m = self.sessions, self.messages
        # the library's DDL (_sqlite_base.py), so its own opener finds nothing to change
        for stmt in (
            f"CREATE TABLE IF NOT EXISTS {s} (\n                session_id TEXT PRIMARY KEY,\n"
            "                user_id TEXT,\n                agent_id TEXT,\n                name TEXT,\n"
            "                state TEXT,\n                metadata TEXT,\n                created_at REAL,\n"
            "                updated_at REAL\n            )",
            f"CREATE INDEX IF NOT EXISTS idx_{s}_user\n            ON {s}(user_id)\n        ",
            f"CREATE INDEX IF NOT EXISTS idx_{s}_agent\n            ON {s}(agent_id)\n        ",
            f"CREATE TABLE IF NOT EXISTS {m} (\n                id TEXT PRIMARY KEY,\n"
            "                session_id TEXT NOT NULL,\n                role TEXT NOT NULL,\n"
            "                content TEXT,\n                tool_calls TEXT,\n                tool_call_id TEXT,\n"
            "                metadata TEXT,\n                created_at REAL,\n"
            f"                FOREIGN KEY (session_id) REFERENCES {s}(session_id) ON DELETE CASCADE\n            )",
            f"CREATE INDEX IF NOT EXISTS idx_{m}_session\n            ON {m}(session_id)\n        ",
            f"CREATE INDEX IF NOT EXISTS idx_{m}_created\n            ON {m}(session_id, created_at)\n        ",
        ):
            conn.execute(stmt)


class ServerTables(ConversationTables):
    """The tables on a database server: every read and write is one transaction of :meth:`_tx` (read-only or
    not, with the write's lock timeout)."""

    def _tx(self, read_only: bool, lock_timeout: float | None = None) -> Any:
        raise NotImplementedError

    @contextmanager
    def reading(self) -> Iterator[Any]:
        with self._tx(True) as conn:
            yield conn

    @contextmanager
    def writing(self, timeout: float) -> Iterator[Any]:
        with self._tx(False, timeout) as conn:
            yield conn


class ConversationPg(ServerTables):
    postgres = True
    dialect = "postgres"
    long_ids = True
    tie_order = "ctid"

    def __init__(self, url: pgurl.DatabaseURL, prefix: str = DEFAULT_PREFIX, schema: str = DEFAULT_SCHEMA) -> None:
        self.url, self.schema = url, schema
        self.display = url.display
        self.sessions, self.messages = f"{prefix}sessions", f"{prefix}messages"
        self.extra = f"{prefix}praisonmem_extra"
        self._read: Any = None
        self._write: Any = None
        self._checked: set[str] = set()  # connections whose tables were recognised (in a committed transaction)
        self._lock_timeout: float | None = None

    def q(self, sql: str) -> str:
        return sql.replace("?", "%s")

    def jw(self, value: Any) -> Any:
        return None if value is None else pgurl.jsonb(value)

    legacy_archived = "m.metadata->'_praisonmem'->>'archived' = 'true'"

    def extra_ddl(self, x: str, s: str) -> str:
        return (f"CREATE TABLE IF NOT EXISTS {x} (\n    session_id VARCHAR(255) NOT NULL REFERENCES {s}(session_id) "
                "ON DELETE CASCADE,\n    message_id VARCHAR(255) NOT NULL,\n    archived SMALLINT NOT NULL DEFAULT 0,\n"
                "    json TEXT NOT NULL,\n    PRIMARY KEY (session_id, message_id)\n)")

    def t(self, table: str) -> str:
        return f'"{self.schema}"."{table}"'

    def table_label(self, table: str) -> str:
        return f"{self.schema}.{table}"

    def ids_in(self, n: int) -> str:
        return "= ANY(%s)"

    def ids_param(self, ids: list[str]) -> list[Any]:
        return [list(ids)]

    def lock_row(self) -> str:
        return " FOR UPDATE"

    def _conn(self, read_only: bool) -> Any:
        attr = "_read" if read_only else "_write"
        conn = getattr(self, attr)
        if conn is None or conn.closed:
            pg = pgurl.driver()
            conn = pgurl.connect(self.url, read_only=read_only)
            if read_only:
                conn.isolation_level = pg.IsolationLevel.REPEATABLE_READ
            self._checked.discard(attr)
            self._lock_timeout = None if not read_only else self._lock_timeout
            setattr(self, attr, conn)
        return conn

    @contextmanager
    def _tx(self, read_only: bool, lock_timeout: float | None = None) -> Iterator[Any]:
        """One transaction on the kept connection; the tables are recognised once per connection (a migrate
        writes thousands of sessions), the lock timeout set once for the session (``SET``, not ``LOCAL``)."""
        pg = pgurl.driver()
        attr = "_read" if read_only else "_write"
        try:
            conn = self._conn(read_only)
            if lock_timeout is not None and lock_timeout != self._lock_timeout and not read_only:
                conn.execute("SELECT set_config('lock_timeout', %s, false)",
                             (f"{max(1, int(lock_timeout * 1000))}ms",))
                conn.commit()
                self._lock_timeout = lock_timeout
            with conn.transaction():
                if attr not in self._checked:
                    self.recognise(conn, create=not read_only)
                yield conn
            self._checked.add(attr)
        except pg.Error as exc:
            raise pgurl.translate(exc, self.url, writing=not read_only, lock_timeout=lock_timeout) from None

    @contextmanager
    def lite_reading(self) -> Iterator[Any]:
        """:meth:`reading` without psycopg (:mod:`praisonmem.core.io.pglite`): raises its ``Unavailable`` when
        the read must be done through psycopg instead (before anything it read is returned)."""
        from praisonmem.core.io import pglite

        with pglite.read_transaction(self.url.conninfo, self.display) as conn:
            self.recognise(conn)
            yield conn

    def recognise(self, conn: Any, *, create: bool = False) -> None:
        pgurl.require_plain_tables(conn, self.schema, [self.sessions, self.messages, self.extra], self.display)
        super().recognise(conn, create=create)

    def table_columns(self, conn: Any, table: str) -> dict[str, str] | None:
        return pgurl.columns(conn, self.schema, table)

    def create_tables(self, conn: Any) -> None:
        if not pgurl.schema_exists(conn, self.schema):  # the library's unconditional CREATE SCHEMA needs rights
            conn.execute(f'CREATE SCHEMA "{self.schema}"')
        s, m = self.t(self.sessions), self.t(self.messages)
        conn.execute(f"""CREATE TABLE IF NOT EXISTS {s} (
                session_id  VARCHAR(255) PRIMARY KEY,
                user_id     VARCHAR(255),
                agent_id    VARCHAR(255),
                name        VARCHAR(255),
                state       JSONB,
                metadata    JSONB,
                created_at  DOUBLE PRECISION,
                updated_at  DOUBLE PRECISION
            )""")
        conn.execute(f"""CREATE TABLE IF NOT EXISTS {m} (
                id          VARCHAR(255) PRIMARY KEY,
                session_id  VARCHAR(255) REFERENCES {s}(session_id) ON DELETE CASCADE,
                role        VARCHAR(50),
                content     TEXT,
                tool_calls  JSONB,
                tool_call_id VARCHAR(255),
                metadata    JSONB,
                created_at  DOUBLE PRECISION
            )""")
        ps, pm = self.sessions, self.messages
        for name, table, cols in ((f"idx_{ps}_user", s, "user_id"), (f"idx_{ps}_agent", s, "agent_id"),
                                  (f"idx_{ps}_updated", s, "updated_at DESC"), (f"idx_{pm}_session", m, "session_id"),
                                  (f"idx_{pm}_created", m, "created_at DESC")):
            conn.execute(f'CREATE INDEX IF NOT EXISTS "{name}" ON {table}({cols})')

    def close(self) -> None:
        for attr in ("_read", "_write"):
            conn = getattr(self, attr)
            if conn is not None:
                try:
                    conn.close()
                except Exception:  # noqa: BLE001 - closing a lost connection
                    pass
                setattr(self, attr, None)


class _MyConn:
    """A PyMySQL connection with the ``execute(sql, params)`` -> cursor shape of sqlite3's and psycopg's, which
    the store's SQL is written against."""

    def __init__(self, conn: Any) -> None:
        self.raw = conn

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
        cur = self.raw.cursor()
        cur.execute(sql, tuple(params) if params else None)  # None: a literal % needs no doubling
        return cur

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> Any:
        cur = self.raw.cursor()
        cur.executemany(sql, [tuple(r) for r in rows])
        return cur


class ConversationMy(ServerTables):
    """praisonai's ``MySQLConversationStore`` tables (MySQL 8 / MariaDB, InnoDB, utf8mb4) through PyMySQL:
    readers in ``READ ONLY`` ``REPEATABLE READ`` transactions, each change one transaction that locks the
    session's row (``SELECT … FOR UPDATE``) and waits at most the lock timeout
    (``innodb_lock_wait_timeout``)."""

    dialect = "mysql"
    long_ids = True
    text_limit = MYSQL_TEXT
    tie_order = "id"

    def __init__(self, url: mysqlurl.MySQLURL, prefix: str = DEFAULT_PREFIX) -> None:
        self.url = url
        self.display = url.display
        self.sessions, self.messages = f"{prefix}sessions", f"{prefix}messages"
        self.extra = f"{prefix}praisonmem_extra"
        self._conns: dict[bool, _MyConn] = {}
        self._checked: set[bool] = set()
        self._lock_timeout: float | None = None

    def q(self, sql: str) -> str:
        # a backslash escapes inside a MySQL string literal: ESCAPE '\' there is the one backslash
        return sql.replace("?", "%s").replace("ESCAPE '\\'", "ESCAPE '\\\\'")

    def t(self, table: str) -> str:
        return f"`{table}`"

    def lock_row(self) -> str:
        return " FOR UPDATE"

    def _conn(self, read_only: bool) -> _MyConn:
        conn = self._conns.get(read_only)
        if conn is None:
            conn = _MyConn(mysqlurl.connect(self.url))
            conn.execute("SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            self._checked.discard(read_only)
            if not read_only:
                self._lock_timeout = None
            self._conns[read_only] = conn
        return conn

    @contextmanager
    def _tx(self, read_only: bool, lock_timeout: float | None = None) -> Iterator[_MyConn]:
        my = mysqlurl.driver()
        try:
            conn = self._conn(read_only)
            if lock_timeout is not None and lock_timeout != self._lock_timeout:
                conn.execute(f"SET SESSION innodb_lock_wait_timeout = {max(1, int(round(lock_timeout)))}")
                self._lock_timeout = lock_timeout
            if read_only not in self._checked:
                self._recognised(conn, read_only)
            conn.execute("START TRANSACTION READ ONLY" if read_only else "START TRANSACTION")
        except my.Error as exc:
            self._drop(read_only)
            raise mysqlurl.translate(exc, self.url, writing=not read_only, lock_timeout=lock_timeout) from None
        try:
            yield conn
            conn.raw.commit()
        except my.Error as exc:
            self._rollback(conn)
            self._drop(read_only)
            raise mysqlurl.translate(exc, self.url, writing=not read_only, lock_timeout=lock_timeout) from None
        except BaseException:
            self._rollback(conn)
            raise

    def _recognised(self, conn: _MyConn, read_only: bool) -> None:
        """The tables checked once per connection, outside the change's transaction; a writer's empty database
        gets the library's DDL, and a writer the side table: MySQL's DDL commits the transaction it is in, and a
        table made after a transaction's snapshot is one that transaction may not touch (error 1412), so it is
        made before, not when a session first needs it."""
        conn.execute("START TRANSACTION READ ONLY")
        try:
            self.recognise(conn)
        except NotFound:
            if read_only:
                raise
            self._rollback(conn)
            self.create_tables(conn)
        finally:
            self._rollback(conn)
        if not read_only and not self.has_extra:
            conn.execute(self.extra_ddl(self.t(self.extra), self.t(self.sessions)))
            self.has_extra = True
        self._checked.add(read_only)

    def _rollback(self, conn: _MyConn) -> None:
        try:
            conn.raw.rollback()
        except Exception:  # noqa: BLE001 - the connection is gone; the server rolls back by itself
            pass

    def _drop(self, read_only: bool) -> None:
        conn = self._conns.pop(read_only, None)
        self._checked.discard(read_only)
        if conn is not None:
            try:
                conn.raw.close()
            except Exception:  # noqa: BLE001 - closing a lost connection
                pass

    def recognise(self, conn: Any, *, create: bool = False) -> None:
        problem = self._relations_problem(conn)
        if problem is not None:
            raise Refused(f"{self.display}: {problem}; not a store as its library writes it, nothing read or written")
        super().recognise(conn, create=create)

    def _relations_problem(self, conn: Any) -> str | None:
        names = (self.sessions, self.messages, self.extra)
        row = conn.execute("SELECT table_name, table_type FROM information_schema.tables WHERE table_schema = "
                           "DATABASE() AND table_name IN (%s, %s, %s) AND table_type <> 'BASE TABLE' "
                           "ORDER BY table_name LIMIT 1", names).fetchone()
        if row is not None:
            return f"{row[0]} is a {str(row[1]).lower()}, not a table: it would answer every read with its own query"
        row = conn.execute("SELECT trigger_name, event_object_table FROM information_schema.triggers WHERE "
                           "trigger_schema = DATABASE() AND event_object_table IN (%s, %s, %s) ORDER BY 2, 1 LIMIT 1",
                           names).fetchone()
        if row is not None:
            return f"a trigger ('{row[0]}') on the table {row[1]}, which would run its own SQL inside every change"
        return None

    def table_columns(self, conn: Any, table: str) -> dict[str, str] | None:
        rows = conn.execute("SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = "
                            "DATABASE() AND table_name = %s ORDER BY ordinal_position", (table,)).fetchall()
        return {r[0]: r[1] for r in rows} or None

    def create_tables(self, conn: Any) -> None:
        s, m = self.sessions, self.messages
        # the library's DDL (persistence/conversation/mysql.py), character for character
        conn.execute(f"""
                CREATE TABLE IF NOT EXISTS {s} (
                    session_id VARCHAR(255) PRIMARY KEY,
                    user_id VARCHAR(255),
                    agent_id VARCHAR(255),
                    name VARCHAR(255),
                    state JSON,
                    metadata JSON,
                    created_at DOUBLE,
                    updated_at DOUBLE,
                    INDEX idx_user (user_id),
                    INDEX idx_agent (agent_id),
                    INDEX idx_updated (updated_at DESC)
                ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4
            """)
        conn.execute(f"""
                CREATE TABLE IF NOT EXISTS {m} (
                    id VARCHAR(255) PRIMARY KEY,
                    session_id VARCHAR(255) NOT NULL,
                    role VARCHAR(50) NOT NULL,
                    content TEXT,
                    tool_calls JSON,
                    tool_call_id VARCHAR(255),
                    metadata JSON,
                    created_at DOUBLE,
                    INDEX idx_session (session_id),
                    INDEX idx_created (session_id, created_at),
                    FOREIGN KEY (session_id) REFERENCES {s}(session_id) ON DELETE CASCADE
                ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4
            """)

    def extra_ddl(self, x: str, s: str) -> str:
        return (f"CREATE TABLE IF NOT EXISTS {x} (\n    session_id VARCHAR(255) NOT NULL,\n"
                "    message_id VARCHAR(255) NOT NULL,\n    archived TINYINT NOT NULL DEFAULT 0,\n"
                "    json LONGTEXT NOT NULL,\n    PRIMARY KEY (session_id, message_id),\n"
                f"    FOREIGN KEY (session_id) REFERENCES {s}(session_id) ON DELETE CASCADE\n"
                ") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4")

    def close(self) -> None:
        for read_only in list(self._conns):
            self._drop(read_only)


def _tables(backend: ConversationTables) -> tuple[str, str, str]:
    if isinstance(backend, (ConversationPg, ConversationMy)):
        return backend.t(backend.sessions), backend.t(backend.messages), backend.t(backend.extra)
    return f'"{backend.sessions}"', f'"{backend.messages}"', f'"{backend.extra}"'


# ---------------------------------------------------------------- the store


# DESC as the library's list_sessions orders (NULLs first on PostgreSQL, last on SQLite), so PostgreSQL walks
# idx_<prefix>sessions_updated (updated_at DESC) for the newest page instead of sorting the table
SORTS = {"updated": "s.updated_at DESC, s.session_id",
         "created": "s.created_at DESC, s.session_id",
         "messages": "coalesce(c.n, 0) - coalesce(c.a, 0) DESC, s.session_id", "id": "s.session_id"}
LISTED_KEYS = ("title", "model", "total_tokens", "cost", "agent_id", "source", "parent_id")  # _summary's
LATERAL_LIMIT = 2000  # a page up to this size counts its sessions' messages one session at a time


class ConversationStore(PlainStore):
    """The sessions of one conversation database; see the module docstring."""

    label = CONVERSATIONS

    def __init__(self, backend: ConversationTables) -> None:
        self.backend = backend
        self.where = backend.display
        self.s, self.m, self.x = _tables(backend)

    def _sql(self, sql: str) -> str:
        return self.backend.q(sql.replace("{s}", self.s).replace("{m}", self.m).replace("{x}", self.x))

    # -------------------------------------------------------- naming

    def ref(self, session_id: str, *, beside: ConvRef | None = None) -> ConvRef:
        return ConvRef(self.where, session_id)

    def name(self, ref: ConvRef) -> str:
        return ref.session_id

    def session_id(self, ref: ConvRef, doc: dict[str, Any]) -> str:
        return ref.session_id

    # -------------------------------------------------------- reading

    def refs(self) -> list[ConvRef]:
        with self.backend.reading() as conn:
            rows = conn.execute(self._sql("SELECT session_id FROM {s} ORDER BY session_id")).fetchall()
        return [ConvRef(self.where, r[0]) for r in rows]

    def exists(self, ref: ConvRef) -> bool:
        with self.backend.reading() as conn:
            return conn.execute(self._sql("SELECT 1 FROM {s} WHERE session_id = ?"),
                                (ref.session_id,)).fetchone() is not None

    def absent(self) -> str | None:
        return None

    def find(self, name: str, *, allow_prefix: bool = False) -> ConvRef:
        with self.backend.reading() as conn:
            if conn.execute(self._sql("SELECT 1 FROM {s} WHERE session_id = ?"), (name,)).fetchone():
                return ConvRef(self.where, name)
            if allow_prefix and name:
                pattern = re.sub(r"([\\%_])", r"\\\1", name) + "%"
                rows = conn.execute(self._sql("SELECT session_id FROM {s} WHERE session_id LIKE ? ESCAPE '\\' "
                                              "ORDER BY session_id LIMIT 200"), (pattern,)).fetchall()
                matches = [r[0] for r in rows if r[0].startswith(name)]
                if len(matches) == 1:
                    return ConvRef(self.where, matches[0])
                if matches:
                    raise ambiguous(name, matches, self.where)
        raise NotFound(f"no session '{name}' in {self.where}")

    def _session_rows(self, conn: Any, ids: list[str]) -> dict[str, tuple[dict[str, Any], list[dict[str, Any]],
                                                                          dict[str, tuple[int, str]]]]:
        """Per session: its row, its message rows (in the order they are read back) and its side-table rows."""
        cols = ", ".join(SESSION_COLUMNS)
        inn = self.backend.ids_in(len(ids))
        params = self.backend.ids_param(ids)
        out: dict[str, tuple[dict[str, Any], list[dict[str, Any]], dict[str, tuple[int, str]]]] = {}
        for row in conn.execute(self._sql(f"SELECT {cols} FROM {{s}} WHERE session_id {inn}"), params):
            out[row[0]] = (dict(zip(SESSION_COLUMNS, row)), [], {})
        mcols = ", ".join(MESSAGE_COLUMNS)
        order = f"session_id, created_at, {self.backend.tie_order}"
        for row in conn.execute(self._sql(f"SELECT {mcols} FROM {{m}} WHERE session_id {inn} ORDER BY {order}"),
                                params):
            if row[1] in out:
                out[row[1]][1].append(dict(zip(MESSAGE_COLUMNS, row)))
        if self.backend.has_extra:
            for sid, mid, archived, text in conn.execute(self._sql(
                    f"SELECT session_id, message_id, archived, json FROM {{x}} WHERE session_id {inn}"), params):
                if sid in out:
                    out[sid][2][mid] = (archived, text)
        return out

    def _text(self, sid: str, srow: dict[str, Any], mrows: list[dict[str, Any]],
              extras: dict[str, tuple[int, str]] | None = None) -> bytes:
        """The document's bytes; :class:`CorruptFile` when a JSON column does not parse."""
        try:
            srow = {**srow, "state": _loads(srow["state"]), "metadata": _loads(srow["metadata"])}
            mrows = [{**r, "tool_calls": _loads(r["tool_calls"]), "metadata": _loads(r["metadata"])} for r in mrows]
            text, _ = rows_to_doc(sid, srow, mrows, extras, text_limit=self.backend.text_limit)
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            raise CorruptFile(f"{self.where}:{sid}", f"rows praisonmem cannot read as a session ({exc})") from exc
        try:
            return text.encode("utf-8")
        except UnicodeEncodeError:
            return text.encode("utf-8", "replace")  # a lone surrogate a changed row brought in

    def read(self, ref: ConvRef) -> dict[str, Any]:
        return self.parse(ref, self.read_bytes(ref))

    def read_bytes(self, ref: ConvRef) -> bytes:
        with self.backend.reading() as conn:
            found = self._session_rows(conn, [ref.session_id]).get(ref.session_id)
        if found is None:
            raise NotFound(f"no session '{ref.session_id}' in {self.where}")
        return self._text(ref.session_id, *found)

    def parse(self, ref: ConvRef, raw: bytes) -> dict[str, Any]:
        return validate(jsonfile.parse_object(raw, where(ref)), where(ref))

    def scan(self, fold: Fold[A], *, progress: Callable[[int, int], None] | None = None, memo: Any = None,
             only: Sequence[str] | None = None) -> A:
        """``fold`` over every session (``only``: these ids), in id order, read in batches of short read
        transactions (see :meth:`raw_batches`; a database needs no ``memo``: listing is SQL)."""
        acc = fold.empty()
        if only is None:
            with self.backend.reading() as conn:
                ids = [r[0] for r in conn.execute(self._sql("SELECT session_id FROM {s} ORDER BY session_id"))]
        else:
            ids = sorted(only)
        for start in range(0, len(ids), BATCH):
            chunk = ids[start:start + BATCH]
            with self.backend.reading() as conn:
                found = self._session_rows(conn, chunk)
            for sid in chunk:
                if sid not in found:
                    continue
                ref = ConvRef(self.where, sid)
                try:
                    doc = self.parse(ref, self._text(sid, *found[sid]))
                except PraisonMemError as exc:
                    acc = fold.add(acc, Scanned(self.where, sid, None, exc, ref=ref, store=self.label))
                else:
                    acc = fold.add(acc, Scanned(self.where, sid, doc, None, ref=ref, store=self.label))
            if progress:
                progress(min(start + BATCH, len(ids)), len(ids))
        return acc

    def raw_batches(self, refs: Sequence[ConvRef]) -> Iterator[tuple[ConvRef, bytes | PraisonMemError]]:
        """Each session's document bytes (or why it cannot be read), read in batches, each batch its own short
        read transaction (a long one on SQLite would hold off a live agent's writes)."""
        for start in range(0, len(refs), BATCH):
            chunk = list(refs[start:start + BATCH])
            with self.backend.reading() as conn:
                found = self._session_rows(conn, [r.session_id for r in chunk])
            for ref in chunk:
                if ref.session_id not in found:
                    yield ref, NotFound(f"no session '{ref.session_id}' in {self.where}")
                    continue
                try:
                    yield ref, self._text(ref.session_id, *found[ref.session_id])
                except PraisonMemError as exc:
                    yield ref, exc

    def holds(self, ref: ConvRef, doc: dict[str, Any]) -> bool:
        try:
            return self.read_bytes(ref) == jsonfile.serialise(doc)
        except PraisonMemError:
            return False

    def seconds_since_write(self, ref: ConvRef, doc: dict[str, Any], now: float) -> float | None:
        from praisonmem.core.io.timeutil import epoch_of

        stamp = epoch_of(doc.get("updated_at"))
        return None if stamp is None else now - stamp

    # -------------------------------------------------------- SQL listing and search

    def summaries(self, *, agent: str | None = None, user: str | None = None, sort: str = "updated",
                  limit: int = 0) -> tuple[list[dict[str, Any]], int]:
        """``session list`` rows (without ``scope``) and how many sessions match, filtered, sorted, counted
        and cut in SQL: the sessions table, and per listed session its messages by the ``session_id`` index.
        The matching sessions are counted only when the page is full (one row more than the page is read to
        know), since a page with room left holds them all."""
        lite = getattr(self.backend, "lite_reading", None)
        if lite is not None and limit and limit <= LATERAL_LIMIT and sort != "messages":
            # a page: a few milliseconds of work, less than psycopg's import (the whole table is psycopg's:
            # its loaders convert 100,000 rows faster than a call per value through ctypes)
            from praisonmem.core.io.pglite import Unavailable

            try:
                with lite() as conn:
                    return self._summaries(conn, agent, user, sort, limit)
            except Unavailable:
                pass  # read again through psycopg, which says what went wrong in its words
        with self.backend.reading() as conn:  # first: the tables seen say whether the side table is there
            return self._summaries(conn, agent, user, sort, limit)

    def _summaries(self, conn: Any, agent: str | None, user: str | None, sort: str,
                   limit: int) -> tuple[list[dict[str, Any]], int]:
        where_sql, params = [], []
        if agent is not None:
            where_sql.append("s.agent_id = ?")
            params.append(agent)
        if user is not None:
            where_sql.append("s.user_id = ?")
            params.append(user)
        cond = (" WHERE " + " AND ".join(where_sql)) if where_sql else ""
        pred = self.backend.archived(self.x)
        arch = f"sum(CASE WHEN {pred} THEN 1 ELSE 0 END)"
        cols = f"s.session_id, s.user_id, s.agent_id, s.name, {self._listed_metadata()}, s.created_at, s.updated_at"
        if limit and limit <= LATERAL_LIMIT and sort != "messages":
            # the page first (the sessions table, its updated_at index), then each listed session's messages
            # by their session_id index
            # nothing can be archived (no side table, no earlier praisonmem's rows): no second lookup
            archived = "0" if pred == "0 = 1" else \
                f"(SELECT coalesce({arch}, 0) FROM {{m}} m WHERE m.session_id = s.session_id)"
            sql = (f"SELECT {cols}, (SELECT count(*) FROM {{m}} m WHERE m.session_id = s.session_id), "
                   f"{archived} "
                   f"FROM (SELECT * FROM {{s}} s{cond} ORDER BY {SORTS[sort]} LIMIT ?) s ORDER BY {SORTS[sort]}")
            rows = conn.execute(self._sql(sql), (*params, limit + 1)).fetchall()
        elif self.backend.dialect in ("mysql", "postgres"):
            rows = self._merged_counts(conn, cols, cond, params, pred, arch, sort)
            return [self._summary(r) for r in (rows[:limit] if limit else rows)], len(rows)
        else:
            # every session (or sorted by size): one aggregate over the messages beats one lookup per session
            sql = (f"SELECT {cols}, coalesce(c.n, 0), coalesce(c.a, 0) FROM {{s}} s LEFT JOIN "
                   f"(SELECT m.session_id, count(*) AS n, {arch} AS a FROM {{m}} m GROUP BY m.session_id) c "
                   f"ON c.session_id = s.session_id{cond} ORDER BY {SORTS[sort]}" + (" LIMIT ?" if limit else ""))
            rows = conn.execute(self._sql(sql), (*params, limit + 1) if limit else tuple(params)).fetchall()
        total = len(rows)
        if limit and len(rows) > limit:
            rows = rows[:limit]
            total = conn.execute(self._sql(f"SELECT count(*) FROM {{s}} s{cond}"), tuple(params)).fetchone()[0]
        return [self._summary(r) for r in rows], total

    def _listed_metadata(self) -> str:
        """The metadata column as the listing reads it: on PostgreSQL NULL when it holds none of the keys
        :meth:`_summary` reads (a missing key, a JSON null and a non-object all read as nothing there), so most
        rows' JSON is never decoded."""
        if not self.backend.postgres:
            return "s.metadata"
        held = " OR ".join(f"s.metadata ->> '{key}' IS NOT NULL" for key in LISTED_KEYS)
        return f"CASE WHEN {held} THEN s.metadata END"

    def _merged_counts(self, conn: Any, cols: str, cond: str, params: list[Any], pred: str, arch: str,
                       sort: str) -> list[tuple[Any, ...]]:
        """Every matching session's row with its message counts, on a server: the sessions in one query, the
        counts in one grouped scan of the messages' session_id index, joined here (MariaDB joins the grouped
        counts to the sessions without an index: minutes for 100,000 sessions; PostgreSQL sorts the joined rows
        again, on disk past its work_mem)."""
        order = "s.session_id" if sort == "messages" else SORTS[sort]
        sessions = conn.execute(self._sql(f"SELECT {cols} FROM {{s}} s{cond} ORDER BY {order}"),
                                tuple(params)).fetchall()
        within = f" WHERE m.session_id IN (SELECT s.session_id FROM {{s}} s{cond})" if cond else ""
        archived = "0" if pred == "0 = 1" else arch
        counts = {sid: (int(n), int(a)) for sid, n, a in conn.execute(self._sql(
            f"SELECT m.session_id, count(*), {archived} FROM {{m}} m{within} GROUP BY m.session_id"),
            tuple(params)).fetchall()}
        rows = [(*row, *counts.get(row[0], (0, 0))) for row in sessions]
        if sort == "messages":  # stable: equal sizes stay in the server's session_id order, as SORTS says
            rows.sort(key=lambda r: r[8] - r[7])
        return rows

    def _summary(self, r: Any) -> dict[str, Any]:
        sid, user_id, agent_id, name, metadata, created, updated, n, archived = r
        n, archived = int(n), int(archived)  # MySQL's sum() is a DECIMAL
        try:
            meta = _loads(metadata)
        except ValueError:
            meta = None
        meta = meta if isinstance(meta, dict) else {}
        # only LISTED_KEYS are read (see _listed_metadata)
        title = meta.get("title") if isinstance(meta.get("title"), str) and meta.get("title") else name
        return {"session_id": sid, "file": self.where, "agent_name": agent_id, "user_id": user_id,
                "title": title, "message_count": n - archived, "archived_count": archived,
                "created_at": epoch_iso(created), "updated_at": epoch_iso(updated),
                "model": meta.get("model"), "total_tokens": meta.get("total_tokens"), "cost": meta.get("cost"),
                "scope": None, "agent_id": meta.get("agent_id"), "source": meta.get("source"),
                "parent_id": meta.get("parent_id"), "spilled_count": 0, "unreadable": False, "error": None,
                "store": self.label}

    def matching(self, terms: list[str]) -> list[str]:
        """The ids of the sessions with a message containing one of ``terms`` (a case-insensitive SQL
        pre-filter for ``session search``, which then scores only those sessions)."""
        if not terms:
            return []
        op = "ILIKE" if self.backend.postgres else "LIKE"
        text = {"postgres": "metadata::text", "sqlite": "CAST(metadata AS TEXT)",
                # utf8mb4_bin would match case-sensitively; content's general_ci column already does not
                "mysql": "CONVERT(metadata USING utf8mb4) COLLATE utf8mb4_general_ci"}[self.backend.dialect]
        # a gateway document's chat is inside its system messages' metadata (session_data)
        cond = " OR ".join(f"content {op} ? ESCAPE '\\' OR (role = 'system' AND {text} {op} ? ESCAPE '\\')"
                           for _ in terms)
        # Encrypted values (content, a metadata envelope) cannot be matched in SQL: those sessions are always
        # read, so a key finds their hits and, without one, they are counted as not searched.
        cond += f" OR content LIKE ? OR {text} LIKE ?"  # parameters: a literal % means something to psycopg
        patterns = [p for t in terms for p in ["%" + re.sub(r"([\\%_])", r"\\\1", t) + "%"] * 2]
        patterns += ["praisonai:enc:v1:%", "%praisonai:enc:v1:%"]
        with self.backend.reading() as conn:
            rows = conn.execute(self._sql(f"SELECT DISTINCT session_id FROM {{m}} WHERE {cond}"), patterns).fetchall()
        return [r[0] for r in rows if r[0] is not None]

    # -------------------------------------------------------- writing

    @contextmanager
    def transaction(self, refs: Sequence[ConvRef], timeout: float = jsonfile.LOCK_TIMEOUT
                    ) -> Iterator[ConvTransaction]:
        """One database transaction around the changes: committed when the block ends, rolled back on an
        error; the tables are created (with the library's DDL) when neither exists."""
        with self.backend.writing(timeout) as conn:
            tx = ConvTransaction(self, conn)
            for ref in sorted(refs):  # PostgreSQL: lock the named rows first, in order
                tx.lock(ref)
            yield tx

    def prepare_write(self, timeout: float = jsonfile.LOCK_TIMEOUT) -> None:
        """Fail now, with nothing written, when this store cannot be written (no rights, read-only server,
        another app's tables): an empty transaction that checks the privileges and may create the tables."""
        with self.backend.writing(timeout) as conn:
            if self.backend.dialect == "mysql":
                self._mysql_privileges(conn)
            if self.backend.postgres:
                for table in (self.s, self.m):
                    ok = conn.execute("SELECT has_table_privilege(current_user, %s, 'INSERT,UPDATE,DELETE')",
                                      (table,)).fetchone()[0]
                    if not ok:
                        raise IOFailure(f"{self.where}: permission denied for table {table.replace(chr(34), '')} "
                                              "(the role may not write here); nothing written")

    def _mysql_privileges(self, conn: Any) -> None:
        """INSERT, UPDATE and DELETE on both tables (as the server grants them: globally, on the database or on
        the table), so a read-only user fails before anything is written."""
        need = {"INSERT", "UPDATE", "DELETE"}
        rows = conn.execute(
            "SELECT privilege_type FROM information_schema.user_privileges WHERE grantee = %s "
            "UNION ALL SELECT privilege_type FROM information_schema.schema_privileges WHERE grantee = %s "
            "AND table_schema = DATABASE()", (self._grantee(conn),) * 2).fetchall()
        have = {r[0] for r in rows}
        for table in (self.backend.sessions, self.backend.messages):
            tab = conn.execute("SELECT privilege_type FROM information_schema.table_privileges WHERE grantee = %s "
                               "AND table_schema = DATABASE() AND table_name = %s", (self._grantee(conn), table))
            if not need <= have | {r[0] for r in tab.fetchall()}:
                raise IOFailure(f"{self.where}: the user may not write the table {table} (it lacks "
                                f"{', '.join(sorted(need - have))}); nothing written")

    def _grantee(self, conn: Any) -> str:
        user, _, host = conn.execute("SELECT CURRENT_USER()").fetchone()[0].rpartition("@")
        return f"'{user}'@'{host}'"

    def close(self) -> None:
        if isinstance(self.backend, (ConversationPg, ConversationMy)):
            self.backend.close()


class ConvTransaction:
    """Changes inside one database transaction: every read is a re-read inside it."""

    def __init__(self, store: ConversationStore, conn: Any) -> None:
        self.store, self.conn = store, conn
        self.notes: list[str] = []
        self._present: dict[str, bool] = {}  # locked rows: there or not (this transaction changes it alone)

    def _x(self, sql: str, params: Sequence[Any] = ()) -> Any:
        return self.conn.execute(self.store._sql(sql), tuple(params))

    def lock(self, ref: ConvRef) -> bool:
        """Lock the session's row (PostgreSQL; SQLite's BEGIN IMMEDIATE holds the whole file) and say if it is
        there."""
        if ref.session_id not in self._present:
            lock = self.store.backend.lock_row()
            row = self._x("SELECT 1 FROM {s} WHERE session_id = ?" + lock, (ref.session_id,)).fetchone()
            self._present[ref.session_id] = row is not None
        return self._present[ref.session_id]

    def exists(self, ref: ConvRef) -> bool:
        return self._x("SELECT 1 FROM {s} WHERE session_id = ?", (ref.session_id,)).fetchone() is not None

    def read_bytes(self, ref: ConvRef) -> bytes | None:
        if not self.lock(ref):
            return None
        found = self.store._session_rows(self.conn, [ref.session_id]).get(ref.session_id)
        return None if found is None else self.store._text(ref.session_id, *found)

    def read(self, ref: ConvRef) -> dict[str, Any] | None:
        raw = self.read_bytes(ref)
        return None if raw is None else self.store.parse(ref, raw)

    def write(self, ref: ConvRef, doc: dict[str, Any]) -> None:
        self.write_raw(ref, jsonfile.serialise(doc))

    def rewrite_spill(self, session_id: str, change: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
        """Nothing: a conversation store has no spill dir."""

    def drop_spill(self, ref: Any) -> str | None:
        """Nothing: a conversation store has no spill dir."""
        return None

    def forget_replaced(self) -> None:
        """Nothing more than the database does: replaced rows are the server's (PostgreSQL) or SQLite's free
        pages; praisonmem does not VACUUM a team's database."""

    def write_raw(self, ref: ConvRef, raw: bytes) -> None:
        """The session as these document bytes map to rows (the row updated in place, its messages
        replaced). Plaintext never goes into an encrypted session (as in every store's transaction)."""
        from praisonmem.core.sessions.crypto import unsealed

        problem = unsealed(self.read(ref), self.store.parse(ref, raw))
        if problem:
            raise Refused(f"{where(ref)}: {problem}; nothing changed")
        b = self.store.backend
        sid, s, rows, extras = doc_to_rows(raw, postgres=b.long_ids, text_limit=b.text_limit,
                                           ties_by_id=b.tie_order == "id")
        if sid != ref.session_id:
            raise UsageError(f"{where(ref)}: the document's session_id is {sid!r}")
        taken = self._taken([r["id"] for r in rows], sid)
        if taken:
            sid, s, rows, extras = doc_to_rows(raw, postgres=b.long_ids, text_limit=b.text_limit, avoid=taken,
                                               ties_by_id=b.tie_order == "id")
        if extras and not b.has_extra:
            b.ensure_extra(self.conn, self.store.x, self.store.s)
        values = (s["user_id"], s["agent_id"], s["name"], b.jw(s["state"]), b.jw(s["metadata"]),
                  s["created_at"], s["updated_at"])
        if self.lock(ref):
            self._x("UPDATE {s} SET user_id = ?, agent_id = ?, name = ?, state = ?, metadata = ?, created_at = ?, "
                    "updated_at = ? WHERE session_id = ?", (*values, sid))
            self._x("DELETE FROM {m} WHERE session_id = ?", (sid,))
        else:
            self._x(f"INSERT INTO {{s}} ({', '.join(SESSION_COLUMNS)}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", (sid, *values))
            self._present[sid] = True
        head = f"INSERT INTO {{m}} ({', '.join(MESSAGE_COLUMNS)}) "
        if b.postgres and rows:  # one statement, one round trip, for all the session's messages
            dumps = json.dumps  # what Jsonb binds; the server parses it into jsonb
            columns = [[r["id"] for r in rows], [r["role"] for r in rows], [r["content"] for r in rows],
                       [None if r["tool_calls"] is None else dumps(r["tool_calls"]) for r in rows],
                       [r["tool_call_id"] for r in rows],
                       [None if r["metadata"] is None else dumps(r["metadata"]) for r in rows],
                       [r["created_at"] for r in rows]]
            self._x(head + "SELECT u.id, ?, u.role, u.content, u.tc::jsonb, u.tcid, u.md::jsonb, u.ca FROM "
                    "unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::float8[]) "
                    "WITH ORDINALITY AS u(id, role, content, tc, tcid, md, ca, n) ORDER BY u.n", (sid, *columns))
        elif rows:
            self.conn.executemany(self.store._sql(head + "VALUES (?, ?, ?, ?, ?, ?, ?, ?)"),
                                  [(r["id"], sid, r["role"], r["content"], b.jw(r["tool_calls"]), r["tool_call_id"],
                                    b.jw(r["metadata"]), r["created_at"]) for r in rows])
        if b.has_extra:  # what the columns lose, beside them; nothing for rows that are the whole session
            self._x("DELETE FROM {x} WHERE session_id = ?", (sid,))
            if extras:
                sql = self.store._sql("INSERT INTO {x} (session_id, message_id, archived, json) VALUES (?, ?, ?, ?)")
                many = getattr(self.conn, "executemany", None) or self.conn.cursor().executemany  # psycopg: a cursor's
                many(sql, [(sid, *e) for e in extras])

    def _taken(self, ids: list[str], sid: str) -> frozenset[str]:
        """Those of ``ids`` that are rows of another session (message ids are unique across the table)."""
        taken: set[str] = set()
        for start in range(0, len(ids), BATCH):
            chunk = ids[start:start + BATCH]
            b = self.store.backend
            sql = f"SELECT id FROM {{m}} WHERE id {b.ids_in(len(chunk))} AND session_id <> ?"
            taken.update(r[0] for r in self._x(sql, (*b.ids_param(chunk), sid)).fetchall())
        return frozenset(taken)

    def delete(self, ref: ConvRef) -> None:
        self._present[ref.session_id] = False
        if self.store.backend.has_extra:
            self._x("DELETE FROM {x} WHERE session_id = ?", (ref.session_id,))
        self._x("DELETE FROM {m} WHERE session_id = ?", (ref.session_id,))
        if self._x("DELETE FROM {s} WHERE session_id = ?", (ref.session_id,)).rowcount == 0:
            raise NotFound(f"{where(ref)}: no such session")

    def carry_spill(self, old_id: str, new_id: str, *, keep: bool = False) -> None:
        """Nothing: a conversation store has no spill dir."""


def sql_store(store: Any) -> ConversationStore | None:
    """The conversation store a (home narrowed to one) store is, for the SQL fast paths; else None."""
    members = getattr(store, "stores", None)
    if isinstance(members, dict) and len(members) == 1:
        store = next(iter(members.values()))
    return store if isinstance(store, ConversationStore) else None
