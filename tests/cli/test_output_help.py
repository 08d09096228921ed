"""``--help`` read in an 80-column terminal: examples that still paste as one command, choice lists not split
mid-word, one paragraph per idea, and the exit codes each command can return."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.cli.test_docs import COMMANDS, groups_and_commands

WITH_EXAMPLES = [path for path, command in groups_and_commands() if "Example:" in (command.help or "")]


def help_at_80(path: list[str]) -> list[str]:
    env = {**os.environ, "COLUMNS": "80", "TERM": "dumb"}
    result = subprocess.run([sys.executable, "-m", "praisonmem", *path[1:], "--help"], capture_output=True,
                            text=True, env=env, timeout=60)
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()


def pasted(lines: list[str]) -> list[str]:
    """The commands the help's example lines make when pasted into a shell (``\\`` continues a line)."""
    commands, current = [], ""
    for line in (line.strip() for line in lines):
        if current:
            current += " " + line.removesuffix("\\").strip()
        elif line.startswith("praisonmem "):
            current = line.removesuffix("\\").strip()
        else:
            continue
        if not line.endswith("\\"):
            commands.append(current)
            current = ""
    return commands


def docstring_examples(path: list[str]) -> list[str]:
    command = dict((" ".join(p), c) for p, c in groups_and_commands())[" ".join(path)]
    tail = command.help.partition("Example:")[2]
    return pasted(tail.splitlines())


@pytest.mark.parametrize("path", WITH_EXAMPLES, ids=" ".join)
def test_examples_paste_as_the_commands_they_are(path):
    lines = help_at_80(path)
    assert all(len(line) <= 80 for line in lines)
    start = next(n for n, line in enumerate(lines) if line.strip() == "Example:")
    shown = pasted(lines[start:])
    assert shown and shown == docstring_examples(path)


def test_a_long_example_becomes_continuation_lines():
    lines = help_at_80(["praisonmem", "session", "migrate"])
    start = lines.index(" Example:".ljust(80)) if " Example:".ljust(80) in lines else next(
        n for n, line in enumerate(lines) if line.strip() == "Example:")
    example = [line.rstrip() for line in lines[start + 2:start + 4]]
    assert example == ["     praisonmem session migrate --from ~/.praisonai/sessions --to \\",
                       "         postgresql://app@db/chat --all --verify"]


def test_choice_lists_are_words_in_the_help_not_a_metavar_split_mid_word():
    lines = help_at_80(["praisonmem", "session", "list"])
    text = "\n".join(lines)
    assert "<workspace|" not in text and "message s" not in text
    scope = next(line for line in lines if line.startswith("│ --scope"))
    assert "SCOPE" in scope
    assert "workspace, global, legacy, other," in text  # the choices, said in the help and wrapped at words


def test_session_list_says_what_store_is_in_one_paragraph():
    from tests.cli.test_docs import groups_and_commands as every

    command = dict((" ".join(p), c) for p, c in every())["praisonmem session list"]
    paragraphs = [p.strip() for p in command.help.split("\n\n")]
    assert sum(p.startswith("STORE") for p in paragraphs) == 1
    store = next(p for p in paragraphs if p.startswith("STORE"))
    assert all(word in store for word in ("json (", "sessions.db (", "project:<id> (", "unified (", "legacy-run (",
                                          "PAIR says"))


@pytest.mark.parametrize("path, codes", [
    (["praisonmem", "session", "list"], "0 success, 2 usage error, 3 not found, 4 refused, 5 I/O error, "
                                        "130 interrupted"),
    (["praisonmem", "session", "delete"], "0 success, 1 problems found or some items failed, 2 usage error, "
                                          "3 not found, 4 refused, 5 I/O error, 130 interrupted"),
    (["praisonmem", "check"], "0 success, 1 problems found or some items failed, 2 usage error, 3 not found, "
                              "4 refused, 5 I/O error, 130 interrupted"),
])
def test_the_help_lists_the_exit_codes(path, codes):
    text = " ".join(" ".join(help_at_80(path)).split())
    assert f"Exit codes: {codes} (70 is a bug in praisonmem)." in text


@pytest.mark.parametrize("path", [p for p, _ in COMMANDS], ids=" ".join)
def test_every_command_lists_its_exit_codes(path):
    command = dict((" ".join(p), c) for p, c in COMMANDS)[" ".join(path)]
    assert command.epilog.startswith("Exit codes: 0 success, ")
