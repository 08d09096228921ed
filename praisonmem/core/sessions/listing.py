"""``session list``: every session summarised, filtered, sorted and cut (read-only).

Unreadable sessions are listed first with their reason, never skipped silently; the
scope of each session says where it belongs relative to the current workspace
(:class:`~praisonmem.core.sessions.workspace.Scope`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from praisonmem.core.paths import Paths
from praisonmem.core.sessions.documents import summarise, unreadable_row
from praisonmem.core.sessions.stores import Scanned, open_store
from praisonmem.core.sessions.stores.praisonai_cli import UNIFIED, last_session
from praisonmem.core.sessions.workspace import Scope, scope_of


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
    project: Any = None  # the current directory's praisonai CLI project (a ProjectIdentity), if it has a store


def summary_rows(item: Scanned) -> list[dict[str, Any]]:
    """The ``session list`` row of one session (runs in a worker process for large directories)."""
    if item.doc is None:
        assert item.error is not None
        return [{**unreadable_row(item.where, item.error), "store": item.store}]
    return [{**summarise(item.doc, session_id=item.session_id, file=item.where), "store": item.store}]


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
    progress: Callable[[int, int], None] | None = None,
) -> ListResult:
    """Summaries of every session, filtered, sorted and cut to ``limit`` (0 = all).

    Unreadable files are listed first with their reason (never skipped silently)
    and do not count against ``limit``; when filters are given they cannot be
    matched, so they are counted in ``hidden_unreadable`` instead.
    """
    wanted = choice(Scope, scope, "scope")
    order = choice(SortKey, sort, "sort key")
    store = open_store(paths)
    scope_fn = _scope_function(workspace)
    rows: list[dict[str, Any]] = []
    bad: list[dict[str, Any]] = []
    waiting = None
    project, current = _current_project(store)
    last = last_session(paths.sessions_dir)
    for row in store.scan(summary_rows, progress=progress):
        row["current_project"] = row["store"] == current
        row["last_session"] = row["store"] == UNIFIED and row["session_id"] == last
        if row["unreadable"]:
            bad.append(row)
            continue
        waiting = store.spill_counts() if waiting is None else waiting
        agent_name = row["agent_name"] if isinstance(row["agent_name"], str) else None
        row["scope"] = scope_fn(row["session_id"], agent_name)
        row["spilled_count"] = waiting.get(row["session_id"], 0)
        if _matches(row, agent, user, wanted):
            rows.append(row)
    _sort_rows(rows, order)
    total = len(rows)
    if limit:
        rows = rows[:limit]
    missing = store.absent()
    if agent is not None or user is not None or wanted is not None:
        return ListResult(rows, total, hidden_unreadable=len(bad), unreadable=len(bad), missing=missing,
                          project=project)
    return ListResult(bad + rows, total, unreadable=len(bad), missing=missing, project=project)


def _current_project(store: Any) -> tuple[Any, str | None]:
    """The praisonai CLI project of the current directory and its store's label, when the home holds that store
    (its id is computed only then: it runs git)."""
    labels = {getattr(s, "label", None) for s in getattr(store, "stores", [])}
    if not any(isinstance(label, str) and label.startswith("project:") for label in labels):
        return None, None
    project = store.current_project()
    label = f"project:{project.project_id}" if project is not None else None
    return (project, label) if label in labels else (None, None)


def _scope_function(workspace: Callable[[], str]) -> Callable[[str, str | None], str]:
    cache: list[str] = []

    def scope(session_id: str, agent_name: str | None) -> str:
        if not session_id.startswith("history_"):
            return Scope.explicit.value
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


def _sort_rows(rows: list[dict[str, Any]], sort: SortKey) -> None:
    def text(value: Any) -> str:
        return value if isinstance(value, str) else ""

    if sort is SortKey.updated:
        rows.sort(key=lambda r: text(r["updated_at"]), reverse=True)
    elif sort is SortKey.created:
        rows.sort(key=lambda r: text(r["created_at"]), reverse=True)
    elif sort is SortKey.messages:
        rows.sort(key=lambda r: r["message_count"], reverse=True)
    else:
        rows.sort(key=lambda r: r["session_id"])
