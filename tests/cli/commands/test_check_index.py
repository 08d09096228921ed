"""check compares each sessions_index.db with the sessions beside it (the real 4.7.19 home), reading it without
creating or changing any file."""

from __future__ import annotations

import json

from tests.helpers import snapshot


def index_findings(cli, root) -> list[tuple[str, str, str]]:
    before = snapshot(root)
    report = cli("check", root, "--json").json()
    assert snapshot(root) == before
    return [(f["severity"], f["code"], f["message"]) for f in report["findings"] if f["code"].startswith("index.")]


def test_an_index_in_step_with_its_sessions_has_no_finding(cli, gateway_home):
    assert index_findings(cli, gateway_home.home) == []


def test_rows_of_a_session_deleted_behind_the_index_are_reported(cli, gateway_home):
    (gateway_home.sessions / "bot_slack_7.json").unlink()  # as the library's DefaultSessionStore deletes
    (gateway_home.project_store / "proj-sess-1.json").unlink()
    orphan = ("holds the text of session '{}', which no session file here has (deleted by a tool that does not "
              "keep the index, or an interrupted delete or rename): it stays searchable through PraisonAI, and on "
              "disk")
    assert index_findings(cli, gateway_home.home) == [
        ("warning", "index.orphan", orphan.format("proj-sess-1")),  # projects/ comes first in the walk
        ("warning", "index.orphan", orphan.format("bot_slack_7")),
    ]
    report = cli("check", gateway_home.home, "--json").json()
    files = {f["file"] for f in report["findings"] if f["code"] == "index.orphan"}
    assert files == {str(gateway_home.index), str(gateway_home.project_store / "sessions_index.db")}
    assert {f["fix"] for f in report["findings"] if f["code"] == "index.orphan"} == {
        f"praisonmem --home {gateway_home.home} migrate"}


def test_sessions_missing_from_the_index_or_newer_than_their_row(cli, gateway_home):
    new = {"session_id": "fresh", "messages": [], "updated_at": "2026-11-30T12:00:00+00:00"}
    (gateway_home.sessions / "fresh.json").write_text(json.dumps(new))
    for sid in ("bot_slack_7", "gw-legacy"):  # written by a store that does not index: a newer updated_at
        path = gateway_home.sessions / f"{sid}.json"
        doc = json.loads(path.read_text())
        doc["updated_at"] = "2026-12-01T00:00:00+00:00"
        path.write_text(json.dumps(doc))
    assert index_findings(cli, gateway_home.home) == [
        ("warning", "index.stale", "the row of session 'bot_slack_7' is older than the session (updated_at "
                                   "'2026-11-30T12:00:00.059000+00:00' in the index, '2026-12-01T00:00:00+00:00' in the "
                                   "file): PraisonAI's search and gateway routing keep using it until an indexed write"),
        ("info", "index.missing", "session 'fresh' is not indexed yet: PraisonAI's search adds it"),
        ("info", "index.stale", "the row of session 'gw-legacy' is older than the session (updated_at "
                                "'2026-11-28T09:30:00.011000+00:00' in the index, '2026-12-01T00:00:00+00:00' in the "
                                "file): PraisonAI's search keeps using it until an indexed write"),
    ]


def test_a_damaged_index_is_an_error_finding(cli, gateway_home):
    gateway_home.index.write_bytes(b"garbage" * 1000)
    report = cli("check", gateway_home.home, "--json")
    assert report.exit_code == 1
    [finding] = [f for f in report.json()["findings"] if f["code"] == "index.unreadable"]
    assert finding["file"] == str(gateway_home.index)
    assert finding["message"].endswith("PraisonAI's guard quarantines and rebuilds it on its next open")


def test_check_reads_an_index_a_writer_died_on_without_touching_it(cli, gateway_home):
    from tests.sqlitestate import crashed_wal

    crashed_wal(gateway_home.index, "DELETE FROM session_meta WHERE session_id = ?", "gw-legacy")
    assert index_findings(cli, gateway_home.home) == [
        ("info", "index.missing", "session 'gw-legacy' is not indexed yet: PraisonAI's search adds it")]


# ---------------------------------------------------------------- what an interrupted write left, and its fix

TOKEN = "ghp_Zq3vLm8Rt2Wx9Kp4Nd7Bf1Hs6Jc0Ya5Ge2Ui"


def stale_after_a_redaction(gateway_home) -> None:
    """What praisonmem before the index-first order left when killed between a redaction's file replace and its
    index commit: the file redacted (updated_at kept, as a redaction keeps it), the index row still holding the
    secret the real library indexed."""
    from tests.cli.commands.test_session_index import library_turn

    library_turn(gateway_home, "bot_slack_7", f"the key is {TOKEN}")
    path = gateway_home.sessions / "bot_slack_7.json"
    doc = json.loads(path.read_text())
    doc["messages"][-1]["content"] = "the key is [REDACTED:github_token]"
    path.write_text(json.dumps(doc, indent=2, ensure_ascii=False))


def test_a_row_holding_text_its_session_no_longer_has_is_reported_though_updated_at_did_not_move(cli, gateway_home):
    stale_after_a_redaction(gateway_home)
    report = cli("check", gateway_home.home, "--json").json()
    [finding] = [f for f in report["findings"] if f["code"].startswith("index.")]
    assert finding == {
        "severity": "warning", "file": str(gateway_home.index), "code": "index.stale_text",
        "message": "the row of session 'bot_slack_7' holds text its session file no longer has (an interrupted write, "
                   "or a tool that changed the file without the index): PraisonAI's search still finds the session "
                   "by it, and it stays on disk",
        "fix": f"praisonmem --home {gateway_home.home} migrate"}


