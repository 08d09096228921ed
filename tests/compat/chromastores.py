"""Chroma stores written by their real owners, once per test module: praisonaiagents 1.7.17's rag ``Memory``
(users alice and none) and ``Knowledge`` (the default Chroma store), in the oracle venv with embeddings from
tests/compat/fakellm.py and the network forbidden; plus the library reading a store back, and praisonmem run in
a subprocess under the same audit hook (or with chromadb hidden)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO
from tests.oracles import oracle_json, require_oracle_packages

PRELUDE = """
import json, os, sys
from tests.compat import fakellm
fakellm.forbid_network()
fakellm.start()
"""

WRITE = PRELUDE + """
from praisonaiagents.memory.memory import Memory
alice = Memory(config={"provider": "rag", "user_id": "alice"})
a1 = alice.store_short_term("Alice likes green tea with sk-proj-Zq9XcV3bN7mL2kP8wR4tY6uI1oA5sD0fG3hJ",
                            metadata={"user_id": "alice", "kind": "chat"})
a2 = alice.store_long_term("Alice lives in Lisbon near the river",
                           metadata={"user_id": "alice", "rank": 3, "weight": 0.5, "ok": True})
a3 = alice.store_long_term("Alice drinks green tea every morning", metadata={"user_id": "alice"})
shared = Memory(config={"provider": "rag"})
n1 = shared.store_long_term("The team meets on Mondays", metadata={"source": "wiki"})
from praisonaiagents.knowledge import Knowledge
k = Knowledge()
k1 = k.add("Lisbon is the capital of Portugal.", user_id="alice")
k2 = k.add("Porto is famous for its wine.", user_id="bob")
assert k1["failed_chunks"] == 0 and k2["failed_chunks"] == 0
ids = [k.memory.get_all(user_id=u).results[0].id for u in ("alice", "bob")]
print(json.dumps({"alice": [a1, a2, a3], "shared": [n1], "knowledge": ids, "outside": fakellm.OUTSIDE}))
"""

READ_MEMORY = PRELUDE + """
from praisonaiagents.memory.memory import Memory
config = {"provider": "rag"}
if sys.argv[1]:
    config["user_id"] = sys.argv[1]
m = Memory(config=config)
rows = m.memory_adapter.get_all_memories()
print(json.dumps({"rows": [[r["id"], r["text"], r["metadata"]] for r in rows], "outside": fakellm.OUTSIDE}))
"""

READ_KNOWLEDGE = PRELUDE + """
from praisonaiagents.knowledge import Knowledge
k = Knowledge()
got = k.memory.get_all(user_id=sys.argv[1])
hits = k.search("capital of Portugal", user_id=sys.argv[1])
print(json.dumps({"rows": [[r.id, r.text, r.metadata] for r in got.results],
                  "hits": [h.text for h in hits.results], "outside": fakellm.OUTSIDE}))
"""

# praisonmem in a subprocess: the network forbidden (what was tried is printed last on stderr), or chromadb
# made unimportable (a meta-path finder that refuses it, as if it were not installed)
RUN = """
import atexit, json, runpy, sys
from tests.compat import fakellm
fakellm.forbid_network()
if sys.argv[1] == "hide":
    class Hide:
        def find_spec(self, name, path=None, target=None):
            if name == "chromadb" or name.startswith("chromadb."):
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
    sys.meta_path.insert(0, Hide())
atexit.register(lambda: sys.stderr.write("OUTSIDE " + json.dumps(fakellm.OUTSIDE) + "\\n"))
sys.argv = ["praisonmem", *sys.argv[2:]]
runpy.run_module("praisonmem", run_name="__main__")
"""


def run_praisonmem(cwd: Path, *args: str, hide_chromadb: bool = False) -> subprocess.CompletedProcess:
    """``python -m praisonmem ARGS`` in ``cwd``, offline; stderr's last line (what the audit hook stopped) is
    checked to be empty and removed."""
    env = dict(os.environ, PYTHONPATH=str(REPO), ANONYMIZED_TELEMETRY="False")
    proc = subprocess.run([sys.executable, "-c", RUN, "hide" if hide_chromadb else "-", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)
    lines = proc.stderr.splitlines(keepends=True)
    assert lines and lines[-1] == "OUTSIDE []\n", proc.stderr[-2000:]
    proc.stderr = "".join(lines[:-1])
    return proc


def copy_project(source: Path, target: Path) -> Path:
    """A copy of a project dir holding the stores (each test changes its own)."""
    shutil.copytree(source, target, symlinks=True)
    return target


def files_holding(root: Path, text: str) -> list[str]:
    """Every file under ``root`` whose bytes hold ``text``."""
    needle = text.encode()
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and needle in p.read_bytes())


def write_stores_in(cwd: Path, home: Path) -> dict:
    require_oracle_packages("chromadb", "litellm", "markitdown")
    got = oracle_json(WRITE, cwd=cwd, timeout=600, HOME=str(home))
    assert got["outside"] == []
    return got


def library_memory(cwd: Path, user: str) -> list:
    got = oracle_json(READ_MEMORY, user, cwd=cwd, timeout=300)
    assert got["outside"] == []
    return got["rows"]


def library_knowledge(cwd: Path, user: str) -> dict:
    got = oracle_json(READ_KNOWLEDGE, user, cwd=cwd, timeout=300)
    assert got["outside"] == []
    return got


def as_json(proc: subprocess.CompletedProcess) -> object:
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)
