"""A read-only PostgreSQL transaction through libpq itself (ctypes), for reads whose work is smaller than
importing psycopg (``session list`` of a conversation store: a page of sessions).

``import psycopg`` costs 150-300 ms on a loaded machine, several times what such a read costs. This module
talks to the very libpq psycopg uses (the one psycopg-binary bundles; nothing here imports psycopg) and
answers only what it can answer exactly as psycopg would: a connection made with the same parameters
(:func:`praisonmem.core.io.pgurl.connect`'s ``connect_timeout`` and ``application_name`` unless the URL or
the environment sets them), one ``REPEATABLE READ READ ONLY`` transaction, text results turned into the
values psycopg's default loaders give (str, int, float, bool, JSON decoded by ``json.loads``, ``None``).
Whatever else (no bundled libpq, another ``PSYCOPG_IMPL``, a client encoding other than UTF-8, a column
type or parameter it does not convert, a server error, a failed connection) raises :class:`Unavailable`
before anything is returned, and the caller does the read again through psycopg, whose result or error
message is then exactly what it always was. One exception: a connection that timed out is reported here,
in psycopg's words, rather than waited for a second time.

Waiting is done in Python (``select`` on libpq's socket, non-blocking libpq calls), so Ctrl-C interrupts a
slow connection or query as it does psycopg's.
"""

from __future__ import annotations

import ctypes
import os
import select
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from functools import cache
from typing import Any

from praisonmem.core.errors import ConnectionFailed

CONNECT_TIMEOUT = "10"  # pgurl's defaults, as text for libpq
APPLICATION_NAME = "praisonmem"
DEFAULT_TIMEOUT = 130  # psycopg's when connect_timeout is 0 or unset
BEGIN = b"BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"  # what psycopg sends for such a transaction

# libpq's enums (libpq-fe.h)
_CONNECTION_OK, _CONNECTION_BAD = 0, 1
_POLL_FAILED, _POLL_READING, _POLL_WRITING, _POLL_OK = 0, 1, 2, 3
_COMMAND_OK, _TUPLES_OK = 1, 2


class Unavailable(Exception):
    """This read cannot be answered here exactly as psycopg would answer it: do it through psycopg."""


def _text(data: bytes) -> str:
    return data.decode("utf-8")


def _json(data: bytes) -> Any:
    import json

    return json.loads(data)  # psycopg's json/jsonb loader


# Type OID -> how psycopg's default text loader turns the value into Python (pg_type.dat).
_LOADERS: dict[int, Callable[[bytes], Any]] = {
    16: lambda b: b == b"t",  # bool
    18: _text, 19: _text, 25: _text, 1042: _text, 1043: _text,  # "char", name, text, bpchar, varchar
    20: int, 21: int, 23: int, 26: int,  # int8, int2, int4, oid
    700: float, 701: float,  # float4, float8: the server's shortest exact text, as psycopg parses it
    114: _json, 3802: _json,  # json, jsonb
}


@cache
def _libpq() -> ctypes.CDLL | None:
    """psycopg-binary's bundled libpq, when that is the libpq psycopg would use (its default choice of
    implementation, or ``PSYCOPG_IMPL=binary``); found by path, without importing either package."""
    from importlib.util import find_spec

    if os.environ.get("PSYCOPG_IMPL", "binary") != "binary":
        return None
    try:
        if find_spec("psycopg") is None or find_spec("psycopg_c") is not None:  # no psycopg, or its C build
            return None  # (over the system's libpq), which psycopg would take
        spec = find_spec("psycopg_binary")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    package = list(spec.submodule_search_locations)[0]
    libs = os.path.join(os.path.dirname(package), "psycopg_binary.libs")
    try:
        found = [name for name in os.listdir(libs) if name.startswith("libpq-") and ".so" in name]
    except OSError:
        return None
    if len(found) != 1:
        return None
    try:
        lib = ctypes.CDLL(os.path.join(libs, found[0]))
    except OSError:
        return None
    p, i, u = ctypes.c_void_p, ctypes.c_int, ctypes.c_uint
    strings = ctypes.POINTER(ctypes.c_char_p)
    for name, res, args in (
            ("PQconnectStartParams", p, [strings, strings, i]), ("PQconnectPoll", i, [p]), ("PQstatus", i, [p]),
            ("PQsocket", i, [p]), ("PQerrorMessage", ctypes.c_char_p, [p]), ("PQfinish", None, [p]),
            ("PQparameterStatus", ctypes.c_char_p, [p, ctypes.c_char_p]), ("PQconninfo", p, [p]),
            ("PQconninfoFree", None, [p]), ("PQsetnonblocking", i, [p, i]),
            ("PQsendQueryParams", i, [p, ctypes.c_char_p, i, p, strings, p, p, i]), ("PQflush", i, [p]),
            ("PQconsumeInput", i, [p]), ("PQisBusy", i, [p]), ("PQgetResult", p, [p]),
            ("PQresultStatus", i, [p]), ("PQntuples", i, [p]), ("PQnfields", i, [p]), ("PQftype", u, [p, i]),
            ("PQgetvalue", p, [p, i, i]), ("PQgetlength", i, [p, i, i]), ("PQgetisnull", i, [p, i, i]),
            ("PQclear", None, [p]), ("PQsetNoticeProcessor", p, [p, _NOTICE, p])):
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = res, args
    return lib


