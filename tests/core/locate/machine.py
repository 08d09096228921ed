"""A machine tree holding every store kind ``locate`` recognises, written by the real libraries, and decoys.

``build(root)`` makes ``root/home`` (the user's ``HOME``: ``~/.praisonai`` the gateway home fixture plus learn
files, the legacy ``~/.praison``, ``~/.mem0/history.db``) and ``root/work`` (the directory walked: a project with
FileMemory users, an ``Agent(memory=True)`` per-run user, SQLite memory, Chroma memory and knowledge, knowledge.db,
learn.db, praisonai's storage.db, Upsonic SqliteStorage and JSONStorage, praisonai's JSON and SQLite conversation
stores; and the decoys: another app's database and JSON, a symlink loop, links out of the tree to real stores, a
FIFO, a virtualenv, ``.git`` and ``node_modules`` holding stores). praisonaiagents, Upsonic, mem0 and chromadb run
in this venv; praisonai's JSONConversationStore in the oracle venv.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.oracles import oracle_env, require_oracle
from tests.realhomes import copy_conversations_db, copy_gateway_home

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"

LIBRARIES = r'''
import json, os, sys, asyncio
from pathlib import Path
work = Path(sys.argv[1]); home = Path(sys.argv[2])
project = work / "project"
os.chdir(project)

# FileMemory users, and the per-run user Agent(memory=True) makes without a user_id
from praisonaiagents.memory.file_memory import FileMemory
fm = FileMemory(user_id="alice")
fm.add_short_term("Alice likes green tea")
fm.add_long_term("Alice lives in Lisbon", importance=0.9)
FileMemory(user_id="bob").add_short_term("Bob prefers trains")
from praisonaiagents import Agent
agent = Agent(name="helper", instructions="help", memory=True)
orphan = [p.name for p in (project / ".praisonai" / "memory").iterdir() if p.name.startswith("agent-")][0]

# SQLite memory (the adapter's own files in ./.praisonai)
from praisonaiagents.memory.memory import Memory
mem = Memory(config={"provider": "sqlite", "user_id": "carol"})
mem.store_short_term("Carol short")
mem.store_long_term("Carol long")

# knowledge.db (the SQLite knowledge fallback)
from praisonaiagents.knowledge.adapters.factories import SQLiteKnowledgeAdapter
SQLiteKnowledgeAdapter(db_path=str(project / "knowledge.db")).add("Refunds take 5 days", user_id="alice")

# praisonaiagents' generic SQLiteBackend (praison_storage)
from praisonaiagents.storage.backends import SQLiteBackend
SQLiteBackend(db_path=str(project / "storage.db")).save("k1", {"v": 1})

# learn.db (LearnConfig(backend="sqlite"))
from praisonaiagents.config.feature_configs import LearnConfig
from praisonaiagents.memory.learn.manager import LearnManager
learn = LearnManager(LearnConfig(backend="sqlite", db_url=str(project / "learn" / "learn.db"), persona=True),
                     user_id="alice")
learn._stores["persona"].add("Prefers short answers", {})
for store in learn._stores.values():
    assert store._backend is not None, "fell back to files"
    store._backend.close()

# Upsonic SqliteStorage and JSONStorage
from upsonic.storage.sqlite import SqliteStorage
from upsonic.storage.json import JSONStorage
from upsonic.session.agent import AgentSession
from upsonic.storage.schemas import UserMemory
for storage in (SqliteStorage(db_file=str(project / "upsonic.db")), JSONStorage(db_path=str(project / "upsonic_json_db"))):
    storage.upsert_session(AgentSession(session_id="s1", agent_id="a1", user_id="u1"))
    storage.upsert_user_memory(UserMemory(user_id="u1", user_memory={"likes": "tea"}))

# mem0 history (its own SQLiteManager, the writer mem0's Memory uses)
from mem0.memory.storage import SQLiteManager
history = SQLiteManager(str(home / ".mem0" / "history.db"))
history.add_history("m1", None, "likes tea", "ADD", created_at="2026-11-30T10:00:00+00:00")
history.add_history("m1", "likes tea", "likes green tea", "UPDATE", created_at="2026-11-30T10:00:00+00:00")
history.connection.close()

# Chroma memory and knowledge, as praisonaiagents names their directories and collections
import chromadb
sys.path.insert(0, sys.argv[3])
from tests.compat.fakellm import chroma_embedding_function
ef = chroma_embedding_function(8)
client = chromadb.PersistentClient(path=str(project / ".praisonai" / "chroma_db_alice"))
client.get_or_create_collection("memory_store_alice", embedding_function=ef).add(ids=["1", "2"], documents=["a", "b"])
client = chromadb.PersistentClient(path=str(project / ".praisonai" / "knowledge" / "chroma"))
client.get_or_create_collection("praisonai_knowledge", embedding_function=ef).add(ids=["k"], documents=["doc"])
print(json.dumps({"orphan": orphan}))
'''

CONVERSATIONS = r'''
import sys
from praisonai.persistence.conversation.json_store import JSONConversationStore
from praisonai.persistence.conversation.base import ConversationSession, ConversationMessage
store = JSONConversationStore(path=sys.argv[1])
for sid in ("c1", "c2"):
    store.create_session(ConversationSession(session_id=sid, user_id="alice", agent_id="bot"))
    store.add_message(sid, ConversationMessage(session_id=sid, role="user", content="hello " + sid))
'''


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PRAISONAI_", "MEM0_", "XDG_"))}
    env.update(HOME=str(home), ANONYMIZED_TELEMETRY="False", MEM0_TELEMETRY="False", OPENAI_API_KEY="sk-test",
               PYTHONPATH=str(Path(__file__).resolve().parents[3]))
    return env


def build(root: Path) -> dict[str, str]:
    """Write the machine under ``root``; what the test needs to know (the per-run user's id)."""
    import json

    home, work = root / "home", root / "work"
    project = work / "project"
    for d in (home / ".mem0", project / ".praisonai", project / "learn"):
        d.mkdir(parents=True)
    gateway = copy_gateway_home(root / "gw", project=False)
    shutil.move(str(gateway.home), home / ".praisonai")
    shutil.copytree(FIXTURES / "praisonai-1.7.17" / "home" / "learn", home / ".praisonai" / "learn")
    shutil.copytree(FIXTURES / "praisonai-1.7.17" / "home" / "sessions", home / ".praison" / "sessions")
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(LIBRARIES), str(work), str(home),
                           str(Path(__file__).resolve().parents[3])], env=_env(home), cwd=project,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    facts = json.loads(proc.stdout.strip().splitlines()[-1])
    convs = subprocess.run([require_oracle(), "-c", CONVERSATIONS, str(project / "praisonai_conversations")],
                           env=oracle_env(), capture_output=True, text=True, timeout=300)
    assert convs.returncode == 0, convs.stderr[-3000:]
    copy_conversations_db(project)
    _decoys(root, work)
    return facts


