"""Full-text search over session messages, active and archived, in every store (read-only).

Ranking, per message (the library's per-message score): 2 points when
the whole query occurs in the content, plus 1 for each whitespace-separated query
term that occurs, all case-insensitive. Hits are ordered by score, then by
their session's ``updated_at`` (newest first), then by position in the session.
Encrypted contents are decrypted with the session key when one is given; without it they are
opaque, never matched, and counted (``SearchResult.opaque``) so the caller can say so. A gateway
document's chat, which lives only inside its snapshots, is searched too (``section``
``gateway``); the library's own search never finds it.

A search keeps only what it shows: the scan's workers score every message but send back, per
chunk of sessions, only the hits that can still be among the ``limit`` shown (small tuples, see
:class:`SearchFold`) and the number of the others; snippets and highlights are made only for the hits
returned. One session's contents are lower-cased in one call, and a session none of whose texts
holds a query word is done with after that one test.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import compress, repeat
from operator import contains
from typing import Any

from praisonmem.core.errors import UsageError
from praisonmem.core.paths import Paths
from praisonmem.core.io import jsonfile
from praisonmem.core.sessions.crypto import Key
from praisonmem.core.sessions.documents import ENCRYPTED_PREFIX, gateway_chat, is_encrypted
from praisonmem.core.sessions.stores import Scanned
from praisonmem.core.sessions.stores.locate import open_store

SNIPPET_WIDTH = 120
SECTIONS = ("archived", "active", "gateway")  # the order of a session's hits at the same score
_SEP = "\x00"  # joins a session's contents to lower-case them at once; no query word holds it

# A hit as the workers send it: the sort key's fields first, then what printing it needs.
# (score, when, section, index, content, role, timestamp, updated_at, session_id, file, store)
# ``when`` is ``updated_at`` when a string, else "" (what the ordering compares).
Hit = tuple[float, str, int, int, str, Any, Any, Any, Any, str, str]


@dataclass
class SearchResult:
    hits: list[dict[str, Any]]
    total: int
    unreadable: list[tuple[str, str]]
    opaque: int = 0  # encrypted messages not searched (no key)
    opaque_sessions: int = 0
    missing: str | None = None  # the store's directory is not there (a mistyped PRAISONAI_HOME), as listing says


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
    key: Key | None = None,
    window: Any = None,
    scan: Callable[[Any, SearchFold, Callable[[int, int], None] | None], Found] | None = None,
) -> SearchResult:
    """The hits of ``query`` (see the module docstring), the first ``limit`` (0: all). ``window`` (a
    timeutil.Window, from ``--since``/``--until``): only in the sessions whose ``updated_at`` lies in it.
    ``scan(home, fold, progress)``: what folds the home's sessions, when not ``home.scan`` (the index of
    :mod:`.searchindex`, which is not used with a ``window``)."""
    from praisonmem.core.sessions.sieve import sieve_for

    needle = query.strip().lower()
    if not needle:
        raise UsageError("query must not be empty")
    terms = [t for t in needle.split() if t]
    home = open_store(paths, store)
    fold = SearchFold(needle, terms, key, limit, sieve_for(terms), window)
    sql = _sql_store(home, store)
    if sql is not None and all(t.isascii() for t in terms):  # SQL's case folding equals Python's for ASCII
        found = sql.scan(fold, progress=progress, only=sql.matching(terms))
    else:
        found = home.scan(fold, progress=progress) if scan is None else scan(home, fold, progress)
    hits = fold.hits(found)
    total = found.dropped + len(hits)
    _order(hits)
    if limit:
        del hits[limit:]
    return SearchResult([hit_record(hit, needle, terms) for hit in hits], total, found.unreadable, found.opaque,
                        found.opaque_sessions, home.absent())


def _order(hits: list[Hit]) -> None:
    """Stable sorts, least significant key first: score, then newest session, then place in it."""
    hits.sort(key=lambda h: (h[2], h[3]))
    hits.sort(key=lambda h: h[1], reverse=True)
    hits.sort(key=lambda h: h[0], reverse=True)


@dataclass
class Found:
    """What a search found in a run of sessions, in scan order: the hits that can still be among the ``limit``
    shown (ties in scan order), the number of the others (``dropped``), the files that could not be read (file,
    reason), and the encrypted messages no key opened (``opaque``) with the number of their sessions. The
    other fields are :class:`SearchFold`'s bookkeeping, no part of the result."""

    hits: list[Hit] = field(default_factory=list)
    dropped: int = 0
    unreadable: list[tuple[str, str]] = field(default_factory=list)
    opaque: int = 0
    opaque_sessions: int = 0
    ahead: list[list[Hit]] = field(default_factory=list, compare=False)  # hits before ``hits``, the last run first
    fresh: int = field(default=0, compare=False)  # hits added since the last cut
    bound: int = field(default=0, compare=False)  # cut once ``fresh`` reaches it
    floor: tuple[float, str] | None = field(default=None, compare=False)  # see session_hits


