"""The walk: every directory under a root (``os.scandir``, no link followed, bounded depth), each one's SQLite files
classified by their tables (:mod:`.sqlitekind`) and its JSON files by their first bytes (:mod:`.sniff`).

Never entered: a symbolic link (to a directory or a file: a link may lead out of the tree, or round in a loop),
``.git``, ``node_modules``, ``__pycache__``, a virtualenv (a directory holding ``pyvenv.cfg``); only regular files
are opened (a FIFO or a device never is), with ``O_NOFOLLOW|O_NONBLOCK``. A directory that cannot be read is
:class:`~.model.Skipped`. A store that is a whole directory (Chroma, a FileMemory user) is summed, not entered.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from praisonmem.core.layout import SPILL
from praisonmem.core.locate import sniff, sqlitekind
from praisonmem.core.locate.model import ORPHAN, Report, Skipped, Store, command, session_dir_command

SKIP_DIRS = frozenset({".git", "node_modules", "__pycache__"})
VENV_MARK = "pyvenv.cfg"
GIVE_UP = 16  # JSON files read in one directory without a store's document before it is taken for another app's
SESSION_KEYS = ("session_id", "messages")
CONVERSATION_KEYS = ("session", "messages")
CONVERSATION_INDEX = "_sessions_index.json"
# A spill record (what the library writes when a session's write fails: `<safe id>.<ms>.<pid>.<hex>.json`, merged
# into the session on its next load): the library writes spilled_at before messages, so the head holds all three.
SPILL_KEYS = ("session_id", "spilled_at", "messages")
FILEMEMORY_FILES = ("config.json", "short_term.json", "long_term.json", "entities.json", "summaries.json")
FILEMEMORY_CONFIG = "short_term_limit"
ORPHAN_USER = re.compile(r"agent-[0-9a-f]{12}\Z")  # Agent(memory=True) without a user_id: a new one every run
LEARN_STORES = ("persona", "insights", "threads", "patterns", "decisions", "feedback", "improvements")
LEARN_FILES = tuple(f"{store}.json" for store in LEARN_STORES)
UPSONIC_SESSION = ("session_id", "session_type")
UPSONIC_USER = ("user_id", "user_memory")
UPSONIC_COUNT_LIMIT = 4 << 20  # an Upsonic JSON table is parsed for its count only up to this size


@dataclass
class Context:
    """What a walk knows beyond the tree: the flags every store it finds gets, and where results go."""

    report: Report
    flags: tuple[str, ...] = ()
    timeout: float = 5.0
    walked: frozenset[str] = frozenset()  # roots walked already (a home inside a DIR): not entered again
    memory_users: dict[str, list[tuple[str, int, float | None, bool]]] = field(default_factory=dict)
    learn_users: dict[str, list[tuple[int, int, float | None]]] = field(default_factory=dict)
    split_after: int = 0  # directories listed before half of those waiting go to a forked helper (0: one process)

    def add(self, store: Store) -> None:
        store.flag(*self.flags)
        self.report.stores.append(store)


# ---------------------------------------------------------------- the forked helper
#
# The walk is mostly Python's own work per directory entry, which one process cannot share between cores (the
# GIL is released only around each readdir() call, too briefly for a second thread to gain). A large tree is
# therefore shared with one forked helper: it walks half the directories waiting at that moment with a Context of
# its own and sends back what it found (the stores, the skipped paths, the files it visited, the FileMemory and
# learn users still to group), pickled through a pipe. It only reads, as the walk does. If it fails in any way
# (killed, a broken pipe, an exception), the parent walks its half itself; if the parent is interrupted, the
# helper is killed and reaped. Nothing is process-global: all a helper knows is on its object.

SPLIT_AFTER = 256  # directories listed before a helper is forked: a smaller tree costs less than the fork


class Helper:
    def __init__(self, pid: int, read_fd: int, share: list[tuple[str, int]], root: str, depth: int) -> None:
        self.pid, self.read_fd, self.share, self.root, self.depth = pid, read_fd, share, root, depth

    @classmethod
    def start(cls, share: list[tuple[str, int]], root: str, depth: int, ctx: Context) -> Helper | None:
        """A helper walking ``share`` (``None``: one CPU only, or no fork here: the parent walks it all)."""
        import signal

        if not hasattr(os, "fork") or _cpus() < 2:
            return None
        try:
            read_fd, write_fd = os.pipe()
        except OSError:  # out of descriptors: one process walks it all
            return None
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})  # born blocked: no Ctrl-C before SIG_IGN
        try:
            pid = os.fork()
            if pid == 0:  # the helper: never returns
                os.close(read_fd)
                _helper_main(write_fd, share, root, depth, ctx)
        except OSError:  # no process to be had (a limit): one process walks it all
            os.close(read_fd)
            os.close(write_fd)
            return None
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        os.close(write_fd)
        return cls(pid, read_fd, share, root, depth)

    def join(self, ctx: Context) -> None:
        """Merge the helper's results into ``ctx`` (or walk its share here when it failed), and reap it."""
        import pickle

        chunks = []
        try:
            while chunk := os.read(self.read_fd, 1 << 20):
                chunks.append(chunk)
        finally:
            os.close(self.read_fd)
            self.read_fd = -1
        _, status = os.waitpid(self.pid, 0)
        self.pid = 0
        try:
            if status != 0:
                raise ValueError(f"status {status}")
            stores, skipped, visited, memory_users, learn_users = pickle.loads(b"".join(chunks))
        except Exception:  # whatever went wrong there: its share is walked here
            _drain(self.share, self.root, self.depth, ctx, split=0)
            return
        ctx.report.stores.extend(stores)
        ctx.report.skipped.extend(skipped)
        ctx.report.skipped.sort(key=lambda s: s.path)  # in one order whichever process met each
        ctx.report.files_visited += visited
        for base, users in memory_users.items():
            ctx.memory_users.setdefault(base, []).extend(users)
        for base, learners in learn_users.items():
            ctx.learn_users.setdefault(base, []).extend(learners)

    def kill(self) -> None:
        import signal

        if self.read_fd >= 0:
            os.close(self.read_fd)
            self.read_fd = -1
        if self.pid:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            os.waitpid(self.pid, 0)
            self.pid = 0


