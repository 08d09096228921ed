"""Two users' memory written by the real libraries, for the forget tests of the memory-like stores.

``build(root)`` makes ``root/home`` (``HOME``: ``~/.praisonai/learn`` by LearnManager's file backend, with a
retention archive sidecar; ``~/.mem0/history.db`` by mem0's SQLiteManager) and ``root/project`` (the cwd):
FileMemory users alice and bob (tiers, entity, episodic, a saved session; one of bob's long-term items is an agent
turn stamped with alice's user id), praisonaiagents' SQLite memory for both, a learn.db, Upsonic SqliteStorage and
JSONStorage with both users' sessions and user memories, and a Chroma collection holding mem0-style payloads
(ids and ``user_id``) of the memories the history events describe. Every text is distinctive, so "no 8-character
piece of alice's texts anywhere" means what it says.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]

ALICE = {
    "short": "Alice keeps the spare key under a violet flowerpot",
    "long": "Alice is allergic to penicillin since kindergarten",
    "entity": "Quinta do Vale Azulado",
    "episode": "Alice booked a dentist appointment for Thursday",
    "chat": "Alice asked how to renew her Zanzibar visa online",
    "turn": "User: where did I leave my key? Assistant: Alice, under the violet flowerpot",
    "sql_short": "Alice drinks oolong tea without sugar every dawn",
    "sql_long": "Alice's passport number ends with digits 48213",
    "persona_old": "Alice prefers replies written as haiku poems",
    "persona_new": "Alice wants replies in Portuguese from Madeira",
    "mem0_add": "Alice enjoys paragliding above Funchal cliffs",
    "mem0_update": "Alice quit paragliding after a sprained ankle",
    "mem0_message": "Alice told mem0 about her fear of jellyfish",
    "up_summary": "Alice discussed mortgage refinancing with Upsonic",
    "up_trait": "collects vintage Soviet typewriters",
}
BOB = {
    "short": "Bob prefers the night train towards Porto",
    "long": "Bob plays cello in an amateur orchestra",
    "episode": "Bob renewed his library card on Monday",
    "chat": "Bob wanted a recipe for sourdough bread",
    "sql_short": "Bob runs five kilometres before breakfast",
    "sql_long": "Bob owns a grey cat called Pimenta",
    "persona_old": "Bob likes bullet point answers",
    "persona_new": "Bob wants answers in plain English",
    "mem0_add": "Bob supports Boavista football club",
    "mem0_message": "Bob told mem0 he grows chilli peppers",
    "up_summary": "Bob planned a cycling trip with Upsonic",
    "up_trait": "restores old bicycles",
}

WRITER = r'''
import json, os, sys
from pathlib import Path
root = Path(sys.argv[1]); A = json.loads(sys.argv[2]); B = json.loads(sys.argv[3])
project = root / "project"
os.chdir(project)

from praisonaiagents.memory.file_memory import FileMemory
fa = FileMemory(user_id="alice")
fa.add_short_term(A["short"], metadata={"session_id": "sess-alice", "agent_id": "helper", "user_id": "alice"})
fa.add_long_term(A["long"], importance=0.9)
fa.add_entity(A["entity"], "place", {"owner": "alice"})
fa.add_episodic(A["episode"])
fa.save_session("alice-chat", conversation_history=[{"role": "user", "content": A["chat"]}],
                metadata={"agent_name": "helper", "user_id": "alice"})
fb = FileMemory(user_id="bob")
fb.add_short_term(B["short"], metadata={"session_id": "sess-bob", "agent_id": "planner", "user_id": "bob"})
fb.add_long_term(B["long"], importance=0.9)
fb.add_long_term(A["turn"], metadata={"agent_id": "helper", "user_id": "alice", "session_id": "sess-alice"})
fb.add_episodic(B["episode"])
fb.save_session("bob-chat", conversation_history=[{"role": "user", "content": B["chat"]}],
                metadata={"agent_name": "planner", "user_id": "bob"})

from praisonaiagents.memory.memory import Memory
for user, texts in (("alice", A), ("bob", B)):
    memory = Memory(config={"provider": "sqlite", "user_id": user})
    memory.store_short_term(texts["sql_short"])
    memory.store_long_term(texts["sql_long"])

from praisonaiagents.config.feature_configs import LearnConfig
from praisonaiagents.memory.learn.manager import LearnManager
for user, texts in (("alice", A), ("bob", B)):
    learn = LearnManager(LearnConfig(persona=True, max_entries=1), user_id=user)
    learn._stores["persona"].add(texts["persona_old"], {})
    learn._stores["persona"].add(texts["persona_new"], {})  # past max_entries: the first goes to the archive
learn = LearnManager(LearnConfig(backend="sqlite", db_url=str(project / "learn" / "learn.db"), persona=True),
                     user_id="bob")
learn._stores["persona"].add("Shared learn row with no owner recorded", {})
for store in learn._stores.values():
    store._backend.close()

from mem0.memory.storage import SQLiteManager
history = SQLiteManager(str(root / "home" / ".mem0" / "history.db"))
history.add_history("5d1c0e8a-3b7f-4f2a-9c61-0a8e2b4d7f13", None, A["mem0_add"], "ADD", created_at="2026-11-30T10:00:00+00:00")
history.add_history("5d1c0e8a-3b7f-4f2a-9c61-0a8e2b4d7f13", A["mem0_add"], A["mem0_update"], "UPDATE", created_at="2026-11-30T11:00:00+00:00")
history.add_history("b7e2a9c4-6d15-4e83-a0f7-3c9d1e5b8a26", None, B["mem0_add"], "ADD", created_at="2026-11-30T12:00:00+00:00")
history.save_messages([{"role": "user", "content": A["mem0_message"]}], "user_id=alice")
history.save_messages([{"role": "user", "content": B["mem0_message"]}], "user_id=bob")
history.connection.close()

import chromadb
client = chromadb.PersistentClient(path=str(project / ".praisonai" / "knowledge" / "chroma"))
# ids as mem0 makes them (UUIDs): chromadb keeps the last deleted id in its log until its next write
col = client.get_or_create_collection("praisonai_knowledge", embedding_function=None)
col.add(ids=["5d1c0e8a-3b7f-4f2a-9c61-0a8e2b4d7f13", "b7e2a9c4-6d15-4e83-a0f7-3c9d1e5b8a26"], embeddings=[[0.1, 0.2, 0.3], [0.3, 0.2, 0.1]],
        metadatas=[{"user_id": "alice"}, {"user_id": "bob"}], documents=["alice memory", "bob memory"])

from upsonic.storage.sqlite import SqliteStorage
from upsonic.storage.json import JSONStorage
from upsonic.session.agent import AgentSession
from upsonic.storage.schemas import UserMemory
for storage in (SqliteStorage(db_file=str(project / "upsonic.db")), JSONStorage(db_path=str(project / "upsonic_json_db"))):
    storage.upsert_session(AgentSession(session_id="up-alice", agent_id="helper", user_id="alice", summary=A["up_summary"]))
    storage.upsert_session(AgentSession(session_id="up-bob", agent_id="planner", user_id="bob", summary=B["up_summary"]))
    storage.upsert_user_memory(UserMemory(user_id="alice", user_memory={"hobby": A["up_trait"]}))
    storage.upsert_user_memory(UserMemory(user_id="bob", user_memory={"hobby": B["up_trait"]}))
    for n, (user, texts) in enumerate((("alice", A), ("bob", B))):
        counts = dict.fromkeys(("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens",
                                "reasoning_tokens", "input_audio_tokens", "output_audio_tokens",
                                "cache_audio_read_tokens", "requests", "tool_calls"), 1)
        storage.upsert_usage_entry({"entry_id": f"usage-{user}", "timestamp": 1796000000.0 + n, "kind": "llm_call",
                                    "model": "gpt-4o-mini", "provider": "openai", "duration": 0.5,
                                    "model_execution_time": 0.4, "tool_execution_time": 0.0, "cost_usd": 0.001,
                                    "user_id": user, "run_id": f"run-{user}", **counts})
print("ok")
'''

# What the libraries read back: bob's records through each library, and whether any of alice's is found.
READER = r'''
import json, os, sys
from pathlib import Path
root = Path(sys.argv[1]); A = json.loads(sys.argv[2])
project = root / "project"
os.chdir(project)
out = {}
from praisonaiagents.memory.file_memory import FileMemory
fb = FileMemory(user_id="bob")
out["file_bob"] = sorted(i.content for i in fb._short_term + fb._long_term)
out["file_bob_sessions"] = sorted(s["name"] for s in fb.list_sessions())
out["file_bob_search"] = sorted(r.content if hasattr(r, "content") else str(r) for r in fb.search("Alice", limit=20))
from praisonaiagents.memory.memory import Memory
memory = Memory(config={"provider": "sqlite", "user_id": "bob"})
out["sql_bob"] = sorted(r.get("text") or r.get("content") for r in memory.search_short_term("Bob", limit=10)
                        + memory.search_long_term("Bob", limit=10))
from praisonaiagents.config.feature_configs import LearnConfig
from praisonaiagents.memory.learn.manager import LearnManager
learn = LearnManager(LearnConfig(persona=True), user_id="bob")
out["learn_bob"] = sorted(e.content for e in learn._stores["persona"]._entries.values())
from mem0.memory.storage import SQLiteManager
history = SQLiteManager(str(root / "home" / ".mem0" / "history.db"))
out["mem0_bob"] = [h["new_memory"] for h in history.get_history("b7e2a9c4-6d15-4e83-a0f7-3c9d1e5b8a26")]
out["mem0_alice"] = [h["new_memory"] for h in history.get_history("5d1c0e8a-3b7f-4f2a-9c61-0a8e2b4d7f13")]
out["mem0_messages"] = {s: [m["content"] for m in history.get_last_messages(s)] for s in ("user_id=alice", "user_id=bob")}
history.connection.close()
from upsonic.storage.sqlite import SqliteStorage
from upsonic.storage.json import JSONStorage
for name, storage in (("up_sqlite", SqliteStorage(db_file=str(project / "upsonic.db"))),
                      ("up_json", JSONStorage(db_path=str(project / "upsonic_json_db")))):
    bob = storage.get_session(session_id="up-bob")
    alice = storage.get_session(session_id="up-alice")
    out[name] = {"bob": bob.summary if bob else None, "alice": None if alice is None else alice.summary,
                 "bob_memory": (storage.get_user_memory(user_id="bob") or {}) and storage.get_user_memory(user_id="bob").user_memory,
                 "alice_memory": storage.get_user_memory(user_id="alice") is not None,
                 "usage": sorted(e["entry_id"] for e in storage.query_usage_entries())}
fa = FileMemory(user_id="alice")  # last: the library makes the directory again
out["file_alice"] = sorted(i.content for i in fa._short_term + fa._long_term)
print(json.dumps(out, default=str))
'''


def env(root: Path) -> dict[str, str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("PRAISONAI_", "MEM0_", "XDG_"))}
    clean.update(HOME=str(root / "home"), ANONYMIZED_TELEMETRY="False", MEM0_TELEMETRY="False",
                 OPENAI_API_KEY="sk-test", PYTHONPATH=str(REPO), PYTHONDONTWRITEBYTECODE="1",
                 PRAISONAI_TELEMETRY_DISABLED="true", UPSONIC_TELEMETRY="false", DO_NOT_TRACK="1")
    return clean


def run(code: str, root: Path, *args: str) -> str:
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code), str(root), *args], cwd=root / "project",
                          env=env(root), capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return proc.stdout.strip().splitlines()[-1]


def build(root: Path) -> None:
    (root / "project").mkdir(parents=True)
    (root / "home" / ".mem0").mkdir(parents=True)
    assert run(WRITER, root, json.dumps(ALICE), json.dumps(BOB)) == "ok"


def read(root: Path) -> dict:
    return json.loads(run(READER, root, json.dumps(ALICE)))
