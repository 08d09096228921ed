"""``backup create/verify/restore`` over praisonaiagents' Chroma directories (``.praisonai/chroma_db_<user>``,
``.praisonai/knowledge/chroma``), the stores written by chromadb itself: a restored store reads back through
chromadb identical; a store another process holds open is left out (one warning, exit 1, the rest archived);
an archive whose Chroma part chromadb cannot open is refused by verify and restore, nothing written."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from tests.compat import chromastores as cs
from tests.compat import fakellm
from tests.conftest import REPO
from tests.helpers import snapshot

chromadb = pytest.importorskip("chromadb")

INCLUDE = ["documents", "metadatas", "embeddings"]
MEMORY = ".praisonai/chroma_db_alice"
KNOWLEDGE = ".praisonai/knowledge/chroma"


def _client(path: Path):
    return chromadb.PersistentClient(path=str(path))


def _close(client) -> None:
    client.close()
    type(client).clear_system_cache()


def _write(path: Path, collection: str, docs: list[tuple[str, str, dict]]) -> None:
    client = _client(path)
    try:
        col = client.get_or_create_collection(collection, embedding_function=fakellm.chroma_embedding_function(),
                                              metadata={"hnsw:space": "cosine"})
        col.add(ids=[d[0] for d in docs], documents=[d[1] for d in docs], metadatas=[d[2] for d in docs])
    finally:
        _close(client)


def _read(path: Path) -> dict:
    """Every collection's ``get(include=documents, metadatas, embeddings)``, embeddings as lists."""
    client = _client(path)
    try:
        out = {}
        for col in sorted(client.list_collections(), key=lambda c: c.name):
            got = client.get_collection(col.name, embedding_function=None).get(include=INCLUDE)
            out[col.name] = {"ids": got["ids"], "documents": got["documents"], "metadatas": got["metadatas"],
                             "embeddings": [list(map(float, e)) for e in got["embeddings"]]}
        return out
    finally:
        _close(client)


@pytest.fixture
def project(tmp_path):
    """A project dir with the rag Memory's store of alice, Knowledge's store and a FileMemory file."""
    cwd = tmp_path / "project"
    _write(cwd / MEMORY, "memory_store_alice", [
        ("m1", "Alice likes green tea", {"user_id": "alice", "rank": 3}),
        ("m2", "Alice lives in Lisbon", {"user_id": "alice", "ok": True, "weight": 0.5})])
    _write(cwd / KNOWLEDGE, "praisonai_knowledge", [("k1", "Lisbon is the capital of Portugal.", {"user_id": "bob"})])
    (tmp_path / "home").mkdir()
    (cwd / ".praisonai" / "memory").mkdir()
    (cwd / ".praisonai" / "memory" / "short_term.json").write_text("[]")
    return cwd


def _pm(cwd: Path, *args: str, hide_chromadb: bool = False) -> subprocess.CompletedProcess:
    return cs.run_praisonmem(cwd, "--home", str(cwd.parent / "home"), *args, hide_chromadb=hide_chromadb)


def _archive(cwd: Path) -> Path:
    [archive] = (cwd.parent / "out").iterdir()
    return archive


def _members(archive: Path) -> tuple[dict, dict[str, bytes]]:
    with tarfile.open(archive, "r:gz") as tar:
        manifest = json.load(tar.extractfile("manifest.json"))
        return manifest, {m.name: tar.extractfile(m).read() for m in tar if m.name != "manifest.json"}


