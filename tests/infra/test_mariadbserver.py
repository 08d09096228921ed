"""The throwaway MariaDB server (tests/mariadbserver.py): users, databases, teardown, and the real
praisonai MySQLConversationStore (in the oracle venv) writing to it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests import mariadbserver
from tests.localserver import alive
from tests.mariadbserver import Server, require_binaries, require_pymysql

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.mysql


def wait_gone(pid: int, root: Path, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while (alive(pid) or root.exists()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(pid), f"mariadbd {pid} still running"
    assert not root.exists(), f"{root} left behind"


def test_rw_user_creates_writes_and_reads_over_tcp_and_socket(mysql):
    with mysql.connect("rw") as conn, conn.cursor() as cur:
        cur.execute("CREATE TABLE t (id INT PRIMARY KEY, body TEXT) ENGINE=InnoDB")
        cur.execute("INSERT INTO t VALUES (1, 'café ✓ 🚀')")
        cur.execute("SELECT @@port, CURRENT_USER()")
        assert cur.fetchone() == (mysql.port, "pm_rw@%")
    with mysql.connect("rw", socket=True) as conn, conn.cursor() as cur:
        cur.execute("SELECT id, body, DATABASE(), @@character_set_database FROM t")
        assert cur.fetchall() == ((1, "café ✓ 🚀", mysql.name, "utf8mb4"),)
    assert mysql.sql("SELECT body FROM t;") == "café ✓ 🚀\n"


def test_ro_user_reads_but_cannot_write_create_or_drop(mysql):
    pymysql = require_pymysql()
    with mysql.connect("rw") as conn, conn.cursor() as cur:
        cur.execute("CREATE TABLE t (id INT)")
        cur.execute("INSERT INTO t VALUES (7)")
    with mysql.connect("ro") as conn, conn.cursor() as cur:
        cur.execute("SELECT id FROM t")
        assert cur.fetchall() == ((7,),)
        for sql in ("INSERT INTO t VALUES (8)", "UPDATE t SET id = 9", "DELETE FROM t", "CREATE TABLE x (id INT)",
                    "DROP TABLE t", "ALTER TABLE t ADD COLUMN y INT"):
            with pytest.raises(pymysql.err.OperationalError) as info:
                cur.execute(sql)
            assert info.value.args[0] == 1142, sql  # ER_TABLEACCESS_DENIED_ERROR
    assert mysql.sql("SELECT id FROM t;") == "7\n"


def test_every_login_needs_its_password_and_root_has_no_tcp_login(mysql):
    pymysql = require_pymysql()
    for kw in ({"password": "wrong"}, {"password": ""}):
        with pytest.raises(pymysql.err.OperationalError) as info:
            pymysql.connect(host=mysql.host, port=mysql.port, user="pm_rw", database=mysql.name,
                            connect_timeout=5, **kw)
        assert info.value.args[0] == 1045  # access denied
    # install-db's passwordless root@127.0.0.1 is gone, and root@localhost is the socket only
    for password in ("", mysql.server.passwords["root"]):
        with pytest.raises(pymysql.err.OperationalError) as info:
            pymysql.connect(host="127.0.0.1", port=mysql.port, user="root", password=password, connect_timeout=5)
        assert info.value.args[0] in (1045, 1130)
    assert mysql.sql("SELECT CONCAT(User, '@', Host) FROM mysql.global_priv ORDER BY 1;").split() == [
        "mariadb.sys@localhost", "pm_ro@%", "pm_rw@%", "root@localhost"]
    with mysql.connect("admin") as conn, conn.cursor() as cur:
        cur.execute("SELECT CURRENT_USER()")
        assert cur.fetchone() == ("root@localhost",)


def test_urls_name_users_hosts_and_the_socket(mysql):
    assert mysql.rw_url == f"mysql://pm_rw:{mysql.rw_password}@127.0.0.1:{mysql.port}/{mysql.name}"
    assert mysql.ro_url == f"mysql://pm_ro:{mysql.ro_password}@127.0.0.1:{mysql.port}/{mysql.name}"
    assert mysql.url("rw", password="p@ss/wd") == f"mysql://pm_rw:p%40ss%2Fwd@127.0.0.1:{mysql.port}/{mysql.name}"
    assert mysql.url("rw", password=False).startswith("mysql://pm_rw@127.0.0.1:")
    assert mysql.url("rw", socket=True).endswith(f"@localhost/{mysql.name}?unix_socket=" + mysql.socket_path.replace("/", "%2F"))
    assert Path(mysql.socket_path).is_socket()


def test_unreachable_url_is_refused_at_once(mysql):
    pymysql = require_pymysql()
    start = time.monotonic()
    with pytest.raises(pymysql.err.OperationalError) as info:
        pymysql.connect(host="127.0.0.1", port=1, user="pm_rw", password="x", connect_timeout=5)
    assert info.value.args[0] == 2003 and time.monotonic() - start < 3


def test_each_database_is_fresh_and_dropped_with_its_grants(mysql_server):
    one, two = mysql_server.create_database("fresh"), mysql_server.create_database("fresh")
    assert one.name != two.name
    one.sql("CREATE TABLE only_here (id INT);")
    assert two.sql("SHOW TABLES;") == ""
    assert "pm_rw" in one.sql("SELECT User FROM mysql.db WHERE Db = DATABASE();")
    for db in (one, two):
        mysql_server.drop_database(db.name)
    names = mysql_server.sql("SHOW DATABASES;").split()
    assert one.name not in names and two.name not in names
    assert mysql_server.sql(f"SELECT COUNT(*) FROM mysql.db WHERE Db IN ('{one.name}', '{two.name}');") == "0\n"


def test_the_outside_mysql_environment_does_not_reach_tests(monkeypatch):
    outside = {"MYSQL_PWD": "x", "MYSQL_HOST": "prod", "MYSQL_URL": "mysql://prod/db", "MARIADB_HOST": "prod",
               "MYSQL_UNIX_PORT": "/run/mysqld.sock", "PRAISONMEM_KEEP": "1"}
    for name, value in outside.items():
        monkeypatch.setenv(name, value)
    mariadbserver.scrub_mysql_env(monkeypatch)
    assert {n: os.environ.get(n) for n in outside} == {n: None for n in outside} | {"PRAISONMEM_KEEP": "1"}


def test_stop_ends_the_server_and_removes_its_dir():
    server = Server(require_binaries()).start()
    pid, root = server.server_pid, server.root
    assert pid is not None and alive(pid) and server.sock.is_socket()
    if os.geteuid() == 0:  # the server is not root
        assert Path(f"/proc/{pid}").stat().st_uid != 0
    server.stop()
    wait_gone(pid, root, timeout=5)


STARTER = textwrap.dedent("""
    import time
    from tests.mariadbserver import Server, find_binaries
    s = Server(find_binaries()).start()
    print(s.server_pid, s.root, flush=True)
    time.sleep(600)
