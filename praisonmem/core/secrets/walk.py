"""Finding and redacting secrets in any JSON value: a session document, a memory item, a learn entry,
an Upsonic row.

Every string in the value is searched (keys too: a key can be a pasted token), except the values the caller's
``opaque`` says are sealed (the sessions' encrypted values, ``praisonai:enc:v1:…``), which stay exactly as they
are: the caller knows its documents' encryption, so this package depends on no store. A string under a key whose name
says it holds a secret (:data:`~.rules.SECRET_NAME`: ``api_key``, ``password``, ``token``…) is a
``generic_secret`` as a whole when nothing more specific is in it. A finding carries its JSON path
(``messages[3].content``) and a masked excerpt: the text around it with every secret in the excerpt
masked, terminal controls escaped; never the secret itself.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from praisonmem.core.io.safetext import printable
from praisonmem.core.secrets.rules import SECRET_NAME, Level, Match, find, level_of, mask, redact

Opaque = Callable[[str], bool]  # a string that is sealed (encrypted): neither searched nor changed

CONTEXT = 24  # characters of text either side of a secret in an excerpt
_INDEX = re.compile(r"^(?:archived_messages|messages)\[(\d+)\]")


@dataclass(frozen=True)
class Hit:
    """One secret in a value: where (a JSON path), what kind, and the masked excerpt."""

    path: str
    kind: str
    excerpt: str

    @property
    def message_index(self) -> int | None:
        m = _INDEX.match(self.path)
        return int(m.group(1)) if m else None

    @property
    def archived(self) -> bool:
        return self.path.startswith("archived_messages[")


def matches_in(text: str, level: Level | str, key: str | None = None, *, opaque: Opaque) -> list[Match]:
    """The secrets in one string, found under ``key`` (a name such as ``password`` makes the whole value
    one when no rule found anything more specific); none in a sealed one."""
    if opaque(text):
        return []
    found = find(text, level)
    if not found and key is not None and SECRET_NAME.search(key) and _worth_hiding(text):
        found = [Match("generic_secret", 0, len(text))]
    return found


def _worth_hiding(text: str) -> bool:
    stripped = text.strip()
    return len(stripped) >= 4 and "[REDACTED:" not in stripped and not stripped.startswith(("<", "${", "{{"))


def excerpt(text: str, match: Match, matches: list[Match]) -> str:
    """The text around ``match``, every secret that falls in the window masked, made safe to print."""
    start, end = max(0, match.start - CONTEXT), min(len(text), match.end + CONTEXT)
    for m in matches:  # a secret across the window's edge is taken in whole (and masked), so no part shows
        if m.start < start < m.end:
            start = m.start
        if m.start < end < m.end:
            end = m.end
    parts, pos = [], start
    for m in matches:
        if m.end <= start or m.start >= end:
            continue
        parts.append(text[pos:m.start])
        parts.append(f"[{m.kind}: {mask(text[m.start:m.end])}]")
        pos = m.end
    parts.append(text[pos:end])
    body = "".join(parts)
    return printable(("…" if start else "") + body + ("…" if end < len(text) else ""))


def hits(value: Any, level: Level | str = Level.standard, path: str = "", *, opaque: Opaque) -> Iterator[Hit]:
    """Every secret in a JSON value, depth first in document order (none in a string ``opaque`` seals)."""
    yield from _walk(value, level_of(level), path, None, opaque)


def _walk(value: Any, level: Level, path: str, key: str | None, opaque: Opaque) -> Iterator[Hit]:
    if isinstance(value, str):
        for kind, text in _analyse(value, level, key, opaque).hits():
            yield Hit(path, kind, text)
    elif isinstance(value, dict):
        for k, v in value.items():
            child = f"{path}.{k}" if path else str(k)
            if isinstance(k, str):
                for m in (found := find(k, level)):
                    yield Hit(f"{child} (key)", m.kind, excerpt(k, m, found))
            yield from _walk(v, level, child, k if isinstance(k, str) else None, opaque)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _walk(v, level, f"{path}[{i}]", key, opaque)


RAW_FIELD = "(raw bytes)"  # the field of a finding in a file that does not parse, searched as it is


def raw_hits(data: bytes, level: Level | str = Level.standard, *, opaque: Opaque) -> Iterator[Hit]:
    """Every secret in the bytes of a file that does not parse (a torn session, a quarantined copy): decoded
    leniently, each JSON string in it read with its escapes undone, the rest searched as text."""
    text = data.decode("utf-8", errors="replace")
    for kind, shown in _analyse(text, level_of(level), None, opaque, raw=True).hits():
        yield Hit(RAW_FIELD, kind, shown)


# ---------------------------------------------------------------- strings that hold JSON

# A JSON string literal, or the unterminated rest of a torn one. One character a step: linear.
_LITERAL = re.compile(r'"((?:[^"\\]|\\.)*)(?:"|\Z)', re.DOTALL)
_AFTER_KEY = re.compile(r"\s*:")
_VALUE_OF_KEY = re.compile(r"\s*:\s*\Z")
_ESCAPE = re.compile(r"\\(u[0-9a-fA-F]{4}|.)", re.DOTALL)
_SURROGATE = re.compile("[\ud800-\udfff]")
_SIMPLE = {"b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
MAX_DEPTH = 4  # JSON in a string in JSON in a string…: deeper than a tool call's arguments ever go


def unescape(body: str) -> str:
    """A JSON string literal's body decoded as JSON does, leniently (an unknown escape is its character, a
    lone surrogate U+FFFD), so ``\\u0073k-proj-…`` is searched as ``sk-proj-…``."""
    if "\\" not in body:
        return body
    text = _ESCAPE.sub(lambda m: chr(int(m.group(1)[1:], 16)) if len(m.group(1)) == 5
                       else _SIMPLE.get(m.group(1), m.group(1)), body)
    if _SURROGATE.search(text):
        text = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return text


def _holds_json(text: str) -> bool:
    """A string that is a JSON object or array (a tool call's arguments, a pasted config)."""
    import json

    try:
        return isinstance(json.loads(text), (dict, list))
    except (ValueError, RecursionError):
        return False


@dataclass
class _Found:
    """The secrets in one string: its own matches, or, when it holds JSON, those of each piece of it (a string
    literal, decoded; the text between literals, as it is), each with its span in the string."""

    text: str
    matches: list[Match]
    pieces: list[tuple[int, int, bool, _Found]] | None = None  # (start, end, is a literal, what is in it)
    valid: bool = False  # the string is valid JSON (redaction keeps it so)

    def count(self) -> int:
        if self.pieces is None:
            return len(self.matches)
        return sum(found.count() for _, _, _, found in self.pieces)

    def hits(self) -> Iterator[tuple[str, str]]:
        """(kind, masked excerpt) of each secret, in order."""
        if self.pieces is None:
            for m in self.matches:
                yield m.kind, excerpt(self.text, m, self.matches)
            return
        for _, _, _, found in self.pieces:
            yield from found.hits()

    def redacted(self) -> str:
        """The string with each secret replaced: inside JSON, a literal is written anew (still a JSON string)
        and a bare value (a card number as a number) becomes a JSON string, so the JSON stays valid."""
        import json

        if self.pieces is None:
            return redact(self.text, self.matches) if self.matches else self.text
        out, last = [], 0
        for start, end, literal, found in self.pieces:
            out.append(self.text[last:start])
            if literal:
                out.append(json.dumps(found.redacted(), ensure_ascii=False))
            else:
                quoted = (lambda m: json.dumps(f"[REDACTED:{m.kind}]")) if self.valid else None
                out.append(redact(found.text, found.matches, quoted))
            last = end
        out.append(self.text[last:])
        return "".join(out)


def _analyse(text: str, level: Level, key: str | None, opaque: Opaque, depth: int = 0, raw: bool = False) -> _Found:
    """The secrets in ``text`` found under ``key``. A string that starts as JSON does (a tool call's arguments,
    torn or whole) or, ``raw``, a file's text is read piece by piece: each string literal with its escapes
    undone and a key's name applied to its value, the text between literals as it is."""
    first = text[:1]
    if first.isspace():
        first = text.lstrip()[:1]
    if depth >= MAX_DEPTH or not (raw or first in ("{", "[")) or opaque(text):
        return _Found(text, matches_in(text, level, key, opaque=opaque))
    pieces: list[tuple[int, int, bool, _Found]] = []
    pos, name, name_end = 0, None, -1
    for m in _LITERAL.finditer(text):
        if m.start() > pos:
            bare = text[pos:m.start()]
            if found := find(bare, level):
                pieces.append((pos, m.start(), False, _Found(bare, found)))
        decoded = unescape(m.group(1))
        is_name = _AFTER_KEY.match(text, m.end()) is not None
        value_of = name if name is not None and _VALUE_OF_KEY.match(text, name_end, m.start()) else None
        found = (_Found(decoded, find(decoded, level)) if is_name
                 else _analyse(decoded, level, value_of, opaque, depth + 1))
        if found.count():
            pieces.append((m.start(), m.end(), True, found))
        name, name_end = (decoded, m.end()) if is_name else (None, -1)
        pos = m.end()
    if pos < len(text) and (found := find(text[pos:], level)):
        pieces.append((pos, len(text), False, _Found(text[pos:], found)))
    whole = _Found(text, [], pieces, valid=not raw and _holds_json(text))
    if not pieces and key is not None and SECRET_NAME.search(key) and _worth_hiding(text):
        return _Found(text, [Match("generic_secret", 0, len(text))])  # as matches_in does for any value so named
    return whole


def masked(text: str, level: Level | str = Level.standard) -> str:
    """A name (a session id, a file, a user) with every secret in it masked, for showing it beside a finding."""
    found = find(text, level)
    return redact(text, found, lambda m: f"[{m.kind}: {mask(text[m.start:m.end])}]") if found else text


def redacted(value: Any, level: Level | str = Level.standard, *, keep: frozenset[str] = frozenset(),
             opaque: Opaque) -> tuple[Any, int]:
    """A copy of ``value`` with every secret replaced by ``[REDACTED:<kind>]``, and how many were; the strings
    ``opaque`` seals, the values of keys named in ``keep`` and key order are kept, the input is not changed. A string
    holding JSON (a tool call's arguments) still holds valid JSON afterwards."""
    level = level_of(level)
    count = 0

    def walk(v: Any, key: str | None) -> Any:
        nonlocal count
        if key in keep:
            return v
        if isinstance(v, str):
            found = _analyse(v, level, key, opaque)
            n = found.count()
            count += n
            return found.redacted() if n else v
        if isinstance(v, dict):
            out = {}
            for k, item in v.items():
                new_key = k
                if isinstance(k, str) and (found := find(k, level)):
                    count += len(found)
                    new_key = redact(k, found)
                out[new_key] = walk(item, k if isinstance(k, str) else None)
            return out
        if isinstance(v, list):
            return [walk(item, key) for item in v]
        return v

    return walk(value, None), count
