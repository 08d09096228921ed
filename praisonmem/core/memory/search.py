"""``memory search`` over FileMemory: :func:`search`, from one cached index per tier file, which spares decoding
the store, or (:func:`search_files`, when the cache is off or an index cannot be trusted) by reading every file.

``FileMemory.search`` scores an item by its text lower-cased: 1.0 when it contains the whole query
(lower-cased), else 0.8 × the share of the query's words among the text's words (``str.split``),
times the item's importance for short- and long-term items; an entity by the better of its name and
``str(attributes)``. So an index of one file holds, per item, only its text lower-cased, its
importance and where the item's bytes are in the file; plus, for speed, the inverted word lists of
those texts (the same words, nothing more). That is all :mod:`praisonmem.core.io.cache` keeps for
it: lower-cased text is users' data, so the entries are 0600 in a 0700 directory.

A search scores every indexed item from the index and decodes only the items it returns (their byte
ranges, read under the file's shared lock, from the very version the index describes: otherwise the
whole search runs again the ordinary way). A query none of whose words occurs anywhere in a file's
texts has no hit there, which one substring test over the joined texts proves.

An index is built from the bytes of the ordinary locked read (:mod:`.filememory_io`); a file that
does not parse, or holds anything :meth:`FileMemoryStore.read_items` / ``entities`` would refuse, is
left to the ordinary path (which raises exactly as before), and so is anything the index cannot
represent exactly (a text holding NUL, an importance that is not a finite-or-infinite float).
"""

from __future__ import annotations

import json
import re
import sys
from array import array
from bisect import bisect_left
from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from praisonmem.core.io.cache import Cache, FileKey, key_of, now_ns
from praisonmem.core.layout import ENTITIES, JSON
from praisonmem.core.memory.filememory import SEARCH_INDEX_KIND as KIND  # named there: a write drops it
from praisonmem.core.memory.filememory import (ITEM_DEFAULTS, SEARCH_DAYS, TIER_FILES, TYPES, check_entities,
                                               check_items, local_dates, normalised_entity, normalised_item)

if TYPE_CHECKING:
    from pathlib import Path

    from praisonmem.core.memory.filememory import FileMemoryStore

VERSION = 1
SEP = "\x00"
_WS = re.compile(r"[ \t\n\r]*")
_CODES = {"offsets": "I", "postings": "I", "importance": "d", "ranges": "Q"}
_SECTIONS = ("texts", "vocabulary", "offsets", "postings", "importance", "ranges")


class Unindexable(Exception):
    """The bytes are not a document the index can describe exactly: use the ordinary path."""


