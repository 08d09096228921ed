"""Session export (json/jsonl/markdown) and import (validate all, then write each under its lock)."""

from __future__ import annotations

import json
import re
import shutil

import pytest

from praisonmem.core import sessions
from praisonmem.core.errors import NotFound, TargetExists, UsageError
from praisonmem.core.io import outfile
from praisonmem.core.paths import resolve
from praisonmem.core.sessions import transfer as session_io
from tests.helpers import export_text, exported


@pytest.fixture
def paths(fixture_home):
    return resolve(fixture_home, env={})


def test_json_export_then_import_into_an_empty_home_is_byte_identical(paths, tmp_path):
    docs = exported(paths, [], everything=True)
    payload = json.loads(export_text("json", docs))
    assert payload["version"] == 1 and payload["format"] == "praisonmem-sessions"
    assert len(payload["sessions"]) == 12
    out = tmp_path / "export.json"
    outfile.write(out, export_text("json", docs).encode("utf-8"))
    fresh = resolve(tmp_path / "fresh", env={})
    changes = sessions.plan_import(fresh, out).run().changes
    assert {c.action for c in changes} == {"imported"}
    for original in sorted(paths.sessions_dir.glob("*.json")):
        assert (fresh.sessions_dir / original.name).read_bytes() == original.read_bytes(), original.name


def test_import_accepts_the_librarys_portable_payload_and_a_bare_session(paths, tmp_path):
    doc = json.loads((paths.sessions_dir / "my_chat.json").read_text())
    (tmp_path / "lib.json").write_text(json.dumps({"version": 1, "sessions": [doc]}))
    (tmp_path / "bare.json").write_text(json.dumps(doc))
    assert session_io.read_payload(tmp_path / "lib.json") == [doc]
    assert session_io.read_payload(tmp_path / "bare.json") == [doc]


@pytest.mark.parametrize("content, message", [
    (b'{"hello": "world"}', "not a praisonmem or PraisonAI session export"),
    (b"[1, 2, 3]", "not a praisonmem or PraisonAI session export"),
    (b"not json at all", "not a praisonmem or PraisonAI session export (invalid JSON"),
    (b'{"session_id": "a", "index": 0}\n{"session_id": "a", "index": 1}\n', "looks like a jsonl export"),
    (b'{"version": 2, "sessions": []}', "export format version 2 is newer"),
])
def test_import_refuses_files_that_are_not_exports(tmp_path, content, message):
    bad = tmp_path / "bad.json"
    bad.write_bytes(content)
    with pytest.raises(UsageError, match=re.escape(message)):
        session_io.read_payload(bad)


def test_import_of_a_missing_file_is_not_found(tmp_path):
    with pytest.raises(NotFound):
        session_io.read_payload(tmp_path / "nope.json")


@pytest.mark.parametrize("bad, message", [
    ("not an object", "session 1: not a JSON object"),
    ({"messages": []}, "session 1: missing or empty session_id"),
    ({"session_id": "x", "messages": {}}, "'messages' is an object, not a list"),
    ({"session_id": "x", "messages": [{"role": "robot", "content": "hi"}]}, "has role 'robot'"),
    ({"session_id": "x", "messages": ["hi"]}, "messages[0] is not an object"),
])
def test_one_invalid_session_stops_the_import_before_any_write(paths, tmp_path, bad, message):
    good = {"session_id": "new-good", "messages": []}
    payload = tmp_path / "p.json"
    payload.write_text(json.dumps({"version": 1, "sessions": [good, bad, {"session_id": "new-other", "messages": []}]}))
    with pytest.raises(UsageError, match=re.escape(message)):
        sessions.plan_import(paths, payload)
    assert not (paths.sessions_dir / "new-good.json").exists()


def plan(paths, docs, on_conflict="fail"):
    return session_io.plan_documents(sessions.open_store(paths), docs, sessions.OnConflict(on_conflict))


