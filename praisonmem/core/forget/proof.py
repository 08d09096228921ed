"""The proof of a forget: nothing of the subject is found again, neither by the stores nor in their bytes.

:func:`prove` is called after every store erased its part::

    prove(stores, plans, subject, *, removed=None, roots=(), exclude=(), key=None) -> list[Verdict]

``stores[i]`` is the :class:`~.model.ForgetStore` whose plan (made *before* the erase) is ``plans[i]``;
``removed[i]`` is what its ``erase`` returned (default: the plan's number of erasures); ``roots`` are the
directories of the sweep (the home, the current directory's ``.praisonai``, each ``--in DIR``; the
directories of the stores' files are added); ``exclude`` are files the sweep leaves alone because
praisonmem wrote them for this forget and they hold the subject's identifier by design (the journal);
``key`` is the session key (``PRAISONAI_SESSION_KEY``/``--key-file``: bytes, text or a
:class:`praisonmem.core.sessions.Key`).

It returns one :class:`~.model.Verdict` per store, in the order given, then one per file the sweep found
residue in (``store`` ``"copy"``), then one for the sweep itself (``store`` ``"sweep"``: ``residue`` when
it found any, ``absent`` otherwise; its detail says what was scanned and what was skipped). A store is:

* ``residue`` when its re-plan still finds a record (named by the record's key), or when a needle is found
  in the raw bytes of one of its files or answered by its ``residue`` (a server);
* ``unverified`` when its re-plan says it cannot be reached, its ``residue`` returns ``None``, a file of it
  cannot be read, or it holds encrypted session values and no key was given;
* ``absent`` otherwise.

The needles are each erased record's texts of :data:`~.model.MIN_NEEDLE` characters and up, and the
subject's identifier, in every form the stores write text: UTF-8, JSON-escaped as
``json.dumps(ensure_ascii=True)`` writes non-ASCII characters, quotes and control characters, and in
UTF-16 (little and big endian) for a database whose header says so. A long text is also looked for in
pieces (an SQLite overflow page or a line break splits it). The sweep looks for the texts and for an
identifier of :data:`~.model.MIN_NEEDLE` characters and up (a session id); a short user name is looked
for in the stores' own files only, where the re-plan has just said none of the subject's records are
left (elsewhere, "alice" in another app's file is not a copy of alice's records).

Files are read as bytes, never through their library: opened with ``O_NOFOLLOW|O_NONBLOCK`` (a link is
never followed, a FIFO never waited on), regular files only, streamed in blocks with an overlap of the
longest needle, so memory stays bounded and a needle split across two blocks is found; a store's file
that is a directory has every regular file under it scanned. Nothing is
written, no lock is taken, no mtime changes (a database's encoding is read from its header, not by
opening it with SQLite, which could create a ``-shm`` or take a lock). The sweep skips what ``locate``
skips (``.git``, ``node_modules``, ``__pycache__``, a virtualenv) and says so.

A detail names the file, the byte offset and the erased record's key whose text matched, never the text.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import stat
import sys
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from praisonmem.core.errors import PraisonMemError
from praisonmem.core.forget.model import MIN_NEEDLE, ForgetStore, StorePlan, Subject, Verdict, Verified
from praisonmem.core.io.safetext import plural

CHUNK = 1 << 20  # bytes read at a time: memory stays at about this plus the longest needle
PIECE = 48  # a text longer than two pieces is looked for in pieces of this many characters
WINDOW = 8  # the sampled fingerprint: 8 bytes (one machine word) ...
STRIDE = 4  # ... every 4 bytes, which finds every needle of WINDOW + STRIDE - 1 bytes and up
SHORT = WINDOW + STRIDE - 1  # needles shorter than this are looked for one by one
SQLITE_MAGIC = b"SQLite format 3\x00"
UTF16 = {2: "utf-16-le", 3: "utf-16-be"}  # the header's text encoding (offset 56): 1 is UTF-8
SIDE_SUFFIXES = ("-wal", "-shm", "-journal")
ENCRYPTED = b"praisonai:enc:v1:"  # EncryptedSessionStore's value prefix: the token follows in URL-safe base64
TOKEN = re.compile(rb"praisonai:enc:v1:([A-Za-z0-9_=-]*)")
TOKEN_BODY = re.compile(rb"[A-Za-z0-9_=-]*")
TOKEN_MAX = 64 << 20  # an encrypted value longer than this is not decrypted (the file is then unverified)
SKIP_DIRS = frozenset({".git", "node_modules", "__pycache__"})  # what locate never enters
VENV_MARK = "pyvenv.cfg"
MAX_DEPTH = 64
SHOWN = 5  # hits named per file; the rest are counted


# ---------------------------------------------------------------- needles


@dataclass(frozen=True)
class Needle:
    """One byte string to look for and whose it is (``label``: a record's key, never its text)."""

    data: bytes
    label: str


@dataclass(frozen=True)
class Texts:
    """The strings a proof looks for, each with its label: the erased records' texts and the identifiers."""

    texts: tuple[tuple[str, str], ...]  # (text, label), each at least MIN_NEEDLE characters
    short_ids: tuple[tuple[str, str], ...] = ()  # identifiers shorter than that: the stores' own files only

    def strings(self) -> list[str]:
        """The whole strings, for a server's ``residue`` and for decrypted values."""
        return list(dict.fromkeys(t for t, _ in (*self.texts, *self.short_ids)))


def texts_of(subject: Subject, plans: Iterable[StorePlan]) -> Texts:
    """The needles' texts of a forget: every erased record's texts of MIN_NEEDLE characters and up, labelled
    by store and key, and the subject's identifier."""
    found: dict[str, str] = {}
    for plan in plans:
        for erasure in plan.erasures:
            for text in erasure.texts:
                if isinstance(text, str) and len(text) >= MIN_NEEDLE:
                    found.setdefault(text, f"{plan.store} record {erasure.key}")
    label = f"the {subject.kind} id"
    value = subject.value
    if len(value) >= MIN_NEEDLE:
        found.setdefault(value, label)
        return Texts(tuple(found.items()))
    return Texts(tuple(found.items()), ((value, label),) if value else ())


def pieces(text: str) -> list[str]:
    """``text`` whole, or (a long one) in consecutive pieces: an SQLite overflow page boundary or a line break
    splits a long text, so each piece is looked for on its own."""
    if len(text) <= 2 * PIECE:
        return [text]
    cut = [text[i:i + PIECE] for i in range(0, len(text) - PIECE + 1, PIECE)]
    if len(text) % PIECE:
        cut.append(text[-PIECE:])
    return cut


def forms(text: str, utf16: bool) -> list[bytes]:
    """Every way a store writes ``text``: UTF-8, JSON-escaped (``ensure_ascii`` escapes non-ASCII characters as
    ``\\uXXXX``; either way quotes, backslashes and controls are escaped), and UTF-16 when the database is."""
    out = [text.encode("utf-8", "surrogatepass"), json.dumps(text, ensure_ascii=True)[1:-1].encode("ascii"),
           json.dumps(text, ensure_ascii=False)[1:-1].encode("utf-8", "surrogatepass")]
    if utf16:
        out += [text.encode("utf-16-le", "surrogatepass"), text.encode("utf-16-be", "surrogatepass")]
    return list(dict.fromkeys(out))


def needles_of(texts: Texts, *, utf16: bool = False, short_ids: bool = True) -> list[Needle]:
    found: dict[bytes, str] = {}
    for text, label in texts.texts:
        for piece in pieces(text):
            for data in forms(piece, utf16):
                found.setdefault(data, label)
    if short_ids:
        for text, label in texts.short_ids:
            for data in forms(text, utf16):
                found.setdefault(data, label)
    return [Needle(data, label) for data, label in found.items()]


# ---------------------------------------------------------------- the scanner


class Scanner:
    """Finds needles in a stream fed block by block, in bounded memory.

    Needles of SHORT bytes and up are found by a sampled fingerprint: the 8-byte words of the buffer at every
    4th offset, read as integers (``memoryview.cast``), are intersected with the set of each needle's words at
    its offsets 0 to 3; a needle of SHORT bytes or more always has one of those words at a sampled offset, so
    no occurrence is missed, and only a word that matched is looked at again. Shorter needles are looked for
    one by one. Each block is searched together with the previous block's last (longest needle - 1) bytes,
    so a needle split across two reads is found; only matches reaching into the new bytes are counted.
    """

    def __init__(self, needles: Sequence[Needle], *, watch_tokens: bool = False) -> None:
        self.short = [n for n in needles if len(n.data) < SHORT]
        self.anchors: dict[int, list[tuple[Needle, int]]] = {}
        for needle in needles:
            if len(needle.data) >= SHORT:
                for j in range(STRIDE):
                    word = int.from_bytes(needle.data[j:j + WINDOW], sys.byteorder)
                    self.anchors.setdefault(word, []).append((needle, j))
        self.keys = frozenset(self.anchors)
        longest = max((len(n.data) for n in needles), default=1)
        if watch_tokens:
            longest = max(longest, len(ENCRYPTED))
        self.keep = longest - 1
        self.watch_tokens = watch_tokens
        self.tail = b""
        self.offset = 0  # where ``tail`` starts in the stream
        self.hits: dict[str, int] = {}  # label -> first offset
        self.encrypted = False

    def feed(self, block: bytes) -> None:
        if not block:
            return
        buf = self.tail + block
        fresh = len(self.tail)  # a match must end past this to be new
        self._search(buf, fresh)
        if self.watch_tokens and not self.encrypted:
            at = buf.find(ENCRYPTED)
            self.encrypted = at >= 0 and at + len(ENCRYPTED) > fresh
        cut = max(len(buf) - self.keep, 0)
        self.offset += cut
        self.tail = buf[cut:]

    def _hit(self, needle: Needle, at: int) -> None:
        offset = self.offset + at
        if offset < self.hits.get(needle.label, offset + 1):
            self.hits[needle.label] = offset

    def _search(self, buf: bytes, fresh: int) -> None:
        for needle in self.short:
            at = buf.find(needle.data, max(fresh - len(needle.data) + 1, 0))
            if at >= 0:
                self._hit(needle, at)
        if not self.keys:
            return
        view = memoryview(buf)
        words: set[int] = set()
        for start in range(0, 2 * STRIDE, STRIDE):  # the words at offsets 0, 8, 16, ... and 4, 12, 20, ...
            usable = (len(buf) - start) // WINDOW * WINDOW
            if usable > 0:
                words |= self.keys.intersection(view[start:start + usable].cast("Q"))
        view.release()
        for word in words:
            anchor = word.to_bytes(WINDOW, sys.byteorder)
            at = buf.find(anchor)
            while at >= 0:
                for needle, j in self.anchors[word]:
                    begin = at - j
                    end = begin + len(needle.data)
                    if begin >= 0 and end > fresh and buf.startswith(needle.data, begin):
                        self._hit(needle, begin)
                at = buf.find(anchor, at + 1)

    def found(self) -> list[tuple[int, str]]:
        return sorted((offset, label) for label, offset in self.hits.items())


class Tokens:
    """The encrypted values in a stream (``praisonai:enc:v1:<token>``), each token collected across blocks."""

    def __init__(self) -> None:
        self.carry = b""  # the last bytes of the previous block: a prefix split across two blocks
        self.partial: bytearray | None = None  # a token that reached the end of the previous block
        self.skipping = False  # a token longer than TOKEN_MAX: its rest is passed over
        self.too_long = False

    def feed(self, block: bytes) -> Iterator[bytes]:
        """The tokens that end in ``block``."""
        start = 0
        if self.partial is not None or self.skipping:
            start = TOKEN_BODY.match(block).end()
            if self.partial is not None:
                self.partial += block[:start]
                if len(self.partial) > TOKEN_MAX:
                    self.partial, self.skipping, self.too_long = None, True, True
            if start == len(block):
                return
            if self.partial is not None:
                yield bytes(self.partial)
            self.partial, self.skipping = None, False
        buf = self.carry + block[start:] if start == 0 else block[start:]
        last = 0
        for match in TOKEN.finditer(buf):
            last = match.end()
            if last == len(buf):  # it may go on in the next block
                self.partial, self.carry = bytearray(match.group(1)), b""
                return
            yield match.group(1)
        self.carry = buf[max(len(buf) - len(ENCRYPTED) + 1, last):]

    def end(self) -> Iterator[bytes]:
        if self.partial is not None:
            yield bytes(self.partial)
            self.partial = None


# ---------------------------------------------------------------- reading files


class Unreadable(Exception):
    """A file the proof could not read, and why."""


def open_file(path: Path) -> int | None:
    """A read-only descriptor of ``path`` if it is a regular file; ``None`` when it does not exist or is not a
    regular file; :class:`Unreadable` when it is a link (never followed) or cannot be opened."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | getattr(os, "O_NOCTTY", 0))
    except FileNotFoundError:
        return None
    except OSError as exc:
        if os.path.islink(path):
            raise Unreadable("a symbolic link (not followed)") from None
        raise Unreadable((exc.strerror or type(exc).__name__).lower()) from None
    try:
        mode = os.fstat(fd).st_mode
    except OSError as exc:
        os.close(fd)
        raise Unreadable((exc.strerror or type(exc).__name__).lower()) from None
    if not stat.S_ISREG(mode):
        os.close(fd)
        return None
    return fd


def blocks(fd: int) -> Iterator[bytes]:
    """The file's bytes, block by block, from its start (``pread``: the descriptor's offset is not used)."""
    offset = 0
    while True:
        block = os.pread(fd, CHUNK, offset)
        if not block:
            return
        offset += len(block)
        yield block


def sqlite_encoding(path: Path) -> str | None:
    """The text encoding an SQLite file (or the database of a ``-wal``, ``-shm`` or ``-journal``) keeps, read from
    the database header: ``None`` for UTF-8 or when it is not a database. Opening it with SQLite could create a
    ``-shm`` or take a lock; reading 60 bytes changes nothing."""
    name = path.name
    for suffix in SIDE_SUFFIXES:
        if name.endswith(suffix):
            path = path.with_name(name[:-len(suffix)])
            break
    try:
        fd = open_file(path)
    except Unreadable:
        return None
    if fd is None:
        return None
    try:
        head = os.pread(fd, 60, 0)
    except OSError:
        return None
    finally:
        os.close(fd)
    if len(head) < 60 or not head.startswith(SQLITE_MAGIC):
        return None
    return UTF16.get(int.from_bytes(head[56:60], "big"))


@dataclass
class FileScan:
    """What one file held: the hits (offset, label), whether it holds encrypted values, and why the encrypted
    ones could not be checked (no key, a wrong key, a value too long)."""

    hits: list[tuple[int, str]] = field(default_factory=list)
    encrypted: bool = False
    sealed: str | None = None


def scan_stream(chunks: Iterable[bytes], texts: Texts, *, utf16: bool | None, short_ids: bool,
                cipher: Any = None, where: str = "a file") -> FileScan:
    """Needles in a stream of blocks; encrypted values decrypted with ``cipher`` (a
    ``Key.cipher()`` of :class:`praisonmem.core.sessions.Key`) and searched as text. ``utf16=None``: UTF-16 forms too
    when the stream starts with the header of a UTF-16 database."""
    chunks = iter(chunks)
    first = next(chunks, b"")
    if utf16 is None:
        utf16 = first.startswith(SQLITE_MAGIC) and int.from_bytes(first[56:60], "big") in UTF16
    chunks = itertools.chain((first,), chunks)
    scanner = Scanner(needles_of(texts, utf16=utf16, short_ids=short_ids), watch_tokens=True)
    tokens = Tokens() if cipher is not None else None
    result = FileScan()
    wanted = texts.strings() if short_ids else [t for t, _ in texts.texts]
    labels = dict((*texts.texts, *texts.short_ids))
    for block in chunks:
        scanner.feed(block)
        if tokens is not None:
            for token in tokens.feed(block):
                _decrypted(token, cipher, wanted, labels, result, where)
    if tokens is not None:
        for token in tokens.end():
            _decrypted(token, cipher, wanted, labels, result, where)
        if tokens.too_long:
            result.sealed = f"an encrypted value over {TOKEN_MAX >> 20} MiB was not decrypted"
    result.encrypted = scanner.encrypted
    if scanner.encrypted and cipher is None:
        result.sealed = "holds encrypted session values; give the session key (PRAISONAI_SESSION_KEY or " \
                        "--key-file) to check them"
    result.hits = scanner.found() + result.hits
    return result


def _decrypted(token: bytes, cipher: Any, wanted: list[str], labels: dict[str, str], result: FileScan,
               where: str) -> None:
    try:
        text = cipher.decrypt(ENCRYPTED.decode() + token.decode("ascii"), where)
    except PraisonMemError as exc:
        result.sealed = exc.message
        return
    for needle in wanted:
        if any(piece in text for piece in pieces(needle)):
            result.hits.append((-1, labels[needle]))  # -1: inside an encrypted value
            return


def scan_file(path: Path, texts: Texts, *, short_ids: bool, cipher: Any = None) -> FileScan | None:
    """One file's scan; ``None`` when it does not exist or is not a regular file; :class:`Unreadable`."""
    utf16 = sqlite_encoding(path) is not None
    fd = open_file(path)
    if fd is None:
        return None
    try:
        return scan_stream(blocks(fd), texts, utf16=utf16, short_ids=short_ids, cipher=cipher, where=str(path))
    except OSError as exc:
        raise Unreadable((exc.strerror or type(exc).__name__).lower()) from None
    finally:
        os.close(fd)


