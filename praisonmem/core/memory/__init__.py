"""Agent memory: PraisonAI's FileMemory and SQLite memory, plug-in providers, and episodic entries.

The commands, one function each: :mod:`.ops` (``store_memory``, ``search_memory``, ``similar_memory``,
``list_memory``, ``export_memory``, ``import_memory``,
``plan_delete_memory``, ``plan_reset_memory``, ``extract_memories``), :mod:`.episodic` (``add_episode``,
``episodes``, ``plan_delete_episode``) and :mod:`.providers` (``open_provider``, ``provider_users``,
``available_providers``). Under them, one module per kind of store: :mod:`.filememory` (with
:mod:`.filememory_io`, its locked reads, :mod:`.filememory_config`, what each ``config.json``
value does, and :mod:`.search`, its search: from the cached index or by reading every file),
:mod:`.sqlitememory`, :mod:`.savedsessions` (``FileMemory.save_session``'s files: ``memory sessions``),
:mod:`.mem0history` (mem0's ``history.db``: the ``mem0-history`` provider), :mod:`.chroma` (praisonaiagents' rag
``Memory``: a Chroma collection per user) and :mod:`.automemory` (AutoMemory's pattern extraction).
:mod:`.layouts` finds what older releases left where 1.7.17 does not look, each with its fix (``migrate``).

Names are loaded on first use (:mod:`praisonmem.core.lazy`); a submodule is not part of the API.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from praisonmem.core.lazy import lazy_exports

_EXPORTS = {
    "ops": ("export_memory", "extract_memories", "import_memory", "item_text", "list_memory", "similar_memory", "plan_delete_memory", "plan_reset_memory",
            "search_memory", "store_memory"),
    "episodic": ("add_episode", "episodes", "plan_delete_episode"),
    "providers": ("ProviderFailed", "ResetTier", "Unsupported", "UsersReport", "open_provider", "provider_names",
                  "provider_users"),
    "filememory": ("ENTITY_KEYS", "ITEM_KEYS", "MEMORY_FILES", "NESTING", "SUBDIRS", "FileMemoryStore",
                   "legacy_user_reason", "looks_like_user", "sanitise_user_id", "user_lock"),
    "filememory_io": ("read_last", "read_settled", "read_shared"),
    "mem0history": ("HistoryDb", "Mem0HistoryProvider"),
    "savedsessions": ("SavedSession", "list_saved_sessions", "plan_delete_saved_session", "show_saved_session"),
    "layouts": ("EpisodicMerge", "SqliteSplit", "raw_date_merges", "shared_splits"),
    "sqlitememory": ("SqliteMemoryStore",),
    "chroma": ("ChromaMemoryStore", "word_hits", "words_score"),
}
# A name that is also a submodule's would be shadowed by the submodule once it is imported.
_ALIASES = {"available_providers": ("providers", "available"), "file_users": ("filememory", "users"),
            "provider_aliases": ("providers", "ALIASES"), "config_problem": ("filememory_config", "problem"), "sqlite_users": ("sqlitememory", "users"),
            "sqlite_user_suffix": ("sqlitememory", "user_suffix"),
            "mem0_history_db": ("mem0history", "default_db"), "mem0_history_texts": ("mem0history", "texts")}
__getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS, _ALIASES)


if TYPE_CHECKING:
    from praisonmem.core.memory.episodic import add_episode, episodes, plan_delete_episode
    from praisonmem.core.memory.filememory import (ENTITY_KEYS, ITEM_KEYS, MEMORY_FILES, NESTING, SUBDIRS,
                                                   FileMemoryStore, legacy_user_reason, looks_like_user,
                                                   sanitise_user_id, user_lock)
    from praisonmem.core.memory.filememory import users as file_users
    from praisonmem.core.memory.filememory_config import problem as config_problem
    from praisonmem.core.memory.filememory_io import read_last, read_settled, read_shared
    from praisonmem.core.memory.mem0history import HistoryDb, Mem0HistoryProvider
    from praisonmem.core.memory.mem0history import default_db as mem0_history_db
    from praisonmem.core.memory.mem0history import texts as mem0_history_texts
    from praisonmem.core.memory.savedsessions import (SavedSession, list_saved_sessions, plan_delete_saved_session,
                                                      show_saved_session)
    from praisonmem.core.memory.layouts import EpisodicMerge, SqliteSplit, raw_date_merges, shared_splits
    from praisonmem.core.memory.sqlitememory import SqliteMemoryStore
    from praisonmem.core.memory.chroma import ChromaMemoryStore, word_hits, words_score
    from praisonmem.core.memory.sqlitememory import user_suffix as sqlite_user_suffix
    from praisonmem.core.memory.sqlitememory import users as sqlite_users
    from praisonmem.core.memory.ops import (export_memory, extract_memories, import_memory, item_text, list_memory,
                                            similar_memory, plan_delete_memory,
                                            plan_reset_memory, search_memory, store_memory)
    from praisonmem.core.memory.providers import (ProviderFailed, ResetTier, Unsupported, UsersReport,
                                                  open_provider, provider_names, provider_users)
    from praisonmem.core.memory.providers import ALIASES as provider_aliases
    from praisonmem.core.memory.providers import available as available_providers
