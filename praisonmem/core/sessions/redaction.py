"""Secrets in sessions: ``session scan``, ``session export --redact`` and ``session redact``.

The rules and the walk are :mod:`praisonmem.core.secrets`'; this module applies them to the stores (the scan is
:mod:`.stores.secretscan`, as it reads the JSON directory's own files).
``session redact`` rewrites each session in place through its store's own transaction (the JSON files'
flock and atomic replace, ``sessions.db``'s ``BEGIN IMMEDIATE``), re-reading it under the lock and
redacting what is there then, so a turn an agent added meanwhile is neither lost nor left unredacted.
The session's turns waiting in the spill dir are redacted in the same transaction, and in ``sessions.db``
the old text is then scrubbed from free pages and ``-wal`` (as a delete does; a rerun after a redaction
killed before that scrub, which finds no secret left, finishes it). Every other byte of a
document stays: key order, unknown keys, encrypted values (``praisonai:enc:v1:…``, opaque here), ``updated_at``
(a redaction is not a turn: listings keep their order).
"""

from __future__ import annotations

from typing import Any

from praisonmem.core import secrets
from praisonmem.core.errors import PraisonMemError
from praisonmem.core.io import jsonfile
from praisonmem.core.paths import Paths
from praisonmem.core.result import Action, Outcome, Plan, Progress
from praisonmem.core.sessions.documents import is_encrypted
from praisonmem.core.sessions.ops import file_name, resolve_all, question_name, session_change, vanished, with_notes
from praisonmem.core.sessions.stores import SessionStore
from praisonmem.core.sessions.stores.locate import open_store
from praisonmem.core.io.safetext import plural

SecretLevel = secrets.Level


def scan_secrets(paths: Paths, names: list[str] | None = None, *, level: str = "standard",
                 store: str | None = None, report: Any = None) -> Any:
    """``session scan``: the secrets in the named sessions (none: every session of every store) and their
    spilled turns, a :class:`praisonmem.core.secrets.ScanReport` (``report``'s, when given: ``check --secrets``
    gathers every home's in one)."""
    from praisonmem.core.sessions.stores.secretscan import scan_sessions

    return scan_sessions(paths, names or None, level=secrets.level_of(level), store=store, report=report)


def check_level(level: str) -> str:
    """The rule set's name, or a usage error."""
    return secrets.level_of(level).value


# The ids that name sessions and link them (the file and row a session is stored under, its gateway session,
# its fork tree): redacting one would cut the session off from its own name. 'session scan' still reports a
# secret in one; 'session rename' changes it.
IDENTITY = frozenset({"session_id", "gateway_session_id", "parent_id", "children_ids"})


def redact_document(doc: dict[str, Any], level: str) -> tuple[dict[str, Any], int]:
    """A copy of ``doc`` with every secret replaced by ``[REDACTED:<kind>]`` (the :data:`IDENTITY` ids kept), and
    how many were."""
    return secrets.redacted(doc, level, keep=IDENTITY, opaque=is_encrypted)


def plan_redact(paths: Paths, names: list[str], *, level: str = "standard", store: str | None = None,
                timeout: float = jsonfile.LOCK_TIMEOUT) -> Plan:
    """Rewrite the named sessions with their secrets redacted (every name resolved first); sessions with
    nothing to redact are reported and left alone."""
    level = secrets.level_of(level).value
    home = open_store(paths, store)
    targets = resolve_all(home, names)
    counts = {}
    for ref in targets:
        doc = home.read(ref)  # one that does not parse stops the command before anything is written
        sid = home.session_id(ref, doc)
        in_spill = sum(secrets.redacted(m, level, keep=IDENTITY, opaque=is_encrypted)[1]
                       for m in home.spilled(ref, sid))
        counts[ref] = (sid, redact_document(doc, level)[1], in_spill)
    todo = [ref for ref, (_, n, spill) in counts.items() if n or spill]
    listed = (", ".join(secrets.masked(question_name(home, r), level) for r in todo[:5])
              + (" …" if len(todo) > 5 else ""))
    question = f"Rewrite {plural(len(todo), 'session')} with their secrets redacted ({listed})?" if todo else None
    return Plan(question, lambda dry_run, progress: redact(home, targets, counts, level=level, dry_run=dry_run,
                                                           timeout=timeout, progress=progress))


def redact(home: SessionStore, targets: list[Any], counts: dict[Any, tuple[str, int, int]], *, level: str,
           dry_run: bool, timeout: float, progress: Progress = None) -> Outcome:
    changes = []
    for ref in targets:
        sid, found, in_spill = counts[ref]
        # a secret in the id itself (an e-mail address) is not said again in the record
        change = session_change(Action.redacted, secrets.masked(sid, level), ref, dry_run=dry_run,
                                where=secrets.masked(file_name(ref), level),
                                detail=_detail(found, in_spill), redacted=found, redacted_spilled=in_spill)
        change.fields["file"] = secrets.masked(change.fields["file"], level)
        if not (found or in_spill):
            change.action, change.detail = Action.skipped, "no secrets found"
        elif not dry_run:
            try:
                _rewrite(home, ref, level, change, timeout)
            except PraisonMemError as exc:
                change.fail(exc)
        changes.append(change)
        if progress:
            progress(len(changes), len(targets))
    notes = [] if dry_run else _finish_interrupted(home, timeout)
    return Outcome(changes, notes)


def _finish_interrupted(home: SessionStore, timeout: float) -> list[str]:
    """A rerun after a redaction killed past its commit finds no secrets left, yet ``sessions.db``'s old text
    may still be in its free pages or ``-wal``: that scrub is finished here (a no-op when there is none)."""
    from praisonmem.core.sessions.stores.sqlite_transcript import finish_interrupted

    try:
        return finish_interrupted(home, timeout)
    except PraisonMemError as exc:
        return [f"an interrupted scrub of sessions.db could not be finished: {exc.message}"]


def _rewrite(home: SessionStore, ref: Any, level: str, change: Any, timeout: float) -> None:
    with home.transaction([ref], timeout) as tx:
        current = tx.read(ref)
        if current is None:
            raise vanished(ref)
        clean, found = redact_document(current, level)
        spilled = 0

        def clean_record(record: dict[str, Any]) -> dict[str, Any]:
            nonlocal spilled
            new, n = secrets.redacted(record, level, keep=IDENTITY, opaque=is_encrypted)
            spilled += n
            return new

        tx.rewrite_spill(home.session_id(ref, current), clean_record)
        if found:
            tx.write(ref, clean)
            tx.forget_replaced()
    change.fields.update(redacted=found, redacted_spilled=spilled)
    change.detail = change.fields["detail"] = _detail(found, spilled)
    with_notes(change, tx.notes)


def _detail(found: int, in_spill: int) -> str:
    return f"{plural(found, 'secret')}" + (f", {in_spill} in spilled turns" if in_spill else "")
