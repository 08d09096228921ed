"""Secrets in what agents stored: finding them (``check --secrets``, ``session scan``) and replacing them
with ``[REDACTED:<kind>]`` (``session export --redact``, ``session redact``).

:mod:`.rules` is the rule set (documented there, with the scanner each pattern comes from);
:mod:`.walk` applies it to any JSON value (the caller says which strings are sealed: it knows its store's
encryption); :mod:`.scan` is a scan's report. The package imports no store: the scans and the redaction live
with the stores they read and write (:mod:`praisonmem.core.sessions.stores.secretscan`,
:mod:`praisonmem.core.sessions.redaction`, :mod:`praisonmem.core.check.secrets`).

Names are loaded on first use (:mod:`praisonmem.core.lazy`); a submodule is not part of the API.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from praisonmem.core.lazy import lazy_exports

_EXPORTS = {
    "levels": ("Level",),
    "rules": ("RULES", "find", "level_of", "mask"),
    "walk": ("Hit", "Opaque", "hits", "masked", "raw_hits", "redacted"),
    "scan": ("ScanReport", "finding", "read_raw", "scan_quarantined"),
}
__getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS)


if TYPE_CHECKING:
    from praisonmem.core.secrets.levels import Level
    from praisonmem.core.secrets.rules import RULES, find, level_of, mask
    from praisonmem.core.secrets.scan import ScanReport, finding, read_raw, scan_quarantined
    from praisonmem.core.secrets.walk import Hit, Opaque, hits, masked, raw_hits, redacted
