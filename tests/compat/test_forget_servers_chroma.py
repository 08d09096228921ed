"""``forget`` on Chroma memory written by praisonaiagents 1.7.17's rag ``Memory`` (oracle venv, offline, fakellm's
embeddings), found by ``locate``'s walk: alice's own collection is emptied and her items in the shared collection
go, the library then reads bob's memories unchanged and nothing of alice's, and no file of the store holds her
texts."""

from __future__ import annotations

from pathlib import Path

import pytest

from praisonmem.core.forget.chroma import ChromaMemory, forget_stores
from praisonmem.core.forget.model import Subject, SubjectKind, Where
from praisonmem.core.locate.model import Report
from praisonmem.core.locate.walk import Context, walk
from tests.compat import chromastores as cs
from tests.oracles import oracle_json, require_oracle_packages

pytestmark = pytest.mark.oracle

WRITE = cs.PRELUDE + """
from praisonaiagents.memory.memory import Memory
ids = {}
for user, texts in (("alice", ["Alice keeps a spare key under the blue pot", "Alice is allergic to peanuts"]),
                    ("bob", ["Bob keeps his bicycle in the basement", "Bob is learning Portuguese"])):
    m = Memory(config={"provider": "rag", "user_id": user})
    ids[user] = [m.store_long_term(t, metadata={"user_id": user}) for t in texts]
shared = Memory(config={"provider": "rag"})
ids["shared"] = [shared.store_long_term("Alice asked the team about parking permits", metadata={"user_id": "alice"}),
                 shared.store_long_term("Bob asked the team about the holiday rota", metadata={"user_id": "bob"})]
print(json.dumps({"ids": ids, "outside": fakellm.OUTSIDE}))
"""

ALICE = ["Alice keeps a spare key under the blue pot", "Alice is allergic to peanuts",
         "Alice asked the team about parking permits"]


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    require_oracle_packages("chromadb", "litellm")
    root = tmp_path_factory.mktemp("forget-chroma")
    got = oracle_json(WRITE, cwd=root, timeout=600)
    assert got["outside"] == []
    return root, got["ids"]


@pytest.fixture
def project(written, tmp_path):
    root, ids = written
    return cs.copy_project(root, tmp_path / "project"), ids


def located(root: Path) -> tuple:
    report = Report()
    walk(str(root), 4, Context(report))
    return tuple(report.stores)


def test_forget_user_in_chroma_memory(project):
    cwd, ids = project
    bob_before = cs.library_memory(cwd, "bob")
    stores = forget_stores(Where(paths=None, located=located(cwd)))
    assert sorted((Path(s.path).name, s.collection) for s in stores) == [
        ("chroma_db", "memory_store"), ("chroma_db_alice", "memory_store_alice"), ("chroma_db_bob", "memory_store_bob")]
    plans = {s.collection: s.plan(Subject(SubjectKind.user, "alice")) for s in stores}
    assert [e.key for e in plans["memory_store_alice"].erasures] == [f"item:{i}" for i in ids["alice"]] + [
        "collection:memory_store_alice", "directory:chroma_db_alice"]  # her own, named after her: they go too
    assert [e.key for e in plans["memory_store"].erasures] == [f"item:{ids['shared'][0]}"]
    assert plans["memory_store_bob"].erasures == []
    assert all(p.unreachable is None and p.files for p in plans.values())
    assert sorted(t for p in plans.values() for e in p.erasures for t in e.texts) == sorted(ALICE)
    assert cs.files_holding(cwd, ALICE[0])  # there before
    bob_dir = {p: p.read_bytes() for p in (cwd / ".praisonai" / "chroma_db_bob").rglob("*") if p.is_file()}
    for store in stores:
        assert store.erase(plans[store.collection]) == len(plans[store.collection].erasures)
        assert store.residue(ALICE) == []  # files: the raw-byte scan's job
    assert not (cwd / ".praisonai" / "chroma_db_alice").exists()
    # bob's directory untouched, byte for byte (checked before the library opens it: opening rewrites files)
    assert {p: p.read_bytes() for p in (cwd / ".praisonai" / "chroma_db_bob").rglob("*") if p.is_file()} == bob_dir
    for text in ALICE:
        assert cs.files_holding(cwd, text) == [], text
    for store in stores:  # planned again: nothing; erased again: nothing changes (asked before the library reads:
        # reading makes her empty collection again)
        assert store.plan(Subject(SubjectKind.user, "alice")).erasures == []
        store.erase(plans[store.collection])
    assert cs.library_memory(cwd, "alice") == []
    assert cs.library_memory(cwd, "bob") == bob_before
    shared = cs.library_memory(cwd, "")
    assert [row[1] for row in shared] == ["Bob asked the team about the holiday rota"]
    assert cs.library_memory(cwd, "bob") == bob_before


