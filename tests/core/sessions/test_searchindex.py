"""``session search``'s index (praisonmem's cache): the same result as a search that parses every file, cold and
warm, and never a stale record: a file changed in the tick it was read, replaced by a rename, torn, rewritten
with only its ctime telling, deleted or new; a torn or garbage entry is ignored and rebuilt."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from praisonmem.core.io import cache as cachemod
from praisonmem.core.io import parallel
from praisonmem.core.io.cache import Cache
from praisonmem.core.paths import resolve
from praisonmem.core.sessions import search as new
from praisonmem.core.sessions import searchindex
from praisonmem.core.sessions.stores import jsondir
from tests.core.sessions.test_search_equivalence import QUERIES, generated_home, old_search

LIMITS = (0, 1, 3, 20)


@pytest.fixture
def settle(monkeypatch):
    """Searches see every file as settled (the clock 10 s ahead), so their records are kept."""
    real = cachemod.now_ns
    monkeypatch.setattr(cachemod, "now_ns", lambda: real() + 10_000_000_000)


@pytest.fixture
def loads(monkeypatch):
    """The session files a search parses, in order."""
    seen: list[str] = []
    real = jsondir.load

    def load(path):
        seen.append(os.path.basename(path))
        return real(path)

    monkeypatch.setattr(jsondir, "load", load)
    return seen


def outcome(result: new.SearchResult) -> tuple:
    return (result.total, result.unreadable, result.opaque, result.opaque_sessions,
            json.dumps(result.hits, ensure_ascii=False))


def check_same(paths, cache: Cache, query: str, limit: int, store: str | None = None) -> new.SearchResult:
    want = new.search(paths, query, limit=limit, store=store)  # no cache: every file parsed
    got = searchindex.search(paths, query, limit=limit, store=store, cache=cache)
    assert outcome(got) == outcome(want), (query, limit, store)
    return got


def write(path: Path, doc: dict) -> None:
    path.write_text(json.dumps(doc, indent=2), encoding="utf-8")


def session(sid: str, *texts: str, updated: str = "2026-01-01T00:00:00") -> dict:
    return {"session_id": sid, "updated_at": updated, "messages": [{"role": "user", "content": t} for t in texts]}


def entry_file(cache: Cache, directory: Path) -> Path:
    path = cache.entry_path(searchindex.KIND, str(directory))
    assert path is not None
    return path


# ---------------------------------------------------------------- the same results


@pytest.mark.parametrize("pool", [False, True], ids=["serial", "pool"])
def test_a_generated_home_gives_the_same_results_cold_and_warm(tmp_path, monkeypatch, settle, pool):
    home = generated_home(tmp_path / "home", 300, seed=13)
    if pool:
        monkeypatch.setattr(parallel, "MIN_ITEMS", 1)
        monkeypatch.setattr(parallel, "workers_for", lambda count: 2)
        monkeypatch.setattr(parallel, "CHUNKS_PER_WORKER", 20)
    paths = resolve(home, env={})
    for n, query in enumerate(QUERIES):
        cache = Cache(tmp_path / f"cache-{n}")
        for limit in (0, 3) if pool else LIMITS:
            cold = check_same(paths, cache, query, limit)  # the first is cold, the others warm
            assert entry_file(cache, home / "sessions").exists()
            warm = check_same(paths, cache, query, limit)
            assert outcome(warm) == outcome(cold)
        oracle = old_search(paths, query, limit=0)  # and the search as it was before any of this
        assert (cold.total, cold.unreadable) == (oracle.total, oracle.unreadable)
        assert searchindex.search(paths, query, limit=0, cache=cache).hits == oracle.hits


def test_the_fixture_homes_give_the_same_results_cold_and_warm(tmp_path, fixture_home, gateway_home, settle):
    for home in (fixture_home, gateway_home.home):
        paths = resolve(home, env={})
        cache = Cache(tmp_path / f"cache-{home.parent.name}")
        for query in ("hello", "the", "a", "paris", "session", "alfama", "e", "zzz", "weather paris"):
            for limit in (0, 2, 20):
                for _ in ("cold", "warm"):
                    check_same(paths, cache, query, limit)
                for store in ("json", "unified", "sessions.db"):
                    try:
                        check_same(paths, cache, query, limit, store=store)
                    except Exception as exc:  # a store the home does not have: the same error both ways
                        with pytest.raises(type(exc)):
                            new.search(paths, query, limit=limit, store=store)


def hostile_home(root: Path) -> Path:
    """Session files an index could get wrong: control and bidi characters, NUL, lone surrogates, final sigma,
    Kelvin and dotted I, encrypted contents, a gateway snapshot, no texts, odd types, unreadable files, a link,
    a link loop, a named pipe, a directory named like a session, a REPL/TUI file beside them."""
    sessions = root / "sessions"
    sessions.mkdir(parents=True)
    texts = ["\x1b[31mred paris\x1b[0m", "\u202eparis weather", "nul\x00paris", "ΣΑΣ paris", "\u212aelvin",
             "İstanbul paris", "paris\u2028weather", "a\tparis\nweather", "   ", "PARIS WEATHER paris weather"]
    for i, text in enumerate(texts):
        write(sessions / f"h{i:02d}.json", session(f"h{i:02d}", text, "weather", updated=f"2026-01-0{1 + i % 3}"))
    (sessions / "surrogate.json").write_text('{"session_id": "surrogate", "messages": [{"role": "user", '
                                             '"content": "paris \\ud800 weather"}]}', encoding="utf-8")
    write(sessions / "enc.json", session("enc", "praisonai:enc:v1:abc", "paris in clear"))
    write(sessions / "gw.json", {"session_id": "gw", "messages": [
        {"role": "system", "content": "Session initialized", "metadata": {"session_data": {
            "agent_id": "agent", "messages": [{"message_id": "m1", "sender_id": "u1", "content": "paris weather",
                                               "timestamp": 1}]}}}]})
    write(sessions / "empty.json", {"session_id": "empty", "messages": []})
    write(sessions / "odd.json", {"session_id": "odd", "messages": [None, 3, {"content": 5}, {"content": ["paris"]}],
                                  "updated_at": 7})
    (sessions / "torn.json").write_text('{"session_id": "torn", "messages": [{"content": "paris', encoding="utf-8")
    (sessions / "list.json").write_text("[1, 2]", encoding="utf-8")
    os.symlink("h01.json", sessions / "link.json")
    os.symlink("loop.json", sessions / "loop.json")
    os.mkfifo(sessions / "fifo.json")
    (sessions / "dir.json").mkdir()
    write(sessions / "tui.json", {"session_id": "tui", "created_at": "2026-01-01T00:00:00",
                                  "updated_at": "2026-01-01T00:00:00", "current_model": "m", "workspace": "/w",
                                  "messages": [{"role": "user", "content": "paris"}]})
    return root


def test_a_hostile_home_gives_the_same_results_cold_and_warm(tmp_path, settle):
    home = hostile_home(tmp_path / "home")
    paths = resolve(home, env={})
    cache = Cache(tmp_path / "cache")
    for query in ("paris", "paris weather", "weather", "σ", "k", "i", "\u0307", "red", "zzz", "\x00", "enc"):
        for limit in LIMITS:
            for _ in ("cold", "warm"):
                got = check_same(paths, cache, query, limit)
    assert got.unreadable  # the torn and odd files are reported every time
    assert {h["store"] for h in searchindex.search(paths, "paris", limit=0, cache=cache).hits} == {"json", "unified"}
    kept = json.loads(entry_file(cache, home / "sessions").read_bytes().split(b"\n", 2)[2][1:])
    # what the index cannot describe exactly is not kept: unreadable, encrypted, gateway, another store's files
    assert {"enc.json", "gw.json", "torn.json", "list.json", "tui.json", "fifo.json", "loop.json"}.isdisjoint(
        kept["names"])
    assert {"h00.json", "surrogate.json", "empty.json", "odd.json", "link.json"} <= set(kept["names"])


def test_the_command_prints_the_same_bytes_with_and_without_the_cache(tmp_path, cli, settle, monkeypatch):
    home = generated_home(tmp_path / "home", 120, seed=5)
    monkeypatch.setenv("PRAISONMEM_CACHE_DIR", str(tmp_path / "cache"))
    for query in ("paris weather", "zzz", "σ", "e"):
        for extra in ([], ["--json"], ["--limit", "0", "--json"], ["--limit", "3"], ["--ndjson"]):
            args = ["--home", home, "session", "search", query, *extra]
            plain = cli("--no-cache", *args)
            assert not (tmp_path / "cache").exists()  # --no-cache writes nothing
            for _ in ("cold", "warm"):
                indexed = cli(*args)
                assert (indexed.exit_code, indexed.stdout, indexed.stderr) == (plain.exit_code, plain.stdout, plain.stderr)
            assert entry_file(Cache(tmp_path / "cache"), home / "sessions").exists()
            import shutil

            shutil.rmtree(tmp_path / "cache")


def test_config_cache_false_is_honoured(tmp_path, cli, config, monkeypatch):
    home = generated_home(tmp_path / "home", 10, seed=5)
    monkeypatch.setenv("PRAISONMEM_CACHE_DIR", str(tmp_path / "cache"))
    config.write_text("cache = false\n", encoding="utf-8")
    assert cli("--home", home, "session", "search", "paris").exit_code == 0
    assert not (tmp_path / "cache").exists()


# ---------------------------------------------------------------- warm work


def test_a_warm_search_parses_only_the_files_that_can_show_a_hit(tmp_path, settle, loads):
    sessions = tmp_path / "home" / "sessions"
    sessions.mkdir(parents=True)
    for i in range(50):
        write(sessions / f"s{i:02d}.json", session(f"s{i:02d}", "paris weather", "lisbon", updated=f"2026-02-{1 + i % 28:02d}"))
    (sessions / "torn.json").write_text("{", encoding="utf-8")
    paths = resolve(tmp_path / "home", env={})
    cache = Cache(tmp_path / "cache")
    check_same(paths, cache, "zzz", 20)  # cold: every file read, the index kept
    loads.clear()
    assert searchindex.search(paths, "zzz", cache=cache).total == 0
    assert loads == ["torn.json"]  # an unreadable file is read every time, to be reported
    loads.clear()
    got = check_same(paths, cache, "paris weather", 2)
    assert got.total == 50 and [h["updated_at"] for h in got.hits] == ["2026-02-28", "2026-02-27"]
    assert len(loads) - 51 < 10 and "torn.json" in loads[:3]  # warm: the newest few, not all 50
    loads.clear()
    got = searchindex.search(paths, "paris weather", limit=0, cache=cache)
    assert got.total == 50 and len(loads) == 51  # --limit 0 shows every hit: every file with one is parsed


def test_the_index_is_at_most_half_the_size_of_the_sessions(tmp_path, settle):
    import random

    sessions = tmp_path / "home" / "sessions"
    sessions.mkdir(parents=True)
    rng = random.Random(1)
    words = "weather hotel lisbon paris agent memory session tool answer question café 日本".split()
    size = 0
    for i in range(200):  # the benchmark's sessions: 20 messages of 5 to 40 words
        doc = {"session_id": f"b{i}", "updated_at": "2026-01-01T00:00:00", "messages": [
            {"role": "user", "content": " ".join(rng.choice(words) for _ in range(rng.randint(5, 40))),
             "timestamp": 1.0, "metadata": {}} for _ in range(20)]}
        path = sessions / f"b{i:03d}.json"
        path.write_text(json.dumps(doc, indent=2, ensure_ascii=False), encoding="utf-8")
        size += path.stat().st_size
    cache = Cache(tmp_path / "cache")
    searchindex.search(resolve(tmp_path / "home", env={}), "zebra", cache=cache)
    assert entry_file(cache, sessions).stat().st_size <= size / 2


# ---------------------------------------------------------------- stale records never used


@pytest.fixture
def small(tmp_path):
    sessions = tmp_path / "home" / "sessions"
    sessions.mkdir(parents=True)
    write(sessions / "a.json", session("a", "alpha beta"))
    write(sessions / "b.json", session("b", "gamma"))
    return resolve(tmp_path / "home", env={}), sessions / "a.json", Cache(tmp_path / "cache")


def hits_of(paths, cache, query):
    got = searchindex.search(paths, query, limit=0, cache=cache)
    return [h["session_id"] for h in got.hits], [os.path.basename(f) for f, _ in got.unreadable]


def test_a_file_changed_in_the_tick_it_was_read_is_not_trusted(small, monkeypatch):
    """The search reads the old bytes, then the file changes within the same timestamp tick (same key):
    the record of the old bytes must not be kept."""
    paths, a, cache = small
    write(a, session("a", "zebra beta"))  # what is on disk now (as long as "alpha beta")
    real = jsondir.load
    monkeypatch.setattr(jsondir, "load", lambda p: session("a", "alpha beta") if p == str(a) else real(p))
    assert hits_of(paths, cache, "zebra") == ([], [])  # what the search read then
    monkeypatch.setattr(jsondir, "load", real)
    assert hits_of(paths, cache, "zebra") == (["a"], [])


def keep_index(paths, cache):
    """One search that keeps every file's record (the files settled), and proof that it did."""
    real = cachemod.now_ns
    cachemod.now_ns = lambda: real() + 10_000_000_000
    try:
        searchindex.search(paths, "x", cache=cache)
    finally:
        cachemod.now_ns = real
    kept = searchindex.recalled(searchindex.memo(cache), str(paths.sessions_dir))
    assert kept["names"] == ["a.json", "b.json"]


