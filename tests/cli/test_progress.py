"""Progress bars: drawn on stderr when it is a terminal and the work is large, never otherwise.

Each command runs in a real process whose stderr is a pseudo-terminal (stdout a
pipe, as in `praisonmem ... > out.json`), so Rich decides for itself whether it
is on a terminal.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import run_on_a_pty

FILES = 400  # past the "few hundred files" threshold (MIN_FILES = 300)


def run_with_tty_stderr(args: list[str], cwd: Path) -> tuple[int, str, str]:
    """stderr on a pseudo-terminal, stdout to a file (not a pipe nobody drains while stderr is read)."""
    with (cwd / "stdout.txt").open("w+b") as stdout_file:
        code, stderr = run_on_a_pty(args, cwd, {"COLUMNS": "100", "LINES": "40", "TERM": "xterm"}, stdout=stdout_file)
        stdout_file.seek(0)
        return code, stdout_file.read().decode(), stderr


@pytest.fixture
def big_home(tmp_path) -> Path:
    home = tmp_path / "home"
    sessions = home / "sessions"
    sessions.mkdir(parents=True)
    for i in range(FILES):
        doc = {"session_id": f"s{i:04d}", "messages": [{"role": "user", "content": f"hello {i}"}],
               "created_at": "2026-01-01T00:00:00+00:00", "updated_at": "2026-01-01T00:00:00+00:00"}
        (sessions / f"s{i:04d}.json").write_text(json.dumps(doc), encoding="utf-8")
    return home


@pytest.mark.parametrize(("args", "label"), [
    (["check", "{home}", "--json"], "Checking"),  # a walk whose size is not known up front
    (["--home", "{home}", "session", "list", "--limit", "0", "--json"], "Reading sessions"),
    (["--home", "{home}", "session", "search", "hello", "--json"], "Searching sessions"),
    (["--home", "{home}", "backup", "create", "-o", "{out}", "--include", "sessions", "--json"], "Backing up"),
    (["--home", "{home}", "session", "prune", "--older-than", "1d", "--dry-run", "--json"], "Pruning"),
])
def test_large_work_draws_a_bar_on_a_terminal_stderr(big_home, tmp_path, args, label):
    argv = [a.format(home=big_home, out=tmp_path / "backups") for a in args]
    code, stdout, stderr = run_with_tty_stderr(argv, tmp_path)
    assert code in (0, 1), stderr  # check may report findings
    assert label in stderr
    json.loads(stdout)  # the bar never reaches stdout


def test_restore_draws_a_bar_on_a_terminal_stderr(big_home, tmp_path):
    code, stdout, stderr = run_with_tty_stderr(["--home", str(big_home), "backup", "create", "-o",
                                                str(tmp_path / "b.tar.gz"), "--include", "sessions", "--json"], tmp_path)
    assert code == 0, stderr
    code, stdout, stderr = run_with_tty_stderr(["backup", "restore", str(tmp_path / "b.tar.gz"), "--to",
                                                str(tmp_path / "restored"), "--yes", "--json"], tmp_path)
    assert code == 0, stderr
    assert "Verifying" in stderr and "Restoring" in stderr
    assert len(json.loads(stdout)) == FILES


def test_no_bar_when_stderr_is_not_a_terminal(cli, big_home):
    result = cli("check", str(big_home))
    assert "Checking" not in result.stderr


def test_small_work_draws_nothing(tmp_path, fixture_home):
    code, _, stderr = run_with_tty_stderr(["check", str(fixture_home)], tmp_path)
    assert "Checking" not in stderr
