"""``--connect``: whether each configured server answers, within :data:`TIMEOUT` seconds, and why not in one line.

PostgreSQL goes through :mod:`praisonmem.core.io.pgurl`, MySQL through :mod:`praisonmem.core.io.mysqlurl`, Redis
through :mod:`praisonmem.core.io.redisurl`: each driver is imported only when such a URL is configured. Each reason
is masked (:func:`praisonmem.core.io.pgurl.mask`): no password reaches the output.
"""

from __future__ import annotations

from praisonmem.core.locate.model import Server
from praisonmem.core.locate.places import scheme

TIMEOUT = 3  # seconds a connection attempt may take


def check(server: Server) -> None:
    """Set ``server.reachable`` and ``server.reason``."""
    from praisonmem.core.io import pgurl

    try:
        kind = scheme(server._url)
        if kind == "postgresql":
            _postgres(server._url)
        elif kind == "mysql":
            _mysql(server._url)
        elif kind in ("redis", "rediss", "unix"):
            _redis(server._url)
        else:
            server.reachable, server.reason = None, f"praisonmem cannot connect to {kind}:// servers"
            return
    except Exception as exc:  # any driver's failure is a reason to show, never a crash
        server.reachable = False
        server.reason = _line(pgurl.mask(_text(exc)))
        return
    server.reachable, server.reason = True, None


def _text(exc: BaseException) -> str:
    message = getattr(exc, "message", None) or str(exc) or type(exc).__name__
    return str(message)


def _line(text: str) -> str:
    first = text.strip().splitlines()[0] if text.strip() else "failed"
    return " ".join(first.split())


def _postgres(url: str) -> None:
    from praisonmem.core.io import pgurl

    parsed = pgurl.parse(url)
    conninfo = parsed.conninfo
    if "connect_timeout" not in conninfo:
        conninfo += ("&" if "?" in conninfo else "?") + f"connect_timeout={TIMEOUT}"
    conn = pgurl.connect(pgurl.DatabaseURL(parsed.kind, parsed.display, None, conninfo), read_only=True)
    conn.close()


def _mysql(url: str) -> None:
    from dataclasses import replace

    from praisonmem.core.io import mysqlurl

    parsed = mysqlurl.parse(url)
    mysqlurl.connect(replace(parsed, connect_timeout=min(parsed.connect_timeout, TIMEOUT))).close()


def _redis(url: str) -> None:
    from praisonmem.core.io import redisurl

    client = redisurl.connect(url, timeout=TIMEOUT)
    try:
        with redisurl.errors(redisurl.parse(url), "not reachable"):
            client.ping()
    finally:
        client.close()