def describe(path: str, hits: list[tuple[int, str]]) -> str:
    """Where the text was found, by the record's key (never the text itself)."""
    shown = []
    for offset, label in hits[:SHOWN]:
        where = f"offset {offset}" if offset >= 0 else "an encrypted value"
        what = label if label.startswith("the ") else f"the text of {label}"
        shown.append(f"{path}: {where} holds {what}")
    more = len(hits) - SHOWN
    return "; ".join(shown) + (f"; and {more} more" if more > 0 else "")


# ---------------------------------------------------------------- the proof


def cipher_of(key: Any) -> Any:
    """A cipher of the session key (``Key.cipher()``), or ``None`` without one."""
    if key is None:
        return None
    from praisonmem.core.sessions import Key

    if isinstance(key, Key):
        return key.cipher()
    secret = key.decode("ascii", "replace") if isinstance(key, (bytes, bytearray)) else str(key)
    return Key(secret.strip(), "the session key").cipher()


def prove(stores: Sequence[ForgetStore], plans: Sequence[StorePlan], subject: Subject, *,
          removed: Sequence[int] | None = None, roots: Sequence[Path] = (), exclude: Collection[Path] = (),
          key: Any = None) -> list[Verdict]:
    """The verdicts of every store (in order), of each file the sweep found residue in, and of the sweep."""
    if len(stores) != len(plans) or removed is not None and len(removed) != len(plans):
        raise ValueError("prove takes one plan (and one count removed) per store")
    texts = texts_of(subject, plans)
    cipher = cipher_of(key)
    verdicts: list[Verdict] = []
    known: set[str] = set()
    for index, (store, plan) in enumerate(zip(stores, plans)):
        count = len(plan.erasures) if removed is None else removed[index]
        verdict, files = _prove_store(store, plan, subject, texts, cipher, count)
        verdicts.append(verdict)
        known.update(files)
    dirs = [p.parent for plan in plans for p in plan.files]
    verdicts += sweep([*roots, *dirs], texts, {_real_parent(p) for p in (*known, *exclude)}, cipher)
    return verdicts


