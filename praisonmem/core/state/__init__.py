"""praisonai's state store in Redis (``RedisStateStore``, ``PraisonAIDB(state_url=…)``): runs, traces, spans,
agent records and whatever else its users keep under ``praison:``.

:mod:`.model` names the keys and decodes the values as the library reads them; :mod:`.redis` reads and writes
the server (``SCAN``, never ``KEYS``; compare-and-delete under ``WATCH``; TTLs kept); :mod:`.ops` holds the
commands, one function each (``list_keys``, ``show_key``, ``plan_delete``, ``export_to``, ``plan_import``).

Names are loaded on first use (:mod:`praisonmem.core.lazy`); a submodule is not part of the API.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from praisonmem.core.lazy import lazy_exports

_EXPORTS = {
    "model": ("DEFAULT_PREFIX", "Kind", "KindFilter", "StateKey", "decode_hash", "decode_string"),
    "ops": ("EXPORT_FORMAT", "export_to", "list_keys", "plan_delete", "plan_import", "read_export", "show_key"),
}
__getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS)


if TYPE_CHECKING:
    from praisonmem.core.state.model import DEFAULT_PREFIX, Kind, KindFilter, StateKey, decode_hash, decode_string
    from praisonmem.core.state.ops import (EXPORT_FORMAT, export_to, list_keys, plan_delete, plan_import,
                                           read_export, show_key)
