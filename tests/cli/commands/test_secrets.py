"""``check --secrets`` and ``session scan``: every planted secret found, in every place, none printed; ordinary
homes give no finding."""

from __future__ import annotations

import json

import pytest

from tests.conftest import FIXTURES, PRAISONAI_FIXTURES, REPO, UPSONIC_DB
from tests.helpers import snapshot
from tests.secretcorpus import (DB_SESSION, KINDS, PLACES, PLANTED, SESSION_PLACES, leaked, make_corpus, place_of,
                                secrets_for)


@pytest.fixture
def corpus(tmp_path):
    return make_corpus(tmp_path, UPSONIC_DB)


def found_pairs(findings):
    return {(place_of(f), f["kind"]) for f in findings}


@pytest.mark.parametrize("level", ["standard", "strict"])
def test_check_secrets_finds_every_kind_in_every_place_and_prints_none(cli, corpus, level):
    before = snapshot(corpus.home)
    human = cli(*corpus.args(), "check", "--secrets", "--level", level, "--upsonic-db", corpus.upsonic_db)
    machine = cli(*corpus.args(), "check", "--secrets", "--level", level, "--upsonic-db", corpus.upsonic_db,
                  "--json")
    assert (human.exit_code, machine.exit_code) == (1, 1)
    report = machine.json()
    assert report["ok"] is False and report["level"] == level
    assert found_pairs(report["findings"]) == {(p, k) for p in PLACES for k in KINDS}
    for out in (human, machine):
        assert leaked(out.stdout + out.stderr) == []
    assert snapshot(corpus.home) == before  # a read command: nothing written, not even a lock file
    assert human.stdout.splitlines()[-1].startswith(f"{len(report['findings'])} secrets found ({level} rules)")


def test_a_finding_names_store_session_message_and_a_masked_excerpt(cli, corpus):
    report = cli(*corpus.args(), "check", "--secrets", "--upsonic-db", corpus.upsonic_db, "--json").json()
    openai = secrets_for("message")["openai_api_key"][1]
    [hit] = [f for f in report["findings"] if place_of(f) == "message" and f["kind"] == "openai_api_key"]
    assert hit == {"store": "json", "file": str(corpus.home / "sessions" / f"{PLANTED}.json"), "session": PLANTED,
                   "record": PLANTED, "field": "messages[0].content", "message_index": 0, "archived": False,
                   "kind": "openai_api_key",
                   "excerpt": f"the openai api key is [openai_api_key: {openai[:4]}…({len(openai)} chars)] "
                              "(keep it safe)"}
    [db] = [f for f in report["findings"] if place_of(f) == "db_message" and f["kind"] == "stripe_key"]
    assert (db["store"], db["session"], db["field"]) == ("sessions.db", DB_SESSION, db["field"])
    assert db["message_index"] is not None and db["field"] == f"messages[{db['message_index']}].content"
    [url] = [f for f in report["findings"] if place_of(f) == "title" and f["kind"] == "url_password"]
    assert "postgresql://svc:[url_password: a1" in url["excerpt"] and "@db.internal" in url["excerpt"]
    [trait] = [f for f in report["findings"] if place_of(f) == "trait" and f["kind"] == "jwt"]
    assert trait["record"] == f"user:{corpus.extra['upsonic_user']}" and trait["field"] == "user_memory.planted_note"


def test_session_scan_covers_every_session_store_and_the_spill_dir(cli, corpus):
    result = cli(*corpus.args(), "session", "scan", "--json")
    assert result.exit_code == 1
    assert found_pairs(result.json()) == {(p, k) for p in SESSION_PLACES for k in KINDS}
    assert leaked(result.stdout + result.stderr) == []
    human = cli(*corpus.args(), "session", "scan")
    assert human.exit_code == 1 and leaked(human.stdout + human.stderr) == []
    assert human.stderr.strip().splitlines()[-1].startswith(f"praisonmem: {len(result.json())} secrets found")


