"""``session show``: one session as a transcript of turns (read-only).

The transcript holds the archived turns (on request), the active window (or, for
``working``, the history an agent resumes with: the compaction checkpoint's summary
and the messages after it) and the turns still waiting in the spill dir.
Each turn carries what the renderer marks: tool calls and the calls results answer,
compaction summaries, partial turns, encrypted values.

A gateway document stores no chat turns, only system snapshots of the gateway's session:
after its stored messages come the chat turns the snapshots hold
(section ``gateway``, each message once, ``user`` for what a client sent and
``assistant`` for the agent, ``sender`` its ``sender_id``).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from praisonmem.core.errors import PraisonMemError, UsageError
from praisonmem.core.io import jsonfile
from praisonmem.core.layout import HUGE_SESSION
from praisonmem.core.paths import Paths
from praisonmem.core.sessions.crypto import Cipher, Key, is_envelope, message_values, open_message
from praisonmem.core.sessions.documents import gateway_chat, is_encrypted, messages_of, tool_calls_of
from praisonmem.core.sessions.stores import SessionStore
from praisonmem.core.sessions.stores.locate import open_store

Section = Literal["archived", "active", "spilled", "checkpoint", "gateway"]


@dataclass
class Turn:
    """One message as ``session show`` presents it."""

    section: Section
    index: int | None
    role: str
    content: str
    timestamp: Any
    encrypted: bool = False  # the content is stored encrypted
    encrypted_metadata: bool = False
    encrypted_tool_calls: bool = False
    decrypted: bool = False  # ... and is shown decrypted (a key was given)
    partial: bool = False
    compaction: int | None = None  # compacted_count of a [Session Summary] message
    tool_calls: list[dict[str, str]] = field(default_factory=list)
    tool_call_id: str | None = None
    tool_name: str | None = None  # the call this tool result answers
    malformed: bool = False
    sender: str | None = None  # a gateway message's sender_id

    def to_json(self) -> dict[str, Any]:
        return {"section": self.section, "index": self.index, "role": self.role, "content": self.content,
                "timestamp": self.timestamp, "tool_calls": self.tool_calls, "tool_call_id": self.tool_call_id,
                "partial": self.partial, "encrypted": self.encrypted, "decrypted": self.decrypted,
                "sender": self.sender}


@dataclass
class SessionView:
    """What ``session show`` presents: the session's turns and what it says about them."""

    file: str
    doc: dict[str, Any]
    session_id: str
    turns: list[Turn]
    hidden_before: int = 0  # turns cut by --tail
    spilled: int = 0
    raw: bytes = b""  # the document as stored
    selected: bool = False  # turns were chosen (--tail, --archived, --working), not the whole document
    opaque: int = 0  # encrypted values in the turns shown, left encrypted (no key)
    stored_encrypted: int = 0  # encrypted values in the stored document (``--json`` prints them as stored)
    store: str = ""  # the label of the store holding it
    copies: dict[str, Any] = field(default_factory=dict)  # paired_with, pair, stale: as `session list` marks it


def show(paths: Paths, name: str, *, archived: bool = False, working: bool = False,
         tail: int | None = None, store: str | None = None, key: Key | None = None,
         threshold: int | None = HUGE_SESSION) -> SessionView:
    """The session ``name`` (an id, stem, unique prefix or path; in ``store`` only, when given), read once,
    as ``session show`` renders it; encrypted values decrypted with ``key``. With ``tail``, a JSON session file
    of ``threshold`` bytes or more is read a message at a time (:func:`_streamed_view`: the same view)."""
    if archived and working:
        raise UsageError("--archived and --working show different views; give one")
    home = open_store(paths, store)
    ref = home.find(name, allow_prefix=True)
    cipher = key.cipher() if key else None
    shown = _streamed_view(home, ref, archived=archived, working=working, tail=tail, cipher=cipher,
                           threshold=threshold) if tail is not None else None
    if shown is None:
        raw = home.read_bytes(ref)
        doc = home.parse(ref, raw)
        shown = view(home, ref, doc, archived=archived, working=working, tail=tail, cipher=cipher)
        shown.raw = raw
        shown.stored_encrypted = sum(1 for m in (*messages_of(doc, "archived_messages"), *messages_of(doc))
                                     for _ in message_values(m))
    shown.selected = tail is not None or archived or working
    shown.store = home.store_of(ref)
    shown.copies = _copies(open_store(paths) if store and not _is_location(store) else home, ref, shown)
    return shown


def _streamed_view(home: SessionStore, ref: Any, *, archived: bool, working: bool, tail: int,
                   cipher: Cipher | None, threshold: int | None) -> SessionView | None:
    """:func:`view` with ``tail`` of a huge JSON session file (:func:`~.stores.jsondir.huge_file`), holding only
    the last ``tail`` turns: one pass for the document's other members (and a gateway's snapshots), then a pass per
    message list shown, each message made a turn and linked to the calls before it as it passes. ``None``: the file is
    not one for streaming (:class:`~.streamed.Unstreamable`), and is read whole."""
    from praisonmem.core.sessions import streamed
    from praisonmem.core.sessions.stores.jsondir import huge_file

    huge = huge_file(home, ref, threshold)
    if huge is None:
        return None
    store, path = huge
    try:
        with streamed.opened(path) as fd:
            return _tail_of(home, store, ref, fd, path, archived=archived, working=working, tail=tail, cipher=cipher)
    except streamed.Unstreamable:
        return None


