"""``check`` findings read on a real terminal: ``SEVERITY  path`` on one line, the message wrapped at spaces under
it, ``fix:`` and its command on a line of their own, a blank line between findings; piped, the same blocks with
each message and command on one line."""

from __future__ import annotations

import shlex
import shutil

import pytest
from rich.cells import cell_len

from tests.cli.test_table_fit import on_a_terminal
from tests.conftest import FIXTURES

HOME = "a-home-directory-with-a-long-name"  # its findings name paths of 72 cells: whole on their line


@pytest.fixture
def home(tmp_path):
    shutil.copytree(FIXTURES / "praisonai-4.7.19-home" / "home", tmp_path / HOME)
    return tmp_path


def blocks(lines: list[str]) -> list[list[str]]:
    """The findings' blocks (the lines between blank lines), without the summary line."""
    text = "\n".join(lines).strip("\n")
    return [block.split("\n") for block in text.split("\n\n")][:-1]


@pytest.mark.parametrize("columns", [80, 100, 120])
def test_findings_wrap_to_the_terminal_with_their_fix_on_its_own_line(cli, home, columns, monkeypatch):
    monkeypatch.chdir(home)
    report = cli("--home", HOME, "check", "--json").json()
    code, lines = on_a_terminal(["--no-pager", "--home", HOME, "check"], home, columns)
    assert code == 0
    assert all(cell_len(line) <= columns for line in lines), [line for line in lines if cell_len(line) > columns]
    found = blocks(lines)
    assert len(found) == len(report["findings"]) == 8
    for block, finding in zip(found, report["findings"]):
        assert block[0] == f"{finding['severity']:<7}  {finding['file']}"  # the path whole, on its line
        body = [line for line in block[1:] if not line.lstrip().startswith("fix: ") and not line.startswith(" " * 14)]
        assert all(line.startswith(" " * 9) and line[9] != " " for line in body)
        assert " ".join(line[9:] for line in body) == finding["message"]  # broken at spaces only, nothing lost
        fix = block[len(body) + 1:]
        if finding["fix"] is None:
            assert fix == []
            continue
        assert fix[0].startswith(" " * 9 + "fix: ")
        pasted = " ".join(line.strip().removeprefix("fix: ").removesuffix(" \\") for line in fix)
        assert shlex.split(pasted) == shlex.split(finding["fix"])  # pasted into a shell: the one command
        assert all(line.endswith(" \\") for line in fix[:-1])
    fixed = next(block for block in found if any("fix: " in line for line in block))
    assert len(fixed) > 3 and any(len(line.strip()) > 40 for line in fixed[1:])  # the long info note wrapped
    assert lines[-1] == "" and lines[-2] == "checked 13 files in 1 location: 0 errors, 5 warnings, 3 notes"


def test_piped_each_message_and_command_is_one_line(cli, home, monkeypatch):
    monkeypatch.chdir(home)
    report = cli("--home", HOME, "check", "--json").json()
    expected = []
    for finding in report["findings"]:
        expected += [f"{finding['severity']:<7}  {finding['file']}", "         " + finding["message"]]
        if finding["fix"]:
            expected.append("         fix: " + finding["fix"])
        expected.append("")
    expected.append("checked 13 files in 1 location: 0 errors, 5 warnings, 3 notes")
    result = cli("--home", HOME, "check")
    assert result.exit_code == 0 and result.stdout.split("\n") == [*expected, ""]


def test_a_command_breaks_between_its_arguments_and_a_path_or_quoted_span_never():
    from praisonmem.cli.output import shell_lines, wrap

    command = "praisonmem --home '/srv/agents/the home' session adopt 'Legacy Bot' --copy"
    assert shell_lines(command, 40, 9) == ["praisonmem --home \\", "  '/srv/agents/the home' \\",
                                           "  session adopt 'Legacy Bot' \\", "  --copy"]  # 40 cells at most
    assert shell_lines(command, 200) == [command]
    assert shell_lines("not 'a command", 12) == ["not 'a", "command"]  # shlex cannot read it: words
    text = "import them with 'praisonmem session adopt' from /very/long/path/of/the/home/sessions/history_1.json now"
    assert wrap(text, 30) == ["import them with", "'praisonmem session adopt'", "from",
                              "/very/long/path/of/the/home/sessions/history_1.json", "now"]
    assert wrap("  indented, kept on the first line", 14) == ["  indented,", "kept on the", "first line"]


def test_a_note_wraps_on_a_terminal_of_a_usable_width_only(monkeypatch):
    from praisonmem.cli import output

    text = "praisonmem: showing 6 of 12 sessions in /srv/agents/home/sessions; --limit 0 shows all"
    assert output._fitted(text, 40) == ("praisonmem: showing 6 of 12 sessions in\n"
                                        "  /srv/agents/home/sessions; --limit 0\n  shows all")
    assert output._fitted(text, None) == text  # stderr is not a terminal
    assert output._fitted(text, 0) == text and output._fitted(text, 19) == text  # a width a pty reports unset
    monkeypatch.setattr(output, "stderr_is_tty", lambda: True)
    monkeypatch.setenv("COLUMNS", "40")
    assert output._fitted(text, None).count("\n") == 2
