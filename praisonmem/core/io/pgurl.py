"""Database URLs for every store: parse, redact, connect (PostgreSQL through psycopg 3).

Store-agnostic: the Upsonic store and the session stores both open their databases here.

* :func:`is_url` / :func:`parse`: ``postgresql://…`` and ``postgres://…`` (SQLAlchemy's driver forms
  ``postgresql+psycopg://…`` too: the ``+driver`` is dropped, libpq is always the driver) and
  ``sqlite:///PATH`` (SQLAlchemy's rule: ``sqlite:///rel.db`` is relative to the cwd,
  ``sqlite:////abs/x.db`` absolute). Anything else with ``scheme://`` is a usage error, so
  ``mysql://…`` is never mistaken for a file name.
* Passwords never reach output. :class:`DatabaseURL` prints (``str``, ``repr``) as its redacted
  form; every password :func:`parse` sees is remembered, and :func:`scrub` replaces it (raw,
  percent-encoded and decoded) in any text, which :func:`translate` applies to every libpq/psycopg
  message, because libpq echoes the URL in its parse errors. The password is found the way libpq
  finds it: the userinfo ends at the FIRST ``@`` before the first ``/`` (so in ``u:p@ss@host`` libpq's
  password is ``p`` and its host ``ss@host``), and ``?password=`` wins. Masking runs further, to the
  last ``@``, since that is the most a user who did not percent-encode can have meant as the
  password; and :func:`parse` refuses a URL with any other ``@`` than the one libpq ends the userinfo
  at, so libpq never gets to echo the rest of a password as a host, database name or option. A libpq
  keyword/value string (``host=h password='a b'``) is masked by libpq's own rules too: quoted values
  with backslash escapes (``\\'``), unquoted ones with backslash escapes too, up to the first blank.
* psycopg is imported by :func:`driver` only, when a PostgreSQL URL is actually opened; without it
  the error says how to install it (:data:`INSTALL_HINT`). libpq does the rest as libpq users
  expect: ``PGPASSWORD``, ``~/.pgpass`` (0600, or libpq ignores it and warns on stderr),
  ``PGSERVICE``/``PGSERVICEFILE``/``?service=``, ``PGHOST``, ``PGSSLMODE``, …. praisonmem adds
  ``connect_timeout=10`` and ``application_name=praisonmem`` unless the URL or the environment
  (``PGCONNECT_TIMEOUT``, ``PGAPPNAME``) sets them.
* :func:`transaction`: one connection, one transaction (``BEGIN READ ONLY`` for readers, so the
  server itself refuses a write), committed when the block ends, rolled back on any exception,
  closed always; psycopg errors become one-line praisonmem errors (:func:`translate`).
"""

from __future__ import annotations

import os
import re
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from praisonmem.core.errors import (AuthFailed, ConnectionFailed, IOFailure, LockTimeout, NotFound, PraisonMemError,
                                    Refused, UsageError)

if TYPE_CHECKING:  # pragma: no cover
    import psycopg

POSTGRES_SCHEMES = ("postgresql", "postgres")
SQLITE_SCHEME = "sqlite"
MONGODB_SCHEMES = ("mongodb", "mongodb+srv")
MONGODB_UNSUPPORTED = ("MongoDB stores are not supported by praisonmem (it manages the sqlite, postgres and mysql "
                       "conversation stores and JSON session files)")
INSTALL_HINT = "PostgreSQL support needs psycopg: pip install 'praisonmem[postgres]'"
CONNECT_TIMEOUT = 10  # seconds; psycopg's own default is 130
APPLICATION_NAME = "praisonmem"
MASK = "***"

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*)://")
_SCHEME_ANYWHERE = re.compile(r"(?<![A-Za-z0-9+.\-])[A-Za-z][A-Za-z0-9+.\-]*://")
_URL_TOKEN = re.compile(r"(?<![A-Za-z0-9+.\-])[A-Za-z][A-Za-z0-9+.\-]*://\S*")  # a URL in a message
_QUERY_PASSWORD = re.compile(r"([?&]password=)([^&]*)", re.IGNORECASE)
# libpq's keyword/value syntax: a quoted value ends at the unescaped quote (or the end, unterminated), an
# unquoted one at the first blank, and a backslash escapes the next character in either
_KV_PASSWORD = re.compile(r"((?<![?&\w])password\s*=\s*)('(?:[^'\\]|\\.)*(?:'|\\?\Z)|(?:[^\s\\]|\\.)*\\?)",
                          re.IGNORECASE | re.DOTALL)
