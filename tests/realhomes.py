"""Writable copies of the praisonai 4.7.19 fixtures (the gateway home, the conversation store), with the
libraries' modes.

git keeps only the exec bit, so each copy gets back the mode every file and directory had when
the library wrote it (``manifest.json`` of the fixture): 0600 JSON-store files, 0644 databases,
index, unified and SessionManager files, 0755 directories (written with umask 022).

* :func:`copy_gateway_home` / fixture ``gateway_home``: ``tests/fixtures/praisonai-4.7.19-home``
  as ``<dest>/.praisonai`` (the ``PRAISONAI_HOME``), its Fernet key, and (optionally) a git
  project whose ``origin`` gives the project store's id ``8ccfb8a2``.
* :func:`copy_conversations_db` / fixture ``conversations_db``: praisonai 4.7.19's
  ``praisonai_conversations.db``.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parent / "fixtures"
HOME_4719 = FIXTURES / "praisonai-4.7.19-home"
CONVERSATIONS_4719 = FIXTURES / "praisonai-4.7.19-conversations"
PROJECT_REMOTE = "git@github.com:Acme/Demo-Repo.git"
# praisonai-code's project id: sha256("git-remote:" + normalised remote)[:8]
PROJECT_IDENTITY = "git-remote:github.com/Acme/Demo-Repo"
PROJECT_ID = hashlib.sha256(PROJECT_IDENTITY.encode()).hexdigest()[:8]


@lru_cache(maxsize=None)
def manifest(fixture: Path) -> dict:
    return json.loads((fixture / "manifest.json").read_text(encoding="utf-8"))


def apply_modes(root: Path, files: list[dict]) -> None:
    """chmod each manifest entry (file or dir) under ``root`` to the mode the library gave it."""
    for entry in files:
        (root / entry["path"].rstrip("/")).chmod(int(entry["mode"], 8))


def make_project(path: Path, remote: str = PROJECT_REMOTE) -> Path:
    """A git repo whose ``origin`` is ``remote``: praisonai-code resolves its id from the remote alone."""
    path.mkdir(parents=True, exist_ok=True)
    for cmd in (["git", "init", "-q", "."], ["git", "remote", "add", "origin", remote]):
        subprocess.run(cmd, cwd=path, check=True, capture_output=True)
    return path


@dataclass(frozen=True)
class GatewayHome:
    root: Path             # what HOME was (the parent of .praisonai)
    home: Path             # PRAISONAI_HOME
    key: str               # the Fernet key of enc-1 and enc-db-1 (PRAISONAI_SESSION_KEY)
    key_file: Path         # 0600, the key and a newline
    project: Path | None   # cwd of the project store's sessions, if made
    manifest: dict

    @property
    def sessions(self) -> Path:
        return self.home / "sessions"

    @property
    def db(self) -> Path:
        return self.sessions / "sessions.db"

    @property
    def index(self) -> Path:
        return self.sessions / "sessions_index.db"

    @property
    def project_store(self) -> Path:
        return self.sessions / "projects" / PROJECT_ID

    def env(self) -> dict[str, str]:
        """PRAISONAI_HOME and PRAISONAI_SESSION_KEY for a library or praisonmem run."""
        return {"PRAISONAI_HOME": str(self.home), "PRAISONAI_SESSION_KEY": self.key}


def copy_gateway_home(dest: Path, *, project: bool = True) -> GatewayHome:
    """Copy the 4.7.19 gateway-style home to ``dest/.praisonai`` (modes restored)."""
    m = manifest(HOME_4719)
    dest.mkdir(parents=True, exist_ok=True)
    home = dest / ".praisonai"
    shutil.copytree(HOME_4719 / "home", home)
    home.chmod(0o755)
    apply_modes(home, m["files"])
    key_file = dest / "session.key"
    shutil.copyfile(HOME_4719 / "session.key", key_file)
    key_file.chmod(0o600)
    proj = make_project(dest / "proj") if project else None
    return GatewayHome(root=dest, home=home, key=key_file.read_text().strip(), key_file=key_file,
                       project=proj, manifest=m)


def copy_conversations_db(dest_dir: Path) -> Path:
    """Copy ``praisonai_conversations.db`` into ``dest_dir`` (mode as the store made it)."""
    m = manifest(CONVERSATIONS_4719)
    dest_dir.mkdir(parents=True, exist_ok=True)
    entry = m["files"][0]
    target = dest_dir / entry["path"]
    shutil.copyfile(CONVERSATIONS_4719 / entry["path"], target)
    target.chmod(int(entry["mode"], 8))
    return target


def expected(fixture: Path) -> dict:
    """The fixture's ``expected.json``: what the real library read from it."""
    return json.loads((fixture / "expected.json").read_text(encoding="utf-8"))


@pytest.fixture
def gateway_home(tmp_path) -> GatewayHome:
    """A writable copy of the praisonai 4.7.19 gateway-style home (see tests/fixtures/README.md)."""
    return copy_gateway_home(tmp_path / "gwhome")


@pytest.fixture
def conversations_db(tmp_path) -> Path:
    """A writable copy of praisonai 4.7.19's praisonai_conversations.db."""
    return copy_conversations_db(tmp_path / "conv")

