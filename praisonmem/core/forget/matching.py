"""What a record of the subject is, for every store of :mod:`.memory`, :mod:`.upsonic` and :mod:`.cache`: where
the libraries record a user, a session or an agent in a record's metadata, which of its strings the proof looks
for, whether ``--before`` takes it, and the files of an SQLite store (with the scrub an interrupted write owes)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from praisonmem.core.forget.model import MIN_NEEDLE, Action, Erasure, Subject, SubjectKind
from praisonmem.core.io.timeutil import epoch_of

SQLITE_SIDECARS = ("-wal", "-shm", "-journal")
SCRUB = "scrub"  # the key of the erasure that finishes an interrupted write's scrub of an SQLite file


def strings(value: Any) -> list[str]:
    """Every string value inside a JSON value (keys are the schema's, the same in everybody's records)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in strings(v)]
    return []


def needles(texts: Iterable[Any], *ids: Any) -> tuple[str, ...]:
    """The texts of :data:`~praisonmem.core.forget.model.MIN_NEEDLE` characters or more, then the identifiers
    (whatever their length: the proof decides what it can look for), each once, in order."""
    found = [t for t in texts if isinstance(t, str) and len(t) >= MIN_NEEDLE]
    return tuple(dict.fromkeys(found + [str(i) for i in ids if i not in (None, "")]))


def older(subject: Subject, stamp: Any) -> bool:
    """Inside ``--before`` (always, without it); a record the store does not date is outside it."""
    if subject.before is None:
        return True
    when = epoch_of(stamp)
    return when is not None and when < subject.before.timestamp()


def names_subject(subject: Subject, metadata: Any) -> bool:
    """Whether a record's metadata names the subject, where the libraries record it."""
    if not isinstance(metadata, dict):
        return False
    keys = {SubjectKind.user: ("user_id",), SubjectKind.session: ("session_id",),
            SubjectKind.agent: ("agent_id", "agent_name")}[subject.kind]
    return any(metadata.get(k) is not None and str(metadata.get(k)) == subject.value for k in keys)


def sqlite_files(db: Path) -> list[Path]:
    return [db] + [Path(f"{db}{tail}") for tail in SQLITE_SIDECARS if os.path.exists(f"{db}{tail}")]


def scrubs(db: Path) -> list[Erasure]:
    """An erasure that rolls back and vacuums an SQLite file a write was killed in (a hot journal, or ``-wal``
    frames nobody checkpointed): the pages from before its delete, deleted text among them, are still there even
    when no row of the subject is left to plan."""
    from praisonmem.core.io.sqlite import hot_journal, residue

    if hot_journal(db) or residue(db, free_pages=False):
        return [Erasure(SCRUB, f"{db.name}: old page versions an interrupted write left", Action.rewrite)]
    return []

