"""Backups: one ``praisonmem-backup-<UTC>.tar.gz`` of sessions, spill, learn stores and FileMemory.

Layout inside the archive (so that ``restore --to DIR`` yields a usable
``DIR/home`` and ``DIR/memory``)::

    manifest.json                      first, so listing reads only the head
    home/sessions/…                    each session read while holding its lock
    home/state/session_spill/…
    home/learn/<scope>/<user>/…        read under the learn-store lock
    memory/<user>/…

The manifest records the praisonmem version, the source roots, and each file's
path, size, mode, mtime and sha256. The archive is written to a temp name in
the target directory, fsynced and renamed, so a crashed backup never looks
complete. Restore checks every entry (absolute paths, ``..``, links and devices
are refused before anything is written), verifies every checksum, then writes
each file with the same locked atomic writes as the other commands.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import tarfile
import tempfile
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path, PurePosixPath
from typing import Any

from praisonmem import __version__
from praisonmem.core import filememory, jsonfile, learn
from praisonmem.core.errors import IOFailure, NotFound, PraisonMemError, ProblemsFound, Refused, UsageError
from praisonmem.core.paths import Paths

PREFIX = "praisonmem-backup-"
SUFFIX = ".tar.gz"
NAMED = re.compile(r"praisonmem-backup-(\d{8}T\d{6}Z)(?:-([1-9]\d{0,8}))?\.tar\.gz")
MANIFEST = "manifest.json"
FORMAT = "praisonmem-backup"
INCLUDES = ("sessions", "memory", "learn")
SKIPPED_SUFFIXES = (".lock", ".tmp")
DAMAGE = (tarfile.TarError, EOFError, OSError, zlib.error)  # what a damaged archive raises

Progress = Callable[[int, int], None] | None


@dataclass
class Entry:
    kind: str  # "session", "learn", "memory", "file"
    source: Path
    name: str  # path inside the archive


def default_dir() -> Path:
    import platformdirs

    return Path(platformdirs.user_data_dir("praisonmem")) / "backups"


def parse_include(text: str | None) -> tuple[str, ...]:
    if text is None:
        return INCLUDES
    parts = tuple(p.strip() for p in text.split(",") if p.strip())
    bad = [p for p in parts if p not in INCLUDES]
    if bad or not parts:
        raise UsageError(f"--include takes a comma list of {', '.join(INCLUDES)}, got '{text}'")
    return parts


def _files(root: Path) -> list[Path]:
    if not root.is_dir():
        return []
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            path = Path(dirpath) / name
            if not path.is_symlink() and path.is_file() and not name.endswith(SKIPPED_SUFFIXES):
                found.append(path)
    return found


def collect(paths: Paths, include: tuple[str, ...]) -> tuple[list[Entry], dict[str, str]]:
    """What a backup holds, and the roots it came from."""
    entries: list[Entry] = []
    roots: dict[str, str] = {}
    if "sessions" in include:
        roots["sessions"] = os.path.abspath(paths.sessions_dir)
        roots["spill"] = os.path.abspath(paths.spill_dir)
        for path in _files(paths.sessions_dir):
            if path.parent == paths.sessions_dir:
                kind = "session" if path.name.endswith(".json") else "file"
                entries.append(Entry(kind, path, f"home/sessions/{path.name}"))
        entries += [Entry("file", p, f"home/state/session_spill/{p.name}") for p in _files(paths.spill_dir)
                    if p.parent == paths.spill_dir]
    if "learn" in include:
        roots["learn"] = os.path.abspath(paths.learn_dir)
        for path in _files(paths.learn_dir):
            kind = "learn" if path.name.endswith(".json") and not path.name.endswith(".archive.json") else "file"
            entries.append(Entry(kind, path, "home/learn/" + path.relative_to(paths.learn_dir).as_posix()))
    if "memory" in include:
        roots["memory"] = os.path.abspath(paths.memory_dir)
        entries += [Entry("memory", p, "memory/" + p.relative_to(paths.memory_dir).as_posix())
                    for p in _files(paths.memory_dir)]
    return entries, roots


def _read(entry: Entry, timeout: float) -> bytes | None:
    """The file's bytes, read under its library lock where it has one; ``None`` if it vanished."""
    try:
        if entry.kind == "session":
            with jsonfile.locked(entry.source, timeout):
                return entry.source.read_bytes()
        if entry.kind == "learn":
            with learn.locked(entry.source, timeout):
                return entry.source.read_bytes()
        return entry.source.read_bytes()
    except FileNotFoundError:
        return None
    except PermissionError as exc:
        raise IOFailure(f"{entry.source}: permission denied; backup not written") from exc
    except OSError as exc:
        raise IOFailure(f"{entry.source}: {exc.strerror or exc}; backup not written") from exc