def test_a_restored_chroma_store_reads_back_identical(project, tmp_path):
    want = {MEMORY: _read(project / MEMORY), KNOWLEDGE: _read(project / KNOWLEDGE)}
    made = _pm(project, "backup", "create", "-o", str(tmp_path / "out"), "--json")
    assert made.returncode == 0, made.stderr
    assert made.stderr == ""
    result = json.loads(made.stdout)
    assert result["not_backed_up"] == [] and result["left_out"] == []
    manifest, members = _members(_archive(project))
    assert manifest["include"] == ["sessions", "memory", "learn", "chroma"]
    assert manifest["chroma"] == [{"path": "project/chroma_db_alice/", "collections": {"memory_store_alice": 2}},
                                  {"path": "project/knowledge/chroma/", "collections": {"praisonai_knowledge": 1}}]
    assert "memory/short_term.json" in members
    for store in ("chroma_db_alice", "knowledge/chroma"):
        names = sorted(n.split("/")[-1] for n in members if n.startswith(f"project/{store}/"))
        assert names == ["chroma.sqlite3", "data_level0.bin", "header.bin", "length.bin", "link_lists.bin"]
    verified = _pm(project, "backup", "verify", str(_archive(project)))
    assert (verified.returncode, verified.stderr) == (0, "")
    # restored into an empty project: where the libraries open the stores
    empty = tmp_path / "elsewhere"
    empty.mkdir()
    restored = _pm(empty, "backup", "restore", str(_archive(project)), "--yes")
    assert restored.returncode == 0, restored.stderr
    assert {MEMORY: _read(empty / MEMORY), KNOWLEDGE: _read(empty / KNOWLEDGE)} == want
    # a second restore over them skips each whole store; nothing of theirs changes
    before = snapshot(empty / ".praisonai")
    again = _pm(empty, "backup", "restore", str(_archive(project)), "--yes", "--json")
    assert again.returncode == 0, again.stderr
    assert {c["action"] for c in json.loads(again.stdout)} == {"skipped"}
    assert snapshot(empty / ".praisonai") == before


def test_a_chroma_directory_reached_through_a_link_is_left_out_and_named(project, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "chroma.sqlite3").write_bytes(b"not read")
    (project / ".praisonai" / "chroma_db_bob").symlink_to(outside)
    made = _pm(project, "backup", "create", "-o", str(tmp_path / "out"), "-v")
    assert made.returncode == 0, made.stderr
    why = "a symbolic link; a Chroma directory is backed up only as the directory itself"
    assert f"praisonmem: not backed up: .praisonai/chroma_db_bob: {why}\n" in made.stderr
    manifest, members = _members(_archive(project))
    assert {"path": "project/chroma_db_bob/", "reason": why} in manifest["left_out"]
    assert not [n for n in members if "chroma_db_bob" in n]


def test_replace_puts_the_whole_store_back_never_merging(project, tmp_path):
    made = _pm(project, "backup", "create", "-o", str(tmp_path / "out"))
    assert made.returncode == 0, made.stderr
    want = _read(project / MEMORY)
    _write(project / MEMORY, "memory_store_alice", [("m3", "written after the backup", {"user_id": "alice"})])
    _write(project / MEMORY, "another", [("x", "a collection the backup does not have", {"a": 1})])
    replaced = _pm(project, "backup", "restore", str(_archive(project)), "--on-conflict", "replace", "--yes")
    assert replaced.returncode == 0, replaced.stderr
    assert _read(project / MEMORY) == want
    assert not [p for p in (project / ".praisonai").iterdir() if ".restore-" in p.name]


HOLD = """
import sys, chromadb
client = chromadb.PersistentClient(path=sys.argv[1])
client.list_collections()
print("ready", flush=True)
sys.stdin.read()
"""


def test_a_store_held_open_is_left_out_with_one_warning_and_exit_1(project, tmp_path):
    whole = _pm(project, "backup", "create", "-o", str(tmp_path / "whole.tar.gz"))
    assert whole.returncode == 0, whole.stderr
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(project / MEMORY)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True, env=dict(os.environ, ANONYMIZED_TELEMETRY="False"))
    try:
        assert holder.stdout.readline() == "ready\n"
        before = snapshot(project / MEMORY)  # as the holder left it: opening a store rewrites files
        made = _pm(project, "backup", "create", "-o", str(tmp_path / "out"))
        busy = _pm(project, "backup", "restore", str(tmp_path / "whole.tar.gz"), "--on-conflict", "replace", "--yes")
        after = snapshot(project / MEMORY)
    finally:
        holder.stdin.close()
        holder.wait(timeout=120)
    store = MEMORY  # as the project dir is named: relative, from the cwd
    assert made.returncode == 1
    assert made.stderr == (f"praisonmem: warning: not backed up: {store} is open in process {holder.pid} (a running "
                           "agent?); the rest of the backup is written\n")
    manifest, members = _members(_archive(project))
    assert not [n for n in members if n.startswith("project/chroma_db_alice/")]
    assert "project/knowledge/chroma/chroma.sqlite3" in members and "memory/short_term.json" in members
    assert manifest["chroma"] == [{"path": "project/knowledge/chroma/", "collections": {"praisonai_knowledge": 1}}]
    # a restore over a store another process has open is refused whole: not a file of it changed
    assert busy.returncode == 4
    assert after == before
    assert busy.stderr == (f"praisonmem: error: {store} is open in process {holder.pid} (a running agent?); stop it, "
                           "then restore (a Chroma directory is only put back while nobody has it open); nothing "
                           "written\n")


