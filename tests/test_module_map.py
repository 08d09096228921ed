"""The Architecture map (docs/architecture.md) names every module of the package, and nothing that is not one.

The map is the indented tree of the architecture page that starts at ``praisonmem/``: a line at two spaces names a top-level directory
(``core/``, ``cli/``) or modules of ``praisonmem/`` itself, a line at four spaces modules of that directory or,
led by ``name/``, a sub-directory and its modules (deeper lines continue the line above). Inside a line,
``name/ (...)`` is a sub-directory whose modules are the ones named within its parentheses. A module is
named by its file name (``jsonfile.py``; a package's ``__init__``, with or without ``.py``); a directory the map
names stands for its package's ``__init__.py`` as well.
"""

from __future__ import annotations

import re

from tests.conftest import REPO

PACKAGE = REPO / "praisonmem"
TOKEN = re.compile(r"(?P<dir>[A-Za-z_]\w*)/(?=\s*\(|\s|$)|(?P<file>__init__(?:\.py)?|[A-Za-z_]\w*\.py)\b|(?P<open>\()|"
                   r"(?P<close>\))")


ARCHITECTURE = REPO / "docs" / "architecture.md"


def map_block(page: str) -> list[str]:
    section = page.split("\n## Architecture\n", 1)[1].split("\n## ", 1)[0]
    block = section.split("\n```\npraisonmem/\n", 1)[1].split("\n```", 1)[0]
    return block.splitlines()


def _names(text: str, where: tuple[str, ...], found: set[str]) -> None:
    """The modules (and directories) one line of the map names, in the directory ``where``."""
    nested: list[tuple[int, tuple[str, ...]]] = []  # (parenthesis depth it opened at, directory)
    depth, pending = 0, None
    for match in TOKEN.finditer(text):
        here = nested[-1][1] if nested else where
        if match["dir"]:
            pending = (*here, match["dir"])
            found.add("/".join((*pending, "__init__.py")))
        elif match["open"]:
            depth += 1
            if pending is not None and text[match.start() - 1: match.start()].isspace():
                nested.append((depth, pending))
            pending = None
        elif match["close"]:
            if nested and nested[-1][0] == depth:
                nested.pop()
            depth -= 1
        else:
            name = match["file"]
            found.add("/".join((*here, name if name.endswith(".py") else "__init__.py")))
            pending = None


def entries(readme: str) -> list[tuple[int, str]]:
    """The map's entries: each line at two or four spaces, with the deeper lines that continue it."""
    out: list[tuple[int, str]] = []
    for line in map_block(readme):
        indent, text = len(line) - len(line.lstrip(" ")), line.strip()
        if text and indent in (2, 4):
            out.append((indent, text))
        elif text:
            out[-1] = (out[-1][0], f"{out[-1][1]} {text}")
    return out


def mapped_modules(readme: str) -> set[str]:
    """Each module the map names, as its path below ``praisonmem/``."""
    found: set[str] = {"__init__.py"}  # the tree's root, praisonmem/ itself
    top: tuple[str, ...] = ()
    for indent, text in entries(readme):
        head = re.match(r"([A-Za-z_]\w*)/(?:\s+|$)", text)
        current = top
        if indent == 2:
            top = current = (head[1],) if head else ()
        elif head and text[head.end():].startswith("("):
            head = None  # name/ (...): a sub-directory within the line, read with the line
        elif head:
            current = (*top, head[1])
        if head:
            found.add("/".join((*current, "__init__.py")))
            text = text[head.end():]
        _names(text, current, found)
    return found


def package_modules() -> set[str]:
    return {p.relative_to(PACKAGE).as_posix() for p in PACKAGE.rglob("*.py")}


def test_the_architecture_map_names_every_module_and_no_other():
    mapped = mapped_modules(ARCHITECTURE.read_text(encoding="utf-8"))
    modules = package_modules()
    missing, stale = sorted(modules - mapped), sorted(mapped - modules)
    assert not missing and not stale, (
        "docs/architecture.md's map differs from praisonmem/: "
        + (f"missing {', '.join(missing)}" if missing else "")
        + ("; " if missing and stale else "")
        + (f"stale (no such module) {', '.join(stale)}" if stale else ""))


def test_the_map_reader_reads_each_form_the_map_uses():
    readme = "\n".join([
        "", "## Architecture", "", "```", "praisonmem/",
        "  __main__.py                   the console script",
        "  core/",
        "    errors.py  result.py        exit codes (see errors.py's docstring)",
        "    io/        a.py (the one (nested) reader) b.py",
        "               c.py",
        "    sessions/  __init__ (public API)  d.py",
        "               stores/ (__init__: the interface; e.py: one",
        "               store) f.py",
        "  cli/",
        "    app.py",
        "```", "", "## Development", ""])
    assert mapped_modules(readme) == {
        "__init__.py", "__main__.py", "core/__init__.py", "core/errors.py", "core/result.py", "core/io/__init__.py",
        "core/io/a.py", "core/io/b.py", "core/io/c.py", "core/sessions/__init__.py", "core/sessions/d.py",
        "core/sessions/stores/__init__.py", "core/sessions/stores/e.py", "core/sessions/f.py", "cli/__init__.py",
        "cli/app.py"}
