"""``session search``'s index: what a search needs to know of each JSON session file without parsing it.

Kept in praisonmem's cache (:mod:`praisonmem.core.io.cache`, 0600 entries in a 0700 directory), one entry
per sessions directory (``sessions/`` and each praisonai CLI project directory): for each session file its
:class:`~praisonmem.core.io.cache.FileKey` (device, inode, size, mtime and ctime in ns) and a record of
its texts as :func:`~praisonmem.core.sessions.search.session_texts` finds them:

* ``when``: its ``updated_at`` when a string, else ``""`` (what the ranking compares);
* its *words*: every distinct whitespace-separated word of its texts lower-cased, sorted, joined by a space;
* per word, which texts hold it: a bit mask (bit ``i``: the ``i``-th text), in hex, joined by a space.

A query word holds no whitespace, so it occurs in a lower-cased text exactly when it occurs in one of that
text's words: the words rule a file out, and the masks give, per text, which query words it holds. That is
a hit's score but for the 2 points of the whole query, which a text can have only when it holds every
word; so the record gives each file's number of hits exactly and the best score one can have. A search
then parses only the files whose best possible hit can still be among those shown (best first, newest
first) and counts the others' hits from their records; ``--limit 0`` parses every file with a hit.

The index is built a share per search, so that a search costs little more than one without it (see
:data:`RATE`): a file without a record is searched as the plain search searches it (:class:`_Plain`: the byte
sieve first, and only the hits that can still be shown sent back), and gets one when what the search earned pays
for it; the hits of files with and without records are merged in scan order, so the result is the same.

A record is used only when the file's key now is the recorded one, and is kept only when the file had not
changed for longer than the cache's granularity when it was read (git's racy-entry rule,
:func:`~praisonmem.core.io.cache.settled`). Anything a record does not describe exactly is not kept, and
its file is parsed every time: a file that cannot be read or parsed, another store's file (the REPL/TUI's),
a session with encrypted texts (the key may change what they hold) or with a gateway chat. A record that
is not well formed is ignored, and its file parsed. With ``--no-cache`` (or config ``cache = false``), or
a cache dir that cannot be used, search parses every file as it always did; a cache dir that cannot be
written leaves search working, unindexed.
"""

from __future__ import annotations

import heapq
import os
from dataclasses import dataclass, field
from functools import partial, reduce
from operator import and_, or_
from typing import TYPE_CHECKING, Any

from praisonmem.core.errors import PraisonMemError
from praisonmem.core.io import parallel
from praisonmem.core.sessions.search import Found, SearchFold, SearchResult, session_hits, session_texts
from praisonmem.core.sessions.stores import Scanned

if TYPE_CHECKING:
    from praisonmem.core.io.cache import Cache
    from praisonmem.core.paths import Paths
    from praisonmem.core.sessions.listcache import Memo
    from praisonmem.core.sessions.stores.home import Home
    from praisonmem.core.sessions.stores.jsondir import JsonDirStore

KIND = "session-search"
VERSION = 1
_SEP = "\x00"  # joins a session's texts to lower-case them at once (see session_hits)

Record = list[str]  # [when, words, masks]


def search(paths: Paths, query: str, *, cache: Cache | None = None, **options: Any) -> SearchResult:
    """:func:`~praisonmem.core.sessions.search.search` (``options`` are its), the JSON session files through the
    index kept in ``cache`` (without one, or disabled: every file parsed)."""
    from praisonmem.core.sessions import search as plain

    kept = memo(cache)
    if kept is None or options.get("window") is not None:  # the records know no session's time window
        return plain.search(paths, query, **options)

    def scan(home: Any, fold: SearchFold, progress: Any) -> Found:
        from praisonmem.core.sessions.stores.home import Home

        if not isinstance(home, Home):  # a --store location: its own scan
            return home.scan(fold, progress=progress)
        return search_home(home, fold, kept, progress)

    return plain.search(paths, query, scan=scan, **options)


