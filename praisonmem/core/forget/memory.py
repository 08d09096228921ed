"""``forget`` in the local memory-like stores: FileMemory, SQLite memory, the learn stores and mem0's history.db
(Upsonic's files are :mod:`.upsonic`'s, praisonmem's cache :mod:`.cache`'s).

Each store plans by reading only (every file read without a lock file being made or a byte changed) and erases
through the module that owns its writes, with that module's lock: FileMemory's per-user lock and the library's
serialisation (:class:`~praisonmem.core.memory.FileMemoryStore`), the adapter's SQLite tables
(:class:`~praisonmem.core.memory.SqliteMemoryStore`), the learn stores' ``O_EXCL`` lock
(:func:`praisonmem.core.learn.erase`) and mem0's ``BEGIN IMMEDIATE`` (:class:`~praisonmem.core.memory.HistoryDb`).
SQLite deletes run with ``secure_delete`` and are followed by an emptied WAL and a ``VACUUM``. Every erasure's key
names the record itself (``alice/long_term.json#<id>``), so erasing what a journalled plan names a second time finds
it gone and counts nothing.

What the libraries record, and so what each subject matches:

* ``--user``: the user's own directory or file (FileMemory's ``<user>/``, SQLite memory's ``<tier>_<user>.db``,
  learn's ``<scope>/<user>/``), whole; and anywhere else, the records whose metadata names the user
  (``user_id``: an agent's turns carry it). mem0 keeps the user in its session scopes (``user_id=<id>``) and, for
  memories, in its vector store only: a history event goes with the memories the subject's Chroma payloads name.
* ``--session``: the records whose metadata carries that ``session_id`` (the agent stamps every turn it stores),
  FileMemory's saved session of that name, mem0's scopes with that ``run_id``.
* ``--agent``: metadata ``agent_id`` or ``agent_name`` (the agent's turns, its saved sessions), mem0's scopes with
  that ``agent_id`` and the events it wrote as ``actor_id``.
* ``--before``: only records the store dates (items' ``created_at``, rows' ``timestamp``), older than that.
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from praisonmem.core.errors import NotFound, PraisonMemError
from praisonmem.core.forget.match import SCRUB, metadata_names, needles, older, scrubs, sqlite_files, strings
from praisonmem.core.forget.model import Action, Erasure, ForgetStore, StorePlan, Subject, SubjectKind, Where
from praisonmem.core.io import jsonfile

TIERS = ("short_term.json", "long_term.json")
ENTITIES, SUMMARIES = "entities.json", "summaries.json"
SAVED_LISTS = ("short_term", "long_term_snapshot")  # FileMemory.save_session's copies of the tiers


class _Store:
    """What every store here shares: its label, and no server to ask (the proof scans its files)."""

    store = ""
    location = ""

    def residue(self, needles: Sequence[str]) -> list[str] | None:
        return []  # a store of files says nothing beyond them: the proof scans their bytes (none: nothing to hold)

    def _plan(self, **extra: Any) -> StorePlan:
        return StorePlan(self.store, self.location, **extra)

    def plan(self, subject: Subject) -> StorePlan:
        try:
            return self._scan(subject)
        except PraisonMemError as exc:  # a file that does not parse, a lock held too long: reported, never guessed
            return self._plan(unreachable=exc.message)

    def _scan(self, subject: Subject) -> StorePlan:
        raise NotImplementedError


# ------------------------------------------------------------------ FileMemory


class FileMemoryForget(_Store):
    """One FileMemory base (``.praisonai/memory``): every user directory under it."""

    store = "filememory"

    def __init__(self, base: Path, timeout: float = jsonfile.LOCK_TIMEOUT) -> None:
        self.base = base
        self.location = str(base)
        self.timeout = timeout

    def _user(self, name: str) -> Any:
        from praisonmem.core.memory import FileMemoryStore

        return FileMemoryStore.at(self.base, name, timeout=self.timeout)

    def _doc(self, path: Path, default: Any) -> Any:
        """A file's JSON under its shared lock, as the library reads it (no lock file made, nothing changed)."""
        from praisonmem.core.memory import read_settled

        try:
            doc = read_settled(path, self.timeout)[1]
        except NotFound:  # gone since it was listed, or a file this user never had
            return default
        except PraisonMemError:
            if path.suffix != ".json" or path.parent.name == "checkpoints":
                return default  # not one of the library's JSON documents: listed for the proof all the same
            raise
        return doc

    def _scan(self, subject: Subject) -> StorePlan:
        from praisonmem.core.memory import file_users

        plan = self._plan()
        for name in file_users(self.base):
            user = self._user(name)
            own = subject.kind == SubjectKind.user and name != "." and name.strip() == subject.value.strip()
            if own and subject.before is None:
                self._whole_user(plan, name, user)
            else:
                self._items(plan, subject, name, user, own)
        return plan

    def _whole_user(self, plan: StorePlan, name: str, user: Any) -> None:
        for path in user.library_files():
            rel = path.relative_to(user.user_dir).as_posix()
            doc = self._doc(path, None)
            ids = [i.get("id") for i in doc if isinstance(i, dict)] if isinstance(doc, list) else []
            plan.erasures.append(Erasure(f"{name}/{rel}", f"FileMemory user '{name}': {rel}", Action.remove,
                                         needles(strings(doc), *ids, name)))
        plan.erasures.append(Erasure(f"{name}/", f"FileMemory user '{name}': the directory", Action.remove, (name,)))
        plan.files += sorted(p for p in user.user_dir.rglob("*") if p.is_file() and not p.is_symlink())

    def _items(self, plan: StorePlan, subject: Subject, name: str, user: Any, own: bool) -> None:
        def wanted(item: Any) -> bool:
            return isinstance(item, dict) and (own or metadata_names(subject, item.get("metadata"))) \
                and older(subject, item.get("created_at"))

        lists = [n for n in TIERS if user.path(n).is_file()] + [f"episodic/{d}.json" for d in user.episodic_dates()]
        if own and user.path(SUMMARIES).is_file():
            lists.append(SUMMARIES)
        for rel in lists:
            doc = self._doc(user.user_dir / rel, [])
            for item in doc if isinstance(doc, list) else []:
                if wanted(item) and item.get("id") is not None:
                    self._add(plan, user, f"{name}/{rel}#{item['id']}", f"FileMemory user '{name}': {rel} item "
                              f"{item['id']}", needles([item.get("content"), *strings(item)], item["id"]), rel)
        if own:
            doc = self._doc(user.path(ENTITIES), {})
            for key, entity in (doc.items() if isinstance(doc, dict) else ()):
                if older(subject, entity.get("created_at") if isinstance(entity, dict) else None):
                    self._add(plan, user, f"{name}/{ENTITIES}#{key}", f"FileMemory user '{name}': entity {key}",
                              needles(strings(entity), key), ENTITIES)
        saved = user.user_dir / "sessions"
        for path in sorted(saved.glob("*.json")) if saved.is_dir() else []:
            doc = self._doc(path, {})
            meta = doc.get("metadata") if isinstance(doc, dict) else None
            if subject.kind == SubjectKind.session:
                hit = path.stem == subject.value
            else:
                hit = own or metadata_names(subject, meta) or (
                    subject.kind == SubjectKind.user and isinstance(doc, dict) and doc.get("user_id") == subject.value)
            rel = f"sessions/{path.name}"
            if hit and older(subject, doc.get("saved_at") if isinstance(doc, dict) else None):
                plan.erasures.append(Erasure(f"{name}/{rel}", f"FileMemory user '{name}': saved session {path.stem}",
                                             Action.remove, needles(strings(doc), path.stem)))
                plan.files.append(path)
                continue
            for key in SAVED_LISTS if isinstance(doc, dict) else ():  # its copies of the tiers hold items too
                for item in doc.get(key) if isinstance(doc.get(key), list) else ():
                    if wanted(item) and item.get("id") is not None:
                        self._add(plan, user, f"{name}/{rel}#{item['id']}", f"FileMemory user '{name}': saved session "
                                  f"{path.stem}, copy of item {item['id']}",
                                  needles([item.get("content"), *strings(item)], item["id"]), rel)

    @staticmethod
    def _add(plan: StorePlan, user: Any, key: str, what: str, texts: tuple[str, ...], rel: str) -> None:
        plan.erasures.append(Erasure(key, what, Action.rewrite, texts))
        if user.user_dir / rel not in plan.files:
            plan.files.append(user.user_dir / rel)

    def erase(self, plan: StorePlan) -> int:
        items: dict[tuple[str, str], set[str]] = defaultdict(set)
        files: dict[str, list[str]] = defaultdict(list)
        users: set[str] = set()
        for erasure in plan.erasures:
            target, _, item = erasure.key.partition("#")
            if target.endswith("/"):  # the user's directory itself, after its files
                users.add(target[:-1])
                continue
            name, rel = _split_user(target)
            if item:
                items[(name, rel)].add(item)
            else:
                files[name].append(rel)
        done = 0
        for (name, rel), ids in items.items():
            done += self._user(name).erase_items(rel, frozenset(ids))
        for name in sorted(set(files) | users):
            done += self._user(name).erase_files(files.get(name, []), whole_user=name in users)
        return done


