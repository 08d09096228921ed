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
# what forget's backups module reads and rewrites archives with (the same checks as verify, the same gzip level)
_EXPORTS["archive"] += ("DAMAGE", "EXTRA_MEMBERS", "MANIFEST", "BadEntry", "Budget", "check_archive", "checked_files",
                        "member_reason", "open_archive", "quoted_entry", "roots_of")
_EXPORTS["create"] += ("LEVEL",)
_ALIASES = {"chroma_store_of": ("chroma", "store_of")}
__getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS, _ALIASES)


if TYPE_CHECKING:
    from praisonmem.core.backup.archive import (DAMAGE, EXTRA_MEMBERS, MANIFEST, BadEntry, Budget, check_archive,
                                                checked_files, member_reason, open_archive, quoted_entry, read_manifest,
                                                roots_of, verify)
    from praisonmem.core.backup.chroma import store_of as chroma_store_of
    from praisonmem.core.backup.create import LEVEL, CreatePlan, backup_dir, default_dir, list_backups, plan_create
    from praisonmem.core.backup.restore import RestoreConflict, plan_restore