def memo(cache: Cache | None) -> Memo | None:
    """The index's entries in ``cache`` (``None``: no cache to use)."""
    if cache is None or not cache.enabled:
        return None
    from praisonmem.core.sessions.listcache import Memo

    return Memo(cache, _unused, _unused, KIND, VERSION)


def _unused(*_: Any) -> None:  # the index keeps records itself, not an Each fold's parts
    return None


def forget(paths: Paths, cache: Cache) -> None:
    """Drop the index's entries for this home's session directories (after praisonmem changed sessions: no text a
    change removed lingers in the cache)."""
    from praisonmem.core.sessions.stores.projects import project_dirs

    for directory in [paths.sessions_dir, *project_dirs(paths.sessions_dir)]:
        cache.drop(KIND, str(directory))


def record_of(doc: dict[str, Any]) -> Record | None:
    """The record of a session document; ``None`` when the index cannot describe it (see the module docstring)."""
    texts, opaque, gateway = session_texts(doc, None, None)
    if opaque or gateway:
        return None
    contents = [t[3] for t in texts]
    lowered = _SEP.join(contents).lower()
    parts = lowered.split(_SEP)
    if len(parts) != len(contents):  # a content holding NUL itself
        parts = [c.lower() for c in contents]
    masks: dict[str, int] = {}
    get = masks.get
    for i, part in enumerate(parts):
        bit = 1 << i
        for word in set(part.split()):
            masks[word] = get(word, 0) | bit
    words = sorted(masks)
    updated = doc.get("updated_at")
    return [updated if isinstance(updated, str) else "", " ".join(words), " ".join(["%x" % masks[w] for w in words])]


def bounds(words: str, masks: str, terms: list[str]) -> tuple[float, int]:
    """The best score a hit in the file of these words and masks can have (0 when none) and its number of hits;
    ValueError when the two do not hold together (then the file is parsed)."""
    split: list[str] | None = None
    held = []
    for term in terms:
        mask = 0
        at = words.find(term)
        while at >= 0:
            if split is None:
                split = masks.split(" ")
                if len(split) != words.count(" ") + 1:
                    raise ValueError("words and masks differ in number")
            mask |= int(split[words.count(" ", 0, at)], 16)
            end = words.find(" ", at)
            if end < 0:
                break
            at = words.find(term, end + 1)  # the next word holding it
        held.append(mask)
    hit = reduce(or_, held)
    if not hit:
        return 0.0, 0
    if reduce(and_, held):  # a text holding every word may hold the whole query
        return 2.0 + len(terms), hit.bit_count()
    best, rest = 0, hit
    while rest:  # no text holds every word: the best is the most words one holds
        low = rest & -rest
        best = max(best, sum(1 for m in held if m & low))
        rest ^= low
    return float(best), hit.bit_count()


# ---------------------------------------------------------------------- the scan


@dataclass
class _File:
    """A session file of a JSON directory that a search looks at: one that may hold a hit, or has no record."""

    order: tuple[int, int]  # (the store's place in the home, the file's place in its listing)
    path: str
    label: str  # the store its hits belong to
    record: Record | None  # None: parsed whatever it holds
    best: float = 0.0
    count: int = 0
    found: Found | None = None  # its hits, once parsed


@dataclass
class _Store:
    label: str
    files: list[_File] = field(default_factory=list)
    found: Found | None = None  # a store searched the ordinary way


