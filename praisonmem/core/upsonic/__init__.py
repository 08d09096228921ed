"""Upsonic 0.77.3's SqliteStorage (sessions and user memory) over plain sqlite3, never unpickling.

The commands: :mod:`.store` (``open_store``, the ``Store`` readers, ``edit_user_memory``) and
:mod:`.transfer` (``export_to``, ``plan_import``, ``plan_convert``); :mod:`.convert` maps messages
between Upsonic's pydantic-ai parts and PraisonAI sessions (``parts`` for showing them).

Names are loaded on first use (PEP 562); a submodule is not part of the API.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS = {
    "store": ("UPSONIC_VERSION", "SessionType", "Store", "decode", "edit_user_memory", "open_store", "parse_value",
              "session_ddl", "user_memory_ddl"),
    "transfer": ("export", "export_to", "plan_convert", "plan_import", "read_export", "run_import",
                 "write_converted"),
    "convert": ("from_praisonai", "opaque", "parts", "to_praisonai"),
}
_WHERE = {name: (module, name) for module, names in _EXPORTS.items() for name in names}

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, attribute = _WHERE[name]
    value = getattr(importlib.import_module(f"{__name__}.{module}"), attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__


if TYPE_CHECKING:
    from praisonmem.core.upsonic.convert import from_praisonai, opaque, parts, to_praisonai
    from praisonmem.core.upsonic.store import (UPSONIC_VERSION, SessionType, Store, decode, edit_user_memory,
                                               open_store, parse_value, session_ddl, user_memory_ddl)
    from praisonmem.core.upsonic.transfer import (export, export_to, plan_convert, plan_import, read_export,
                                                  run_import, write_converted)
