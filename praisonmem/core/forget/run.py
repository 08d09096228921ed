"""``praisonmem forget``: gather the stores, plan, journal, erase, prove; plain data back.

:func:`plan_forget` finds every store (``locate`` over the home, the current directory and each
``--in DIR``, plus the configured and ``--store``/``--db`` server stores), asks each adapter module
(:mod:`.sessions`, :mod:`.memory`, :mod:`.servers`) for its stores and has every store plan: nothing is
written. :func:`execute` journals the plan (:mod:`.journal`), erases store by store through each store's
own protocol, proves (:func:`.proof.prove`: re-plan and raw bytes), looks for the subject in
praisonmem's backups (:mod:`.backups`, rewritten with ``include_backups``) and removes the journal when
everything is verified. A store whose erase fails (a running agent holds its lock) is said, the others
go on, and the journal stays so the rerun finishes.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from praisonmem.core.errors import NotFound, PraisonMemError, UsageError
from praisonmem.core.forget.model import ForgetStore, StorePlan, Subject, SubjectKind, Verdict, Verified, Where
from praisonmem.core.io.safetext import plural


def parse_before(text: str) -> datetime:
    """``--before``: an ISO date (``2026-01-31``: midnight) or date and time; without a zone, UTC (as the
    libraries' stamps without one are read)."""
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError as exc:
        raise UsageError(f"--before: {text!r} is not a date (YYYY-MM-DD or YYYY-MM-DDTHH:MM[:SS][+HH:MM])") from exc
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=timezone.utc)


def subject_from(user: str | None, session: str | None, agent: str | None, before: str | None) -> Subject:
    """The subject of exactly one of ``--user``/``--session``/``--agent``; :class:`UsageError` otherwise."""
    given = [(k, v) for k, v in ((SubjectKind.user, user), (SubjectKind.session, session),
                                 (SubjectKind.agent, agent)) if v is not None]
    if len(given) != 1:
        raise UsageError("give exactly one of --user, --session or --agent"
                         + (f" (got {', '.join('--' + k.value for k, _ in given)})" if given else ""))
    kind, value = given[0]
    if not value.strip():
        raise UsageError(f"--{kind.value} must not be blank")
    return Subject(kind, value, None if before is None else parse_before(before))


@dataclass
class Planned:
    """What a forget would do: the subject, the stores and their plans (same order), where it looked."""

    subject: Subject
    where: Where
    stores: list[ForgetStore]
    plans: list[StorePlan]
    dirs: list[str]
    roots: list[Path]
    backup_dirs: list[Path]
    journal: Any
    notes: list[str] = field(default_factory=list)

    @property
    def count(self) -> int:
        return sum(len(p.erasures) for p in self.plans)

    def question(self) -> str | None:
        touched = sum(1 for p in self.plans if p.erasures)
        if not touched:
            return None
        return (f"Forget --{self.subject.kind.value} {self.subject.value}: remove or rewrite {plural(self.count, 'record')} "
                f"in {plural(touched, 'store')}?")


@dataclass
class Result:
    """The outcome: the plan, the verdicts, the backups, the stores whose erase failed, ``ok``."""

    planned: Planned
    verdicts: list[Verdict] = field(default_factory=list)
    backups: list[dict[str, Any]] = field(default_factory=list)
    failures: list[dict[str, Any]] = field(default_factory=list)  # store, path, error, exit_code
    allow_unverified: bool = False
    dry_run: bool = False

    @property
    def ok(self) -> bool:
        """Every store verified absent (or unverified, when allowed), no backup holds the subject; a dry run:
        every store could be read."""
        if self.dry_run:
            return all(p.unreachable is None for p in self.planned.plans)
        accepted = {Verified.absent, Verified.unverified} if self.allow_unverified else {Verified.absent}
        return (not self.failures and all(v.verified in accepted for v in self.verdicts)
                and not any(b.get("holds") for b in self.backups))

    def to_json(self) -> dict[str, Any]:
        return {"plan": [plan_json(p) for p in self.planned.plans],
                "stores": [verdict_json(v) for v in self.verdicts],
                "backups": self.backups, "failures": self.failures, "ok": self.ok,
                "dry_run": self.dry_run, "allow_unverified": self.allow_unverified,
                "notes": list(self.planned.notes)}


