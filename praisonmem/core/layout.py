"""The layout of a PraisonAI home and FileMemory tree: every name the stores give their files, the kinds of
file, the temp names praisonmem makes, and who locks what. Data and pure functions only: no I/O and no import
of another praisonmem module, so every layer may ask it.

A path is named relative to a *home* whose ``memory/`` is the FileMemory base (a project's ``.praisonai/`` holds
both, as the library writes them there); a backup archives the home's part under ``home/`` and the memory under
``memory/``, which is :data:`ROOTS`:

* ``sessions/``: the JSON store's ``<id>.json`` files and the REPL/TUI's (told apart by their documents),
  ``.last_session``, ``sessions.db`` (the gateway's) and ``sessions_index.db`` (the search index), and the store
  directories in it (:data:`SESSION_SUBDIRS`): ``projects/<8 hex>/`` (a praisonai CLI project store, a JSON
  directory of its own) and ``run_<date>_<time>_<6 hex>/`` (an old ``SessionManager`` run: ``metadata.json``,
  ``events.jsonl``);
* ``state/session_spill/``: turns the library saved aside after a failed write;
* ``learn/<scope>/<user>/<store>.json`` and its ``<store>.archive.json`` (the library's stores and scopes only);
* ``project/``: the project dir (``.praisonai/``, the FileMemory base's parent), for its Chroma directories only
  (:data:`CHROMA_DIRS`): praisonaiagents' rag Memory's ``chroma_db[_<user>]/`` and Knowledge's
  ``knowledge/chroma/``, each ``chroma.sqlite3`` and its HNSW segment dirs' files (:data:`CHROMA_SEGMENT_FILES`),
  archived and restored as whole directories;
* ``memory/[<user dir>/]``: FileMemory's files (``config.json``, ``short_term.json``, …) and the ``*.json`` files
  of its ``episodic/``, ``sessions/`` and ``checkpoints/``; a user directory is up to :data:`NESTING` levels deep
  (releases before 1.6.58 nested ``team/alice``), or the base itself.

:func:`classify` names the :class:`Kind` of a file there (``None``: no store writes it, locks and temp files
included); :func:`file_reason` and :func:`layout_reason` say why a path is not one (what ``backup create``
archives by and ``backup restore`` accepts by: no empty, ``.`` or ``..`` component, no absolute path, no lock or
temp file, so a restore never writes ``authorized_keys`` or ``.bashrc``, whatever an archive lists).

**Who locks what.** Each kind has a :class:`Lock`: how its writers lock it, which a restore takes before it
replaces such a file. The package that owns those files supplies the implementation, a ``(path, timeout)``
context manager; :data:`LOCKERS` names it by module and name and :func:`lock_of` imports it when asked, so
layout stays below every store (it imports none of them) and a new store's lock is one line here.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from contextlib import nullcontext
from enum import StrEnum
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from collections.abc import Callable
    from contextlib import AbstractContextManager
    from pathlib import Path

    Locker = Callable[[Path, float], AbstractContextManager[None]]

# Every command imports this module (core.paths builds the home's dirs from it): its patterns are strings that
# re.fullmatch compiles when first used (and caches), not at import.

# ---------------------------------------------------------------- names

SESSIONS = "sessions"  # the session directory in a home
STATE = "state"  # the state dir's sub-directory that holds the spill dir
SPILL = "session_spill"
SPILL_DIR = (STATE, SPILL)  # below the state dir
LEARN = "learn"
MEMORY = "memory"  # the FileMemory base inside a project's .praisonai/
TRANSCRIPT_DB = "sessions.db"  # SqliteTranscriptStore's database, in the sessions dir
INDEX_DB = "sessions_index.db"  # SqliteSessionStore's search index, beside a JSON directory's files
HUGE_SESSION = 8 << 20  # bytes: a JSON session file this large is read a message at a time (core/sessions/streamed.py)
DATABASES = (TRANSCRIPT_DB, INDEX_DB)  # the databases the session stores keep
LEARN_DB = "learn.db"  # LearnConfig(backend="sqlite")'s database, when the home holds it: <home>/learn/learn.db
STORE_DATABASES = (*DATABASES, LEARN_DB)  # every database a backup takes as a snapshot, by its name
DB_SIDECARS = ("-wal", "-shm", "-journal")
PROJECTS = "projects"  # the praisonai CLI's per-project stores: projects/<id>/
RUN_PREFIX = "run_"  # an old SessionManager run: run_<date>_<time>_<hex>/
RUN_METADATA = "metadata.json"
RUN_EVENTS = "events.jsonl"
RUN_FILES = (RUN_METADATA, RUN_EVENTS)  # what SessionManager writes in a run directory
LAST_SESSION = ".last_session"  # the id the TUI's /continue resumes
JSON = ".json"
LOCK = ".lock"  # a sidecar lock: <file>.lock
JSON_LOCK = JSON + LOCK
QUARANTINED = ".corrupt-"  # the library's copy of a file that did not parse: <file>.corrupt-<ms>
JSON_QUARANTINED = JSON + QUARANTINED
TEMP = ".tmp"

MEMORY_CONFIG = "config.json"
SHORT_TERM = "short_term.json"
LONG_TERM = "long_term.json"
ENTITIES = "entities.json"
SUMMARIES = "summaries.json"
MEMORY_FILES = (MEMORY_CONFIG, SHORT_TERM, LONG_TERM, ENTITIES, SUMMARIES)
EPISODIC = "episodic"
SAVED_SESSIONS = "sessions"  # a user's FileMemory.save_session files: sessions/<name>.json
MEMORY_SUBDIRS = (EPISODIC, SAVED_SESSIONS, "checkpoints")  # a user's directories of one JSON file per date, name or id
NESTING = 4  # how deep a pre-1.6.58 user id with '/' (``team/alice``) is looked for
MEMORY_LOCK = ".praisonmem"  # praisonmem's writer lock of a FileMemory user: <user dir>/.praisonmem.lock

# praisonaiagents' Chroma directories in the project dir: the rag Memory's chroma_db[_<user>], Knowledge's
# knowledge/chroma; each holds chroma.sqlite3 and one HNSW dir (named by its segment's uuid) per vector segment.
CHROMA = "chroma"
CHROMA_SQLITE = "chroma.sqlite3"
CHROMA_DIRS = (r"chroma_db(?:_[^/]+)?", r"knowledge/chroma")
CHROMA_SEGMENT = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
# what chromadb (1.x) writes in a segment dir; never a pickle (older releases' index_metadata.pickle is left out,
# so no archive can hand chromadb one to load)
CHROMA_SEGMENT_FILES = ("header.bin", "data_level0.bin", "length.bin", "link_lists.bin")

LEARN_SCOPES = ("private", "shared")
LEARN_STORES = ("persona", "insights", "threads", "patterns", "decisions", "feedback", "improvements")
LEARN_ARCHIVE = ".archive.json"  # <store>.archive.json beside <store>.json
LEARN_FILES = frozenset(name for store in LEARN_STORES for name in (f"{store}{JSON}", f"{store}{LEARN_ARCHIVE}"))

# The store directories inside sessions/: a praisonai CLI project store, an old SessionManager run.
PROJECT_DIR = rf"{PROJECTS}/[0-9a-f]{{8}}"
RUN_DIR = rf"{RUN_PREFIX}\d{{8}}_\d{{6}}_[0-9a-f]{{6}}"
SESSION_SUBDIRS = (PROJECT_DIR, RUN_DIR)
SKIPPED_SUFFIXES = (LOCK, TEMP)  # no backup holds these


def is_db_sidecar(name: str) -> bool:
    """``sessions.db-wal`` and the like: part of a database, never archived or restored on its own."""
    return any(name == f"{db}{suffix}" for db in STORE_DATABASES for suffix in DB_SIDECARS)


# ---------------------------------------------------------------- the temp files praisonmem makes
# Both its sweepers remove only these names: a write's own, under that file's lock once they are a minute old
# (:func:`praisonmem.core.io.jsonfile.sweep_leftovers`), and a restore's, per directory once their process is gone
# (:mod:`praisonmem.core.backup.restore`); ``check`` tells each from the library's by them.

TEMP_RANDOM = r"[a-z0-9_]{8}"  # the random part tempfile.mkstemp puts in a name
TEMP_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789_"  # what a temp name's random part is drawn from
OWN_TEMP = rf"\.(?P<target>.+)\.{TEMP_RANDOM}\.tmp"  # an atomic replace of <target> (FileMemory's too)
LIBRARY_TEMP = rf"tmp{TEMP_RANDOM}\.tmp"  # the library session store's atomic write
CONVERSATION_TEMP = rf"\.conv-{TEMP_RANDOM}\.tmp"  # praisonai's JSONConversationStore's atomic write
# A restore's: .<name>.restore-<pid>-<8 hex>.tmp beside its target; no other writer names one so.
RESTORE_TEMP = r"(?s)\..+\.restore-(?P<pid>[0-9]+)-[0-9a-f]{8}\.tmp"


def temp_pattern(name: str) -> str:
    """The regular expression of the temp names an atomic replace of a file called ``name`` gives it."""
    return rf"\.{re.escape(name)}\.{TEMP_RANDOM}\.tmp"


def is_restore_temp(name: str) -> bool:
    """Whether a file name is a restore's temp file (:data:`RESTORE_TEMP`)."""
    return re.fullmatch(RESTORE_TEMP, name) is not None


