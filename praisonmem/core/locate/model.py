"""What ``locate`` reports: :class:`Store` (a store found on disk, or configured and absent), :class:`Server` (a
configured database server, its password masked) and :class:`Skipped` (a directory that could not be read), and
:class:`Report`, the three together with the JSON shape scripts read."""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from typing import Any

ORPHAN, UNREACHABLE, ABSENT = "orphan", "unreachable", "absent"
FLAGS = (ORPHAN, UNREACHABLE, ABSENT)  # in this order in every row


@dataclass
class Store:
    """One store: where, which kind and library, its files' total size and newest mtime (epoch seconds), cheap
    counts of what it holds, the praisonmem command that reaches it (``None``: none does) and its flags."""

    path: str
    kind: str
    library: str
    size: int = 0
    modified: float | None = None
    holds: dict[str, Any] = field(default_factory=dict)
    command: str | None = None
    flags: list[str] = field(default_factory=list)

    def flag(self, *names: str) -> None:
        self.flags = [f for f in FLAGS if f in self.flags or f in names]

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "kind": self.kind, "library": self.library, "size": self.size,
                "modified": self.modified, "holds": dict(self.holds), "command": self.command,
                "flags": list(self.flags)}


@dataclass
class Server:
    """A configured database server: its URL with the password masked, what kind of store it is, where the setting
    came from, the command that reaches it, and (with ``--connect``) whether it answered and why not."""

    url: str
    kind: str
    library: str
    source: str
    command: str | None = None
    reachable: bool | None = None  # None: not checked
    reason: str | None = None
    _url: str = field(default="", repr=False, compare=False)  # the URL as configured: only ever handed to a driver

    def to_json(self) -> dict[str, Any]:
        return {"url": self.url, "kind": self.kind, "library": self.library, "source": self.source,
                "command": self.command, "reachable": self.reachable, "reason": self.reason}


@dataclass
class Skipped:
    """A path ``locate`` could not look into, and why (one line)."""

    path: str
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "reason": self.reason}


@dataclass
class Report:
    stores: list[Store] = field(default_factory=list)
    servers: list[Server] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    files_visited: int = 0  # regular files seen by the walk (the benchmark compares it with find)

    @property
    def failed(self) -> bool:
        return bool(self.skipped)

    def to_json(self) -> dict[str, Any]:
        return {"stores": [s.to_json() for s in self.stores], "servers": [s.to_json() for s in self.servers],
                "skipped": [s.to_json() for s in self.skipped]}


def session_dir_command(directory: str) -> str:
    """The command that lists a JSON session directory: a praisonai CLI project's store (``<home>/sessions/projects/
    <id>``) by its label in that home, any other by its path."""
    import os

    parent, name = os.path.split(directory)
    if os.path.basename(parent) == "projects" and os.path.basename(os.path.dirname(parent)) == "sessions":
        home = os.path.dirname(os.path.dirname(parent))
        return command("--home", home, "session", "list", "--store", f"project:{name}")
    return command("session", "list", "--store", directory)


def command(*words: str) -> str:
    """A praisonmem command line, each word quoted for a POSIX shell where it needs it."""
    return " ".join(["praisonmem", *(shlex.quote(w) for w in words)])
