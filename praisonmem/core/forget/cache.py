"""``forget`` in praisonmem's own cache: the entries derived from the subject's records.

The cache is never the only copy of anything (:mod:`praisonmem.core.io.cache`), so an entry goes whenever it may
hold the subject: its source is a file another store's plan lists (a FileMemory tier's search index, a session
directory's list), or its bytes hold the subject's id or any text the other plans will erase (compared in lower
case and as JSON escapes them, as the entries keep them). The next command rebuilds what it needs.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from praisonmem.core.forget.model import Action, Erasure, ForgetStore, StorePlan, Subject, Where


class CacheForget:
    """praisonmem's cache directory; ``siblings`` are the stores whose plans say what the subject's records hold."""

    store = "praisonmem-cache"

    def __init__(self, cache: Any, siblings: Sequence[ForgetStore]) -> None:
        self.cache = cache
        self.siblings = list(siblings)
        self.location = str(cache.directory) if cache.directory is not None else ""

    @classmethod
    def of(cls, where: Where, siblings: Sequence[ForgetStore]) -> CacheForget:
        from praisonmem.core.io.cache import Cache

        cache = where.cache
        if cache is None:
            directory = os.environ.get("PRAISONMEM_CACHE_DIR")
            cache = Cache(directory) if directory else Cache.default()
        return cls(cache, siblings)

    def residue(self, needles: Sequence[str]) -> list[str] | None:
        return []  # a store of files says nothing beyond them: the proof scans their bytes (none: nothing to hold)

    def _marks(self, subject: Subject) -> tuple[set[str], list[bytes]]:
        """The files the other plans list (and their directories), and the byte forms of what they erase."""
        sources: set[str] = set()
        texts = {subject.value}
        for store in self.siblings:
            plan = store.plan(subject)
            for path in plan.files:
                sources |= {os.path.abspath(path), os.path.abspath(Path(path).parent)}
            if plan.erasures:
                sources.add(os.path.abspath(store.location))
            texts |= {t for e in plan.erasures for t in e.texts}
        forms = set()
        for text in filter(None, texts):
            low = text.lower()
            forms |= {low.encode("utf-8"), json.dumps(low, ensure_ascii=True)[1:-1].encode("ascii")}
        return sources, sorted(forms)

    def plan(self, subject: Subject) -> StorePlan:
        plan = StorePlan(self.store, self.location)
        entries = self.cache.listing()
        if not entries:
            return plan
        sources, forms = self._marks(subject)
        for kind, name, source, data in entries:
            low = data.lower()
            if (source is not None and os.path.abspath(source) in sources) or any(f in low for f in forms):
                plan.erasures.append(Erasure(f"{kind}/{name}", f"cache entry {kind}/{name}"
                                             + (f" (of {source})" if source else ""), Action.remove))
                plan.files.append(Path(self.location) / kind / name)
        return plan

    def erase(self, plan: StorePlan) -> int:
        done = 0
        for erasure in plan.erasures:
            kind, _, name = erasure.key.partition("/")
            done += self.cache.remove(kind, name)
        return done
