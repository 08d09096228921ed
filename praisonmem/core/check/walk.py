"""The walk behind ``praisonmem check``: recognise each path, read each file once, apply the rules.

A path may be a PraisonAI home, a sessions dir, a spill dir, a learn dir, a
FileMemory base or user dir, or a single file; it is recognised by its shape.
Each finding has a severity (``error``, ``warning``, ``info``), the file and a
message; the rules themselves live in :mod:`praisonmem.core.check.rules`. What an
upgrade left where praisonaiagents 1.7.17 does not look comes from
:mod:`praisonmem.core.migrate`'s finders: each proposal is a warning with the
command that fixes it (``fix``). ``sessions.db`` is read read-only (never through the
library's opener, which repairs and imports).
Nothing is written: files are read once, as a plain reader, except that a
FileMemory file is read under ``flock(LOCK_SH)`` on it (as the library's readers
do) and re-read when it does not parse, so an older release rewriting it in
place is not reported as corrupt.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

from praisonmem.core import layout, learn, memory, migrate, sessions
from praisonmem.core.check import rules
from praisonmem.core.check.rules import Severity
from praisonmem.core.errors import (CorruptFile, LockTimeout, NotFound, NotRegularFile, PraisonMemError, UsageError,
                                    io_failure)
from praisonmem.core.io import jsonfile, parallel
from praisonmem.core.paths import DEFAULT_DIR_NAME, Paths, Resolved, resolve
from praisonmem.core.io.safetext import plural


@dataclass
class Finding:
    """One thing ``check`` found: how bad, in which file, what, and the command that fixes it."""

    severity: Severity
    file: str
    message: str
    code: str
    fix: str | None = None  # the command that fixes it, when praisonmem has one (the migrate findings)

    def to_json(self) -> dict[str, str | None]:
        return asdict(self)


@dataclass
class Report:
    """What ``check`` looked at and found."""

    roots: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    files_checked: int = 0

    def count(self, severity: Severity) -> int:
        return sum(1 for f in self.findings if f.severity == severity)

    def failed(self, strict: bool = False) -> bool:
        return self.count("error") > 0 or (strict and self.count("warning") > 0)

    def to_json(self, strict: bool = False) -> dict[str, Any]:
        return {
            "ok": not self.failed(strict), "strict": strict, "roots": self.roots,
            "files_checked": self.files_checked, "errors": self.count("error"),
            "warnings": self.count("warning"), "info": self.count("info"),
            "findings": [f.to_json() for f in self.findings],
        }


class Checker:
    def __init__(self, progress: Callable[[int], None] | None = None,
                 sessions_dirs: dict[Path, Path] | None = None, timeout: float = jsonfile.LOCK_TIMEOUT,
                 paths: Paths | None = None) -> None:
        self.report = Report()
        self.progress = progress
        self.sessions_dirs = sessions_dirs or {}  # spill dir -> its sessions dir, where they are not siblings
        self.timeout = timeout
        self.paths = paths  # the resolved paths: a root that is one of them keeps its source (and fix commands)
        self._seen: set[str] = set()
        # session file -> (id, updated_at, digest of its index text), for its dir's index
        self._sessions: dict[str, tuple[str, Any, str | None]] = {}

    def add(self, severity: Severity, path: Path | str, message: str, code: str, fix: str | None = None) -> None:
        self.report.findings.append(Finding(severity, str(path), message, code, fix))

    def leftover_temp(self, path: Path, writer: str = "write") -> None:
        """A ``*.tmp`` file: what left it (told by its name), and, once no write can still be using it, the fix."""
        message, target = _temp_origin(path.name, writer)
        try:
            age = time.time() - path.lstat().st_ctime
        except OSError:  # gone while we looked: the write it belonged to finished
            return
        fix = None
        if age < jsonfile.LEFTOVER_AGE:
            message += f"; it changed {int(age)} s ago, so that write may still be under way"
        else:
            if target is not None:
                message += f"; praisonmem's next write of {target} removes it"
            import shlex

            fix = shlex.join(["rm", "--", str(path)])
        self.add("warning", path, message, "leftover.temp", fix)

    def config_dir(self, config: Path) -> None:
        """Temp files a killed ``config set``/``unset`` left beside the config file (they hold its settings, a
        database URL's password among them)."""
        import re

        pattern = re.compile(layout.temp_pattern(config.name))
        for entry in _entries(config.parent):
            if pattern.fullmatch(entry.name) and entry.is_file():
                self.leftover_temp(entry, "config set")

    def reporter(self, path: Path) -> rules.Report:
        return lambda severity, code, message: self.add(severity, path, message, code)

    def _count(self, key: str) -> None:
        self._seen.add(key)
        self.report.files_checked += 1
        if self.progress:
            self.progress(self.report.files_checked)

    def _parse(self, path: Path, *, memory_file: bool = False) -> tuple[bool, Any]:
        """Read one file once; an unparsable file is an error finding. A FileMemory file is read under
        its shared lock and re-read when it does not parse, as an older release may be rewriting it."""
        key = str(path)
        if key in self._seen:
            return False, None
        self._count(key)
        try:
            if memory_file:
                return True, memory.read_settled(path, self.timeout)[1]
            return True, jsonfile.read(path)
        except LockTimeout as exc:
            self.add("error", path, exc.message.split(": ", 1)[-1], "memory.locked")
            return False, None
        except PraisonMemError as exc:
            reason = getattr(exc, "reason", exc.message)
            self.add("error", path, f"{reason}: {self._consequence(path, exc, memory_file)}", "parse")
            return False, None

    @staticmethod
    def _consequence(path: Path, exc: PraisonMemError, memory_file: bool = False) -> str:
        """What the library does with a file ``check`` could not read for the reason ``exc`` gives."""
        if memory_file and path.parent.name == layout.SAVED_SESSIONS:  # a FileMemory user's sessions/, not a home's
            return "FileMemory.resume_session reads it as an empty saved session"
        if path.parent.name == layout.SESSIONS and path.name.endswith(layout.JSON):
            return _session_consequence(exc)
        if path.name in layout.MEMORY_FILES or path.parent.name == layout.EPISODIC:
            return "FileMemory reads it as empty and overwrites it on its next write"
        return "the library cannot read it"

    # -------------------------------------------------------- trees

    def home(self, root: Path) -> None:
        for sub, check in (((layout.SESSIONS,), self.sessions_dir), ((layout.LEARN,), self.learn_dir),
                           (layout.SPILL_DIR, self.spill_dir), ((layout.MEMORY,), self.memory_base)):
            if root.joinpath(*sub).is_dir():
                check(root.joinpath(*sub))

    def sessions_dir(self, root: Path) -> None:
        """Every entry in path order; the session files are read and checked first, in the fork pool when
        there are many (:func:`_checked_sessions`), and their findings added in their place."""
        held: dict[str, tuple[Any, str | None, str]] = {}  # session id -> (updated_at, text digest, file): the index
        listed = _listing(root)
        todo = [path for path, name, is_file, _ in listed
                if is_file and name.endswith(layout.JSON) and path not in self._seen]
        indexed = (root / layout.INDEX_DB).is_file()  # only then is each session's index text digested
        checked = dict(zip(todo, parallel.map_chunks(partial(_checked_sessions, digests=indexed), todo)))
        names = {name: is_file for _, name, is_file, _ in listed}
        for path, name, is_file, maybe_dir in listed:
            if is_file and name.endswith(layout.JSON):
                if path not in self._seen:
                    self._count(path)
                    findings, session = checked[path]
                    for finding in findings:
                        self.add(*finding)
                    if session is not None:
                        self._sessions[path] = session
                if path in self._sessions:  # checked now, or earlier as a PATH of its own
                    sid, updated, digest = self._sessions[path]
                    held[sid] = (updated, digest, path)
                continue
            if not maybe_dir and name.endswith(layout.JSON_LOCK):  # the common case, told from the listing alone
                self._lock_sidecar(root, path, name, names)
                continue
            entry = Path(path)
            if name == layout.TRANSCRIPT_DB and entry.is_file():
                self.transcript_db(entry)
            elif name == layout.PROJECTS and entry.is_dir():
                for project in _entries(entry):
                    if project.is_dir():  # the praisonai CLI's per-project stores: JSON directories of their own
                        self.sessions_dir(project)
            elif entry.is_dir() and (entry / layout.RUN_METADATA).is_file():
                self.run_dir(entry)
            elif name.endswith(layout.JSON_LOCK):
                self._lock_sidecar(root, path, name, names)
            elif layout.JSON_QUARANTINED in name:
                self.add("warning", entry, "quarantined by the library: the bytes of a session file that did not "
                                           "parse; inspect it, then delete it", "leftover.quarantined")
            elif name.endswith(layout.TEMP):
                self.leftover_temp(entry)
        if (root / layout.INDEX_DB).is_file():
            self.session_index(root / layout.INDEX_DB, held)

    def _lock_sidecar(self, root: Path, path: str, name: str, names: dict[str, bool]) -> None:
        """A ``X.json.lock`` in a sessions dir: worth a word only when no ``X.json`` exists. ``names``: the dir's
        listing (name -> is a file), which answers without a ``stat`` unless X.json is listed but no file."""
        session = name[: -len(layout.LOCK)]
        if session in names and (names[session] or (root / session).exists()):
            return
        self.add("info", Path(path), "lock file without a session (left after a delete; harmless, and "
                                     "deleting it while agents run opens a race)", "leftover.lock")

    def session_file(self, path: Path) -> None:
        """One session file given on its own (:func:`_checked_sessions`, as a sessions dir checks each of its)."""
        key = str(path)
        if key in self._seen:
            return
        self._count(key)
        [(findings, session)] = _checked_sessions([key], digests=(path.parent / layout.INDEX_DB).is_file())
        for finding in findings:
            self.add(*finding)
        if session is not None:
            self._sessions[key] = session

    def run_dir(self, root: Path) -> None:
        """A praisonai CLI run (``SessionManager``): ``metadata.json`` it can load, ``events.jsonl`` lines it reads."""
        ok, meta = self._parse(root / layout.RUN_METADATA)
        if ok:
            rules.run_metadata(meta, self.reporter(root / layout.RUN_METADATA))
        events = root / layout.RUN_EVENTS
        if events.is_file():
            self.report.files_checked += 1
            try:
                lines = events.read_bytes().splitlines()
            except OSError as exc:
                self.add("error", events, io_failure(events, exc).message.split(": ", 1)[-1], "run.events")
                return
            rules.run_events(lines, self.reporter(events))

    def session_index(self, path: Path, held: dict[str, tuple[Any, str | None, str]]) -> None:
        """``sessions_index.db`` against the sessions beside it (``held``: id -> (``updated_at``, text digest,
        file)): rows of sessions that are gone, rows holding text their session no longer has, sessions it
        lacks, rows older than their session, and a scrub a killed praisonmem write left unfinished."""
        self.report.files_checked += 1
        try:
            index = sessions.read_index(path)
        except PraisonMemError as exc:
            reason = getattr(exc, "reason", exc.message)
            self.add("error", path, f"{reason}: PraisonAI's guard quarantines and rebuilds it on its next open",
                     "index.unreadable")
            return
        if index.kind is None:
            return
        fix = migrate.command(self._paths_for(home=_home_of(path.parent)), "migrate")
        if index.scrub_pending:
            self.add("warning", path, "a praisonmem write was interrupted before it cleared the text it removed out "
                                      "of the index's files: old page versions (in the file or its -wal) may still "
                                      "hold it", "index.scrub_pending", fix)
        for sid in sorted(index.ids - set(held)):
            self.add("warning", path, f"holds the text of session '{sid}', which no session file here has (deleted "
                                      "by a tool that does not keep the index, or an interrupted delete or rename): "
                                      "it stays searchable through PraisonAI, and on disk", "index.orphan", fix)
        differing = {sid for sid, (_, digest, _) in held.items()
                     if digest is not None and sid in index.digests and index.digests[sid] != [digest]}
        ahead = self._holding_more(path, {sid: held[sid][2] for sid in differing})
        for sid, (updated, _, _) in sorted(held.items()):
            if sid in ahead:
                self.add("warning", path, f"the row of session '{sid}' holds text its session file no longer has "
                                          "(an interrupted write, or a tool that changed the file without the "
                                          "index): PraisonAI's search still finds the session by it, and it stays "
                                          "on disk", "index.stale_text", fix)
            elif sid not in index.updated:
                self.add("info", path, f"session '{sid}' is not indexed yet: PraisonAI's search adds it",
                         "index.missing")
            elif index.updated[sid] != updated or sid in differing:
                routed = sid in index.routed
                self.add("warning" if routed else "info", path,
                         f"the row of session '{sid}' is older than the session (updated_at {index.updated[sid]!r} "
                         f"in the index, {updated!r} in the file): " + (
                             "PraisonAI's search and gateway routing keep using it until an indexed write"
                             if routed else "PraisonAI's search keeps using it until an indexed write"), "index.stale")

    @staticmethod
    def _holding_more(index: Path, files: dict[str, str]) -> set[str]:
        """Of the sessions whose index text differs from their file's, those whose rows hold text the file does
        not (not merely the file's text so far, which later turns extend)."""
        if not files:
            return set()
        try:
            texts = sessions.read_index_texts(index, set(files))
        except PraisonMemError:
            return set()
        ahead = set()
        for sid, path in files.items():
            try:
                current = sessions.index_text(jsonfile.read_object(path))
            except PraisonMemError:
                continue
            if any(not sessions.index_behind(row, current) for row in texts.get(sid, [])):
                ahead.add(sid)
        return ahead

    def transcript_db(self, path: Path) -> None:
        """``sessions.db``: read-only, like every read (never the library's opener, which repairs)."""
        if str(path) in self._seen:
            return
        self._seen.add(str(path))
        self.report.files_checked += 1
        if self.progress:
            self.progress(self.report.files_checked)
        try:
            found = sessions.inspect_db(path)
        except PraisonMemError as exc:
            self.add("error", path, f"{getattr(exc, 'reason', exc.message)}: the library's opener moves it aside and "
                                    "starts an empty database, then imports every JSON file beside it again",
                     "sessions_db.unreadable")
            return
        if found.quick_check != "ok":
            self.add("error", path, f"quick_check found damage ({found.quick_check}): the library's opener copies it "
                                    "aside and rebuilds or replaces it the next time it opens it; back it up first",
                     "sessions_db.integrity")
        from praisonmem.core.io.sqlite import residue

        left = residue(path)
        if left is not None:
            self.add("warning", path, f"{left}: scrub it, as a delete does", "sessions_db.residue",
                     migrate.command(self._paths_for(home=_home_of(path.parent)), "migrate"))
        beside = sessions.json_files_beside(path.parent)
        if not found.rows and beside:
            self.add("info", path, f"no sessions yet: the gateway imports the {plural(len(beside), 'JSON file')} beside it on "
                                   "its next start", "sessions_db.import_pending")
        for sid, raw, columns in found.rows:
            self.transcript_row(path, sid, raw, columns)
        if found.rows and path.parent.name == layout.SESSIONS:
            self.missing_from_db(path)

    def transcript_row(self, db: Path, sid: str, raw: bytes, columns: tuple) -> None:
        where = f"{db}:{sid}"
        try:
            doc = jsonfile.parse(raw, where)
        except PraisonMemError as exc:
            doc = exc
        if not isinstance(doc, dict):
            reason = getattr(doc, "reason", None) or f"top-level JSON value is {jsonfile.json_kind(doc)}, not an object"
            self.add("error", where, f"{reason}: the library loads it as a new, empty session and overwrites it on "
                                     "its next write", "parse")
            return
        named = doc.get("session_id")
        rules.session(doc, sessions.safe_file_stem(named) if isinstance(named, str) else sid, self.reporter(where))
        if isinstance(named, str) and named != sid:
            self.add("warning", where, f"its document names session '{named}': the library finds it by the row's key "
                                       f"'{sid}' and writes '{named}' back into it", "sessions_db.key")
        wanted = tuple(doc.get(k) for k in ("agent_name", "gateway_session_id", "agent_id", "updated_at"))
        if columns != wanted:
            self.add("warning", where, "its columns (agent_name, gateway_session_id, agent_id, updated_at) disagree "
                                       "with its document: the gateway's lookups by agent and gateway session use "
                                       "the columns", "sessions_db.columns")

    def missing_from_db(self, db: Path) -> None:
        from praisonmem.core.paths import resolve

        found = sessions.db_import_candidates(resolve(db.parent.parent, env={}))
        fix = migrate.command(self._paths_for(home=db.parent.parent), "migrate")
        if found and found[0]:
            ids = ", ".join(c.session_id for c in found[0][:5]) + (" …" if len(found[0]) > 5 else "")
            self.add("info", db, f"{plural(len(found[0]), 'JSON session')} the gateway does not see ({ids}): sessions.db holds "
                                 "sessions, so its one-time import of the JSON files will not run again; import them "
                                 "with 'praisonmem migrate'", "sessions_db.missing_json", fix)

    def spill_dir(self, root: Path) -> None:
        for entry in _entries(root):
            if entry.name.endswith(layout.TEMP):
                self.leftover_temp(entry, "spill")
            elif entry.name.endswith(layout.JSON) and entry.is_file():
                self.spill_file(entry)

    def spill_file(self, path: Path) -> None:
        ok, doc = self._parse(path)
        if not ok:
            return
        sid = doc.get("session_id") if isinstance(doc, dict) else None
        messages = doc.get("messages") if isinstance(doc, dict) else None
        if not isinstance(sid, str) or not isinstance(messages, list):
            self.add("error", path, "not a spill record ({session_id, spilled_at, messages})", "spill.shape")
        elif not path.name.startswith(f"{sessions.safe_file_stem(sid)}."):
            self.add("warning", path, f"spill record for '{sid}' is named for another session; the library "
                                      "will never merge it", "spill.name")
        else:
            waiting = (f"{plural(len(messages), 'turn')} for session '{sid}' {'waits' if len(messages) == 1 else 'wait'} "
                       "here after a failed write")
            if self._session_exists(path.parent, sid) is False:
                self.add("warning", path, f"{waiting}, but no session file holds that id (renamed, adopted or "
                                          f"deleted?): the library merges them only if an agent opens '{sid}' "
                                          "again", "leftover.spill")
            else:
                self.add("warning", path, f"{waiting}; the library merges them on the session's next load",
                         "leftover.spill")

    def _session_exists(self, spill_dir: Path, session_id: str) -> bool | None:
        """Whether a session file holds ``session_id`` (``None``: this spill dir's sessions dir is unknown)."""
        sibling = spill_dir.parent.parent / layout.SESSIONS  # <root>/state/session_spill beside <root>/sessions
        sessions_dir = sibling if sibling.is_dir() else self.sessions_dirs.get(spill_dir)
        if sessions_dir is None:
            return None
        candidate = sessions_dir / sessions.session_file_name(session_id)
        try:
            return jsonfile.read_object(candidate).get("session_id", candidate.stem) == session_id
        except NotFound:
            return False
        except PraisonMemError:
            return True  # unreadable: reported on its own; the library would quarantine it and start afresh

    def learn_dir(self, root: Path) -> None:
        for path in sorted(root.rglob("*")):
            if path.is_dir():
                continue
            if path.name.endswith(layout.LEARN_ARCHIVE):
                ok, doc = self._parse(path)
                if ok and not isinstance(doc, list):
                    self.add("warning", path, "archive sidecar is not a list", "learn.archive")
            elif path.name.endswith(layout.JSON_LOCK):
                try:
                    age = time.time() - path.stat().st_mtime
                except FileNotFoundError:  # released while we looked
                    continue
                if age > learn.STALE_AFTER:
                    self.add("warning", path, f"stale learn-store lock ({int(age)} s old): the library breaks "
                                              "it on its next write", "leftover.learn_lock")
                else:
                    self.add("info", path, "learn store is locked by a writer right now", "leftover.learn_lock")
            elif path.name.endswith(layout.TEMP):
                self.leftover_temp(path)
            elif path.name.endswith(layout.JSON):
                self.learn_file(path)
            elif path.name == layout.LEARN_DB and path.parent == root:
                self.learn_db(path)

    def learn_db(self, path: Path) -> None:
        """The sqlite backend's ``learn.db`` (read-only, no byte changed): the library's table, each store's row
        as a store file is checked, and a scrub a killed praisonmem write left unfinished."""
        self.report.files_checked += 1
        try:
            stores, unreadable, pending = learn.inspect_db(path)
        except PraisonMemError as exc:
            self.add("error", path, f"{getattr(exc, 'reason', exc.message)}: the library cannot load its learn "
                                    "stores from it", "learn.unreadable_db")
            return
        for problem in unreadable:
            self.add("error", path, f"{problem.removeprefix(f'{path}: ')}: the library loads that store as empty, and its "
                                    "next write of it replaces the row", "learn.corrupt_row")
        for doc in stores.values():
            rules.learn_store(doc, self.reporter(path))
        if pending:
            self.add("warning", path, "a praisonmem write was interrupted before it cleared the text it removed out "
                                      "of the database's files: old page versions (in the file or its -wal) may "
                                      "still hold it; praisonmem's next learn write on it finishes that",
                     "learn.scrub_pending")

    def learn_file(self, path: Path) -> None:
        ok, doc = self._parse(path)
        if ok:
            rules.learn_store(doc, self.reporter(path))

    def memory_base(self, root: Path) -> None:
        if memory.looks_like_user(root):
            self.memory_user(root)
        nested = [name for name in memory.file_users(root) if "/" in name]  # team/alice: before 1.6.58
        for entry in sorted([e for e in _entries(root) if e.is_dir() and not e.name.startswith(".")]
                            + [root / name for name in nested]):
            reason = memory.legacy_user_reason(entry.relative_to(root).as_posix())
            if reason:
                self.add("warning", entry, reason, "memory.legacy_user_dir")
            self.memory_user(entry)

    def memory_user(self, root: Path) -> None:
        ids: dict[str, list[str]] = {}
        for name in layout.MEMORY_FILES:
            path = root / name
            if path.is_file():
                ids[name] = self.memory_file(path)
        shared = sorted(set(ids.get(layout.SHORT_TERM, [])) & set(ids.get(layout.LONG_TERM, [])))
        if shared:
            self.add("info", root, f"{plural(len(shared), 'id')} in both short- and long-term memory (auto-promotion keeps "
                                   "the id): " + ", ".join(shared[:5]) + (" …" if len(shared) > 5 else ""),
                     "memory.promoted")
        for entry in _entries(root):
            if entry.name.endswith(layout.TEMP):
                self.leftover_temp(entry)
        episodic = root / layout.EPISODIC
        for entry in _entries(episodic):
            if entry.name.endswith(layout.TEMP):
                self.leftover_temp(entry)
            elif entry.name.endswith(layout.JSON):
                self.memory_file(entry)
        for sub in layout.MEMORY_SUBDIRS[1:]:  # sessions/, checkpoints/
            for entry in _entries(root / sub):
                if entry.name.endswith(layout.JSON):
                    self._parse(entry, memory_file=True)

    def memory_file(self, path: Path) -> list[str]:
        if path.parent.name == layout.EPISODIC:
            rules.episodic_date(path.name[: -len(layout.JSON)], self.reporter(path))
        ok, doc = self._parse(path, memory_file=True)
        if not ok:
            return []
        report = self.reporter(path)
        if path.name == layout.ENTITIES:
            rules.entities(doc, report)
        elif path.name == layout.SUMMARIES:
            rules.summaries(doc, report)
        elif path.name == layout.MEMORY_CONFIG:
            rules.config(doc, report)
        else:
            return rules.memory_items(doc, path.name, report)
        return []

    def conversation_json_dir(self, root: Path) -> None:
        """praisonai's JSON conversation store: each session file the library's ``get_session`` must load, the
        index its ``list_sessions`` walks (one that lies: what the library then does), and the temp files killed
        writes left."""
        store = sessions.ConversationJsonStore(root)
        for ref in store.refs():
            self._count("sessions")
            try:
                store.read(ref)
            except PraisonMemError as exc:
                self.add("error", ref.where, f"{getattr(exc, 'reason', exc.message)}: the library's get_session "
                         "fails on it, and so does its list_sessions for the whole store while it is indexed; "
                         "praisonmem never overwrites it", "conversation.parse")
        for problem in store.index_problems():
            where, _, message = problem.partition(": ")
            self.add("warning", where, message + "; praisonmem's next write to the store repairs the index",
                     "conversation.index")
        for entry in _entries(root):
            if entry.name.endswith(layout.TEMP) and entry.is_file():
                self.leftover_temp(entry)

    # -------------------------------------------------------- dispatch

    def path(self, path: Path) -> None:
        if not path.exists():
            raise NotFound(f"{path}: no such file or directory")
        try:
            kind = classify(path)
        except UsageError:
            memory_dir = project_memory(path)
            if memory_dir is None:
                raise
            path, kind = memory_dir, classify(memory_dir)
        self.report.roots.append(str(path))
        CHECKS[kind](self, path)
        self.migrations(kind, path)

    # -------------------------------------------------------- what an upgrade left behind (praisonmem migrate)

    def migrations(self, kind: str, root: Path) -> None:
        """``migrate``'s proposals for the home or FileMemory tree ``root`` is (or holds), as warnings with
        their fix; a user directory gets only its own."""
        if kind in ("home", "sessions_dir"):
            home = root if kind == "home" else root.parent
            proposals = migrate.find(self._paths_for(home=home), where="home", timeout=self.timeout, walked=False)
        elif kind in ("memory_base", "memory_user"):
            base = root if kind == "memory_base" else root.parent
            proposals = migrate.find(self._paths_for(memory_dir=base), where="project", timeout=self.timeout,
                                     walked=False)
            if kind == "memory_user":
                proposals = [p for p in proposals if _within(Path(p.subject), root)]
        else:
            return
        seen = {(f.file, f.code) for f in self.report.findings}
        for proposal in proposals:
            if (proposal.subject, proposal.kind) not in seen:  # sessions.db's own walk may have said it already
                self.add("warning", proposal.subject, proposal.detail, proposal.kind, proposal.fix_command or None)

    def _paths_for(self, *, home: Path | None = None, memory_dir: Path | None = None) -> Paths:
        """The paths migrate's finders look at for a checked root: the resolved ones when the root is one of
        them, else the root as if given with ``--home`` / ``--memory-dir`` (so fix commands name it)."""
        base = self.paths or resolve()
        if home is not None and not _same(home, base.data.path):
            base = replace(base, data=Resolved(home, "--home"), state=Resolved(home, "--home"))
        if memory_dir is not None and not _same(memory_dir, base.memory.path):
            base = replace(base, memory=Resolved(memory_dir, "--memory-dir"))
        return base


# What checks each kind of path :func:`classify` names.
CHECKS: dict[str, Callable[[Checker, Path], object]] = {
    "home": Checker.home, "sessions_dir": Checker.sessions_dir, "spill_dir": Checker.spill_dir,
    "learn_dir": Checker.learn_dir, "memory_base": Checker.memory_base, "memory_user": Checker.memory_user,
    "transcript_db": Checker.transcript_db, "session_file": Checker.session_file, "memory_file": Checker.memory_file,
    "spill_file": Checker.spill_file, "learn_file": Checker.learn_file,
    "conversation_json_dir": Checker.conversation_json_dir,
}


def _session_consequence(exc: PraisonMemError) -> str:
    """What ``DefaultSessionStore`` (praisonaiagents 1.7.17) does with a session file it cannot load: it quarantines
    only one that is not UTF-8 or not JSON (``UnicodeDecodeError``, ``JSONDecodeError``); an ``OSError`` it
    re-raises, so the file stays, a load gives an empty history without writing, and every write of the session
    fails (a turn it was adding goes to the spill dir); any other error (nesting too deep, a number too long)
    escapes its loader."""
    import json

    cause = exc.__cause__
    if isinstance(exc, CorruptFile) and isinstance(cause, (UnicodeDecodeError, json.JSONDecodeError)):
        return "the library quarantines it (renames it *.corrupt-<ms>) and starts an empty session"
    if isinstance(exc, NotRegularFile):
        return "the library's read of it waits on it or never ends (only a regular file is a session)"
    if isinstance(exc, CorruptFile):
        return "the library's load fails on it with an error it does not catch (it is not quarantined)"
    return ("the library cannot read it either: it leaves the file as it is, an agent resuming the session starts "
            "with an empty history, and each write of it fails (a turn it was adding is saved to the spill dir)")


def _temp_origin(name: str, writer: str) -> tuple[str, str | None]:
    """What a temp file's name says of the write that left it (the layout's temp names: praisonmem's atomic replace,
    which FileMemory uses as well, a restore's, the library's), and the file that write was replacing (when the name
    is the atomic replace's ``.<file>.<random>.tmp``)."""
    import re

    own = re.fullmatch(layout.OWN_TEMP, name)
    if own:
        return (f"temp copy of {own['target']} left by a write of it that was killed before its rename (praisonmem's "
                "atomic replace, or FileMemory's): it holds what was being written", own["target"])
    if layout.is_restore_temp(name):
        return ("temp file of a backup restore that was killed before its rename: it holds the file being restored; "
                "the next restore writing into this directory removes it once the process that made it is gone", None)
    if re.fullmatch(layout.CONVERSATION_TEMP, name):
        return ("temp file praisonai's JSONConversationStore left when its atomic write was killed before the "
                "rename: it holds what was being written", None)
    if re.fullmatch(layout.LIBRARY_TEMP, name):
        return ("temp file the library's session store left when its atomic write was killed before the rename: it "
                "holds what was being written", None)
    return f"temp file left by an interrupted {writer}", None


def _home_of(sessions_dir: Path) -> Path:
    """The home a JSON directory belongs to: ``<home>/sessions`` or ``<home>/sessions/projects/<id>``."""
    if sessions_dir.parent.name == layout.PROJECTS and sessions_dir.parent.parent.name == layout.SESSIONS:
        return sessions_dir.parent.parent.parent
    return sessions_dir.parent


def _listing(directory: Path) -> list[tuple[str, str, bool, bool]]:
    """A directory's entries as (path, name, is a file, may be a directory: one or a symlink), sorted by path
    string."""
    try:
        with os.scandir(directory) as it:
            return sorted((e.path, e.name, e.is_file(), e.is_dir(follow_symlinks=False) or e.is_symlink())
                          for e in it)
    except (FileNotFoundError, NotADirectoryError):
        return []
    except PermissionError as exc:
        raise io_failure(directory, exc) from exc


Found = tuple[str, str, str, str]  # (severity, file, message, code), as Checker.add takes them


Held = tuple[str, Any, "str | None"]  # a session's id, updated_at and index text digest, for its dir's index


def _checked_sessions(paths: list[str], digests: bool = False) -> list[tuple[list[Found], Held | None]]:
    """Each session file's findings (a REPL/TUI file by its own rules) and its (session id, ``updated_at``, with
    ``digests`` the digest of its index text) for the index check, ``None`` when it does not parse: the one check
    of a session file, for a sessions dir's files (maybe in a worker) and for a file given on its own."""
    out: list[tuple[list[Found], Held | None]] = []
    for path in paths:
        found: list[Found] = []
        session: Held | None = None

        def report(severity: Severity, code: str, message: str, path: str = path) -> None:
            found.append((severity, path, message, code))

        try:
            doc = jsonfile.read(path)
        except PraisonMemError as exc:
            reason = getattr(exc, "reason", exc.message)
            found.append(("error", path, f"{reason}: {Checker._consequence(Path(path), exc)}", "parse"))
        else:
            if not isinstance(doc, dict):
                found.append(("error", path, f"top-level JSON value is {jsonfile.json_kind(doc)}, not an object",
                              "parse"))
            else:
                stem = os.path.basename(path)[: -len(layout.JSON)]
                if sessions.is_unified(doc):
                    sessions.unified_rules(doc, stem, report)
                else:
                    rules.session(doc, stem, report)
                sid = doc.get("session_id")
                session = (sid if isinstance(sid, str) else stem, doc.get("updated_at"),
                           sessions.session_digest(doc) if digests else None)
        out.append((found, session))
    return out


def _entries(directory: Path) -> list[Path]:
    try:
        with os.scandir(directory) as it:
            return sorted(Path(e.path) for e in it)
    except (FileNotFoundError, NotADirectoryError):
        return []
    except PermissionError as exc:
        raise io_failure(directory, exc) from exc


def classify(path: Path) -> str:
    """The kind of PraisonAI path this is, by its shape (a key of :data:`CHECKS`); a usage error when it is none."""
    if path.is_file():
        if path.name == layout.TRANSCRIPT_DB:
            return "transcript_db"
        if path.parent.name == layout.SESSIONS:
            return "session_file"
        if path.parent.name == layout.EPISODIC or path.name in layout.MEMORY_FILES:
            return "memory_file"
        if path.parent.name == layout.SPILL:
            return "spill_file"
        if layout.LEARN in path.parts:
            return "learn_file"
        if path.name.endswith(layout.JSON):
            return "session_file"
    elif path.is_dir():
        if sessions.is_conversation_dir(path):
            return "conversation_json_dir"
        if path.name == layout.SESSIONS:
            return "sessions_dir"
        if path.name == layout.SPILL:
            return "spill_dir"
        if path.name == layout.LEARN:
            return "learn_dir"
        if any((path / sub).is_dir() for sub in (layout.SESSIONS, layout.LEARN, layout.STATE)):
            return "home"
        if memory.looks_like_user(path):
            return "memory_user"
        if path.name == layout.MEMORY or any(memory.looks_like_user(Path(e)) for e in _entries(path) if e.is_dir()):
            return "memory_base"
        if not _entries(path):  # a CI job must not pass by checking nothing, nor fail as if it were misused
            raise NotFound(f"nothing to check: {path} is an empty directory")
    raise UsageError(f"{path}: not a PraisonAI home, sessions, spill, learn or FileMemory path, nor a project "
                     "holding .praisonai/memory")


def project_memory(path: Path) -> Path | None:
    """The FileMemory tree of a project directory (``DIR/.praisonai/memory``, or ``DIR/memory`` for the
    ``.praisonai`` dir itself): where the library writes it, so ``check DIR`` in a project checks it."""
    for candidate in (path / DEFAULT_DIR_NAME / layout.MEMORY, path / layout.MEMORY):
        if candidate.is_dir() and (candidate.parent.name == DEFAULT_DIR_NAME):
            return candidate
    return None


def default_roots(paths: Paths) -> list[Path]:
    """The resolved home, spill dir and memory dir that exist and look like PraisonAI trees."""
    roots: list[Path] = []
    for candidate in (paths.data.path, paths.spill_dir, paths.memory_dir):
        if not candidate.is_dir() or any(_within(candidate, r) for r in roots):
            continue
        try:
            classify(candidate)
        except UsageError:  # e.g. a home the library created but never wrote into
            continue
        roots.append(candidate)
    return roots


def _same(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False


def _within(path: Path, root: Path) -> bool:
    try:
        path.resolve().relative_to(root.resolve())
    except ValueError:
        return False
    return True


def check(targets: Iterable[str | os.PathLike[str]], progress: Callable[[int], None] | None = None,
          paths: Paths | None = None, timeout: float = jsonfile.LOCK_TIMEOUT, config: Path | None = None) -> Report:
    """Check each target; ``paths`` tells which sessions dir the resolved spill dir belongs to; with ``config``
    (the config file), the temp files a killed config write left beside it are reported too."""
    checker = Checker(progress, {paths.spill_dir: paths.sessions_dir} if paths is not None else None, timeout,
                      paths)
    for target in targets:
        checker.path(Path(target))
    if config is not None:
        checker.config_dir(config)
    return checker.report


def run(paths: Paths, targets: list[str] | None = None, *, progress: Callable[[int], None] | None = None,
        timeout: float = jsonfile.LOCK_TIMEOUT) -> Report:
    """``check``: the given paths, or the resolved home and memory dir; finding nothing to check is
    :class:`NotFound`, so a CI job does not pass by checking nothing."""
    if targets and any(not t.strip() for t in targets):
        raise UsageError("a PATH must not be empty")
    roots = [Path(t) for t in targets] if targets else default_roots(paths)
    if not roots:
        raise NotFound(f"nothing to check: no PraisonAI home at {paths.data.path} and no FileMemory at "
                       f"{paths.memory_dir} (give a PATH)")
    from praisonmem.core.config import config_path

    return check(roots, progress=progress, paths=paths, timeout=timeout,
                 config=None if targets else config_path()[0])
