"""``session list``: every session of every store summarised, filtered, sorted and cut (read-only).

Unreadable sessions are listed first with their reason, never skipped silently; the
scope of each session says where it belongs relative to the current workspace
(:class:`~praisonmem.core.sessions.workspace.Scope`).

A session is listed once per store that holds it (``store``: ``json``, ``sessions.db``, ``project:<id>``,
``unified``, ``legacy-run``). When
several stores hold one id (the gateway's one-time import copies the JSON files into
``sessions.db``, after which each side is written by its own consumers), each copy says so:
``paired_with`` names the other stores, ``pair`` is ``equal`` when every copy holds the same
document after the library's normalisation (``SessionData.from_dict(...).to_dict()``, so an
untouched import is equal) and ``diverged`` when not, and ``stale`` marks a diverged copy that
another copy has overtaken (a later ``updated_at``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from praisonmem.core.paths import Paths
from praisonmem.core.sessions.documents import LIST_FIELDS, library_form, summarise, unreadable_row
from praisonmem.core.errors import PraisonMemError
from praisonmem.core.sessions.stores import Each, Scanned, SessionStore
from praisonmem.core.sessions.stores.locate import open_store
from praisonmem.core.sessions.stores.names import PROJECT, UNIFIED
from praisonmem.core.sessions.stores.unified import last_session
from praisonmem.core.io.gcpolicy import quiet_gc, to_oldest
from praisonmem.core.sessions import listcache
from praisonmem.core.sessions.workspace import Scope, scope_of

if TYPE_CHECKING:
    from praisonmem.core.io.cache import Cache
    from praisonmem.core.io.timeutil import Window


class SortKey(StrEnum):
    """``session list --sort``: updated, created and messages put the newest or largest first."""

    updated = "updated"
    created = "created"
    messages = "messages"
    id = "id"


@dataclass
class ListResult:
    rows: list[dict[str, Any]]
    total: int  # readable sessions matching the filters, before --limit
    hidden_unreadable: int = 0  # unreadable files left out because filters were given
    unreadable: int = 0
    missing: str | None = None  # why there is nothing to list: the sessions directory does not exist
    refs: list[Any] | None = None  # each row's ref, in the rows' order (to act on what was listed)
    project: Any = None  # the current directory's praisonai CLI project (a ProjectIdentity), if it has a store


Summary = tuple[dict[str, Any], Any]  # a row and its ref (a plain tuple: it comes back from worker processes)


def summary_rows(item: Scanned) -> list[Summary]:
    """The ``session list`` row of one session (runs in a worker process for large directories)."""
    if item.doc is None:
        assert item.error is not None
        row = unreadable_row(item.where, item.error, item.session_id)
        row["store"] = item.store
        return [(row, item.ref)]
    row = summarise(item.doc, session_id=item.session_id, file=item.where)
    row["store"], row["spilled_count"] = item.store, item.spilled
    return [(row, item.ref)]


def normalised(store: SessionStore, ref: Any) -> str | None:
    """A copy's document as the library would keep it, serialised; ``None`` when it cannot be read now."""
    import json

    try:
        doc = store.read(ref)
    except PraisonMemError:
        return None
    try:
        doc = library_form(doc, now=0.0)
    except ValueError:
        pass
    return json.dumps(doc, ensure_ascii=False)


def choice(vocabulary: type[StrEnum], value: str | StrEnum | None, what: str) -> Any:
    """``value`` as a member of ``vocabulary``; a library caller passing anything else gets a clear error
    (the CLI restricts the choices)."""
    if value is None:
        return None
    try:
        return vocabulary(value)
    except ValueError:
        raise ValueError(f"unknown {what} {value!r}; choose from {', '.join(vocabulary)}") from None


def list_sessions(
    paths: Paths,
    *,
    workspace: Callable[[], str],
    agent: str | None = None,
    user: str | None = None,
    scope: Scope | str | None = None,
    sort: SortKey | str = SortKey.updated,
    limit: int = 50,
    store: str | None = None,
    progress: Callable[[int, int], None] | None = None,
    cache: Cache | None = None,
    window: Window | None = None,
) -> ListResult:
    """Summaries of every session (``store``: of that store only), filtered, sorted and cut to ``limit``
    (0 = all). ``window`` (``--since``/``--until``): only the sessions whose ``updated_at`` lies in it.

    Unreadable files are listed first with their reason (never skipped silently)
    and do not count against ``limit``; when filters are given they cannot be
    matched, so they are counted in ``hidden_unreadable`` instead. ``cache``: praisonmem's cache, where
    the JSON files' rows are kept (:mod:`.listcache`), so unchanged files are not read again.
    """
    wanted = choice(Scope, scope, "scope")
    order = choice(SortKey, sort, "sort key")
    with quiet_gc():  # 100,000 rows: the collector's passes over them cost more than building them
        result = _list(paths, workspace, agent, user, wanted, order, limit, store, progress, cache, window)
        to_oldest()  # and the first young collection after it would traverse them all (100 ms at 100,000 rows)
    return result