def _real_parent(path: str | Path) -> str:
    """``path`` as the sweep meets it (its directories resolved, as the walk's roots are); its last part is kept,
    so a store's file that is a link does not hide the file it points to from the sweep."""
    head, tail = os.path.split(os.path.abspath(path))
    return os.path.join(os.path.realpath(head), tail)


def _prove_store(store: ForgetStore, plan: StorePlan, subject: Subject, texts: Texts, cipher: Any,
                 count: int) -> tuple[Verdict, set[str]]:
    def verdict(verified: Verified, detail: str | None = None) -> Verdict:
        return Verdict(plan.store, plan.location, count, verified, detail)

    files = {os.path.abspath(p) for p in plan.files}
    if plan.unreachable is not None:
        return verdict(Verified.unverified, plan.unreachable), files
    try:
        again = store.plan(subject)
    except (PraisonMemError, OSError) as exc:
        reason = exc.message if isinstance(exc, PraisonMemError) else (exc.strerror or type(exc).__name__).lower()
        return verdict(Verified.unverified, f"could not read it again: {reason}"), files
    files |= {os.path.abspath(p) for p in again.files}
    if again.unreachable is not None:
        return verdict(Verified.unverified, f"could not read it again: {again.unreachable}"), files
    problems: list[str] = []
    if again.erasures:
        keys = ", ".join(e.key for e in again.erasures[:SHOWN])
        more = len(again.erasures) - SHOWN
        problems.append(f"still holds {plural(len(again.erasures), 'record')}: {keys}" + (f" and {more} more" if more > 0
                                                                                  else ""))
    answered, query_problem = _query(store, texts)
    if answered:
        problems.append("found again: " + "; ".join(answered))
    if not plan.files and not again.files:  # a server: its answer is the proof
        if problems:
            return verdict(Verified.residue, "; ".join(problems)), files
        if answered is None:
            return verdict(Verified.unverified, query_problem or "the store cannot tell whether the text is gone"), \
                files
        return verdict(Verified.absent), files
    unverified: list[str] = []
    files |= _inside_dirs(files, unverified)
    for path in sorted(files):
        try:
            scan = scan_file(Path(path), texts, short_ids=True, cipher=cipher)
        except Unreadable as exc:
            unverified.append(f"{path}: {exc}")
            continue
        if scan is None:
            continue
        if scan.hits:
            problems.append(describe(path, scan.hits))
        if scan.sealed:
            unverified.append(f"{path}: {scan.sealed}")
    if problems:
        return verdict(Verified.residue, "; ".join(problems + unverified)), files
    if unverified:
        return verdict(Verified.unverified, "; ".join(unverified)), files
    return verdict(Verified.absent), files


