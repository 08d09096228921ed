"""PraisonAI's conversation tables on a real PostgreSQL server: ``session migrate`` JSON → PostgreSQL → JSON
byte-identical, idempotent and resumable after a SIGKILL; the session commands with ``--store postgresql://``;
and the bad inputs (unreachable, wrong password, missing tables, another app's tables, a read-only role):
each one line, its exit code, nothing written, no password anywhere."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.parse

import pytest

from tests.cli.commands.test_session_conversation import source, tree  # noqa: F401  (fixture)
from tests.conftest import REPO
from tests.pgcluster import require_psycopg


@pytest.fixture
def db(pg):
    require_psycopg()
    return pg


def count(pg, table: str = "praison_sessions", schema: str = "public") -> int:
    exists = pg.psql(f"SELECT to_regclass('{schema}.{table}') IS NOT NULL").strip()
    return int(pg.psql(f"SELECT count(*) FROM {schema}.{table}").strip()) if exists == "t" else -1


def no_secret(pg, *texts: str) -> None:
    for text in texts:
        for secret in (pg.rw_password, pg.ro_password, "Wr0ng-Passw0rd"):
            assert secret not in text and urllib.parse.quote(secret, safe="") not in text


def test_json_to_postgres_to_json_is_byte_identical_verified_and_idempotent(cli, db, source, tmp_path):
    first = cli("session", "migrate", "--from", source, "--to", db.rw_url, "--all", "--verify", "--json")
    assert first.exit_code == 0, first.stderr
    assert (first.json()["copied"], first.json()["messages"]) == (37, 539)
    no_secret(db, first.stdout, first.stderr)
    assert (count(db), count(db, "praison_messages")) == (37, 539)
    again = cli("session", "migrate", "--from", source, "--to", db.rw_url, "--all", "--verify", "--json")
    assert (again.exit_code, again.json()["unchanged"], again.json()["messages"]) == (0, 37, 0)
    back = tmp_path / "back"
    out = cli("session", "migrate", "--from", db.ro_url, "--to", back, "--all", "--verify")
    assert out.exit_code == 0, out.stderr
    assert tree(back) == tree(source)


def test_session_commands_on_postgres(cli, db, source, tmp_path):
    assert cli("session", "migrate", "--from", source, "--to", db.rw_url, "--all").exit_code == 0
    from praisonmem.core.sessions.stores.conversation_map import iso_epoch

    docs = [json.loads(f.read_text()) for f in source.glob("*.json")]
    newest = sorted(docs, key=lambda d: (-iso_epoch(d["updated_at"]), d["session_id"]))[:3]
    rows = cli("session", "list", "--store", db.ro_url, "--limit", "3", "--json").json()
    assert [r["session_id"] for r in rows] == [d["session_id"] for d in newest]
    assert [iso_epoch(r["updated_at"]) for r in rows] == [iso_epoch(d["updated_at"]) for d in newest]
    compacted = cli("session", "list", "--store", db.ro_url, "--agent", "Compactor", "--json").json()
    assert [(r["session_id"], r["message_count"], r["archived_count"]) for r in compacted] == [
        ("compacted-demo", 5, 5)]
    by_user = cli("session", "list", "--store", db.ro_url, "--user", "user3", "--sort", "id", "--limit", "0",
                  "--json").json()
    assert [r["session_id"] for r in by_user] == [f"bench-{i:05}" for i in range(25) if i % 5 == 3]
    shown = cli("session", "show", "compacted-demo", "--store", db.ro_url, "--json")
    assert shown.stdout.encode() == (source / "compacted-demo.json").read_bytes() + b"\n"
    hits = cli("session", "search", "Alfama", "--store", db.ro_url, "--json").json()
    assert {h["session_id"] for h in hits} == {"compacted-demo"}
    assert cli("session", "rename", "bench-00004", "pg-renamed", "--store", db.rw_url, "--force").exit_code == 0
    assert cli("session", "delete", "bench-00005", "--store", db.rw_url, "--yes", "--force").exit_code == 0
    assert db.psql("SELECT count(*) FROM praison_messages WHERE session_id IN ('bench-00004', 'bench-00005')"
                   ).strip() == "0"
    assert db.psql("SELECT count(*) FROM praison_messages WHERE session_id = 'pg-renamed'").strip() == "20"


def test_reads_use_read_only_transactions_and_change_nothing(cli, db, source):
    assert cli("session", "migrate", "--from", source, "--to", db.rw_url, "--all").exit_code == 0
    before = db.psql("SELECT md5(string_agg(t::text, ',' ORDER BY t::text)) FROM public.praison_messages t")
    for args in (("list",), ("show", "my_chat"), ("search", "hotel"), ("export", "--all")):
        assert cli("session", *args, "--store", db.rw_url).exit_code == 0, args
    after = db.psql("SELECT md5(string_agg(t::text, ',' ORDER BY t::text)) FROM public.praison_messages t")
    assert before == after


def test_unreachable_and_wrong_password(cli, db, source):
    for url, code, text in ((db.unreachable_url, 5, "cannot connect"),
                            (db.url("rw", password="Wr0ng-Passw0rd"), 5, "password authentication failed")):
        for args in (("session", "list", "--store", url),
                     ("session", "migrate", "--from", source, "--to", url, "--all")):
            r = cli(*args)
            assert (r.exit_code, r.stderr.count("\n")) == (code, 1), (args, r.stderr)
            assert text in r.stderr
            assert "***" in r.stderr
            no_secret(db, r.stdout, r.stderr)
    assert count(db) == -1


def test_missing_tables_and_another_apps_tables(cli, db, source):
    missing = cli("session", "list", "--store", db.rw_url)
    assert (missing.exit_code, missing.stderr.count("\n")) == (3, 1)
    assert "no PraisonAI conversation tables (public.praison_sessions" in missing.stderr
    db.psql("CREATE TABLE public.praison_sessions (session_id text PRIMARY KEY, doc jsonb);"
            "CREATE TABLE public.praison_messages (id text PRIMARY KEY, doc jsonb);"
            "GRANT ALL ON ALL TABLES IN SCHEMA public TO pm_rw;")
    for args in (("session", "list", "--store", db.rw_url),
                 ("session", "migrate", "--from", source, "--to", db.rw_url, "--all")):
        r = cli(*args)
        assert (r.exit_code, r.stderr.count("\n")) == (4, 1), r.stderr
        assert "not PraisonAI's" in r.stderr
        no_secret(db, r.stderr)
    assert count(db) == 0


def test_a_read_only_role_writes_nothing(cli, db, source):
    fresh = cli("session", "migrate", "--from", source, "--to", db.ro_url, "--all")
    assert (fresh.exit_code, fresh.stderr.count("\n")) == (5, 1), fresh.stderr
    assert count(db) == -1
    assert cli("session", "migrate", "--from", source, "--to", db.rw_url, "my_chat").exit_code == 0
    again = cli("session", "migrate", "--from", source, "--to", db.ro_url, "--all")
    assert (again.exit_code, again.stderr.count("\n")) == (5, 1), again.stderr
    assert "permission denied" in again.stderr and "nothing written" in again.stderr
    deleted = cli("session", "delete", "my_chat", "--store", db.ro_url, "--yes", "--force")
    assert deleted.exit_code == 5 and deleted.stderr.count("\n") == 1
    assert count(db) == 1
    no_secret(db, fresh.stderr, again.stderr, deleted.stderr)


def test_schema_option_creates_and_reads_its_own_schema(cli, db, source):
    db.psql("GRANT CREATE ON DATABASE \"%s\" TO pm_rw;" % db.name)
    r = cli("session", "migrate", "--from", source, "--to", db.rw_url, "my_chat", "--schema", "Team")
    assert r.exit_code == 0, r.stderr
    assert count(db, schema="team") == 1 and count(db) == -1
    assert [x["session_id"] for x in cli("session", "list", "--store", db.ro_url, "--schema", "team",
                                         "--json").json()] == ["my_chat"]


def test_sigkill_mid_migrate_then_rerun_gives_the_same_result(db, tmp_path):
    sys.path.insert(0, str(REPO / "benchmarks"))
    import _data

    src = tmp_path / "big" / "sessions"
    _data.write_sessions(src, 400, 20)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    cmd = [sys.executable, "-m", "praisonmem", "session", "migrate", "--from", str(src), "--to", db.rw_url, "--all"]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while count(db) < 40 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    partial = count(db)
    assert 0 < partial < 400, partial
    # whole sessions only: every committed session has all its messages
    assert db.psql("SELECT count(*) FROM praison_sessions s WHERE (SELECT count(*) FROM praison_messages m "
                   "WHERE m.session_id = s.session_id) <> 20").strip() == "0"
    rerun = subprocess.run(cmd + ["--verify", "--json"], env=env, capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stderr
    summary = json.loads(rerun.stdout)
    assert (summary["unchanged"], summary["copied"]) == (partial, 400 - partial)
    assert all(r.get("verified") for r in summary["records"])
    back = tmp_path / "back"
    out = subprocess.run([sys.executable, "-m", "praisonmem", "session", "migrate", "--from", db.rw_url, "--to",
                          str(back), "--all", "--verify"], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert tree(back) == tree(src)


def test_pgpassword_and_a_configured_url_whose_password_is_never_shown(cli, db, source, config, monkeypatch):
    bare = db.url("rw", password=False)
    monkeypatch.setenv("PGPASSWORD", db.rw_password)
    r = cli("session", "migrate", "--from", source, "--to", bare, "my_chat")
    assert r.exit_code == 0, r.stderr
    monkeypatch.delenv("PGPASSWORD")
    config.write_text(f'store = "{db.rw_url}"\n')
    listed = cli("session", "list", "--json")
    assert [x["session_id"] for x in listed.json()] == ["my_chat"]
    paths = cli("workspace", "paths", "--json")
    assert paths.exit_code == 0
    assert "postgresql://pm_rw:***@" in paths.stdout
    shown = cli("config", "show")
    no_secret(db, listed.stdout, listed.stderr, paths.stdout, shown.stdout, shown.stderr)
