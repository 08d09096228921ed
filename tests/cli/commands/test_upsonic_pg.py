"""praisonmem upsonic … --db postgresql://…: every command on the real PostgresStorage tables, read commands
that change nothing (rows and the server's statement log), and the bad inputs: each one line, its exit code,
nothing written, no password anywhere."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import textwrap
import urllib.parse
from pathlib import Path

import pytest

from tests.cli.commands.test_upsonic import SHOWN
from tests.conftest import REPO
from tests.helpers import normalise_times
from tests.pgcluster import require_psycopg
from tests.upsonicpg import load, log_statements, logged, snapshot


@pytest.fixture
def ups(pg):
    require_psycopg()
    load(pg)
    return pg


def secrets_of(pg) -> list[str]:
    return [s for p in (pg.rw_password, pg.ro_password, "Wr0ng-Passw0rd")
            for s in (p, urllib.parse.quote(p, safe=""))]


def assert_no_secret(pg, *texts: str) -> None:
    for text in texts:
        for secret in secrets_of(pg):
            assert secret not in text


# JSONB keeps keys shortest first: the library reads them back in that order too
SHOWN_PG = SHOWN.replace('Metadata  {"channel": "web", "locale": "en-US"}', 'Metadata  {"locale": "en-US", "channel": "web"}') \
    .replace('Usage     {"requests": 3, "input_tokens": 300, "output_tokens": 84, "duration": 2.5,',
             'Usage     {"duration": 2.5, "requests": 3, "input_tokens": 300, "output_tokens": 84,') \
    .replace('fx_convert({"amount": 250, "from": "USD", "to": "EUR"})', 'fx_convert({"to": "EUR", "from": "USD", "amount": 250})')


def run_python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=60)


def test_sqlite_commands_never_import_the_postgres_driver(db):
    proc = run_python(f"""
        import sys
        from praisonmem.cli.app import run
        assert run(["upsonic", "sessions", "--db", {str(db)!r}]) == 0
        assert run(["upsonic", "user-memory", "set", "user_123", "a=1", "--db", "sqlite:///{db}"]) == 0
        assert "psycopg" not in sys.modules
    """)
    assert (proc.returncode, "Traceback" in proc.stderr) == (0, False), proc.stderr


def test_without_psycopg_a_postgres_url_says_how_to_install_it():
    proc = run_python("""
        import sys
        sys.modules["psycopg"] = None  # import psycopg now raises ImportError, as when it is not installed
        from praisonmem.cli.app import run
        sys.exit(run(["upsonic", "sessions", "--db", "postgresql://u:Pw-123456@127.0.0.1:1/db"]))
    """)
    assert (proc.returncode, proc.stdout) == (5, "")
    assert proc.stderr == "praisonmem: error: PostgreSQL support needs psycopg: pip install 'praisonmem[postgres]'\n"


def test_sessions_and_show_on_postgres(cli, ups):
    rows = cli("upsonic", "sessions", "--db", ups.rw_url, "--json").json()
    assert [(r["session_id"], r["user_id"], r["message_count"], r["run_count"]) for r in rows] == [
        ("session_002", "user_123", 2, 1), ("session_001", "user_123", 6, 2), ("session_004", None, 0, 0),
        ("session_003", "user_456", 2, 0)]
    shown = cli("upsonic", "show", "session_001", "--db", ups.rw_url, "--runs")
    assert (shown.exit_code, normalise_times(shown.stdout), shown.stderr) == (0, SHOWN_PG, "")
    assert cli("upsonic", "show", "session_003", "--db", ups.ro_url, "--json").json()["metadata"] == {
        "channel": "slack", "tags": ["de", "support"]}


def test_the_password_may_come_from_libpq_instead_of_the_url(cli, ups, monkeypatch):
    monkeypatch.setenv("PGPASSWORD", ups.ro_password)
    assert len(cli("upsonic", "sessions", "--db", ups.url("ro", password=False), "--json").json()) == 4
    monkeypatch.delenv("PGPASSWORD")
    (Path.home() / ".pg_service.conf").write_text(f"[agents]\nhost=127.0.0.1\nport={ups.port}\ndbname={ups.name}\n"
                                                  f"user=pm_rw\npassword={ups.rw_password}\n")
    monkeypatch.setenv("PGSERVICE", "agents")
    assert cli("upsonic", "user-memory", "set", "user_123", "via=service", "--db", "postgresql://").exit_code == 0
    assert cli("upsonic", "user-memory", "user_123", "--db", "postgresql:///?service=agents",
               "--json").json()["user_memory"]["via"] == "service"


def test_the_sqlite_url_form_opens_the_file(cli, db, monkeypatch):
    monkeypatch.chdir(db.parent)
    assert len(cli("upsonic", "sessions", "--db", "sqlite:///data.db", "--json").json()) == 4
    assert len(cli("upsonic", "sessions", "--db", f"sqlite:///{db}", "--json").json()) == 4  # sqlite:////abs


def test_user_memory_show_set_unset_replace(cli, ups, tmp_path):
    url = ups.rw_url
    before = cli("upsonic", "user-memory", "user_456", "--db", url, "--json").json()["user_memory"]
    done = cli("upsonic", "user-memory", "set", "user_456", "role=admin", 'tags=["a", "b"]', "--db", url)
    assert done.exit_code == 0 and done.stdout.startswith("wrote user memory of 'user_456'\n")
    assert cli("upsonic", "user-memory", "user_456", "--db", url, "--json").json()["user_memory"] == {
        **before, "role": "admin", "tags": ["a", "b"]}
    assert cli("upsonic", "user-memory", "unset", "user_456", "tags", "--db", url).exit_code == 0
    new = tmp_path / "traits.json"
    new.write_text('{"only": "this"}')
    assert cli("upsonic", "user-memory", "replace", "user_456", "--from", new, "--db", url, "--yes").stdout == \
        "wrote user memory of 'user_456'\nonly: this\n"
    psycopg = require_psycopg()
    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT user_memory::text, created_at FROM upsonic_user_memories WHERE user_id = "
                            "'user_456'").fetchone() == ('{"only": "this"}', 1736935200)


def test_read_commands_change_nothing_and_send_only_read_only_transactions(cli, ups, tmp_path):
    since = log_statements(ups)
    before = snapshot(ups)
    for args in (["sessions"], ["sessions", "--json"], ["sessions", "--user", "user_123", "--ndjson"],
                 ["show", "session_001", "--runs"], ["show", "session_002", "--json"], ["user-memory", "user_123"],
                 ["user-memory", "show", "user_456", "--json"], ["user-memory", "set", "user_123", "x=1", "--dry-run"],
                 ["export", "-o", "-"], ["import", str(tmp_path / "e.json"), "--dry-run"]):
        if args[0] == "import":
            cli("upsonic", "export", "--db", ups.rw_url, "-o", tmp_path / "e.json")
        result = cli("upsonic", *args, "--db", ups.rw_url)
        assert result.exit_code == 0, (args, result.stderr)
    assert snapshot(ups) == before
    statements = logged(ups, since)
    assert statements and statements.count("BEGIN READ ONLY") == sum(1 for s in statements if s.startswith("BEGIN"))
    verbs = {s.split()[0].upper() for s in statements}
    assert verbs <= {"BEGIN", "SELECT", "COMMIT"}, verbs


def test_export_from_postgres_imports_into_sqlite_as_the_library_stores_it(cli, ups, db, tmp_path):
    out = tmp_path / "export.json"
    done = cli("upsonic", "export", "--db", ups.rw_url, "-o", out)
    assert done.exit_code == 0
    payload = json.loads(out.read_text())
    assert payload["source"] == ups.url("rw", password="***").replace("%2A%2A%2A", "***")
    assert_no_secret(ups, out.read_text(), done.stderr)
    target = tmp_path / "copy.db"
    assert cli("upsonic", "import", out, "--db", target).exit_code == 0
    copy = sqlite3.connect(target)
    original = sqlite3.connect(db)
    for column in ("user_memory", "agent_id", "team_id", "created_at"):
        query = f"SELECT user_id, {column} FROM upsonic_user_memories ORDER BY 1"
        mine = copy.execute(query).fetchall()
        theirs = original.execute(query).fetchall()
        if column == "user_memory":  # JSONB reordered the keys; the values are the library's
            mine, theirs = [(u, json.loads(m)) for u, m in mine], [(u, json.loads(m)) for u, m in theirs]
        assert mine == theirs, column
    assert copy.execute("SELECT typeof(messages), json_type(messages) FROM upsonic_sessions "
                        "WHERE session_id = 'session_001'").fetchone() == ("text", "text")  # double-encoded again


def test_import_and_convert_into_postgres(cli, db, pg, tmp_path, fixture_home):
    require_psycopg()
    out = tmp_path / "export.json"
    cli("upsonic", "export", "--db", db, "-o", out)
    dry = cli("upsonic", "import", out, "--db", pg.rw_url, "--dry-run")
    assert dry.stdout.count("would insert") == 6 and snapshot(pg)["relations"] == []
    assert cli("upsonic", "import", out, "--db", pg.rw_url).stdout.count("inserted ") == 6
    again = cli("upsonic", "import", out, "--db", pg.rw_url)
    assert again.exit_code == 4 and "--yes" in again.stderr
    assert cli("upsonic", "import", out, "--db", pg.rw_url, "--yes").stdout.count("updated ") == 6
    back = cli("--home", fixture_home, "upsonic", "convert", "history_ec9d38c8", "--from-praisonai", "--db", pg.rw_url)
    assert (back.exit_code, back.stdout) == (0, "inserted history_ec9d38c8\n")
    assert cli("upsonic", "show", "history_ec9d38c8", "--db", pg.rw_url).stdout.count("→ tool call weather") == 1
    wrote = cli("upsonic", "convert", "session_003", "--to-praisonai", "--db", pg.rw_url, "--home", tmp_path / "h")
    assert wrote.exit_code == 0
    doc = json.loads((tmp_path / "h" / "sessions" / "session_003.json").read_text())
    assert doc["messages"][0]["content"] == "Hallo! Kannst du Deutsch?"
    psycopg = require_psycopg()
    with psycopg.connect(pg.rw_url) as conn:  # in the server, not in a file named after the URL
        assert conn.execute("SELECT count(*), count(*) FILTER (WHERE jsonb_typeof(messages) = 'array') "
                            "FROM upsonic_sessions").fetchone() == (5, 5)
    assert list(Path.cwd().iterdir()) == []


def test_config_upsonic_db_takes_a_url_and_never_shows_its_password(cli, ups, config):
    assert cli("config", "set", "upsonic.db", ups.rw_url).exit_code == 0
    assert len(cli("upsonic", "sessions", "--json").json()) == 4
    shown = [cli("config", "show"), cli("config", "show", "--json"), cli("config", "get", "upsonic.db"),
             cli("config", "get", "upsonic.db", "--json"), cli("workspace", "paths"),
             cli("workspace", "paths", "--json"), cli("config", "set", "upsonic.db", ups.rw_url),
             cli("config", "set", "upsonic.db", ups.rw_url, "--json")]
    assert all(r.exit_code == 0 for r in shown), [r.stderr for r in shown]
    assert_no_secret(ups, *(r.stdout + r.stderr for r in shown))
    masked = f"postgresql://pm_rw:***@127.0.0.1:{ups.port}/{ups.name}"
    assert cli("config", "get", "upsonic.db").stdout == masked + "\n"
    paths = {r["name"]: r for r in cli("workspace", "paths", "--json").json()}
    assert paths["upsonic_db"] == {"name": "upsonic_db", "path": masked, "source": "config", "exists": None}
    assert (config.stat().st_mode & 0o777) == 0o600


# ---------------------------------------------------------------- bad inputs

WRITES = [["user-memory", "set", "user_123", "a=1"], ["user-memory", "unset", "user_123", "current_goal"],
          ["import", "{export}", "--yes"], ["convert", "history_ec9d38c8", "--from-praisonai", "--home", "{home}"]]
READS = [["sessions"], ["show", "session_001"], ["user-memory", "user_123"], ["export", "-o", "-"]]


def run_bad(cli, pg, url: str, args: list[str], tmp_path, fixture_home, *, as_json: bool = False):
    export = tmp_path / "export.json"
    if not export.exists():
        export.write_text(json.dumps({"format": "praisonmem-upsonic", "users": [
            {"user_id": "user_123", "user_memory": {"a": 1}, "agent_id": None, "team_id": None, "created_at": 1,
             "updated_at": 1}], "sessions": []}))
    args = [a.format(export=export, home=fixture_home) for a in args]
    return cli("upsonic", *args, "--db", url, *(["--json"] if as_json else []))


def check_refused(cli, pg, url, tmp_path, fixture_home, cases, code: int, message: str) -> None:
    before = snapshot(pg)
    for args in cases:
        for as_json in (False, True):
            result = run_bad(cli, pg, url, args, tmp_path, fixture_home, as_json=as_json)
            assert result.exit_code == code, (args, result.stderr)
            assert result.stderr.count("\n") == 1 and result.stdout == "", (args, result.stderr)
            if as_json:
                error = json.loads(result.stderr)["error"]
                assert error["exit_code"] == code and message in error["message"], (args, error)
            else:
                assert result.stderr.startswith("praisonmem: error: ") and message in result.stderr, args
            assert_no_secret(pg, result.stderr)
    assert snapshot(pg) == before


def test_bad_input_unreachable_server(cli, pg, tmp_path, fixture_home):
    require_psycopg()
    check_refused(cli, pg, pg.unreachable_url, tmp_path, fixture_home, READS + WRITES, 5,
                  f"cannot connect to postgresql://pm_rw:***@127.0.0.1:1/{pg.name}: connection to server at "
                  '"127.0.0.1", port 1 failed: Connection refused')


def test_bad_input_wrong_password(cli, ups, tmp_path, fixture_home):
    check_refused(cli, ups, ups.url("rw", password="Wr0ng-Passw0rd"), tmp_path, fixture_home, READS + WRITES, 5,
                  'password authentication failed for user "pm_rw"')
    check_refused(cli, ups, ups.url("rw", password=False), tmp_path, fixture_home, READS[:1] + WRITES[:1], 5,
                  "no password supplied")


def test_bad_input_missing_tables(cli, pg, tmp_path, fixture_home):
    require_psycopg()
    check_refused(cli, pg, pg.rw_url, tmp_path, fixture_home, READS[:3] + WRITES[:2], 3,
                  "no Upsonic tables (public.upsonic_sessions, public.upsonic_user_memories) in database")


@pytest.mark.parametrize("other", ["praisonai", "foreign_upsonic_names"])
def test_bad_input_a_database_of_another_app(cli, pg, tmp_path, fixture_home, other):
    psycopg = require_psycopg()
    with psycopg.connect(pg.rw_url) as conn:
        if other == "praisonai":  # PraisonAI's conversation store: not Upsonic's, so there is nothing to read
            conn.execute("CREATE TABLE praison_sessions (session_id VARCHAR(255) PRIMARY KEY, state JSONB)")
            conn.execute("INSERT INTO praison_sessions VALUES ('s1', '{}')")
        else:  # tables with Upsonic's names and another app's columns: refused, even for import
            conn.execute("CREATE TABLE upsonic_sessions (session_id text PRIMARY KEY, body text, created_at bigint)")
            conn.execute("CREATE TABLE upsonic_user_memories (user_id text PRIMARY KEY, traits jsonb)")
            conn.execute("INSERT INTO upsonic_user_memories VALUES ('user_123', '{\"a\": 0}')")
    if other == "praisonai":
        check_refused(cli, pg, pg.rw_url, tmp_path, fixture_home, READS[:3] + WRITES[:2], 3, "no Upsonic tables")
    else:
        check_refused(cli, pg, pg.rw_url, tmp_path, fixture_home, READS + WRITES, 4,
                      "table 'public.upsonic_sessions' does not have Upsonic 0.77.3's columns (missing: agent_data")


def test_bad_input_a_read_only_role_asked_to_write(cli, ups, tmp_path, fixture_home):
    check_refused(cli, ups, ups.ro_url, tmp_path, fixture_home, WRITES, 5, "(the role may not write here); nothing written")
    assert cli("upsonic", "user-memory", "set", "user_123", "a=1", "--db", ups.ro_url, "--dry-run").exit_code == 0


def test_bad_input_a_read_only_role_importing_into_an_empty_database(cli, pg, tmp_path, fixture_home):
    require_psycopg()
    check_refused(cli, pg, pg.ro_url, tmp_path, fixture_home, WRITES[2:], 5,
                  "permission denied for schema public (the role may not write here); nothing written")


@pytest.mark.parametrize("url, code, message", [
    ("postgresql://pm_rw:{pw}@[::1/x", 2, "invalid PostgreSQL URL postgresql://pm_rw:***@[::1/x"),
    ("postgresql://pm_rw:{pw}%zz@127.0.0.1:1/x", 2, 'invalid percent-encoded token: "***"'),
    ("mysql://pm_rw:{pw}@h/x", 2, "unsupported database URL mysql://pm_rw:***@h/x"),
    ("postgresql://pm_rw:{pw}@127.0.0.1:1/x?bogus=1", 2, 'invalid URI query parameter: "bogus"'),
])
def test_bad_input_urls_with_a_password(cli, pg, url, code, message):
    require_psycopg()
    url = url.format(pw=pg.rw_password)
    for args in (["sessions"], ["user-memory", "set", "u", "a=1"]):
        for as_json in ([], ["--json"]):
            result = cli("upsonic", *args, "--db", url, *as_json)
            assert (result.exit_code, result.stdout, result.stderr.count("\n")) == (code, "", 1), result.stderr
            assert message in (json.loads(result.stderr)["error"]["message"] if as_json else result.stderr)
            assert_no_secret(pg, result.stderr)


def test_schema_is_a_postgres_option(cli, db):
    result = cli("upsonic", "sessions", "--db", db, "--schema", "x")
    assert (result.exit_code, result.stderr) == (2, "praisonmem: error: --schema is a PostgreSQL option; an SQLite "
                                                    "file has no schemas\n")


def test_a_planted_pickle_is_never_unpickled(cli, ups, tmp_path):
    import base64
    import pickle
    import subprocess
    import sys

    canary = tmp_path / "pwned"

    class Payload:
        def __reduce__(self):
            return (open, (str(canary), "w"))

    blob = base64.b64encode(pickle.dumps(Payload())).decode()
    check = subprocess.run([sys.executable, "-c", "import base64, pickle, sys; "
                            "pickle.loads(base64.b64decode(sys.argv[1]))", blob], capture_output=True)
    assert check.returncode == 0 and canary.exists(), "the payload must be live for this test to mean anything"
    canary.unlink()
    psycopg = require_psycopg()
    with psycopg.connect(ups.rw_url) as conn:
        conn.execute("UPDATE upsonic_sessions SET runs = jsonb_set(runs, '{run_0001,output,output}', %s::jsonb) "
                     "WHERE session_id = 'session_001'", (json.dumps({"__pickled__": blob}),))
    for args in (["sessions"], ["show", "session_001", "--runs"], ["show", "session_001", "--json"],
                 ["export", "-o", str(tmp_path / "x.json")],
                 ["convert", "session_001", "--to-praisonai", "--home", str(tmp_path / "home")]):
        result = cli("upsonic", *args, "--db", ups.rw_url)
        assert result.exit_code == 0, (args, result.stderr)
    assert "output: ‹pickled value, not loaded›" in cli("upsonic", "show", "session_001", "--db", ups.rw_url,
                                                        "--runs").stdout
    assert not canary.exists()


def test_a_misplaced_url_is_masked_in_the_usage_error(cli, pg):
    for args in (["upsonic", "sessions", pg.rw_url], ["upsonic", "sessions", "--json", pg.rw_url],
                 ["upsonic", "sessions", f"--db={pg.rw_url}", "--limit", "x", "extra"]):
        result = cli(*args)
        assert (result.exit_code, result.stdout, result.stderr.count("\n")) == (2, "", 1), result.stderr
        assert_no_secret(pg, result.stderr)
    assert "got unexpected extra argument(s) (postgresql://pm_rw:***@127.0.0.1:" in cli(
        "upsonic", "sessions", pg.rw_url).stderr
