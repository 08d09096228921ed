"""A JSON object file read member by member, its large arrays item by item: memory follows the largest item.

The whole-document reader (:mod:`.jsonfile`) decodes a file into Python objects at once: for a session of
60 MB that is several times its size in RAM. Here the top-level object is read by hand, with the standard
library's own scanner (``json.decoder``'s C ``scan_once`` and ``scanstring``, the code ``json.loads``
runs) decoding each member's value, or each item of the arrays the caller names, from a window of the
file that grows only to hold the item being decoded. So every value is the one ``json.loads`` gives.

Only what this module fully understands is streamed: any error (invalid UTF-8 or JSON, a torn file, a
number too long, nesting too deep), a top-level value that is not an object and a key given twice (which
``json.loads`` folds into one) raise :class:`Unstreamable`, and the caller reads the file as a whole with
:mod:`.jsonfile`, which says what is wrong exactly as it always has (or returns the folded document).

Writing is the other half: :func:`encoded` is the library's serialisation of one value
(``json.dumps(indent=2, ensure_ascii=False)``) and :func:`object_chunks` lays out a top-level object
from its members, streamed arrays included, as the very bytes that serialisation gives for the whole
document (a JSON text holds no raw newline inside a string, so every newline is structural and
indenting a nested value is adding spaces after each).
"""

from __future__ import annotations

import codecs
import json
import os
import re
from collections.abc import Iterable, Iterator
from typing import Any

from praisonmem.core.io import fastjson

CHUNK = 1 << 20  # bytes read at a time; the window doubles while one value is larger
_WS = re.compile(r"[ \t\n\r]*")  # json.decoder.WHITESPACE: what json.loads skips between tokens
_NUMBER_TAIL = re.compile(r"[0-9+\-.eE]*")  # what may still belong to a number the window cuts ("1e" of "1e5")
_SEPARATOR = re.compile(r"[ \t\n\r]*([,\]])[ \t\n\r]*")  # after an array's item: the next, or its end
_scan = json.JSONDecoder().scan_once  # json.loads' scanner (strict, NaN/Infinity accepted, as loads)
_string = json.decoder.scanstring


class Unstreamable(Exception):
    """This file is not read here (an error, or a document only the whole-file reader reads as ``json.loads``
    does): read it whole."""


class _Window:
    """A decoded window on the file, read with ``pread`` at its own offset (two windows can read one
    descriptor at once) and moved forward as values are consumed."""

    def __init__(self, fd: int, chunk: int = CHUNK) -> None:
        self.fd, self.chunk, self.offset = fd, chunk, 0
        self.decoder = codecs.getincrementaldecoder("utf-8")("strict")
        self.text, self.pos, self.eof = "", 0, False

    def more(self) -> bool:
        """Read more of the file into the window (at least as much as it holds); ``False`` at the end."""
        if self.eof:
            return False
        if self.pos:
            self.text, self.pos = self.text[self.pos:], 0
        try:
            data = os.pread(self.fd, max(self.chunk, len(self.text)), self.offset)
            self.offset += len(data)
            self.text += self.decoder.decode(data, final=not data)
        except UnicodeDecodeError as exc:
            raise Unstreamable("not valid UTF-8") from exc
        self.eof = not data
        return True

    def skip_ws(self) -> None:
        while True:
            self.pos = _WS.match(self.text, self.pos).end()  # type: ignore[union-attr]
            if self.pos < len(self.text) or not self.more():
                return

    def peek(self) -> str:
        """The next character ('' at the end of the file)."""
        while self.pos >= len(self.text):
            if not self.more():
                return ""
        return self.text[self.pos]

    def take(self, char: str) -> None:
        if self.peek() != char:
            raise Unstreamable(f"expected {char!r}")
        self.pos += 1

    def value(self) -> Any:
        """The next JSON value, as ``json.loads`` decodes it. A value the window's end cuts fails to decode or, a
        number, decodes shorter ("1" of "1e5"): it is taken only when something that cannot continue it follows, or
        at the file's end."""
        while True:
            try:
                value, end = _scan(self.text, self.pos)
                if self.eof or (_NUMBER_TAIL.match(self.text, end).end() < len(self.text)  # type: ignore[union-attr]
                                if type(value) in (int, float) else end < len(self.text)):
                    self.pos = end
                    return value
            except StopIteration:
                pass
            except RecursionError as exc:
                raise Unstreamable("nested too deeply") from exc
            except ValueError:  # a JSONDecodeError, or an integer beyond the digits limit
                if self.eof:
                    raise Unstreamable("invalid JSON") from None
            if not self.more():
                raise Unstreamable("invalid JSON")

    def key(self) -> str:
        while True:
            try:
                key, end = _string(self.text, self.pos + 1, True)
                self.pos = end
                return key
            except ValueError:
                if not self.more():
                    raise Unstreamable("invalid JSON") from None


