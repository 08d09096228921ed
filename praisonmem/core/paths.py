"""Where PraisonAI keeps its files, resolved exactly as praisonaiagents 1.7.17 does.

The data dir is the first rule that applies: ``--home``, then
``$PRAISONAI_HOME`` (``expanduser`` only: a relative value stays relative to the
cwd), then an existing ``~/.praisonai``, an existing ``~/.praison`` (legacy),
``$XDG_DATA_HOME/praisonai`` (only when absolute), and finally ``~/.praisonai``.
The state dir (which holds the spill dir) shares that root when one is
explicitly chosen or already exists, and follows XDG otherwise. FileMemory does
**not** live under the data dir: the library writes ``<cwd>/.praisonai/memory``.

Every resolved path carries the rule that chose it, so ``workspace paths`` can
say why a path is what it is.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from praisonmem.core import layout
from praisonmem.core.errors import UsageError

APP_NAME = "praisonmem"
DEFAULT_DIR_NAME = ".praisonai"
LEGACY_DIR_NAME = ".praison"
XDG_APP_NAME = "praisonai"


@dataclass(frozen=True)
class Resolved:
    """A path and the rule that chose it."""

    path: Path
    source: str


@dataclass(frozen=True)
class Paths:
    """The PraisonAI data dir, its state dir and the FileMemory base dir, each with its rule."""

    data: Resolved
    state: Resolved
    memory: Resolved

    @property
    def sessions_dir(self) -> Path:
        return self.data.path / layout.SESSIONS

    @property
    def spill_dir(self) -> Path:
        return self.state.path.joinpath(*layout.SPILL_DIR)

    @property
    def learn_dir(self) -> Path:
        return self.data.path / layout.LEARN

    @property
    def memory_dir(self) -> Path:
        return self.memory.path

    @property
    def project_dir(self) -> Path:
        """``<cwd>/.praisonai``: where the SQLite memory files live beside FileMemory."""
        return self.memory.path.parent

    def absent_memory(self) -> str | None:
        """Where FileMemory was looked for, when nothing is there (a newcomer runs a memory command outside the
        project: the library writes FileMemory under the project, not the home)."""
        if self.memory.path.is_dir():
            return None
        return (f"no FileMemory directory at {_display(self.memory.path)} ({self.memory.source}); FileMemory "
                "lives in the project that wrote it: run there, or give --memory-dir")

    def rows(self) -> list[dict[str, object]]:
        """Every resolved path, the rule that chose it, and whether it exists."""
        entries = [
            ("data_dir", self.data.path, self.data.source),
            ("sessions_dir", self.sessions_dir, f"<data_dir>/sessions ({self.data.source})"),
            ("state_dir", self.state.path, self.state.source),
            ("spill_dir", self.spill_dir, f"<state_dir>/state/session_spill ({self.state.source})"),
            ("learn_dir", self.learn_dir, f"<data_dir>/learn ({self.data.source})"),
            ("memory_dir", self.memory_dir, self.memory.source),
            ("sqlite_memory_dir", self.project_dir, f"parent of memory_dir ({self.memory.source})"),
        ]
        return [
            {"name": name, "path": _display(path), "source": source, "exists": path.exists()}
            for name, path, source in entries
        ]

    def require_home(self) -> None:
        """Refuse a data dir (or sessions dir) that exists but is not a directory."""
        for what, path in (("home", self.data.path), ("sessions dir", self.sessions_dir)):
            if path.exists() and not path.is_dir():
                raise UsageError(f"{what} {_display(path)} is not a directory ({self.data.source})")


def _display(path: Path) -> str:
    # Relative paths are relative to the cwd, as in the library; show where they land.
    return os.path.abspath(path)


def resolve(
    home: str | os.PathLike[str] | None = None,
    memory_dir: str | os.PathLike[str] | None = None,
    *,
    env: Mapping[str, str] | None = None,
    user_home: Path | None = None,
    config_home: str | None = None,
    config_memory_dir: str | None = None,
) -> Paths:
    """Resolve the PraisonAI paths for one invocation.

    ``env`` and ``user_home`` default to the process environment and ``~``;
    ``config_*`` come from praisonmem's config file. Precedence is flag >
    environment (``PRAISONAI_HOME``, ``PRAISONMEM_MEMORY_DIR``) > config > the
    library's own rules.
    """
    env = os.environ if env is None else env
    user_home = Path.home() if user_home is None else user_home
    data, single_root = _data_dir(home, env, user_home, config_home)
    state = _state_dir(data, single_root, env, user_home)
    memory = _memory_dir(memory_dir, env.get("PRAISONMEM_MEMORY_DIR"), config_memory_dir)
    return Paths(data=data, state=state, memory=memory)


def _data_dir(
    home: str | os.PathLike[str] | None,
    env: Mapping[str, str],
    user_home: Path,
    config_home: str | None,
) -> tuple[Resolved, bool]:
    if home is not None and str(home) != "":
        return Resolved(expand_user(home, "--home"), "--home"), True
    env_home = env.get("PRAISONAI_HOME")
    if env_home:
        return Resolved(expand_user(env_home, "PRAISONAI_HOME"), "PRAISONAI_HOME"), True
    if config_home:
        return Resolved(expand_user(config_home, "config home"), "config home"), True
    new_path = user_home / DEFAULT_DIR_NAME
    if new_path.exists():
        return Resolved(new_path, "existing ~/.praisonai"), True
    legacy = user_home / LEGACY_DIR_NAME
    if legacy.exists():
        return Resolved(legacy, "existing ~/.praison (legacy)"), True
    xdg = env.get("XDG_DATA_HOME")
    if xdg and os.path.isabs(xdg):
        return Resolved(Path(xdg) / XDG_APP_NAME, "XDG_DATA_HOME"), False
    return Resolved(new_path, "default ~/.praisonai"), False


def _state_dir(data: Resolved, single_root: bool, env: Mapping[str, str], user_home: Path) -> Resolved:
    if single_root:
        return Resolved(data.path, f"same root as data_dir ({data.source})")
    xdg = env.get("XDG_STATE_HOME")
    if xdg and os.path.isabs(xdg):
        return Resolved(Path(xdg) / XDG_APP_NAME, "XDG_STATE_HOME")
    return Resolved(user_home / ".local" / "state" / XDG_APP_NAME, "default ~/.local/state/praisonai")


def _memory_dir(memory_dir: str | os.PathLike[str] | None, env_memory_dir: str | None,
                config_memory_dir: str | None) -> Resolved:
    if memory_dir is not None and str(memory_dir) != "":
        return Resolved(expand_user(memory_dir, "--memory-dir"), "--memory-dir")
    if env_memory_dir:
        return Resolved(expand_user(env_memory_dir, "PRAISONMEM_MEMORY_DIR"), "PRAISONMEM_MEMORY_DIR")
    if config_memory_dir:
        return Resolved(expand_user(config_memory_dir, "config memory_dir"), "config memory_dir")
    return Resolved(Path(DEFAULT_DIR_NAME) / layout.MEMORY, "default ./.praisonai/memory (project dir, as the library writes)")


def expand_user(path: str | os.PathLike[str], source: str = "") -> Path:
    """``Path(path).expanduser()``; ``~nosuchuser/x`` is a usage error naming where the path came from."""
    try:
        return Path(path).expanduser()
    except RuntimeError as exc:  # pathlib's "Could not determine home directory"
        user = os.fspath(path).split("/", 1)[0]
        raise UsageError(f"{source + ': ' if source else ''}cannot expand {os.fspath(path)!r}: "
                         f"no home directory for {user!r}") from exc


XDG_USER_DIRS = {"config": ("XDG_CONFIG_HOME", ".config"), "cache": ("XDG_CACHE_HOME", ".cache")}


def default_backup_dir() -> Path:
    """Where backups go when neither ``-o`` nor the config's ``backup.dir`` says: platformdirs' user data dir."""
    import platformdirs

    return Path(platformdirs.user_data_dir(APP_NAME)) / "backups"


def user_dir(kind: str, env: Mapping[str, str] | None = None) -> Path:
    """praisonmem's own ``config`` or ``cache`` directory: platformdirs' ``user_<kind>_dir("praisonmem")``.

    On Linux and the BSDs that is the XDG rule (``$XDG_<KIND>_HOME`` when absolute, else
    ``$HOME/.<kind>``), computed here without importing platformdirs (a few ms on every command);
    anything else (macOS, Windows, Android, a relative or unset ``HOME``) asks platformdirs.
    """
    env = os.environ if env is None else env
    variable, default = XDG_USER_DIRS[kind]
    xdg, home = env.get(variable, ""), env.get("HOME", "")
    if _plain_unix(env):
        if os.path.isabs(xdg):
            return Path(xdg) / APP_NAME
        if not xdg and os.path.isabs(home):
            return Path(home) / default / APP_NAME
    import platformdirs

    return Path(platformdirs.user_config_dir(APP_NAME) if kind == "config" else platformdirs.user_cache_dir(APP_NAME))


def _plain_unix(env: Mapping[str, str]) -> bool:
    """Where platformdirs uses its Unix (XDG) rules: not Windows, macOS, iOS or an Android app."""
    if sys.platform in ("win32", "cygwin", "darwin", "ios") or hasattr(sys, "getandroidapilevel"):
        return False
    return not (env.get("ANDROID_DATA") == "/data" and env.get("ANDROID_ROOT") == "/system")