def search_home(home: Home, fold: SearchFold, memo_: Memo, progress: Any = None) -> Found:
    """What ``home.scan(fold)`` finds, the JSON directories' files through the index (see the module docstring)."""
    from praisonmem.core.sessions.stores.home import InStore, _partners
    from praisonmem.core.sessions.stores.jsondir import JsonDirStore

    stores = list(home.stores.values())
    partners = _partners(stores)
    place = {s.label: n for n, s in enumerate(stores)}
    parts: dict[str, _Store] = {}
    terms = fold.terms
    for store in stores:
        if store.label in parts:
            continue
        if not isinstance(store, JsonDirStore):
            parts[store.label] = _Store(store.label, found=store.scan(InStore(fold, store.label), progress=progress))
            continue
        partner = partners.get(store.label)
        parts[store.label] = _Store(store.label)
        if partner is not None:
            parts[partner] = _Store(partner)
        paths, records, foreign, found = indexed(store, memo_, progress, fold, partner)
        mine, at = parts[store.label].files, place[store.label]
        for n, record in enumerate(records):
            if record is None:
                if n in foreign:
                    if partner is not None:  # another store's file: left out when that store is not searched
                        parts[partner].files.append(_File((place[partner], n), paths[n], partner, None,
                                                          found=found.get(n)))
                    continue
                one = found.get(n)
                if one is not _NOTHING:  # a file that adds nothing (ruled out by the sieve, say) needs no place
                    mine.append(_File((at, n), paths[n], store.label, None, found=one))
                continue
            words = record[1]
            for term in terms:
                if term in words:  # most files hold no query word: one test each
                    mine.append(_File((at, n), paths[n], store.label, record))
                    break
    _rank(parts, fold)
    out = fold.empty()
    for store in stores:
        out = fold.merge(out, _found(parts[store.label]))
    return out


def _rank(parts: dict[str, _Store], fold: SearchFold) -> None:
    """Parse the files that must be (no record), then the others best first until no file left can hold a hit
    among the ``limit`` shown; the others' hits are counted from their records."""
    files = [f for part in parts.values() for f in part.files]
    best: list[tuple[float, str]] = []  # the ``limit`` best (score, when) found so far, a min-heap
    for part in parts.values():
        if part.found is not None:
            _offer(best, fold.limit, fold.hits(part.found))
    waiting = []
    for f in files:
        if f.found is not None:  # read already, while its record was being made
            _offer(best, fold.limit, f.found.hits)
        elif f.record is None:
            waiting.append(f)
        else:
            try:
                f.best, f.count = bounds(f.record[1], f.record[2], fold.terms)
            except ValueError:
                f.record = None
                waiting.append(f)
    _parse(waiting, fold, best)
    hopeful = sorted((f for f in files if f.record is not None and f.count),
                     key=lambda f: (f.best, f.record[0]), reverse=True)  # type: ignore[index]
    step, at = 4, 0
    while at < len(hopeful):
        if fold.limit:
            if len(best) >= fold.limit and (hopeful[at].best, hopeful[at].record[0]) < best[0]:  # type: ignore[index]
                break  # these files' hits are sorted after the limit's: counted, not parsed
            batch = hopeful[at:at + step]
            step *= 2
        else:
            batch = hopeful[at:]
        at += len(batch)
        _parse(batch, fold, best)


def _offer(best: list[tuple[float, str]], limit: int, hits: list[Any]) -> None:
    if not limit:
        return
    for hit in hits:
        key = (hit[0], hit[1])
        if len(best) < limit:
            heapq.heappush(best, key)
        elif key > best[0]:
            heapq.heapreplace(best, key)


def _parse(files: list[_File], fold: SearchFold, best: list[tuple[float, str]]) -> None:
    """Each file's hits (in worker processes when there are many), and their scores offered to ``best``."""
    if not files:
        return
    found = parallel.map_chunks(partial(_hits_of, fold=fold), [(f.path, f.label) for f in files])
    for f, one in zip(files, found):
        f.found = one
        _offer(best, fold.limit, one.hits)


def _hits_of(items: list[tuple[str, str]], *, fold: SearchFold) -> list[Found]:
    """Per file (and the store it was listed in), its hits, or why it could not be read (may run in a worker)."""
    from praisonmem.core.sessions.documents import session_id_of
    from praisonmem.core.sessions.stores.jsondir import load, name_of

    out: list[Found] = []
    for path, label in items:
        try:
            doc = load(path)
        except PraisonMemError as exc:
            item = Scanned(path, None, None, exc, ref=path, store=label)
        else:
            item = Scanned(path, session_id_of(doc, name_of(path)), doc, None, ref=path, store=label)
        out.append(session_hits(item, needle=fold.needle, terms=fold.terms, key=fold.key))
    return out


