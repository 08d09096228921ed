"""The house rules for imports, checked on every module's ``import`` statements (parsed with ``ast``).

| module                     | may import from praisonmem                                                     |
|----------------------------|--------------------------------------------------------------------------------|
| ``cli/commands/X.py``      | ``core.<COMMAND_PACKAGES[X]>`` (its public ``__init__``, no submodule),         |
|                            | ``core.errors``, ``core.result``, ``core.paths``, ``core.config``, ``cli.*``    |
|                            | infrastructure (not another command module)                                     |
| other ``cli/**`` modules   | any ``core`` package or module through its public ``__init__``, ``core.io.*``,  |
|                            | ``cli.*``                                                                      |
| ``core/<package>/**``      | its own package freely; another core package only through its public            |
|                            | ``__init__``; ``core.io.*``; never ``cli``, Typer, Rich or Click                |
| ``core/*.py``              | like a package of one module                                                    |
| ``tui/**``                 | any ``core`` package through its public ``__init__``, ``core.io.*``,            |
|                            | ``cli.output``, ``cli.render.*``, ``tui.*``; Textual, which nothing else imports |

Neither the core nor the CLI imports ``tui``, except ``cli/commands/browse.py``, inside its command.

Only ``cli/app.py`` may import Typer's private modules (``typer._…``) or Click itself.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.conftest import REPO

PACKAGE = REPO / "praisonmem"
COMMAND_PACKAGES = {  # command group -> the one core package its module talks to
    "workspace": "sessions",  # workspace ids are the sessions package's
    "session": "sessions",
    "memory": "memory",
    "episodic": "memory",
    "learn": "learn",
    "upsonic": "upsonic",
    "state": "state",
    "check": "check",
    "migrate": "migrate",
    "backup": "backup",
    "config": "config",
    "usage": "usage",
    "locate": "locate",
    "completion": "completion",
    "knowledge": "knowledge",
    "forget": "forget",
    "browse": "sessions",  # the session key; the rest is the tui package's, imported inside the command
}
SHARED_CORE = {"errors", "result", "paths", "config"}  # what every command module may import besides its package
FOREIGN_UI = ("typer", "rich", "click")
BROWSE_COMMAND = "praisonmem.cli.commands.browse"
TUI_MAY_USE_CLI = ("praisonmem.cli.output", "praisonmem.cli.render")  # the commands' renderers, nothing else


def module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def is_module(name: str) -> bool:
    relative = Path(*name.split("."))
    return (REPO / relative).with_suffix(".py").is_file() or (REPO / relative / "__init__.py").is_file()


def imports(path: Path) -> list[tuple[int, str]]:
    """Every module ``path`` imports (``from a import b`` is ``a.b`` when ``b`` is a module), with its line."""
    found = []
    package = module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else []))
            for alias in node.names:
                target = f"{base}.{alias.name}"
                found.append((node.lineno, target if is_module(target) else base))
    return found


def core_unit(name: str) -> str | None:
    """``praisonmem.core.sessions.ops`` -> ``sessions``; ``praisonmem.core.learn`` -> ``learn``."""
    parts = name.split(".")
    return parts[2] if len(parts) > 2 and parts[:2] == ["praisonmem", "core"] else None


def is_public(name: str) -> bool:
    """A core package's ``__init__`` or a top-level core module, not a submodule (core.io excepted)."""
    parts = name.split(".")
    return len(parts) <= 3 or parts[2] == "io"


def modules(under: str) -> list[Path]:
    return sorted((PACKAGE / under).rglob("*.py"))


