"""orjson where it is provably the standard library: the same values decoded, the same bytes written.

Decoding: ``orjson.loads`` rejects everything the standard library rejects, and also NaN, Infinity,
numbers that overflow a double, lone surrogates and very deep nesting (which the standard library
reads); it returns the same values for everything else except integers beyond 64 bits, which it turns
into floats. So: orjson first, unless the bytes hold a run of 19 or more digits (the only way to
write such an integer); on any refusal, :data:`REFUSED`, and the caller decodes with the standard
library, whose result or error message is then exactly what it always was.

Encoding (``json.dumps(doc, indent=2, ensure_ascii=False)``): orjson's ``OPT_INDENT_2`` lays out
objects and arrays the same way (two spaces, ``": "``, ``[]`` and ``{}`` for empty ones) and escapes
strings the same way (tested on every code point); it writes ints the same way and raises for those
beyond 64 bits; it writes floats the same way except NaN and ±Infinity (as ``null``) and non-zero
ones below 1e-4 in magnitude (``0.00001`` or ``1e-7`` for Python's ``1e-05`` and ``1e-07``). So a
document is encoded by orjson only when a walk finds nothing but dicts with str keys, lists, str,
int, bool, None and floats that are zero or at least 1e-4 and finite; otherwise :func:`dumps_indented`
returns ``None`` and the caller uses the standard library. The walk skips the containers the caller
vouches for (``known``): members of a document whose file orjson re-encodes to the very same bytes,
with no small float in them (:func:`proven_members`): a 60,000-item FileMemory store is then written
without walking it.
"""

from __future__ import annotations

import math
from types import ModuleType
from typing import Any

from praisonmem.core.io import gcpolicy


