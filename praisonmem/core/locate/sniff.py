"""What a JSON document looks like from its first bytes: the keys of its outer object (or of the first object of
its outer array) and of the first object nested in that, without reading or parsing the rest.

A store's documents are told apart by those keys (a session has ``session_id`` and ``messages``, a JSON
conversation store's file ``session`` and ``messages``, a FileMemory item ``id`` and ``content``), so
:data:`HEAD` bytes are enough and a large file costs no more than a small one.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

HEAD = 4096  # bytes read of a JSON file to classify it
ENCRYPTED = b'"praisonai:enc:v1:'  # EncryptedSessionStore's value prefix


@dataclass
class Shape:
    """``outer``: ``{`` or ``[`` (``""``: not JSON of either); ``keys``: the outer object's keys (an array: its
    first object's); ``inner``: the keys of the first object value inside that; ``head``: the bytes read."""

    outer: str = ""
    keys: list[str] = field(default_factory=list)
    inner: list[str] = field(default_factory=list)
    head: bytes = b""


def read_head(path: str, size: int = HEAD) -> bytes | None:
    """The first ``size`` bytes of a regular file (``None``: not one, or unreadable); never follows a link,
    never blocks on a FIFO."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        import stat

        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return os.read(fd, size)
    except OSError:
        return None
    finally:
        os.close(fd)


def shape(head: bytes) -> Shape:
    """The :class:`Shape` of a document's first bytes (a cut string or a partial key at the end is ignored)."""
    text = head.decode("utf-8", "replace")
    at = 0
    length = len(text)
    while at < length and text[at] in " \t\r\n\ufeff":
        at += 1
    if at >= length or text[at] not in "{[":
        return Shape(head=head)
    found = Shape(outer=text[at], head=head)
    # depth of the container holding the keys we keep: 1 for an outer object, 2 for an outer array's objects
    base = 1 if found.outer == "{" else 2
    stack: list[str] = []
    expect_key = False
    target: list[str] | None = None
    seen_first_outer = False
    inner_done = False
    while at < length:
        char = text[at]
        if char == '"':
            end = _string_end(text, at + 1)
            if end < 0:
                break
            if expect_key:
                key = _unescape(text[at + 1:end])
                depth = len(stack)
                if depth == base and not seen_first_outer:
                    found.keys.append(key)
                elif depth == base + 1 and target is not None:
                    target.append(key)
                expect_key = False
            at = end + 1
            continue
        if char in "{[":
            stack.append(char)
            depth = len(stack)
            if char == "{" and depth == base + 1 and not inner_done and target is None:
                target = found.inner
            expect_key = char == "{"
        elif char in "}]":
            depth = len(stack)
            if depth == base + 1 and target is not None:
                target, inner_done = None, True
            if depth == base and found.outer == "[":
                seen_first_outer = True  # only the first element's keys
            if stack:
                stack.pop()
            expect_key = False
        elif char == ",":
            expect_key = bool(stack) and stack[-1] == "{"
        at += 1
    return found


def _string_end(text: str, at: int) -> int:
    """Where the string starting at ``at`` (after its quote) ends; -1 when the head cuts it."""
    while at < len(text):
        char = text[at]
        if char == "\\":
            at += 2
            continue
        if char == '"':
            return at
        at += 1
    return -1


def _unescape(raw: str) -> str:
    if "\\" not in raw:
        return raw
    import json

    try:
        return json.loads(f'"{raw}"')
    except ValueError:
        return raw
