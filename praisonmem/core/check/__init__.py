"""``praisonmem check``: validate PraisonAI trees without changing anything.

:mod:`.walk` recognises what a path is (a home, a sessions, spill, learn or FileMemory dir, a file) and
reads each file once; :mod:`.rules` says, per kind of file, what the library would do with it (a session
document's keys are the sessions package's own rules); :mod:`.secrets` is ``check --secrets``, the secret rules
of :mod:`praisonmem.core.secrets` over every store.

Names are loaded on first use (:mod:`praisonmem.core.lazy`); a submodule is not part of the API.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from praisonmem.core.lazy import lazy_exports

_EXPORTS = {"walk": ("Finding", "Report", "check", "classify", "default_roots", "run"),
            "secrets": ("SecretLevel", "scan_secrets")}
__getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS)


if TYPE_CHECKING:
    from praisonmem.core.check.secrets import SecretLevel, scan_secrets
    from praisonmem.core.check.walk import Finding, Report, check, classify, default_roots, run
