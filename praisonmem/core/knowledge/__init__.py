"""praisonaiagents' ``Knowledge`` stores: the Chroma collection ``praisonai_knowledge`` and the ``knowledge.db``
fallback (:mod:`.stores`: where they are, how each is read and written), and the ``knowledge`` commands, one
function each (:mod:`.ops`: ``list_items``, ``show_item``, ``search_items``, ``plan_delete``, ``export_items``,
``import_items``).

Names are loaded on first use (:mod:`praisonmem.core.lazy`); a submodule is not part of the API.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from praisonmem.core.lazy import lazy_exports

_EXPORTS = {
    "stores": ("COLLECTION", "DB_NAME", "ChromaKnowledge", "SqliteKnowledge", "default_chroma", "open_store"),
    "ops": ("export_items", "import_items", "list_items", "matches", "plan_delete", "search_items", "show_item"),
}
__getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS)


if TYPE_CHECKING:
    from praisonmem.core.knowledge.ops import (export_items, import_items, list_items, matches, plan_delete,
                                               search_items, show_item)
    from praisonmem.core.knowledge.stores import (COLLECTION, DB_NAME, ChromaKnowledge, SqliteKnowledge,
                                                  default_chroma, open_store)
