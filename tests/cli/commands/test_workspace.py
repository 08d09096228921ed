"""workspace id and workspace paths."""

from __future__ import annotations

import os


from praisonmem.core import sessions as ws
from tests.helpers import FIXTURE_ROOT, make_fixture_repo


def test_workspace_id_in_a_git_repo(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(make_fixture_repo(tmp_path / "repo"))
    assert cli("workspace", "id").stdout == f"git:{FIXTURE_ROOT}\n"
    assert cli("workspace", "id", "--json").json() == {"workspace_id": f"git:{FIXTURE_ROOT}", "global": False}


def test_workspace_id_outside_git_is_the_real_dir(cli):
    assert cli("workspace", "id").stdout == f"dir:{os.path.realpath(os.getcwd())}\n"


def test_workspace_id_with_agent(cli, fixture_home, tmp_path, monkeypatch):
    monkeypatch.chdir(make_fixture_repo(tmp_path / "repo"))
    data = cli("--home", fixture_home, "workspace", "id", "--agent", "Weather Bot", "--json").json()
    assert data == {
        "workspace_id": f"git:{FIXTURE_ROOT}", "global": False, "agent": "Weather Bot",
        "history_id": "history_fea3173a", "path": str(fixture_home / "sessions" / "history_fea3173a.json"),
        "exists": True, "legacy_ids": ws.legacy_ids("Weather Bot"), "kind": "workspace",
    }


def test_workspace_id_global_adopts_legacy_like_the_library(cli, fixture_home):
    data = cli("--home", fixture_home, "workspace", "id", "--agent", "Legacy Bot", "--global", "--json").json()
    assert (data["workspace_id"], data["global"]) == ("global", True)
    assert (data["history_id"], data["kind"], data["exists"]) == ("history_8fe938c0", "legacy_sha256", True)
    scoped = cli("--home", fixture_home, "workspace", "id", "--agent", "Legacy Bot", "--json").json()
    assert scoped["kind"] == "workspace" and scoped["exists"] is False


def test_workspace_id_reads_the_global_environment_variable(cli, fixture_home, monkeypatch):
    monkeypatch.setenv("PRAISONAI_GLOBAL_SESSIONS", "YES")
    data = cli("--home", fixture_home, "workspace", "id", "--agent", "Old Bot", "--json").json()
    assert (data["global"], data["history_id"], data["kind"]) == (True, "history_ccc5e5d4", "legacy_md5")
    monkeypatch.setenv("PRAISONAI_GLOBAL_SESSIONS", " true")
    assert cli("workspace", "id", "--json").json()["global"] is False


def test_workspace_id_human_output_with_agent(cli, fixture_home):
    out = cli("--home", fixture_home, "workspace", "id", "--agent", "Global Bot", "--global").stdout
    assert "history_id     history_d465a9b7 (global)\n" in out
    assert "exists         yes\n" in out


def test_workspace_paths(cli, tmp_path, monkeypatch):
    monkeypatch.setenv("PRAISONAI_HOME", str(tmp_path / "ph"))
    (tmp_path / "ph" / "sessions").mkdir(parents=True)
    rows = {r["name"]: r for r in cli("workspace", "paths", "--json").json()}
    assert rows["data_dir"] == {"name": "data_dir", "path": str(tmp_path / "ph"), "source": "PRAISONAI_HOME",
                                "exists": True}
    assert rows["sessions_dir"]["exists"] is True
    assert rows["spill_dir"]["path"] == str(tmp_path / "ph" / "state" / "session_spill")
    assert rows["memory_dir"]["path"] == os.path.join(os.getcwd(), ".praisonai", "memory")
    human = cli("--home", tmp_path, "workspace", "paths").stdout.splitlines()
    assert human[0] == "NAME\tPATH\tEXISTS\tCHOSEN BY"
    assert human[1] == f"data_dir\t{tmp_path}\tyes\t--home"
