"""A throwaway MariaDB server for tests: Debian's ``mariadb-server``, run unprivileged.

Fixtures (registered from ``tests/conftest.py``):

* ``mysql_server`` (session): a data dir made by ``mariadb-install-db`` in a fresh temp dir, and
  ``mariadbd`` on a Unix socket in that dir and on ``127.0.0.1:<free port>``, started once for the
  whole run and stopped at its end. Never the system service, /etc/mysql or /var/lib/mysql
  (``--no-defaults``).
* ``mysql`` (per test) and ``mysql_module`` (per module): a fresh database (:class:`MyDatabase`)
  on which the user ``pm_rw`` has every privilege and ``pm_ro`` only SELECT, both with random
  passwords, reachable on TCP and on the socket. URLs: ``db.rw_url``, ``db.ro_url``,
  ``db.url(...)`` (``mysql://user:pass@127.0.0.1:PORT/db``); admin SQL: ``db.sql(text)`` (as
  ``root``, which logs in on the socket only, with its own random password). The database is
  dropped afterwards.

The server is set up before it accepts its first connection (``--init-file``): the accounts
``mariadb-install-db`` makes with no password (root@127.0.0.1, root@::1, root@<hostname>) are
gone, root@localhost has a password, and the two users exist. Character set utf8mb4, as Debian's
own configuration sets it.

Without the binaries the tests that use these fixtures are skipped, unless
``PRAISONMEM_REQUIRE_MYSQL=1`` (CI), which makes them fail; a server that is there but will not
start always fails. Binaries: ``PRAISONMEM_MYSQL_BINDIR`` (holding ``mariadbd``,
``mariadb-install-db`` and ``mariadb``), else ``/usr/sbin/mariadbd`` with the others on PATH. As
root the server runs as the OS user ``PRAISONMEM_MYSQL_OS_USER`` (default ``praisonmem-my``, a
system user with no login, created if missing) via ``runuser``; as any other user, as that user.
The dir is made in /tmp (or ``PRAISONMEM_MYSQL_TMPDIR``): that user must reach it, and a socket
path has 107 bytes at most. No stray server: see tests/localserver.py (the watchdog).
"""

from __future__ import annotations

import getpass
import os
import re
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

import pytest

from tests.localserver import (ServerError, end_watchdog, ensure_os_user, free_port, missing, read_pid,
                               start_watchdog, wait_gone)

ENV_REQUIRE = "PRAISONMEM_REQUIRE_MYSQL"
ENV_BINDIR = "PRAISONMEM_MYSQL_BINDIR"
ENV_OS_USER = "PRAISONMEM_MYSQL_OS_USER"
ENV_TMPDIR = "PRAISONMEM_MYSQL_TMPDIR"
DEFAULT_OS_USER = "praisonmem-my"
ADMIN = "root"
RW_USER = "pm_rw"
RO_USER = "pm_ro"
SERVER = "mariadbd"
BINARIES = ("mariadbd", "mariadb-install-db", "mariadb")
HOW = "apt-get install mariadb-server (Debian), or set PRAISONMEM_MYSQL_BINDIR"
# the client libraries and praisonai's config read these; a developer's own must not reach a test
SCRUBBED_PREFIXES = ("MYSQL_", "MARIADB_")
SCRUBBED = ("MYSQL_PWD", "MYSQL_HOST", "MYSQL_TCP_PORT", "MYSQL_UNIX_PORT", "MYSQL_HOME", "LIBMYSQL_ENABLE_CLEARTEXT_PLUGIN")




def find_binaries() -> dict[str, Path] | None:
    """Where ``mariadbd``, ``mariadb-install-db`` and ``mariadb`` are, or None."""
    override = os.environ.get(ENV_BINDIR)
    if override:
        found = {b: Path(override) / b for b in BINARIES}
        return found if all(p.exists() for p in found.values()) else None
    found = {}
    for name in BINARIES:
        path = shutil.which(name) or (f"/usr/sbin/{name}" if Path(f"/usr/sbin/{name}").exists() else None)
        if path is None:
            return None
        found[name] = Path(path)
    return found


def _scrubbed_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(SCRUBBED_PREFIXES) and k not in SCRUBBED}
    env.update(LC_ALL="C.UTF-8", **extra)
    return env