def _archive_name(directory: Path) -> Path:
    """A new name that sorts after every backup already there (same second: a higher counter)."""
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    same_second = [counter for name_stamp, counter in map(_name_parts, _named(directory)) if name_stamp == stamp]
    if not same_second:
        return directory / f"{PREFIX}{stamp}{SUFFIX}"
    return directory / f"{PREFIX}{stamp}-{max(same_second) + 1}{SUFFIX}"


def create(paths: Paths, *, output: Path, include: tuple[str, ...] = INCLUDES, keep: int = 0,
           timeout: float = jsonfile.LOCK_TIMEOUT, progress: Progress = None) -> dict[str, Any]:
    """Write a backup; ``output`` is a directory (a timestamped name is chosen) unless it names
    a ``.tar.gz`` file, which must not exist yet."""
    if output.suffix in (".zip", ".tar", ".tgz", ".gz", ".bz2", ".xz") and not output.name.endswith(SUFFIX) \
            and not output.is_dir():
        raise UsageError(f"{output}: a backup file name must end in {SUFFIX} (or give a directory)")
    if output.name.endswith(SUFFIX) and not output.is_dir():
        directory, target = output.parent, output
        if output.exists():
            from praisonmem.core.errors import TargetExists

            raise TargetExists(f"{output} already exists; choose another name or a directory")
    else:
        directory, target = output, None
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise IOFailure(f"{directory}: cannot create the backup directory: {exc.strerror or exc}") from exc
    final = target or _archive_name(directory)
    entries, roots = collect(paths, include)
    if not entries:
        raise NotFound("nothing to back up: no " + ", ".join(include) + " under " + ", ".join(roots.values())
                       + " (wrong --home or --memory-dir?)")
    fd, tmp_name = tempfile.mkstemp(dir=directory, prefix=f".{final.name}.", suffix=".tmp")
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        manifest_files = []
        with tempfile.TemporaryFile(dir=directory) as spool:
            with tarfile.open(fileobj=spool, mode="w") as staging:
                for done, entry in enumerate(entries, 1):
                    data = _read(entry, timeout)
                    if data is not None:
                        st = entry.source.stat()
                        info = _info(entry.name, len(data), st.st_mode & 0o7777, st.st_mtime)
                        staging.addfile(info, io.BytesIO(data))
                        manifest_files.append({"path": entry.name, "size": len(data),
                                               "mode": f"{st.st_mode & 0o7777:04o}", "mtime": st.st_mtime,
                                               "sha256": hashlib.sha256(data).hexdigest()})
                    if progress:
                        progress(done, len(entries))
            manifest = {"format": FORMAT, "version": 1, "praisonmem_version": __version__,
                        "created_at": datetime.now(timezone.utc).isoformat(), "include": list(include),
                        "roots": roots, "files": manifest_files}
            body = json.dumps(manifest, indent=2, ensure_ascii=False).encode("utf-8")
            spool.seek(0)
            with open(tmp, "wb") as raw, tarfile.open(fileobj=raw, mode="w:gz") as archive:
                archive.addfile(_info(MANIFEST, len(body), 0o644, time.time()), io.BytesIO(body))
                with tarfile.open(fileobj=spool, mode="r") as staged:
                    for member in staged:
                        archive.addfile(member, staged.extractfile(member))
            with open(tmp, "rb+") as handle:
                os.fsync(handle.fileno())
        os.replace(tmp, final)
    except BaseException:
        try:
            tmp.unlink()
        except FileNotFoundError:
            pass
        raise
    removed = prune(directory, keep, final) if keep else []
    return {"path": str(final), "files": len(manifest_files), "size": final.stat().st_size,
            "removed": [str(p) for p in removed]}