def violations(path: Path) -> list[str]:
    me = module_name(path)
    mine = core_unit(me)
    is_command = me.startswith("praisonmem.cli.commands.") and me.count(".") == 3
    problems = []
    is_tui = me == "praisonmem.tui" or me.startswith("praisonmem.tui.")
    for line, name in imports(path):
        where = f"{path.relative_to(REPO)}:{line}: {name}"
        top = name.split(".")[0]
        if top == "textual" and not is_tui:
            problems.append(f"{where} (only the tui package imports Textual)")
        if name == "praisonmem.tui" or name.startswith("praisonmem.tui."):
            if not is_tui and (me != BROWSE_COMMAND or line in _top_level_lines(path)):
                problems.append(f"{where} (core and cli never import the tui; browse only inside its command)")
            continue
        if is_tui:
            if name.startswith("praisonmem.cli") and not name.startswith(TUI_MAY_USE_CLI):
                problems.append(f"{where} (the tui uses the CLI's output and renderers only)")
            elif core_unit(name) is not None and not is_public(name):
                problems.append(f"{where} (the tui uses core packages through their public __init__)")
            continue
        if top in FOREIGN_UI and (mine is not None or (name.startswith("typer._") or top == "click")
                                  and me != "praisonmem.cli.app"):
            problems.append(f"{where} (core never imports Typer, Rich or Click; private Typer only in cli/app.py)")
        if top != "praisonmem" or name == "praisonmem":
            continue
        unit = core_unit(name)
        if mine is not None:  # a core module
            if name.startswith("praisonmem.cli"):
                problems.append(f"{where} (core never imports the CLI)")
            elif unit is not None and unit != mine and not is_public(name):
                problems.append(f"{where} (another core package only through its public __init__)")
        elif is_command:
            own = COMMAND_PACKAGES[me.rsplit(".", 1)[1]]
            if unit is not None and unit not in SHARED_CORE | {own}:
                problems.append(f"{where} (a command module talks to core.{own} only)")
            elif unit is not None and name.count(".") > 2:
                problems.append(f"{where} (the public __init__ of core.{own}, not a submodule)")
            elif name.startswith("praisonmem.cli.commands."):
                problems.append(f"{where} (a command module does not import another)")
        elif unit is not None and not is_public(name):  # other cli modules
            problems.append(f"{where} (the CLI uses core packages through their public __init__)")
    return problems


def _top_level_lines(path: Path) -> set[int]:
    """The lines of the imports that run when the module is imported (not inside a function)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    inner = {n.lineno for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
             for n in ast.walk(f) if isinstance(n, (ast.Import, ast.ImportFrom))}
    return {n.lineno for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))} - inner


def test_every_command_group_has_a_rule():
    assert {p.stem for p in (PACKAGE / "cli" / "commands").glob("*.py") if p.stem != "__init__"} == \
        set(COMMAND_PACKAGES)


@pytest.mark.parametrize("path", modules("core") + modules("cli") + modules("tui"),
                         ids=lambda p: str(p.relative_to(REPO)))
def test_imports_keep_the_house_rules(path):
    assert violations(path) == []


SESSION_COMMANDS = PACKAGE / "cli" / "commands" / "session.py"
A_CORE_MODULE = PACKAGE / "core" / "sessions" / "_rule_probe.py"
BROWSE = PACKAGE / "cli" / "commands" / "browse.py"
A_TUI_MODULE = PACKAGE / "tui" / "_rule_probe.py"


@pytest.mark.parametrize("module, source, problem", [
    (A_CORE_MODULE, "import typer", "core never imports Typer"),
    (A_CORE_MODULE, "from rich.console import Console", "core never imports Typer"),
    (A_CORE_MODULE, "from praisonmem.cli.output import Output", "core never imports the CLI"),
    (A_CORE_MODULE, "from praisonmem.core.memory.filememory import FileMemoryStore", "only through its public"),
    (SESSION_COMMANDS, "from praisonmem.core import memory", "talks to core.sessions only"),
    (SESSION_COMMANDS, "from praisonmem.core.sessions import listing", "not a submodule"),
    (SESSION_COMMANDS, "from praisonmem.core.io import jsonfile", "talks to core.sessions only"),
    (SESSION_COMMANDS, "from praisonmem.cli.commands import memory", "does not import another"),
    (SESSION_COMMANDS, "from typer._click.core import ParameterSource", "private Typer only in cli/app.py"),
    (SESSION_COMMANDS, "def f():\n    from praisonmem.tui.app import BrowseApp", "never import the tui"),
    (A_CORE_MODULE, "def f():\n    from praisonmem.tui import model", "never import the tui"),
    (BROWSE, "from praisonmem.tui.app import BrowseApp", "browse only inside its command"),
    (SESSION_COMMANDS, "import textual", "only the tui package imports Textual"),
    (A_TUI_MODULE, "from praisonmem.cli.commands import session", "the CLI's output and renderers only"),
    (A_TUI_MODULE, "from praisonmem.cli.state import State", "the CLI's output and renderers only"),
    (A_TUI_MODULE, "from praisonmem.core.sessions import listing", "through their public __init__"),
], ids=lambda v: v if isinstance(v, str) else v.name)
def test_the_rules_catch_each_kind_of_breach(monkeypatch, module, source, problem):
    monkeypatch.setattr(Path, "read_text", lambda self, **kw: source if self == module else Path.read_bytes(self).decode())
    assert any(problem in v for v in violations(module))


JSON_FILE_IO = {"read", "read_bytes", "read_object", "read_current", "locked", "locked_many", "write_locked",
                "replace_atomically", "replacing", "update", "delete_locked", "makedirs"}


@pytest.mark.parametrize("path", [p for p in modules("core/sessions") if "stores" not in p.parts],
                         ids=lambda p: str(p.relative_to(REPO)))
def test_session_commands_reach_session_files_only_through_the_store(path):
    """The JSON-directory specifics (files, locks, spill dir) live in sessions/stores/jsondir.py."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    used = sorted({node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)
                   and isinstance(node.value, ast.Name) and node.value.id == "jsonfile" and node.attr in JSON_FILE_IO})
    assert used == []
    text = path.read_text(encoding="utf-8")
    assert "spill_dir" not in text and "sessions_dir /" not in text