def _tail_of(home: SessionStore, store: Any, ref: Any, fd: int, path: str, *, archived: bool, working: bool,
             tail: int, cipher: Cipher | None) -> SessionView:
    from praisonmem.core.sessions import streamed
    from praisonmem.core.sessions.stores.jsondir import waiting_for

    encrypted = [0]

    def count(_: str, message: Any) -> None:
        encrypted[0] += sum(1 for _ in message_values(message))

    doc = streamed.skeleton(fd, path, keep=streamed.is_snapshot, each=count)
    sid = home.session_id(ref, doc)
    where = f"session '{sid}'"
    waiting = waiting_for(store, sid)  # the spill dir's turns for it: only these are looked for among its messages
    present: list[Any] = []

    def active(start: int = 0) -> Iterator[Turn]:
        for i, message in enumerate(streamed.items(fd, "messages")):
            if waiting is not None and waiting(message):
                present.append(message)
            if i >= start:
                yield _turn("active", i, message, cipher, where)

    def turns() -> Iterator[Turn]:
        if working:
            checkpoint = doc.get("last_compaction")
            start = 0
            if isinstance(checkpoint, dict) and checkpoint:
                index = checkpoint.get("message_index")
                start = max(0, min(index if isinstance(index, int) else 0, len(messages_of(doc))))
                yield Turn("checkpoint", None, str(checkpoint.get("role") or "system"),
                           _text(checkpoint.get("summary")), checkpoint.get("timestamp"))
            yield from active(start)
        else:
            if archived:
                for i, message in enumerate(streamed.items(fd, "archived_messages")):
                    yield _turn("archived", i, message, cipher, where)
            yield from active()
        yield from _gateway_turns(doc, cipher, where)
        spilled[:] = home.spilled(ref, sid, present=present)
        yield from _turns("spilled", spilled, cipher, where)

    spilled: list[Any] = []
    kept: deque[Turn] = deque(maxlen=tail)
    names: dict[str, str] = {}
    total = 0
    for turn in turns():  # _link_tool_results, a turn at a time
        for call in turn.tool_calls:
            names[call["id"]] = call["name"]
        if turn.tool_call_id is not None:
            turn.tool_name = names.get(turn.tool_call_id)
        kept.append(turn)
        total += 1
    shown = list(kept)
    opaque = sum(t.encrypted + t.encrypted_metadata + t.encrypted_tool_calls for t in shown if not t.decrypted)
    result = SessionView(str(ref), doc, sid, shown, max(0, total - tail), len(spilled), opaque=opaque)
    result.stored_encrypted = encrypted[0]
    return result


def _is_location(store: str) -> bool:
    from praisonmem.core.sessions.stores.locate import is_location

    return is_location(store)


def _copies(home: SessionStore, ref: Any, shown: SessionView) -> dict[str, Any]:
    """How this copy compares with the same session in the home's other stores (empty: there is none)."""
    others = home.copies(ref, shown.session_id)
    if not others:
        return {}
    from praisonmem.core.sessions.listing import compare_copies  # only with copies to compare

    items = [(shown.store, shown.doc.get("updated_at"), ref)]
    for other in others:
        try:
            updated = home.read(other).get("updated_at")
        except PraisonMemError:
            updated = None
        items.append((home.store_of(other), updated, other))
    return compare_copies(home, items)[0]


def view(store: SessionStore, ref: Any, doc: dict[str, Any], *, archived: bool = False, working: bool = False,
         tail: int | None = None, cipher: Cipher | None = None) -> SessionView:
    """The transcript of ``doc``: archived (opt-in), active (or the working history) and spilled turns."""
    sid = store.session_id(ref, doc)
    where = f"session '{sid}'"
    active = messages_of(doc)
    turns: list[Turn] = []
    if working:
        checkpoint = doc.get("last_compaction")
        start = 0
        if isinstance(checkpoint, dict) and checkpoint:
            index = checkpoint.get("message_index")
            start = max(0, min(index if isinstance(index, int) else 0, len(active)))
            turns.append(Turn("checkpoint", None, str(checkpoint.get("role") or "system"),
                              _text(checkpoint.get("summary")), checkpoint.get("timestamp")))
        turns += _turns("active", active, cipher, where, offset=start)
    else:
        if archived:
            turns += _turns("archived", messages_of(doc, "archived_messages"), cipher, where)
        turns += _turns("active", active, cipher, where)
    turns += _gateway_turns(doc, cipher, where)
    spilled = store.spilled(ref, sid, present=active)
    turns += _turns("spilled", spilled, cipher, where)
    _link_tool_results(turns)
    hidden = 0
    if tail is not None and tail < len(turns):
        hidden = len(turns) - tail
        turns = turns[hidden:] if tail else []
    opaque = sum(t.encrypted + t.encrypted_metadata + t.encrypted_tool_calls for t in turns if not t.decrypted)
    return SessionView(str(ref), doc, sid, turns, hidden, len(spilled), opaque=opaque)


