"""``session list --store postgresql://…`` reads a page through libpq itself (praisonmem.core.io.pglite), without
importing psycopg: it prints exactly what the psycopg path prints (every sort, filter and page), its values are the
ones psycopg's loaders give, and whatever it cannot do as psycopg would (a server error, a refused connection, a
column type it does not load) is done again through psycopg, so errors read as they always did."""

from __future__ import annotations

import math
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from praisonmem.core.errors import PraisonMemError
from praisonmem.core.io import pglite
from tests.cli.commands.test_session_conversation import source, tree  # noqa: F401  (fixture)
from tests.pgcluster import require_psycopg

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def db(pg):
    require_psycopg()
    assert pglite.available(), "psycopg-binary's libpq is what this path reads with"
    return pg


def psycopg_only(monkeypatch) -> None:
    """The read done through psycopg alone, as before pglite."""
    monkeypatch.setattr(pglite, "_libpq", lambda: None)


def run(cli, *args: str):
    result = cli(*args)
    return result.exit_code, result.stdout, result.stderr


def test_a_page_lists_the_same_bytes_as_through_psycopg(cli, db, source, monkeypatch):
    assert cli("session", "migrate", "--from", source, "--to", db.rw_url, "--all").exit_code == 0
    cases = [("--sort", sort, "--limit", limit, *filters, *fmt)
             for sort in ("updated", "created", "id") for limit in ("1", "3", "50")
             for filters in ((), ("--user", "user3"), ("--agent", "Compactor"), ("--user", "nobody"))
             for fmt in (("--json",), ())]
    lite = [run(cli, "session", "list", "--store", db.ro_url, *args) for args in cases]
    psycopg_only(monkeypatch)
    plain = [run(cli, "session", "list", "--store", db.ro_url, *args) for args in cases]
    assert lite == plain
    assert any(code == 0 and out.count("session_id") == 3 for code, out, _ in lite)


def test_the_listing_imports_no_psycopg(db, source, tmp_path):
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    subprocess.run([sys.executable, "-m", "praisonmem", "session", "migrate", "--from", str(source), "--to",
                    db.rw_url, "--all"], check=True, env=env, capture_output=True)
    probe = ("import runpy, sys\nsys.argv = ['praisonmem', 'session', 'list', '--store', sys.argv[1], '--json']\n"
             "try:\n    runpy.run_module('praisonmem', run_name='__main__')\nexcept SystemExit as exc:\n"
             "    assert not exc.code, exc.code\n"
             "sys.stderr.write('PSYCOPG ' + str(sorted(m for m in sys.modules if m.startswith('psycopg'))))\n")
    done = subprocess.run([sys.executable, "-c", probe, db.ro_url], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "PSYCOPG []" in done.stderr and '"session_id"' in done.stdout


def test_values_are_the_ones_psycopg_loads(db):
    import psycopg

    sql = ("SELECT 1::int2, 2::int4, 3::int8, 1.5::float8, 0.1::float4, 1e-7::float8, 'NaN'::float8, "
           "'-Infinity'::float8, 'x'::text, 'y é'::varchar(9), 'z'::name, 'c'::\"char\", 'b'::char(3), true, false, "
           "NULL::text, '{\"a\": [1, 2.5, null], \"b\": \"\\u00e9\"}'::jsonb, '[1, \"x\"]'::json, 26::oid, "
           "%s::text, %s::int8, %s::float8, array_to_json(%s::text[])::text, '100%%'")
    params = ("q'\"\\ é", 2**62, 0.25, ['a"b', "c\\d", "", "e,f", "{g}"])
    with pglite.read_transaction(db.ro_url, "db") as conn:
        ours = conn.execute(sql, params).fetchall()
    with psycopg.connect(db.ro_url) as conn:
        theirs = conn.execute(sql, params).fetchall()
    assert len(ours) == 1 and len(ours[0]) == 24
    for a, b in zip(ours[0], theirs[0]):
        assert type(a) is type(b) and (a == b or (isinstance(a, float) and math.isnan(a) and math.isnan(b))), (a, b)


@pytest.mark.parametrize("sql, params", [("SELECT 1.5::numeric", ()), ("SELECT now()", ()),
                                         ("SELECT %s::text", (True,)), ("SELECT %d", (1,)),
                                         ("SELECT %s, %s", ("one",)), ("SELECT %s", ()),
                                         ("SELECT * FROM no_such_table", None)])
def test_what_it_cannot_do_as_psycopg_would_is_left_to_psycopg(db, sql, params):
    with pytest.raises(pglite.Unavailable):
        with pglite.read_transaction(db.ro_url, "db") as conn:
            conn.execute(sql, params)


def test_errors_read_as_through_psycopg(cli, db, source, monkeypatch):
    assert cli("session", "migrate", "--from", source, "--to", db.rw_url, "--all").exit_code == 0
    role = f"pm_none_{os.getpid()}"  # a role that may connect but read no table
    db.psql(f"CREATE ROLE {role} LOGIN PASSWORD 'n0ne-Passw0rd'")
    cases = [(db.unreachable_url,), (db.url("rw", password="Wr0ng-Passw0rd"),),
             (db.url("rw").replace(f"{db.rw_user}:", f"{role}:").replace(db.rw_password, "n0ne-Passw0rd"),),
             (db.ro_url + "?options=-cdefault_transaction_isolation%3Dserializable",)]
    try:
        lite = [run(cli, "session", "list", "--store", url) for (url,) in cases]
        psycopg_only(monkeypatch)
        plain = [run(cli, "session", "list", "--store", url) for (url,) in cases]
    finally:
        db.psql(f"DROP ROLE {role}")
    assert lite == plain
    assert [code for code, _, _ in lite] == [5, 5, 5, 0]


def test_a_connection_that_times_out_says_so_as_psycopg_does(cli, monkeypatch):
    """A server that takes the connection and never answers: the same one line, after the URL's timeout (once)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    port = listener.getsockname()[1]
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(listener.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    url = f"postgresql://someone:Secr3t-pw@127.0.0.1:{port}/db?connect_timeout=2"
    try:
        lite = run(cli, "session", "list", "--store", url)
        psycopg_only(monkeypatch)
        plain = run(cli, "session", "list", "--store", url)
    finally:
        stop.set()
        thread.join()
        for conn in held:
            conn.close()
        listener.close()
    assert lite == plain
    assert lite[0] == 5 and lite[2].endswith("connection timeout expired\n") and "Secr3t" not in lite[2]


def test_a_transaction_is_read_only(db):
    with pytest.raises(pglite.Unavailable):  # the server refuses a write in it, psycopg then words that
        with pglite.read_transaction(db.rw_url, "db") as conn:
            conn.execute("CREATE TABLE t (x int)")
    assert db.psql("SELECT to_regclass('public.t') IS NULL").strip() == "t"


def test_a_praisonmem_error_inside_passes_through(db):
    with pytest.raises(PraisonMemError, match="mine"):
        with pglite.read_transaction(db.ro_url, "db") as conn:
            conn.execute("SELECT 1")
            raise PraisonMemError("mine")


def test_the_server_s_notices_never_reach_the_terminal(db, capfd):
    """libpq would print a notice on stderr as it came, escapes and all (psycopg logs it, and praisonmem's log
    goes nowhere)."""
    capfd.readouterr()
    with pglite.read_transaction(db.ro_url, "db") as conn:
        conn.execute("DO $$ BEGIN RAISE NOTICE E'\\x1b]0;pwned\\x07 %', 1; RAISE WARNING 'loud'; END $$")
    out, err = capfd.readouterr()
    assert (out, err) == ("", "")
