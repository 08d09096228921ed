"""``praisonmem knowledge`` over praisonaiagents 1.7.17's ``Knowledge`` stores: the default Chroma store (written
by ``Knowledge()`` in the oracle venv, offline) and the ``knowledge.db`` fallback (written by the library's own
SQLite adapter, test venv). praisonmem reads them exactly, changes nothing when reading, and after its delete and
import the library reads back exactly that change."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.compat import chromastores as cs
from tests.helpers import snapshot

pytestmark = pytest.mark.oracle


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    root = tmp_path_factory.mktemp("knowledge-project")
    home = tmp_path_factory.mktemp("knowledge-home")
    return root, cs.write_stores_in(root, home)


@pytest.fixture
def project(written, tmp_path):
    root, got = written
    return cs.copy_project(root, tmp_path / "project"), got


def knowledge(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return cs.run_praisonmem(cwd, "knowledge", *args)


LISBON = "lisbon is the capital of portugal."  # the library stores it lower-cased
PORTO = "porto is famous for its wine."


def test_list_show_search_read_the_default_chroma_store_exactly_and_change_nothing(project):
    cwd, got = project
    k1, k2 = got["knowledge"]
    before = snapshot(cwd)
    assert cs.as_json(knowledge(cwd, "list", "--json")) == [
        {"id": k1, "document": LISBON, "metadata": {"user_id": "alice"}},
        {"id": k2, "document": PORTO, "metadata": {"user_id": "bob"}}]
    assert cs.as_json(knowledge(cwd, "list", "--json", "--where", "user_id=bob")) == [
        {"id": k2, "document": PORTO, "metadata": {"user_id": "bob"}}]
    assert cs.as_json(knowledge(cwd, "show", k1, "--json")) == {"id": k1, "document": LISBON,
                                                                "metadata": {"user_id": "alice"}}
    hits = cs.as_json(knowledge(cwd, "search", "Capital of PORTUGAL", "--json"))
    assert [(h["score"], h["item"]["id"]) for h in hits] == [(1.0, k1)]
    like = cs.as_json(knowledge(cwd, "search", "--like", k1, "--json"))
    assert [h["item"]["id"] for h in like] == [k2] and like[0]["score"] < 1
    proc = knowledge(cwd, "show", "nope")
    assert (proc.returncode, proc.stdout) == (3, "")
    assert proc.stderr == ("praisonmem: error: no knowledge item 'nope' in "
                           ".praisonai/knowledge/chroma (collection praisonai_knowledge)\n")
    assert snapshot(cwd) == before


def test_delete_is_seen_by_the_library_and_leaves_no_residue(project):
    cwd, got = project
    k1, k2 = got["knowledge"]
    store = cwd / ".praisonai" / "knowledge" / "chroma"
    assert cs.files_holding(store, LISBON) == ["chroma.sqlite3"]
    proc = knowledge(cwd, "delete", k1, "--yes")
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, f"deleted knowledge item {k1}\n", "")
    assert cs.files_holding(store, LISBON) == [] and cs.files_holding(store, "capital of") == []
    assert cs.library_knowledge(cwd, "alice") == {"rows": [], "hits": [], "outside": []}
    assert cs.library_knowledge(cwd, "bob")["rows"] == [[k2, PORTO, {"user_id": "bob"}]]


def test_delete_of_an_unknown_id_deletes_nothing(project):
    cwd, got = project
    before = snapshot(cwd)
    proc = knowledge(cwd, "delete", got["knowledge"][0], "nope", "--yes")
    assert (proc.returncode, proc.stdout) == (3, "") and proc.stderr.startswith(
        "praisonmem: error: no knowledge item 'nope' in ")
    assert snapshot(cwd) == before


def test_export_import_into_a_new_chroma_store_the_library_reads(project, tmp_path):
    cwd, got = project
    out = tmp_path / "k.jsonl"
    assert knowledge(cwd, "export", "-o", str(out)).returncode == 0
    header, *records = [json.loads(line) for line in out.read_text().splitlines()]
    assert header == {"format": "praisonmem.knowledge.v1", "store": "chroma", "collection": "praisonai_knowledge",
                      "metadata": {"hnsw:space": "cosine"}, "count": 2}
    assert [r["id"] for r in records] == got["knowledge"] and all(len(r["embedding"]) == 1536 for r in records)
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    proc = knowledge(fresh, "import", str(out), "--path", ".praisonai/knowledge/chroma")
    assert (proc.returncode, proc.stdout) == (
        0, "imported 2 knowledge items into .praisonai/knowledge/chroma (collection praisonai_knowledge)\n"), \
        proc.stderr
    # the library's default Knowledge() in that project finds both, and its own vector search works on them
    alice = cs.library_knowledge(fresh, "alice")
    assert alice["rows"] == [[got["knowledge"][0], LISBON, {"user_id": "alice"}]] and alice["hits"] == [LISBON]
    again = tmp_path / "again.jsonl"
    assert knowledge(fresh, "export", "-o", str(again)).returncode == 0
    assert again.read_text() == out.read_text()  # the same records, embeddings to the float


# -- the knowledge.db fallback, written by the library's SQLite adapter --------------------------------------

WRITE_DB = """
import json, sys
from praisonaiagents.knowledge.adapters.factories import SQLiteKnowledgeAdapter
a = SQLiteKnowledgeAdapter(db_path="knowledge.db")
r1 = a.add("Green tea is good", user_id="alice", metadata={"topic": "tea", "n": 2})
r2 = a.add("Coffee at dawn", user_id="bob", agent_id="barista")
print(json.dumps([r1.id, r2.id]))
"""

READ_DB = """
import json, sys
from praisonaiagents.knowledge.adapters.factories import SQLiteKnowledgeAdapter
a = SQLiteKnowledgeAdapter(db_path="knowledge.db")
print(json.dumps([[r.id, r.text, r.metadata] for u in ("alice", "bob") for r in a.get_all(user_id=u).results]))
"""


def _library(code: str, cwd: Path) -> object:
    proc = subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_knowledge_db_fallback_read_delete_and_import(tmp_path):
    i1, i2 = _library(WRITE_DB, tmp_path)
    before = snapshot(tmp_path)
    rows = cs.as_json(knowledge(tmp_path, "list", "--json"))
    assert [(r["id"], r["document"], r["metadata"], r["user_id"], r["agent_id"], r["run_id"]) for r in rows] == [
        (i1, "Green tea is good", {"topic": "tea", "n": 2}, "alice", None, None),
        (i2, "Coffee at dawn", {}, "bob", "barista", None)]
    assert [r["id"] for r in cs.as_json(knowledge(tmp_path, "list", "--json", "--where", "agent_id=barista"))] == [i2]
    assert [h["item"]["id"] for h in cs.as_json(knowledge(tmp_path, "search", "tea", "--json"))] == [i1]
    proc = knowledge(tmp_path, "search", "--like", i1)
    assert (proc.returncode, proc.stderr) == (4, "praisonmem: error: knowledge.db keeps no vectors (the library's "
                                                 "SQLite fallback): --like needs a Chroma store\n")
    assert snapshot(tmp_path) == before
    out = tmp_path / "k.jsonl"
    assert knowledge(tmp_path, "export", "-o", str(out)).returncode == 0
    proc = knowledge(tmp_path, "delete", i1, "--yes")
    assert (proc.returncode, proc.stdout) == (0, f"deleted knowledge item {i1}\n"), proc.stderr
    assert b"Green tea" not in (tmp_path / "knowledge.db").read_bytes()
    assert _library(READ_DB, tmp_path) == [[i2, "Coffee at dawn", {}]]
    proc = knowledge(tmp_path, "import", str(out), "--on-conflict", "skip")
    assert (proc.returncode, proc.stdout) == (0, "imported 1 knowledge item into knowledge.db [1 already there, "
                                                 "skipped]\n"), proc.stderr
    assert _library(READ_DB, tmp_path) == [[i1, "Green tea is good", {"topic": "tea", "n": 2}],
                                          [i2, "Coffee at dawn", {}]]


def test_bad_knowledge_paths(tmp_path):
    def bad(code: int, *args: str) -> str:
        before = snapshot(tmp_path)
        proc = knowledge(tmp_path, *args)
        assert (proc.returncode, proc.stdout) == (code, "") and proc.stderr.count("\n") == 1, proc.stderr
        assert snapshot(tmp_path) == before
        return proc.stderr

    assert bad(3, "list") == ("praisonmem: error: no knowledge store here: neither .praisonai/knowledge/chroma "
                              "nor knowledge.db exists (give --path DIR|FILE)\n")
    (tmp_path / "other.db").write_bytes(b"SQLite format 3\x00" + b"\x00" * 84)  # a header and nothing else
    assert bad(4, "list", "--path", "other.db").startswith("praisonmem: error: other.db: ")
    conn = sqlite3.connect(tmp_path / "notes.db")
    conn.execute("CREATE TABLE notes (id TEXT)")
    conn.commit()
    conn.close()
    assert bad(4, "list", "--path", "notes.db") == ("praisonmem: error: notes.db: no 'knowledge' table; not a store "
                                                    "as its library writes it, nothing read or written\n")
    assert bad(4, "delete", "x", "--yes", "--path", "notes.db").endswith("nothing read or written\n")
