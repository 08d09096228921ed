"""``memory … --provider chroma`` over stores praisonaiagents 1.7.17's rag ``Memory`` wrote (oracle venv, offline):
praisonmem reads exactly what the library wrote, changes nothing when reading, and after each of its writes
(delete, import) the library reads back exactly that change; a deleted text is in no file of the store."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.compat import chromastores as cs
from tests.helpers import snapshot

pytestmark = pytest.mark.oracle
SECRET = "sk-proj-Zq9XcV3bN7mL2kP8wR4tY6uI1oA5sD0fG3hJ"


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """One project dir the library wrote (never changed: tests copy it) and the ids it returned."""
    root = tmp_path_factory.mktemp("chroma-project")
    home = tmp_path_factory.mktemp("chroma-home")
    got = cs.write_stores_in(root, home)
    return root, got


@pytest.fixture
def project(written, tmp_path):
    root, got = written
    return cs.copy_project(root, tmp_path / "project"), got


def _query(store: Path, sql: str) -> list:
    """Rows of ``sql`` over a store's chroma.sqlite3, the connection closed again (an open one would make
    praisonmem refuse to write: the store is in use)."""
    conn = sqlite3.connect(f"file:{store / 'chroma.sqlite3'}?mode=ro", uri=True)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def listed(cwd: Path, *args: str) -> list:
    return cs.as_json(cs.run_praisonmem(cwd, "memory", "list", "--provider", "chroma", "--json", *args))


def test_list_is_exactly_what_the_library_wrote_and_changes_nothing(project):
    cwd, got = project
    a1, a2, a3 = got["alice"]
    before = snapshot(cwd)
    assert listed(cwd, "--user-id", "alice") == [
        {"type": "long_term", "item": {"id": a1, "text": f"Alice likes green tea with {SECRET}",
                                       "metadata": {"kind": "chat", "user_id": "alice"}}},
        {"type": "long_term", "item": {"id": a2, "text": "Alice lives in Lisbon near the river",
                                       "metadata": {"ok": True, "rank": 3, "user_id": "alice", "weight": 0.5}}},
        {"type": "long_term", "item": {"id": a3, "text": "Alice drinks green tea every morning",
                                       "metadata": {"user_id": "alice"}}}]
    # no user: the library's unsuffixed chroma_db / memory_store; rag is the library's own name for it
    assert listed(cwd) == [{"type": "long_term", "item": {"id": got["shared"][0], "text": "The team meets on Mondays",
                                                          "metadata": {"source": "wiki"}}}]
    assert cs.as_json(cs.run_praisonmem(cwd, "memory", "list", "--provider", "rag", "--json",
                                        "--chroma-path", ".praisonai/chroma_db_alice", "--user-id", "alice"))[0][
        "item"]["id"] == a1
    users = cs.as_json(cs.run_praisonmem(cwd, "memory", "users", "--provider", "chroma", "--json"))
    assert [(u["user_id"], u["path"], u["long_term"]) for u in users] == [
        ("", ".praisonai/chroma_db", 1), ("alice", ".praisonai/chroma_db_alice", 3)]
    assert snapshot(cwd) == before  # not a byte, an mtime or a new file: chromadb only ever opened a copy


def test_search_by_words_and_by_a_stored_vector_needs_no_model(project):
    cwd, got = project
    a1, a2, a3 = got["alice"]
    before = snapshot(cwd)
    hits = cs.as_json(cs.run_praisonmem(cwd, "memory", "search", "green tea morning", "--provider", "chroma",
                                        "--user-id", "alice", "--json"))
    assert [(h["item"]["id"], round(h["score"], 4)) for h in hits] == [(a3, 0.8), (a1, round(0.8 * 2 / 3, 4))]
    hits = cs.as_json(cs.run_praisonmem(cwd, "memory", "search", "GREEN TEA every", "--provider", "chroma",
                                        "--user-id", "alice", "--json", "--filter", "user_id=alice"))
    assert [(h["item"]["id"], round(h["score"], 4)) for h in hits] == [(a3, 1.0), (a1, round(0.8 * 2 / 3, 4))]
    assert cs.as_json(cs.run_praisonmem(cwd, "memory", "search", "wiki", "--provider", "chroma", "--json"))[0][
        "item"]["id"] == got["shared"][0]  # metadata values are searched too
    like = cs.as_json(cs.run_praisonmem(cwd, "memory", "search", "--like", a3, "--provider", "chroma",
                                        "--user-id", "alice", "--json"))
    # fakellm's vectors are bags of words: "green tea" makes a1 the nearest to a3, a2 shares only "alice"
    assert [h["item"]["id"] for h in like] == [a1, a2] and 1 > like[0]["score"] > like[1]["score"]
    assert snapshot(cwd) == before


def test_delete_removes_the_item_for_the_library_and_leaves_no_residue(project):
    cwd, got = project
    a1, a2, a3 = got["alice"]
    store = cwd / ".praisonai" / "chroma_db_alice"
    assert cs.files_holding(store, SECRET) == ["chroma.sqlite3"]  # the log, the metadata and the FTS tables
    settings = ("SELECT c.config_json_str, m.key, m.str_value FROM collections c "
                "JOIN collection_metadata m ON m.collection_id = c.id")
    made = _query(store, settings)
    proc = cs.run_praisonmem(cwd, "memory", "delete", a1, "--provider", "chroma", "--user-id", "alice", "--yes")
    assert (proc.returncode, proc.stderr) == (0, ""), proc.stderr
    assert proc.stdout == f"deleted long_term memory {a1}\n"
    assert cs.files_holding(store, SECRET) == [] and cs.files_holding(store, "green tea with") == []
    assert cs.library_memory(cwd, "alice") == [
        [a2, "Alice lives in Lisbon near the river", {"user_id": "alice", "rank": 3, "weight": 0.5, "ok": True}],
        [a3, "Alice drinks green tea every morning", {"user_id": "alice"}]]
    # the collection's stored configuration and metadata are as the library made them (the lowered sync
    # threshold lived in the client only)
    assert _query(store, settings) == made == [("{}", "hnsw:space", "cosine")]


def test_delete_dry_run_and_unknown_id_change_nothing(project):
    cwd, got = project
    before = snapshot(cwd)
    proc = cs.run_praisonmem(cwd, "memory", "delete", got["alice"][0], "--provider", "chroma", "--user-id", "alice",
                             "--dry-run")
    assert (proc.returncode, proc.stdout) == (0, f"would delete long_term memory {got['alice'][0]}\n")
    proc = cs.run_praisonmem(cwd, "memory", "delete", "123", "--provider", "chroma", "--user-id", "alice", "--yes")
    assert (proc.returncode, proc.stdout, proc.stderr) == (
        3, "", "praisonmem: error: no memory '123' for user 'alice' (chroma provider)\n")
    assert snapshot(cwd) == before


def test_export_then_import_gives_the_same_collection_back_to_the_float(project, tmp_path):
    cwd, got = project
    out = tmp_path / "alice.jsonl"
    proc = cs.run_praisonmem(cwd, "memory", "export", "--provider", "chroma", "--user-id", "alice", "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert lines[0] == {"format": "praisonmem.chroma.v1", "collection": "memory_store_alice",
                        "metadata": {"hnsw:space": "cosine"}, "count": 3}
    assert [r["id"] for r in lines[1:]] == got["alice"] and all(len(r["embedding"]) == 1536 for r in lines[1:])
    proc = cs.run_praisonmem(cwd, "memory", "import", str(out), "--provider", "chroma", "--user-id", "carol")
    assert (proc.returncode, proc.stdout) == (0, "imported 3 memory items into memory_store_carol "
                                                 "(.praisonai/chroma_db_carol)\n"), proc.stderr
    # the library finds them under carol, as stored
    assert cs.library_memory(cwd, "carol") == cs.library_memory(cwd, "alice")
    # and chromadb gives back the same ids, documents, metadata and float32 embeddings, bit for bit
    code = """
