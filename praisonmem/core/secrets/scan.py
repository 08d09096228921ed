"""``session scan`` and ``check --secrets``: every secret in every store, reported masked.

Places searched: the sessions of every store of the home (messages, archived messages, titles,
metadata and every other field, gateway snapshots included) and the turns waiting for them in the
spill dir; FileMemory items (short and long term, entities, episodic) of every user under the memory
dir and the SQLite memory files beside it; learn entries; an Upsonic database's user traits and sessions, when one is given. Reading only:
nothing is locked or written (FileMemory files are read as ``check`` reads them).

A finding names the store (``json``, ``sessions.db``, ``memory``, ``learn``, ``upsonic``), the file,
the session (or memory user, learn store, Upsonic user), the field as a JSON path, the message index
when it is in a message, the kind, and a masked excerpt. The secret itself appears nowhere in it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from praisonmem.core.errors import CorruptFile, PraisonMemError
from praisonmem.core.io import jsonfile
from praisonmem.core.paths import Paths
from praisonmem.core.secrets.rules import Level, level_of
from praisonmem.core.secrets.walk import Hit, hits, masked, raw_hits
from praisonmem.core.sessions import open_store

FILE_MEMORY_TIERS = (("short_term", "short_term.json"), ("long_term", "long_term.json"))


@dataclass
class ScanReport:
    level: str
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
                          for h in raw_hits(data, level)]


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


def _session_findings(item: Any, *, level: str) -> list[Any]:
    """One session's findings (module level: the JSON store scans in worker processes); one that cannot be
    read or parsed is handed back, to be searched as raw bytes."""
    if item.doc is None:
        return [("unparsed", item)]
    return [finding(h, store=item.store, file=item.where, session=item.session_id) for h in hits(item.doc, level)]


def _scan_unparsed(home: Any, item: Any, level: Level, report: ScanReport) -> None:
    """A session its store could not read as one: its bytes searched as they are, or, when even they cannot be
    read (permissions, a symlink loop), named as not scanned."""
    reason = getattr(item.error, "message", None) or str(item.error)
    if item.ref is None:  # the whole store (sessions.db that is not a database)
        where = Path(item.where)
        if where.is_file():
            report.scan_raw(where, None, level, store=item.store)
        else:
            report.unreadable.append(f"{item.where}: {reason}")
        return
    try:
        data = home.read_bytes(item.ref)
    except PraisonMemError as exc:
        report.unreadable.append(f"{item.where}: {exc.message}")
        return
    record = item.session_id if item.session_id is not None else Path(item.where).name
    report.scan_raw(item.where, data, level, store=item.store, record=record, session=item.session_id)


def scan_sessions(paths: Paths, names: list[str] | None = None, *, level: Level | str = Level.standard,
                  store: str | None = None, report: ScanReport | None = None) -> ScanReport:
    """The secrets in the named sessions (none named: every session of every store, or of ``store``), and in
    their spilled turns."""
    level = level_of(level)
    report = report or ScanReport(level.value)
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
                                for h in hits(doc, level)]
        counted = len(refs)
    elif home.absent() is None:
        for row in home.scan(partial(_session_findings, level=level.value)):
            if isinstance(row, tuple):
                _scan_unparsed(home, row[1], level, report)
            else:
                report.findings.append(row)
        counted = len(home.refs())
    else:
        counted = 0
    report.count("sessions", counted)
    if store in (None, "json"):
        _scan_spill(paths.spill_dir, level, sids, report)
        if names is None:
            scan_quarantined(_session_dirs(paths.sessions_dir), level, report, store="json")
    return report


def _session_dirs(sessions_dir: Path) -> list[Path]:
    """The sessions dir and the praisonai CLI's project stores in it: where the library quarantines a session
    file that did not parse."""
    projects = sessions_dir / "projects"
    return [sessions_dir] + (sorted(p for p in projects.iterdir() if p.is_dir()) if projects.is_dir() else [])


def scan_quarantined(directories: list[Path], level: Level, report: ScanReport, *, store: str) -> None:
    """The copies the library keeps of files that did not parse (``x.json.corrupt-<ms>``, a database's
    ``x.db.corrupt-<ms>``): no store reads them, backups archive them, so they are searched as raw bytes."""
    for directory in directories:
        try:
            names = sorted(entry.name for entry in os.scandir(directory) if ".corrupt-" in entry.name)
        except (FileNotFoundError, NotADirectoryError):
            continue
        except OSError as exc:
            report.unreadable.append(f"{directory}: {exc.strerror or exc}")
            continue
        for name in names:
            report.scan_raw(directory / name, None, level, store=store, record=name)


def _scan_spill(spill_dir: Path, level: Level, sids: set[str] | None, report: ScanReport) -> None:
    try:
        files = sorted(p for p in spill_dir.iterdir() if p.name.endswith(".json") and p.is_file())
    except (FileNotFoundError, NotADirectoryError):
        return
    for path in files:
        try:
            record = jsonfile.read_object(path)
        except PraisonMemError:  # whose turn it is cannot be told: searched whatever sessions were named
            report.scan_raw(path, None, level, store="json", record=f"spill:{path.name}")
            continue
        sid = record.get("session_id") if isinstance(record.get("session_id"), str) else None
        if sids is not None and sid not in sids:
            continue
        report.scanned["spill_files"] = report.scanned.get("spill_files", 0) + 1
        for h in hits(record, level):
            report.findings.append(finding(h, store="json", file=str(path), session=sid, record=f"spill:{path.name}"))


def scan_memory(base: Path, level: Level, report: ScanReport) -> None:
    """FileMemory items of every user under ``base``."""
    from praisonmem.core.memory import FileMemoryStore, file_users

    for user in file_users(base):
        mem = FileMemoryStore.at(base, user)
        places: list[tuple[str, Path]] = [(tier, mem.path(name)) for tier, name in FILE_MEMORY_TIERS]
        places.append(("entities", mem.path("entities.json")))
        places += [(f"episodic/{d}", mem.episodic_dir / f"{d}.json") for d in mem.episodic_dates()]
        for tier, path in places:
            try:
                value = mem.read(path, {} if tier == "entities" else [])
            except PraisonMemError:
                report.scan_raw(path, None, level, store="memory", record=f"{user}/{tier}")
                continue
            report.scanned["memory_items"] = report.scanned.get("memory_items", 0) + len(value)
            for h in hits(value, level):
                report.findings.append(finding(h, store="memory", file=str(path), session=None,
                                               record=f"{user}/{tier}"))


def scan_sqlite_memory(project_dir: Path, level: Level, report: ScanReport) -> None:
    """The SQLite memory files beside the FileMemory base (``short_term[_<user>].db``, ``long_term[_<user>].db``),
    read-only."""
    from praisonmem.core.memory import SqliteMemoryStore, sqlite_users

    for suffix in sqlite_users(project_dir):
        mem = SqliteMemoryStore(project_dir, None, suffix=f"_{suffix}" if suffix else "")
        for tier, path in mem.files.items():
            if not path.is_file():
                continue
            try:
                rows = mem.all(tier)
            except PraisonMemError as exc:
                report.unreadable.append(f"{path}: {exc.message}")
                continue
            report.scanned["memory_items"] = report.scanned.get("memory_items", 0) + len(rows)
            for row in rows:
                for h in hits({"text": row["text"], "metadata": row["metadata"]}, level):
                    report.findings.append(finding(h, store="memory", file=str(path), session=None,
                                                   record=f"{suffix or '-'}/{tier}/{row['id']}"))


def scan_learn(learn_dir: Path, level: Level, report: ScanReport) -> None:
    from praisonmem.core.learn import entries

    found, unreadable = entries(learn_dir)
    for message in unreadable:  # "<path>: <why>": searched as raw bytes
        path = next((p for p in learn_dir.glob("*/*/*.json") if message.startswith(f"{p}: ")), None)
        if path is None:
            report.unreadable.append(message)
        else:
            report.scan_raw(path, None, level, store="learn", record=str(path.relative_to(learn_dir)))
    report.scanned["learn_entries"] = report.scanned.get("learn_entries", 0) + len(found)
    for e in found:
        for h in hits(e.entry, level):
            report.findings.append(finding(h, store="learn", file=str(e.path), session=None,
                                           record=f"{e.scope}/{e.user_id}/{e.store}/{e.entry.get('id')}"))


def scan_upsonic(store: Any, level: Level, report: ScanReport) -> None:
    """An Upsonic database (a :class:`praisonmem.core.upsonic.Store`): user traits and sessions."""
    users = store.users()
    rows = store.all_sessions()
    report.scanned["upsonic_users"] = len(users)
    report.scanned["upsonic_sessions"] = len(rows)
    for row in users:
        for h in hits(row.get("user_memory"), level, "user_memory"):
            report.findings.append(finding(h, store="upsonic", file=store.label, session=None,
                                           record=f"user:{row.get('user_id')}"))
    for row in rows:
        for h in hits({k: v for k, v in row.items() if k != "session_id"}, level):
            report.findings.append(finding(h, store="upsonic", file=store.label, session=row.get("session_id")))


def scan_everything(paths: Paths, *, level: Level | str = Level.standard, upsonic: Any = None,
                    homes: list[str] | None = None) -> ScanReport:
    """``check --secrets``: sessions (every store), spilled turns and learn entries of the home (or of each of
    ``homes``), FileMemory under the memory dir, and the Upsonic database ``upsonic`` when given."""
    from praisonmem.core.errors import UsageError
    from praisonmem.core.paths import resolve

    level = level_of(level)
    report = ScanReport(level.value)
    for home in homes or [None]:
        if home is not None and not Path(home).is_dir():
            raise UsageError(f"{home}: not a directory (with --secrets, each PATH is a PraisonAI home)")
        where = paths if home is None else resolve(home, paths.memory_dir)
        if where.sessions_dir.is_dir():
            scan_sessions(where, level=level, report=report)
        scan_learn(where.learn_dir, level, report)
    scan_memory(paths.memory_dir, level, report)
    scan_sqlite_memory(paths.project_dir, level, report)
    memory_dirs = [paths.memory_dir, paths.project_dir]
    if paths.memory_dir.is_dir():
        memory_dirs[1:1] = sorted(p for p in paths.memory_dir.iterdir() if p.is_dir())
    scan_quarantined(memory_dirs, level, report, store="memory")
    if upsonic is not None:
        scan_upsonic(upsonic, level, report)
    return report
