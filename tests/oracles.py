"""Run the real praisonai 4.7.19 classes as oracles, in their own venv, from tests.

praisonai 4.7.19 cannot be installed beside upsonic and praisonmem's pins, so it lives in the
oracle venv (``scripts/make_oracle_venv.sh DIR``, pins in ``tests/oracle-requirements.txt``),
whose interpreter ``PRAISONMEM_ORACLE_PYTHON`` names. Tests that need it take the ``oracle``
fixture (or call :func:`require_oracle`): without the variable they are skipped, unless
``PRAISONMEM_REQUIRE_ORACLES=1`` (CI), which makes them fail. A variable naming something that is
not the pinned oracle venv always fails.

Snippets run like ``tests/compat``'s ``run_library``: ``python -c CODE ARGS...`` with the test's
isolated environment (temp ``HOME``, its ``PRAISONAI_HOME`` if given, ``DO_NOT_TRACK``) and the
repository on ``PYTHONPATH``, so a snippet may import test helpers (``tests.compat.fakellm``) but
must not import praisonmem (the oracle venv does not have its dependencies).
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import textwrap
from pathlib import Path
from typing import Any

import pytest

ENV_PYTHON = "PRAISONMEM_ORACLE_PYTHON"
ENV_REQUIRE = "PRAISONMEM_REQUIRE_ORACLES"
REPO = Path(__file__).resolve().parent.parent
PINNED = {"praisonai": "4.7.19", "praisonaiagents": "1.7.17"}
HOW = "scripts/make_oracle_venv.sh DIR, then export PRAISONMEM_ORACLE_PYTHON=DIR/bin/python"
# what the probe reports; an oracle venv made from older pins lacks the later ones (require_oracle_packages)
OPTIONAL = ("praisonai", "praisonaiagents", "cryptography", "psycopg2-binary", "mysql-connector-python", "redis",
            "chromadb", "mem0ai", "litellm", "markitdown")
_PROBE = ("import json\nfrom importlib.metadata import version, PackageNotFoundError\nout = {}\n"
          f"for d in {OPTIONAL!r}:\n"
          "    try: out[d] = version(d)\n    except PackageNotFoundError: out[d] = None\n"
          "print(json.dumps(out))\n")


class OracleError(AssertionError):
    """An oracle snippet failed: its exit code and stderr are in the message."""


def oracle_python() -> str | None:
    return os.environ.get(ENV_PYTHON) or None


@functools.lru_cache(maxsize=None)
def _probe(python: str) -> dict[str, str | None]:
    proc = subprocess.run([python, "-c", _PROBE], capture_output=True, text=True, timeout=60,
                          env=_base_env())
    if proc.returncode != 0:
        raise OracleError(f"{ENV_PYTHON}={python} does not run: {proc.stderr.strip()[-500:]}")
    return json.loads(proc.stdout)


def oracle_versions() -> dict[str, str | None]:
    """Versions installed in the oracle venv (requires it)."""
    return _probe(require_oracle())


def require_oracle() -> str:
    """The oracle venv's python; skip (or fail, when CI requires oracles) if it is not configured."""
    python = oracle_python()
    if python is None:
        message = f"{ENV_PYTHON} is not set (the praisonai 4.7.19 oracle venv: {HOW})"
        if os.environ.get(ENV_REQUIRE) == "1":
            pytest.fail(f"{ENV_REQUIRE}=1 but {message}", pytrace=False)
        pytest.skip(message)
    if not os.access(python, os.X_OK):
        pytest.fail(f"{ENV_PYTHON}={python} is not an executable ({HOW})", pytrace=False)
    try:
        found = _probe(python)
    except OracleError as exc:
        pytest.fail(str(exc), pytrace=False)
    wrong = {d: found.get(d) for d, v in PINNED.items() if found.get(d) != v}
    if wrong:
        pytest.fail(f"{ENV_PYTHON}={python} has {wrong}, not the pinned {PINNED} ({HOW})", pytrace=False)
    return python


