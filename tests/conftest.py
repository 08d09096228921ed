"""Test isolation: no test touches a real home, config, or the repository's cwd.

Every test runs with ``HOME`` pointing at an empty temp dir, no PraisonAI or XDG
variables, ``TZ=UTC``, and the cwd in a temp dir that is not a git repository.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import pytest

pytest_plugins = ["tests.pgcluster", "tests.mariadbserver", "tests.redisserver", "tests.oracles", "tests.realhomes"]

FIXTURES = Path(__file__).parent / "fixtures"
PRAISONAI_FIXTURES = FIXTURES / "praisonai-1.7.17"
UPSONIC_DB = FIXTURES / "upsonic-0.77.3" / "data.db"
REPO = Path(__file__).resolve().parent.parent

SCRUBBED = (
    "PRAISONAI_HOME", "PRAISONAI_GLOBAL_SESSIONS", "PRAISONAI_SESSION_RETENTION",
    "PRAISONAI_SESSION_ACTIVE_WINDOW", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME",
    "XDG_CACHE_HOME", "NO_COLOR", "PRAISONMEM_DEBUG", "GIT_DIR", "GIT_WORK_TREE",
    "PRAISONMEM_CACHE", "PRAISONMEM_CACHE_DIR",
    # the session commands' default store: a developer's own must not reach a test
    "PRAISONMEM_STORE", "PRAISONAI_CONVERSATION_STORE", "PRAISONAI_CONVERSATION_URL", "POSTGRES_URL",
)


@pytest.fixture(autouse=True)
def isolated(tmp_path_factory, monkeypatch):
    root = tmp_path_factory.mktemp("isolated")
    home = root / "userhome"
    work = root / "work"
    home.mkdir()
    work.mkdir()
    for name in SCRUBBED:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PRAISONMEM_CONFIG", str(root / "config" / "config.toml"))
    monkeypatch.setenv("TZ", "UTC")
    monkeypatch.setenv("DO_NOT_TRACK", "1")
    monkeypatch.setenv("PRAISONAI_TELEMETRY_DISABLED", "true")
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", os.devnull)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(root))
    time.tzset()
    monkeypatch.chdir(work)
    from praisonmem.core.sessions import workspace

    workspace._resolve.cache_clear()
    yield root
    time.tzset()


@pytest.fixture(autouse=True)
def _forget_passwords():
    """praisonmem remembers every database password it parses, to mask it in any message; one
    invocation parses one or two URLs, the test process thousands: forget them after each test."""
    yield
    from praisonmem.core.io import pgurl

    pgurl.forget()


@pytest.fixture
def config() -> Path:
    """praisonmem's config file for this test (PRAISONMEM_CONFIG); its directory exists, the file not yet."""
    path = Path(os.environ["PRAISONMEM_CONFIG"])
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture
def fixture_home(tmp_path) -> Path:
    """A writable copy of the real PRAISONAI_HOME written by praisonaiagents 1.7.17."""
    dest = tmp_path / "home"
    shutil.copytree(PRAISONAI_FIXTURES / "home", dest)
    for path in dest.rglob("*"):
        path.chmod(0o700 if path.is_dir() else 0o600)
    return dest


@pytest.fixture
def db(tmp_path) -> Path:
    """A writable copy of the real Upsonic 0.77.3 SqliteStorage file, alone in its directory."""
    dest = tmp_path / "store" / "data.db"
    dest.parent.mkdir()
    shutil.copy(UPSONIC_DB, dest)
    return dest


TODAY = datetime(2026, 11, 30, 12, 0)  # the day the fixtures were written (their newest episodic file)


@pytest.fixture
def today(monkeypatch) -> datetime:
    """The core's clock for local dates frozen at :data:`TODAY` (in-process commands only)."""
    from praisonmem.core.io import timeutil

    monkeypatch.setattr(timeutil, "local_now", lambda: TODAY)
    return TODAY


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    """cwd = a copy of the real fixture project, so ./.praisonai/memory is a FileMemory tree the library wrote."""
    dest = tmp_path / "project"
    shutil.copytree(PRAISONAI_FIXTURES / "project", dest)
    monkeypatch.chdir(dest)
    return dest


@dataclass
class Result:
    exit_code: int
    stdout: str
    stderr: str

    def json(self):
        import json

        return json.loads(self.stdout)


@pytest.fixture
def cli(capsys):
    """Run praisonmem in-process: ``cli("session", "list", "--json")`` → Result."""
    from praisonmem.cli.app import run

    def invoke(*args: str) -> Result:
        capsys.readouterr()
        code = run([str(a) for a in args])
        sys.stdout.flush()
        captured = capsys.readouterr()
        return Result(code, captured.out, captured.err)

    return invoke


def have_praisonai() -> bool:
    return importlib.util.find_spec("praisonaiagents") is not None


def pytest_collection_modifyitems(config, items):
    """Compat tests need the real library: skipped without it, required when CI says so."""
    if have_praisonai():
        return
    if os.environ.get("PRAISONMEM_REQUIRE_COMPAT"):
        raise pytest.UsageError(
            "PRAISONMEM_REQUIRE_COMPAT is set but praisonaiagents is not installed: "
            "pip install -e '.[test,compat]'"
        )
    skip = pytest.mark.skip(reason="praisonaiagents==1.7.17 not installed (pip install -e '.[test,compat]')")
    for item in items:
        if "compat" in item.keywords:
            item.add_marker(skip)
