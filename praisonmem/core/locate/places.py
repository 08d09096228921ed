"""Where to look besides the directories given: every PraisonAI home the library could resolve, mem0's
directory, the stores praisonmem's settings and PraisonAI's environment name, and the configured servers.

The home is the first of ``PRAISONAI_HOME``, an existing ``~/.praisonai``, an existing ``~/.praison`` (legacy),
``$XDG_DATA_HOME/praisonai`` (absolute only), ``~/.praisonai`` (:mod:`praisonmem.core.paths`, as praisonaiagents
resolves it). The one resolved now is reachable; every other candidate that exists is ``unreachable``, and the
legacy one, which the library no longer reads once another is chosen, also ``orphan``. A home, a mem0 directory or
a store named by a setting that is not there is ``absent``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from praisonmem.core.locate.model import ORPHAN, UNREACHABLE, Server, command

CONFIGURED_HOME = ("--home", "PRAISONAI_HOME", "config home")
MEM0_ENV, MEM0_DEFAULT, MEM0_HISTORY = "MEM0_DIR", ".mem0", "history.db"
PG_FAMILY = frozenset("postgres postgresql neon cockroachdb crdb cockroach xata async_postgres asyncpg "
                      "postgres_async".split())
MYSQL_FAMILY = frozenset({"mysql", "aiomysql", "async_mysql", "mysql_async"})
SQLITE_FAMILY = frozenset("sqlite sync_sqlite sqlite_sync async_sqlite aiosqlite sqlite_async".split())
CONVERSATION_DEFAULT = "praisonai_conversations.db"


@dataclass(frozen=True)
class Root:
    """A directory to walk as a home or mem0's directory, the flags its stores get, which candidate it is."""

    path: Path
    flags: tuple[str, ...]
    label: str


@dataclass(frozen=True)
class Named:
    """A store a setting names: its path, the kind it would be, where the setting came from."""

    path: Path
    kind: str
    library: str
    source: str


def homes(data: Path, source: str, env: Mapping[str, str], user_home: Path) -> tuple[list[Root], list[Named]]:
    """The home candidates to walk, and the configured home when it is absent."""
    resolved = Path(os.path.abspath(data))
    candidates = [(resolved, "resolved")]
    if env.get("PRAISONAI_HOME"):
        candidates.append((Path(os.path.abspath(Path(env["PRAISONAI_HOME"]).expanduser())), "PRAISONAI_HOME"))
    candidates += [(user_home / ".praisonai", "~/.praisonai"), (user_home / ".praison", "~/.praison")]
    xdg = env.get("XDG_DATA_HOME")
    if xdg and os.path.isabs(xdg):
        candidates.append((Path(xdg) / "praisonai", "XDG_DATA_HOME"))
    roots, absent, seen = [], [], set()
    for path, label in candidates:
        path = Path(os.path.abspath(path))
        if path in seen:
            continue
        seen.add(path)
        if path == resolved:
            if path.is_dir():
                roots.append(Root(path, (), label))
            elif source in CONFIGURED_HOME:
                absent.append(Named(path, "home", "praisonaiagents", source))
            continue
        if not path.is_dir():
            continue
        flags = (UNREACHABLE, ORPHAN) if label == "~/.praison" else (UNREACHABLE,)
        roots.append(Root(path, flags, label))
    return roots, absent


def state_and_memory(paths: object, absent: list[Named]) -> list[Root]:
    """The state dir when it is not the home's own (a fresh XDG install keeps the spill dir there), and a FileMemory
    dir chosen by ``--memory-dir``, ``PRAISONMEM_MEMORY_DIR`` or the config (``absent`` when it is not there)."""
    roots = []
    data = Path(os.path.abspath(paths.data.path))  # type: ignore[attr-defined]
    state = Path(os.path.abspath(paths.state.path))  # type: ignore[attr-defined]
    if state != data and state.is_dir():
        roots.append(Root(state, (), "state dir"))
    memory = paths.memory  # type: ignore[attr-defined]
    if not memory.source.startswith("default"):
        where = Path(os.path.abspath(memory.path))
        if where.is_dir():
            roots.append(Root(where.parent, (), memory.source))  # the walk finds the users under the base
        else:
            absent.append(Named(where, "filememory", "praisonaiagents", memory.source))
    return roots


def mem0(env: Mapping[str, str], user_home: Path) -> tuple[list[Root], list[Named]]:
    """mem0's directory (``$MEM0_DIR``, else ``~/.mem0``) and, when ``MEM0_DIR`` moved it, the default one."""
    default = user_home / MEM0_DEFAULT
    chosen = Path(os.path.abspath(Path(env[MEM0_ENV]).expanduser())) if env.get(MEM0_ENV) else default
    roots, absent = [], []
    if chosen.is_dir():
        roots.append(Root(chosen, (), MEM0_ENV if env.get(MEM0_ENV) else "~/.mem0"))
    if env.get(MEM0_ENV) and not (chosen / MEM0_HISTORY).is_file():
        absent.append(Named(chosen / MEM0_HISTORY, "mem0-history", "mem0", f"env {MEM0_ENV}"))
    if chosen != default and default.is_dir():
        roots.append(Root(default, (UNREACHABLE,), "~/.mem0"))
    return roots, absent