def require_oracle_packages(*dists: str) -> str:
    """The oracle venv's python, failing if it lacks any of ``dists`` (it predates the pins that
    brought them: rebuild it)."""
    python = require_oracle()
    found = _probe(python)
    absent = [d for d in dists if not found.get(d)]
    if absent:
        pytest.fail(f"{ENV_PYTHON}={python} has no {', '.join(absent)}: it was made from older pins "
                    f"of tests/oracle-requirements.txt ({HOW})", pytrace=False)
    return python


def _base_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONHOME", "PYTHONPATH")}
    # no telemetry (praisonai, chromadb, mem0), and litellm keeps its bundled price map instead of
    # fetching one when it is imported
    env.update(PYTHONPATH=str(REPO), PYTHONDONTWRITEBYTECODE="1", DO_NOT_TRACK="1",
               PRAISONAI_TELEMETRY_DISABLED="true", ANONYMIZED_TELEMETRY="False", MEM0_TELEMETRY="False",
               LITELLM_LOCAL_MODEL_COST_MAP="True")
    return env


def oracle_env(home: Path | None = None, **extra: str) -> dict[str, str]:
    """The environment a snippet gets: this test's (isolated) one, plus PRAISONAI_HOME and extra."""
    env = _base_env()
    if home is not None:
        env["PRAISONAI_HOME"] = str(home)
    env.update(extra)
    return env


def run_oracle(code: str, *args: str, home: Path | None = None, cwd: Path | None = None,
               input: str | None = None, timeout: float = 120, check: bool = True,
               **env: str) -> subprocess.CompletedProcess:
    """Run ``code`` (``sys.argv[1:]`` = ``args``) in the oracle venv; raise OracleError if it fails."""
    python = require_oracle()
    proc = subprocess.run([python, "-c", textwrap.dedent(code), *map(str, args)], cwd=cwd, input=input,
                          env=oracle_env(home, **env), capture_output=True, text=True, timeout=timeout)
    if check and proc.returncode != 0:
        raise OracleError(f"oracle snippet failed ({proc.returncode}):\n{proc.stderr}")
    return proc


def start_oracle(code: str, *args: str, home: Path | None = None, cwd: Path | None = None,
                 **env: str) -> subprocess.Popen:
    """Start ``code`` in the oracle venv (stdin, stdout, stderr are pipes); the caller waits or kills it."""
    python = require_oracle()
    return subprocess.Popen([python, "-c", textwrap.dedent(code), *map(str, args)], cwd=cwd,
                            env=oracle_env(home, **env), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def oracle_json(code: str, *args: str, payload: Any = None, **kw: Any) -> Any:
    """Run ``code`` with ``payload`` as JSON on stdin; return the JSON of its last stdout line."""
    proc = run_oracle(code, *args, input=None if payload is None else json.dumps(payload), **kw)
    lines = proc.stdout.strip().splitlines()
    if not lines:
        raise OracleError(f"oracle snippet printed nothing; stderr:\n{proc.stderr}")
    return json.loads(lines[-1])


class Oracle:
    """What the ``oracle`` fixture gives a test: the helpers above, bound to a configured venv."""

    def __init__(self, python: str) -> None:
        self.python = python

    run = staticmethod(run_oracle)
    start = staticmethod(start_oracle)
    json = staticmethod(oracle_json)
    env = staticmethod(oracle_env)
    versions = staticmethod(oracle_versions)
    require = staticmethod(require_oracle_packages)


@pytest.fixture
def oracle() -> Oracle:
    """The praisonai 4.7.19 oracle venv (skips, or fails under PRAISONMEM_REQUIRE_ORACLES=1)."""
    return Oracle(require_oracle())


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "oracle: runs the real praisonai 4.7.19 in the oracle venv "
                                       "(PRAISONMEM_ORACLE_PYTHON)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if "oracle" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.oracle)


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("oracle") is not None:
        require_oracle()