# ---------------------------------------------------------------- the roots of a home, in a backup


class Root(NamedTuple):
    """A tree of a home as a backup holds it: its name in the manifest, its path below the home (``memory/``: the
    FileMemory base), and where it is on disk (``anchor``: the resolved ``data``, ``state`` or ``memory`` dir;
    ``below``: its path below that)."""

    name: str
    relative: str
    anchor: str
    below: tuple[str, ...]

    @property
    def prefix(self) -> str:
        """Its prefix inside a backup archive: ``home/…`` for the home's trees, ``memory/`` for FileMemory,
        ``project/`` for the project dir's Chroma directories."""
        if self.anchor == "project":
            return "project/"
        return self.relative if self.anchor == "memory" else f"home/{self.relative}"


ROOTS = (
    Root(SESSIONS, f"{SESSIONS}/", "data", (SESSIONS,)),
    Root("spill", f"{STATE}/{SPILL}/", "state", SPILL_DIR),
    Root(LEARN, f"{LEARN}/", "data", (LEARN,)),
    Root(MEMORY, f"{MEMORY}/", "memory", ()),
    Root(CHROMA, "", "project", ()),  # below the project dir (Paths.project_dir), not the home
)
ROOT_NAMES = {root.name: root for root in ROOTS}


def session_path_ok(parts: Sequence[str]) -> bool:
    """A file (path below ``sessions/``) directly there or in ``projects/<id>/`` or ``run_…/``."""
    if len(parts) == 1:
        return True
    return any(re.fullmatch(pattern, "/".join(parts[:-1])) for pattern in SESSION_SUBDIRS)