def _found(part: _Store) -> Found:
    """A store's hits, unreadable files and counts in scan order; the files not parsed counted."""
    if part.found is not None:
        return part.found
    out = Found()
    for f in sorted(part.files, key=lambda f: f.order):
        if f.found is None:
            out.dropped += f.count
            continue
        out.hits += f.found.hits
        out.unreadable += f.found.unreadable
        out.dropped += f.found.dropped
        out.opaque += f.found.opaque
        out.opaque_sessions += f.found.opaque_sessions
    return out


# ---------------------------------------------------------------------- keeping the records

COLUMNS = ("names", "keys", "when", "words", "masks")  # an entry: per file kept, its name, key and record, in name order


def recalled(memo_: Memo, directory: str) -> dict[str, list[Any]]:
    """The entry's columns, when they are lists of one length, the records' all strings (else none: the entry is
    rebuilt). A key is checked where it is used: it must equal the file's."""
    doc = memo_.recall(directory)
    columns = [doc.get(c) for c in COLUMNS]
    if all(type(c) is list for c in columns) and len({len(c) for c in columns}) == 1 \
            and all(set(map(type, c)) <= {str} for c in columns[2:]):  # type: ignore[arg-type]
        return dict(zip(COLUMNS, columns))  # type: ignore[arg-type]
    return {c: [] for c in COLUMNS}


def indexed(store: JsonDirStore, memo_: Memo, progress: Any = None, fold: SearchFold | None = None,
            partner: str | None = None) -> tuple[list[str], list[Record | None], set[int], dict[int, Found]]:
    """Every session file of ``store``'s directory in name order, its record (``None``: to be parsed), the places
    of another store's files, and what ``fold`` found in the files read that have no record (by place). A file
    whose key is not the kept one is read (in worker processes when there are many), and its record kept when
    the file had settled before this call began."""
    from praisonmem.core.io.cache import FileKey, now_ns, settled
    from praisonmem.core.sessions.stores.jsondir import session_paths

    if store.paths is not None:
        store.paths.require_home()
    paths = session_paths(store.directory)
    snapshot = now_ns()  # before any stat or read
    directory = str(store.directory)
    old = recalled(memo_, directory) if paths else {c: [] for c in COLUMNS}
    cut = len(directory) + 1  # session_paths joins the directory and each name
    names = [p[cut:] for p in paths] if paths and paths[0].startswith(directory + os.sep) else \
        [os.path.basename(p) for p in paths]
    at = None if names == old["names"] else {name: i for i, name in enumerate(old["names"]) if type(name) is str}
    keys, whens, words, masks = old["keys"], old["when"], old["words"], old["masks"]
    records: list[Record | None] = [None] * len(paths)
    source = [-1] * len(paths)  # per file, its place in the entry when its record there is used
    misses: list[int] = []
    stat = os.stat
    for n, path in enumerate(paths):
        j = n if at is None else at.get(names[n], -1)
        if j >= 0:
            try:
                st = stat(path)
            except OSError:
                misses.append(n)
                continue
            if [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns] == keys[j]:
                records[n] = [whens[j], words[j], masks[j]]
                source[n] = j
                continue
        misses.append(n)
    foreign: set[int] = set()
    found: dict[int, Found] = {}
    build = _chosen(len(misses), FEW)
    used = len(paths) - len(misses)  # files whose record spared the search their cost: that pays for records too
    bonus = RATE * SIEVED * used / len(misses) if misses else 0.0
    read = parallel.map_chunks(partial(_records_of, fold=fold, label=store.label, partner=partner,
                                       foreign=store.foreign, bonus=bonus),
                               [(paths[n], b) for n, b in zip(misses, build)],
                               progress=progress)
    fresh: dict[int, list[int]] = {}  # per file read whose record is kept, its key
    for n, (key, record, theirs, sent) in zip(misses, read):
        records[n] = record
        one = _unpacked(sent)
        if one is not None:
            found[n] = one
        if theirs:
            foreign.add(n)
        elif record is not None and key is not None and settled(FileKey(*key), snapshot):
            fresh[n] = key
    used = sum(1 for j in source if j >= 0)
    if fresh or used != len(old["names"]):  # something new, or an old record gone (stale, or its file deleted)
        kept = [n for n in range(len(paths)) if source[n] >= 0 or n in fresh]
        memo_.keep(directory, {"names": [names[n] for n in kept],
                               "keys": [keys[source[n]] if source[n] >= 0 else fresh[n] for n in kept],
                               "when": [records[n][0] for n in kept],  # type: ignore[index]
                               "words": [records[n][1] for n in kept],  # type: ignore[index]
                               "masks": [records[n][2] for n in kept]}, snapshot)  # type: ignore[index]
    return paths, records, foreign, found


