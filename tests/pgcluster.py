"""A throwaway PostgreSQL cluster for tests: Debian's ``postgresql`` server, run unprivileged.

Fixtures (registered from ``tests/conftest.py``):

* ``pg_cluster`` (session): a cluster initdb'd in a fresh temp dir, listening on a Unix socket in
  that dir and on ``127.0.0.1:<free port>``, started once for the whole run and stopped at its end.
* ``pg`` (per test) and ``pg_module`` (per module): a fresh database (:class:`PgDatabase`) owned
  by the read-write role ``pm_rw``, readable by the read-only role ``pm_ro`` (``pg_read_all_data``,
  no CREATE anywhere), both password-authenticated (scram-sha-256) on the socket and on TCP, with
  random passwords. Connection URLs: ``db.rw_url``, ``db.ro_url``, ``db.url(...)``; admin SQL:
  ``db.psql(sql)`` (superuser, trusted on the socket only). The database is dropped afterwards.

Without server binaries the tests that use these fixtures are skipped, unless
``PRAISONMEM_REQUIRE_POSTGRES=1`` (CI), which makes them fail; a server that is there but will not
start always fails. Binaries: ``PRAISONMEM_PG_BINDIR``, else the newest Debian
``/usr/lib/postgresql/<ver>/bin``, else ``initdb`` on PATH (symlinks resolved). initdb/postgres
refuse to run as root, so as root the server runs as the OS user ``PRAISONMEM_PG_OS_USER``
(default ``praisonmem-pg``, a system user with no login, created with useradd if missing) via
``runuser``; as any other user it runs as that user. The cluster dir is made in /tmp (or
``PRAISONMEM_PG_TMPDIR``): that user must reach it, and a socket path is limited to 107 bytes.

No stray server: a watchdog process (its own session, so a terminal's Ctrl-C does not reach it)
holds a pipe from pytest; when the pipe closes, on normal teardown, on Ctrl-C, or when pytest is
killed, it stops the server (``pg_ctl -m immediate``) and removes the cluster dir.
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
import urllib.parse
from dataclasses import dataclass
from pathlib import Path

import pytest

ENV_REQUIRE = "PRAISONMEM_REQUIRE_POSTGRES"
ENV_BINDIR = "PRAISONMEM_PG_BINDIR"
ENV_OS_USER = "PRAISONMEM_PG_OS_USER"
ENV_TMPDIR = "PRAISONMEM_PG_TMPDIR"
DEFAULT_OS_USER = "praisonmem-pg"
SUPERUSER = "praisonmem"
RW_ROLE = "pm_rw"
RO_ROLE = "pm_ro"
SERVER_BINARIES = ("initdb", "pg_ctl", "postgres", "psql")
HOW = "apt-get install postgresql (Debian), or set PRAISONMEM_PG_BINDIR"
# libpq and the praisonai config read these; a developer's own must not reach a test
SCRUBBED_PREFIX = "PG"
SCRUBBED = ("PRAISONAI_CONVERSATION_STORE", "PRAISONAI_CONVERSATION_URL", "POSTGRES_URL")


class ClusterError(RuntimeError):
    pass


def _version_key(path: Path) -> tuple:
    return tuple(int(x) if x.isdigit() else 0 for x in re.split(r"[.]", path.parent.name))


DEBIAN_ROOT = Path("/usr/lib/postgresql")


def find_bindir() -> Path | None:
    """Where the server binaries are (see the module docstring), or None."""
    override = os.environ.get(ENV_BINDIR)
    if override:
        return Path(override)
    debian = sorted((p for p in DEBIAN_ROOT.glob("*/bin")
                     if all((p / b).exists() for b in SERVER_BINARIES)), key=_version_key)
    if debian:
        return debian[-1]
    found = shutil.which("initdb")
    if found:
        bindir = Path(found).resolve().parent
        if all((bindir / b).exists() for b in SERVER_BINARIES[:3]):
            return bindir
    return None


def _scrubbed_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(SCRUBBED_PREFIX) and k not in SCRUBBED}
    env.update(LC_ALL="C.UTF-8", **extra)
    return env


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _ensure_os_user(name: str) -> None:
    if subprocess.run(["getent", "passwd", name], capture_output=True).returncode == 0:
        return
    made = subprocess.run(["useradd", "--system", "--user-group", "--no-create-home", "--home-dir",
                           "/nonexistent", "--shell", "/usr/sbin/nologin", name], capture_output=True, text=True)
    # another test run may have made it meanwhile
    if made.returncode != 0 and subprocess.run(["getent", "passwd", name], capture_output=True).returncode != 0:
        raise ClusterError(f"cannot create the OS user {name} to run PostgreSQL: {made.stderr.strip()}")


# The watchdog: waits for EOF on stdin (pytest closed it, or died), then stops the server and
# removes the cluster dir. argv: root, data dir, pg_ctl, then the runuser prefix (maybe empty).
_WATCHDOG = r"""
import os, shutil, signal, subprocess, sys
signal.signal(signal.SIGINT, signal.SIG_IGN)
root, data, pg_ctl, *prefix = sys.argv[1:]
try:
    sys.stdin.buffer.read()