def _info(name: str, size: int, mode: int, mtime: float) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.size, info.mode, info.mtime = size, mode, int(mtime)
    info.uname = info.gname = ""
    return info


def backups(directory: Path) -> list[Path]:
    """Files that look like backups (``praisonmem-backup-*.tar.gz``, hand-named ones too), by name."""
    if not directory.is_dir():
        return []
    return sorted(p for p in directory.iterdir() if p.name.startswith(PREFIX) and p.name.endswith(SUFFIX)
                  and p.is_file())


def _named(directory: Path) -> list[Path]:
    """The backups praisonmem itself named (``praisonmem-backup-<UTC stamp>[-N].tar.gz``)."""
    return [p for p in backups(directory) if NAMED.fullmatch(p.name)]


def _name_parts(path: Path) -> tuple[str, int]:
    match = NAMED.fullmatch(path.name)
    assert match is not None
    return match[1], int(match[2] or 0)


def _utc_time(stamp: Any) -> datetime | None:
    """A manifest's ``created_at`` as an aware time; ``None`` when missing or not an ISO time with an offset."""
    try:
        when = datetime.fromisoformat(stamp) if isinstance(stamp, str) else None
    except ValueError:
        return None
    return when if when is not None and when.tzinfo is not None else None


def created_at(archive: Path) -> datetime | None:
    """When the manifest says the backup was made; ``None`` when it cannot be read."""
    try:
        return _utc_time(read_manifest(archive).get("created_at"))
    except PraisonMemError:
        return None


def prune(directory: Path, keep: int, written: Path) -> list[Path]:
    """Rotation: besides ``written`` (never deleted), keep the ``keep - 1`` newest archives praisonmem
    named, newest by the creation time in their manifests (names can lie: clock skew, copies from another
    machine). Hand-named files and archives whose manifest cannot be read are neither counted nor deleted."""
    dated = sorted((when, p) for p in _named(directory) if p.name != written.name
                   and (when := created_at(p)) is not None)
    old = [p for _, p in dated[: max(len(dated) - (keep - 1), 0)]]
    removed = []
    for path in old:
        try:
            path.unlink()
        except FileNotFoundError:  # another rotation got there first
            continue
        except OSError as exc:
            raise IOFailure(f"{path}: cannot delete this old backup ({exc.strerror or exc}); the new backup "
                            f"{written} is complete") from exc
        removed.append(path)
    return removed


# ---------------------------------------------------------------- reading archives


def read_manifest(archive: Path) -> dict[str, Any]:
    """The manifest, read from the head of the archive only."""
    try:
        with tarfile.open(archive, mode="r:gz") as tar:
            first = tar.next()
            if first is None or first.name != MANIFEST:
                raise Refused(f"{archive}: not a praisonmem backup (no {MANIFEST} first)")
            data = json.loads(tar.extractfile(first).read())
    except FileNotFoundError as exc:
        raise NotFound(f"{archive}: no such file") from exc
    except (*DAMAGE, ValueError) as exc:
        raise Refused(f"{archive}: cannot read the archive ({exc})") from exc
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise Refused(f"{archive}: not a praisonmem backup manifest")
    return data


def missing_sources(paths: Paths, include: tuple[str, ...]) -> list[str]:
    """The included sources that do not exist (worth a warning: a cron job may be looking elsewhere)."""
    sources = {"sessions": paths.sessions_dir, "learn": paths.learn_dir, "memory": paths.memory_dir}
    return [f"{kind} ({sources[kind]})" for kind in include if not sources[kind].is_dir()]


