"""``praisonmem check``: validate PraisonAI trees without changing anything.

:mod:`.walk` recognises what a path is (a home, a sessions, spill, learn or FileMemory dir, a file) and
reads each file once; :mod:`.rules` says, per kind of file, what the library would do with it.

Names are loaded on first use (PEP 562); a submodule is not part of the API.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS = {"walk": ("Finding", "Report", "check", "classify", "default_roots", "run")}
_WHERE = {name: (module, name) for module, names in _EXPORTS.items() for name in names}

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, attribute = _WHERE[name]
    value = getattr(importlib.import_module(f"{__name__}.{module}"), attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__


if TYPE_CHECKING:
    from praisonmem.core.check.walk import Finding, Report, check, classify, default_roots, run