def test_session_scan_of_named_sessions_only(cli, corpus):
    result = cli(*corpus.args(), "session", "scan", DB_SESSION, "--json")
    assert result.exit_code == 1
    assert {place_of(f) for f in result.json()} == {"db_message"}
    clean = cli(*corpus.args(), "session", "scan", "gw-legacy", "--store", "json", "--json")
    assert (clean.exit_code, clean.json()) == (0, [])
    missing = cli(*corpus.args(), "session", "scan", "no-such-session")
    assert missing.exit_code == 3 and missing.stdout == ""


def test_ordinary_homes_give_no_findings(cli, tmp_path):
    """The example home and every fixture home the real libraries wrote: no false positive, at either level."""
    homes = [REPO / "examples" / "home", PRAISONAI_FIXTURES / "home", FIXTURES / "praisonai-4.7.19-home" / "home",
             FIXTURES / "praisonai-eras" / "1.5.122" / "home", FIXTURES / "praisonai-eras" / "1.6.157" / "home"]
    for level in ("standard", "strict"):
        result = cli("--memory-dir", PRAISONAI_FIXTURES / "project" / ".praisonai" / "memory", "check", "--secrets",
                     "--level", level, "--upsonic-db", UPSONIC_DB, "--json", *homes)
        report = result.json()
        assert (result.exit_code, report["findings"], report["unreadable"]) == (0, [], [])
        assert report["scanned"]["sessions"] >= 50 and report["scanned"]["memory_items"] > 0
        assert report["scanned"]["learn_entries"] > 0 and report["scanned"]["upsonic_users"] == 2
        for home in homes:
            scan = cli("--home", home, "session", "scan", "--level", level, "--json")
            assert (scan.exit_code, scan.json()) == (0, [])


def test_check_secrets_refuses_a_path_that_is_not_a_home(cli, tmp_path):
    (tmp_path / "file.json").write_text("{}")
    result = cli("check", "--secrets", tmp_path / "file.json")
    assert result.exit_code == 2 and "not a directory" in result.stderr and result.stdout == ""
    assert cli("check", "--level", "strict").exit_code == 2  # --level alone: a usage error


# ---------------------------------------------------------------- export --redact, session redact


def expected_redacted(place: str) -> list[str]:
    return [text.replace(secret, f"[REDACTED:{kind}]") for kind, (text, secret) in secrets_for(place).items()]


@pytest.mark.parametrize("fmt", ["json", "jsonl", "markdown"])
def test_export_redact_writes_none_of_the_secrets_and_changes_nothing_stored(cli, corpus, tmp_path, fmt):
    before = snapshot(corpus.home)
    out = tmp_path / f"export.{fmt}"
    result = cli(*corpus.args(), "session", "export", "--all", "--format", fmt, "--redact", "standard", "-o", out,
                 "--json")
    assert result.exit_code == 0, result.stderr
    # message, title, metadata, sessions.db, and the spilled turns an export carries merged into their session
    assert result.json()["redacted"] == 5 * len(KINDS)
    raw = out.read_bytes()
    assert [s for s in secrets_for("message").values() if s[1].encode() in raw] == []
    assert leaked(raw.decode("utf-8"), ("message", "title", "metadata", "db_message", "spill")) == []
    for kind in KINDS:
        assert f"[REDACTED:{kind}]".encode() in raw
    assert snapshot(corpus.home) == before
    if fmt == "json":
        payload = json.loads(raw)
        [doc] = [d for d in payload["sessions"] if d["session_id"] == PLANTED]
        assert [m["content"] for m in doc["messages"]] == (expected_redacted("message") + [corpus.encrypted]
                                                           + expected_redacted("spill"))
        assert doc["metadata"] == {"title": " | ".join(expected_redacted("title")),
                                   "notes": " | ".join(expected_redacted("metadata"))}
        plain = json.loads(cli(*corpus.args(), "session", "export", "gw-legacy", "--store", "json").stdout)
        again = json.loads(cli(*corpus.args(), "session", "export", "gw-legacy", "--store", "json", "--redact",
                               "strict").stdout)
        assert again["sessions"] == plain["sessions"]  # nothing to redact: the same documents