def list_backups(directory: Path) -> list[dict[str, Any]]:
    if not directory.exists():
        raise NotFound(f"{directory}: no such backup directory")
    if not directory.is_dir():
        raise UsageError(f"{directory} is not a directory")
    rows = []
    for path in backups(directory):
        row: dict[str, Any] = {"file": str(path), "size": path.stat().st_size, "created_at": None, "files": None,
                               "error": None}
        try:
            manifest = read_manifest(path)
            row.update(created_at=manifest.get("created_at"), files=len(manifest.get("files", [])))
        except PraisonMemError as exc:
            row["error"] = exc.message
        rows.append(row)
    return sorted(rows, key=_oldest_first)


def _oldest_first(row: dict[str, Any]) -> tuple[bool, datetime, str]:
    """By the manifest's creation time (as rotation), then by name; unreadable ones last."""
    when = _utc_time(row["created_at"])
    return when is None, when or datetime.min.replace(tzinfo=timezone.utc), row["file"]


def unsafe_reason(member: tarfile.TarInfo) -> str | None:
    name = member.name
    parts = PurePosixPath(name).parts
    if name.startswith(("/", "\\")) or (len(name) > 1 and name[1] == ":"):
        return "an absolute path"
    if ".." in parts or "\\" in name:
        return "a path with '..'"
    if member.issym() or member.islnk():
        return "a link"
    if member.isdev() or member.isfifo():
        return "a device or pipe"
    if not (member.isfile() or member.isdir()):
        return "not a regular file"
    return None


def verify(archive: Path, progress: Progress = None) -> dict[str, Any]:
    """Every member against the manifest: present, same size, same sha256; damage is named."""
    try:
        manifest = read_manifest(archive)
    except Refused as exc:  # unreadable or not a backup: a failed check, like any other damage
        return {"file": str(archive), "ok": False, "files": 0, "created_at": None,
                "problems": [{"path": str(archive), "problem": exc.message.split(": ", 1)[-1]}]}
    expected = {f["path"]: f for f in manifest.get("files", [])}
    problems: list[dict[str, str]] = []
    seen: set[str] = set()
    current = MANIFEST
    try:
        with tarfile.open(archive, mode="r:gz") as tar:
            for member in tar:
                current = member.name
                if member.name == MANIFEST:
                    continue
                reason = unsafe_reason(member)
                if reason:
                    problems.append({"path": member.name, "problem": f"unsafe entry: {reason}"})
                    continue
                if member.isdir():
                    continue
                seen.add(member.name)
                data = tar.extractfile(member).read()
                want = expected.get(member.name)
                if want is None:
                    problems.append({"path": member.name, "problem": "not in the manifest"})
                elif len(data) != want["size"] or hashlib.sha256(data).hexdigest() != want["sha256"]:
                    problems.append({"path": member.name, "problem": "checksum mismatch"})
                if progress:
                    progress(len(seen), len(expected))
    except DAMAGE as exc:
        problems.append({"path": current, "problem": f"archive damaged while reading this entry ({exc})"})
    for path in expected:
        if path not in seen and not any(p["path"] == path for p in problems):
            problems.append({"path": path, "problem": "missing from the archive"})
    return {"file": str(archive), "ok": not problems, "files": len(expected), "problems": problems,
            "created_at": manifest.get("created_at")}


# ---------------------------------------------------------------- restore


def destination(name: str, paths: Paths, to: Path | None) -> Path:
    if to is not None:
        return to / name
    mapping = (("home/sessions/", paths.sessions_dir), ("home/state/session_spill/", paths.spill_dir),
               ("home/learn/", paths.learn_dir), ("memory/", paths.memory_dir))
    for prefix, root in mapping:
        if name.startswith(prefix):
            return root / name[len(prefix):]
    raise Refused(f"archive entry '{name}' is outside the backup layout; nothing written")


@dataclass
class RestoreItem:
    name: str
    target: Path
    action: str  # "restore" | "replace" | "skip"
    mode: int
    mtime: float