""")


def test_a_killed_test_run_leaves_no_server():
    require_binaries()
    proc = subprocess.Popen([sys.executable, "-c", STARTER], cwd=REPO, stdout=subprocess.PIPE, text=True,
                            env=dict(os.environ, PYTHONPATH=str(REPO)))
    pid, root = proc.stdout.readline().split()
    assert alive(int(pid))
    proc.kill()  # SIGKILL: no teardown code runs; the watchdog sees its pipe close
    proc.wait()
    wait_gone(int(pid), Path(root))


CTRL_C_TEST = textwrap.dedent("""
    import time

    def test_waits(mysql):
        print("READY", mysql.server.server_pid, mysql.server.root, flush=True)
        time.sleep(600)
""")


def test_ctrl_c_in_a_test_run_leaves_no_server(tmp_path):
    require_binaries()
    (tmp_path / "test_ctrl_c.py").write_text(CTRL_C_TEST)
    proc = subprocess.Popen(
        [sys.executable, "-m", "pytest", "-s", "-q", "-p", "no:cacheprovider", "-p", "tests.mariadbserver",
         "--rootdir", str(tmp_path), str(tmp_path / "test_ctrl_c.py")],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
        env=dict(os.environ, PYTHONPATH=str(REPO)),
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
    assert proc.returncode == 2, rest
    wait_gone(int(pid), Path(root))


def test_missing_binaries_skip_or_fail_when_required(monkeypatch, tmp_path):
    monkeypatch.setenv("PRAISONMEM_MYSQL_BINDIR", str(tmp_path / "nothing"))
    monkeypatch.delenv("PRAISONMEM_REQUIRE_MYSQL", raising=False)
    with pytest.raises(pytest.skip.Exception, match="MariaDB server binaries .* not found"):
        require_binaries()
    monkeypatch.setenv("PRAISONMEM_REQUIRE_MYSQL", "1")
    with pytest.raises(pytest.fail.Exception, match="PRAISONMEM_REQUIRE_MYSQL=1 but MariaDB server binaries"):
        require_binaries()


def test_mysql_module_is_one_database_for_the_module(mysql_module, mysql):
    assert mysql_module.name.startswith("test_mariadbserver_") and mysql_module.name != mysql.name


# -- the real praisonai MySQLConversationStore ---------------------------------------------------

WRITE = """
    import json, sys
    from praisonai.persistence.conversation.base import ConversationMessage, ConversationSession
    from praisonai.persistence.conversation.mysql import MySQLConversationStore
    st = MySQLConversationStore(url=sys.argv[1], pool_size=1)
    st.create_session(ConversationSession(session_id="s1", user_id="u", agent_id="Bot", name="N",
                                          state={"step": 2}, metadata={"zz": 1, "aa": "é"},
                                          created_at=10.5, updated_at=11.5))
    st.add_message("s1", ConversationMessage(id="m1", role="user", content="café 🚀", created_at=12.25))
    st.add_message("s1", ConversationMessage(id="m2", role="assistant", content="ok",
                                             tool_calls=[{"id": "c1", "type": "function"}], created_at=13.0))
    print(json.dumps({"session": st.get_session("s1").to_dict(),
                      "messages": [m.to_dict() for m in st.get_messages("s1")],
                      "listed": [s.session_id for s in st.list_sessions()]}))
