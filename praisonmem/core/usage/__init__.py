"""Usage and cost reports over every session store (``praisonmem usage``): :mod:`.records` reads what one
session records, :mod:`.report` groups and totals them. Read-only.

Names are loaded on first use (:mod:`praisonmem.core.lazy`); a submodule is not part of the API.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from praisonmem.core.lazy import lazy_exports

_EXPORTS = {
    "records": ("SessionUsage", "praisonai_usage", "upsonic_usage"),
    "report": ("GroupBy", "Group", "UsageReport", "parse_date", "usage_report"),
}
__getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS)


if TYPE_CHECKING:
    from praisonmem.core.usage.records import SessionUsage, praisonai_usage, upsonic_usage
    from praisonmem.core.usage.report import GroupBy, Group, UsageReport, parse_date, usage_report