def plan_restore(archive: Path, paths: Paths, *, to: Path | None, on_conflict: str,
                 progress: Progress = None) -> list[RestoreItem]:
    if on_conflict not in ("skip", "replace"):
        raise UsageError(f"--on-conflict must be skip or replace, got '{on_conflict}'")
    try:
        with tarfile.open(archive, mode="r:gz") as tar:
            for member in tar.getmembers():
                reason = unsafe_reason(member)
                if reason:
                    raise Refused(f"refusing archive entry '{member.name}': {reason} (tar slip); nothing written")
    except FileNotFoundError as exc:
        raise NotFound(f"{archive}: no such file") from exc
    except DAMAGE as exc:
        raise ProblemsFound(f"{archive}: archive damaged ({exc}); nothing written") from exc
    report = verify(archive, progress)
    if not report["ok"]:
        named = ", ".join(f"{p['path']} ({p['problem']})" for p in report["problems"][:5])
        raise ProblemsFound(f"{archive} failed verification: {named}; nothing written")
    items = []
    for entry in read_manifest(archive)["files"]:
        target = destination(entry["path"], paths, to)
        action = "restore" if not target.exists() else ("replace" if on_conflict == "replace" else "skip")
        items.append(RestoreItem(entry["path"], target, action, int(entry["mode"], 8), entry["mtime"]))
    return items


def restore(archive: Path, items: list[RestoreItem], paths: Paths, *, to: Path | None,
            timeout: float = jsonfile.LOCK_TIMEOUT, progress: Progress = None) -> list[dict[str, Any]]:
    wanted = {i.name: i for i in items if i.action != "skip"}
    results = [{"path": i.name, "target": str(i.target), "action": "skipped", "detail": "already exists"}
               for i in items if i.action == "skip"]
    try:
        return results + _restore_members(archive, wanted, timeout, progress)
    except DAMAGE as exc:  # it verified a moment ago, so the archive changed during the restore
        raise ProblemsFound(f"{archive}: archive damaged while restoring ({exc}); some files may already be "
                            "restored") from exc


def _restore_members(archive: Path, wanted: dict[str, RestoreItem], timeout: float,
                     progress: Progress) -> list[dict[str, Any]]:
    results: list[dict[str, Any]] = []
    done = 0
    with tarfile.open(archive, mode="r:gz") as tar:
        for member in tar:
            item = wanted.get(member.name)
            if item is None:
                continue
            data = tar.extractfile(member).read()
            outcome = {"path": item.name, "target": str(item.target),
                       "action": "replaced" if item.action == "replace" else "restored", "detail": None}
            try:
                if not _write(item, data, timeout):
                    outcome.update(action="skipped", detail="appeared while restoring; left as it is")
            except PraisonMemError as exc:
                outcome.update(action="failed", detail=exc.message)
            results.append(outcome)
            done += 1
            if progress:
                progress(done, len(wanted))
    return results


def _write(item: RestoreItem, data: bytes, timeout: float) -> bool:
    """Write one file under the lock its kind uses; ``False`` when a file appeared that must be kept."""
    from contextlib import nullcontext

    name, target = item.name, item.target
    if name.startswith("home/sessions/") and name.endswith(".json"):
        guard = jsonfile.locked(target, timeout)
    elif name.startswith("home/learn/") and name.endswith(".json") and not name.endswith(".archive.json"):
        guard = learn.locked(target, timeout)
    elif name.startswith("memory/") and len(PurePosixPath(name).parts) > 2:  # memory/<user>/…
        guard = filememory.user_lock(target.parents[len(PurePosixPath(name).parts) - 3], timeout)
    else:
        guard = nullcontext()
    with guard:
        if target.exists():
            if item.action != "replace":  # planned as new: it appeared since, so it is not ours to replace
                return False
            if name.startswith("home/sessions/") and name.endswith(".json"):
                jsonfile.read_current(target)  # a session that does not parse is never overwritten
        jsonfile.replace_atomically(target, data, mode=item.mode)
    os.utime(target, (item.mtime, item.mtime))
    return True
