"""The suite collects with ``pip install '.[test]'`` alone: no test module imports the compat extra's libraries
(praisonaiagents, Upsonic, chromadb, mem0) or the optional drivers (psycopg, cryptography, redis-py, PyMySQL)
at module level, so ``python -m pytest`` runs what it can and skips the rest. Collected here in a fresh
interpreter in which those packages cannot be imported, as in a venv without them."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.conftest import REPO

# import names: the compat extra and what it brings (litellm, openai, SQLAlchemy, pydantic), and the drivers
HIDDEN = ("praisonaiagents", "upsonic", "chromadb", "mem0", "litellm", "openai", "sqlalchemy", "pydantic",
          "pydantic_core", "psycopg", "psycopg_binary", "psycopg_c", "psycopg2", "cryptography", "redis", "pymysql")

COLLECT = r"""
import sys

HIDDEN = set(sys.argv[1].split(","))


class Without:
    '''A finder that finds none of HIDDEN, so importing one fails and find_spec says it is absent.'''

    def __init__(self, finder):
        self.finder = finder

    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in HIDDEN:
            return None
        find = getattr(self.finder, "find_spec", None)
        return find(name, path, target) if find is not None else None

    def __getattr__(self, attribute):
        return getattr(self.finder, attribute)


sys.meta_path[:] = [Without(finder) for finder in sys.meta_path]
assert not [m for m in sys.modules if m.partition(".")[0] in HIDDEN]
import pytest

sys.exit(pytest.main(["--collect-only", "-q", "-p", "no:cacheprovider", "tests"]))
"""


def test_the_suite_collects_without_the_compat_extra_and_the_optional_drivers():
    env = {k: v for k, v in os.environ.items() if not k.startswith("PRAISONMEM_REQUIRE_")}  # a developer's venv
    env["PYTHONPATH"] = str(REPO)
    proc = subprocess.run([sys.executable, "-c", COLLECT, ",".join(HIDDEN)], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=600)
    errors = [line for line in proc.stdout.splitlines() if line.startswith("ERROR ")]
    assert (proc.returncode, errors) == (0, []), proc.stdout[-3000:] + proc.stderr[-2000:]
    assert " tests collected" in proc.stdout.splitlines()[-1]
