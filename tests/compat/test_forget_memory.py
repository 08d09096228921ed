"""forget --user alice over the memory-like stores the real libraries wrote for alice and bob (FileMemory, SQLite
memory, learn files with their archive sidecars, learn.db, mem0's history.db, Upsonic SqliteStorage and JSONStorage,
praisonmem's search cache): afterwards no 8-character piece of alice's texts is in any byte of those stores' files,
bob's files are byte-identical (or, where one held an item of alice's, exactly the library's serialisation of
the rest), and the libraries load bob's data as it was and find nothing of alice's. Then a forget SIGKILLed at
every write-type system call (strace fault injection) and run again ends as an uninterrupted one does."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.cli.commands.test_session_crash import WRITE_CALLS, strace_or_skip, write_calls
from tests.core.forget import helpers, machine

REPO = Path(__file__).resolve().parents[2]
BOB_FILES = ["project/.praisonai/memory/bob/short_term.json", "project/.praisonai/memory/bob/config.json",
             "home/.praisonai/learn/private/bob/persona.json",
             "home/.praisonai/learn/private/bob/persona.archive.json", "project/learn/learn.db"]


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("forget-memory") / "tree"
    machine.build(root)
    return root


def search_cache(root: Path) -> None:
    """praisonmem's memory-search index of bob's and alice's tiers, as ``memory search`` writes it (an entry is
    written only for files quiet for longer than the cache's timestamp granularity: waited for, not slept past)."""
    newest = max(p.stat().st_ctime_ns for p in (root / "project/.praisonai/memory").rglob("*.json"))
    while time.time_ns() < newest + 2_100_000_000:
        time.sleep(0.05)
    for who in ("bob", "alice"):
        proc = subprocess.run([sys.executable, "-m", "praisonmem", "--memory-dir",
                               str(root / "project/.praisonai/memory"), "memory", "search", "violet", "--user-id", who],
                              cwd=root / "project", capture_output=True, text=True, timeout=120,
                              env=dict(os.environ, HOME=str(root / "home"), PRAISONMEM_CACHE_DIR=str(root / "cache"),
                                       PYTHONPATH=str(REPO)))
        assert proc.returncode == 0, proc.stderr
    assert list((root / "cache" / "memory-search").iterdir())


def test_forget_alice_leaves_nothing_of_hers_and_bob_as_he_was(template, tmp_path, monkeypatch):
    root = helpers.copy(template, tmp_path / "tree")
    search_cache(root)
    before = {name: (root / name).read_bytes() for name in BOB_FILES}
    bob_long = json.loads((root / "project/.praisonai/memory/bob/long_term.json").read_bytes())
    bob_saved = json.loads((root / "project/.praisonai/memory/bob/sessions/bob-chat.json").read_bytes())
    up_json = {n: json.loads((root / "project/upsonic_json_db" / n).read_bytes())
               for n in ("upsonic_sessions.json", "upsonic_user_memories.json", "upsonic_usage_entries.json")}
    assert helpers.residue(root, helpers.alice_texts())  # the premise: her texts are there to be found

    where = helpers.where(root, monkeypatch)
    planned = helpers.forget(where, helpers.user("alice"))

    kinds = {store.store for store, plan in planned if plan.erasures}
    assert kinds == {"filememory", "sqlite-memory", "learn-files", "mem0-history", "upsonic-sqlite", "upsonic-json",
                     "praisonmem-cache"}
    assert helpers.residue(root, helpers.alice_texts()) == {}
    again = {store.store: (plan.unreachable, plan.erasures) for store, plan in helpers.plans(where, helpers.user("alice"))}
    assert {k: v for k, v in again.items() if v != (None, [])} == {"learn-sqlite": (again["learn-sqlite"][0], [])}
    assert "name no user" in again["learn-sqlite"][0]

    assert {name: (root / name).read_bytes() for name in BOB_FILES} == before
    kept = [i for i in bob_long if i["metadata"].get("user_id") != "alice"]
    assert len(kept) == len(bob_long) - 1
    assert (root / "project/.praisonai/memory/bob/long_term.json").read_bytes() == \
        json.dumps(kept, indent=2, ensure_ascii=False).encode()
    # bob's saved session copied the tiers when he saved it, alice's turn among them: that copy goes too
    bob_saved["long_term_snapshot"] = [i for i in bob_saved["long_term_snapshot"] if i["metadata"].get("user_id") != "alice"]
    assert (root / "project/.praisonai/memory/bob/sessions/bob-chat.json").read_bytes() == \
        json.dumps(bob_saved, indent=2, ensure_ascii=False).encode()
    for name, records in up_json.items():
        assert (root / "project/upsonic_json_db" / name).read_bytes() == \
            json.dumps([r for r in records if r["user_id"] != "alice"], indent=2, default=str).encode()
    assert not (root / "project/.praisonai/memory/alice").exists()
    assert not (root / "home/.praisonai/learn/private/alice").exists()

    seen = machine.read(root)
    assert seen["file_bob"] == sorted([machine.BOB["short"], machine.BOB["long"]])
    assert seen["file_bob_sessions"] == ["bob-chat"] and seen["file_bob_search"] == []
    assert seen["sql_bob"] == sorted([machine.BOB["sql_short"], machine.BOB["sql_long"]])
    assert seen["learn_bob"] == [machine.BOB["persona_new"]]
    assert seen["mem0_bob"] == [machine.BOB["mem0_add"]] and seen["mem0_alice"] == []
    assert seen["mem0_messages"] == {"user_id=alice": [], "user_id=bob": [machine.BOB["mem0_message"]]}
    for name in ("up_sqlite", "up_json"):
        assert seen[name] == {"bob": machine.BOB["up_summary"], "alice": None,
                              "bob_memory": {"hobby": machine.BOB["up_trait"]}, "alice_memory": False,
                              "usage": ["usage-bob"]}
    assert seen["file_alice"] == []


