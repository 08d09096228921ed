"""The scopes of :func:`~praisonmem.core.sessions.workspace.scope_of`, in a module of their own: the CLI declares
``--scope`` for its session commands without loading the workspace rules."""

from __future__ import annotations

from enum import StrEnum


class Scope(StrEnum):
    """Where a session belongs relative to the current workspace (``session list --scope``)."""

    workspace = "workspace"  # the current workspace's history id for its agent
    global_ = "global"  # the global-scope id (PRAISONAI_GLOBAL_SESSIONS)
    legacy = "legacy"  # a name-only id from before workspace scoping
    other = "other"  # a history id of another workspace
    explicit = "explicit"  # not a history id at all
