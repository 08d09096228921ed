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
                                "file): PraisonAI's search refreshes it"),
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
