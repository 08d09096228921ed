"""Forget a person, a session or an agent in every store, with a proof that nothing is left.

:func:`plan_forget` has every store plan (read only), :func:`execute` journals, erases, proves and
looks in the backups (:mod:`.run`); the shapes are :mod:`.model`'s. Names are loaded on first use
(:mod:`praisonmem.core.lazy`); a submodule is not part of the API.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from praisonmem.core.lazy import lazy_exports

_EXPORTS = {
    "model": ("Action", "Erasure", "ForgetStore", "MIN_NEEDLE", "StorePlan", "Subject", "SubjectKind", "Verdict",
              "Verified", "Where"),
    "run": ("Planned", "Result", "execute", "parse_before", "plan_forget", "subject_from"),
}
__getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS)


if TYPE_CHECKING:
    from praisonmem.core.forget.model import (MIN_NEEDLE, Action, Erasure, ForgetStore, StorePlan, Subject,
                                              SubjectKind, Verdict, Verified, Where)
    from praisonmem.core.forget.run import Planned, Result, execute, parse_before, plan_forget, subject_from
