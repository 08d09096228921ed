"""The rule sets' names (``--level``, ``--redact``): a module of their own, so that the commands declaring
the option (``check``, the session commands) do not compile the rules (:mod:`.rules`) to build it."""

from __future__ import annotations

from enum import StrEnum


class Level(StrEnum):
    """``--level`` / ``--redact``: which rules apply."""

    standard = "standard"
    strict = "strict"
