"""``check --secrets``: the secret scan of :mod:`praisonmem.core.secrets` over each home's session stores (their own
scan, :func:`praisonmem.core.sessions.scan_secrets`) and learn entries, the FileMemory items (short and long term,
entities, episodic, summaries, saved sessions) of every user under the memory dir and the SQLite memory files
beside it, mem0's ``history.db`` (``$MEM0_DIR`` or ``~/.mem0``), the Chroma stores of the rag Memory and of
Knowledge (and its knowledge.db), and an Upsonic
database's user traits and sessions when one is given. Reading only: nothing is locked or written (FileMemory files
are read as ``check`` reads them)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from praisonmem.core import secrets, sessions
from praisonmem.core.errors import PraisonMemError
from praisonmem.core.layout import ENTITIES, JSON, LONG_TERM, SAVED_SESSIONS, SHORT_TERM, SUMMARIES
from praisonmem.core.paths import Paths

if TYPE_CHECKING:
    from praisonmem.core.secrets import Level, ScanReport

SecretLevel = secrets.Level
FILE_MEMORY_TIERS = (("short_term", SHORT_TERM), ("long_term", LONG_TERM))


def scan_secrets(paths: Paths, homes: list[str] | None = None, *, level: str = "standard",
                 upsonic_db: str | None = None, timeout: float = 5.0, configured: bool = False) -> Any:
    """Every secret in ``paths`` (or each of ``homes``) and in the Upsonic database ``upsonic_db``: a
    :class:`praisonmem.core.secrets.ScanReport`. ``configured``: the database is the config's, not the command
    line's, so a server that cannot be reached is named as not scanned (failing the scan) and the rest is scanned."""
    from praisonmem.core.errors import IOFailure

    report = scan_everything(paths, level=level, homes=homes)
    if upsonic_db:
        from praisonmem.core import upsonic

        try:
            scan_upsonic(upsonic.open_store(upsonic_db, timeout=timeout), secrets.level_of(level), report)
        except IOFailure as exc:
            if not configured:
                raise
            from praisonmem.core.io.pgurl import redact

            shown = redact(str(upsonic_db))
            report.not_scanned("upsonic.db" if shown in exc.message else f"upsonic.db {shown}", exc.message)
    return report


