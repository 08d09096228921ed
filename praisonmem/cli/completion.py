"""Shell completion: the values offered on Tab (session ids and memory user ids from the resolved paths, memory
types, providers). The scripts themselves come from :func:`praisonmem.cli.app.completion_script`.

Shells call these while the user presses Tab: they must be quick, quiet and
never fail. During completion Click parses without running callbacks, so the
root options are read from the root context's raw params.
"""

from __future__ import annotations

from typing import Any


def _paths(ctx: Any):
    """The paths the command would use: --home/--memory-dir, then environment, then config."""
    from praisonmem.cli.state import State

    root = ctx.find_root() if ctx is not None else None
    params = getattr(root, "params", {}) or {}
    return State(home=params.get("home"), memory_dir=params.get("memory_dir")).paths


def sessions(ctx: Any, incomplete: str) -> list[str]:
    try:
        from praisonmem.core.sessions import open_store

        store = open_store(_paths(ctx))
        names = dict.fromkeys(map(store.name, store.refs()))  # a session two stores hold is offered once
        return [name for name in names if name.startswith(incomplete)][:200]
    except Exception:  # completion must never break the shell
        return []


def stores(ctx: Any, incomplete: str) -> list[str]:
    """``--store``'s values: the labels of the stores the home has (json, sessions.db, project:<id>, unified,
    legacy-run: each only when it holds sessions, json always)."""
    try:
        from praisonmem.core.sessions import held_stores, open_store

        return [label for label in held_stores(open_store(_paths(ctx))) if label.startswith(incomplete)]
    except Exception:
        return []


def memory_types(ctx: Any, incomplete: str) -> list[str]:
    return [t for t in ("short", "long", "entity", "episodic", "summary") if t.startswith(incomplete)]


def providers(ctx: Any, incomplete: str) -> list[str]:
    try:
        from praisonmem.core.memory import provider_names

        return [name for name in provider_names() if name.startswith(incomplete)]
    except Exception:
        return []


def users(ctx: Any, incomplete: str) -> list[str]:
    try:
        from praisonmem.core.memory import file_users

        return [u for u in file_users(_paths(ctx).memory_dir, legacy=False) if u.startswith(incomplete) and u != "."]
    except Exception:
        return []