def test_export_redact_refuses_an_unknown_level(cli, corpus):
    result = cli(*corpus.args(), "session", "export", PLANTED, "--redact", "loose")
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr == "praisonmem: error: the secret rules are standard or strict, got 'loose'\n"


def test_session_redact_dry_run_and_unconfirmed_runs_change_nothing(cli, corpus):
    before = snapshot(corpus.home)
    dry = cli(*corpus.args(), "session", "redact", PLANTED, "gw-legacy", "--store", "json", "--dry-run")
    assert dry.exit_code == 0
    assert dry.stdout.splitlines() == [
        f"would redact secrets in {PLANTED} ({PLANTED}.json) [{3 * len(KINDS)} secrets, {len(KINDS)} in spilled "
        "turns]",
        "would skip gw-legacy: no secrets found"]
    refused = cli(*corpus.args(), "session", "redact", PLANTED, "--store", "json")
    assert refused.exit_code == 4 and "not confirmed" in refused.stderr
    assert snapshot(corpus.home) == before


@pytest.mark.parametrize("name, lock", [(PLANTED, "flock"), (DB_SESSION, "sqlite")])
def test_session_redact_waits_for_the_stores_own_lock_and_gives_up_changing_nothing(cli, corpus, name, lock):
    from tests.helpers import hold_flock, hold_sqlite_lock

    sessions = corpus.home / "sessions"
    holder = (hold_flock(sessions / f"{PLANTED}.json.lock", 30) if lock == "flock"
              else hold_sqlite_lock(sessions / "sessions.db", 30))
    try:
        before = snapshot(corpus.home)
        result = cli(*corpus.args(), "--lock-timeout", "0.3", "session", "redact", name, "--yes")
        assert result.exit_code == 4, result.stderr
        assert snapshot(corpus.home) == before
    finally:
        holder.kill()
        holder.wait()
    done = cli(*corpus.args(), "session", "redact", name, "--yes")
    assert done.exit_code == 0 and done.stdout.startswith(f"redacted secrets in {name} ")


def test_session_redact_refuses_a_session_file_that_does_not_parse(cli, corpus):
    broken = corpus.home / "sessions" / "broken.json"
    broken.write_text('{"session_id": "broken", "messages": [', encoding="utf-8")
    before = snapshot(corpus.home)
    result = cli(*corpus.args(), "session", "redact", "broken", "--yes")
    assert result.exit_code == 4 and result.stdout == ""
    assert snapshot(corpus.home) == before
    scan = cli(*corpus.args(), "session", "scan", "--store", "json", "--json")
    assert scan.exit_code == 1 and f"praisonmem: {broken}: does not parse; searched as raw bytes\n" in scan.stderr


def test_a_secret_in_a_session_id_is_reported_masked_and_the_id_kept_by_redact(cli, corpus):
    email = secrets_for("id")["email"][1]
    src = corpus.home / "sessions" / f"{PLANTED}.json"
    doc = json.loads(src.read_text())
    doc["session_id"] = f"support:{email}"
    target = corpus.home / "sessions" / "support-id.json"
    target.write_text(json.dumps(doc, indent=2), encoding="utf-8")
    scan = cli(*corpus.args(), "session", "scan", "support-id", "--json")
    assert scan.exit_code == 1 and leaked(scan.stdout + scan.stderr, ("id",)) == []
    [hit] = [f for f in scan.json() if f["field"] == "session_id"]
    assert hit["session"] == f"support:[email: {email[:4]}…({len(email)} chars)]" == hit["record"]
    done = cli(*corpus.args(), "session", "redact", "support-id", "--yes", "--json")
    assert done.exit_code == 0 and leaked(done.stdout + done.stderr, ("id",)) == []
    assert done.json()[0]["session_id"] == hit["session"]
    assert json.loads(target.read_text())["session_id"] == f"support:{email}"  # the id names the session: kept
    assert json.loads(target.read_text())["messages"][0]["content"].startswith("the openai api key is [REDACTED:")