def _import_orjson() -> ModuleType:
    """``import orjson``, with Ctrl-C held back in the main thread until it is done: orjson's module init imports
    standard-library modules and uses what they return unchecked, so a KeyboardInterrupt raised inside one of
    those imports (by the SIGINT handler, or the CLI's SIGALRM that raises an unanswered Ctrl-C again) crashes
    the process with SIGSEGV instead of ending it. A signal that comes meanwhile stays pending and is handled
    right after the import, so the command still ends as interrupted."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():  # Python raises KeyboardInterrupt only there
        import orjson

        return orjson
    held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGALRM})
    try:
        import orjson
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)
    return orjson


orjson = _import_orjson()  # the one import of orjson: other modules use fastjson.orjson

REFUSED = object()
SMALL = 1e-4
DASHES = 4096  # up to this many '-' in a document, each is looked at rather than searching for "e-"
INT_MIN, INT_MAX = -(2**63), 2**64 - 1
_DIGITS = bytes(0x30 if 0x30 <= b <= 0x39 else 0x20 for b in range(256))
_LONG_RUN = b"0" * 19
# digits as "0", both opening brackets as "[", the rest blank: one pass serves both of loads' checks
_MARKS = bytes(0x30 if 0x30 <= b <= 0x39 else 0x5B if b in (0x5B, 0x7B) else 0x20 for b in range(256))
_OPTIONS = (orjson.OPT_INDENT_2 | orjson.OPT_PASSTHROUGH_SUBCLASS | orjson.OPT_PASSTHROUGH_DATETIME
            | orjson.OPT_PASSTHROUGH_DATACLASS)


def loads(raw: bytes) -> Any:
    """The value ``json.loads(raw.decode())`` gives, or :data:`REFUSED` when only the standard library can
    say (an error, or an input orjson would read differently)."""
    marks = raw.translate(_MARKS)
    if _LONG_RUN in marks:
        return REFUSED
    doc = _orjson_loads(raw)
    if doc is REFUSED or marks.count(b"[") < 500:  # _shallow's first test, on the marks
        return doc
    return doc if _shallow(raw, doc) else REFUSED


def loads_proven(raw: bytes) -> tuple[Any, frozenset[int]] | Any:
    """:func:`loads`, and :func:`proven_members` of the result, sharing orjson's one re-encoding of it: a
    document whose bytes orjson re-encodes exactly needs neither of the other checks (orjson would have
    re-encoded a huge integer as a float, and refuses to encode more than 255 levels)."""
    doc = _orjson_loads(raw)
    if doc is REFUSED:
        return REFUSED
    proven = proven_members(raw, doc)
    if proven or (type(doc) in (list, dict) and not doc):
        return doc, proven
    if _LONG_RUN in raw.translate(_DIGITS) or not _shallow(raw, doc):
        return REFUSED
    return doc, proven


def _orjson_loads(raw: bytes) -> Any:
    try:
        if len(raw) < gcpolicy.LARGE:  # the common small file, without a context manager's few microseconds
            return orjson.loads(raw)
        with gcpolicy.quiet_gc(len(raw)):
            return orjson.loads(raw)
    except (orjson.JSONDecodeError, RecursionError):
        return REFUSED


def _shallow(raw: bytes, doc: Any) -> bool:
    """Nested less deeply than the standard library can decode (it gives up near 1,000 levels, orjson at
    1,024): surely so with fewer than 500 brackets, else when orjson can encode it (at most 255 levels)."""
    if raw.count(b"[") + raw.count(b"{") < 500:
        return True
    try:
        orjson.dumps(doc)
    except orjson.JSONEncodeError:
        return False
    return True


def dumps_indented(doc: Any, known: frozenset[int] | set[int] = frozenset()) -> bytes | None:
    """``json.dumps(doc, indent=2, ensure_ascii=False).encode()``, by orjson; ``None`` unless provably so."""
    if not plain(doc, known):
        return None
    try:
        return orjson.dumps(doc, option=_OPTIONS)
    except (orjson.JSONEncodeError, RecursionError):
        return None


def plain(doc: Any, known: frozenset[int] | set[int] = frozenset()) -> bool:
    """Every value in ``doc`` is one both encoders write the same way (``known`` containers are not visited)."""
    stack = [doc]
    while stack:
        value = stack.pop()
        kind = type(value)
        if kind is dict:
            if not all(type(k) is str for k in value):
                return False
            children = value.values()
        elif kind is list:
            children = value
        else:
            children = (value,)
        if known:  # the members vouched for are not visited
            children = [child for child in children if id(child) not in known]
        for child in children:
            t = type(child)
            if t is str or t is bool or child is None:
                continue
            if t is float:
                if not (child == 0.0 or SMALL <= abs(child) < math.inf):  # NaN fails both tests
                    return False
            elif t is int:
                if not INT_MIN <= child <= INT_MAX:
                    return False
            elif t is dict or t is list:
                stack.append(child)
            else:
                return False
    return True


def proven_members(raw: bytes, doc: Any) -> frozenset[int]:
    """The ids of ``doc``'s members (list items or object values) when ``raw``, which ``doc`` was decoded
    from, is exactly orjson's encoding of ``doc`` and holds no float orjson writes differently from the
    standard library; else none. Then every value in them is one both encoders write the same way."""
    if type(doc) not in (list, dict) or b"0.0000" in raw or _exponent_minus(raw):
        return frozenset()
    try:
        same = orjson.dumps(doc, option=_OPTIONS) == raw
    except (orjson.JSONEncodeError, RecursionError):
        return frozenset()
    if not same:
        return frozenset()
    return frozenset(map(id, doc.values() if type(doc) is dict else doc))  # the scalars' ids are never looked up


def _exponent_minus(raw: bytes) -> bool:
    """``raw`` holds a digit followed by ``e-`` (how orjson writes floats below 1e-6), anywhere."""
    if raw.count(b"-") <= DASHES:  # a one-byte count is 3x faster than finding two bytes: look at each '-'
        at = raw.find(b"-", 2)
        while at > 0:
            if raw[at - 1] == 0x65 and 0x30 <= raw[at - 2] <= 0x39:
                return True
            at = raw.find(b"-", at + 1)
        return False
    at = raw.find(b"e-", 1)
    while at > 0:
        if 0x30 <= raw[at - 1] <= 0x39:
            return True
        at = raw.find(b"e-", at + 2)
    return False


def loads_shape(raw: bytes) -> Any:
    """:func:`loads` for a caller that looks at no number in the document: orjson's value whenever the standard
    library decodes the bytes too, integers of 19 digits or more included (orjson reads those as floats, and
    refuses any number beyond a double's range, so a number it reads has at most 309 digits, which the
    standard library's 4,300-digit limit allows); else :data:`REFUSED`. Containers, keys and strings are
    the standard library's."""
    doc = _orjson_loads(raw)
    return doc if doc is REFUSED or _shallow(raw, doc) else REFUSED
