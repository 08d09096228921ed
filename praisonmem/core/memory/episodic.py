"""The ``episodic`` commands: dated episodes, one FileMemory file per local day.

"Today" is the local date (:func:`praisonmem.core.io.timeutil.local_now`), as the library's
``get_episodic``/``delete_episodic`` windows count it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from praisonmem.core.errors import NotFound, UsageError
from praisonmem.core.io import jsonfile
from praisonmem.core.memory.filememory import FileMemoryStore, local_dates, normalise_date, normalised_item
from praisonmem.core.memory.ops import check_importance
from praisonmem.core.paths import Paths
from praisonmem.core.result import Action, Change, Outcome, Plan

if TYPE_CHECKING:
    from praisonmem.core.io.cache import Cache

GET_DAYS = 7  # get_episodic(days_back=7)


def add_episode(paths: Paths, user_id: str | None, text: str, *, date: str | None = None,
                importance: float | None = None, metadata: dict[str, Any] | None = None,
                timeout: float = jsonfile.LOCK_TIMEOUT, cache: Cache | None = None) -> Outcome:
    """``episodic add``: an episode for ``date`` (default today); its record holds the date and the item."""
    if not text.strip():
        raise UsageError("the episode text must not be empty")
    check_importance(importance)
    store = FileMemoryStore(paths.memory_dir, user_id, timeout=timeout, cache=cache)
    day, item = store.add_episodic(text, date, metadata, 0.5 if importance is None else importance)
    return Outcome([Change(Action.added, item["id"], fields={"date": day, "item": item})])


def episodes(paths: Paths, user_id: str | None, *, date: str | None = None, days_back: int | None = None,
             timeout: float = jsonfile.LOCK_TIMEOUT) -> list[dict[str, Any]]:
    """``episodic get``: the episodes of one day, or of today and the ``days_back - 1`` days before."""
    if date is not None and days_back is not None:
        raise UsageError("give --date or --days-back, not both")
    store = FileMemoryStore(paths.memory_dir, user_id, timeout=timeout)
    days = [normalise_date(date)] if date is not None else local_dates(days_back or GET_DAYS)
    return [{"date": day, "item": normalised_item(item)} for day in days for item in store.episodes(day)]


def plan_delete_episode(paths: Paths, user_id: str | None, memory_id: str, *, date: str | None = None,
                        timeout: float = jsonfile.LOCK_TIMEOUT, cache: Cache | None = None) -> Plan:
    """``episodic delete``: found first on ``date``, or without it today and the 29 days before."""
    store = FileMemoryStore(paths.memory_dir, user_id, timeout=timeout, cache=cache)
    day = store.find_episode(memory_id, date)

    def run(dry_run: bool, progress: Any) -> Outcome:
        if not dry_run and store.delete_episodic(memory_id, day) is None:
            raise NotFound(f"episode '{memory_id}' disappeared before it could be deleted")
        return Outcome([Change(Action.deleted, f"episode {memory_id} of {day}", dry_run=dry_run,
                               fields={"type": "episodic", "id": memory_id, "date": day})])

    return Plan(f"Delete episode '{memory_id}' of {day}?", run)
