"""A throwaway Redis server for tests: Debian's ``redis-server``, run unprivileged.

Fixtures (registered from ``tests/conftest.py``):

* ``redis_server`` (session): ``redis-server --save "" --appendonly no`` (nothing is ever written
  to disk) on ``127.0.0.1:<free port>`` and on a Unix socket in a fresh temp dir, started once for
  the whole run and stopped at its end.
* ``redis_db`` (per test) and ``redis_module`` (per module): a logical database of its own
  (:class:`RedisDatabase`), flushed before the test gets it and after. Database 0 is never handed
  out, so a library that ignores the URL's database number (and writes to 0) shows up as keys in
  database 0 (:meth:`RedisServer.dbsize`). URL: ``db.url`` = ``redis://127.0.0.1:PORT/N`` (the
  ``default`` user, no password, as a stock Redis has it); ``db.url("rw")`` and ``db.url("ro")``:
  the ACL users ``pm_rw`` (every command, every key) and ``pm_ro`` (``+@read +@connection`` only: a
  write gets NOPERM), each with a random password, e.g. for bad-input tests; ``password=`` picks
  another (a wrong one), ``socket=True`` gives ``unix://...?db=N``. Admin commands: ``db.command(...)``
  (a small RESP client over the socket: no driver needed); ``db.client(role)``: a redis-py client.

Without ``redis-server`` the tests that use these fixtures are skipped, unless
``PRAISONMEM_REQUIRE_REDIS=1`` (CI), which makes them fail; a server that is there but will not
start always fails. Binary: ``PRAISONMEM_REDIS_SERVER``, else ``redis-server`` on PATH. As root the
server runs as ``PRAISONMEM_REDIS_OS_USER`` (default ``praisonmem-redis``, a system user with no
login, created if missing) via ``runuser``. The dir is made in /tmp (or ``PRAISONMEM_REDIS_TMPDIR``).
No stray server: see tests/localserver.py (the watchdog).
"""

from __future__ import annotations

import getpass
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.localserver import (ServerError, end_watchdog, ensure_os_user, free_port, missing, read_pid,
                               start_watchdog, wait_gone)

ENV_REQUIRE = "PRAISONMEM_REQUIRE_REDIS"
ENV_BINARY = "PRAISONMEM_REDIS_SERVER"
ENV_OS_USER = "PRAISONMEM_REDIS_OS_USER"
ENV_TMPDIR = "PRAISONMEM_REDIS_TMPDIR"
DEFAULT_OS_USER = "praisonmem-redis"
RW_USER = "pm_rw"
RO_USER = "pm_ro"
DATABASES = 64
HOW = "apt-get install redis-server (Debian), or set PRAISONMEM_REDIS_SERVER"
# redis clients, praisonai's and Upsonic's config read these; a developer's own must not reach a test
SCRUBBED_PREFIXES = ("REDIS_", "VALKEY_")
SCRUBBED = ("REDISCLI_AUTH", "REDISCLI_HISTFILE", "UPSTASH_REDIS_REST_URL", "UPSTASH_REDIS_REST_TOKEN")


class RedisReplyError(Exception):
    """The server answered with an error (``-ERR ...``, ``-NOPERM ...``)."""


def find_binary() -> Path | None:
    override = os.environ.get(ENV_BINARY)
    if override:
        return Path(override) if Path(override).exists() else None
    found = shutil.which("redis-server")
    return Path(found) if found else None


def _scrubbed_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(SCRUBBED_PREFIXES) and k not in SCRUBBED}
    env.update(LC_ALL="C.UTF-8", **extra)
    return env


# -- a minimal RESP2 client: enough for the fixtures' own commands, with no driver installed ------
def _encode(args: tuple[Any, ...]) -> bytes:
    out = [b"*%d\r\n" % len(args)]
    for arg in args:
        data = arg if isinstance(arg, bytes) else str(arg).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(data), data))
    return b"".join(out)


