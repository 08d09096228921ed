"""PraisonAI sessions: the public API the CLI and the other core packages use.

One function per command, each in the module named after what it does:

* :mod:`.listing` ``list_sessions`` (:mod:`.listcache` ``forget_listing``: drop its cache entry); :mod:`.view` ``show``;
  :mod:`.searchindex` ``search_sessions`` (:mod:`.search` through
  the index kept in praisonmem's cache; ``forget_search_index``: drop it);
* :mod:`.ops` ``rename``, ``retitle``, ``plan_delete``, ``plan_prune``; :mod:`.adopt` ``plan_adopt``;
* :mod:`.transfer` ``export``, ``plan_import``; :mod:`.redaction` ``scan_secrets``, ``plan_redact`` (secrets,
  with :mod:`praisonmem.core.secrets`); :mod:`.watch` ``watch_session`` (following a live session);
  :mod:`.dbimport` ``plan_db_import`` (for ``migrate``); :mod:`.storemigrate` ``migrate_between``
  (``session migrate``); :mod:`.stores.locate` ``open_store`` (every store of a home, or the one a ``--store``
  value names) and ``store_location``;
  :mod:`.workspace` ``describe_workspace`` and the workspace and history ids, exactly as praisonaiagents
  computes them.

Under them: :mod:`.documents` (pure functions over one session document, and what makes one a session at
all), :mod:`.merge` (uniting two histories), :mod:`.crypto` (encrypted sessions: decrypting with the session
key, keeping writes encrypted), and :mod:`.stores` (where sessions are kept: the one interface everything above
talks to, the home that holds every store, the stores: the JSON directory, ``sessions.db``, the praisonai CLI's
and the SQL conversation store, and the search index beside a JSON directory).

Names are loaded on first use (:mod:`praisonmem.core.lazy`), so ``import
praisonmem.core.sessions`` costs nothing until a command needs one; a submodule is not
part of the API.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from praisonmem.core.lazy import lazy_exports

_EXPORTS = {
    "documents": ("ENCRYPTED_PREFIX", "ROLES", "gateway_chat", "is_encrypted", "is_unified", "library_form",
                  "messages_of", "metadata_of", "session_key_rules", "summarise", "title_of", "tool_calls_of",
                  "unified_rules", "validate", "with_session_id"),
    "stores": ("SessionStore",),
    "stores.names": ("CONVERSATION_DIR", "JSONCONV", "LIBRARY_LABELS", "safe_file_stem", "session_file_name"),
    "stores.conversation_json": ("ConversationJsonStore",),
    "stores.locate": ("open_store", "store_location"),
    "storemigrate": ("MigrateReport",),
    "stores.sqlite_transcript": ("inspect_db", "json_files_beside"),
    "stores.index": ("IndexRows",),
    "stores.indextext": ("session_digest",),
    "stores.repair": ("index_repairs", "transcript_residue"),
    "crypto": ("KEY_ENV", "Key"),
    "dbimport": ("db_import_candidates", "plan_db_import"),
    "listing": ("ListResult", "SortKey", "latest", "list_sessions", "time_window"),
    "view": ("SessionView", "Turn", "locations", "show"),
    "search": ("SearchResult",),
    "ops": ("plan_delete", "plan_prune", "rename", "retitle"),
    "adopt": ("plan_adopt",),
    "histories": ("legacy_sessions", "other_workspace_sessions"),
    "transfer": ("ExportFormat", "OnConflict", "export", "plan_import"),
    "redaction": ("SecretLevel", "plan_redact", "redact_document", "scan_secrets"),
    "watch": ("NewTurn", "Watched"),
    "merge": ("merge_documents",),
    "scopes": ("Scope",),
    "workspace": ("choose_history_id", "global_from_env", "history_id", "is_global", "legacy_ids",
                  "scope_of", "workspace_id"),
}
# A name that is also a submodule's would be shadowed by the submodule once it is imported.
_ALIASES = {"describe_workspace": ("workspace", "describe"), "search_sessions": ("searchindex", "search"),
            "watch_session": ("watch", "watch"), "read_index": ("stores.index", "read_rows"),
            "read_index_texts": ("stores.index", "read_texts"), "index_text": ("stores.indextext", "flatten"),
            "index_behind": ("stores.indextext", "behind"), "describe_repair": ("stores.repair", "describe"),
            "session_key": ("crypto", "key_from"), "migrate_between": ("storemigrate", "migrate"),
            "forget_listing": ("listcache", "forget"), "forget_search_index": ("searchindex", "forget"), "transcript_tables": ("stores.sqlite_transcript", "TABLES"),
            "index_tables": ("stores.index", "TABLES"),
            "is_conversation_dir": ("stores.locate", "recognise_conversation_dir"),
            # forget: each member store of a home on its own, the one delete, the scrubs a killed write left
            "member_stores": ("stores.home", "member_stores"), "held_stores": ("stores.home", "held"), "open_location": ("stores.locate", "open_location"),
            "delete_sessions": ("ops", "delete"), "project_label": ("stores.names", "PROJECT"),
            "finish_transcript_scrub": ("stores.sqlite_transcript", "finish_interrupted"),
            "finish_index_scrub": ("stores.index", "finish_scrub"), "forget_index_rows": ("stores.index", "forget_rows"),
            "gateway_snapshots": ("documents", "gateway_snapshots"),
            "is_encrypted_session": ("crypto", "is_encrypted_doc"), "opened_session": ("crypto", "opened")}
__getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS, _ALIASES)


if TYPE_CHECKING:
    from praisonmem.core.sessions.adopt import plan_adopt
    from praisonmem.core.sessions.histories import legacy_sessions, other_workspace_sessions
    from praisonmem.core.sessions.stores.index import TABLES as index_tables
    from praisonmem.core.sessions.stores.sqlite_transcript import TABLES as transcript_tables
    from praisonmem.core.sessions.crypto import KEY_ENV, Key
    from praisonmem.core.sessions.crypto import key_from as session_key
    from praisonmem.core.sessions.documents import (ENCRYPTED_PREFIX, ROLES, gateway_chat, is_encrypted, is_unified,
                                                    library_form, messages_of, metadata_of, session_key_rules,
                                                    summarise, title_of, tool_calls_of, unified_rules, validate,
                                                    with_session_id)
    from praisonmem.core.sessions.listing import ListResult, SortKey, latest, list_sessions, time_window
    from praisonmem.core.sessions.merge import merge_documents
    from praisonmem.core.sessions.ops import plan_delete, plan_prune, rename, retitle
    from praisonmem.core.sessions.search import SearchResult
    from praisonmem.core.sessions.searchindex import search as search_sessions
    from praisonmem.core.sessions.listcache import forget as forget_listing
    from praisonmem.core.sessions.searchindex import forget as forget_search_index
    from praisonmem.core.sessions.crypto import is_encrypted_doc as is_encrypted_session
    from praisonmem.core.sessions.crypto import opened as opened_session
    from praisonmem.core.sessions.documents import gateway_snapshots
    from praisonmem.core.sessions.ops import delete as delete_sessions
    from praisonmem.core.sessions.stores.home import held as held_stores
    from praisonmem.core.sessions.stores.home import member_stores
    from praisonmem.core.sessions.stores.index import finish_scrub as finish_index_scrub
    from praisonmem.core.sessions.stores.index import forget_rows as forget_index_rows
    from praisonmem.core.sessions.stores.locate import open_location
    from praisonmem.core.sessions.stores.names import PROJECT as project_label
    from praisonmem.core.sessions.stores.sqlite_transcript import finish_interrupted as finish_transcript_scrub
    from praisonmem.core.sessions.stores import SessionStore
    from praisonmem.core.sessions.stores.index import IndexRows
    from praisonmem.core.sessions.stores.indextext import behind as index_behind
    from praisonmem.core.sessions.stores.indextext import flatten as index_text
    from praisonmem.core.sessions.stores.indextext import session_digest
    from praisonmem.core.sessions.stores.index import read_texts as read_index_texts
    from praisonmem.core.sessions.stores.repair import describe as describe_repair
    from praisonmem.core.sessions.stores.repair import index_repairs, transcript_residue
    from praisonmem.core.sessions.stores.index import read_rows as read_index
    from praisonmem.core.sessions.dbimport import db_import_candidates, plan_db_import
    from praisonmem.core.sessions.stores.names import (CONVERSATION_DIR, JSONCONV, LIBRARY_LABELS, safe_file_stem,
                                                       session_file_name)
    from praisonmem.core.sessions.stores.conversation_json import ConversationJsonStore
    from praisonmem.core.sessions.stores.locate import recognise_conversation_dir as is_conversation_dir
    from praisonmem.core.sessions.stores.locate import open_store, store_location
    from praisonmem.core.sessions.storemigrate import MigrateReport
    from praisonmem.core.sessions.storemigrate import migrate as migrate_between
    from praisonmem.core.sessions.stores.sqlite_transcript import inspect_db, json_files_beside
    from praisonmem.core.sessions.transfer import ExportFormat, OnConflict, export, plan_import
    from praisonmem.core.sessions.redaction import SecretLevel, plan_redact, redact_document, scan_secrets
    from praisonmem.core.sessions.watch import NewTurn, Watched
    from praisonmem.core.sessions.watch import watch as watch_session
    from praisonmem.core.sessions.view import SessionView, Turn, locations, show
    from praisonmem.core.sessions.scopes import Scope
    from praisonmem.core.sessions.workspace import (choose_history_id, global_from_env, history_id,
                                                    is_global, legacy_ids, scope_of, workspace_id)
    from praisonmem.core.sessions.workspace import describe as describe_workspace