# The same in a message, where the string sits in quotes or ends a clause: an unquoted value also stops at a
# quote, ';', ',' or ':' (the exact value, from the command line or the config, is remembered and scrubbed whole).
_KV_PASSWORD_IN_TEXT = re.compile(r"((?<![?&\w])password\s*=\s*)('(?:[^'\\]|\\.)*(?:'|\\?\Z)|(?:[^\s\\'\";,:]|\\.)*)",
                                  re.IGNORECASE | re.DOTALL)
_KV_START = re.compile(r"^\s*[A-Za-z_]+\s*=")  # how libpq tells a keyword/value string from a database name
_SHORT = 4  # a remembered password shorter than this is masked only where it stands alone (see scrub)
_secrets: set[str] = set()
_driver: Any = None  # psycopg, once imported


@dataclass(frozen=True)
class DatabaseURL:
    """A parsed database URL. ``str()`` and ``repr()`` are redacted; :attr:`conninfo` is not, and is
    only ever handed to libpq."""

    kind: str  # "postgresql" or "sqlite"
    display: str  # the URL as given, password masked
    path: Path | None = None  # sqlite: the database file
    conninfo: str = field(default="", repr=False, compare=False)  # postgresql: the libpq URL

    def __str__(self) -> str:
        return self.display

    @property
    def is_postgres(self) -> bool:
        return self.kind == "postgresql"


# ---------------------------------------------------------------- parsing and redaction


def is_url(text: str | os.PathLike[str]) -> bool:
    """``scheme://…``: a URL (maybe of a kind :func:`parse` refuses), not a file path."""
    return isinstance(text, str) and _SCHEME.match(text) is not None


def parse(text: str) -> DatabaseURL:
    """A database URL (see the module docstring); :class:`UsageError` (exit 2), redacted, otherwise."""
    match = _SCHEME.match(text)
    if match is None:
        raise UsageError(f"not a database URL: {redact(text)} (expected postgresql://… or sqlite:///PATH)")
    scheme = match.group(1).lower()
    base, _, _driver = scheme.partition("+")
    if scheme in MONGODB_SCHEMES:
        raise UsageError(MONGODB_UNSUPPORTED)
    if base in POSTGRES_SCHEMES:
        return _parse_postgres(text, len(match.group(0)))
    if base == SQLITE_SCHEME:
        return _parse_sqlite(text, len(match.group(0)))
    raise UsageError(f"unsupported database URL {redact(text)}: praisonmem opens postgresql://…, sqlite:///PATH "
                     "or a file path")


def _parse_postgres(text: str, head: int) -> DatabaseURL:
    remember(text)
    display = redact(text)
    info = _userinfo(text)
    if info is not None and info.end != info.libpq:
        # libpq would end the user name or password early and read the rest as the host or the database,
        # connecting elsewhere and echoing the rest of the password in its error
        raise UsageError(f"invalid PostgreSQL URL {display}: an '@' in the user name, password, database name or "
                         "an option must be percent-encoded (%40), as must a '/' in the user name or password (%2F)")
    return DatabaseURL("postgresql", display, None, "postgresql://" + text[head:])


def _parse_sqlite(text: str, head: int) -> DatabaseURL:
    rest = text[head:]
    if "?" in rest or "#" in rest:
        raise UsageError(f"sqlite URL {text!r}: options are not supported (give the file only)")
    if not rest.startswith("/"):
        if not rest:
            raise UsageError(f"sqlite URL {text!r}: an in-memory database holds nothing to manage; "
                             "give a file, sqlite:///PATH")
        raise UsageError(f"sqlite URL {text!r} names a host; use sqlite:///relative.db or sqlite:////absolute.db")
    name = urllib.parse.unquote(rest[1:])
    if not name:
        raise UsageError(f"sqlite URL {text!r} names no file; use sqlite:///relative.db or sqlite:////absolute.db")
    from praisonmem.core.paths import expand_user

    return DatabaseURL("sqlite", text, expand_user(name, "sqlite URL"))


