"""Exit codes: one table, and every error, every command and the entry point use it."""

from __future__ import annotations

import ast

import pytest

from praisonmem.core import errors
from tests.conftest import REPO


def subclasses(cls: type) -> list[type]:
    return [cls] + [s for sub in cls.__subclasses__() for s in subclasses(sub)]


def test_every_exit_code_praisonmem_uses_is_in_the_table():
    assert sorted(errors.EXIT_CODES) == [0, 1, 2, 3, 4, 5, 70, 130, 141]
    assert {errors.EXIT_INTERNAL, errors.EXIT_BROKEN_PIPE} <= set(errors.EXIT_CODES)


def test_every_error_exits_with_a_code_from_the_table():
    from praisonmem.core.backup.archive import BadEntry  # noqa: F401  (errors defined outside errors.py)
    from praisonmem.core.memory.providers import ProviderFailed, Unsupported  # noqa: F401

    found = subclasses(errors.PraisonMemError)
    assert len(found) >= 14
    assert {cls.exit_code for cls in found} <= set(errors.EXIT_CODES)


@pytest.mark.parametrize("path", sorted((REPO / "praisonmem" / "cli").rglob("*.py")), ids=lambda p: p.name)
def test_no_command_bypasses_the_table_with_typer_exit(path):
    """Commands return their exit code (EXIT_CODES); only --version raises typer.Exit, in cli/app.py."""
    calls = [node.lineno for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
             if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "Exit"]
    assert calls == [] or (path.name == "app.py" and len(calls) == 1)


def test_io_failure_is_one_line_naming_the_path_and_what_was_being_done():
    assert errors.io_failure("/x", PermissionError(13, "Permission denied")).message == "/x: permission denied"
    assert errors.io_failure("/x", OSError(28, "No space left on device"), "write failed",
                             then="nothing changed").message == "/x: write failed: No space left on device; nothing changed"
    assert errors.io_failure("/d", IsADirectoryError(21, "Is a directory")).message == "/d: is a directory, not a file"
    assert errors.io_failure("/x", OSError(5, "I/O error")).exit_code == errors.EXIT_IO