"""


def test_the_real_mysql_conversation_store_creates_writes_and_reads_back(oracle, mysql):
    oracle.require("mysql-connector-python")
    got = oracle.json(WRITE, mysql.rw_url)
    assert got["listed"] == ["s1"]
    assert {k: got["session"][k] for k in ("session_id", "user_id", "agent_id", "name", "state", "metadata",
                                           "created_at", "updated_at")} == {
        "session_id": "s1", "user_id": "u", "agent_id": "Bot", "name": "N", "state": {"step": 2},
        "metadata": {"zz": 1, "aa": "é"}, "created_at": 10.5, "updated_at": 11.5}
    assert [(m["id"], m["role"], m["content"], m["tool_calls"], m["created_at"]) for m in got["messages"]] == [
        ("m1", "user", "café 🚀", None, 12.25), ("m2", "assistant", "ok", [{"id": "c1", "type": "function"}], 13.0)]
    # what is on the server, read with another driver as the read-only user
    with mysql.connect("ro") as conn, conn.cursor() as cur:
        cur.execute("SHOW TABLES")
        assert sorted(r[0] for r in cur.fetchall()) == ["praison_messages", "praison_sessions"]
        cur.execute("SELECT session_id, user_id, agent_id, name, state, metadata, created_at, updated_at "
                    "FROM praison_sessions")
        assert cur.fetchall() == (("s1", "u", "Bot", "N", '{"step": 2}', '{"zz": 1, "aa": "\\u00e9"}', 10.5, 11.5),)
        cur.execute("SELECT id, session_id, role, content, tool_calls, tool_call_id, metadata, created_at "
                    "FROM praison_messages ORDER BY created_at")
        assert cur.fetchall() == (("m1", "s1", "user", "café 🚀", None, None, None, 12.25),
                                  ("m2", "s1", "assistant", "ok", '[{"id": "c1", "type": "function"}]', None, None, 13.0))
        # MariaDB's JSON is LONGTEXT with a JSON_VALID check
        cur.execute("SELECT COLUMN_NAME, COLUMN_TYPE FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() "
                    "AND TABLE_NAME = 'praison_sessions' ORDER BY ORDINAL_POSITION")
        assert cur.fetchall() == (("session_id", "varchar(255)"), ("user_id", "varchar(255)"),
                                  ("agent_id", "varchar(255)"), ("name", "varchar(255)"), ("state", "longtext"),
                                  ("metadata", "longtext"), ("created_at", "double"), ("updated_at", "double"))



def test_the_real_store_as_the_read_only_user_cannot_create_its_tables(oracle, mysql):
    oracle.require("mysql-connector-python")
    proc = oracle.run("""
        import sys
        from praisonai.persistence.conversation.mysql import MySQLConversationStore
        MySQLConversationStore(url=sys.argv[1], pool_size=1)
    """, mysql.ro_url, check=False)
    assert proc.returncode == 1
    assert "1142 (42000): CREATE command denied to user 'pm_ro'@'localhost'" in proc.stderr \
        or "1142 (42000): CREATE command denied to user 'pm_ro'@'127.0.0.1'" in proc.stderr, proc.stderr[-800:]
    assert mysql.sql("SHOW TABLES;") == ""
