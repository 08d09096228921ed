"""The praisonai CLI's per-project stores (praisonai 4.7.19, praisonai-code 0.1.16): which exist, and which belongs
to the current directory.

``sessions/projects/<id>/``: ``ProjectSessionStore`` is a ``DefaultSessionStore`` on that directory (same files,
locks and atomic writes as ``sessions/``), so each is a :class:`~.jsondir.JsonDirStore` labelled ``project:<id>``
(:func:`~.home.cli_stores`), with its own ``sessions_index.db``. :func:`project_identity` says which one belongs to
the current directory, computed as praisonai-code does but read-only: its own resolver writes pin and id files into
``.git``, so it is never called.
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from praisonmem.core.errors import NotFound, PraisonMemError, io_failure
from praisonmem.core.io import jsonfile
from praisonmem.core.io.digest import sha256_hex
from praisonmem.core.layout import PROJECTS

GIT_TIMEOUT = 5  # praisonai-code's


def project_dirs(sessions_dir: Path) -> list[Path]:
    try:
        with os.scandir(sessions_dir / PROJECTS) as entries:
            return sorted(Path(e.path) for e in entries if e.is_dir(follow_symlinks=False))
    except (FileNotFoundError, NotADirectoryError):
        return []
    except OSError as exc:
        raise io_failure(sessions_dir / PROJECTS, exc) from exc


# ---------------------------------------------------------------- the current project's id, read-only


@dataclass(frozen=True)
class ProjectIdentity:
    """``praisonai_code.cli.utils.project.resolve_project_identity`` for a directory."""

    project_id: str  # the 8 hex digits naming sessions/projects/<id>/
    source: str  # git-remote | root-commit | cached-id | path
    detail: str | None  # the remote, the commit or the path it hashes


def short_hash(value: str) -> str:
    return sha256_hex(value.encode())[:8]


def project_identity(cwd: str | os.PathLike[str] | None = None) -> ProjectIdentity | None:
    """The project id praisonai-code gives ``cwd``: the normalised git remote, else the oldest root commit (its
    pin in ``.git`` wins while it is still a root), else the id cached in ``.git``, else the resolved path.
    ``None`` for a git repository with neither a remote, a commit nor a cached id: praisonai-code would create a
    random one there, so no project store can belong to it yet. Nothing is written."""
    here = Path(os.getcwd() if cwd is None else cwd)
    root = _git_root(here)
    base = root or here
    remote = _remote_identity(base)
    if remote:
        return ProjectIdentity(short_hash(f"git-remote:{remote}"), "git-remote", remote)
    commit = _root_commit(base, root)
    if commit:
        return ProjectIdentity(short_hash(f"root-commit:{commit}"), "root-commit", commit)
    if root is not None:
        cached_path = _git_meta_path(root, "praisonai-project")
        if cached_path is not None:
            try:
                cached = read_text(cached_path).strip()
            except FileNotFoundError:
                return None
            except OSError:
                cached = ""  # the resolver cannot read it either: it falls through to the path
            if cached:
                return ProjectIdentity(short_hash(f"cached-id:{cached}"), "cached-id", None)
    path = str((root or here).resolve())
    return ProjectIdentity(short_hash(path), "path", path)


def read_text(path: Path) -> str:
    """A small text file (``Path.read_text``'s errors: FileNotFoundError, OSError, UnicodeDecodeError), read only
    when it is a regular file and without blocking (a named pipe there would hang ``session list``)."""
    try:
        return jsonfile.read_bytes(path).decode("utf-8")
    except NotFound as exc:
        raise FileNotFoundError(exc.message) from exc
    except PraisonMemError as exc:
        raise OSError(exc.message) from exc


def _git(args: list[str], cwd: Path) -> str | None:
    try:
        done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True,
                              timeout=GIT_TIMEOUT)
    except (OSError, subprocess.SubprocessError):
        return None
    out = done.stdout.strip()
    return out or None


def _git_root(path: Path) -> Path | None:
    out = _git(["rev-parse", "--show-toplevel"], path)
    return Path(out) if out else None


def normalize_remote(url: str) -> str | None:
    """praisonai-code's ``normalize_git_remote``: ``host/path`` without scheme, credentials, port or ``.git``."""
    url = url.strip()
    if not url:
        return None
    scp = re.match(r"^[^@/]+@([^:/]+):(.+)$", url)
    if scp:
        host, path = scp.group(1), scp.group(2)
    else:
        m = re.match(r"^[a-zA-Z][a-zA-Z0-9+.\-]*://(?:[^@/]+@)?([^/:]*)(?::\d+)?/(.+)$", url)
        if not m:
            return None
        host, path = m.group(1), m.group(2)
    host, path = host.lower().strip("/"), path.strip("/")
    if path.endswith(".git"):
        path = path[:-4]
    if not path:
        return None
    return f"{host}/{path}" if host else path


def _remote_identity(base: Path) -> str | None:
    url = _git(["remote", "get-url", "origin"], base)
    if not url:
        remotes = _git(["remote"], base)
        first = remotes.splitlines()[0].strip() if remotes else ""
        url = _git(["remote", "get-url", first], base) if first else None
    return normalize_remote(url) if url else None


def _root_commit(base: Path, root: Path | None) -> str | None:
    out = _git(["log", "--max-parents=0", "--all", "--format=%ct %H"], base) or \
        _git(["log", "--max-parents=0", "HEAD", "--format=%ct %H"], base)
    if not out:
        return None
    roots = []
    for line in out.splitlines():
        parts = line.strip().split(None, 1)
        if len(parts) == 2:
            try:
                roots.append((int(parts[0]), parts[1]))
            except ValueError:
                roots.append((1 << 62, parts[1]))
    if not roots:
        return None
    chosen = min(roots)[1]
    pin = _git_meta_path(root, "praisonai-root-commit") if root is not None else None
    if pin is not None:
        try:
            pinned = read_text(pin).strip()
        except OSError:
            pinned = None
        if pinned in {sha for _, sha in roots}:
            return pinned
    return chosen  # what the resolver would pin


def _git_meta_path(root: Path, name: str) -> Path | None:
    out = _git(["rev-parse", "--git-common-dir"], root) or _git(["rev-parse", "--git-dir"], root)
    if not out:
        return None
    git_dir = Path(out)
    return (git_dir if git_dir.is_absolute() else (root / git_dir).resolve()) / name