def plan_json(plan: StorePlan) -> dict[str, Any]:
    return {"store": plan.store, "path": plan.location,
            "items": [{"key": e.key, "what": e.what, "action": e.action.value} for e in plan.erasures],
            "unreachable": plan.unreachable, "notes": list(plan.notes), "unverifiable": plan.unverifiable}


def verdict_json(verdict: Verdict) -> dict[str, Any]:
    return {"store": verdict.store, "path": verdict.path, "removed": verdict.removed,
            "verified": verdict.verified.value, "detail": verdict.detail}


# ---------------------------------------------------------------- gathering


ADAPTERS = ("sessions", "memory", "servers")


def adapter_modules() -> list[Any]:
    """The modules whose ``forget_stores`` give the stores; every one is part of praisonmem, so one that is
    missing is a bug (ImportError), never a store quietly skipped."""
    import importlib

    return [importlib.import_module(f"praisonmem.core.forget.{name}") for name in ADAPTERS]


def located(paths: Any, settings: Any, dirs: Sequence[str], env: Mapping[str, str]) -> tuple[list[Any], list[str]]:
    """``locate``'s stores under the homes, the current directory and ``dirs``, and the configured servers'
    URLs (as configured: only ever handed to a driver)."""
    from praisonmem.core import locate

    report = locate.locate(paths, settings, [".", *dirs], env=env)
    return list(report.stores), [s._url for s in report.servers if s._url]


def stores_in(directory: Path, key: bytes | None) -> list[ForgetStore]:
    """The stores of a tree laid out as ``backup restore --to DIR`` lays it out (a backup rewritten
    without the subject): the same adapters over a :class:`Where` of that tree alone."""
    from praisonmem.core import locate
    from praisonmem.core.config import Settings
    from praisonmem.core.paths import resolve

    paths = resolve(directory / "home", directory / "memory", env={}, user_home=directory)
    report = locate.locate(paths, Settings(env={}, path=directory / "no-config.toml"), [str(directory)], env={},
                           user_home=directory)
    where = Where(paths, tuple(report.stores), (), key)
    return [store for module in adapter_modules() for store in module.forget_stores(where)]


def plan_forget(paths: Any, settings: Any, subject: Subject, *, dirs: Sequence[str] = (),
                urls: Sequence[str] = (), key_file: str | None = None, dry_run: bool = False,
                env: Mapping[str, str] | None = None, journal: Any = None, cache: Any = None) -> Planned:
    """Every store's plan for ``subject``; nothing is written. A journal another subject's forget left
    refuses a real run (exit 4, naming the command that finishes it); the journal of this subject adds
    its keys to the plan (the rerun finishes what the killed run began)."""
    from praisonmem.core.forget.journal import Journal, add_unfinished
    from praisonmem.core.sessions import session_key

    env = os.environ if env is None else env
    journal = Journal() if journal is None else journal
    notes: list[str] = []
    if dry_run:
        try:
            left = journal.refuse_other(subject)
        except PraisonMemError as exc:
            left = None
            notes.append(exc.message)
    else:
        left = journal.refuse_other(subject)
    if left is not None:
        notes.append(f"finishing the interrupted forget journalled in {journal.path}")
    servers, local = split_locations(urls)
    given = [os.path.abspath(os.path.expanduser(d)) for d in [*dirs, *local]]  # locate refuses a non-directory
    found, configured = located(paths, settings, given, env)
    key = session_key(key_file, env)
    secret = None if key is None else key.secret.encode()
    where = Where(paths, tuple(found), tuple(dict.fromkeys([*configured, *servers])), secret, cache)
    stores = [store for module in adapter_modules() for store in module.forget_stores(where)]
    plans = [_plan(store, subject) for store in stores]
    add_unfinished(plans, left)
    roots = [Path(paths.data.path), Path(paths.memory.path).parent, Path(os.getcwd()), *map(Path, given)]
    return Planned(subject, where, stores, plans, list(given), roots, backup_dirs(settings), journal, notes)


SERVER_SCHEMES = ("postgresql", "postgres", "mysql", "mariadb", "redis", "rediss", "unix")


