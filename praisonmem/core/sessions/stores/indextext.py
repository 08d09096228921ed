"""The text ``SqliteSessionStore`` indexes for a session, and how a row of it compares with the session: for the
index's writer (:mod:`.index`) and for the readers that compare the two (``check``, ``migrate``) without loading
SQLite."""

from __future__ import annotations

from typing import Any


def flatten(doc: dict[str, Any]) -> str:
    """``session_fts.content`` as ``SqliteSessionStore._flatten`` makes it: every message's content, archived
    first, joined by newlines (non-string contents as Python's ``str`` shows them; empty ones left out)."""
    parts = []
    for key in ("archived_messages", "messages"):
        messages = doc.get(key)
        for message in messages if isinstance(messages, list) else []:
            if isinstance(message, dict):
                content = message.get("content", "")
                if content:
                    parts.append(str(content))
    return "\n".join(parts)


def text_digest(text: str) -> str:
    """A short digest of a ``session_fts`` text, to compare a row with its session without holding both texts
    (MD5 from CPython's own module: no OpenSSL to load; not a security digest)."""
    from praisonmem.core.io.digest import md5_hex

    return md5_hex(text.encode("utf-8", "surrogatepass"))


def session_digest(doc: dict[str, Any]) -> str:
    """The :func:`text_digest` of the text the library indexes for ``doc``."""
    return text_digest(flatten(doc))


def behind(row: str, session_text: str) -> bool:
    """A row holding nothing its session does not: the session's text so far, which later turns extend (an agent
    wrote without the index); anything else holds text the session no longer has."""
    return row == session_text or not row or session_text.startswith(row + "\n")
