"""What the forget adapters share when they read a store: whether a record is the subject's (its own fields or
its metadata, where the libraries record a user, a session or an agent), whether ``--before`` takes it, which of
its texts the proof may look for afterwards, and the files of an SQLite store (with the scrub an interrupted write
owes)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from praisonmem.core.errors import NotFound, PraisonMemError
from praisonmem.core.forget.model import MIN_NEEDLE, Action, Erasure, StorePlan, Subject, SubjectKind
from praisonmem.core.io.timeutil import epoch_of

# the agent's name or id in a record's metadata, as the libraries' callers put it there
AGENT_KEYS = ("agent_id", "agent_name", "agent")
SQLITE_SIDECARS = ("-wal", "-shm", "-journal")
SCRUB = "scrub"  # the key of the erasure that finishes an interrupted write's scrub of an SQLite file


def older(subject: Subject, when: Any) -> bool | None:
    """Whether a record of time ``when`` (seconds, or an ISO 8601 text: naive is UTC, as the libraries write it)
    falls under ``--before``: True without one; None when the record has no time (it is left alone, and the plan
    says so where it counts them)."""
    if subject.before is None:
        return True
    seconds = _seconds(when)
    if seconds is None:
        return None
    return seconds < subject.before.timestamp()


def _seconds(value: Any) -> float | None:
    seconds = epoch_of(value)
    if seconds is None and value is not None and not isinstance(value, (str, bool)):
        try:
            return float(value)  # a database driver's Decimal
        except (TypeError, ValueError):
            return None
    return seconds


def distinctive(texts: Iterable[Any], kept: Sequence[str] = ()) -> tuple[str, ...]:
    """The texts of an erased record the proof looks for: strings of :data:`MIN_NEEDLE` characters or more, each
    once, leaving out any that a record of somebody else also holds (finding those would prove nothing)."""
    out: list[str] = []
    for text in texts:
        if isinstance(text, str) and len(text) >= MIN_NEEDLE and text not in out \
                and not any(text in other for other in kept):
            out.append(text)
    return tuple(out)


def contents(value: Any) -> list[str]:
    """The message texts inside a session's JSON (every ``content``/``text`` string, at any depth)."""
    found: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for key, inner in node.items():
                if key in ("content", "text") and isinstance(inner, str):
                    found.append(inner)
                else:
                    walk(inner)
        elif isinstance(node, list):
            for inner in node:
                walk(inner)
    walk(value)
    return found


def strings(value: Any) -> list[str]:
    """Every string value inside a JSON value (keys left out: they are the schema's, the same in everybody's
    records)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for inner in value.values() for s in strings(inner)]
    if isinstance(value, list):
        return [s for inner in value for s in strings(inner)]
    return []


def variants(needles: Sequence[str]) -> list[str]:
    """Each needle as it is and as a JSON string's body (escaped ASCII, and UTF-8): how a JSON column or a JSON
    value holds it."""
    out: list[str] = []
    for needle in needles:
        for form in (needle, json.dumps(needle)[1:-1], json.dumps(needle, ensure_ascii=False)[1:-1]):
            if form and form not in out:
                out.append(form)
    return out


def needles(texts: Iterable[Any], *ids: Any) -> tuple[str, ...]:
    """The texts of :data:`~praisonmem.core.forget.model.MIN_NEEDLE` characters or more, then the identifiers
    (whatever their length: the proof decides what it can look for), each once, in order."""
    found = [t for t in texts if isinstance(t, str) and len(t) >= MIN_NEEDLE]
    return tuple(dict.fromkeys(found + [str(i) for i in ids if i not in (None, "")]))


def names_subject(record: Any, subject: Subject) -> bool:
    """A record's own fields (or its ``metadata``) name the subject: ``user_id``, ``session_id`` or the agent."""
    if not isinstance(record, dict):
        return False
    keys = {SubjectKind.user: ("user_id",), SubjectKind.session: ("session_id",),
            SubjectKind.agent: AGENT_KEYS}[subject.kind]
    for holder in (record, record.get("metadata")):
        if isinstance(holder, dict) and any(holder.get(k) == subject.value for k in keys):
            return True
    return False


def guarded(plan: StorePlan, read: Callable[[], None]) -> StorePlan:
    """Run a plan's reads: a store that is not there leaves the plan empty; any other failure makes it
    ``unreachable`` with the reason (one line, the password masked by the module that raised it)."""
    try:
        read()
    except NotFound as exc:
        plan.erasures = []
        plan.notes.append(f"nothing of this kind here ({exc})")
    except PraisonMemError as exc:
        plan.erasures = []
        plan.unreachable = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return plan


def before_note(plan: StorePlan, subject: Subject, undated: int, what: str) -> None:
    if undated and subject.before is not None:
        plan.notes.append(f"{undated} {what} without a time left alone (--before cannot place them)")


def metadata_names(subject: Subject, metadata: Any) -> bool:
    """Whether a record's metadata alone names the subject, where praisonaiagents and Upsonic record it (its value
    compared as text: a number stored for an id names the same subject)."""
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
