"""Every workspace/id vector the real library produced (fixtures/vectors.json)."""

from __future__ import annotations

import os
import subprocess

import pytest

from praisonmem.core import sessions as ws
from tests.helpers import FIXTURE_ROOT, VECTORS, git, git_env, make_fixture_repo


@pytest.mark.parametrize("case", VECTORS["history_session_ids"], ids=lambda c: c["hash_input"])
def test_history_ids_match_the_library(case):
    wid = "global" if case["global"] else case["workspace_id"]
    assert ws.history_id(wid, case["agent_name"]) == case["expected_session_id"]
    assert ws.session_file_name(case["expected_session_id"]) == case["expected_file"]


@pytest.mark.parametrize("case", VECTORS["global_sessions_env"], ids=lambda c: repr(c["PRAISONAI_GLOBAL_SESSIONS"]))
def test_global_flag_values_match_the_library(case):
    assert ws.is_global(case["PRAISONAI_GLOBAL_SESSIONS"]) is case["is_global"]
    env = {"PRAISONAI_GLOBAL_SESSIONS": case["PRAISONAI_GLOBAL_SESSIONS"]}
    assert ws.global_from_env(env) is case["is_global"]


def test_global_flag_unset_is_workspace_scope():
    assert ws.global_from_env({}) is False


@pytest.mark.parametrize("case", VECTORS["legacy_ids"], ids=lambda c: c["agent_name"])
def test_legacy_ids_match_the_library(case):
    assert ws.legacy_ids(case["agent_name"]) == {
        "sha256": case["name_sha256_id"], "md5": case["name_md5_id"]}
    assert ws.history_id("global", case["agent_name"]) == case["global_id"]


@pytest.mark.parametrize(
    "case", VECTORS["adoption_order"],
    ids=lambda c: f"{'+'.join(c['existing_kinds']) or 'none'}-{'global' if c['global'] else 'ws'}")
def test_adoption_order_matches_the_library(case, tmp_path):
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    for name in case["existing_files"]:
        (sessions / name).write_text("{}", encoding="utf-8")
    choice = ws.choose_history_id(case["agent_name"], lambda sid: (sessions / f"{sid}.json").exists(),
                                  workspace=case["workspace_id"], global_scope=case["global"])
    assert choice.session_id == case["chosen_session_id"]
    expected_kind = {"name_sha256": "legacy_sha256", "name_md5": "legacy_md5"}.get(
        case["chosen_kind"], case["chosen_kind"])
    assert choice.kind == expected_kind


@pytest.mark.parametrize("case", VECTORS["session_file_names"], ids=lambda c: repr(c["session_id"]))
def test_session_file_names_match_the_library(case):
    assert ws.session_file_name(case["session_id"]) == case["file_name"]


def test_workspace_id_of_the_fixture_repo_and_a_subdirectory(tmp_path):
    repo = make_fixture_repo(tmp_path / "gitproj")
    sub = repo / "nested" / "deeper"
    sub.mkdir(parents=True)
    assert ws.workspace_id(repo) == f"git:{FIXTURE_ROOT}"
    assert ws.workspace_id(sub) == VECTORS["workspace_ids"]["edge_cases"][0]["workspace_id"]


def test_workspace_id_of_a_repo_without_commits_is_its_dir(tmp_path):
    empty = tmp_path / "emptyrepo"
    subprocess.run(["git", "init", "-q", str(empty)], check=True)
    assert ws.workspace_id(empty) == "dir:" + os.path.realpath(empty)


def test_workspace_id_through_a_symlink_is_the_real_path(tmp_path):
    target = tmp_path / "plainproj"
    target.mkdir()
    link = tmp_path / "link-to-plain"
    link.symlink_to(target)
    assert ws.workspace_id(link) == "dir:" + os.path.realpath(target)


def test_workspace_id_with_two_roots_takes_the_last_line(tmp_path):
    case = VECTORS["workspace_ids"]["edge_cases"][3]
    multi = tmp_path / "multiroot"
    subprocess.run(["git", "init", "-q", "-b", "main", str(multi)], check=True, env=git_env())
    git(multi, "commit", "-q", "--allow-empty", "-m", "old root", date="2020-01-01T00:00:00+0000")
    git(multi, "checkout", "-q", "--orphan", "other")
    git(multi, "commit", "-q", "--allow-empty", "-m", "new root", date="2025-01-01T00:00:00+0000")
    git(multi, "checkout", "-q", "main")
    git(multi, "merge", "-q", "--allow-unrelated-histories", "-m", "merge", "other",
        date="2025-06-01T00:00:00+0000")
    assert ws.workspace_id(multi) == case["workspace_id"]


def test_workspace_id_without_git_on_path_is_the_dir(tmp_path, monkeypatch):
    repo = make_fixture_repo(tmp_path / "repo")
    monkeypatch.setenv("PATH", str(tmp_path / "no-bin"))
    assert ws.workspace_id(repo) == "dir:" + os.path.realpath(repo)


def test_workspace_id_defaults_to_the_cwd(tmp_path, monkeypatch):
    repo = make_fixture_repo(tmp_path / "repo")
    monkeypatch.chdir(repo)
    assert ws.workspace_id() == f"git:{FIXTURE_ROOT}"


def test_workspace_id_is_global_when_the_cwd_is_gone(tmp_path, monkeypatch):
    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()
    assert ws.workspace_id() == "global"


@pytest.mark.parametrize(
    "session_id, agent, expected",
    [
        ("history_fea3173a", "Weather Bot", "workspace"),
        (ws.history_id("global", "Weather Bot"), "Weather Bot", "global"),
        (ws.legacy_ids("Weather Bot")["sha256"], "Weather Bot", "legacy"),
        (ws.legacy_ids("Weather Bot")["md5"], "Weather Bot", "legacy"),
        (ws.history_id("dir:/elsewhere", "Weather Bot"), "Weather Bot", "other"),
        ("support/ticket #1234", "Support", "explicit"),
        ("history_notahash", "Weather Bot", "explicit"),
        (ws.history_id(f"git:{FIXTURE_ROOT}", None), None, "workspace"),
    ],
)
def test_scope_relative_to_the_fixture_workspace(session_id, agent, expected):
    assert ws.scope_of(session_id, agent, f"git:{FIXTURE_ROOT}") == expected
