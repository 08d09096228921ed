"""Which session store a ``--store`` value names, and :func:`open_store`, the one way to open one.

``--store`` takes a label of the home's stores (``json``, ``sessions.db``) or a *location*:

* a directory: the JSON store of that directory (praisonaiagents' session files), or PraisonAI's JSON
  conversation store (:mod:`~.conversation_json`) when it has that store's ``_sessions_index.json`` or its
  session files have that store's shape; ``jsonconv:DIR`` names one whatever DIR holds (an empty or new
  directory, a migrate target), as does a new directory called ``praisonai_conversations`` (the library's
  default);
* ``sqlite:///PATH`` or a file path: by its tables, PraisonAI's SQL conversation store
  (``<prefix>sessions``/``<prefix>messages``) or the gateway's transcript store (``sessions`` with
  ``data``); a file that does not exist yet is a conversation store (a migrate target creates it)
  unless it is named ``sessions.db``; a path that does not exist and does not end in ``.db``,
  ``.sqlite`` or ``.sqlite3`` is a JSON directory to be;
* ``postgresql://…`` (or ``postgres://``): the conversation store in ``--schema``;
* ``mysql://USER:PASS@HOST:PORT/DB`` (``?unix_socket=PATH``): praisonai's MySQL/MariaDB conversation store
  (:mod:`praisonmem.core.io.mysqlurl`);
* ``mongodb://`` / ``mongodb+srv://``: refused, one line (praisonmem does not manage MongoDB stores).

Without ``--store``: the config key ``store`` (``PRAISONMEM_STORE``), else PraisonAI's own
``PRAISONAI_CONVERSATION_STORE`` when it names a SQL store, with ``PRAISONAI_CONVERSATION_URL`` (else
``POSTGRES_URL``) as the library reads them; names compare case-insensitively, as the library's
registry does. For the sqlite family the URL is a path (or ``sqlite:///PATH``), and the library's
default file ``praisonai_conversations.db`` when none is set. For the mysql family (``mysql``,
``async_mysql``, ``aiomysql``, ``mysql_async``) the URL is parsed as the library parses it (any scheme: host,
port, user, password and database are taken from it), and without one the library's defaults,
``mysql://root@localhost:3306/praisonai``; praisonai 4.7.19 declares ``MYSQL_URL``, ``MYSQL_HOST``, … but reads
none of them, so neither does praisonmem.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from typing import TYPE_CHECKING

from praisonmem.core.errors import UsageError
from praisonmem.core.layout import SPILL_DIR, TRANSCRIPT_DB
from praisonmem.core.sessions.stores.names import (CONVERSATION_DIR, CONVERSATION_INDEX, DEFAULT_FILE, DEFAULT_PREFIX,
                                                   DEFAULT_SCHEMA, JSONCONV, LABELS, PROJECT,
                                                   is_conversation_file)

if TYPE_CHECKING:
    from praisonmem.core.paths import Paths
    from praisonmem.core.sessions.stores import SessionStore

SQLITE_SUFFIXES = (".db", ".sqlite", ".sqlite3")
PG_FAMILY = frozenset("postgres neon cockroachdb crdb cockroach xata async_postgres asyncpg postgres_async".split())
SQLITE_FAMILY = frozenset("sqlite sync_sqlite sqlite_sync async_sqlite aiosqlite sqlite_async".split())
MYSQL_FAMILY = frozenset("mysql async_mysql aiomysql mysql_async".split())
MYSQL_DEFAULT = "mysql://root@localhost:3306/praisonai"  # MySQLConversationStore's own defaults
ENV_STORE, ENV_URL, ENV_POSTGRES = "PRAISONAI_CONVERSATION_STORE", "PRAISONAI_CONVERSATION_URL", "POSTGRES_URL"


def is_location(text: str | None) -> bool:
    """A store named by where it is (a URL, a path), not by a home's label."""
    if not text or text in LABELS or (text.startswith(PROJECT) and os.sep not in text):
        return False
    if text.startswith(JSONCONV):
        return True
    from praisonmem.core.io import pgurl

    return pgurl.is_url(text) or os.sep in text or text.endswith(".db") or os.path.isdir(text)