def _split_user(target: str) -> tuple[str, str]:
    """``<user>/<file>`` back into the user directory's name (nested ``team/alice`` included) and the file."""
    for marker in ("/episodic/", "/sessions/", "/checkpoints/"):
        if marker in target:
            name, _, rest = target.partition(marker)
            return name, marker.strip("/") + "/" + rest
    name, _, rel = target.rpartition("/")
    return name, rel


# ------------------------------------------------------------------ SQLite memory


class SqliteMemoryForget(_Store):
    """One SQLite memory file, ``<tier>[_<user>].db``: its user's own file whole, or the rows naming the subject.
    A user's emptied file stays (vacuumed, it holds none of their text): the library opens it at every start."""

    store = "sqlite-memory"

    def __init__(self, db: Path, timeout: float = 5.0) -> None:
        self.db = db
        self.location = str(db)
        self.timeout = timeout
        name = db.name[:-3]
        self.tier = "long_term" if name.startswith("long_term") else "short_term"
        self.suffix = name[len(self.tier):]

    def _memory(self) -> Any:
        from praisonmem.core.memory import SqliteMemoryStore

        return SqliteMemoryStore(self.db.parent, "", timeout=self.timeout, suffix=self.suffix)

    def _scan(self, subject: Subject) -> StorePlan:
        from praisonmem.core.memory import sqlite_user_suffix

        try:
            mine = sqlite_user_suffix(subject.value) if subject.kind == SubjectKind.user else None
        except PraisonMemError:  # an id the library refuses has no file of its own
            mine = None
        own = self.suffix != "" and self.suffix == mine
        plan = self._plan(files=sqlite_files(self.db), erasures=scrubs(self.db))
        for row_id, content, metadata, stamp in self._memory().rows(self.tier, committed=True):
            meta = _json(metadata)
            if (own or metadata_names(subject, meta)) and older(subject, stamp):
                plan.erasures.append(Erasure(f"{self.tier}#{row_id}", f"SQLite memory {self.db.name}: row {row_id}",
                                             Action.remove, needles([content, *strings(meta)])))
        return plan

    def erase(self, plan: StorePlan) -> int:
        ids = [int(e.key.partition("#")[2]) for e in plan.erasures if e.key != SCRUB]
        return self._memory().erase(self.tier, ids)[0] if plan.erasures else 0


