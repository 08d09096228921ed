"""Everything praisonmem creates is private: files 0600, directories 0700.

The one exception is the empty ``.lock`` sidecars, created 0644 as the libraries and
filelock create them (they hold nothing, and a holder's peers must be able to open them).
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import stat
from pathlib import Path

import pytest

from tests.conftest import FIXTURES


@pytest.fixture
def umask_022():
    old = os.umask(0o022)
    yield
    os.umask(old)


def _modes(root: Path) -> dict[str, str]:
    """Every path under ``root`` with its permission bits, lock sidecars aside."""
    found = {}
    for path in sorted(root.rglob("*")):
        if not path.name.endswith(".lock"):
            found[str(path.relative_to(root))] = f"{stat.S_IMODE(path.lstat().st_mode):04o}"
    return found


def _private(modes: dict[str, str], root: Path) -> list[str]:
    return [f"{name} {mode}" for name, mode in modes.items()
            if mode != ("0700" if (root / name).is_dir() else "0600")]


def test_every_file_and_directory_praisonmem_creates_is_private(cli, fixture_home, tmp_path, monkeypatch,
                                                                 umask_022):
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    home, memory, db = fresh / "home", fresh / "project" / "memory", fresh / "upsonic" / "new" / "data.db"
    monkeypatch.setenv("PRAISONMEM_CONFIG", str(fresh / "config" / "praisonmem" / "config.toml"))
    monkeypatch.chdir(fresh)
    upsonic_export = tmp_path / "upsonic.json"
    sessions_export = tmp_path / "sessions.json"
    source_db = tmp_path / "source.db"
    shutil.copy(FIXTURES / "upsonic-0.77.3" / "data.db", source_db)
    assert cli("upsonic", "export", "--db", source_db, "-o", upsonic_export).exit_code == 0
    assert cli("--home", fixture_home, "session", "export", "my_chat", "-o", sessions_export).exit_code == 0

    steps = [
        ["--home", home, "session", "import", sessions_export],
        ["--home", home, "learn", "add", "persona", "Likes tea", "--user-id", "bob"],
        ["--memory-dir", memory, "memory", "store", "remember this", "--user-id", "bob"],
        ["--memory-dir", memory, "episodic", "add", "went hiking", "--user-id", "bob"],
        ["memory", "store", "in sqlite", "--provider", "sqlite"],
        ["upsonic", "import", upsonic_export, "--db", db, "--yes"],
        ["config", "set", "backup.keep", "3"],
        ["--home", home, "--memory-dir", memory, "backup", "create", "-o", fresh / "backups" / "nightly"],
        ["--home", home, "session", "export", "--all", "-o", fresh / "exports" / "all.json"],
    ]
    for step in steps:
        result = cli(*step)
        assert result.exit_code == 0, (step, result.stderr)
    modes = _modes(fresh)
    created = {name.split("/")[0] for name in modes}
    assert created == {"home", "project", "upsonic", "config", "backups", "exports", ".praisonai"}
    assert "upsonic/new/data.db" in modes and "config/praisonmem/config.toml" in modes
    assert any(name.startswith("backups/nightly/praisonmem-backup-") for name in modes)
    assert _private(modes, fresh) == [], _private(modes, fresh)


def test_sqlite_journals_of_a_database_praisonmem_created_are_private(cli, tmp_path, umask_022):
    """SQLite gives -wal/-shm/-journal files the database's own mode, so a 0600 database keeps them 0600."""
    source_db = tmp_path / "source.db"
    shutil.copy(FIXTURES / "upsonic-0.77.3" / "data.db", source_db)
    export = tmp_path / "export.json"
    assert cli("upsonic", "export", "--db", source_db, "-o", export).exit_code == 0
    db = tmp_path / "created" / "data.db"
    assert cli("upsonic", "import", export, "--db", db, "--yes").exit_code == 0
    conn = sqlite3.connect(db)
    try:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("UPDATE upsonic_user_memories SET updated_at = updated_at")
        conn.commit()
        modes = {p.name: f"{stat.S_IMODE(p.stat().st_mode):04o}" for p in db.parent.iterdir()}
    finally:
        conn.close()
    assert modes == {"data.db": "0600", "data.db-wal": "0600", "data.db-shm": "0600"}
    assert f"{stat.S_IMODE(db.parent.stat().st_mode):04o}" == "0700"


def test_an_existing_database_keeps_its_mode(cli, tmp_path, umask_022):
    db = tmp_path / "data.db"
    shutil.copy(FIXTURES / "upsonic-0.77.3" / "data.db", db)
    db.chmod(0o640)
    assert cli("upsonic", "user-memory", "set", "user_123", "tone=warm", "--db", db).exit_code == 0
    assert stat.S_IMODE(db.stat().st_mode) == 0o640