def memory_user(parts: Sequence[str]) -> tuple[str, ...] | None:
    """The user directory (its path below the FileMemory base; ``()``: the base itself) of a file FileMemory
    writes at ``parts``; ``None`` when FileMemory writes no such file."""
    if parts and parts[-1] in MEMORY_FILES:
        user = tuple(parts[:-1])
    elif len(parts) >= 2 and parts[-2] in MEMORY_SUBDIRS and parts[-1].endswith(JSON):
        user = tuple(parts[:-2])
    else:
        return None
    return user if len(user) <= NESTING else None


def learn_path_ok(parts: Sequence[str]) -> bool:
    """``<scope>/<user>/<store>.json`` (or its ``.archive.json``), the library's scopes and stores only; or the
    sqlite backend's ``learn.db``."""
    return len(parts) == 3 and parts[0] in LEARN_SCOPES and parts[2] in LEARN_FILES or tuple(parts) == (LEARN_DB,)


def chroma_store(parts: Sequence[str]) -> int:
    """How many of ``parts`` (a path below the project dir) name a Chroma directory (:data:`CHROMA_DIRS`): 1 for
    ``chroma_db[_<user>]``, 2 for ``knowledge/chroma``; 0 when they start with none."""
    for size in (1, 2):
        if len(parts) >= size and any(re.fullmatch(p, "/".join(parts[:size])) for p in CHROMA_DIRS):
            return size
    return 0


