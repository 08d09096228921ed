"""What a JSON document looks like from its first bytes: the keys of its outer object (or of the first object of
its outer array) and of the first object nested in that, without reading or parsing the rest.

A store's documents are told apart by those keys (a session has ``session_id`` and ``messages``, a JSON
conversation store's file ``session`` and ``messages``, a FileMemory item ``id`` and ``content``), so
:data:`HEAD` bytes are enough and a large file costs no more than a small one.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass, field

HEAD = 1024  # bytes read of a JSON file to classify it: its first keys come long before
ENCRYPTED = b'"praisonai:enc:v1:'  # EncryptedSessionStore's value prefix


@dataclass
class Shape:
    """``outer``: ``{`` or ``[`` (``""``: not JSON of either); ``keys``: the outer object's keys (an array: its
    first object's); ``inner``: the keys of the first object value inside that; ``values``: those of the outer
    object's keys read whose value is a string, with it; ``head``: the bytes read."""

    outer: str = ""
    keys: list[str] = field(default_factory=list)
    inner: list[str] = field(default_factory=list)
    values: dict[str, str] = field(default_factory=dict)
    head: bytes = b""


def read_head(path: str, size: int = HEAD) -> bytes | None:
    """The first ``size`` bytes of a regular file (``None``: not one, or unreadable); never follows a link,
    never blocks on a FIFO."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return os.read(fd, size)
    except OSError:
        return None
    finally:
        os.close(fd)


# The key sets that decide what a document is (see the walk): once the keys read complete one, the rest of the
# head is not scanned. ``("{", ...)``: the outer object's keys; ``("[", ...)``: the first element's.
SIGNATURES: tuple[tuple[str, frozenset[str]], ...] = (
    ("{", frozenset({"session_id", "messages"})), ("{", frozenset({"session", "messages"})),
    ("{", frozenset({"short_term_limit"})), ("[", frozenset({"session_id", "session_type"})),
    ("[", frozenset({"user_id", "user_memory"})), ("[", frozenset({"id", "content"})),
    ("[", frozenset({"id", "summary"})), ("[", frozenset({"id", "name"})),
)


DECIDING = {outer: tuple(wanted for o, wanted in SIGNATURES if o == outer) for outer in "{["}


# A JSON token that matters to the shape: a whole string, or a structural character (numbers and literals are
# skipped); a string the head cuts does not match, so it ends the scan.
TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\],]')


def shape(head: bytes) -> Shape:
    """The :class:`Shape` of a document's first bytes (a cut string or a partial key at the end is ignored); the scan
    stops once the keys complete one of the :data:`SIGNATURES`."""
    text = head.decode("utf-8", "replace").lstrip(" \t\r\n\ufeff")
    if not text or text[0] not in "{[":
        return Shape(head=head)
    found = Shape(outer=text[0], head=head)
    deciding = DECIDING[found.outer]
    seen: set[str] = set()
    base = 1 if found.outer == "{" else 2  # the depth of the object whose keys are kept
    stack: list[str] = []  # the open containers
    expect_key = False
    target: list[str] | None = None
    inner_done = first_done = False
    pending: str | None = None  # an outer key whose value comes next
    for match in TOKEN.finditer(text):
        token = match.group()
        depth = len(stack)
        if token[0] == '"':
            if expect_key:
                if depth == base and not first_done:
                    key = _unescape(token[1:-1])
                    found.keys.append(key)
                    seen.add(key)
                    if any(wanted <= seen for wanted in deciding):
                        break
                    pending = key if base == 1 else None
                elif depth == base + 1 and target is not None:
                    target.append(_unescape(token[1:-1]))
                expect_key = False
                continue
            if pending is not None and depth == base:
                found.values[pending] = _unescape(token[1:-1])
        elif token in "{[":
            stack.append(token)
            if token == "{" and depth + 1 == base + 1 and not inner_done and not first_done:
                target = found.inner
            expect_key = token == "{"
        elif token in "}]":
            if depth == base + 1 and target is not None:
                target, inner_done = None, True
            if depth == base and found.outer == "[":
                first_done = True  # only the first element's keys
                break
            stack.pop()
            expect_key = False
        else:  # a comma: a key follows only inside an object
            expect_key = stack[-1] == "{"
        pending = None
    return found


def _unescape(raw: str) -> str:
    if "\\" not in raw:
        return raw
    import json

    try:
        return json.loads(f'"{raw}"')
    except ValueError:
        return raw