def _rebuilt(archive: Path, target: Path, change: dict[str, bytes]) -> Path:
    """``archive`` with the members of ``change`` replaced, the manifest's sizes and sha256 made to match."""
    manifest, members = _members(archive)
    members.update(change)
    for entry in manifest["files"]:
        data = members[entry["path"]]
        entry["size"], entry["sha256"] = len(data), hashlib.sha256(data).hexdigest()
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, data in [("manifest.json", json.dumps(manifest).encode()), *members.items()]:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    target.write_bytes(gzip.compress(buf.getvalue()))
    return target


def test_an_archive_whose_chroma_part_chromadb_cannot_open_is_refused(project, tmp_path):
    made = _pm(project, "backup", "create", "-o", str(tmp_path / "out"))
    assert made.returncode == 0, made.stderr
    bad = _rebuilt(_archive(project), tmp_path / "bad.tar.gz",
                   {"project/chroma_db_alice/chroma.sqlite3": b"SQLite format 3\x00" + b"\xff" * 4080})
    verified = _pm(tmp_path, "backup", "verify", str(bad))
    assert verified.returncode == 1
    lines = verified.stdout.splitlines()
    assert len(lines) == 2 and lines[1] == f"{bad}: FAILED (11 files)"
    assert lines[0].startswith("project/chroma_db_alice/: chromadb cannot open this Chroma directory (")
    empty = tmp_path / "elsewhere"
    empty.mkdir()
    restored = _pm(empty, "backup", "restore", str(bad), "--yes")
    assert restored.returncode == 4
    assert restored.stderr.startswith("praisonmem: error: 'project/chroma_db_alice/': chromadb cannot open this "
                                      "Chroma directory (")
    assert restored.stderr.endswith("; nothing written\n") and restored.stderr.count("\n") == 1
    assert list(empty.iterdir()) == []


def test_verify_without_chromadb_says_it_cannot_open_the_store(project, tmp_path):
    made = _pm(project, "backup", "create", "-o", str(tmp_path / "out"))
    assert made.returncode == 0, made.stderr
    verified = _pm(tmp_path, "backup", "verify", str(_archive(project)), hide_chromadb=True)
    assert verified.returncode == 1
    hint = "Chroma support needs chromadb: pip install 'praisonmem[chroma]'"
    assert verified.stdout.splitlines() == [
        f"project/chroma_db_alice/: cannot open this Chroma directory to check it: {hint}",
        f"project/knowledge/chroma/: cannot open this Chroma directory to check it: {hint}",
        f"{_archive(project)}: FAILED (11 files)"]


# ------------------------------------------------------------------ without chromadb (the [chroma] extra)

HINT = "Chroma support needs chromadb: pip install 'praisonmem[chroma]'"


def test_a_default_backup_without_chromadb_archives_the_chroma_stores(project, tmp_path):
    """praisonmem installed on its own (no [chroma] extra) beside an agent's venv that has chromadb: the stores
    need no chromadb to be copied, so the default backup takes them, checks each copy through SQLite, exits 0 and
    says so only with -v; the archive then verifies and restores with chromadb, reading back identical."""
    want = {MEMORY: _read(project / MEMORY), KNOWLEDGE: _read(project / KNOWLEDGE)}
    before = snapshot(project)
    made = _pm(project, "backup", "create", "-o", str(tmp_path / "out"), hide_chromadb=True)
    assert (made.returncode, made.stderr, made.stdout) == (0, "", "")
    assert snapshot(project) == before  # no file of a store changed, not an mtime
    manifest, members = _members(_archive(project))
    assert manifest["chroma"] == [
        {"path": "project/chroma_db_alice/", "collections": {"memory_store_alice": 2}, "opened": False},
        {"path": "project/knowledge/chroma/", "collections": {"praisonai_knowledge": 1}, "opened": False}]
    assert "left_out" not in manifest
    for store in ("chroma_db_alice", "knowledge/chroma"):
        names = sorted(n.split("/")[-1] for n in members if n.startswith(f"project/{store}/"))
        assert names == ["chroma.sqlite3", "data_level0.bin", "header.bin", "length.bin", "link_lists.bin"]
    verified = _pm(project, "backup", "verify", str(_archive(project)))  # chromadb there: opens each copy
    assert (verified.returncode, verified.stderr) == (0, ""), verified.stdout
    empty = tmp_path / "elsewhere"
    empty.mkdir()
    restored = _pm(empty, "backup", "restore", str(_archive(project)), "--yes")
    assert restored.returncode == 0, restored.stderr
    assert {MEMORY: _read(empty / MEMORY), KNOWLEDGE: _read(empty / KNOWLEDGE)} == want


