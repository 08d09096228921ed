"""Learn stores (praisonaiagents ``memory/learn/stores.py``): persona, insights, threads, … entries.

The library keeps each store as one JSON object keyed by entry id, in one of three backends, each one module
behind one small interface (:class:`~praisonmem.core.learn.model.LearnBackend`: read the entries, count a store,
edit it under the backend's own write protocol): :mod:`.files` (``<home>/learn/<scope>/<user>/<store>.json`` and
the library's ``O_EXCL`` lock), :mod:`.sqlite` (the ``learn_store`` table of ``learn.db``) and :mod:`.redis`
(one string key per store). :mod:`.model` holds what they share (the store names, an entry, the library's
dedup on add); :mod:`.ops` the commands, one function each (``list_entries``, ``show_entry``, ``add_entry``,
``plan_delete_entry``, ``plan_clear``), and which backends the options name (:class:`~.ops.Source`). Reading
never bumps ``use_count``, unlike the library's ``search``/``list_all``.

Names are loaded on first use (:mod:`praisonmem.core.lazy`); a submodule is not part of the API.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from praisonmem.core.lazy import lazy_exports

_EXPORTS = {
    "model": ("DEFAULT_USER", "ENTRY_KEYS", "SCOPES", "STORES", "Entry", "LearnBackend", "LearnScope", "check_names"),
    "files": ("ABANDONED_AFTER", "POLL", "STALE_AFTER", "add", "archive_path", "clear", "delete", "entries", "erase",
              "find", "locked", "read_archive", "read_store", "store_path"),
    "sqlite": ("LEARN_TABLES", "SCRUB_KEY", "SqliteBackend", "holds_store", "inspect_db"),
    "ops": ("BACKENDS", "BackendKind", "Source", "add_entry", "database_entries", "list_entries", "plan_clear", "plan_delete_entry", "show_entry"),
}
__getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS)


if TYPE_CHECKING:
    from praisonmem.core.learn.files import (ABANDONED_AFTER, POLL, STALE_AFTER, add, archive_path, clear, delete,
                                             entries, erase, find, locked, read_archive, read_store, store_path)
    from praisonmem.core.learn.sqlite import LEARN_TABLES, SCRUB_KEY, SqliteBackend, holds_store, inspect_db
    from praisonmem.core.learn.model import (DEFAULT_USER, ENTRY_KEYS, SCOPES, STORES, Entry, LearnBackend,
                                             LearnScope, check_names)
    from praisonmem.core.learn.ops import (BACKENDS, BackendKind, Source, add_entry, database_entries, list_entries, plan_clear, plan_delete_entry,
                                           show_entry)
