"""Time helpers: the clock, the library's timestamp forms, durations, and the moments ``--since`` and ``--until``
name.

:func:`local_now` is the one place the core reads the local wall clock for dates
("today" for episodic memory), so tests can freeze it. :func:`parse_when` is the one
reader of ``--since``/``--until`` values: a duration back from now (``7d``, ``12h``,
``2w``, ``30m``, ``1d12h``), a day (``YYYY-MM-DD``, UTC) or an ISO date-time (UTC
when it names no zone); :class:`Window` is what the two give together.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
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


WHEN_FORMS = "a duration back from now (7d, 12h, 2w, 30m) or a date (YYYY-MM-DD, UTC, or an ISO date-time)"


def parse_when(text: str, option: str, *, end: bool = False, now: float | None = None) -> float:
    """The moment ``text`` names, in seconds since the epoch: a duration before ``now`` (default: the clock), the
    start of a UTC day (with ``end``: of the next day, so that ``--until`` includes the day it names) or an ISO
    date-time (UTC without a zone). Anything else is a usage error naming ``option``."""
    compact = text.strip()
    if compact and _DURATION.sub("", compact.lower()) == "":
        return (time.time() if now is None else now) - parse_duration(compact, option).total_seconds()
    try:
        if len(compact) == 10:
            day = datetime.strptime(compact, "%Y-%m-%d").replace(tzinfo=timezone.utc)
            return (day + timedelta(days=1 if end else 0)).timestamp()
        moment = datetime.fromisoformat(compact)
    except (ValueError, OverflowError):
        raise UsageError(f"{option} must be {WHEN_FORMS}, got '{text}'") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.timestamp()


@dataclass(frozen=True)
class Window:
    """``since <= t < until`` (either end open when None), in seconds since the epoch."""

    since: float | None = None
    until: float | None = None

    def holds(self, value: Any) -> bool:
        """Whether the timestamp ``value`` (ISO string or epoch number) lies in the window; an unknown one does
        not (a session without a date cannot be placed in time)."""
        when = epoch_of(value)
        if when is None:
            return False
        return (self.since is None or when >= self.since) and (self.until is None or when < self.until)


def window(since: str | None, until: str | None, *, now: float | None = None) -> Window | None:
    """The window ``--since`` and ``--until`` give (None when neither is); ``since`` must come before ``until``."""
    if since is None and until is None:
        return None
    now = time.time() if now is None else now
    low = None if since is None else parse_when(since, "--since", now=now)
    high = None if until is None else parse_when(until, "--until", end=len(until.strip()) == 10, now=now)
    if low is not None and high is not None and low >= high:
        raise UsageError(f"--since {since} is not before --until {until}")
    return Window(low, high)
