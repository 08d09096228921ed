"""``check --secrets``: the secret scan of :mod:`praisonmem.core.secrets` over a home, its memory dir and an
Upsonic database."""

from __future__ import annotations

from typing import Any

from praisonmem.core import secrets
from praisonmem.core.paths import Paths

SecretLevel = secrets.Level


def scan_secrets(paths: Paths, homes: list[str] | None = None, *, level: str = "standard",
                 upsonic_db: str | None = None, timeout: float = 5.0) -> Any:
    """Every secret in ``paths`` (or each of ``homes``) and in the Upsonic database ``upsonic_db``: a
    :class:`praisonmem.core.secrets.ScanReport`."""
    store = None
    if upsonic_db:
        from praisonmem.core import upsonic

        store = upsonic.open_store(upsonic_db, timeout=timeout)
    return secrets.scan_everything(paths, level=level, upsonic=store, homes=homes)
