"""``session scan``: every secret in the sessions of a home's stores (messages, archived messages, titles,
metadata and every other field, gateway snapshots included), in the turns waiting for them in the spill dir, and
in the library's quarantined copies of session files that did not parse (searched as raw bytes, as is any session
its store cannot read). Reading only: nothing is locked or written. ``check --secrets`` runs it for each home it
scans (:mod:`praisonmem.core.check.secrets`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from praisonmem.core.errors import CorruptFile, PraisonMemError
from praisonmem.core.io import jsonfile
from praisonmem.core.layout import JSON as LAYOUT_JSON
from praisonmem.core.layout import PROJECTS
from praisonmem.core.paths import Paths
from praisonmem.core.secrets import Level, ScanReport, finding, hits, level_of, scan_quarantined
from praisonmem.core.sessions.documents import is_encrypted
from praisonmem.core.sessions.stores import Scanned
from praisonmem.core.sessions.stores.locate import open_store
from praisonmem.core.sessions.stores.names import JSON


@dataclass
class Searched:
    """One session's findings, or (``unparsed``) the session its store could not read as one, to be searched as
    raw bytes."""

    findings: list[dict[str, Any]]
    unparsed: Scanned | None = None


@dataclass(frozen=True)
class SessionFindings:
    """The fold of a secret scan over a store's sessions: per session with findings or that could not be read,
    its :class:`Searched`, in scan order (module level: the JSON store scans in worker processes)."""

    level: str

    def empty(self) -> list[Searched]:
        return []

    def add(self, acc: list[Searched], item: Scanned) -> list[Searched]:
        if item.doc is None:  # its reason as a plain error: a CorruptFile does not survive pickling back from a worker
            reason = getattr(item.error, "message", None) or str(item.error)
            acc.append(Searched([], replace(item, error=PraisonMemError(reason))))
        else:
            found = [finding(h, store=item.store, file=item.where, session=item.session_id)
                     for h in hits(item.doc, self.level, opaque=is_encrypted)]
            if found:
                acc.append(Searched(found))
        return acc

    def merge(self, a: list[Searched], b: list[Searched]) -> list[Searched]:
        a.extend(b)
        return a


def _scan_unparsed(home: Any, item: Any, level: Level, report: ScanReport) -> None:
    """A session its store could not read as one: its bytes searched as they are, or, when even they cannot be
    read (permissions, a symlink loop), named as not scanned."""
    reason = getattr(item.error, "message", None) or str(item.error)
    if item.ref is None:  # the whole store (sessions.db that is not a database)
        where = Path(item.where)
        if where.is_file():
            report.scan_raw(where, None, level, store=item.store)
        else:
            report.not_scanned(item.where, reason)
        return
    try:
        data = home.read_bytes(item.ref)
    except PraisonMemError as exc:
        report.not_scanned(item.where, exc.message)
        return
    record = item.session_id if item.session_id is not None else Path(item.where).name
    report.scan_raw(item.where, data, level, store=item.store, record=record, session=item.session_id)


def scan_sessions(paths: Paths, names: list[str] | None = None, *, level: Level | str = Level.standard,
                  store: str | None = None, report: ScanReport | None = None) -> ScanReport:
    """The secrets in the named sessions (none named: every session of every store, or of ``store``), and in
    their spilled turns."""
    level = level_of(level)
    report = report or ScanReport(level.value, is_encrypted)
    home = open_store(paths, store)
    sids: set[str] | None = None
    if names:
        refs = list(dict.fromkeys(home.find(n) for n in names))
        sids = set()
        for ref in refs:
            try:
                doc = home.read(ref)
            except CorruptFile:  # a named session that does not parse: its bytes are searched as they are
                report.scan_raw(str(ref), home.read_bytes(ref), level, store=home.store_of(ref),
                                record=home.name(ref))
                continue
            sid = home.session_id(ref, doc)
            sids.add(sid)
            report.findings += [finding(h, store=home.store_of(ref), file=str(ref), session=sid)
                                for h in hits(doc, level, opaque=is_encrypted)]
        counted = len(refs)
    elif home.absent() is None:
        for searched in home.scan(SessionFindings(level.value)):
            if searched.unparsed is not None:
                _scan_unparsed(home, searched.unparsed, level, report)
            else:
                report.findings += searched.findings
        counted = len(home.refs())
    else:
        counted = 0
    report.count("sessions", counted)
    if store in (None, JSON):
        _scan_spill(paths.spill_dir, level, sids, report)
        if names is None:
            scan_quarantined(_session_dirs(paths.sessions_dir), level, report, store=JSON)
    return report


def _session_dirs(sessions_dir: Path) -> list[Path]:
    """The sessions dir and the praisonai CLI's project stores in it: where the library quarantines a session
    file that did not parse."""
    projects = sessions_dir / PROJECTS
    return [sessions_dir] + (sorted(p for p in projects.iterdir() if p.is_dir()) if projects.is_dir() else [])


def _scan_spill(spill_dir: Path, level: Level, sids: set[str] | None, report: ScanReport) -> None:
    try:
        files = sorted(p for p in spill_dir.iterdir() if p.name.endswith(LAYOUT_JSON) and p.is_file())
    except (FileNotFoundError, NotADirectoryError):
        return
    for path in files:
        try:
            record = jsonfile.read_object(path)
        except PraisonMemError:  # whose turn it is cannot be told: searched whatever sessions were named
            report.scan_raw(path, None, level, store=JSON, record=f"spill:{path.name}")
            continue
        sid = record.get("session_id") if isinstance(record.get("session_id"), str) else None
        if sids is not None and sid not in sids:
            continue
        report.scanned["spill_files"] = report.scanned.get("spill_files", 0) + 1
        for h in hits(record, level, opaque=is_encrypted):
            report.findings.append(finding(h, store=JSON, file=str(path), session=sid, record=f"spill:{path.name}"))