def configured(settings: object, env: Mapping[str, str]) -> tuple[list[Named], list[Server]]:
    """The local stores and the servers that praisonmem's settings (``store``, ``upsonic.db``) and PraisonAI's
    environment (``PRAISONAI_CONVERSATION_STORE``/``_URL``, ``POSTGRES_URL``, ``MYSQL_*``, ``PRAISONAI_STATE_URL``)
    name."""
    files: list[Named] = []
    servers: list[Server] = []
    for key, kind, library in (("store", "session-store", "praisonaiagents"), ("upsonic.db", "upsonic", "upsonic")):
        setting = settings.get(key)  # type: ignore[attr-defined]
        value = setting.value
        if not value or (key == "store" and value in ("json", "sessions.db", "unified", "legacy-run")):
            continue
        if key == "store" and value.startswith("project:") and os.sep not in value:
            continue
        from praisonmem.core.io import pgurl  # only with a store configured (importing it costs ≈ 8 ms)

        where = "config " + key if setting.source == "config" else setting.source
        if pgurl.is_url(value) and not value.lower().startswith("sqlite"):
            servers.append(_server(value, "upsonic" if key == "upsonic.db" else "conversation", where))
            continue
        path = Path(value[len("sqlite:///") - 1:]) if value.lower().startswith("sqlite:///") else Path(value)
        path = Path(os.path.abspath(path.expanduser()))
        guess = "upsonic-sqlite" if key == "upsonic.db" else (
            "session-dir" if not path.suffix or path.is_dir() else "conversation-sqlite")
        files.append(Named(path, guess, "upsonic" if key == "upsonic.db" else library, where))
    _environment(env, files, servers)
    return files, servers


def _environment(env: Mapping[str, str], files: list[Named], servers: list[Server]) -> None:
    _state(env, servers)
    store = (env.get("PRAISONAI_CONVERSATION_STORE") or "").strip().lower()
    url = env.get("PRAISONAI_CONVERSATION_URL")
    url_source = "env PRAISONAI_CONVERSATION_URL"
    if not url and env.get("POSTGRES_URL") and store in PG_FAMILY | {""}:
        url, url_source = env["POSTGRES_URL"], "env POSTGRES_URL"
    if store in MYSQL_FAMILY:
        if not url and env.get("MYSQL_URL"):
            url, url_source = env["MYSQL_URL"], "env MYSQL_URL"
        if not url:
            url, url_source = _mysql_from_parts(env), "env MYSQL_HOST/MYSQL_PORT/MYSQL_USER/MYSQL_DATABASE"
    if store == "json":  # JSONConversationStore: a directory, ./praisonai_conversations by default
        path = Path(os.path.abspath(Path(url or "praisonai_conversations").expanduser()))
        files.append(Named(path, "conversation-json", "praisonai",
                           url_source if url else "env PRAISONAI_CONVERSATION_STORE"))
        return
    if store in SQLITE_FAMILY:
        value = url or CONVERSATION_DEFAULT
        path = Path(value[len("sqlite:///") - 1:]) if value.lower().startswith("sqlite:///") else Path(value)
        files.append(Named(Path(os.path.abspath(path.expanduser())), "conversation-sqlite", "praisonai",
                           url_source if url else "env PRAISONAI_CONVERSATION_STORE"))
        return
    if url:
        servers.append(_server(url, "conversation", url_source))


def _state(env: Mapping[str, str], servers: list[Server]) -> None:
    """praisonai's state store: ``PRAISONAI_STATE_URL``, else ``REDIS_URL`` when ``PRAISONAI_STATE_STORE`` names
    Redis or Valkey."""
    store = (env.get("PRAISONAI_STATE_STORE") or "").strip().lower()
    if env.get("PRAISONAI_STATE_URL"):
        servers.append(_server(env["PRAISONAI_STATE_URL"], "state", "env PRAISONAI_STATE_URL"))
    elif store in ("redis", "valkey") and env.get("REDIS_URL"):
        servers.append(_server(env["REDIS_URL"], "state", "env REDIS_URL"))


def _mysql_from_parts(env: Mapping[str, str]) -> str:
    from urllib.parse import quote

    user = quote(env.get("MYSQL_USER") or "root", safe="")
    password = env.get("MYSQL_PASSWORD")
    auth = f"{user}:{quote(password, safe='')}" if password else user
    host = env.get("MYSQL_HOST") or "localhost"
    port = env.get("MYSQL_PORT") or "3306"
    return f"mysql://{auth}@{host}:{port}/{env.get('MYSQL_DATABASE') or 'praisonai'}"


def scheme(url: str) -> str:
    head = url.split("://", 1)[0].lower()
    base = head.split("+", 1)[0]
    return {"postgres": "postgresql"}.get(base, base)


def _server(url: str, role: str, source: str) -> Server:
    from praisonmem.core.io import pgurl

    pgurl.remember(url)  # its password is masked in every later message, whole
    kind = scheme(url)
    shown = pgurl.redact(url)
    library = "upsonic" if role == "upsonic" else "praisonai"
    reach: str | None
    if role == "upsonic" and kind in ("postgresql", "redis", "rediss"):
        reach = command("upsonic", "sessions", "--db", shown)
    elif role == "conversation" and kind in ("postgresql", "mysql"):
        reach = command("session", "list", "--store", shown)
    elif role == "state" and kind in ("redis", "rediss"):
        reach = command("state", "list", "--store", shown)
    else:
        reach = None
    return Server(shown, f"{role}-{kind}", library, source, reach, _url=url)
