"""A secret scan's report and what any scan of files needs: the report (what was searched, what was found,
what could not be looked into), a finding's record (the secret itself appears nowhere in it), and the raw search
of files that do not parse.

The scans themselves are their stores' callers': ``session scan`` over the session stores
(:mod:`praisonmem.core.sessions.stores.secretscan`), ``check --secrets`` over them and FileMemory, the SQLite
memory, learn and an Upsonic database (:mod:`praisonmem.core.check.secrets`). A finding names the store
(``json``, ``sessions.db``, ``memory``, ``learn``, ``upsonic``), the file, the session (or memory user, learn
store, Upsonic user), the field as a JSON path, the message index when it is in a message, the kind, and a masked
excerpt.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from praisonmem.core.errors import PraisonMemError, os_reason
from praisonmem.core.layout import QUARANTINED
from praisonmem.core.secrets.rules import Level
from praisonmem.core.secrets.walk import Hit, Opaque, masked, raw_hits


@dataclass
class ScanReport:
    level: str
    opaque: Opaque = field(repr=False, compare=False)  # what the scanned stores seal (encrypted values)
    findings: list[dict[str, Any]] = field(default_factory=list)
    scanned: dict[str, int] = field(default_factory=dict)  # records searched per store
    unreadable: list[str] = field(default_factory=list)  # what could not be read at all, why: not scanned
    raw: list[str] = field(default_factory=list)  # files that do not parse, searched as raw bytes

    @property
    def failed(self) -> bool:
        """A secret found, or a file the scan could not look into: a gate that could not look does not pass."""
        return bool(self.findings or self.unreadable)

    def to_json(self) -> dict[str, Any]:
        return {"ok": not self.failed, "level": self.level, "count": len(self.findings), "scanned": self.scanned,
                "unreadable": self.unreadable, "raw": self.raw, "findings": self.findings}

    def not_scanned(self, where: str | Path, why: str) -> None:
        """``<where>: <why>`` among what could not be read, the path once: an I/O error's message starts with it
        (a database's says which it could not reach)."""
        where = str(where)
        self.unreadable.append(why if why == where or why.startswith(f"{where}: ") else f"{where}: {why}")

    def count(self, what: str, n: int = 1) -> None:
        self.scanned[what] = self.scanned.get(what, 0) + n

    def scan_raw(self, path: str | Path, data: bytes | None, level: Level, *, store: str, record: str | None = None,
                 session: str | None = None) -> None:
        """The bytes of a file (or row) that does not parse, searched as they are; ``None``: read them."""
        if data is None:
            try:
                data = read_raw(path)
            except PraisonMemError as exc:
                self.unreadable.append(exc.message)
                return
        self.raw.append(str(path))
        self.count("raw_files")
        name = record if record is not None else Path(path).name
        self.findings += [finding(h, store=store, file=str(path), session=session, record=name)
                          for h in raw_hits(data, level, opaque=self.opaque)]


def read_raw(path: str | Path) -> bytes:
    """A file's bytes for a raw search: a regular file only, at most the input limit (a larger one is not
    scanned, and so fails the gate)."""
    from praisonmem.core.io.inputfile import read_regular

    return read_regular(path, what="file")


def finding(hit: Hit, *, store: str, file: str, session: str | None, record: str | None = None) -> dict[str, Any]:
    """A finding's record; names that hold a secret themselves (a session id that is an e-mail address) are
    masked too."""
    record = record if record is not None else session
    session, record = (None if v is None else masked(v) for v in (session, record))
    return {"store": store, "file": masked(file), "session": session, "record": record,
            "field": masked(hit.path), "message_index": hit.message_index, "archived": hit.archived, "kind": hit.kind,
            "excerpt": hit.excerpt}


def scan_quarantined(directories: list[Path], level: Level, report: ScanReport, *, store: str) -> None:
    """The copies the library keeps of files that did not parse (``x.json.corrupt-<ms>``, a database's
    ``x.db.corrupt-<ms>``): no store reads them, backups archive them, so they are searched as raw bytes."""
    for directory in directories:
        try:
            names = sorted(entry.name for entry in os.scandir(directory) if QUARANTINED in entry.name)
        except (FileNotFoundError, NotADirectoryError):
            continue
        except OSError as exc:
            report.not_scanned(directory, os_reason(exc))
            continue
        for name in names:
            report.scan_raw(directory / name, None, level, store=store, record=name)
