"""Workspace identity and history ids, computed exactly as praisonaiagents 1.7.17.

Spec §3 and §2.1. An Agent with history and no session id stores its
conversation in ``history_<sha256("<workspace id>:<name>")[:8]>``, where the
workspace id is ``git:<root commit>``, else ``dir:<realpath cwd>``, else
``global``. ``PRAISONAI_GLOBAL_SESSIONS`` (``1``/``true``/``yes``, any case, not
trimmed) swaps the workspace id for ``global``. Legacy name-only ids (sha256,
then md5 of the name) are adopted by the library only in global scope.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

GLOBAL_ENV = "PRAISONAI_GLOBAL_SESSIONS"
GLOBAL_VALUES = ("1", "true", "yes")
GIT_TIMEOUT = 2.0


def is_global(value: str | None) -> bool:
    """The library's test of ``PRAISONAI_GLOBAL_SESSIONS``: lower-cased, never stripped."""
    return (value or "").lower() in GLOBAL_VALUES


def global_from_env(env: Mapping[str, str] | None = None) -> bool:
    env = os.environ if env is None else env
    return is_global(env.get(GLOBAL_ENV, ""))


def workspace_id(cwd: str | os.PathLike[str] | None = None) -> str:
    """``git:<oldest root commit>``, else ``dir:<realpath cwd>``, else ``global``."""
    try:
        real = os.path.realpath(os.getcwd() if cwd is None else os.fspath(cwd))
    except OSError:
        return "global"
    return _resolve(real)


@lru_cache(maxsize=None)
def _resolve(real_cwd: str) -> str:
    root = _git_root_commit(real_cwd)
    return f"git:{root}" if root else f"dir:{real_cwd}"


def _git_root_commit(cwd: str) -> str | None:
    import subprocess  # only commands that need a workspace id pay for it

    try:
        result = subprocess.run(
            ["git", "rev-list", "--max-parents=0", "HEAD"],
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT,
            check=False,
            cwd=cwd,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if result.returncode != 0:
        return None
    # rev-list prints newest root first; the library takes the last line.
    lines = [line.strip() for line in result.stdout.splitlines() if line.strip()]
    return lines[-1] if lines else None


def agent_name_or_default(name: str | None) -> str:
    return name or "agent"


def history_id(workspace: str, name: str | None) -> str:
    """``history_`` + sha256 of ``"<workspace>:<name>"``; ``workspace`` is ``global`` in global scope."""
    digest = hashlib.sha256(f"{workspace}:{agent_name_or_default(name)}".encode()).hexdigest()
    return f"history_{digest[:8]}"


def legacy_ids(name: str | None) -> dict[str, str]:
    """Pre-workspace name-only ids, in the library's adoption order (sha256, then md5)."""
    raw = agent_name_or_default(name).encode()
    return {
        "sha256": f"history_{hashlib.sha256(raw).hexdigest()[:8]}",
        "md5": f"history_{hashlib.md5(raw).hexdigest()[:8]}",
    }


@dataclass(frozen=True)
class HistoryChoice:
    """The session id an Agent with history would use, and why."""

    agent: str
    workspace_id: str
    is_global: bool
    new_id: str
    session_id: str
    kind: str  # "workspace" | "global" | "legacy_sha256" | "legacy_md5"
    legacy: dict[str, str]


def choose_history_id(
    name: str | None, sessions_dir: Path, *, workspace: str, global_scope: bool
) -> HistoryChoice:
    """The library's choice between the scoped id and legacy name-only files (spec §3)."""
    agent = agent_name_or_default(name)
    scope_id = "global" if global_scope else workspace
    new_id = history_id(scope_id, agent)
    legacy = legacy_ids(agent)
    chosen, kind = new_id, "global" if global_scope else "workspace"
    if not (sessions_dir / f"{new_id}.json").exists() and global_scope:
        for algo in ("sha256", "md5"):
            if (sessions_dir / f"{legacy[algo]}.json").exists():
                chosen, kind = legacy[algo], f"legacy_{algo}"
                break
    return HistoryChoice(agent, workspace, global_scope, new_id, chosen, kind, legacy)


def safe_file_stem(session_id: str) -> str:
    """The library's session-id → file-name rule: keep ``str.isalnum()`` and ``-_``."""
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in session_id)


def session_file_name(session_id: str) -> str:
    return f"{safe_file_stem(session_id)}.json"


def scope_of(session_id: str, agent_name: str | None, workspace: str) -> str:
    """Where a session belongs relative to ``workspace`` (see the CLI contract).

    ``workspace``: the current workspace's history id for its agent; ``global``:
    the global-scope id; ``legacy``: a name-only id; ``other``: a history id of
    another workspace; ``explicit``: not a history id at all.
    """
    if not _looks_like_history_id(session_id):
        return "explicit"
    if session_id == history_id(workspace, agent_name):
        return "workspace"
    if session_id == history_id("global", agent_name):
        return "global"
    if session_id in legacy_ids(agent_name).values():
        return "legacy"
    return "other"


def _looks_like_history_id(session_id: str) -> bool:
    suffix = session_id[len("history_"):]
    return (
        session_id.startswith("history_")
        and len(suffix) == 8
        and all(c in "0123456789abcdef" for c in suffix)
    )