def _read_reply(f) -> Any:
    line = f.readline()
    if not line:
        raise ConnectionError("the Redis server closed the connection")
    kind, rest = line[:1], line[1:-2]
    if kind == b"+":
        return rest.decode()
    if kind == b"-":
        raise RedisReplyError(rest.decode())
    if kind == b":":
        return int(rest)
    if kind == b"$":
        n = int(rest)
        if n < 0:
            return None
        data = f.read(n + 2)[:-2]
        return data
    if kind == b"*":
        n = int(rest)
        return None if n < 0 else [_read_reply(f) for _ in range(n)]
    raise ConnectionError(f"unexpected Redis reply {line!r}")


def resp(sock_path: str | Path, *commands: tuple[Any, ...], timeout: float = 10) -> list[Any]:
    """Send ``commands`` (each a tuple of arguments) on one connection; their replies, in order.
    An error reply raises :class:`RedisReplyError` (after the earlier replies were read)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(timeout)
        s.connect(str(sock_path))
        s.sendall(b"".join(_encode(c) for c in commands))
        with s.makefile("rb") as f:
            return [_read_reply(f) for _ in commands]


class RedisServer:
    """One throwaway server: ``start()`` it, take databases, ``stop()`` it (removes everything)."""

    def __init__(self, binary: Path, *, os_user: str | None = None) -> None:
        self.binary = binary
        self.is_root = os.geteuid() == 0
        self.os_user = (os_user or os.environ.get(ENV_OS_USER) or DEFAULT_OS_USER) if self.is_root else getpass.getuser()
        self.root = Path(tempfile.mkdtemp(prefix="praisonmem-redis-", dir=os.environ.get(ENV_TMPDIR) or "/tmp"))
        self.sock = self.root / "redis.sock"
        self.pidfile = self.root / "redis.pid"
        self.log = self.root / "server.log"
        self.conf = self.root / "redis.conf"
        self.port = 0
        self.version = ""
        self.passwords = {RW_USER: secrets.token_hex(12), RO_USER: secrets.token_hex(12)}
        self._free = list(range(1, DATABASES))
        self._watchdog: subprocess.Popen | None = None
        self._proc: subprocess.Popen | None = None

    def _prefix(self) -> list[str]:
        return ["runuser", "-u", self.os_user, "--"] if self.is_root else []

    def command(self, *args: Any, db: int = 0) -> Any:
        """One command as the ``default`` user in database ``db``; its reply (bulk strings as bytes)."""
        return resp(self.sock, ("SELECT", db), args)[1]

    def dbsize(self, db: int = 0) -> int:
        return self.command("DBSIZE", db=db)

    # -- lifecycle --------------------------------------------------------------------------------
    def start(self) -> "RedisServer":
        try:
            self._init()
            self._watchdog = start_watchdog(self.root, self.pidfile, self.binary.name, _scrubbed_env())
            self._start_server()
        except BaseException:
            self.stop()
            raise
        return self

    def _init(self) -> None:
        if self.is_root:
            ensure_os_user(self.os_user, "Redis")
        self.root.chmod(0o755)
        (self.root / "data").mkdir(mode=0o700)
        if self.is_root:
            shutil.chown(self.root, self.os_user, self.os_user)
            shutil.chown(self.root / "data", self.os_user, self.os_user)
        self.version = subprocess.run([str(self.binary), "--version"], capture_output=True, text=True,
                                      env=_scrubbed_env()).stdout.strip()

    def _write_conf(self) -> None:
        # a config file, not argv: the passwords must not show in ps
        self.conf.write_text(
            f"port {self.port}\nbind 127.0.0.1\nunixsocket {self.sock}\nunixsocketperm 777\n"
            f"pidfile {self.pidfile}\nlogfile {self.log}\ndir {self.root / 'data'}\ndaemonize no\n"
            f"save \"\"\nappendonly no\ndatabases {DATABASES}\nprotected-mode yes\n"
            f"user {RW_USER} on >{self.passwords[RW_USER]} ~* &* +@all\n"
            f"user {RO_USER} on >{self.passwords[RO_USER]} ~* &* -@all +@read +@connection\n")
        self.conf.chmod(0o600)
        if self.is_root:
            shutil.chown(self.conf, self.os_user, self.os_user)

    def _start_server(self) -> None:
        for _attempt in range(5):
            self.port = free_port()
            self._write_conf()
            self.log.unlink(missing_ok=True)
            self._proc = subprocess.Popen([*self._prefix(), str(self.binary), str(self.conf)], cwd="/",
                                          env=_scrubbed_env(), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                          stderr=subprocess.DEVNULL, start_new_session=True)
            if self._wait_ready(timeout=60):
                return
            log = self.log.read_text(errors="replace") if self.log.exists() else ""
            self._proc.wait(timeout=30)
            if "Address already in use" not in log:
                raise ServerError(f"Redis did not start: {log[-2000:]}")
        raise ServerError("Redis did not start: no free port after 5 tries")

    def _wait_ready(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                return False
            try:
                if resp(self.sock, ("PING",), timeout=2) == ["PONG"] and read_pid(self.pidfile):
                    return True
            except (OSError, ConnectionError, RedisReplyError):
                pass
            time.sleep(0.02)
        raise ServerError(f"Redis did not answer within {timeout:.0f}s: "
                          f"{self.log.read_text(errors='replace')[-2000:] if self.log.exists() else ''}")

    @property
    def server_pid(self) -> int | None:
        return read_pid(self.pidfile)

    def stop(self) -> None:
        """Stop the server (SHUTDOWN NOSAVE), end the watchdog, remove the dir."""
        pid = self.server_pid
        if self._proc is not None and self._proc.poll() is None:
            try:
                resp(self.sock, ("SHUTDOWN", "NOSAVE"), timeout=10)
            except (OSError, ConnectionError, RedisReplyError):
                pass  # the connection closes as the server exits
            if not wait_gone(pid or self._proc.pid, timeout=30) and pid is not None:
                os.kill(pid, signal.SIGKILL)
                wait_gone(pid, timeout=10)
        if self._proc is not None:
            try:
                self._proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self._proc.kill()
            self._proc = None
        end_watchdog(self._watchdog)
        self._watchdog = None
        shutil.rmtree(self.root, ignore_errors=True)

    # -- databases --------------------------------------------------------------------------------
    def take_database(self) -> "RedisDatabase":
        if not self._free:
            raise ServerError(f"all {DATABASES - 1} test databases are in use")
        number = self._free.pop(0)
        self.command("FLUSHDB", db=number)
        return RedisDatabase(server=self, number=number)

    def give_back(self, db: "RedisDatabase") -> None:
        self.command("FLUSHDB", db=db.number)
        self._free.insert(0, db.number)
        self._free.sort()


@dataclass(frozen=True)
class RedisDatabase:
    """A logical database of the test server, empty when handed out, and how to reach it."""

    server: RedisServer
    number: int

    @property
    def host(self) -> str:
        return "127.0.0.1"

    @property
    def port(self) -> int:
        return self.server.port

    @property
    def socket_path(self) -> str:
        return str(self.server.sock)

    @property
    def rw_password(self) -> str:
        return self.server.passwords[RW_USER]

    @property
    def ro_password(self) -> str:
        return self.server.passwords[RO_USER]

    def url(self, role: str = "default", *, password: str | bool = True, socket: bool = False,
            db: int | None = None, port: int | None = None) -> str:
        """``redis://[user:pass@]127.0.0.1:PORT/N`` for ``role`` ("default": no user, no password;
        "rw", "ro": the ACL users). ``password``: True = the user's own, False = none, a string = that one."""
        number = self.number if db is None else db
        auth = ""
        if role != "default":
            user = {"rw": RW_USER, "ro": RO_USER}[role]
            secret = self.server.passwords[user] if password is True else (password or "")
            auth = urllib.parse.quote(user, safe="") + (":" + urllib.parse.quote(secret, safe="") if secret else "") + "@"
        elif isinstance(password, str):
            auth = ":" + urllib.parse.quote(password, safe="") + "@"
        if socket:
            return f"unix://{auth}{self.socket_path}?db={number}"
        return f"redis://{auth}{self.host}:{self.port if port is None else port}/{number}"

    def __str__(self) -> str:
        return self.url()

    @property
    def rw_url(self) -> str:
        return self.url("rw")

    @property
    def ro_url(self) -> str:
        return self.url("ro")

    @property
    def unreachable_url(self) -> str:
        """Nothing listens on 127.0.0.1:1: refused at once."""
        return self.url(port=1)

    def command(self, *args: Any) -> Any:
        """One command in this database as the ``default`` user (bulk replies as bytes)."""
        return self.server.command(*args, db=self.number)

    def dump(self) -> dict[str, dict[str, Any]]:
        """Every key of this database: its type, TTL (-1: none) and value (strings as bytes, hashes
        as dicts, lists, sets and zsets as sorted lists of (member[, score]))."""
        out: dict[str, dict[str, Any]] = {}
        cursor = b"0"
        keys: list[bytes] = []
        while True:
            cursor, batch = self.command("SCAN", cursor, "COUNT", 1000)
            keys += batch
            if cursor == b"0":
                break
        for key in sorted(set(keys)):
            kind = self.command("TYPE", key)
            reader = {"string": ("GET",), "hash": ("HGETALL",), "list": ("LRANGE", 0, -1),
                      "set": ("SMEMBERS",), "zset": ("ZRANGE", 0, -1, "WITHSCORES")}[kind]
            raw = self.command(reader[0], key, *reader[1:])
            if kind == "hash":
                raw = dict(zip(raw[::2], raw[1::2]))
            elif kind == "set":
                raw = sorted(raw)
            elif kind == "zset":
                raw = [(m, float(s)) for m, s in zip(raw[::2], raw[1::2])]
            out[key.decode()] = {"type": kind, "ttl": self.command("TTL", key), "value": raw}
        return out

    def client(self, role: str = "default", **kw):
        """A redis-py client on TCP for ``role`` (``decode_responses`` etc. through ``kw``)."""
        redis = require_redis_py()
        return redis.Redis.from_url(self.url(role), socket_timeout=10, **kw)


