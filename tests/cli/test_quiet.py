"""cron-friendly output: -q/--quiet on every command (and before it) silences notes, warnings
and progress bars; a failure is still one stderr line and a non-zero exit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer

from praisonmem.cli.app import app
from tests.cli.test_progress import FILES, big_home, run_with_tty_stderr  # noqa: F401 (a fixture)


def leaves(command, path):
    subcommands = getattr(command, "commands", None)
    if not subcommands:
        yield path, command
        return
    for name, sub in subcommands.items():
        yield from leaves(sub, [*path, name])


def test_every_command_takes_q_and_quiet():
    root = typer.main.get_command(app)
    found = [" ".join(path) for path, command in leaves(root, [])
             if not any(set(p.opts) == {"-q", "--quiet"} for p in command.params)]
    assert found == []
    assert any(set(p.opts) == {"-q", "--quiet"} for p in root.params)


@pytest.mark.parametrize("where", ["after", "before"])
def test_quiet_drops_the_showing_note_and_keeps_stdout(cli, fixture_home, where):
    args = ["session", "list", "--limit", "2", "--json"]
    loud = cli("--home", fixture_home, *args)
    assert loud.stderr.startswith("praisonmem: showing 2 of")
    quiet = cli("--home", fixture_home, *(args + ["-q"] if where == "after" else ["--quiet", *args]))
    assert (quiet.exit_code, quiet.stderr, quiet.stdout) == (0, "", loud.stdout)


def test_quiet_drops_warnings_about_skipped_files(cli, fixture_home):
    (fixture_home / "sessions" / "torn.json").write_text('{"session_id": "torn", "mess', encoding="utf-8")
    loud = cli("--home", fixture_home, "session", "search", "hello", "--json")
    assert "warning: skipped unreadable session file" in loud.stderr
    quiet = cli("--home", fixture_home, "session", "search", "hello", "--json", "-q")
    assert (quiet.exit_code, quiet.stderr, quiet.stdout) == (0, "", loud.stdout)


def test_a_failure_under_quiet_is_still_one_stderr_line(cli, fixture_home):
    result = cli("--home", fixture_home, "session", "show", "no-such-session", "-q")
    assert result.exit_code == 3
    assert len(result.stderr.splitlines()) == 1 and result.stderr.startswith("praisonmem: error: ")


def test_a_damaged_backup_under_quiet_says_so_in_one_line_and_exits_1(cli, tmp_path):
    memory = tmp_path / "memory"
    (memory / "u").mkdir(parents=True)
    (tmp_path / "home").mkdir()
    (memory / "u" / "long_term.json").write_bytes(b'[{"id": "a", "content": "trunc')
    made = cli("--home", tmp_path / "home", "--memory-dir", memory, "backup", "create", "-o", tmp_path / "out",
               "--include", "memory", "-q")
    assert (made.exit_code, made.stdout) == (1, "")
    problem = "invalid JSON: unterminated string starting at line 1 column 25"
    assert made.stderr == ("praisonmem: warning: backup written but incomplete: this file does not parse, archived "
                           f"as it is and marked damaged: {memory / 'u' / 'long_term.json'} ({problem})\n")


def test_a_failed_change_under_quiet_is_still_reported(cli, fixture_home):
    result = cli("--home", fixture_home, "session", "delete", "no-such-session", "--yes", "-q")
    assert result.exit_code != 0
    assert len(result.stderr.splitlines()) == 1 and "error" in result.stderr


def test_quiet_draws_no_progress_bar_on_a_terminal(big_home, tmp_path):  # noqa: F811 (the fixture)
    argv = ["--home", str(big_home), "session", "list", "--limit", "0", "--json"]
    code, stdout, stderr = run_with_tty_stderr(argv, tmp_path)
    assert code == 0 and "Reading sessions" in stderr
    code, stdout, stderr = run_with_tty_stderr([*argv, "-q"], tmp_path)
    assert (code, stderr) == (0, "")
    assert len(json.loads(stdout)) == FILES


def test_backup_create_on_a_terminal_with_q_prints_nothing(tmp_path, fixture_home):
    from tests.helpers import run_on_a_pty

    code, screen = run_on_a_pty(["--home", str(fixture_home), "backup", "create", "-o", str(tmp_path / "out"), "-q"],
                                tmp_path, {"COLUMNS": "100", "TERM": "xterm"})
    assert (code, screen) == (0, "")
    assert len(list((tmp_path / "out").iterdir())) == 1
    assert Path(tmp_path / "out").is_dir()
