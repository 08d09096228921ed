"""Finding and redacting secrets in any JSON value: a session document, a memory item, a learn entry,
an Upsonic row.

Every string in the value is searched (keys too: a key can be a pasted token), except encrypted
values (``praisonai:enc:v1:…``), which are opaque and stay exactly as they are. A string under a key whose name
says it holds a secret (:data:`~.rules.SECRET_NAME`: ``api_key``, ``password``, ``token``…) is a
``generic_secret`` as a whole when nothing more specific is in it. A finding carries its JSON path
(``messages[3].content``) and a masked excerpt: the text around it with every secret in the excerpt
masked, terminal controls escaped; never the secret itself.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from praisonmem.core.io.safetext import printable
from praisonmem.core.secrets.rules import SECRET_NAME, Level, Match, find, level_of, mask, redact
from praisonmem.core.sessions import is_encrypted

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


def matches_in(text: str, level: Level | str, key: str | None = None) -> list[Match]:
    """The secrets in one string, found under ``key`` (a name such as ``password`` makes the whole value
    one when no rule found anything more specific)."""
    if is_encrypted(text):
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


def hits(value: Any, level: Level | str = Level.standard, path: str = "") -> Iterator[Hit]:
    """Every secret in a JSON value, depth first in document order."""
    yield from _walk(value, level_of(level), path, None)


def _walk(value: Any, level: Level, path: str, key: str | None) -> Iterator[Hit]:
    if isinstance(value, str):
        found = matches_in(value, level, key)
        for m in found:
            yield Hit(path, m.kind, excerpt(value, m, found))
    elif isinstance(value, dict):
        for k, v in value.items():
            child = f"{path}.{k}" if path else str(k)
            if isinstance(k, str):
                for m in (found := find(k, level)):
                    yield Hit(f"{child} (key)", m.kind, excerpt(k, m, found))
            yield from _walk(v, level, child, k if isinstance(k, str) else None)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _walk(v, level, f"{path}[{i}]", key)


def masked(text: str, level: Level | str = Level.standard) -> str:
    """A name (a session id, a file, a user) with every secret in it masked, for showing it beside a finding."""
    found = find(text, level)
    return redact(text, found, lambda m: f"[{m.kind}: {mask(text[m.start:m.end])}]") if found else text


def redacted(value: Any, level: Level | str = Level.standard, *,
             keep: frozenset[str] = frozenset()) -> tuple[Any, int]:
    """A copy of ``value`` with every secret replaced by ``[REDACTED:<kind>]``, and how many were; encrypted
    values, the values of keys named in ``keep`` and key order are kept, the input is not changed."""
    level = level_of(level)
    count = 0

    def walk(v: Any, key: str | None) -> Any:
        nonlocal count
        if key in keep:
            return v
        if isinstance(v, str):
            found = matches_in(v, level, key)
            count += len(found)
            return redact(v, found) if found else v
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
