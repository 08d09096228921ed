"""Backups of a PraisonAI home and FileMemory tree: one ``.tar.gz`` with a manifest of checksums.

:mod:`.create` writes and rotates them (``plan_create``, ``list_backups``), :mod:`.archive` reads and
verifies them without trusting them (``verify``), :mod:`.restore` puts them back (``plan_restore``), each file
under its store's lock (:func:`praisonmem.core.layout.lock_of`); :mod:`.sqlite` takes, checks and puts back the
databases.

Names are loaded on first use (:mod:`praisonmem.core.lazy`); a submodule is not part of the API.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from praisonmem.core.lazy import lazy_exports

_EXPORTS = {
    "create": ("CreatePlan", "backup_dir", "default_dir", "list_backups", "plan_create"),
    "archive": ("read_manifest", "verify"),
    "restore": ("RestoreConflict", "plan_restore"),
}
__getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS)


if TYPE_CHECKING:
    from praisonmem.core.backup.archive import read_manifest, verify
    from praisonmem.core.backup.create import CreatePlan, backup_dir, default_dir, list_backups, plan_create
    from praisonmem.core.backup.restore import RestoreConflict, plan_restore