def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _helper_main(write_fd: int, share: list[tuple[str, int]], root: str, depth: int, parent: Context) -> None:
    """The forked helper's whole life: walk ``share``, write the results, exit without running the parent's exit
    handlers or flushing its buffers (``os._exit``)."""
    code = 1
    try:
        import pickle
        import signal

        signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent answers Ctrl-C, and kills this
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
        ctx = Context(Report(), flags=parent.flags, timeout=parent.timeout, walked=parent.walked)
        _drain(share, root, depth, ctx, split=0)
        data = pickle.dumps((ctx.report.stores, ctx.report.skipped, ctx.report.files_visited, ctx.memory_users,
                             ctx.learn_users))
        view = memoryview(data)
        while view:
            view = view[os.write(write_fd, view):]
        code = 0
    except BaseException:  # noqa: BLE001 - any failure: the parent walks this share itself
        code = 1
    finally:
        os._exit(code)


@dataclass
class Sized:
    size: int = 0
    modified: float | None = None
    files: int = 0

    def add(self, size: int, mtime: float) -> None:
        self.size += size
        self.files += 1
        self.modified = mtime if self.modified is None or mtime > self.modified else self.modified


def walk(root: str, depth: int, ctx: Context) -> None:
    """Classify every directory under ``root`` down to ``depth`` levels below it (a large tree shared with one
    forked helper: :func:`_drain`)."""
    _drain([(root, 0)], root, depth, ctx, split=ctx.split_after)
    _group(ctx)