def _list(paths: Paths, workspace: Callable[[], str], agent: str | None, user: str | None, wanted: Scope | None,
          order: SortKey, limit: int, store: str | None, progress: Callable[[int, int], None] | None,
          cache: Cache | None, window: Window | None = None) -> ListResult:
    home = open_store(paths, store)
    scope_fn = _scope_function(workspace)
    sql = _sql_store(home, store)
    if sql is not None:
        return _sql_list(sql, scope_fn, agent=agent, user=user, scope=wanted, sort=order, limit=limit, home=home,
                         window=window)
    summaries = home.scan(Each(summary_rows), progress=progress, memo=listcache.memo(cache))
    project, current = _current_project(home)
    last = last_session(paths.sessions_dir)
    good: list[Summary] = []
    bad: list[Summary] = []
    unfiltered = agent is None and user is None and wanted is None and window is None
    for item in summaries:  # one pass (100,000 rows): these fields are added here, not in the workers (less to send)
        row = item[0]
        store_label = row["store"]
        row["paired_with"], row["pair"], row["stale"] = [], None, False
        row["current_project"] = store_label == current
        row["last_session"] = store_label == UNIFIED and last is not None and row["session_id"] == last
        if row["unreadable"]:
            bad.append(item)
            continue
        agent_name = row["agent_name"] if isinstance(row["agent_name"], str) else None
        row["scope"] = scope_fn(row["session_id"], agent_name)
        if unfiltered or (_matches(row, agent, user, wanted) and (window is None or window.holds(row["updated_at"]))):
            good.append(item)
    mark_pairs(home, summaries)  # changes only the pair fields, which nothing above reads
    _sort(good, order)
    total = len(good)
    if limit:
        good = good[:limit]
    missing = home.absent()
    if not unfiltered:
        return ListResult([row for row, _ in good], total, hidden_unreadable=len(bad), unreadable=len(bad),
                          missing=missing, refs=[ref for _, ref in good], project=project)
    shown = bad + good
    return ListResult([row for row, _ in shown], total, unreadable=len(bad), missing=missing,
                      refs=[ref for _, ref in shown], project=project)


def time_window(since: str | None, until: str | None) -> Window | None:
    """``--since``/``--until`` of the session commands (:func:`praisonmem.core.io.timeutil.window`)."""
    from praisonmem.core.io.timeutil import window

    return window(since, until)


def latest(paths: Paths, *, store: str | None = None) -> tuple[str, str, str]:
    """The session ``session show --latest`` shows (``store``: of that store only): the one ``.last_session``
    names (what the praisonai CLI's ``/continue`` resumes) when a store holds it, else the most recently
    updated; its id, the label of its store and why it was chosen."""
    from praisonmem.core.errors import NotFound
    from praisonmem.core.sessions.workspace import workspace_id

    rows = [r for r in list_sessions(paths, workspace=workspace_id, sort=SortKey.updated, limit=0, store=store).rows
            if not r["unreadable"] and isinstance(r["session_id"], str)]
    for row in rows:
        if row["last_session"]:
            return row["session_id"], row["store"], "the session .last_session names (praisonai's /continue)"
    if not rows:
        raise NotFound(f"no session to show: {store or paths.sessions_dir} holds none")
    return rows[0]["session_id"], rows[0]["store"], "the most recently updated session"


def _current_project(home: Any) -> tuple[Any, str | None]:
    """The praisonai CLI project of the current directory and its store's label, when the home holds that store
    (its id is computed only then: it runs git)."""
    from praisonmem.core.sessions.stores.projects import project_identity

    labels = set(getattr(home, "stores", {}))
    if not any(label.startswith(PROJECT) for label in labels):
        return None, None
    project = project_identity()
    label = f"{PROJECT}{project.project_id}" if project is not None else None
    return (project, label) if label in labels else (None, None)


def _sql_store(home: SessionStore, store: str | None) -> Any:
    """The conversation store ``--store`` names (it lists in SQL), else None."""
    if store is None:
        return None
    from praisonmem.core.sessions.stores.locate import is_location

    if not is_location(store):
        return None
    from praisonmem.core.sessions.stores.conversation_sql import sql_store

    return sql_store(home)


