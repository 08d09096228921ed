"""The names of the session stores: their labels (``session list``'s store column, ``--store``'s value) and the
names their files get. It imports no store, so every store module, the interface and the locator may use it; the
home's own file and directory names are :mod:`praisonmem.core.layout`'s.
"""

from __future__ import annotations

import re
from typing import Any

from praisonmem.core.layout import TRANSCRIPT_DB

JSON = "json"  # the JSON directory (DefaultSessionStore)
TRANSCRIPT = TRANSCRIPT_DB  # sessions.db (SqliteTranscriptStore), labelled by its file
UNIFIED = "unified"  # the REPL/TUI's files
RUN = "legacy-run"  # the old SessionManager's run directories
PROJECT = "project:"  # + the project id: a praisonai CLI per-project store
CONVERSATIONS = "conversations"  # PraisonAI's SQL conversation store
CONVERSATION_JSON = "conversations-json"  # PraisonAI's JSON conversation store (JSONConversationStore)
LABELS = (JSON, TRANSCRIPT, UNIFIED, RUN)  # and project:<id>: the labels of a home's stores
LIBRARY_LABELS = (JSON, TRANSCRIPT)  # the stores praisonaiagents itself keeps in a home, in the home's order

# The SQL conversation store's defaults, as the library's.
DEFAULT_PREFIX = "praison_"
DEFAULT_SCHEMA = "public"
DEFAULT_FILE = "praisonai_conversations.db"  # the sqlite family's file when no URL is set
# The JSON conversation store's: its default directory, its index file, and the --store form that names one.
CONVERSATION_DIR = "praisonai_conversations"
CONVERSATION_INDEX = "_sessions_index.json"
JSONCONV = "jsonconv:"


def safe_file_stem(session_id: str) -> str:
    """The library's session-id → file-name rule: keep ``str.isalnum()`` and ``-_``."""
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in session_id)


def session_file_name(session_id: str) -> str:
    return f"{safe_file_stem(session_id)}.json"


_CONVERSATION_ID = re.compile(r"[A-Za-z0-9_\-:.]{1,128}")  # fullmatch: JSONConversationStore's _ID_RE


def valid_id(session_id: Any) -> bool:
    """A session id ``JSONConversationStore`` takes (its ``_validate_id``): a file name in its dir, never its index."""
    return (isinstance(session_id, str) and ".." not in session_id and session_id != CONVERSATION_INDEX[:-5]
            and _CONVERSATION_ID.fullmatch(session_id) is not None)


def is_conversation_file(data: Any) -> bool:
    """A ``JSONConversationStore`` session file's shape: ``{"session": {...}, "messages": [...]}``, optionally
    followed by praisonmem's ``"_praisonmem"`` (what the library's fields cannot hold; its loader ignores it)."""
    return isinstance(data, dict) and list(data) in (["session", "messages"], ["session", "messages", "_praisonmem"]) \
        and isinstance(data["session"], dict) and isinstance(data["messages"], list)
