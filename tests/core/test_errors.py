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
                             then="nothing changed").message == "/x: write failed: no space left on device; nothing changed"
    assert errors.io_failure("/d", IsADirectoryError(21, "Is a directory")).message == "/d: is a directory, not a file"
    assert errors.io_failure("/x", OSError(5, "I/O error")).exit_code == errors.EXIT_IO


def _corrupt(path: str) -> None:
    raise errors.CorruptFile(path, "not JSON")


def test_every_error_crosses_a_process_boundary_whole():
    """A scan's worker hands errors back to the parent: one that pickles but cannot be rebuilt (an ``__init__``
    taking other arguments than its message) kills the pool's result thread, and the scan waits for ever."""
    import pickle
    from pathlib import Path

    from praisonmem.core.backup.archive import BadEntry
    from praisonmem.core.backup.nofollow import LinkInTheWay
    from praisonmem.core.sessions.stores import OutsideStore

    made = [errors.CorruptFile("/h/sessions/a.json", "not JSON"), errors.NotRegularFile("/h/p", "a named pipe"),
            BadEntry("../x", "climbs out"), LinkInTheWay(Path("/h/memory"), "refusing to write through it"),
            OutsideStore("x.json", ["/h/sessions"]), errors.UsageError("bad"), errors.AuthFailed("no")]
    for error in made:
        back = pickle.loads(pickle.dumps(error))
        assert (type(back), back.message, str(back), vars(back)) == (type(error), error.message, str(error),
                                                                     vars(error))
        assert back.exit_code == error.exit_code


def test_an_error_raised_in_a_worker_reaches_the_parent():
    import multiprocessing

    with multiprocessing.get_context("fork").Pool(1) as pool:
        with pytest.raises(errors.CorruptFile) as raised:
            pool.apply_async(_corrupt, ("/h/sessions/a.json",)).get(timeout=30)
    assert (raised.value.path, raised.value.reason) == ("/h/sessions/a.json", "not JSON")