def _drain(stack: list[tuple[str, int]], root: str, depth: int, ctx: Context, *, split: int) -> None:
    """Walk every directory on ``stack`` and below. Once ``split`` directories are listed (0: never) with two or more
    still waiting, every other one of those goes to a forked helper (:class:`Helper`), and its results are merged
    when this half is done."""
    helper = None
    listed = 0
    try:
        while stack:
            if split and listed == split and len(stack) > 1:
                helper = Helper.start(stack[0::2], root, depth, ctx)
                if helper is not None:
                    stack = stack[1::2]
            path, level = stack.pop()
            listed += 1
            listing = _list(path, ctx)
            if listing is None:
                continue
            if path != root and VENV_MARK in listing.names:
                continue
            ctx.report.files_visited += len(listing.names)
            claimed = _classify(path, listing, ctx)
            dirs = listing.dirs
            if level < depth:
                for name in sorted(dirs, reverse=True):
                    if name not in SKIP_DIRS and name not in claimed:
                        child = os.path.join(path, name)
                        if child not in ctx.walked:
                            stack.append((child, level + 1))
        if helper is not None:
            helper.join(ctx)
            helper = None
    finally:
        if helper is not None:  # interrupted, or failed: the helper is not left behind
            helper.kill()


class Listing:
    """One directory: its regular files, its subdirectories (no link among either), and the names of the files
    that may be databases or JSON documents (sorted). ``files`` (name to entry) is built only when asked: most
    directories hold no candidate, and the walk then needs only their count."""

    __slots__ = ("entries", "names", "dirs", "dbs", "jsons", "_files")

    def __init__(self, entries: list[os.DirEntry[str]], dirs: list[str]) -> None:
        self.entries = entries
        self.names = [e.name for e in entries]
        self.dirs = dirs
        self.jsons = sorted(n for n in self.names if n.endswith(".json"))
        self.dbs = sorted(n for n in self.names if n[-1] in DB_TAILS and n.lower().endswith(sqlitekind.SUFFIXES))
        self._files: dict[str, os.DirEntry[str]] | None = None

    @property
    def files(self) -> dict[str, os.DirEntry[str]]:
        if self._files is None:
            self._files = dict(zip(self.names, self.entries))
        return self._files


DB_TAILS = frozenset("bBeE3")  # the last characters of SQLITE suffixes, a cheap first test


def _list(path: str, ctx: Context) -> Listing | None:
    try:
        with os.scandir(path) as it:
            entries = list(it)
    except OSError as exc:
        ctx.report.skipped.append(Skipped(path, _reason(exc)))
        return None
    try:  # d_type answers both tests without a system call (a file system without it: one lstat, cached)
        dirs = [e.name for e in entries if e.is_dir(follow_symlinks=False)]
        files = [e for e in entries if e.is_file(follow_symlinks=False)]
    except OSError:  # an entry that went away or cannot be looked at, between the listing and its lstat
        dirs, files = _sorted_out(entries)
    return Listing(files, dirs)


def _sorted_out(entries: list[os.DirEntry[str]]) -> tuple[list[str], list[os.DirEntry[str]]]:
    """The subdirectories' names and the regular files, one entry at a time, leaving out one that cannot be told."""
    dirs, files = [], []
    for entry in entries:
        try:
            if entry.is_dir(follow_symlinks=False):
                dirs.append(entry.name)
            elif entry.is_file(follow_symlinks=False):
                files.append(entry)
        except OSError:
            continue
    return dirs, files


def _reason(exc: OSError) -> str:
    return (exc.strerror or type(exc).__name__).lower()


def _stat(entry: os.DirEntry[str], into: Sized) -> None:
    try:
        st = entry.stat(follow_symlinks=False)
    except OSError:
        return
    into.add(st.st_size, st.st_mtime)