def _json(raw: Any) -> Any:
    try:
        return json.loads(raw) if raw else {}
    except (TypeError, ValueError):
        return raw


# ------------------------------------------------------------------ learn


class LearnFilesForget(_Store):
    """``<home>/learn``: ``<scope>/<user>/<store>.json`` and each ``<store>.archive.json`` sidecar."""

    store = "learn-files"

    def __init__(self, root: Path, timeout: float = jsonfile.LOCK_TIMEOUT) -> None:
        self.root = root
        self.location = str(root)
        self.timeout = timeout

    def _scan(self, subject: Subject) -> StorePlan:
        from praisonmem.core.learn import STORES, archive_path, read_archive, read_store

        plan = self._plan()
        for user_dir in sorted(p for p in self.root.glob("*/*") if p.is_dir() and not p.is_symlink()):
            own = subject.kind == SubjectKind.user and user_dir.name == subject.value
            for store in STORES:
                path, archive = user_dir / f"{store}.json", archive_path(user_dir / f"{store}.json")
                if not path.is_file() and not archive.is_file():
                    continue
                label = f"{user_dir.parent.name}/{user_dir.name}/{store}"
                kept = [e for e in [*read_store(path).values(), *read_archive(path)] if isinstance(e, dict)]
                if own and subject.before is None:
                    plan.erasures.append(Erasure(label, f"learn store {label} (and its archive)", Action.remove,
                                                 needles(strings(kept), *(e.get("id") for e in kept))))
                else:
                    for entry in kept:
                        if (own or metadata_names(subject, entry.get("metadata"))) and older(subject,
                                                                                           entry.get("created_at")):
                            plan.erasures.append(Erasure(f"{label}#{entry.get('id')}", f"learn entry {entry.get('id')} "
                                                         f"in {label}", Action.rewrite,
                                                         needles(strings(entry), entry.get("id"))))
                if any(e.key.partition("#")[0] == label for e in plan.erasures):
                    plan.files += [p for p in (path, archive) if p.is_file()]
        return plan

    def erase(self, plan: StorePlan) -> int:
        from praisonmem.core.learn import erase

        groups: dict[str, set[str]] = defaultdict(set)
        whole: set[str] = set()
        for e in plan.erasures:
            label, _, entry = e.key.partition("#")
            (groups[label].add(entry) if entry else whole.add(label))
        done = 0
        for label in sorted(whole | set(groups)):
            path = self.root / f"{label}.json"
            done += erase(path, frozenset(groups.get(label, ())), whole=label in whole, timeout=self.timeout)
            if label in whole:
                _rmdir_if_empty(path.parent)
        return done


