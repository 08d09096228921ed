"""Huge JSON session files, read and rewritten a message at a time (:mod:`praisonmem.core.io.jsonstream`).

A session file of the JSON-directory stores of ``threshold`` bytes or more (:data:`~praisonmem.core.layout.HUGE_SESSION`,
:func:`~.stores.jsondir.huge_file`) is
not decoded whole by ``session show --tail``, ``export`` (json, jsonl, markdown), ``rename`` and ``retitle``:
they read it in passes over one open descriptor (so every pass sees the same file, whatever replaces it
meanwhile). A pass decodes one message at a time; what a command keeps is the *skeleton*, the document with
each message list replaced by a list of the same length holding ``None`` but for the few messages the command
asks to keep (a gateway's snapshots). Smaller files, and files the stream reader leaves to the whole-document
reader (:class:`~.jsonstream.Unstreamable`: an error, a key given twice), take the usual path, so every result
and every error message is the one that path gives.

``threshold`` is a parameter of every entry point so tests can force the fixture sessions through here.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from praisonmem.core.errors import PraisonMemError
from praisonmem.core.io import inputfile
from praisonmem.core.io.jsonstream import CHUNK, Items, Unstreamable, members
from praisonmem.core.layout import HUGE_SESSION as THRESHOLD
from praisonmem.core.sessions.documents import validate

LISTS = ("messages", "archived_messages")  # the lists streamed: every other member is small


@contextmanager
def opened(path: str) -> Iterator[int]:
    """A read-only descriptor on the session file (a regular file, opened without blocking)."""
    fd, _ = inputfile.open_data(path)
    try:
        yield fd
    finally:
        os.close(fd)


def skeleton(fd: int, path: str, keep: Callable[[Any], bool] | None = None,
             each: Callable[[str, Any], None] | None = None) -> dict[str, Any]:
    """The validated document in ``fd``, each message list replaced by one of its length holding ``None`` but for
    the messages ``keep`` keeps; ``each(key, message)`` is called for every message, in file order. The whole
    file is checked (:func:`~.jsonstream.members`)."""
    doc: dict[str, Any] = {}
    for key, value in members(fd, LISTS):
        if isinstance(value, Items):
            kept: list[Any] = []
            for item in value:
                if each is not None:
                    each(key, item)
                kept.append(item if keep is not None and keep(item) else None)
            value = kept
        doc[key] = value
    return validate(doc, path)


def items(fd: int, key: str) -> Iterator[Any]:
    """The messages of the list ``key`` in ``fd``, in order (the other list's are decoded and dropped)."""
    for name, value in members(fd, LISTS):
        if name == key and isinstance(value, Items):
            yield from value


def top_level(path: str, threshold: int | None = THRESHOLD) -> dict[str, Any] | None:
    """The skeleton of the file ``path`` when it is a regular file of ``threshold`` bytes or more that streams (the
    members but the message lists', each list of ``None``); ``None`` for the rest, which are read whole."""
    import stat

    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    if threshold is None or not stat.S_ISREG(st.st_mode) or st.st_size < threshold:
        return None
    try:
        with opened(path) as fd:
            doc: dict[str, Any] = {}
            for key, value in members(fd, LISTS):
                doc[key] = [None for _ in value] if isinstance(value, Items) else value
            return doc
    except Unstreamable:
        return None


def found_in(path: str, needles: tuple[bytes, ...], threshold: int | None = THRESHOLD) -> list[bytes] | None:
    """Which of ``needles`` the file ``path`` holds, when it is a regular file of ``threshold`` bytes or more (read a
    chunk at a time, never whole); ``None`` for the rest (and a file that cannot be read)."""
    import stat

    try:
        st = os.stat(path)
        if threshold is None or not stat.S_ISREG(st.st_mode) or st.st_size < threshold:
            return None
        with opened(path) as fd:
            overlap = max(len(n) for n in needles) - 1
            found: set[bytes] = set()
            tail, offset = b"", 0
            while data := os.pread(fd, CHUNK, offset):
                offset += len(data)
                window = tail + data
                found.update(n for n in needles if n in window)
                tail = window[-overlap:] if overlap else b""
            return [n for n in needles if n in found]
    except (PraisonMemError, OSError, ValueError):
        return None


def is_snapshot(message: Any) -> bool:
    """A gateway's system snapshot (:func:`~.documents.gateway_snapshots` finds it): kept in a skeleton."""
    from praisonmem.core.sessions.documents import gateway_snapshots

    return (type(message) is dict and message.get("role") == "system"
            and bool(gateway_snapshots({"messages": [message]})))




# ---------------------------------------------------------------- export


class HugeDocument:
    """A huge session as ``session export`` writes it: its skeleton, and its messages read again when a format's
    writer reaches them (:meth:`messages`, :meth:`pairs`), each opened with ``cipher`` as it passes and the turns
    waiting in the spill dir after the last one (:func:`~.transfer.with_spilled`'s merge). ``kept`` counts the
    encrypted values written as stored, once they are written."""

    def __init__(self, fd: int, skeleton: dict[str, Any], spilled: list[Any], cipher: Any, where: str) -> None:
        self.fd, self.skeleton, self.spilled, self.cipher, self.where = fd, skeleton, spilled, cipher, where
        self.kept = 0

    def _through(self, found: Iterator[Any]) -> Iterator[Any]:
        from praisonmem.core.sessions.crypto import message_values, open_message

        for message in found:
            if self.cipher is not None:
                message = open_message(message, self.cipher, self.where)
            self.kept += sum(1 for _ in message_values(message))
            yield message

    def messages(self, key: str) -> Iterator[Any]:
        """The messages of ``key`` in order (``messages``: the spilled turns after them)."""
        found = items(self.fd, key)
        if key == "messages":
            from itertools import chain

            found = chain(found, self.spilled)
        return self._through(found)

    def pairs(self) -> Iterator[tuple[str, Any]]:
        """The document's members in order for :func:`~.jsonstream.object_chunks`, the message lists streamed."""
        from itertools import chain

        merged = False
        for key, value in members(self.fd, LISTS):
            if key == "messages" and self.spilled:
                merged = True
                value = chain(value, self.spilled) if isinstance(value, Items) else iter(self.spilled)
            if key in LISTS and not isinstance(value, (list, dict, str, int, float, bool, type(None))):
                value = self._through(value)
            yield key, value
        if self.spilled and not merged:  # {**doc, "messages": [...]}: a new key goes last
            yield "messages", self._through(iter(self.spilled))


@contextmanager
def huge_document(store: Any, ref: Any, path: str, waiting_for: Callable[[str], Callable[[Any], bool] | None],
                  cipher: Any = None) -> Iterator[HugeDocument]:
    """The huge session ``ref`` (the file ``path`` of ``store``) for an export: ``waiting_for(session_id)`` tells a
    turn waiting for it in the spill dir (``None``: none wait; the store's own test). The skeleton pass (the snapshots kept opened with ``cipher``, as the export's gateway chat reads them), then the
    document; :class:`Unstreamable` before anything is yielded when it is not one for streaming."""
    from praisonmem.core.sessions.crypto import open_message

    with opened(path) as fd:
        present: list[Any] = []

        def each(key: str, message: Any) -> None:
            if key == "messages" and waiting(message):
                present.append(message)

        def keep(message: Any) -> bool:  # a role is never encrypted: only a system message is opened to ask
            if cipher is None or type(message) is not dict or message.get("role") != "system":
                return is_snapshot(message)
            return is_snapshot(open_message(message, cipher, "a session"))

        # the spill dir's turns are looked for by the id the document names, known once it is read: when some
        # wait for it, a second pass finds those of them its messages hold already
        doc = skeleton(fd, path, keep=keep)
        sid = store.session_id(ref, doc)
        waiting = waiting_for(sid)
        if waiting is not None:
            skeleton(fd, path, each=each)
        turns = store.spilled(ref, sid, present)
        where = f"session '{sid}'"
        if cipher is not None:  # the snapshots kept, as the export's own opened() copy holds them
            for key in LISTS:
                if isinstance(doc.get(key), list):
                    doc[key] = [None if m is None else open_message(m, cipher, where) for m in doc[key]]
        yield HugeDocument(fd, doc, turns, cipher, where)


# ---------------------------------------------------------------- rename, retitle


def read_top(path: str) -> dict[str, Any]:
    """The skeleton of the session file ``path`` (every message decoded and dropped, the whole file checked);
    :class:`~praisonmem.core.errors.NotFound` when it is gone, :class:`Unstreamable` when only the
    whole-document reader reads it (which reports what is wrong), or writes it (a compact document)."""
    from praisonmem.core.io.jsonfile import is_compact_document

    with opened(path) as fd:
        doc = skeleton(fd, path)
    if is_compact_document(doc):  # written compact, as HierarchicalSessionStore writes it: left to the whole path
        raise Unstreamable("a compact document")
    return doc


def _edited(fd: int, doc: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    """The members of ``doc`` (the skeleton of the file ``fd``, its top-level members edited) in its order, each
    message list streamed from ``fd``; the rest of ``fd`` is read too, so a file that does not read to its end
    stops the write."""
    source = members(fd, LISTS)
    for key, value in doc.items():
        if key in LISTS and isinstance(value, list):  # a placeholder: the file's list, read a message at a time
            for name, found in source:
                if name == key:
                    break
            else:
                raise Unstreamable(f"'{key}' is not in the file")
            if not isinstance(found, Items):
                raise Unstreamable(f"'{key}' is no list in the file")
            yield key, found
        else:
            yield key, value
    for _ in source:
        pass


def chunks_of(fd: int, doc: dict[str, Any]) -> Iterator[bytes]:
    """The bytes the library writes for the edited skeleton ``doc`` of the file ``fd`` (``json.dumps(indent=2,
    ensure_ascii=False)``), in runs of about a chunk."""
    from praisonmem.core.io.jsonstream import object_chunks

    from praisonmem.core.errors import Refused

    run: list[bytes] = []
    held = 0
    pieces = object_chunks(_edited(fd, doc))
    while True:
        try:
            piece = next(pieces, None)
        except UnicodeEncodeError as exc:  # as jsonfile.serialise refuses it
            raise Refused(f"document holds text that is not valid Unicode ({exc.reason}); not written") from exc
        if piece is None:
            break
        run.append(piece)
        held += len(piece)
        if held >= CHUNK:
            yield b"".join(run)
            run, held = [], 0
    yield b"".join(run)


def holds(target: str, source: str, doc: dict[str, Any]) -> bool:
    """``target`` holds exactly the bytes writing ``doc`` (the edited skeleton of ``source``) gives: an interrupted
    rename got that far (``JsonDirStore.holds``, compared a chunk at a time)."""
    try:
        with opened(source) as fd, opened(target) as out:
            offset = 0
            for piece in chunks_of(fd, doc):
                if os.pread(out, len(piece), offset) != piece:
                    return False
                offset += len(piece)
            return os.pread(out, 1, offset) == b""
    except PraisonMemError:
        return False


_MISSING = object()


def _same(a: Any, b: Any) -> bool:
    """The same JSON value (NaN is not equal to itself, but writes the same)."""
    from praisonmem.core.io.jsonstream import encoded

    return a is not _MISSING and b is not _MISSING and (a == b or encoded(a) == encoded(b))


def prove(new: int, source: int, doc: dict[str, Any]) -> str | None:
    """Why the file ``new`` is not the document ``doc`` (the edited skeleton of the file ``source``), or ``None``:
    it must read to its end as JSON, its members in ``doc``'s order with ``doc``'s values, each message list the
    very messages of ``source``'s."""
    from itertools import zip_longest

    old = members(source, LISTS)
    keys = []
    try:
        for key, value in members(new, LISTS):
            keys.append(key)
            if key not in doc:
                return f"it holds a key '{key}' the document has not"
            if not isinstance(value, Items):
                if not _same(value, doc[key]):
                    return f"its '{key}' is not the document's"
                continue
            for name, messages in old:
                if name == key:
                    break
            else:
                return f"its list '{key}' is not the document's"
            if not isinstance(messages, Items) or not isinstance(doc[key], list):
                return f"its list '{key}' is not the document's"
            count = 0
            for ours, theirs in zip_longest(value, messages, fillvalue=_MISSING):
                if not _same(ours, theirs):
                    return f"{key}[{count}] is not the stored message"
                count += 1
            if count != len(doc[key]):
                return f"its '{key}' holds {count} messages, not {len(doc[key])}"
    except Unstreamable as exc:
        return f"it does not read back as JSON ({exc})"
    if keys != list(doc):
        return "its keys are not the document's, in its order"
    return None
