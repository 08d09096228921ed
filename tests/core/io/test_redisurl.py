"""core/io/redisurl.py: which URLs are Redis URLs, their masked text, and redis-py's failures as praisonmem's
errors (one line, the URL masked, what happened to the data said)."""

from __future__ import annotations

import pytest

from praisonmem.core.errors import AuthFailed, ConnectionFailed, IOFailure, Refused, UsageError
from praisonmem.core.io import pgurl, redisurl


@pytest.fixture(autouse=True)
def _forget():
    yield
    pgurl.forget()


@pytest.mark.parametrize("url,masked", [
    ("redis://localhost:6379/0", "redis://localhost:6379/0"),
    ("redis://alice:s3cret-pw@h:1/2", "redis://alice:***@h:1/2"),
    ("rediss://:s3cret-pw@h/0", "rediss://:***@h/0"),
    ("UNIX://u:s3cret-pw@/tmp/r.sock?db=3", "UNIX://u:***@/tmp/r.sock?db=3"),
])
def test_parse_masks_the_password(url, masked):
    assert redisurl.parse(url) == masked


@pytest.mark.parametrize("url", ["http://u:s3cret-pw@h/", "localhost:6379", "", "redis:/h"])
def test_other_urls_are_usage_errors_with_the_password_masked(url):
    with pytest.raises(UsageError) as caught:
        redisurl.parse(url, "--store")
    assert str(caught.value).startswith("--store must be a redis://, rediss:// or unix:// URL")
    assert "s3cret-pw" not in str(caught.value)


def test_a_message_echoing_the_password_is_masked():
    redisurl.parse("redis://u:s3cret-pw@h/0")
    assert redisurl.reason(ValueError("bad  url redis://u:s3cret-pw@h/0\nor s3cret-pw")) == (
        "bad url redis://u:***@h/0 or ***")


def test_redis_py_errors_become_praisonmem_errors():
    redis = redisurl.driver()
    cases = [(redis.exceptions.AuthenticationError("invalid password"), AuthFailed,
              "L: Redis refused the credentials (invalid password); nothing read"),
             (redis.exceptions.ConnectionError("refused"), ConnectionFailed, "L: cannot reach Redis (refused); nothing read"),
             (redis.exceptions.WatchError(), Refused, "L: it changed; nothing read"),
             (redis.exceptions.NoPermissionError("NOPERM"), Refused, "L: Redis refused the command (NOPERM); nothing read"),
             (redis.exceptions.ResponseError("ERR x"), IOFailure, "L: Redis failed (ERR x); nothing read")]
    for exc, kind, message in cases:
        with pytest.raises(kind) as caught, redisurl.errors("L", "nothing read", conflict="it changed"):
            raise exc
        assert str(caught.value) == message


def test_without_redis_py_the_error_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "redis", None)
    with pytest.raises(IOFailure, match=r"pip install 'praisonmem\[redis\]'"):
        redisurl.connect("redis://localhost/0")