class TierIndex:
    """The index of one tier file: ``count`` items (entities: two texts each, name and attributes)."""

    def __init__(self, *, entities: bool, key: FileKey, count: int, texts: str, vocabulary: list[str],
                 offsets: array, postings: array, importance: array, ranges: array,
                 items: list[Any] | None = None) -> None:
        self.entities = entities
        self.key = key
        self.count = count
        self.blob = texts
        self.vocabulary = vocabulary
        self.offsets = offsets
        self.postings = postings
        self.importance = importance
        self.ranges = ranges
        self.items = items  # the decoded items, when built from the file in this process
        self._texts: list[str] | None = None

    # ------------------------------------------------------------------ building

    @classmethod
    def build(cls, raw: bytes, key: FileKey, *, entities: bool,
              check: Callable[[Any], None]) -> TierIndex:
        """Parse ``raw`` element by element (the standard library's scanner, so every value is what
        ``json.loads`` gives), ``check`` the whole document as the ordinary reader would, and index it."""
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise Unindexable from exc
        try:
            values, spans = (_object if entities else _array)(text)
        except (ValueError, StopIteration, IndexError, RecursionError) as exc:
            raise Unindexable from exc
        check(values)
        items = list(values.values()) if entities else values
        if entities:
            texts = [t for e in items for t in (e["name"].lower(), str(e.get("attributes", {})).lower())]
            importance = array("d")
        else:
            texts = [i["content"].lower() for i in items]
            try:
                importance = array("d", [i.get("importance", 0.5) for i in items])
            except (OverflowError, TypeError) as exc:
                raise Unindexable from exc
        blob = SEP.join(texts)
        if blob.count(SEP) != max(len(texts) - 1, 0):
            raise Unindexable("a text holds NUL")
        try:
            blob.encode("utf-8")
        except UnicodeEncodeError as exc:  # a lone surrogate escape: searched without an index
            raise Unindexable("a text holds a lone surrogate") from exc
        vocabulary, offsets, postings = _inverted(texts)
        flat = [offset for span in spans for offset in span]
        if not raw.isascii():
            octets = _byte_offsets(text, flat)
            flat = [octets[offset] for offset in flat]
        ranges = array("Q", flat)
        return cls(entities=entities, key=key, count=len(items), texts=blob, vocabulary=vocabulary,
                   offsets=offsets, postings=postings, importance=importance, ranges=ranges, items=items)

    # ------------------------------------------------------------------ cache entries

    def payload(self) -> bytes:
        sections = [self.blob.encode("utf-8"), SEP.join(self.vocabulary).encode("utf-8"), self.offsets.tobytes(),
                    self.postings.tobytes(), self.importance.tobytes(), self.ranges.tobytes()]
        meta = {"entities": self.entities, "count": self.count, "words": len(self.vocabulary),
                "byteorder": sys.byteorder, "itemsizes": {c: array(c).itemsize for c in "IdQ"},
                "lengths": [len(s) for s in sections]}
        head = json.dumps(meta).encode("ascii")
        return len(head).to_bytes(4, "little") + head + b"".join(sections)

    @classmethod
    def from_payload(cls, data: bytes, key: FileKey) -> TierIndex | None:
        """The index an entry holds; ``None`` when it is not one this version wrote for this machine."""
        try:
            size = int.from_bytes(data[:4], "little")
            meta = json.loads(data[4:4 + size])
            if (meta["byteorder"] != sys.byteorder or meta["itemsizes"] != {c: array(c).itemsize for c in "IdQ"}
                    or sum(meta["lengths"]) != len(data) - 4 - size):
                return None
            at, parts = 4 + size, {}
            for name, length in zip(_SECTIONS, meta["lengths"], strict=True):
                parts[name] = memoryview(data)[at:at + length]
                at += length
            arrays = {}
            for name, code in _CODES.items():
                arrays[name] = array(code)
                arrays[name].frombytes(parts[name])
            count, words, entities = meta["count"], meta["words"], meta["entities"]
            vocabulary = str(parts["vocabulary"], "utf-8").split(SEP) if words else []
            if (len(vocabulary) != words or len(arrays["offsets"]) != words + 1 or len(arrays["ranges"]) != 2 * count
                    or len(arrays["importance"]) != (0 if entities else count)
                    or (words and arrays["offsets"][-1] != len(arrays["postings"]))):
                return None
            return cls(entities=bool(entities), key=key, count=count, texts=str(parts["texts"], "utf-8"),
                       vocabulary=vocabulary, **arrays)
        except (ValueError, KeyError, TypeError, UnicodeDecodeError):
            return None

    # ------------------------------------------------------------------ scoring

    def texts(self) -> list[str]:
        if self._texts is None:
            per = 2 if self.entities else 1
            self._texts = self.blob.split(SEP) if self.count else []
            if len(self._texts) != per * self.count:
                raise ValueError("index texts do not match its count")
        return self._texts

    def could_match(self, query_words: set[str]) -> bool:
        """``False`` only when no item can score: none of the query's words occurs in any text."""
        return not query_words or any(word in self.blob for word in query_words)

    def scores(self, query_lower: str, query_words: set[str], weighted: bool) -> tuple[list[int], list[float]]:
        """The items that score above 0, in file order, and their scores (``weighted``: times importance,
        as the library does for short- and long-term items) — exactly ``FileMemory.search``'s arithmetic."""
        if not self.count or not self.could_match(query_words):
            return [], []
        whole = [i for i, t in enumerate(self.texts()) if query_lower in t]
        counts: Counter[int] = Counter()
        for word in query_words:
            at = bisect_left(self.vocabulary, word)
            if at < len(self.vocabulary) and self.vocabulary[at] == word:
                counts.update(self.postings[self.offsets[at]:self.offsets[at + 1]])
        n = len(query_words)
        share = {c: c / n * 0.8 for c in range(1, n + 1)}
        whole_set = set(whole)
        hit = sorted(whole_set.union(counts)) if counts else whole
        base = [1.0 if i in whole_set else share[counts[i]] for i in hit]
        if self.entities:
            return _best_of_pairs(hit, base)
        if not weighted:
            return hit, base
        imp = self.importance
        return hit, [s * imp[i] for s, i in zip(base, hit)]

    def range(self, index: int) -> tuple[int, int]:
        return self.ranges[2 * index], self.ranges[2 * index + 1]