def tree_size(path: str, into: Sized, ctx: Context, limit: int = 32) -> None:
    """Every regular file under ``path`` (no link followed) added to ``into``."""
    stack = [(path, 0)]
    while stack:
        here, level = stack.pop()
        listing = _list(here, ctx)
        if listing is None:
            continue
        ctx.report.files_visited += len(listing.names)
        for entry in listing.entries:
            _stat(entry, into)
        if level < limit:
            stack.extend((os.path.join(here, d), level + 1) for d in listing.dirs)


def _classify(path: str, listing: Listing, ctx: Context) -> set[str]:
    """Report the stores directly in ``path``; the subdirectories that belong to one (not to be walked again)."""
    claimed: set[str] = set()
    if not (listing.dbs or listing.jsons):  # most directories
        return claimed
    files, dirs = listing.files, listing.dirs
    in_db = _databases(path, files, listing.dbs, ctx, claimed) if listing.dbs else set()
    if claimed == {""}:  # the directory itself is a store (Chroma): summed, not entered
        return set(dirs)
    if not listing.jsons:
        return claimed
    rest = {name: entry for name, entry in files.items() if name not in in_db} if in_db else files
    jsons = [name for name in listing.jsons if name not in in_db]
    heads = Heads(path)
    if _filememory_user(path, rest, dirs, ctx, heads):
        return set(dirs)
    if _learn_user(path, rest, ctx, heads) or _upsonic_json(path, rest, jsons, ctx, heads):
        return claimed
    _sessions(path, rest, jsons, ctx, heads)
    return claimed


def _databases(path: str, files: dict[str, os.DirEntry[str]], candidates: list[str], ctx: Context,
               claimed: set[str]) -> set[str]:
    """Classify the SQLite files; the names of the files that belong to a database (it and its sidecars)."""
    from praisonmem.core.errors import PraisonMemError

    used: set[str] = set()
    for name in candidates:
        full = os.path.join(path, name)
        if not sqlitekind.is_sqlite(full):
            continue
        try:
            found = sqlitekind.classify(Path(full), timeout=ctx.timeout)
        except PraisonMemError as exc:
            ctx.report.skipped.append(Skipped(full, exc.message.removeprefix(f"{full}: ")))
            continue
        if not found:
            continue
        sized = Sized()
        members = [name, *sqlitekind.sidecars(name, files)]
        used.update(members)
        for member in members:
            _stat(files[member], sized)
        whole = [f for f in found if f.whole_dir]
        if whole:
            claimed.add("")
            whole_size = Sized()
            tree_size(path, whole_size, ctx)
            ctx.report.files_visited -= len(files)  # the top directory's files were counted by the walk
            sized = whole_size
        for f in found:
            ctx.add(Store(path if f.whole_dir else full, f.kind, f.library, sized.size, sized.modified, f.holds,
                          f.command))
    return used


