"""Full-text search over session messages, active and archived, in every store (read-only).

Ranking, per message (the library's per-message score, spec §2.7): 2 points when
the whole query occurs in the content, plus 1 for each whitespace-separated query
term that occurs, all case-insensitive. Hits are ordered by score, then by
their session's ``updated_at`` (newest first), then by position in the session.
Encrypted contents are opaque and never matched. A gateway document's chat, which
lives only inside its snapshots (spec-11 §2.7), is searched too (``section``
``gateway``); the library's own search never finds it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from praisonmem.core.errors import UsageError
from praisonmem.core.paths import Paths
from praisonmem.core.io import jsonfile
from praisonmem.core.sessions.documents import gateway_chat, is_encrypted, messages_of
from praisonmem.core.sessions.stores import Scanned, open_store

SNIPPET_WIDTH = 120
SECTIONS = ("archived", "active", "gateway")  # the order of a session's hits at the same score


@dataclass
class SearchResult:
    hits: list[dict[str, Any]]
    total: int
    unreadable: list[tuple[str, str]]


def score(content: str, needle: str, terms: list[str]) -> float:
    lowered = content.lower()
    points = 2.0 if needle in lowered else 0.0
    return points + sum(1.0 for term in terms if term in lowered)


def search(
    paths: Paths,
    query: str,
    *,
    limit: int = 20,
    store: str | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> SearchResult:
    needle = query.strip().lower()
    if not needle:
        raise UsageError("query must not be empty")
    terms = [t for t in needle.split() if t]
    hits: list[dict[str, Any]] = []
    unreadable: list[tuple[str, str]] = []
    total = 0
    scan = partial(session_hits, needle=needle, terms=terms, keep=limit)
    for item in open_store(paths, store).scan(scan, progress=progress):
        if "error" in item:
            unreadable.append((item["file"], item["error"]))
        elif "count" in item:
            total += item["count"]
        else:
            hits.append(item)
    # Stable sorts, least significant key first.
    hits.sort(key=lambda h: (SECTIONS.index(h["section"]), h["index"]))
    hits.sort(key=lambda h: h["updated_at"] if isinstance(h["updated_at"], str) else "", reverse=True)
    hits.sort(key=lambda h: h["score"], reverse=True)
    return SearchResult(hits[:limit] if limit else hits, total, unreadable)


def session_hits(item: Scanned, *, needle: str, terms: list[str], keep: int = 0) -> list[dict[str, Any]]:
    """The hits in one session (with ``keep``, only its best ``keep``: within a session ``updated_at`` is one
    value, so no other hit of it can reach the shown ones), then ``{"count": N}``, all of its hits; or the
    record of why it could not be read. May run in a worker: what it returns crosses a pipe and waits in
    memory, so it is bounded by what is shown."""
    if item.doc is None:
        assert item.error is not None
        return [{"file": item.where, "error": item.error.message}]
    doc, path, sid = item.doc, item.where, item.session_id
    found = []
    sections = (("archived", messages_of(doc, "archived_messages")), ("active", messages_of(doc)),
                ("gateway", gateway_chat(doc) or []))
    for section, messages in sections:
        for index, message in enumerate(messages):
            if not isinstance(message, dict):
                continue
            content = message.get("content")
            if section == "gateway" and isinstance(content, dict):  # the gateway's structured messages
                content = jsonfile.dumps(content, compact=True)
            if not isinstance(content, str) or not content or is_encrypted(content):
                continue
            points = score(content, needle, terms)
            if not points:
                continue
            snippet, spans = snippet_of(content, needle, terms)
            found.append({
                "session_id": sid,
                "file": str(path),
                "store": item.store,
                "index": index,
                "archived": section == "archived",
                "section": section,
                "role": message.get("role"),
                "score": points,
                "timestamp": message.get("timestamp"),
                "updated_at": doc.get("updated_at"),
                "snippet": snippet,
                "highlights": spans,
            })
    count = len(found)
    if keep and count > keep:
        found.sort(key=lambda h: (-h["score"], SECTIONS.index(h["section"]), h["index"]))
        del found[keep:]
    found.append({"count": count})
    return found


def snippet_of(content: str, needle: str, terms: list[str], width: int = SNIPPET_WIDTH) -> tuple[str, list[list[int]]]:
    """A whitespace-collapsed window around the first match, and the match spans in it."""
    text = " ".join(content.split())
    lowered = text.lower()
    same_length = len(lowered) == len(text)  # lower() can change lengths; then no spans
    pos = lowered.find(needle)
    if pos < 0:
        pos = min((p for p in (lowered.find(t) for t in terms) if p >= 0), default=0)
    start = max(0, pos - width // 2) if len(text) > width else 0
    end = min(len(text), start + width)
    snippet = text[start:end]
    spans = _spans(lowered[start:end], [needle, *terms]) if same_length else []
    prefix = "…" if start > 0 else ""
    suffix = "…" if end < len(text) else ""
    shift = len(prefix)
    return prefix + snippet + suffix, [[s + shift, e + shift] for s, e in spans]


def _spans(lowered: str, needles: list[str]) -> list[list[int]]:
    marks = [False] * len(lowered)
    for needle in needles:
        at = lowered.find(needle)
        while needle and at >= 0:
            for i in range(at, at + len(needle)):
                marks[i] = True
            at = lowered.find(needle, at + len(needle))
    spans: list[list[int]] = []
    for i, marked in enumerate(marks):
        if marked and (not spans or spans[-1][1] != i):
            spans.append([i, i + 1])
        elif marked:
            spans[-1][1] = i + 1
    return spans
