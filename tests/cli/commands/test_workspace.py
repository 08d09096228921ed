"""workspace id / paths, root options, and the error contract."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from praisonmem import __version__
from praisonmem.core import sessions as ws
from tests.helpers import FIXTURE_ROOT, make_fixture_repo


def test_version(cli):
    result = cli("--version")
    assert (result.exit_code, result.stdout) == (0, f"praisonmem {__version__}\n")


def test_python_dash_m_and_console_script_agree():
    out = subprocess.run([sys.executable, "-m", "praisonmem", "--version"], capture_output=True, text=True)
    assert (out.returncode, out.stdout) == (0, f"praisonmem {__version__}\n")


def test_output_into_a_closed_pipe_exits_quietly(fixture_home):
    proc = subprocess.Popen([sys.executable, "-m", "praisonmem", "--home", str(fixture_home), "session", "show",
                             "compacted-demo", "--archived"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.readline()
    proc.stdout.close()  # like `| head -1`
    assert proc.wait(timeout=30) in (0, 141)
    assert proc.stderr.read() == b""


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


def test_usage_error_is_one_line_with_exit_2(cli):
    result = cli("session", "list", "--bogus")
    assert result.exit_code == 2
    assert result.stderr == ("praisonmem: error: No such option: --bogus (Possible options: --user) "
                             "(see 'praisonmem session list --help')\n")


def test_usage_error_as_json(cli):
    result = cli("session", "list", "--limit", "-1", "--json")
    assert result.exit_code == 2
    error = json.loads(result.stderr)
    assert set(error) == {"error"} and error["error"]["code"] == "usage" and error["error"]["exit_code"] == 2
    assert "--limit" in error["error"]["message"]


def test_not_found_as_json(cli, fixture_home):
    result = cli("--home", fixture_home, "session", "show", "nope", "--json")
    assert (result.exit_code, result.stdout) == (3, "")
    assert json.loads(result.stderr) == {"error": {
        "code": "not_found", "message": f"no session 'nope' in {fixture_home / 'sessions'}", "exit_code": 3}}


def test_no_arguments_prints_help(cli):
    result = cli()
    assert "Usage" in result.stdout + result.stderr


def test_a_call_imports_only_the_sub_command_it_names(tmp_path):
    """Start-up cost: `workspace id` must not import (or build) the other groups."""
    import subprocess
    import sys

    code = ("import sys\n"
            "from praisonmem.cli.app import SUBCOMMANDS, run\n"
            "assert run(['workspace', 'id', '--json']) == 0\n"
            "print(sorted(n for n, m in SUBCOMMANDS.items() if m in sys.modules))\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True)
    assert done.stdout.splitlines()[-1] == "['workspace']"


def test_root_help_lists_every_sub_command_in_order(cli):
    from praisonmem.cli.app import SUBCOMMANDS

    panel = cli("--help").stdout.split("Commands", 1)[1]
    first_words = [line.strip("│ ").split(" ", 1)[0] for line in panel.splitlines()]
    assert [word for word in first_words if word in SUBCOMMANDS] == list(SUBCOMMANDS)


def test_every_command_has_help_with_an_example():
    import typer

    from praisonmem.cli.app import app

    def walk(command, path):
        subs = getattr(command, "commands", None)
        if subs:
            for name, sub in subs.items():
                yield from walk(sub, [*path, name])
        else:
            yield path, command

    for path, command in walk(typer.main.get_command(app), []):
        assert command.help, path
        assert "Example:" in command.help, path
