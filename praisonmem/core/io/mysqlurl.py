"""MySQL/MariaDB URLs for the conversation store: parse, mask, connect (through PyMySQL, pure Python).

* :func:`parse`: ``mysql://USER:PASS@HOST:PORT/DB`` (``mysql+pymysql://`` and ``mariadb://`` too), with
  ``?unix_socket=PATH`` (then the host is ignored, as the client libraries do) and ``?connect_timeout=N``;
  any other option is a usage error. What the URL leaves out is what praisonai's
  ``MySQLConversationStore`` assumes: host ``localhost``, port 3306, database ``praisonai``, user ``root``,
  no password. User, password and database are percent-decoded.
* Passwords never reach output: the URL's display form masks it, and every password parsed is handed to
  :func:`praisonmem.core.io.pgurl.remember`, so the masking every error line goes through removes it.
* PyMySQL is imported by :func:`driver` only, when a ``mysql://`` store is opened; without it the error says
  how to install it (:data:`INSTALL_HINT`). PyMySQL imports ``cryptography`` up front for one thing, the RSA
  exchange of ``sha256_password``/``caching_sha2_password`` over a connection without TLS; that import (a
  large compiled module, most of PyMySQL's own import time) is put off until an authentication needs it.
* :func:`connect`: utf8mb4, not autocommit, ``REPEATABLE READ`` (InnoDB's default), ``connect_timeout`` 10s,
  TLS when the server offers it (PyMySQL's preferred mode, which verifies no certificate, so the system's CA
  bundle is not loaded for it); :func:`translate` turns a server or driver error into one praisonmem line by
  its MySQL error number.
"""

from __future__ import annotations

import sys
import urllib.parse
from dataclasses import dataclass, field
from typing import Any

from praisonmem.core.errors import (AuthFailed, ConnectionFailed, IOFailure, LockTimeout, NotFound, PraisonMemError,
                                    Refused, UsageError)
from praisonmem.core.io import pgurl

SCHEMES = ("mysql", "mariadb")
INSTALL_HINT = "MySQL/MariaDB support needs PyMySQL: pip install 'praisonmem[mysql]'"
CONNECT_TIMEOUT = 10
DEFAULTS = {"host": "localhost", "port": 3306, "database": "praisonai", "user": "root"}  # the library's
OPTIONS = ("unix_socket", "connect_timeout")
_driver: Any = None


@dataclass(frozen=True)
class MySQLURL:
    """A parsed ``mysql://`` URL; ``str()``/``repr()`` show :attr:`display` (password masked)."""

    display: str
    host: str
    port: int
    user: str
    database: str
    unix_socket: str | None = None
    connect_timeout: int = CONNECT_TIMEOUT
    password: str = field(default="", repr=False, compare=False)

    def __str__(self) -> str:
        return self.display


def is_mysql(text: Any) -> bool:
    if not isinstance(text, str) or "://" not in text:
        return False
    return text.split("://", 1)[0].lower().partition("+")[0] in SCHEMES


def parse(text: str) -> MySQLURL:
    """A ``mysql://`` URL (see the module docstring); :class:`UsageError` (exit 2), masked, otherwise."""
    pgurl.remember(text)
    display = pgurl.redact(text)
    try:
        parts = urllib.parse.urlsplit(text)
        port = parts.port
    except ValueError as exc:
        raise UsageError(f"invalid MySQL URL {display}: {pgurl.mask(str(exc))}") from None
    if parts.fragment:
        raise UsageError(f"invalid MySQL URL {display}: a '#' in the password must be percent-encoded (%23)")
    query = urllib.parse.parse_qs(parts.query, keep_blank_values=True)
    unknown = sorted(set(query) - set(OPTIONS))
    if unknown:
        raise UsageError(f"MySQL URL {display}: unsupported option {unknown[0]!r} (praisonmem takes "
                         f"{', '.join(OPTIONS)})")
    database = urllib.parse.unquote(parts.path.lstrip("/")) or DEFAULTS["database"]
    if "/" in database:
        raise UsageError(f"MySQL URL {display}: the database name {database!r} holds a '/'")
    timeout = CONNECT_TIMEOUT
    if "connect_timeout" in query:
        try:
            timeout = int(query["connect_timeout"][-1])
        except ValueError:
            raise UsageError(f"MySQL URL {display}: connect_timeout must be whole seconds") from None
    sock = query.get("unix_socket", [None])[-1] or None
    password = urllib.parse.unquote(parts.password) if parts.password is not None else ""
    if password:
        pgurl.remember(f"x://u:{urllib.parse.quote(password, safe='')}@h")  # every form of it, decoded too
    return MySQLURL(display, parts.hostname or DEFAULTS["host"], port or DEFAULTS["port"],
                    urllib.parse.unquote(parts.username) if parts.username else DEFAULTS["user"], database,
                    sock, timeout, password)