def test_a_directory_chromadb_cannot_open_is_unreachable(tmp_path):
    broken = tmp_path / "chroma_db"
    broken.mkdir()
    (broken / "chroma.sqlite3").write_bytes(b"not a database at all")
    plan = ChromaMemory(broken, "memory_store").plan(Subject(SubjectKind.user, "alice"))
    assert plan.unreachable and plan.erasures == []
    assert (broken / "chroma.sqlite3").read_bytes() == b"not a database at all"


def test_a_rerun_after_a_kill_between_the_delete_and_the_vacuum_clears_the_free_pages(project, monkeypatch):
    """chromadb deleted the items, then the process died before SQLite's VACUUM: the texts are still in free
    pages. The rerun finds nothing left to delete and must still VACUUM."""
    from praisonmem.core.io import chroma as chroma_io

    cwd, ids = project
    [store] = [s for s in forget_stores(Where(paths=None, located=located(cwd))) if s.collection == "memory_store_alice"]
    plan = store.plan(Subject(SubjectKind.user, "alice"))
    vacuum = chroma_io.vacuum

    def killed(path):
        raise KeyboardInterrupt("killed before the VACUUM")

    monkeypatch.setattr(chroma_io, "vacuum", killed)
    with pytest.raises(KeyboardInterrupt):
        store.erase(plan)
    monkeypatch.setattr(chroma_io, "vacuum", vacuum)
    # chromadb has deleted the items; the emptied collection of hers is still planned to go
    assert [e.key for e in store.plan(Subject(SubjectKind.user, "alice")).erasures] == [
        "collection:memory_store_alice", "directory:chroma_db_alice"]
    assert cs.files_holding(cwd, ALICE[0])  # but the bytes are still there
    assert store.erase(plan) == 4
    assert not (cwd / ".praisonai" / "chroma_db_alice").exists()
    assert cs.files_holding(cwd, ALICE[0]) == [] and cs.files_holding(cwd, ALICE[1]) == []


def test_her_directory_stays_while_it_holds_another_collection(tmp_path):
    """Her own collection goes; the directory named after her stays when anything else lives in it."""
    import chromadb

    from praisonmem.core.io import chroma as chroma_io

    path = tmp_path / ".praisonai" / "chroma_db_alice"
    client = chromadb.PersistentClient(path=str(path))
    client.get_or_create_collection("memory_store_alice", embedding_function=None).add(
        ids=["m1"], documents=["Alice hides the spare key in the shed"], embeddings=[[0.1, 0.2]],
        metadatas=[{"user_id": "alice"}])
    client.get_or_create_collection("notes", embedding_function=None)  # empty, but not hers to remove
    chroma_io._close(client)
    store = ChromaMemory(path, "memory_store_alice")
    plan = store.plan(Subject(SubjectKind.user, "alice"))
    assert [e.key for e in plan.erasures] == ["item:m1", "collection:memory_store_alice"]
    assert store.erase(plan) == 2
    with chroma_io.snapshot(path) as copy:
        assert chroma_io.names(copy) == ["notes"]
    assert chroma_io.residue(path, ["Alice hides the spare key in the shed", "memory_store_alice"]) is None


