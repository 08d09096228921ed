"""Chroma persistent directories (``chroma.sqlite3`` plus one HNSW dir per vector segment), read and written
only through chromadb's own client (the ``[chroma]`` extra, imported only when a Chroma store is met).

Measured with chromadb 1.5.9: merely opening a ``PersistentClient`` and reading rewrites files (the HNSW
``length.bin`` and ``chroma.sqlite3`` change, every mtime moves), and chromadb has no read-only mode. So a
reader (:func:`snapshot`) opens a private copy in a 0700 temp dir: ``chroma.sqlite3`` copied by SQLite's
backup API from a read-only connection (a consistent snapshot even while a writer is busy), the segment
files copied as they are, and the copy removed on close. Writers (:func:`writer`) open the directory
itself, refused while any other process has its ``chroma.sqlite3`` open: chromadb keeps no lock another
process could wait on, and a second client caches segments the first one rewrites.

A collection is opened with ``embedding_function=None``: praisonmem never embeds anything (the libraries
pass their own vectors), so chromadb never loads or downloads a model.

Deleting leaves no residue (:func:`delete_ids`): chromadb keeps every added text in its write-ahead log
(``embeddings_queue``) until the HNSW segment syncs (every ``sync_threshold`` writes, 1000 by default), and
SQLite keeps deleted cells in free pages. The delete is therefore made with the collection's
``sync_threshold`` and ``batch_size`` lowered for that one write, the records it deletes read beforehand from a
private copy (a read through the writing client loads the vector segment, which then skips the delete), so
chromadb syncs the segment and purges its log up to its last entry, which it keeps to number the next (measured:
the lowered value lives in the client only, the stored configuration stays as the library made it, and it
is put back before the client closes). That last entry is the delete, holding the deleted ids, so deletes of
an id nothing has are logged after it until it is purged (:func:`advance_log`). Then the vector files' unused
slots are zeroed (:func:`clear_unused_slots`: chromadb writes them from uncleared memory) and ``VACUUM`` is run
by SQLite itself once the client is closed, and every file of the directory is searched for the deleted
texts' bytes.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from praisonmem.core.errors import CorruptFile, IOFailure, NotFound, PraisonMemError, Refused, UsageError
from praisonmem.core.io import sqlite as sqlite_io
from praisonmem.core.io.jsonfile import fsync_dir

SQLITE = "chroma.sqlite3"
INSTALL_HINT = "Chroma support needs chromadb: pip install 'praisonmem[chroma]'"
INCLUDE = ["documents", "metadatas", "embeddings"]
TABLES = {"collections": ("id", "name"), "segments": ("id", "collection"), "embeddings": ("id", "embedding_id"),
          "embedding_metadata": ("id", "key"), "embeddings_queue": ("seq_id", "id")}
HNSW_HEADER = "header.bin"
HNSW_HEADER_SIZE = 100  # hnswlib's persisted header: a version, then its sizes and counts
HNSW_FILES = {"header.bin", "data_level0.bin", "length.bin", "link_lists.bin", "index_metadata.pickle"}
STORE_FILES = {SQLITE, SQLITE + "-wal", SQLITE + "-shm", SQLITE + "-journal"}
SYNC_FOR_DELETE = 2  # the smallest sync_threshold chromadb accepts: the delete itself makes the segment sync
LOG_ADVANCE_TRIES = 8  # deletes of nothing logged to move the log on; measured: one or two purge it


def driver() -> Any:
    """chromadb, with its telemetry off before it is imported."""
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
    try:
        import chromadb
    except ImportError:
        raise IOFailure(INSTALL_HINT) from None
    return chromadb


def looks_like_chroma(path: Path) -> bool:
    return path.is_dir() and (path / SQLITE).is_file()


def check_dir(path: Path, what: str = "Chroma store") -> Path:
    """``path`` as a Chroma directory whose ``chroma.sqlite3`` has chromadb's tables; reads nothing else and
    changes nothing."""
    if not path.exists():
        raise NotFound(f"{path}: no {what} there")
    if not path.is_dir():
        raise UsageError(f"{path}: not a directory (a {what} is a directory holding {SQLITE})")
    db = path / SQLITE
    if not db.is_file():
        raise NotFound(f"{path}: no {SQLITE}, so no {what} there")
    conn = sqlite_io.connect_ro(db)
    try:
        problem = sqlite_io.store_tables_problem(conn, TABLES, required=TABLES)
    except sqlite3.Error as exc:
        raise CorruptFile(str(db), f"not a readable Chroma database ({exc})") from None
    finally:
        conn.close()
    if problem is not None:
        raise CorruptFile(str(db), f"not a Chroma database ({problem})")
    return path


def holders(path: Path) -> list[int]:
    """The other processes that have ``path/chroma.sqlite3`` open (a scan of ``/proc/*/fd``; chromadb holds
    it open for the life of its client and takes no lock while idle, so a lock probe would see nothing).
    Processes of other users are visible only to root."""
    try:
        target = os.path.realpath(path / SQLITE)
        found = []
        for pid in os.listdir("/proc"):
            if not pid.isdigit() or int(pid) == os.getpid():
                continue
            fd_dir = f"/proc/{pid}/fd"
            try:
                names = os.listdir(fd_dir)
            except OSError:
                continue
            for name in names:
                try:
                    link = os.readlink(f"{fd_dir}/{name}")
                except OSError:
                    continue
                if link == target or link.startswith(target + "-"):
                    found.append(int(pid))
                    break
        return found
    except FileNotFoundError:  # no /proc (not Linux): nothing can be said
        return []


def busy_reason(path: Path) -> str | None:
    pids = holders(path)
    if not pids:
        return None
    return f"{path} is open in process {', '.join(map(str, pids))} (a running agent?)"


def _open_client(chromadb: Any, path: Path) -> Any:
    from chromadb.config import Settings

    try:
        return chromadb.PersistentClient(path=str(path), settings=Settings(anonymized_telemetry=False,
                                                                             allow_reset=False))
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:  # chromadb's Rust side panics with a BaseException on a damaged store
        raise CorruptFile(str(path / SQLITE), f"chromadb cannot open it ({_first_line(exc)})") from None


def _close(client: Any) -> None:
    try:
        client.close()
    finally:
        type(client).clear_system_cache()


@contextmanager
def unheld(path: Path, timeout: float = 0.0) -> Iterator[None]:
    """The Chroma directory ``path``'s "lock": chromadb takes none a process could wait on (``timeout`` is
    unused), so this refuses while another process has the store open."""
    busy = busy_reason(path)
    if busy:
        raise Refused(f"{busy}; stop it first: chromadb has no lock to wait on")
    yield


def counts(client: Any) -> dict[str, int]:
    """Each collection's item count, by name."""
    return {name: client.get_collection(name, embedding_function=None).count() for name in names(client)}


def opened_counts(path: Path) -> dict[str, int]:
    """:func:`counts` of the directory ``path`` itself, opened with chromadb (a private copy a caller made:
    opening rewrites files). :class:`CorruptFile` when chromadb cannot open or read it."""
    chromadb = driver()
    client = _open_client(chromadb, path)
    try:
        return counts(client)
    except (PraisonMemError, KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:  # chromadb (or its Rust side) failing on what it read: a damaged store
        raise CorruptFile(str(path), f"chromadb cannot read it ({_first_line(exc)})") from None
    finally:
        _close(client)


def copy_files(src: Path, dst: Path) -> None:
    """The segment dirs' regular files (nothing a link points at), and ``chroma.sqlite3`` by the backup API."""
    for entry in os.scandir(src):
        if entry.is_dir(follow_symlinks=False):
            os.mkdir(dst / entry.name, 0o700)
            for inner in os.scandir(entry.path):
                if inner.is_file(follow_symlinks=False):
                    with open(inner.path, "rb") as f_in, open(dst / entry.name / inner.name, "wb") as f_out:
                        shutil.copyfileobj(f_in, f_out)
    source = sqlite_io.connect_ro(src / SQLITE)
    target = sqlite3.connect(str(dst / SQLITE))
    try:
        source.backup(target)
    finally:
        target.close()
        source.close()


@contextmanager
def snapshot(path: Path) -> Iterator[Any]:
    """A chromadb client over a private copy of the Chroma directory ``path`` (see the module docstring for
    why a copy); nothing under ``path`` changes."""
    chromadb = driver()
    check_dir(path)
    scratch = Path(tempfile.mkdtemp(prefix="praisonmem-chroma-"))
    client = None
    try:
        try:
            copy_files(path, scratch)
        except (OSError, sqlite3.Error) as exc:
            raise IOFailure(f"{path}: cannot read: {exc}") from None
        client = _open_client(chromadb, scratch)
        try:
            yield client
        except (PraisonMemError, KeyboardInterrupt, SystemExit, GeneratorExit):
            raise
        except BaseException as exc:  # chromadb (or its Rust side) failing on what it read: a damaged store
            raise CorruptFile(str(path), f"chromadb cannot read it ({_first_line(exc)})") from None
    finally:
        if client is not None:
            _close(client)
        shutil.rmtree(scratch, ignore_errors=True)


@contextmanager
def writer(path: Path, *, create: bool = False) -> Iterator[Any]:
    """A chromadb client on ``path`` itself, for a write; refused while another process has it open.
    ``create``: a directory that does not exist yet becomes a new store (as the libraries make it)."""
    chromadb = driver()
    if create and not path.exists():
        path.mkdir(parents=True, exist_ok=True)
    else:
        check_dir(path)
    busy = busy_reason(path)
    if busy:
        raise Refused(f"{busy}; stop it first: chromadb has no lock to wait on; nothing changed")
    client = _open_client(chromadb, path)
    try:
        yield client
    except (PraisonMemError, KeyboardInterrupt, SystemExit, GeneratorExit):
        raise
    except BaseException as exc:  # chromadb failing mid-write: its own transaction keeps the store whole
        raise IOFailure(f"{path}: chromadb failed: {_first_line(exc)}") from None
    finally:
        _close(client)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0]}" if text else type(exc).__name__


def collection(client: Any, name: str, where: Path) -> Any:
    """The collection ``name``, opened without an embedding function; :class:`NotFound` when absent."""
    if name not in names(client):
        raise NotFound(f"{where}: no collection '{name}' (it holds: {', '.join(names(client)) or 'none'})")
    return client.get_collection(name, embedding_function=None)


def names(client: Any) -> list[str]:
    return sorted(c.name for c in client.list_collections())


def rows(col: Any, *, ids: list[str] | None = None, embeddings: bool = False) -> list[dict[str, Any]]:
    """Every record of ``col`` (or those of ``ids``), in chromadb's order: id, document, metadata (and the
    embedding as plain floats, exactly the stored float32 values)."""
    include = ["documents", "metadatas"] + (["embeddings"] if embeddings else [])
    got = col.get(ids=ids, include=include)
    out = []
    for i, item_id in enumerate(got["ids"]):
        # chromadb hands metadata keys back in no fixed order: sorted, so the same store prints the same
        meta = dict(sorted((got["metadatas"][i] or {}).items()))
        row = {"id": item_id, "document": got["documents"][i], "metadata": meta}
        if embeddings:
            vector = got["embeddings"][i]
            row["embedding"] = None if vector is None else [float(x) for x in vector]
        out.append(row)
    return out


def neighbours(col: Any, item_id: str, limit: int, where: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """The ``limit`` nearest records to the stored vector of ``item_id`` (itself excluded), with distances."""
    own = col.get(ids=[item_id], include=["embeddings"])
    if not own["ids"]:
        raise NotFound(f"no item '{item_id}' to compare with")
    count = col.count()
    if count <= 1:
        return []
    got = col.query(query_embeddings=[own["embeddings"][0]], n_results=min(limit + 1, count), where=where or None,
                    include=["documents", "metadatas", "distances"])
    out = []
    for i, other in enumerate(got["ids"][0]):
        if other != item_id:
            out.append({"id": other, "document": got["documents"][0][i],
                        "metadata": dict(sorted((got["metadatas"][0][i] or {}).items())),
                        "distance": float(got["distances"][0][i])})
    return out[:limit]


def delete_ids(path: Path, name: str, ids: list[str]) -> list[dict[str, Any]]:
    """Delete ``ids`` from the collection ``name`` of ``path`` and scrub what they leave (module docstring);
    returns the deleted records. :class:`IOFailure` when a deleted text is still found in a file. Ids deleted
    already whose log entry is still there (a run killed before the log moved on) are scrubbed again."""
    # read from a private copy: a read through the writer's client loads the vector segment, which then
    # skips applying the delete (measured with chromadb 1.5.9: the deleted id stayed in the HNSW files)
    with snapshot(path) as copy:
        gone = rows(collection(copy, name, path), ids=ids)
    logged = _logged(path, name, ids)
    if not gone and not logged:
        return []
    with writer(path) as client:
        col = collection(client, name, path)
        # lowered before anything loads the segment: a loaded segment keeps the threshold it was opened with
        hnsw = col.configuration_json.get("hnsw") or {}
        kept = {k: hnsw[k] for k in ("sync_threshold", "batch_size") if hnsw.get(k) is not None}
        # the batch too: a segment whose brute-force batch is not full never syncs, and its log keeps texts
        col.modify(configuration={"hnsw": {"sync_threshold": SYNC_FOR_DELETE, "batch_size": SYNC_FOR_DELETE}})
        try:
            if gone:
                col.delete(ids=[r["id"] for r in gone])
            advance_log(col, path, [r["id"] for r in gone] or ids)
            col.count()  # measured: the delete itself synced and purged; a read settles a deferred sync
        finally:
            if kept:
                col.modify(configuration={"hnsw": kept})
    vacuum(path)
    left = residue(path, [r["document"] for r in gone if r["document"]])
    if left:
        raise IOFailure(f"deleted, but {left} still holds deleted text; nothing else changed")
    return gone


def advance_log(col: Any, path: Path, ids: list[str]) -> bool:
    """Move chromadb's write-ahead log past the entries naming ``ids``. The log keeps its last entry to number
    the next one, and a delete's entry holds the deleted id; so deletes of ids nothing has (praisonmem's own
    ``praisonmem-scrub-<uuid>``: the collection does not change, and no vector is written) are logged after
    it until a sync purges it (measured with chromadb 1.5.9: one or two). False when the log still names one."""
    import uuid

    for _ in range(LOG_ADVANCE_TRIES):
        if not _logged(path, col.name, ids):
            return True
        col.delete(ids=[f"praisonmem-scrub-{uuid.uuid4()}"])
    return not _logged(path, col.name, ids)


def _logged(path: Path, name: str, ids: list[str]) -> bool:
    """Whether chromadb's log of collection ``name`` of ``path`` still names one of ``ids`` (a read-only
    connection: nothing changes)."""
    conn = sqlite_io.connect_ro(path / SQLITE)
    try:
        found = conn.execute("SELECT id FROM collections WHERE name = ?", (name,)).fetchone()
        if found is None:
            return False
        chunks = (ids[i:i + 500] for i in range(0, len(ids), 500))  # under SQLite's bound on variables
        return any(conn.execute(
            f"SELECT 1 FROM embeddings_queue WHERE topic LIKE ? AND id IN ({','.join('?' * len(chunk))}) LIMIT 1",
            (f"%/{found[0]}", *chunk)).fetchone() for chunk in chunks)
    except sqlite3.Error as exc:
        raise CorruptFile(str(path / SQLITE), f"not a readable Chroma database ({exc})") from None
    finally:
        conn.close()


def drop_collection(path: Path, name: str) -> bool:
    """Delete the collection ``name`` of ``path`` through chromadb (one transaction of its own), VACUUM, and
    remove the HNSW segment directories no collection owns any more (chromadb leaves the dropped one's
    vectors on disk). False when the collection was gone already (a rerun: the scrub runs again)."""
    with writer(path) as client:
        dropped = name in names(client)
        if dropped:
            client.delete_collection(name)
    vacuum(path)
    for orphan in orphan_segments(path):
        shutil.rmtree(orphan)
    return dropped


def orphan_segments(path: Path) -> list[Path]:
    """The segment directories of ``path`` (named by a segment id, holding only HNSW files) whose segment
    ``chroma.sqlite3`` no longer lists."""
    import uuid

    conn = sqlite_io.connect_ro(path / SQLITE)
    try:
        owned = {str(row[0]) for row in conn.execute("SELECT id FROM segments")}
    except sqlite3.Error as exc:
        raise CorruptFile(str(path / SQLITE), f"not a readable Chroma database ({exc})") from None
    finally:
        conn.close()
    out = []
    for entry in sorted(path.iterdir()):
        try:
            uuid.UUID(entry.name)
        except ValueError:
            continue
        if entry.name in owned or entry.is_symlink() or not entry.is_dir():
            continue
        if all(f.is_file() and not f.is_symlink() and f.name in HNSW_FILES for f in entry.iterdir()):
            out.append(entry)
    return out


def remove_empty_store(path: Path) -> bool:
    """Remove the directory ``path`` when it is a Chroma store holding no collection and nothing but
    ``chroma.sqlite3`` and its journals (what :func:`drop_collection` leaves of a store it emptied); False
    (and nothing removed) otherwise."""
    if busy_reason(path):
        return False
    conn = sqlite_io.connect_ro(path / SQLITE)
    try:
        left = conn.execute("SELECT count(*) FROM collections").fetchone()[0]
    except sqlite3.Error:
        return False
    finally:
        conn.close()
    entries = list(path.iterdir())
    if left or any(e.is_dir() or e.name not in STORE_FILES for e in entries):
        return False
    for entry in entries:
        entry.unlink()
    path.rmdir()
    fsync_dir(path.parent)
    return True


def vacuum(path: Path) -> None:
    """SQLite's own ``VACUUM`` of ``chroma.sqlite3`` (chromadb's client is closed by now, and no other process
    has the file open): the free pages that kept deleted cells are gone; and the vector files' unused slots
    zeroed (:func:`clear_unused_slots`)."""
    busy = busy_reason(path)
    if busy:
        raise Refused(f"{busy}: deleted, but the free pages were not vacuumed; run the delete again later")
    for header in sorted(path.glob("*/" + HNSW_HEADER)):
        clear_unused_slots(header.parent)
    conn = sqlite_io.connect_existing(path / SQLITE, 30.0)
    try:
        conn.execute("VACUUM")
    except sqlite3.Error as exc:
        raise sqlite_io.translate(exc, path / SQLITE, 30.0) from None
    finally:
        conn.close()


def clear_unused_slots(segment: Path) -> bool:
    """Zero what a vector segment's ``data_level0.bin`` and ``length.bin`` hold past the last element its
    ``header.bin`` counts. hnswlib sizes them for the capacity it allocated, and chromadb writes the unused
    slots from memory it never cleared (measured with chromadb 1.5.9: they held bytes of texts the process had
    read, a deleted one's too); nothing reads them, and adding an element writes its whole slot. Files
    whose sizes do not agree with the header are left as they are. True when bytes were zeroed."""
    import struct

    try:
        header = (segment / HNSW_HEADER).read_bytes()
        if segment.is_symlink() or len(header) != HNSW_HEADER_SIZE or any(p.is_symlink() for p in segment.iterdir()):
            return False
        version, _offset, capacity, count, size = struct.unpack_from("<IQQQQ", header)
        if version != 1 or size == 0 or count > capacity:
            return False
        cleared = False
        for name, width in (("data_level0.bin", size), ("length.bin", 4)):
            file = segment / name
            length = file.stat().st_size
            if not count * width <= length <= capacity * width or length % width:
                continue
            with open(file, "r+b") as f:
                f.seek(count * width)
                if any(f.read()):
                    f.seek(count * width)
                    f.write(bytes(length - count * width))
                    f.flush()
                    os.fsync(f.fileno())
                    cleared = True
        return cleared
    except OSError as exc:
        raise IOFailure(f"{segment}: cannot clear the vector files' unused slots: {exc.strerror or exc}") from None


def residue(path: Path, texts: list[str]) -> str | None:
    """The first file under ``path`` that still holds one of ``texts`` (UTF-8 bytes), or ``None``."""
    needles = [t.encode() for t in texts if t]
    if not needles:
        return None
    for root, _dirs, files in os.walk(path):
        for name in files:
            file = Path(root) / name
            try:
                data = file.read_bytes()
            except OSError:
                continue
            if any(n in data for n in needles):
                return str(file)
    return None


def add_rows(path: Path, name: str, records: list[dict[str, Any]], *, metadata: dict[str, Any] | None,
             create: bool) -> None:
    """Add ``records`` (id, document, metadata, embedding) to the collection ``name`` (made with ``metadata``
    when it does not exist), in chromadb's largest batches."""
    with writer(path, create=create) as client:
        if name in names(client):
            col = client.get_collection(name, embedding_function=None)
        else:
            col = client.create_collection(name, metadata=metadata or {"hnsw:space": "cosine"})
        step = max(1, int(client.get_max_batch_size()))
        for start in range(0, len(records), step):
            batch = records[start:start + step]
            try:
                col.add(ids=[r["id"] for r in batch], documents=[r["document"] for r in batch],
                        metadatas=[r["metadata"] or None for r in batch], embeddings=[r["embedding"] for r in batch])
            except PraisonMemError:
                raise
            except Exception as exc:
                done = f"{start} of {len(records)} added before it; " if start else ""
                raise Refused(f"chromadb refused the records: {_first_line(exc)}; {done or 'nothing added'}") from None
    # free pages a killed delete may have left: every praisonmem write ends with the store vacuumed
    vacuum(path)


def read_export(source: str, *, export_format: str, what: str,
                problem: Callable[[dict[str, Any]], str | None]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A praisonmem export of a Chroma collection (a header line ``{"format": export_format, …}``, then one
    record per line) read from ``source`` (``-``: stdin) as ``(header, records)``. Any bad line (not JSON, not an
    object, ``problem(record)``, an id twice) is a :class:`UsageError` naming it, so nothing is imported from a
    damaged file."""
    from praisonmem.core.io import inputfile

    raw = inputfile.read_source(source)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{source}: not UTF-8 ({exc.reason} at byte {exc.start})") from None
    header: dict[str, Any] = {}
    records: list[dict[str, Any]] = []
    seen: set[str] = set()
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except ValueError as exc:
            raise UsageError(f"{source}:{number}: not JSON ({exc})") from None
        if not isinstance(value, dict):
            raise UsageError(f"{source}:{number}: not a JSON object")
        if number == 1 and "format" in value:
            if value["format"] != export_format:
                raise UsageError(f"{source}: format {value['format']!r} is not {export_format!r}")
            header = value
            continue
        found = problem(value)
        if found:
            raise UsageError(f"{source}:{number}: {found}")
        if value["id"] in seen:
            raise UsageError(f"{source}:{number}: id {value['id']!r} appears twice")
        seen.add(value["id"])
        records.append(value)
    if not header:
        raise UsageError(f"{source}: not a praisonmem {what} export (no {export_format!r} header line)")
    return header, records
