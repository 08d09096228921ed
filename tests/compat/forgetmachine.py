"""A machine tree for ``forget``, written by the real libraries for two users, alice and bob.

On top of the memory-like stores of :mod:`tests.core.forget.machine` (FileMemory, SQLite memory, learn files and
learn.db, mem0's history.db, Upsonic SqliteStorage and JSONStorage, a Chroma knowledge collection), this adds,
each by its owner: praisonaiagents 1.7.17 Agents for alice and bob chatting through the loopback fake LLM with
memory, learn and history (their session files and FileMemory); the gateway's stores, ``sessions.db``
(``SqliteTranscriptStore``) and ``sessions_index.db`` (``SqliteSessionStore``'s index, its FTS5 text and routes);
an encrypted session of each (``EncryptedSessionStore``); the rag ``Memory``'s Chroma collections of each; and a
praisonmem backup of the home (``praisonmem backup create``).

``root/home`` is ``HOME`` (the PraisonAI home is ``root/home/.praisonai``), ``root/project`` the working
directory, ``root/backups`` the backup directory. Every planted text is distinctive: ``ALICE``/``BOB`` here and
in :mod:`tests.core.forget.machine`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
KEY = "Zm9yZ2V0LXRlc3RzLWZpeGVkLWtleS0zMi1ieXRlcyE="  # a Fernet key (32 bytes, urlsafe base64), fixed for the tests

ALICE = {
    "agent_chat": "Alice asked the agent about her gluten intolerance diagnosis",
    "agent_more": "Alice wants her pension statement sent to Rua das Flores",
    "gateway": "Alice messaged the gateway about her overdue council tax bill",
    "gateway_more": "Alice's employer is the Brightwater Hydroelectric Cooperative",
    "encrypted": "Alice whispered the combination of the garden shed padlock",
    "rag": "Alice noted the wifi passphrase of the Lisbon apartment",
}
BOB = {
    "agent_chat": "Bob asked the agent to plan a canoe trip on the Douro",
    "gateway": "Bob messaged the gateway about his broken bicycle chain",
    "encrypted": "Bob whispered his favourite chess opening to the store",
    "rag": "Bob memorised the bus timetable to Matosinhos beach",
}

WRITER = r'''
import json, os, sys
from pathlib import Path
root = Path(sys.argv[1]); A = json.loads(sys.argv[2]); B = json.loads(sys.argv[3]); key = sys.argv[4]
os.chdir(root / "project")
sys.path.insert(0, sys.argv[5])
from tests.compat import fakellm
fakellm.forbid_network()
fakellm.start()
from praisonaiagents import Agent
from praisonaiagents.config import MemoryConfig
made = {}
for user, texts in (("alice", [A["agent_chat"], A["agent_more"]]), ("bob", [B["agent_chat"]])):
    agent = Agent(name="Helper", instructions="Be brief.", llm="gpt-4o-mini",
                  memory=MemoryConfig(backend="file", user_id=user, session_id=f"chat-{user}", history=True,
                                      learn=True))
    for text in texts:
        agent.chat(text)
    made[user] = agent._session_id
sessions = Path.home() / ".praisonai" / "sessions"
from praisonaiagents.session import SqliteSessionStore, SqliteTranscriptStore, EncryptedSessionStore
from praisonaiagents.session.store import DefaultSessionStore
gateway = SqliteTranscriptStore(session_dir=str(sessions))
for sid, user, texts in (("gw-alice", "alice", [A["gateway"], A["gateway_more"]]), ("gw-bob", "bob", [B["gateway"]])):
    gateway.set_agent_info(sid, agent_name="GatewayBot", user_id=user)
    for i, text in enumerate(texts):
        gateway.add_message(sid, "user" if i % 2 == 0 else "assistant", text)
index = SqliteSessionStore(session_dir=str(sessions))
index.search("anything")  # the backfill: every JSON session indexed
secret = EncryptedSessionStore(DefaultSessionStore(session_dir=str(sessions)), key)
for sid, user, text in (("enc-alice", "alice", A["encrypted"]), ("enc-bob", "bob", B["encrypted"])):
    secret.set_agent_info(sid, agent_name="Vault", user_id=user)
    secret.add_message(sid, "user", text)
print(json.dumps(made))
'''

# The rag Memory's Chroma collections, in the oracle venv (it has the litellm the memory adapter needs), offline
RAG = """
import json
from tests.compat import fakellm
fakellm.forbid_network()
fakellm.start()
from praisonaiagents.memory.memory import Memory
texts = json.loads(input())
for user, text in texts.items():
    Memory(config={"provider": "rag", "user_id": user}).store_long_term(text, metadata={"user_id": user})