def _best_of_pairs(texts: list[int], scores: list[float]) -> tuple[list[int], list[float]]:
    """Entity scores: ``max(score(name), score(str(attributes)))`` over each entity's two texts."""
    best: dict[int, float] = {}
    for t, s in zip(texts, scores):
        e = t >> 1
        best[e] = max(best[e], s) if e in best else s
    return list(best), list(best.values())


def _inverted(texts: list[str]) -> tuple[list[str], array, array]:
    """Sorted distinct words, and for each the indexes of the texts whose ``split()`` holds it."""
    lists: dict[str, list[int]] = {}
    for n, text in enumerate(texts):
        for word in set(text.split()):
            found = lists.get(word)
            if found is None:
                lists[word] = [n]
            else:
                found.append(n)
    vocabulary = sorted(lists)
    offsets, postings = array("I", [0]), array("I")
    for word in vocabulary:
        postings.extend(lists[word])
        offsets.append(len(postings))
    return vocabulary, offsets, postings


# ---------------------------------------------------------------------- parsing with positions

_SCAN = json.JSONDecoder().scan_once
_STRING = json.decoder.scanstring


def _array(text: str) -> tuple[list[Any], list[tuple[int, int]]]:
    """A top-level JSON array and each element's ``[start, end)`` (character offsets); ``ValueError``
    unless ``json.loads(text)`` would give the same list."""
    at = _WS.match(text, 0).end()
    if text[at] != "[":
        raise ValueError("not an array")
    at = _WS.match(text, at + 1).end()
    values: list[Any] = []
    spans: list[tuple[int, int]] = []
    while text[at] != "]":
        value, end = _SCAN(text, at)
        values.append(value)
        spans.append((at, end))
        at = _WS.match(text, end).end()
        if text[at] == ",":
            at = _WS.match(text, at + 1).end()
            if text[at] == "]":
                raise ValueError("trailing ','")
        elif text[at] != "]":
            raise ValueError("expected ','")
    _end(text, at)
    return values, spans


def _object(text: str) -> tuple[dict[str, Any], list[tuple[int, int]]]:
    """A top-level JSON object and each *value*'s span, in the order of the resulting dict (a repeated
    key keeps its first place and its last value, as ``json.loads``)."""
    at = _WS.match(text, 0).end()
    if text[at] != "{":
        raise ValueError("not an object")
    at = _WS.match(text, at + 1).end()
    values: dict[str, Any] = {}
    spans: dict[str, tuple[int, int]] = {}
    while text[at] != "}":
        if text[at] != '"':
            raise ValueError("expected a key")
        key, at = _STRING(text, at + 1, True)
        at = _WS.match(text, at).end()
        if text[at] != ":":
            raise ValueError("expected ':'")
        at = _WS.match(text, at + 1).end()
        value, end = _SCAN(text, at)
        values[key], spans[key] = value, (at, end)
        at = _WS.match(text, end).end()
        if text[at] == ",":
            at = _WS.match(text, at + 1).end()
            if text[at] != '"':
                raise ValueError("expected a key")
        elif text[at] != "}":
            raise ValueError("expected ','")
    _end(text, at)
    return values, list(spans.values())


def _end(text: str, at: int) -> None:
    """``text[at]`` closes the top-level value: only whitespace may follow."""
    if _WS.match(text, at + 1).end() != len(text):
        raise ValueError("extra data")


def _byte_offsets(text: str, offsets: list[int]) -> dict[int, int]:
    """Character offsets → UTF-8 byte offsets."""
    out: dict[int, int] = {}
    chars = octets = 0
    for offset in sorted(set(offsets)):
        octets += len(text[chars:offset].encode("utf-8"))
        chars = offset
        out[offset] = octets
    return out


# ---------------------------------------------------------------------- searching