PGURL = PACKAGE / "core" / "io" / "pgurl.py"
REDISURL = PACKAGE / "core" / "io" / "redisurl.py"
MYSQLURL = PACKAGE / "core" / "io" / "mysqlurl.py"


def driver_imports(tree: ast.AST, driver: str = "psycopg") -> list[tuple[int, bool]]:
    """Every ``import <driver>…`` in a module: its line, and whether it runs when the module is imported
    (at the top level, not in a function or under ``if TYPE_CHECKING``)."""
    found = []

    def visit(node: ast.AST, eager: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                visit(child, False)
            elif isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                visit(child, False)
            else:
                names = ([a.name for a in child.names] if isinstance(child, ast.Import)
                         else [child.module or ""] if isinstance(child, ast.ImportFrom) else [])
                if any(n.split(".")[0] == driver for n in names):
                    found.append((child.lineno, eager))
                visit(child, eager)

    visit(tree, True)
    return found


@pytest.mark.parametrize("path", modules("core") + modules("cli"), ids=lambda p: str(p.relative_to(REPO)))
def test_the_postgres_driver_is_imported_only_by_pgurl_and_only_when_used(path):
    """psycopg is an extra: only core/io/pgurl.py imports it, inside :func:`driver`, when a
    postgresql:// URL is opened; every other module reaches it through pgurl."""
    found = driver_imports(ast.parse(path.read_text(encoding="utf-8")))
    if path == PGURL:
        assert found and not any(eager for _, eager in found)
    else:
        assert found == []


@pytest.mark.parametrize("path", modules("core") + modules("cli"), ids=lambda p: str(p.relative_to(REPO)))
def test_redis_py_is_imported_only_by_redisurl_and_only_when_used(path):
    """redis-py is an extra: only core/io/redisurl.py imports it, inside :func:`driver`, when a
    redis:// URL is opened; every Redis store reaches it through redisurl."""
    found = driver_imports(ast.parse(path.read_text(encoding="utf-8")), "redis")
    if path == REDISURL:
        assert found and not any(eager for _, eager in found)
    else:
        assert found == []


@pytest.mark.parametrize("path", modules("core") + modules("cli"), ids=lambda p: str(p.relative_to(REPO)))
def test_the_mysql_driver_is_imported_only_by_mysqlurl_and_only_when_used(path):
    """PyMySQL is an extra: only core/io/mysqlurl.py imports it, inside :func:`driver`, when a mysql:// URL
    is opened; every other module reaches it through mysqlurl."""
    found = driver_imports(ast.parse(path.read_text(encoding="utf-8")), "pymysql")
    if path == MYSQLURL:
        assert found and not any(eager for _, eager in found)
    else:
        assert found == []


def test_the_driver_rule_catches_an_eager_import():
    assert driver_imports(ast.parse("import redis\n"), "redis") == [(1, True)]
    assert driver_imports(ast.parse("import redisx\n"), "redis") == []
    assert driver_imports(ast.parse("import pymysql\n"), "pymysql") == [(1, True)]
    assert driver_imports(ast.parse("def f():\n    import pymysql.cursors\n"), "pymysql") == [(2, False)]
    assert driver_imports(ast.parse("import psycopg\n")) == [(1, True)]
    assert driver_imports(ast.parse("def f():\n    from psycopg.rows import dict_row\n")) == [(2, False)]
    assert driver_imports(ast.parse("if TYPE_CHECKING:\n    import psycopg\n")) == [(2, False)]
