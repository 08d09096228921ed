"""Chroma and mem0 for real, offline: praisonaiagents' rag Memory and Knowledge (oracle venv, with
litellm's embeddings served by tests/compat/fakellm.py), chromadb itself with fakellm's embedding
function and mem0's history.db (test venv). Every snippet forbids the network (fakellm.forbid_network)
and reports what it stopped: nothing may be tried.

Without chromadb / mem0ai these are skipped, unless ``PRAISONMEM_REQUIRE_CHROMA=1`` (CI), which
makes them fail."""

from __future__ import annotations

import base64
import importlib.util
import json
import os
import sqlite3
import struct
import subprocess
import sys
import textwrap
import urllib.request
from pathlib import Path

import pytest

from tests.compat import fakellm
from tests.localserver import missing

REPO = Path(__file__).resolve().parents[2]
ENV_REQUIRE = "PRAISONMEM_REQUIRE_CHROMA"
OFFLINE = {"ANONYMIZED_TELEMETRY": "False", "MEM0_TELEMETRY": "False", "LITELLM_LOCAL_MODEL_COST_MAP": "True",
           "DO_NOT_TRACK": "1", "PRAISONAI_TELEMETRY_DISABLED": "true", "UPSONIC_TELEMETRY": "false"}
PRELUDE = """
import json, os, sys
from tests.compat import fakellm
fakellm.forbid_network()
fakellm.start()
"""


def require(*modules: str) -> None:
    absent = [m for m in modules if importlib.util.find_spec(m) is None]
    if absent:
        missing(ENV_REQUIRE, f"{', '.join(absent)} not installed (pip install -e '.[test,compat]')")


def run_here(code: str, *args: str, cwd: Path) -> dict:
    """``code`` in this (test) venv, offline; the JSON of its last stdout line."""
    proc = subprocess.run([sys.executable, "-c", PRELUDE + textwrap.dedent(code), *args], cwd=cwd,
                          capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, PYTHONPATH=str(REPO), **OFFLINE))
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def tree(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) + ("/" if p.is_dir() else "") for p in root.rglob("*"))


# -- fakellm's embeddings --------------------------------------------------------------------------

def test_embeddings_are_deterministic_unit_vectors_of_the_asked_size():
    server = fakellm.start(dim=32)
    try:
        def post(body):
            req = urllib.request.Request(f"http://127.0.0.1:{server.server_port}/v1/embeddings",
                                         json.dumps(body).encode(), {"Content-Type": "application/json"})
            return json.loads(urllib.request.urlopen(req, timeout=10).read())

        got = post({"input": ["green tea", "Green  TEA!", "black coffee", ""], "model": "m"})
        vecs = [d["embedding"] for d in got["data"]]
        assert [d["index"] for d in got["data"]] == [0, 1, 2, 3] and all(len(v) == 32 for v in vecs)
        assert vecs[0] == vecs[1] != vecs[2]  # words, lower-cased: punctuation and case do not matter
        assert all(abs(sum(x * x for x in v) - 1) < 1e-9 for v in vecs)
        assert vecs[3] == [1.0] + [0.0] * 31  # no word: a fixed axis, never a zero vector
        assert vecs[0] == fakellm.embed("green tea", 32)
        assert len(post({"input": "x", "dimensions": 8})["data"][0]["embedding"]) == 8
        b64 = post({"input": "green tea", "encoding_format": "base64"})["data"][0]["embedding"]
        assert list(struct.unpack("<32f", base64.b64decode(b64))) == pytest.approx(vecs[0], abs=1e-7)
        assert post({"input": "a b", "model": "m"})["usage"] == {"prompt_tokens": 2, "total_tokens": 2}
    finally:
        server.shutdown()


def test_forbid_network_stops_and_records_what_is_not_loopback(tmp_path):
    got = run_here("""
        import socket, urllib.request
        errors = []
        for host in ("example.com", "10.1.2.3"):
            try:
                socket.create_connection((host, 80), timeout=1)
            except OSError as exc:
                errors.append(str(exc))
        socket.getaddrinfo("127.0.0.1", 80)
        print(json.dumps({"outside": fakellm.OUTSIDE, "errors": errors}))
    """, cwd=tmp_path)
    assert got["outside"] == ["socket.getaddrinfo example.com", "socket.getaddrinfo 10.1.2.3"]
    assert got["errors"] == ["tests reach no network: socket.getaddrinfo example.com",
                             "tests reach no network: socket.getaddrinfo 10.1.2.3"]


# -- chromadb directly, test venv ------------------------------------------------------------------

