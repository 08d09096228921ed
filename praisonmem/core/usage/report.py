"""``praisonmem usage``: the recorded usage of every session, grouped and totalled (read-only).

Each session is read through its store (``store.scan``; Upsonic rows through their backend's read
transaction) and its figures taken from :mod:`.records`. Sums add only what was recorded: a group's
``prompt_tokens`` is the sum over the sessions that recorded a prompt count (``None`` when none did), and
sessions that recorded nothing are counted in ``sessions_without_usage``, never as zero.

Periods (``day``, ``week``, ``month``) are UTC calendar days, ISO weeks (``2026-W48``) and months of
the time the session was last written (its recorded totals are running totals, current at that time).
A session id that several stores of the home hold (the gateway's one-time import copies the JSON files
into ``sessions.db``) is counted once: the copy written last among those that recorded usage.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from enum import StrEnum
from typing import Any

from praisonmem.core import sessions
from praisonmem.core.errors import CorruptFile, IOFailure, UsageError
from praisonmem.core.paths import Paths
from praisonmem.core.usage.records import FIGURES, SessionUsage, ledger_by_session, praisonai_usage, upsonic_usage

NO_DATE = "(no date)"


class GroupBy(StrEnum):
    """``usage --by``: a period of the last write, or a field of the session."""

    day = "day"
    week = "week"
    month = "month"
    model = "model"
    agent = "agent"
    user = "user"
    session = "session"


PERIODS = (GroupBy.day, GroupBy.week, GroupBy.month)


@dataclass
class Group:
    key: str | None  # the period, model, agent, user or session id; None: the session did not record it
    store: str | None = None  # --by session: the store holding it
    sessions: int = 0
    sessions_without_usage: int = 0
    turns: int = 0
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    total_tokens: int | None = None
    cost: float | None = None

    def add(self, item: SessionUsage) -> None:
        self.sessions += 1
        self.turns += item.turns
        if not item.recorded:
            self.sessions_without_usage += 1
            return
        for name in FIGURES:
            value = getattr(item, name)
            if value is not None:
                setattr(self, name, (getattr(self, name) or 0) + value)

    def to_json(self, by: GroupBy) -> dict[str, Any]:
        out: dict[str, Any] = {by.value: self.key}
        if by is GroupBy.session:
            out["store"] = self.store
        out.update(sessions=self.sessions, sessions_without_usage=self.sessions_without_usage, turns=self.turns,
                   prompt_tokens=self.prompt_tokens, completion_tokens=self.completion_tokens,
                   total_tokens=self.total_tokens, cost=None if self.cost is None else round(self.cost, 10))
        return out


@dataclass
class UsageReport:
    by: GroupBy
    since: str | None
    until: str | None
    groups: list[Group]
    totals: Group
    sessions: list[SessionUsage] = field(default_factory=list)
    unreadable: list[dict[str, str]] = field(default_factory=list)
    copies_counted_once: int = 0  # session copies left out because another store's copy was written later
    undated_left_out: int = 0  # sessions without a date, left out because --since or --until was given
    unattached_usage_entries: int = 0  # Upsonic ledger rows of no session's run: said, not counted
    stores: list[str] = field(default_factory=list)
    missing: str | None = None  # why the home holds no sessions
    unreachable: list[dict[str, str]] = field(default_factory=list)  # the configured database, when it is down

    def to_json(self) -> dict[str, Any]:
        totals = self.totals.to_json(self.by)
        totals.pop(self.by.value)
        totals.pop("store", None)
        return {"by": self.by.value, "since": self.since, "until": self.until, "stores": self.stores,
                "rows": [g.to_json(self.by) for g in self.groups], "totals": totals,
                "sessions": totals["sessions"], "sessions_without_usage": totals["sessions_without_usage"],
                "copies_counted_once": self.copies_counted_once, "undated_left_out": self.undated_left_out,
                "unattached_usage_entries": self.unattached_usage_entries,
                "unreadable": self.unreadable, "unreachable": self.unreachable}


# ---------------------------------------------------------------- dates


def parse_date(text: str, option: str, *, end: bool = False) -> float:
    """``--since``/``--until``'s moment (:func:`praisonmem.core.io.timeutil.parse_when`: a duration back from now,
    a UTC day, with ``end`` its end, or an ISO date-time), as seconds since the epoch."""
    from praisonmem.core.io.timeutil import parse_when

    return parse_when(text, option, end=end)


def period_of(when: float | None, by: GroupBy) -> str | None:
    if when is None:
        return None
    try:
        moment = datetime.fromtimestamp(when, timezone.utc)
    except (OverflowError, OSError, ValueError):
        return None
    if by is GroupBy.day:
        return moment.strftime("%Y-%m-%d")
    if by is GroupBy.month:
        return moment.strftime("%Y-%m")
    year, week, _ = moment.isocalendar()
    return f"{year}-W{week:02d}"


# ---------------------------------------------------------------- reading


@dataclass
class HomeUsage:
    """What a scan of a home's sessions found: each readable session's usage and each unreadable one's record,
    in scan order."""

    usage: list[SessionUsage] = field(default_factory=list)
    unreadable: list[dict[str, str]] = field(default_factory=list)


class UsageFold:
    """The scan of a home's sessions for their usage (module level: it runs in worker processes for large homes)."""

    def empty(self) -> HomeUsage:
        return HomeUsage()

    def add(self, acc: HomeUsage, item: Any) -> HomeUsage:
        if item.doc is None:
            error = item.error
            reason = error.reason if isinstance(error, CorruptFile) else getattr(error, "message", str(error))
            acc.unreadable.append({"store": item.store, "file": item.where, "error": reason})
        else:
            sid = item.session_id if isinstance(item.session_id, str) else str(item.doc.get("session_id") or item.where)
            acc.usage.append(praisonai_usage(item.doc, store=item.store, session_id=sid))
        return acc

    def merge(self, a: HomeUsage, b: HomeUsage) -> HomeUsage:
        a.usage += b.usage
        a.unreadable += b.unreadable
        return a