def _inside_dirs(files: set[str], unverified: list[str]) -> set[str]:
    """The regular files under each of ``files`` that is a directory (a Chroma directory, a FileMemory user's):
    a store that names its directory has every file in it scanned (no link followed)."""
    dirs = [p for p in files if os.path.isdir(p) and not os.path.islink(p)]
    if not dirs:
        return set()
    swept = Swept()
    found = set(walk(sorted(dirs), set(), set(), swept))
    unverified += [f"could not read {path}" for path in swept.unreadable]
    return found


def _query(store: ForgetStore, texts: Texts) -> tuple[list[str] | None, str | None]:
    """The store's own answer (``residue``): what it still finds, ``None`` when it cannot tell (and why)."""
    try:
        return store.residue(texts.strings()), None
    except (PraisonMemError, OSError) as exc:
        reason = exc.message if isinstance(exc, PraisonMemError) else (exc.strerror or type(exc).__name__).lower()
        return None, f"could not query it: {reason}"


# ---------------------------------------------------------------- the sweep


@dataclass
class Swept:
    """What the sweep saw: files scanned, the directories and files it skipped and why."""

    scanned: int = 0
    skipped: dict[tuple[str, str, str], int] = field(default_factory=dict)  # (what, many, why) -> how many
    unreadable: list[str] = field(default_factory=list)
    sealed: list[str] = field(default_factory=list)

    def skip(self, what: str, why: str = "", *, many: str | None = None) -> None:
        """One more ``what`` (``many``: its plural, when adding an s is wrong) not scanned, ``why``."""
        key = (what, many or what + "s", why)
        self.skipped[key] = self.skipped.get(key, 0) + 1