finally:
    if os.path.exists(os.path.join(data, "postmaster.pid")):
        subprocess.run(prefix + [pg_ctl, "-D", data, "-m", "immediate", "-w", "-t", "30", "stop"],
                       cwd="/", stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    shutil.rmtree(root, ignore_errors=True)
"""


class Cluster:
    """One throwaway cluster: ``start()`` it, make databases, ``stop()`` it (removes everything)."""

    def __init__(self, bindir: Path, *, os_user: str | None = None) -> None:
        self.bindir = bindir
        self.is_root = os.geteuid() == 0
        self.os_user = (os_user or os.environ.get(ENV_OS_USER) or DEFAULT_OS_USER) if self.is_root else getpass.getuser()
        # /tmp, not $TMPDIR: the server's user must reach it, and a socket path has 107 bytes at most
        self.root = Path(tempfile.mkdtemp(prefix="praisonmem-pg-", dir=os.environ.get(ENV_TMPDIR) or "/tmp"))
        self.data = self.root / "data"
        self.sock = self.root / "sock"
        self.log = self.root / "server.log"
        self.port = 0
        self.version = ""
        self.passwords = {RW_ROLE: secrets.token_hex(12), RO_ROLE: secrets.token_hex(12)}
        self._watchdog: subprocess.Popen | None = None
        self._counter = 0

    # -- running server binaries ----------------------------------------------------------------
    def _prefix(self) -> list[str]:
        return ["runuser", "-u", self.os_user, "--"] if self.is_root else []

    def _as_owner(self, *cmd: str | Path, timeout: float = 120) -> subprocess.CompletedProcess:
        return subprocess.run([*self._prefix(), *map(str, cmd)], cwd="/", env=_scrubbed_env(),
                              capture_output=True, text=True, timeout=timeout)

    def psql(self, sql: str, *, dbname: str = "postgres") -> str:
        """Run SQL as the superuser over the socket; return psql's unaligned output."""
        proc = subprocess.run(
            [str(self.bindir / "psql"), "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", str(self.sock),
             "-p", str(self.port), "-U", SUPERUSER, "-d", dbname],
            input=sql, env=_scrubbed_env(PGOPTIONS="-c client_min_messages=warning"),
            capture_output=True, text=True, timeout=60)
        if proc.returncode != 0:
            raise ClusterError(f"psql failed: {proc.stderr.strip()}")
        return proc.stdout

    # -- lifecycle --------------------------------------------------------------------------------
    def start(self) -> "Cluster":
        try:
            self._init()
            self._start_watchdog()
            self._start_server()
            self._make_roles()
        except BaseException:
            self.stop()
            raise
        return self

    def _init(self) -> None:
        if self.is_root:
            _ensure_os_user(self.os_user)
        # the root and the socket dir are reachable by everyone (a test may drop privileges);
        # postgres insists on a 0700 data dir
        self.root.chmod(0o755)
        self.sock.mkdir(mode=0o755)
        self.data.mkdir(mode=0o700)
        if self.is_root:
            shutil.chown(self.root, self.os_user, self.os_user)
            shutil.chown(self.sock, self.os_user, self.os_user)
            shutil.chown(self.data, self.os_user, self.os_user)
        proc = self._as_owner(self.bindir / "initdb", "-D", self.data, "-U", SUPERUSER, "--encoding=UTF8",
                              "--locale=C.UTF-8", "--auth-local=trust", "--auth-host=scram-sha-256", "--no-sync")
        if proc.returncode != 0:
            raise ClusterError(f"initdb failed: {proc.stderr.strip()[-2000:]}")
        (self.data / "pg_hba.conf").write_text(
            "# TYPE  DATABASE  USER        ADDRESS        METHOD\n"
            f"local   all       {SUPERUSER}                 trust\n"
            "local   all       all                        scram-sha-256\n"
            "host    all       all         127.0.0.1/32   scram-sha-256\n"
            "host    all       all         ::1/128        scram-sha-256\n")
        if self.is_root:
            shutil.chown(self.data / "pg_hba.conf", self.os_user, self.os_user)
        self.version = self._as_owner(self.bindir / "postgres", "--version").stdout.strip()

    def _start_watchdog(self) -> None:
        self._watchdog = subprocess.Popen(
            [sys.executable, "-c", _WATCHDOG, str(self.root), str(self.data), str(self.bindir / "pg_ctl"),
             *self._prefix()], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True, cwd="/", env=_scrubbed_env())

    def _start_server(self) -> None:
        for attempt in range(5):
            self.port = _free_port()
            opts = (f"-c listen_addresses=127.0.0.1 -c port={self.port} -c unix_socket_directories={self.sock} "
                    "-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=60 "
                    "-c shared_buffers=32MB -c log_min_messages=warning -c logging_collector=off")
            proc = self._as_owner(self.bindir / "pg_ctl", "-D", self.data, "-l", self.log, "-o", opts,
                                  "-w", "-t", "60", "start")
            if proc.returncode == 0:
                return
            log = self.log.read_text(errors="replace") if self.log.exists() else ""
            if "could not bind" not in log and "already in use" not in log:
                raise ClusterError(f"PostgreSQL did not start: {proc.stderr.strip()} {log[-2000:]}")
        raise ClusterError("PostgreSQL did not start: no free port after 5 tries")

    def _make_roles(self) -> None:
        self.psql(f"CREATE ROLE {RW_ROLE} LOGIN PASSWORD '{self.passwords[RW_ROLE]}';\n"
                  f"CREATE ROLE {RO_ROLE} LOGIN PASSWORD '{self.passwords[RO_ROLE]}';\n"
                  f"GRANT pg_read_all_data TO {RO_ROLE};\n")

    @property
    def server_pid(self) -> int | None:
        try:
            return int((self.data / "postmaster.pid").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return None

    def stop(self) -> None:
        """Stop the server (fast, then immediate), end the watchdog, remove the cluster dir."""
        if self.server_pid is not None:
            self._as_owner(self.bindir / "pg_ctl", "-D", self.data, "-m", "fast", "-w", "-t", "30", "stop",
                           timeout=60)
        if self._watchdog is not None:
            self._watchdog.stdin.close()
            try:
                self._watchdog.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self._watchdog.kill()
            self._watchdog = None
        shutil.rmtree(self.root, ignore_errors=True)

    # -- databases --------------------------------------------------------------------------------
    def create_database(self, label: str = "t") -> "PgDatabase":
        self._counter += 1
        name = f"{re.sub(r'[^a-z0-9_]', '_', label.lower())[:40]}_{os.getpid()}_{self._counter}"
        self.psql(f'CREATE DATABASE "{name}" OWNER {RW_ROLE};')
        old = int(self.psql("SHOW server_version_num;").strip()) < 150000
        # PG 15 already gives public to the owner and no CREATE to PUBLIC; older servers do not
        self.psql(("ALTER SCHEMA public OWNER TO pm_rw;\n" if old else "")
                  + "REVOKE CREATE ON SCHEMA public FROM PUBLIC;\n", dbname=name)
        return PgDatabase(cluster=self, name=name)

    def drop_database(self, name: str) -> None:
        self.psql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE);')


@dataclass(frozen=True)
class PgDatabase:
    """A fresh database in the test cluster, and how to reach it."""

    cluster: Cluster
    name: str

    @property
    def host(self) -> str:
        return "127.0.0.1"

    @property
    def port(self) -> int:
        return self.cluster.port

    @property
    def socket_dir(self) -> str:
        return str(self.cluster.sock)

    @property
    def rw_user(self) -> str:
        return RW_ROLE

    @property
    def ro_user(self) -> str:
        return RO_ROLE

    @property
    def rw_password(self) -> str:
        return self.cluster.passwords[RW_ROLE]

    @property
    def ro_password(self) -> str:
        return self.cluster.passwords[RO_ROLE]

    def url(self, role: str = "rw", *, socket: bool = False, password: str | bool = True,
            dbname: str | None = None, port: int | None = None, **query: str) -> str:
        """``postgresql://`` URL for ``role`` ("rw", "ro" or "admin": the superuser, socket only).

        ``password``: True = the role's own, False = none in the URL (PGPASSWORD, .pgpass, ...),
        a string = that one (e.g. a wrong one). ``socket``: Unix socket instead of TCP.
        """
        user = {"rw": RW_ROLE, "ro": RO_ROLE, "admin": SUPERUSER}[role]
        if role == "admin":
            socket, password = True, False
        secret = self.cluster.passwords[user] if password is True else (password or "")
        auth = urllib.parse.quote(user, safe="") + (":" + urllib.parse.quote(secret, safe="") if secret else "")
        port = self.port if port is None else port
        if socket:
            query = {"host": self.socket_dir, "port": str(port), **query}
            where = ""
        else:
            where = f"{self.host}:{port}"
        q = ("?" + urllib.parse.urlencode(query)) if query else ""
        return f"postgresql://{auth}@{where}/{urllib.parse.quote(dbname or self.name, safe='')}{q}"

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

    def psql(self, sql: str) -> str:
        """Run SQL in this database as the superuser; return psql's unaligned, tuples-only output."""
        return self.cluster.psql(sql, dbname=self.name)


# ---------------------------------------------------------------------------------------------
# pytest plumbing
# ---------------------------------------------------------------------------------------------

def require_bindir() -> Path:
    bindir = find_bindir()
    if bindir is None or not all((bindir / b).exists() for b in SERVER_BINARIES[:3]):
        where = f" in {bindir}" if bindir else ""
        message = f"PostgreSQL server binaries not found{where} ({HOW})"
        if os.environ.get(ENV_REQUIRE) == "1":
            pytest.fail(f"{ENV_REQUIRE}=1 but {message}", pytrace=False)
        pytest.skip(message)
    return bindir


def require_psycopg():
    """psycopg 3 (praisonmem's ``postgres`` extra): skip without it, fail when CI requires PG."""
    try:
        import psycopg
    except ImportError:
        message = "psycopg is not installed (pip install -e '.[test]')"
        if os.environ.get(ENV_REQUIRE) == "1":
            pytest.fail(f"{ENV_REQUIRE}=1 but {message}", pytrace=False)
        pytest.skip(message)
    return psycopg


@pytest.fixture(scope="session")
def pg_cluster():
    bindir = require_bindir()
    try:
        cluster = Cluster(bindir).start()
    except ClusterError as exc:
        pytest.fail(str(exc), pytrace=False)
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def pg(pg_cluster: Cluster, request):
    """A fresh database for this test (dropped afterwards)."""
    db = pg_cluster.create_database(request.node.name)
    yield db
    pg_cluster.drop_database(db.name)


@pytest.fixture(scope="module")
def pg_module(pg_cluster: Cluster, request):
    """A fresh database shared by the tests of one module."""
    db = pg_cluster.create_database(request.module.__name__.rsplit(".", 1)[-1])
    yield db
    pg_cluster.drop_database(db.name)


def scrub_pg_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Remove libpq's PG* variables and praisonai's store variables from this test's environment."""
    for name in list(os.environ):
        if name.startswith(SCRUBBED_PREFIX) or name in SCRUBBED:
            monkeypatch.delenv(name)


@pytest.fixture(autouse=True)
def _no_outside_pg_env(monkeypatch):
    scrub_pg_env(monkeypatch)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "postgres: needs the throwaway PostgreSQL cluster (tests/pgcluster.py)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if {"pg", "pg_module", "pg_cluster"} & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.postgres)


if __name__ == "__main__":  # pragma: no cover - a manual check: start, print URLs, wait for Ctrl-C
    c = Cluster(find_bindir() or sys.exit(HOW)).start()
    d = c.create_database("manual")
    print(c.version, d.rw_url, d.ro_url, d.admin_url, sep="\n", flush=True)
    try:
        signal.pause()
    except KeyboardInterrupt:
        pass
    finally:
        c.stop()