def from_environment(env: Mapping[str, str]) -> str | None:
    """The store PraisonAI's own environment names, or None (see the module docstring)."""
    name = (env.get(ENV_STORE) or "").strip()
    if not name:
        return None
    url = env.get(ENV_URL) or env.get(ENV_POSTGRES)
    kind = name.lower()
    if kind in PG_FAMILY:
        if not url:
            raise UsageError(f"{ENV_STORE}={name} names a PostgreSQL store but neither {ENV_URL} nor {ENV_POSTGRES} "
                             "is set")
        return url
    if kind in SQLITE_FAMILY:
        return url or f"./{DEFAULT_FILE}"
    if kind in MYSQL_FAMILY:
        if not url:
            return MYSQL_DEFAULT
        if "://" not in url:
            raise UsageError(f"{ENV_STORE}={name} names a MySQL store but {ENV_URL} is not a URL "
                             "(mysql://USER:PASS@HOST:PORT/DB)")
        return "mysql://" + url.split("://", 1)[1]  # the library takes host, user, … from any scheme's URL
    from praisonmem.core.io import pgurl

    if kind in ("mongodb", "motor") or kind.startswith("mongodb"):
        raise UsageError(pgurl.MONGODB_UNSUPPORTED)

    masked = pgurl.redact(name)  # a URL put here by mistake may hold a password
    raise UsageError(f"{ENV_STORE}={masked}: store '{masked}' is not supported by praisonmem (it reads the sqlite and "
                     "postgres and mysql families; the location goes in PRAISONAI_CONVERSATION_URL); give --store json for the "
                     "home's JSON files")


def resolve(flag_or_config: str | None, env: Mapping[str, str]) -> str | None:
    """The ``store`` a session command uses: the flag or config value, else PraisonAI's environment."""
    return flag_or_config if flag_or_config else from_environment(env)


def open_location(text: str, *, table_prefix: str | None = None, schema: str | None = None) -> "SessionStore":
    """The store at ``text``, as a home of that one store."""
    from praisonmem.core.io import mysqlurl, pgurl
    from praisonmem.core.sessions.stores.conversation_sql import (ConversationMy, ConversationPg, ConversationSqlite,
                                                                   ConversationStore, check_name)
    from praisonmem.core.sessions.stores.home import Home

    prefix = check_name(DEFAULT_PREFIX if table_prefix is None else table_prefix, "--table-prefix", empty=True)
    if mysqlurl.is_mysql(text):
        if schema is not None:
            raise UsageError("--schema applies to a postgresql:// store only (a MySQL database is its schema)")
        my = mysqlurl.parse(text)
        return Home([ConversationStore(ConversationMy(my, prefix))], my.display)
    conv = conversation_dir(text)
    if conv is not None:
        from praisonmem.core.sessions.stores.conversation_json import ConversationJsonStore

        return Home([ConversationJsonStore(conv)], str(conv))
    if pgurl.is_url(text):
        url = pgurl.parse(text)
        if url.is_postgres:
            name = check_name(DEFAULT_SCHEMA if schema is None else schema, "--schema")
            store: SessionStore = ConversationStore(ConversationPg(url, prefix, name))
            return Home([store], url.display)
        assert url.path is not None
        path = url.path
    else:
        path = Path(text).expanduser()
    if schema is not None:
        raise UsageError("--schema applies to a postgresql:// store only")
    if path.is_dir() or (not pgurl.is_url(text) and not path.exists() and not path.name.endswith(SQLITE_SUFFIXES)):
        from praisonmem.core.sessions.stores.jsondir import JsonDirStore

        return Home([JsonDirStore(path, path.parent.joinpath(*SPILL_DIR))], str(path))
    if sqlite_kind(path, prefix) == "transcript":
        from praisonmem.core.sessions.stores.sqlite_transcript import TranscriptDbStore

        return Home([TranscriptDbStore(path)], str(path))
    return Home([ConversationStore(ConversationSqlite(path, prefix))], str(path))


