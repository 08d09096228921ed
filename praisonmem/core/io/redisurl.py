"""Redis URLs for every store: check, mask, connect (through redis-py), and redis-py's failures as praisonmem's.

Store-agnostic: learn's Redis backend, praisonai's Redis state store and Upsonic's RedisStorage open their
servers here, so redis-py (the ``redis`` extra) is imported by this module only, inside :func:`driver`, when a
``redis://``, ``rediss://`` or ``unix://`` URL is actually opened; without it the error says how to install it.

* :func:`parse`: the URL checked (one of :data:`SCHEMES`, else a usage error) and its masked text, the only
  form a message ever shows (the password is :mod:`pgurl`'s ``***``, and every message redis-py gives is
  masked again, since it may echo the URL).
* :func:`connect`: a client (``decode_responses=False``: values stay bytes, as the libraries read them), with
  a timeout for connecting and for each reply. redis-py connects on the first command, inside :func:`errors`.
* :func:`errors`: a block whose redis-py exceptions become one-line errors naming the masked URL and saying
  what happened to the data (``then``: "nothing read", "nothing changed"): wrong credentials and an
  unreachable server exit 5, an ACL refusal (``NOPERM``) and a ``WATCH`` conflict 4.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from praisonmem.core.errors import (AuthFailed, ConnectionFailed, IOFailure, PraisonMemError, Refused, UsageError)
from praisonmem.core.io import pgurl

SCHEMES = ("redis", "rediss", "unix")
INSTALL_HINT = "Redis support needs redis-py: pip install 'praisonmem[redis]'"
TIMEOUT = 10.0  # seconds to connect and for each reply
CONFLICT = "another writer changed the key meanwhile"


def is_redis(url: str) -> bool:
    """``redis://…``, ``rediss://…`` or ``unix://…``."""
    return "://" in url and url.split("://", 1)[0].lower() in SCHEMES


def parse(url: str, option: str = "--url") -> str:
    """The URL's masked text; :class:`UsageError` (exit 2), masked, when it is not a Redis URL."""
    if not is_redis(url):
        raise UsageError(f"{option} must be a redis://, rediss:// or unix:// URL, not {pgurl.redact(url)!r}")
    pgurl.remember(url)  # so that a message echoing the password, in any form, is masked too
    return pgurl.redact(url)


def driver() -> Any:
    """redis-py, imported on first use; :class:`IOFailure` with the install hint without it."""
    try:
        import redis
    except ImportError:
        raise IOFailure(INSTALL_HINT) from None
    return redis


def connect(url: str, timeout: float = TIMEOUT) -> Any:
    """A redis-py client for ``url`` (not yet connected: call it inside :func:`errors`)."""
    redis = driver()
    label = parse(url)
    try:
        return redis.Redis.from_url(url, socket_timeout=timeout, socket_connect_timeout=timeout,
                                    decode_responses=False)
    except ValueError as exc:  # redis-py's URL parser
        raise UsageError(f"{label}: not a Redis URL redis-py reads ({reason(exc)})") from None


@contextmanager
def errors(label: str, then: str, *, conflict: str = CONFLICT) -> Iterator[None]:
    """redis-py's failures inside the block as one-line praisonmem errors naming ``label`` (the masked URL)."""
    redis = driver()
    try:
        yield
    except PraisonMemError:
        raise
    except redis.exceptions.AuthenticationError as exc:
        raise AuthFailed(f"{label}: Redis refused the credentials ({reason(exc)}); {then}") from None
    except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError) as exc:
        raise ConnectionFailed(f"{label}: cannot reach Redis ({reason(exc)}); {then}") from None
    except redis.exceptions.WatchError:
        raise Refused(f"{label}: {conflict}; {then}") from None
    except redis.exceptions.NoPermissionError as exc:
        raise Refused(f"{label}: Redis refused the command ({reason(exc)}); {then}") from None
    except redis.exceptions.ResponseError as exc:
        if "NOAUTH" in str(exc) or "WRONGPASS" in str(exc):  # servers whose replies redis-py does not type
            raise AuthFailed(f"{label}: Redis refused the credentials ({reason(exc)}); {then}") from None
        raise IOFailure(f"{label}: Redis failed ({reason(exc)}); {then}") from None
    except redis.exceptions.RedisError as exc:
        raise IOFailure(f"{label}: Redis failed ({reason(exc)}); {then}") from None
    except ValueError as exc:  # redis-py's URL parser, on the first connection
        raise UsageError(f"{label}: not a Redis URL redis-py reads ({reason(exc)})") from None


def reason(exc: BaseException) -> str:
    """redis-py's message on one line, any password it may echo masked."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    return pgurl.mask(text)