def shared_store(cwd: Path) -> ChromaMemory:
    [store] = [s for s in forget_stores(Where(paths=None, located=located(cwd))) if s.collection == "memory_store"]
    return store


def test_no_file_of_the_shared_collection_keeps_her_item_id(project):
    """chromadb's write-ahead log keeps its last entry to number the next one; a delete's last entry is the
    deleted id. The id is gone from every file after the forget, and bob's item is still read by the library."""
    cwd, ids = project
    [her] = [i for i in ids["shared"] if i != ids["shared"][1]]
    assert cs.files_holding(cwd, her)  # there before
    store = shared_store(cwd)
    plan = store.plan(Subject(SubjectKind.user, "alice"))
    assert store.erase(plan) == 1
    assert cs.files_holding(cwd, her) == []
    assert [row[1] for row in cs.library_memory(cwd, "")] == ["Bob asked the team about the holiday rota"]


def test_a_rerun_after_a_kill_before_the_log_is_moved_on_clears_her_id(project, monkeypatch):
    """Killed after chromadb's delete and before the log moved past it: the rerun finds no item to delete, sees
    her id still in the log, and finishes the scrub."""
    from praisonmem.core.io import chroma as chroma_io

    cwd, ids = project
    her = ids["shared"][0]
    store = shared_store(cwd)
    plan = store.plan(Subject(SubjectKind.user, "alice"))
    advance = chroma_io.advance_log

    def killed(*_args):
        raise KeyboardInterrupt("killed before the log moved on")

    monkeypatch.setattr(chroma_io, "advance_log", killed)
    with pytest.raises(KeyboardInterrupt):
        store.erase(plan)
    monkeypatch.setattr(chroma_io, "advance_log", advance)
    assert store.plan(Subject(SubjectKind.user, "alice")).erasures == []  # the item went
    assert cs.files_holding(cwd, her)  # but the log still names it
    store.erase(plan)
    assert cs.files_holding(cwd, her) == []
    assert [row[1] for row in cs.library_memory(cwd, "")] == ["Bob asked the team about the holiday rota"]


def test_a_rerun_after_a_kill_between_the_drop_and_the_directory_removal_removes_her_directory(project, monkeypatch):
    """Killed after chromadb dropped her collection and before her emptied ``chroma_db_alice`` went: locate
    still sees that directory (an empty Chroma store named after her), so the rerun's fresh plan removes it."""
    from praisonmem.core.io import chroma as chroma_io

    cwd, _ids = project
    mine = cwd / ".praisonai" / "chroma_db_alice"
    [store] = [s for s in forget_stores(Where(paths=None, located=located(cwd))) if s.collection == "memory_store_alice"]
    remove = chroma_io.remove_empty_store

    def killed(path):
        raise KeyboardInterrupt("killed before the directory went")

    monkeypatch.setattr(chroma_io, "remove_empty_store", killed)
    with pytest.raises(KeyboardInterrupt):
        store.erase(store.plan(Subject(SubjectKind.user, "alice")))
    monkeypatch.setattr(chroma_io, "remove_empty_store", remove)
    assert mine.is_dir()
    again = [s for s in forget_stores(Where(paths=None, located=located(cwd))) if Path(s.path) == mine]
    assert [s.location for s in again] == [str(mine)]
    assert again[0].plan(Subject(SubjectKind.user, "bob")).erasures == []  # not bob's
    plan = again[0].plan(Subject(SubjectKind.user, "alice"))
    assert [e.key for e in plan.erasures] == ["directory:chroma_db_alice"]
    assert again[0].erase(plan) == 1
    assert not mine.exists()
    assert again[0].erase(plan) == 0  # a rerun: gone already


