"""Text from users' files made safe to show: the one rule for every human-readable output.

A session id, title, message, agent name, memory text, learn entry or Upsonic field
can hold bytes a terminal acts on: ``ESC ]0;…BEL`` sets the window title, ``ESC [2J``
clears the screen, ``ESC ]52;c;…`` writes the clipboard, C1 controls (``\\x9b`` is
CSI) do the same on terminals that honour them, a carriage return overwrites the
line, and bidi overrides (``\\u202e``) reorder what is shown.

:func:`printable` shows each of them as Python's ``repr`` would (``\\x1b``, ``\\x07``,
``\\r``, ``\\x9b``, ``\\u202e``); newlines and tabs stay only where a value is a body
(``multiline``), everywhere else they are ``\\n`` and ``\\t`` too. A backslash is
shown as it is, so the view is for reading; ``--json`` is the exact data.

:func:`json_safe` does the same for JSON text without changing its data: JSON escapes
C0 itself, and DEL, C1, bidi controls, line separators and lone surrogates become
``\\uXXXX`` escapes, which decode to the very same string.
"""

from __future__ import annotations

import re
from functools import cache

_BIDI = "\u202a-\u202e\u2066-\u2069"  # embeddings, overrides and isolates ("Trojan Source")
_SURROGATES = "\ud800-\udfff"  # a lone one cannot even be encoded to UTF-8 for the terminal
# Each pattern compiled when first used (a command uses one or two of them; compiling all costs a cheap
# command's start-up ≈ 1 ms).
_PATTERNS = {
    "line": f"[\x00-\x1f\x7f-\x9f{_BIDI}{_SURROGATES}]",
    "body": f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_BIDI}{_SURROGATES}]",
    "json": f"[\x7f-\x9f{_BIDI}\u2028\u2029{_SURROGATES}]",
}


@cache
def _pattern(name: str) -> re.Pattern[str]:
    return re.compile(_PATTERNS[name])


_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def printable(text: str, *, multiline: bool = False) -> str:
    """``text`` with every character a terminal would act on shown escaped."""
    pattern = _pattern("body" if multiline else "line")
    return pattern.sub(_escape, text) if pattern.search(text) else text


def json_safe(text: str) -> str:
    """JSON text with the characters JSON leaves raw written as ``\\u`` escapes (same data)."""
    if text.isascii() and "\x7f" not in text:  # DEL is the only one in ASCII (two C scans: 6 MB in 1 ms, not 16)
        return text
    pattern = _pattern("json")
    return pattern.sub(lambda m: f"\\u{ord(m.group()):04x}", text) if pattern.search(text) else text


# json_safe's characters as UTF-8 (DEL, C1, line separators, bidi controls); a lone surrogate has none.
@cache
def _json_utf8() -> re.Pattern[bytes]:
    return re.compile(rb"\x7f|\xc2[\x80-\x9f]|\xe2\x80[\xa8-\xae]|\xe2\x81[\xa6-\xa9]")


def json_safe_utf8(data: bytes) -> bytes:
    """:func:`json_safe` for UTF-8 JSON text that is already bytes (no copy through ``str``)."""
    pattern = _json_utf8()
    if not pattern.search(data):
        return data
    return pattern.sub(lambda m: b"\\u%04x" % ord(m.group().decode("utf-8")), data)


def plural(count: int, word: str, many: str | None = None) -> str:
    """``1 session``, ``2 sessions``; ``many`` where adding an s is wrong (``entry``, ``entries``)."""
    return f"{count} {word if count == 1 else (many or word + 's')}"