def test_chromadb_with_the_hash_embedding_function_persists_offline(tmp_path):
    require("chromadb")
    got = run_here("""
        import chromadb
        from chromadb.config import Settings
        ef = fakellm.chroma_embedding_function(16)
        client = chromadb.PersistentClient(path=sys.argv[1], settings=Settings(anonymized_telemetry=False))
        col = client.create_collection("notes", embedding_function=ef, metadata={"hnsw:space": "cosine"})
        col.add(ids=["a", "b"], documents=["green tea in Lisbon", "black coffee"], metadatas=[{"u": "x"}, {"u": "y"}])
        del client
        again = chromadb.PersistentClient(path=sys.argv[1], settings=Settings(anonymized_telemetry=False))
        col = again.get_collection("notes")  # the function is found again by its registered name
        hit = col.query(query_texts=["tea"], n_results=1)
        print(json.dumps({"version": chromadb.__version__, "hit": hit["ids"][0], "count": col.count(),
                          "ef": col.configuration_json["embedding_function"], "outside": fakellm.OUTSIDE}))
    """, str(tmp_path / "db"), cwd=tmp_path)
    assert got == {"version": "1.5.9", "hit": ["a"], "count": 2, "outside": [],
                   "ef": {"type": "known", "name": fakellm.CHROMA_EF_NAME, "config": {"dim": 16}}}


# -- praisonaiagents' rag Memory and Knowledge, oracle venv ----------------------------------------

RAG_MEMORY = PRELUDE + """
from praisonaiagents.memory.memory import Memory
m = Memory(config={"provider": "rag", "user_id": "alice"})
short = m.store_short_term("Alice likes green tea", metadata={"user_id": "alice", "kind": "chat"})
long = m.store_long_term("Alice lives in Lisbon", metadata={"user_id": "alice"})
import chromadb
from chromadb.config import Settings
client = chromadb.PersistentClient(path=".praisonai/chroma_db_alice", settings=Settings(anonymized_telemetry=False))
cols = {}
for col in client.list_collections():
    rows = col.get(include=["documents", "metadatas", "embeddings"])
    cols[col.name] = {"metadata": col.metadata, "ef": col.configuration_json["embedding_function"],
                      "rows": [[i, d, md, len(e)] for i, d, md, e in zip(rows["ids"], rows["documents"],
                                                                         rows["metadatas"], rows["embeddings"])]}
found = m.memory_adapter.search_long_term("where does alice live", limit=1)
print(json.dumps({"provider": m.provider, "ids": [short, long], "collections": cols,
                  "found": [f["text"] for f in found], "outside": fakellm.OUTSIDE}))
"""


def test_praisonaiagents_rag_memory_writes_its_chroma_store_offline(oracle, tmp_path):
    oracle.require("chromadb", "litellm")
    got = oracle.json(RAG_MEMORY, cwd=tmp_path, timeout=300)
    assert got["provider"] == "chroma" and got["outside"] == []
    short, long = got["ids"]
    # short- and long-term memories go to one collection, the user's, with the default embedding function
    # recorded (the vectors came from the caller: fakellm's 1536-dimension text-embedding-3-small stand-in)
    assert got["collections"] == {"memory_store_alice": {
        "metadata": {"hnsw:space": "cosine"}, "ef": {"type": "known", "name": "default", "config": {}},
        "rows": [[short, "Alice likes green tea", {"user_id": "alice", "kind": "chat"}, 1536],
                 [long, "Alice lives in Lisbon", {"user_id": "alice"}, 1536]]}}
    assert short.isdigit() and long.isdigit() and int(short) < int(long)  # time.time_ns() ids
    assert got["found"] == ["Alice lives in Lisbon"]
    # the whole tree: chroma's SQLite file and one HNSW segment dir (named by the segment's uuid)
    files = tree(tmp_path / ".praisonai")
    segments = [f for f in files if f.count("/") == 2 and f.endswith("/")]
    assert len(segments) == 1 and files == sorted(
        ["chroma_db_alice/", "chroma_db_alice/chroma.sqlite3", segments[0]]
        + [segments[0] + n for n in ("data_level0.bin", "header.bin", "length.bin", "link_lists.bin")])


