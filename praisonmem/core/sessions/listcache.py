"""``session list``'s cache: each JSON session file's list row, so a listing reads only changed files.

Kept in praisonmem's cache (:mod:`praisonmem.core.io.cache`), one entry per sessions directory: for each
session file its :class:`~praisonmem.core.io.cache.FileKey` (device, inode, size, mtime and ctime in ns),
its session id and the row fields the file gives (``agent_name``, ``user_id``, ``title``, the two counts,
the times, ``model``, ``total_tokens``, ``cost``, ``agent_id``, ``source``, ``parent_id``). No message
text: counts only. A row is used only when the file's key now is the recorded one and the file had not
changed for longer than the cache's granularity when it was read (git's racy-entry rule: a row read
from a file changed in the same tick is not kept at all); unreadable files and sessions with spilled
turns waiting are read every time, as are the REPL/TUI files beside them (the JSON directory's scan hands those
to that store). The JSON directory store does the bookkeeping
(:func:`~praisonmem.core.sessions.stores.jsondir.scan_shared` with a memo); ``sessions.db`` is
read with SQL and needs none.

praisonmem's own writes to sessions (delete, rename and retitle, prune) drop the entry (even with
``--no-cache``), so a deleted session's row does not linger.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from operator import itemgetter
from typing import TYPE_CHECKING, Any

from praisonmem.core.io import fastjson
from praisonmem.core.io.cache import Cache, FileKey

if TYPE_CHECKING:
    from praisonmem.core.paths import Paths

KIND = "session-list"
VERSION = 3  # 2: rows carry the praisonai CLI's fields (constants for a JSON session file); 3: a kept row
# also vouches that its file is not a REPL/TUI session (the unified store skips it)
# The fields of a readable row that come from its file; the others are its file, its id (kept beside)
# and constants (no scope yet, no spilled turns, readable, no error), then the store label.
FIELDS = ("agent_name", "user_id", "title", "message_count", "archived_count", "created_at", "updated_at", "model",
          "total_tokens", "cost", "agent_id", "source", "parent_id")
ROW = ("session_id", "file", "agent_name", "user_id", "title", "message_count", "archived_count", "created_at",
       "updated_at", "model", "total_tokens", "cost", "scope", "agent_id", "source", "parent_id", "spilled_count",
       "unreadable", "error", "store", "input_tokens", "output_tokens", "children_ids", "current_project",
       "last_session")
CONSTANT = {"input_tokens": None, "output_tokens": None, "children_ids": None, "current_project": False,
            "last_session": False}  # a JSON session file's row: the REPL/TUI's fields are another store's

Known = dict[str, Any]  # file name -> [key_text(key), session id, kept value] (as read: each checked where it is used)


class Memo:
    """What :meth:`~praisonmem.core.sessions.stores.SessionStore.scan` may keep of a session's part of an
    :class:`~praisonmem.core.sessions.stores.Each` fold (``fn``'s results) per session file between calls.
    ``encode`` turns one session's results into a JSON value (``None``: keep nothing); ``decode(value, where,
    session_id, ref, store)`` gives the results again for that session (``None``: the value is not one it kept,
    so the file is read); ``kind``/``version`` name the cache entries; ``ref_of`` turns a store's ref into the
    caller's (a home's :class:`Located`)."""

    def __init__(self, cache: Cache, encode: Callable[[list[Any]], Any],
                 decode: Callable[[Any, str, str, Any, str], list[Any] | None], kind: str = KIND,
                 version: int = VERSION, ref_of: Callable[[Any], Any] | None = None) -> None:
        self.cache, self.encode, self.kind, self.version = cache, encode, kind, version
        self._decode, self.ref_of = decode, ref_of

    def adapted(self, ref_of: Callable[[Any], Any]) -> Memo:
        """The same memo for a store inside a home, whose refs are ``ref_of(the store's ref)``."""
        return Memo(self.cache, self.encode, self._decode, self.kind, self.version, ref_of)

    def decode(self, value: Any, where: str, session_id: str, ref: Any, store: str) -> list[Any] | None:
        return self._decode(value, where, session_id, ref if self.ref_of is None else self.ref_of(ref), store)

    def recall(self, directory: str) -> Known:
        """The rows kept for ``directory``, as kept: each file name's ``[key, session id, value]`` (:func:`key_text`),
        which the caller uses only when it is well formed and its key is the file's now; nothing when the entry is
        missing or unusable."""
        entry = self.cache.load(self.kind, self.version, directory)
        if entry is None:
            return {}
        payload, by = memoryview(entry.payload)[1:], entry.payload[:1]
        try:  # orjson reads what it wrote exactly (encoded() checked that), faster than fastjson's checks allow
            if by == b"o":
                doc = fastjson.orjson.loads(payload)
            elif by == b"j":
                doc = json.loads(bytes(payload))
            else:
                return {}
        except (ValueError, RecursionError):
            return {}
        return doc if type(doc) is dict else {}

    def keep(self, directory: str, known: Known, snapshot_ns: int) -> None:
        """Write the rows (each already checked against the racy-entry rule); a failure is ignored."""
        self.cache.save(self.kind, self.version, directory, encoded(known), key=None, snapshot_ns=snapshot_ns)


def key_text(key: FileKey) -> str:
    """How an entry records a file's key: its five numbers in hex, comma-separated (compared as text)."""
    return "%x,%x,%x,%x,%x" % key


def encoded(doc: dict[str, Any]) -> bytes:
    """``doc`` as JSON, after one byte saying which encoder wrote it: ``o``, orjson, when it reads back as the very
    same values (not so for NaN or infinities, which orjson writes as null; it refuses integers beyond 64 bits and
    lone surrogates), so that orjson can read it without further checks; else ``j``, the standard library."""
    try:
        payload = fastjson.orjson.dumps(doc)
        if fastjson.orjson.loads(payload) == doc:
            return b"o" + payload
    except (TypeError, ValueError):
        pass
    return b"j" + json.dumps(doc, ensure_ascii=True, separators=(",", ":")).encode("ascii")


def memo(cache: Cache | None) -> Memo | None:
    """``session list``'s memo over ``cache`` (``None`` when there is no cache to use)."""
    if cache is None or not cache.enabled:
        return None
    return Memo(cache, encode_rows, decode_rows, KIND, VERSION)


def encode_rows(results: list[Any]) -> Any:
    """One session's ``[(row, ref)]`` as the list of its file's fields; ``None`` for anything else."""
    if len(results) != 1:
        return None
    row = results[0][0]
    if tuple(row) != ROW or row["unreadable"] or row["scope"] is not None or row["spilled_count"] != 0:
        return None
    if not (row["input_tokens"] is None and row["output_tokens"] is None and row["children_ids"] is None
            and row["current_project"] is False and row["last_session"] is False):  # CONSTANT's values, exactly
        return None
    return list(_FIELD_VALUES(row))


_FIELD_VALUES = itemgetter(*FIELDS)
_TEMPLATE = {**dict.fromkeys(ROW), "scope": None, "spilled_count": 0, "unreadable": False, "error": None, **CONSTANT}


def decode_rows(value: Any, where: str, session_id: str, ref: Any, store: str) -> list[Any] | None:
    """The ``[(row, ref)]`` :func:`encode_rows` kept, for that session; ``None`` if malformed."""
    if type(value) is not list or len(value) != len(FIELDS):
        return None
    row = _TEMPLATE.copy()  # the keys in ROW's order
    row.update(zip(FIELDS, value))
    row["session_id"], row["file"], row["store"] = session_id, where, store
    return [(row, ref)]


def forget(paths: Paths, cache: Cache) -> None:
    """Drop the listing's entry for this home's sessions directory (after praisonmem changed sessions)."""
    cache.drop(KIND, str(paths.sessions_dir))