_NOTICE = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_char_p)
# libpq's default notice processor writes the server's notices to stderr as they come (escapes and all);
# psycopg hands them to its logger, which praisonmem silences: so does this one (kept here: libpq calls it)
_SILENT = _NOTICE(lambda arg, message: None)


class _Option(ctypes.Structure):  # PQconninfoOption
    _fields_ = [("keyword", ctypes.c_char_p), ("envvar", ctypes.c_char_p), ("compiled", ctypes.c_char_p),
                ("val", ctypes.c_char_p), ("label", ctypes.c_char_p), ("dispchar", ctypes.c_char_p),
                ("dispsize", ctypes.c_int)]


def _strings(values: Sequence[bytes | None]) -> Any:
    return (ctypes.c_char_p * (len(values) + 1))(*values, None)


class Cursor:
    """The rows of one query, as psycopg's cursor gives them (tuples)."""

    def __init__(self, rows: list[tuple[Any, ...]]) -> None:
        self.rows = rows

    def fetchall(self) -> list[tuple[Any, ...]]:
        return self.rows

    def fetchone(self) -> tuple[Any, ...] | None:
        return self.rows[0] if self.rows else None

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        return iter(self.rows)


class Connection:
    """One libpq connection inside one read-only transaction: ``execute(sql, params)`` with psycopg's ``%s``
    placeholders."""

    def __init__(self, lib: ctypes.CDLL, conn: int) -> None:
        self.lib, self.conn = lib, conn

    def _wait(self, write: bool) -> None:
        sock = self.lib.PQsocket(self.conn)
        if sock < 0:
            raise Unavailable("no socket")
        select.select([] if write else [sock], [sock] if write else [], [])

    def _run(self, sql: bytes, values: list[bytes | None]) -> list[tuple[Any, ...]]:
        lib, conn = self.lib, self.conn
        if not lib.PQsendQueryParams(conn, sql, len(values), None, _strings(values), None, None, 0):
            raise Unavailable("not sent")
        while True:  # the query out, then its results in, waiting on the socket (a signal interrupts the wait)
            flushed = lib.PQflush(conn)
            if flushed < 0:
                raise Unavailable("not sent")
            if flushed == 0:
                break
            self._wait(True)
        rows: list[tuple[Any, ...]] = []
        failed = False
        while True:
            while lib.PQisBusy(conn):
                self._wait(False)
                if not lib.PQconsumeInput(conn):
                    raise Unavailable("connection lost")
            res = lib.PQgetResult(conn)
            if not res:
                break
            try:
                status = lib.PQresultStatus(res)
                if status == _TUPLES_OK:
                    rows = _rows(lib, res)
                elif status != _COMMAND_OK:
                    failed = True  # a server error: psycopg says it in its words (the caller reads again)
            finally:
                lib.PQclear(res)
        if failed:
            raise Unavailable("the server refused the query")
        return rows

    def execute(self, sql: str, params: Sequence[Any] | None = None) -> Cursor:
        if params is None:  # as psycopg: no parameters, no placeholders (a % is itself)
            return Cursor(self._run(sql.encode("utf-8"), []))
        return Cursor(self._run(_numbered(sql, len(params)), [_param(value) for value in params]))


def _rows(lib: ctypes.CDLL, res: int) -> list[tuple[Any, ...]]:
    fields = range(lib.PQnfields(res))
    loaders = []
    for col in fields:
        loader = _LOADERS.get(lib.PQftype(res, col))
        if loader is None:
            raise Unavailable("a column type psycopg would load otherwise")
        loaders.append(loader)
    getvalue, getlength, isnull, at = lib.PQgetvalue, lib.PQgetlength, lib.PQgetisnull, ctypes.string_at
    try:
        return [tuple(None if isnull(res, row, col) else loaders[col](at(getvalue(res, row, col),
                                                                          getlength(res, row, col)))
                      for col in fields) for row in range(lib.PQntuples(res))]
    except (UnicodeDecodeError, ValueError) as exc:
        raise Unavailable(str(exc)) from None


def _numbered(sql: str, count: int) -> bytes:
    """psycopg's ``%s`` placeholders as libpq's ``$1``, ``$2``, …; ``%%`` as ``%``; any other ``%`` is not
    this module's."""
    parts = sql.split("%")
    out, n, i = [parts[0]], 0, 1
    while i < len(parts):
        piece = parts[i]
        if piece == "" and i + 1 < len(parts):  # "%%"
            out.append("%" + parts[i + 1])
            i += 2
            continue
        if not piece.startswith("s"):
            raise Unavailable("a placeholder psycopg would read otherwise")
        n += 1
        out.append(f"${n}{piece[1:]}")
        i += 1
    if n != count:
        raise Unavailable("placeholders and parameters differ")
    return "".join(out).encode("utf-8")