HOME_ORDER = sessions.LIBRARY_LABELS  # the home's stores in Home's order: a tie goes to the first


def _preference(item: SessionUsage) -> tuple[bool, float, int]:
    rank = HOME_ORDER.index(item.store) if item.store in HOME_ORDER else len(HOME_ORDER)
    return item.recorded, item.when if item.when is not None else float("-inf"), -rank


def _once_per_id(items: list[SessionUsage]) -> tuple[list[SessionUsage], int]:
    """Each session id of the home once: of its copies, the one written last among those that recorded usage (the
    figures are running totals, and the gateway's import of a JSON file drops the keys its class does not know);
    ties go to the JSON file."""
    best: dict[str, SessionUsage] = {}
    for item in items:
        kept = best.get(item.session_id)
        if kept is None or _preference(item) > _preference(kept):
            best[item.session_id] = item
    kept_ids = {id(v) for v in best.values()}
    return [i for i in items if id(i) in kept_ids], len(items) - len(best)


def read_home(paths: Paths, store: str | None,
              progress: Callable[[int, int], None] | None = None) -> tuple[list[SessionUsage], list[dict[str, str]],
                                                                       str | None, list[str]]:
    from praisonmem.core.sessions import open_store

    home = open_store(paths, store)
    found = home.scan(UsageFold(), progress=progress)
    return found.usage, found.unreadable, home.absent(), list(getattr(home, "stores", {}) or [home.label])


def read_elsewhere(paths: Paths, where: str, progress: Callable[[int, int], None] | None = None
                   ) -> tuple[list[SessionUsage], list[dict[str, str]], str | None, list[str]] | None:
    """The usage in the session store at ``where`` (a directory of JSON sessions, or PraisonAI's SQL conversation
    store: ``sqlite:///…``, a ``.db`` file, ``postgresql://…``), or ``None`` when ``where`` holds no session
    store (an Upsonic database, or nothing)."""
    import os

    from praisonmem.core.errors import NotFound
    from praisonmem.core.sessions import store_location
    from praisonmem.core.upsonic import is_upsonic_document_store

    if is_upsonic_document_store(where):
        return None  # an Upsonic JSONStorage directory or RedisStorage: read_upsonic reads it
    if "://" not in where and not os.path.isdir(os.path.expanduser(where)) and \
            not os.path.lexists(os.path.expanduser(where)):
        return None  # nothing there: read_upsonic says so
    location = store_location(where, {})
    try:
        return read_home(paths, location, progress)
    except NotFound:  # no conversation tables there: an Upsonic database, perhaps
        return None


def _home_labels(paths: Paths) -> set[str]:
    """The labels ``--store`` may name in this home (json, sessions.db, project:<id>, unified, legacy-run)."""
    from praisonmem.core.errors import PraisonMemError
    from praisonmem.core.sessions import open_store

    try:
        return set(sessions.LIBRARY_LABELS) | set(getattr(open_store(paths), "stores", {}))
    except PraisonMemError:  # no home: its labels still name it (and read_home says what is missing)
        return set(sessions.LIBRARY_LABELS)


def _held_labels(paths: Paths) -> list[str]:
    """The stores this home has, as a message names them (:meth:`~praisonmem.core.sessions.stores.home.Home.held`)."""
    from praisonmem.core.errors import PraisonMemError
    from praisonmem.core.sessions import open_store

    try:
        return sessions.held_stores(open_store(paths))
    except PraisonMemError:
        return [sessions.LIBRARY_LABELS[0]]


