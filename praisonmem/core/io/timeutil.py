"""Time helpers: the clock, the library's timestamp forms, and durations.

:func:`local_now` is the one place the core reads the local wall clock for dates
("today" for episodic memory), so tests can freeze it.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from typing import Any

from praisonmem.core.errors import UsageError

_DURATION = re.compile(r"(\d+)([smhdw])")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def local_now() -> datetime:
    """The local wall-clock time (naive), as the library uses it for episodic dates."""
    return datetime.now()


def now_iso() -> str:
    """``updated_at`` as the library writes it: UTC ``isoformat()`` with microseconds."""
    return datetime.now(timezone.utc).isoformat()


def parse_duration(text: str, option: str = "--older-than") -> timedelta:
    """``30d``, ``12h``, ``90m``, ``2w``, ``45s`` or a sequence such as ``1d12h``."""
    compact = text.strip().lower()
    if not compact or _DURATION.sub("", compact) != "":
        raise UsageError(f"{option} must be a duration such as 30d, 12h, 90m or 2w, got '{text}'")
    seconds = sum(int(n) * _UNITS[unit] for n, unit in _DURATION.findall(compact))
    try:
        return timedelta(seconds=seconds)
    except OverflowError:
        raise UsageError(f"{option} {text} is too long a duration") from None


def epoch_of(value: Any) -> float | None:
    """Seconds since the epoch for an ISO string or a number; ``None`` when unknown."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value)
        except ValueError:
            return None
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=timezone.utc)
        return moment.timestamp()
    return None
