"""praisonmem check: findings on the real fixtures and on broken trees; nothing is modified."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from praisonmem.core.check import walk as check
from praisonmem.core.errors import NotFound, UsageError
from tests.conftest import PRAISONAI_FIXTURES
from tests.helpers import snapshot


@pytest.fixture
def tree(tmp_path) -> Path:
    root = tmp_path / "tree"
    shutil.copytree(PRAISONAI_FIXTURES, root)
    return root


def codes(report: check.Report, severity: str | None = None) -> list[str]:
    return [f.code for f in report.findings if severity is None or f.severity == severity]


def test_clean_fixture_copy_has_no_errors_and_reports_quarantine_and_spill(tree):
    report = check.check([tree / "home", tree / "project/.praisonai/memory", tree / "agent_workspace/.praisonai/memory"])
    assert codes(report, "error") == []
    # two name-only histories (Legacy Bot, Old Bot) that 1.7.17 loads only in global scope: migrate's findings
    assert sorted(codes(report, "warning")) == ["history.name_only", "history.name_only", "leftover.quarantined",
                                                "leftover.spill"]
    assert "memory.promoted" in codes(report, "info")
    assert not report.failed() and report.failed(strict=True)
    assert report.files_checked > 40


def test_broken_tree_fails(tree):
    user = tree / "project/.praisonai/memory/alice"
    items = json.loads((user / "long_term.json").read_text())
    items[0]["source"] = "added by hand"
    (user / "long_term.json").write_text(json.dumps(items))
    (user / "episodic" / "2026-02-30.json").write_text("[]")
    session = tree / "home/sessions/my_chat.json"
    session.write_bytes(session.read_bytes()[:200])
    before = snapshot(tree)
    report = check.check([tree / "home", tree / "project/.praisonai/memory"])
    errors = {(Path(f.file).name, f.code) for f in report.findings if f.severity == "error"}
    assert errors == {("long_term.json", "memory.extra_key"), ("2026-02-30.json", "episodic.date"),
                      ("my_chat.json", "parse")}
    messages = " ".join(f.message for f in report.findings)
    assert "unknown key 'source'" in messages and "'2026-02-30' is not a valid YYYY-MM-DD date" in messages
    assert report.failed()
    assert snapshot(tree) == before


def test_session_rules(tmp_path):
    sdir = tmp_path / "sessions"
    sdir.mkdir()
    doc = {"session_id": "elsewhere", "messages": [
        {"role": "assistant", "content": "", "timestamp": 1.0, "metadata": {},
         "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
        {"role": "tool", "content": "x", "timestamp": 2.0, "metadata": {}, "tool_call_id": "zz"},
        {"role": "robot", "content": 5},
        "not a message",
    ], "last_compaction": {"summary": "s", "message_index": 9}, "metadata": []}
    (sdir / "s.json").write_text(json.dumps(doc))
    report = check.check([sdir])
    found = {(f.severity, f.code) for f in report.findings}
    assert found >= {("warning", "session.file_name"), ("warning", "tool.orphan"), ("warning", "tool.unanswered"),
                     ("warning", "message.role"), ("warning", "message.content"), ("warning", "message.timestamp"),
                     ("error", "message.type"), ("error", "compaction.index"), ("error", "session.type")}


def test_memory_rules(tmp_path):
    user = tmp_path / "memory" / "u"
    (user / "episodic").mkdir(parents=True)
    (user / "short_term.json").write_text(json.dumps({"not": "a list"}))
    (user / "entities.json").write_text(json.dumps({"e1": {"id": "e1", "name": "X", "extra": 1}}))
    (user / "config.json").write_text(json.dumps({"short_term_limit": "100"}))
    (user / "episodic" / "2026-3-5.json").write_text(json.dumps([{"id": "a", "content": "x", "importance": "hi"}]))
    (user / ".long_term.json.abc.tmp").write_text("")
    report = check.check([tmp_path / "memory"])
    found = {(Path(f.file).name, f.severity, f.code) for f in report.findings}
    assert found == {
        ("short_term.json", "error", "memory.type"),
        ("entities.json", "error", "memory.extra_key"), ("entities.json", "error", "memory.missing_key"),
        ("config.json", "error", "memory.config"),
        ("2026-3-5.json", "warning", "episodic.raw_date"), ("2026-3-5.json", "error", "memory.type"),
        (".long_term.json.abc.tmp", "warning", "leftover.temp"),
    }


def test_learn_rules_and_stale_lock(tmp_path):
    store = tmp_path / "learn" / "private" / "u"
    store.mkdir(parents=True)
    (store / "persona.json").write_text(json.dumps({"k": {"id": "other", "content": "c"}, "j": {"content": "c"}}))
    lock = store / "insights.json.lock"
    lock.write_text("")
    import os

    os.utime(lock, (1, 1))
    report = check.check([tmp_path / "learn"])
    assert {(f.severity, f.code) for f in report.findings} == {
        ("warning", "learn.id"), ("error", "learn.missing_key"), ("warning", "leftover.learn_lock")}


def test_paths_that_are_not_praisonai_trees(tmp_path):
    (tmp_path / "random").mkdir()
    with pytest.raises(NotFound, match="nothing to check: .* is an empty directory"):
        check.check([tmp_path / "random"])
    (tmp_path / "random" / "notes.txt").write_text("x", encoding="utf-8")
    with pytest.raises(UsageError, match="not a PraisonAI home"):
        check.check([tmp_path / "random"])
    with pytest.raises(NotFound):
        check.check([tmp_path / "missing"])


def test_single_files_are_recognised(tree):
    report = check.check([tree / "home/sessions/compacted-demo.json",
                          tree / "project/.praisonai/memory/bob/short_term.json",
                          tree / "home/state/session_spill/spilled-session.1796050189520.12503.e94e5eea.json"])
    assert report.files_checked == 3 and codes(report) == ["leftover.spill"]


def test_default_roots_are_the_existing_home_and_memory_dir(tree, monkeypatch):
    from praisonmem.core.paths import resolve

    monkeypatch.chdir(tree / "project")
    roots = check.default_roots(resolve(tree / "home", env={}))
    assert roots == [tree / "home", Path(".praisonai/memory")]


def test_config_values_the_library_raises_on_or_deletes_with_are_errors(tmp_path):
    user = tmp_path / "memory" / "u"
    user.mkdir(parents=True)
    (user / "config.json").write_text(json.dumps({
        "short_term_limit": "lots", "long_term_limit": 0, "importance_threshold": None, "episodic_retention_days": -1,
        "auto_promote": "no", "enable_summarization": 1, "summarization_threshold": 2.5, "my_own_key": "kept"}))
    report = check.check([tmp_path / "memory"])
    assert [(f.severity, f.message) for f in report.findings] == [
        ("error", "'short_term_limit' is a string, not a whole number: FileMemory raises TypeError when it stores "
                  "short-term memory"),
        ("error", "'long_term_limit' is 0: FileMemory deletes long-term items on every store"),
        ("error", "'importance_threshold' is null, not a number: FileMemory raises TypeError when it promotes "
                  "short-term items"),
        ("error", "'episodic_retention_days' is -1: FileMemory.cleanup_episodic deletes every episodic file, "
                  "today's too"),
        ("warning", "'auto_promote' is a string, not true or false (FileMemory treats it as true)"),
        ("warning", "'enable_summarization' is a number, not true or false (FileMemory 1.7.17 never reads it)"),
        ("warning", "'summarization_threshold' is a number, not a whole number (FileMemory 1.7.17 never reads it)"),
    ]
    assert report.failed()
