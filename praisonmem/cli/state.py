"""Per-invocation state shared by every command: the root options, resolved lazily."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:
    from praisonmem.core.paths import Paths


@dataclass
class State:
    home: str | None = None
    memory_dir: str | None = None
    no_color: bool = False
    _paths: Paths | None = field(default=None, repr=False)

    def user_id(self, given: str | None) -> str:
        from praisonmem.core.filememory import sanitise_user_id

        return sanitise_user_id(given if given is not None else "default")

    def provider(self, given: str | None) -> str:
        return given or "file"

    def upsonic_db(self) -> str | None:
        return None

    @property
    def lock_timeout(self) -> float:
        from praisonmem.core import jsonfile

        return jsonfile.LOCK_TIMEOUT

    @property
    def paths(self) -> Paths:
        if self._paths is None:
            from praisonmem.core.paths import resolve

            self._paths = resolve(self.home, self.memory_dir)
        return self._paths


def state_of(ctx: typer.Context) -> State:
    obj = ctx.find_root().obj
    return obj if isinstance(obj, State) else State()