def test_without_chromadb_verbose_and_json_say_which_stores_were_not_opened(project, tmp_path):
    told = _pm(project, "backup", "create", "-o", str(tmp_path / "out"), "-v", hide_chromadb=True)
    assert told.returncode == 0, told.stderr
    said = [line for line in told.stderr.splitlines() if line.startswith("praisonmem: archived")]
    assert said == [f"praisonmem: archived without chromadb (not installed), checked through SQLite only: {MEMORY}, "
                    f"{KNOWLEDGE}; 'backup verify' opens them once it is installed: pip install 'praisonmem[chroma]'"]
    made = _pm(project, "backup", "create", "-o", str(tmp_path / "out2"), "--json", hide_chromadb=True)
    assert (made.returncode, made.stderr) == (0, "")
    result = json.loads(made.stdout)
    assert result["chroma_not_opened"] == [{"path": "project/chroma_db_alice/", "file": MEMORY},
                                           {"path": "project/knowledge/chroma/", "file": KNOWLEDGE}]
    assert result["not_backed_up"] == [] and result["left_out"] == []


def test_with_chromadb_the_manifest_and_the_report_are_as_before(project, tmp_path):
    made = _pm(project, "backup", "create", "-o", str(tmp_path / "out"), "--json")
    assert (made.returncode, made.stderr) == (0, "")
    assert json.loads(made.stdout)["chroma_not_opened"] == []
    assert all("opened" not in e for e in _members(_archive(project))[0]["chroma"])


def test_without_chromadb_a_store_held_open_is_still_left_out(project, tmp_path):
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(project / MEMORY)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True, env=dict(os.environ, ANONYMIZED_TELEMETRY="False"))
    try:
        assert holder.stdout.readline() == "ready\n"
        made = _pm(project, "backup", "create", "-o", str(tmp_path / "out"), hide_chromadb=True)
    finally:
        holder.stdin.close()
        holder.wait(timeout=120)
    assert made.returncode == 1
    assert made.stderr == (f"praisonmem: warning: not backed up: {MEMORY} is open in process {holder.pid} (a running "
                           "agent?); the rest of the backup is written\n")
    manifest, members = _members(_archive(project))
    assert not [n for n in members if n.startswith("project/chroma_db_alice/")]
    assert manifest["chroma"] == [{"path": "project/knowledge/chroma/", "collections": {"praisonai_knowledge": 1},
                                   "opened": False}]


def test_without_chromadb_a_damaged_store_is_left_out_with_one_line(project, tmp_path):
    """SQLite's own check stands in for chromadb's: a chroma.sqlite3 whose pages are damaged is not archived."""
    db = project / MEMORY / "chroma.sqlite3"
    data = bytearray(db.read_bytes())
    page = int.from_bytes(data[16:18], "big")
    data[page * 2: page * 3] = b"\xff" * page  # the second page (a table's b-tree) overwritten
    db.write_bytes(bytes(data))
    made = _pm(project, "backup", "create", "-o", str(tmp_path / "out"), hide_chromadb=True)
    assert made.returncode == 1
    assert made.stderr == (f"praisonmem: warning: not backed up: {MEMORY}/chroma.sqlite3: SQLite finds it damaged "
                           "(Page 3: btreeInitPage() returns error code 11); the rest of the backup is written\n")
    manifest, members = _members(_archive(project))
    assert not [n for n in members if n.startswith("project/chroma_db_alice/")]
    assert [e["path"] for e in manifest["chroma"]] == ["project/knowledge/chroma/"]
