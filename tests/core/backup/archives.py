"""Small archives for the backup core's tests: a manifest and members chosen by the test."""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
from pathlib import Path
from typing import Any

ROOTS = {"sessions": "/h/sessions", "spill": "/h/state/session_spill", "learn": "/h/learn", "memory": "/p/memory"}


def entry(path: str, data: bytes, **extra: Any) -> dict[str, Any]:
    """A manifest entry with the true size and sha256 of ``data``."""
    return {"path": path, "size": len(data), "mode": "0600", "mtime": 1796000000.0,
            "sha256": hashlib.sha256(data).hexdigest(), **extra}


def manifest(files: list[dict[str, Any]], **fields: Any) -> dict[str, Any]:
    return {"format": "praisonmem-backup", "version": 1, "praisonmem_version": "0.1.0",
            "created_at": "2026-11-30T02:00:00+00:00", "include": ["sessions", "memory", "learn"], "roots": ROOTS,
            "files": files, **fields}


def write(path: Path, files: dict[str, bytes], *, head: dict[str, Any] | bytes | None = None,
          members: list[tuple[tarfile.TarInfo, bytes | None]] = ()) -> Path:
    """``manifest.json`` (``head``, else a manifest of ``files``) first, then ``files``, then ``members``."""
    if head is None:
        head = manifest([entry(name, data) for name, data in files.items()])
    body = head if isinstance(head, bytes) else json.dumps(head).encode()
    with tarfile.open(path, "w:gz") as tar:
        info = tarfile.TarInfo("manifest.json")
        info.size = len(body)
        tar.addfile(info, io.BytesIO(body))
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o600
            tar.addfile(info, io.BytesIO(data))
        for info, data in members:
            tar.addfile(info, None if data is None else io.BytesIO(data))
    return path