class Heads:
    """The shapes of one directory's JSON files, each file read once (several kinds look at the same ones)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.shapes: dict[str, sniff.Shape | None] = {}

    def __call__(self, names: Iterable[str]) -> Iterable[tuple[str, sniff.Shape]]:
        for name in names:
            if name not in self.shapes:
                head = sniff.read_head(os.path.join(self.path, name))
                self.shapes[name] = None if head is None else sniff.shape(head)
            found = self.shapes[name]
            if found is not None:
                yield name, found


def _has(keys: list[str], wanted: tuple[str, ...]) -> bool:
    return all(k in keys for k in wanted)


def _sessions(path: str, files: dict[str, os.DirEntry[str]], jsons: list[str], ctx: Context, heads: Heads) -> None:
    """A directory of praisonaiagents session files, or of praisonai's JSON conversation store; the spill records
    among them (or the spill dir itself) are a store of their own: turns waiting to be merged, not sessions."""
    candidates = [n for n in jsons if not n.startswith(".") and n != CONVERSATION_INDEX]
    sessions = conversations = encrypted = misses = 0
    spills: list[tuple[str, str | None]] = []  # (file, the session its turns wait for)
    for name, shape in heads(candidates):
        if shape.outer == "{" and _has(shape.keys, SPILL_KEYS):
            spills.append((name, shape.values.get("session_id")))
        elif name.startswith("_"):  # no session file's name (the library's names start with the id)
            continue
        elif shape.outer == "{" and _has(shape.keys, SESSION_KEYS):
            sessions += 1
            encrypted += sniff.ENCRYPTED in shape.head
        elif shape.outer == "{" and _has(shape.keys, CONVERSATION_KEYS):
            conversations += 1
        else:
            misses += 1
        if misses >= GIVE_UP and not (sessions or conversations or spills):
            return
    indexed = CONVERSATION_INDEX in files and _conversation_index(os.path.join(path, CONVERSATION_INDEX))
    if spills:
        alone = not (sessions or conversations or indexed)  # the spill dir: every file in it (leftover temps too)
        mine = set(files) if alone else {name for name, _ in spills}
        sized = Sized()
        for name in mine:
            _stat(files[name], sized)
        waiting = len({sid for _, sid in spills if sid is not None})
        reach = command("check", path) if os.path.basename(path) == SPILL else None  # check takes it by its name
        ctx.add(Store(path, "session-spill", "praisonaiagents", sized.size, sized.modified,
                      {"spill_files": len(spills), "sessions": waiting}, reach))
        files = {name: entry for name, entry in files.items() if name not in mine}
    if not (sessions or conversations or indexed):
        return
    sized = Sized()
    for entry in files.values():
        _stat(entry, sized)
    here = Path(path)
    if conversations >= sessions and (conversations or indexed):
        ctx.add(Store(path, "conversation-json", "praisonai", sized.size, sized.modified,
                      {"sessions": conversations}, command("session", "list", "--store", path)))
        return
    holds: dict[str, Any] = {"sessions": sessions}
    if encrypted:
        holds["encrypted"] = encrypted
    project = here.parent.name == "projects" and here.parent.parent.name == "sessions"
    ctx.add(Store(path, "project-sessions" if project else "session-dir", "praisonai" if project else "praisonaiagents",
                  sized.size, sized.modified, holds, session_dir_command(path)))


def _conversation_index(path: str) -> bool:
    head = sniff.read_head(path)
    if head is None:
        return False
    shape = sniff.shape(head)
    return shape.outer == "{" and (not shape.keys or "session_id" in shape.inner or not shape.inner)


def _filememory_user(path: str, files: dict[str, os.DirEntry[str]], dirs: list[str], ctx: Context,
                     heads: Heads) -> bool:
    """A FileMemory user directory (``<base>/<user>/``): grouped into its base's row after the walk."""
    present = [n for n in FILEMEMORY_FILES if n in files]
    if not present:
        return False
    recognised = False
    for name, shape in heads(present[:3]):
        if name == "config.json":
            recognised = shape.outer == "{" and FILEMEMORY_CONFIG in shape.keys
        else:
            recognised = shape.outer == "[" and "id" in shape.keys and bool(
                {"content", "summary", "name"} & set(shape.keys))
        if recognised:
            break
    if not recognised:
        return False
    sized = Sized()
    tree_size(path, sized, ctx)
    ctx.report.files_visited -= len(files)
    parent, user = os.path.split(path)
    ctx.memory_users.setdefault(parent, []).append((user, sized.size, sized.modified, "sessions" in dirs))
    return True


def _learn_user(path: str, files: dict[str, os.DirEntry[str]], ctx: Context, heads: Heads) -> bool:
    """A learn user's directory (``<home>/learn/<scope>/<user>/<store>.json``): grouped under ``learn/``."""
    present = [name for name in LEARN_FILES if name in files]
    if not present:
        return False
    for _, shape in heads(present[:2]):
        if shape.outer == "{" and (not shape.keys or _has(shape.inner, ("id", "content"))):
            break
    else:
        return False
    sized = Sized()
    for name, entry in files.items():
        if name.endswith((".json", ".lock")):
            _stat(entry, sized)
    root = os.path.dirname(os.path.dirname(path))
    ctx.learn_users.setdefault(root, []).append((len(present), sized.size, sized.modified))
    return True


