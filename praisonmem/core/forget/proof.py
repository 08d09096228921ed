"""The proof of a forget: nothing of the subject is found again, neither by the stores nor in their bytes.

:func:`prove` is called after every store erased its part::

    prove(stores, plans, subject, *, removed=None, roots=(), exclude=(), key=None) -> list[Verdict]

``stores[i]`` is the :class:`~.model.ForgetStore` whose plan (made *before* the erase) is ``plans[i]``;
``removed[i]`` is what its ``erase`` returned (default: the plan's number of erasures); ``roots`` are the
directories of the sweep (the home, the current directory's ``.praisonai``, each ``--in DIR``; the
directories of the stores' files are added); ``exclude`` are files the sweep leaves alone because
praisonmem wrote them for this forget and they hold the subject's identifier by design (the journal);
``key`` is the session key (``PRAISONAI_SESSION_KEY``/``--key-file``: bytes, text or a
:class:`praisonmem.core.sessions.crypto.Key`).

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
longest needle, so memory stays bounded and a needle split across two blocks is found. Nothing is
written, no lock is taken, no mtime changes (a database's encoding is read from its header, not by
opening it with SQLite, which could create a ``-shm`` or take a lock). The sweep skips what ``locate``
skips (``.git``, ``node_modules``, ``__pycache__``, a virtualenv) and says so.

A detail names the file, the byte offset and the erased record's key whose text matched, never the text.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any

from praisonmem.core.forget.model import ForgetStore, StorePlan, Subject, Verdict


def prove(stores: Sequence[ForgetStore], plans: Sequence[StorePlan], subject: Subject, *,
          removed: Sequence[int] | None = None, roots: Sequence[Path] = (), exclude: Collection[Path] = (),
          key: Any = None) -> list[Verdict]:
    """The verdicts of every store (in order), of each file the sweep found residue in, and of the sweep."""
    raise NotImplementedError