def test_an_excerpt_cannot_reach_the_terminal(cli, corpus):
    src = corpus.home / "sessions" / f"{PLANTED}.json"
    doc = json.loads(src.read_text())
    key = secrets_for("message")["github_token"][1]
    doc["messages"][0]["content"] = f"\x1b]0;owned\x07\x1b[2J token {key} \u202e done\r"
    src.write_text(json.dumps(doc, indent=2), encoding="utf-8")
    for args in ((), ("--json",)):
        result = cli(*corpus.args(), "session", "scan", PLANTED, *args)
        assert result.exit_code == 1
        for control in ("\x1b", "\x07", "\u202e", "\r"):
            assert control not in result.stdout + result.stderr
        assert key not in result.stdout
    [hit] = [f for f in cli(*corpus.args(), "session", "scan", PLANTED, "--json").json()
             if (f["record"], f["field"]) == (PLANTED, "messages[0].content")]
    assert hit["excerpt"] == f"\\x1b]0;owned\\x07\\x1b[2J token [github_token: {key[:4]}…(40 chars)] \\u202e done\\r"


@pytest.mark.parametrize("fmt", ["openai-jsonl", "sharegpt"])
def test_export_redact_applies_to_the_fine_tuning_formats(cli, corpus, tmp_path, fmt):
    """--redact composes with the interchange formats: what they export is the redacted conversation."""
    before = snapshot(corpus.home)
    out = tmp_path / "export.out"
    result = cli(*corpus.args(), "session", "export", "--all", "--format", fmt, "--redact", "standard", "-o", out,
                 "--json")
    assert result.exit_code == 0, result.stderr
    raw = out.read_text("utf-8")
    assert leaked(raw, ("message", "title", "metadata", "db_message")) == []
    assert leaked(result.stdout + result.stderr, ("message", "title", "metadata", "db_message")) == []
    assert "[REDACTED:" in raw
    plain = cli(*corpus.args(), "session", "export", "--all", "--format", fmt, "-o", tmp_path / "plain.out")
    assert plain.exit_code == 0 and leaked((tmp_path / "plain.out").read_text("utf-8"), ("db_message",)) != []
    assert snapshot(corpus.home) == before


def test_session_redact_of_a_sessions_db_row_scrubs_the_older_versions_the_library_left_in_free_pages(cli, corpus):
    """The gateway writes without secure_delete: an older, longer version of the row stays in whole free pages
    after the next turn. Redacting the row must not leave those pages (nor the -wal) holding the secret."""
    import sqlite3

    db = corpus.home / "sessions" / "sessions.db"
    secret = secrets_for("db_message")["openai_api_key"][1].encode()
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA secure_delete=OFF")
    data = json.loads(conn.execute("SELECT data FROM sessions WHERE session_id = ?", (DB_SESSION,)).fetchone()[0])
    pasted = {"role": "user", "content": "pasted log: " + " ".join([secret.decode()] * 2000), "metadata": {},
              "timestamp": 1796050400.0}
    for messages in (data["messages"] + [pasted], data["messages"]):  # a long paste, then the agent trims it
        conn.execute("UPDATE sessions SET data = ? WHERE session_id = ?",
                     (json.dumps({**data, "messages": messages}, ensure_ascii=False), DB_SESSION))
        conn.commit()
    conn.close()
    assert sum(p.read_bytes().count(secret) for p in db.parent.glob("sessions.db*")) > 100  # in free pages

    result = cli(*corpus.args(), "session", "redact", DB_SESSION, "--yes", "--json")
    assert result.exit_code == 0, result.stderr
    assert result.json()[0]["redacted"] == len(KINDS)
    assert [p.name for p in db.parent.glob("sessions.db*") if secret in p.read_bytes()] == []


# ---------------------------------------------------------------- a gate that could not look does not pass