def test_an_empty_chroma_directory_of_another_name_is_not_hers(tmp_path):
    import chromadb

    other = tmp_path / ".praisonai" / "vectors_alice"
    client = chromadb.PersistentClient(path=str(other))
    client.get_or_create_collection("scratch", embedding_function=None)
    client.delete_collection("scratch")
    del client
    assert [s for s in forget_stores(Where(paths=None, located=located(tmp_path)))] == []
    assert other.is_dir()


def hnsw_dirs(path: Path) -> list[Path]:
    return sorted(h.parent for h in path.rglob("header.bin"))


def three_items(path: Path) -> None:
    """Three items added one by one, so bob's ``b1`` has the vector files' last slot."""
    import chromadb

    from praisonmem.core.io import chroma as chroma_io

    client = chromadb.PersistentClient(path=str(path))
    col = client.get_or_create_collection("memory_store", embedding_function=None)
    for item_id, vector, text, user in (
            ("a1", [0.1, 0.2, 0.3], "Alice keeps the boat key in a red tin", "alice"),
            ("b2", [0.2, 0.2, 0.2], "Bob parks on the third floor", "bob"),
            ("b1", [0.3, 0.2, 0.1], "Bob waters the plants on Fridays", "bob")):
        col.add(ids=[item_id], embeddings=[vector], documents=[text], metadatas=[{"user_id": user}])
    chroma_io._close(client)


def test_a_delete_zeroes_what_the_vector_files_hold_past_their_last_element(tmp_path):
    """hnswlib sizes its files for the capacity it allocated, and chromadb writes the unused slots from memory
    it never cleared (measured: they hold bytes of texts the process had read). Past the header's element
    count nothing is read, so the delete zeroes it: a text planted there is gone, the rest reads as before."""
    import struct

    from praisonmem.core.io import chroma as chroma_io

    path = tmp_path / "chroma_db"
    three_items(path)
    chroma_io.delete_ids(path, "memory_store", ["b2"])  # the first delete makes the vector segment's files
    [segment] = hnsw_dirs(path)
    _version, _offset, _capacity, count, size = struct.unpack_from("<IQQQQ", (segment / "header.bin").read_bytes())
    data = bytearray((segment / "data_level0.bin").read_bytes())
    assert len(data) > count * size  # the premise: room past the last element
    planted = b"Alice keeps the boat key in a red tin"
    data[count * size + 7:count * size + 7 + len(planted)] = planted
    (segment / "data_level0.bin").write_bytes(bytes(data))
    gone = chroma_io.delete_ids(path, "memory_store", ["a1"])
    assert [r["id"] for r in gone] == ["a1"]
    assert cs.files_holding(path, "Alice keeps the boat key") == []
    _v, _o, _c, count, size = struct.unpack_from("<IQQQQ", (segment / "header.bin").read_bytes())
    assert not any((segment / "data_level0.bin").read_bytes()[count * size:])
    assert not any((segment / "length.bin").read_bytes()[count * 4:])
    with chroma_io.snapshot(path) as copy:
        col = chroma_io.collection(copy, "memory_store", path)
        assert [(r["id"], [round(x, 6) for x in r["embedding"]]) for r in chroma_io.rows(col, embeddings=True)] == [
            ("b1", [0.3, 0.2, 0.1])]
        found = col.query(query_embeddings=[[0.3, 0.2, 0.1]], n_results=1, include=["distances"])
        assert found["ids"] == [["b1"]] and abs(found["distances"][0][0]) < 1e-6


def test_vector_files_whose_header_does_not_add_up_are_left_as_they_are(tmp_path):
    from praisonmem.core.io import chroma as chroma_io

    path = tmp_path / "chroma_db"
    three_items(path)
    chroma_io.delete_ids(path, "memory_store", ["b2"])
    [segment] = hnsw_dirs(path)
    data = (segment / "data_level0.bin").read_bytes()
    (segment / "header.bin").write_bytes((segment / "header.bin").read_bytes()[:60])  # torn
    chroma_io.vacuum(path)
    assert (segment / "data_level0.bin").read_bytes() == data