def test_a_file_replaced_by_a_rename_is_read_again(small):
    paths, a, cache = small
    replacement = a.with_name("new.tmp")
    write(replacement, session("a", "zebra beta"))
    keep_index(paths, cache)
    st = a.stat()
    os.utime(replacement, ns=(st.st_atime_ns, st.st_mtime_ns))  # same size, same mtime: another inode
    os.replace(replacement, a)
    assert hits_of(paths, cache, "zebra") == (["a"], [])


def test_a_rewrite_that_only_its_ctime_tells_is_read_again(small):
    paths, a, cache = small
    keep_index(paths, cache)
    st = a.stat()
    data = a.read_bytes().replace(b"alpha", b"zebra")
    with open(a, "r+b") as handle:  # in place: same inode, same size
        handle.write(data)
    os.utime(a, ns=(st.st_atime_ns, st.st_mtime_ns))  # and the mtime put back: only the ctime moved
    assert (a.stat().st_ino, a.stat().st_size, a.stat().st_mtime_ns) == (st.st_ino, st.st_size, st.st_mtime_ns)
    assert hits_of(paths, cache, "zebra") == (["a"], [])


def test_a_torn_file_is_reported(small):
    paths, a, cache = small
    keep_index(paths, cache)
    st = a.stat()
    with open(a, "r+b") as handle:
        handle.truncate(st.st_size // 2)
    os.utime(a, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert hits_of(paths, cache, "zebra") == ([], ["a.json"])  # reported, whatever the query


def test_a_deleted_file_is_gone_from_the_results(small):
    paths, a, cache = small
    keep_index(paths, cache)
    a.unlink()
    got = searchindex.search(paths, "alpha", limit=0, cache=cache)
    assert (got.total, got.hits, got.unreadable) == (0, [], [])


def test_a_new_file_is_found(small):
    paths, a, cache = small
    keep_index(paths, cache)
    write(a.with_name("c.json"), session("c", "alpha"))
    assert hits_of(paths, cache, "alpha") == (["a", "c"], [])


def test_a_torn_entry_is_ignored_and_rebuilt(small, loads):
    paths, a, cache = small
    keep_index(paths, cache)
    entry = entry_file(cache, paths.sessions_dir)
    entry.write_bytes(entry.read_bytes()[:-10])  # a crash while writing it, say
    os.chmod(entry, 0o600)
    write(a, session("a", "zebra beta"))  # and the file changed since
    loads.clear()
    assert hits_of(paths, cache, "zebra") == (["a"], []) and sorted(loads)[:2] == ["a.json", "a.json"]


@pytest.mark.parametrize("garbage", [
    {"names": ["a.json", "b.json"], "keys": "x", "when": [], "words": [], "masks": []},
    "lengths",
    "types",
    "masks",
], ids=["not-columns", "lengths", "types", "masks"])
def test_a_garbage_entry_is_ignored(small, garbage):
    """An entry of ours whose columns do not hold together (a bug, another version's layout) is never trusted:
    its files are read."""
    paths, a, cache = small
    keep_index(paths, cache)
    memo = searchindex.memo(cache)
    kept = searchindex.recalled(memo, str(paths.sessions_dir))
    write(a, session("a", "zebra beta"))
    st = a.stat()
    key = [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]
    kept["keys"][0] = key  # the entry claims to describe the file as it is now
    if garbage == "lengths":
        kept["when"].pop()
    elif garbage == "types":
        kept["words"][0] = ["alpha", "beta"]
    elif garbage == "masks":
        kept["words"][0], kept["masks"][0] = "alpha beta zebraa", "1 1"
    elif isinstance(garbage, dict):
        kept = garbage
    memo.keep(str(paths.sessions_dir), kept, cachemod.now_ns() + 10_000_000_000)
    assert hits_of(paths, cache, "zebra") == (["a"], [])


# ---------------------------------------------------------------- nothing else changes


def tree(root: Path) -> dict:
    return {str(p): (p.lstat().st_mtime_ns, p.read_bytes() if p.is_file() and not p.is_symlink() else None)
            for p in sorted(root.rglob("*")) if not p.is_fifo()}


def test_searching_changes_nothing_in_the_home(tmp_path, settle, fixture_home):
    generated_home(fixture_home, 40, seed=3)
    before = tree(fixture_home)
    cache = Cache(tmp_path / "cache")
    for _ in ("cold", "warm"):
        searchindex.search(resolve(fixture_home, env={}), "paris", cache=cache)
    assert tree(fixture_home) == before
    entry = entry_file(cache, fixture_home / "sessions")
    assert entry.stat().st_mode & 0o777 == 0o600 and entry.parent.stat().st_mode & 0o777 == 0o700


def test_a_cache_that_cannot_be_written_leaves_search_working(tmp_path, small):
    paths, a, _ = small
    (tmp_path / "blocked").write_text("a file where the cache dir would be")
    cache = Cache(tmp_path / "blocked" / "cache")
    for _ in ("cold", "warm"):
        assert hits_of(paths, cache, "alpha") == (["a"], [])
    assert (tmp_path / "blocked").is_file()


def test_a_change_by_praisonmem_drops_the_entry(tmp_path, cli, small, monkeypatch):
    paths, a, _ = small
    monkeypatch.setenv("PRAISONMEM_CACHE_DIR", str(tmp_path / "cache2"))
    cache = Cache(tmp_path / "cache2")
    keep_index(paths, cache)
    entry = entry_file(cache, paths.sessions_dir)
    assert entry.exists()
    assert cli("--home", paths.sessions_dir.parent, "session", "delete", "a", "--yes").exit_code == 0
    assert not entry.exists()  # the deleted session's words do not linger in the cache


def test_a_redaction_drops_the_entry(tmp_path, cli, small, monkeypatch):
    paths, a, _ = small
    write(a, session("a", "my key is sk-proj-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8S9t0U1v2W3x4"))
    monkeypatch.setenv("PRAISONMEM_CACHE_DIR", str(tmp_path / "cache2"))
    cache = Cache(tmp_path / "cache2")
    keep_index(paths, cache)
    entry = entry_file(cache, paths.sessions_dir)
    assert b"a1b2c3d4" in entry.read_bytes()  # the secret's word, lower-cased, is in the index
    assert cli("--home", paths.sessions_dir.parent, "session", "redact", "a", "--yes").exit_code == 0
    assert "a1b2c3d4" not in a.read_text() and not entry.exists()


# ---------------------------------------------------------------- an index built over several searches


@pytest.fixture
def share(monkeypatch):
    """A search builds a record for every 4th file the sieve rules out (every 4/3th it parses), none free."""
    monkeypatch.setattr(searchindex, "RATE", 0.5)
    monkeypatch.setattr(searchindex, "RECORD", 2.0)
    monkeypatch.setattr(searchindex, "FEW", 0)


@pytest.fixture
def reads(monkeypatch):
    """The session files a search reads (any way: parsed whole, or sieved and checked), by name."""
    from praisonmem.core.io import jsonfile

    seen: list[str] = []
    real = jsonfile.read_bytes

    def read_bytes(path, *args, **kwargs):
        if str(path).endswith(".json") and os.sep + "sessions" + os.sep in str(path):
            seen.append(os.path.basename(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(jsonfile, "read_bytes", read_bytes)
    return seen


def kept_names(paths, cache) -> list[str]:
    return searchindex.recalled(searchindex.memo(cache), str(paths.sessions_dir))["names"]


@pytest.mark.parametrize("pool", [False, True], ids=["serial", "pool"])
def test_a_partly_built_index_gives_the_same_results_as_no_index(tmp_path, monkeypatch, settle, pool):
    """Every search of a generated home (hostile contents, a torn and a wrong file) while its index is being built,
    a share per search: the same result as parsing every file, and the index grows until it is whole."""
    home = generated_home(tmp_path / "home", 120, seed=29)
    monkeypatch.setattr(searchindex, "RATE", 0.25)
    monkeypatch.setattr(searchindex, "RECORD", 3.0)
    monkeypatch.setattr(searchindex, "FEW", 1)
    if pool:
        monkeypatch.setattr(parallel, "MIN_ITEMS", 1)
        monkeypatch.setattr(parallel, "workers_for", lambda count: 2)
        monkeypatch.setattr(parallel, "CHUNKS_PER_WORKER", 5)
    paths = resolve(home, env={})
    cache = Cache(tmp_path / "cache")
    sizes = [0]
    for query in QUERIES if not pool else QUERIES[:6]:
        for limit in LIMITS:
            check_same(paths, cache, query, limit)
            sizes.append(len(kept_names(paths, cache)))
    assert sizes == sorted(sizes) and 0 < sizes[1] <= 1 + 122 * 0.25  # a search builds at most RATE per file
    assert len(set(sizes)) > 4  # over several searches
    describable = []
    for path in sorted((home / "sessions").glob("*.json")):
        try:
            describable += [path.name] if searchindex.record_of(jsondir.load(path)) is not None else []
        except Exception:  # a torn or wrong file: never described
            pass
    assert sizes[-1] == sizes[-2] == len(describable) > 60  # whole: every file the index can describe
    assert kept_names(paths, cache) == describable


def test_the_index_grows_by_its_share_and_then_a_search_parses_only_candidates(tmp_path, settle, share, reads):
    sessions = tmp_path / "home" / "sessions"
    sessions.mkdir(parents=True)
    for i in range(12):
        write(sessions / f"s{i:02d}.json", session(f"s{i:02d}", "paris weather" if i % 3 == 0 else "lisbon",
                                                   updated=f"2026-02-{1 + i:02d}"))
    paths = resolve(tmp_path / "home", env={})
    cache = Cache(tmp_path / "cache")
    grown: list[list[str]] = [[]]
    for _ in range(8):
        reads.clear()
        assert hits_of(paths, cache, "zzz") == ([], [])
        assert sorted(set(reads)) == [f"s{i:02d}.json" for i in range(12) if f"s{i:02d}.json" not in grown[-1]]
        grown.append(kept_names(paths, cache))
    sizes = [len(g) for g in grown]
    # 12 sieved files pay for 3 records; then 9 and the 3 indexed for 3 more, and so on
    assert sizes[:6] == [0, 3, 6, 9, 12, 12]
    assert sizes == sorted(sizes) and all(set(a) <= set(b) for a, b in zip(grown, grown[1:]))  # kept stays kept
    assert grown[1] == ["s00.json", "s04.json", "s08.json"]  # spread over the directory
    reads.clear()
    assert hits_of(paths, cache, "zzz") == ([], []) and reads == []  # whole: no file read at all
    got = searchindex.search(paths, "paris weather", limit=1, cache=cache)
    assert reads == ["s09.json", "s06.json", "s03.json", "s00.json"]  # the files with a hit (one batch), no other
    assert got.total == 4 and got.hits[0]["session_id"] == "s09"
    assert outcome(got) == outcome(new.search(paths, "paris weather", limit=1))


def test_a_partly_built_index_reports_a_torn_file_the_sieve_rules_out(tmp_path, settle, share):
    """A torn file holding no query word is reported whether or not its turn to get a record has come (it never
    gets one), and ties between files (same score, same updated_at) keep their order."""
    sessions = tmp_path / "home" / "sessions"
    sessions.mkdir(parents=True)
    for i in range(11):
        write(sessions / f"s{i:02d}.json", session(f"s{i:02d}", "alpha", "alpha beta", "beta alpha"))
    (sessions / "s05x.json").write_text('{"messages": [{"content": "gamma"', encoding="utf-8")
    paths = resolve(tmp_path / "home", env={})
    cache = Cache(tmp_path / "cache")
    for _ in range(5):
        for query, limit in (("alpha", 3), ("alpha", 5), ("beta", 2), ("zzz", 20), ("alpha beta", 4)):
            got = check_same(paths, cache, query, limit)
            assert [os.path.basename(f) for f, _ in got.unreadable] == ["s05x.json"]


def test_a_partly_built_index_shows_as_many_hits_as_the_limit(tmp_path, settle, share):
    """Files without a record count an older session's hits without keeping them only once ``limit`` better ones
    are kept: every search shows the newest ``limit`` full-query hits."""
    sessions = tmp_path / "home" / "sessions"
    sessions.mkdir(parents=True)
    for i in range(12):
        write(sessions / f"s{i:02d}.json", session(f"s{i:02d}", "alpha beta", "gamma", updated=f"2026-03-{1 + i:02d}"))
    paths = resolve(tmp_path / "home", env={})
    cache = Cache(tmp_path / "cache")
    for _ in range(5):
        got = check_same(paths, cache, "alpha beta", 5)
        assert [h["session_id"] for h in got.hits] == ["s11", "s10", "s09", "s08", "s07"] and got.total == 12