import chromadb, json, sys
from chromadb.config import Settings
def get(path, name):
    c = chromadb.PersistentClient(path=path, settings=Settings(anonymized_telemetry=False))
    col = c.get_collection(name, embedding_function=None)
    r = col.get(include=["documents", "metadatas", "embeddings"])
    return [r["ids"], r["documents"], r["metadatas"], [e.tobytes().hex() for e in r["embeddings"]], col.metadata]
print(json.dumps([get(sys.argv[1], "memory_store_alice"), get(sys.argv[2], "memory_store_carol")]))
"""
    a, c = json.loads(subprocess.run([sys.executable, "-c", code, str(cwd / ".praisonai/chroma_db_alice"),
                                      str(cwd / ".praisonai/chroma_db_carol")], capture_output=True, text=True,
                                     check=True, env=dict(os.environ, ANONYMIZED_TELEMETRY="False")).stdout)
    assert a == c
    # importing again: the ids are there, so nothing is imported (exit 4), or with skip, nothing added
    before = snapshot(cwd)
    proc = cs.run_praisonmem(cwd, "memory", "import", str(out), "--provider", "chroma", "--user-id", "carol")
    assert (proc.returncode, proc.stdout) == (4, "")
    assert proc.stderr == (f"praisonmem: error: 3 ids already in memory_store_carol (first: {got['alice'][0]}); "
                           "use --on-conflict skip to add only the others; nothing imported\n")
    assert snapshot(cwd) == before


def test_a_write_is_refused_while_an_agent_has_the_store_open(project):
    cwd, got = project
    store = cwd / ".praisonai" / "chroma_db_alice"
    holder = subprocess.Popen([sys.executable, "-c", """