def chroma_file_ok(rest: Sequence[str]) -> bool:
    """A file chromadb writes in a Chroma directory (``rest``: its path below it)."""
    return (tuple(rest) == (CHROMA_SQLITE,) or len(rest) == 2 and re.fullmatch(CHROMA_SEGMENT, rest[0]) is not None
            and rest[1] in CHROMA_SEGMENT_FILES)


def file_reason(root: str, parts: Sequence[str]) -> str | None:
    """Why a file at ``parts`` below ``root``'s prefix is not one the store writes; ``None`` when it is."""
    if root == SESSIONS and not session_path_ok(parts) or root == "spill" and len(parts) > 1:
        return f"in a sub-directory of {ROOT_NAMES[root].prefix}, which backups never hold"
    if parts[-1].endswith(SKIPPED_SUFFIXES):
        return "a lock or temp file, which backups never hold"
    if root == LEARN and not learn_path_ok(parts):
        return ("not a learn store (<scope>/<user>/<store>.json of " + ", ".join(LEARN_STORES) + f", or {LEARN_DB})")
    if root == CHROMA and not ((size := chroma_store(parts)) and chroma_file_ok(parts[size:])):
        return (f"not a file of a Chroma directory (chroma_db[_<user>]/ or knowledge/chroma/: {CHROMA_SQLITE}, or "
                f"<segment uuid>/{{{','.join(CHROMA_SEGMENT_FILES)}}})")
    if root == MEMORY and memory_user(parts) is None:
        return (f"not a file FileMemory writes ({', '.join(MEMORY_FILES)}, or a .json file in "
                f"{', '.join(d + '/' for d in MEMORY_SUBDIRS[:-1])} or {MEMORY_SUBDIRS[-1]}/, in a user directory "
                f"at most {NESTING} levels deep)")
    return None


def dir_ok(root: str, parts: tuple[str, ...]) -> bool:
    """Whether a directory at ``parts`` below ``root`` can hold files of the layout (what create walks into)."""
    if root == SESSIONS:
        joined = "/".join(parts)
        return not parts or parts == (PROJECTS,) or any(re.fullmatch(p, joined) for p in SESSION_SUBDIRS)
    if root == "spill":
        return not parts
    if root == LEARN:
        return len(parts) < 2 or (len(parts) == 2 and parts[0] in LEARN_SCOPES)
    if root == CHROMA:
        size = chroma_store(parts)
        return (not parts or parts == ("knowledge",) or size == len(parts)
                or size + 1 == len(parts) and re.fullmatch(CHROMA_SEGMENT, parts[-1]) is not None)
    return len(parts) <= NESTING + 1


def layout_reason(name: str, roots: set[str]) -> str | None:
    """Why ``name`` is not a path ``backup create`` writes for these roots; ``None`` when it is."""
    if name.startswith("/"):
        return "an absolute path"
    if ".." in name.split("/"):
        return "a path with '..'"
    if "\0" in name:
        return "a path with a NUL byte"
    for root in ROOTS:
        if not name.startswith(root.prefix):
            continue
        rest = name[len(root.prefix):].split("/")
        if root.name not in roots:
            return f"under {root.prefix} but the manifest has no '{root.name}' root"
        if any(part in ("", ".") for part in rest):
            return "a path with an empty or '.' component"
        return file_reason(root.name, rest)
    return "outside the backup layout (" + ", ".join(root.prefix for root in ROOTS) + ")"


def split(name: str) -> tuple[Root, tuple[str, ...]]:
    """``(root, parts below its prefix)`` of a path already in the layout."""
    for root in ROOTS:
        if name.startswith(root.prefix):
            return root, tuple(name[len(root.prefix):].split("/"))
    raise ValueError(name)


# ---------------------------------------------------------------- the kinds of file, and their locks


class Lock(StrEnum):
    """How the writers of a kind of file lock it."""

    session = "session"  # BSD flock on <file>.lock (DefaultSessionStore) and on the file itself (the REPL/TUI's)
    learn = "learn"  # <file>.lock created with O_EXCL, deleted on release, stale after 10 s (BaseJSONStore)
    filememory = "filememory"  # BSD flock on <user dir>/.praisonmem.lock (praisonmem's own: the library has none)
    sqlite = "sqlite"  # SQLite's own locks: nobody may have the database open
    chroma = "chroma"  # none a writer takes: no process may have the directory's chroma.sqlite3 open (a /proc scan)
    none = "none"  # no writer locks it (spill records, old runs, .last_session, quarantined copies)


