"""Per-invocation state shared by every command: the root options and the settings
(flag > environment > config file > default), resolved lazily."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import typer

if TYPE_CHECKING:
    from praisonmem.core.config import Settings
    from praisonmem.core.paths import Paths


@dataclass
class State:
    home: str | None = None
    memory_dir: str | None = None
    no_color: bool = False
    lock_timeout_flag: float | None = None
    _paths: Paths | None = field(default=None, repr=False)
    _settings: Settings | None = field(default=None, repr=False)

    @property
    def settings(self) -> Settings:
        if self._settings is None:
            from praisonmem.core.config import Settings

            self._settings = Settings()
        return self._settings

    def setting(self, key: str, flag: Any = None) -> Any:
        return self.settings.get(key, flag).value

    @property
    def paths(self) -> Paths:
        if self._paths is None:
            from praisonmem.core.paths import resolve

            config_home = config_memory = None
            if self.home is None and not self.settings.env.get("PRAISONAI_HOME"):
                config_home = self.settings.file.get("home")
            if self.memory_dir is None and not self.settings.env.get("PRAISONMEM_MEMORY_DIR"):
                config_memory = self.settings.file.get("memory_dir")
            self._paths = resolve(self.home, self.memory_dir, env=self.settings.env, config_home=config_home,
                                  config_memory_dir=config_memory)
        return self._paths

    def user_id(self, given: str | None) -> str:
        from praisonmem.core.memory.filememory import sanitise_user_id

        return sanitise_user_id(self.setting("user_id", given))

    def provider(self, given: str | None) -> str:
        return self.setting("provider", given)

    def upsonic_db(self) -> str | None:
        return self.setting("upsonic.db")

    @property
    def lock_timeout(self) -> float:
        return self.setting("lock_timeout", self.lock_timeout_flag)


def state_of(ctx: typer.Context) -> State:
    obj = ctx.find_root().obj
    return obj if isinstance(obj, State) else State()