def _forms(secret: str) -> set[str]:
    """A password as it may appear anywhere: raw, percent-decoded, percent-encoded, and without the blanks
    libpq trims from a URL's values."""
    decoded = urllib.parse.unquote(secret)
    return {s for s in (secret, decoded, decoded.strip(), urllib.parse.unquote_plus(secret),
                        urllib.parse.quote(decoded, safe=""), urllib.parse.quote_plus(decoded)) if s}


@dataclass(frozen=True)
class _Userinfo:
    """Where a URL's userinfo is: ``start`` (after ``scheme://``), ``libpq`` (the ``@`` libpq ends it at, or
    -1 when libpq sees none) and ``end`` (the last ``@``: the widest a user who did not percent-encode an
    ``@``, ``/`` or ``?`` in the password can have meant)."""

    start: int
    libpq: int
    end: int

    def password_span(self, text: str, end: int) -> tuple[int, int] | None:
        colon = text.find(":", self.start, end)
        return None if colon < 0 else (colon + 1, end)


def _userinfo(text: str) -> _Userinfo | None:
    match = _SCHEME.match(text)
    if match is None:
        return None
    start = match.end()
    slash = text.find("/", start)
    libpq = text.find("@", start, len(text) if slash < 0 else slash)  # libpq looks ahead for '@' or '/'
    end = text.rfind("@", start)
    if end < 0:
        return None
    return _Userinfo(start, libpq, end)


def _url_passwords(text: str) -> set[str]:
    """The password libpq reads from a URL, and the one its writer meant when that differs."""
    info = _userinfo(text)
    if info is None:
        return set()
    found = set()
    for end in {info.libpq, info.end} - {-1}:
        span = info.password_span(text, end)
        if span is not None:
            found.add(text[span[0]:span[1]])
    return found


def _kv_value(value: str) -> str:
    """A keyword/value string's value as libpq reads it: the quotes removed, backslash escapes undone."""
    quoted = value.startswith("'")
    chars, i = [], 1 if quoted else 0
    while i < len(value):
        char = value[i]
        if char == "\\" and i + 1 < len(value):
            i += 1
            char = value[i]
        elif quoted and char == "'":
            break
        chars.append(char)
        i += 1
    return "".join(chars)


def _passwords(text: str) -> set[str]:
    found = _url_passwords(text)
    found.update(m.group(2) for m in _QUERY_PASSWORD.finditer(text))
    for m in _KV_PASSWORD.finditer(text):
        found.update((m.group(2), _kv_value(m.group(2))))
    found.discard("")
    return {form for secret in found for form in _forms(secret)}


def is_conninfo(text: str) -> bool:
    """A libpq keyword/value connection string (``host=h dbname=d``), which libpq would take as one."""
    return isinstance(text, str) and _KV_START.match(text) is not None


def holds_password(text: str) -> bool:
    """``text`` may carry a database password: a URL anywhere in it, or a ``password=`` keyword."""
    return "://" in text or "password" in text.lower()


def remember(text: str) -> None:
    """Note the passwords in ``text`` (a URL or conninfo, or an argument such as ``--db=URL`` that holds
    one), so that :func:`scrub` removes them anywhere."""
    _secrets.update(_passwords(text))
    for match in _SCHEME_ANYWHERE.finditer(text):
        if match.start():
            _secrets.update(_passwords(text[match.start():]))


def forget() -> None:
    """Forget every remembered password (a process that opens many URLs, such as the test suite)."""
    _secrets.clear()