def run(paths, docs, on_conflict="fail", dry_run=False):
    return session_io.run_import(sessions.open_store(paths), plan(paths, docs, on_conflict),
                                 on_conflict=sessions.OnConflict(on_conflict), dry_run=dry_run).changes


def test_two_ids_for_one_file_are_refused(paths):
    with pytest.raises(UsageError, match="both map to a_b.json"):
        plan(paths, [{"session_id": "a.b", "messages": []}, {"session_id": "a/b", "messages": []}])


def test_conflicts_fail_skip_replace(paths):
    existing = json.loads((paths.sessions_dir / "my_chat.json").read_text())
    incoming = [dict(existing, agent_name="Imported"), {"session_id": "brand-new", "messages": []}]
    with pytest.raises(TargetExists, match="1 session already exists \\(my_chat.json\\); nothing imported"):
        plan(paths, incoming, "fail")
    assert not (paths.sessions_dir / "brand-new.json").exists()
    changes = run(paths, incoming, "skip")
    assert [(c.action, c.detail) for c in changes] == [("skipped", "already exists"), ("imported", None)]
    assert json.loads((paths.sessions_dir / "my_chat.json").read_text())["agent_name"] == "Saver"
    changes = run(paths, incoming, "replace")
    assert [c.action for c in changes] == ["replaced", "replaced"]
    assert json.loads((paths.sessions_dir / "my_chat.json").read_text())["agent_name"] == "Imported"


def test_replace_never_overwrites_a_target_that_does_not_parse(paths):
    (paths.sessions_dir / "bad.json").write_bytes(b"{")
    [change] = run(paths, [{"session_id": "bad", "messages": []}], "replace")
    assert change.action == "failed" and "invalid JSON" in change.detail and change.exit_code == 4
    assert (paths.sessions_dir / "bad.json").read_bytes() == b"{"


def test_dry_run_import_writes_nothing(paths, tmp_path):
    fresh = resolve(tmp_path / "fresh", env={})
    assert [c.action for c in run(fresh, [{"session_id": "x", "messages": []}], dry_run=True)] == ["imported"]
    assert not (tmp_path / "fresh").exists()


def test_jsonl_export_is_one_message_a_line_with_its_session(paths):
    docs = exported(paths, ["compacted-demo"])
    lines = [json.loads(line) for line in export_text("jsonl", docs).splitlines()]
    assert len(lines) == 10
    assert lines[0] == {"session_id": "compacted-demo", "archived": True, "index": 0, "role": "user",
                        "content": "Plan a trip to Lisbon", "timestamp": 1796050189.4984517, "metadata": {}}
    assert lines[5]["archived"] is False and lines[5]["metadata"]["compaction"] is True


def test_markdown_export_is_a_readable_transcript(paths):
    text = export_text("markdown", exported(paths, ["history_ec9d38c8"]))
    assert text.startswith("# Session `history_ec9d38c8`\n\n- **Agent:** Stream Bot\n- **User:** bob\n")
    assert "### #1 assistant" in text and "**Tool call** `weather` (`call_abc123`)" in text
    assert '```json\n{"city": "Paris"}\n```' in text
    assert "*(result of tool call `call_abc123`)*" in text


def test_export_refuses_an_unreadable_session(paths):
    from praisonmem.core.errors import CorruptFile

    (paths.sessions_dir / "bad.json").write_bytes(b"{")
    with pytest.raises(CorruptFile):
        exported(paths, [], everything=True)


def test_library_import_sessions_reads_our_export(paths, tmp_path):
    pytest.importorskip("praisonaiagents")
    from praisonaiagents.session.store import DefaultSessionStore

    payload = json.loads(export_text("json", exported(paths, [], everything=True)))
    store = DefaultSessionStore(session_dir=str(tmp_path / "lib"))
    report = store.import_sessions(payload)
    assert report.imported == 12 and not report.skipped
    shutil.rmtree(tmp_path / "lib")