def split_locations(values: Sequence[str]) -> tuple[list[str], list[str]]:
    """``--store``/``--db`` values: the server URLs (handed to the server adapters), and the local ones (a file,
    ``sqlite:///PATH`` or a directory), whose directory ``locate`` walks so their stores are found by content."""
    servers, local = [], []
    for value in values:
        head = value.split("://", 1)[0].lower().split("+", 1)[0] if "://" in value else ""
        if head in SERVER_SCHEMES:
            servers.append(value)
            continue
        # sqlite:///relative, sqlite:////absolute (SQLAlchemy's form)
        path = Path(value.split("://", 1)[1][1:] if head == "sqlite" else value).expanduser()
        if not path.exists():
            raise NotFound(f"{value}: no such file or directory")
        local.append(str(path if path.is_dir() else path.parent))
    return servers, local


def _plan(store: ForgetStore, subject: Subject) -> StorePlan:
    try:
        return store.plan(subject)
    except PraisonMemError as exc:  # a store that cannot be read is reported, never skipped silently
        return StorePlan(store.store, store.location, unreachable=exc.message)


def backup_dirs(settings: Any) -> list[Path]:
    from praisonmem.core.backup import backup_dir

    chosen = settings.get("backup.dir").value
    return list(dict.fromkeys([backup_dir(chosen), backup_dir(None)]))


# ---------------------------------------------------------------- running


def execute(planned: Planned, *, include_backups: bool = False, allow_unverified: bool = False,
            dry_run: bool = False) -> Result:
    """Journal, erase store by store, prove, check the backups; the journal goes when all is verified."""
    import praisonmem.core.forget.backups as backups
    import praisonmem.core.forget.proof as proof

    result = Result(planned, allow_unverified=allow_unverified, dry_run=dry_run)
    key = planned.where.key
    if dry_run:
        result.backups = [held_json(h) for h in backups.holding(planned.subject, planned.plans, planned.backup_dirs,
                                                                roots=planned.roots, key=key)]
        return result
    if planned.count:
        planned.journal.write(planned.subject, planned.plans, planned.dirs)
    removed = []
    for store, plan in zip(planned.stores, planned.plans):
        removed.append(_erase(store, plan, result))
    verdicts = proof.prove(planned.stores, planned.plans, planned.subject, removed=removed, roots=planned.roots,
                           exclude=[planned.journal.path], key=key)
    result.verdicts = [_vouched(v, planned.plans) for v in verdicts]
    held = backups.holding(planned.subject, planned.plans, planned.backup_dirs, roots=planned.roots, key=key)
    for item in held:
        record = held_json(item)
        if include_backups and item.problem is None and item.members:
            done = backups.rewrite(item, planned.subject, planned.plans,
                                   stores_for=lambda d: stores_in(Path(d), key))
            record["rewritten"] = {"dropped": done.dropped, "rewritten": done.rewritten, "problem": done.problem}
            record["holds"] = done.problem is not None
        result.backups.append(record)
    if result.ok:
        planned.journal.remove()
    return result


def _erase(store: ForgetStore, plan: StorePlan, result: Result) -> int:
    if not plan.erasures or plan.unreachable is not None:
        return 0
    try:
        return store.erase(plan)
    except PraisonMemError as exc:  # the others go on; the journal stays, so the rerun finishes this one
        result.failures.append({"store": plan.store, "path": plan.location, "error": exc.message,
                                "exit_code": exc.exit_code})
        return 0


def _vouched(verdict: Verdict, plans: Sequence[StorePlan]) -> Verdict:
    """A store its plan says the proof cannot vouch for (encrypted text without the key) is unverified."""
    for plan in plans:
        if (plan.store, plan.location) == (verdict.store, verdict.path) and plan.unverifiable \
                and verdict.verified is Verified.absent:
            return Verdict(verdict.store, verdict.path, verdict.removed, Verified.unverified, plan.unverifiable)
    return verdict


def held_json(held: Any) -> dict[str, Any]:
    return {"archive": str(held.archive), "members": [{"name": m.name, "why": m.why} for m in held.members],
            "problem": held.problem, "holds": bool(held.members) or held.problem is not None, "rewritten": None}
