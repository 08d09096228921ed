"""``upsonic migrate``: every session and user-memory row of one Upsonic store copied into another (SQLite file,
PostgreSQL, JSONStorage directory, RedisStorage), each field's value as it is, written as the target's library
writes it.

The source is read in full first, then the target: a row already there with the same values (compared as
canonical JSON, so ``1``, ``1.0`` and ``true`` differ while key order does not) is left alone, a row that is
not there is written, and a row there with other values is a conflict: nothing is written (exit 4) unless
``overwrite``. The rows are written in one write of the target (one transaction; one ``MULTI``/``EXEC``; for
a JSONStorage directory, each table file replaced atomically), so a migrate that is killed leaves either
nothing or rows that a rerun finds identical and skips: a rerun gives the uninterrupted result. ``verify``
reads both stores back afterwards and reports every row that is missing from the target or differs (exit 1).
"""

from __future__ import annotations

import json
import time
from typing import Any

from praisonmem.core.errors import EXIT_PROBLEMS, NotFound, TargetExists, UsageError
from praisonmem.core.result import Action, Change, Outcome, Plan
from praisonmem.core.upsonic.schema import SESSION_COLUMNS, USER_COLUMNS
from praisonmem.core.upsonic.store import Store, Transaction
from praisonmem.core.io.safetext import plural

KINDS = (("users", "user_id", USER_COLUMNS, "user"), ("sessions", "session_id", SESSION_COLUMNS, "session"))
SHOWN = 5  # conflicting ids named in the message


def canonical(value: Any) -> str:
    """A value's identity across stores: PostgreSQL's JSONB reorders keys, nothing changes a value's type."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def rows_of(store: Store, kind: str, *, missing_ok: bool) -> dict[str, dict[str, Any]]:
    """Every row of ``kind`` by id, every column decoded; none when the store is not created yet (``missing_ok``)."""
    key = "session_id" if kind == "sessions" else "user_id"
    columns = SESSION_COLUMNS if kind == "sessions" else USER_COLUMNS
    try:
        if missing_ok and not store.known_ids(kind):  # a new store, or an empty database (a killed first migrate's)
            return {}
        found = store.all_sessions() if kind == "sessions" else store.users()
    except NotFound:
        if not missing_ok:
            raise
        return {}
    return {r[key]: {c: r.get(c) for c in columns} for r in found}


def differences(mine: dict[str, Any], theirs: dict[str, Any], columns: tuple[str, ...]) -> list[str]:
    return [c for c in columns if canonical(mine.get(c)) != canonical(theirs.get(c))]


def _same_store(source: Store, target: Store) -> bool:
    return type(source.backend) is type(target.backend) and source.label == target.label and \
        getattr(source.backend, "prefix", None) == getattr(target.backend, "prefix", None) and \
        getattr(source.backend, "schema", None) == getattr(target.backend, "schema", None)


def plan_migrate(source: Store, target: Store, *, overwrite: bool = False, verify: bool = False,
                 dry_run: bool = False) -> Plan:
    """``upsonic migrate``: both stores read and compared now (a conflict without ``overwrite`` is refused here,
    before anything is written); replacing the target's differing rows is asked first."""
    if _same_store(source, target):
        raise UsageError(f"--from and --to are the same store ({source.label})")
    wanted = {kind: rows_of(source, kind, missing_ok=False) for kind, *_ in KINDS}
    if not dry_run:
        target.recover()
    present = {kind: rows_of(target, kind, missing_ok=True) for kind, *_ in KINDS}
    planned: list[tuple[Action, str, str, str | None]] = []
    writes: list[tuple[str, dict[str, Any], bool]] = []  # kind, row, whether the target had the id
    clash: list[str] = []
    for kind, _, columns, noun in KINDS:
        for row_id, row in wanted[kind].items():
            there = present[kind].get(row_id)
            if there is None:
                writes.append((kind, row, False))
                planned.append((Action.inserted, noun, row_id, None))
            elif not differences(row, there, columns):
                planned.append((Action.skipped, noun, row_id, "identical in the target"))
            else:
                clash.append(f"{noun} {row_id}")
                writes.append((kind, row, True))
                planned.append((Action.updated, noun, row_id, "differs in " + ", ".join(differences(row, there,
                                                                                                   columns))))
    if clash and not overwrite:
        more = f" and {len(clash) - SHOWN} more" if len(clash) > SHOWN else ""
        raise TargetExists(f"{target.label} already holds {plural(len(clash), 'other record')} with the same id "
                           f"({', '.join(clash[:SHOWN])}{more}); nothing written (--overwrite replaces them)")

    def run(dry: bool, progress: Any) -> Outcome:
        if writes and not dry:
            _write(target, writes, overwrite)
        changes = [_change(action, noun, row_id, dry, detail) for action, noun, row_id, detail in planned]
        return Outcome(changes + (check(source, target) if verify else []))

    question = f"Replace {plural(len(clash), 'record')} in {target.label} that differ from the source?" if clash else None
    return Plan(question, run)


def migrate(source: Store, target: Store, *, overwrite: bool = False, dry_run: bool = False,
            verify: bool = False) -> Outcome:
    """Copy every row of ``source`` into ``target`` (see the module docstring); the changes, and with ``verify``
    one failed change per row that differs afterwards."""
    return plan_migrate(source, target, overwrite=overwrite, verify=verify, dry_run=dry_run).run(dry_run=dry_run)


def _write(target: Store, writes: list[tuple[str, dict[str, Any], bool]], overwrite: bool) -> None:
    now = int(time.time())  # only for a row without times, which no library writes
    prepared = [(kind, row, had, target.prepare(kind, row, now)) for kind, row, had in writes]
    need = tuple(kind for kind, *_ in KINDS if any(w[0] == kind for w in writes))

    def body(tx: Transaction) -> None:
        for kind, row, had, upsert in prepared:
            if not had and not overwrite and tx.exists(kind, upsert.key):  # re-checked inside the write
                noun = "session" if kind == "sessions" else "user memory"
                raise TargetExists(f"{target.label}: {noun} '{upsert.key}' appeared meanwhile; nothing written")
            tx.upsert(upsert)

    target.write(need, body, create=True)


def check(source: Store, target: Store) -> list[Change]:
    """Both stores read back: one failed change (exit 1) per source row missing from the target or differing."""
    failed = []
    for kind, _, columns, noun in KINDS:
        mine = rows_of(source, kind, missing_ok=False)
        theirs = rows_of(target, kind, missing_ok=True)
        for row_id, row in mine.items():
            there = theirs.get(row_id)
            detail = "missing from the target" if there is None else \
                ("differs in " + ", ".join(differences(row, there, columns)) if differences(row, there, columns)
                 else None)
            if detail is not None:
                change = _change(Action.failed, noun, row_id, False, f"verify: {detail}")
                change.exit_code = EXIT_PROBLEMS
                failed.append(change)
    return failed


def _change(action: Action, noun: str, row_id: str, dry_run: bool, detail: str | None = None) -> Change:
    return Change(action, f"{noun} {row_id}", detail, dry_run=dry_run, fields={"kind": noun, "id": row_id})