TORN_KEY = "ghp_" + "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0FeDcBa"


def test_a_torn_session_holding_a_key_is_searched_as_raw_bytes(cli, fixture_home):
    sessions = fixture_home / "sessions"
    torn = sessions / "torn.json"
    text = json.dumps({"session_id": "torn", "messages": [{"role": "user", "content": f"my token {TORN_KEY}"}]})
    torn.write_text(text.replace("ghp_", "\\u0067hp_")[:-2], encoding="utf-8")  # escaped, and cut short
    before = snapshot(fixture_home)
    report = cli("--home", fixture_home, "check", "--secrets", "--json")
    assert report.exit_code == 1 and TORN_KEY not in report.stdout + report.stderr
    body = report.json()
    assert (body["ok"], body["unreadable"]) == (False, [])
    assert sorted(body["raw"]) == sorted([str(torn), str(sessions / "broken.json.corrupt-1796050189520")])
    [hit] = body["findings"]
    assert (hit["file"], hit["record"], hit["field"], hit["kind"]) == (str(torn), "torn.json", "(raw bytes)",
                                                                       "github_token")
    scan = cli("--home", fixture_home, "session", "scan")
    assert scan.exit_code == 1 and scan.stdout.startswith("github_token        json torn.json (raw bytes): ")
    assert f"praisonmem: {torn}: does not parse; searched as raw bytes\n" in scan.stderr
    named = cli("--home", fixture_home, "session", "scan", str(torn), "--json")
    assert named.exit_code == 1 and [f["kind"] for f in named.json()] == ["github_token"]
    assert snapshot(fixture_home) == before


def test_a_file_that_cannot_be_read_fails_the_gate_and_is_named(cli, fixture_home):
    """A file praisonmem cannot open (a symlink loop here: unreadable even for root, as a 000 file is for
    everyone else) is not a pass: exit 1, ok false, the file named, with nothing else found."""
    loop = fixture_home / "sessions" / "loop.json"
    loop.symlink_to(loop.name)
    checked = cli("--home", fixture_home, "check", "--secrets", "--json")
    body = checked.json()
    assert (checked.exit_code, body["ok"], body["count"]) == (1, False, 0)
    assert body["unreadable"] == [f"{loop}: too many levels of symbolic links"]  # the path once
    for args in ([], ["--json"], ["-q"]):
        scan = cli("--home", fixture_home, "session", "scan", *args)
        assert scan.exit_code == 1
        assert f"praisonmem: warning: not scanned (unreadable): {loop}: too many levels of symbolic links\n" \
            in scan.stderr  # -q too: it is why
    human = cli("--home", fixture_home, "check", "--secrets")
    assert human.exit_code == 1 and human.stdout.splitlines()[-1].endswith("; 1 file could not be scanned")


def test_quarantined_copies_are_searched(cli, fixture_home):
    """The library renames a session file that does not parse to *.corrupt-<ms> and a damaged database to
    *.db.corrupt-<ms>; backups archive them; the scan searches them as raw bytes."""
    quarantined = fixture_home / "sessions" / "chat.json.corrupt-1796050200000"
    quarantined.write_text(json.dumps({"messages": [{"content": f"key {TORN_KEY}"}]})[:-3], encoding="utf-8")
    db_copy = fixture_home / "sessions" / "sessions.db.corrupt-1796050200001"
    db_copy.write_bytes(b"SQLite format 3\x00" + bytes(200) + b'{"content": "mail bob.smith@corp-example.com"}')
    body = cli("--home", fixture_home, "check", "--secrets", "--json").json()
    assert sorted((f["record"], f["kind"], f["field"]) for f in body["findings"]) == [
        (quarantined.name, "github_token", "(raw bytes)"), (db_copy.name, "email", "(raw bytes)")]
    assert TORN_KEY not in json.dumps(body)
    scan = cli("--home", fixture_home, "session", "scan", "--json")
    assert scan.exit_code == 1 and len(scan.json()) == 2