class Plain:
    """A file the index cannot describe, read the ordinary way and scored item by item."""

    def __init__(self, items: list[dict[str, Any]], *, entities: bool) -> None:
        self.items = items
        self.entities = entities

    def scores(self, query_lower: str, query_words: set[str], weighted: bool) -> tuple[list[int], list[float]]:
        hit, scores = [], []
        for n, raw in enumerate(self.items):
            if self.entities:
                score = max(score_match(raw["name"], query_lower, query_words),
                            score_match(str(raw.get("attributes", {})), query_lower, query_words))
            else:
                score = score_match(raw["content"], query_lower, query_words)
            if score > 0:
                hit.append(n)
                scores.append(score * raw.get("importance", ITEM_DEFAULTS["importance"]) if weighted else score)
        return hit, scores


class Changed(Exception):
    """A file changed between scoring from its index and reading the items shown."""


def search(store: FileMemoryStore, query: str, types: list[str] | None = None, limit: int = 10
           ) -> list[dict[str, Any]]:
    """Exactly ``FileMemory.search``: same scores, same stable order; from the cached indexes when the store's cache
    is enabled, else by reading every file (:func:`search_files`)."""
    types = list(TYPES) if types is None else types
    if store.cache is not None and store.cache.enabled:
        return indexed_search(store, query, types, limit)
    return search_files(store, query, types, limit)


def search_files(store: FileMemoryStore, query: str, types: list[str], limit: int) -> list[dict[str, Any]]:
    """:func:`search` by decoding every file, as the library does."""
    query_lower = query.lower()
    query_words = set(query_lower.split())
    found: list[tuple[float, str, dict[str, Any]]] = []  # items are normalised after the cut
    for tier in ("short_term", "long_term"):
        if tier in types:
            for raw in store.items(tier):
                score = score_match(raw["content"], query_lower, query_words)
                if score > 0:
                    found.append((score * raw.get("importance", ITEM_DEFAULTS["importance"]), tier, raw))
    if "entity" in types:
        for raw in store.entities().values():
            score = max(score_match(raw["name"], query_lower, query_words),
                        score_match(str(raw.get("attributes", {})), query_lower, query_words))
            if score > 0:
                found.append((score, "entity", raw))
    if "episodic" in types:
        for _, raw in store.recent_episodes():
            score = score_match(raw["content"], query_lower, query_words)
            if score > 0:
                found.append((score, "episodic", raw))
    found.sort(key=lambda hit: hit[0], reverse=True)
    return [{"type": kind, "score": score,
             "item": normalised_entity(raw) if kind == "entity" else normalised_item(raw)}
            for score, kind, raw in found[:limit]]


def search_summaries(store: FileMemoryStore, query: str) -> list[dict[str, Any]]:
    """``--type summary``, which ``FileMemory.search`` does not cover: each summary's text scored as an episodic
    item's is (no importance), best first, ties in file order."""
    query_lower = query.lower()
    query_words = set(query_lower.split())
    found = []
    for raw in store.summaries():
        if isinstance(raw, dict) and isinstance(raw.get("summary"), str):
            score = score_match(raw["summary"], query_lower, query_words)
            if score > 0:
                found.append({"type": "summary", "score": score, "item": raw})
    found.sort(key=lambda hit: hit["score"], reverse=True)
    return found


def score_match(text: str, query_lower: str, query_words: set[str]) -> float:
    """FileMemory.search's relevance: 1.0 for the whole query, else 0.8 × the share of query words."""
    text_lower = text.lower()
    if query_lower in text_lower:
        return 1.0
    overlap = len(query_words & set(text_lower.split()))
    if overlap > 0:
        return overlap / len(query_words) * 0.8
    return 0.0


def indexed_search(store: FileMemoryStore, query: str, types: list[str], limit: int) -> list[dict[str, Any]]:
    """:func:`search` from the indexes: the same hits, scores, order and items."""
    try:
        return _search(store, query, types, limit)
    except Changed:
        return search_files(store, query, types, limit)