KNOWLEDGE = PRELUDE + """
from praisonaiagents.knowledge import Knowledge
k = Knowledge()
added = k.add("Lisbon is the capital of Portugal.", user_id="alice")
hits = k.search("capital of Portugal", user_id="alice")
import chromadb
from chromadb.config import Settings
client = chromadb.PersistentClient(path=k.config["vector_store"]["config"]["path"], settings=Settings(anonymized_telemetry=False))
col = client.get_collection("praisonai_knowledge")
rows = col.get(include=["documents", "metadatas"])
print(json.dumps({"path": k.config["vector_store"]["config"]["path"], "added": added, "metadata": col.metadata,
                  "rows": [[d, md] for d, md in zip(rows["documents"], rows["metadatas"])],
                  "hits": [h.text for h in hits.results], "outside": fakellm.OUTSIDE}))
"""


def test_praisonaiagents_knowledge_default_config_writes_chroma_offline(oracle, tmp_path):
    oracle.require("chromadb", "litellm", "markitdown")
    got = oracle.json(KNOWLEDGE, cwd=tmp_path, timeout=300)
    assert got["outside"] == []
    assert got["path"] == str(tmp_path / ".praisonai" / "knowledge" / "chroma")
    assert got["added"]["failed_chunks"] == 0 and len(got["added"]["results"]) == 1
    assert got["metadata"] == {"hnsw:space": "cosine"}
    assert got["rows"] == [["lisbon is the capital of portugal.", {"user_id": "alice"}]]  # stored lower-cased
    assert got["hits"] == ["lisbon is the capital of portugal."]


# -- mem0's history.db, test venv ------------------------------------------------------------------

MEM0 = """
from mem0 import Memory
here = os.getcwd()
url = os.environ["OPENAI_BASE_URL"]
m = Memory.from_config({
    "vector_store": {"provider": "chroma", "config": {"collection_name": "mem0test", "path": here + "/chroma"}},
    "embedder": {"provider": "openai", "config": {"model": "text-embedding-3-small", "embedding_dims": 64,
                                                   "openai_base_url": url}},
    "llm": {"provider": "openai", "config": {"model": "gpt-4o-mini", "openai_base_url": url}},
    "history_db_path": here + "/history.db",
})
added = m.add([{"role": "user", "content": "I like green tea"}], user_id="alice", infer=False)
mid = added["results"][0]["id"]
m.update(mid, "I like black tea")
m.delete(mid)
print(json.dumps({"id": mid, "history": m.history(mid), "outside": fakellm.OUTSIDE}))
"""


def test_mem0_history_records_add_update_delete(tmp_path):
    require("mem0", "chromadb")
    got = run_here(MEM0, cwd=tmp_path)
    assert got["outside"] == []
    mid = got["id"]
    assert [(h["memory_id"], h["event"], h["old_memory"], h["new_memory"], h["is_deleted"], h["role"])
            for h in got["history"]] == [
        (mid, "ADD", None, "I like green tea", False, "user"),
        (mid, "UPDATE", "I like green tea", "I like black tea", False, "user"),
        (mid, "DELETE", "I like black tea", None, True, "user")]
    con = sqlite3.connect(f"file:{tmp_path / 'history.db'}?mode=ro", uri=True)
    assert [r[0] for r in con.execute("SELECT name FROM sqlite_master ORDER BY name")] == [
        "history", "messages", "sqlite_autoindex_history_1", "sqlite_autoindex_messages_1"]
    assert [tuple(r[1:3]) for r in con.execute("PRAGMA table_info(history)")] == [
        ("id", "TEXT"), ("memory_id", "TEXT"), ("old_memory", "TEXT"), ("new_memory", "TEXT"), ("event", "TEXT"),
        ("created_at", "DATETIME"), ("updated_at", "DATETIME"), ("is_deleted", "INTEGER"), ("actor_id", "TEXT"),
        ("role", "TEXT")]
    assert [tuple(r[1:3]) for r in con.execute("PRAGMA table_info(messages)")] == [
        ("id", "TEXT"), ("session_scope", "TEXT"), ("role", "TEXT"), ("content", "TEXT"), ("name", "TEXT"),
        ("created_at", "DATETIME")]
    rows = con.execute("SELECT event, is_deleted, created_at, updated_at FROM history ORDER BY updated_at").fetchall()
    assert [r[:2] for r in rows] == [("ADD", 0), ("UPDATE", 0), ("DELETE", 1)]
    assert len({r[2] for r in rows}) == 1 and rows[0][2].endswith("+00:00")  # created_at: the memory's, ISO UTC
    assert con.execute("SELECT COUNT(*) FROM messages").fetchone() == (0,)  # infer=False keeps no messages
    # mem0 also leaves ~/.mem0/config.json (an anonymous user id) in the isolated HOME
    assert sorted(json.loads((Path(os.environ["HOME"]) / ".mem0" / "config.json").read_text())) == ["user_id"]