# ---------------------------------------------------------------------------------------------
# pytest plumbing
# ---------------------------------------------------------------------------------------------

def require_binary() -> Path:
    found = find_binary()
    if found is None:
        where = f" ({ENV_BINARY}={os.environ[ENV_BINARY]})" if os.environ.get(ENV_BINARY) else ""
        missing(ENV_REQUIRE, f"redis-server not found{where} ({HOW})")
    return found


def require_redis_py():
    """redis-py (praisonmem's ``redis`` extra): skip without it, fail when CI requires Redis."""
    try:
        import redis
    except ImportError:
        missing(ENV_REQUIRE, "redis (redis-py) is not installed (pip install -e '.[test]')")
    return redis


@pytest.fixture(scope="session")
def redis_server():
    binary = require_binary()
    try:
        server = RedisServer(binary).start()
    except ServerError as exc:
        pytest.fail(str(exc), pytrace=False)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def redis_db(redis_server: RedisServer):
    """A logical database of its own for this test, empty, flushed afterwards."""
    db = redis_server.take_database()
    yield db
    redis_server.give_back(db)


@pytest.fixture(scope="module")
def redis_module(redis_server: RedisServer):
    """A logical database shared by the tests of one module."""
    db = redis_server.take_database()
    yield db
    redis_server.give_back(db)


def scrub_redis_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith(SCRUBBED_PREFIXES) or name in SCRUBBED:
            monkeypatch.delenv(name)


@pytest.fixture(autouse=True)
def _no_outside_redis_env(monkeypatch):
    scrub_redis_env(monkeypatch)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "redis: needs the throwaway Redis server (tests/redisserver.py)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if {"redis_db", "redis_module", "redis_server"} & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.redis)


if __name__ == "__main__":  # pragma: no cover - a manual check: start, print URLs, wait for Ctrl-C
    s = RedisServer(find_binary() or sys.exit(HOW)).start()
    d = s.take_database()
    print(s.version, d.url(), d.rw_url, d.ro_url, sep="\n", flush=True)
    try:
        signal.pause()
    except KeyboardInterrupt:
        pass
    finally:
        s.stop()
