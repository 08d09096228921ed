"""Package ``__init__``s that load their public names on first use (PEP 562).

A package's API is a table of ``submodule -> names``; importing the package imports none of
them, so ``import praisonmem.core.sessions`` costs nothing until a command uses a name.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(package: str, exports: Mapping[str, tuple[str, ...]],
                 aliases: Mapping[str, tuple[str, str]] | None = None,
                 ) -> tuple[Callable[[str], Any], Callable[[], list[str]], list[str]]:
    """``__getattr__``, ``__dir__`` and ``__all__`` for ``package``: each name of ``exports[submodule]``, and each
    ``alias -> (submodule, name)`` (a name that is also a submodule's would be shadowed by the submodule once
    that is imported, so such a function is exported under another name)."""
    where = {name: (module, name) for module, names in exports.items() for name in names} | dict(aliases or {})
    names = sorted(where)

    def __getattr__(name: str) -> Any:
        if name not in where:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, attribute = where[name]
        value = getattr(importlib.import_module(f"{package}.{module}"), attribute)
        vars(importlib.import_module(package))[name] = value  # later lookups skip __getattr__
        return value

    def __dir__() -> list[str]:
        return names

    return __getattr__, __dir__, names
