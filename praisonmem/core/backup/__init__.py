"""Backups of a PraisonAI home and FileMemory tree: one ``.tar.gz`` with a manifest of checksums.

:mod:`.create` writes and rotates them (``plan_create``, ``list_backups``), :mod:`.archive` reads and
verifies them without trusting them (``verify``), :mod:`.restore` puts them back (``plan_restore``).

Names are loaded on first use (PEP 562); a submodule is not part of the API.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS = {
    "create": ("CreatePlan", "backup_dir", "default_dir", "list_backups", "plan_create"),
    "archive": ("read_manifest", "verify"),
    "restore": ("RestoreConflict", "plan_restore"),
}
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
    from praisonmem.core.backup.archive import read_manifest, verify
    from praisonmem.core.backup.create import CreatePlan, backup_dir, default_dir, list_backups, plan_create
    from praisonmem.core.backup.restore import RestoreConflict, plan_restore