def _upsonic_json(path: str, files: dict[str, os.DirEntry[str]], jsons: list[str], ctx: Context,
                  heads: Heads) -> bool:
    """Upsonic's JSONStorage: one ``<table>.json`` array per table."""
    counts: dict[str, int | None] = {}
    sized = Sized()
    for name, shape in heads(jsons[:GIVE_UP]):
        if shape.outer != "[":
            continue
        what = "sessions" if _has(shape.keys, UPSONIC_SESSION) else "users" if _has(shape.keys, UPSONIC_USER) \
            else "table" if name.startswith("upsonic_") and not shape.keys else None
        if what is None:
            continue
        _stat(files[name], sized)
        if what != "table":
            counts[what] = _array_length(files[name])
    if not counts:
        return False
    holds = {k: v for k, v in counts.items() if v is not None}
    ctx.add(Store(path, "upsonic-json", "upsonic", sized.size, sized.modified, holds,
                  command("upsonic", "sessions", "--db", path)))
    return True


def _array_length(entry: os.DirEntry[str]) -> int | None:
    try:
        if entry.stat(follow_symlinks=False).st_size > UPSONIC_COUNT_LIMIT:
            return None
    except OSError:
        return None
    data = sniff.read_head(entry.path, UPSONIC_COUNT_LIMIT + 1)
    if data is None:
        return None
    import json

    try:
        value = json.loads(data)
    except ValueError:
        return None
    return len(value) if isinstance(value, list) else None


def _group(ctx: Context) -> None:
    """FileMemory users into one row per base directory (a per-run orphan its own row); learn users per root."""
    for base, users in sorted(ctx.memory_users.items()):
        kept = [u for u in users if not ORPHAN_USER.match(u[0])]
        for user, size, modified, _ in sorted(u for u in users if ORPHAN_USER.match(u[0])):
            store = Store(os.path.join(base, user), "filememory-user", "praisonaiagents", size, modified,
                          {"users": 1}, command("--memory-dir", base, "memory", "list", "--user-id", user))
            store.flag(ORPHAN)
            ctx.add(store)
        if kept:
            sized = Sized()
            for _, size, modified, _ in kept:
                sized.size += size
                if modified is not None:
                    sized.add(0, modified)
            holds = {"users": len(kept)}
            saved = sum(1 for u in kept if u[3])
            if saved:
                holds["users_with_saved_sessions"] = saved
            ctx.add(Store(base, "filememory", "praisonaiagents", sized.size, sized.modified, holds,
                          command("--memory-dir", base, "memory", "users")))
    ctx.memory_users.clear()
    for root, users in sorted(ctx.learn_users.items()):
        sized = Sized()
        for _, size, modified in users:
            sized.size += size
            if modified is not None:
                sized.add(0, modified)
        reach = None
        if os.path.basename(root) == "learn":
            reach = command("--home", os.path.dirname(root), "learn", "list", "--backend", "file")
        ctx.add(Store(root, "learn-files", "praisonaiagents", sized.size, sized.modified,
                      {"users": len(users), "stores": sum(u[0] for u in users)}, reach))
    ctx.learn_users.clear()


def one_file(path: str, ctx: Context) -> bool:
    """Classify one database a setting names (and its sidecars); whether it is a store."""
    parent, name = os.path.split(path)
    listing = _list(parent, ctx)
    if listing is None:
        return False
    keep = {n: e for n, e in listing.files.items() if n == name or n in sqlitekind.sidecars(name, listing.files)}
    before = len(ctx.report.stores)
    claimed: set[str] = set()
    _databases(parent, keep, [name], ctx, claimed)
    return len(ctx.report.stores) > before