import sys, chromadb
from chromadb.config import Settings
c = chromadb.PersistentClient(path=sys.argv[1], settings=Settings(anonymized_telemetry=False))
c.get_collection("memory_store_alice", embedding_function=None).count()
print("open", flush=True)
sys.stdin.read()
""", str(store)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                              env=dict(os.environ, ANONYMIZED_TELEMETRY="False"))
    try:
        assert holder.stdout.readline() == "open\n"
        before = snapshot(cwd)
        proc = cs.run_praisonmem(cwd, "memory", "delete", got["alice"][0], "--provider", "chroma", "--user-id",
                                 "alice", "--yes")
        assert (proc.returncode, proc.stdout) == (4, "")
        assert proc.stderr == (f"praisonmem: error: .praisonai/chroma_db_alice is open in process {holder.pid} "
                               "(a running agent?); stop it first: chromadb has no lock to wait on; nothing changed\n")
        assert snapshot(cwd) == before
        # reading while it is open is fine: a private copy
        assert len(listed(cwd, "--user-id", "alice")) == 3
    finally:
        holder.stdin.close()
        holder.wait(timeout=60)


# -- bad input: one line, the documented exit code, nothing written ------------------------------------------

def _bad(cwd: Path, code: int, *args: str, hide: bool = False) -> str:
    before = snapshot(cwd)
    proc = cs.run_praisonmem(cwd, *args, hide_chromadb=hide)
    assert (proc.returncode, proc.stdout) == (code, ""), proc.stderr
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("praisonmem: error: ")
    assert snapshot(cwd) == before
    return proc.stderr


def test_a_missing_chroma_dir_is_not_found(tmp_path):
    assert _bad(tmp_path, 3, "memory", "list", "--provider", "chroma", "--chroma-path", "nowhere") == \
        "praisonmem: error: nowhere: no Chroma store there\n"
    (tmp_path / "empty").mkdir()
    assert _bad(tmp_path, 3, "memory", "delete", "1", "--provider", "chroma", "--chroma-path", "empty", "--yes") == \
        "praisonmem: error: empty: no chroma.sqlite3, so no Chroma store there\n"


def test_a_truncated_chroma_sqlite3_is_refused_as_corrupt(project):
    cwd, _got = project
    db = cwd / ".praisonai" / "chroma_db_alice" / "chroma.sqlite3"
    db.write_bytes(db.read_bytes()[:4096 + 100])
    for args in (("list",), ("delete", "1", "--yes"), ("export",)):
        line = _bad(cwd, 4, "memory", *args, "--provider", "chroma", "--user-id", "alice")
        assert line in ("praisonmem: error: .praisonai/chroma_db_alice/chroma.sqlite3: not a readable Chroma "
                        "database (database disk image is malformed)\n",)


def test_another_apps_sqlite_is_refused(tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    conn = sqlite3.connect(other / "chroma.sqlite3")
    conn.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
    conn.commit()
    conn.close()
    assert _bad(tmp_path, 4, "memory", "list", "--provider", "chroma", "--chroma-path", "other") == \
        "praisonmem: error: other/chroma.sqlite3: not a Chroma database (no 'collections' table)\n"


def test_without_chromadb_a_one_line_install_hint(project):
    cwd, got = project
    for args in (("list",), ("delete", got["alice"][0], "--yes"), ("export",)):
        assert _bad(cwd, 5, "memory", *args, "--provider", "chroma", "--user-id", "alice", hide=True) == \
            "praisonmem: error: Chroma support needs chromadb: pip install 'praisonmem[chroma]'\n"


def test_a_user_id_the_library_refuses_is_a_usage_error(tmp_path):
    assert _bad(tmp_path, 2, "memory", "list", "--provider", "chroma", "--user-id", "../x") == \
        "praisonmem: error: user id '../x' must not contain path separators or '..' (the library refuses it too)\n"


def test_check_secrets_scans_chroma_documents_without_changing_them(project):
    cwd, got = project
    before = snapshot(cwd)
    proc = cs.run_praisonmem(cwd, "check", "--secrets", "--json")
    assert proc.returncode == 1, proc.stderr
    report = json.loads(proc.stdout)
    assert [(f["store"], f["file"], f["record"]) for f in report["findings"]] == [
        ("chroma", ".praisonai/chroma_db_alice", f"memory_store_alice/{got['alice'][0]}")]
    assert SECRET not in proc.stdout and report["unreadable"] == []
    assert report["scanned"]["memory_items"] == 3 + 1 + 2  # alice's, the shared store's, knowledge's
    assert snapshot(cwd) == before


def test_store_and_reset_are_refused_naming_why(tmp_path):
    assert _bad(tmp_path, 4, "memory", "store", "x", "--provider", "chroma") == (
        "praisonmem: error: provider 'chroma' cannot store: the library embeds each text with its own model, which "
        "praisonmem does not have (use 'memory import' with an export's embeddings); nothing changed\n")
    assert _bad(tmp_path, 4, "memory", "reset", "--all", "--provider", "rag", "--yes").startswith(
        "praisonmem: error: provider 'chroma' does not support resetting")


KILLED_DELETE = """
import sys, chromadb
from chromadb.config import Settings
c = chromadb.PersistentClient(path=sys.argv[1], settings=Settings(anonymized_telemetry=False))
col = c.get_collection("memory_store_alice", embedding_function=None)
col.modify(configuration={"hnsw": {"sync_threshold": 2}})
col.delete(ids=[sys.argv[2]])
col.count()
"""


def test_the_next_write_scrubs_what_a_delete_killed_before_its_vacuum_left(project, tmp_path):
    cwd, got = project
    a1, a2, a3 = got["alice"]
    store = cwd / ".praisonai" / "chroma_db_alice"
    # praisonmem's delete up to the point before VACUUM (as if killed there): the text is in free pages
    subprocess.run([sys.executable, "-c", KILLED_DELETE, str(store), a1], check=True, capture_output=True,
                   env=dict(os.environ, ANONYMIZED_TELEMETRY="False"))
    assert cs.files_holding(store, SECRET) == ["chroma.sqlite3"]
    out = tmp_path / "one.jsonl"
    assert cs.run_praisonmem(cwd, "memory", "export", "--provider", "chroma", "--user-id", "alice",
                             "-o", str(out)).returncode == 0
    proc = cs.run_praisonmem(cwd, "memory", "import", str(out), "--provider", "chroma", "--user-id", "alice",
                             "--on-conflict", "skip")
    assert (proc.returncode, proc.stdout) == (0, "imported 0 memory items into memory_store_alice "
                                                 "(.praisonai/chroma_db_alice) [2 already there, skipped]\n")
    # an import that adds nothing writes nothing, so the residue is still there; a delete finishes it
    assert cs.files_holding(store, SECRET) == ["chroma.sqlite3"]
    proc = cs.run_praisonmem(cwd, "memory", "delete", a2, "--provider", "chroma", "--user-id", "alice", "--yes")
    assert proc.returncode == 0, proc.stderr
    assert cs.files_holding(store, SECRET) == [] and cs.library_memory(cwd, "alice") == [
        [a3, "Alice drinks green tea every morning", {"user_id": "alice"}]]
