"""``praisonmem browse`` before its UI starts: without Textual, the one line naming the extra (exit 5, as a
missing chroma or postgres extra); without a terminal, a usage error pointing at the read commands; nothing
on stdout either way, and Textual is imported by nothing but this command."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

from tests.conftest import REPO


def test_without_textual_browse_says_which_extra_to_install(cli, monkeypatch, fixture_home):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "textual" else real(name, *a))
    result = cli("--home", fixture_home, "browse")
    assert (result.exit_code, result.stdout) == (5, "")
    assert result.stderr == "praisonmem: error: the terminal UI needs Textual: pip install 'praisonmem[tui]'\n"


def test_browse_off_a_terminal_is_a_usage_error(cli, fixture_home):
    result = cli("--home", fixture_home, "browse")
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == ("praisonmem: error: browse is a full-screen terminal UI: run it on a terminal (stdin "
                             "and stdout), or use 'session list', 'session show' and 'session search' in a script\n")


def test_browse_on_a_home_that_does_not_exist_is_not_found(cli, tmp_path):
    result = cli("--home", tmp_path / "nope", "browse")
    assert (result.exit_code, result.stdout) == (3, "")
    assert result.stderr.startswith(f"praisonmem: error: --home {tmp_path / 'nope'}: no such directory")
    assert result.stderr.count("\n") == 1


def test_no_other_command_imports_textual(tmp_path):
    code = ("import sys\nfrom praisonmem.cli.app import run\n"
            "for args in (['--help'], ['browse', '--help'], ['session', 'list', '--json']):\n"
            "    run(args)\n"
            "print('textual' in sys.modules, any(m.startswith('praisonmem.tui') for m in sys.modules))\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                          env={"PYTHONPATH": str(REPO), "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"})
    assert done.stdout.splitlines()[-1] == "False False", done.stderr
