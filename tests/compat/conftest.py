"""Helpers to run the real praisonaiagents in a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import REPO


def pytest_collection_modifyitems(items):
    for item in items:
        if "tests/compat/" in str(item.fspath):
            item.add_marker(pytest.mark.compat)


def library_env(home: Path, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(PRAISONAI_HOME=str(home), PYTHONPATH=str(REPO), DO_NOT_TRACK="1",
               PRAISONAI_TELEMETRY_DISABLED="true", **extra)
    return env


def run_library(code: str, *args: str, home: Path, cwd: Path | None = None, timeout: float = 120,
                **env: str) -> subprocess.CompletedProcess:
    """Run a snippet (``sys.argv[1:]`` = ``args``) against the real library; raise if it fails."""
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code), *args], cwd=cwd,
                          env=library_env(home, **env), capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise AssertionError(f"library snippet failed ({proc.returncode}):\n{proc.stderr}")
    return proc


def start_library(code: str, *args: str, home: Path, cwd: Path | None = None, **env: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code), *args], cwd=cwd,
                            env=library_env(home, **env), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def last_json(proc: subprocess.CompletedProcess):
    return json.loads(proc.stdout.strip().splitlines()[-1])