# What a search spends on building records: a file without one is searched as the plain search searches it, and
# a record costs about twice that of a file the search parses, six times that of one the byte sieve rules out
# (the costs below, in units of the latter). Each file searched so earns RATE of its cost, and each file whose
# record was used RATE of the least cost it was spared; a record is built once the earnings pay for it. So a search
# costs at most about RATE more than one without the index, and the index fills over several searches (fewer when
# they have hits, ever faster as it grows). FEW files per directory get theirs in any case.
RATE = 0.12
SIEVED, PARSED, RECORD = 1.0, 3.0, 6.0
FEW = 64


def _chosen(misses: int, most: int) -> list[bool]:
    """Which of ``misses`` files (in listing order) get their record built: ``most`` of them, spread evenly (so
    every worker's chunk has its share)."""
    if most >= misses:
        return [True] * misses
    return [(i * most) // misses != ((i + 1) * most) // misses for i in range(misses)]


def _records_of(items: list[tuple[str, bool]], *, fold: SearchFold | None, label: str, partner: str | None,
                foreign: Any, bonus: float = 0.0) -> list[tuple[list[int] | None, Record | None, bool, Found | None]]:
    """Per file (and whether its record is to be built): its key (taken before it is read), its record (``None``:
    not built, or the index cannot describe it), whether it is another store's, and, for a file without a record,
    what ``fold``'s search finds in it (``None`` for another store's file when that store is not searched), so
    that it is not read again (may run in a worker). A file whose record is not built is searched as
    :func:`~praisonmem.core.sessions.stores.jsondir.JsonDirStore.scan` searches it (see :func:`_searched`)."""
    from praisonmem.core.sessions.documents import session_id_of
    from praisonmem.core.sessions.stores.jsondir import load, name_of

    out: list[tuple[list[int] | None, Record | None, bool, Found | None]] = []
    plain = _Plain(fold)
    plain.credit = bonus * len(items)  # the indexed files' share, there from the start
    for path, build in reversed(items):  # names often grow with time: the newest first, so the floor rises early
        if not build and fold is not None:
            one = plain.searched(path, label=label, partner=partner, foreign=foreign)
            if one is not None:
                out.append(one)
                continue
        try:
            st = os.stat(path)
        except OSError:
            st = None
        key = None if st is None or not _regular(st) else \
            [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]
        try:
            doc = load(path)
        except PraisonMemError as exc:
            out.append((key, None, False, Found(unreadable=[(path, exc.message)])))
            continue
        theirs = foreign is not None and foreign(doc)
        record = None if theirs else record_of(doc)
        if record is not None and not build:
            plain.credit -= RECORD
        found = None
        if record is None and fold is not None and (partner is not None or not theirs):
            item = Scanned(path, session_id_of(doc, name_of(path)), doc, None, ref=path,
                           store=partner if theirs else label)  # type: ignore[arg-type]
            found = plain.trimmed(session_hits(item, needle=fold.needle, terms=fold.terms, key=fold.key,
                                               floor=plain.floor()))
        out.append((key, record, theirs, found))
    out.reverse()
    return [(key, record, theirs, _packed(found)) for key, record, theirs, found in out]  # type: ignore[misc]


_NOTHING = Found()  # what a file adds that adds nothing (shared: never changed)


def _packed(found: Found | None) -> Any:
    """``found`` as a worker sends it back: a tuple (a dataclass pickles slowly), ``0`` when it adds nothing."""
    if found is None:
        return None
    if not (found.hits or found.unreadable or found.dropped or found.opaque):
        return 0
    return found.hits, found.dropped, found.unreadable, found.opaque, found.opaque_sessions


def _unpacked(sent: Any) -> Found | None:
    if sent is None:
        return None
    if sent == 0:
        return _NOTHING
    hits, dropped, unreadable, opaque, opaque_sessions = sent
    return Found(hits=hits, dropped=dropped, unreadable=unreadable, opaque=opaque, opaque_sessions=opaque_sessions)


class _Plain:
    """The plain search of a chunk's files that get no record: the byte sieve first (a file it rules out is only
    checked to be a valid session), and, with a ``--limit``, only the hits that can still be shown sent back (the
    others counted)."""

    def __init__(self, fold: SearchFold | None) -> None:
        self.fold = fold
        self.rules_out = None if fold is None else fold.rules_out
        self.tried = self.seen = 0
        self.credit = 0.0  # what the files searched so far earned for building records (see RATE)
        self.best: list[tuple[float, str]] = []  # the ``limit`` best (score, when) of the chunk so far, a min-heap
        from praisonmem.core.sessions.documents import session_id_of
        from praisonmem.core.sessions.stores.jsondir import TRIES, load_sieved, name_of

        self.load_sieved, self.session_id_of, self.name_of, self.tries = load_sieved, session_id_of, name_of, TRIES

    def searched(self, path: str, *, label: str, partner: str | None, foreign: Any
                 ) -> tuple[None, None, bool, Found | None] | None:
        """What :func:`_records_of` gives for a file searched without a record; ``None`` when the earnings pay for
        its record (then the caller builds it)."""
        fold = self.fold
        assert fold is not None
        self.seen += 1
        rules_out = self.rules_out
        try:
            doc, skip = self.load_sieved(path, rules_out)
        except PraisonMemError as exc:
            return None, None, False, Found(unreadable=[(path, exc.message)])
        self.credit += RATE * (SIEVED if skip else PARSED)
        if self.credit >= RECORD:  # paid when a record is made (a file the index cannot describe is parsed anyway)
            return None
        if skip:
            return None, None, False, Found()
        if rules_out is not None:
            self.tried += 1
            if self.tried == self.tries and self.tried == self.seen:  # nothing ruled out so far: most files pass
                self.rules_out = None
        theirs = foreign is not None and foreign(doc)
        if theirs and partner is None:
            return None, None, True, None
        item = Scanned(path, self.session_id_of(doc, self.name_of(path)), doc, None, ref=path,
                       store=partner if theirs else label)  # type: ignore[arg-type]
        return None, None, theirs, self.trimmed(session_hits(item, needle=fold.needle, terms=fold.terms,
                                                             key=fold.key, floor=self.floor()))

    def floor(self) -> tuple[float, str] | None:
        """The ``limit``-th best (score, when) of the chunk so far, once there are that many (see session_hits)."""
        limit = 0 if self.fold is None else self.fold.limit
        return self.best[0] if limit and len(self.best) >= limit else None

    def trimmed(self, one: Found) -> Found:
        """``one`` without the hits that at least ``limit`` hits of the chunk beat on score and ``when`` (they cannot
        be shown: all ties after that are broken in the hit's favour at best), those counted."""
        limit = 0 if self.fold is None else self.fold.limit
        if not limit or not one.hits:
            return one
        best, kept = self.best, []
        for hit in one.hits:
            key = (hit[0], hit[1])
            if len(best) >= limit:
                if key < best[0]:
                    one.dropped += 1
                    continue
                if key > best[0]:
                    heapq.heapreplace(best, key)
            else:
                heapq.heappush(best, key)
            kept.append(hit)
        one.hits = kept
        return one


def _regular(st: os.stat_result) -> bool:
    import stat

    return stat.S_ISREG(st.st_mode)