NO_CUT = 1 << 62  # no --limit: every hit is kept
CUT_AT = 4096  # hits gathered, at most, before the best are kept and the others counted


@dataclass(frozen=True)
class SearchFold:
    """The scan of a search (a :class:`~praisonmem.core.sessions.stores.Fold` into :class:`Found`; module level:
    it runs in worker processes). With a ``limit``, a partial result keeps only the hits that can still be
    among the first ``limit`` and counts the others: cutting a run's hits, then that and the next run's, gives
    what cutting both runs' hits at once gives. Cuts come often until the best score is among the kept hits
    (then ``floor`` lets older sessions send only their count, :func:`session_hits`), then rarely. The JSON
    directory folds a chunk's files last first (names often grow with time, so the newest come first and the
    floor rises early) and skips the messages of files ``sieve`` rules out."""

    needle: str
    terms: list[str]
    key: Key | None = None
    limit: int = 0
    sieve: Any = None  # a sieve.Sieve, or None
    window: Any = None  # a timeutil.Window, or None

    last_first = True

    @property
    def rules_out(self) -> Callable[[bytes], bool] | None:
        return None if self.sieve is None else self.sieve.rules_out

    def empty(self) -> Found:
        return Found(bound=self._least())

    def add(self, acc: Found, item: Scanned) -> Found:
        one = session_hits(item, needle=self.needle, terms=self.terms, key=self.key, floor=acc.floor,
                           window=self.window)
        acc.hits += one.hits
        acc.unreadable += one.unreadable
        return self._counted(acc, one)

    def add_first(self, item: Scanned, acc: Found) -> Found:
        """``merge(add(empty(), item), acc)``, the item's hits put before ``acc``'s without copying them."""
        one = session_hits(item, needle=self.needle, terms=self.terms, key=self.key, floor=acc.floor,
                           window=self.window)
        if one.hits:
            acc.ahead.append(one.hits)
        if one.unreadable:
            acc.unreadable[:0] = one.unreadable
        return self._counted(acc, one)

    def merge(self, a: Found, b: Found) -> Found:
        a.hits += self.hits(b)
        a.unreadable += b.unreadable
        return self._counted(a, b)

    def hits(self, acc: Found) -> list[Hit]:
        """Every hit ``acc`` holds, in its order."""
        if acc.ahead:
            acc.hits = [hit for run in reversed(acc.ahead) for hit in run] + acc.hits
            acc.ahead = []
        return acc.hits

    def _counted(self, acc: Found, other: Found) -> Found:
        acc.dropped += other.dropped
        acc.opaque += other.opaque
        acc.opaque_sessions += other.opaque_sessions
        acc.fresh += len(other.hits) + sum(map(len, other.ahead))
        if acc.fresh >= acc.bound:
            self._cut(acc)
        return acc

    def _least(self) -> int:
        return min(CUT_AT, max(64, 4 * self.limit)) if self.limit else NO_CUT

    def _cut(self, acc: Found) -> None:
        """Keep the best ``limit`` hits, ordered as :func:`search` orders them (ties in scan order), and count
        the others."""
        hits = self.hits(acc)
        limit = self.limit
        if len(hits) > limit:
            # Rank the distinct `when` values (newest first) so one tuple compares in C; the position
            # makes ties keep scan order.
            rank = {when: r for r, when in enumerate(sorted({h[1] for h in hits}, reverse=True))}
            best = heapq.nsmallest(limit, ((-h[0], rank[h[1]], h[2], h[3], i) for i, h in enumerate(hits)))
            acc.dropped += len(hits) - limit
            acc.hits = hits = [hits[k[4]] for k in best]
        else:
            _order(hits)
        acc.fresh = 0
        settled = False
        if limit and len(hits) >= limit:
            acc.floor = (hits[limit - 1][0], hits[limit - 1][1])
            settled = acc.floor[0] >= hits[0][0]  # only a newer session raises it now
        acc.bound = max(CUT_AT if settled else self._least(), 2 * len(hits))


def _sql_store(home: Any, store: str | None) -> Any:
    from praisonmem.core.sessions.listing import _sql_store as found

    return found(home, store)