def _rmdir_if_empty(directory: Path) -> None:
    try:
        directory.rmdir()
    except OSError:  # not empty (another store, a file the library did not write) or gone already
        pass


class LearnSqliteForget(_Store):
    """``learn.db``: one row per store, shared by every user of the database (the library keeps no user or scope
    there), so entries are the subject's only where their metadata says so. For ``--user``, entries whose owner
    the database cannot tell leave the store unverifiable, said in the plan, rather than being guessed at."""

    store = "learn-sqlite"

    def __init__(self, db: Path, timeout: float = 5.0) -> None:
        self.db = db
        self.location = str(db)
        self.timeout = timeout

    def _backend(self) -> Any:
        from praisonmem.core.learn import SqliteBackend

        return SqliteBackend(self.db)

    def _scan(self, subject: Subject) -> StorePlan:
        plan = self._plan(files=sqlite_files(self.db))
        found, unreadable = self._backend().entries()
        if unreadable:
            return self._plan(unreachable=unreadable[0])
        unowned = 0
        for row in found:
            meta = row.entry.get("metadata")
            if metadata_names(subject, meta) and older(subject, row.entry.get("created_at")):
                plan.erasures.append(Erasure(f"{row.store}#{row.entry.get('id')}", f"learn entry {row.entry.get('id')}"
                                             f" in {self.db.name} '{row.store}'", Action.rewrite,
                                             needles(strings(row.entry), row.entry.get("id"))))
            elif not (isinstance(meta, dict) and meta.get("user_id")):
                unowned += 1
        if subject.kind == SubjectKind.user and unowned:
            return self._plan(unreachable=f"{unowned} entr{'y' if unowned == 1 else 'ies'} of {self.db} name no user "
                                          "(LearnConfig(backend='sqlite') keeps every user's in the same rows): "
                                          "praisonmem cannot tell whose they are; see 'praisonmem learn list --db'")
        return plan

    def erase(self, plan: StorePlan) -> int:
        groups: dict[str, set[str]] = defaultdict(set)
        for e in plan.erasures:
            store, _, entry = e.key.partition("#")
            groups[store].add(entry)
        done = 0
        for store, ids in sorted(groups.items()):
            def change(data: dict[str, Any], ids: set[str] = ids) -> bool:
                nonlocal done
                gone = [k for k, v in data.items() if k in ids or (isinstance(v, dict) and v.get("id") in ids)]
                for key in gone:
                    del data[key]
                done += len(gone)
                return bool(gone)

            self._backend().edit(store, "private", "default", change, self.timeout, create=False)
        return done


# ------------------------------------------------------------------ mem0


class Mem0HistoryForget(_Store):
    """mem0's ``history.db``: the subject's session scopes in ``messages``, and the ``history`` events of the
    memories the subject's mem0 payloads name (``memory_ids``, read from the Chroma stores found beside it) or,
    for an agent, that it wrote (``actor_id``)."""

    store = "mem0-history"

    def __init__(self, db: Path, memory_ids: Callable[[Subject], set[str]], timeout: float = 5.0) -> None:
        self.db = db
        self.location = str(db)
        self.memory_ids = memory_ids
        self.timeout = timeout

    def _history(self) -> Any:
        from praisonmem.core.memory import HistoryDb

        return HistoryDb(self.db, self.timeout)

    def _scan(self, subject: Subject) -> StorePlan:
        plan = self._plan(files=sqlite_files(self.db), erasures=scrubs(self.db))
        db = self._history()
        scope_key = {SubjectKind.user: "user_id", SubjectKind.session: "run_id",
                     SubjectKind.agent: "agent_id"}[subject.kind]
        for row in db.messages(committed=True):
            if scope_names(row.get("session_scope"), scope_key, subject.value) and older(subject, row["created_at"]):
                plan.erasures.append(Erasure(f"messages#{row['id']}", f"mem0 message {row['id']} "
                                             f"({row.get('role')})", Action.remove, needles([row.get("content")])))
        ids = self.memory_ids(subject)
        for event in db.events(committed=True):
            mine = event["memory_id"] in ids or (subject.kind == SubjectKind.agent and event["actor_id"] == subject.value)
            if mine and older(subject, event["created_at"]):
                plan.erasures.append(Erasure(f"history#{event['id']}", f"mem0 history event {event['id']} "
                                             f"({event['event']} of memory {event['memory_id']})", Action.remove,
                                             needles([event["old_memory"], event["new_memory"]], event["memory_id"])))
        return plan

    def erase(self, plan: StorePlan) -> int:
        history = [e.key.partition("#")[2] for e in plan.erasures if e.key.startswith("history#")]
        messages = [e.key.partition("#")[2] for e in plan.erasures if e.key.startswith("messages#")]
        if not self.db.is_file() or not plan.erasures:
            return 0
        return self._history().erase(history, messages)[0]