def scrub(text: str) -> str:
    """``text`` with every password praisonmem has seen replaced by ``***``. A very short one (``p``) only
    where it stands alone (between blanks or quotes, after ``=``, as in ``:p@``), as libpq quotes the
    values it echoes: masking each letter ``p`` of a message would leave nothing to read."""
    for secret in sorted(_secrets, key=len, reverse=True):
        if len(secret) >= _SHORT:
            text = text.replace(secret, MASK)
        elif secret in text:
            text = re.sub(rf"(?<![^\s\"'=:]){re.escape(secret)}(?![^\s\"',;@])", MASK, text)
    return text


def redact(text: str) -> str:
    """``text`` (a URL, a conninfo string or a message starting with one) with passwords masked; never
    raises."""
    out = text
    info = _userinfo(text)
    if info is not None:
        span = info.password_span(text, info.end)
        if span is not None:
            out = text[:span[0]] + MASK + text[span[1]:]
    out = _QUERY_PASSWORD.sub(lambda m: m.group(1) + MASK, out)
    return scrub(_mask_keywords(out))


def _mask_keywords(text: str) -> str:
    return _KV_PASSWORD.sub(lambda m: m.group(1) + MASK, text)


def mask(text: str) -> str:
    """Any message with every database password in it masked: each URL in it (up to a blank, as
    :func:`redact` masks one), each ``password=`` value, and every password remembered."""
    text = scrub(text)  # first: the exact passwords seen, before a pattern masks a part of one
    if not holds_password(text):
        return text
    text = _URL_TOKEN.sub(lambda m: redact(m.group(0)), text)
    return _KV_PASSWORD_IN_TEXT.sub(lambda m: m.group(1) + MASK, text)


# ---------------------------------------------------------------- connecting


def driver() -> Any:
    """The psycopg module, imported now; :class:`IOFailure` with :data:`INSTALL_HINT` without it."""
    global _driver
    if _driver is not None:
        return _driver
    try:
        import psycopg
    except ImportError:
        raise IOFailure(INSTALL_HINT) from None
    import logging

    # psycopg logs a few warnings itself; without a handler Python would print them on stderr
    # beside praisonmem's own one-line error (added once: every call used to add another)
    logging.getLogger("psycopg").addHandler(logging.NullHandler())
    _driver = psycopg
    return psycopg


def _options(url: DatabaseURL) -> dict[str, str]:
    pg = driver()
    try:
        return pg.conninfo.conninfo_to_dict(url.conninfo)
    except pg.Error as exc:
        raise UsageError(f"invalid PostgreSQL URL {url.display}: {_reason(exc, url)}") from None
    except UnicodeDecodeError:  # psycopg decodes each value libpq percent-decoded as UTF-8
        raise UsageError(f"invalid PostgreSQL URL {url.display}: a percent-encoded value is not UTF-8 (praisonmem "
                         "reads and writes UTF-8 only)") from None


def connect(url: DatabaseURL, *, read_only: bool = False) -> "psycopg.Connection[Any]":
    """A psycopg connection (not autocommit); ``read_only`` makes its transactions ``READ ONLY``.

    Any failure is one line: :class:`AuthFailed` (a password was refused or missing),
    :class:`ConnectionFailed` (unreachable, no such database, …), :class:`UsageError` (a URL libpq
    cannot parse); all exit 5 except the last (2)."""
    if not url.is_postgres:
        raise UsageError(f"{url.display} is not a PostgreSQL URL")
    pg = driver()
    if os.environ.get("PGPASSWORD"):  # libpq does not echo it, but no message shall show it either
        _secrets.update(_forms(os.environ["PGPASSWORD"]))
    options = _options(url)
    extra: dict[str, Any] = {}
    if "connect_timeout" not in options and not os.environ.get("PGCONNECT_TIMEOUT"):
        extra["connect_timeout"] = CONNECT_TIMEOUT
    if "application_name" not in options and not os.environ.get("PGAPPNAME"):
        extra["application_name"] = APPLICATION_NAME
    try:
        conn = pg.connect(url.conninfo, **extra)
    except pg.Error as exc:
        raise connect_error(exc, url) from None
    except (ValueError, OSError) as exc:
        raise ConnectionFailed(f"cannot connect to {url.display}: {_reason(exc, url)}") from None
    conn.read_only = read_only
    return conn


