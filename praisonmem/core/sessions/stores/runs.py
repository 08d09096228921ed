"""The praisonai CLI's older run layout (``SessionManager``, praisonai 4.7.19):
``sessions/run_<ts>_<hex>/metadata.json`` + ``events.jsonl``.

Listed and shown as sessions whose messages are the events; its name is set as ``SessionManager.rename`` does
(atomically: it has no lock to share) and a run is deleted as ``SessionManager.delete`` does, but only when the
directory holds nothing else.
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TypeVar

from praisonmem.core.errors import AmbiguousName, CorruptFile, NotFound, PraisonMemError, Refused, io_failure
from praisonmem.core.io import jsonfile
from praisonmem.core.layout import PROJECTS, RUN_EVENTS, RUN_FILES, RUN_METADATA
from praisonmem.core.sessions.documents import session_id_of
from praisonmem.core.sessions.stores import Fold, PlainStore, Scanned
from praisonmem.core.sessions.stores.names import RUN

A = TypeVar("A")
RUN_KEYS = ("session_id", "run_id", "trace_id", "created_at", "updated_at")  # SessionMetadata.from_dict needs them


def read_run(directory: Path) -> tuple[dict[str, Any], list[Any]]:
    """``metadata.json`` and the events of a run directory, as ``SessionManager`` reads them (lines that do not
    parse are skipped, as its ``get_events`` does)."""
    meta_path = directory / RUN_METADATA
    meta = jsonfile.read_object(meta_path)
    missing = [k for k in RUN_KEYS if k not in meta]
    if missing:
        raise CorruptFile(str(meta_path), f"no {', '.join(map(repr, missing))}: praisonai's SessionManager skips it")
    events: list[Any] = []
    try:
        raw = jsonfile.read_bytes(directory / RUN_EVENTS)  # a regular file only: a pipe there never blocks
        with io.TextIOWrapper(io.BytesIO(raw), encoding="utf-8") as handle:  # the lines open() would give
            for line in handle:
                if line.strip():
                    try:
                        events.append(json.loads(line))
                    except ValueError:
                        continue
    except NotFound:
        pass
    except PraisonMemError as exc:
        raise CorruptFile(str(directory / RUN_EVENTS), f"cannot read it: {exc.message}") from exc
    except UnicodeDecodeError as exc:
        raise CorruptFile(str(directory / RUN_EVENTS), f"cannot read it: {exc}") from exc
    return meta, events


def run_document(meta: dict[str, Any], events: list[Any]) -> dict[str, Any]:
    """A run as a session document: its events are the messages (``event`` is the role, ``message`` the content,
    ``data`` kept in the message's metadata); ``name`` is the title, ``config_summary.model`` the model."""
    summary = meta.get("config_summary") if isinstance(meta.get("config_summary"), dict) else {}
    messages = [{"role": str(e.get("event", "unknown")), "content": e.get("message", ""),
                 "timestamp": e.get("timestamp"), "metadata": {"data": e["data"]} if e.get("data") else {}}
                for e in events if isinstance(e, dict)]
    metadata = {k: v for k, v in (("title", meta.get("name")), ("model", summary.get("model"))) if v}
    return {"session_id": meta.get("session_id"), "messages": messages, "created_at": meta.get("created_at"),
            "updated_at": meta.get("updated_at"), "metadata": metadata, "workspace": meta.get("workspace"),
            "status": meta.get("status"), "run_id": meta.get("run_id"), "trace_id": meta.get("trace_id")}


@dataclass(frozen=True)
class RunStore(PlainStore):
    """``sessions/<run id>/`` directories of the praisonai CLI's ``SessionManager``. A ref is the directory."""

    directory: Path
    label: str = RUN

    def ref(self, session_id: str, *, beside: Path | None = None) -> Path:
        if beside is not None:
            raise Refused(f"{Path(beside).name} is a praisonai CLI run: its id is its run id and its directory's "
                          "name, which praisonai never changes (set its name with --title); nothing changed")
        return self.directory / session_id

    def name(self, ref: Path) -> str:
        return Path(ref).name

    def session_id(self, ref: Path, doc: dict[str, Any]) -> str:
        return session_id_of(doc, self.name(ref))

    def refs(self) -> list[Path]:
        try:
            with os.scandir(self.directory) as entries:
                dirs = [Path(e.path) for e in entries if e.is_dir(follow_symlinks=False) and e.name != PROJECTS]
        except (FileNotFoundError, NotADirectoryError):
            return []
        except OSError as exc:
            raise io_failure(self.directory, exc) from exc
        return sorted(d for d in dirs if (d / RUN_METADATA).is_file())

    def exists(self, ref: Path) -> bool:
        return (Path(ref) / RUN_METADATA).is_file()

    def absent(self) -> str | None:
        return None if self.directory.is_dir() else f"no sessions directory at {self.directory}"

    def find(self, name: str, *, allow_prefix: bool = False) -> Path:
        """A run by its directory's name (its id), a unique prefix of it, or a path to the directory or its
        ``metadata.json``; a path must be a run directly in the sessions dir (links and ``..`` resolved)."""
        from praisonmem.core.paths import expand_user
        from praisonmem.core.sessions.stores import OutsideStore
        from praisonmem.core.sessions.stores.jsondir import directly_in

        as_path = expand_user(name, "SESSION") if name else Path(name)
        if os.sep in name and os.path.lexists(as_path):
            run = as_path.parent if as_path.name == RUN_METADATA and not as_path.is_dir() else as_path
            ref = directly_in(run, self.directory)
            if ref is None:
                raise OutsideStore(name, [str(self.directory)])
            if Path(ref).name == PROJECTS or not self.exists(Path(ref)):
                raise NotFound(f"{ref}: not a praisonai CLI run")
            read_run(Path(ref))  # the rule `check` applies to a run: metadata.json with the keys SessionManager needs
            return Path(ref)
        if name and "/" not in name and name not in (".", "..", PROJECTS) and self.exists(self.directory / name):
            return self.directory / name
        if allow_prefix and name and "/" not in name:
            matches = [p for p in self.refs() if p.name.startswith(name)]
            if len(matches) == 1:
                return matches[0]
            if matches:
                raise AmbiguousName(f"'{name}' matches several runs: " + ", ".join(p.name for p in matches[:10]))
        raise NotFound(f"no run '{name}' in {self.directory}")

    def read(self, ref: Path) -> dict[str, Any]:
        return run_document(*read_run(Path(ref)))

    def read_bytes(self, ref: Path) -> bytes:
        """What ``SessionManager.export(format="json")`` gives: ``{"metadata": …, "events": […]}``."""
        meta, events = read_run(Path(ref))
        return json.dumps({"metadata": meta, "events": events}, indent=2, ensure_ascii=False).encode("utf-8")

    def parse(self, ref: Path, raw: bytes) -> dict[str, Any]:
        both = jsonfile.parse_object(raw, ref)
        return run_document(both.get("metadata") or {}, both.get("events") or [])

    def scan(self, fold: Fold[A], *, progress: Callable[[int, int], None] | None = None, memo: Any = None) -> A:
        """``fold`` over every session (few files: never remembered, so ``memo`` is not used)."""
        acc = fold.empty()
        for ref in self.refs():
            try:
                doc = self.read(ref)
            except PraisonMemError as exc:
                acc = fold.add(acc, Scanned(str(ref), None, None, exc, ref=ref, store=self.label))
            else:
                acc = fold.add(acc, Scanned(str(ref), self.session_id(ref, doc), doc, None, ref=ref, store=self.label))
        return acc

    def holds(self, ref: Path, doc: dict[str, Any]) -> bool:
        return False

    def seconds_since_write(self, ref: Path, doc: dict[str, Any], now: float) -> float | None:
        from praisonmem.core.io.timeutil import epoch_of

        stamp = epoch_of(doc.get("updated_at"))
        return None if stamp is None else now - stamp

    @contextmanager
    def transaction(self, refs: Sequence[Path], timeout: float = jsonfile.LOCK_TIMEOUT) -> Iterator[RunTransaction]:
        """``SessionManager`` takes no lock: each change re-reads the run right before it."""
        yield RunTransaction(self)


class RunTransaction:
    def __init__(self, store: RunStore) -> None:
        self.store = store
        self.notes: list[str] = []

    def exists(self, ref: Path) -> bool:
        return self.store.exists(ref)

    def read(self, ref: Path) -> dict[str, Any] | None:
        return self.store.read(ref) if self.store.exists(ref) else None

    def write(self, ref: Path, doc: dict[str, Any]) -> None:
        """Set the run's name, the one change ``SessionManager`` makes to a run (``rename``: ``name`` = the title,
        or none; ``updated_at`` = now)."""
        current = self.read(ref)
        if current is None:
            raise NotFound(f"{ref}: the run disappeared")
        title = (doc.get("metadata") or {}).get("title")

        def untitled(d: dict[str, Any]) -> dict[str, Any]:
            return {**d, "updated_at": None, "metadata": {k: v for k, v in (d.get("metadata") or {}).items()
                                                          if k != "title"}}

        if untitled(current) != untitled(doc):
            raise Refused(f"{ref}: praisonmem changes only the name of a praisonai CLI run; nothing changed")
        path = Path(ref) / RUN_METADATA
        meta = jsonfile.read_object(path)
        meta["name"] = title.strip() if isinstance(title, str) and title.strip() else None
        meta["updated_at"] = datetime.now(timezone.utc).isoformat()
        mode = path.stat().st_mode & 0o777
        jsonfile.replace_atomically(path, json.dumps(meta, indent=2).encode("utf-8"), mode=mode)

    def delete(self, ref: Path) -> None:
        """Remove the run directory, as ``SessionManager.delete`` does, when it holds only what praisonai wrote."""
        directory = Path(ref)
        try:
            names = sorted(os.listdir(directory))
        except FileNotFoundError:
            raise NotFound(f"{directory}: no such run") from None
        other = [n for n in names if n not in RUN_FILES]
        if other:
            raise Refused(f"{directory}: holds files praisonai's SessionManager did not write "
                          f"({', '.join(other[:5])}); not deleted")
        for name in names:
            entry = directory / name
            if entry.is_symlink() or not entry.is_file():
                raise Refused(f"{entry}: not a regular file; the run was not deleted")
        try:
            for name in sorted(names, key=lambda n: n == RUN_METADATA):  # metadata.json last: a half-deleted
                # run is still listed, and a rerun finishes it
                os.unlink(directory / name)
            os.rmdir(directory)
        except OSError as exc:
            raise io_failure(directory, exc, "cannot delete") from exc
        jsonfile.fsync_dir(directory.parent)

    def carry_spill(self, old_id: str, new_id: str, *, keep: bool = False) -> None:
        return None

    def read_bytes(self, ref: Path) -> bytes | None:
        return self.store.read_bytes(ref) if self.store.exists(ref) else None

    def write_raw(self, ref: Path, raw: bytes) -> None:
        """Only the name may change, as in :meth:`write`."""
        self.write(ref, self.store.parse(ref, raw))

    def rewrite_spill(self, session_id: str, change: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
        """Nothing: the praisonai CLI's stores have no spill dir."""

    def drop_spill(self, ref: Any) -> str | None:
        """Nothing: the praisonai CLI's stores have no spill dir."""
        return None

    def forget_replaced(self) -> None:
        """Nothing: a rewritten file holds only its new bytes (no free page or journal keeps the old ones)."""