def sweep(roots: Iterable[Path], texts: Texts, known: set[str], cipher: Any) -> list[Verdict]:
    """Every regular file under ``roots`` that is no store's (``known``) scanned for the records' texts: one
    verdict per file holding any (a copy praisonmem cannot erase), then the sweep's own."""
    walked = tops(roots)
    seen: set[tuple[int, int]] = set()  # a hard link to a file already scanned (or a store's) is not scanned again
    for path in known:
        try:
            st = os.stat(path, follow_symlinks=False)
        except OSError:
            continue
        seen.add((st.st_dev, st.st_ino))
    swept = Swept()
    verdicts: list[Verdict] = []
    for path in walk(walked, known, seen, swept):
        try:
            scan = scan_file(Path(path), texts, short_ids=False, cipher=cipher)
        except Unreadable as exc:
            swept.unreadable.append(f"{path} ({exc})")
            continue
        if scan is None:
            swept.skip("not a regular file")
            continue
        swept.scanned += 1
        if scan.hits:
            verdicts.append(Verdict("copy", path, 0, Verified.residue,
                                    "a copy praisonmem cannot erase: " + describe(path, scan.hits)))
        elif scan.sealed and scan.encrypted:
            swept.sealed.append(path)
    where = ", ".join(str(t) for t in walked) or "nothing"
    parts = [f"{plural(swept.scanned, 'file')} under {where} that are no store's"]
    if swept.skipped:
        parts.append("skipped " + ", ".join(plural(n, one, many) + (f" {why}" if why else "")
                                            for (one, many, why), n in sorted(swept.skipped.items())))
    if swept.unreadable:
        parts.append(f"could not read {len(swept.unreadable)}: " + ", ".join(swept.unreadable[:SHOWN]))
    if swept.sealed:
        parts.append(f"{len(swept.sealed)} hold encrypted values not checked without the session key: "
                     + ", ".join(swept.sealed[:SHOWN]))
    verdicts.sort(key=lambda v: v.path)
    verified = Verified.residue if verdicts else Verified.absent
    verdicts.append(Verdict("sweep", where, 0, verified, "; ".join(parts)))
    return verdicts