def active_turn(index: int, message: Any, cipher: Cipher | None = None, where: str = "") -> Turn:
    """One message of the active window as a :class:`Turn` (``session watch`` shows turns one by one)."""
    return _turn("active", index, message, cipher, where)


def _turns(section: Section, messages: list[Any], cipher: Cipher | None, where: str, offset: int = 0) -> list[Turn]:
    return [_turn(section, i, m, cipher, where) for i, m in enumerate(messages[offset:], offset)]


def _turn(section: Section, index: int, stored: Any, cipher: Cipher | None = None, where: str = "") -> Turn:
    if not isinstance(stored, dict):
        return Turn(section, index, "?", jsonfile.dumps(stored, compact=True), None, malformed=True)
    message = open_message(stored, cipher, where)
    meta = message.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    content = message.get("content")
    calls = [{"id": i, "name": n, "arguments": a} for i, n, a in tool_calls_of(message)]
    sealed = next(message_values(stored), None) is not None
    compacted = meta.get("compacted_count") if meta.get("compaction") else None
    return Turn(
        section=section,
        index=index,
        role=str(message.get("role") or "?"),
        content=_text(content),
        timestamp=message.get("timestamp"),
        encrypted=is_encrypted(stored.get("content")),
        encrypted_metadata=is_envelope(stored.get("metadata")),
        encrypted_tool_calls=is_encrypted(stored.get("tool_calls")),
        decrypted=sealed and cipher is not None,
        partial=meta.get("partial") is True,
        compaction=compacted if isinstance(compacted, int) else (0 if meta.get("compaction") else None),
        tool_calls=calls,
        tool_call_id=message.get("tool_call_id") if isinstance(message.get("tool_call_id"), str) else None,
    )


def _gateway_turns(doc: dict[str, Any], cipher: Cipher | None = None, where: str = "") -> list[Turn]:
    chat = gateway_chat(doc) or []
    turns = []
    for i, m in enumerate(chat):
        content, sealed = m.get("content"), is_encrypted(m.get("content"))
        if sealed and cipher is not None:
            content = cipher.decrypt(content, where)
        turns.append(Turn("gateway", i, m["role"], _text(content), m.get("timestamp"), encrypted=sealed,
                          decrypted=sealed and cipher is not None,
                          sender=m.get("sender_id") if isinstance(m.get("sender_id"), str) else None))
    return turns


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else jsonfile.dumps(value, compact=True)


def _link_tool_results(turns: list[Turn]) -> None:
    names: dict[str, str] = {}
    for turn in turns:
        for call in turn.tool_calls:
            names[call["id"]] = call["name"]
        if turn.tool_call_id is not None:
            turn.tool_name = names.get(turn.tool_call_id)


def locations(paths: Paths, name: str, *, store: str | None = None) -> list[dict[str, Any]]:
    """Where the session ``name`` (an exact id, stem or path) is kept, once per store that holds it (``store``:
    that one only; ``session path``): the store, the file or database, a database's table and key, and every
    file of it there is now (its lock file, spill files waiting for it, a database's -wal and -shm)."""
    import os
    from pathlib import Path

    from praisonmem.core.sessions.stores.home import Located
    from praisonmem.core.sessions.stores.jsondir import JsonDirStore, spill_files

    home = open_store(paths, store)
    members = getattr(home, "stores", None)  # a home: each of its stores asked in turn, exact names only
    found: list[Any] = []
    if members:
        for label, member in members.items():
            try:
                found.append(Located(label, member.find(name)))
            except PraisonMemError:
                continue
    if not found:
        found = [home.find(name)]  # its error names the stores looked in (and a near name)
    records = []
    for ref in found:
        label = home.store_of(ref)
        inner = getattr(ref, "ref", ref)
        db = getattr(inner, "db", None)
        if db is not None:  # a row of a database
            where = Path(db)
            record = {"store": label, "session_id": str(getattr(inner, "session_id", name)), "kind": "row",
                      "path": str(where), "table": "sessions", "key": str(getattr(inner, "session_id", name))}
            extra = [Path(f"{where}{suffix}") for suffix in ("-wal", "-shm", "-journal")]
        else:
            where = Path(str(inner))
            record = {"store": label, "session_id": home.name(ref), "kind": "directory" if where.is_dir() else "file",
                      "path": str(where), "table": None, "key": None}
            member = (members or {}).get(label, home)
            spills = spill_files(member, str(inner)) if isinstance(member, JsonDirStore) else []
            extra = [Path(f"{where}.lock"), *spills]
        record["files"] = [str(where)] + [str(p) for p in extra if os.path.lexists(p)]
        records.append(record)
    return records
