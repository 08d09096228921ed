"""Workspaces and homes built from the files older praisonaiagents releases wrote (tests/fixtures/praisonai-eras/).

* :func:`era_workspace`: the release's ``repo/`` (FileMemory under ``.praisonai/memory``, the unsuffixed SQLite
  memory ``short_term.db``/``long_term.db``) copied into a fresh git repository whose root commit is the one the
  generator made (``git:b24cfb…``), so workspace ids are the ones that release saw.
* :func:`era_full_home`: a ``PRAISONAI_HOME`` with the sessions and learn stores of one or more releases (a home
  that met both eras holds both name-only files of an agent).
* :func:`legacy_user_dirs`: FileMemory user directories named by raw ids, as releases before 1.6.58 made them
  (``" alice "``, ``team/alice``). The era fixtures hold none (their generator used plain ids), so these are built
  by hand from the era's ``alice`` directory: the same files under the raw names.

Copies get the modes the releases gave them (0644 files, 0755 directories under umask 022); the fixtures are
never opened in place (the 1.5.122 databases are WAL files without sidecars: opening one read-only in place would
create them).
"""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.helpers import ERAS, make_fixture_repo

ERA_ROOT = "b24cfb660b1b9b0fe8e07c6bf9b941c2e4cc6d07"  # the era generator's repo: same fixed commit as FIXTURE_ROOT


def _copytree(src: Path, dest: Path) -> None:
    shutil.copytree(src, dest, dirs_exist_ok=True)
    for path in [dest, *dest.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)


def era_workspace(tmp_path: Path, era: str, name: str = "repo") -> Path:
    """A git repository (root commit ``git:<ERA_ROOT>``) holding ``<era>/repo/.praisonai``."""
    repo = make_fixture_repo(tmp_path / name)
    _copytree(ERAS / era / "repo" / ".praisonai", repo / ".praisonai")
    return repo


def era_full_home(tmp_path: Path, *eras: str) -> Path:
    """``sessions/`` (with the ``.lock`` sidecars) and ``learn/`` of each release, later ones over earlier."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    for era in eras:
        _copytree(ERAS / era / "home", home)
    for path in (home / "sessions").glob("*.json"):
        path.chmod(0o600)  # DefaultSessionStore writes its JSON 0600 (mkstemp)
    return home


def legacy_user_dirs(memory_dir: Path, era: str = "1.6.157") -> dict[str, Path]:
    """``" alice "`` and ``team/alice`` (raw pre-1.6.58 ids), each a copy of the era's ``alice`` directory."""
    made = {}
    for name in (" alice ", "team/alice"):
        _copytree(ERAS / era / "repo" / ".praisonai" / "memory" / "alice", memory_dir / name)
        made[name] = memory_dir / name
    return made