def connect_error(exc: BaseException, url: DatabaseURL) -> PraisonMemError:
    """The one-line error for a failed connection attempt."""
    pg = driver()
    reason = _reason(exc, url)
    if isinstance(exc, pg.ProgrammingError):
        return UsageError(f"invalid PostgreSQL URL {url.display}: {reason}")
    reason = re.sub(r"^connection failed:\s*", "", reason)
    if re.search(r"password authentication failed|no password supplied|authentication failed", reason):
        return AuthFailed(f"cannot connect to {url.display}: {reason} (set the password with PGPASSWORD, "
                          "~/.pgpass or a service file)")
    return ConnectionFailed(f"cannot connect to {url.display}: {reason}")


def _reason(exc: BaseException, url: DatabaseURL) -> str:
    """An exception's first line, with the URL redacted and every known password masked."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if url.conninfo:
        text = text.replace(url.conninfo, url.display)
    return " ".join(mask(text).split())


# SQLSTATEs (https://www.postgresql.org/docs/current/errcodes-appendix.html) that mean something to the user
_RETRY = ("40001", "40P01", "23505", "42P07", "42710")  # serialization, deadlock, a concurrent create


def translate(exc: BaseException, url: DatabaseURL, *, writing: bool = False, committing: bool = False,
              lock_timeout: float | None = None) -> PraisonMemError:
    """The one-line praisonmem error for a psycopg error inside a transaction."""
    pg = driver()
    state = getattr(exc, "sqlstate", None) or ""
    reason = _reason(exc, url)
    where = url.display
    unchanged = "; nothing written" if writing else ""
    if committing and (isinstance(exc, pg.OperationalError) and not state):
        return IOFailure(f"{where}: the connection was lost while committing ({reason}); the change may or may "
                         "not have been written: look before retrying")
    if state == "42501":  # insufficient_privilege
        return IOFailure(f"{where}: {reason} (the role may not {'write' if writing else 'read'} here){unchanged}")
    if state == "25006":  # read_only_sql_transaction: a standby, or default_transaction_read_only
        return IOFailure(f"{where}: {reason} (the server or the session is read-only){unchanged}")
    if state == "55P03":  # lock_not_available: lock_timeout expired
        waited = f" (waited {lock_timeout:g}s)" if lock_timeout is not None else ""
        return LockTimeout(f"{where}: locked by another writer{waited}: {reason}{unchanged}")
    if state in _RETRY:
        return Refused(f"{where}: changed by another writer meanwhile ({reason}){unchanged}, try again")
    if state == "42P01":  # undefined_table
        return NotFound(f"{where}: {reason}")
    if state.startswith("22") or isinstance(exc, pg.DataError):
        return UsageError(f"{where}: PostgreSQL refused a value: {reason}{unchanged}")
    if isinstance(exc, pg.OperationalError) or state.startswith(("08", "57P")):
        return IOFailure(f"{where}: the connection failed: {reason}{unchanged}")
    return IOFailure(f"{where}: {reason}" + (f" (SQLSTATE {state})" if state else "") + unchanged)


@contextmanager
def transaction(url: DatabaseURL, *, read_only: bool, lock_timeout: float | None = None
                ) -> Iterator["psycopg.Connection[Any]"]:
    """One connection and one transaction: committed when the block ends, rolled back on any
    exception (a praisonmem error raised inside passes through as is), closed always.

    ``lock_timeout`` (seconds) bounds every wait for a row or table lock (``SET LOCAL lock_timeout``):
    an agent holding the row longer gives :class:`LockTimeout` (exit 4)."""
    pg = driver()
    conn = connect(url, read_only=read_only)
    try:
        try:
            if lock_timeout is not None:
                conn.execute("SELECT set_config('lock_timeout', %s, true)", (f"{max(1, int(lock_timeout * 1000))}ms",))
            yield conn
        except BaseException as exc:
            _rollback(conn)
            if isinstance(exc, pg.Error):
                raise translate(exc, url, writing=not read_only, lock_timeout=lock_timeout) from None
            raise
        try:
            conn.commit()
        except pg.Error as exc:
            raise translate(exc, url, writing=not read_only, committing=True) from None
    finally:
        conn.close()


def _rollback(conn: Any) -> None:
    try:
        conn.rollback()
    except Exception:  # noqa: BLE001 - the connection is gone; the server rolls back by itself
        pass


_jsonb: Any = None


def jsonb(value: Any) -> Any:
    """``value`` bound as a JSONB parameter (``json.dumps`` with psycopg's defaults)."""
    global _jsonb
    if _jsonb is None:
        driver()
        from psycopg.types.json import Jsonb

        _jsonb = Jsonb
    return _jsonb(value)


# ---------------------------------------------------------------- catalog helpers


def columns(conn: Any, schema: str, table: str) -> dict[str, str] | None:
    """``{column: type}`` of ``schema.table`` in column order (types as ``format_type`` names them:
    ``character varying``, ``jsonb``, ``bigint``, …), or None when there is no such relation."""
    rows = conn.execute(
        "SELECT a.attname, pg_catalog.format_type(a.atttypid, a.atttypmod) FROM pg_catalog.pg_class c "
        "JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace "
        "LEFT JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped "
        "WHERE n.nspname = %s AND c.relname = %s AND c.relkind IN ('r', 'p', 'v', 'm', 'f') "
        "ORDER BY a.attnum", (schema, table)).fetchall()
    if not rows:
        return None
    return {name: kind for name, kind in rows if name is not None}


def relations_problem(conn: Any, schema: str, tables: list[str]) -> str | None:
    """What makes ``schema``'s relations by these names other than a store's plain tables (``None``: nothing):
    a view, materialized view or foreign table by one of the names, or a trigger or rewrite rule on one
    (each runs SQL of whoever made it inside praisonmem's reads or writes). A foreign key's own triggers are
    the server's, not counted."""
    row = conn.execute(
        "SELECT c.relname, c.relkind FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON "
        "n.oid = c.relnamespace WHERE n.nspname = %s AND c.relname = ANY(%s) AND c.relkind NOT IN ('r', 'p') "
        "ORDER BY c.relname LIMIT 1", (schema, tables)).fetchone()
    if row is not None:
        kinds = {"v": "a view", "m": "a materialized view", "f": "a foreign table", "i": "an index",
                 "S": "a sequence", "c": "a composite type"}
        what = kinds.get(row[1], "not a table")
        return f"{schema}.{row[0]} is {what}, not a table" + (": it would answer every read with its own query"
                                                             if row[1] in ("v", "m", "f") else "")
    row = conn.execute(
        "SELECT t.tgname, c.relname FROM pg_catalog.pg_trigger t JOIN pg_catalog.pg_class c ON c.oid = t.tgrelid "
        "JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE NOT t.tgisinternal AND n.nspname = %s "
        "AND c.relname = ANY(%s) ORDER BY c.relname, t.tgname LIMIT 1", (schema, tables)).fetchone()
    if row is not None:
        return f"a trigger ('{row[0]}') on the table {schema}.{row[1]}, which would run its own SQL inside every change"
    row = conn.execute("SELECT rulename, tablename FROM pg_catalog.pg_rules WHERE schemaname = %s AND "
                       "tablename = ANY(%s) ORDER BY tablename, rulename LIMIT 1", (schema, tables)).fetchone()
    if row is not None:
        return f"a rule ('{row[0]}') on the table {schema}.{row[1]}, which would rewrite praisonmem's SQL into its own"
    return None


def require_plain_tables(conn: Any, schema: str, tables: list[str], where: str,
                         then: str = "nothing read or written") -> None:
    """:func:`relations_problem` as a one-line :class:`Refused` naming ``where`` (exit 4)."""
    problem = relations_problem(conn, schema, tables)
    if problem is not None:
        raise Refused(f"{where}: {problem}; not a store as its library writes it, {then}")


def schema_exists(conn: Any, schema: str) -> bool:
    return conn.execute("SELECT 1 FROM pg_catalog.pg_namespace WHERE nspname = %s", (schema,)).fetchone() is not None
