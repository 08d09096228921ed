"""Secrets in what agents stored: finding them (``check --secrets``, ``session scan``) and replacing them
with ``[REDACTED:<kind>]`` (``session export --redact``, ``session redact``).

:mod:`.rules` is the rule set (documented there, with the scanner each pattern comes from);
:mod:`.walk` applies it to any JSON value; :mod:`.scan` walks the stores. Rewriting sessions with their secrets
redacted, through their stores' own write protocol, is the sessions package's (``sessions.plan_redact``).

Names are loaded on first use (:mod:`praisonmem.core.lazy`); a submodule is not part of the API.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from praisonmem.core.lazy import lazy_exports

_EXPORTS = {
    "levels": ("Level",),
    "rules": ("RULES", "find", "level_of", "mask"),
    "walk": ("Hit", "hits", "masked", "redacted"),
    "scan": ("ScanReport", "scan_everything", "scan_sessions"),
}
__getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS)


if TYPE_CHECKING:
    from praisonmem.core.secrets.levels import Level
    from praisonmem.core.secrets.rules import RULES, find, level_of, mask
    from praisonmem.core.secrets.scan import ScanReport, scan_everything, scan_sessions
    from praisonmem.core.secrets.walk import Hit, hits, masked, redacted