def _sql_string(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


class Server:
    """One throwaway server: ``start()`` it, make databases, ``stop()`` it (removes everything)."""

    def __init__(self, binaries: dict[str, Path], *, os_user: str | None = None) -> None:
        self.binaries = binaries
        self.is_root = os.geteuid() == 0
        self.os_user = (os_user or os.environ.get(ENV_OS_USER) or DEFAULT_OS_USER) if self.is_root else getpass.getuser()
        # /tmp, not $TMPDIR: the server's user must reach it, and a socket path has 107 bytes at most
        self.root = Path(tempfile.mkdtemp(prefix="praisonmem-my-", dir=os.environ.get(ENV_TMPDIR) or "/tmp"))
        self.data = self.root / "data"
        self.sock = self.root / "sock" / "mysqld.sock"
        self.pidfile = self.root / "mariadbd.pid"
        self.log = self.root / "server.log"
        self.port = 0
        self.version = ""
        self.passwords = {ADMIN: secrets.token_hex(12), RW_USER: secrets.token_hex(12), RO_USER: secrets.token_hex(12)}
        self._admin_cnf = self.root / "admin.cnf"
        self._watchdog: subprocess.Popen | None = None
        self._proc: subprocess.Popen | None = None
        self._counter = 0

    # -- running server binaries ----------------------------------------------------------------
    def _prefix(self) -> list[str]:
        return ["runuser", "-u", self.os_user, "--"] if self.is_root else []

    def _chown(self, *paths: Path) -> None:
        if self.is_root:
            for path in paths:
                shutil.chown(path, self.os_user, self.os_user)

    def sql(self, text: str, *, database: str | None = None) -> str:
        """Run SQL as root over the socket; return the client's tab-separated rows (no header)."""
        cmd = [str(self.binaries["mariadb"]), f"--defaults-file={self._admin_cnf}", "--batch", "--raw",
               "--skip-column-names"]
        if database:
            cmd.append(f"--database={database}")
        proc = subprocess.run(cmd, input=text, env=_scrubbed_env(), capture_output=True, text=True, timeout=60)
        if proc.returncode != 0:
            raise ServerError(f"mariadb failed: {proc.stderr.strip()}")
        return proc.stdout

    # -- lifecycle --------------------------------------------------------------------------------
    def start(self) -> "Server":
        try:
            self._init()
            self._watchdog = start_watchdog(self.root, self.pidfile, SERVER, _scrubbed_env())
            self._start_server()
        except BaseException:
            self.stop()
            raise
        return self

    def _init(self) -> None:
        if self.is_root:
            ensure_os_user(self.os_user, "MariaDB")
        # the root and the socket dir are reachable by everyone (a test may drop privileges)
        self.root.chmod(0o755)
        self.sock.parent.mkdir(mode=0o755)
        self.data.mkdir(mode=0o700)
        (self.root / "tmp").mkdir(mode=0o700)
        self._chown(self.root, self.sock.parent, self.data, self.root / "tmp")
        proc = subprocess.run(
            [*self._prefix(), str(self.binaries["mariadb-install-db"]), "--no-defaults", f"--datadir={self.data}",
             "--auth-root-authentication-method=normal", "--skip-test-db", "--skip-name-resolve", "--force"],
            cwd="/", env=_scrubbed_env(), capture_output=True, text=True, timeout=180)
        if proc.returncode != 0:
            raise ServerError(f"mariadb-install-db failed: {(proc.stdout + proc.stderr).strip()[-2000:]}")
        # Run by the server before its first connection: only root@localhost (socket) is left of
        # install-db's accounts, with a password; then the two test users.
        init = self.root / "init.sql"
        pw = {k: _sql_string(v) for k, v in self.passwords.items()}
        init.write_text(
            "DELETE FROM mysql.global_priv WHERE NOT (User = 'root' AND Host = 'localhost') "
            "AND User <> 'mariadb.sys';\n"
            "DELETE FROM mysql.proxies_priv WHERE NOT (User = 'root' AND Host = 'localhost');\n"
            "FLUSH PRIVILEGES;\n"
            f"ALTER USER root@localhost IDENTIFIED BY {pw[ADMIN]};\n"
            f"CREATE USER {RW_USER}@'%' IDENTIFIED BY {pw[RW_USER]};\n"
            f"CREATE USER {RO_USER}@'%' IDENTIFIED BY {pw[RO_USER]};\n")
        init.chmod(0o600)
        self._chown(init)
        self._admin_cnf.write_text(f"[client]\nuser={ADMIN}\npassword={self.passwords[ADMIN]}\nsocket={self.sock}\n"
                                   "default-character-set=utf8mb4\n")
        self._admin_cnf.chmod(0o600)
        self.version = subprocess.run([str(self.binaries["mariadbd"]), "--version"], capture_output=True,
                                      text=True, env=_scrubbed_env()).stdout.strip()

    def _server_argv(self) -> list[str]:
        return [*self._prefix(), str(self.binaries["mariadbd"]), "--no-defaults", f"--datadir={self.data}",
                f"--socket={self.sock}", f"--port={self.port}", "--bind-address=127.0.0.1",
                f"--pid-file={self.pidfile}", f"--log-error={self.log}", f"--tmpdir={self.root / 'tmp'}",
                f"--secure-file-priv={self.root / 'tmp'}", f"--init-file={self.root / 'init.sql'}",
                "--skip-name-resolve", "--character-set-server=utf8mb4", "--collation-server=utf8mb4_general_ci",
                "--innodb-buffer-pool-size=32M", "--innodb-flush-log-at-trx-commit=0",
                "--innodb-doublewrite=0", "--skip-log-bin", "--max-connections=100"]

    def _start_server(self) -> None:
        for _attempt in range(5):
            self.port = free_port()
            self.log.unlink(missing_ok=True)
            self._proc = subprocess.Popen(self._server_argv(), cwd="/", env=_scrubbed_env(), stdin=subprocess.DEVNULL,
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
            if self._wait_ready(timeout=90):
                return
            log = self.log.read_text(errors="replace") if self.log.exists() else ""
            self._proc.wait(timeout=30)
            if "Address already in use" not in log:
                raise ServerError(f"MariaDB did not start: {log[-2000:]}")
        raise ServerError("MariaDB did not start: no free port after 5 tries")

    def _wait_ready(self, timeout: float) -> bool:
        """True once the server sends its handshake on TCP (it has run the init file by then)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                return False
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=2) as s:
                    greeting = s.recv(5)
                if len(greeting) == 5 and greeting[4] == 10:  # protocol version 10
                    return True
            except OSError:
                pass
            time.sleep(0.05)
        raise ServerError(f"MariaDB did not answer within {timeout:.0f}s: "
                          f"{self.log.read_text(errors='replace')[-2000:] if self.log.exists() else ''}")

    @property
    def server_pid(self) -> int | None:
        return read_pid(self.pidfile)

    def stop(self) -> None:
        """Stop the server (SIGTERM: a clean shutdown), end the watchdog, remove the dir."""
        pid = self.server_pid
        if self._proc is not None and self._proc.poll() is None and pid is not None:
            try:
                os.kill(pid, signal.SIGTERM)
            except OSError:
                pass
            if not wait_gone(pid, timeout=60):
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
    def create_database(self, label: str = "t") -> "MyDatabase":
        self._counter += 1
        name = f"{re.sub(r'[^a-z0-9_]', '_', label.lower())[:40]}_{os.getpid()}_{self._counter}"
        self.sql(f"CREATE DATABASE `{name}` CHARACTER SET utf8mb4;\n"
                 f"GRANT ALL PRIVILEGES ON `{name}`.* TO {RW_USER}@'%';\n"
                 f"GRANT SELECT ON `{name}`.* TO {RO_USER}@'%';\n")
        return MyDatabase(server=self, name=name)

    def drop_database(self, name: str) -> None:
        # DROP DATABASE keeps the database's grants: revoke them, or a later one of the same name inherits them
        self.sql(f"DROP DATABASE IF EXISTS `{name}`;\n"
                 f"REVOKE ALL PRIVILEGES ON `{name}`.* FROM {RW_USER}@'%';\n"
                 f"REVOKE ALL PRIVILEGES ON `{name}`.* FROM {RO_USER}@'%';\n")


@dataclass(frozen=True)
class MyDatabase:
    """A fresh database on the test server, and how to reach it."""

    server: Server
    name: str

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
    def rw_user(self) -> str:
        return RW_USER

    @property
    def ro_user(self) -> str:
        return RO_USER

    @property
    def rw_password(self) -> str:
        return self.server.passwords[RW_USER]

    @property
    def ro_password(self) -> str:
        return self.server.passwords[RO_USER]

    def url(self, role: str = "rw", *, socket: bool = False, password: str | bool = True,
            database: str | None = None, port: int | None = None, scheme: str = "mysql", **query: str) -> str:
        """``mysql://`` URL for ``role`` ("rw", "ro" or "admin": root, socket only).

        ``password``: True = the user's own, False = none in the URL, a string = that one (e.g. a
        wrong one). ``socket``: ``mysql://user:pass@localhost/db?unix_socket=PATH`` instead of TCP.
        """
        user = {"rw": RW_USER, "ro": RO_USER, "admin": ADMIN}[role]
        if role == "admin":
            socket = True
        secret = self.server.passwords[user] if password is True else (password or "")
        auth = urllib.parse.quote(user, safe="") + (":" + urllib.parse.quote(secret, safe="") if secret else "")
        if socket:
            query = {"unix_socket": self.socket_path, **query}
            where = "localhost"
        else:
            where = f"{self.host}:{self.port if port is None else port}"
        q = ("?" + urllib.parse.urlencode(query)) if query else ""
        return f"{scheme}://{auth}@{where}/{urllib.parse.quote(database or self.name, safe='')}{q}"

    @property
    def rw_url(self) -> str:
        return self.url("rw")

    @property
    def ro_url(self) -> str:
        return self.url("ro")

    @property
    def admin_url(self) -> str:
        return self.url("admin")

    @property
    def unreachable_url(self) -> str:
        """Nothing listens on 127.0.0.1:1: refused at once."""
        return self.url("rw", port=1)

    def sql(self, text: str) -> str:
        """Run SQL in this database as root; return tab-separated rows, no header."""
        return self.server.sql(text, database=self.name)

    def connect(self, role: str = "rw", **kw):
        """A PyMySQL connection (utf8mb4, autocommit) for ``role`` on TCP (``socket=True``: the socket)."""
        pymysql = require_pymysql()
        user = {"rw": RW_USER, "ro": RO_USER, "admin": ADMIN}[role]
        where = ({"unix_socket": self.socket_path} if kw.pop("socket", role == "admin")
                 else {"host": self.host, "port": self.port})
        return pymysql.connect(user=user, password=self.server.passwords[user], database=self.name,
                               charset="utf8mb4", autocommit=True, connect_timeout=5, **where, **kw)


# ---------------------------------------------------------------------------------------------
# pytest plumbing
# ---------------------------------------------------------------------------------------------

def require_binaries() -> dict[str, Path]:
    found = find_binaries()
    if found is None:
        where = f" in {os.environ[ENV_BINDIR]}" if os.environ.get(ENV_BINDIR) else ""
        missing(ENV_REQUIRE, f"MariaDB server binaries ({', '.join(BINARIES)}) not found{where} ({HOW})")
    return found


def require_pymysql():
    """PyMySQL (praisonmem's ``mysql`` extra): skip without it, fail when CI requires MySQL."""
    try:
        import pymysql
    except ImportError:
        missing(ENV_REQUIRE, "PyMySQL is not installed (pip install -e '.[test]')")
    return pymysql


@pytest.fixture(scope="session")
def mysql_server():
    binaries = require_binaries()
    try:
        server = Server(binaries).start()
    except ServerError as exc:
        pytest.fail(str(exc), pytrace=False)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def mysql(mysql_server: Server, request):
    """A fresh database for this test (dropped afterwards)."""
    db = mysql_server.create_database(request.node.name)
    yield db
    mysql_server.drop_database(db.name)


@pytest.fixture(scope="module")
def mysql_module(mysql_server: Server, request):
    """A fresh database shared by the tests of one module."""
    db = mysql_server.create_database(request.module.__name__.rsplit(".", 1)[-1])
    yield db
    mysql_server.drop_database(db.name)


def scrub_mysql_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Remove the MySQL clients' and praisonai's MYSQL_*/MARIADB_* variables from this test's environment."""
    for name in list(os.environ):
        if name.startswith(SCRUBBED_PREFIXES) or name in SCRUBBED:
            monkeypatch.delenv(name)


@pytest.fixture(autouse=True)
def _no_outside_mysql_env(monkeypatch):
    scrub_mysql_env(monkeypatch)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "mysql: needs the throwaway MariaDB server (tests/mariadbserver.py)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if {"mysql", "mysql_module", "mysql_server"} & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.mysql)


if __name__ == "__main__":  # pragma: no cover - a manual check: start, print URLs, wait for Ctrl-C
    s = Server(find_binaries() or sys.exit(HOW)).start()
    d = s.create_database("manual")
    print(s.version, d.rw_url, d.ro_url, d.admin_url, sep="\n", flush=True)
    try:
        signal.pause()
    except KeyboardInterrupt:
        pass
    finally:
        s.stop()
