"""session adopt --from-workspace: history whose project moved.

A plain directory's workspace id is its real path, so moving or re-cloning it strands the agent's history under
the old id (scope ``other``). The histories here are real session documents (the 1.6.157 era's) stored under the
id a 1.7.17 Agent computes in the old place.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from praisonmem.core.sessions import history_id, workspace_id
from tests.helpers import ERAS, SHA_LEGACY_BOT, git, make_fixture_repo, refused, snapshot

NAME = "Legacy Bot"


def era_doc() -> dict:
    return json.loads((ERAS / "1.6.157" / "home" / "sessions" / f"{SHA_LEGACY_BOT}.json").read_text(encoding="utf-8"))


def stored(home: Path, workspace: str, name: str = NAME, doc: dict | None = None) -> Path:
    """The agent's history as a 1.7.17 Agent in ``workspace`` keeps it."""
    sid = history_id(workspace, name)
    path = home / "sessions" / f"{sid}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    body = {**(doc or era_doc()), "session_id": sid, "agent_name": name}
    path.write_text(json.dumps(body, indent=2, ensure_ascii=False), encoding="utf-8")
    path.chmod(0o600)
    return path


def load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.fixture
def moved(tmp_path, monkeypatch):
    """A plain project that lived at old/ and now lives at new/ (the cwd); its history is under old/'s id."""
    old, new = tmp_path / "old" / "proj", tmp_path / "new" / "proj"
    new.mkdir(parents=True)
    monkeypatch.chdir(new)
    home = tmp_path / "home"
    source = stored(home, f"dir:{old}")
    return home, old, new, source


@pytest.mark.parametrize("given", ["path", "relative", "id"])
def test_adopt_from_a_directory_that_no_longer_exists_moves_its_history_here(cli, moved, given):
    home, old, new, source = moved
    legacy = load(source)
    value = {"path": str(old), "relative": os.path.relpath(old, new), "id": f"dir:{old}"}[given]
    result = cli("--home", home, "session", "adopt", NAME, "--from-workspace", value, "--json")
    assert result.exit_code == 0, result.stderr
    target = history_id(f"dir:{new}", NAME)
    assert [(c["action"], c["session_id"], c["new_session_id"], c["target"]) for c in result.json()] == [
        ("adopt-moved", source.stem, target, str(home / "sessions" / f"{target}.json"))]
    assert result.json()[0]["detail"] == f"agent '{NAME}', workspace dir:{new}, from workspace dir:{old}"
    assert load(home / "sessions" / f"{target}.json") == {**legacy, "session_id": target}
    assert not source.exists()
    rows = {r["session_id"]: r["scope"] for r in cli("--home", home, "session", "list", "--json").json()}
    assert rows[target] == "workspace"


def test_adopt_from_a_git_workspace_id(cli, tmp_path, monkeypatch):
    """A repository whose root commit changed (its history rewritten): the old id is given as git:<sha>."""
    old_root = make_fixture_repo(tmp_path / "before")  # only for its root commit id
    old_id = workspace_id(old_root)
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    git(repo, "commit", "-q", "--allow-empty", "-m", "rewritten root", date="2026-02-01T00:00:00+0000")
    monkeypatch.chdir(repo)
    home = tmp_path / "home"
    source = stored(home, old_id)
    here = workspace_id()
    assert here.startswith("git:") and old_id.startswith("git:") and here != old_id
    result = cli("--home", home, "session", "adopt", NAME, "--from-workspace", old_id, "--json")
    assert result.exit_code == 0, result.stderr
    assert result.json()[0]["new_session_id"] == history_id(here, NAME) and not source.exists()


def test_an_existing_directory_gives_its_own_workspace_id(cli, tmp_path, monkeypatch):
    """A DIR that still exists and is a repository names its git id, as the agent computed it there."""
    repo = make_fixture_repo(tmp_path / "clone")
    home = tmp_path / "home"
    source = stored(home, workspace_id(repo))
    here = tmp_path / "elsewhere"
    here.mkdir()
    monkeypatch.chdir(here)
    result = cli("--home", home, "session", "adopt", NAME, "--from-workspace", repo, "--json")
    assert result.exit_code == 0, result.stderr
    assert result.json()[0]["session_id"] == source.stem