def scan_memory(base: Path, level: Level, report: ScanReport) -> None:
    """FileMemory items of every user under ``base``, their summaries and saved sessions."""
    from praisonmem.core.memory import FileMemoryStore, file_users

    for user in file_users(base):
        mem = FileMemoryStore.at(base, user)
        places: list[tuple[str, Path]] = [(tier, mem.path(name)) for tier, name in FILE_MEMORY_TIERS]
        places.append(("entities", mem.path(ENTITIES)))
        places += [(f"episodic/{d}", mem.episodic_dir / f"{d}.json") for d in mem.episodic_dates()]
        places.append(("summaries", mem.path(SUMMARIES)))
        saved = mem.user_dir / SAVED_SESSIONS
        if saved.is_dir():
            places += [(f"{SAVED_SESSIONS}/{p.name[:-len(JSON)]}", p) for p in sorted(saved.glob(f"*{JSON}"))
                       if p.is_file() and not p.is_symlink()]
        for tier, path in places:
            one_document = tier.startswith(f"{SAVED_SESSIONS}/")  # a saved session: one object
            try:
                value = mem.read(path, {} if tier == "entities" or one_document else [])
            except PraisonMemError:
                report.scan_raw(path, None, level, store="memory", record=f"{user}/{tier}")
                continue
            counted = "memory_saved_sessions" if one_document else "memory_items"
            report.scanned[counted] = report.scanned.get(counted, 0) + (1 if one_document else len(value))
            for h in secrets.hits(value, level, opaque=sessions.is_encrypted):
                report.findings.append(secrets.finding(h, store="memory", file=str(path), session=None,
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
                report.not_scanned(path, exc.message)
                continue
            report.scanned["memory_items"] = report.scanned.get("memory_items", 0) + len(rows)
            for row in rows:
                for h in secrets.hits({"text": row["text"], "metadata": row["metadata"]}, level,
                                      opaque=sessions.is_encrypted):
                    report.findings.append(secrets.finding(h, store="memory", file=str(path), session=None,
                                                           record=f"{suffix or '-'}/{tier}/{row['id']}"))


def scan_mem0_history(db: Path, level: Level, report: ScanReport) -> None:
    """mem0's ``history.db`` (read-only): each event's old and new text (a DELETE keeps the deleted text) and the
    messages it keeps."""
    from praisonmem.core.memory import mem0_history_texts

    if not db.is_file():
        return
    try:
        rows = mem0_history_texts(db)
    except PraisonMemError as exc:
        report.unreadable.append(exc.message)
        return
    report.scanned["mem0_history_rows"] = report.scanned.get("mem0_history_rows", 0) + len(rows)
    for record, values in rows:
        for h in secrets.hits(values, level, opaque=sessions.is_encrypted):
            report.findings.append(secrets.finding(h, store="mem0", file=str(db), session=None, record=record))
def scan_chroma(project_dir: Path, level: Level, report: ScanReport) -> None:
    """The documents and metadata of praisonaiagents' Chroma stores beside the FileMemory base: the rag Memory's
    ``chroma_db[_<user>]`` dirs and Knowledge's ``knowledge/chroma`` (each read from a private copy: chromadb
    rewrites a store it opens), and Knowledge's ``knowledge.db`` fallback in the project dir's parent. chromadb
    is imported only when a Chroma store is there."""
    from praisonmem.core import knowledge
    from praisonmem.core.io import chroma as chroma_io

    stores: list[tuple[Path, Any]] = []
    if project_dir.is_dir():
        stores += [(p, None) for p in sorted(project_dir.glob("chroma_db*")) if chroma_io.looks_like_chroma(p)]
    if chroma_io.looks_like_chroma(project_dir / "knowledge" / "chroma"):
        stores.append((project_dir / "knowledge" / "chroma", None))
    if (project_dir.parent / knowledge.DB_NAME).is_file():
        stores.append((project_dir.parent / knowledge.DB_NAME, knowledge.SqliteKnowledge(
            project_dir.parent / knowledge.DB_NAME)))
    for path, store in stores:
        try:
            if store is None:
                with chroma_io.snapshot(path) as client:
                    records = [(name, r) for name in chroma_io.names(client)
                               for r in chroma_io.rows(client.get_collection(name, embedding_function=None))]
            else:
                records = [(knowledge.DB_NAME, r) for r in store.records()]
        except PraisonMemError as exc:
            report.not_scanned(path, exc.message)
            continue
        report.scanned["memory_items"] = report.scanned.get("memory_items", 0) + len(records)
        for name, record in records:
            for h in secrets.hits({"text": record["document"], "metadata": record["metadata"]}, level,
                                  opaque=sessions.is_encrypted):
                report.findings.append(secrets.finding(h, store="chroma", file=str(path), session=None,
                                                       record=f"{name}/{record['id']}"))


def scan_learn(learn_dir: Path, level: Level, report: ScanReport) -> None:
    from praisonmem.core.learn import entries

    found, unreadable = entries(learn_dir)
    for message in unreadable:  # "<path>: <why>": searched as raw bytes
        path = next((p for p in learn_dir.glob(f"*/*/*{JSON}") if message.startswith(f"{p}: ")), None)
        if path is None:
            report.unreadable.append(message)
        else:
            report.scan_raw(path, None, level, store="learn", record=str(path.relative_to(learn_dir)))
    report.scanned["learn_entries"] = report.scanned.get("learn_entries", 0) + len(found)
    for e in found:
        for h in secrets.hits(e.entry, level, opaque=sessions.is_encrypted):
            report.findings.append(secrets.finding(h, store="learn", file=str(e.path), session=None,
                                                   record=f"{e.scope}/{e.user_id}/{e.store}/{e.entry.get('id')}"))


def scan_learn_dbs(where: Paths, level: Level, report: ScanReport, seen: set[Path]) -> None:
    """The ``learn.db`` the library's sqlite backend keeps for this home and the cwd (each database once)."""
    from praisonmem.core.learn import database_entries

    found, raw, problems = database_entries(where, seen)
    report.unreadable += problems
    for db, key, data in raw:  # a row that does not parse: its bytes searched as they are
        report.scan_raw(db, data, level, store="learn", record=key)
    report.count("learn_entries", len(found))
    for e in found:
        for h in secrets.hits(e.entry, level, opaque=sessions.is_encrypted):
            report.findings.append(secrets.finding(h, store="learn", file=str(e.path), session=None,
                                                   record=f"{e.store}/{e.entry.get('id')}"))


def scan_upsonic(store: Any, level: Level, report: ScanReport) -> None:
    """An Upsonic database (a :class:`praisonmem.core.upsonic.Store`): user traits and sessions."""
    users = store.users()
    rows = store.all_sessions()
    report.scanned["upsonic_users"] = len(users)
    report.scanned["upsonic_sessions"] = len(rows)
    for row in users:
        for h in secrets.hits(row.get("user_memory"), level, "user_memory", opaque=sessions.is_encrypted):
            report.findings.append(secrets.finding(h, store="upsonic", file=store.label, session=None,
                                                   record=f"user:{row.get('user_id')}"))
    for row in rows:
        for h in secrets.hits({k: v for k, v in row.items() if k != "session_id"}, level,
                              opaque=sessions.is_encrypted):
            report.findings.append(secrets.finding(h, store="upsonic", file=store.label,
                                                   session=row.get("session_id")))


def scan_conversation_json(paths: Paths, home: str | None, level: Level, report: ScanReport) -> bool:
    """praisonai's JSON conversation store, when ``home`` (a PATH) is one, or, with no PATH, the library's default
    ``./praisonai_conversations`` when it is one (``session scan --store``'s scan); whether ``home`` was one."""
    directory = Path(home) if home is not None else Path(sessions.CONVERSATION_DIR)
    if not (directory.is_dir() and sessions.is_conversation_dir(directory)):
        return False
    sessions.scan_secrets(paths, level=level.value, store=f"{sessions.JSONCONV}{directory}", report=report)
    return home is not None


def scan_everything(paths: Paths, *, level: Level | str = "standard", upsonic: Any = None,
                    homes: list[str] | None = None) -> ScanReport:
    """``check --secrets``: sessions (every store), spilled turns and learn entries of the home (or of each of
    ``homes``), FileMemory under the memory dir, and the Upsonic database ``upsonic`` when given."""
    from praisonmem.core.errors import UsageError
    from praisonmem.core.paths import resolve

    level = secrets.level_of(level)
    report = secrets.ScanReport(level.value, sessions.is_encrypted)
    learn_dbs: set[Path] = set()
    for home in homes or [None]:
        if scan_conversation_json(paths, home, level, report):
            continue
        if home is not None and not Path(home).is_dir():
            raise UsageError(f"{home}: not a directory (with --secrets, each PATH is a PraisonAI home)")
        where = paths if home is None else resolve(home, paths.memory_dir)
        if where.sessions_dir.is_dir():
            sessions.scan_secrets(where, level=level, report=report)
        scan_learn(where.learn_dir, level, report)
        scan_learn_dbs(where, level, report, learn_dbs)
    scan_memory(paths.memory_dir, level, report)
    scan_sqlite_memory(paths.project_dir, level, report)
    from praisonmem.core.memory import mem0_history_db

    scan_mem0_history(mem0_history_db(), level, report)
    scan_chroma(paths.project_dir, level, report)
    memory_dirs = [paths.memory_dir, paths.project_dir]
    if paths.memory_dir.is_dir():
        memory_dirs[1:1] = sorted(p for p in paths.memory_dir.iterdir() if p.is_dir())
    secrets.scan_quarantined(memory_dirs, level, report, store="memory")
    if upsonic is not None:
        scan_upsonic(upsonic, level, report)
    return report
