"""adopt in the core, against copies of real fixtures (the CLI tests cover the issue-9 cases end to end)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from praisonmem.core import sessions
from praisonmem.core.errors import NotFound, Refused, TargetExists, UsageError
from praisonmem.core.paths import resolve
from praisonmem.core.sessions import adopt as session_adopt
from praisonmem.core.sessions import history_id, workspace_id
from praisonmem.core.sessions.stores.home import Located


@pytest.fixture
def paths(fixture_home):
    return resolve(fixture_home, env={})


def sessions_dir(paths) -> Path:
    return paths.sessions_dir


def adopt(paths, plan):
    return session_adopt.adopt_agent(sessions.open_store(paths), plan)


def file_of(ref) -> Path:
    """The file a home's ref names."""
    return Path(str(ref))


def test_plan_adopt_finds_the_legacy_file_of_either_era(paths, tmp_path):
    plan = session_adopt.plan_agent(paths, "Legacy Bot", workspace_dir=tmp_path)
    assert plan.sources == [Located("json", str(sessions_dir(paths) / "history_8fe938c0.json"))]
    assert plan.target_id == history_id("dir:" + os.path.realpath(tmp_path), "Legacy Bot")
    assert file_of(session_adopt.plan_agent(paths, "Old Bot", workspace_dir=tmp_path).source).name == "history_ccc5e5d4.json"


def test_adopt_without_a_legacy_file_is_not_found(paths):
    with pytest.raises(NotFound, match="no legacy session for agent 'Weather Bot'"):
        session_adopt.plan_agent(paths, "Weather Bot")


def test_adopt_moves_by_default_and_copies_with_copy(paths, tmp_path):
    legacy = sessions_dir(paths) / "history_8fe938c0.json"
    legacy_doc = json.loads(legacy.read_text())
    plan = session_adopt.plan_agent(paths, "Legacy Bot", workspace_dir=tmp_path, copy=True)
    adopt(paths, plan)
    assert legacy.exists()
    adopted = json.loads(file_of(plan.target).read_text())
    assert adopted == {**legacy_doc, "session_id": plan.target_id}
    file_of(plan.target).unlink()
    adopt(paths, session_adopt.plan_agent(paths, "Legacy Bot", workspace_dir=tmp_path))
    assert not legacy.exists() and file_of(plan.target).exists()


def test_adopt_replaces_an_empty_workspace_session_without_asking(paths, tmp_path):
    target = sessions_dir(paths) / f"{history_id(workspace_id(tmp_path), 'Legacy Bot')}.json"
    target.write_text(json.dumps({"session_id": target.stem, "messages": [], "archived_messages": []}))
    plan = session_adopt.plan_agent(paths, "Legacy Bot", workspace_dir=tmp_path)
    assert (plan.action, plan.target_empty) == ("move", True)
    [change] = adopt(paths, plan)
    assert "replaces an empty workspace session" in change.detail
    assert len(json.loads(target.read_text())["messages"]) == 4


def test_adopt_refuses_an_existing_workspace_file_without_merge_or_replace(paths, tmp_path):
    target = sessions_dir(paths) / f"{history_id(workspace_id(tmp_path), 'Legacy Bot')}.json"
    target.write_text(json.dumps({"session_id": target.stem, "messages": [
        {"role": "user", "content": "workspace turn", "timestamp": 1.0}]}))
    with pytest.raises(TargetExists, match="pass --merge to combine the histories or --replace"):
        session_adopt.plan_agent(paths, "Legacy Bot", workspace_dir=tmp_path)
    with pytest.raises(UsageError):
        session_adopt.plan_agent(paths, "Legacy Bot", workspace_dir=tmp_path, merge=True, replace=True)


