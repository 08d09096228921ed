"""The import graph of every praisonmem module (``ast``; function-level and ``TYPE_CHECKING`` imports included, as
:func:`tests.test_import_rules.imports` reads them): no circle, and no arrow from a lower layer up to a higher one.

A module belongs to the unit its longest prefix in :data:`LAYERS` names; a unit may import its own modules (without
a circle), any unit of a lower layer, and nothing else: not a unit of its own layer (siblings are independent), not
one above it. The layers, lowest first, are the architecture page's (docs/architecture.md).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.test_import_rules import A_CORE_MODULE, PACKAGE, imports, module_name, modules

LAYERS: list[tuple[str, ...]] = [
    ("praisonmem", "praisonmem.core", "praisonmem.core.errors"),  # the version, the core's docstring, exit codes
    ("praisonmem.core.result", "praisonmem.core.lazy"),
    ("praisonmem.core.layout",),  # names, kinds and locks of a home's files: data only
    ("praisonmem.core.paths",),
    ("praisonmem.core.io",),
    ("praisonmem.core.secrets",),
    ("praisonmem.core.sessions", "praisonmem.core.memory", "praisonmem.core.learn", "praisonmem.core.state",
     "praisonmem.core.completion", "praisonmem.core.locate"),
    ("praisonmem.core.upsonic", "praisonmem.core.config", "praisonmem.core.knowledge"),
    ("praisonmem.core.usage",),
    ("praisonmem.core.backup", "praisonmem.core.migrate"),
    ("praisonmem.core.check", "praisonmem.core.forget"),
    ("praisonmem.cli",),
    ("praisonmem.tui",),  # browse: the Textual UI over the core and the CLI's renderers
    ("praisonmem.__main__",),  # the console script
]
# The one arrow up: the browse command starts the UI (inside the command, so no other command loads Textual).
UPWARD_ALLOWED = {("praisonmem.cli.commands.browse", "praisonmem.tui.app"),
                  ("praisonmem.cli.commands.browse", "praisonmem.tui.source")}
EXACT = {"praisonmem", "praisonmem.core"}  # units of one module (the packages' own __init__), not prefixes


def unit_of(module: str) -> tuple[int, str] | None:
    """(layer, unit) of a module: the longest unit of :data:`LAYERS` it is or is inside; ``None``: none."""
    found = [(len(unit), layer, unit) for layer, units in enumerate(LAYERS) for unit in units
             if module == unit or (unit not in EXACT and module.startswith(unit + "."))]
    return max(found)[1:] if found else None


def graph(paths: list[Path]) -> dict[str, set[str]]:
    """module -> the praisonmem modules it imports (a package: its ``__init__``), itself left out."""
    names = {module_name(path): path for path in paths}
    edges: dict[str, set[str]] = {}
    for name, path in names.items():
        edges[name] = {target for _, target in imports(path) if target in names and target != name}
    return edges


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)


def upward(edges: dict[str, set[str]]) -> list[str]:
    """Every import that is not into the module's own unit or a lower layer, and every module of no layer."""
    problems = []
    for module, targets in sorted(edges.items()):
        mine = unit_of(module)
        if mine is None:
            problems.append(f"{module}: in no layer")
            continue
        for target in sorted(targets):
            theirs = unit_of(target)
            if theirs is None or theirs[1] == mine[1] or (module, target) in UPWARD_ALLOWED:
                continue  # reported as a module of its own; the unit's own module; the browse command
            if theirs[0] >= mine[0]:
                how = "in the same layer as" if theirs[0] == mine[0] else "in a higher layer than"
                problems.append(f"{module} -> {target} ({theirs[1]} is {how} {mine[1]})")
    return problems


EDGES = graph(modules(""))


def test_every_module_is_in_the_graph():
    assert set(EDGES) == {module_name(path) for path in PACKAGE.rglob("*.py")}
    assert "praisonmem.core.layout" in EDGES and EDGES["praisonmem.core.layout"] == set()


def test_no_import_circle():
    assert cycles(EDGES) == []


def test_no_import_from_a_lower_layer_up_or_across():
    assert upward(EDGES) == []


# ---------------------------------------------------------------- each rule can fail


def test_a_circle_is_found_however_long():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []
    assert cycles({"x.y": {"x.z"}, "x.z": {"x.y"}, "q": {"q"}}) == [["x.y", "x.z"]]  # an own import is no circle


@pytest.mark.parametrize("edge, problem", [
    (("praisonmem.core.io.jsonfile", "praisonmem.core.sessions"), "in a higher layer"),
    (("praisonmem.core.layout", "praisonmem.core.paths"), "in a higher layer"),
    (("praisonmem.core.secrets.walk", "praisonmem.core.sessions"), "in a higher layer"),
    (("praisonmem.core.sessions.stores.jsondir", "praisonmem.core.check"), "in a higher layer"),
    (("praisonmem.core.memory.search", "praisonmem.core.sessions"), "in the same layer"),
    (("praisonmem.core.backup.restore", "praisonmem.core.migrate"), "in the same layer"),
    (("praisonmem.core.check.walk", "praisonmem.cli.output"), "in a higher layer"),
    (("praisonmem.core.novel", "praisonmem.core.errors"), "in no layer"),
    (("praisonmem.cli.commands.session", "praisonmem.tui.app"), "in a higher layer"),
    (("praisonmem.cli.output", "praisonmem.tui.model"), "in a higher layer"),
    (("praisonmem.core.sessions.view", "praisonmem.tui.render"), "in a higher layer"),
])
def test_an_arrow_up_or_across_is_refused(edge, problem):
    source, target = edge
    assert any(problem in p for p in upward({source: {target}, target: set()}))


def test_arrows_down_and_within_a_unit_are_allowed():
    assert upward({"praisonmem.core.check.walk": {"praisonmem.core.sessions", "praisonmem.core.check.rules",
                                                  "praisonmem.core.layout", "praisonmem.core.errors"},
                   "praisonmem.core.sessions.stores.jsondir": {"praisonmem.core.sessions.documents"}}) == []


def test_a_function_level_import_is_an_edge(monkeypatch):
    """An import inside a function (or under ``if TYPE_CHECKING``) is as much an arrow as one at the top."""
    source = ("from typing import TYPE_CHECKING\n"
              "if TYPE_CHECKING:\n    from praisonmem.core.check import walk\n"
              "def f():\n    from praisonmem.core.backup import restore\n")
    real = Path.read_text
    monkeypatch.setattr(Path, "read_text", lambda self, **kw: source if self == A_CORE_MODULE else real(self, **kw))
    edges = graph([A_CORE_MODULE, PACKAGE / "core" / "check" / "walk.py", PACKAGE / "core" / "backup" / "restore.py"])
    assert edges[module_name(A_CORE_MODULE)] == {"praisonmem.core.check.walk", "praisonmem.core.backup.restore"}
    assert len(upward(edges)) >= 2


def test_the_layers_are_the_architecture_pages():
    """The architecture page (docs/architecture.md) shows the same layers in the same order."""
    page = (PACKAGE.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    table = page[page.index("| layer | modules |"):]
    rows = [line for line in table.splitlines()[2:] if line.startswith("|")]
    shown = [tuple(sorted(cell.strip(" `") for cell in row.split("|")[2].split(","))) for row in rows]
    assert shown == [tuple(sorted(unit.removeprefix("praisonmem.").replace(".", "/") or "praisonmem"
                                  for unit in units)) for units in LAYERS]

