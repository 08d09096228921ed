"""``--store`` naming PraisonAI's SQL conversation stores (SQLite, PostgreSQL) on every session command, the
fixture written by the real praisonai 4.7.19 SQLiteConversationStore, store resolution (config, PraisonAI's
environment) and the bad inputs: one line, the documented exit code, nothing written, no password shown."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import sys
from pathlib import Path

import pytest

from tests.conftest import PRAISONAI_FIXTURES, REPO
from tests.realhomes import CONVERSATIONS_4719, expected

sys.path.insert(0, str(REPO / "benchmarks"))
import _data  # noqa: E402  (the benchmark generator, at a small size)


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def tree(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.glob("*.json"))}


@pytest.fixture
def source(tmp_path) -> Path:
    """A JSON sessions dir: 25 generated sessions x 20 messages and every 1.7.17 fixture session."""
    sessions = tmp_path / "src" / "sessions"
    _data.write_sessions(sessions, 25, 20)
    for f in (PRAISONAI_FIXTURES / "home" / "sessions").glob("*.json"):
        shutil.copy(f, sessions / f.name)
    return sessions


# ---------------------------------------------------------------- SQLite conversation store


def test_json_to_sqlite_to_json_is_byte_identical_and_a_rerun_copies_nothing(cli, source, tmp_path):
    db, back = tmp_path / "conv.db", tmp_path / "back"
    first = cli("session", "migrate", "--from", source, "--to", f"sqlite:///{db}", "--all", "--verify", "--json")
    assert first.exit_code == 0, first.stderr
    summary = first.json()
    assert (summary["sessions"], summary["copied"]) == (37, 37)
    assert all(r["verified"] for r in summary["records"])
    assert oct(db.stat().st_mode & 0o777) == "0o600"
    again = cli("session", "migrate", "--from", source, "--to", db, "--all", "--json")
    assert (again.exit_code, again.json()["unchanged"], again.json()["messages"]) == (0, 37, 0)
    out = cli("session", "migrate", "--from", db, "--to", back, "--all", "--verify")
    assert out.exit_code == 0, out.stderr
    assert tree(back) == tree(source)
    assert "37 sessions" in out.stderr and "copied" in out.stderr


def test_read_commands_on_the_real_sqlite_store_change_nothing(cli, conversations_db):
    before = digest(conversations_db), os.stat(conversations_db).st_mtime_ns, sorted(os.listdir(conversations_db.parent))
    listed = cli("session", "list", "--store", conversations_db, "--json")
    assert listed.exit_code == 0, listed.stderr
    want = expected(CONVERSATIONS_4719)
    assert [r["session_id"] for r in listed.json()] == [s["session_id"] for s in want["list_sessions"]]
    shown = cli("session", "show", "agent-tools", "--store", f"sqlite:///{conversations_db}", "--json")
    assert shown.exit_code == 0
    doc = shown.json()
    assert [(m["role"], m["content"]) for m in doc["messages"]] == [
        (m["role"], m["content"]) for m in want["get_messages"]["agent-tools"]]
    found = cli("session", "search", "Paris", "--store", conversations_db, "--json")
    assert found.exit_code == 0 and {h["session_id"] for h in found.json()} >= {"agent-tools"}
    assert cli("session", "export", "--all", "--store", conversations_db).exit_code == 0
    assert (digest(conversations_db), os.stat(conversations_db).st_mtime_ns,
            sorted(os.listdir(conversations_db.parent))) == before


def test_list_of_the_real_store_matches_its_list_sessions_fields(cli, conversations_db):
    want = {s["session_id"]: s for s in expected(CONVERSATIONS_4719)["list_sessions"]}
    rows = cli("session", "list", "--store", conversations_db, "--json").json()
    for row in rows:
        theirs = want[row["session_id"]]
        assert (row["agent_name"], row["user_id"], row["store"]) == (theirs["agent_id"], theirs["user_id"],
                                                                     "conversations")
        assert row["message_count"] == len(expected(CONVERSATIONS_4719)["get_messages"].get(row["session_id"], []))
    one = cli("session", "list", "--store", conversations_db, "--agent", "Stream Bot", "--json").json()
    assert [r["session_id"] for r in one] == ["agent-tools"]


def test_changing_commands_on_a_sqlite_conversation_store(cli, source, tmp_path):
    db = tmp_path / "conv.db"
    assert cli("session", "migrate", "--from", source, "--to", db, "--all").exit_code == 0
    renamed = cli("session", "rename", "bench-00001", "renamed-1", "--store", db, "--force")
    assert renamed.exit_code == 0, renamed.stderr
    ids = [r["session_id"] for r in cli("session", "list", "--store", db, "--limit", "0", "--json").json()]
    assert "renamed-1" in ids and "bench-00001" not in ids
    gone = cli("session", "delete", "bench-00002", "--store", db, "--yes", "--force")
    assert gone.exit_code == 0, gone.stderr
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM praison_messages WHERE session_id = 'bench-00002'").fetchone() == (0,)
        assert conn.execute("SELECT count(*) FROM praison_sessions WHERE session_id = 'bench-00002'").fetchone() == (0,)
    export = tmp_path / "x.json"
    assert cli("session", "export", "my_chat", "--store", db, "-o", export).exit_code == 0
    assert cli("session", "delete", "my_chat", "--store", db, "--yes", "--force").exit_code == 0
    imported = cli("session", "import", export, "--store", db)
    assert imported.exit_code == 0, imported.stderr
    shown = cli("session", "show", "my_chat", "--store", db, "--json")
    assert shown.json() == json.loads((source / "my_chat.json").read_text())


def test_a_sessions_db_url_is_the_transcript_store_and_a_directory_the_json_store(cli, source, tmp_path):
    from tests.realhomes import copy_gateway_home

    gw = copy_gateway_home(tmp_path / "gw")
    listed = cli("session", "list", "--store", f"sqlite:///{gw.db}", "--json")
    assert listed.exit_code == 0 and {r["store"] for r in listed.json()} == {"sessions.db"}
    rows = cli("session", "list", "--store", source, "--limit", "0", "--json").json()
    assert len(rows) == 37 and {r["store"] for r in rows} == {"json"}


def test_store_from_config_and_from_praisonais_environment(cli, conversations_db, config, monkeypatch):
    want = [s["session_id"] for s in expected(CONVERSATIONS_4719)["list_sessions"]]
    monkeypatch.setenv("PRAISONAI_CONVERSATION_STORE", "SQLite")
    monkeypatch.setenv("PRAISONAI_CONVERSATION_URL", str(conversations_db))
    assert [r["session_id"] for r in cli("session", "list", "--json").json()] == want
    monkeypatch.setenv("PRAISONAI_CONVERSATION_STORE", "surrealdb")
    bad = cli("session", "list")
    assert (bad.exit_code, bad.stderr.count("\n")) == (2, 1)
    assert "store 'surrealdb' is not supported by praisonmem" in bad.stderr
    monkeypatch.setenv("PRAISONAI_CONVERSATION_STORE", "mysql")  # a file path is no MySQL URL
    bad = cli("session", "list")
    assert (bad.exit_code, bad.stdout, bad.stderr.count("\n")) == (2, "", 1)
    assert "names a MySQL store but PRAISONAI_CONVERSATION_URL is not a URL" in bad.stderr
    monkeypatch.delenv("PRAISONAI_CONVERSATION_STORE")
    config.write_text(f'store = "sqlite:///{conversations_db}"\n')
    assert [r["session_id"] for r in cli("session", "list", "--json").json()] == want


def test_another_apps_sqlite_database_and_missing_tables(cli, tmp_path, source):
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE praison_sessions (session_id TEXT PRIMARY KEY, body TEXT)")
        conn.execute("CREATE TABLE praison_messages (id TEXT PRIMARY KEY, body TEXT)")
    before = digest(other)
    listed = cli("session", "list", "--store", other)
    assert (listed.exit_code, listed.stderr.count("\n")) == (4, 1)
    assert "is not PraisonAI's" in listed.stderr and "another app" in listed.stderr
    moved = cli("session", "migrate", "--from", source, "--to", other, "--all")
    assert moved.exit_code == 4 and moved.stderr.count("\n") == 1
    assert digest(other) == before
    empty = tmp_path / "empty.db"
    sqlite3.connect(empty).close()
    missing = cli("session", "list", "--store", empty)
    assert (missing.exit_code, missing.stderr.count("\n")) == (3, 1)
    assert "no PraisonAI conversation tables" in missing.stderr


def test_prefix_and_schema_options(cli, source, tmp_path):
    db = tmp_path / "p.db"
    ok = cli("session", "migrate", "--from", source, "--to", db, "bench-00003", "--table-prefix", "Team_")
    assert ok.exit_code == 0, ok.stderr
    with sqlite3.connect(db) as conn:
        assert {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")} == {
            "team_sessions", "team_messages", "team_praisonmem_extra"}
    assert [r["session_id"] for r in cli("session", "list", "--store", db, "--table-prefix", "team_",
                                         "--json").json()] == ["bench-00003"]
    bad = cli("session", "list", "--store", db, "--table-prefix", "1x")
    assert (bad.exit_code, bad.stderr.count("\n")) == (2, 1)
    schema = cli("session", "list", "--store", db, "--schema", "s")
    assert schema.exit_code == 2 and "postgresql:// store only" in schema.stderr


@pytest.mark.parametrize("option, value", [("--table-prefix", "team_\n"), ("--schema", "public\n"),
                                           ("--table-prefix", "team_\nx")])
def test_a_prefix_or_schema_with_a_newline_is_refused(cli, source, tmp_path, option, value):
    """The whole value must be a name: a '$'-anchored match would let a final newline through into the SQL."""
    db = tmp_path / "p.db"
    assert cli("session", "migrate", "--from", source, "--to", db, "bench-00003").exit_code == 0
    before = db.read_bytes()
    store = db if option == "--table-prefix" else "postgresql://pm@127.0.0.1:1/db"  # refused before connecting
    bad = cli("session", "list", "--store", store, option, value)
    assert (bad.exit_code, bad.stdout, bad.stderr) == (
        2, "", f"praisonmem: error: {option} {value!r}: letters, digits and '_' only, not starting with a digit\n")
    if option == "--table-prefix":  # (a SQLite target has no schema)
        moved = cli("session", "migrate", "--from", source, "--to", db, "bench-00001", option, value)
        assert moved.exit_code == 2 and db.read_bytes() == before


def test_migrate_dry_run_writes_nothing_and_says_what_it_would_do(cli, source, tmp_path):
    db = tmp_path / "conv.db"
    dry = cli("session", "migrate", "--from", source, "--to", db, "--all", "--dry-run", "--json")
    assert dry.exit_code == 0, dry.stderr
    assert (dry.json()["would-copy"], dry.json()["dry_run"]) == (37, True)
    assert not db.exists()
    assert cli("session", "migrate", "--from", source, "--to", db, "my_chat").exit_code == 0
    before = digest(db)
    again = cli("session", "migrate", "--from", source, "--to", db, "--all", "--dry-run", "--json").json()
    assert (again["would-copy"], again["unchanged"]) == (36, 1)
    assert digest(db) == before


def test_migrate_says_each_session_it_copies_and_that_verify_passed(cli, tmp_path):
    """One line per session on stdout ("would copy" on a dry run, whose summary never says "written"), and a
    note when --verify read every copy back equal."""
    import re

    src, dst = tmp_path / "src", tmp_path / "dst"
    src.mkdir()
    for name in ("my_chat.json", "compacted-demo.json"):
        shutil.copy(REPO / "examples" / "home" / "sessions" / name, src / name)

    def said(result) -> tuple[str, str]:
        return result.stdout, re.sub(r"\d+\.\d\ds", "Ts", result.stderr)

    dry = cli("session", "migrate", "--from", src, "--to", dst, "--all", "--dry-run")
    assert dry.exit_code == 0 and not dst.exists()
    assert said(dry) == ("would copy compacted-demo (10 messages)\nwould copy my_chat (2 messages)\n",
                         f"praisonmem: dry run: 2 sessions {src} -> {dst}: 2 would-copy; would write 12 messages; "
                         "nothing written (Ts)\n")
    one = cli("session", "migrate", "--from", src, "--to", dst, "my_chat")
    assert said(one) == ("copied my_chat (2 messages)\n",
                         f"praisonmem: 1 session {src} -> {dst}: 1 copied; 2 messages written in Ts\n")
    verified = cli("session", "migrate", "--from", src, "--to", dst, "--all", "--verify")
    assert verified.exit_code == 0
    assert said(verified) == ("copied compacted-demo (10 messages)\n",  # my_chat is there already: no line
                              f"praisonmem: 2 sessions {src} -> {dst}: 1 copied, 1 unchanged; 10 messages written "
                              "in Ts\npraisonmem: verified: 2 sessions read back from --to with the same message count "
                              "and content hash\n")
    moved = cli("session", "migrate", "--from", dst, "--to", tmp_path / "third", "my_chat", "--move", "--yes")
    assert moved.stdout == "copied my_chat (2 messages, deleted from --from)\n"
    assert cli("session", "migrate", "--from", src, "--to", dst, "--all", "--json").stdout.startswith("{")


def test_migrate_move_deletes_each_source_session_after_its_copy(cli, source, tmp_path):
    db = tmp_path / "conv.db"
    want = tree(source)
    refused = cli("session", "migrate", "--from", source, "--to", db, "bench-00000", "--move")
    assert (refused.exit_code, refused.stderr.count("\n")) == (4, 1) and "--yes" in refused.stderr
    assert not db.exists()
    moved = cli("session", "migrate", "--from", source, "--to", db, "bench-00000", "my_chat", "--move", "--yes")
    assert moved.exit_code == 0, moved.stderr
    assert sorted(tree(source)) == sorted(set(want) - {"bench-00000.json", "my_chat.json"})
    back = tmp_path / "back"
    assert cli("session", "migrate", "--from", db, "--to", back, "--all").exit_code == 0
    assert tree(back) == {k: want[k] for k in ("bench-00000.json", "my_chat.json")}


def test_migrate_never_overwrites_a_newer_target_unless_replace(cli, source, tmp_path):
    target = tmp_path / "target"
    target.mkdir()
    newer = json.loads((source / "my_chat.json").read_text())
    newer["updated_at"] = "2099-01-01T00:00:00+00:00"
    newer["messages"] = newer["messages"][:1]
    (target / "my_chat.json").write_text(json.dumps(newer, indent=2, ensure_ascii=False))
    kept = (target / "my_chat.json").read_bytes()
    skipped = cli("session", "migrate", "--from", source, "--to", target, "my_chat", "--json")
    assert (skipped.exit_code, skipped.json()["records"][0]["action"]) == (0, "skipped")
    assert "newer in target" in skipped.stderr
    assert (target / "my_chat.json").read_bytes() == kept
    older = dict(newer, updated_at="2000-01-01T00:00:00+00:00")
    (target / "my_chat.json").write_text(json.dumps(older, indent=2, ensure_ascii=False))
    updated = cli("session", "migrate", "--from", source, "--to", target, "my_chat", "--json")
    assert updated.json()["records"][0]["action"] == "replaced"
    assert (target / "my_chat.json").read_bytes() == (source / "my_chat.json").read_bytes()
    (target / "my_chat.json").write_bytes(kept)
    replaced = cli("session", "migrate", "--from", source, "--to", target, "my_chat", "--on-conflict", "replace",
                   "--yes", "--verify")
    assert replaced.exit_code == 0, replaced.stderr
    assert (target / "my_chat.json").read_bytes() == (source / "my_chat.json").read_bytes()


def test_migrate_bad_inputs(cli, source, tmp_path):
    for args, code, text in (
        (("--from", source, "--to", tmp_path / "t.db"), 2, "give the SESSION ids to migrate, or --all"),
        (("--from", source, "--to", tmp_path / "t.db", "nope"), 3, "nope"),
        (("--from", source, "--to", source, "--all"), 2, "the same store"),
        (("--to", tmp_path / "t.db", "--all"), 2, "give both --from"),
        (("--from", source, "--to", "mongodb://u:Secr3t-pw@h/db", "--all"), 2, "MongoDB stores are not supported"),
        (("--from", source, "--to", "mongodb+srv://u:Secr3t-pw@h/db", "--all"), 2, "MongoDB stores are not supported"),
        (("--from", source, "--to", "mysql://u:Secr3t-pw@h.invalid/db", "--all"), 5,
         "cannot connect to mysql://u:***@h.invalid/db"),
        (("--from", source, "--to", tmp_path / "t.db", "--all", "--on-conflict", "merge"), 2, "skip or replace"),
    ):
        r = cli("session", "migrate", *args)
        assert (r.exit_code, r.stderr.count("\n")) == (code, 1), (args, r.stderr)
        assert text in r.stderr and "Secr3t-pw" not in r.stderr
    assert not (tmp_path / "t.db").exists()


def test_a_corrupt_json_target_is_never_overwritten(cli, source, tmp_path):
    target = tmp_path / "target"
    target.mkdir()
    (target / "my_chat.json").write_bytes(b'{"session_id": "my_chat", "messages": [')
    r = cli("session", "migrate", "--from", source, "--to", target, "my_chat")
    assert (r.exit_code, r.stderr.count("\n")) == (1, 2)
    assert (target / "my_chat.json").read_bytes() == b'{"session_id": "my_chat", "messages": ['


def test_search_with_non_ascii_terms_and_the_prefilter(cli, source, tmp_path):
    db = tmp_path / "conv.db"
    assert cli("session", "migrate", "--from", source, "--to", db, "--all").exit_code == 0
    ours = cli("session", "search", "CAFÉ 日本", "--store", db, "--limit", "0", "--json").json()
    theirs = cli("session", "search", "CAFÉ 日本", "--store", source, "--limit", "0", "--json").json()
    strip = lambda hits: [(h["session_id"], h["index"], h["score"]) for h in hits]  # noqa: E731
    assert strip(ours) == strip(theirs) and ours
    ours = cli("session", "search", "Hotel Alfama", "--store", db, "--limit", "0", "--json").json()
    theirs = cli("session", "search", "Hotel Alfama", "--store", source, "--limit", "0", "--json").json()
    assert strip(ours) == strip(theirs) and ours


def test_the_sql_listing_of_a_migrated_store_equals_the_json_listing(cli, source, tmp_path):
    """Every field session list shows, from the columns alone (parent_id of a hierarchical fork excepted: it has
    no column, so the SQL listing leaves it out; show has it)."""
    from praisonmem.core.sessions.stores.conversation_map import iso_epoch

    db = tmp_path / "conv.db"
    assert cli("session", "migrate", "--from", source, "--to", db, "--all").exit_code == 0

    def rows(store):
        out = []
        for r in cli("session", "list", "--store", store, "--limit", "0", "--json").json():
            r = {k: v for k, v in r.items() if k not in ("file", "store", "parent_id")}
            r["created_at"], r["updated_at"] = iso_epoch(r["created_at"]), iso_epoch(r["updated_at"])
            out.append(r)
        return out

    assert rows(db) == rows(source)
    for sort in ("created", "messages", "id"):
        ours = [r["session_id"] for r in cli("session", "list", "--store", db, "--sort", sort, "--json").json()]
        theirs = [r["session_id"] for r in cli("session", "list", "--store", source, "--sort", sort, "--json").json()]
        assert ours == theirs, sort


def test_the_conversation_store_implements_the_interface_and_only_the_sql_fast_paths_beyond_it():
    import inspect

    from praisonmem.core.sessions import stores
    from praisonmem.core.sessions.stores.conversation_sql import ConversationStore, ConvTransaction
    from tests.core.sessions.test_stores import STORE, TRANSACTION, methods

    for protocol, implementation in ((stores.SessionStore, ConversationStore), (stores.Transaction, ConvTransaction)):
        for name in methods(protocol):
            wanted = list(inspect.signature(getattr(protocol, name)).parameters)
            assert list(inspect.signature(getattr(implementation, name)).parameters)[:len(wanted)] == wanted, name
    # used only through sql_store() (listing, search) and by migrate (batches, the write check, closing)
    assert methods(ConversationStore) - STORE == {"summaries", "matching", "raw_batches", "prepare_write", "close"}
    assert methods(ConvTransaction) - TRANSACTION == {"lock"}


def test_search_of_a_conversation_store_reads_its_encrypted_sessions(cli, tmp_path):
    """The SQL pre-filter cannot match ciphertext: encrypted sessions are always read, so a key finds their hits and,
    without one, they are counted as not searched (as on the JSON files)."""
    from tests.realhomes import copy_gateway_home

    gw = copy_gateway_home(tmp_path / "gw", project=False)
    db = tmp_path / "conv.db"
    moved = cli("--home", gw.home, "session", "migrate", "--from", "json", "--to", f"sqlite:///{db}", "enc-1",
                "bot_slack_7")
    assert moved.exit_code == 0, moved.stderr
    for store in ("json", f"sqlite:///{db}"):
        keyed = cli("--home", gw.home, "session", "search", "planted", "--store", store, "--key-file", gw.key_file,
                    "--json")
        assert keyed.exit_code == 0, keyed.stderr
        assert {h["session_id"] for h in keyed.json()} >= {"enc-1", "bot_slack_7"}, store
        bare = cli("--home", gw.home, "session", "search", "planted", "--store", store, "--json")
        assert " in 1 session not searched" in bare.stderr, store


def test_a_conversation_store_url_in_praisonais_store_variable_is_never_printed_with_its_password(cli, fixture_home,
                                                                                                 monkeypatch):
    monkeypatch.setenv("PRAISONAI_CONVERSATION_STORE", "postgresql://u:s3cretPW@127.0.0.1:1/db")
    result = cli("--home", fixture_home, "session", "list")
    assert result.exit_code == 2 and "s3cretPW" not in result.stderr + result.stdout
    assert len(result.stderr.splitlines()) == 1


def test_migrating_a_praisonai_cli_run_writes_a_session_document(cli, tmp_path):
    """A run's own bytes are its metadata and events: the target gets the session document instead, which it
    lists with the run's messages, and --verify agrees."""
    from tests.realhomes import copy_gateway_home

    gw = copy_gateway_home(tmp_path / "gw", project=False)
    out = tmp_path / "out"
    result = cli("--home", gw.home, "session", "migrate", "--from", "legacy-run", "--to", out, "--all", "--verify")
    assert result.exit_code == 0, result.stderr
    [row] = cli("session", "list", "--store", out, "--json").json()
    assert row["session_id"] == "run_20261128_110000_ec9910" and row["message_count"] == 2