def _search(store: FileMemoryStore, query: str, types: list[str], limit: int) -> list[dict[str, Any]]:
    sources: list[tuple[str, Path, TierIndex | Plain]] = []
    for tier in ("short_term", "long_term"):
        if tier in types:
            path = store.path(TIER_FILES[tier])
            sources.append((tier, path, source(store, path, entities=False)))
    if "entity" in types:
        path = store.path(ENTITIES)
        sources.append(("entity", path, source(store, path, entities=True)))
    if "episodic" in types:
        for date in local_dates(SEARCH_DAYS):
            path = store.episodic_dir / f"{date}{JSON}"
            if path.exists():
                sources.append(("episodic", path, source(store, path, entities=False)))
    query_lower = query.lower()
    query_words = set(query_lower.split())
    found: list[tuple[int, int]] = []  # (source, item) in the library's order
    scores: list[float] = []
    for n, (kind, _, src) in enumerate(sources):
        hit, hit_scores = src.scores(query_lower, query_words, kind in ("short_term", "long_term"))
        found += [(n, i) for i in hit]
        scores += hit_scores
    # The library's own sort (stable, by score, descending) over the same sequence: the same order
    # whatever the scores are (NaN included).
    shown = sorted(range(len(scores)), key=scores.__getitem__, reverse=True)[:limit]
    items = _decode(store, sources, [found[k] for k in shown])
    return [{"type": sources[found[k][0]][0], "score": scores[k],
             "item": normalised_entity(raw) if sources[found[k][0]][0] == "entity" else normalised_item(raw)}
            for k, raw in zip(shown, items)]


def source(store: FileMemoryStore, path: Path, *, entities: bool) -> TierIndex | Plain:
    """The file's index: from the cache when it is fresh, else built from an ordinary locked read (and
    cached); a file it cannot index is read and scored the ordinary way."""
    from praisonmem.core.errors import CorruptFile, NotFound
    from praisonmem.core.memory import filememory_io
    cache = store.cache
    key = key_of(path)
    if key is not None and cache is not None:
        index = load(cache, path, key)
        if index is not None:
            return index
        snapshot = now_ns()
        try:
            raw, st = filememory_io.read_shared_stat(path, store.timeout)
        except NotFound:
            st = None
        if st is not None:
            check = (lambda doc: check_entities(path, doc)) if entities else (lambda doc: check_items(path, doc))
            try:
                index = TierIndex.build(raw, FileKey.of(st), entities=entities, check=check)
            except (Unindexable, CorruptFile):
                index = None
            if index is not None:
                save(cache, path, index, snapshot)
                return index
    if entities:
        return Plain(list(check_entities(path, store.read(path, {})).values()), entities=True)
    return Plain(store.read_items(path), entities=False)


def _decode(store: FileMemoryStore, sources: list[tuple[str, Path, TierIndex | Plain]],
            picked: list[tuple[int, int]]) -> list[dict[str, Any]]:
    """The items picked (source, item), decoded: from memory when the search read the file, else from
    their bytes, read under the file's shared lock from the version the index describes."""
    from praisonmem.core.errors import IOFailure, NotFound
    from praisonmem.core.io import jsonfile
    from praisonmem.core.memory import filememory_io

    wanted: dict[int, list[int]] = {}
    for n, i in picked:
        if sources[n][2].items is None:
            wanted.setdefault(n, []).append(i)
    read: dict[tuple[int, int], Any] = {}
    for n, indexes in wanted.items():
        _, path, index = sources[n]
        assert isinstance(index, TierIndex)
        try:
            chunks, st = filememory_io.read_ranges_shared(path, store.timeout, [index.range(i) for i in indexes])
        except (NotFound, IOFailure, OSError, ValueError) as exc:  # gone or replaced: search again, as usual
            raise Changed from exc
        if st is None or FileKey.of(st) != index.key:
            raise Changed
        for i, chunk in zip(indexes, chunks):
            try:
                read[(n, i)] = jsonfile.parse(chunk, path)
            except Exception as exc:  # bytes that no longer parse: the file is not the one indexed
                raise Changed from exc
    return [read[(n, i)] if (n, i) in read else sources[n][2].items[i] for n, i in picked]


# ---------------------------------------------------------------------- the cache


def load(cache: Cache, path: Path, key: FileKey) -> TierIndex | None:
    entry = cache.load(KIND, VERSION, path, key)
    return TierIndex.from_payload(entry.payload, key) if entry is not None else None


def save(cache: Cache, path: Path, index: TierIndex, snapshot_ns: int) -> None:
    cache.save(KIND, VERSION, path, index.payload(), key=index.key, snapshot_ns=snapshot_ns)