def session_texts(doc: dict[str, Any], key: Key | None, session_id: str | None
                  ) -> tuple[list[tuple[int, int, dict[str, Any], str]], int, bool]:
    """What a search looks at in one session: its texts ``(section, index, message, content)`` in hit order, the
    number of encrypted ones no key opened, and whether its gateway chat was searched too (the index of
    :mod:`.searchindex` keeps only sessions with neither)."""
    cipher = key.cipher() if key else None
    opaque = 0
    texts: list[tuple[int, int, dict[str, Any], str]] = []
    gateway = False
    for section, field in ((0, "archived_messages"), (1, "messages")):
        messages = doc.get(field)
        if type(messages) is not list:
            continue
        for index, message in enumerate(messages):
            if type(message) is not dict:
                continue
            content = message.get("content")
            if type(content) is not str or content.startswith(ENCRYPTED_PREFIX):  # is_encrypted, inlined for str
                if is_encrypted(content):
                    if cipher is None:
                        opaque += 1
                        continue
                    content = cipher.decrypt(content, f"session '{session_id}'")
            if type(content) is str and content:
                texts.append((section, index, message, content))
            if not gateway and message.get("role") == "system" and type(message.get("metadata")) is dict:
                gateway = True  # maybe a gateway snapshot (gateway_chat decides)
    if gateway:
        for index, message in enumerate(gateway_chat(doc) or []):
            content = message.get("content")
            if is_encrypted(content):
                if cipher is None:
                    opaque += 1
                    continue
                content = cipher.decrypt(content, f"session '{session_id}'")
            if isinstance(content, dict):  # the gateway's structured messages
                content = jsonfile.dumps(content, compact=True)
            if isinstance(content, str) and content:
                texts.append((2, index, message, content))
    return texts, opaque, gateway


def session_hits(item: Scanned, *, needle: str, terms: list[str], key: Key | None = None,
                 floor: tuple[float, str] | None = None, window: Any = None) -> Found:
    """The hits in one session (as :data:`Hit` tuples), or why it could not be read, and its encrypted messages no
    key opened; may run in a worker. With ``floor``, the score and ``when`` of hits already found that enough
    others beat or equal: a session older than ``floor``'s, when ``floor``'s score is the best there is, can
    only add to the count, so it gives its number of hits instead of them."""
    if item.doc is None:
        assert item.error is not None
        return Found(unreadable=[(item.where, item.error.message)])
    doc = item.doc
    if window is not None and not window.holds(doc.get("updated_at")):  # --since/--until leave it out
        return Found()
    texts, opaque, _ = session_texts(doc, key, item.session_id)
    tail = Found(opaque=opaque, opaque_sessions=1) if opaque else Found()
    if not texts:
        return tail
    # One call lower-cases every content of the session: str.lower works per character (final sigma
    # looks no further than a NUL), so each part is that content lower-cased; most sessions hold no
    # query word, and one test settles them.
    lowered_all = _SEP.join(t[3] for t in texts).lower()
    if not any(term in lowered_all for term in terms):
        return tail
    parts = lowered_all.split(_SEP)
    if len(parts) != len(texts):  # a content holding NUL itself
        parts = [t[3].lower() for t in texts]
    updated = doc.get("updated_at")
    when = updated if isinstance(updated, str) else ""
    # Per word, which parts hold it, by map() in C; a part holding the whole query holds every word.
    held = [list(map(contains, parts, repeat(term))) for term in terms]
    words = held[0] if len(held) == 1 else list(map(sum, zip(*held)))
    if floor is not None and when < floor[1] and floor[0] >= 2.0 + len(terms):
        tail.dropped = len(words) - words.count(0)
        return tail
    sid, where, label = item.session_id, str(item.where), item.store
    found = tail.hits
    for i in compress(range(len(parts)), words):
        section, index, message, content = texts[i]
        points = (2.0 if needle in parts[i] else 0.0) + words[i]
        found.append((points, when, section, index, content, message.get("role"), message.get("timestamp"),
                      updated, sid, where, label))
    return tail


def hit_record(hit: Hit, needle: str, terms: list[str]) -> dict[str, Any]:
    """A hit as the command prints it."""
    points, _, section, index, content, role, timestamp, updated, sid, where, label = hit
    snippet, spans = snippet_of(content, needle, terms)
    return {
        "session_id": sid,
        "file": where,
        "store": label,
        "index": index,
        "archived": section == 0,
        "section": SECTIONS[section],
        "role": role,
        "score": points,
        "timestamp": timestamp,
        "updated_at": updated,
        "snippet": snippet,
        "highlights": spans,
    }


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
    """Every occurrence of each needle (non-overlapping, left to right, per needle), merged where they
    overlap or touch: the maximal highlighted runs."""
    found: list[tuple[int, int]] = []
    for needle in needles:
        if not needle:
            continue
        at = lowered.find(needle)
        while at >= 0:
            found.append((at, at + len(needle)))
            at = lowered.find(needle, at + len(needle))
    found.sort()
    spans: list[list[int]] = []
    for start, end in found:
        if spans and start <= spans[-1][1]:
            if end > spans[-1][1]:
                spans[-1][1] = end
        else:
            spans.append([start, end])
    return spans