print(json.dumps({"outside": fakellm.OUTSIDE}))
"""
READER = r'''
import json, os, sys
from pathlib import Path
root = Path(sys.argv[1]); key = sys.argv[2]
os.chdir(root / "project")
sys.path.insert(0, sys.argv[3])
from tests.compat import fakellm
fakellm.forbid_network()
fakellm.start()
sessions = Path.home() / ".praisonai" / "sessions"
from praisonaiagents.session import SqliteSessionStore, SqliteTranscriptStore, EncryptedSessionStore
from praisonaiagents.session.store import DefaultSessionStore
out = {}
json_store = DefaultSessionStore(session_dir=str(sessions))
out["json_sessions"] = sorted(s["session_id"] if isinstance(s, dict) else s.session_id
                              for s in json_store.list_sessions(limit=100))
out["bob_chat"] = {sid: [m["content"] for m in json_store.get_chat_history(sid)] for sid in json.loads(sys.argv[4])}
gateway = SqliteTranscriptStore(session_dir=str(sessions))
out["gateway"] = {sid: [m["content"] for m in gateway.get_chat_history(sid)] for sid in ("gw-alice", "gw-bob")}
index = SqliteSessionStore(session_dir=str(sessions))
out["search"] = {q: sorted({h.session_id for h in index.search(q, limit=20)})
                 for q in ("gluten", "pension", "council", "canoe", "bicycle", "Brightwater")}
secret = EncryptedSessionStore(DefaultSessionStore(session_dir=str(sessions)), key)
out["encrypted"] = {sid: [m["content"] for m in secret.get_chat_history(sid)] for sid in ("enc-alice", "enc-bob")}
print(json.dumps(out, default=str))
'''


def machine():
    """The memory-like stores' builder (the memory adapter's tests own it)."""
    from tests.core.forget import machine

    return machine


def env(root: Path) -> dict[str, str]:
    return {**machine().env(root), "PRAISONAI_SESSION_KEY": KEY}


def run(code: str, root: Path, *args: str) -> str:
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code), str(root), *args], cwd=root / "project",
                          env=env(root), capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return proc.stdout.strip().splitlines()[-1]


def praisonmem(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "praisonmem", *args], cwd=root / "project", env=env(root),
                          capture_output=True, text=True, timeout=900)


def build(root: Path) -> dict[str, str]:
    """The tree; the agents' session ids by user."""
    machine().build(root)
    from tests.oracles import oracle_json, require_oracle_packages

    made = json.loads(run(WRITER, root, json.dumps(ALICE), json.dumps(BOB), KEY, str(REPO)))
    require_oracle_packages("chromadb", "litellm")
    (root / "project" / "assistant").mkdir()
    got = oracle_json(RAG, cwd=root / "project" / "assistant", payload={"alice": ALICE["rag"], "bob": BOB["rag"]},
                      timeout=600)
    assert got["outside"] == []
    (root / "backups").mkdir()
    made_backup = praisonmem(root, "backup", "create", "-o", str(root / "backups"))
    assert made_backup.returncode == 0, made_backup.stderr
    return made


def read(root: Path, bob_sessions: list[str]) -> dict:
    from tests.compat.chromastores import library_memory

    out = json.loads(run(READER, root, KEY, str(REPO), json.dumps(bob_sessions)))
    out["rag"] = {u: sorted(row[1] for row in library_memory(root / "project" / "assistant", u)) for u in ("bob", "alice")}
    return out


def alice_texts() -> list[str]:
    return [*machine().ALICE.values(), *ALICE.values()]


def bob_texts() -> list[str]:
    return [*machine().BOB.values(), *BOB.values()]