class Items:
    """The items of one streamed array, in order, each decoded when it is reached (iterate it once)."""

    def __init__(self, window: _Window) -> None:
        self.count = 0
        self._items = self._read(window)

    def __iter__(self) -> Iterator[Any]:
        return self._items

    def _read(self, w: _Window) -> Iterator[Any]:
        w.take("[")
        w.skip_ws()
        if w.peek() == "]":
            w.pos += 1
            return
        while True:
            # the fast path: the item and the separator after it (which also ends a number) in the window
            text, pos = w.text, w.pos
            try:
                item, end = _scan(text, pos)
                after = _SEPARATOR.match(text, end)
            except (StopIteration, ValueError, RecursionError):
                after = None
            if after is None:
                item = w.value()
                w.skip_ws()
                char = w.peek()
                w.pos += 1
            else:
                char, w.pos = after.group(1), after.end()
            self.count += 1
            yield item
            if char == "]":
                return
            if char != ",":
                raise Unstreamable("expected ',' or ']'")
            w.skip_ws()

    def drain(self) -> None:
        for _ in self._items:
            pass


def members(fd: int, arrays: Iterable[str] = (), *, chunk: int = CHUNK) -> Iterator[tuple[str, Any]]:
    """``(key, value)`` of each member of the JSON object in the file ``fd``, in file order; the value of a key in
    ``arrays`` that is an array is :class:`Items` (read it before asking for the next member: what is left of it is
    skipped then). The whole file is checked, to its last byte, as ``json.loads`` checks it; anything else raises
    :class:`Unstreamable` (also a key given twice: ``json.loads`` keeps one of them)."""
    w = _Window(fd, chunk)
    streamed = frozenset(arrays)
    w.skip_ws()
    w.take("{")
    w.skip_ws()
    seen: set[str] = set()
    if w.peek() == "}":
        w.pos += 1
    else:
        while True:
            if w.peek() != '"':
                raise Unstreamable("expected a key")
            key = w.key()
            if key in seen:
                raise Unstreamable(f"the key {key!r} is given twice")
            seen.add(key)
            w.skip_ws()
            w.take(":")
            w.skip_ws()
            if key in streamed and w.peek() == "[":
                items = Items(w)
                yield key, items
                items.drain()
            else:
                yield key, w.value()
            w.skip_ws()
            char = w.peek()
            w.pos += 1
            if char == "}":
                break
            if char != ",":
                raise Unstreamable("expected ',' or '}'")
            w.skip_ws()
    w.skip_ws()
    if w.peek() != "":
        raise Unstreamable("extra data after the document")


def encoded(value: Any) -> bytes:
    """``json.dumps(value, indent=2, ensure_ascii=False)`` as UTF-8 (orjson where :mod:`.fastjson` proves it the
    same). Text that is not valid Unicode (a lone surrogate) raises :class:`UnicodeEncodeError`."""
    fast = fastjson.dumps_indented(value)
    if fast is not None:
        return fast
    return json.dumps(value, indent=2, ensure_ascii=False).encode("utf-8")


def object_chunks(pairs: Iterable[tuple[str, Any]]) -> Iterator[bytes]:
    """The bytes of ``json.dumps(dict(pairs), indent=2, ensure_ascii=False)``, a member at a time; a value that is
    an iterator (:class:`Items`, a generator) is laid out as an array of its items, one at a time."""
    first = True
    for key, value in pairs:
        head = (b"{\n  " if first else b",\n  ") + encoded(key) + b": "
        first = False
        if isinstance(value, (list, dict, str, int, float, bool)) or value is None:
            yield head + encoded(value).replace(b"\n", b"\n  ")
            continue
        yield head + b"["
        empty = True
        for item in value:
            yield (b"\n    " if empty else b",\n    ") + encoded(item).replace(b"\n", b"\n    ")
            empty = False
        yield b"]" if empty else b"\n  ]"
    yield b"{}" if first else b"\n}"
