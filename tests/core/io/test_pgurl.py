"""core/io/pgurl.py: database URLs parsed and redacted, psycopg imported only when used, libpq's
environment honoured, and every failure one line with its exit code and no password in it."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from praisonmem.core.errors import (AuthFailed, ConnectionFailed, IOFailure, LockTimeout, NotFound, Refused,
                                    UsageError)
from praisonmem.core.io import pgurl
from tests.conftest import REPO
from tests.pgcluster import require_psycopg

SECRET = "Sup3r-S3cret.pw"


# ---------------------------------------------------------------- parsing


@pytest.mark.parametrize("text, conninfo", [
    ("postgresql://u@h/db", "postgresql://u@h/db"),
    ("postgres://u@h:5433/db?sslmode=disable", "postgresql://u@h:5433/db?sslmode=disable"),
    ("postgresql+psycopg://u@h/db", "postgresql://u@h/db"),
    ("POSTGRESQL+psycopg2://u@h/db", "postgresql://u@h/db"),
    ("postgresql://", "postgresql://"),
    ("postgresql:///?service=pmtest", "postgresql:///?service=pmtest"),
])
def test_postgres_urls_become_libpq_urls(text, conninfo):
    url = pgurl.parse(text)
    assert (url.kind, url.is_postgres, url.conninfo, url.path) == ("postgresql", True, conninfo, None)


@pytest.mark.parametrize("text, path", [
    ("sqlite:///data.db", Path("data.db")),
    ("sqlite:////abs/dir/data.db", Path("/abs/dir/data.db")),
    ("sqlite:///my%20file.db", Path("my file.db")),
    ("sqlite+pysqlite:///x.db", Path("x.db")),
])
def test_sqlite_urls_follow_sqlalchemy(text, path):
    url = pgurl.parse(text)
    assert (url.kind, url.is_postgres, url.path, str(url)) == ("sqlite", False, path, text)


@pytest.mark.parametrize("text, message", [
    ("mysql://u:pw1234@h/db", "unsupported database URL mysql://u:***@h/db"),
    ("sqlite://", "an in-memory database holds nothing"),
    ("sqlite:///", "names no file"),
    ("sqlite://host/x.db", "names a host"),
    ("sqlite:///x.db?mode=ro", "options are not supported"),
    ("just/a/path.db", "not a database URL"),
])
def test_bad_urls_are_usage_errors(text, message):
    with pytest.raises(UsageError) as info:
        pgurl.parse(text)
    assert message in info.value.message and "\n" not in info.value.message
    assert "pw1234" not in info.value.message


def test_is_url_tells_urls_from_paths():
    assert [pgurl.is_url(t) for t in ("postgresql://x", "sqlite:///a", "mysql://h", "a.db", "/x/y.db", "c:/x")] == [
        True, True, True, False, False, False]


# ---------------------------------------------------------------- redaction


@pytest.mark.parametrize("text, shown", [
    (f"postgresql://pm:{SECRET}@h:5432/db", "postgresql://pm:***@h:5432/db"),
    ("postgresql://pm:p%40ss%2Fw0rd@h/db", "postgresql://pm:***@h/db"),
    ("postgresql://pm:pa?ss1@h/db", "postgresql://pm:***@h/db"),  # '?' in it: libpq still reads a password
    ("postgresql://u:S3cretX@[::1/db", "postgresql://u:***@[::1/db"),  # unparseable: still masked
    ("postgresql://pm@h/db?sslmode=require&password=hunter22&x=1", "postgresql://pm@h/db?sslmode=require&password=***&x=1"),
    ("host=h password='a b\\' c' dbname=x", "host=h password=*** dbname=x"),
    ("host=h password=plain9 dbname=x", "host=h password=*** dbname=x"),
    ("postgresql://pm@h/db", "postgresql://pm@h/db"),
    ("postgresql://h:5432/db", "postgresql://h:5432/db"),
])
def test_redact_masks_every_form_of_password(text, shown):
    assert pgurl.redact(text) == shown
    url = pgurl.parse(text) if text.startswith("postgresql") else None
    if url is not None:
        assert str(url) == shown and shown in repr(url) and url.display == shown
        assert all(secret not in repr(url) for secret in ("Sup3r", "p%40ss", "pa@ss", "S3cretX", "hunter22"))


@pytest.mark.parametrize("text, shown", [
    ("postgresql://pm:pa@ss/wd@h/db", "postgresql://pm:***@h/db"),  # libpq: password 'pa', host 'ss', db 'wd@h/db'
    ("postgresql://u:pa@ssw0rd@127.0.0.1:1/db", "postgresql://u:***@127.0.0.1:1/db"),  # host 'ssw0rd@127.0.0.1'
    ("postgresql://u:pa/ssw0rd@h/db", "postgresql://u:***@h/db"),  # libpq: no password, host 'u', port 'pa'
    ("postgresql://h/my@db", "postgresql://h/my@db"),  # a database name holding '@': %40
    ("postgresql://u:pw@h/db?password=x@y1", "postgresql://u:***@y1"),  # and an option (masked widely)
    ("postgresql://u:pa@?a=@h:5432/db", "postgresql://u:***@h:5432/db"),  # libpq: option 'a' = '@h:5432/db'
])
def test_a_url_libpq_would_split_elsewhere_is_refused_masked(text, shown):
    """libpq ends the userinfo at the first '@' (or at a '/'), so an unencoded '@' or '/' in a password sends
    the rest of it to libpq as a host, port or database name, which its errors print: refused before that."""
    with pytest.raises(UsageError) as info:
        pgurl.parse(text)
    assert info.value.message == (f"invalid PostgreSQL URL {shown}: an '@' in the user name, password, database "
                                  "name or an option must be percent-encoded (%40), as must a '/' in the user name or "
                                  "password (%2F)")
    assert pgurl.redact(text) == shown
    assert all(piece not in info.value.message for piece in ("ssw0rd", "pa@", "pa/", ":pa"))


LIBPQ_URLS = ["postgresql://u:p@ss@h/db", "postgresql://u:pa?ss1@h/db", "postgresql://u:pa#ss@h/db",
              "postgresql://u:p%40ss@h/db", "postgresql://u@h/db?password=x@y", "postgresql://u:p:w@h/db",
              "postgresql://host1:5432,u:pw@host2/db", "postgresql://u:p,w@h/db", "postgresql://u:pw@/db?host=/tmp",
              "postgresql://u:pa/ss@h/db", "postgresql://pm:pa@ss/wd@h/db", "postgresql://h:5432/db",
              "postgresql://u:p[w@h/db", "postgresql://u:pw@h/db?password=other1"]


@pytest.mark.parametrize("text", LIBPQ_URLS)
def test_the_password_is_found_where_libpq_finds_it(text):
    """libpq's own parse (PQconninfoParse, through psycopg) is the oracle: the password it reads is among
    those praisonmem masks, and a URL praisonmem accepts gives libpq that very password."""
    conninfo_to_dict = require_psycopg().conninfo.conninfo_to_dict
    libpq = conninfo_to_dict(text).get("password")
    if libpq is not None:
        assert libpq in pgurl._passwords(text)
        assert libpq not in pgurl.redact(text).replace("postgresql", "")
    try:
        url = pgurl.parse(text)
    except UsageError:
        return
    assert conninfo_to_dict(url.conninfo) == conninfo_to_dict(text)
    info = pgurl._userinfo(text)
    assert info is None or info.libpq == info.end  # accepted: libpq and the writer agree where the userinfo ends


KV_PASSWORDS = st.text(st.characters(codec="utf-8", exclude_characters="\x00"), min_size=1, max_size=24)


def _quoted(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _escaped(value: str) -> str:
    return "".join("\\" + c if c.isspace() or c in "\\'" else c for c in value)


@settings(max_examples=300, deadline=None)
@given(password=KV_PASSWORDS, quote=st.booleans(), spaces=st.sampled_from(["", " ", "  "]))
def test_a_keyword_value_password_is_masked_by_libpqs_rules(password, quote, spaces):
    """Whatever the password holds (blanks, quotes, backslashes), libpq reads it back from the string, and
    redact leaves the string as it was but for that value."""
    pgurl.forget()
    conninfo_to_dict = require_psycopg().conninfo.conninfo_to_dict
    value = _quoted(password) if quote or not password.strip() else _escaped(password)
    text = f"host=h port=5432 password{spaces}={spaces}{value} dbname=x"
    assert conninfo_to_dict(text)["password"] == password
    assert pgurl.redact(text) == f"host=h port=5432 password{spaces}={spaces}*** dbname=x"
    assert password in pgurl._passwords(text)


URL_PASSWORDS = st.text(st.sampled_from("abc09@/:?#%&=+ ,[]'\"~"), min_size=1, max_size=16)


@settings(max_examples=300, deadline=None)
@given(password=URL_PASSWORDS)
def test_a_url_password_raw_or_encoded_is_masked_or_refused(password):
    """An unencoded password in a URL: either refused, or read by libpq as written; never shown."""
    from urllib.parse import quote

    pgurl.forget()
    conninfo_to_dict = require_psycopg().conninfo.conninfo_to_dict
    for written in (password, quote(password, safe="")):
        text = f"postgresql://pm:{written}@h:5432/db"
        try:
            url = pgurl.parse(text)
        except UsageError as exc:
            assert "@" in written or "/" in written, exc.message
            assert exc.message.startswith("invalid PostgreSQL URL postgresql://pm:***@h:5432/db: ")
            continue
        assert url.display == "postgresql://pm:***@h:5432/db"
        try:
            parsed = conninfo_to_dict(url.conninfo)
        except (require_psycopg().ProgrammingError, UnicodeDecodeError):  # a bad '%' escape: refused on connect
            with pytest.raises(UsageError):
                pgurl.connect(url)
            continue
        assert parsed["host"] == "h" and parsed.get("password", "") in pgurl._passwords(text) | {""}


def test_an_unterminated_quoted_password_is_masked_to_the_end():
    assert pgurl.redact("host=h password='a b c") == "host=h password=***"
    assert pgurl.redact("host=h password=a\\ b dbname=x") == "host=h password=*** dbname=x"


def test_mask_finds_urls_and_keyword_values_inside_a_message():
    assert pgurl.mask("unknown store 'host=h password=s3cr3t dbname=x'; this home has: json") == (
        "unknown store 'host=h password=*** dbname=x'; this home has: json")
    assert pgurl.mask("cannot connect to postgresql://u:pw12@h/db: user x@y not found") == (
        "cannot connect to postgresql://u:***@h/db: user x@y not found")


def test_a_short_remembered_password_is_masked_where_it_stands_alone():
    pgurl.remember("postgresql://u:p@h/db")
    assert pgurl.scrub('postgresql://u:p@h: host "p" not found') == 'postgresql://u:***@h: host "***" not found'


def test_scrub_removes_remembered_passwords_in_every_encoding():
    pgurl.parse("postgresql://pm:p%40ss%2Fw%C3%B6rd@h/db")
    text = "tokens: p%40ss%2Fw%C3%B6rd / p@ss/wörd / p%40ss%2Fw%C3%B6rd / p%40ss%2Fw%C3%B6rd"
    assert pgurl.scrub(text) == "tokens: *** / *** / *** / ***"
    assert pgurl.scrub("p@ss/wörd") == "***"


# ---------------------------------------------------------------- the lazy import


def run_python(code: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(REPO), **env}, timeout=60)


def test_psycopg_is_imported_only_when_a_postgres_url_is_opened():
    proc = run_python("""
        import sys
        from praisonmem.core.io import pgurl
        url = pgurl.parse("postgresql://u:pw@h/db")
        pgurl.redact(str(url)), pgurl.parse("sqlite:///x.db")
        assert "psycopg" not in sys.modules, "imported too early"
        pgurl.driver()
        assert "psycopg" in sys.modules
        print("ok")
    """)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "ok\n", "")


def test_without_psycopg_the_error_says_how_to_install_it():
    proc = run_python("""
        import sys
        sys.modules["psycopg"] = None  # import psycopg now raises ImportError, as when it is not installed
        from praisonmem.core.errors import IOFailure
        from praisonmem.core.io import pgurl
        try:
            pgurl.connect(pgurl.parse("postgresql://u:Pw-123456@127.0.0.1:1/db"))
        except IOFailure as exc:
            print(exc.exit_code, exc.message)
    """)
    assert (proc.returncode, proc.stdout) == (0, "5 PostgreSQL support needs psycopg: pip install 'praisonmem[postgres]'\n")


# ---------------------------------------------------------------- against the real server


def _conn_user(url: str) -> tuple:
    with pgurl.transaction(pgurl.parse(url), read_only=True) as conn:
        return conn.execute("SELECT current_user, current_setting('application_name'), "
                            "current_setting('transaction_read_only')").fetchone()


def test_connects_with_the_password_in_the_url_and_names_itself(pg):
    require_psycopg()
    assert _conn_user(pg.rw_url) == ("pm_rw", "praisonmem", "on")
    assert _conn_user(pg.url("rw", application_name="mine")) == ("pm_rw", "mine", "on")


def test_pgpassword_supplies_the_password(pg, monkeypatch):
    require_psycopg()
    monkeypatch.setenv("PGPASSWORD", pg.rw_password)
    assert _conn_user(pg.url("rw", password=False)) == ("pm_rw", "praisonmem", "on")
    assert pgurl.scrub(f"echoed {pg.rw_password}!") == "echoed ***!"  # masked in any message, too
    monkeypatch.setenv("PGAPPNAME", "from-env")
    assert _conn_user(pg.url("rw", password=False, socket=True))[1] == "from-env"


def test_pgpass_in_home_supplies_the_password_and_a_world_readable_one_is_ignored(pg):
    require_psycopg()
    pgpass = Path.home() / ".pgpass"
    pgpass.write_text(f"127.0.0.1:{pg.port}:{pg.name}:pm_ro:{pg.ro_password}\n")
    pgpass.chmod(0o600)
    assert _conn_user(pg.url("ro", password=False))[0] == "pm_ro"
    pgpass.chmod(0o644)  # libpq warns on stderr and ignores the file
    with pytest.raises(AuthFailed, match="no password supplied"):
        _conn_user(pg.url("ro", password=False))


def test_service_files_and_pgservice(pg, monkeypatch, tmp_path):
    require_psycopg()
    service = f"[pmtest]\nhost=127.0.0.1\nport={pg.port}\ndbname={pg.name}\nuser=pm_rw\npassword={pg.rw_password}\n"
    (Path.home() / ".pg_service.conf").write_text(service)
    assert _conn_user("postgresql:///?service=pmtest")[0] == "pm_rw"
    monkeypatch.setenv("PGSERVICE", "pmtest")
    assert _conn_user("postgresql://")[0] == "pm_rw"
    monkeypatch.delenv("PGSERVICE")
    (Path.home() / ".pg_service.conf").unlink()
    elsewhere = tmp_path / "services.conf"
    elsewhere.write_text(service.replace("pmtest", "other"))
    monkeypatch.setenv("PGSERVICEFILE", str(elsewhere))
    assert _conn_user("postgresql:///?service=other")[0] == "pm_rw"


def test_connect_timeout_defaults_to_ten_seconds_unless_the_url_or_env_says(pg, monkeypatch):
    require_psycopg()

    def timeout(url: str) -> str:
        conn = pgurl.connect(pgurl.parse(url))
        try:
            return dict(p.split("=", 1) for p in conn.info.dsn.split())["connect_timeout"]
        finally:
            conn.close()

    assert timeout(pg.rw_url) == "10"
    assert timeout(pg.url("rw", connect_timeout="3")) == "3"
    monkeypatch.setenv("PGCONNECT_TIMEOUT", "7")
    assert timeout(pg.rw_url) == "7"


def _one_line(exc: BaseException) -> str:
    message = exc.message  # type: ignore[attr-defined]
    assert "\n" not in message
    return message


def test_unreachable_server(pg):
    require_psycopg()
    url = pg.url("rw", port=1, password=SECRET)
    with pytest.raises(ConnectionFailed) as info:
        pgurl.connect(pgurl.parse(url))
    message = _one_line(info.value)
    assert info.value.exit_code == 5 and info.value.code == "connection_failed"
    assert message == (f"cannot connect to postgresql://pm_rw:***@127.0.0.1:1/{pg.name}: connection to server at "
                       '"127.0.0.1", port 1 failed: Connection refused')


def test_wrong_password(pg):
    require_psycopg()
    with pytest.raises(AuthFailed) as info:
        pgurl.connect(pgurl.parse(pg.url("rw", password=SECRET)))
    message = _one_line(info.value)
    assert (info.value.exit_code, info.value.code) == (5, "auth_failed")
    assert 'FATAL: password authentication failed for user "pm_rw"' in message and SECRET not in message
    assert message.startswith(f"cannot connect to postgresql://pm_rw:***@127.0.0.1:{pg.port}/{pg.name}: ")


def test_no_such_database(pg):
    require_psycopg()
    with pytest.raises(ConnectionFailed, match='database "nosuchdb" does not exist'):
        pgurl.connect(pgurl.parse(pg.url("rw", dbname="nosuchdb")))


@pytest.mark.parametrize("text, shown", [
    (f"postgresql://u:{SECRET}%zz@127.0.0.1:1/db", "invalid PostgreSQL URL postgresql://u:***@127.0.0.1:1/db: "
                                                   'invalid percent-encoded token: "***"'),
    (f"postgresql://u:{SECRET}@[::1/db", "invalid PostgreSQL URL postgresql://u:***@[::1/db: end of string reached "
                                         'when looking for matching "]" in IPv6 host address in URI: '
                                         '"postgresql://u:***@[::1/db"'),
    (f"postgresql://u:{SECRET}@h/db?bogus=1", 'invalid URI query parameter: "bogus"'),
])
def test_urls_libpq_cannot_parse_never_echo_the_password(text, shown):
    require_psycopg()
    with pytest.raises(UsageError) as info:
        pgurl.connect(pgurl.parse(text))
    assert shown in _one_line(info.value) and SECRET not in info.value.message


def test_a_reader_cannot_write_and_a_read_only_role_neither(pg):
    psycopg = require_psycopg()
    with psycopg.connect(pg.rw_url, autocommit=True) as conn:
        conn.execute("CREATE TABLE t (id int PRIMARY KEY)")
    with pytest.raises(IOFailure) as info:
        with pgurl.transaction(pgurl.parse(pg.rw_url), read_only=True) as conn:
            conn.execute("INSERT INTO t VALUES (1)")
    assert _one_line(info.value) == (f"postgresql://pm_rw:***@127.0.0.1:{pg.port}/{pg.name}: cannot execute INSERT "
                                     "in a read-only transaction (the server or the session is read-only)")
    with pytest.raises(IOFailure) as info:
        with pgurl.transaction(pgurl.parse(pg.ro_url), read_only=False) as conn:
            conn.execute("INSERT INTO t VALUES (2)")
    assert _one_line(info.value) == (f"postgresql://pm_ro:***@127.0.0.1:{pg.port}/{pg.name}: permission denied for "
                                     "table t (the role may not write here); nothing written")
    assert pg.psql("SELECT count(*) FROM t;") == "0\n"


def test_a_failing_block_rolls_back_and_a_praisonmem_error_passes_through(pg):
    psycopg = require_psycopg()
    with psycopg.connect(pg.rw_url, autocommit=True) as conn:
        conn.execute("CREATE TABLE t (id int PRIMARY KEY)")
    with pytest.raises(Refused, match="mine"):
        with pgurl.transaction(pgurl.parse(pg.rw_url), read_only=False) as conn:
            conn.execute("INSERT INTO t VALUES (1)")
            raise Refused("mine")
    with pytest.raises(NotFound, match='relation "nope" does not exist'):
        with pgurl.transaction(pgurl.parse(pg.rw_url), read_only=False) as conn:
            conn.execute("INSERT INTO t VALUES (2)")
            conn.execute("SELECT * FROM nope")
    with pgurl.transaction(pgurl.parse(pg.rw_url), read_only=False) as conn:
        conn.execute("INSERT INTO t VALUES (3)")
    assert pg.psql("SELECT id FROM t;") == "3\n"


def test_a_row_locked_longer_than_the_lock_timeout(pg):
    psycopg = require_psycopg()
    holder = psycopg.connect(pg.rw_url)
    holder.execute("CREATE TABLE t (id int PRIMARY KEY, v int)")
    holder.execute("INSERT INTO t VALUES (1, 0)")
    holder.commit()
    holder.execute("SELECT * FROM t WHERE id = 1 FOR UPDATE")
    try:
        with pytest.raises(LockTimeout) as info:
            with pgurl.transaction(pgurl.parse(pg.rw_url), read_only=False, lock_timeout=0.2) as conn:
                conn.execute("UPDATE t SET v = 1 WHERE id = 1")
        assert info.value.exit_code == 4
        assert "locked by another writer (waited 0.2s): canceling statement due to lock timeout; nothing written" \
            in _one_line(info.value)
    finally:
        holder.rollback()
        holder.close()
    assert pg.psql("SELECT v FROM t;") == "0\n"


def test_values_postgres_refuses_are_usage_errors(pg):
    psycopg = require_psycopg()
    with psycopg.connect(pg.rw_url, autocommit=True) as conn:
        conn.execute("CREATE TABLE t (j jsonb, s text)")
    with pytest.raises(UsageError, match="PostgreSQL refused a value: .*unsupported Unicode escape sequence"):
        with pgurl.transaction(pgurl.parse(pg.rw_url), read_only=False) as conn:
            conn.execute("INSERT INTO t (j) VALUES (%s::jsonb)", ('{"\\u0000": 1}',))
    with pytest.raises(UsageError, match="PostgreSQL refused a value: .*NUL"):
        with pgurl.transaction(pgurl.parse(pg.rw_url), read_only=False) as conn:
            conn.execute("INSERT INTO t (s) VALUES (%s)", ("a\x00b",))


def test_columns_and_schema_lookups(pg):
    psycopg = require_psycopg()
    with psycopg.connect(pg.rw_url, autocommit=True) as conn:
        conn.execute('CREATE SCHEMA "Mixed"')
        conn.execute('CREATE TABLE "Mixed"."T" (a varchar NOT NULL, "B" jsonb, c bigint)')
        conn.execute('ALTER TABLE "Mixed"."T" DROP COLUMN c')
    with pgurl.transaction(pgurl.parse(pg.ro_url), read_only=True) as conn:
        assert pgurl.columns(conn, "Mixed", "T") == {"a": "character varying", "B": "jsonb"}
        assert pgurl.columns(conn, "mixed", "t") is None
        assert (pgurl.schema_exists(conn, "Mixed"), pgurl.schema_exists(conn, "mixed")) == (True, False)
