"""A newcomer's first mistakes get a hint: each is one stderr line that says what was meant
or where praisonmem looked, with the documented exit code."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from praisonmem.core.sessions.workspace import history_id, workspace_id
from tests.conftest import PRAISONAI_FIXTURES


def nowhere_hint(cwd: Path) -> str:
    memory = cwd / ".praisonai" / "memory"
    return (f"praisonmem: warning: no FileMemory directory at {memory} (default ./.praisonai/memory (project dir, "
            "as the library writes)); FileMemory lives in the project that wrote it: run there, or give "
            "--memory-dir\n")


@pytest.mark.parametrize(("args", "header"), [
    (["memory", "list"], "TYPE\tID\tIMPORTANCE\tWHEN\tTEXT\n"),
    (["memory", "search", "dark"], "TYPE\tSCORE\tID\tTEXT\n"),
    (["memory", "users"], "USER\tSHORT-TERM\tLONG-TERM\tENTITIES\tEPISODIC\tSUMMARIES\n"),
    (["episodic", "get"], "DATE\tID\tTIME\tTEXT\n"),
])
def test_memory_commands_outside_a_project_say_where_they_looked(cli, args, header):
    cwd = Path(os.getcwd())
    result = cli(*args)
    assert (result.exit_code, result.stdout, result.stderr) == (0, header, nowhere_hint(cwd))
    assert not (cwd / ".praisonai").exists()  # looking created nothing


def test_memory_commands_in_a_project_say_nothing_about_it(cli, project):
    result = cli("memory", "list", "--user-id", "alice")
    assert (result.exit_code, result.stderr) == (0, "")


@pytest.mark.parametrize("args", [["session", "list"], ["session", "search", "x"], ["learn", "list"],
                                  ["check"], ["session", "show", "x"]])
def test_a_home_that_does_not_exist_exits_3(cli, tmp_path, args):
    typo = tmp_path / "hmoe"
    result = cli("--home", typo, *args)
    assert (result.exit_code, result.stdout) == (3, "")
    assert result.stderr == (f"praisonmem: error: --home {typo}: no such directory (check the path; 'praisonmem "
                             "workspace paths' shows what each option resolves to)\n")
    assert not typo.exists()


@pytest.mark.parametrize("args", [["workspace", "paths"], ["config", "show"]])
def test_workspace_and_config_still_show_a_home_that_does_not_exist(cli, tmp_path, args):
    result = cli("--home", tmp_path / "hmoe", *args)
    assert result.exit_code == 0, result.stderr


def test_check_accepts_a_project_directory(cli, project):
    for target in (project, project / ".praisonai"):
        result = cli("check", target, "--json")
        assert result.exit_code == 0, result.stderr
        assert result.json()["roots"] == [str(project / ".praisonai" / "memory")]
        assert result.json()["files_checked"] > 0


def test_check_of_a_directory_that_is_nothing_says_so(cli, tmp_path):
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "notes.txt").write_text("not PraisonAI's", encoding="utf-8")  # empty: nothing to check (3)
    result = cli("check", tmp_path / "plain")
    assert (result.exit_code, result.stderr) == (2, f"praisonmem: error: {tmp_path / 'plain'}: not a PraisonAI home, "
                                                    "sessions, spill, learn or FileMemory path, nor a project holding "
                                                    ".praisonai/memory\n")


@pytest.mark.parametrize(("args", "fixed"), [
    (["session", "list", "--home", "x"], "praisonmem --home PATH session list"),
    (["session", "list", "--home=x", "--json"], "praisonmem --home PATH session list"),
    (["memory", "list", "--memory-dir", "x"], "praisonmem --memory-dir PATH memory list"),
    (["check", "--no-color"], "praisonmem --no-color check"),
    (["backup", "list", "--lock-timeout", "3"], "praisonmem --lock-timeout SECONDS backup list"),
])
def test_a_root_option_after_the_command_says_put_it_before(cli, args, fixed):
    result = cli(*args)
    option = args[2].split("=")[0] if args[0] == "session" else args[-2 if args[-1] == "3" else -1]
    option = option if option.startswith("--") else args[2]
    assert (result.exit_code, result.stdout) == (2, "")
    message = f"{option} is an option of praisonmem itself: put it before the command, as in '{fixed}'"
    assert result.stderr in (f"praisonmem: error: {message}\n",
                             f'{{"error": {{"code": "usage", "message": "{message}", "exit_code": 2}}}}\n')


def test_an_unknown_option_is_still_click_s_message(cli):
    result = cli("session", "list", "--bogus")
    assert result.exit_code == 2
    assert result.stderr.startswith("praisonmem: error: no such option: --bogus")


@pytest.mark.parametrize("verb", [["rename", "{}", "new-id"], ["rename", "{}", "--title", "T"], ["delete", "{}", "--yes"]])
def test_rename_and_delete_with_a_unique_prefix_say_did_you_mean(cli, fixture_home, verb):
    before = sorted(p.name for p in (fixture_home / "sessions").iterdir())
    args = [a.format("history_fea") for a in verb]
    result = cli("--home", fixture_home, "session", *args)
    assert (result.exit_code, result.stdout) == (3, "")
    assert result.stderr == (f"praisonmem: error: no session 'history_fea' in any store of {fixture_home / 'sessions'} "
                             "(json); did you mean 'history_fea3173a'?\n")
    assert sorted(p.name for p in (fixture_home / "sessions").iterdir()) == before


def test_an_ambiguous_prefix_is_plain_not_found(cli, fixture_home):
    result = cli("--home", fixture_home, "session", "delete", "history_", "--yes")
    assert (result.exit_code, result.stderr) == (3, f"praisonmem: error: no session 'history_' in any store of "
                                                    f"{fixture_home / 'sessions'} (json)\n")


def test_a_second_adopt_says_the_agent_is_already_adopted_and_where(cli, tmp_path, monkeypatch):
    home = tmp_path / "home"
    shutil.copytree(PRAISONAI_FIXTURES / "home", home)
    first = cli("--home", home, "session", "adopt", "Legacy Bot")
    assert first.exit_code == 0, first.stderr
    wid = workspace_id(None)
    target = history_id(wid, "Legacy Bot")
    again = cli("--home", home, "session", "adopt", "Legacy Bot")
    assert (again.exit_code, again.stdout) == (3, "")
    assert again.stderr == (f"praisonmem: error: agent 'Legacy Bot' is already adopted: its history here is "
                            f"{target}.json in {home / 'sessions'} (workspace {wid}); no legacy session is left "
                            "to adopt\n")


def test_adopting_an_agent_that_never_had_history_is_still_plain_not_found(cli, fixture_home):
    result = cli("--home", fixture_home, "session", "adopt", "Nobody Bot")
    assert result.exit_code == 3
    assert result.stderr.startswith("praisonmem: error: no legacy session for agent 'Nobody Bot' in ")
