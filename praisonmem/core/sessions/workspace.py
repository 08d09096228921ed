"""Workspace identity and history ids, computed exactly as praisonaiagents 1.7.17.

An Agent with history and no session id stores its
conversation in ``history_<sha256("<workspace id>:<name>")[:8]>``, where the
workspace id is ``git:<root commit>``, else ``dir:<realpath cwd>``, else
``global``. ``PRAISONAI_GLOBAL_SESSIONS`` (``1``/``true``/``yes``, any case, not
trimmed) swaps the workspace id for ``global``. Legacy name-only ids (sha256,
then md5 of the name) are adopted by the library only in global scope.

Nothing here reads a session file: :func:`choose_history_id` is told which ids exist.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal

from praisonmem.core.errors import UsageError
from praisonmem.core.io.digest import md5_hex, sha256_hex
from praisonmem.core.sessions.scopes import Scope

if TYPE_CHECKING:
    from praisonmem.core.paths import Paths

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
    if not _maybe_in_repository(cwd):
        return None  # what git would say: not a git repository (git itself takes ~10 ms to say it)
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


def _maybe_in_repository(cwd: str) -> bool:
    """``False`` only when git cannot find a repository from ``cwd``: no ``GIT_DIR``, and neither ``cwd`` nor
    any parent holds a ``.git`` entry or is itself a repository (has a ``HEAD``). Git's discovery stops
    earlier (ceiling directories, file-system boundaries, ownership checks), never later."""
    if os.environ.get("GIT_DIR"):
        return True
    path = cwd
    while True:
        if os.path.lexists(os.path.join(path, ".git")) or os.path.lexists(os.path.join(path, "HEAD")):
            return True
        parent = os.path.dirname(path)
        if parent == path:
            return False
        path = parent


@lru_cache(maxsize=None)
def _commit() -> re.Pattern[str]:
    return re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")  # a SHA-1 or SHA-256 repository's commit id (compiled when asked)


def named_workspace(value: str, option: str = "--from-workspace") -> str:
    """The workspace id ``value`` names: ``git:<sha>``, ``dir:<absolute path>`` or ``global`` as given, else a
    directory's id, computed even when it no longer exists (a plain directory's id is just its real path)."""
    if not value:
        raise UsageError(f"{option} must not be empty")
    if value == "global":
        return value
    kind, colon, rest = value.partition(":")
    if colon and kind == "git":
        if not _commit().fullmatch(rest):
            raise UsageError(f"{option} {value}: a git: workspace id is git: and a commit id (40 or 64 hex digits)")
        return value
    if colon and kind == "dir":
        if not os.path.isabs(rest):
            raise UsageError(f"{option} {value}: a dir: workspace id holds an absolute path")
        return value
    return workspace_id(value)


def agent_name_or_default(name: str | None) -> str:
    return name or "agent"


def history_id(workspace: str, name: str | None) -> str:
    """``history_`` + sha256 of ``"<workspace>:<name>"``; ``workspace`` is ``global`` in global scope."""
    digest = sha256_hex(f"{workspace}:{agent_name_or_default(name)}".encode())
    return f"history_{digest[:8]}"


def legacy_ids(name: str | None) -> dict[str, str]:
    """Pre-workspace name-only ids, in the library's adoption order (sha256, then md5)."""
    raw = agent_name_or_default(name).encode()
    return {
        "sha256": f"history_{sha256_hex(raw)[:8]}",
        "md5": f"history_{md5_hex(raw)[:8]}",
    }


HistoryKind = Literal["workspace", "global", "legacy_sha256", "legacy_md5"]


@dataclass(frozen=True)
class HistoryChoice:
    """The session id an Agent with history would use, and why."""

    agent: str
    session_id: str
    kind: HistoryKind
    legacy: dict[str, str]


def choose_history_id(name: str | None, exists: Callable[[str], bool], *, workspace: str,
                      global_scope: bool) -> HistoryChoice:
    """The library's choice between the scoped id and legacy name-only files; ``exists``
    says whether a session with an id is stored."""
    agent = agent_name_or_default(name)
    new_id = history_id("global" if global_scope else workspace, agent)
    legacy = legacy_ids(agent)
    chosen, kind = new_id, "global" if global_scope else "workspace"
    if global_scope and not exists(new_id):
        for algo in ("sha256", "md5"):
            if exists(legacy[algo]):
                chosen, kind = legacy[algo], f"legacy_{algo}"
                break
    return HistoryChoice(agent, chosen, kind, legacy)


def describe(paths: Paths, agent: str | None = None, *, global_scope: bool = False) -> dict[str, Any]:
    """``workspace id``: the workspace id here, and with ``agent`` the history session that agent uses."""
    is_global = global_scope or global_from_env()
    wid = "global" if is_global else workspace_id()
    result: dict[str, Any] = {"workspace_id": wid, "global": is_global}
    if agent is not None:
        from praisonmem.core.sessions.stores.locate import open_store

        store = open_store(paths, "json")  # an Agent's history is in the JSON directory
        choice = choose_history_id(agent, lambda sid: store.exists(store.ref(sid)), workspace=wid,
                                   global_scope=is_global)
        ref = store.ref(choice.session_id)
        result.update(agent=choice.agent, history_id=choice.session_id, path=str(ref), exists=store.exists(ref),
                      legacy_ids=choice.legacy, kind=choice.kind)
    return result


def scope_of(session_id: str, agent_name: str | None, workspace: str) -> Scope:
    """Where a session belongs relative to ``workspace`` (see :class:`Scope`)."""
    if not looks_like_history_id(session_id):
        return Scope.explicit
    if session_id == history_id(workspace, agent_name):
        return Scope.workspace
    if session_id == history_id("global", agent_name):
        return Scope.global_
    if session_id in legacy_ids(agent_name).values():
        return Scope.legacy
    return Scope.other


def looks_like_history_id(session_id: str) -> bool:
    """``history_`` and eight lower-case hex digits: a name the library's history ids take."""
    suffix = session_id[len("history_"):]
    return (
        session_id.startswith("history_")
        and len(suffix) == 8
        and all(c in "0123456789abcdef" for c in suffix)
    )
