"""session search's own pass over a home's JSON directories: each file read once, and no-hit files not searched.

:meth:`~.home.Home.scan` with ``reduce`` lets every store scan its own files, so the REPL/TUI
("unified") store read every file of ``sessions/`` a second time, in the parent, after the JSON
store's workers had read them all (10,000 sessions: ~0.1 s). Here one pass over a JSON directory gives
both stores' results, exactly as the two scans gave them (:func:`_chunk` follows
``jsondir._scan_chunk`` and ``UnifiedStore.scan`` + ``read_unified`` step by step, down to the file the
two both report when a unified document has a malformed ``messages``), kept apart so that they are
merged in store order, as before. Every other store is scanned as the home scans it.

And a file whose bytes show it can hold no hit (:class:`Sieve`) is still read, parsed and checked
exactly as before (a file that does not parse is reported all the same), but its messages are not
looked at.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache, partial
from typing import Any

from praisonmem.core.errors import PraisonMemError
from praisonmem.core.io import fastjson, jsonfile, parallel
from praisonmem.core.sessions.documents import ENCRYPTED_PREFIX, is_unified, session_id_of, validate
from praisonmem.core.sessions.stores import Scanned

# What a JSON string escape other than \uXXXX can stand for: a query word holding one of these may be
# spelt in the file by an escape, so the file's bytes cannot rule it out.
_ESCAPED = frozenset('"\\/\b\f\n\r\t')
# Final sigma: str.lower() writes 'ς' or 'σ' for 'Σ' after looking at its neighbours, which differ
# between a content and the file text around it.
_SIGMAS = frozenset("σς")


@lru_cache(maxsize=1)
def ascii_lowering() -> tuple[bytes, ...]:
    """UTF-8 of every non-ASCII character whose ``str.lower()`` holds an ASCII one (U+0130 and the Kelvin
    sign, in Python 3.11's tables), from the running Python's own tables: each plane's code points in one
    string, lowered at once (8 ms for all 17); the few ASCII characters in a result are traced back to
    their sources (a lowering may be longer than its source, by at most the plane's total growth)."""
    block = bytearray(4 * 65536)  # one plane in UTF-32-LE, built by slices rather than per character
    block[0::4] = bytes(range(256)) * 256
    block[1::4] = b"".join(bytes([j]) * 256 for j in range(256))
    found: set[str] = set()
    for plane in range(17):
        block[2::4] = bytes([plane]) * 65536
        chars = block.decode("utf-32-le", "ignore")  # "ignore" drops the surrogates (which have no case)
        lowered = chars.lower()
        slack = len(lowered) - len(chars)
        for ascii_char in set(lowered.encode("ascii", "ignore").decode("ascii")):
            at = lowered.find(ascii_char)
            while at >= 0:
                found.update(c for c in chars[max(0, at - slack):at + 1] if not c.isascii() and ascii_char in c.lower())
                at = lowered.find(ascii_char, at + 1)
    return tuple(sorted(c.encode("utf-8") for c in found))


@dataclass(frozen=True)
class Sieve:
    """Decides from a session file's bytes that the search finds nothing in it: no hit, no encrypted
    message to count or decrypt, no gateway chat. A hit needs some query word in some content lowered;
    when the file has no ``\\u`` escape, every character of a content is in the file as itself or as
    one of the escapes of :data:`_ESCAPED`, and a word holding none of those (nor a sigma) that occurs in
    a lowered content occurs, at the same place, in the lowered file text. For ASCII words the file's
    bytes lowered (ASCII only) stand for that text when no character of :func:`ascii_lowering` is in it.
    Encrypted contents are searched decrypted or counted, and a gateway's structured contents are
    searched re-encoded: files that may hold those (the prefix, a ``"system"`` role) are searched."""

    words: tuple[bytes, ...]  # UTF-8 of the query words
    ascii: bool  # every word is ASCII: match them in the bytes lowered
    lowering: tuple[bytes, ...] = ()  # :func:`ascii_lowering`, when ``ascii``
    rare: tuple[bytes, ...] = ()  # per word, its byte least common in text (:func:`rarest`), when ``ascii``

    def may_hit(self, raw: bytes) -> bool:
        if (b"\\" in raw and b"\\u" in raw) or _PREFIX in raw or b'"system"' in raw:
            return True
        if self.ascii:
            if not raw.isascii():
                for char in self.lowering:
                    if char[:1] in raw and char in raw:  # a one-byte test is a memchr, several times faster
                        return True
            lowered = raw.lower()
            for word, rare in zip(self.words, self.rare):
                if rare in lowered and word in lowered:
                    return True
            return False
        try:
            text = raw.decode("utf-8").lower()
        except UnicodeDecodeError:
            return True
        for word in self.words:
            if word.decode("utf-8") in text:
                return True
        return False


_PREFIX = ENCRYPTED_PREFIX.encode("utf-8")
_COMMON = b" etaoinsrhldcumfpgwybvkxjqz"  # English letters by frequency, commonest first


def rarest(word: bytes) -> bytes:
    """The byte of ``word`` least common in text (any byte but a lowercase letter or space counts as rare): when
    it is absent, so is the word, and a one-byte search is a memchr, several times faster than the word's."""
    return bytes([max(word, key=lambda b: _COMMON.find(bytes([b])) if bytes([b]) in _COMMON else len(_COMMON))])
TRIES = 64  # a chunk whose first files all may hit stops asking (the test costs a few percent of a file's search)


def sieve_for(terms: list[str]) -> Sieve | None:
    """The :class:`Sieve` for a query's words, ``None`` when a word could be spelt by an escape."""
    if not terms or any(_ESCAPED.intersection(t) or _SIGMAS.intersection(t) for t in terms):
        return None
    ascii = all(t.isascii() for t in terms)
    words = tuple(t.encode("utf-8") for t in terms)
    if not ascii:
        return Sieve(words, False)
    return Sieve(words, True, ascii_lowering(), tuple(rarest(w) for w in words))


def scan_home(home: Any, fn: Callable[..., list[Any]], *, reduce: Callable[[list[Any]], list[Any]], limit: int,
              sieve: Sieve | None, progress: Callable[[int, int], None] | None = None) -> list[Any] | None:
    """``home.scan(fn, reduce=reduce, progress=progress)`` for a home of member stores, each JSON directory
    read once (``None``: not such a home; the caller scans it). ``fn`` is
    :func:`~praisonmem.core.sessions.search.session_hits` (``reduce`` its ``keep_top`` for ``limit``): it
    finds nothing in a valid document whose bytes ``sieve`` rules out, and takes a ``floor``."""
    from praisonmem.core.sessions.stores.home import Home
    from praisonmem.core.sessions.stores.jsondir import JsonDirStore
    from praisonmem.core.sessions.stores.unified import UnifiedStore

    if type(home) is not Home:
        return None
    stores = list(home.stores.values())
    later: dict[str, list[Any]] = {}  # a unified store's results, found by its JSON directory's pass
    out: list[Any] = []
    for at, store in enumerate(stores):
        if store.label in later:
            out = reduce(out + later.pop(store.label))
        elif type(store) is JsonDirStore and store.foreign_label is None:
            partner = next((s for s in stores[at + 1:] if type(s) is UnifiedStore and s.directory == store.directory
                            and store.foreign is is_unified), None)
            mine, theirs = _scan_dir(store, partner.label if partner else None, fn, reduce, limit, sieve, progress)
            out = reduce(out + mine)
            if partner is not None:
                later[partner.label] = theirs
        else:
            out = reduce(out + Home([store], home.where).scan(fn, progress=progress, reduce=reduce))
    return out


def _scan_dir(store: Any, unified: str | None, fn: Callable[..., list[Any]],
              reduce: Callable[[list[Any]], list[Any]], limit: int, sieve: Sieve | None,
              progress: Callable[[int, int], None] | None) -> tuple[list[Any], list[Any]]:
    """``JsonDirStore.scan`` with ``reduce`` (and, with ``unified``, that store's scan of the same files)."""
    from praisonmem.core.sessions.stores.jsondir import session_paths

    store._check_home()
    files = session_paths(store.directory)
    waiting = store._spill_counts() if files else {}
    chunks = parallel.map_chunks(partial(_chunk, fn=fn, waiting=waiting, label=store.label, foreign=store.foreign,
                                         unified=unified, reduce=reduce, limit=limit, sieve=sieve), files,
                                 progress=progress)
    mine = reduce([item for pair in chunks for item in pair[0]])
    theirs = reduce([item for pair in chunks for item in pair[1]])
    return mine, theirs


def _chunk(paths: list[str], *, fn: Callable[..., list[Any]], waiting: dict[str, int], label: str,
           foreign: Callable[[Any], bool] | None, unified: str | None, reduce: Callable[[list[Any]], list[Any]],
           limit: int, sieve: Sieve | None) -> list[tuple[list[Any], list[Any]]]:
    """One chunk of a JSON directory (may run in a worker): the JSON store's results, as
    ``jsondir._scan_chunk`` gives them, and the unified store's (``UnifiedStore.scan``: the files
    ``read_unified`` accepts, whose malformed ``messages`` both stores report), each cut by ``reduce``.
    The files are searched last first (names often grow with time, so the newest come first and the
    floor of what is kept rises early), their results put back in scan order (:class:`_Cut`)."""
    from praisonmem.core.sessions.stores.jsondir import name_of
    from praisonmem.core.sessions.stores.unified import _looks_unified

    mine, theirs = _Cut(reduce, limit), _Cut(reduce, limit)
    tried = 0
    for at in range(len(paths) - 1, -1, -1):
        path = paths[at]
        try:
            raw = jsonfile.read_bytes(path)
            searched = sieve is None or sieve.may_hit(raw)
            # a file searched needs its exact values; one that is not, only what the checks below look at
            doc = fastjson.REFUSED if searched else fastjson.loads_shape(raw)
            if type(doc) is not dict:
                doc = jsonfile.parse_object(raw, path)
        except PraisonMemError as exc:
            mine.add(fn(Scanned(path, None, None, exc, ref=path, store=label)))
            continue
        claimed = unified is not None and is_unified(doc) and _looks_unified(raw)  # read_unified's answer
        try:
            validate(doc, path)
        except PraisonMemError as exc:
            mine.add(fn(Scanned(path, None, None, exc, ref=path, store=label)))
            if claimed:
                theirs.add(fn(Scanned(path, None, None, exc, ref=path, store=unified or "")))
            continue
        if not searched:
            continue
        if sieve is not None:
            tried += 1
            if tried == TRIES and tried == len(paths) - at:  # nothing ruled out so far: most files hit
                sieve = None
        if claimed:
            theirs.add(fn(Scanned(path, session_id_of(doc, name_of(path)), doc, None, ref=path, store=unified or ""),
                          floor=theirs.floor))
        elif foreign is None or not foreign(doc):
            sid = session_id_of(doc, name_of(path))
            mine.add(fn(Scanned(path, sid, doc, None, ref=path, store=label, spilled=waiting.get(sid, 0)),
                        floor=mine.floor))
    return [(mine.result(), theirs.result())]


class _Cut:
    """One store's results in a chunk searched backwards: each file's added as it comes, the lot cut by
    ``reduce`` (``keep_top``) as it grows, in scan order (``reduce(a + reduce(b))`` is ``reduce(a + b)``:
    the cut keeps the best of ``b`` in their order and every error and count). ``floor``: the score and
    ``when`` of the ``limit``-th best hit kept, which a hit must beat or equal to be shown; cut often
    until it holds the best score, then rarely."""

    def __init__(self, reduce: Callable[[list[Any]], list[Any]], limit: int) -> None:
        from praisonmem.core.sessions.stores.jsondir import REDUCE_AT

        self.reduce, self.limit = reduce, limit
        self.most, self.least = REDUCE_AT, min(REDUCE_AT, max(64, 4 * limit))
        self.pending: list[list[Any]] = []  # per file, the last file first
        self.count = 0
        self.kept: list[Any] = []  # reduce of the results of the files after the pending ones
        self.bound = self.least
        self.floor: tuple[float, str] | None = None

    def add(self, results: list[Any]) -> None:
        if results:
            self.pending.append(results)
            self.count += len(results)
            if self.count >= self.bound:
                self._cut()

    def _cut(self) -> None:
        self.kept = self.reduce([item for results in reversed(self.pending) for item in results] + self.kept)
        self.pending, self.count = [], 0
        keys = sorted(((item[0], item[1]) for item in self.kept if type(item) is tuple), reverse=True)
        if self.limit and len(keys) >= self.limit:
            self.floor = keys[self.limit - 1]
        settled = self.floor is not None and self.floor[0] >= keys[0][0]  # only a newer session raises it now
        self.bound = max(self.most if settled else self.least, 2 * len(self.kept))

    def result(self) -> list[Any]:
        return self.reduce([item for results in reversed(self.pending) for item in results] + self.kept)
