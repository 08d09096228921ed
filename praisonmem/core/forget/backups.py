"""The subject in praisonmem's backups: which archives still hold them, and rewriting those without them.

::

    holding(subject, plans, backup_dirs, *, roots=(), key=None) -> list[Held]
    rewrite(held, subject, plans, *, stores_for) -> Rewritten

:func:`holding` looks at every praisonmem backup: the archives ``backup list`` lists in each of
``backup_dirs`` (the configured one first), and every ``*.tar.gz`` under ``roots`` whose manifest says it
is a praisonmem backup. An archive holds the subject when a member is one of the subject's files (its
path names the subject: ``sessions/<session id>.json``, ``memory/<user>/…``) or a member's bytes contain
one of the needles :mod:`.proof` looks for (the erased records' texts and the subject's identifier, in
every form). Members are decompressed and streamed, with the checks ``backup verify`` makes of an
untrusted archive (:mod:`praisonmem.core.backup.archive`: regular files in the layout only, sizes and
the total bounded by the manifest, bounded headers), so a crafted archive neither escapes nor fills
memory. A :class:`Held` names the archive and each member with the key of the record that matched (never
the text); an archive that cannot be read is a ``Held`` with ``problem`` set (it could not be checked).

:func:`rewrite` (``forget --include-backups``) writes a new archive without the subject: the archive is
checked whole and extracted into a private temporary directory laid out as ``backup restore --to DIR``
lays it out (``DIR/home/…``, ``DIR/memory/…``, ``DIR/project/…``); ``stores_for(DIR)`` returns the
:class:`~.model.ForgetStore` objects of that tree (run.py builds them with the same adapter modules the
forget used, over a ``Where`` of ``DIR``); each plans and erases there through its own protocol. Then
the new archive is written member by member in the old order: a member the erase removed is dropped, a
member it changed gets its new bytes (same name, mode and mtime), every other member is copied byte for
byte with its header; the manifest keeps every field and gets the new sizes and digests. The new archive
is verified with ``backup verify``'s code and found free of the needles, then renamed over the old one
(same mode), and the old archive's bytes are overwritten through a descriptor held open across the rename,
so no copy is left behind in the backup directory. An archive that fails any step is left as it was.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from praisonmem.core.forget.model import ForgetStore, StorePlan, Subject


@dataclass(frozen=True)
class HeldMember:
    """One member of an archive that holds the subject: ``why`` names the record key or the path rule."""

    name: str
    why: str


@dataclass
class Held:
    """One archive that holds the subject (``members``), or that could not be checked (``problem``)."""

    archive: Path
    members: list[HeldMember] = field(default_factory=list)
    problem: str | None = None


@dataclass
class Rewritten:
    """One archive rewritten: the members dropped and rewritten; ``problem`` when it was left as it was."""

    archive: Path
    dropped: list[str] = field(default_factory=list)
    rewritten: list[str] = field(default_factory=list)
    problem: str | None = None


def holding(subject: Subject, plans: Sequence[StorePlan], backup_dirs: Sequence[Path], *,
            roots: Sequence[Path] = (), key: Any = None) -> list[Held]:
    """Every praisonmem backup that still holds the subject, or could not be checked."""
    raise NotImplementedError


def rewrite(held: Held, subject: Subject, plans: Sequence[StorePlan], *,
            stores_for: Callable[[Path], Sequence[ForgetStore]]) -> Rewritten:
    """``held``'s archive rewritten without the subject, verified, then put in the old one's place."""
    raise NotImplementedError