class _CryptographyLater:
    """An import finder that has ``cryptography`` look absent, installed only while PyMySQL is imported."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> None:
        if name == "cryptography" or name.startswith("cryptography."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


def driver() -> Any:
    """The pymysql module, imported now; :class:`IOFailure` with :data:`INSTALL_HINT` without it."""
    global _driver
    if _driver is None:
        later = "cryptography" not in sys.modules
        finder = _CryptographyLater()
        if later:
            sys.meta_path.insert(0, finder)
        try:
            import pymysql
        except ImportError:
            raise IOFailure(INSTALL_HINT) from None
        finally:
            if later:
                sys.meta_path.remove(finder)
        if later:
            _import_cryptography_when_needed(pymysql)
        global _Connection
        _Connection = _connection_class(pymysql)
        _driver = pymysql
    return _driver


def _import_cryptography_when_needed(pymysql: Any) -> None:
    """PyMySQL's RSA password encryption, importing ``cryptography`` on its first call (then it is PyMySQL's
    own, as if imported up front; without ``cryptography`` installed PyMySQL raises its own error)."""
    auth = getattr(pymysql, "_auth", None)
    encrypt = getattr(auth, "sha2_rsa_encrypt", None)
    if encrypt is None or getattr(auth, "_have_cryptography", True):
        return  # a PyMySQL laid out otherwise, or one that found cryptography anyway: as it is

    def sha2_rsa_encrypt(password: bytes, salt: bytes, public_key: bytes) -> bytes:
        try:
            from cryptography.hazmat.backends import default_backend
            from cryptography.hazmat.primitives import hashes, serialization
            from cryptography.hazmat.primitives.asymmetric import padding
        except ImportError:
            return encrypt(password, salt, public_key)
        auth.default_backend, auth.hashes, auth.serialization, auth.padding = (default_backend, hashes,
                                                                                 serialization, padding)
        auth._have_cryptography = True
        auth.sha2_rsa_encrypt = encrypt
        return encrypt(password, salt, public_key)

    auth.sha2_rsa_encrypt = sha2_rsa_encrypt


_Connection: Any = None


def _connection_class(pymysql: Any) -> Any:
    """PyMySQL's connection, with the context of its preferred TLS (no certificate verified: the server's is
    taken as it comes) made without loading the system's CA bundle, which that mode never consults."""
    import ssl

    base = pymysql.connections.Connection

    class Connection(base):  # type: ignore[misc, valid-type]
        def _create_ssl_ctx(self, sslp: Any) -> Any:
            if isinstance(sslp, dict) and not sslp:  # preferred mode: PyMySQL's own settings for it
                ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
                ctx.check_hostname = False
                ctx.verify_mode = ssl.CERT_NONE
                return ctx
            return super()._create_ssl_ctx(sslp)

    return Connection


def connect(url: MySQLURL) -> Any:
    """A PyMySQL connection (utf8mb4, not autocommit); any failure one line (:class:`AuthFailed`,
    :class:`ConnectionFailed`: exit 5)."""
    my = driver()
    where = {"unix_socket": url.unix_socket} if url.unix_socket else {"host": url.host, "port": url.port}
    try:
        conn = _Connection(user=url.user, password=url.password, database=url.database, charset="utf8mb4",
                           autocommit=False, connect_timeout=url.connect_timeout, **where)
    except my.Error as exc:
        raise connect_error(exc, url) from None
    except (OSError, ValueError, RuntimeError) as exc:
        raise ConnectionFailed(f"cannot connect to {url.display}: {reason(exc)}") from None
    return conn


def errno(exc: BaseException) -> int:
    args = getattr(exc, "args", ())
    return args[0] if args and isinstance(args[0], int) else 0


def reason(exc: BaseException) -> str:
    """An error's message (without its number), one line, every known password masked."""
    args = getattr(exc, "args", ())
    text = str(args[1]) if len(args) > 1 and isinstance(args[0], int) else str(exc)
    text = text.strip() or type(exc).__name__
    return " ".join(pgurl.mask(text).split())


def connect_error(exc: BaseException, url: MySQLURL) -> PraisonMemError:
    code, why = errno(exc), reason(exc)
    if code in (1045, 1698):  # access denied (password), unix-socket auth refused
        return AuthFailed(f"cannot connect to {url.display}: {why}")
    if code in (1049,):  # unknown database
        return ConnectionFailed(f"cannot connect to {url.display}: {why}")
    return ConnectionFailed(f"cannot connect to {url.display}: {why}")


def translate(exc: BaseException, url: MySQLURL, *, writing: bool = False,
              lock_timeout: float | None = None) -> PraisonMemError:
    """The one-line praisonmem error for a PyMySQL error inside a transaction."""
    code, why = errno(exc), reason(exc)
    where = url.display
    unchanged = "; nothing written" if writing else ""
    if code in (1142, 1143, 1044, 1227, 1370):  # command/column/database denied, no privilege
        return IOFailure(f"{where}: {why} (the user may not {'write' if writing else 'read'} here){unchanged}")
    if code in (1792, 1290):  # read-only transaction, --read-only server
        return IOFailure(f"{where}: {why} (the server or the session is read-only){unchanged}")
    if code == 1205:  # lock wait timeout
        waited = f" (waited {lock_timeout:g}s)" if lock_timeout is not None else ""
        return LockTimeout(f"{where}: locked by another writer{waited}: {why}{unchanged}")
    if code in (1213, 1062, 1050):  # deadlock, a concurrent insert or create
        return Refused(f"{where}: changed by another writer meanwhile ({why}){unchanged}, try again")
    if code == 1146:
        return NotFound(f"{where}: {why}")
    if code in (1406, 1366, 1264, 3140, 4025, 1292):  # too long, bad string, out of range, bad JSON, CHECK
        return UsageError(f"{where}: MySQL refused a value: {why}{unchanged}")
    if code in (2003, 2006, 2013, 2055) or code == 0:
        return IOFailure(f"{where}: the connection failed: {why}{unchanged}")
    return IOFailure(f"{where}: {why} (MySQL error {code}){unchanged}")