# The crash test: a forget over four stores (FileMemory, SQLite memory, mem0's history.db, Upsonic's SQLite file) in
# its own process.
FORGET = r"""
import os, sys
from pathlib import Path
sys.path.insert(0, os.environ["REPO"])
from praisonmem.core.forget.memory import FileMemoryForget, SqliteMemoryForget, Mem0HistoryForget
from praisonmem.core.forget.upsonic import UpsonicForget
from praisonmem.core.forget.model import Subject, SubjectKind
root = Path(sys.argv[1])
subject = Subject(SubjectKind.user, "alice")
ids = lambda s: {"5d1c0e8a-3b7f-4f2a-9c61-0a8e2b4d7f13"}  # her mem0 memory id in tests/core/forget/machine.py
for store in (FileMemoryForget(root / "project/.praisonai/memory"),
              SqliteMemoryForget(root / "project/.praisonai/long_term_alice.db"),
              Mem0HistoryForget(root / "home/.mem0/history.db", ids),
              UpsonicForget(root / "project/upsonic.db", "sqlite")):
    plan = store.plan(subject)
    assert plan.unreachable is None, plan.unreachable
    if plan.erasures:
        store.erase(plan)
print("done")
"""


def run_forget(root: Path, strace: list[str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run((strace or []) + [sys.executable, "-c", FORGET, str(root)], capture_output=True, text=True,
                          timeout=300, env=dict(os.environ, REPO=str(REPO), PYTHONDONTWRITEBYTECODE="1"))


def state(root: Path) -> dict:
    """What the four stores hold, as their readers see it, and every file of theirs (names only for SQLite,
    whose bytes differ run to run in page layout)."""
    seen = machine.run(r"""
import json, sqlite3, sys
from pathlib import Path
root = Path(sys.argv[1])
out = {}
db = sqlite3.connect(f"file:{root / 'project/.praisonai/long_term_alice.db'}?mode=ro", uri=True)
out["sql"] = db.execute("SELECT content FROM long_term_memory").fetchall(); db.close()
db = sqlite3.connect(f"file:{root / 'home/.mem0/history.db'}?mode=ro", uri=True)
out["history"] = db.execute("SELECT memory_id, new_memory FROM history ORDER BY rowid").fetchall()
out["messages"] = db.execute("SELECT session_scope, content FROM messages ORDER BY rowid").fetchall(); db.close()
db = sqlite3.connect(f"file:{root / 'project/upsonic.db'}?mode=ro", uri=True)
out["upsonic"] = [db.execute(f"SELECT * FROM {t} ORDER BY 1").fetchall()
                  for t in ("upsonic_sessions", "upsonic_user_memories", "upsonic_usage_entries")]; db.close()
print(json.dumps(out))
""", root)
    memory = root / "project/.praisonai/memory"
    # a write killed between its temp file and the rename leaves the temp (the new content: none of alice's text, as
    # the residue scan shows), which the next write of that file sweeps once it is a minute old
    files = {str(p.relative_to(memory)): p.read_bytes() for p in sorted(memory.rglob("*"))
             if p.is_file() and not p.name.endswith(".tmp")}
    return {"libraries": json.loads(seen), "filememory": files,
            "residue": helpers.residue(root, [machine.ALICE[k] for k in ("short", "long", "turn", "sql_long",
                                                                          "mem0_add", "mem0_update", "mem0_message",
                                                                          "up_summary", "up_trait")],
                                      skip=("project/upsonic_json_db", "home/.praisonai"))}


def test_a_forget_killed_at_any_write_finishes_when_run_again(template, tmp_path):
    strace = strace_or_skip()
    clean = helpers.copy(template, tmp_path / "clean")
    trace = tmp_path / "trace.txt"
    done = run_forget(clean, [strace, "-f", "-qq", "-o", str(trace), "-e", f"trace={','.join(WRITE_CALLS)}"])
    assert done.returncode == 0, done.stderr
    expected = state(clean)
    assert expected["residue"] == {} and expected["libraries"]["sql"] == []
    points = write_calls(trace)
    assert len(points) >= 20, points
    step = max(1, len(points) // 40)  # every write-type call would take too long on a shared machine: a spread
    for number, (call, when) in enumerate(points[::step]):
        root = helpers.copy(template, tmp_path / f"kill{number}")
        killed = run_forget(root, [strace, "-f", "-qq", "-o", "/dev/null", "-e", f"trace={call}",
                                   "-e", f"inject={call}:signal=KILL:when={when}"])
        assert killed.returncode in (-9, 137), (call, when, killed.returncode, killed.stderr[-2000:])
        rerun = run_forget(root)
        assert rerun.returncode == 0, (call, when, rerun.stderr[-2000:])
        assert state(root) == expected, (call, when)
