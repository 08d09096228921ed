"""check knows the praisonai CLI's layouts in the real 4.7.19 home: REPL/TUI files, run directories, project
stores, each judged by what its own reader needs."""

from __future__ import annotations

import json

RUN = "run_20261128_110000_ec9910"


def findings(cli, root) -> list[tuple[str, str, str, str]]:
    report = cli("check", root, "--json").json()
    return [(f["severity"], f["code"], "/".join(f["file"].split("/")[-2:]), f["message"]) for f in report["findings"]]


def test_the_real_home_has_no_error_and_warns_only_of_the_imported_tui_timestamps(cli, gateway_home):
    # Each layout is judged by its own reader: the REPL/TUI files, the run and the project store pass. The one
    # thing warned of is in sessions.db, whose rows are checked like JSON-store files: the gateway's one-time
    # import copied the TUI's sessions in with their ISO-string message timestamps.
    result = cli("check", gateway_home.home, "--strict")
    assert result.exit_code == 1
    assert [f[:3] for f in findings(cli, gateway_home.home)] == [
        ("info", "session.encrypted", "sessions/enc-1.json"),
        ("warning", "message.timestamp", "sessions/sessions.db:db5b5fab"),
        ("info", "session.encrypted", "sessions/sessions.db:enc-db-1"),
        ("warning", "message.timestamp", "sessions/sessions.db:tui0001a"),
        ("warning", "message.timestamp", "sessions/sessions.db:tui0001a"),
        ("warning", "message.timestamp", "sessions/sessions.db:tui0002b"),
        ("warning", "message.timestamp", "sessions/sessions.db:tui0002b"),
        ("info", "sessions_db.missing_json", "sessions/sessions.db")]
    report = cli("check", gateway_home.home, "--json").json()
    # 7 files in sessions/, sessions.db, the project session, 2 indexes, 2 run files
    assert report["files_checked"] == 13
    assert cli("check", gateway_home.home).exit_code == 0  # warnings fail only --strict


def test_a_run_its_session_manager_cannot_load_is_an_error(cli, gateway_home):
    meta = gateway_home.sessions / RUN / "metadata.json"
    doc = json.loads(meta.read_text())
    del doc["trace_id"]
    meta.write_text(json.dumps(doc))
    (gateway_home.sessions / RUN / "events.jsonl").write_text('{"event": "user"}\nnot json\n')
    got = [f for f in findings(cli, gateway_home.home) if f[1].startswith("run.")]
    assert got == [("error", "run.metadata", f"{RUN}/metadata.json",
                    "no 'trace_id': praisonai's SessionManager skips this run"),
                   ("warning", "run.events", f"{RUN}/events.jsonl",
                    "1 line are not JSON: praisonai's SessionManager skips them")]


def test_a_unified_file_is_judged_as_the_tui_reads_it(cli, gateway_home):
    path = gateway_home.sessions / "tui0001a.json"
    doc = json.loads(path.read_text())
    doc["messages"].append("not a message")
    path.write_text(json.dumps(doc, indent=2))
    got = [f for f in findings(cli, gateway_home.home) if f[2] == "sessions/tui0001a.json"]
    assert got == [("error", "unified.message", "sessions/tui0001a.json",
                    "messages[2] is not a {role, content, timestamp} object: the TUI's chat history fails on it")]


def test_a_unified_message_without_content_or_role_is_an_error_as_the_tui_fails_on_it(cli, gateway_home, oracle):
    """The TUI's chat history reads ``msg["role"]`` and ``msg["content"]`` of every message: a message without
    either fails it (praisonai-code's own UnifiedSession says so: KeyError)."""
    path = gateway_home.sessions / "tui0001a.json"
    doc = json.loads(path.read_text())
    doc["messages"] += [{"role": "user", "timestamp": "2026-11-30T14:49:49"},
                        {"content": "no role", "timestamp": "2026-11-30T14:49:50"}]
    path.write_text(json.dumps(doc, indent=2))
    got = [f for f in findings(cli, gateway_home.home) if f[2] == "sessions/tui0001a.json"]
    assert got == [("error", "unified.message", "sessions/tui0001a.json",
                    f"messages[{i}] is not a {{role, content, timestamp}} object: the TUI's chat history fails on "
                    "it") for i in (2, 3)]
    failures = oracle.json("""
        import json, sys
        from praisonai_code.cli.session.unified import UnifiedSession
        doc = json.load(sys.stdin)
        out = []
        for extra in doc["messages"][2:]:
            session = UnifiedSession.from_dict({**doc, "messages": doc["messages"][:2] + [extra]})
            try:
                session.get_chat_history()
                out.append(None)
            except KeyError as exc:
                out.append(exc.args[0])
        print(json.dumps(out))
    """, payload=doc)
    assert failures == ["content", "role"]
