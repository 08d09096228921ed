"""``praisonmem locate``: every store PraisonAI, praisonai, Upsonic and mem0 wrote on this machine, found by its
content (:mod:`.sqlitekind` by tables, :mod:`.sniff` by a JSON document's first bytes) in a bounded walk that
follows no link (:mod:`.walk`), in every home the library could resolve and in mem0's directory (:mod:`.places`),
with the configured servers (:mod:`.servers` checks them on ``--connect``). Read-only.

Names are loaded on first use (:mod:`praisonmem.core.lazy`); a submodule is not part of the API.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from praisonmem.core.lazy import lazy_exports

_EXPORTS = {
    "model": ("FLAGS", "Report", "Server", "Skipped", "Store"),
    "run": ("DEFAULT_DEPTH", "locate"),
}
__getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS)


if TYPE_CHECKING:
    from praisonmem.core.locate.model import FLAGS, Report, Server, Skipped, Store
    from praisonmem.core.locate.run import DEFAULT_DEPTH, locate
