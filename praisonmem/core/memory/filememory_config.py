"""What FileMemory (praisonaiagents 1.7.17) does with each ``config.json`` value: one rule for
``check`` (which rates it) and ``memory store`` (which refuses what would raise or delete items).

Checked against the library (``tests/compat/test_memory_config_compat.py``): the limits are
compared with ``len(items) >`` and then sliced, so a string raises ``TypeError``, a float raises
once the list is longer, ``short_term_limit: -1`` keeps ``items[1:]`` (the oldest goes on every
store), ``long_term_limit: 0`` keeps ``items[:0]`` (all of them go), and booleans are read as 1
and 0. ``episodic_retention_days`` feeds ``timedelta`` in ``cleanup_episodic``; at 0 or below the
cut-off is now or later, so every episodic file goes, today's too.
"""

from __future__ import annotations

from typing import Any

from praisonmem.core.io.jsonfile import json_kind

ERROR, WARNING = "error", "warning"
Problem = tuple[str, str]  # (severity, what is wrong, phrased after "'<key>' ")


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _word(value: bool) -> str:
    return "true" if value else "false"


def _short_term_limit(value: Any) -> Problem | None:
    if isinstance(value, bool):
        if value:
            return ERROR, ("is true, not a whole number: FileMemory reads it as 1 and deletes the oldest "
                           "short-term items on every store")
        return WARNING, ("is false, not a whole number: FileMemory reads it as 0, which does not limit (it keeps "
                         "every short-term item and promotes on every store)")
    if not isinstance(value, int):
        return ERROR, (f"is {json_kind(value)}, not a whole number: FileMemory raises TypeError when it stores "
                       "short-term memory")
    if value < 0:
        return ERROR, f"is negative ({value}): FileMemory deletes the oldest short-term items on every store"
    if value == 0:
        return WARNING, ("is 0, which does not limit: FileMemory keeps every short-term item and promotes on "
                         "every store")
    return None


def _long_term_limit(value: Any) -> Problem | None:
    if isinstance(value, bool):
        if value:
            return ERROR, ("is true, not a whole number: FileMemory reads it as 1 and keeps only the most "
                           "important long-term item")
        return ERROR, "is false, not a whole number: FileMemory reads it as 0 and deletes long-term items on every store"
    if not isinstance(value, int):
        return ERROR, (f"is {json_kind(value)}, not a whole number: FileMemory raises TypeError when it stores "
                       "long-term memory")
    if value < 1:
        return ERROR, f"is {value}: FileMemory deletes long-term items on every store"
    return None


def _importance_threshold(value: Any) -> Problem | None:
    if isinstance(value, bool):
        return WARNING, f"is {_word(value)}, not a number (FileMemory compares importance with it as {int(value)})"
    if not _number(value):
        return ERROR, (f"is {json_kind(value)}, not a number: FileMemory raises TypeError when it promotes "
                       "short-term items")
    return None


def _episodic_retention_days(value: Any) -> Problem | None:
    if not isinstance(value, (int, float)):
        return ERROR, f"is {json_kind(value)}, not a number of days: FileMemory.cleanup_episodic raises TypeError"
    if value <= 0:
        return ERROR, f"is {_word(value) if isinstance(value, bool) else value}: FileMemory.cleanup_episodic " \
                      "deletes every episodic file, today's too"
    if isinstance(value, bool):
        return WARNING, "is true, not a number of days (FileMemory reads it as 1)"
    return None


def _flag(value: Any, used: bool) -> Problem | None:
    if isinstance(value, bool):
        return None
    if used:
        return WARNING, f"is {json_kind(value)}, not true or false (FileMemory treats it as {_word(bool(value))})"
    return WARNING, f"is {json_kind(value)}, not true or false (FileMemory 1.7.17 never reads it)"


def _summarization_threshold(value: Any) -> Problem | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return None
    return WARNING, f"is {json_kind(value)}, not a whole number (FileMemory 1.7.17 never reads it)"


RULES = {
    "short_term_limit": _short_term_limit,
    "long_term_limit": _long_term_limit,
    "importance_threshold": _importance_threshold,
    "episodic_retention_days": _episodic_retention_days,
    "auto_promote": lambda value: _flag(value, used=True),
    "enable_summarization": lambda value: _flag(value, used=False),
    "summarization_threshold": _summarization_threshold,
}


def problem(key: str, value: Any) -> Problem | None:
    """``(severity, reason)`` for one value: ``error`` when FileMemory raises on it or deletes items
    because of it, ``warning`` when it works but not as written; ``None`` for a good (or unknown) key."""
    rule = RULES.get(key)
    return rule(value) if rule else None
