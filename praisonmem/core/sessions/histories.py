"""Which agents have history files here, told by the library's naming rules: the legacy name-only
ones (what ``session adopt`` adopts and ``check`` warns about) and a workspace's. A module of its own, so that
looking (``check``, ``migrate``) loads neither the adoption's writers nor the merge.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from praisonmem.core.errors import PraisonMemError
from praisonmem.core.sessions.stores.locate import open_store
from praisonmem.core.sessions.workspace import agent_name_or_default, history_id, legacy_ids, looks_like_history_id

if TYPE_CHECKING:
    from praisonmem.core.paths import Paths

JSON = "json"  # history files are the JSON directory's: what an Agent with the default store loads


def legacy_sessions(paths: Paths) -> list[tuple[str, list[Any]]]:
    """Every agent with legacy name-only sessions, each with its sessions: a session counts when its
    ``agent_name`` (``agent`` for an unnamed agent, as the library names it) hashes to its name."""
    return _history_groups(paths, lambda name: legacy_ids(name).values())


def workspace_sessions(paths: Paths, workspace: str) -> list[tuple[str, list[Any]]]:
    """Every agent with a history in ``workspace`` (its ``agent_name`` hashes, with that workspace id, to the
    session's name), each with that one session."""
    return _history_groups(paths, lambda name: (history_id(workspace, name),))


def other_workspace_sessions(paths: Paths, workspace: str) -> dict[str, list[Any]]:
    """Each agent's history files that are another workspace's: a history id that is neither ``workspace``'s,
    the global one nor name-only (``session list --scope other``), so the agent ran in another project of this
    home too."""
    def others(name: str) -> _Not:
        return _Not({history_id(workspace, name), history_id("global", name), *legacy_ids(name).values()})

    return dict(_history_groups(paths, others))


class _Not:
    """Every history id but these (``in``, as :func:`_history_groups` asks)."""

    def __init__(self, ids: set[str]) -> None:
        self.ids = ids

    def __contains__(self, session_id: object) -> bool:
        return isinstance(session_id, str) and looks_like_history_id(session_id) and session_id not in self.ids


def _history_groups(paths: Paths, ids_of: Callable[[str], Iterable[str] | _Not]) -> list[tuple[str, list[Any]]]:
    from praisonmem.core.sessions.stores.home import refs_named

    store = open_store(paths, JSON)
    groups: dict[str, list[Any]] = {}
    for ref in refs_named(store, "history_"):  # not store.refs(): it reads every file to leave out the TUI's
        try:
            doc = store.read(ref)
        except PraisonMemError:
            continue
        agent = doc.get("agent_name")
        if agent is not None and not isinstance(agent, str):
            continue
        name = agent_name_or_default(agent)
        if store.name(ref) in ids_of(name):
            groups.setdefault(name, []).append(ref)
    return sorted(groups.items())