def test_adopt_replace_overwrites_and_merge_unites(paths, tmp_path):
    wid = workspace_id(tmp_path)
    target = sessions_dir(paths) / f"{history_id(wid, 'Legacy Bot')}.json"
    legacy_doc = json.loads((sessions_dir(paths) / "history_8fe938c0.json").read_text())
    first = legacy_doc["messages"][0]
    ws_doc = {"session_id": target.stem, "messages": [
        {"role": "user", "content": "newer, in the workspace", "timestamp": first["timestamp"] + 1000, "metadata": {}},
        dict(first),  # an exact duplicate of the legacy head
    ], "agent_name": "Legacy Bot", "metadata": {"model": "ws-model", "only_ws": 1}, "custom": "kept"}
    target.write_text(json.dumps(ws_doc))
    plan = session_adopt.plan_agent(paths, "Legacy Bot", workspace_dir=tmp_path, merge=True, copy=True)
    assert plan.action == "merge"
    adopt(paths, plan)
    merged = json.loads(target.read_text())
    contents = [m["content"] for m in merged["messages"]]
    assert contents[0] == first["content"] and contents.count(first["content"]) == 1
    assert contents[-1] == "newer, in the workspace"
    assert len(contents) == len(legacy_doc["messages"]) + 1
    assert merged["session_id"] == target.stem and merged["custom"] == "kept"
    assert merged["metadata"]["model"] == "ws-model" and merged["metadata"]["only_ws"] == 1
    assert merged["metadata"]["agent_id"] == legacy_doc["metadata"]["agent_id"]  # legacy-only key kept
    adopt(paths, session_adopt.plan_agent(paths, "Legacy Bot", workspace_dir=tmp_path, replace=True))
    assert json.loads(target.read_text()) == {**legacy_doc, "session_id": target.stem}
    assert not (sessions_dir(paths) / "history_8fe938c0.json").exists()


def test_adopt_plan_asks_before_replacing_a_history_with_messages(paths, tmp_path):
    target = sessions_dir(paths) / f"{history_id(workspace_id(tmp_path), 'Legacy Bot')}.json"
    target.write_text(json.dumps({"session_id": target.stem, "messages": [
        {"role": "user", "content": "workspace turn", "timestamp": 1.0}]}))
    plan = sessions.plan_adopt(paths, "Legacy Bot", workspace_dir=tmp_path, replace=True)
    assert plan.question == f"Replace {target.name} with the legacy history of 'Legacy Bot'?"
    assert sessions.plan_adopt(paths, "Legacy Bot", workspace_dir=tmp_path, merge=True).question is None
    with pytest.raises(UsageError, match="give AGENT_NAME, or --all"):
        sessions.plan_adopt(paths, "Legacy Bot", every=True)
    with pytest.raises(UsageError, match="--merge and --replace are alternatives"):
        sessions.plan_adopt(paths, every=True, merge=True, replace=True)


def test_legacy_sessions_groups_files_whose_agent_name_matches_their_id(paths):
    found = [(name, [file_of(p).name for p in files]) for name, files in session_adopt.legacy_sessions(paths)]
    assert found == [("Legacy Bot", ["history_8fe938c0.json"]), ("Old Bot", ["history_ccc5e5d4.json"])]


def test_legacy_sessions_counts_an_unnamed_agents_file_as_agent(paths):
    unnamed = sessions_dir(paths) / "history_d4f0bc5a.json"  # sha256("agent")[:8]
    unnamed.write_text(json.dumps({"session_id": unnamed.stem, "agent_name": None, "messages": []}))
    assert ("agent", [Located("json", str(unnamed))]) in session_adopt.legacy_sessions(paths)


def test_global_scope_plan_is_a_skip_or_a_refusal(paths, tmp_path):
    plan = session_adopt.plan_agent(paths, "Legacy Bot", global_scope=True)
    assert (plan.action, file_of(plan.target).name) == ("skip", "history_8fe938c0.json")
    [change] = adopt(paths, plan)
    assert change.action == "skipped" and "already loads history_8fe938c0.json" in change.detail
    assert session_adopt.plan_agent(paths, "Legacy Bot", global_scope=True, workspace_dir=tmp_path).action == "move"
    (sessions_dir(paths) / f"{history_id('global', 'Legacy Bot')}.json").write_text('{"messages": []}')
    with pytest.raises(Refused, match="global scope"):
        session_adopt.plan_agent(paths, "Legacy Bot", global_scope=True)


def test_undated_legacy_files_are_merged_md5_era_first(paths, tmp_path):
    sdir = sessions_dir(paths)
    md5, sha = sdir / "history_b33aed8f.json", sdir / "history_d4f0bc5a.json"  # md5("agent"), sha256("agent")
    md5.write_text(json.dumps({"session_id": md5.stem, "agent_name": None, "messages": [], "era": "md5"}))
    sha.write_text(json.dumps({"session_id": sha.stem, "agent_name": None, "messages": [], "era": "sha256"}))
    for sources in (None, [Located("json", str(sha)), Located("json", str(md5))]):
        plan = session_adopt.plan_agent(paths, None, workspace_dir=tmp_path, sources=sources)
        assert plan.sources == [Located("json", str(md5)), Located("json", str(sha))]
    adopt(paths, plan)
    assert json.loads(file_of(plan.target).read_text())["era"] == "sha256"  # the newer file's fields win