def _sql_list(sql: Any, scope_fn: Callable[[str, str | None], str], *, agent: str | None, user: str | None,
              scope: Scope | None, sort: SortKey, limit: int, home: SessionStore,
              window: Window | None = None) -> ListResult:
    """``session list`` of a conversation store: filtered, sorted, counted and cut in SQL (a scope filter,
    which needs each id, is applied to every matching session's row before the cut)."""
    later = scope is not None or window is not None  # filters applied here, to every matching row, before the cut
    rows, total = sql.summaries(agent=agent, user=user, sort=sort.value, limit=0 if later else limit)
    for i, row in enumerate(rows):  # every field a listing row has, in the same order as the other stores'
        rows[i] = row = {**dict.fromkeys(LIST_FIELDS), **row}
        row.update(paired_with=[], pair=None, stale=False, current_project=False, last_session=False,
                   scope=scope_fn(row["session_id"], row["agent_name"]))
    if later:
        rows = [row for row in rows if (scope is None or row["scope"] == scope)
                and (window is None or window.holds(row["updated_at"]))]
        total = len(rows)
        rows = rows[:limit] if limit else rows
    # the home's refs (its store's label and ref), as every other listing gives them: prune deletes by them
    return ListResult(rows, total, refs=[home.ref(row["session_id"]) for row in rows])


def mark_pairs(home: SessionStore, summaries: list[Summary]) -> None:
    """Mark every copy of a session id that more than one store holds (see the module docstring); only
    those copies are read again, to compare them."""
    if len({row["store"] for row, _ in summaries}) < 2:  # one store: no copies (a set is cheaper than the ids)
        return
    by_id: dict[str, list[Summary]] = {}
    for row, ref in summaries:
        if not row["unreadable"] and isinstance(row["session_id"], str):
            by_id.setdefault(row["session_id"], []).append((row, ref))
    for copies in by_id.values():
        if len({row["store"] for row, _ in copies}) < 2:
            continue
        marks = compare_copies(home, [(row["store"], row["updated_at"], ref) for row, ref in copies])
        for (row, _), mark in zip(copies, marks):
            row.update(mark)


def compare_copies(home: SessionStore, copies: list[tuple[str, Any, Any]]) -> list[dict[str, Any]]:
    """``paired_with``, ``pair`` and ``stale`` for each of a session's copies ``(store, updated_at, ref)``."""
    from praisonmem.core.io.timeutil import epoch_of

    def when(value: Any) -> float:
        stamp = epoch_of(value)
        return float("-inf") if stamp is None else stamp

    stores = {label for label, _, _ in copies}
    forms = {normalised(home, ref) for _, _, ref in copies}
    equal = len(forms) == 1 and None not in forms
    newest = max(when(updated) for _, updated, _ in copies)
    return [{"paired_with": sorted(stores - {label}), "pair": "equal" if equal else "diverged",
             "stale": not equal and when(updated) < newest} for label, updated, _ in copies]


def _scope_function(workspace: Callable[[], str]) -> Callable[[str, str | None], str]:
    cache: list[str] = []
    explicit = Scope.explicit.value

    def scope(session_id: str, agent_name: str | None) -> str:
        if not session_id.startswith("history_"):
            return explicit
        if not cache:
            cache.append(workspace())  # git runs only when a history id is present
        try:
            return scope_of(session_id, agent_name, cache[0]).value
        except UnicodeEncodeError:
            return Scope.other.value

    return scope


def _matches(row: dict[str, Any], agent: str | None, user: str | None, scope: Scope | None) -> bool:
    return (
        (agent is None or row["agent_name"] == agent)
        and (user is None or row["user_id"] == user)
        and (scope is None or row["scope"] == scope)
    )


def _sort(items: list[Summary], sort: SortKey) -> None:
    """Newest or largest first (stable); the keys taken once, then the positions sorted by them (the same order
    as sorting ``items`` by the same keys, without a Python call per comparison key)."""
    if sort is SortKey.updated or sort is SortKey.created:
        field = "updated_at" if sort is SortKey.updated else "created_at"
        keys = [item[0][field] for item in items]
        keys = [value if isinstance(value, str) else "" for value in keys]  # a missing or odd time sorts last
    elif sort is SortKey.messages:
        keys = [item[0]["message_count"] for item in items]
    else:
        keys = [item[0]["session_id"] for item in items]
    order = sorted(range(len(items)), key=keys.__getitem__, reverse=sort is not SortKey.id)
    items[:] = [items[i] for i in order]