def _decoys(root: Path, work: Path) -> None:
    outside = root / "outside"
    outside.mkdir()
    shutil.copy(work / "project" / "upsonic.db", outside / "upsonic.db")
    shutil.copytree(work / "project" / "upsonic_json_db", outside / "upsonic_json_db")
    decoys = work / "decoys"
    decoys.mkdir()
    conn = sqlite3.connect(decoys / "other-app.db")
    conn.execute("CREATE TABLE sessions (id INTEGER PRIMARY KEY, token TEXT)")  # a name, not the store's columns
    conn.execute("CREATE TABLE history (id INTEGER, what TEXT)")
    conn.commit()
    conn.close()
    (decoys / "not-sqlite.db").write_bytes(b"just text, named like a database\n")
    docs = decoys / "docs"
    docs.mkdir()
    (docs / "a.json").write_text('{"name": "a", "messages_count": 3}', encoding="utf-8")
    (docs / "b.json").write_text('[{"title": "b"}]', encoding="utf-8")
    (docs / "short_term.json").write_text('{"not": "a memory"}', encoding="utf-8")
    os.symlink(".", decoys / "loop")
    os.symlink(outside, decoys / "outside-link")
    os.symlink(outside / "upsonic.db", decoys / "linked.db")
    os.mkfifo(decoys / "pipe.db")
    os.mkfifo(decoys / "pipe.json")
    for hidden in (".git", "node_modules", "venv", "__pycache__"):
        shutil.copy(work / "project" / "upsonic.db", _mk(decoys / hidden) / "upsonic.db")
    (decoys / "venv" / "pyvenv.cfg").write_text("home = /usr/bin\n", encoding="utf-8")
    (decoys / "unreadable").mkdir()
    shutil.copy(work / "project" / "upsonic.db", decoys / "unreadable" / "upsonic.db")


def _mk(path: Path) -> Path:
    path.mkdir()
    return path
