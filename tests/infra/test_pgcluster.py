"""The throwaway PostgreSQL cluster itself (tests/pgcluster.py): roles, databases, teardown."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests import pgcluster
from tests.pgcluster import Cluster, require_bindir, require_psycopg

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.postgres


def alive(pid: int) -> bool:
    """A process that exists and is not a zombie (pid 1 here may reap late)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state not in ("Z", "X")


def wait_gone(pid: int, root: Path, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while (alive(pid) or root.exists()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(pid), f"postgres {pid} still running"
    assert not root.exists(), f"{root} left behind"


def test_rw_role_creates_writes_and_reads_over_tcp_and_socket(pg):
    psycopg = require_psycopg()
    with psycopg.connect(pg.rw_url, connect_timeout=5) as conn:
        conn.execute("CREATE TABLE t (id int PRIMARY KEY, body text)")
        conn.execute("INSERT INTO t VALUES (1, 'café ✓')")
    with psycopg.connect(pg.url("rw", socket=True), connect_timeout=5) as conn:
        assert conn.execute("SELECT id, body, current_user, current_database() FROM t").fetchall() == [
            (1, "café ✓", "pm_rw", pg.name)]
        assert conn.info.host == pg.socket_dir


def test_ro_role_reads_but_cannot_write_or_create(pg):
    psycopg = require_psycopg()
    with psycopg.connect(pg.rw_url) as conn:
        conn.execute("CREATE SCHEMA other")
        conn.execute("CREATE TABLE other.t (id int)")
        conn.execute("INSERT INTO other.t VALUES (7)")
    with psycopg.connect(pg.ro_url, autocommit=True) as conn:
        assert conn.execute("SELECT id FROM other.t").fetchall() == [(7,)]
        for sql in ("INSERT INTO other.t VALUES (8)", "CREATE TABLE public.x (id int)",
                    "CREATE SCHEMA mine", "DELETE FROM other.t"):
            with pytest.raises(psycopg.errors.InsufficientPrivilege) as info:
                conn.execute(sql)
            assert info.value.sqlstate == "42501"
    assert pg.psql("SELECT id FROM other.t;") == "7\n"


def test_every_login_but_the_admin_needs_its_password(pg, monkeypatch):
    psycopg = require_psycopg()
    with pytest.raises(psycopg.OperationalError, match='password authentication failed for user "pm_rw"'):
        psycopg.connect(pg.url("rw", password="wrong"), connect_timeout=5)
    with pytest.raises(psycopg.OperationalError, match="no password supplied"):
        psycopg.connect(pg.url("rw", socket=True, password=False), connect_timeout=5)
    monkeypatch.setenv("PGPASSWORD", pg.ro_password)
    with psycopg.connect(pg.url("ro", password=False), connect_timeout=5) as conn:
        assert conn.execute("SELECT current_user").fetchone() == ("pm_ro",)
    monkeypatch.delenv("PGPASSWORD")
    with psycopg.connect(pg.admin_url, connect_timeout=5) as conn:
        assert conn.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user").fetchone() == (True,)
    assert pg.rw_password not in pg.url("rw", password=False)


def test_unreachable_url_is_refused_at_once(pg):
    psycopg = require_psycopg()
    start = time.monotonic()
    with pytest.raises(psycopg.OperationalError, match="Connection refused"):
        psycopg.connect(pg.unreachable_url, connect_timeout=5)
    assert time.monotonic() - start < 3


def test_each_database_is_fresh_and_dropped(pg_cluster):
    one, two = pg_cluster.create_database("fresh"), pg_cluster.create_database("fresh")
    assert one.name != two.name
    one.psql("CREATE TABLE only_here (id int);")
    assert two.psql("SELECT count(*) FROM pg_tables WHERE tablename = 'only_here';") == "0\n"
    assert one.psql("SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = current_database();") == "pm_rw\n"
    for db in (one, two):
        pg_cluster.drop_database(db.name)
    names = pg_cluster.psql("SELECT datname FROM pg_database;").split()
    assert one.name not in names and two.name not in names


def test_the_outside_pg_environment_does_not_reach_tests(monkeypatch):
    outside = {"PGHOST": "/somewhere", "PGPASSWORD": "x", "PGSERVICE": "prod", "PGSSLMODE": "require",
               "PRAISONAI_CONVERSATION_STORE": "postgres", "PRAISONAI_CONVERSATION_URL": "postgresql://prod/db",
               "POSTGRES_URL": "postgresql://prod/db", "PRAISONMEM_KEEP": "1"}
    for name, value in outside.items():
        monkeypatch.setenv(name, value)
    pgcluster.scrub_pg_env(monkeypatch)
    assert {n: os.environ.get(n) for n in outside} == {n: None for n in outside} | {"PRAISONMEM_KEEP": "1"}


def test_stop_ends_the_server_and_removes_the_cluster():
    cluster = Cluster(require_bindir()).start()
    pid, root = cluster.server_pid, cluster.root
    assert pid is not None and alive(pid)
    assert (root / "sock" / f".s.PGSQL.{cluster.port}").is_socket()
    cluster.stop()
    wait_gone(pid, root, timeout=5)


STARTER = textwrap.dedent("""
    import sys, time
    from tests.pgcluster import Cluster, find_bindir
    c = Cluster(find_bindir()).start()
    print(c.server_pid, c.root, flush=True)
    time.sleep(600)
""")


def test_a_killed_test_run_leaves_no_server():
    require_bindir()
    proc = subprocess.Popen([sys.executable, "-c", STARTER], cwd=REPO, stdout=subprocess.PIPE, text=True,
                            env=dict(os.environ, PYTHONPATH=str(REPO)))
    pid, root = proc.stdout.readline().split()
    assert alive(int(pid))
    proc.kill()  # SIGKILL: no teardown code runs; the watchdog sees its pipe close
    proc.wait()
    wait_gone(int(pid), Path(root))


CTRL_C_TEST = textwrap.dedent("""
    import time

    def test_waits(pg):
        print("READY", pg.cluster.server_pid, pg.cluster.root, flush=True)
        time.sleep(600)
""")


def test_ctrl_c_in_a_test_run_leaves_no_server(tmp_path):
    require_bindir()
    (tmp_path / "test_ctrl_c.py").write_text(CTRL_C_TEST)
    proc = subprocess.Popen(
        [sys.executable, "-m", "pytest", "-s", "-q", "-p", "no:cacheprovider", "-p", "tests.pgcluster",
         "--rootdir", str(tmp_path), str(tmp_path / "test_ctrl_c.py")],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
        env=dict(os.environ, PYTHONPATH=str(REPO)),
        # Ctrl-C as a terminal's foreground job has it, even when this run's own SIGINT is ignored (a background
        # job, nohup): Python installs no KeyboardInterrupt handler for a signal it starts with ignored.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    for line in proc.stdout:
        if line.startswith("READY"):
            _, pid, root = line.split()
            break
    else:
        pytest.fail("the inner test run never got its database")
    os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C does: the whole foreground group
    try:
        rest, _ = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        pytest.fail("the inner test run did not stop on Ctrl-C")
    assert proc.returncode == 2, rest  # pytest's "interrupted"
    assert "KeyboardInterrupt" in rest
    wait_gone(int(pid), Path(root))


def test_missing_server_binaries_skip_or_fail_when_required(monkeypatch, tmp_path):
    monkeypatch.setenv("PRAISONMEM_PG_BINDIR", str(tmp_path / "nothing"))
    monkeypatch.delenv("PRAISONMEM_REQUIRE_POSTGRES", raising=False)
    with pytest.raises(pytest.skip.Exception, match="server binaries not found"):
        require_bindir()
    monkeypatch.setenv("PRAISONMEM_REQUIRE_POSTGRES", "1")
    with pytest.raises(pytest.fail.Exception, match="PRAISONMEM_REQUIRE_POSTGRES=1 but PostgreSQL server binaries"):
        require_bindir()


def test_binaries_are_found_where_debian_puts_them_then_on_path(monkeypatch, tmp_path):
    real = require_bindir()
    monkeypatch.delenv("PRAISONMEM_PG_BINDIR", raising=False)
    if str(real).startswith("/usr/lib/postgresql/"):
        assert pgcluster.find_bindir() == real
    monkeypatch.setattr(pgcluster, "DEBIAN_ROOT", tmp_path / "no-debian")
    links = tmp_path / "bin"
    links.mkdir()
    for name in pgcluster.SERVER_BINARIES:
        (links / name).symlink_to(real / name)
    monkeypatch.setenv("PATH", str(links))
    assert pgcluster.find_bindir() == real.resolve()
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert pgcluster.find_bindir() is None


def test_pg_module_is_one_database_for_the_module(pg_module, pg):
    assert pg_module.name.startswith("test_pgcluster_") and pg_module.name != pg.name
    assert pg_module.psql("SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = current_database();") == "pm_rw\n"