def conversation_dir(text: str) -> Path | None:
    """The JSON conversation store ``text`` names (the module docstring), or None; ``jsonconv:`` naming a
    file is :class:`UsageError`."""
    from praisonmem.core.io import pgurl

    if text.startswith(JSONCONV):
        path = Path(text[len(JSONCONV):] or ".").expanduser()
        if path.exists() and not path.is_dir():
            raise UsageError(f"{path}: not a directory (jsonconv: names a JSON conversation-store directory)")
        return path
    if pgurl.is_url(text):
        return None
    path = Path(text).expanduser()
    if path.is_dir():
        return path if recognise_conversation_dir(path) else None
    return path if not path.exists() and path.name == CONVERSATION_DIR else None


def recognise_conversation_dir(directory: Path, sample: int = 3) -> bool:
    """``directory`` is a JSON conversation store: it has the index, or its first session files have the
    store's shape (read-only; a directory of praisonaiagents session files has neither)."""
    from praisonmem.core.errors import PraisonMemError
    from praisonmem.core.io import jsonfile

    if (directory / CONVERSATION_INDEX).is_file():
        return True
    try:
        names = sorted(n for n in os.listdir(directory) if n.endswith(".json"))
    except OSError:
        return False
    for name in names[:sample]:
        try:
            if is_conversation_file(jsonfile.read(directory / name)):
                return True
        except PraisonMemError:
            continue
    return False


def sqlite_kind(path: Path, prefix: str) -> str:
    """``conversation`` or ``transcript``, by the tables the file holds (read-only, changing nothing)."""
    if not path.is_file():
        return "transcript" if path.name == TRANSCRIPT_DB else "conversation"
    import sqlite3

    from praisonmem.core.io.sqlite import connect_ro

    try:
        conn = connect_ro(path)
    except Exception:  # noqa: BLE001 - the store's own open reports it
        return "conversation"
    try:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if f"{prefix}sessions" in tables and f"{prefix}messages" in tables:
            return "conversation"
        if "sessions" in tables:
            cols = {r[1] for r in conn.execute('PRAGMA table_info("sessions")')}
            if "data" in cols:
                return "transcript"
    except sqlite3.Error:
        return "conversation"
    finally:
        conn.close()
    return "transcript" if path.name == TRANSCRIPT_DB else "conversation"


def store_location(value: str | None, env: Mapping[str, str], *, table_prefix: str | None = None,
                   schema: str | None = None, strict: bool = True) -> str | None:
    """``--store`` as the session commands pass it on: a home's label, a
    :class:`~praisonmem.core.sessions.stores.Location` (with its ``--table-prefix``/``--schema``) or None;
    ``strict``: refuse those options for a home's label (``session migrate`` applies them to either side)."""
    from praisonmem.core.io import pgurl
    from praisonmem.core.sessions.stores import Location

    chosen = resolve(value, env)
    if is_location(chosen):
        assert chosen is not None
        from praisonmem.core.io import mysqlurl

        postgres = pgurl.is_url(chosen) and not mysqlurl.is_mysql(chosen) and pgurl.parse(chosen).is_postgres
        if not strict and not postgres:
            schema = None  # migrate: the option is for the side it applies to
        return Location(chosen, table_prefix=table_prefix, schema=schema)
    if strict and (table_prefix is not None or schema is not None):
        raise UsageError("--table-prefix and --schema apply to a conversation store (--store sqlite:///PATH, "
                         "postgresql://... or mysql://...)")
    return chosen


def open_store(paths: Paths, store: str | None = None) -> SessionStore:
    """The session stores of a resolved PraisonAI home, as one (:class:`~.home.Home`); with ``store``
    (a label, as ``session list`` shows it) only that one; with a location (a directory, a database file
    or URL: :func:`open_location`) the store there."""
    from praisonmem.core.sessions.stores.home import Home

    if store is not None:
        if is_location(store):
            return open_location(store, table_prefix=getattr(store, "table_prefix", None),
                                 schema=getattr(store, "schema", None))
    return Home.of(paths, store)
