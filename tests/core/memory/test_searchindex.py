"""``memory search`` from the cached indexes gives exactly what reading every file gives, whatever happened
to the files or to the cache in between."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from praisonmem.core.io import cache as cachemod
from praisonmem.core.io.cache import Cache
from praisonmem.core.memory import filememory_io
from praisonmem.core.memory import search as searchindex
from praisonmem.core.memory.filememory import FileMemoryStore, local_dates

OLD_NS = 1_700_000_000_000_000_000
WORDS = ["dark", "mode", "Dark", "MODE", "café", "日本", "tea", "green", "x", "the", "a", "İstanbul", "ß", "ǅ",
         "naïve", "mode\u2028dark", "tab\tbed", "nbsp\u00a0sp", "\x1f", "ｄａｒｋ", '"quoted"', "back\\slash"]


def write(path: Path, doc, *, indent: int | None = 2) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=indent, ensure_ascii=False), encoding="utf-8")


def item(n: int, content: str, importance=0.5, **extra) -> dict:
    return {"id": f"id{n:04}", "content": content, "metadata": {}, "created_at": 1.0 + n, "updated_at": 1.0 + n,
            "access_count": 0, "importance": importance, **extra}


def user(tmp_path: Path, short, long, entities, episodes) -> FileMemoryStore:
    store = FileMemoryStore(tmp_path / "memory", "u", cache=Cache(tmp_path / "cache"))
    write(store.path("short_term.json"), short)
    write(store.path("long_term.json"), long)
    write(store.path("entities.json"), entities)
    for date, items in zip(local_dates(7), episodes):
        write(store.episodic_dir / f"{date}.json", items)
    return store


def age(store: FileMemoryStore) -> None:
    """Old mtimes (the ctime stays now: the tests shrink the granularity instead of waiting)."""
    for path in store.user_dir.rglob("*.json"):
        os.utime(path, ns=(OLD_NS, OLD_NS))


@pytest.fixture
def no_wait(monkeypatch):
    monkeypatch.setattr(cachemod, "GRANULARITY_NS", 0)


def plain(store: FileMemoryStore, query: str, limit: int = 10**9):
    return searchindex.search_files(store, query, ["short_term", "long_term", "entity", "episodic"], limit)


def entries(store: FileMemoryStore) -> list[Path]:
    root = store.cache.directory / searchindex.KIND
    return sorted(root.iterdir()) if root.is_dir() else []


def sample_store(tmp_path: Path) -> FileMemoryStore:
    short = [item(i, t, imp) for i, (t, imp) in enumerate([("User prefers dark mode", 0.9), ("green tea", 0.5),
                                                          ("Mode: DARK", 1), ("café au lait", 0.7)])]
    long = [item(10 + i, t, imp) for i, (t, imp) in enumerate([("dark", 0.8), ("the mode of transport", 0.95),
                                                              ("nothing here", 0.3), ("日本 dark mode", 0.8)])]
    entities = {"e1": {"id": "e1", "name": "Dark Lord", "entity_type": "person", "attributes": {"mode": "dark"},
                       "relationships": [], "created_at": 1.0, "updated_at": 1.0},
                "e2": {"id": "e2", "name": "Tea", "entity_type": "thing", "attributes": {}, "relationships": [],
                       "created_at": 1.0, "updated_at": 1.0}}
    episodes = [[item(100, "dark mode today")], [], [item(101, "mode")]]
    store = user(tmp_path, short, long, entities, episodes)
    age(store)
    return store


QUERIES = ["dark mode", "DARK", "mode", "zebra", "", " ", "tea", "café", "日本 dark", "dark dark", "'mode'"]


@pytest.mark.parametrize("query", QUERIES)
def test_cold_and_warm_searches_equal_reading_every_file(tmp_path, no_wait, query):
    store = sample_store(tmp_path)
    expected = plain(store, query)
    assert searchindex.search(store, query, limit=10**9) == expected  # cold: indexes built and saved
    assert len(entries(store)) == 6  # short, long, entities, three episodic days
    assert searchindex.search(store, query, limit=10**9) == expected  # warm: scored from the entries
    for limit in (0, 1, 3):
        assert searchindex.search(store, query, limit=limit) == expected[:limit]


def test_a_warm_search_reads_only_the_items_it_shows(tmp_path, no_wait, monkeypatch):
    store = sample_store(tmp_path)
    searchindex.search(store, "dark")
    expected = plain(store, "dark")[:2]
    reads = []
    monkeypatch.setattr(filememory_io, "read_shared_stat", lambda *a: reads.append(a) or pytest.fail("full read"))
    real = filememory_io.read_ranges_shared
    monkeypatch.setattr(filememory_io, "read_ranges_shared",
                        lambda path, timeout, ranges: reads.append((path.name, len(ranges))) or real(path, timeout, ranges))
    assert searchindex.search(store, "dark", limit=2) == expected
    assert [h["type"] for h in expected] == ["short_term", "entity"]  # 1 x importance 1, then an entity's 1.0
    assert sorted(reads) == [("entities.json", 1), ("short_term.json", 1)]
    reads.clear()
    assert searchindex.search(store, "zebra") == []
    assert reads == []  # no hit: no file opened at all


def rewrite_same_size(path: Path, old: str, new: str) -> None:
    data = path.read_text(encoding="utf-8")
    assert len(old) == len(new) and old in data
    with open(path, "r+", encoding="utf-8") as handle:  # in place: same inode, as older releases write
        handle.write(data.replace(old, new))


def test_a_file_changed_in_the_same_tick_as_the_cache_was_built_is_not_trusted(tmp_path, monkeypatch):
    """On a file system with whole-second timestamps, a file rewritten in place within the second it was
    indexed keeps its key: only the racy rule keeps the stale index from being used."""
    store = sample_store(tmp_path)
    real_of = cachemod.FileKey.of

    def seconds(st):
        key = real_of(st)
        return key._replace(mtime_ns=key.mtime_ns // 10**9 * 10**9, ctime_ns=key.ctime_ns // 10**9 * 10**9)

    monkeypatch.setattr(cachemod.FileKey, "of", staticmethod(seconds))
    path = store.path("long_term.json")
    path.write_text(path.read_text(encoding="utf-8"), encoding="utf-8")  # changed just now
    assert searchindex.search(store, "transport") == plain(store, "transport")
    rewrite_same_size(path, "the mode of transport", "the mode of TRAINING!")
    assert searchindex.search(store, "transport") == plain(store, "transport") == []
    assert searchindex.search(store, "training") == plain(store, "training") != []


def test_a_file_replaced_by_one_of_the_same_size_and_mtime_is_read_again(tmp_path, no_wait, monkeypatch):
    store = sample_store(tmp_path)
    real_of = cachemod.FileKey.of
    monkeypatch.setattr(cachemod.FileKey, "of", staticmethod(
        lambda st: real_of(st)._replace(ctime_ns=real_of(st).ctime_ns // 10**9 * 10**9)))  # same-second ctime
    assert searchindex.search(store, "transport") != []
    path = store.path("long_term.json")
    new = tmp_path / "new.json"
    new.write_text(path.read_text(encoding="utf-8").replace("the mode of transport", "the mode of TRAINING!"),
                   encoding="utf-8")
    before = path.stat()
    os.utime(new, ns=(before.st_atime_ns, before.st_mtime_ns))
    os.replace(new, path)
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    assert after.st_ino != before.st_ino
    assert searchindex.search(store, "transport") == plain(store, "transport") == []
    assert searchindex.search(store, "training") == plain(store, "training") != []


def test_a_deleted_file_is_gone_from_the_results(tmp_path, no_wait):
    store = sample_store(tmp_path)
    assert any(h["type"] == "long_term" for h in searchindex.search(store, "dark"))
    store.path("long_term.json").unlink()
    (store.episodic_dir / f"{local_dates(1)[0]}.json").unlink()
    assert searchindex.search(store, "dark", limit=100) == plain(store, "dark")
    assert not any(h["type"] == "long_term" for h in searchindex.search(store, "dark", limit=100))


@pytest.mark.parametrize("damage", ["truncated", "other version", "garbage payload", "unwritable"])
def test_a_bad_or_unwritable_cache_gives_the_no_cache_output(tmp_path, no_wait, damage):
    store = sample_store(tmp_path)
    expected = plain(store, "dark mode")
    assert searchindex.search(store, "dark mode", limit=100) == expected
    for entry in entries(store):
        data = entry.read_bytes()
        if damage == "truncated":
            entry.write_bytes(data[: len(data) // 2])
        elif damage == "other version":
            end = data.index(b"\n", len(cachemod.MAGIC))
            header = json.loads(data[len(cachemod.MAGIC):end])
            header["version"] += 1
            entry.write_bytes(cachemod.MAGIC + json.dumps(header).encode() + data[end:])
    if damage == "garbage payload":  # a header that checks out over a payload that is not an index
        for entry in entries(store):
            path = Path(json.loads(entry.read_bytes().split(b"\n")[1])["source"])
            key = cachemod.key_of(path)
            store.cache.save(searchindex.KIND, searchindex.VERSION, path, b"\x05\x00\x00\x00{bad}", key=key,
                             snapshot_ns=key.ctime_ns + 1)
    if damage == "unwritable":
        shutil.rmtree(store.cache.directory)
        store.cache.directory.write_text("not a directory")
    assert searchindex.search(store, "dark mode", limit=100) == expected
    if damage != "unwritable":
        assert searchindex.search(store, "dark mode", limit=100) == expected  # rebuilt entries are good again
        assert all(searchindex.load(store.cache, Path(json.loads(e.read_bytes().split(b"\n")[1])["source"]),
                                    cachemod.key_of(Path(json.loads(e.read_bytes().split(b"\n")[1])["source"])))
                   for e in entries(store))


def test_a_file_changed_between_scoring_and_reading_the_shown_items_is_searched_again(tmp_path, no_wait,
                                                                                     monkeypatch):
    store = sample_store(tmp_path)
    searchindex.search(store, "dark")
    path = store.path("long_term.json")

    real = filememory_io.read_ranges_shared

    def changed_meanwhile(p, timeout, ranges):  # the old bytes, but the file changed while they were read
        chunks, _ = real(p, timeout, ranges)
        rewrite_same_size(path, "日本 dark mode", "日本 DARK MODE")
        return chunks, None

    monkeypatch.setattr(filememory_io, "read_ranges_shared",
                        lambda p, t, r: changed_meanwhile(p, t, r) if p == path else real(p, t, r))
    hits = searchindex.search(store, "dark", limit=100)
    monkeypatch.undo()
    assert hits == plain(store, "dark")
    assert "日本 DARK MODE" in [h["item"].get("content") for h in hits]


def test_the_shown_items_are_read_under_the_files_shared_lock(tmp_path, no_wait):
    import fcntl

    from praisonmem.core.errors import LockTimeout

    store = sample_store(tmp_path)
    searchindex.search(store, "dark")
    store.timeout = 0.2
    with open(store.path("long_term.json"), "rb") as writer:
        fcntl.flock(writer, fcntl.LOCK_EX)  # an old release rewriting it in place holds this
        assert searchindex.search(store, "zebra") == []  # nothing to read: the index says no item can match
        with pytest.raises(LockTimeout):
            searchindex.search(store, "dark", limit=100)


def test_files_the_index_cannot_describe_are_searched_the_ordinary_way(tmp_path, no_wait):
    store = sample_store(tmp_path)
    write(store.path("short_term.json"), [item(1, "dark\x00mode", 0.5), item(2, "dark")], indent=None)
    write(store.path("long_term.json"), [item(3, "dark mode", 0.5)], indent=None)
    age(store)
    assert searchindex.search(store, "dark", limit=100) == plain(store, "dark", 100)
    assert searchindex.search(store, "dark", limit=100) == plain(store, "dark", 100)


@pytest.mark.parametrize("broken", ['[{"id": 1, "content": "dark"}', '{"a": 1}', '[{"id": 1, "content": 5}]',
                                    '[{"content": "dark", "id": 1, "importance": true}]', "\ufeff[]", "[1,]"])
def test_a_broken_file_fails_exactly_as_without_the_cache(tmp_path, no_wait, broken):
    from praisonmem.core.errors import CorruptFile

    store = sample_store(tmp_path)
    store.path("long_term.json").write_text(broken, encoding="utf-8")
    with pytest.raises(CorruptFile) as plain_error:
        plain(store, "dark")
    with pytest.raises(CorruptFile) as cached_error:
        searchindex.search(store, "dark")
    assert str(cached_error.value) == str(plain_error.value)
    assert entries(store) == sorted(e for e in entries(store) if "long" not in e.name)  # nothing cached for it


def test_duplicate_entity_keys_keep_the_first_place_and_the_last_value(tmp_path, no_wait):
    store = sample_store(tmp_path)
    store.path("entities.json").write_text(
        '{"a": {"name": "dark one", "attributes": {}, "created_at": 1}, "b": {"name": "dark two", "created_at": 2,'
        ' "updated_at": 2}, "a": {"name": "dark three", "attributes": {"k": "dark"}, "created_at": 3, "updated_at": 3}}', encoding="utf-8")
    age(store)
    assert searchindex.search(store, "dark", limit=100) == plain(store, "dark")
    assert searchindex.search(store, "dark", limit=100) == plain(store, "dark")


def test_writes_through_praisonmem_drop_the_entries_of_the_files_they_replace(tmp_path, no_wait):
    store = sample_store(tmp_path)
    searchindex.search(store, "dark")
    before = {e.name for e in entries(store)}
    deleted = store.delete("id0010")
    assert deleted["type"] == "long_term"
    assert len(entries(store)) == len(before) - 1  # the deleted text is no longer in the cache
    assert searchindex.search(store, "dark", limit=100) == plain(store, "dark")


texts = st.lists(st.sampled_from(WORDS), min_size=0, max_size=6).map(" ".join)
importances = st.one_of(st.sampled_from([0.1, 0.5, 0.8, 1, 0, -0.5, 2]), st.floats(allow_nan=True))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(short=st.lists(st.tuples(texts, importances), max_size=12),
       long=st.lists(st.tuples(texts, importances), max_size=12),
       names=st.lists(st.tuples(texts, st.dictionaries(texts, texts, max_size=2)), max_size=6),
       episodes=st.lists(st.lists(texts, max_size=4), max_size=3),
       queries=st.lists(st.one_of(texts, st.sampled_from(["", " ", "\u00a0", "dark  mode", "DARK MODE"])),
                        min_size=1, max_size=4),
       limit=st.sampled_from([1, 3, 10, 10**9]), indent=st.sampled_from([2, None]))
def test_random_corpora_search_identically(tmp_path_factory, monkeypatch, short, long, names, episodes, queries,
                                           limit, indent):
    monkeypatch.setattr(cachemod, "GRANULARITY_NS", 0)
    root = tmp_path_factory.mktemp("corpus")
    store = FileMemoryStore(root / "memory", "u", cache=Cache(root / "cache"))
    write(store.path("short_term.json"), [item(i, t, imp) for i, (t, imp) in enumerate(short)], indent=indent)
    write(store.path("long_term.json"), [item(100 + i, t, imp) for i, (t, imp) in enumerate(long)], indent=indent)
    write(store.path("entities.json"), {f"k{i}": {"id": f"k{i}", "name": n, "entity_type": "t", "attributes": a,
                                                  "relationships": [], "created_at": 1.0, "updated_at": 2.0} for i, (n, a) in enumerate(names)},
          indent=indent)
    for date, items in zip(local_dates(7), episodes):
        write(store.episodic_dir / f"{date}.json", [item(200 + i, t) for i, t in enumerate(items)], indent=indent)
    age(store)
    for query in queries:
        expected = json.dumps(plain(store, query, limit))  # NaN scores: compare the bytes the CLI prints
        assert json.dumps(searchindex.search(store, query, limit=limit)) == expected  # cold
        assert json.dumps(searchindex.search(store, query, limit=limit)) == expected  # warm