def test_merge_replace_copy_and_dry_run_follow_adopt(cli, moved):
    home, old, new, source = moved
    target = home / "sessions" / f"{history_id(f'dir:{new}', NAME)}.json"
    here_doc = {**era_doc(), "messages": [{"role": "user", "content": "written here after the move",
                                           "timestamp": 1796200000.0, "metadata": {}}]}
    stored(home, f"dir:{new}", doc=here_doc)
    line = refused(cli, home, "--home", home, "session", "adopt", NAME, "--from-workspace", old, code=4)
    assert line == (f"praisonmem: error: {target.name} (agent '{NAME}' in dir:{new}) already exists: pass --merge "
                    "to combine the histories or --replace to overwrite it\n")
    before = snapshot(home)
    dry = cli("--home", home, "session", "adopt", NAME, "--from-workspace", old, "--merge", "--dry-run")
    assert dry.exit_code == 0 and dry.stdout.startswith(f"would merge {source.name} → {target.name} [")
    assert snapshot(home) == before
    done = cli("--home", home, "session", "adopt", NAME, "--from-workspace", old, "--merge", "--copy", "--json")
    assert done.exit_code == 0, done.stderr
    assert source.exists()  # --copy keeps it
    contents = [m["content"] for m in load(target)["messages"] + load(target).get("archived_messages", [])]
    assert "written here after the move" in contents
    assert all(m["content"] in contents for m in load(source)["messages"])
    replace = refused(cli, home, "--home", home, "session", "adopt", NAME, "--from-workspace", old, "--replace",
                      code=4)
    assert "not confirmed" in replace
    legacy = load(source)
    assert cli("--home", home, "session", "adopt", NAME, "--from-workspace", old, "--replace", "--yes").exit_code == 0
    assert load(target) == {**legacy, "session_id": target.stem}
    assert not source.exists()


def test_adopt_all_from_a_workspace_takes_every_agent_it_held(cli, moved):
    home, old, new, source = moved
    other = stored(home, f"dir:{old}", name="Café ✓ 日本")
    unrelated = stored(home, "dir:/somewhere/else", name="Third Bot")
    result = cli("--home", home, "session", "adopt", "--all", "--from-workspace", old, "--json")
    assert result.exit_code == 0, result.stderr
    assert sorted((c["session_id"], c["new_session_id"]) for c in result.json()) == sorted([
        (source.stem, history_id(f"dir:{new}", NAME)), (other.stem, history_id(f"dir:{new}", "Café ✓ 日本"))])
    assert unrelated.exists() and not source.exists() and not other.exists()


@pytest.mark.parametrize("value, message", [
    ("dir:relative/path", "--from-workspace dir:relative/path: a dir: workspace id holds an absolute path"),
    ("git:xyz", "--from-workspace git:xyz: a git: workspace id is git: and a commit id (40 or 64 hex digits)"),
    ("", "--from-workspace must not be empty"),
])
def test_bad_workspace_ids_are_usage_errors(cli, moved, value, message):
    home = moved[0]
    line = refused(cli, home, "--home", home, "session", "adopt", NAME, "--from-workspace", value, code=2)
    assert line == f"praisonmem: error: {message}\n"


def test_nothing_there_is_not_found_and_the_same_workspace_is_a_usage_error(cli, moved, tmp_path):
    home, old, new, _ = moved
    missing = tmp_path / "never"
    line = refused(cli, home, "--home", home, "session", "adopt", NAME, "--from-workspace", missing, code=3)
    sid = history_id(f"dir:{missing}", NAME)
    assert line == (f"praisonmem: error: no history for agent '{NAME}' from workspace dir:{missing} in "
                    f"{home / 'sessions'} (looked for {sid}.json)\n")
    line = refused(cli, home, "--home", home, "session", "adopt", NAME, "--from-workspace", new, code=2)
    assert line == (f"praisonmem: error: --from-workspace {new} is this workspace (dir:{new}): its history is "
                    "already the one the agent loads here\n")


def test_global_scope_refuses_without_an_explicit_workspace(cli, moved, monkeypatch):
    home, old, new, _ = moved
    monkeypatch.setenv("PRAISONAI_GLOBAL_SESSIONS", "1")
    line = refused(cli, home, "--home", home, "session", "adopt", NAME, "--from-workspace", old, code=4)
    assert line == ("praisonmem: error: PRAISONAI_GLOBAL_SESSIONS is set: agents use global-scope history, not a "
                    "workspace's, so adopting into this workspace would not reach them; nothing changed (give "
                    "--workspace DIR to adopt into that directory's workspace anyway)\n")
    assert cli("--home", home, "session", "adopt", NAME, "--from-workspace", old, "--workspace", new).exit_code == 0
