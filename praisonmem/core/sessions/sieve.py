"""A byte pre-check for ``session search``: a session file whose bytes show it can hold no hit is still read,
parsed and checked (a file that does not parse is reported all the same), but its messages are not looked at.

:class:`Sieve` decides it from the query's words; :func:`sieve_for` gives none for words a JSON escape could
spell, which the file's bytes cannot rule out.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from praisonmem.core.sessions.documents import ENCRYPTED_PREFIX

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

    def rules_out(self, raw: bytes) -> bool:
        """No hit can be in a session file of these bytes (a fold's ``rules_out``)."""
        return not self.may_hit(raw)

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


def sieve_for(terms: list[str]) -> Sieve | None:
    """The :class:`Sieve` for a query's words, ``None`` when a word could be spelt by an escape."""
    if not terms or any(_ESCAPED.intersection(t) or _SIGMAS.intersection(t) for t in terms):
        return None
    ascii = all(t.isascii() for t in terms)
    words = tuple(t.encode("utf-8") for t in terms)
    if not ascii:
        return Sieve(words, False)
    return Sieve(words, True, ascii_lowering(), tuple(rarest(w) for w in words))