def test_a_row_behind_its_session_is_only_older_not_stale_text(cli, gateway_home):
    path = gateway_home.sessions / "bot_slack_7.json"
    doc = json.loads(path.read_text())  # a turn written by a store that does not index, updated_at as it was
    doc["messages"].append({"role": "user", "content": "one more", "timestamp": 1796040001.0, "metadata": {}})
    path.write_text(json.dumps(doc, indent=2))
    assert index_findings(cli, gateway_home.home) == [
        ("warning", "index.stale", "the row of session 'bot_slack_7' is older than the session (updated_at "
                                   "'2026-11-30T12:00:00.059000+00:00' in the index, "
                                   "'2026-11-30T12:00:00.059000+00:00' in the file): PraisonAI's search and gateway "
                                   "routing keep using it until an indexed write")]


def test_migrate_brings_a_stale_row_in_step_and_clears_its_text_from_disk(cli, gateway_home):
    from tests.indexstate import holding, rows, terms

    stale_after_a_redaction(gateway_home)
    assert holding(gateway_home.home, TOKEN.encode()) == ["sessions/sessions_index.db"]
    listed = cli("--home", gateway_home.home, "migrate", "--dry-run", "--json").json()
    [fix] = [f for f in listed if f["kind"] == "index.out_of_step"]
    assert (fix["subject"], fix["fix_command"]) == (str(gateway_home.index), f"praisonmem --home {gateway_home.home} "
                                                                              "migrate")
    assert fix["detail"] == ("1 row hold text their session file no longer has (bot_slack_7): PraisonAI's search "
                             "still finds the sessions by that text, and it stays on disk; each row is brought in "
                             "step with its file, under the file's lock, and the removed text cleared")
    assert [(c["action"], c["file"], c["sessions"]) for c in fix["changes"]] == [
        ("updated", str(gateway_home.index), ["bot_slack_7"])]
    done = cli("--home", gateway_home.home, "migrate", "--yes", "--json")
    assert done.exit_code == 0, done.stderr
    assert [f["kind"] for f in done.json()].count("index.out_of_step") == 1
    assert dict(rows(gateway_home.index)["fts"])["bot_slack_7"] == (
        "created after the import PLANTED-TOKEN-SLACK\nindexed reply\nthe key is [REDACTED:github_token]")
    assert holding(gateway_home.home, TOKEN.encode()) == [] and TOKEN[4:].lower() not in terms(gateway_home.index)
    assert index_findings(cli, gateway_home.home) == []


def test_migrate_removes_the_rows_of_sessions_that_are_gone(cli, gateway_home):
    from tests.indexstate import holding, rows

    (gateway_home.sessions / "bot_slack_7.json").unlink()  # what an interrupted delete of an older praisonmem left
    assert cli("--home", gateway_home.home, "migrate", "--yes").exit_code == 0
    assert "bot_slack_7" not in {r[0] for table in ("fts", "meta", "route") for r in rows(gateway_home.index)[table]}
    assert holding(gateway_home.home, b"PLANTED-TOKEN-SLACK") == []
    assert index_findings(cli, gateway_home.home) == []


def test_a_scrub_a_killed_write_left_is_reported_and_finished_by_the_next_write_in_the_directory(cli, gateway_home):
    """A praisonmem write killed between its index commit and its scrub leaves the marker and, where another
    writer freed pages without zeroing them, old text: the next write there (one removing nothing itself)
    finishes the scrub."""
    import sqlite3

    from praisonmem.core.sessions.stores.index import SCRUB_KEY
    from tests.indexstate import holding, rows

    conn = sqlite3.connect(gateway_home.index, isolation_level=None)
    conn.execute("PRAGMA secure_delete=OFF")  # the removed text sits in free pages, unzeroed
    [(text,)] = conn.execute("SELECT content FROM session_fts WHERE session_id = 'gw-legacy'")
    conn.execute("UPDATE session_fts SET content = ? WHERE session_id = 'gw-legacy'",
                 ("an earlier version PLANTED-OLD-VERSION " + "filler " * 2000,))
    conn.execute("UPDATE session_fts SET content = ? WHERE session_id = 'gw-legacy'", (text,))
    conn.execute("INSERT INTO session_fts(session_fts) VALUES('optimize')")
    conn.execute("INSERT INTO session_index_meta (key, value) VALUES (?, '1')", (SCRUB_KEY,))
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    assert holding(gateway_home.home, b"PLANTED-OLD-VERSION") == ["sessions/sessions_index.db"]
    assert [(f[0], f[1]) for f in index_findings(cli, gateway_home.home)] == [("warning", "index.scrub_pending")]
    result = cli("--home", gateway_home.home, "session", "rename", "bot_slack_7", "--title", "kept")
    assert result.exit_code == 0, result.stderr
    assert holding(gateway_home.home, b"PLANTED-OLD-VERSION") == []
    assert (SCRUB_KEY, "1") not in rows(gateway_home.index)["index_meta"]
    assert index_findings(cli, gateway_home.home) == []


def test_migrate_leaves_a_damaged_index_to_check_and_the_library(cli, gateway_home):
    gateway_home.index.write_bytes(b"garbage" * 1000)
    listed = cli("--home", gateway_home.home, "migrate", "--dry-run", "--json")
    assert listed.exit_code == 0, listed.stderr
    assert [f["kind"] for f in listed.json()] == ["sessions_db.missing_json"]  # the gateway home's own fix alone