def tops(roots: Iterable[Path]) -> list[str]:
    """The roots that are directories, none inside another (walked once)."""
    found = sorted({os.path.realpath(r) for r in roots if os.path.isdir(r)})
    tops: list[str] = []
    for root in found:
        if not any(root == t or root.startswith(t.rstrip(os.sep) + os.sep) for t in tops):
            tops.append(root)
    return tops


def walk(tops: list[str], known: set[str], seen: set[tuple[int, int]], swept: Swept) -> Iterator[str]:
    """The regular files under ``tops``: no link followed, what locate skips skipped (and counted)."""
    for top in tops:
        stack = [(top, 0)]
        while stack:
            here, depth = stack.pop()
            try:
                with os.scandir(here) as listing:
                    entries = sorted(listing, key=lambda e: e.name)
            except OSError as exc:
                swept.unreadable.append(f"{here}/ ({(exc.strerror or type(exc).__name__).lower()})")
                continue
            if here != top and any(e.name == VENV_MARK for e in entries):
                swept.skip("virtualenv")
                continue
            for entry in entries:
                if entry.path in known:  # a store's file (scanned as the store's) or one left alone
                    continue
                try:
                    if entry.is_symlink():
                        swept.skip("symbolic link", "(not followed)")
                    elif entry.is_dir(follow_symlinks=False):
                        if entry.name in SKIP_DIRS:
                            swept.skip(f"{entry.name} directory", many=f"{entry.name} directories")
                        elif depth >= MAX_DEPTH:
                            swept.skip("directory", f"deeper than {MAX_DEPTH} levels", many="directories")
                        else:
                            stack.append((entry.path, depth + 1))
                    elif not entry.is_file(follow_symlinks=False):
                        swept.skip("FIFO, socket or device", many="FIFOs, sockets or devices")
                    else:
                        st = entry.stat(follow_symlinks=False)
                        if (st.st_dev, st.st_ino) not in seen:  # a hard link is one file
                            seen.add((st.st_dev, st.st_ino))
                            yield entry.path
                except OSError as exc:
                    swept.unreadable.append(f"{entry.path} ({(exc.strerror or type(exc).__name__).lower()})")