class Kind(StrEnum):
    """What a file of the layout is (:func:`classify`)."""

    session = "session"  # <id>.json in sessions/ or a project store: the JSON store's or the REPL/TUI's
    database = "database"  # sessions.db, sessions_index.db, learn/learn.db
    database_sidecar = "database_sidecar"  # their -wal, -shm, -journal
    run_file = "run_file"  # a file of an old run directory
    session_dir_file = "session_dir_file"  # any other file of a session directory (.last_session, copies)
    spill = "spill"  # a file of the spill dir
    learn_store = "learn_store"
    learn_archive = "learn_archive"
    memory_file = "memory_file"  # one of FileMemory's files, or a JSON file of its episodic/, sessions/, checkpoints/
    chroma_file = "chroma_file"  # a file of a Chroma directory: backed up and restored with its whole directory


LOCKS = {Kind.session: Lock.session, Kind.database: Lock.sqlite, Kind.learn_store: Lock.learn,
         Kind.memory_file: Lock.filememory, Kind.chroma_file: Lock.chroma}  # every other kind: Lock.none
# Each lock's implementation, a ``(path, timeout)`` context manager: (module, name) in the package that owns the
# files, imported only when asked (:func:`lock_of`), so that layout imports nothing above it.
LOCKERS = {
    Lock.session: ("praisonmem.core.sessions.stores.unified", "file_lock"),
    Lock.learn: ("praisonmem.core.learn.files", "locked"),
    Lock.filememory: ("praisonmem.core.memory.filememory", "file_lock"),
    Lock.sqlite: ("praisonmem.core.backup.sqlite", "exclusive"),
    Lock.chroma: ("praisonmem.core.io.chroma", "unheld"),  # its path: the Chroma directory itself
}


def classify(relative: str) -> Kind | None:
    """The kind of the file at ``relative`` (a path below a home, ``memory/…`` below the FileMemory base), or
    ``None`` when no store writes such a file there (a lock, a temp file, a foreign name)."""
    for root in ROOTS:
        if root.anchor != "project" and relative.startswith(root.relative):
            return _admitted(root.name, tuple(relative[len(root.relative):].split("/")))
    return None


def archive_kind(name: str) -> Kind | None:
    """:func:`classify` of a path inside a backup archive (``home/sessions/…``, ``memory/…``)."""
    for root in ROOTS:
        if name.startswith(root.prefix):
            return _admitted(root.name, tuple(name[len(root.prefix):].split("/")))
    return None


def _admitted(root: str, parts: tuple[str, ...]) -> Kind | None:
    if any(part in ("", ".", "..") for part in parts) or file_reason(root, parts) is not None:
        return None
    return _kind(root, parts)


def _kind(root: str, parts: tuple[str, ...]) -> Kind:
    """The kind of a file :func:`file_reason` admits at ``parts`` below ``root``."""
    name = parts[-1]
    if root == SESSIONS:
        if name in DATABASES:
            return Kind.database
        if is_db_sidecar(name):
            return Kind.database_sidecar
        if len(parts) > 1 and parts[0].startswith(RUN_PREFIX):
            return Kind.run_file
        return Kind.session if name.endswith(JSON) else Kind.session_dir_file
    if root == LEARN:
        if parts == (LEARN_DB,):
            return Kind.database
        return Kind.learn_archive if name.endswith(LEARN_ARCHIVE) else Kind.learn_store
    if root == CHROMA:
        return Kind.chroma_file
    return Kind.memory_file if root == MEMORY else Kind.spill


def lock_of(kind: Kind | Lock | None) -> Locker:
    """The lock a file of ``kind`` (or the lock ``kind`` itself) is taken under: the implementation its owner
    supplies (:data:`LOCKERS`), or none."""
    lock = kind if isinstance(kind, Lock) else LOCKS.get(kind, Lock.none) if kind is not None else Lock.none
    if lock is Lock.none:
        return lambda path, timeout: nullcontext()
    import importlib

    module, name = LOCKERS[lock]
    locker: Locker = getattr(importlib.import_module(module), name)
    return locker