def _param(value: Any) -> bytes | None:
    """A parameter as text of unknown type, for the server to type from its context (as psycopg sends a str);
    ints, floats and lists of str as the literals of the types psycopg would send them as."""
    kind = type(value)
    if value is None:
        return None
    if kind is str:
        return value.encode("utf-8")  # a lone surrogate: UnicodeEncodeError, which the caller treats as here
    if kind is int:
        return str(value).encode("ascii")
    if kind is float:
        return repr(value).encode("ascii")
    if kind is list and all(type(item) is str for item in value):
        return ("{" + ",".join('"' + item.replace("\\", "\\\\").replace('"', '\\"') + '"' for item in value)
                + "}").encode("utf-8")
    raise Unavailable("a parameter type psycopg would send otherwise")


def _timeout(lib: ctypes.CDLL, conn: int) -> float:
    """The connection's ``connect_timeout`` (the URL's, ``PGCONNECT_TIMEOUT``, or pgurl's default) by psycopg's
    rule: 0 or less (or none) is its default, less than 2 is 2. A URL naming several hosts is psycopg's to try:
    it tries each with a timeout of its own."""
    options = lib.PQconninfo(conn)
    if not options:
        raise Unavailable("no options")
    found: dict[bytes, bytes | None] = {}
    try:
        array = ctypes.cast(options, ctypes.POINTER(_Option))
        k = 0
        while array[k].keyword is not None:
            found[array[k].keyword] = array[k].val
            k += 1
    finally:
        lib.PQconninfoFree(options)
    if any(b"," in (found.get(key) or b"") for key in (b"host", b"hostaddr", b"port")):
        raise Unavailable("several hosts")
    value = found.get(b"connect_timeout")
    try:
        seconds = int(float(value.decode())) if value else 0
    except ValueError:
        raise Unavailable("a connect_timeout psycopg refuses") from None
    return DEFAULT_TIMEOUT if seconds <= 0 else max(seconds, 2)


def _connect(lib: ctypes.CDLL, conninfo: str, display: str) -> int:
    keywords: list[bytes | None] = []
    values: list[bytes | None] = []
    # before the URL (expanded from dbname), so that the URL's own values win, as they do in pgurl.connect
    if not os.environ.get("PGCONNECT_TIMEOUT"):
        keywords.append(b"connect_timeout")
        values.append(CONNECT_TIMEOUT.encode())
    if not os.environ.get("PGAPPNAME"):
        keywords.append(b"application_name")
        values.append(APPLICATION_NAME.encode())
    keywords.append(b"dbname")
    values.append(conninfo.encode("utf-8"))
    conn = lib.PQconnectStartParams(_strings(keywords), _strings(values), 1)
    if not conn:
        raise Unavailable("out of memory")
    try:
        lib.PQsetNoticeProcessor(conn, _SILENT, None)
        if lib.PQstatus(conn) == _CONNECTION_BAD:
            raise Unavailable("cannot connect")  # psycopg reports it in its words
        deadline = time.monotonic() + _timeout(lib, conn)
        state = _POLL_WRITING
        while state != _POLL_OK:
            if state == _POLL_FAILED:
                raise Unavailable("cannot connect")
            sock = lib.PQsocket(conn)
            if sock < 0:
                raise Unavailable("no socket")
            left = deadline - time.monotonic()
            ready = left > 0 and any(select.select([] if state == _POLL_WRITING else [sock],
                                                   [sock] if state == _POLL_WRITING else [], [], left))
            if not ready:  # psycopg's own words when its deadline passes
                raise ConnectionFailed(f"cannot connect to {display}: connection timeout expired")
            state = lib.PQconnectPoll(conn)
        if lib.PQparameterStatus(conn, b"client_encoding") != b"UTF8":
            raise Unavailable("psycopg decodes another client encoding")
        if lib.PQsetnonblocking(conn, 1) != 0:
            raise Unavailable("cannot go non-blocking")
    except BaseException:
        lib.PQfinish(conn)
        raise
    return conn


def available() -> bool:
    """Whether reads can be tried here at all (psycopg-binary's libpq is there and is psycopg's)."""
    return _libpq() is not None


@contextmanager
def read_transaction(conninfo: str, display: str) -> Iterator[Connection]:
    """A connection in one ``REPEATABLE READ READ ONLY`` transaction, committed when the block ends and closed
    always; :class:`Unavailable` whenever psycopg must do the read instead."""
    lib = _libpq()
    if lib is None:
        raise Unavailable("no libpq of psycopg's")
    try:
        conn = _connect(lib, conninfo, display)
    except UnicodeEncodeError:
        raise Unavailable("not UTF-8") from None
    try:
        tx = Connection(lib, conn)
        tx._run(BEGIN, [])
        yield tx
        tx._run(b"COMMIT", [])
    except UnicodeEncodeError:
        raise Unavailable("not UTF-8") from None
    finally:
        lib.PQfinish(conn)