def scope_names(scope: Any, key: str, value: str) -> bool:
    """Whether mem0's session scope (``agent_id=a&run_id=r&user_id=u``, each value %-escaped) names ``value``."""
    from urllib.parse import unquote

    if not isinstance(scope, str):
        return False
    return any(k == key and unquote(v) == value for k, _, v in (p.partition("=") for p in scope.split("&")))


def chroma_memory_ids(chroma_dirs: Sequence[Path]) -> Callable[[Subject], set[str]]:
    """The ids of mem0 memories whose payload names the subject (``user_id``, ``run_id``, ``agent_id``), from the
    Chroma stores found (each read through a private copy: nothing of theirs changes); none without chromadb."""
    def ids(subject: Subject) -> set[str]:
        from praisonmem.core.io import chroma as chroma_io

        key = {SubjectKind.user: "user_id", SubjectKind.session: "run_id", SubjectKind.agent: "agent_id"}[subject.kind]
        found: set[str] = set()
        for directory in chroma_dirs:
            try:
                with chroma_io.snapshot(directory) as client:
                    for name in chroma_io.names(client):
                        for row in chroma_io.rows(chroma_io.collection(client, name, directory)):
                            if str(row["metadata"].get(key)) == subject.value:
                                found.add(row["id"])
            except PraisonMemError:
                continue  # a Chroma store praisonmem cannot read: its own plan reports it
        return found

    return ids


# ------------------------------------------------------------------ the stores of a forget


def forget_stores(where: Where) -> list[ForgetStore]:
    """The memory-like stores of ``where``: those ``locate`` found (by kind) and the home's own (its FileMemory
    base, SQLite memory files, learn directory, learn.db, mem0's history.db), each once; then Upsonic's files
    (:mod:`.upsonic`) and praisonmem's cache (:mod:`.cache`, last: it looks for what the others' plans hold)."""
    from praisonmem.core.forget import cache, upsonic

    located = [(s.kind, Path(s.path)) for s in where.located if "absent" not in getattr(s, "flags", ())]
    paths = where.paths
    if paths is not None and hasattr(paths, "memory_dir"):
        located += [("filememory", paths.memory_dir), ("learn-files", paths.learn_dir),
                    ("learn-sqlite", paths.learn_dir / "learn.db")]
        project = paths.project_dir
        if project.is_dir():
            located += [("sqlite-memory", p) for p in sorted(project.glob("*_term*.db"))]
        from praisonmem.core.memory import mem0_history_db

        located.append(("mem0-history", mem0_history_db()))
    chroma_dirs = sorted({p for kind, p in located if kind in ("chroma-memory", "chroma-knowledge") and p.is_dir()})
    seen: set[tuple[str, str]] = set()
    stores: list[ForgetStore] = []
    for kind, path in located:
        if kind == "filememory-user":
            kind, path = "filememory", path.parent
        builder = BUILDERS.get(kind)
        if builder is None or not (path.is_dir() if kind in ("filememory", "learn-files") else path.is_file()):
            continue
        identity = (kind, os.path.realpath(path))
        if identity in seen:
            continue
        seen.add(identity)
        stores.append(builder(path, chroma_dirs))
    stores += upsonic.forget_stores(where)
    stores.append(cache.CacheForget.of(where, stores))
    return stores


BUILDERS: dict[str, Callable[[Path, Sequence[Path]], ForgetStore]] = {
    "filememory": lambda p, _: FileMemoryForget(p),
    "sqlite-memory": lambda p, _: SqliteMemoryForget(p),
    "learn-files": lambda p, _: LearnFilesForget(p),
    "learn-sqlite": lambda p, _: LearnSqliteForget(p),
    "mem0-history": lambda p, chroma: Mem0HistoryForget(p, chroma_memory_ids(chroma)),
}