def read_upsonic(where: str, timeout: float, paths: Paths | None = None) -> tuple[list[SessionUsage], str, int]:
    import os

    from praisonmem.core.errors import NotFound
    from praisonmem.core.upsonic import open_store

    if "://" not in where and not os.path.lexists(os.path.expanduser(where)):
        names = ", ".join(_held_labels(paths) if paths is not None else sessions.LIBRARY_LABELS)
        raise NotFound(f"--store {where}: neither a store of the home ({names}) nor an Upsonic database file")
    db = open_store(where, timeout=timeout)
    rows = db.all_sessions()
    ledger, unattached = ledger_by_session(rows, db.usage_entries())
    label = f"upsonic:{db.label}"
    return [upsonic_usage(row, store=label, entries=ledger.get(str(row.get("session_id")))) for row in rows], label, \
        unattached


# ---------------------------------------------------------------- the report


def _group_key(item: SessionUsage, by: GroupBy) -> tuple[str | None, str | None]:
    if by in PERIODS:
        return period_of(item.when, by), None
    if by is GroupBy.session:
        return item.session_id, item.store
    return {GroupBy.model: item.model, GroupBy.agent: item.agent, GroupBy.user: item.user}[by], None


def _order(groups: list[Group], by: GroupBy) -> list[Group]:
    if by in PERIODS:  # oldest first; sessions without a date last
        return sorted(groups, key=lambda g: (g.key is None, g.key or ""))
    return sorted(groups, key=lambda g: (-(g.total_tokens or 0), -(g.cost or 0), g.key is None, g.key or "",
                                         g.store or ""))


def _unreachable(where: str, exc: IOFailure) -> dict[str, str]:
    from praisonmem.core.io.pgurl import redact

    return {"store": redact(where), "error": exc.message}


def usage_report(paths: Paths, *, by: GroupBy | str = GroupBy.day, since: str | None = None,
                 until: str | None = None, stores: list[str] | None = None, upsonic_db: str | None = None,
                 timeout: float = 5.0, progress: Callable[[int, int], None] | None = None) -> UsageReport:
    """Usage grouped ``by`` over the home's sessions and Upsonic databases.

    ``stores``: labels of the home's stores (``json``, ``sessions.db``) and Upsonic databases (a path or a
    ``sqlite:///`` / ``postgresql://`` URL); none: every store of the home, and ``upsonic_db`` (the
    configured ``upsonic.db``) when given. ``since``/``until`` are dates (:func:`parse_date`; ``until``'s
    day is included)."""
    try:
        group_by = GroupBy(by)
    except ValueError:
        raise UsageError(f"unknown --by '{by}'; choose from {', '.join(GroupBy)}") from None
    from praisonmem.core.io.timeutil import window

    span = window(since, until)
    low, high = (None, None) if span is None else (span.since, span.until)
    items: list[SessionUsage] = []
    bad: list[dict[str, str]] = []
    dropped, missing, labels, unattached = 0, None, [], 0
    wanted = list(dict.fromkeys(stores or []))  # a store named twice is read once
    known = _home_labels(paths) if wanted else set()
    home_labels = [s for s in wanted if s in known]
    databases = [s for s in wanted if s not in known]
    if not stores:
        home_labels = [None]  # type: ignore[list-item]
        databases = [upsonic_db] if upsonic_db else []
    for label in home_labels:
        found, unreadable, absent, names = read_home(paths, label, progress)
        items += found
        bad += unreadable
        missing = missing or absent
        labels += names
    upsonic = []
    unreachable: list[dict[str, str]] = []
    for where in databases:  # a session store elsewhere (a directory, a conversation store), else Upsonic
        try:
            elsewhere = read_elsewhere(paths, where, progress)
        except IOFailure as exc:
            if stores:  # named on the command line: its failure is the command's
                raise
            unreachable.append(_unreachable(where, exc))  # the configured database: the rest goes on
            continue
        if elsewhere is None:
            upsonic.append(where)
            continue
        found, unreadable, _, names = elsewhere
        items += found
        bad += unreadable
        labels += names
    items, dropped = _once_per_id(items)  # across the session stores, however they were named
    for where in upsonic:
        try:
            found, name, loose = read_upsonic(where, timeout, paths)
        except IOFailure as exc:
            if stores:
                raise
            unreachable.append(_unreachable(where, exc))
            continue
        items += found
        labels.append(name)
        unattached += loose
    undated = 0
    if low is not None or high is not None:
        undated = sum(1 for i in items if i.when is None)
        items = [i for i in items if i.when is not None and (low is None or i.when >= low)
                 and (high is None or i.when < high)]
    groups: dict[tuple[str | None, str | None], Group] = {}
    totals = Group(None)
    for item in items:
        key, store = _group_key(item, group_by)
        groups.setdefault((key, store), Group(key, store)).add(item)
        totals.add(item)
    return UsageReport(group_by, since, until, _order(list(groups.values()), group_by), totals,
                       sessions=items, unreadable=bad, copies_counted_once=dropped, undated_left_out=undated,
                       stores=labels, missing=missing if not items else None, unattached_usage_entries=unattached,
                       unreachable=unreachable)

